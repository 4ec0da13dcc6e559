//! The f64 math functions (`exp2` ... `tanh`, `pow`, `atan2`, `remf`),
//! NaN-propagating `maxf`/`minf` and f64 -> bf16 conversions, in kernels
//! written with cuTile's bytecode encoders (`tests/data/lower/ops/gen.py`).
//! Each is lowered for sm_80 and sm_90, assembled by the real ptxas, and run
//! in the PTX emulator on random inputs over wide ranges plus special
//! values; results are compared with Rust's f64 functions in ulps.
mod common;
use common::xorshift as values;

use ptx_emu::float::{bf16_to_f64, round, BF16};
use ptx_emu::ir::Rnd;
use ptx_emu::{bytes, Device, Module, Param};
use tileiras::options::Gpu;

const N: usize = 128;

/// The sm_90 PTX of `name`, after checking the verifier accepts the module
/// and ptxas accepts its PTX for sm_80 and sm_90.
fn ptx(name: &str) -> String {
    let mut last = String::new();
    for (gpu, arch) in [(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")] {
        last = common::ops_ptx(name, gpu, arch);
    }
    last
}

/// Random f64s: uniform on [-1, 1], [-20, 20] and [-760, 760], with
/// random exponents over the whole range (subnormals included), scaled by
/// up to 2^50 (for the trigonometric reduction), and near 1.
fn random(seed: u64, n: usize) -> Vec<f64> {
    values(seed, n)
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let u = (v >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            let p2 = |e: u64| f64::from_bits((1023 + e) << 52);
            match i % 6 {
                0 => u,
                1 => u * 20.0,
                2 => u * 760.0,
                3 => f64::from_bits(v & !(0x7ffu64 << 52) | (((v >> 20) % 2046 + 1) << 52)),
                4 => u * p2(v % 50),
                _ => 1.0 + u / p2(v % 45),
            }
        })
        .collect()
}

const SPECIAL: [f64; 27] = [
    0.0,
    -0.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    1.0,
    -1.0,
    2.0,
    0.5,
    5e-324,
    -2.5e-310,
    f64::MIN_POSITIVE,
    f64::MAX,
    709.78,
    709.79,
    710.4,
    710.5,
    -745.1,
    -745.2,
    1e-300,
    std::f64::consts::FRAC_PI_2,
    std::f64::consts::PI,
    1e15,
    1.5e-8,
    HARD,
    -1e300,
    1.3e19,
];

/// The double nearest a multiple of pi/2: 6381956970095103 2^797, which
/// is n pi/2 + 4.68716592425462761e-19 (n odd). Rust's `cos` and `tan`
/// miss there by 8 ulps; the exact values are checked instead.
const HARD: f64 = 5.319_372_648_326_541e255;
const HARD_REM: f64 = 4.687_165_924_254_628e-19;

/// The distance in ulps between two f64s (0 for two NaNs).
fn ulps(a: f64, b: f64) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    let ord = |x: f64| {
        let b = x.to_bits() as i64;
        if b < 0 {
            i64::MIN - b
        } else {
            b
        }
    };
    ord(a).abs_diff(ord(b))
}

/// Runs `name` on blocks of `N` elements of each input, returning the rows
/// of its output (`rows` results per element), concatenated per row.
fn launch(name: &str, inputs: &[&[f64]], rows: usize) -> Vec<Vec<f64>> {
    let text = ptx(name);
    let m = Module::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut dev = Device::new();
    let mut out = vec![Vec::new(); rows];
    for b in 0..inputs[0].len() / N {
        let mut params = Vec::new();
        for x in inputs {
            let p = dev.alloc_from(&bytes::from_f64(&x[b * N..(b + 1) * N]));
            params.push(Param::U64(p.addr()));
        }
        let o = dev.alloc(8 * N * rows);
        params.push(Param::U64(o.addr()));
        dev.launch_grid(&m, name, (1, 1, 1), &params)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = bytes::to_f64(&dev.read(o));
        for (k, row) in out.iter_mut().enumerate() {
            row.extend_from_slice(&got[k * N..(k + 1) * N]);
        }
    }
    out
}

