//! `ftof` to and from the unsigned scale formats f8E8M0FNU and f8E5M3FNU
//! (kernel `ftof_f8_scale`, written with cuTile's bytecode encoders in
//! `tests/data/lower/ops/gen.py`). It is lowered for sm_80 and sm_90 (bit
//! manipulation), sm_100 (`cvt` `.ue8m0x2` forms) and sm_107 (`.ue5m3x2`
//! too), assembled by the real ptxas (and for sm_120) and run in the PTX
//! emulator over every f16 and bf16 bit pattern, every byte as each 8-bit
//! format, f32s and f64s at the formats' edges (zeros, subnormals, the
//! largest and smallest values, rounding midpoints, infinities, NaN) and
//! random ones. Results are compared with encoders and decoders written
//! here from the formats' definitions, and between the targets byte for
//! byte.
//!
//! The other ops the verifier allows on these element types (constants,
//! bitcasts, select, reshape, permute, cat, extract, broadcast, view loads
//! with each padding value, reduce, `ftoi`, `itof`, `print`) run in kernels
//! `scale_ops_e8m0`, `scale_ops_e5m3` and `print_scale`.
mod common;
use common::scaled::e5m3 as e5m3_value;
use common::xorshift as values;

use ptx_emu::float::{bf16_to_f64, f16_to_f64, round, BF16, E4M3, E5M2, F16};
use ptx_emu::ir::Rnd;
use ptx_emu::{bytes, Device, Module, Param};
use tileiras::options::Gpu;

const N: usize = 128;

/// The value of f8E8M0FNU code `c`: `2^(c - 127)`, 0xFF NaN.
fn e8m0_value(c: u8) -> f64 {
    if c == 0xff {
        f64::NAN
    } else {
        2f64.powi(i32::from(c) - 127)
    }
}

/// The exponent `e` with `2^e <= a < 2^(e + 1)` of a positive finite `a`.
fn exponent(a: f64) -> i32 {
    let mut e = a.log2().floor() as i32;
    while 2f64.powi(e) > a {
        e -= 1;
    }
    while 2f64.powi(e + 1) <= a {
        e += 1;
    }
    e
}

/// `|v|` as f8E8M0FNU, rounded to a power of two toward zero or up; below
/// `2^-127` (zero too) code 0, above `2^127` (infinities too) 0xFE, NaN
/// 0xFF.
fn e8m0(v: f64, up: bool) -> u8 {
    if v.is_nan() {
        return 0xff;
    }
    let a = v.abs();
    if a.is_infinite() {
        return 0xfe;
    }
    if a == 0.0 {
        return 0;
    }
    let e = exponent(a);
    let e = if up && 2f64.powi(e) != a { e + 1 } else { e };
    (e + 127).clamp(0, 0xfe) as u8
}

/// `|v|` as f8E5M3FNU, rounded to nearest even; beyond the largest value
/// (infinities too) 0xFE, NaN 0xFF.
fn e5m3(v: f64) -> u8 {
    if v.is_nan() {
        return 0xff;
    }
    let a = v.abs();
    if a >= e5m3_value(0xfe) {
        return 0xfe;
    }
    if a == 0.0 {
        return 0;
    }
    let q = 2f64.powi(exponent(a).max(-14) - 3);
    let n = a / q;
    let mut k = n.floor();
    let frac = n - k;
    if frac > 0.5 || (frac == 0.5 && k % 2.0 == 1.0) {
        k += 1.0;
    }
    let r = k * q;
    if r == 0.0 {
        return 0;
    }
    if r >= e5m3_value(0xfe) {
        return 0xfe;
    }
    if k <= 8.0 && q == 2f64.powi(-17) {
        // Subnormal (8 quanta: the smallest normal, code 8).
        return k as u8;
    }
    let re = exponent(r);
    (((re + 15) << 3) as u8) | ((r / 2f64.powi(re - 3)) as u8 - 8)
}

/// The PTX of ops kernel `name` for `gpu` (see [`common::ops_ptx`]).
fn ptx_of(name: &str, gpu: Gpu, arch: &str) -> String {
    common::ops_ptx(name, gpu, arch)
}

/// The PTX of `ftof_f8_scale` for `gpu` (see [`ptx_of`]).
fn ptx(gpu: Gpu, arch: &str) -> String {
    ptx_of("ftof_f8_scale", gpu, arch)
}

