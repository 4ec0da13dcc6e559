//! Attention at head dimension 128 with 128 x 128 tiles (cuTile's
//! `fmha_kernel` as its benchmark tunes it) keeps its tiles where
//! FlashAttention does: the accumulators, the row statistics and P in
//! registers, warps owning whole rows, and K and V copied global-to-shared
//! with `cp.async` (both issued at the top of the loop body, each waited
//! for by its product). On `mma.sync` (sm_80, sm_100) Q is A fragments in
//! registers; on sm_90's `wgmma` (as FlashAttention-3 and NVIDIA's
//! tileiras) Q is written once into shared memory and read through a
//! descriptor, P is the register A operand of `P·V`, and K and V land in
//! swizzled buffers. ptxas then needs no local memory. That the results
//! are right is the differential runner's part (`tests/differential.rs`,
//! `repro` and `bench` cases).
mod common;

use tileiras::options::{Gpu, Options};

const KERNELS: [&str; 2] = ["fmha_d128_causal_128x128", "fmha_d128_bf16_gqa_128x128"];

/// Our PTX for repro kernel `name` on `gpu`, and ptxas' `-v` log.
fn compile(name: &str, gpu: Gpu) -> (String, String) {
    let file = common::repo().join(format!("tests/data/differential/repro/{name}.tileir"));
    let data = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let m = tileiras::bytecode::read(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
    let options = Options {
        gpu,
        ..Default::default()
    };
    let text = tileiras::lower::lower(&m, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
    let (_, log) = common::assemble(
        &text,
        &[
            "-arch",
            gpu.ptx_target(),
            "--opt-level",
            "3",
            "--enable-extended-smem=true",
            "-v",
        ],
    );
    (text, log)
}

/// The spill store and load bytes ptxas reports.
fn spills(log: &str) -> (u64, u64) {
    let num = |what: &str| -> u64 {
        log.split(',')
            .find(|p| p.contains(what))
            .and_then(|p| p.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no '{what}' in ptxas' log:\n{log}"))
    };
    (num("bytes spill stores"), num("bytes spill loads"))
}

#[test]
fn attention_tiles_stay_in_registers_without_spilling() {
    for name in KERNELS {
        for gpu in [Gpu::Sm80, Gpu::Sm90, Gpu::Sm100] {
            let (text, log) = compile(name, gpu);
            assert_eq!(spills(&log), (0, 0), "{name} on {gpu:?}:\n{log}");
            let ldmatrix: Vec<&str> = text.lines().filter(|l| l.contains("ldmatrix")).collect();
            let wgmma: Vec<&str> = text
                .lines()
                .filter(|l| l.contains("wgmma.mma_async"))
                .collect();
            if gpu == Gpu::Sm90 {
                // Q·Kᵀ with both operands through descriptors (`{d}, adesc,
                // bdesc, ...`, K-major B); P·V with P in registers (`{d},
                // {a}, bdesc`) and V MN-major (imm-trans-b 1).
                assert!(ldmatrix.is_empty(), "{name}: no ldmatrix on sm_90");
                let reg_a = |l: &&str| l.matches('{').count() == 2;
                assert!(
                    wgmma
                        .iter()
                        .any(|l| !reg_a(l) && l.trim_end().ends_with("0, 0;")),
                    "{name}: Q from shared memory"
                );
                assert!(
                    wgmma
                        .iter()
                        .any(|l| reg_a(l) && l.trim_end().ends_with("1, 1, 1;")),
                    "{name}: P from registers"
                );
                assert!(!text.contains("mma.sync"), "{name}: wgmma only");
            } else {
                // Q and P are A fragments in registers: every ldmatrix
                // reads B.
                assert!(!ldmatrix.is_empty(), "{name} on {gpu:?}");
                assert!(wgmma.is_empty(), "{name} on {gpu:?}");
                // K (K along memory, [N][K] rows) without .trans, V with.
                assert!(ldmatrix.iter().any(|l| !l.contains(".trans")), "{name}");
                assert!(ldmatrix.iter().any(|l| l.contains(".trans")), "{name}");
            }
            // Both copies in flight before the first product waits for K.
            assert!(
                text.lines()
                    .any(|l| l.split_whitespace().eq(["cp.async.wait_group", "1;"])),
                "{name} on {gpu:?}: K waited for alone"
            );
            assert!(
                text.contains("cp.async.cg.shared.global"),
                "{name} on {gpu:?}"
            );
            assert!(
                !text.contains("ld.shared.b16"),
                "{name}: no layout conversion"
            );
        }
    }
}
