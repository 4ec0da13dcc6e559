//! Accurate f64 `sin`, `cos`, `tan` and `atan2`: reduction by pi/2 in three
//! parts (Cody-Waite) for `|x| < 2^50` and by Payne-Hanek beyond, Taylor
//! polynomials on the reduced argument with its double-double tail.
use crate::lower::emit::context::Lowerer;
use crate::ptx::{Opc, Operand, Reg, RegClass, Ty};

use crate::lower::emit::ops::math_f64::{
    abs, add, div, f, fma, int, inv_fact, k, mul, neg, poly, pred, r, round_int, sel, setp,
    sign_bit, sub,
};

/// `x - n pi/2` in double-double and the quadrant `n mod 4` (u32).
fn reduce_pi2(l: &mut Lowerer, x: Reg) -> (Reg, Reg, Reg) {
    const C1: f64 = std::f64::consts::FRAC_PI_2;
    const C2: f64 = 6.123_233_995_736_766e-17;
    const C3: f64 = -1.497_384_904_859_169_8e-33;
    let t = mul(l, r(x), k(std::f64::consts::FRAC_2_PI));
    let n = round_int(l, "rni", t);
    let r1 = fma(l, r(n), k(-C1), r(x)); // exact
    let ph = mul(l, r(n), k(-C2));
    let nph = neg(l, ph);
    let pl = fma(l, r(n), k(-C2), r(nph));
    // Two-sum r1 + ph.
    let rh = add(l, r(r1), r(ph));
    let bb = sub(l, r(rh), r(r1));
    let a1 = sub(l, r(rh), r(bb));
    let a1 = sub(l, r(r1), r(a1));
    let b1 = sub(l, r(ph), r(bb));
    let err = add(l, r(a1), r(b1));
    let rl = add(l, r(err), r(pl));
    let rl = fma(l, r(n), k(-C3), r(rl));
    let q =
        l.b.op(Opc::Cvt, &["rzi"], &[Ty::S64, Ty::F64], Ty::S64, vec![r(n)]);
    let q =
        l.b.op(Opc::Cvt, &[], &[Ty::U32, Ty::U64], Ty::U32, vec![r(q)]);
    // Payne-Hanek for finite |x| >= 2^50 (a branch: it is long), on |x|
    // with the sign put back.
    let ax = abs(l, x);
    let huge = setp(l, "ge", r(ax), k(1_125_899_906_842_624.0));
    let finite = setp(l, "lt", r(ax), k(f64::INFINITY));
    let huge = pred(l, Opc::And, huge, finite);
    let (vh, vl, vq) = (
        l.b.reg(RegClass::B64),
        l.b.reg(RegClass::B64),
        l.b.reg(RegClass::B32),
    );
    l.b.copy(vh, rh);
    l.b.copy(vl, rl);
    l.b.copy(vq, q);
    l.b.begin_if(huge, true);
    let (sh, sl, sq) = crate::lower::emit::ops::math_f64_reduce::payne_hanek(l, ax);
    let xneg = setp(l, "lt", r(x), k(0.0));
    let nsh = neg(l, sh);
    l.b.op_into(vh, Opc::Selp, &[], &[Ty::F64], vec![r(nsh), r(sh), r(xneg)]);
    let nsl = neg(l, sl);
    l.b.op_into(vl, Opc::Selp, &[], &[Ty::F64], vec![r(nsl), r(sl), r(xneg)]);
    let nsq = l.b.op(Opc::Neg, &[], &[Ty::S32], Ty::S32, vec![r(sq)]);
    l.b.op_into(vq, Opc::Selp, &[], &[Ty::B32], vec![r(nsq), r(sq), r(xneg)]);
    l.b.end_if();
    (vh, vl, vq)
}

/// `sin(rh + rl)` for `|rh| <= pi/4`.
fn sin_poly(l: &mut Lowerer, rh: Reg, rl: Reg) -> Reg {
    let z = mul(l, r(rh), r(rh));
    let c: Vec<f64> = inv_fact(3, 2, 8, true).iter().map(|c| -c).collect();
    let s = poly(l, z, &c);
    let c = fma(l, r(z), k(-0.5), k(1.0));
    let tail = mul(l, r(rl), r(c));
    let t = mul(l, r(rh), r(z));
    let t = fma(l, r(t), r(s), r(tail));
    add(l, r(rh), r(t))
}

