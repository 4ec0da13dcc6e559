//! `remf` on f32, f16 and bf16 (kernels from `tests/data/lower/ops/gen.py`),
//! lowered for sm_80 and sm_90, assembled by the real ptxas and run in the
//! PTX emulator: results must equal C's `fmod` (Rust's `%`) bit for bit,
//! NaNs aside (any NaN passes for a NaN), on special values, huge and tiny
//! exponent differences, subnormal divisors, quotients near powers of two
//! and exact multiples. f32 also runs with the approximate divisions off
//! by up to 2 ulps either way (the PTX ISA's bound for `div.full`), since
//! the lowering must be exact for any result within it.
mod common;
use common::xorshift as values;

use ptx_emu::float::{bf16_to_f64, f16_to_f64, f64_to_bf16_rn, f64_to_f16_rn};
use ptx_emu::{bytes, Device, Module, Param};
use tileiras::options::Gpu;

const N: usize = 128;

/// The sm_90 PTX of `name`, after checking ptxas accepts it for sm_80 and
/// sm_90.
fn ptx(name: &str) -> String {
    let mut last = String::new();
    for (gpu, arch) in [(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")] {
        last = common::ops_ptx(name, gpu, arch);
    }
    last
}

/// Runs kernel `name` on blocks of `N` elements of `x` and `y` (raw
/// little-endian elements of `size` bytes), with approximate f32 divisions
/// `skew` ulps off; returns the output bytes.
fn launch(name: &str, text: &str, x: &[u8], y: &[u8], size: usize, skew: i32) -> Vec<u8> {
    let m = Module::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut dev = Device::new();
    dev.approx_div_skew_ulps = skew;
    let block = N * size;
    let mut out = Vec::new();
    for (xb, yb) in x.chunks(block).zip(y.chunks(block)) {
        let px = dev.alloc_from(xb);
        let py = dev.alloc_from(yb);
        let o = dev.alloc(block);
        let params = [
            Param::U64(px.addr()),
            Param::U64(py.addr()),
            Param::U64(o.addr()),
        ];
        dev.launch_grid(&m, name, (1, 1, 1), &params)
            .unwrap_or_else(|e| panic!("{name} (skew {skew}): {e}"));
        out.extend(dev.read(o));
    }
    out
}

/// f32 bits with a random sign and mantissa and the biased exponent `e`
/// (0 gives a subnormal or zero).
fn with_exp(v: u64, e: u32) -> f32 {
    f32::from_bits((v as u32) & 0x807f_ffff | (e << 23))
}

/// f32 pairs: special values against each other, then random kinds of
/// pairs, `n` in all (a multiple of `N`).
fn f32_pairs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let sub_min = f32::from_bits(1);
    let sub_max = f32::from_bits(0x007f_ffff);
    let special = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1.0,
        -1.0,
        1.5,
        -3.0,
        0.1,
        sub_min,
        -sub_min,
        sub_max,
        f32::MIN_POSITIVE,
        f32::MAX,
        -f32::MAX,
        f32::from_bits(0x7e80_0001),
        f32::from_bits(0x7f00_0000),
        8_388_608.0,
        16_777_215.0,
        16_777_216.0,
    ];
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for &a in &special {
        for &b in &special {
            x.push(a);
            y.push(b);
        }
    }
    let v = values(3, 4 * n);
    let mut i = 0;
    while x.len() < n {
        let (v0, v1, v2) = (v[i], v[i + 1], v[i + 2]);
        i += 3;
        let eb = 1 + (v1 >> 40) as u32 % 254;
        let b = with_exp(v1, eb);
        let (a, b) = match x.len() % 8 {
            // Raw bits: mostly large exponent differences, either way.
            0 => (f32::from_bits(v0 as u32), f32::from_bits(v1 as u32)),
            // Quotients up to 2^40 (exponent difference 0 to 40).
            1 => {
                let d = (v2 >> 50) as u32 % 41;
                (with_exp(v0, (eb + d).min(254)), b)
            }
            // Subnormal divisors against anything.
            2 => (f32::from_bits(v0 as u32), with_exp(v1, 0)),
            // Huge exponent differences: near f32::MAX over tiny divisors.
            3 => {
                let tiny = (v1 as u32 & 0x8000_0000) | ((v1 >> 33) as u32 % 0x0100_0000);
                (
                    with_exp(v0, 254 - (v2 >> 50) as u32 % 4),
                    f32::from_bits(tiny),
                )
            }
            // Exact multiples, and their neighbours: a = n b (+- 1 ulp).
            4 => {
                let m = ((v2 >> 20) % (1 << ((v2 >> 8) % 26))) as f32;
                let nudge = (v2 % 3) as u32;
                let p = f32::from_bits((m * b).to_bits().wrapping_add(nudge).wrapping_sub(1));
                (if p.is_finite() { p } else { b }, b)
            }
            // Quotients just around 2^19 .. 2^25 (the step and f32
            // integer boundaries).
            5 => {
                let m = f32::from_bits((127 + 19 + (v2 % 7) as u32) << 23);
                let p = b.abs() * m;
                let nudge = ((v2 >> 8) % 9) as u32;
                let p = f32::from_bits(p.to_bits().wrapping_add(nudge).wrapping_sub(4));
                (if p.is_finite() { p } else { b }, b)
            }
            // Dividends below the divisor, and just above it.
            6 => {
                let d = (v2 % 3) as u32;
                (with_exp(v0, eb.saturating_sub(d).max(1)), b)
            }
            // Both subnormal.
            _ => (with_exp(v0, 0), with_exp(v1, 0)),
        };
        x.push(a);
        y.push(b);
    }
    (x, y)
}