/// Kernel inputs: f32s, f16 and bf16 bits, f64s, bytes.
struct Inputs {
    x: Vec<f32>,
    h: Vec<u16>,
    b: Vec<u16>,
    d: Vec<f64>,
    c: Vec<u8>,
}

/// f32 edge values for the scale formats: zeros, f32 subnormals around
/// `2^-127`, powers of two and their neighbours, f8E5M3FNU's smallest and
/// largest values and the midpoints between its codes, infinities, NaNs.
fn edges() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::MAX,
        -f32::MAX,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x0040_0000),
        f32::from_bits(0x0040_0001),
        f32::from_bits(0x003f_ffff),
        f32::from_bits(0x0060_0000),
        f32::from_bits(0x007f_ffff),
        2f32.powi(127),
        2f32.powi(127) * 1.5,
        118_784.0,
        118_784.01,
        114_688.0,
        122_880.0,
        65_504.0,
        65_536.0,
    ];
    for e in [
        -127, -126, -20, -18, -17, -15, -14, -1, 0, 1, 15, 16, 17, 126,
    ] {
        let p = 2f32.powi(e);
        v.extend([
            p,
            -p,
            p * (1.0 + f32::EPSILON),
            p * (1.0 - f32::EPSILON / 2.0),
        ]);
    }
    // Every f8E5M3FNU value and the midpoint above it, and its neighbours.
    for c in 0..0xfeu8 {
        let (lo, hi) = (e5m3_value(c), e5m3_value(c + 1));
        let mid = ((lo + hi) / 2.0) as f32;
        v.extend([lo as f32, mid, f32::from_bits(mid.to_bits() + 1)]);
        if mid.to_bits() > 1 {
            v.push(f32::from_bits(mid.to_bits() - 1));
        }
    }
    v
}

/// Every f16 bit pattern (widened to f32 for the f32 input), every bf16
/// one, the edges and random f32s (any bits, or magnitudes 2^-30 .. 2^30).
/// The f64s are the f32s nudged by less than an f32 ulp (up, down or not),
/// so that rounding twice would go wrong at midpoints; bytes cycle through
/// all 256 codes.
fn inputs() -> Inputs {
    let mut x: Vec<f32> = (0..=u16::MAX).map(|h| f16_to_f64(h) as f32).collect();
    let edges = edges();
    x.extend(&edges);
    let pad = (N - x.len() % N) % N + 4 * N;
    x.extend(common::random_f32s(7, pad, 97, 60));
    let mut h: Vec<u16> = (0..=u16::MAX).collect();
    let mut b: Vec<u16> = (0..=u16::MAX).collect();
    common::extend_halves(&mut h, &mut b, x.len(), 11);
    let d = common::nudged_f64s(&x, 13);
    let c = (0..x.len()).map(|i| (i * 7 + i / 256) as u8).collect();
    Inputs { x, h, b, d, c }
}

/// Rows per output array, in the kernel's parameter order after the
/// inputs: e8m0, e5m3, f16, bf16, f32, tf32, f64, e4m3, e5m2.
const ROWS: [usize; 9] = [16, 8, 4, 2, 2, 2, 2, 2, 2];
/// Element bytes of each output array.
const WIDTH: [usize; 9] = [1, 1, 2, 2, 4, 4, 8, 1, 1];

/// The outputs of one target: per output array, its rows of raw bytes
/// (each row `WIDTH` bytes an element, as long as the inputs).
type Outputs = Vec<Vec<Vec<u8>>>;

