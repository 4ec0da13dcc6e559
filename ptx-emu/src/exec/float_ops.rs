//! Floating-point and integer arithmetic helpers: rounding, NaN rules,
//! comparisons, conversions.

use super::*;

pub(super) fn fmt_of(ty: Ty) -> Fmt {
    match ty {
        Ty::F16 | Ty::F16x2 => fl::F16,
        Ty::BF16 | Ty::BF16x2 => fl::BF16,
        Ty::TF32 => fl::TF32,
        Ty::E4M3 | Ty::E4M3x2 => fl::E4M3,
        Ty::E5M2 | Ty::E5M2x2 => fl::E5M2,
        Ty::E2M1 | Ty::E2M1x2 => fl::E2M1,
        _ => fl::F32,
    }
}

/// Decodes a float of type `ty` to f64 (exact).
pub(super) fn fget(ty: Ty, v: u64, ftz: bool) -> f64 {
    let x = match ty {
        Ty::F64 => f64::from_bits(v),
        Ty::F32 | Ty::TF32 => f32::from_bits(v as u32) as f64,
        Ty::BF16 | Ty::BF16x2 => fl::bf16_to_f64(v as u16),
        Ty::F16 | Ty::F16x2 => fl::f16_to_f64(v as u16),
        Ty::E4M3 | Ty::E4M3x2 => fl::decode(fl::E4M3, v & 0xff),
        Ty::E5M2 | Ty::E5M2x2 => fl::decode(fl::E5M2, v & 0xff),
        Ty::E2M1 | Ty::E2M1x2 => fl::decode(fl::E2M1, v & 0xf),
        _ => f32::from_bits(v as u32) as f64,
    };
    if ftz && is_sub(ty, x) {
        0.0f64.copysign(x)
    } else {
        x
    }
}

pub(super) fn is_sub(ty: Ty, x: f64) -> bool {
    let min_normal = match ty {
        Ty::F64 => f64::MIN_POSITIVE,
        Ty::F16 | Ty::F16x2 => 2f64.powi(-14),
        _ => f32::MIN_POSITIVE as f64,
    };
    x != 0.0 && x.abs() < min_normal
}

/// Rounds exact `hi+lo` into type `ty` with `rnd`, applying ftz/sat.
pub(super) fn fput(ty: Ty, hi: f64, lo: f64, rnd: Rnd, ftz: bool, sat: bool) -> u64 {
    let (mut hi, mut lo) = (hi, lo);
    if sat {
        if hi.is_nan() {
            return 0;
        }
        if hi + lo <= 0.0 || hi < 0.0 {
            hi = 0.0;
            lo = 0.0;
        } else if hi > 1.0 || (hi == 1.0 && lo > 0.0) {
            hi = 1.0;
            lo = 0.0;
        }
    }
    let rnd = if rnd == Rnd::None { Rnd::Rn } else { rnd };
    match ty {
        Ty::F64 => {
            if hi.is_nan() {
                return fl::NAN64;
            }
            let r = fl::round_f64(hi, lo, rnd);
            if ftz && is_sub(ty, r) {
                0.0f64.copysign(r).to_bits()
            } else {
                r.to_bits()
            }
        }
        _ => {
            let f = fmt_of(ty);
            let b = fl::round(
                hi,
                lo,
                rnd,
                f,
                matches!(
                    ty,
                    Ty::E4M3 | Ty::E4M3x2 | Ty::E5M2 | Ty::E5M2x2 | Ty::E2M1 | Ty::E2M1x2
                ),
            );
            let b = if ty == Ty::TF32 { b << 13 } else { b };
            if ftz {
                let x = fget(ty, b, false);
                if is_sub(ty, x) {
                    return if x < 0.0 { 1u64 << (ty.bits() - 1) } else { 0 };
                }
            }
            b
        }
    }
}

pub(super) fn is_x2(ty: Ty) -> bool {
    matches!(ty, Ty::F16x2 | Ty::BF16x2)
}

