//! Shared by the corpus acceptance tests (`ptx-emu/tests/corpus.rs`, NVIDIA's
//! reference PTX) and `tests/lower_emulated.rs` (this compiler's PTX): the
//! emulator harness, random inputs, and one check per corpus kernel against a
//! CPU reference written from the kernel's docstring (`kernels.py`).
//!
//! The including test crate defines at its root what differs: `CORPUS` (the
//! corpus directory relative to its manifest), `ptx_source(kernel)` (the PTX
//! to run) and `TF32_ROUNDS` (whether the tf32 matmul rounds its inputs to
//! nearest, as the docstring says, or truncates them, as NVIDIA's PTX does).

#![allow(clippy::needless_range_loop, clippy::too_many_arguments)]

use ptx_emu::{bytes, DevPtr, Device, LaunchConfig, Module, Param};

/// The corpus directory: `$PTX_EMU_CORPUS`, else the including crate's
/// `CORPUS` (the repository's `tests/data/corpus`).
pub fn corpus() -> std::path::PathBuf {
    if let Ok(p) = std::env::var("PTX_EMU_CORPUS") {
        return p.into();
    }
    std::path::PathBuf::from(crate::CORPUS)
}

/// The kernel's PTX (from the including test crate), parsed.
fn load(name: &str) -> Module {
    let text = crate::ptx_source(name);
    Module::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"))
}

/// Deterministic xorshift generator.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn f32(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
    fn i32(&mut self) -> i32 {
        self.next() as i32
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % ((hi - lo) as u64)) as i64
    }
}

/// Float inputs including special values.
fn f32_inputs(rng: &mut Rng, n: usize) -> Vec<f32> {
    let specials = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e-40,
        -1e-40,
        f32::MAX,
        f32::MIN_POSITIVE,
        0.5,
        3.0,
    ];
    (0..n)
        .map(|i| {
            if i % 17 == 3 {
                specials[(rng.next() % specials.len() as u64) as usize]
            } else {
                rng.f32(-100.0, 100.0)
            }
        })
        .collect()
}

struct Launch {
    dev: Device,
    m: Module,
    name: String,
    /// Scalar parameter values; converted to the declared width at launch.
    params: Vec<Param>,
}

impl Launch {
    fn new(name: &str) -> Launch {
        Launch {
            dev: Device::new(),
            m: load(name),
            name: name.into(),
            params: Vec::new(),
        }
    }
    /// Adds a 1-D array parameter (pointer, shape, stride in elements).
    fn arr1(&mut self, data: &[u8], n: usize, stride: usize) -> DevPtr {
        let p = self.dev.alloc_from(data);
        self.params.push(Param::U64(p.addr()));
        self.params.push(Param::U32(n as u32));
        self.params.push(Param::U32(stride as u32));
        p
    }
    /// Adds an N-D array parameter with explicit shape and strides (elements).
    fn arr(&mut self, data: &[u8], shape: &[usize], strides: &[usize]) -> DevPtr {
        let p = self.dev.alloc_from(data);
        self.params.push(Param::U64(p.addr()));
        for s in shape {
            self.params.push(Param::U32(*s as u32));
        }
        for s in strides {
            self.params.push(Param::U32(*s as u32));
        }
        p
    }
    fn f32_out(&mut self, n: usize) -> DevPtr {
        self.arr1(&bytes::from_f32(&vec![-12345.0; n]), n, 1)
    }
    fn i32_out(&mut self, n: usize) -> DevPtr {
        self.arr1(&bytes::from_i32(&vec![0x5a5a5a5a; n]), n, 1)
    }
    fn run(&mut self, grid: (u32, u32, u32)) -> ptx_emu::LaunchResult {
        let k = self.m.kernel(&self.name).unwrap();
        let b = k.reqntid.unwrap();
        let cfg = LaunchConfig {
            grid,
            block: b,
            cluster: (1, 1, 1),
            dynamic_smem: 0,
        };
        // Scalars take the width the entry declares (int64 index types use .u64).
        let params: Vec<Param> = self
            .params
            .iter()
            .zip(&k.params)
            .map(|(p, d)| match (p, d.size) {
                (Param::U32(v), 8) => Param::U64(*v as i32 as i64 as u64),
                (Param::U64(v), 4) => Param::U32(*v as u32),
                (p, _) => p.clone(),
            })
            .collect();
        // The hidden tensor maps as the including crate's kernels take them.
        let params = crate::launch_params(&self.name, params);
        self.dev
            .launch(&self.m, &self.name, cfg, &params)
            .unwrap_or_else(|e| panic!("{e}"))
    }
    fn f32(&mut self, p: DevPtr) -> Vec<f32> {
        bytes::to_f32(&self.dev.read(p))
    }
    fn i32(&mut self, p: DevPtr) -> Vec<i32> {
        bytes::to_i32(&self.dev.read(p))
    }
}

fn cdiv(a: usize, b: usize) -> usize {
    a.div_ceil(b)
}

