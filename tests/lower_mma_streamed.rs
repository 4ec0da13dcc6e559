//! A product whose operand rows are not 16-byte aligned (cuTile's batch
//! matmul with a 128 x 256 x 128 tile: B's row stride carries no
//! divisibility, so `cp.async` cannot copy it) reads its operands one K
//! slice at a time through registers: the next slice's global loads go
//! out before the current slice's tensor-core instructions, and the tiles
//! are never whole in registers. Loading both tiles whole next to the
//! 128-register accumulator spilled 438 to 816 bytes. That the results are
//! right is the differential runner's part (`tests/differential.rs`,
//! `bench` cases: ragged M, N and K against NVIDIA's PTX).
mod common;

use tileiras::options::Gpu;

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
        (Gpu::Sm120, "mma.sync"),
    ] {
        let (text, log) = compile(name, gpu);
        let lines: Vec<&str> = text.lines().collect();
        let first = lines.iter().position(|l| l.contains(tensor));
        let last = lines.iter().rposition(|l| l.contains(tensor));
        let (Some(first), Some(last)) = (first, last) else {
            panic!("{gpu:?}: no {tensor}:\n{text}");
        };
        let between = lines[first..last]
            .iter()
            .filter(|l| l.contains("ld.global"))
            .count();
        // 128 x 128 and 128 x 256 f16 tiles over 256 threads: 192 elements
        // a thread, a quarter of them in each of the four slices of 32;
        // all but the first slice's and the second's (read before the
        // first multiply) come between the multiplies.
        assert!(
            between >= 96,
            "{gpu:?}: {between} loads between the multiplies"
        );
        // No slice is read twice.
        let loads = text.lines().filter(|l| l.contains("ld.global.b16")).count();
        assert_eq!(loads, 192, "{gpu:?}");
        let (spilled, _) = common::spills(&log);
        assert!(spilled <= 160, "{gpu:?}: {spilled} bytes spilled\n{log}");
    }
}
