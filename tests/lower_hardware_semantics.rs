//! Semantics that an H100 running cuTile Python showed we had wrong, while
//! every emulator test passed: each is what NVIDIA's tileiras gives (read
//! off its PTX for the same bytecode), and each test here fails on the code
//! before the fix.
//!
//! - `return` inside an `if` (or a `loop`) ends the tile block there;
//! - a masked-off element of `atomic_cas` returns `cmp`, of `atomic_rmw`
//!   and of an unpadded `load_ptr` 0;
//! - `get_num_tile_blocks` counts tile blocks (clusters when
//!   `num_cta_in_cga` is above 1), not CTAs;
//! - a view load without a padding value that feeds a matrix multiply reads
//!   zero out of bounds.
//!
//! The first kernels of each kind are the bytecode cuTile wrote on the GPU
//! (`tests/data/lower/hardware/`); the others come from
//! `tests/data/lower/ops/gen.py`. Each runs in the PTX emulator for sm_80,
//! sm_90 and sm_120 after the real ptxas accepts it.
mod common;
use common::xorshift;

use ptx_emu::{bytes, Device, LaunchConfig, Module, Param};
use tileiras::options::Gpu;

const TARGETS: [Gpu; 3] = [Gpu::Sm80, Gpu::Sm90, Gpu::Sm120];

/// Our PTX for the bytecode at `path` (relative to the repository), after
/// checking that ptxas accepts it.
fn ptx(path: &str, gpu: Gpu) -> String {
    common::compile_verbose(path, gpu).0
}

fn repro(name: &str) -> String {
    format!("tests/data/lower/hardware/{name}.tileir")
}

fn op(name: &str) -> String {
    format!("tests/data/lower/ops/{name}.tileir")
}

/// Runs the only kernel of `text` on a grid of `grid` tile blocks.
fn launch(dev: &mut Device, text: &str, grid: u32, params: &[Param]) {
    let m = Module::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let name = text
        .lines()
        .find_map(|l| l.strip_prefix(".visible .entry "))
        .and_then(|l| l.split('(').next())
        .expect("an entry");
    dev.launch_grid(&m, name, (grid, 1, 1), params)
        .unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
}

/// cuTile's `early_return_kernel`: `if early_return: return` before the
/// store of `x + y[row]`, over 16x128 tiles of a 32x128 f32 matrix.
#[test]
fn return_in_if_ends_the_tile_block() {
    let (rows, cols) = (32usize, 128usize);
    let x: Vec<f32> = (0..rows * cols).map(|i| i as f32 * 0.5).collect();
    let y: Vec<f32> = (0..rows).map(|r| 1000.0 * r as f32).collect();
    for gpu in TARGETS {
        let text = ptx(&repro("early_return_kernel"), gpu);
        for flag in [1u8, 0] {
            let mut dev = Device::new();
            let px = dev.alloc_from(&bytes::from_f32(&x));
            let py = dev.alloc_from(&bytes::from_f32(&y));
            let out = dev.alloc_from(&bytes::from_f32(&vec![-7.0; rows * cols]));
            let s = |v: usize| Param::U32(v as u32);
            let params = [
                Param::U64(px.addr()),
                s(rows),
                s(cols),
                s(cols),
                s(1),
                Param::U64(py.addr()),
                s(rows),
                s(1),
                s(1),
                s(1),
                Param::U64(out.addr()),
                s(rows),
                s(cols),
                s(cols),
                s(1),
                Param::Bytes(vec![flag]),
            ];
            launch(&mut dev, &text, (rows / 16) as u32, &params);
            let got = bytes::to_f32(&dev.read(out));
            for (i, &g) in got.iter().enumerate() {
                let want = if flag == 1 { -7.0 } else { x[i] + y[i / cols] };
                assert_eq!(g, want, "{gpu} flag {flag} element {i}");
            }
        }
    }
}