/// Applies a per-lane float op on packed x2 types or directly on scalars.
pub(super) fn lanes(ty: Ty, a: u64, b: u64, c: u64, f: &dyn Fn(u64, u64, u64) -> u64) -> u64 {
    if ty == Ty::F32x2 {
        let m = 0xffff_ffffu64;
        let lo = f(a & m, b & m, c & m) & m;
        let hi = f(a >> 32, b >> 32, c >> 32) & m;
        return lo | (hi << 32);
    }
    if is_x2(ty) {
        let lo = f(a & 0xffff, b & 0xffff, c & 0xffff) & 0xffff;
        let hi = f((a >> 16) & 0xffff, (b >> 16) & 0xffff, (c >> 16) & 0xffff) & 0xffff;
        lo | (hi << 16)
    } else {
        f(a, b, c)
    }
}

pub(super) fn scalar_ty(ty: Ty) -> Ty {
    match ty {
        Ty::F16x2 => Ty::F16,
        Ty::BF16x2 => Ty::BF16,
        Ty::F32x2 => Ty::F32,
        t => t,
    }
}

pub(super) fn fadd(ty: Ty, a: u64, b: u64, rnd: Rnd, ftz: bool, sat: bool, sub: bool) -> u64 {
    let st = scalar_ty(ty);
    lanes(ty, a, b, 0, &|a, b, _| {
        if st == Ty::F32 && matches!(rnd, Rnd::Rn | Rnd::None) && !sat {
            let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
            let (x, y) = if ftz {
                (fl::ftz32(x), fl::ftz32(y))
            } else {
                (x, y)
            };
            let r = if sub { x - y } else { x + y };
            if r.is_nan() {
                return fl::NAN32 as u64;
            }
            return (if ftz { fl::ftz32(r) } else { r }).to_bits() as u64;
        }
        let x = fget(st, a, ftz);
        let y = fget(st, b, ftz);
        let y = if sub { -y } else { y };
        if st == Ty::F64 && matches!(rnd, Rnd::Rn | Rnd::None) && !sat {
            let r = x + y;
            return if r.is_nan() { fl::NAN64 } else { r.to_bits() };
        }
        let (h, lo) = fl::two_sum(x, y);
        fput(st, h, lo, rnd, ftz, sat)
    })
}

pub(super) fn fmul(ty: Ty, a: u64, b: u64, rnd: Rnd, ftz: bool, sat: bool) -> u64 {
    let st = scalar_ty(ty);
    lanes(ty, a, b, 0, &|a, b, _| {
        if st == Ty::F32 && matches!(rnd, Rnd::Rn | Rnd::None) && !sat {
            let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
            let (x, y) = if ftz {
                (fl::ftz32(x), fl::ftz32(y))
            } else {
                (x, y)
            };
            let r = x * y;
            if r.is_nan() {
                return fl::NAN32 as u64;
            }
            return (if ftz { fl::ftz32(r) } else { r }).to_bits() as u64;
        }
        let x = fget(st, a, ftz);
        let y = fget(st, b, ftz);
        let (h, lo) = fl::two_prod(x, y);
        fput(st, h, lo, rnd, ftz, sat)
    })
}

