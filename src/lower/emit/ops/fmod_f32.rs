//! Exact f32 `fmod` (C semantics) from approximate quotients.
//!
//! With `x = |a|`, `y = |b|`, the remainder `r` (first `x`) is reduced by
//! divisors `Y = y 2^k`, `k` falling by 20 a step down to 0, while
//! `|r| >= y`: no step for `|a| < |b|`, one for quotients below `2^20`, at
//! most 14 for the largest. A step takes the nearest integer `q` to an
//! approximate `r / Y` and computes `r - q Y` with one fma. Each step is
//! exact for any approximation within 0.5 of `r / Y`:
//!
//! * each step starts with `|r / Y| < 2^20`: the first `Y` is chosen so,
//!   and after a step `|r| < Y_old = 2^20 Y_new` (or `Y_new = y` and the
//!   bound is smaller still);
//! * `div.full.f32` is within 2 ulps across the full range (PTX ISA):
//!   for `|r / Y| < 2^20` within `2^-2` (ulps of the exact quotient or of
//!   the returned one alike), so `q` is within `0.5 + 2^-2 < 1` of
//!   `r / Y` and `|r - q Y| < Y`;
//! * `r` is always a multiple of `Y`'s ulp quantum (true of `x`, as the
//!   first `Y` is `y <= x` or below `x / 2^17`; kept by each step; and the
//!   next `Y` is smaller), so `r - q Y`, below `Y` in magnitude, fits in
//!   24 bits: the fma is exact.
//!
//! The loop stops once `|r| < y`; the remainder, of either sign, is
//! congruent to `x` modulo `y`, so adding `y` when it is negative (exact:
//! the sum is a multiple of `y`'s quantum below `y`) gives `x mod y`.
//! The first exponent `k` comes from the difference of the high words of
//! `x` and `y` as f64 (exact conversions, subnormals normal there), and
//! `y 2^k` from adding `k` to `y`'s f64 exponent field: `k <= 259` keeps
//! it finite, and it is an f32 value, so converting back is exact.
//! Nothing flushes subnormals: `remf` has no `flush_to_zero` attribute.
use crate::lower::emit::context::Lowerer;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};
use smallvec::smallvec;

fn r(x: Reg) -> Operand {
    Operand::Reg(x)
}

fn k(x: f32) -> Operand {
    Operand::F32(x.to_bits())
}