/// `return` in nested `if`s, in an `else`, in an `if` with results and in
/// a `loop` (`tests/data/lower/ops/gen.py`, `early_exits`): the stores on
/// paths that returned first never happen.
#[test]
fn returns_in_nested_regions() {
    const N: usize = 128;
    let x: Vec<i32> = xorshift(7, N).iter().map(|&v| (v % 1000) as i32).collect();
    const UNTOUCHED: i32 = -99;
    type Want = fn(&[i32], i32, i32) -> Option<Vec<i32>>;
    let cases: [(&str, Want); 4] = [
        ("exit_nested_if", |x, a, b| {
            (!(a > 0 && b > 0)).then(|| x.to_vec())
        }),
        ("exit_in_else", |x, a, _| (a > 0).then(|| x.to_vec())),
        ("exit_if_results", |x, a, _| {
            (a <= 0).then(|| x.iter().map(|v| v + 1).collect())
        }),
        ("exit_in_loop", |x, a, b| {
            // k counts 0, 1, ...: at k == b store acc and return; at
            // k >= a break; else acc += x.
            let mut k = 0;
            loop {
                if k == b {
                    return Some(x.iter().map(|v| v * k).collect());
                }
                if k >= a {
                    return Some(x.iter().map(|v| v * k - 1).collect());
                }
                k += 1;
            }
        }),
    ];
    for gpu in TARGETS {
        for (name, want) in cases {
            let text = ptx(&op(name), gpu);
            for (a, b) in [(1, 1), (1, 0), (0, 1), (-3, 5), (4, 2), (2, 4), (3, 3)] {
                let mut dev = Device::new();
                let px = dev.alloc_from(&bytes::from_i32(&x));
                let out = dev.alloc_from(&bytes::from_i32(&[UNTOUCHED; N]));
                let params = [
                    Param::U64(px.addr()),
                    Param::U64(out.addr()),
                    Param::U32(a as u32),
                    Param::U32(b as u32),
                ];
                launch(&mut dev, &text, 1, &params);
                let got = bytes::to_i32(&dev.read(out));
                let want = want(&x, a, b).unwrap_or_else(|| vec![UNTOUCHED; N]);
                assert_eq!(got, want, "{name} {gpu} a={a} b={b}");
            }
        }
    }
}

/// cuTile's `offset_atomic_cas_with_mask`: the first 256 offsets swap where
/// `x == expected`; the rest are masked off, keep `x`, and return
/// `expected` (cuTile's test asserts it).
#[test]
fn masked_off_atomic_cas_returns_cmp() {
    let n = 512usize;
    let x: Vec<i32> = (0..n as i32).collect();
    let expected: Vec<i32> = x.iter().map(|&v| if v % 2 == 0 { v } else { -1 }).collect();
    let desired: Vec<i32> = x.iter().map(|&v| 10_000 + v).collect();
    for gpu in TARGETS {
        let text = ptx(&repro("offset_atomic_cas_with_mask"), gpu);
        let mut dev = Device::new();
        let px = dev.alloc_from(&bytes::from_i32(&x));
        let pe = dev.alloc_from(&bytes::from_i32(&expected));
        let pd = dev.alloc_from(&bytes::from_i32(&desired));
        let out = dev.alloc_from(&bytes::from_i32(&vec![7; n]));
        let s = Param::U32(n as u32);
        let params = [
            Param::U64(px.addr()),
            s.clone(),
            Param::U32(1),
            Param::U64(pe.addr()),
            s.clone(),
            Param::U32(1),
            Param::U64(pd.addr()),
            s.clone(),
            Param::U32(1),
            Param::U64(out.addr()),
            s,
            Param::U32(1),
        ];
        launch(&mut dev, &text, (n / 128) as u32, &params);
        let (xs, olds) = (bytes::to_i32(&dev.read(px)), bytes::to_i32(&dev.read(out)));
        for i in 0..n {
            let (want_x, want_old) = match i < 256 {
                true if expected[i] == x[i] => (desired[i], x[i]),
                true => (x[i], x[i]),
                false => (x[i], expected[i]),
            };
            assert_eq!((xs[i], olds[i]), (want_x, want_old), "{gpu} offset {i}");
        }
    }
}