pub(super) fn ffma(ty: Ty, a: u64, b: u64, c: u64, rnd: Rnd, ftz: bool, sat: bool) -> u64 {
    let st = scalar_ty(ty);
    lanes(ty, a, b, c, &|a, b, c| {
        if st == Ty::F32 && matches!(rnd, Rnd::Rn | Rnd::None) && !sat {
            let (x, y, z) = (
                f32::from_bits(a as u32),
                f32::from_bits(b as u32),
                f32::from_bits(c as u32),
            );
            let (x, y, z) = if ftz {
                (fl::ftz32(x), fl::ftz32(y), fl::ftz32(z))
            } else {
                (x, y, z)
            };
            let r = x.mul_add(y, z);
            if r.is_nan() {
                return fl::NAN32 as u64;
            }
            return (if ftz { fl::ftz32(r) } else { r }).to_bits() as u64;
        }
        let x = fget(st, a, ftz);
        let y = fget(st, b, ftz);
        let z = fget(st, c, ftz);
        if st == Ty::F64 {
            let h = x.mul_add(y, z);
            if h.is_nan() {
                return fl::NAN64;
            }
            if matches!(rnd, Rnd::Rn | Rnd::None) && !sat {
                return h.to_bits();
            }
            // residual of the fused result (sign is what directed rounding needs)
            let (p, pe) = fl::two_prod(x, y);
            let (s, se) = fl::two_sum(p, z);
            let lo = ((s - h) + se) + pe;
            return fput(st, h, lo, rnd, ftz, sat);
        }
        // products of f32/f16/bf16 are exact in f64
        let p = x * y;
        let (h, lo) = fl::two_sum(p, z);
        fput(st, h, lo, rnd, ftz, sat)
    })
}

pub(super) fn fminmax(ty: Ty, a: u64, b: u64, max: bool, nan: bool, ftz: bool) -> u64 {
    let st = scalar_ty(ty);
    lanes(ty, a, b, 0, &|a, b, _| {
        let x = fget(st, a, ftz);
        let y = fget(st, b, ftz);
        let cnan = match st {
            Ty::F64 => fl::NAN64,
            Ty::F32 => fl::NAN32 as u64,
            _ => 0x7fff,
        };
        if x.is_nan() || y.is_nan() {
            if nan || (x.is_nan() && y.is_nan()) {
                return cnan;
            }
            let v = if x.is_nan() { b } else { a };
            let vv = fget(st, v, ftz);
            return fput(st, vv, 0.0, Rnd::Rn, false, false);
        }
        let pick_a = if x == y {
            // -0 < +0
            if max {
                !x.is_sign_negative()
            } else {
                x.is_sign_negative()
            }
        } else if max {
            x > y
        } else {
            x < y
        };
        let v = if pick_a { x } else { y };
        fput(st, v, 0.0, Rnd::Rn, false, false)
    })
}

pub(super) fn fcmp(c: Cmp, x: f64, y: f64) -> bool {
    let un = x.is_nan() || y.is_nan();
    match c {
        Cmp::Eq => !un && x == y,
        Cmp::Ne => !un && x != y,
        Cmp::Lt => !un && x < y,
        Cmp::Le => !un && x <= y,
        Cmp::Gt => !un && x > y,
        Cmp::Ge => !un && x >= y,
        Cmp::Equ => un || x == y,
        Cmp::Neu => un || x != y,
        Cmp::Ltu => un || x < y,
        Cmp::Leu => un || x <= y,
        Cmp::Gtu => un || x > y,
        Cmp::Geu => un || x >= y,
        Cmp::Num => !un,
        Cmp::Nan => un,
        _ => false,
    }
}

pub(super) fn icmp(c: Cmp, ty: Ty, a: u64, b: u64) -> bool {
    let bits = ty.bits();
    let (ua, ub) = (a & mask(bits), b & mask(bits));
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    let signed = ty.signed();
    match c {
        Cmp::Eq => ua == ub,
        Cmp::Ne => ua != ub,
        Cmp::Lt => {
            if signed {
                sa < sb
            } else {
                ua < ub
            }
        }
        Cmp::Le => {
            if signed {
                sa <= sb
            } else {
                ua <= ub
            }
        }
        Cmp::Gt => {
            if signed {
                sa > sb
            } else {
                ua > ub
            }
        }
        Cmp::Ge => {
            if signed {
                sa >= sb
            } else {
                ua >= ub
            }
        }
        Cmp::Lo => ua < ub,
        Cmp::Ls => ua <= ub,
        Cmp::Hi => ua > ub,
        Cmp::Hs => ua >= ub,
        _ => false,
    }
}