/// Bit-exact f32 comparison, any NaN matching any NaN.
fn same_f32(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

fn check_f32(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for i in 0..got.len() {
        assert!(
            same_f32(got[i], want[i]),
            "{what}[{i}]: got {} ({:#x}), want {} ({:#x})",
            got[i],
            got[i].to_bits(),
            want[i],
            want[i].to_bits()
        );
    }
}

fn check_f32_tol(what: &str, got: &[f32], want: &[f64], rel: f64, abs: f64) {
    assert_eq!(got.len(), want.len());
    for i in 0..got.len() {
        let (g, w) = (got[i] as f64, want[i] as f32 as f64);
        let ok = (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= abs + rel * w.abs();
        assert!(ok, "{what}[{i}]: got {g}, want {w}");
    }
}

pub fn vadd_f32_strided() {
    for &(n, stride) in &[(1000usize, 1usize), (257, 3), (256, 2), (1, 1)] {
        let mut rng = Rng(n as u64 * 7 + stride as u64);
        let a = f32_inputs(&mut rng, n * stride);
        let b = f32_inputs(&mut rng, n * stride);
        let mut l = Launch::new("vadd_f32_strided");
        l.arr1(&bytes::from_f32(&a), n, stride);
        l.arr1(&bytes::from_f32(&b), n, stride);
        let c = l.arr1(&bytes::from_f32(&vec![7.0; n * stride]), n, stride);
        l.run((cdiv(n, 256) as u32, 1, 1));
        let got = l.f32(c);
        for i in 0..n * stride {
            let want = if i % stride == 0 { a[i] + b[i] } else { 7.0 };
            assert!(same_f32(got[i], want), "c[{i}] got {} want {want}", got[i]);
        }
    }
}

// ---------------------------------------------------------------- helpers

/// Independent f64 -> IEEE binary16 round-to-nearest-even.
fn f16_from_f64(x: f64) -> u16 {
    if x.is_nan() {
        return 0x7e00;
    }
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    if a == 0.0 {
        return sign;
    }
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    // exponent of a, clamped to the subnormal exponent
    let mut e = a.log2().floor() as i32;
    if 2f64.powi(e) > a {
        e -= 1;
    }
    if 2f64.powi(e + 1) <= a {
        e += 1;
    }
    let e = e.max(-14);
    let q = e - 10;
    let m = (a / 2f64.powi(q)).round_ties_even();
    let (m, e) = if m >= 2048.0 {
        (m / 2.0, e + 1)
    } else {
        (m, e)
    };
    if e > 15 {
        return sign | 0x7c00;
    }
    let m = m as u16;
    if m < 1024 {
        sign | m
    } else {
        sign | (((e + 15) as u16) << 10) | (m - 1024)
    }
}

fn f16_to_f64(h: u16) -> f64 {
    let s = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((h >> 10) & 31) as i32;
    let m = (h & 1023) as f64;
    s * match e {
        0 => m * 2f64.powi(-24),
        31 => {
            if m == 0.0 {
                f64::INFINITY
            } else {
                f64::NAN
            }
        }
        _ => (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    }
}

fn bf16_from_f32(x: f32) -> u16 {
    if x.is_nan() {
        return 0x7fc0;
    }
    let b = x.to_bits();
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

fn same_f16(a: u16, b: u16) -> bool {
    let nan = |h: u16| (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
    (nan(a) && nan(b)) || a == b
}

fn same_bf16(a: u16, b: u16) -> bool {
    bf16_to_f32(a).is_nan() && bf16_to_f32(b).is_nan() || a == b
}

/// Runs a 1-D elementwise kernel: every input and output array has length n,
/// stride 1; outputs are pre-filled with a poison pattern.
fn elementwise(
    name: &str,
    n: usize,
    tile: usize,
    ins: &[Vec<u8>],
    out_sizes: &[usize],
    scalars: &[Param],
) -> Vec<Vec<u8>> {
    let mut l = Launch::new(name);
    for a in ins {
        l.arr1(a, n, 1);
    }
    let outs: Vec<DevPtr> = out_sizes
        .iter()
        .map(|es| l.arr1(&vec![0xa5; n * es], n, 1))
        .collect();
    l.params.extend_from_slice(scalars);
    l.run((cdiv(n, tile) as u32, 1, 1));
    outs.iter().map(|p| l.dev.read(*p)).collect()
}

const SIZES: &[usize] = &[1000, 256, 77];

// ---------------------------------------------------------------- elementwise

pub fn vadd_f32_contig() {
    for &n in &[3000usize, 1024, 5] {
        let mut rng = Rng(n as u64);
        let a = f32_inputs(&mut rng, n);
        let b = f32_inputs(&mut rng, n);
        let o = elementwise(
            "vadd_f32_contig",
            n,
            1024,
            &[bytes::from_f32(&a), bytes::from_f32(&b)],
            &[4],
            &[],
        );
        let want: Vec<f32> = (0..n).map(|i| a[i] + b[i]).collect();
        check_f32("c", &bytes::to_f32(&o[0]), &want);
    }
}

pub fn vadd_f32_divisible() {
    let n = 4096;
    let mut rng = Rng(5);
    let a = f32_inputs(&mut rng, n);
    let b = f32_inputs(&mut rng, n);
    let o = elementwise(
        "vadd_f32_divisible",
        n,
        1024,
        &[bytes::from_f32(&a), bytes::from_f32(&b)],
        &[4],
        &[],
    );
    let want: Vec<f32> = (0..n).map(|i| a[i] + b[i]).collect();
    check_f32("c", &bytes::to_f32(&o[0]), &want);
}

pub fn arith_f32() {
    for &n in SIZES {
        let mut rng = Rng(n as u64 + 1);
        let a = f32_inputs(&mut rng, n);
        let b = f32_inputs(&mut rng, n);
        let o = elementwise(
            "arith_f32",
            n,
            256,
            &[bytes::from_f32(&a), bytes::from_f32(&b)],
            &[4; 5],
            &[],
        );
        let sub: Vec<f32> = (0..n).map(|i| a[i] - b[i]).collect();
        let mul: Vec<f32> = (0..n).map(|i| a[i] * b[i]).collect();
        let div: Vec<f32> = (0..n).map(|i| a[i] / b[i]).collect();
        let md: Vec<f32> = (0..n)
            .map(|i| {
                let r = a[i] % b[i];
                if r != 0.0 && (r < 0.0) != (b[i] < 0.0) {
                    r + b[i]
                } else {
                    r
                }
            })
            .collect();
        let fd: Vec<f32> = (0..n).map(|i| (a[i] / b[i]).floor()).collect();
        check_f32("o_sub", &bytes::to_f32(&o[0]), &sub);
        check_f32("o_mul", &bytes::to_f32(&o[1]), &mul);
        check_f32("o_div", &bytes::to_f32(&o[2]), &div);
        check_f32("o_mod", &bytes::to_f32(&o[3]), &md);
        check_f32("o_floordiv", &bytes::to_f32(&o[4]), &fd);
    }
}

fn min_nan(a: f32, b: f32, max: bool) -> f32 {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        // -0 orders below +0
        return if (a.is_sign_negative()) != max { a } else { b };
    }
    if (a > b) == max {
        a
    } else {
        b
    }
}

pub fn minmax_neg_abs_f32() {
    for &n in SIZES {
        let mut rng = Rng(n as u64 + 2);
        let a = f32_inputs(&mut rng, n);
        let b = f32_inputs(&mut rng, n);
        let o = elementwise(
            "minmax_neg_abs_f32",
            n,
            256,
            &[bytes::from_f32(&a), bytes::from_f32(&b)],
            &[4; 5],
            &[],
        );
        let mn: Vec<f32> = (0..n).map(|i| min_nan(a[i], b[i], false)).collect();
        let mx: Vec<f32> = (0..n).map(|i| min_nan(a[i], b[i], true)).collect();
        let mxn: Vec<f32> = (0..n)
            .map(|i| {
                if a[i].is_nan() || b[i].is_nan() {
                    f32::NAN
                } else {
                    min_nan(a[i], b[i], true)
                }
            })
            .collect();
        check_f32("o_min", &bytes::to_f32(&o[0]), &mn);
        check_f32("o_max", &bytes::to_f32(&o[1]), &mx);
        check_f32("o_maxnan", &bytes::to_f32(&o[2]), &mxn);
        let neg = bytes::to_u32(&o[3]);
        let abs = bytes::to_u32(&o[4]);
        for i in 0..n {
            assert_eq!(neg[i], a[i].to_bits() ^ 0x8000_0000, "o_neg[{i}]");
            assert_eq!(abs[i], b[i].to_bits() & 0x7fff_ffff, "o_abs[{i}]");
        }
    }
}

pub fn fma_f32() {
    for &n in &[1500usize, 512, 3] {
        let mut rng = Rng(n as u64 + 3);
        let a = f32_inputs(&mut rng, n);
        let b = f32_inputs(&mut rng, n);
        let c = f32_inputs(&mut rng, n);
        let o = elementwise(
            "fma_f32",
            n,
            512,
            &[
                bytes::from_f32(&a),
                bytes::from_f32(&b),
                bytes::from_f32(&c),
            ],
            &[4],
            &[],
        );
        let want: Vec<f32> = (0..n).map(|i| a[i].mul_add(b[i], c[i])).collect();
        check_f32("out", &bytes::to_f32(&o[0]), &want);
    }
}

pub fn exp_log_f32() {
    for &n in SIZES {
        let mut rng = Rng(n as u64 + 4);
        let x: Vec<f32> = (0..n)
            .map(|i| {
                if i % 5 == 0 {
                    rng.f32(0.0, 1e6)
                } else {
                    rng.f32(-20.0, 20.0)
                }
            })
            .collect();
        let o = elementwise("exp_log_f32", n, 256, &[bytes::from_f32(&x)], &[4; 7], &[]);
        let xs: Vec<f64> = x.iter().map(|v| *v as f64).collect();
        let f = |g: &dyn Fn(f64) -> f64| -> Vec<f64> { xs.iter().map(|v| g(*v)).collect() };
        check_f32_tol(
            "o_exp",
            &bytes::to_f32(&o[0]),
            &f(&|v| v.exp()),
            4e-6,
            1e-37,
        );
        check_f32_tol(
            "o_exp2",
            &bytes::to_f32(&o[1]),
            &f(&|v| v.exp2()),
            4e-6,
            1e-37,
        );
        check_f32_tol("o_log", &bytes::to_f32(&o[2]), &f(&|v| v.ln()), 4e-6, 1e-6);
        check_f32_tol(
            "o_log2",
            &bytes::to_f32(&o[3]),
            &f(&|v| v.log2()),
            4e-6,
            1e-6,
        );
        let sq: Vec<f32> = x.iter().map(|v| v.sqrt()).collect();
        check_f32("o_sqrt", &bytes::to_f32(&o[4]), &sq);
        check_f32_tol(
            "o_rsqrt",
            &bytes::to_f32(&o[5]),
            &f(&|v| 1.0 / v.sqrt()),
            4e-6,
            0.0,
        );
        check_f32_tol(
            "o_exp_approx",
            &bytes::to_f32(&o[6]),
            &f(&|v| v.exp()),
            4e-6,
            1e-37,
        );
    }
}

pub fn trig_f32() {
    for &n in SIZES {
        let mut rng = Rng(n as u64 + 5);
        let x: Vec<f32> = (0..n).map(|_| rng.f32(-8.0, 8.0)).collect();
        let o = elementwise("trig_f32", n, 256, &[bytes::from_f32(&x)], &[4; 6], &[]);
        let xs: Vec<f64> = x.iter().map(|v| *v as f64).collect();
        let f = |g: &dyn Fn(f64) -> f64| -> Vec<f64> { xs.iter().map(|v| g(*v)).collect() };
        check_f32_tol("o_sin", &bytes::to_f32(&o[0]), &f(&|v| v.sin()), 1e-5, 1e-6);
        check_f32_tol("o_cos", &bytes::to_f32(&o[1]), &f(&|v| v.cos()), 1e-5, 1e-6);
        check_f32_tol("o_tan", &bytes::to_f32(&o[2]), &f(&|v| v.tan()), 1e-5, 1e-6);
        check_f32_tol(
            "o_tanh",
            &bytes::to_f32(&o[3]),
            &f(&|v| v.tanh()),
            1e-5,
            1e-6,
        );
        check_f32_tol(
            "o_sinh",
            &bytes::to_f32(&o[4]),
            &f(&|v| v.sinh()),
            1e-5,
            1e-6,
        );
        check_f32_tol(
            "o_cosh",
            &bytes::to_f32(&o[5]),
            &f(&|v| v.cosh()),
            1e-5,
            1e-6,
        );
    }
}

pub fn pow_atan2_floor_ceil_f32() {
    for &n in SIZES {
        let mut rng = Rng(n as u64 + 6);
        let a: Vec<f32> = (0..n)
            .map(|i| {
                if i % 3 == 0 {
                    rng.f32(-5.0, 5.0)
                } else {
                    rng.f32(0.0, 10.0)
                }
            })
            .collect();
        let b: Vec<f32> = (0..n)
            .map(|i| {
                if i % 3 == 1 {
                    rng.f32(-5.0, 5.0).round()
                } else {
                    rng.f32(-4.0, 4.0)
                }
            })
            .collect();
        let o = elementwise(
            "pow_atan2_floor_ceil_f32",
            n,
            256,
            &[bytes::from_f32(&a), bytes::from_f32(&b)],
            &[4; 4],
            &[],
        );
        let pw: Vec<f64> = (0..n).map(|i| (a[i] as f64).powf(b[i] as f64)).collect();
        let at: Vec<f64> = (0..n).map(|i| (a[i] as f64).atan2(b[i] as f64)).collect();
        check_f32_tol("o_pow", &bytes::to_f32(&o[0]), &pw, 1e-5, 1e-30);
        check_f32_tol("o_atan2", &bytes::to_f32(&o[1]), &at, 1e-5, 1e-6);
        let fl: Vec<f32> = a.iter().map(|v| v.floor()).collect();
        let ce: Vec<f32> = b.iter().map(|v| v.ceil()).collect();
        check_f32("o_floor", &bytes::to_f32(&o[2]), &fl);
        check_f32("o_ceil", &bytes::to_f32(&o[3]), &ce);
    }
}

fn f16_inputs(rng: &mut Rng, n: usize) -> Vec<u16> {
    (0..n)
        .map(|i| match i % 13 {
            0 => [
                0x0000u16, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x83ff, 0x7bff,
            ][(rng.next() % 8) as usize],
            _ => f16_from_f64(rng.f32(-300.0, 300.0) as f64),
        })
        .collect()
}

pub fn arith_f16() {
    for &n in &[1200usize, 512, 9] {
        let mut rng = Rng(n as u64 + 7);
        let a = f16_inputs(&mut rng, n);
        let b = f16_inputs(&mut rng, n);
        let o = elementwise(
            "arith_f16",
            n,
            512,
            &[bytes::from_u16(&a), bytes::from_u16(&b)],
            &[2; 5],
            &[],
        );
        let o: Vec<Vec<u16>> = o.iter().map(|v| bytes::to_u16(v)).collect();
        for i in 0..n {
            let (x, y) = (f16_to_f64(a[i]), f16_to_f64(b[i]));
            let want = [
                f16_from_f64(x + y),
                f16_from_f64(x * y),
                f16_from_f64(((x as f32) / (y as f32)) as f64),
                if x.is_nan() {
                    b[i]
                } else if y.is_nan() || x > y {
                    a[i]
                } else if x < y || (x.is_sign_negative() && !y.is_sign_negative()) {
                    b[i]
                } else {
                    a[i]
                },
                f16_from_f64((x.abs() as f32).sqrt() as f64),
            ];
            for (k, w) in want.iter().enumerate() {
                assert!(
                    same_f16(o[k][i], *w),
                    "output {k} element {i}: a={x} b={y}: got {:#06x} want {w:#06x}",
                    o[k][i]
                );
            }
        }
    }
}

pub fn arith_bf16() {
    for &n in &[1200usize, 512, 9] {
        let mut rng = Rng(n as u64 + 8);
        let a: Vec<u16> = (0..n)
            .map(|_| bf16_from_f32(rng.f32(-10.0, 10.0)))
            .collect();
        let b: Vec<u16> = (0..n)
            .map(|i| {
                if i % 11 == 0 {
                    0x7fc0
                } else {
                    bf16_from_f32(rng.f32(-10.0, 10.0))
                }
            })
            .collect();
        let o = elementwise(
            "arith_bf16",
            n,
            512,
            &[bytes::from_u16(&a), bytes::from_u16(&b)],
            &[2; 6],
            &[],
        );
        let o: Vec<Vec<u16>> = o.iter().map(|v| bytes::to_u16(v)).collect();
        for i in 0..n {
            let (x, y) = (bf16_to_f32(a[i]) as f64, bf16_to_f32(b[i]) as f64);
            let exact = [
                bf16_from_f32((x + y) as f32),
                bf16_from_f32((x - y) as f32),
                bf16_from_f32((x * y) as f32),
                if y.is_nan() || x <= y { a[i] } else { b[i] },
            ];
            for (k, w) in exact.iter().enumerate() {
                assert!(
                    same_bf16(o[k][i], *w),
                    "output {k} element {i}: a={x} b={y}: got {:#06x} want {w:#06x}",
                    o[k][i]
                );
            }
            // approximate functions: within 1 bf16 ulp
            for (k, w) in [(4usize, x.exp()), (5, y.tanh())] {
                let g = bf16_to_f32(o[k][i]) as f64;
                assert!(
                    (g.is_nan() && w.is_nan()) || (g - w).abs() <= w.abs() / 128.0 + 1e-30,
                    "output {k} element {i}: got {g} want {w}"
                );
            }
        }
    }
}

pub fn arith_f64() {
    for &n in &[300usize, 128, 1] {
        let mut rng = Rng(n as u64 + 9);
        let g = |rng: &mut Rng| -> Vec<f64> {
            (0..n)
                .map(|_| rng.f32(-100.0, 100.0) as f64 * (1.0 + 1e-9 * rng.f32(0.0, 1.0) as f64))
                .collect()
        };
        let (a, b, c) = (g(&mut rng), g(&mut rng), g(&mut rng));
        let o = elementwise(
            "arith_f64",
            n,
            128,
            &[
                bytes::from_f64(&a),
                bytes::from_f64(&b),
                bytes::from_f64(&c),
            ],
            &[8; 4],
            &[],
        );
        let o: Vec<Vec<f64>> = o.iter().map(|v| bytes::to_f64(v)).collect();
        for i in 0..n {
            let want = [
                a[i].mul_add(b[i], c[i]),
                a[i] / b[i],
                a[i].abs().sqrt(),
                c[i].floor(),
            ];
            for k in 0..4 {
                assert_eq!(
                    o[k][i].to_bits(),
                    want[k].to_bits(),
                    "output {k} element {i}"
                );
            }
        }
    }
}

fn i32_inputs(rng: &mut Rng, n: usize) -> Vec<i32> {
    let sp = [0, 1, -1, i32::MIN, i32::MAX, 7, 8, -8, 31, 32];
    (0..n)
        .map(|i| {
            if i % 7 == 0 {
                sp[(rng.next() % sp.len() as u64) as usize]
            } else if i % 3 == 0 {
                rng.range(-100, 100) as i32
            } else {
                rng.i32()
            }
        })
        .collect()
}

pub fn int_arith_i32() {
    for &n in SIZES {
        let mut rng = Rng(n as u64 + 10);
        let a = i32_inputs(&mut rng, n);
        let b = i32_inputs(&mut rng, n);
        let o = elementwise(
            "int_arith_i32",
            n,
            256,
            &[bytes::from_i32(&a), bytes::from_i32(&b)],
            &[4; 7],
            &[],
        );
        let o: Vec<Vec<i32>> = o.iter().map(|v| bytes::to_i32(v)).collect();
        for i in 0..n {
            let want = [
                a[i].wrapping_add(b[i]),
                a[i].wrapping_sub(b[i]),
                a[i].wrapping_mul(b[i]),
                a[i].wrapping_neg(),
                b[i].wrapping_abs(),
                a[i].min(b[i]),
                a[i].max(b[i]),
            ];
            for k in 0..7 {
                assert_eq!(
                    o[k][i], want[k],
                    "output {k} element {i}: a={} b={}",
                    a[i], b[i]
                );
            }
        }
    }
}

pub fn int_divmod_i32() {
    for &n in SIZES {
        let mut rng = Rng(n as u64 + 11);
        let a = i32_inputs(&mut rng, n);
        let b: Vec<i32> = i32_inputs(&mut rng, n)
            .into_iter()
            .map(|v| {
                if v == 0 || v == -1 {
                    3
                } else if v % 5 == 0 {
                    v % 17 + 20
                } else {
                    v
                }
            })
            .collect();
        let o = elementwise(
            "int_divmod_i32",
            n,
            256,
            &[bytes::from_i32(&a), bytes::from_i32(&b)],
            &[4; 3],
            &[],
        );
        let o: Vec<Vec<i32>> = o.iter().map(|v| bytes::to_i32(v)).collect();
        for i in 0..n {
            let (x, y) = (a[i] as i64, b[i] as i64);
            let fd = x.div_euclid(y) - if y < 0 && x.rem_euclid(y) != 0 { 1 } else { 0 };
            let md = x - y * fd;
            let cd = -((-x).div_euclid(y)
                - if y < 0 && (-x).rem_euclid(y) != 0 {
                    1
                } else {
                    0
                });
            let want = [fd as i32, md as i32, cd as i32];
            for k in 0..3 {
                assert_eq!(o[k][i], want[k], "output {k} element {i}: a={x} b={y}");
            }
        }
    }
}

pub fn int_arith_i64() {
    for &n in &[300usize, 128, 5] {
        let mut rng = Rng(n as u64 + 12);
        let a: Vec<i64> = (0..n)
            .map(|i| {
                if i % 4 == 0 {
                    rng.range(-1000, 1000)
                } else {
                    rng.next() as i64
                }
            })
            .collect();
        let b: Vec<i64> = (0..n)
            .map(|i| {
                if i % 3 == 0 {
                    rng.range(1, 50) * if i % 2 == 0 { -1 } else { 1 }
                } else {
                    (rng.next() as i64) | 1
                }
            })
            .collect();
        let o = elementwise(
            "int_arith_i64",
            n,
            128,
            &[bytes::from_i64(&a), bytes::from_i64(&b)],
            &[8; 3],
            &[],
        );
        let o: Vec<Vec<i64>> = o.iter().map(|v| bytes::to_i64(v)).collect();
        for i in 0..n {
            let (x, y) = (a[i] as i128, b[i] as i128);
            let q = x / y;
            let fd = if (x % y != 0) && ((x < 0) != (y < 0)) {
                q - 1
            } else {
                q
            };
            let want = [
                a[i].wrapping_mul(b[i]).wrapping_add(a[i] >> 3),
                fd as i64,
                a[i].max(b[i]),
            ];
            for k in 0..3 {
                assert_eq!(o[k][i], want[k], "output {k} element {i}: a={x} b={y}");
            }
        }
    }
}

pub fn uint_ops_u32() {
    for &n in SIZES {
        let mut rng = Rng(n as u64 + 13);
        let a: Vec<u32> = (0..n)
            .map(|i| {
                if i % 9 == 0 {
                    u32::MAX - (i as u32)
                } else {
                    rng.next() as u32
                }
            })
            .collect();
        let b: Vec<u32> = (0..n)
            .map(|i| {
                if i % 2 == 0 {
                    (rng.next() % 1000) as u32 + 1
                } else {
                    (rng.next() as u32) | 1
                }
            })
            .collect();
        let o = elementwise(
            "uint_ops_u32",
            n,
            256,
            &[bytes::from_u32(&a), bytes::from_u32(&b)],
            &[4; 5],
            &[],
        );
        let o: Vec<Vec<u32>> = o.iter().map(|v| bytes::to_u32(v)).collect();
        for i in 0..n {
            let want = [
                a[i] >> 3,
                a[i] % b[i],
                a[i].max(b[i]),
                a[i] & 0xff,
                (a[i] as f32).to_bits(),
            ];
            for k in 0..5 {
                assert_eq!(
                    o[k][i], want[k],
                    "output {k} element {i}: a={} b={}",
                    a[i], b[i]
                );
            }
        }
    }
}

pub fn bitwise_i32() {
    for &n in SIZES {
        let mut rng = Rng(n as u64 + 14);
        let a = i32_inputs(&mut rng, n);
        let b = i32_inputs(&mut rng, n);
        let o = elementwise(
            "bitwise_i32",
            n,
            256,
            &[bytes::from_i32(&a), bytes::from_i32(&b)],
            &[4; 6],
            &[],
        );
        let o: Vec<Vec<i32>> = o.iter().map(|v| bytes::to_i32(v)).collect();
        for i in 0..n {
            let s = (b[i] & 31) as u32;
            let want = [
                a[i] & b[i],
                a[i] | b[i],
                a[i] ^ b[i],
                !a[i],
                a[i].wrapping_shl(s),
                a[i] >> s,
            ];
            for k in 0..6 {
                assert_eq!(
                    o[k][i], want[k],
                    "output {k} element {i}: a={} b={}",
                    a[i], b[i]
                );
            }
        }
    }
}

pub fn cmp_select_f32() {
    for &n in SIZES {
        let mut rng = Rng(n as u64 + 15);
        let a = f32_inputs(&mut rng, n);
        let b: Vec<f32> = (0..n)
            .map(|i| {
                if i % 4 == 0 {
                    a[i]
                } else {
                    f32_inputs(&mut rng, 1)[0]
                }
            })
            .collect();
        let o = elementwise(
            "cmp_select_f32",
            n,
            256,
            &[bytes::from_f32(&a), bytes::from_f32(&b)],
            &[4, 4],
            &[],
        );
        let sel = bytes::to_f32(&o[0]);
        let flags = bytes::to_i32(&o[1]);
        for i in 0..n {
            let (x, y) = (a[i], b[i]);
            let ws = if x > y { x - y } else { y * 2.0 };
            assert!(same_f32(sel[i], ws), "o_sel[{i}] {x} {y}");
            let wf =
                (x <= y) as i32 + 2 * (x == y) as i32 + 4 * (x != y) as i32 + 8 * x.is_nan() as i32;
            assert_eq!(flags[i], wf, "o_flags[{i}] {x} {y}");
        }
    }
}

pub fn cmp_select_i32() {
    for &n in SIZES {
        let mut rng = Rng(n as u64 + 16);
        let a = i32_inputs(&mut rng, n);
        let b: Vec<i32> = (0..n)
            .map(|i| {
                if i % 4 == 0 {
                    a[i]
                } else {
                    i32_inputs(&mut rng, 1)[0]
                }
            })
            .collect();
        let o = elementwise(
            "cmp_select_i32",
            n,
            256,
            &[bytes::from_i32(&a), bytes::from_i32(&b)],
            &[4, 4],
            &[],
        );
        let d = bytes::to_i32(&o[0]);
        let flags = bytes::to_i32(&o[1]);
        for i in 0..n {
            let (x, y) = (a[i], b[i]);
            let wd = if x < y {
                y.wrapping_sub(x)
            } else {
                x.wrapping_sub(y)
            };
            assert_eq!(d[i], wd, "o_absdiff[{i}]");
            let wf =
                (x >= y) as i32 + 2 * (x == 0) as i32 + 4 * (x != y) as i32 + 8 * (y <= 7) as i32;
            assert_eq!(flags[i], wf, "o_flags[{i}]");
        }
    }
}

pub fn cast_f32_f16_bf16() {
    for &n in SIZES {
        let mut rng = Rng(n as u64 + 17);
        let mut x = f32_inputs(&mut rng, n);
        for (i, v) in x.iter_mut().enumerate() {
            if i % 5 == 1 {
                *v *= 1e-3; // some f16 subnormal / rounding cases
            }
            if i % 5 == 2 {
                *v *= 1000.0; // some f16 overflow
            }
        }
        let o = elementwise(
            "cast_f32_f16_bf16",
            n,
            256,
            &[bytes::from_f32(&x)],
            &[2, 2, 4],
            &[],
        );
        let h = bytes::to_u16(&o[0]);
        let bf = bytes::to_u16(&o[1]);
        let d = bytes::to_f32(&o[2]);
        for i in 0..n {
            let wh = f16_from_f64(x[i] as f64);
            let wb = bf16_from_f32(x[i]);
            assert!(
                same_f16(h[i], wh),
                "o_f16[{i}] x={} got {:#x} want {wh:#x}",
                x[i],
                h[i]
            );
            assert!(
                same_bf16(bf[i], wb),
                "o_bf16[{i}] x={} got {:#x} want {wb:#x}",
                x[i],
                bf[i]
            );
            let wd = f16_to_f64(wh) as f32 - bf16_to_f32(wb);
            assert!(same_f32(d[i], wd), "o_diff[{i}]");
        }
    }
}

pub fn cast_float_int() {
    for &n in SIZES {
        let mut rng = Rng(n as u64 + 18);
        let x: Vec<f32> = (0..n)
            .map(|i| {
                if i % 6 == 0 {
                    [f32::NAN, 3e9, -3e9, 1e19, -1e19, 2.5, -2.5, -0.7][(rng.next() % 8) as usize]
                } else {
                    rng.f32(-1e6, 1e6)
                }
            })
            .collect();
        let k = i32_inputs(&mut rng, n);
        let o = elementwise(
            "cast_float_int",
            n,
            256,
            &[bytes::from_f32(&x), bytes::from_i32(&k)],
            &[4, 8, 4, 2],
            &[],
        );
        let oi = bytes::to_i32(&o[0]);
        let ol = bytes::to_i64(&o[1]);
        let of = bytes::to_f32(&o[2]);
        let oh = bytes::to_u16(&o[3]);
        for i in 0..n {
            // Rust `as` truncates toward zero, saturates and maps NaN to 0, as cvt.rzi does.
            assert_eq!(oi[i], x[i] as i32, "o_i32[{i}] x={}", x[i]);
            assert_eq!(ol[i], x[i] as i64, "o_i64[{i}] x={}", x[i]);
            assert!(same_f32(of[i], k[i] as f32), "o_f32[{i}]");
            assert!(
                same_f16(oh[i], f16_from_f64(k[i] as f64)),
                "o_f16[{i}] n={} got {:#x}",
                k[i],
                oh[i]
            );
        }
    }
}

pub fn cast_int_width() {
    for &n in SIZES {
        let mut rng = Rng(n as u64 + 19);
        let x = i32_inputs(&mut rng, n);
        let u: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
        let o = elementwise(
            "cast_int_width",
            n,
            256,
            &[bytes::from_i32(&x), u.clone()],
            &[8, 2, 1, 4],
            &[],
        );
        let o64 = bytes::to_i64(&o[0]);
        let o16 = bytes::to_u16(&o[1]);
        let o32 = bytes::to_i32(&o[3]);
        for i in 0..n {
            assert_eq!(o64[i], x[i] as i64 * 3, "o_i64[{i}]");
            assert_eq!(o16[i] as i16, x[i] as i16, "o_i16[{i}]");
            assert_eq!(o[2][i] as i8, x[i] as i8, "o_i8[{i}]");
            assert_eq!(o32[i], u[i] as i32 + 1, "o_u8w[{i}]");
        }
    }
}

pub fn bitcast_pack_f32() {
    for &n in SIZES {
        let mut rng = Rng(n as u64 + 20);
        let x = f32_inputs(&mut rng, n);
        let mut l = Launch::new("bitcast_pack_f32");
        l.arr1(&bytes::from_f32(&x), n, 1);
        let ob = l.i32_out(n);
        let oh = l.arr1(&vec![0xa5; 4 * n], 2 * n, 1);
        l.run((cdiv(n, 128) as u32, 1, 1));
        let bits = l.i32(ob);
        let halves = bytes::to_u16(&l.dev.read(oh));
        for i in 0..n {
            assert_eq!(bits[i] as u32, x[i].to_bits());
            assert_eq!(halves[2 * i], x[i].to_bits() as u16);
            assert_eq!(halves[2 * i + 1], (x[i].to_bits() >> 16) as u16);
        }
    }
}

pub fn scalar_params_axpy() {
    for &n in SIZES {
        let mut rng = Rng(n as u64 + 21);
        let x = f32_inputs(&mut rng, n);
        let y = f32_inputs(&mut rng, n);
        let alpha = rng.f32(-3.0, 3.0);
        let shift = rng.range(-50, 50) as i32;
        let o = elementwise(
            "scalar_params_axpy",
            n,
            256,
            &[bytes::from_f32(&x), bytes::from_f32(&y)],
            &[4],
            &[Param::U32(alpha.to_bits()), Param::U32(shift as u32)],
        );
        let want: Vec<f32> = (0..n)
            .map(|i| alpha.mul_add(x[i], y[i] * 3.0) + shift as f32)
            .collect();
        check_f32("out", &bytes::to_f32(&o[0]), &want);
    }
}

pub fn nobounds_copy_f32() {
    let n = 1024;
    let mut rng = Rng(22);
    let x = f32_inputs(&mut rng, n);
    let o = elementwise(
        "nobounds_copy_f32",
        n,
        256,
        &[bytes::from_f32(&x)],
        &[4],
        &[],
    );
    let want: Vec<f32> = x.iter().map(|v| v + 1.0).collect();
    check_f32("out", &bytes::to_f32(&o[0]), &want);
}

pub fn load_latency_hint_f32() {
    for &n in SIZES {
        let mut rng = Rng(n as u64 + 23);
        let x = f32_inputs(&mut rng, n);
        let o = elementwise(
            "load_latency_hint_f32",
            n,
            256,
            &[bytes::from_f32(&x)],
            &[4],
            &[],
        );
        let want: Vec<f32> = x.iter().map(|v| v * v).collect();
        check_f32("out", &bytes::to_f32(&o[0]), &want);
    }
}

pub fn iota_full_fill() {
    for &n in SIZES {
        let mut l = Launch::new("iota_full_fill");
        let a = l.i32_out(n);
        let b = l.f32_out(n);
        let c = l.arr1(&vec![0xa5; 8 * n], n, 1);
        let d = l.f32_out(n);
        l.run((cdiv(n, 128) as u32, 1, 1));
        let (oi, of, oo, oa) = (l.i32(a), l.f32(b), bytes::to_i64(&l.dev.read(c)), l.f32(d));
        for i in 0..n {
            let (b, j) = (i / 128, i % 128);
            assert_eq!(oi[i], (7 + 3 * j + 128 * b) as i32);
            assert_eq!(of[i], 2.5);
            assert_eq!(oo[i], 1);
            assert_eq!(oa[i], [1.0, -2.0, 4.0, -8.0][j % 4]);
        }
    }
}

// ---------------------------------------------------------------- shapes, gathers

fn f32_seq(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.f32(-50.0, 50.0)).collect()
}

pub fn broadcast_2d_f32() {
    for &(m, n) in &[(70usize, 130usize), (32, 64), (5, 3)] {
        let mut rng = Rng((m * n) as u64);
        let x = f32_seq(&mut rng, m * n);
        let row = f32_seq(&mut rng, n);
        let col = f32_seq(&mut rng, m);
        let mut l = Launch::new("broadcast_2d_f32");
        l.arr(&bytes::from_f32(&x), &[m, n], &[n, 1]);
        l.arr1(&bytes::from_f32(&row), n, 1);
        l.arr1(&bytes::from_f32(&col), m, 1);
        let o = l.arr(&bytes::from_f32(&vec![0.5; m * n]), &[m, n], &[n, 1]);
        l.run((cdiv(m, 32) as u32, cdiv(n, 64) as u32, 1));
        let got = l.f32(o);
        let want: Vec<f32> = (0..m * n)
            .map(|k| row[k % n].mul_add(col[k / n], x[k]))
            .collect();
        check_f32("out", &got, &want);
    }
}

pub fn reshape_1d_to_2d_f32() {
    for &n in &[1000usize, 256, 40] {
        let mut rng = Rng(n as u64 + 30);
        let x = f32_seq(&mut rng, n);
        let rows = cdiv(n, 16);
        let mut l = Launch::new("reshape_1d_to_2d_f32");
        l.arr1(&bytes::from_f32(&x), n, 1);
        let o = l.arr(
            &bytes::from_f32(&vec![0.5; rows * 16]),
            &[rows, 16],
            &[16, 1],
        );
        l.run((cdiv(n, 256) as u32, 1, 1));
        let got = l.f32(o);
        for i in 0..n {
            assert!(same_f32(got[i], x[i]), "out[{i}]");
        }
    }
}

pub fn transpose_2d_f32() {
    for &(m, n) in &[(70usize, 130usize), (32, 64), (3, 5)] {
        let mut rng = Rng((m * n) as u64 + 31);
        let x = f32_seq(&mut rng, m * n);
        let mut l = Launch::new("transpose_2d_f32");
        l.arr(&bytes::from_f32(&x), &[m, n], &[n, 1]);
        let o = l.arr(&bytes::from_f32(&vec![0.5; m * n]), &[n, m], &[m, 1]);
        l.run((cdiv(m, 32) as u32, cdiv(n, 64) as u32, 1));
        let got = l.f32(o);
        for j in 0..n {
            for i in 0..m {
                assert!(same_f32(got[j * m + i], x[i * n + j]), "out[{j},{i}]");
            }
        }
    }
}

pub fn transpose_load_order_f16() {
    for &(m, n) in &[(70usize, 130usize), (32, 64), (3, 5)] {
        let mut rng = Rng((m * n) as u64 + 32);
        let x: Vec<u16> = (0..m * n).map(|_| rng.next() as u16).collect();
        let mut l = Launch::new("transpose_load_order_f16");
        l.arr(&bytes::from_u16(&x), &[m, n], &[n, 1]);
        let o = l.arr(&vec![0xa5; 2 * m * n], &[n, m], &[m, 1]);
        l.run((cdiv(m, 32) as u32, cdiv(n, 64) as u32, 1));
        let got = bytes::to_u16(&l.dev.read(o));
        for j in 0..n {
            for i in 0..m {
                assert_eq!(got[j * m + i], x[i * n + j], "out[{j},{i}]");
            }
        }
    }
}

pub fn permute_3d_f32() {
    for &(a, b, c) in &[(5usize, 9usize, 20usize), (2, 8, 16)] {
        let mut rng = Rng((a * b * c) as u64 + 33);
        let x = f32_seq(&mut rng, a * b * c);
        let mut l = Launch::new("permute_3d_f32");
        l.arr(&bytes::from_f32(&x), &[a, b, c], &[b * c, c, 1]);
        let o = l.arr(
            &bytes::from_f32(&vec![0.5; a * b * c]),
            &[c, a, b],
            &[a * b, b, 1],
        );
        l.run((cdiv(a, 2) as u32, cdiv(b, 8) as u32, cdiv(c, 16) as u32));
        let got = l.f32(o);
        for ia in 0..a {
            for ib in 0..b {
                for ic in 0..c {
                    assert!(same_f32(
                        got[ic * a * b + ia * b + ib],
                        x[ia * b * c + ib * c + ic]
                    ));
                }
            }
        }
    }
}

pub fn copy_3d_index_offset() {
    for &(a, b, c) in &[(5usize, 20usize, 40usize), (4, 16, 32)] {
        let mut rng = Rng((a * b * c) as u64 + 34);
        let x = f32_seq(&mut rng, a * b * c);
        // generic strides: use a padded layout for x
        let (sx1, sx0) = (c + 3, (c + 3) * (b + 1));
        let mut xs = vec![9.0f32; sx0 * a];
        for ia in 0..a {
            for ib in 0..b {
                for ic in 0..c {
                    xs[ia * sx0 + ib * sx1 + ic] = x[ia * b * c + ib * c + ic];
                }
            }
        }
        let mut l = Launch::new("copy_3d_index_offset");
        l.arr(&bytes::from_f32(&xs), &[a, b, c], &[sx0, sx1, 1]);
        let o = l.arr(
            &bytes::from_f32(&vec![0.5; a * b * c]),
            &[a, b, c],
            &[b * c, c, 1],
        );
        let q = cdiv(b, 8) - 1;
        l.run((cdiv(a, 4) as u32, q as u32, cdiv(c, 32) as u32));
        let got = l.f32(o);
        for ia in 0..a {
            for ib in 0..b {
                for ic in 0..c {
                    let want = if ib < 8 * q {
                        if ib + 8 < b {
                            x[ia * b * c + (ib + 8) * c + ic]
                        } else {
                            0.0
                        }
                    } else {
                        0.5
                    };
                    assert!(
                        same_f32(got[ia * b * c + ib * c + ic], want),
                        "out[{ia},{ib},{ic}]"
                    );
                }
            }
        }
    }
}

pub fn strided_window_f32() {
    for &n in &[50usize, 32, 7] {
        let mut rng = Rng(n as u64 + 35);
        let x = f32_seq(&mut rng, n);
        let w = cdiv(n, 4);
        let mut l = Launch::new("strided_window_f32");
        l.arr1(&bytes::from_f32(&x), n, 1);
        let o = l.arr(&bytes::from_f32(&vec![0.5; w * 8]), &[w, 8], &[8, 1]);
        l.run((w as u32, 1, 1));
        let got = l.f32(o);
        for iw in 0..w {
            for k in 0..8 {
                let want = if 4 * iw + k < n { x[4 * iw + k] } else { 0.0 };
                assert!(same_f32(got[iw * 8 + k], want), "out[{iw},{k}]");
            }
        }
    }
}

pub fn slice_dynamic_f32() {
    for &(len, off, n) in &[(1000usize, 17usize, 900usize), (300, 0, 300), (50, 10, 5)] {
        let mut rng = Rng(len as u64 + 36);
        let x = f32_seq(&mut rng, len);
        let mut l = Launch::new("slice_dynamic_f32");
        l.arr1(&bytes::from_f32(&x), len, 1);
        let o = l.arr1(&bytes::from_f32(&vec![0.5; n]), n, 1);
        l.params.push(Param::U32(off as u32));
        l.params.push(Param::U32(n as u32));
        l.run((cdiv(n, 128) as u32, 1, 1));
        let got = l.f32(o);
        for i in 0..n {
            assert!(same_f32(got[i], 2.0 * x[off + i]), "out[{i}]");
        }
    }
}

pub fn cat_extract_f32() {
    for &n in &[160usize, 16] {
        let mut rng = Rng(n as u64 + 37);
        let a = f32_seq(&mut rng, n);
        let b = f32_seq(&mut rng, n);
        let mut l = Launch::new("cat_extract_f32");
        l.arr1(&bytes::from_f32(&a), n, 1);
        l.arr1(&bytes::from_f32(&b), n, 1);
        let oc = l.f32_out(2 * n);
        let oe = l.f32_out(n / 2);
        l.run((cdiv(n, 16) as u32, 1, 1));
        let (c, e) = (l.f32(oc), l.f32(oe));
        for k in 0..n / 16 {
            for j in 0..16 {
                assert!(same_f32(c[32 * k + j], a[16 * k + j]));
                assert!(same_f32(c[32 * k + 16 + j], 2.0 * b[16 * k + j]));
            }
            for j in 0..8 {
                assert!(same_f32(e[8 * k + j], a[16 * k + 8 + j]));
            }
        }
    }
}

pub fn insert_subtile_f32() {
    for &n in &[320usize, 32] {
        let mut rng = Rng(n as u64 + 38);
        let a = f32_seq(&mut rng, n);
        let o = elementwise(
            "insert_subtile_f32",
            n,
            32,
            &[bytes::from_f32(&a)],
            &[4],
            &[],
        );
        let got = bytes::to_f32(&o[0]);
        for k in 0..n / 32 {
            for j in 0..8 {
                assert!(same_f32(got[32 * k + j], -a[32 * k + 24 + j]));
            }
            for j in 0..24 {
                assert!(same_f32(got[32 * k + 8 + j], a[32 * k + 8 + j]));
            }
        }
    }
}

pub fn gather_scatter_mask_f32() {
    for &(len, n) in &[(300usize, 1000usize), (10, 128), (50, 3)] {
        let mut rng = Rng((len + n) as u64 + 39);
        let x = f32_seq(&mut rng, len);
        let idx: Vec<i32> = (0..n)
            .map(|_| rng.range(-20, len as i64 + 20) as i32)
            .collect();
        let sc0 = f32_seq(&mut rng, n);
        let mut l = Launch::new("gather_scatter_mask_f32");
        l.arr1(&bytes::from_f32(&x), len, 1);
        l.arr1(&bytes::from_i32(&idx), n, 1);
        let og = l.f32_out(n);
        let os = l.arr1(&bytes::from_f32(&sc0), n, 1);
        l.run((cdiv(n, 128) as u32, 1, 1));
        let (g, s) = (l.f32(og), l.f32(os));
        for i in 0..n {
            let wg = if idx[i] >= 0 && (idx[i] as usize) < len {
                x[idx[i] as usize]
            } else {
                -1.0
            };
            assert!(same_f32(g[i], wg), "o_gather[{i}]");
            let ws = if wg > 0.0 { 2.0 * wg } else { sc0[i] };
            assert!(same_f32(s[i], ws), "o_scatter[{i}]");
        }
    }
}

pub fn gather_2d_rows_f32() {
    for &(m, n, r, w) in &[
        (20usize, 70usize, 10usize, 64usize),
        (8, 32, 4, 32),
        (5, 10, 7, 10),
    ] {
        let mut rng = Rng((m * n + r) as u64 + 40);
        let x = f32_seq(&mut rng, m * n);
        let rows: Vec<i32> = (0..r).map(|_| rng.range(-3, m as i64 + 3) as i32).collect();
        let mut l = Launch::new("gather_2d_rows_f32");
        l.arr(&bytes::from_f32(&x), &[m, n], &[n, 1]);
        l.arr1(&bytes::from_i32(&rows), r, 1);
        let o = l.arr(&bytes::from_f32(&vec![0.5; r * w]), &[r, w], &[w, 1]);
        l.run((cdiv(r, 4) as u32, cdiv(w, 32) as u32, 1));
        let got = l.f32(o);
        for ir in 0..r {
            for c in 0..w {
                let want = if rows[ir] >= 0 && (rows[ir] as usize) < m && c < n {
                    x[rows[ir] as usize * n + c]
                } else {
                    0.0
                };
                assert!(same_f32(got[ir * w + c], want), "out[{ir},{c}]");
            }
        }
    }
}

pub fn raw_offset_f32() {
    for &n in &[200usize, 64, 3] {
        let mut rng = Rng(n as u64 + 41);
        let x = f32_seq(&mut rng, 2 * n);
        let y = f32_seq(&mut rng, n);
        let mut l = Launch::new("raw_offset_f32");
        l.arr1(&bytes::from_f32(&x), 2 * n, 1);
        let oy = l.arr1(&bytes::from_f32(&y), n, 1);
        l.params.push(Param::U32(n as u32));
        l.run((cdiv(n, 64) as u32, 1, 1));
        let got = l.f32(oy);
        for i in 0..n {
            assert!(same_f32(got[i], x[2 * i] + x[2 * i + 1] + y[i]), "y[{i}]");
        }
    }
}

pub fn adv_index_rows_f32() {
    for &(m, n, r, c0) in &[
        (20usize, 40usize, 16usize, 5usize),
        (8, 16, 8, 0),
        (5, 20, 8, 10),
    ] {
        let mut rng = Rng((m * n + r) as u64 + 42);
        let x = f32_seq(&mut rng, m * n);
        let rows: Vec<i32> = (0..r).map(|_| rng.range(-2, m as i64 + 2) as i32).collect();
        let mut l = Launch::new("adv_index_rows_f32");
        l.arr(&bytes::from_f32(&x), &[m, n], &[n, 1]);
        l.arr1(&bytes::from_i32(&rows), r, 1);
        let o = l.arr(&bytes::from_f32(&vec![0.5; r * 16]), &[r, 16], &[16, 1]);
        l.params.push(Param::U32(c0 as u32));
        l.run(((r / 8) as u32, 1, 1));
        let got = l.f32(o);
        for ir in 0..r {
            for c in 0..16 {
                let ok = rows[ir] >= 0 && (rows[ir] as usize) < m && c0 + c < n;
                let want = if ok {
                    x[rows[ir] as usize * n + c0 + c]
                } else {
                    0.0
                };
                assert!(same_f32(got[ir * 16 + c], want), "out[{ir},{c}]");
            }
        }
    }
}

pub fn list_of_arrays_f32() {
    for &(nl, n) in &[(3usize, 200usize), (2, 64)] {
        let mut rng = Rng(n as u64 + 43);
        let mut l = Launch::new("list_of_arrays_f32");
        let xs: Vec<Vec<f32>> = (0..nl).map(|_| f32_seq(&mut rng, n)).collect();
        let mut table = Vec::new();
        for x in &xs {
            let p = l.dev.alloc_from(&bytes::from_f32(x));
            table.extend_from_slice(&bytes::from_i64(&[p.addr() as i64, n as i64, 1]));
        }
        let t = l.dev.alloc_from(&table);
        l.params.push(Param::U64(t.addr()));
        l.params.push(Param::U32(nl as u32));
        let o = l.f32_out(n);
        l.run((cdiv(n, 64) as u32, 1, 1));
        let got = l.f32(o);
        for i in 0..n {
            assert!(
                same_f32(got[i], xs[0][i] + xs[1][i] + nl as f32),
                "out[{i}]"
            );
        }
    }
}

// ---------------------------------------------------------------- reductions, scans, control flow

pub fn row_max_min_argmax_f32() {
    for &(m, n) in &[(20usize, 64usize), (8, 50), (3, 7)] {
        let mut rng = Rng((m * n) as u64 + 50);
        let x: Vec<f32> = (0..m * n)
            .map(|k| {
                if k % 9 == 0 {
                    3.0
                } else {
                    rng.f32(0.5, 1.5) * if k % 2 == 0 { 1.0 } else { -1.0 }
                }
            })
            .collect();
        let mut l = Launch::new("row_max_min_argmax_f32");
        l.arr(&bytes::from_f32(&x), &[m, n], &[n, 1]);
        let (omax, omin) = (l.f32_out(m), l.f32_out(m));
        let (oam, oan) = (l.i32_out(m), l.i32_out(m));
        let op = l.f32_out(m);
        l.run((cdiv(m, 8) as u32, 1, 1));
        let (gmax, gmin, gam, gan, gp) =
            (l.f32(omax), l.f32(omin), l.i32(oam), l.i32(oan), l.f32(op));
        for i in 0..m {
            let row = &x[i * n..(i + 1) * n];
            let mx = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
            let mn = row.iter().cloned().fold(f32::INFINITY, f32::min);
            assert_eq!(gmax[i], mx, "o_max[{i}]");
            assert_eq!(gmin[i], mn, "o_min[{i}]");
            assert_eq!(
                gam[i],
                row.iter().position(|v| *v == mx).unwrap() as i32,
                "o_argmax[{i}]"
            );
            assert_eq!(
                gan[i],
                row.iter().position(|v| *v == mn).unwrap() as i32,
                "o_argmin[{i}]"
            );
            let p: f64 = row.iter().map(|v| *v as f64).product();
            assert!(
                (gp[i] as f64 - p).abs() <= 1e-5 * p.abs() + 1e-30,
                "o_prod[{i}] got {} want {p}",
                gp[i]
            );
        }
    }
}

pub fn scan_rows() {
    for &(m, n) in &[(10usize, 150usize), (8, 64), (3, 5)] {
        let mut rng = Rng((m * n) as u64 + 51);
        let x: Vec<f32> = (0..m * n).map(|_| rng.f32(0.9, 1.1)).collect();
        let y: Vec<i32> = (0..m * n).map(|_| rng.range(-1000, 1000) as i32).collect();
        let mut l = Launch::new("scan_rows");
        l.arr(&bytes::from_f32(&x), &[m, n], &[n, 1]);
        l.arr(&bytes::from_i32(&y), &[m, n], &[n, 1]);
        let oc = l.arr(&bytes::from_f32(&vec![0.5; m * n]), &[m, n], &[n, 1]);
        let orc = l.arr(&bytes::from_i32(&vec![7; m * n]), &[m, n], &[n, 1]);
        let op = l.arr(&bytes::from_f32(&vec![0.5; m * n]), &[m, n], &[n, 1]);
        l.run((cdiv(m, 8) as u32, cdiv(n, 64) as u32, 1));
        let (c, rc, p) = (l.f32(oc), l.i32(orc), l.f32(op));
        for i in 0..m {
            for j in 0..n {
                let j0 = 64 * (j / 64);
                let j1 = (j0 + 64).min(n);
                let s: f64 = (j0..=j).map(|k| x[i * n + k] as f64).sum();
                let pr: f64 = (j0..=j).map(|k| x[i * n + k] as f64).product();
                let r: i32 = (j..j1).map(|k| y[i * n + k]).sum();
                assert!(
                    (c[i * n + j] as f64 - s).abs() <= 1e-5 * s.abs(),
                    "o_cumsum[{i},{j}]"
                );
                assert!(
                    (p[i * n + j] as f64 - pr).abs() <= 1e-5 * pr.abs(),
                    "o_cumprod[{i},{j}]"
                );
                assert_eq!(rc[i * n + j], r, "o_rcumsum[{i},{j}]");
            }
        }
    }
}

pub fn for_loop_carried_f32() {
    for &(m, n) in &[(20usize, 200usize), (16, 64), (3, 10)] {
        let mut rng = Rng((m * n) as u64 + 52);
        let x = f32_seq(&mut rng, m * n);
        let mut l = Launch::new("for_loop_carried_f32");
        l.arr(&bytes::from_f32(&x), &[m, n], &[n, 1]);
        let os = l.arr(&bytes::from_f32(&vec![0.5; m * 64]), &[m, 64], &[64, 1]);
        let om = l.arr(&bytes::from_f32(&vec![0.5; m * 64]), &[m, 64], &[64, 1]);
        l.run((cdiv(m, 16) as u32, 1, 1));
        let (s, mx) = (l.f32(os), l.f32(om));
        for i in 0..m {
            for c in 0..64 {
                let mut ws = 0.0f32;
                let mut wm = f32::NEG_INFINITY;
                for t in 0..cdiv(n, 64) {
                    let j = 64 * t + c;
                    ws += if j < n { x[i * n + j] } else { 0.0 };
                    wm = wm.max(if j < n {
                        x[i * n + j]
                    } else {
                        f32::NEG_INFINITY
                    });
                }
                assert!(
                    same_f32(s[i * 64 + c], ws),
                    "o_sum[{i},{c}] got {} want {ws}",
                    s[i * 64 + c]
                );
                assert!(same_f32(mx[i * 64 + c], wm), "o_max[{i},{c}]");
            }
        }
    }
}

pub fn if_else_runtime_f32() {
    for mode in 0..3 {
        let n = 700;
        let mut rng = Rng(53 + mode);
        let x = f32_inputs(&mut rng, n);
        let o = elementwise(
            "if_else_runtime_f32",
            n,
            256,
            &[bytes::from_f32(&x)],
            &[4],
            &[Param::U32(mode as u32)],
        );
        let want: Vec<f32> = (0..n)
            .map(|i| {
                let v = match mode {
                    0 => x[i] + 1.0,
                    1 => x[i] * 2.0,
                    _ => -x[i],
                };
                if (i / 256) % 2 == 1 {
                    v + 100.0
                } else {
                    v
                }
            })
            .collect();
        check_f32("out", &bytes::to_f32(&o[0]), &want);
    }
}

pub fn persistent_grid_stride_f32() {
    for &(n, g) in &[(5000usize, 3u32), (512, 1), (100, 4)] {
        let mut rng = Rng(n as u64 + 54);
        let x = f32_inputs(&mut rng, n);
        let mut l = Launch::new("persistent_grid_stride_f32");
        l.arr1(&bytes::from_f32(&x), n, 1);
        let o = l.f32_out(n);
        l.run((g, 1, 1));
        let want: Vec<f32> = x.iter().map(|v| v.abs().sqrt() + 1.0).collect();
        check_f32("out", &l.f32(o), &want);
    }
}

pub fn assert_nonneg_i32() {
    let n = 384;
    let mut rng = Rng(55);
    let x: Vec<i32> = (0..n).map(|_| rng.range(0, 1000) as i32).collect();
    let o = elementwise(
        "assert_nonneg_i32",
        n,
        128,
        &[bytes::from_i32(&x)],
        &[4],
        &[],
    );
    let got = bytes::to_i32(&o[0]);
    for i in 0..n {
        assert_eq!(got[i], 2 * x[i]);
    }
    // a negative element makes its block print the message and trap
    let mut bad = x.clone();
    bad[200] = -5;
    let mut l = Launch::new("assert_nonneg_i32");
    l.arr1(&bytes::from_i32(&bad), n, 1);
    l.i32_out(n);
    let k = l.m.kernel("assert_nonneg_i32").unwrap();
    let cfg = LaunchConfig {
        grid: (3, 1, 1),
        block: k.reqntid.unwrap(),
        cluster: (1, 1, 1),
        dynamic_smem: 0,
    };
    let err = l
        .dev
        .launch(&l.m, "assert_nonneg_i32", cfg, &l.params)
        .unwrap_err();
    assert_eq!(err.kind, ptx_emu::ErrorKind::Trap, "{err}");
    assert_eq!(err.ctaid, (1, 0, 0));
    assert!(
        err.msg
            .contains("tile block: [1, 0, 0], position: [72]: x must be non-negative"),
        "{}",
        err.msg
    );
}

pub fn softmax_rows_f32() {
    for &(m, n) in &[(10usize, 256usize), (4, 100), (3, 1)] {
        let mut rng = Rng((m * n) as u64 + 56);
        let x = f32_seq(&mut rng, m * n);
        let mut l = Launch::new("softmax_rows_f32");
        l.arr(&bytes::from_f32(&x), &[m, n], &[n, 1]);
        let o = l.arr(&bytes::from_f32(&vec![0.5; m * n]), &[m, n], &[n, 1]);
        l.run((cdiv(m, 4) as u32, 1, 1));
        let got = l.f32(o);
        for i in 0..m {
            let row: Vec<f64> = x[i * n..(i + 1) * n].iter().map(|v| *v as f64).collect();
            let mx = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let s: f64 = row.iter().map(|v| (v - mx).exp()).sum();
            for j in 0..n {
                let w = (row[j] - mx).exp() / s;
                assert!(
                    (got[i * n + j] as f64 - w).abs() <= 1e-5 * w + 1e-30,
                    "out[{i},{j}] got {} want {w}",
                    got[i * n + j]
                );
            }
        }
    }
}

pub fn gelu_tanh_f16() {
    for &(m, n) in &[(20usize, 200usize), (16, 128), (1, 3)] {
        let mut rng = Rng((m * n) as u64 + 57);
        let x: Vec<u16> = (0..m * n)
            .map(|_| f16_from_f64(rng.f32(-6.0, 6.0) as f64))
            .collect();
        let mut l = Launch::new("gelu_tanh_f16");
        l.arr(&bytes::from_u16(&x), &[m, n], &[n, 1]);
        let o = l.arr(&vec![0xa5; 2 * m * n], &[m, n], &[n, 1]);
        l.run((cdiv(m, 16) as u32, cdiv(n, 128) as u32, 1));
        let got = bytes::to_u16(&l.dev.read(o));
        for k in 0..m * n {
            let v = f16_to_f64(x[k]);
            let w = 0.5 * v * (1.0 + (0.7978845608 * (v + 0.044715 * v * v * v)).tanh());
            let g = f16_to_f64(got[k]);
            assert!(
                (g - w).abs() <= 2e-3 * w.abs() + 1e-4,
                "out[{k}] x={v} got {g} want {w}"
            );
        }
    }
}

// ---------------------------------------------------------------- TMA kernels
//
// Tensor maps use the emulator's own encoding (`ptx_emu::TensorMap`); the box
// shape and swizzle are the ones the kernel's shared-memory layout expects.
// As on the hardware, global row strides of TMA'd arrays are multiples of 16
// bytes, so ragged sizes here are ragged with respect to the tiles only.

fn tmap(
    base: u64,
    elem: u32,
    dims: &[usize],
    strides_elems: &[usize],
    box_dims: &[u32],
    swizzle: u32,
) -> Param {
    Param::Bytes(
        ptx_emu::TensorMap {
            base,
            elem_size: elem,
            dims: dims.iter().map(|d| *d as u32).collect(),
            strides: strides_elems
                .iter()
                .map(|s| (*s as u64) * elem as u64)
                .collect(),
            box_dims: box_dims.to_vec(),
            swizzle,
        }
        .encode(),
    )
}

pub fn dot_1d_f32() {
    for &n in &[1000usize, 256, 3] {
        let mut rng = Rng(n as u64 + 60);
        let x = f32_seq(&mut rng, n);
        let y = f32_seq(&mut rng, n);
        let mut l = Launch::new("dot_1d_f32");
        let px = l.arr1(&bytes::from_f32(&x), n, 1);
        let py = l.arr1(&bytes::from_f32(&y), n, 1);
        let nb = cdiv(n, 256);
        let o = l.f32_out(nb);
        l.params.push(tmap(px.addr(), 4, &[n], &[1], &[256], 0));
        l.params.push(tmap(py.addr(), 4, &[n], &[1], &[256], 0));
        l.run((nb as u32, 1, 1));
        let got = l.f32(o);
        for b in 0..nb {
            let w: f64 = (256 * b..(256 * b + 256).min(n))
                .map(|i| x[i] as f64 * y[i] as f64)
                .sum();
            let mag: f64 = (256 * b..(256 * b + 256).min(n))
                .map(|i| (x[i] as f64 * y[i] as f64).abs())
                .sum();
            assert!(
                (got[b] as f64 - w).abs() <= 1e-5 * mag,
                "out[{b}] got {} want {w}",
                got[b]
            );
        }
    }
}

pub fn row_sum_f32() {
    for &(m, n) in &[(40usize, 300usize), (16, 128), (3, 8)] {
        let mut rng = Rng((m * n) as u64 + 61);
        let x = f32_seq(&mut rng, m * n);
        let mut l = Launch::new("row_sum_f32");
        let px = l.arr(&bytes::from_f32(&x), &[m, n], &[n, 1]);
        let o = l.f32_out(m);
        l.params
            .push(tmap(px.addr(), 4, &[n, m], &[1, n], &[32, 16], 3));
        l.run((cdiv(m, 16) as u32, 1, 1));
        let got = l.f32(o);
        for i in 0..m {
            let w: f64 = x[i * n..(i + 1) * n].iter().map(|v| *v as f64).sum();
            let mag: f64 = x[i * n..(i + 1) * n].iter().map(|v| v.abs() as f64).sum();
            assert!(
                (got[i] as f64 - w).abs() <= 1e-5 * mag,
                "out[{i}] got {} want {w}",
                got[i]
            );
        }
    }
}

pub fn custom_reduce_scan_f32() {
    for &(m, n) in &[(40usize, 64usize), (16, 52), (3, 4)] {
        let mut rng = Rng((m * n) as u64 + 62);
        let x = f32_seq(&mut rng, m * n);
        let mut l = Launch::new("custom_reduce_scan_f32");
        let px = l.arr(&bytes::from_f32(&x), &[m, n], &[n, 1]);
        let (oa, os) = (l.f32_out(m), l.f32_out(m));
        let oc = l.i32_out(m);
        let orm = l.arr(&bytes::from_f32(&vec![0.5; m * n]), &[m, n], &[n, 1]);
        l.params
            .push(tmap(px.addr(), 4, &[n, m], &[1, n], &[32, 16], 0));
        l.run((cdiv(m, 16) as u32, 1, 1));
        let (ga, gs, gc, gr) = (l.f32(oa), l.f32(os), l.i32(oc), l.f32(orm));
        for i in 0..m {
            let row = &x[i * n..(i + 1) * n];
            assert_eq!(
                ga[i],
                row.iter().fold(0.0f32, |a, v| a.max(v.abs())),
                "o_absmax[{i}]"
            );
            let s: f64 = row.iter().filter(|v| **v > 0.0).map(|v| *v as f64).sum();
            assert!(
                (gs[i] as f64 - s).abs() <= 1e-5 * s.abs() + 1e-6,
                "o_sum[{i}]"
            );
            assert_eq!(
                gc[i],
                row.iter().filter(|v| **v > 0.0).count() as i32,
                "o_cnt[{i}]"
            );
            let mut run = f32::NEG_INFINITY;
            for j in 0..n {
                run = run.max(row[j]);
                assert_eq!(gr[i * n + j], run, "o_runmax[{i},{j}]");
            }
        }
    }
}

pub fn global_sum_atomic_f32() {
    for &n in &[5000usize, 1024, 7] {
        let mut rng = Rng(n as u64 + 63);
        let x = f32_seq(&mut rng, n);
        let mut l = Launch::new("global_sum_atomic_f32");
        let px = l.arr1(&bytes::from_f32(&x), n, 1);
        let t = l.arr1(&bytes::from_f32(&[1.5]), 1, 1);
        l.params.push(tmap(px.addr(), 4, &[n], &[1], &[256], 0));
        l.run((cdiv(n, 1024) as u32, 1, 1));
        let got = l.f32(t)[0] as f64;
        let w: f64 = 1.5 + x.iter().map(|v| *v as f64).sum::<f64>();
        let mag: f64 = x.iter().map(|v| v.abs() as f64).sum();
        assert!((got - w).abs() <= 1e-5 * mag, "total got {got} want {w}");
    }
}

pub fn while_break_continue_i32() {
    for &(n, limit, g) in &[
        (20usize, 1_000_000i32, 2u32),
        (20, 200, 3),
        (0, 5, 1),
        (7, -1000, 1),
    ] {
        let mut rng = Rng(n as u64 + limit as u64 + 64);
        let len = 16 * (n + 1);
        let x: Vec<i32> = (0..len).map(|_| rng.range(-10, 30) as i32).collect();
        let mut l = Launch::new("while_break_continue_i32");
        let px = l.arr1(&bytes::from_i32(&x), len, 1);
        let o = l.i32_out(16 * g as usize);
        l.params.push(Param::U32(n as u32));
        l.params.push(Param::U32(limit as u32));
        l.params.push(tmap(px.addr(), 4, &[len], &[1], &[16], 0));
        l.run((g, 1, 1));
        let got = l.i32(o);
        let mut acc = [0i32; 16];
        let mut i = 0;
        while i < n {
            i += 1;
            if i % 3 == 0 {
                continue;
            }
            let t = &x[16 * i..16 * i + 16];
            if t.iter().sum::<i32>() > limit {
                break;
            }
            for k in 0..16 {
                acc[k] += t[k];
            }
        }
        for b in 0..g as usize {
            assert_eq!(&got[16 * b..16 * b + 16], &acc, "block {b}");
        }
    }
}

pub fn atomic_hist_i32() {
    for &(n, nb) in &[(3000usize, 17usize), (256, 4), (10, 100)] {
        let mut rng = Rng(n as u64 + 65);
        let keys: Vec<i32> = (0..n)
            .map(|_| rng.range(-3, nb as i64 + 3) as i32)
            .collect();
        let mut l = Launch::new("atomic_hist_i32");
        let pk = l.arr1(&bytes::from_i32(&keys), n, 1);
        let init: Vec<i32> = (0..nb as i32).collect();
        let h = l.arr1(&bytes::from_i32(&init), nb, 1);
        l.params.push(tmap(pk.addr(), 4, &[n], &[1], &[256], 0));
        l.run((cdiv(n, 256) as u32, 1, 1));
        let got = l.i32(h);
        let mut want = init.clone();
        for k in &keys {
            if *k >= 0 && (*k as usize) < nb {
                want[*k as usize] += 1;
            }
        }
        assert_eq!(got, want);
    }
}

pub fn atomic_ops_i32() {
    for &n in &[300usize, 128, 5] {
        let mut rng = Rng(n as u64 + 66);
        let v = i32_inputs(&mut rng, n);
        let init: Vec<Vec<i32>> = (0..8)
            .map(|k| {
                if k == 0 {
                    (0..n).map(|_| (rng.next() % 2) as i32).collect()
                } else {
                    i32_inputs(&mut rng, n)
                }
            })
            .collect();
        let mut l = Launch::new("atomic_ops_i32");
        let pv = l.arr1(&bytes::from_i32(&v), n, 1);
        // flags, o_cas_old, xc, o_xchg_old, mx, mn, an, orr, xo
        let flags = l.arr1(&bytes::from_i32(&init[0]), n, 1);
        let cas_old = l.i32_out(n);
        let xc = l.arr1(&bytes::from_i32(&init[1]), n, 1);
        let xchg_old = l.i32_out(n);
        let ps: Vec<DevPtr> = (2..7)
            .map(|k| l.arr1(&bytes::from_i32(&init[k]), n, 1))
            .collect();
        l.params.push(tmap(pv.addr(), 4, &[n], &[1], &[128], 0));
        l.run((cdiv(n, 128) as u32, 1, 1));
        let (gf, gco, gx, gxo) = (l.i32(flags), l.i32(cas_old), l.i32(xc), l.i32(xchg_old));
        let g: Vec<Vec<i32>> = ps.iter().map(|p| l.i32(*p)).collect();
        for i in 0..n {
            let w = v[i];
            assert_eq!(gco[i], init[0][i], "o_cas_old[{i}]");
            assert_eq!(
                gf[i],
                if init[0][i] == 0 { w } else { init[0][i] },
                "flags[{i}]"
            );
            assert_eq!(gxo[i], init[1][i], "o_xchg_old[{i}]");
            assert_eq!(gx[i], w, "xc[{i}]");
            assert_eq!(g[0][i], init[2][i].max(w), "mx[{i}]");
            assert_eq!(g[1][i], init[3][i].min(w), "mn[{i}]");
            assert_eq!(g[2][i], init[4][i] & w, "an[{i}]");
            assert_eq!(g[3][i], init[5][i] | w, "orr[{i}]");
            assert_eq!(g[4][i], init[6][i] ^ w, "xo[{i}]");
        }
    }
}

pub fn atomic_red_view_f32() {
    for &n in &[640usize, 64] {
        let mut rng = Rng(n as u64 + 67);
        let x = f32_seq(&mut rng, n);
        let k = i32_inputs(&mut rng, n);
        let acc0 = f32_seq(&mut rng, 64);
        let km0 = i32_inputs(&mut rng, 64);
        let mut l = Launch::new("atomic_red_view_f32");
        let px = l.arr1(&bytes::from_f32(&x), n, 1);
        let pk = l.arr1(&bytes::from_i32(&k), n, 1);
        let pa = l.arr1(&bytes::from_f32(&acc0), 64, 1);
        let pm = l.arr1(&bytes::from_i32(&km0), 64, 1);
        l.params.push(tmap(px.addr(), 4, &[n], &[1], &[64], 0));
        l.params.push(tmap(pk.addr(), 4, &[n], &[1], &[64], 0));
        l.run(((n / 64) as u32, 1, 1));
        let (ga, gm) = (l.f32(pa), l.i32(pm));
        for j in 0..64 {
            let s: f64 = acc0[j] as f64 + (0..n / 64).map(|b| x[64 * b + j] as f64).sum::<f64>();
            let mag: f64 =
                acc0[j].abs() as f64 + (0..n / 64).map(|b| x[64 * b + j].abs() as f64).sum::<f64>();
            assert!((ga[j] as f64 - s).abs() <= 1e-5 * mag, "acc[{j}]");
            let mx = (0..n / 64)
                .map(|b| k[64 * b + j])
                .max()
                .unwrap()
                .max(km0[j]);
            assert_eq!(gm[j], mx, "kmax[{j}]");
        }
    }
}

pub fn print_debug_i32() {
    let n = 20;
    let x: Vec<i32> = (0..n as i32).map(|i| i * 3 - 7).collect();
    let mut l = Launch::new("print_debug_i32");
    let px = l.arr1(&bytes::from_i32(&x), n, 1);
    let o = l.i32_out(n);
    l.params.push(tmap(px.addr(), 4, &[n], &[1], &[8], 0));
    let r = l.run((cdiv(n, 8) as u32, 1, 1));
    let got = l.i32(o);
    for i in 0..n {
        assert_eq!(got[i], x[i] + 1);
    }
    let mut want = String::new();
    for b in 0..cdiv(n, 8) {
        let t: Vec<i32> = (0..8)
            .map(|j| if 8 * b + j < n { x[8 * b + j] } else { 0 })
            .collect();
        want += &format!(
            "block {b} tile [{}]\n",
            t.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        want += &format!("sum={}\n", t.iter().sum::<i32>());
    }
    assert_eq!(r.printf, want);
}

pub fn layernorm_rows_f32() {
    for &(m, n) in &[(20usize, 256usize), (8, 100), (3, 4)] {
        let mut rng = Rng((m * n) as u64 + 68);
        let x = f32_seq(&mut rng, m * n);
        let w = f32_seq(&mut rng, n);
        let bias = f32_seq(&mut rng, n);
        let mut l = Launch::new("layernorm_rows_f32");
        let px = l.arr(&bytes::from_f32(&x), &[m, n], &[n, 1]);
        let pw = l.arr1(&bytes::from_f32(&w), n, 1);
        let pb = l.arr1(&bytes::from_f32(&bias), n, 1);
        let o = l.arr(&bytes::from_f32(&vec![0.5; m * n]), &[m, n], &[n, 1]);
        l.params
            .push(tmap(px.addr(), 4, &[n, m], &[1, n], &[32, 8], 0));
        l.params.push(tmap(pw.addr(), 4, &[n], &[1], &[256], 0));
        l.params.push(tmap(pb.addr(), 4, &[n], &[1], &[256], 0));
        l.run((cdiv(m, 8) as u32, 1, 1));
        let got = l.f32(o);
        for i in 0..m {
            let row: Vec<f64> = x[i * n..(i + 1) * n].iter().map(|v| *v as f64).collect();
            let mean = row.iter().sum::<f64>() / n as f64;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
            for j in 0..n {
                let want = (row[j] - mean) / (var + 1e-5).sqrt() * w[j] as f64 + bias[j] as f64;
                let g = got[i * n + j] as f64;
                assert!(
                    (g - want).abs() <= 1e-4 * (want.abs() + w[j].abs() as f64 + 1.0),
                    "out[{i},{j}] got {g} want {want}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------- matmuls

fn matmul_ref(a: &[f64], b: &[f64], m: usize, n: usize, k: usize) -> (Vec<f64>, Vec<f64>) {
    let mut c = vec![0.0; m * n];
    let mut mag = vec![0.0; m * n];
    for i in 0..m {
        for kk in 0..k {
            let x = a[i * k + kk];
            for j in 0..n {
                c[i * n + j] += x * b[kk * n + j];
                mag[i * n + j] += (x * b[kk * n + j]).abs();
            }
        }
    }
    (c, mag)
}

/// Runs a 2-D matmul kernel whose A and B arrive through TMA with the given
/// boxes/swizzles; returns the raw C bytes.
fn run_matmul(
    name: &str,
    a: &[u8],
    b: &[u8],
    es: u32,
    c_es: usize,
    (m, n, k): (usize, usize, usize),
    boxes: ([u32; 2], u32, [u32; 2], u32),
    grid: (u32, u32, u32),
) -> Vec<u8> {
    let mut l = Launch::new(name);
    let pa = l.arr(a, &[m, k], &[k, 1]);
    let pb = l.arr(b, &[k, n], &[n, 1]);
    let pc = l.arr(&vec![0xa5; m * n * c_es], &[m, n], &[n, 1]);
    l.params
        .push(tmap(pa.addr(), es, &[k, m], &[1, k], &boxes.0, boxes.1));
    l.params
        .push(tmap(pb.addr(), es, &[n, k], &[1, n], &boxes.2, boxes.3));
    l.run(grid);
    l.dev.read(pc)
}

pub fn matmul_f32() {
    for &(m, n, k) in &[(100usize, 72usize, 92usize), (64, 64, 32)] {
        let mut rng = Rng((m * n * k) as u64 + 70);
        let a = f32_seq(&mut rng, m * k);
        let b = f32_seq(&mut rng, k * n);
        let c = run_matmul(
            "matmul_f32",
            &bytes::from_f32(&a),
            &bytes::from_f32(&b),
            4,
            4,
            (m, n, k),
            ([32, 64], 0, [32, 8], 0),
            (cdiv(m, 64) as u32, cdiv(n, 64) as u32, 1),
        );
        let c = bytes::to_f32(&c);
        let a64: Vec<f64> = a.iter().map(|v| *v as f64).collect();
        let b64: Vec<f64> = b.iter().map(|v| *v as f64).collect();
        let (w, mag) = matmul_ref(&a64, &b64, m, n, k);
        for i in 0..m * n {
            assert!(
                (c[i] as f64 - w[i]).abs() <= 1e-5 * mag[i],
                "c[{}, {}] got {} want {}",
                i / n,
                i % n,
                c[i],
                w[i]
            );
        }
    }
}

fn run_batched(
    a: &[u16],
    b: &[u16],
    (bt, m, n, k): (usize, usize, usize, usize),
    sa: u32,
    sb: u32,
) -> Vec<f32> {
    let mut l = Launch::new("batched_matmul_f16");
    let pa = l.arr(&bytes::from_u16(a), &[bt, m, k], &[m * k, k, 1]);
    let pb = l.arr(&bytes::from_u16(b), &[bt, k, n], &[k * n, n, 1]);
    let pc = l.arr(&vec![0xa5; 4 * bt * m * n], &[bt, m, n], &[m * n, n, 1]);
    l.params.push(tmap(
        pa.addr(),
        2,
        &[k, m, bt],
        &[1, k, m * k],
        &[64, 64, 1],
        sa,
    ));
    l.params.push(tmap(
        pb.addr(),
        2,
        &[n, k, bt],
        &[1, n, k * n],
        &[64, 64, 1],
        sb,
    ));
    l.run((cdiv(m, 64) as u32, cdiv(n, 64) as u32, bt as u32));
    l.f32(pc)
}

fn f16_mat(rng: &mut Rng, n: usize) -> Vec<u16> {
    (0..n)
        .map(|_| f16_from_f64(rng.f32(-2.0, 2.0) as f64))
        .collect()
}

fn batched_bad(
    c: &[f32],
    a: &[u16],
    b: &[u16],
    (bt, m, n, k): (usize, usize, usize, usize),
) -> usize {
    let mut bad = 0;
    for z in 0..bt {
        let a64: Vec<f64> = a[z * m * k..(z + 1) * m * k]
            .iter()
            .map(|v| f16_to_f64(*v))
            .collect();
        let b64: Vec<f64> = b[z * k * n..(z + 1) * k * n]
            .iter()
            .map(|v| f16_to_f64(*v))
            .collect();
        let (w, mag) = matmul_ref(&a64, &b64, m, n, k);
        for i in 0..m * n {
            if (c[z * m * n + i] as f64 - w[i]).abs() > 1e-5 * mag[i] + 1e-6 {
                bad += 1;
            }
        }
    }
    bad
}

pub fn batched_matmul_f16() {
    for &dims in &[(2usize, 70usize, 104usize, 96usize), (1, 64, 64, 64)] {
        let (bt, m, n, k) = dims;
        let mut rng = Rng((bt * m * n * k) as u64 + 71);
        let a = f16_mat(&mut rng, bt * m * k);
        let b = f16_mat(&mut rng, bt * k * n);
        let c = run_batched(&a, &b, dims, 3, 3);
        assert_eq!(batched_bad(&c, &a, &b, dims), 0);
    }
}

fn run_f64mm(
    a: &[f64],
    b: &[f64],
    (m, n, k): (usize, usize, usize),
    sa: u32,
    sb: u32,
    bb: [u32; 2],
) -> Vec<f64> {
    bytes::to_f64(&run_matmul(
        "matmul_f64_operator",
        &bytes::from_f64(a),
        &bytes::from_f64(b),
        8,
        8,
        (m, n, k),
        ([16, 32], sa, bb, sb),
        (cdiv(m, 32) as u32, cdiv(n, 32) as u32, 1),
    ))
}

pub fn matmul_f64_operator() {
    for &(m, n, k) in &[(70usize, 50usize, 40usize), (32, 32, 16)] {
        let mut rng = Rng((m * n * k) as u64 + 72);
        let a: Vec<f64> = f32_seq(&mut rng, m * k)
            .iter()
            .map(|v| *v as f64 * 1.000001)
            .collect();
        let b: Vec<f64> = f32_seq(&mut rng, k * n).iter().map(|v| *v as f64).collect();
        let (w, mag) = matmul_ref(&a, &b, m, n, k);
        let c = run_f64mm(&a, &b, (m, n, k), 3, 3, [16, 16]);
        for i in 0..m * n {
            assert!(
                (c[i] - w[i]).abs() <= 1e-12 * mag[i],
                "c[{}, {}] got {} want {}",
                i / n,
                i % n,
                c[i],
                w[i]
            );
        }
    }
}

pub fn matmul_f16_strided() {
    for &(m, n, k) in &[(100usize, 70usize, 50usize), (64, 64, 32)] {
        let mut rng = Rng((m * n * k) as u64 + 73);
        let a = f16_mat(&mut rng, m * k);
        let b = f16_mat(&mut rng, k * n);
        // generic strides: A column-major, B row-major with padding
        let mut ac = vec![0u16; m * k];
        for i in 0..m {
            for kk in 0..k {
                ac[kk * m + i] = a[i * k + kk];
            }
        }
        let bs = n + 5;
        let mut bp = vec![0u16; k * bs];
        for kk in 0..k {
            bp[kk * bs..kk * bs + n].copy_from_slice(&b[kk * n..(kk + 1) * n]);
        }
        let mut l = Launch::new("matmul_f16_strided");
        l.arr(&bytes::from_u16(&ac), &[m, k], &[1, m]);
        l.arr(&bytes::from_u16(&bp), &[k, n], &[bs, 1]);
        let pc = l.arr(&vec![0xa5; 4 * m * n], &[m, n], &[n, 1]);
        l.run((cdiv(m, 64) as u32, cdiv(n, 64) as u32, 1));
        let c = l.f32(pc);
        assert_eq!(batched_bad(&c, &a, &b, (1, m, n, k)), 0);
    }
}

/// Input element kinds of the TMA matmul tests.
#[derive(Clone, Copy, PartialEq)]
enum El {
    F16,
    Bf16,
    Tf32,
    I8,
    E4m3,
}

fn e4m3_to_f64(b: u8) -> f64 {
    let s = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = ((b >> 3) & 15) as i32;
    let m = (b & 7) as f64;
    s * if e == 0 {
        m / 8.0 * 2f64.powi(-6)
    } else {
        (1.0 + m / 8.0) * 2f64.powi(e - 7)
    }
}

/// Random matrix bytes for an element kind and their exact values as used by the MMA.
fn mm_input(rng: &mut Rng, el: El, n: usize) -> (Vec<u8>, Vec<f64>) {
    match el {
        El::F16 => {
            let v = f16_mat(rng, n);
            (
                bytes::from_u16(&v),
                v.iter().map(|x| f16_to_f64(*x)).collect(),
            )
        }
        El::Bf16 => {
            let v: Vec<u16> = (0..n).map(|_| bf16_from_f32(rng.f32(-2.0, 2.0))).collect();
            (
                bytes::from_u16(&v),
                v.iter().map(|x| bf16_to_f32(*x) as f64).collect(),
            )
        }
        El::Tf32 => {
            let v: Vec<f32> = (0..n).map(|_| rng.f32(-2.0, 2.0)).collect();
            // The docstring: each element rounded to tf32 (10 mantissa bits,
            // to nearest even) before the mma, as this compiler's `ftof` does.
            // NVIDIA's tileiras drops the ftof (no cvt.rna in its PTX), so the
            // tensor core sees the f32 bits and ignores the low 13 mantissa bits.
            let t: Vec<f64> = v
                .iter()
                .map(|x| {
                    let bits = x.to_bits();
                    let (low, base) = (bits & 0x1fff, bits & !0x1fff);
                    let up = crate::TF32_ROUNDS
                        && (low > 0x1000 || (low == 0x1000 && base & 0x2000 != 0));
                    f32::from_bits(if up { base + 0x2000 } else { base }) as f64
                })
                .collect();
            (bytes::from_f32(&v), t)
        }
        El::I8 => {
            let v: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
            let f = v.iter().map(|x| *x as i8 as f64).collect();
            (v, f)
        }
        El::E4m3 => {
            // any byte except the NaN encodings S.1111.111
            let v: Vec<u8> = (0..n)
                .map(|_| rng.next() as u8)
                .map(|x| if x & 0x7f == 0x7f { 0x38 } else { x })
                .collect();
            let f = v.iter().map(|x| e4m3_to_f64(*x)).collect();
            (v, f)
        }
    }
}

fn el_size(el: El) -> u32 {
    match el {
        El::F16 | El::Bf16 => 2,
        El::Tf32 => 4,
        _ => 1,
    }
}

/// Runs one TMA matmul case; returns the number of wrong elements of C.
fn mm_case(
    name: &str,
    el: El,
    c_el: &str,
    (m, n, k): (usize, usize, usize),
    tile: (usize, usize),
    boxes: ([u32; 2], u32, [u32; 2], u32),
    seed: u64,
) -> usize {
    let mut rng = Rng(seed);
    let (ab, a) = mm_input(&mut rng, el, m * k);
    let (bb, b) = mm_input(&mut rng, el, k * n);
    let c_es = if c_el == "f16" { 2 } else { 4 };
    let c = run_matmul(
        name,
        &ab,
        &bb,
        el_size(el),
        c_es,
        (m, n, k),
        boxes,
        (cdiv(m, tile.0) as u32, cdiv(n, tile.1) as u32, 1),
    );
    let (w, mag) = matmul_ref(&a, &b, m, n, k);
    let mut bad = 0;
    for i in 0..m * n {
        let ok = match c_el {
            "f16" => {
                let g = f16_to_f64(u16::from_le_bytes([c[2 * i], c[2 * i + 1]]));
                // f16 accumulation rounds after every k-step
                (g - w[i]).abs() <= 2e-3 * mag[i] + 1e-3
            }
            "s32" => i32::from_le_bytes(c[4 * i..4 * i + 4].try_into().unwrap()) as f64 == w[i],
            _ => {
                let g = f32::from_le_bytes(c[4 * i..4 * i + 4].try_into().unwrap()) as f64;
                (g - w[i]).abs() <= 1e-5 * mag[i] + 1e-6
            }
        };
        if !ok {
            if bad < 3 && std::env::var("MM_DEBUG").is_ok() {
                println!(
                    "  c[{},{}]: bytes {:?} want {} ",
                    i / n,
                    i % n,
                    &c[c_es * i..c_es * i + c_es],
                    w[i]
                );
            }
            bad += 1;
        }
    }
    bad
}

/// TMA matmul cases: ragged sizes (not multiples of the tile) and an exact tile.
/// The tensor-map boxes follow the kernels' copies; the swizzles are the ones
/// whose shared-memory layout the kernels' wgmma descriptors read.
fn mm_sizes(tile: (usize, usize)) -> Vec<(usize, usize, usize)> {
    vec![
        (tile.0 + 37, tile.1 + 48, 144),
        (tile.0, tile.1, 128),
        (5, 16, 16),
    ]
}

/// The f16, bf16 and f16-accumulating TMA matmuls (K steps of 64) on
/// ragged M and N with each of `ks` as K: K loops of one, two and many
/// iterations, K a multiple of the step or not (always of 8: rows start
/// 16-byte aligned, as the kernels' tensor maps require).
pub fn tma_matmuls_over_k(ks: &[usize]) {
    let kernels = [
        ("matmul_f16_tma", El::F16, "f32", (128, 128)),
        ("matmul_bf16_tma", El::Bf16, "f32", (128, 128)),
        ("matmul_f16_f16acc", El::F16, "f16", (128, 64)),
    ];
    for &k in ks {
        for (name, el, c, tile) in kernels {
            let dims = (tile.0 + 37, tile.1 + 24, k);
            let boxes = ([64, 128], 3, [64, 64], 3);
            let bad = mm_case(name, el, c, dims, tile, boxes, 200 + k as u64);
            assert_eq!(bad, 0, "{name} {dims:?}: {bad} wrong elements");
        }
    }
}

macro_rules! tma_matmul_test {
    ($name:ident, $el:expr, $c:expr, $tile:expr, $abox:expr, $sa:expr, $bbox:expr, $sb:expr) => {
        pub fn $name() {
            for (i, dims) in mm_sizes($tile).into_iter().enumerate() {
                let bad = mm_case(
                    stringify!($name),
                    $el,
                    $c,
                    dims,
                    $tile,
                    ($abox, $sa, $bbox, $sb),
                    80 + i as u64,
                );
                assert_eq!(bad, 0, "{dims:?}: {bad} wrong elements");
            }
        }
    };
}

tma_matmul_test!(
    matmul_f16_tma,
    El::F16,
    "f32",
    (128, 128),
    [64, 128],
    3,
    [64, 64],
    3
);
tma_matmul_test!(
    matmul_bf16_tma,
    El::Bf16,
    "f32",
    (128, 128),
    [64, 128],
    3,
    [64, 64],
    3
);
tma_matmul_test!(
    matmul_tf32,
    El::Tf32,
    "f32",
    (64, 64),
    [32, 64],
    3,
    [32, 32],
    3
);
tma_matmul_test!(
    matmul_i8_i32,
    El::I8,
    "s32",
    (64, 64),
    [64, 64],
    2,
    [64, 64],
    2
);
tma_matmul_test!(
    matmul_fp8_e4m3,
    El::E4m3,
    "f32",
    (64, 64),
    [64, 64],
    2,
    [64, 64],
    2
);
tma_matmul_test!(
    matmul_f16_f16acc,
    El::F16,
    "f16",
    (128, 64),
    [64, 128],
    3,
    [64, 64],
    3
);

fn divisible_case((m, n, k): (usize, usize, usize), sc: u32, seed: u64) -> usize {
    let mut rng = Rng(seed);
    let (ab, a) = mm_input(&mut rng, El::F16, m * k);
    let (bb, b) = mm_input(&mut rng, El::F16, k * n);
    let mut l = Launch::new("matmul_f16_divisible");
    let pa = l.arr(&ab, &[m, k], &[k, 1]);
    let pb = l.arr(&bb, &[k, n], &[n, 1]);
    let pc = l.arr(&vec![0xa5; m * n * 4], &[m, n], &[n, 1]);
    l.params
        .push(tmap(pa.addr(), 2, &[k, m], &[1, k], &[64, 128], 3));
    l.params
        .push(tmap(pb.addr(), 2, &[n, k], &[1, n], &[64, 64], 3));
    l.params
        .push(tmap(pc.addr(), 4, &[n, m], &[1, n], &[32, 64], sc));
    l.run(((m / 128) as u32, (n / 128) as u32, 1));
    let c = l.f32(pc);
    let (w, mag) = matmul_ref(&a, &b, m, n, k);
    (0..m * n)
        .filter(|&i| (c[i] as f64 - w[i]).abs() > 1e-5 * mag[i] + 1e-6)
        .count()
}

pub fn matmul_f16_divisible() {
    for (i, dims) in [(256usize, 128usize, 384usize), (128, 128, 128)]
        .into_iter()
        .enumerate()
    {
        let bad = divisible_case(dims, 3, 90 + i as u64);
        assert_eq!(bad, 0, "{dims:?}: {bad} wrong elements");
    }
}

pub fn matmul_f16_cluster2() {
    // .blocksareclusters: the launch grid counts 2-CTA clusters (one per 128x128 tile).
    for (i, (m, n, k)) in [(165usize, 152usize, 144usize), (128, 128, 128), (5, 8, 16)]
        .into_iter()
        .enumerate()
    {
        let mut rng = Rng(95 + i as u64);
        let (ab, a) = mm_input(&mut rng, El::F16, m * k);
        let (bb, b) = mm_input(&mut rng, El::F16, k * n);
        let mut l = Launch::new("matmul_f16_cluster2");
        let pa = l.arr(&ab, &[m, k], &[k, 1]);
        let pb = l.arr(&bb, &[k, n], &[n, 1]);
        let pc = l.arr(&vec![0xa5; m * n * 4], &[m, n], &[n, 1]);
        l.params
            .push(tmap(pa.addr(), 2, &[k, m], &[1, k], &[64, 64], 3));
        l.params
            .push(tmap(pb.addr(), 2, &[n, k], &[1, n], &[64, 32], 3));
        l.run((cdiv(m, 128) as u32, cdiv(n, 128) as u32, 1));
        let c = l.f32(pc);
        let (w, mag) = matmul_ref(&a, &b, m, n, k);
        let bad = (0..m * n)
            .filter(|&i| (c[i] as f64 - w[i]).abs() > 1e-5 * mag[i] + 1e-6)
            .count();
        assert_eq!(bad, 0, "{:?}: {bad} wrong elements", (m, n, k));
    }
}

/// One `#[test]` in the including crate per named check of this module.
macro_rules! kernel_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                $crate::kernels::$name();
            }
        )*
    };
}
pub(crate) use kernel_tests;

/// One `#[test]` in the including crate per kernel checked on both NVIDIA's
/// reference PTX (`ptx-emu/tests/corpus.rs`) and this compiler's PTX
/// (`tests/lower_emulated.rs`).
macro_rules! common_kernel_tests {
    () => {
        $crate::kernels::kernel_tests!(
            adv_index_rows_f32,
            arith_bf16,
            arith_f16,
            arith_f32,
            arith_f64,
            assert_nonneg_i32,
            atomic_hist_i32,
            atomic_ops_i32,
            atomic_red_view_f32,
            batched_matmul_f16,
            bitcast_pack_f32,
            bitwise_i32,
            broadcast_2d_f32,
            cast_f32_f16_bf16,
            cast_float_int,
            cast_int_width,
            cat_extract_f32,
            cmp_select_f32,
            cmp_select_i32,
            copy_3d_index_offset,
            custom_reduce_scan_f32,
            dot_1d_f32,
            exp_log_f32,
            fma_f32,
            for_loop_carried_f32,
            gather_2d_rows_f32,
            gather_scatter_mask_f32,
            gelu_tanh_f16,
            global_sum_atomic_f32,
            if_else_runtime_f32,
            insert_subtile_f32,
            int_arith_i32,
            int_arith_i64,
            int_divmod_i32,
            iota_full_fill,
            layernorm_rows_f32,
            list_of_arrays_f32,
            load_latency_hint_f32,
            matmul_bf16_tma,
            matmul_f16_divisible,
            matmul_f16_f16acc,
            matmul_f16_strided,
            matmul_f16_tma,
            matmul_f32,
            matmul_f64_operator,
            matmul_fp8_e4m3,
            matmul_i8_i32,
            matmul_tf32,
            minmax_neg_abs_f32,
            nobounds_copy_f32,
            permute_3d_f32,
            persistent_grid_stride_f32,
            pow_atan2_floor_ceil_f32,
            print_debug_i32,
            raw_offset_f32,
            reshape_1d_to_2d_f32,
            row_max_min_argmax_f32,
            row_sum_f32,
            scalar_params_axpy,
            scan_rows,
            slice_dynamic_f32,
            softmax_rows_f32,
            strided_window_f32,
            transpose_2d_f32,
            transpose_load_order_f16,
            trig_f32,
            uint_ops_u32,
            vadd_f32_contig,
            vadd_f32_divisible,
            vadd_f32_strided,
            while_break_continue_i32,
        );
    };
}
pub(crate) use common_kernel_tests;
