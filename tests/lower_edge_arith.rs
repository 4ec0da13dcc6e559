//! Arithmetic corners NVIDIA's tileiras compiles (kernels `i1_int_ops`,
//! `i16_shifts`, `narrow_ints` and `directed_16`, written with cuTile's bytecode encoders
//! in `tests/data/lower/ops/gen.py`):
//! - integer ops on i1 tiles, modulo 2 (0 and 1 unsigned, 0 and -1 signed),
//!   and `fpowi` by an i1 exponent (x^0 or x^-1);
//! - i16 shifts (PTX takes the amount in 32 bits) and i8 truncated to i1;
//! - iota of i8, i16 and i1, a small dense i1 constant, a view indexed by
//!   an i8 with an i16 extent, its index space as i16 and i8, and print of
//!   tf32 (kernel `narrow_ints`);
//! - f16 and bf16 `addf`/`subf`/`mulf`/`fma`/`divf` rounded toward zero,
//!   negative and positive infinity (PTX's 16-bit arithmetic rounds to
//!   nearest only: the op runs in f32 with the same rounding, which
//!   composes exactly).
//!
//! Lowered for sm_80 and sm_90, assembled by the real ptxas and run in the
//! PTX emulator, results are compared bit for bit with references computed
//! here.
mod common;

use common::xorshift as values;
use ptx_emu::float::{bf16_to_f64, f16_to_f64, f64_to_bf16_rn, f64_to_f16_rn};
use ptx_emu::{bytes, Device, Module, Param};
use tileiras::options::Gpu;

