//! Attention at head dimension 128 with 128 x 128 tiles (cuTile's
//! `fmha_kernel` as its benchmark tunes it) keeps its tiles where
//! FlashAttention does: the accumulators, the row statistics and P in
//! registers, warps owning whole rows, and K and V copied global-to-shared
//! (by TMA from sm_90 on, else with `cp.async`; the next ones issued once
//! their products have read the buffers, each waited for by its product).
//! On `mma.sync` (sm_80, sm_100) Q is A fragments in
//! registers; on sm_90's `wgmma` (as FlashAttention-3 and NVIDIA's
//! tileiras) Q is written once into shared memory and read through a
//! descriptor, P is the register A operand of `P·V`, and K and V land in
//! swizzled buffers. ptxas then needs no local memory. That the results
//! are right is the differential runner's part (`tests/differential.rs`,
//! `repro` and `bench` cases).
mod common;

use tileiras::options::Gpu;

const KERNELS: [&str; 2] = ["fmha_d128_causal_128x128", "fmha_d128_bf16_gqa_128x128"];

/// Our PTX for repro kernel `name` on `gpu`, and ptxas' `-v` log.
fn compile(name: &str, gpu: Gpu) -> (String, String) {
    common::compile_verbose(&format!("tests/data/differential/repro/{name}.tileir"), gpu)
}

/// [`compile`] with TMA switched off (`TILEIRAS_NO_TMA`): K and V by
/// `cp.async`.
fn compile_without_tma(name: &str, gpu: Gpu) -> (String, String) {
    let options = tileiras::options::Options {
        gpu,
        tma: false,
        ..Default::default()
    };
    common::compile_verbose_with(
        &format!("tests/data/differential/repro/{name}.tileir"),
        &options,
    )
}

#[test]
fn from_sm_90_on_k_and_v_come_by_tma() {
    // Two loops, each prefetching K and V (two 128 x 64 boxes a tile)
    // before it and the next ones in each iteration, on each buffer's own
    // barrier, invalidated after the loop; the views' static batch of 1
    // is a constant of the maps.
    for name in KERNELS {
        for gpu in [Gpu::Sm90, Gpu::Sm100, Gpu::Sm120] {
            let (text, log) = compile(name, gpu);
            assert_eq!(common::spills(&log), (0, 0), "{name} on {gpu:?}:\n{log}");
            let count = |what: &str| text.matches(what).count();
            assert_eq!(count("cp.async.bulk.tensor.4d"), 16, "{name} on {gpu:?}");
            assert_eq!(count("mbarrier.arrive.expect_tx"), 8, "{name} on {gpu:?}");
            assert_eq!(count("mbarrier.init.shared.b64"), 4, "{name} on {gpu:?}");
            assert_eq!(count("mbarrier.inval.shared.b64"), 4, "{name} on {gpu:?}");
            assert_eq!(count("cp.async.cg"), 0, "{name} on {gpu:?}");
        }
    }
}

#[test]
fn attention_tiles_stay_in_registers_without_spilling() {
    for name in KERNELS {
        for gpu in [Gpu::Sm80, Gpu::Sm90, Gpu::Sm100] {
            let (text, log) = compile_without_tma(name, gpu);
            assert_eq!(common::spills(&log), (0, 0), "{name} on {gpu:?}:\n{log}");
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

#[test]
fn on_sm120_q_is_staged_beside_swizzled_k_and_v() {
    // Without TMA, 99 KiB hold padded K and V (68 KiB) or Q beside them
    // only unpadded: K's and V's rows are swizzled, Q is written once into
    // shared memory and read a fragment a K step, and ptxas spills
    // nothing. (With TMA, K and V prefetched in TMA's layout leave Q in
    // registers: `from_sm_90_on_k_and_v_come_by_tma`.)
    for name in KERNELS {
        let (text, log) = compile_without_tma(name, Gpu::Sm120);
        assert_eq!(common::spills(&log), (0, 0), "{name}:\n{log}");
        let smem: i64 = text
            .lines()
            .find_map(|l| l.split("__tile_smem[").nth(1))
            .and_then(|r| r.split(']').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{name}: no shared memory"));
        assert!(
            smem > 96 * 1024 && smem <= 99 * 1024,
            "{name}: {smem} bytes"
        );
        let (plain, trans) = (
            text.matches("ldmatrix.sync.aligned.m8n8.x4.shared.b16")
                .count(),
            text.matches("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16")
                .count(),
        );
        // Kᵀ's and V's fragments are as many; Q's add plain ones.
        assert!(
            plain > trans && trans > 0,
            "{name}: {plain} plain, {trans} .trans"
        );
    }
}

/// The first loop of our PTX `text`: the lines from a backward branch's
/// target label to the branch.
fn first_loop(text: &str) -> (usize, usize) {
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let Some(target) = l
            .trim()
            .strip_prefix("bra ")
            .or_else(|| l.trim().strip_prefix("bra.uni").map(|r| r.trim_start()))
        else {
            continue;
        };
        let label = format!("{}:", target.trim().trim_end_matches(';'));
        if let Some(at) = lines[..i].iter().position(|x| x.trim() == label) {
            return (at, i);
        }
    }
    panic!("no loop in:\n{text}");
}

/// K and V are prefetched across iterations: the loop's first tiles are
/// copied before it, each iteration copies the next K and V (one group
/// each) once their products have read the buffers and waits for one
/// group at a time, and the copies past the last iteration are waited
/// for after the loop, before the buffers serve again (by `cp.async`:
/// TMA's copies are [`from_sm_90_on_k_and_v_come_by_tma`]).
#[test]
fn attention_copies_the_next_tiles_during_each_iteration() {
    for gpu in [Gpu::Sm80, Gpu::Sm90] {
        let (text, _) = compile_without_tma(KERNELS[0], gpu);
        let lines: Vec<&str> = text.lines().collect();
        let (start, end) = first_loop(&text);
        let count = |from: usize, to: usize, what: &str| {
            lines[from..to]
                .iter()
                .filter(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") == what)
                .count()
        };
        assert!(
            count(0, start, "cp.async.commit_group;") >= 2,
            "{gpu:?}: prologue"
        );
        assert_eq!(
            count(start, end, "cp.async.commit_group;"),
            2,
            "{gpu:?}: body"
        );
        assert_eq!(
            count(start, end, "cp.async.wait_group 1;"),
            2,
            "{gpu:?}: waits"
        );
        let drain = lines[end..]
            .iter()
            .find(|l| l.contains("cp.async.wait_group"))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "));
        assert_eq!(
            drain.as_deref(),
            Some("cp.async.wait_group 0;"),
            "{gpu:?}: drain"
        );
    }
}