/// Runs `ftof_f8_scale` (PTX `text`) over `inp`, one tile of N at a time.
fn run(text: &str, inp: &Inputs) -> Outputs {
    let m = Module::parse(text).expect("emulator parses the PTX");
    let mut dev = Device::new();
    let mut o: Outputs = ROWS.iter().map(|&r| vec![Vec::new(); r]).collect();
    for t in 0..inp.x.len() / N {
        let s = t * N..(t + 1) * N;
        let x = dev.alloc_from(&bytes::from_f32(&inp.x[s.clone()]));
        let h = dev.alloc_from(&bytes::from_u16(&inp.h[s.clone()]));
        let b = dev.alloc_from(&bytes::from_u16(&inp.b[s.clone()]));
        let d = dev.alloc_from(&bytes::from_f64(&inp.d[s.clone()]));
        let c = dev.alloc_from(&inp.c[s]);
        let outs: Vec<_> = ROWS
            .iter()
            .zip(WIDTH)
            .map(|(&r, w)| dev.alloc(r * w * N))
            .collect();
        let ins = [x, h, b, d, x, c, c, c, c];
        let params: Vec<Param> = ins
            .iter()
            .chain(outs.iter())
            .map(|p| Param::U64(p.addr()))
            .collect();
        dev.launch_grid(&m, "ftof_f8_scale", (1, 1, 1), &params)
            .expect("ftof_f8_scale runs");
        for (k, p) in outs.iter().enumerate() {
            let all = dev.read(*p);
            let row = WIDTH[k] * N;
            for (j, r) in o[k].iter_mut().enumerate() {
                r.extend_from_slice(&all[j * row..(j + 1) * row]);
            }
        }
        for p in [x, h, b, d, c].into_iter().chain(outs) {
            dev.free(p);
        }
    }
    o
}

/// Element `i` of a row of `w`-byte elements, as bits.
fn elem(row: &[u8], w: usize, i: usize) -> u64 {
    let mut b = [0u8; 8];
    b[..w].copy_from_slice(&row[i * w..(i + 1) * w]);
    u64::from_le_bytes(b)
}

/// Whether float bits `got` (of a `w`-byte float) are `want`: NaN for NaN,
/// else the same value with the same sign.
fn same(got: u64, w: usize, want: f64) -> bool {
    let v = match w {
        2 => return false,
        4 => f64::from(f32::from_bits(got as u32)),
        _ => f64::from_bits(got),
    };
    (v.is_nan() && want.is_nan()) || v.to_bits() == want.to_bits()
}

/// Whether 16-bit float bits `got` are `want` rounded into `fmt` with
/// `rnd` (NaN for NaN).
fn same16(got: u64, want: f64, fmt: ptx_emu::float::Fmt, rnd: Rnd) -> bool {
    let decode = |b: u64| {
        if fmt.mbits == 7 {
            bf16_to_f64(b as u16)
        } else {
            f16_to_f64(b as u16)
        }
    };
    if want.is_nan() {
        return decode(got).is_nan();
    }
    got == round(want, 0.0, rnd, fmt, false)
}

/// Checks one target's outputs against the reference model.
fn check(o: &Outputs, inp: &Inputs, target: &str) {
    let n = inp.x.len();
    let e4 = |c: u8| ptx_emu::float::decode(E4M3, u64::from(c));
    let e5 = |c: u8| ptx_emu::float::decode(E5M2, u64::from(c));
    // Source values of the rows to the scale formats.
    let srcs: Vec<(&str, Vec<f64>)> = vec![
        ("f32", inp.x.iter().map(|&v| f64::from(v)).collect()),
        ("f16", inp.h.iter().map(|&v| f16_to_f64(v)).collect()),
        ("bf16", inp.b.iter().map(|&v| bf16_to_f64(v)).collect()),
        ("f64", inp.d.clone()),
        ("tf32", inp.x.iter().map(|&v| f64::from(v)).collect()),
        ("e4m3", inp.c.iter().map(|&c| e4(c)).collect()),
        ("e5m2", inp.c.iter().map(|&c| e5(c)).collect()),
    ];
    let e5m3_src: Vec<f64> = inp.c.iter().map(|&c| e5m3_value(c)).collect();
    let e8m0_src: Vec<f64> = inp.c.iter().map(|&c| e8m0_value(c)).collect();
    for (dir, up) in [(0, false), (1, true)] {
        for (k, (name, src)) in srcs
            .iter()
            .map(|(n, s)| (*n, s))
            .chain([("e5m3", &e5m3_src)])
            .enumerate()
        {
            let row = &o[0][dir * 8 + k];
            for i in 0..n {
                let want = e8m0(src[i], up);
                assert_eq!(
                    row[i], want,
                    "{target}: {name} {:e} to e8m0 (up: {up}): {:#04x}, want {want:#04x}",
                    src[i], row[i]
                );
            }
        }
    }
    for (k, (name, src)) in srcs
        .iter()
        .map(|(n, s)| (*n, s))
        .chain([("e8m0", &e8m0_src)])
        .enumerate()
    {
        for i in 0..n {
            let (got, want) = (o[1][k][i], e5m3(src[i]));
            assert_eq!(
                got, want,
                "{target}: {name} {:e} to e5m3: {got:#04x}, want {want:#04x}",
                src[i]
            );
        }
    }
    for i in 0..n {
        let (c, v8, v5) = (inp.c[i], e8m0_src[i], e5m3_src[i]);
        for (j, (v, rnd)) in [(v8, Rnd::Rn), (v8, Rnd::Rz), (v5, Rnd::Rn), (v5, Rnd::Rz)]
            .into_iter()
            .enumerate()
        {
            let got = elem(&o[2][j], 2, i);
            assert!(
                same16(got, v, F16, rnd),
                "{target}: code {c:#04x} (row {j}) to f16: {got:#06x}, want {v:e}"
            );
        }
        for (j, v) in [v8, v5].into_iter().enumerate() {
            let got = elem(&o[3][j], 2, i);
            assert!(
                same16(got, v, BF16, Rnd::Rn),
                "{target}: code {c:#04x} (row {j}) to bf16: {got:#06x}, want {v:e}"
            );
            for (k, w) in [(4, 4), (5, 4), (6, 8)] {
                let got = elem(&o[k][j], w, i);
                assert!(
                    same(got, w, v),
                    "{target}: code {c:#04x} (row {j}) to output {k}: {got:#x}, want {v:e}"
                );
            }
            for (k, fmt) in [(7, E4M3), (8, E5M2)] {
                let (got, want) = (o[k][j][i], round(v, 0.0, Rnd::Rn, fmt, true) as u8);
                assert_eq!(
                    got, want,
                    "{target}: code {c:#04x} (row {j}) to output {k}: {got:#04x}, want {want:#04x}"
                );
            }
        }
    }
}

