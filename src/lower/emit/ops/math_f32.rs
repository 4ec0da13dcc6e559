//! Accurate f32 sequences for the transcendental functions, built from FMA
//! range reductions, short polynomials and the hardware `ex2`/`lg2`
//! approximations (relative error about 2^-22) where those are accurate
//! enough on the reduced range.
use crate::lower::emit::context::Lowerer;
use crate::ptx::{Opc, Operand, Reg, Ty};

fn k(x: f32) -> Operand {
    Operand::F32(x.to_bits())
}

fn r(x: Reg) -> Operand {
    Operand::Reg(x)
}

/// One f32 instruction into a fresh register.
fn f(l: &mut Lowerer, opc: Opc, mods: &[&'static str], srcs: Vec<Operand>) -> Reg {
    l.b.op(opc, mods, &[Ty::F32], Ty::F32, srcs)
}

fn fma(l: &mut Lowerer, a: Operand, b: Operand, c: Operand) -> Reg {
    f(l, Opc::Fma, &["rn"], vec![a, b, c])
}

fn mul(l: &mut Lowerer, a: Operand, b: Operand) -> Reg {
    f(l, Opc::Mul, &["rn"], vec![a, b])
}

fn add(l: &mut Lowerer, a: Operand, b: Operand) -> Reg {
    f(l, Opc::Add, &["rn"], vec![a, b])
}

fn sel(l: &mut Lowerer, a: Reg, b: Reg, p: Reg) -> Reg {
    l.b.op(Opc::Selp, &[], &[Ty::F32], Ty::F32, vec![r(a), r(b), r(p)])
}

fn setp(l: &mut Lowerer, cmp: &'static str, a: Operand, b: Operand) -> Reg {
    l.b.op(Opc::Setp, &[cmp], &[Ty::F32], Ty::Pred, vec![a, b])
}

/// Horner evaluation of `c[0] + c[1] s + c[2] s^2 + ...`.
fn poly(l: &mut Lowerer, s: Reg, c: &[f32]) -> Reg {
    let n = c.len();
    let mut acc =
        l.b.op(Opc::Mov, &[], &[Ty::F32], Ty::F32, vec![k(c[n - 1])]);
    for &ci in c[..n - 1].iter().rev() {
        acc = fma(l, r(acc), r(s), k(ci));
    }
    acc
}

const LOG2E: f32 = std::f32::consts::LOG2_E;
const LN2_HI: f32 = 0.693_145_75;
const LN2_LO: f32 = 1.428_606_8e-6;

/// `e^x * 2^scale` with one final rounding (NaN in, NaN out).
pub fn exp_scaled(l: &mut Lowerer, x: Reg, scale: i32) -> Reg {
    // Clamp (NaN-preserving) so the reduction below stays finite: e^-104
    // underflows to zero and e^89.5 overflows whatever the scale.
    let x = f(l, Opc::Max, &["NaN"], vec![r(x), k(-104.0)]);
    let x = f(l, Opc::Min, &["NaN"], vec![r(x), k(89.5)]);
    let t = mul(l, r(x), k(LOG2E));
    let kk = round_int(l, "rni", t);
    let red = fma(l, r(kk), k(-LN2_HI), r(x));
    let red = fma(l, r(kk), k(-LN2_LO), r(red));
    let y = mul(l, r(red), k(LOG2E));
    let e = f(l, Opc::Ex2, &["approx"], vec![r(y)]);
    // 2^k in two exact steps so neither factor overflows.
    let kk = add(l, r(kk), k(scale as f32));
    let half = mul(l, r(kk), k(0.5));
    let kh = round_int(l, "rmi", half);
    let kl = f(l, Opc::Sub, &["rn"], vec![r(kk), r(kh)]);
    let sh = f(l, Opc::Ex2, &["approx"], vec![r(kh)]);
    let sl = f(l, Opc::Ex2, &["approx"], vec![r(kl)]);
    let p = mul(l, r(e), r(sh));
    mul(l, r(p), r(sl))
}

/// Rounds to an integral f32 value (`rni`, `rmi`, ...).
fn round_int(l: &mut Lowerer, mode: &'static str, x: Reg) -> Reg {
    l.b.op(Opc::Cvt, &[mode], &[Ty::F32, Ty::F32], Ty::F32, vec![r(x)])
}

/// `e^x`.
pub fn exp(l: &mut Lowerer, x: Reg) -> Reg {
    // NVIDIA's sequence: n = round-down(x log2 e) from a saturated fma
    // (its bits, shifted, are 2^n), the remainder in two fmas, one ex2.
    let bits = |b: u32| k(f32::from_bits(b));
    let t = fma(l, r(x), bits(0x3BBB_989D), k(0.5));
    let t =
        l.b.op(Opc::Cvt, &["sat"], &[Ty::F32, Ty::F32], Ty::F32, vec![r(t)]);
    let n = f(
        l,
        Opc::Fma,
        &["rm"],
        vec![r(t), bits(0x437C_0000), bits(0x4B40_0001)],
    );
    let m = add(l, r(n), bits(0xCB40_007F));
    let m = f(l, Opc::Neg, &[], vec![r(m)]);
    let red = fma(l, r(x), bits(0x3FB8_AA3B), r(m));
    let red = fma(l, r(x), bits(0x32A5_7060), r(red));
    let scale = l.b.op(
        Opc::Shl,
        &[],
        &[Ty::B32],
        Ty::B32,
        vec![r(n), Operand::Imm(23)],
    );
    let e = f(l, Opc::Ex2, &["approx", "ftz"], vec![r(red)]);
    mul(l, r(e), r(scale))
}

/// `log(x)` (`base2 = false`) or `log2(x)`.
pub fn log(l: &mut Lowerer, x: Reg, base2: bool) -> Reg {
    let lg = f(l, Opc::Lg2, &["approx"], vec![r(x)]);
    let far = if base2 {
        lg
    } else {
        mul(l, r(lg), k(std::f32::consts::LN_2))
    };
    // Near 1, log1p(x - 1) by its series (x - 1 is exact there).
    let d = f(l, Opc::Sub, &["rn"], vec![r(x), k(1.0)]);
    let c = [
        1.0,
        -0.5,
        1.0 / 3.0,
        -0.25,
        0.2,
        -1.0 / 6.0,
        1.0 / 7.0,
        -0.125,
    ];
    let p = poly(l, d, &c);
    let mut near = mul(l, r(p), r(d));
    if base2 {
        near = mul(l, r(near), k(LOG2E));
    }
    let ad = f(l, Opc::Abs, &[], vec![r(d)]);
    let is_near = setp(l, "lt", r(ad), k(0.0625));
    sel(l, near, far, is_near)
}

/// `sin(x)` and `cos(x)` with a three-part Cody-Waite reduction by pi/2
/// (accurate below [`FAST_TRIG_LIMIT`]; [`trig`] handles the rest).
pub fn sin_cos(l: &mut Lowerer, x: Reg, want_cos: bool) -> Reg {
    let c1 = std::f64::consts::FRAC_PI_2 as f32;
    let c2 = (std::f64::consts::FRAC_PI_2 - f64::from(c1)) as f32;
    let c3 = (std::f64::consts::FRAC_PI_2 - f64::from(c1) - f64::from(c2)) as f32;
    let t = mul(l, r(x), k(std::f32::consts::FRAC_2_PI));
    let kk = round_int(l, "rni", t);
    let red = fma(l, r(kk), k(-c1), r(x));
    let red = fma(l, r(kk), k(-c2), r(red));
    let red = fma(l, r(kk), k(-c3), r(red));
    let s = mul(l, r(red), r(red));
    let ps = poly(l, s, &[-1.666_665_5e-1, 8.332_161e-3, -1.951_529_6e-4]);
    let ps = mul(l, r(ps), r(s));
    let sin_r = fma(l, r(ps), r(red), r(red));
    let pc = poly(l, s, &[4.166_664_6e-2, -1.388_731_6e-3, 2.443_315_7e-5]);
    let s2 = mul(l, r(s), r(s));
    let base = fma(l, r(s), k(-0.5), k(1.0));
    let cos_r = fma(l, r(s2), r(pc), r(base));
    let q = l.b.op(
        Opc::Cvt,
        &["rzi"],
        &[Ty::S32, Ty::F32],
        Ty::S32,
        vec![r(kk)],
    );
    let q = if want_cos {
        l.b.op(
            Opc::Add,
            &[],
            &[Ty::S32],
            Ty::S32,
            vec![r(q), Operand::Imm(1)],
        )
    } else {
        q
    };
    let odd = l.b.op(
        Opc::And,
        &[],
        &[Ty::B32],
        Ty::B32,
        vec![r(q), Operand::Imm(1)],
    );
    let odd = l.b.op(
        Opc::Setp,
        &["ne"],
        &[Ty::B32],
        Ty::Pred,
        vec![r(odd), Operand::Imm(0)],
    );
    let neg = l.b.op(
        Opc::And,
        &[],
        &[Ty::B32],
        Ty::B32,
        vec![r(q), Operand::Imm(2)],
    );
    let neg = l.b.op(
        Opc::Setp,
        &["ne"],
        &[Ty::B32],
        Ty::Pred,
        vec![r(neg), Operand::Imm(0)],
    );
    let v = sel(l, cos_r, sin_r, odd);
    let nv = f(l, Opc::Neg, &[], vec![r(v)]);
    sel(l, nv, v, neg)
}

/// `sinh(x)` or `cosh(x)`.
pub fn sinh_cosh(l: &mut Lowerer, x: Reg, cosh: bool) -> Reg {
    let ax = f(l, Opc::Abs, &[], vec![r(x)]);
    let h = exp_scaled(l, ax, -1); // e^|x| / 2
    let q = f(l, Opc::Rcp, &["rn"], vec![r(h)]);
    let q = mul(l, r(q), k(0.25)); // e^-|x| / 2
    if cosh {
        return add(l, r(h), r(q));
    }
    let big = f(l, Opc::Sub, &["rn"], vec![r(h), r(q)]);
    let big =
        l.b.op(Opc::Copysign, &[], &[Ty::F32], Ty::F32, vec![r(x), r(big)]);
    // Small |x|: odd series, no cancellation.
    let s = mul(l, r(x), r(x));
    let c = [
        1.0 / 6.0,
        1.0 / 120.0,
        1.0 / 5040.0,
        1.0 / 362_880.0,
        1.0 / 39_916_800.0,
    ];
    let p = poly(l, s, &c);
    let p = mul(l, r(p), r(s));
    let small = fma(l, r(p), r(x), r(x));
    let is_small = setp(l, "lt", r(ax), k(1.0));
    sel(l, small, big, is_small)
}

/// `tanh(x)`.
pub fn tanh(l: &mut Lowerer, x: Reg) -> Reg {
    // NVIDIA's sequence: 1 - 2 / (2^(2|x| log2 e) + 1) with the sign of x
    // for |x| >= 0.6 (exactly 1 from 9.01 on), an odd polynomial below.
    let ax = f(l, Opc::Abs, &[], vec![r(x)]);
    let t = mul(l, r(ax), k(2.0 * LOG2E));
    let e = f(l, Opc::Ex2, &["approx", "ftz"], vec![r(t)]);
    let d = add(l, r(e), k(1.0));
    let q = f(l, Opc::Rcp, &["approx", "ftz"], vec![r(d)]);
    let big = fma(l, r(q), k(-2.0), k(1.0));
    let sat = setp(l, "ge", r(ax), k(f32::from_bits(0x4110_2CB4)));
    let one = l.b.op(Opc::Mov, &[], &[Ty::F32], Ty::F32, vec![k(1.0)]);
    let big = sel(l, one, big, sat);
    let big =
        l.b.op(Opc::Copysign, &[], &[Ty::F32], Ty::F32, vec![r(x), r(big)]);
    let s = mul(l, r(x), r(x));
    let p = fma(
        l,
        r(s),
        k(f32::from_bits(0x3C80_F082)),
        k(f32::from_bits(0xBD56_3CAE)),
    );
    let p = fma(l, r(p), r(s), k(f32::from_bits(0x3E08_5941)));
    let p = fma(l, r(p), r(s), k(f32::from_bits(0xBEAA_A9ED)));
    let p = fma(l, r(p), r(s), k(0.0));
    let small = fma(l, r(p), r(x), r(x));
    let is_big = setp(l, "ge", r(ax), k(f32::from_bits(0x3F19_999A)));
    sel(l, big, small, is_big)
}

/// `atan(u)` for `|u| <= tan(pi/8)` (odd minimax polynomial).
fn atan_small(l: &mut Lowerer, u: Reg) -> Reg {
    let z = mul(l, r(u), r(u));
    let p = poly(
        l,
        z,
        &[
            -3.333_295e-1,
            1.997_771_1e-1,
            -1.387_768_5e-1,
            8.053_744_5e-2,
        ],
    );
    let p = mul(l, r(p), r(z));
    fma(l, r(p), r(u), r(u))
}

/// `atan2(y, x)` with C's quadrant and signed-zero rules.
pub fn atan2(l: &mut Lowerer, y: Reg, x: Reg) -> Reg {
    use std::f32::consts::{FRAC_PI_2, FRAC_PI_4, PI};
    let ax = f(l, Opc::Abs, &[], vec![r(x)]);
    let ay = f(l, Opc::Abs, &[], vec![r(y)]);
    let mx = f(l, Opc::Max, &[], vec![r(ax), r(ay)]);
    let mn = f(l, Opc::Min, &[], vec![r(ax), r(ay)]);
    let t = f(l, Opc::Div, &["rn"], vec![r(mn), r(mx)]);
    // 0/0 -> 0 and inf/inf -> 1 (NaN operands stay NaN through the sums).
    let zero = setp(l, "eq", r(mx), k(0.0));
    let zv = l.b.op(Opc::Mov, &[], &[Ty::F32], Ty::F32, vec![k(0.0)]);
    let t = sel(l, zv, t, zero);
    let inf = setp(l, "eq", r(mn), k(f32::INFINITY));
    let one = l.b.op(Opc::Mov, &[], &[Ty::F32], Ty::F32, vec![k(1.0)]);
    let t = sel(l, one, t, inf);
    // Reduce t > tan(pi/8) by atan(t) = pi/4 + atan((t - 1) / (t + 1)).
    let big = setp(l, "gt", r(t), k(0.414_213_57));
    let num = f(l, Opc::Sub, &["rn"], vec![r(t), k(1.0)]);
    let den = add(l, r(t), k(1.0));
    let u_big = f(l, Opc::Div, &["rn"], vec![r(num), r(den)]);
    let u = sel(l, u_big, t, big);
    let a = atan_small(l, u);
    let a_big = add(l, r(a), k(FRAC_PI_4));
    let a = sel(l, a_big, a, big);
    // Octant and quadrant.
    let steep = setp(l, "gt", r(ay), r(ax));
    let a_steep = f(l, Opc::Sub, &["rn"], vec![k(FRAC_PI_2), r(a)]);
    let a = sel(l, a_steep, a, steep);
    let xbits = l.b.op(Opc::Mov, &[], &[Ty::B32], Ty::B32, vec![r(x)]);
    let xneg = l.b.op(
        Opc::Setp,
        &["lt"],
        &[Ty::S32],
        Ty::Pred,
        vec![r(xbits), Operand::Imm(0)],
    );
    let a_left = f(l, Opc::Sub, &["rn"], vec![k(PI), r(a)]);
    let a = sel(l, a_left, a, xneg);
    let a =
        l.b.op(Opc::Copysign, &[], &[Ty::F32], Ty::F32, vec![r(y), r(a)]);
    // A NaN operand gives NaN (the octant selections above can hide it:
    // atan2(NaN, -inf) would be 3pi/4). The test is on the operands, not
    // their sum: inf + -inf is NaN, but atan2(±inf, ∓inf) is ±pi/4, ±3pi/4.
    let nan = setp(l, "nan", r(x), r(y));
    let sum = add(l, r(x), r(y));
    sel(l, sum, a, nan)
}

/// `pow(x, y)`: the f64 `pow` (double-double logarithm and product, C's
/// rules for negative bases, zeros, infinities and NaNs) of the operands
/// widened, rounded once to f32. A product `y log2|x|` in f32 loses up to
/// about 80 ulp; NVIDIA's `powf` is within 2.
pub fn pow(l: &mut Lowerer, x: Reg, y: Reg) -> Reg {
    let wx = widen(l, x);
    let wy = widen(l, y);
    let p = crate::lower::emit::ops::math_f64::pow(l, wx, wy);
    narrow(l, p)
}

/// `x` as f64 (exact).
fn widen(l: &mut Lowerer, x: Reg) -> Reg {
    l.b.op(Opc::Cvt, &[], &[Ty::F64, Ty::F32], Ty::F64, vec![r(x)])
}

/// `x` rounded to the nearest f32.
fn narrow(l: &mut Lowerer, x: Reg) -> Reg {
    l.b.op(Opc::Cvt, &["rn"], &[Ty::F32, Ty::F64], Ty::F32, vec![r(x)])
}

/// Where the three-part reduction by pi/2 of [`sin_cos`] stays accurate:
/// `|x|` below 2^17 (the quotient then has at most 17 bits, so `kk * c1`
/// and `kk * c2` are exact).
const FAST_TRIG_LIMIT: f32 = 131_072.0;

/// `sin`, `cos` or `tan` of `x` (`op`): the f32 reduction and polynomials
/// where `|x|` is below [`FAST_TRIG_LIMIT`], else (only in the threads that
/// need it) the f64 functions, whose Payne-Hanek reduction is exact up to
/// `FLT_MAX`, as NVIDIA's are. `sin` and `tan` keep the sign of a zero.
pub fn trig(l: &mut Lowerer, x: Reg, op: crate::ir::Opcode) -> Reg {
    use crate::ir::Opcode;
    let fast = match op {
        Opcode::Cos => sin_cos(l, x, true),
        Opcode::Sin => sin_cos(l, x, false),
        _ => {
            let s = sin_cos(l, x, false);
            let c = sin_cos(l, x, true);
            f(l, Opc::Div, &["rn"], vec![r(s), r(c)])
        }
    };
    // sin and tan of tiny x (zeros included) are x.
    let ax = f(l, Opc::Abs, &[], vec![r(x)]);
    let fast = if op == Opcode::Cos {
        fast
    } else {
        let tiny = setp(l, "lt", r(ax), k(2.441_406_3e-4));
        sel(l, x, fast, tiny)
    };
    let res = l.b.reg(crate::ptx::RegClass::B32);
    l.b.copy(res, fast);
    let big = setp(l, "ge", r(ax), k(FAST_TRIG_LIMIT));
    l.b.begin_if(big, true);
    let wx = widen(l, x);
    let v = match op {
        Opcode::Cos => crate::lower::emit::ops::math_f64_trig::sin_cos(l, wx, true),
        Opcode::Sin => crate::lower::emit::ops::math_f64_trig::sin_cos(l, wx, false),
        _ => crate::lower::emit::ops::math_f64_trig::tan(l, wx),
    };
    let v = narrow(l, v);
    l.b.copy(res, v);
    l.b.end_if();
    res
}
