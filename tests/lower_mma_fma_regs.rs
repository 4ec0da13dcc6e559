//! Small matrix multiplies on the FMA engine's register path: each thread
//! reads the rows of A and the columns of B its accumulator elements need
//! straight into registers, in layouts derived from the accumulator's, and
//! multiplies without shared memory or a loop. Each kernel of
//! `tests/data/lower/ops/gen.py` computes `d = a @ b + c` over small
//! integers and runs in the PTX emulator after the real ptxas accepts it,
//! on every target family.
mod common;
use common::mma::{check, Elems, F16, F16_F32, F32, F64, I8_I32};

use tileiras::options::{Gpu, Options};

const TARGETS: [(Gpu, &str); 3] = [
    (Gpu::Sm80, "sm_80"),
    (Gpu::Sm90, "sm_90a"),
    (Gpu::Sm120, "sm_120a"),
];

/// Checks `name` on every target and that it needs no shared memory.
fn in_registers(name: &str, dims: (usize, usize, usize, usize), e: &Elems) {
    for (gpu, arch) in TARGETS {
        let options = Options {
            gpu,
            ..Default::default()
        };
        let text = check(name, dims, &options, arch, e);
        assert_eq!(common::shared_bytes(&text), 0, "{name} {arch}");
        assert!(!text.contains("bar.sync"), "{name} {arch}");
    }
}

#[test]
fn float_operands_multiply_in_registers() {
    in_registers("mma_8x8x8_f32", (1, 8, 8, 8), &F32);
    in_registers("mma_2x2x2_f64", (1, 2, 2, 2), &F64);
    in_registers("mma_32x32x1_f32", (1, 32, 32, 1), &F32);
}

#[test]
fn half_operands_too_small_for_mma_sync_multiply_in_registers() {
    // K = 8 is below m16n8k16's K; K = 2 too, with an f16 accumulator.
    in_registers("mma_16x8x8_f16", (1, 16, 8, 8), &F16_F32);
    in_registers("mma_64x32x2_f16", (1, 64, 32, 2), &F16);
}

#[test]
fn batched_i8_operands_multiply_in_registers() {
    in_registers("mma_b2_4x8x4_i8", (2, 4, 8, 4), &I8_I32);
}

#[test]
fn e4m3_operands_multiply_in_registers() {
    // Loaded as f32 and rounded to e4m3 (exact for these integers).
    in_registers("mma_8x16x8_e4m3", (1, 8, 16, 8), &F32);
}

#[test]
fn an_operand_in_another_layout_moves_first() {
    // A is stored again through a view after the product, so its layout
    // is the store's and it moves through shared memory into the register
    // path's.
    for (gpu, arch) in TARGETS {
        let options = Options {
            gpu,
            ..Default::default()
        };
        let text = check("mma_8x8x8_keep_a_f32", (1, 8, 8, 8), &options, arch, &F32);
        assert!(text.contains("bar.sync"), "{arch}");
    }
}