fn f32op(l: &mut Lowerer, opc: Opc, mods: &[&'static str], srcs: Vec<Operand>) -> Reg {
    l.b.op(opc, mods, &[Ty::F32], Ty::F32, srcs)
}

fn setp(l: &mut Lowerer, cmp: &'static str, a: Operand, b: Operand) -> Reg {
    l.b.op(Opc::Setp, &[cmp], &[Ty::F32], Ty::Pred, vec![a, b])
}

fn and(l: &mut Lowerer, a: Reg, b: Reg) -> Reg {
    l.b.op(Opc::And, &[], &[Ty::Pred], Ty::Pred, vec![r(a), r(b)])
}

fn s32(l: &mut Lowerer, opc: Opc, a: Operand, b: Operand) -> Reg {
    l.b.op(opc, &[], &[Ty::S32], Ty::S32, vec![a, b])
}

/// The high 32 bits of `x` widened to f64 (exactly), and the low ones.
fn f64_words(l: &mut Lowerer, x: Reg) -> (Reg, Reg) {
    let w =
        l.b.op(Opc::Cvt, &[], &[Ty::F64, Ty::F32], Ty::F64, vec![r(x)]);
    let (lo, hi) = l.b.split(w);
    (hi, lo)
}

/// Quotient bits one step removes at most.
const STEP_BITS: i64 = 20;

/// `y 2^k` for `k = max(ilogb(x) - ilogb(y) - 19, 0)` or one more, so
/// that `x < 2^20 y 2^k` and, for `k > 0`, `y 2^k < x` (see the module
/// comment).
fn first_divisor(l: &mut Lowerer, x: Reg, y: Reg) -> Reg {
    let (xh, _) = f64_words(l, x);
    let (yh, yl) = f64_words(l, y);
    // (xh - yh) >> 20 is the exponent difference or one less.
    let d = s32(l, Opc::Sub, r(xh), r(yh));
    let d = s32(l, Opc::Shr, r(d), Operand::Imm(20));
    let kk = s32(l, Opc::Sub, r(d), Operand::Imm(STEP_BITS - 2));
    let kk = s32(l, Opc::Max, r(kk), Operand::Imm(0));
    let kk = l.b.op(
        Opc::Shl,
        &[],
        &[Ty::B32],
        Ty::B32,
        vec![r(kk), Operand::Imm(20)],
    );
    let hi = s32(l, Opc::Add, r(yh), r(kk));
    let w = l.b.reg(RegClass::B64);
    l.b.push(Inst::new(
        Opc::Mov,
        &[],
        &[Ty::B64],
        smallvec![Operand::Reg(w)],
        smallvec![Operand::Vec(vec![yl, hi])],
    ));
    l.b.op(Opc::Cvt, &["rn"], &[Ty::F32, Ty::F64], Ty::F32, vec![r(w)])
}

/// Exact `fmod(a, b)` for f32: the sign of `a`; NaN when either is NaN,
/// `a` is infinite or `b` is zero; `a` when `b` is infinite.
pub fn fmod(l: &mut Lowerer, a: Reg, b: Reg) -> Reg {
    let x = f32op(l, Opc::Abs, &[], vec![r(a)]);
    let y = f32op(l, Opc::Abs, &[], vec![r(b)]);
    // Ordered compares: false for NaNs too.
    let finite = setp(l, "lt", r(x), k(f32::INFINITY));
    let nonzero = setp(l, "gt", r(y), k(0.0));
    let valid = and(l, finite, nonzero);
    // No step runs for invalid inputs (NaN results, selected at the end).
    let first = first_divisor(l, x, y);
    let rem = l.b.reg(RegClass::B32);
    l.b.copy(rem, x);
    let div = l.b.reg(RegClass::B32);
    l.b.copy(div, first);
    l.b.begin_loop();
    let arem = f32op(l, Opc::Abs, &[], vec![r(rem)]);
    let big = setp(l, "ge", r(arem), r(y));
    let more = and(l, big, valid);
    l.b.begin_loop_body(more, true);
    {
        let qe = f32op(l, Opc::Div, &["full"], vec![r(rem), r(div)]);
        let q = l.b.op(
            Opc::Cvt,
            &["rni"],
            &[Ty::F32, Ty::F32],
            Ty::F32,
            vec![r(qe)],
        );
        let nq = f32op(l, Opc::Neg, &[], vec![r(q)]);
        l.b.op_into(
            rem,
            Opc::Fma,
            &["rn"],
            &[Ty::F32],
            vec![r(nq), r(div), r(rem)],
        );
        // The next divisor, y 2^(k - 20) (exact), or y once that is below.
        let down = f32op(
            l,
            Opc::Mul,
            &["rn"],
            vec![r(div), k(f32::from_bits((127 - STEP_BITS as u32) << 23))],
        );
        l.b.op_into(div, Opc::Max, &[], &[Ty::F32], vec![r(down), r(y)]);
    }
    l.b.end_loop();
    // |rem| < y now (or the input is invalid): the nonnegative remainder.
    let negative = setp(l, "lt", r(rem), k(0.0));
    let up = f32op(l, Opc::Add, &["rn"], vec![r(rem), r(y)]);
    let m = l.b.op(
        Opc::Selp,
        &[],
        &[Ty::F32],
        Ty::F32,
        vec![r(up), r(rem), r(negative)],
    );
    let res = f32op(l, Opc::Copysign, &[], vec![r(a), r(m)]);
    l.b.op(
        Opc::Selp,
        &[],
        &[Ty::F32],
        Ty::F32,
        vec![r(res), Operand::F32(0x7fff_ffff), r(valid)],
    )
}