pub(super) fn compare(inst: &Inst, ty: Ty, a: u64, b: u64) -> bool {
    if ty.float() {
        if is_x2(ty) {
            // only used by setp.f16x2 with pair destination; compare low lanes here
            return fcmp(
                inst.cmp,
                fget(ty, a & 0xffff, inst.ftz),
                fget(ty, b & 0xffff, inst.ftz),
            );
        }
        fcmp(inst.cmp, fget(ty, a, inst.ftz), fget(ty, b, inst.ftz))
    } else {
        icmp(inst.cmp, ty, a, b)
    }
}

/// Unary float functions evaluated exactly in f64 then rounded.
pub(super) fn funary(op: OpK, ty: Ty, a: u64, rnd: Rnd, ftz: bool, sat: bool) -> u64 {
    let st = scalar_ty(ty);
    lanes(ty, a, 0, 0, &|a, _, _| {
        let x = fget(st, a, ftz);
        let nanv = |st: Ty| match st {
            Ty::F64 => fl::NAN64,
            Ty::F32 => fl::NAN32 as u64,
            _ => 0x7fff,
        };
        let (h, lo) = match op {
            OpK::Sqrt => {
                if x < 0.0 {
                    return nanv(st);
                }
                let s = x.sqrt();
                if st == Ty::F64 {
                    // residual x - s*s gives the rounding direction
                    let r = (-s).mul_add(s, x);
                    (s, r)
                } else {
                    let r = (-s).mul_add(s, x);
                    (s, r)
                }
            }
            OpK::Rsqrt => {
                if x < 0.0 {
                    return nanv(st);
                }
                (1.0 / x.sqrt(), 0.0)
            }
            OpK::Rcp => {
                let q = 1.0 / x;
                // exact residual 1 - q*x; (1/x - q) = residual / x
                let r = if q.is_finite() && q != 0.0 {
                    -(q.mul_add(x, -1.0)) / x
                } else {
                    0.0
                };
                (q, r)
            }
            OpK::Ex2 => (x.exp2(), 0.0),
            OpK::Lg2 => (x.log2(), 0.0),
            OpK::Sin => (x.sin(), 0.0),
            OpK::Cos => (x.cos(), 0.0),
            OpK::Tanh => (x.tanh(), 0.0),
            _ => (x, 0.0),
        };
        if h.is_nan() {
            return nanv(st);
        }
        fput(st, h, lo, rnd, ftz, sat)
    })
}

/// The f32 `q` (bits) moved `ulps` away from zero when finite and
/// nonzero, saturating at zero and infinity.
pub(super) fn skew_f32(q: u64, ulps: i32) -> u64 {
    let mag = q & 0x7fff_ffff;
    if ulps == 0 || mag == 0 || mag >= 0x7f80_0000 {
        return q;
    }
    let moved = (mag as i64 + i64::from(ulps)).clamp(0, 0x7f80_0000) as u64;
    (q & 0x8000_0000) | moved
}

pub(super) fn fdiv(ty: Ty, a: u64, b: u64, rnd: Rnd, ftz: bool) -> u64 {
    let x = fget(ty, a, ftz);
    let y = fget(ty, b, ftz);
    let q = x / y;
    if q.is_nan() {
        return if ty == Ty::F64 {
            fl::NAN64
        } else {
            fl::NAN32 as u64
        };
    }
    if ty == Ty::F32 && matches!(rnd, Rnd::Rn | Rnd::None) {
        let r = (x as f32) / (y as f32);
        return (if ftz { fl::ftz32(r) } else { r }).to_bits() as u64;
    }
    // remainder sign: x - q*y
    let rem = if q.is_finite() && q != 0.0 {
        (-q).mul_add(y, x)
    } else {
        0.0
    };
    let lo = if y < 0.0 { -rem } else { rem };
    fput(
        ty,
        q,
        lo * f64::EPSILON * q.abs().max(f64::MIN_POSITIVE),
        rnd,
        ftz,
        false,
    )
}