/// Checks `got` against `want` on every input, with at most `tol` ulps;
/// returns the largest error seen.
fn check(what: &str, x: &[f64], got: &[f64], want: impl Fn(f64) -> Option<f64>, tol: u64) -> u64 {
    let mut worst = 0;
    for (i, (&x, &g)) in x.iter().zip(got).enumerate() {
        let Some(w) = want(x) else { continue };
        let e = ulps(g, w);
        assert!(
            e <= tol,
            "{what}({x:e}) [{i}] = {g:e}, want {w:e} ({e} ulps)"
        );
        worst = worst.max(e);
    }
    println!("{what}: max {worst} ulp over {} inputs", x.len());
    worst
}

#[test]
fn unary_f64_functions_are_within_two_ulps() {
    let mut x = SPECIAL.to_vec();
    x.extend(random(7, 96 * N - SPECIAL.len()));
    let rows = launch("math_f64_unary", &[&x], 10);
    let all = |f: fn(f64) -> f64| move |x: f64| Some(f(x));
    check("exp2", &x, &rows[0], all(f64::exp2), 2);
    check("exp", &x, &rows[1], all(f64::exp), 2);
    check("log", &x, &rows[2], all(f64::ln), 2);
    check("log2", &x, &rows[3], all(f64::log2), 2);
    check("sin", &x, &rows[4], all(f64::sin), 2);
    let not_hard = |f: fn(f64) -> f64| move |x: f64| (x != HARD).then(|| f(x));
    check("cos", &x, &rows[5], not_hard(f64::cos), 2);
    check("tan", &x, &rows[6], not_hard(f64::tan), 2);
    let hard = x.iter().position(|&v| v == HARD).unwrap();
    assert_eq!(rows[5][hard], -HARD_REM, "cos(HARD)");
    assert!(
        ulps(rows[6][hard], -1.0 / HARD_REM) <= 2,
        "tan(HARD) = {:e}",
        rows[6][hard]
    );
    check("sinh", &x, &rows[7], all(f64::sinh), 2);
    check("cosh", &x, &rows[8], all(f64::cosh), 2);
    check("tanh", &x, &rows[9], all(f64::tanh), 2);
    // Signs of zeros and infinities.
    assert_eq!(rows[4][1].to_bits(), (-0f64).to_bits(), "sin(-0)");
    assert_eq!(rows[6][1].to_bits(), (-0f64).to_bits(), "tan(-0)");
    assert_eq!(rows[9][1].to_bits(), (-0f64).to_bits(), "tanh(-0)");
    assert_eq!(rows[2][0], f64::NEG_INFINITY, "log(0)");
}

/// Pairs for the binary functions: special values against each other,
/// then random operands.
fn pairs(seed: u64, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut x = Vec::new();
    let mut y = Vec::new();
    let sp = [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1.0,
        -1.0,
        -2.0,
        0.5,
        3.0,
        -3.0,
        2.5,
        5e-324,
    ];
    for &a in &sp {
        for &b in &sp {
            x.push(a);
            y.push(b);
        }
    }
    let ra = random(seed, n);
    let rb = random(seed + 1, n);
    let v = values(seed + 2, n);
    for i in 0..n - x.len() {
        x.push(ra[i]);
        // Every third y a small integer, for negative bases.
        y.push(if i % 3 == 0 {
            (v[i] % 41) as f64 - 20.0
        } else {
            rb[i]
        });
    }
    (x, y)
}

