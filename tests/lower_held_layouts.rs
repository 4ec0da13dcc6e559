//! A tile defined before a loop and used after it keeps, across the loop,
//! no layout that takes more registers than the default one
//! (`assign::held_across_loops`): the use after the loop converts it. In
//! cuTile's fused MoE the gathered token rows (128 i32, loaded before the
//! K loop for the A gather and read again by the epilogue's scatter) took
//! the epilogue's layout, 64 registers a thread, held across the loop
//! beside the 64-register accumulator: 8 to 72 bytes of spills on sm_80
//! and sm_120. That the results are right is the differential runner's
//! part (`tests/differential.rs`, `bench` and `cutile` cases).
mod common;

#[test]
fn moe_token_rows_cross_the_loop_in_one_register() {
    for name in [
        "fused_moe_f16_128x128x64",
        "fused_moe_bf16_128x128x64_weighted",
    ] {
        for gpu in common::TARGETS {
            let ptx = common::spill_free_bench(name, gpu);
            // The token rows are loaded once a thread (the default layout
            // of 128 elements over 256 threads), not 64 times.
            let rows = ptx.matches("ld.global.b32").count();
            assert!(rows <= 2, "{name} on {gpu:?}: {rows} ld.global.b32");
        }
    }
}
