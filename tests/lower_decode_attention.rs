//! Decode attention on `mma.sync` (64 rows over four warps, 256 keys a
//! tile) holds S (128 registers a thread) and O (64) across its loop.
//! Where that and Q's fragments (32 more) exceed what a thread holds, Q
//! is written to shared memory once before the loop and
//! read a fragment a K step (`mma_sync_staged_a`), and B fragments are
//! loaded a pair of n8 tiles at a time next to their products. That the
//! results are right is the differential runner's part
//! (`tests/differential.rs`, `bench` cases).
mod common;

use tileiras::options::Gpu;

/// The plain and the transposing `ldmatrix.x4` instructions of `ptx`.
fn ldmatrix_counts(ptx: &str) -> (usize, usize) {
    let count = |what: &str| ptx.matches(what).count();
    (
        count("ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
        count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"),
    )
}

#[test]
fn decode_attention_reads_q_from_shared_memory_without_spilling() {
    let path = "tests/data/differential/bench/fmha_d128_bf16_gqa_decode_64x256_ragged.tileir";
    let (text, log) = common::compile_verbose(path, Gpu::Sm80);
    assert_eq!(common::spills(&log), (0, 0), "{log}");
    // Kᵀ's fragments (plain ldmatrix) and V's (.trans) are as many; Q's
    // add a plain ldmatrix a K step of S's product.
    let (plain, trans) = ldmatrix_counts(&text);
    assert!(trans > 0 && plain > trans, "plain {plain}, trans {trans}");
}

#[test]
fn attention_with_registers_to_spare_keeps_q_in_registers() {
    // 128 rows over eight warps: S and O take 64 registers a thread each.
    let path = "tests/data/differential/bench/fmha_d128_f16_causal_128x128_ragged.tileir";
    let (text, log) = common::compile_verbose(path, Gpu::Sm80);
    assert_eq!(common::spills(&log), (0, 0), "{log}");
    let (plain, trans) = ldmatrix_counts(&text);
    assert_eq!(plain, trans);
}