#[test]
fn binary_f64_functions_match_c() {
    let (mut x, mut y) = pairs(11, 96 * N);
    // Bases near 1 with exponents putting y log(x) anywhere in [-740, 740]
    // stress pow's extra precision.
    let v = values(13, x.len());
    for i in (200..x.len()).step_by(5) {
        let u = (v[i] >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        x[i] = 1.0 + u / f64::from_bits((1023 + v[i] % 40) << 52);
        y[i] = (v[i] % 1480) as f64 / 2.0 - 740.0 + u;
        y[i] /= x[i].ln();
    }
    let rows = launch("math_f64_binary", &[&x, &y], 5);
    let ulp2 = |what, got: &[f64], f: fn(f64, f64) -> f64, tol| {
        let mut worst = 0;
        for i in 0..x.len() {
            let w = f(x[i], y[i]);
            let e = ulps(got[i], w);
            assert!(
                e <= tol,
                "{what}({:e}, {:e}) = {:e}, want {w:e} ({e} ulps)",
                x[i],
                y[i],
                got[i]
            );
            worst = worst.max(e);
        }
        println!("{what}: max {worst} ulp over {} inputs", x.len());
    };
    ulp2("pow", &rows[0], f64::powf, 2);
    ulp2("atan2", &rows[1], f64::atan2, 2);
    ulp2("remf", &rows[2], |a, b| a % b, 0);
    let max = |a: f64, b: f64| {
        if a.is_nan() || b.is_nan() {
            f64::NAN
        } else {
            a.max(b)
        }
    };
    let min = |a: f64, b: f64| {
        if a.is_nan() || b.is_nan() {
            f64::NAN
        } else {
            a.min(b)
        }
    };
    ulp2("maxf", &rows[3], max, 0);
    ulp2("minf", &rows[4], min, 0);
}

#[test]
fn f64_to_bf16_rounds_once() {
    let mut x = SPECIAL.to_vec();
    // Values just beside bf16 rounding boundaries (halfway points and
    // their neighbours), where rounding through f32 first would differ.
    for (i, v) in values(5, 4 * N - SPECIAL.len()).iter().enumerate() {
        let base = f64::from(f32::from_bits(((v >> 32) as u32) & 0xffff_0000 | 0x8000));
        x.push(match i % 4 {
            0 => base,
            1 => base * (1.0 + f64::EPSILON),
            2 => base * (1.0 - f64::EPSILON),
            _ => random(v | 1, 1)[0],
        });
    }
    let name = "ftof_f64_bf16";
    let text = ptx(name);
    let m = Module::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut dev = Device::new();
    for b in 0..x.len() / N {
        let px = dev.alloc_from(&bytes::from_f64(&x[b * N..(b + 1) * N]));
        let o = dev.alloc(2 * N * 2);
        dev.launch_grid(
            &m,
            name,
            (1, 1, 1),
            &[Param::U64(px.addr()), Param::U64(o.addr())],
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = bytes::to_u16(&dev.read(o));
        for (k, mode) in [Rnd::Rn, Rnd::Rz].into_iter().enumerate() {
            for i in 0..N {
                let v = x[b * N + i];
                let g = got[k * N + i];
                let w = round(v, 0.0, mode, BF16, false) as u16;
                if v.is_nan() {
                    assert!(bf16_to_f64(g).is_nan(), "{mode:?} {v:e}");
                } else {
                    assert_eq!(g, w, "{mode:?} {v:e}: {g:#06x}, want {w:#06x}");
                }
            }
        }
    }
}

#[test]
fn exp2_and_log2_are_exact_on_powers_of_two() {
    let k: Vec<i32> = (-1074..-1074 + 17 * N as i32).collect();
    let x: Vec<f64> = k.iter().map(|&k| f64::from(k)).collect();
    let rows = launch("math_f64_unary", &[&x], 10);
    let p2: Vec<f64> = k
        .iter()
        .map(|&k| match k {
            1024.. => f64::INFINITY,
            -1022.. => f64::from_bits(((k + 1023) as u64) << 52),
            _ => f64::from_bits(1 << (k + 1074)),
        })
        .collect();
    for i in 0..x.len() {
        assert_eq!(rows[0][i], p2[i], "exp2({})", x[i]);
    }
    let rows = launch("math_f64_unary", &[&p2], 10);
    for i in 0..x.len() {
        let want = if k[i] > 1023 { f64::INFINITY } else { x[i] };
        assert_eq!(rows[3][i], want, "log2(2^{})", k[i]);
    }
}
