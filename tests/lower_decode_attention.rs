//! Decode attention on `mma.sync` (64 rows, 256 keys a tile): over four
//! warps S would take 128 registers a thread and O 64. The chain is split
//! over warp pairs (`mma_chain::split`): eight warps, each pair owning 16
//! rows, each warp half of S's columns and a partial O summed after the
//! loop (`mma_split_sum`). Q is written to shared memory once before the
//! loop and read a fragment a K step (`mma_sync_staged_a`), and B
//! fragments are loaded a pair of n8 tiles at a time next to their
//! products. On sm_90 the same split runs on `wgmma`: each warpgroup takes
//! half of S's columns, then half of P·V's K (`mma_sync_wgmma`). That the
//! results are right is the differential runner's part
//! (`tests/differential.rs`, `bench` cases).
mod common;

use tileiras::options::Gpu;

/// The plain and the transposing `ldmatrix.x4` instructions of bench
/// kernel `name` on sm_80, after checking that ptxas spills nothing.
fn spill_free_ldmatrix_counts(name: &str) -> (usize, usize) {
    let ptx = common::spill_free_bench(name, Gpu::Sm80);
    let count = |what: &str| ptx.matches(what).count();
    (
        count("ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
        count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"),
    )
}

#[test]
fn decode_attention_reads_q_from_shared_memory_without_spilling() {
    // Kᵀ's fragments (plain ldmatrix) and V's (.trans) are as many; Q's
    // add a plain ldmatrix a K step of S's product.
    let (plain, trans) = spill_free_ldmatrix_counts("fmha_d128_bf16_gqa_decode_64x256_ragged");
    assert!(trans > 0 && plain > trans, "plain {plain}, trans {trans}");
}

#[test]
fn decode_attention_splits_over_warp_pairs_without_spilling() {
    for name in [
        "fmha_d128_f16_decode_64x256",
        "fmha_d128_bf16_gqa_decode_64x256_ragged",
    ] {
        for gpu in common::TARGETS {
            let ptx = common::spill_free_bench(name, gpu);
            assert!(ptx.contains(".reqntid 256"), "{name} on {gpu:?}");
            // The pair's partial O (64 registers a thread) is summed once
            // through shared memory: the ragged kernel's first loop hands
            // its partials to the masked second one.
            let sums = ptx.matches("st.shared.f32").count();
            assert_eq!(sums, 64, "{name} on {gpu:?}");
        }
    }
    // Each warp: S of 16 x 128 (16 n8 tiles, 8 K steps) and its half of
    // P·V (16 n8 tiles, 8 K steps).
    let path = "tests/data/differential/bench/fmha_d128_f16_decode_64x256.tileir";
    let (ptx, _) = common::compile_verbose(path, Gpu::Sm80);
    assert_eq!(ptx.matches("mma.sync.aligned.m16n8k16").count(), 256);
}

#[test]
fn on_sm_90_each_warpgroup_multiplies_its_half_on_wgmma() {
    // Per warpgroup: S's half (m64n128, 8 K steps of Q's 128) and its half
    // of P·V (m64n128, 8 K steps of 128 keys); B's descriptor moves to the
    // warpgroup's half (tid / 128).
    let ptx = common::spill_free_bench("fmha_d128_f16_decode_64x256", Gpu::Sm90);
    assert_eq!(ptx.matches("mma.sync.aligned").count(), 0);
    assert_eq!(
        ptx.matches("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16")
            .count(),
        16
    );
}

#[test]
fn attention_with_registers_to_spare_keeps_q_in_registers() {
    // 128 rows over eight warps: S and O take 64 registers a thread each.
    let (plain, trans) = spill_free_ldmatrix_counts("fmha_d128_f16_causal_128x128_ragged");
    assert_eq!(plain, trans);
}

#[test]
fn where_scratch_is_reused_v_copies_during_the_softmax() {
    // sm_120's shared memory holds K's buffer or V's, not both: V's copy
    // goes out once S's product has read K, before the exponentials.
    let path = "tests/data/differential/bench/fmha_d128_f16_decode_64x256.tileir";
    let (text, _) = common::compile_verbose(path, Gpu::Sm120);
    let at = |what: &str| text.match_indices(what).map(|(i, _)| i).collect::<Vec<_>>();
    let (commits, exps, waits) = (
        at("cp.async.commit_group"),
        at("ex2.approx"),
        at("cp.async.wait_group"),
    );
    assert!(
        commits.len() >= 2 && !exps.is_empty(),
        "{commits:?} {exps:?}"
    );
    // K's copy, its wait, V's copy, then the softmax; V's wait after it.
    assert!(commits[1] < exps[0], "V is copied after the softmax starts");
    assert!(
        waits.iter().any(|&w| w > exps[0]),
        "V waited for before the softmax"
    );
}