/// Every `atomic_rmw` mode, `atomic_cas` and an unpadded `load_ptr` under
/// the mask `i % 3 != 0` (`gen.py`, `masked_atomics`): masked-off elements
/// keep memory as it was and return 0, or `cmp` for a compare-and-swap, as
/// NVIDIA's tileiras gives.
#[test]
fn masked_off_elements_of_atomics_and_loads() {
    const N: usize = 128;
    let r = xorshift(11, 3 * N);
    let acc: Vec<u32> = r[..N].iter().map(|&v| (v as u32) % 2000).collect();
    let x: Vec<u32> = r[N..2 * N].iter().map(|&v| (v >> 8) as u32).collect();
    let f = |v: u32| ((v % 64) as f32 - 32.0).to_bits();
    type Rmw = fn(u32, u32, u32) -> u32;
    let cases: [(&str, Rmw, bool); 13] = [
        ("masked_and", |a, x, _| a & x, false),
        ("masked_or", |a, x, _| a | x, false),
        ("masked_xor", |a, x, _| a ^ x, false),
        ("masked_add", |a, x, _| a.wrapping_add(x), false),
        (
            "masked_max",
            |a, x, _| (a as i32).max(x as i32) as u32,
            false,
        ),
        (
            "masked_min",
            |a, x, _| (a as i32).min(x as i32) as u32,
            false,
        ),
        ("masked_umax", |a, x, _| a.max(x), false),
        ("masked_umin", |a, x, _| a.min(x), false),
        ("masked_xchg", |_, x, _| x, false),
        ("masked_cas", |a, x, c| if a == c { x } else { a }, false),
        (
            "masked_addf",
            |a, x, _| (f32::from_bits(a) + f32::from_bits(x)).to_bits(),
            true,
        ),
        ("masked_cas_f32", |a, x, c| if a == c { x } else { a }, true),
        ("masked_load", |a, _, _| a, false),
    ];
    for gpu in TARGETS {
        for (name, rmw, float) in cases {
            let text = ptx(&op(name), gpu);
            let conv = |v: &[u32]| -> Vec<u32> {
                if float {
                    v.iter().map(|&v| f(v)).collect()
                } else {
                    v.to_vec()
                }
            };
            let (acc0, x0) = (conv(&acc), conv(&x));
            let cmp0: Vec<u32> = (0..N)
                .map(|i| if i % 2 == 0 { acc0[i] } else { acc0[i] ^ 1 })
                .collect();
            let mut dev = Device::new();
            let px = dev.alloc_from(&bytes::from_u32(&x0));
            let pc = dev.alloc_from(&bytes::from_u32(&cmp0));
            let pa = dev.alloc_from(&bytes::from_u32(&acc0));
            let po = dev.alloc_from(&bytes::from_u32(&[0x5555_5555; N]));
            let params = [px, pc, pa, po].map(|p| Param::U64(p.addr()));
            launch(&mut dev, &text, 1, &params);
            let (mem, old) = (bytes::to_u32(&dev.read(pa)), bytes::to_u32(&dev.read(po)));
            let cas = name.starts_with("masked_cas");
            for i in 0..N {
                let want = if i % 3 == 0 {
                    (acc0[i], if cas { cmp0[i] } else { 0 })
                } else {
                    (rmw(acc0[i], x0[i], cmp0[i]), acc0[i])
                };
                assert_eq!((mem[i], old[i]), want, "{name} {gpu} element {i}");
            }
        }
    }
}

