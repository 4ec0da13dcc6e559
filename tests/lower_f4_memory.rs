//! f4E2M1FN arrays through tensor views (two elements a byte, element `j`
//! of a row in the low nibble of byte `j / 2` when `j` is even): kernel
//! `f4_copy` of `tests/data/lower/kernels/kernels.py` loads tiles of an f4
//! array, stores them widened to f32 and as f4 into another array, on
//! ragged sizes (odd row lengths too), in the PTX emulator for sm_80, sm_90
//! and sm_120; every in-bounds element must arrive and no other nibble of
//! the destination change.
mod common;
use common::scaled::f4;
use common::xorshift as values;

use ptx_emu::{bytes, Device, LaunchConfig, Module, Param};
use tileiras::options::{Gpu, Options};

/// `f4_copy` lowered for `gpu`.
fn lower(gpu: Gpu) -> String {
    let path = common::repo().join("tests/data/lower/kernels/f4_copy.tileir");
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let module = tileiras::bytecode::read(&data).expect("bytecode");
    tileiras::verify::verify(&module).expect("verifies");
    let options = Options {
        gpu,
        ..Default::default()
    };
    tileiras::lower::lower(&module, &options).unwrap_or_else(|e| panic!("{gpu}: {e}"))
}

/// Runs `f4_copy` (PTX `text`) on an `m x n` array and checks both outputs.
fn run(text: &str, m: usize, n: usize, seed: u64, what: &str) {
    let module = Module::parse(text).unwrap_or_else(|e| panic!("{what}: {e}"));
    // Rows of 32-element multiples: s / 2 bytes each.
    let s = n.div_ceil(32) * 32;
    let codes: Vec<u8> = values(seed, m * n)
        .into_iter()
        .map(|v| v as u8 & 0xf)
        .collect();
    let mut a = vec![0x77u8; m * s / 2];
    for i in 0..m {
        for j in 0..n {
            let b = &mut a[i * s / 2 + j / 2];
            *b = if j % 2 == 0 {
                (*b & 0xf0) | codes[i * n + j]
            } else {
                (*b & 0x0f) | (codes[i * n + j] << 4)
            };
        }
    }
    let cs = n.div_ceil(16) * 16;
    let sentinel = -12345.0f32;
    let d0 = vec![0xa5u8; m * s / 2];
    let mut dev = Device::new();
    let mut params = Vec::new();
    let mut arr = |dev: &mut Device, data: &[u8], row_stride: usize| {
        let p = dev.alloc_from(data);
        params.push(Param::U64(p.addr()));
        params.extend([m, n, row_stride, 1].map(|x| Param::U32(x as u32)));
        p
    };
    arr(&mut dev, &a, s);
    let pc = arr(&mut dev, &bytes::from_f32(&vec![sentinel; m * cs]), cs);
    let pd = arr(&mut dev, &d0, s);
    let cfg = LaunchConfig {
        grid: (m.div_ceil(32) as u32, n.div_ceil(64) as u32, 1),
        block: module
            .kernel("f4_copy")
            .and_then(|k| k.reqntid)
            .expect("reqntid"),
        cluster: (1, 1, 1),
        dynamic_smem: 0,
    };
    dev.launch(&module, "f4_copy", cfg, &params)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let c = bytes::to_f32(&dev.read(pc));
    let d = dev.read(pd);
    for i in 0..m {
        for j in 0..cs {
            let got = c[i * cs + j];
            if j < n {
                let want = f4(codes[i * n + j]);
                assert_eq!(
                    f64::from(got).to_bits(),
                    want.to_bits(),
                    "{what}: c[{i}, {j}] of code {:#x}",
                    codes[i * n + j]
                );
            } else {
                assert_eq!(
                    got.to_bits(),
                    sentinel.to_bits(),
                    "{what}: c[{i}, {j}] written"
                );
            }
        }
        for j in 0..s {
            let nib = (d[i * s / 2 + j / 2] >> (4 * (j % 2))) & 0xf;
            let want = if j < n {
                codes[i * n + j]
            } else {
                (0xa5u8 >> (4 * (j % 2))) & 0xf
            };
            assert_eq!(nib, want, "{what}: d[{i}, {j}]");
        }
    }
}

#[test]
fn f4_arrays_load_and_store_through_views() {
    for gpu in [Gpu::Sm80, Gpu::Sm90, Gpu::Sm120] {
        let text = lower(gpu);
        for (m, n, seed) in [(32, 64, 1u64), (45, 101, 2), (70, 130, 3)] {
            run(&text, m, n, seed, &format!("{gpu} {m}x{n}"));
        }
    }
}

#[test]
fn f4_copy_assembles_for_sm100_and_sm120() {
    for (gpu, arch) in [(Gpu::Sm100, "sm_100a"), (Gpu::Sm120, "sm_120a")] {
        common::assemble(&lower(gpu), &["-arch", arch, "--opt-level", "3"]);
    }
}
