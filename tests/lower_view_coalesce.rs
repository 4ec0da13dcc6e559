//! Tiles of views whose dimension contiguous in memory is not the tile's
//! last (column-major tensors, transposing copies): loads and stores put
//! consecutive lanes along that dimension, and a tile read one way and
//! written the other moves through shared memory between them. Kernels of
//! `tests/data/lower/ops/gen.py`, assembled by the real ptxas for sm_80 and
//! sm_90 and run in the PTX emulator on ragged tiles.
mod common;
use common::xorshift as values;

use ptx_emu::{bytes, Device, Module, Param};
use tileiras::options::Gpu;

const TARGETS: [(Gpu, &str); 2] = [(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")];

/// Runs `name` on the bytes `x` into a `y` of the same size
/// filled with 0xff bytes; returns `y` and the PTX.
fn run(name: &str, gpu: Gpu, arch: &str, x: &[u8]) -> (Vec<u8>, String) {
    let text = common::ops_ptx(name, gpu, arch);
    let module = Module::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut dev = Device::new();
    let px = dev.alloc_from(x);
    let py = dev.alloc_from(&vec![0xff; x.len()]);
    let params = [px, py].map(|p| Param::U64(p.addr()));
    dev.launch_grid(&module, name, (1, 1, 1), &params)
        .unwrap_or_else(|e| panic!("{name} {arch}: {e}"));
    (dev.read(py), text)
}

#[test]
fn column_major_tiles_copy_without_moving_through_shared_memory() {
    // x, y: [40, 24] f32, element (i, j) at i + 40 j; the [32, 16] tile at
    // (1, 1) covers rows 32..63 and columns 16..31, in bounds up to 39, 23.
    let x: Vec<u32> = values(5, 40 * 24).iter().map(|&v| v as u32).collect();
    for (gpu, arch) in TARGETS {
        let (y, text) = run("view_colmajor_copy_f32", gpu, arch, &bytes::from_u32(&x));
        let y = bytes::to_u32(&y);
        for j in 0..24 {
            for i in 0..40 {
                let at = i + 40 * j;
                let want = if (32..40).contains(&i) && (16..24).contains(&j) {
                    x[at]
                } else {
                    u32::MAX
                };
                assert_eq!(y[at], want, "{arch}: y[{i}, {j}]");
            }
        }
        // Loaded and stored in one layout: nothing to move.
        assert!(!text.contains("bar.sync"), "{arch}");
    }
}

/// Checks kernel `name`, which copies the `tile` at index (1, 1) of a
/// row-major `shape` tensor of `eb`-byte elements into the same tensor
/// column-major, on each target, and whether its PTX moved the tile
/// through shared memory (`moved`).
fn row_to_colmajor(
    name: &str,
    (rows, cols): (usize, usize),
    (tr, tc): (usize, usize),
    eb: usize,
    targets: &[(Gpu, &str, bool)],
) {
    let x: Vec<u8> = values(9, rows * cols * eb)
        .iter()
        .map(|&v| v as u8)
        .collect();
    for &(gpu, arch, moved) in targets {
        let (y, text) = run(name, gpu, arch, &x);
        for i in 0..rows {
            for j in 0..cols {
                let inside = (tr..2 * tr).contains(&i) && (tc..2 * tc).contains(&j);
                let at = (i + rows * j) * eb;
                let want = if inside {
                    &x[(cols * i + j) * eb..][..eb]
                } else {
                    &[0xff; 8][..eb]
                };
                assert_eq!(&y[at..at + eb], want, "{arch}: y[{i}, {j}]");
            }
        }
        assert_eq!(text.contains("bar.sync"), moved, "{arch}");
    }
}

#[test]
fn row_major_tile_stored_column_major_moves_through_shared_memory() {
    // x: [48, 72] f16; the [32, 64] tile at (1, 1) covers rows 32..63 and
    // columns 64..127, in bounds up to 47, 71.
    let targets = [(Gpu::Sm80, "sm_80", true), (Gpu::Sm90, "sm_90a", true)];
    row_to_colmajor("view_row_to_colmajor_f16", (48, 72), (32, 64), 2, &targets);
}

#[test]
fn tiles_too_large_to_move_are_read_as_stored() {
    // x: [200, 300] f32; the [128, 256] tile at (1, 1) (rows 128..199,
    // columns 256..299 in bounds) takes 128 KiB: sm_80 and sm_90 move it
    // through shared memory, sm_120 (99 KiB) reads it in the stores' layout
    // instead.
    let targets = [
        (Gpu::Sm80, "sm_80", true),
        (Gpu::Sm90, "sm_90a", true),
        (Gpu::Sm120, "sm_120a", false),
    ];
    row_to_colmajor(
        "view_row_to_colmajor_big_f32",
        (200, 300),
        (128, 256),
        4,
        &targets,
    );
}