/// A grid-stride loop over `get_num_tile_blocks` with tile blocks of 1, 2
/// and 4 CTAs (`gen.py`, `grid_stride`): 3 tile blocks cover 7 tiles, each
/// tile tagged with `1000 * num_tile_blocks + tile block id`. On targets
/// with clusters a tile block of several CTAs is a cluster, the grid
/// counts clusters, and the count is `%nclusterid`, not `%nctaid` (a
/// persistent matmul strode by 264 instead of 132 on an H100).
#[test]
fn num_tile_blocks_counts_tile_blocks_not_ctas() {
    const N: usize = 128;
    let (tiles, grid) = (7usize, 3u32);
    let x: Vec<i32> = (0..(tiles * N) as i32).collect();
    for gpu in common::TARGETS {
        for cga in [1, 2, 4] {
            let text = ptx(&op(&format!("grid_stride_cga{cga}")), gpu);
            let m = Module::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            let name = format!("grid_stride_cga{cga}");
            let clusters = cga > 1 && gpu != Gpu::Sm80;
            assert_eq!(text.contains("%nclusterid.x"), clusters, "{gpu}\n{text}");
            let mut dev = Device::new();
            let px = dev.alloc_from(&bytes::from_i32(&x));
            let out = dev.alloc_from(&bytes::from_i32(&vec![-1; tiles * N]));
            let params = [
                Param::U64(px.addr()),
                Param::U64(out.addr()),
                Param::U32(tiles as u32),
            ];
            // The launch cuTile makes: a grid of tile blocks, the block
            // size and cluster shape from the kernel.
            let block = m.kernel(&name).and_then(|k| k.reqntid).expect("reqntid");
            let cfg = LaunchConfig {
                grid: (grid, 1, 1),
                block,
                cluster: (1, 1, 1),
                dynamic_smem: 0,
            };
            dev.launch(&m, &name, cfg, &params)
                .unwrap_or_else(|e| panic!("{name} {gpu}: {e}"));
            let got = bytes::to_i32(&dev.read(out));
            for (i, &g) in got.iter().enumerate() {
                let t = (i / N) as i32;
                let want = x[i] + 1000 * grid as i32 + t % grid as i32;
                assert_eq!(g, want, "{name} {gpu} element {i}");
            }
        }
    }
}

/// `d = a @ b` for a [32, k] and b [k, 32] in f16 read through views that
/// declare no padding (`gen.py`, `mma_unpadded`): what lies past `k` reads
/// as zero, as NVIDIA's staged copies give, so a ragged K is exact (it was
/// NaN). One 32x32x32 product, and a `for` over K tiles of 16 (which our
/// sm_80 and sm_90 code pipelines with `cp.async`).
#[test]
fn unpadded_matmul_operands_read_zero_out_of_bounds() {
    for gpu in TARGETS {
        for (name, ks) in [
            ("mma_unpadded_f16", &[32usize, 13, 1][..]),
            ("mma_unpadded_loop_f16", &[16, 37, 5][..]),
        ] {
            let text = ptx(&op(name), gpu);
            for &k in ks {
                let r = xorshift(k as u64 + 3, 64 * k);
                let small = |v: u64| (v % 9) as f32 - 4.0;
                let a: Vec<f32> = r[..32 * k].iter().map(|&v| small(v)).collect();
                let b: Vec<f32> = r[32 * k..].iter().map(|&v| small(v >> 7)).collect();
                let h = |v: &[f32]| -> Vec<u16> {
                    v.iter()
                        .map(|&x| ptx_emu::float::f64_to_f16_rn(f64::from(x)))
                        .collect()
                };
                let mut dev = Device::new();
                let pa = dev.alloc_from(&bytes::from_u16(&h(&a)));
                let pb = dev.alloc_from(&bytes::from_u16(&h(&b)));
                let pd = dev.alloc(4 * 32 * 32);
                let params = [
                    Param::U64(pa.addr()),
                    Param::U64(pb.addr()),
                    Param::U64(pd.addr()),
                    Param::U32(k as u32),
                ];
                launch(&mut dev, &text, 1, &params);
                let got = bytes::to_f32(&dev.read(pd));
                for i in 0..32 {
                    for j in 0..32 {
                        let want: f32 = (0..k).map(|q| a[i * k + q] * b[q * 32 + j]).sum();
                        assert_eq!(got[i * 32 + j], want, "{name} {gpu} k={k} d[{i}][{j}]");
                    }
                }
            }
        }
    }
}