const N: usize = 128;
const TARGETS: [(Gpu, &str); 2] = [(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")];

/// Runs ops kernel `name` on `gpu` with `params`.
fn run(name: &str, gpu: Gpu, arch: &str, dev: &mut Device, params: &[Param]) {
    let text = common::ops_ptx(name, gpu, arch);
    let m = Module::parse(&text).expect("emulator parses the PTX");
    dev.launch_grid(&m, name, (1, 1, 1), params)
        .unwrap_or_else(|e| panic!("{name} on {arch}: {e}"));
}

#[test]
fn i1_integer_ops_work_modulo_two() {
    let r = values(101, N);
    let a: Vec<u8> = (0..N).map(|i| (i & 1) as u8).collect();
    let b: Vec<u8> = (0..N).map(|i| (i >> 1 & 1) as u8).collect();
    let x: Vec<f32> = r.iter().map(|&v| (v % 2000) as f32 / 7.0 - 140.0).collect();
    for (gpu, arch) in TARGETS {
        let mut dev = Device::new();
        let pa = dev.alloc_from(&a);
        let pb = dev.alloc_from(&b);
        let out = dev.alloc(17 * N);
        let px = dev.alloc_from(&bytes::from_f32(&x));
        let pw = dev.alloc(4 * N);
        let params = [pa, pb, out, px, pw].map(|p| Param::U64(p.addr()));
        run("i1_int_ops", gpu, arch, &mut dev, &params);
        let got = dev.read(out);
        let pow = bytes::to_f32(&dev.read(pw));
        for i in 0..N {
            let (a, b) = (a[i], b[i]);
            let want = [
                a ^ b,       // addi
                a ^ b,       // subi
                a & b,       // muli
                a & (1 - b), // shli
                a,           // shri signed: the sign bit shifts in
                a & (1 - b), // shri unsigned
                a & b,       // maxi signed: max(-1, 0) = 0
                a | b,       // maxi unsigned
                a | b,       // mini signed
                a & b,       // mini unsigned
                a,           // divi signed by -1: -a wraps to a
                a,           // divi unsigned by 1
                0,           // remi
                0,           // mulhii: a 1-bit product has no high bit
                a,           // negi
                a,           // absi
                a,           // bitcast
            ];
            for (row, &w) in want.iter().enumerate() {
                assert_eq!(got[row * N + i], w, "{arch}: row {row}, a = {a}, b = {b}");
            }
            let w = if a == 1 {
                (1.0 / f64::from(x[i])) as f32
            } else {
                1.0
            };
            assert_eq!(
                pow[i].to_bits(),
                w.to_bits(),
                "{arch}: fpowi({}, -{a})",
                x[i]
            );
        }
    }
}

#[test]
fn i16_shifts_and_i8_to_i1() {
    let r = values(103, N);
    let x: Vec<i16> = r.iter().map(|&v| v as i16).collect();
    let k: Vec<i16> = r.iter().map(|&v| (v >> 20) as i16 & 15).collect();
    let y: Vec<u8> = r.iter().map(|&v| (v >> 30) as u8).collect();
    for (gpu, arch) in TARGETS {
        let mut dev = Device::new();
        let px = dev.alloc_from(&bytes::from_u16(
            &x.iter().map(|&v| v as u16).collect::<Vec<_>>(),
        ));
        let pk = dev.alloc_from(&bytes::from_u16(
            &k.iter().map(|&v| v as u16).collect::<Vec<_>>(),
        ));
        let out = dev.alloc(2 * 3 * N);
        let py = dev.alloc_from(&y);
        let pt = dev.alloc(N);
        let params = [px, pk, out, py, pt].map(|p| Param::U64(p.addr()));
        run("i16_shifts", gpu, arch, &mut dev, &params);
        let got = bytes::to_u16(&dev.read(out));
        let t = dev.read(pt);
        for i in 0..N {
            let (v, s) = (x[i], k[i] as u32);
            let want = [(v << s) as u16, (v >> s) as u16, (v as u16) >> s];
            for (row, &w) in want.iter().enumerate() {
                assert_eq!(got[row * N + i], w, "{arch}: row {row}, {v} by {s}");
            }
            assert_eq!(t[i], y[i] & 1, "{arch}: trunci({})", y[i]);
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Dir {
    Zero,
    Down,
    Up,
}

/// A 16-bit float format: decode and round to nearest.
struct Fmt16 {
    dec: fn(u16) -> f64,
    rn: fn(f64) -> u16,
    /// The largest finite code.
    max: u16,
}

const F16: Fmt16 = Fmt16 {
    dec: f16_to_f64,
    rn: f64_to_f16_rn,
    max: 0x7bff,
};
const BF16: Fmt16 = Fmt16 {
    dec: bf16_to_f64,
    rn: f64_to_bf16_rn,
    max: 0x7f7f,
};

/// The code one step toward +infinity (`up`) or -infinity from `c`.
fn step(c: u16, up: bool) -> u16 {
    let neg = c & 0x8000 != 0;
    match (c, up) {
        (0x0000, false) => 0x8001,
        (0x8000, true) => 0x0001,
        _ if neg == up => c - 1,
        _ => c + 1,
    }
}

/// The exact value `v` rounded in `f` by `dir` (past the largest finite
/// value: the largest, or infinity away from the direction).
fn directed(v: f64, f: &Fmt16, dir: Dir) -> u16 {
    let rn = (f.rn)(v);
    let d = (f.dec)(rn);
    if d == v || v.is_nan() {
        return rn;
    }
    let (lo, hi) = if d.is_infinite() {
        let max = if v > 0.0 { f.max } else { f.max | 0x8000 };
        if v > 0.0 {
            (max, rn)
        } else {
            (rn, max)
        }
    } else if d < v {
        (rn, step(rn, true))
    } else {
        (step(rn, false), rn)
    };
    match dir {
        Dir::Down => lo,
        Dir::Up => hi,
        Dir::Zero if v > 0.0 => lo,
        Dir::Zero => hi,
    }
}

#[test]
fn reference_directed_rounding() {
    let tie = 1.0 + 2f64.powi(-11);
    assert_eq!(directed(tie, &F16, Dir::Zero), 0x3c00);
    assert_eq!(directed(tie, &F16, Dir::Up), 0x3c01);
    assert_eq!(directed(-tie, &F16, Dir::Down), 0xbc01);
    assert_eq!(directed(-tie, &F16, Dir::Zero), 0xbc00);
    assert_eq!(directed(1e6, &F16, Dir::Zero), 0x7bff);
    assert_eq!(directed(1e6, &F16, Dir::Up), 0x7c00);
    assert_eq!(directed(-1e-9, &F16, Dir::Up), 0x8000);
    assert_eq!(
        directed(1.0 + 2f64.powi(-7) - 2f64.powi(-30), &BF16, Dir::Zero),
        0x3f80
    );
}

/// Random 16-bit floats of `f` with exponents in `[-e, e]` (so that every
/// sum and fused product the test forms is exact in f64), never zero.
fn inputs(seed: u64, e: i32, bias: i32, mbits: u32) -> Vec<u16> {
    values(seed, N)
        .iter()
        .map(|&r| {
            let sign = ((r >> 63) as u16) << 15;
            let exp = ((r >> 8) % (2 * e as u64 + 1)) as i32 - e + bias;
            let mant = (r as u16) & ((1 << mbits) - 1);
            sign | (exp as u16) << mbits | mant
        })
        .collect()
}

#[test]
fn f16_and_bf16_arithmetic_rounds_in_every_direction() {
    let formats = [(&F16, 6, 15, 10), (&BF16, 8, 127, 7)];
    let ins: Vec<Vec<Vec<u16>>> = formats
        .iter()
        .enumerate()
        .map(|(j, &(_, e, bias, m))| {
            (0..3)
                .map(|k| inputs(107 + 3 * j as u64 + k, e, bias, m))
                .collect()
        })
        .collect();
    for (gpu, arch) in TARGETS {
        let mut dev = Device::new();
        let mut ptrs: Vec<_> = ins
            .iter()
            .flatten()
            .map(|v| dev.alloc_from(&bytes::from_u16(v)))
            .collect();
        let outs = [dev.alloc(2 * 15 * N), dev.alloc(2 * 15 * N)];
        ptrs.extend(outs);
        let params: Vec<Param> = ptrs.iter().map(|p| Param::U64(p.addr())).collect();
        run("directed_16", gpu, arch, &mut dev, &params);
        for (j, &(f, ..)) in formats.iter().enumerate() {
            let got = bytes::to_u16(&dev.read(outs[j]));
            for i in 0..N {
                let [a, b, c] = [0, 1, 2].map(|k| (f.dec)(ins[j][k][i]));
                // Exact in f64 (the quotient only to 53 bits, which no
                // 16-bit grid point lies within).
                let exact = [a + b, a - b, a * b, a.mul_add(b, c), a / b];
                for (o, &v) in exact.iter().enumerate() {
                    for (m, dir) in [Dir::Zero, Dir::Down, Dir::Up].into_iter().enumerate() {
                        let g = got[(3 * o + m) * N + i];
                        let w = directed(v, f, dir);
                        assert_eq!(
                            g, w,
                            "{arch}: format {j}, op {o}, {dir:?}: {a} {b} {c} -> {v}: got {g:#06x}, want {w:#06x}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn narrow_integer_iotas_constants_view_indices_and_tf32_print() {
    let x: Vec<f32> = (0..100).map(|v| v as f32 * 0.5 - 3.0).collect();
    let t: Vec<f32> = [1.5f32, -0.25, 3.0, 1024.0].to_vec();
    // Extent 100 (i16), tile index 6 (i8): elements 96..100, then padding.
    for (gpu, arch) in TARGETS {
        let mut dev = Device::new();
        let o8 = dev.alloc(257);
        let o16 = dev.alloc(2 * (N + 1));
        let ob = dev.alloc(18);
        let n16 = dev.alloc_from(&bytes::from_u16(&[100]));
        let n8 = dev.alloc_from(&[6u8]);
        let px = dev.alloc_from(&bytes::from_f32(&x));
        let of = dev.alloc(4 * 16);
        let pt = dev.alloc_from(&bytes::from_f32(&t));
        let params = [o8, o16, ob, n16, n8, px, of, pt].map(|p| Param::U64(p.addr()));
        let text = common::ops_ptx("narrow_ints", gpu, arch);
        let m = Module::parse(&text).expect("emulator parses the PTX");
        let out = dev
            .launch_grid(&m, "narrow_ints", (1, 1, 1), &params)
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        let g8 = dev.read(o8);
        let g16 = bytes::to_u16(&dev.read(o16));
        let gb = dev.read(ob);
        for (i, &g) in g8[..256].iter().enumerate() {
            assert_eq!(g, i as u8, "{arch}: i8 iota at {i}");
        }
        for (i, &g) in g16[..N].iter().enumerate() {
            assert_eq!(g, i as u16, "{arch}: i16 iota at {i}");
        }
        assert_eq!(gb[..2], [0, 1], "{arch}: i1 iota");
        let pattern = 0b1011_0011_1000_1101u16;
        for k in 0..16 {
            assert_eq!(
                gb[2 + k],
                (pattern >> k & 1) as u8,
                "{arch}: i1 constant at {k}"
            );
        }
        let gf = bytes::to_f32(&dev.read(of));
        for (k, &g) in gf.iter().enumerate() {
            let want = x.get(96 + k).copied().unwrap_or(0.0);
            assert_eq!(g, want, "{arch}: view element {k}");
        }
        assert_eq!(g16[N], 7, "{arch}: index space as i16");
        assert_eq!(g8[256], 7, "{arch}: index space as i8");
        // A tile prints as a bracketed list in the specifier's format.
        assert_eq!(
            out.printf, "[1.500000, -0.250000, 3.000000, 1024.000000] ",
            "{arch}: print of tf32"
        );
    }
}
