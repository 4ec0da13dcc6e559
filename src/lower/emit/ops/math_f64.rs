//! Accurate f64 sequences for the exponential, logarithmic, power and
//! hyperbolic functions and fmod, from FMA range reductions, Taylor
//! polynomials and double-double corrections (PTX has no f64 `ex2`/`lg2`
//! approximations); also the small f64 instruction helpers that the
//! trigonometric functions (`math_f64_trig`) share.
use crate::lower::emit::context::Lowerer;
use crate::ptx::{Opc, Operand, Reg, RegClass, Ty};
use smallvec::smallvec;

/// An f64 immediate.
pub(super) fn k(x: f64) -> Operand {
    Operand::F64(x.to_bits())
}

/// A register operand.
pub(super) fn r(x: Reg) -> Operand {
    Operand::Reg(x)
}

pub(super) const NAN: Operand = Operand::F64(0x7fff_ffff_ffff_ffff);

/// One f64 instruction into a fresh register.
pub(super) fn f(l: &mut Lowerer, opc: Opc, mods: &[&'static str], srcs: Vec<Operand>) -> Reg {
    l.b.op(opc, mods, &[Ty::F64], Ty::F64, srcs)
}

/// `fma.rn.f64`.
pub(super) fn fma(l: &mut Lowerer, a: Operand, b: Operand, c: Operand) -> Reg {
    f(l, Opc::Fma, &["rn"], vec![a, b, c])
}

/// `mul.rn.f64`.
pub(super) fn mul(l: &mut Lowerer, a: Operand, b: Operand) -> Reg {
    f(l, Opc::Mul, &["rn"], vec![a, b])
}

/// `add.rn.f64`.
pub(super) fn add(l: &mut Lowerer, a: Operand, b: Operand) -> Reg {
    f(l, Opc::Add, &["rn"], vec![a, b])
}

/// `sub.rn.f64`.
pub(super) fn sub(l: &mut Lowerer, a: Operand, b: Operand) -> Reg {
    f(l, Opc::Sub, &["rn"], vec![a, b])
}

/// `div.rn.f64`.
pub(super) fn div(l: &mut Lowerer, a: Operand, b: Operand) -> Reg {
    f(l, Opc::Div, &["rn"], vec![a, b])
}

/// `neg.f64`.
pub(super) fn neg(l: &mut Lowerer, a: Reg) -> Reg {
    f(l, Opc::Neg, &[], vec![r(a)])
}

/// `abs.f64`.
pub(super) fn abs(l: &mut Lowerer, a: Reg) -> Reg {
    f(l, Opc::Abs, &[], vec![r(a)])
}

/// `selp.f64`: `a` where `p`, else `b`.
pub(super) fn sel(l: &mut Lowerer, a: Operand, b: Operand, p: Reg) -> Reg {
    l.b.op(Opc::Selp, &[], &[Ty::F64], Ty::F64, vec![a, b, r(p)])
}

/// `setp.cmp.f64`.
pub(super) fn setp(l: &mut Lowerer, cmp: &'static str, a: Operand, b: Operand) -> Reg {
    l.b.op(Opc::Setp, &[cmp], &[Ty::F64], Ty::Pred, vec![a, b])
}

/// A predicate `and`/`or`/`xor`.
pub(super) fn pred(l: &mut Lowerer, opc: Opc, a: Reg, b: Reg) -> Reg {
    l.b.op(opc, &[], &[Ty::Pred], Ty::Pred, vec![r(a), r(b)])
}

/// One integer instruction of type `ty`.
pub(super) fn int(l: &mut Lowerer, opc: Opc, ty: Ty, a: Operand, b: Operand) -> Reg {
    l.b.op(opc, &[], &[ty], ty, vec![a, b])
}

/// Rounds to an integral f64 value (`rni`, `rzi`, ...).
pub(super) fn round_int(l: &mut Lowerer, mode: &'static str, x: Reg) -> Reg {
    l.b.op(Opc::Cvt, &[mode], &[Ty::F64, Ty::F64], Ty::F64, vec![r(x)])
}

/// Horner evaluation of `c[0] + c[1] s + c[2] s^2 + ...`.
pub(super) fn poly(l: &mut Lowerer, s: Reg, c: &[f64]) -> Reg {
    let n = c.len();
    let mut acc = fma(l, r(s), k(c[n - 1]), k(c[n - 2]));
    for &ci in c[..n - 2].iter().rev() {
        acc = fma(l, r(acc), r(s), k(ci));
    }
    acc
}

/// `1 / i!` for `i` in `from, from + step, ...` (`n` terms), signs
/// alternating when `alt`.
pub(super) fn inv_fact(from: u32, step: u32, n: usize, alt: bool) -> Vec<f64> {
    (0..n)
        .map(|j| {
            let i = from + step * j as u32;
            let fact: f64 = (1..=i).map(f64::from).product();
            let s = if alt && j % 2 == 1 { -1.0 } else { 1.0 };
            s / fact
        })
        .collect()
}

/// The raw bits of an f64 register.
pub(super) fn bits(l: &mut Lowerer, x: Reg) -> Reg {
    l.b.op(Opc::Mov, &[], &[Ty::B64], Ty::B64, vec![r(x)])
}

/// Whether the sign bit of `x` is set.
pub(super) fn sign_bit(l: &mut Lowerer, x: Reg) -> Reg {
    let b = bits(l, x);
    l.b.op(
        Opc::Setp,
        &["lt"],
        &[Ty::S64],
        Ty::Pred,
        vec![r(b), Operand::Imm(0)],
    )
}

/// `2^n` for an s32 `n` in [-1022, 1023].
fn pow2i(l: &mut Lowerer, n: Reg) -> Reg {
    let e = int(l, Opc::Add, Ty::S32, r(n), Operand::Imm(1023));
    let e =
        l.b.op(Opc::Cvt, &[], &[Ty::U64, Ty::U32], Ty::U64, vec![r(e)]);
    int(l, Opc::Shl, Ty::B64, r(e), Operand::Imm(52))
}

/// The biased exponent field of `x`'s bits, as s32.
fn exp_field(l: &mut Lowerer, b: Reg) -> Reg {
    let hi = int(l, Opc::Shr, Ty::U64, r(b), Operand::Imm(52));
    let hi =
        l.b.op(Opc::Cvt, &[], &[Ty::U32, Ty::U64], Ty::U32, vec![r(hi)]);
    int(l, Opc::And, Ty::B32, r(hi), Operand::Imm(0x7ff))
}

const TWO54: f64 = 18_014_398_509_481_984.0;

/// `floor(log2(x))` for a positive finite `x`, subnormals included (s32).
fn ilogb(l: &mut Lowerer, x: Reg) -> Reg {
    let subn = setp(l, "lt", r(x), k(f64::MIN_POSITIVE));
    let xs = mul(l, r(x), k(TWO54));
    let xs = sel(l, r(xs), r(x), subn);
    let b = bits(l, xs);
    let e = exp_field(l, b);
    let adj = l.b.op(
        Opc::Selp,
        &[],
        &[Ty::S32],
        Ty::S32,
        smallvec![Operand::Imm(1023 + 54), Operand::Imm(1023), r(subn)],
    );
    int(l, Opc::Sub, Ty::S32, r(e), r(adj))
}

/// ln2 to 32 bits (`n LN2_HI` is exact for `|n| < 2^21`) and the rest.
const LN2_HI: f64 = 0.693_147_180_369_123_8;
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
const LN2: f64 = std::f64::consts::LN_2;
const LN2_TAIL: f64 = 2.319_046_813_846_299_6e-17;
const INV_LN2_TAIL: f64 = 2.035_527_374_093_103_3e-17;

/// `e^(xh + xl) * 2^scale` with `|xl|` far below an ulp of `xh` (NaN in,
/// NaN out; overflow to infinity, gradual underflow with one rounding).
fn exp_dd(l: &mut Lowerer, xh: Reg, xl: Option<Reg>, scale: i32) -> Reg {
    let is_nan = setp(l, "nan", r(xh), r(xh));
    // Clamp so the reduction stays finite: e^-746 underflows and e^712
    // overflows for every scale used here.
    let c = f(l, Opc::Max, &[], vec![r(xh), k(-746.0)]);
    let c = f(l, Opc::Min, &[], vec![r(c), k(712.0)]);
    let t = mul(l, r(c), k(std::f64::consts::LOG2_E));
    let n = round_int(l, "rni", t);
    let red = fma(l, r(n), k(-LN2_HI), r(c));
    let mut red = fma(l, r(n), k(-LN2_LO), r(red));
    if let Some(xl) = xl {
        // The tail is meaningless (maybe NaN) once the head was clamped.
        let ax = abs(l, xh);
        let big = setp(l, "gt", r(ax), k(746.0));
        let tl = sel(l, k(0.0), r(xl), big);
        red = add(l, r(red), r(tl));
    }
    let p = poly(l, red, &inv_fact(0, 1, 14, false));
    let ni =
        l.b.op(Opc::Cvt, &["rni"], &[Ty::S32, Ty::F64], Ty::S32, vec![r(n)]);
    let ni = int(l, Opc::Add, Ty::S32, r(ni), Operand::Imm(i64::from(scale)));
    // 2^n in two exact steps so neither factor overflows.
    let n1 = int(l, Opc::Shr, Ty::S32, r(ni), Operand::Imm(1));
    let n2 = int(l, Opc::Sub, Ty::S32, r(ni), r(n1));
    let s1 = pow2i(l, n1);
    let s2 = pow2i(l, n2);
    let p = mul(l, r(p), r(s1));
    let p = mul(l, r(p), r(s2));
    let q = add(l, r(xh), r(xh));
    sel(l, r(q), r(p), is_nan)
}

/// `e^x`.
pub fn exp(l: &mut Lowerer, x: Reg) -> Reg {
    exp_dd(l, x, None, 0)
}

/// `2^x`, as `e^(x ln2)` with `x ln2` in double-double.
pub fn exp2(l: &mut Lowerer, x: Reg) -> Reg {
    let xh = mul(l, r(x), k(LN2));
    let nxh = neg(l, xh);
    let xl = fma(l, r(x), k(LN2), r(nxh));
    let xl = fma(l, r(x), k(LN2_TAIL), r(xl));
    exp_dd(l, xh, Some(xl), 0)
}

/// `log(x) = e ln2 + (h + lo)` for a positive finite `x`: the exponent `e`
/// (as f64) and `log(m)` for the mantissa `m` in [sqrt(1/2), sqrt(2)) in
/// double-double, by `2 atanh(s)` with `s = (m - 1) / (m + 1)`.
fn log_parts(l: &mut Lowerer, x: Reg) -> (Reg, Reg, Reg) {
    let subn = setp(l, "lt", r(x), k(f64::MIN_POSITIVE));
    let xs = mul(l, r(x), k(TWO54));
    let xs = sel(l, r(xs), r(x), subn);
    let b = bits(l, xs);
    let field = exp_field(l, b);
    let mb = int(
        l,
        Opc::And,
        Ty::B64,
        r(b),
        Operand::Imm(0x000f_ffff_ffff_ffff),
    );
    let m = int(
        l,
        Opc::Or,
        Ty::B64,
        r(mb),
        Operand::Imm(0x3ff0_0000_0000_0000),
    );
    let big = setp(l, "gt", r(m), k(std::f64::consts::SQRT_2));
    let mh = mul(l, r(m), k(0.5));
    let m = sel(l, r(mh), r(m), big);
    let adj = l.b.op(
        Opc::Selp,
        &[],
        &[Ty::S32],
        Ty::S32,
        smallvec![Operand::Imm(1023 + 54), Operand::Imm(1023), r(subn)],
    );
    let e = int(l, Opc::Sub, Ty::S32, r(field), r(adj));
    let one = l.b.op(
        Opc::Selp,
        &[],
        &[Ty::S32],
        Ty::S32,
        smallvec![Operand::Imm(1), Operand::Imm(0), r(big)],
    );
    let e = int(l, Opc::Add, Ty::S32, r(e), r(one));
    let ef =
        l.b.op(Opc::Cvt, &["rn"], &[Ty::F64, Ty::S32], Ty::F64, vec![r(e)]);
    // s = f / (2 + f) in double-double (f = m - 1 is exact).
    let fm = sub(l, r(m), k(1.0));
    let uh = add(l, r(fm), k(2.0));
    let ul = sub(l, k(2.0), r(uh));
    let ul = add(l, r(ul), r(fm));
    let sh = div(l, r(fm), r(uh));
    let nsh = neg(l, sh);
    let e1 = fma(l, r(nsh), r(uh), r(fm));
    let e1 = fma(l, r(nsh), r(ul), r(e1));
    let sl = div(l, r(e1), r(uh));
    // log(m) = 2s + s^3 (2/3 + z Q(z)), z = s^2.
    let z = mul(l, r(sh), r(sh));
    let q: Vec<f64> = (2..12).map(|i| 2.0 / f64::from(2 * i + 1)).collect();
    let qz = poly(l, z, &q);
    let zq = mul(l, r(z), r(qz));
    const C_HI: f64 = 2.0 / 3.0;
    const C_LO: f64 = 3.700_743_415_417_188e-17;
    let rh = add(l, k(C_HI), r(zq));
    let rl = sub(l, k(C_HI), r(rh));
    let rl = add(l, r(rl), r(zq));
    let rl = add(l, r(rl), k(C_LO));
    // s^3 in double-double.
    let nz = neg(l, z);
    let zl = fma(l, r(sh), r(sh), r(nz));
    let bh = mul(l, r(z), r(sh));
    let nbh = neg(l, bh);
    let bl = fma(l, r(z), r(sh), r(nbh));
    let bl = fma(l, r(zl), r(sh), r(bl));
    let z3 = mul(l, r(z), k(3.0));
    let bl = fma(l, r(z3), r(sl), r(bl));
    // T = s^3 R.
    let th = mul(l, r(bh), r(rh));
    let nth = neg(l, th);
    let tl = fma(l, r(bh), r(rh), r(nth));
    let tl = fma(l, r(bh), r(rl), r(tl));
    let tl = fma(l, r(bl), r(rh), r(tl));
    let s2 = mul(l, r(sh), k(2.0));
    let h = add(l, r(s2), r(th));
    let lo = sub(l, r(s2), r(h));
    let lo = add(l, r(lo), r(th));
    let lo = fma(l, r(sl), k(2.0), r(lo));
    let lo = add(l, r(lo), r(tl));
    (ef, h, lo)
}

/// `log(x)` in double-double for a positive finite `x`.
fn log_dd(l: &mut Lowerer, x: Reg) -> (Reg, Reg) {
    let (ef, h, lo) = log_parts(l, x);
    let eh = mul(l, r(ef), k(LN2_HI)); // exact: LN2_HI has 32 bits
    let el = mul(l, r(ef), k(LN2_LO));
    let hh = add(l, r(eh), r(h));
    let ll = sub(l, r(eh), r(hh));
    let ll = add(l, r(ll), r(h));
    let ll = add(l, r(ll), r(lo));
    let ll = add(l, r(ll), r(el));
    let h2 = add(l, r(hh), r(ll));
    let l2 = sub(l, r(hh), r(h2));
    let l2 = add(l, r(l2), r(ll));
    (h2, l2)
}

/// `log(x)` (`base2 = false`) or `log2(x)`.
pub fn log(l: &mut Lowerer, x: Reg, base2: bool) -> Reg {
    let res = if base2 {
        let (ef, h, lo) = log_parts(l, x);
        let il = std::f64::consts::LOG2_E;
        let ph = mul(l, r(h), k(il));
        let nph = neg(l, ph);
        let pl = fma(l, r(h), k(il), r(nph));
        let pl = fma(l, r(h), k(INV_LN2_TAIL), r(pl));
        let pl = fma(l, r(lo), k(il), r(pl));
        let hh = add(l, r(ef), r(ph));
        let ll = sub(l, r(ef), r(hh));
        let ll = add(l, r(ll), r(ph));
        let ll = add(l, r(ll), r(pl));
        add(l, r(hh), r(ll))
    } else {
        log_dd(l, x).0
    };
    let zero = setp(l, "eq", r(x), k(0.0));
    let res = sel(l, k(f64::NEG_INFINITY), r(res), zero);
    let negative = setp(l, "lt", r(x), k(0.0));
    let res = sel(l, NAN, r(res), negative);
    let inf = setp(l, "eq", r(x), k(f64::INFINITY));
    let res = sel(l, k(f64::INFINITY), r(res), inf);
    let nan = setp(l, "nan", r(x), r(x));
    let q = add(l, r(x), r(x));
    sel(l, r(q), r(res), nan)
}

/// `sinh(x)` (odd Taylor series up to x^27 for |x| < 2) or `cosh(x)`.
pub fn sinh_cosh(l: &mut Lowerer, x: Reg, cosh: bool) -> Reg {
    let ax = abs(l, x);
    let h = exp_dd(l, ax, None, -1); // e^|x| / 2
    let q = f(l, Opc::Rcp, &["rn"], vec![r(h)]);
    let q = mul(l, r(q), k(0.25)); // e^-|x| / 2
    if cosh {
        return add(l, r(h), r(q));
    }
    let big = sub(l, r(h), r(q));
    let big = f(l, Opc::Copysign, &[], vec![r(x), r(big)]);
    let small = sinh_series(l, x);
    let is_small = setp(l, "lt", r(ax), k(2.0));
    sel(l, r(small), r(big), is_small)
}

fn sinh_series(l: &mut Lowerer, x: Reg) -> Reg {
    let s = mul(l, r(x), r(x));
    let p = poly(l, s, &inv_fact(3, 2, 13, false));
    let p = mul(l, r(p), r(s));
    fma(l, r(p), r(x), r(x))
}

/// `tanh(x)`: from the series of `sinh` and `cosh` for `|x| < 1`, else
/// `1 - 2 / (e^2|x| + 1)`.
pub fn tanh(l: &mut Lowerer, x: Reg) -> Reg {
    let ax = abs(l, x);
    let two = add(l, r(ax), r(ax));
    let e = exp_dd(l, two, None, 0);
    let d = add(l, r(e), k(1.0));
    let q = div(l, k(2.0), r(d));
    let big = sub(l, k(1.0), r(q));
    let big = f(l, Opc::Copysign, &[], vec![r(x), r(big)]);
    // Small |x|: x + x (sinh - cosh) / (x cosh), the difference's series
    // sum_k -2k z^k / (2k + 1)! (z = x^2) free of cancellation.
    let z = mul(l, r(x), r(x));
    let dc: Vec<f64> = inv_fact(3, 2, 13, false)
        .iter()
        .enumerate()
        .map(|(j, c)| -2.0 * (j as f64 + 1.0) * c)
        .collect();
    let dp = poly(l, z, &dc);
    let dp = mul(l, r(dp), r(z));
    let ch = poly(l, z, &inv_fact(0, 2, 12, false));
    let ratio = div(l, r(dp), r(ch));
    let small = fma(l, r(x), r(ratio), r(x));
    let small = f(l, Opc::Copysign, &[], vec![r(x), r(small)]);
    let is_small = setp(l, "lt", r(ax), k(1.0));
    sel(l, r(small), r(big), is_small)
}

/// `pow(x, y)` as `e^(y log|x|)` with the logarithm and the product in
/// double-double, and C's rules for negative bases, zeros, infinities and
/// NaNs (`pow(x, 0) = pow(1, y) = 1`).
pub fn pow(l: &mut Lowerer, x: Reg, y: Reg) -> Reg {
    let ax = abs(l, x);
    let (lh, ll) = log_dd(l, ax);
    let th = mul(l, r(y), r(lh));
    let nth = neg(l, th);
    let tl = fma(l, r(y), r(lh), r(nth));
    let tl = fma(l, r(y), r(ll), r(tl));
    let p = exp_dd(l, th, Some(tl), 0);
    // Zero or infinite |x|, or infinite y: 0, 1 or infinity.
    let yi = round_int(l, "rzi", y);
    let integral = setp(l, "eq", r(yi), r(y));
    let h = mul(l, r(y), k(0.5));
    let hi = round_int(l, "rzi", h);
    let odd = setp(l, "ne", r(hi), r(h));
    let odd = pred(l, Opc::And, odd, integral);
    let x0 = setp(l, "eq", r(ax), k(0.0));
    let xinf = setp(l, "eq", r(ax), k(f64::INFINITY));
    let ay = abs(l, y);
    let yinf = setp(l, "eq", r(ay), k(f64::INFINITY));
    let special = pred(l, Opc::Or, x0, xinf);
    let special = pred(l, Opc::Or, special, yinf);
    let gt1 = setp(l, "gt", r(ax), k(1.0));
    let ypos = setp(l, "gt", r(y), k(0.0));
    let differ = pred(l, Opc::Xor, gt1, ypos);
    let smag = sel(l, k(0.0), k(f64::INFINITY), differ);
    let x1 = setp(l, "eq", r(ax), k(1.0));
    let smag = sel(l, k(1.0), r(smag), x1);
    let mag = sel(l, r(smag), r(p), special);
    let xs = sign_bit(l, x);
    let flip = pred(l, Opc::And, xs, odd);
    let nmag = neg(l, mag);
    let res = sel(l, r(nmag), r(mag), flip);
    // Negative finite base, non-integral exponent: NaN.
    let xneg = setp(l, "lt", r(x), k(0.0));
    let xfin = setp(l, "gt", r(x), k(f64::NEG_INFINITY));
    let bad = pred(l, Opc::And, xneg, xfin);
    let nonint =
        l.b.op(Opc::Not, &[], &[Ty::Pred], Ty::Pred, vec![r(integral)]);
    let bad = pred(l, Opc::And, bad, nonint);
    let res = sel(l, NAN, r(res), bad);
    let nan = setp(l, "nan", r(x), r(y));
    let q = add(l, r(x), r(y));
    let res = sel(l, r(q), r(res), nan);
    let y0 = setp(l, "eq", r(y), k(0.0));
    let x1 = setp(l, "eq", r(x), k(1.0));
    let unit = pred(l, Opc::Or, y0, x1);
    sel(l, k(1.0), r(res), unit)
}

/// Exact `fmod(a, b)` (C semantics: the sign of `a`): a loop of exact
/// reduction steps of at most 51 quotient bits each.
pub fn fmod(l: &mut Lowerer, a: Reg, b: Reg) -> Reg {
    let aa = abs(l, a);
    let ab = abs(l, b);
    let bad_a = setp(l, "equ", r(aa), k(f64::INFINITY));
    let bad_b = setp(l, "equ", r(ab), k(0.0));
    let bad = pred(l, Opc::Or, bad_a, bad_b);
    let rem0 = sel(l, k(0.0), r(aa), bad);
    let ub = sel(l, k(f64::INFINITY), r(ab), bad);
    let eb = ilogb(l, ub);
    let rem = l.b.reg(RegClass::B64);
    l.b.copy(rem, rem0);
    l.b.begin_loop();
    let more = setp(l, "ge", r(rem), r(ub));
    l.b.begin_loop_body(more, true);
    let er = ilogb(l, rem);
    let d = int(l, Opc::Sub, Ty::S32, r(er), r(eb));
    let d = int(l, Opc::Sub, Ty::S32, r(d), Operand::Imm(50));
    let d = int(l, Opc::Max, Ty::S32, r(d), Operand::Imm(0));
    let d1 = int(l, Opc::Div, Ty::S32, r(d), Operand::Imm(3));
    let d2 = int(l, Opc::Add, Ty::S32, r(d1), r(d1));
    let d3 = int(l, Opc::Sub, Ty::S32, r(d), r(d2));
    let s1 = pow2i(l, d1);
    let s3 = pow2i(l, d3);
    let bs = mul(l, r(ub), r(s1));
    let bs = mul(l, r(bs), r(s1));
    let bs = mul(l, r(bs), r(s3));
    let q = div(l, r(rem), r(bs));
    let n = round_int(l, "rzi", q);
    let nn = neg(l, n);
    let next = fma(l, r(nn), r(bs), r(rem));
    let fixed = add(l, r(next), r(bs));
    let negative = setp(l, "lt", r(next), k(0.0));
    l.b.op_into(
        rem,
        Opc::Selp,
        &[],
        &[Ty::F64],
        vec![r(fixed), r(next), r(negative)],
    );
    l.b.end_loop();
    let res = f(l, Opc::Copysign, &[], vec![r(a), r(rem)]);
    sel(l, NAN, r(res), bad)
}