/// `cos(rh + rl)` for `|rh| <= pi/4`.
fn cos_poly(l: &mut Lowerer, rh: Reg, rl: Reg) -> Reg {
    let z = mul(l, r(rh), r(rh));
    let nz = neg(l, z);
    let zl = fma(l, r(rh), r(rh), r(nz));
    let hz = mul(l, r(z), k(0.5));
    let w = sub(l, k(1.0), r(hz));
    let c = poly(l, z, &inv_fact(4, 2, 7, true));
    let z2 = mul(l, r(z), r(z));
    let tail = sub(l, k(1.0), r(w));
    let tail = sub(l, r(tail), r(hz));
    let tail = fma(l, r(z2), r(c), r(tail));
    let tail = fma(l, r(zl), k(-0.5), r(tail));
    let nrh = neg(l, rh);
    let tail = fma(l, r(nrh), r(rl), r(tail));
    add(l, r(w), r(tail))
}

fn quadrant_bit(l: &mut Lowerer, q: Reg, bit: i64) -> Reg {
    let v = int(l, Opc::And, Ty::B32, r(q), Operand::Imm(bit));
    l.b.op(
        Opc::Setp,
        &["ne"],
        &[Ty::B32],
        Ty::Pred,
        vec![r(v), Operand::Imm(0)],
    )
}

/// Keeps `x` itself where `|x| < 2^-27` (there `sin`, `tan` round to it).
fn tiny_is_identity(l: &mut Lowerer, x: Reg, v: Reg) -> Reg {
    let ax = abs(l, x);
    let tiny = setp(l, "lt", r(ax), k(7.450_580_596_923_828e-9));
    sel(l, r(x), r(v), tiny)
}

/// `sin(x)` or `cos(x)`.
pub fn sin_cos(l: &mut Lowerer, x: Reg, want_cos: bool) -> Reg {
    let (rh, rl, q) = reduce_pi2(l, x);
    let s = sin_poly(l, rh, rl);
    let c = cos_poly(l, rh, rl);
    let q = if want_cos {
        int(l, Opc::Add, Ty::U32, r(q), Operand::Imm(1))
    } else {
        q
    };
    let odd = quadrant_bit(l, q, 1);
    let negate = quadrant_bit(l, q, 2);
    let v = sel(l, r(c), r(s), odd);
    let nv = neg(l, v);
    let v = sel(l, r(nv), r(v), negate);
    if want_cos {
        v
    } else {
        tiny_is_identity(l, x, v)
    }
}

/// `tan(x)`: `sin/cos` of the reduced argument (`-cos/sin` in odd quadrants).
pub fn tan(l: &mut Lowerer, x: Reg) -> Reg {
    let (rh, rl, q) = reduce_pi2(l, x);
    let s = sin_poly(l, rh, rl);
    let c = cos_poly(l, rh, rl);
    let odd = quadrant_bit(l, q, 1);
    let t = div(l, r(s), r(c));
    let ns = neg(l, s);
    let t2 = div(l, r(c), r(ns));
    let v = sel(l, r(t2), r(t), odd);
    tiny_is_identity(l, x, v)
}