#[test]
fn reference_model_agrees_with_the_emulators_scale_conversions() {
    use ptx_emu::scale;
    for c in 0..=255u8 {
        let (a, b) = (e8m0_value(c), scale::ue8m0_value(c));
        assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
        let (a, b) = (e5m3_value(c), scale::ue5m3_value(c));
        assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
    }
    let inp = inputs();
    for &v in inp
        .d
        .iter()
        .chain(&edges().iter().map(|&v| f64::from(v)).collect::<Vec<_>>())
    {
        assert_eq!(e8m0(v, false), scale::to_ue8m0(v, Rnd::Rz, true), "{v:e}");
        assert_eq!(e8m0(v, true), scale::to_ue8m0(v, Rnd::Rp, true), "{v:e}");
        assert_eq!(e5m3(v), scale::to_ue5m3(v, Rnd::Rn, true), "{v:e}");
    }
}

#[test]
fn scale_conversions_match_the_reference_on_every_target() {
    let inp = inputs();
    let targets = [
        (Gpu::Sm80, "sm_80"),
        (Gpu::Sm90, "sm_90a"),
        (Gpu::Sm100, "sm_100a"),
        (Gpu::Sm107, "sm_107a"),
    ];
    let texts: Vec<String> = targets.iter().map(|&(g, a)| ptx(g, a)).collect();
    ptx(Gpu::Sm120, "sm_120a");
    for (text, (_, arch)) in texts.iter().zip(targets) {
        let native8 = arch != "sm_80" && arch != "sm_90a";
        let native5 = arch == "sm_107a";
        for (form, native) in [
            ("cvt.rz.satfinite.ue8m0x2.f32", native8),
            ("cvt.rp.satfinite.ue8m0x2.f32", native8),
            ("cvt.rn.bf16x2.ue8m0x2", native8),
            ("cvt.rn.satfinite.ue5m3x2.f32", native5),
            ("cvt.rn.bf16x2.ue5m3x2", native5),
        ] {
            assert_eq!(text.contains(form), native, "{arch}: {form}");
        }
    }
    let mut first: Option<Outputs> = None;
    for (text, (_, arch)) in texts.iter().zip(targets) {
        let o = run(text, &inp);
        check(&o, &inp, arch);
        match &first {
            None => first = Some(o),
            Some(f) => assert!(f == &o, "{arch}: bytes differ from sm_80's"),
        }
    }
}

