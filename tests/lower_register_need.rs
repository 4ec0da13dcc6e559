//! Entries take as many warps as their tiles' registers need, beyond what
//! their products ask for (unless a chained product's warps own rows):
//! cuTile's complex FFT (real and imaginary planes, `mmaf` on 16 x 16 x
//! 256 tiles, four products live at once) needs some 400 registers a
//! thread over four warps in f32 (FMAs) and ran on them with 800 to 880
//! bytes of spills, 200 in f16 (`mma.sync`) with 4 (the reference FFT in
//! f16, 248: its f16 tiles take a register an element); over eight warps
//! all need none. That its results are right is the
//! differential runner's part (`tests/differential.rs`, `bench` cases).
mod common;

use tileiras::options::Gpu;

/// Our PTX for kernel `file` (under `tests/data/differential`) on `gpu`,
/// and ptxas' `-v` log.
fn compile(file: &str, gpu: Gpu) -> (String, String) {
    common::compile_verbose(&format!("tests/data/differential/{file}.tileir"), gpu)
}

#[test]
fn fft_tiles_spread_over_eight_warps_without_spilling() {
    for name in [
        "bench/fft_c64",
        "bench/fft_ref_c64",
        "bench/fft_c32",
        "bench/fft_ref_c32",
    ] {
        for gpu in [Gpu::Sm80, Gpu::Sm120] {
            let (text, log) = compile(name, gpu);
            assert!(text.contains(".reqntid 256"), "{name} on {gpu:?}");
            assert_eq!(common::spills(&log), (0, 0), "{name} on {gpu:?}:\n{log}");
        }
    }
}

#[test]
fn entries_with_few_registers_keep_four_warps() {
    // Elementwise f32 arithmetic on small tiles: nothing to spread.
    let (text, _) = compile("corpus/arith_f32", Gpu::Sm80);
    assert!(text.contains(".reqntid 128"), "{text}");
}
