//! f8 matrix multiplies into an f16 accumulator on tensor cores: the
//! `mma.sync.m16n8k32` form with `.f16` accumulators on sm_89 and newer,
//! `wgmma` on sm_90a for an unbatched tile. Operands are small integers,
//! rounded to e4m3 in the kernel (exactly), so every partial sum is an
//! integer below 2048 and exact in f16 whatever the order; each result is
//! checked in the PTX emulator after the real ptxas accepts the kernel.
mod common;
use common::mma::{check, F32_F16};

use tileiras::options::{Gpu, Options};

fn options(gpu: Gpu) -> Options {
    Options {
        gpu,
        ..Default::default()
    }
}

#[test]
fn e4m3_into_f16_uses_mma_sync_from_sm_89() {
    for (gpu, arch) in [(Gpu::Sm89, "sm_89"), (Gpu::Sm120, "sm_120a")] {
        let text = check(
            "mma_64x32x64_e4m3_f16",
            (1, 64, 32, 64),
            &options(gpu),
            arch,
            &F32_F16,
        );
        assert!(
            text.contains("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16"),
            "{arch}"
        );
    }
}

#[test]
fn batched_e4m3_into_f16_uses_mma_sync_on_sm_90() {
    let text = check(
        "mma_b2_32x32x64_e4m3_f16",
        (2, 32, 32, 64),
        &options(Gpu::Sm90),
        "sm_90a",
        &F32_F16,
    );
    assert!(text.contains("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16"));
}

#[test]
fn unbatched_e4m3_into_f16_uses_wgmma_on_sm_90() {
    let text = check(
        "mma_64x32x64_e4m3_f16",
        (1, 64, 32, 64),
        &options(Gpu::Sm90),
        "sm_90a",
        &F32_F16,
    );
    assert!(text.contains("wgmma.mma_async"), "no wgmma");
}