/// The element scalar of value `v`'s tile type.
fn scalar_of(m: &tileiras::ir::Module, v: tileiras::ir::ValueId) -> Option<tileiras::ir::Scalar> {
    use tileiras::ir::Type;
    let Some(Type::Tile { element, .. }) = m.types.try_get(m.values[v].ty) else {
        return None;
    };
    match m.types.try_get(*element) {
        Some(Type::Scalar(s)) => Some(*s),
        _ => None,
    }
}

#[test]
fn widening_from_a_scale_format_needs_the_whole_range() {
    // As NVIDIA's verifier: a conversion widens (and takes any IEEE
    // rounding mode) only when the target holds every source value;
    // f8E8M0FNU's 2^-127 is below f32's normal range (and f16's, bf16's,
    // tf32's), f8E5M3FNU's 2^16 above f16's.
    use tileiras::ir::{Attr, EnumKind, Opcode, Scalar};
    let path = common::repo().join("tests/data/lower/ops/ftof_f8_scale.tileir");
    let m = tileiras::bytecode::read(&std::fs::read(path).expect("kernel")).expect("reads");
    let ftofs: Vec<_> = m
        .walk()
        .filter(|&id| m.ops[id].opcode == Opcode::FToF)
        .collect();
    let mut seen = 0;
    for id in ftofs {
        let op = &m.ops[id];
        let (Some(from), Some(to)) = (scalar_of(&m, op.operands[0]), scalar_of(&m, op.results[0]))
        else {
            panic!("ftof without tile types");
        };
        if !matches!(from, Scalar::F8E8M0FNU | Scalar::F8E5M3FNU)
            || !matches!(
                to,
                Scalar::F16 | Scalar::BF16 | Scalar::F32 | Scalar::TF32 | Scalar::F64
            )
        {
            continue;
        }
        seen += 1;
        let widening = to == Scalar::F64 || (from == Scalar::F8E5M3FNU && to != Scalar::F16);
        let mut m2 = m.clone();
        let attrs = &mut m2.ops[id].attrs;
        attrs.retain(|(n, _)| *n != "rounding_mode");
        attrs.push(("rounding_mode", Attr::Enum(EnumKind::RoundingMode, 3)));
        let narrowing = "invalid rounding mode specified. Only 'nearest_even' and 'zero' are supported for narrowing conversions to standard types";
        let rejected = match tileiras::verify::verify(&m2) {
            Ok(()) => false,
            Err(errs) => errs.iter().any(|d| d.message.ends_with(narrowing)),
        };
        assert_eq!(
            rejected,
            !widening,
            "{} to {} with positive_inf",
            from.name(),
            to.name()
        );
    }
    assert!(seen >= 8, "{seen} conversions from a scale format");
}

