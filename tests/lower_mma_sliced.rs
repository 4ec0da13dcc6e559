//! Matrix multiplies whose operands do not fit shared memory whole: the
//! engines stage them one K slice at a time (`mma.sync` for f64, tf32 and
//! i8, FMAs for f32 and for f64 on sm_120), batched or not. Each kernel of
//! `tests/data/lower/ops/gen.py` computes `d = a @ b + c` over small
//! integers, so every sum is exact whatever the order, and runs in the PTX
//! emulator after the real ptxas accepts it.
mod common;
use common::mma::{Elems, F32, F64, I8_I32};
use common::shared_bytes;

use std::cell::Cell;
use tileiras::options::{Gpu, Options};

thread_local! {
    /// Whether this thread's kernels swizzle their operand buffers
    /// (`TILEIR_ALWAYS_SWIZZLE`) rather than pad them.
    static SWIZZLE: Cell<bool> = const { Cell::new(false) };
}

/// Checks kernel `name` (see [`common::mma::check`]) lowered for `gpu`,
/// swizzled when this thread says so.
fn check(
    name: &str,
    dims: (usize, usize, usize, usize),
    gpu: Gpu,
    arch: &str,
    e: &Elems,
) -> String {
    let options = Options {
        gpu,
        always_swizzle: SWIZZLE.with(Cell::get),
        ..Default::default()
    };
    common::mma::check(name, dims, &options, arch, e)
}

/// The conditional branches of a PTX text.
fn guarded_branches(ptx: &str) -> usize {
    ptx.lines()
        .filter(|l| l.trim_start().starts_with("@") && l.contains(" bra"))
        .count()
}

#[test]
fn f64_operands_of_256_kib_run_on_tensor_cores_in_k_slices() {
    // A and B take 128 KiB each: sm_80 and sm_90 stage 64 of K at a time
    // for `mma.sync.m8n8k4`; sm_120 (99 KiB) runs FMAs over 64-wide slices.
    for (gpu, arch, tensor) in [
        (Gpu::Sm80, "sm_80", true),
        (Gpu::Sm90, "sm_90a", true),
        (Gpu::Sm120, "sm_120a", false),
    ] {
        let text = check("mma_64x64x256_f64", (1, 64, 64, 256), gpu, arch, &F64);
        assert_eq!(text.contains("mma.sync.aligned.m8n8k4"), tensor, "{arch}");
        // The operands are loaded with K's slice bits in registers, so no
        // slice store depends on the thread.
        if tensor {
            assert_eq!(guarded_branches(&text), 0, "{arch}");
        }
        assert!(
            shared_bytes(&text) <= 96 * 1024,
            "{arch}: {}",
            shared_bytes(&text)
        );
    }
}

#[test]
fn tf32_operands_of_128_kib_run_on_mma_sync_in_k_slices() {
    // 128 x 128 x 128 tf32: 2 x 64 KiB of operands, staged 64 of K at a
    // time on sm_80 and sm_120 (before, sm_80 fell back to FMAs and sm_120
    // refused the op).
    for (gpu, arch) in [(Gpu::Sm80, "sm_80"), (Gpu::Sm120, "sm_120a")] {
        let text = check("mma_128x128x128_tf32", (1, 128, 128, 128), gpu, arch, &F32);
        assert!(text.contains("mma.sync.aligned.m16n8k8"), "{arch}");
        assert!(
            shared_bytes(&text) <= 96 * 1024,
            "{arch}: {}",
            shared_bytes(&text)
        );
    }
}

#[test]
fn f32_operands_beyond_sm_120_shared_memory_run_in_k_slices() {
    // 64 x 64 x 256 f32 on the FMA engine: 128 KiB staged whole on sm_80,
    // in two 128-wide slices on sm_120.
    for (gpu, arch, whole) in [(Gpu::Sm80, "sm_80", true), (Gpu::Sm120, "sm_120a", false)] {
        let text = check("mma_64x64x256_f32", (1, 64, 64, 256), gpu, arch, &F32);
        assert_eq!(shared_bytes(&text) == 128 * 1024, whole, "{arch}");
    }
}

#[test]
fn batched_f64_operands_are_sliced_per_batch() {
    // 4 x 32 x 32 x 256 f64: 256 KiB per operand. sm_80 stages 32 of K
    // at a time for `mma.sync`; sm_120's FMAs take 32.
    for (gpu, arch) in [(Gpu::Sm80, "sm_80"), (Gpu::Sm120, "sm_120a")] {
        let text = check("mma_b4_32x32x256_f64", (4, 32, 32, 256), gpu, arch, &F64);
        assert!(
            shared_bytes(&text) <= 96 * 1024,
            "{arch}: {}",
            shared_bytes(&text)
        );
    }
}

#[test]
fn batched_i8_operands_are_sliced_for_mma_sync() {
    // 2 x 128 x 128 x 256 i8 into i32: 128 KiB of operands, staged 128 of K
    // at a time (B transposed, K contiguous) on every target.
    for (gpu, arch) in [
        (Gpu::Sm80, "sm_80"),
        (Gpu::Sm90, "sm_90a"),
        (Gpu::Sm120, "sm_120a"),
    ] {
        let text = check(
            "mma_b2_128x128x256_i8",
            (2, 128, 128, 256),
            gpu,
            arch,
            &I8_I32,
        );
        assert!(text.contains("mma.sync.aligned.m16n8k32"), "{arch}");
        assert!(
            shared_bytes(&text) <= 96 * 1024,
            "{arch}: {}",
            shared_bytes(&text)
        );
    }
}

#[test]
fn operands_with_warps_along_k_are_sliced_by_guarded_stores() {
    // A is stored again through a view, so it keeps the view store's
    // layout, whose warps step along K: which slice an element belongs to
    // depends on the thread, and each slice's stores are guarded.
    for (gpu, arch) in [(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")] {
        let text = check(
            "mma_64x64x256_keep_a_f64",
            (1, 64, 64, 256),
            gpu,
            arch,
            &F64,
        );
        assert!(text.contains("mma.sync.aligned.m8n8k4"), "{arch}");
        assert!(guarded_branches(&text) > 0, "{arch}");
    }
}

#[test]
fn swizzled_operand_slices_match_too() {
    // Under `TILEIR_ALWAYS_SWIZZLE` the slices' rows are unpadded and
    // XOR-swizzled, for every writer and reader.
    SWIZZLE.with(|s| s.set(true));
    f64_operands_of_256_kib_run_on_tensor_cores_in_k_slices();
    tf32_operands_of_128_kib_run_on_mma_sync_in_k_slices();
    batched_i8_operands_are_sliced_for_mma_sync();
    batched_f64_operands_are_sliced_per_batch();
    operands_with_warps_along_k_are_sliced_by_guarded_stores();
}
