//! A product whose operand rows are not 16-byte aligned (cuTile's batch
//! matmul with a 128 x 256 x 128 tile: B's row stride carries no
//! divisibility, so `cp.async` cannot copy it) reads its operands one K
//! slice at a time: B through registers, A (whose rows are aligned)
//! straight into shared memory with `cp.async` on `mma.sync`. The next
//! slice's global reads go out before the current slice's tensor-core
//! instructions, and the tiles are never whole in registers. Loading both
//! tiles whole next to the 128-register accumulator spilled 438 to 816
//! bytes; A's slices through registers too, 16 to 76. The bounds checks
//! compare each dimension's room left in 32 bits (`view_access::Access::room`):
//! one register for a row's eight columns, where 64-bit compares of each
//! column's index kept eight live. That the results are right is the
//! differential runner's part (`tests/differential.rs`, `bench` cases:
//! ragged M, N and K against NVIDIA's PTX; `targeted/unaligned_b_matmul_f16`:
//! B rows 213 elements apart, K ending inside a chunk of A). With TMA (sm_90
//! and sm_100, where two stages fit, and sm_120 in two K slices a
//! iteration), the loop is pipelined instead: TMA copies A and the threads
//! B, a slice of 64 bytes a thread at a time, without spills either.
mod common;

use tileiras::options::{Gpu, Options};

/// Our PTX for bench kernel `name` on `gpu`, and ptxas' `-v` log.
fn compile(name: &str, gpu: Gpu) -> (String, String) {
    common::compile_verbose(&format!("tests/data/differential/bench/{name}.tileir"), gpu)
}

#[test]
fn unaligned_operands_are_read_slice_by_slice_between_the_multiplies() {
    let name = "batch_matmul_f16_128x256x128";
    for (gpu, tensor) in [
        (Gpu::Sm80, "mma.sync"),
        (Gpu::Sm90, "wgmma.mma_async"),
        (Gpu::Sm100, "mma.sync"),
        (Gpu::Sm120, "mma.sync"),
    ] {
        let rel = format!("tests/data/differential/bench/{name}.tileir");
        if gpu != Gpu::Sm80 {
            let (text, log) = common::compile_verbose(&rel, gpu);
            assert_eq!(common::spills(&log), (0, 0), "{gpu:?} (TMA):\n{log}");
            assert!(text.contains("cp.async.bulk.tensor.3d"), "{gpu:?}");
            assert!(text.contains("ld.global.b16"), "{gpu:?}");
        }
        let options = Options {
            gpu,
            tma: false,
            ..Default::default()
        };
        let (text, log) = common::compile_verbose_with(&rel, &options);
        assert_eq!(common::spills(&log), (0, 0), "{gpu:?}:\n{log}");
        let lines: Vec<&str> = text.lines().collect();
        let first = lines.iter().position(|l| l.contains(tensor));
        let last = lines.iter().rposition(|l| l.contains(tensor));
        let (Some(first), Some(last)) = (first, last) else {
            panic!("{gpu:?}: no {tensor}:\n{text}");
        };
        let count = |what: &str, range: &[&str]| range.iter().filter(|l| l.contains(what)).count();
        let between = &lines[first..last];
        // 128 x 128 and 128 x 256 f16 tiles over 256 threads: 64 and 128
        // elements a thread, a quarter of them in each of the four slices
        // of 32; all but the first slice's and the second's (read before
        // the first multiply) come between the multiplies. No slice is
        // read twice.
        let (loads, copies) = (
            count("ld.global.b16", &lines),
            count("cp.async.cg.shared.global", &lines),
        );
        // Every bounds check compares a dimension's room left in 32 bits
        // (the indices are block ids and the loop's induction variable,
        // known non-negative).
        assert_eq!(count(".u64 \t%p", &lines), 0, "{gpu:?}: 64-bit compares");
        if tensor == "mma.sync" {
            // A: two 16-byte chunks a thread a slice, copied.
            assert_eq!((loads, copies), (128, 8), "{gpu:?}");
            assert!(count("ld.global", between) >= 64, "{gpu:?}");
            assert!(
                count("cp.async.cg", between) >= 4,
                "{gpu:?}: A's copies wait for the multiplies"
            );
        } else {
            assert_eq!((loads, copies), (192, 0), "{gpu:?}");
            assert!(count("ld.global", between) >= 96, "{gpu:?}");
        }
    }
}

/// Aligned operands whose whole tiles are too large for two stages of the
/// `cp.async` pipeline (the 128 x 128 and 128 x 256 f16 tiles of cuTile's
/// batch matmul as its tests specialise it, a 256 x 128 x 64 matmul) are
/// streamed too, copied slice by slice, rather than loaded whole into
/// registers beside the accumulator: that spilled 430 to 516 bytes (the
/// batch matmul) and 8 to 16 (the matmul on sm_80 and sm_120). Where TMA
/// can copy the tiles (sm_100 and sm_120) and two stages of its ring fit
/// the target's shared memory (the matmul's 49152 bytes a stage on both,
/// the batch matmul's 98304 on sm_100, and on sm_120 in two K slices of
/// 49152 bytes), the ring takes them instead: no stream, no spills.
#[test]
fn aligned_operands_too_large_to_stage_are_streamed() {
    for name in [
        "batch_matmul_f16_f16out_128x256x128",
        "matmul_f16_256x128x64",
        "matmul_bf16_256x128x64",
    ] {
        for gpu in [Gpu::Sm80, Gpu::Sm100, Gpu::Sm120] {
            let (text, log) = compile(name, gpu);
            assert_eq!(common::spills(&log), (0, 0), "{name} {gpu:?}:\n{log}");
            assert!(text.contains("mma.sync"), "{name} {gpu:?}");
            let ring = gpu != Gpu::Sm80;
            assert_eq!(
                text.contains("cp.async.cg.shared.global"),
                !ring,
                "{name} {gpu:?}: copies"
            );
            assert_eq!(
                text.contains("cp.async.bulk.tensor"),
                ring,
                "{name} {gpu:?}: TMA"
            );
        }
    }
}