/// Runs `scale_ops_<fmt>` on every target over all 256 codes (two
/// launches) with views of `n` = 100 elements, and checks each row against
/// its definition (see `scale_ops` in `gen.py`); `pads` are the two view
/// rows' padding bytes, `value` the format's decoder.
fn check_scale_ops(fmt: &str, pads: [u8; 2], value: fn(u8) -> f64) {
    let name = format!("scale_ops_{fmt}");
    let n = 100usize;
    let e5m3_fmt = fmt == "e5m3";
    for (gpu, arch) in [
        (Gpu::Sm80, "sm_80"),
        (Gpu::Sm90, "sm_90a"),
        (Gpu::Sm100, "sm_100a"),
        (Gpu::Sm107, "sm_107a"),
        (Gpu::Sm120, "sm_120a"),
    ] {
        let text = ptx_of(&name, gpu, arch);
        if gpu == Gpu::Sm120 {
            continue;
        }
        let m = Module::parse(&text).expect("emulator parses the PTX");
        let mut dev = Device::new();
        for t in 0..2 {
            let c: Vec<u8> = (0..N).map(|i| (t * N + i) as u8).collect();
            let k: Vec<i32> = values(17 + t as u64, N)
                .into_iter()
                .enumerate()
                .map(|(i, v)| match i % 3 {
                    0 => v as i32,
                    1 => (v % 300_000) as i32 - 150_000,
                    _ => (v % 64) as i32 - 32,
                })
                .collect();
            let cp = dev.alloc_from(&c);
            let kp = dev.alloc_from(&bytes::from_i32(&k));
            let rows = 8;
            let out = dev.alloc(rows * N);
            let bits = dev.alloc(N);
            let ints = dev.alloc(4 * N);
            let back = dev.alloc(N);
            let params = [
                Param::U64(cp.addr()),
                Param::U64(cp.addr()),
                Param::U32(n as u32),
                Param::U64(out.addr()),
                Param::U64(bits.addr()),
                Param::U64(ints.addr()),
                Param::U64(kp.addr()),
                Param::U64(back.addr()),
            ];
            dev.launch_grid(&m, &name, (1, 1, 1), &params)
                .unwrap_or_else(|e| panic!("{name} on {arch}: {e:?}"));
            let o = dev.read(out);
            let row = |r: usize, i: usize| o[r * N + i];
            for i in 0..N {
                let want = [
                    c[i],
                    if i < 40 { c[i] } else { (3 * i % 256) as u8 },
                    c[(i % 8) * 16 + i / 8],
                    c[i % 64],
                    c[16 + i % 16],
                    if i < n { c[i] } else { pads[0] },
                    if i < n { c[i] } else { pads[1] },
                    *c.iter().max().expect("codes"),
                ];
                for (r, w) in want.into_iter().enumerate() {
                    assert_eq!(row(r, i), w, "{name} on {arch}: row {r}, element {i}");
                }
            }
            assert_eq!(dev.read(bits), c, "{name} on {arch}: bitcast to i8");
            let got = bytes::to_i32(&dev.read(ints));
            for i in 0..N {
                // Truncated toward zero, saturated, NaN 0 (as Rust's `as`).
                let want = value(c[i]) as i32;
                assert_eq!(got[i], want, "{name} on {arch}: ftoi of {:#04x}", c[i]);
            }
            if e5m3_fmt {
                let got = dev.read(back);
                for i in 0..N {
                    let want = e5m3(f64::from(k[i]));
                    assert_eq!(got[i], want, "{name} on {arch}: itof of {}", k[i]);
                }
            }
            for p in [cp, kp, out, bits, ints, back] {
                dev.free(p);
            }
        }
    }
}

#[test]
fn other_ops_on_e8m0_tiles() {
    // Views padded with zero (code 0, 2^-127) and NaN.
    check_scale_ops("e8m0", [0x00, 0xff], e8m0_value);
}

#[test]
fn other_ops_on_e5m3_tiles() {
    // Views padded with -0 (0: no sign) and +inf (NaN: no infinities).
    check_scale_ops("e5m3", [0x00, 0xff], e5m3_value);
}

#[test]
fn print_shows_scale_values() {
    // Printed as f64 with %f; NaN for 0xFF.
    let e8 = [127u8, 130, 0xff, 126];
    let e5 = [0x78u8, 0x01, 0xfe, 0xff];
    for (gpu, arch) in [
        (Gpu::Sm80, "sm_80"),
        (Gpu::Sm90, "sm_90a"),
        (Gpu::Sm100, "sm_100a"),
        (Gpu::Sm107, "sm_107a"),
        (Gpu::Sm120, "sm_120a"),
    ] {
        let text = ptx_of("print_scale", gpu, arch);
        if gpu == Gpu::Sm120 {
            continue;
        }
        let m = Module::parse(&text).expect("emulator parses the PTX");
        let mut dev = Device::new();
        let (a, b) = (dev.alloc_from(&e8), dev.alloc_from(&e5));
        let r = dev
            .launch_grid(
                &m,
                "print_scale",
                (1, 1, 1),
                &[Param::U64(a.addr()), Param::U64(b.addr())],
            )
            .expect("print_scale runs");
        for (tag, codes, value) in [
            ("e8m0", e8, e8m0_value as fn(u8) -> f64),
            ("e5m3", e5, e5m3_value),
        ] {
            let line = r
                .printf
                .lines()
                .find(|l| l.starts_with(tag))
                .unwrap_or_else(|| panic!("{arch}: no {tag} line in {:?}", r.printf));
            for c in codes {
                let v = value(c);
                let want = if v.is_nan() {
                    "nan".to_string()
                } else {
                    format!("{v:.6}")
                };
                assert!(
                    line.to_lowercase().contains(&want),
                    "{arch}: {line:?} lacks {want}"
                );
            }
        }
    }
}