/// `atan2(y, x)` with C's quadrant and signed-zero rules.
pub fn atan2(l: &mut Lowerer, y: Reg, x: Reg) -> Reg {
    const PIO2_LO: f64 = 6.123_233_995_736_766e-17;
    const PIO4_LO: f64 = 3.061_616_997_868_383e-17;
    const PI_LO: f64 = 1.224_646_799_147_353_2e-16;
    const ATAN_HALF_HI: f64 = 0.463_647_609_000_806_1;
    const ATAN_HALF_LO: f64 = 2.269_877_745_296_168_7e-17;
    let ax = abs(l, x);
    let ay = abs(l, y);
    let mx = f(l, Opc::Max, &[], vec![r(ax), r(ay)]);
    let mn = f(l, Opc::Min, &[], vec![r(ax), r(ay)]);
    let t = div(l, r(mn), r(mx));
    // The quotient's rounding error, carried as atan's derivative times it.
    let nt = neg(l, t);
    let te = fma(l, r(nt), r(mx), r(mn));
    let te = div(l, r(te), r(mx));
    let dd = fma(l, r(t), r(t), k(1.0));
    let corr = div(l, r(te), r(dd));
    // 0/0 -> 0 and inf/inf -> 1 (NaN operands are handled at the end).
    let zero = setp(l, "eq", r(mx), k(0.0));
    let inf = setp(l, "eq", r(mn), k(f64::INFINITY));
    let mx_inf = setp(l, "eq", r(mx), k(f64::INFINITY));
    let special = pred(l, Opc::Or, zero, mx_inf);
    let corr = sel(l, k(0.0), r(corr), special);
    let t = sel(l, k(0.0), r(t), zero);
    let t = sel(l, k(1.0), r(t), inf);
    // atan(t) = atan(c) + atan((t - c) / (1 + t c)), c in {0, 1/2, 1}.
    let mid = setp(l, "ge", r(t), k(0.25));
    let hi = setp(l, "ge", r(t), k(0.6));
    let num_mid = fma(l, r(t), k(2.0), k(-1.0));
    let num_hi = sub(l, r(t), k(1.0));
    let num = sel(l, r(num_hi), r(num_mid), hi);
    let c = sel(l, k(1.0), k(2.0), hi);
    let den_h = add(l, r(c), r(t));
    let den_l = sub(l, r(c), r(den_h));
    let den_l = add(l, r(den_l), r(t));
    let uh = div(l, r(num), r(den_h));
    let nuh = neg(l, uh);
    let ue = fma(l, r(nuh), r(den_h), r(num));
    let ue = fma(l, r(nuh), r(den_l), r(ue));
    let ul = div(l, r(ue), r(den_h));
    let uh = sel(l, r(uh), r(t), mid);
    let ul = sel(l, r(ul), k(0.0), mid);
    let base_h = sel(l, k(std::f64::consts::FRAC_PI_4), k(ATAN_HALF_HI), hi);
    let base_l = sel(l, k(PIO4_LO), k(ATAN_HALF_LO), hi);
    let base_h = sel(l, r(base_h), k(0.0), mid);
    let base_l = sel(l, r(base_l), k(0.0), mid);
    // atan(uh + ul) = uh + uh z P(z) + ul (1 - z), z = uh^2, |uh| <= 1/4.
    let z = mul(l, r(uh), r(uh));
    let coef: Vec<f64> = (1..15)
        .map(|i| {
            let s = if i % 2 == 1 { -1.0 } else { 1.0 };
            s / f64::from(2 * i + 1)
        })
        .collect();
    let p = poly(l, z, &coef);
    let w = fma(l, r(z), k(-1.0), k(1.0));
    let tail = mul(l, r(ul), r(w));
    let uz = mul(l, r(uh), r(z));
    let tail = fma(l, r(uz), r(p), r(tail));
    let lo = add(l, r(base_l), r(corr));
    let lo = add(l, r(lo), r(tail));
    // a = base + uh + lo in double-double.
    let ah = add(l, r(base_h), r(uh));
    let al = sub(l, r(base_h), r(ah));
    let al = add(l, r(al), r(uh));
    let al = add(l, r(al), r(lo));
    // Octant and half plane: pi/2 - a, pi - a.
    let steep = setp(l, "gt", r(ay), r(ax));
    let (sh, sl) = rsub_dd(l, std::f64::consts::FRAC_PI_2, PIO2_LO, ah, al);
    let ah = sel(l, r(sh), r(ah), steep);
    let al = sel(l, r(sl), r(al), steep);
    let xneg = sign_bit(l, x);
    let (nh, nl) = rsub_dd(l, std::f64::consts::PI, PI_LO, ah, al);
    let ah = sel(l, r(nh), r(ah), xneg);
    let al = sel(l, r(nl), r(al), xneg);
    let a = add(l, r(ah), r(al));
    let a = f(l, Opc::Copysign, &[], vec![r(y), r(a)]);
    let nan = setp(l, "nan", r(x), r(y));
    let q = add(l, r(x), r(y));
    sel(l, r(q), r(a), nan)
}

/// `(ch + cl) - (ah + al)` in double-double, for `|ch| >= |ah|`.
fn rsub_dd(l: &mut Lowerer, ch: f64, cl: f64, ah: Reg, al: Reg) -> (Reg, Reg) {
    let h = sub(l, k(ch), r(ah));
    let e = sub(l, k(ch), r(h));
    let e = sub(l, r(e), r(ah));
    let t = sub(l, k(cl), r(al));
    let e = add(l, r(e), r(t));
    (h, e)
}