/// Whether `got` is `want` (bit for bit; any NaN for a NaN).
fn same_f32(got: f32, want: f32) -> bool {
    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
}

#[test]
fn remf_f32_is_fmod_bit_for_bit_within_the_division_error_bound() {
    let (x, y) = f32_pairs(256 * N);
    let name = "remf_f32";
    let text = ptx(name);
    assert!(text.contains("div.full.f32"), "{text}");
    assert!(!text.contains("div.rn.f64"), "{text}");
    let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a % b).collect();
    for skew in [0, -2, -1, 1, 2] {
        let out = launch(
            name,
            &text,
            &bytes::from_f32(&x),
            &bytes::from_f32(&y),
            4,
            skew,
        );
        let got = bytes::to_f32(&out);
        for i in 0..x.len() {
            assert!(
                same_f32(got[i], want[i]),
                "fmod({:e} [{:#x}], {:e} [{:#x}]) = {:e} [{:#x}], want {:e} [{:#x}] (skew {skew})",
                x[i],
                x[i].to_bits(),
                y[i],
                y[i].to_bits(),
                got[i],
                got[i].to_bits(),
                want[i],
                want[i].to_bits()
            );
        }
    }
    // The inputs reach what they are for: signed zeros out, NaNs, the
    // dividend itself for an infinite divisor, subnormal results.
    assert!(want.iter().any(|w| w.to_bits() == 0x8000_0000));
    assert!(want.iter().any(|w| w.is_nan()));
    assert!(want.iter().any(|w| w.is_subnormal()));
    let huge = x
        .iter()
        .zip(&y)
        .filter(|(a, b)| a.is_finite() && b.abs() > 0.0 && (a.abs() / b.abs()).is_infinite())
        .count();
    assert!(huge > 100, "{huge} pairs with quotients beyond f32");
}

/// `remf` on a 16-bit float type: random bit patterns and special values,
/// against fmod of the widened values (exact, so rounding back is too).
fn check_half(name: &str, to_f64: fn(u16) -> f64, from_f64: fn(f64) -> u16, seed: u64) {
    let special: [u16; 10] = if name.ends_with("bf16") {
        [
            0, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x3f80, 0xc040, 1, 0x8001, 0x7f7f,
        ]
    } else {
        [
            0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x3c00, 0xc200, 1, 0x8001, 0x7bff,
        ]
    };
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for &a in &special {
        for &b in &special {
            x.push(a);
            y.push(b);
        }
    }
    for v in values(seed, 32 * N - x.len()) {
        x.push(v as u16);
        // Every other divisor subnormal or small, for large quotients.
        y.push(if v & (1 << 40) != 0 {
            (v >> 16) as u16 & 0x83ff
        } else {
            (v >> 16) as u16
        });
    }
    let text = ptx(name);
    let out = bytes::to_u16(&launch(
        name,
        &text,
        &bytes::from_u16(&x),
        &bytes::from_u16(&y),
        2,
        0,
    ));
    for i in 0..x.len() {
        let w = to_f64(x[i]) % to_f64(y[i]);
        let ok = if w.is_nan() {
            to_f64(out[i]).is_nan()
        } else {
            out[i] == from_f64(w)
        };
        assert!(
            ok,
            "{name}: fmod({:#x}, {:#x}) = {:#x}, want {:#x}",
            x[i],
            y[i],
            out[i],
            from_f64(w)
        );
    }
}

#[test]
fn remf_f16_is_fmod_bit_for_bit() {
    check_half("remf_f16", f16_to_f64, f64_to_f16_rn, 21);
}

#[test]
fn remf_bf16_is_fmod_bit_for_bit() {
    check_half("remf_bf16", bf16_to_f64, f64_to_bf16_rn, 22);
}