pub(super) fn int_to_exact(v: u64, ty: Ty) -> (f64, f64) {
    let bits = ty.bits();
    if ty.signed() {
        let s = sext(v, bits) as i128;
        let h = s as f64;
        let lo = (s - h as i128) as f64;
        (h, lo)
    } else {
        let u = (v & mask(bits)) as i128;
        let h = u as f64;
        let lo = (u - h as i128) as f64;
        (h, lo)
    }
}

/// An 8-bit integer result of type `dt` as the (at least 16-bit) register
/// holds it: sign-extended for a signed type, zero-extended otherwise (PTX
/// ISA, "Operand Size Exceeding Instruction-Type Size": `cvt.s8.s32` into a
/// 16-bit register gives 0xff80 for -128, not 0x0080). Register widths are
/// not tracked, so the extension stops at 16 bits.
pub(super) fn widen_dst(dt: Ty, v: u64) -> u64 {
    if dt.signed() && dt.bits() == 8 {
        sext(v, 8) as u64 & 0xffff
    } else {
        v
    }
}

pub(super) fn cvt(inst: &Inst, a: u64) -> u64 {
    let (dt, st) = (inst.ty, inst.ty2);
    let rnd = inst.rnd;
    if !dt.float() && !st.float() {
        // int -> int
        let v: i128 = if st.signed() {
            sext(a, st.bits()) as i128
        } else {
            (a & mask(st.bits())) as i128
        };
        let db = dt.bits();
        if inst.sat {
            let (lo, hi): (i128, i128) = if dt.signed() {
                (-(1i128 << (db - 1)), (1i128 << (db - 1)) - 1)
            } else {
                (0, (1i128 << db) - 1)
            };
            return widen_dst(dt, (v.clamp(lo, hi) as u64) & mask(db));
        }
        return widen_dst(dt, (v as u64) & mask(db));
    }
    if st.float() && !dt.float() {
        let x = fget(st, a, inst.ftz);
        let mode = if rnd == Rnd::None { Rnd::Rzi } else { rnd };
        return widen_dst(
            dt,
            fl::f_to_int(x, mode, dt.bits(), dt.signed()) & mask(dt.bits()),
        );
    }
    let (h, lo) = if st.float() {
        (fget(st, a, inst.ftz), 0.0)
    } else {
        int_to_exact(a, st)
    };
    if st.float() && matches!(rnd, Rnd::Rni | Rnd::Rzi | Rnd::Rmi | Rnd::Rpi) {
        // round to integral value in floating point
        if h.is_nan() {
            return fput(dt, h, 0.0, Rnd::Rn, false, false);
        }
        let r = fl::round_int(h, rnd);
        return fput(dt, r, 0.0, Rnd::Rn, inst.ftz, inst.sat);
    }
    if h.is_nan() {
        return match dt {
            Ty::F64 => fl::NAN64,
            Ty::F32 => fl::NAN32 as u64,
            _ => fmt_of(dt).nan,
        };
    }
    fput(dt, h, lo, rnd, inst.ftz && dt == Ty::F32, inst.sat)
}

/// The mixed-precision forms `add/sub.f32.f16`, `add/sub.f32.bf16`
/// (first operand) and `fma.f32.f16`, `fma.f32.bf16` (first two operands)
/// take a half-precision operand, converted exactly to f32; any other
/// instruction's operand is returned as is.
pub(super) fn widen_mixed(inst: &Inst, v: u64) -> u64 {
    match (inst.ty, inst.ty2) {
        (Ty::F32, Ty::F16) => (fl::f16_to_f64(v as u16) as f32).to_bits() as u64,
        (Ty::F32, Ty::BF16) => (fl::bf16_to_f64(v as u16) as f32).to_bits() as u64,
        _ => v,
    }
}
