//! The unsigned scale-factor formats of `cvt`: `.ue8m0x2` (a biased power
//! of two, `2^(e - 127)`, 0xFF NaN) and `.ue5m3x2` (5 exponent bits with
//! bias 15, 3 mantissa bits, subnormals, no infinities, 0xFF NaN).
//!
//! Conversions to them discard the input's sign and round the magnitude:
//! `.ue8m0x2` to a power of two toward zero (`.rz`) or up (`.rp`),
//! magnitudes below `2^-127` (zero included) becoming `2^-127`; `.ue5m3x2`
//! to its grid with the rounding given. A result beyond the largest finite
//! value (infinities included) is that value with `.satfinite`, NaN
//! otherwise; a NaN input gives 0xFF.
//!
//! Conversions from them (to `.bf16x2`, exact, or `.f16x2`, rounded to
//! nearest even) give NaN for 0xFF.

use crate::float::{self as fl, Fmt};
use crate::ir::{Inst, Rnd, Ty};

/// ue5m3: unsigned, 5 exponent bits (bias 15), 3 mantissa bits; its only
/// NaN is 0xFF.
pub const UE5M3: Fmt = Fmt {
    ebits: 5,
    mbits: 3,
    ieee: false,
    has_nan: true,
    nan: 0xff,
};

/// The value of ue8m0 code `c`.
pub fn ue8m0_value(c: u8) -> f64 {
    if c == 0xff {
        f64::NAN
    } else {
        2f64.powi(i32::from(c) - 127)
    }
}

/// The value of ue5m3 code `c`.
pub fn ue5m3_value(c: u8) -> f64 {
    fl::decode(UE5M3, u64::from(c))
}

/// `|x|` as a ue8m0 code, rounded toward zero (`Rz`), up (`Rp`) or to the
/// nearest power of two by distance, midpoints up (otherwise).
pub fn to_ue8m0(x: f64, rnd: Rnd, satfinite: bool) -> u8 {
    if x.is_nan() {
        return 0xff;
    }
    let a = x.abs();
    if a.is_infinite() {
        return if satfinite { 0xfe } else { 0xff };
    }
    if a == 0.0 {
        return 0;
    }
    // a = 2^e * (1 + f), 0 <= f < 1 (f64 holds every f32 normalised).
    let e = a.log2().floor() as i32;
    let e = if 2f64.powi(e) > a {
        e - 1
    } else if 2f64.powi(e + 1) <= a {
        e + 1
    } else {
        e
    };
    let exact = 2f64.powi(e) == a;
    let e = match rnd {
        Rnd::Rz | Rnd::Rm => e,
        Rnd::Rp => e + i32::from(!exact),
        _ => e + i32::from(a >= 1.5 * 2f64.powi(e)),
    };
    let code = (e + 127).max(0);
    if code > 0xfe {
        return if satfinite { 0xfe } else { 0xff };
    }
    code as u8
}

/// `|x|` as a ue5m3 code with rounding `rnd`.
pub fn to_ue5m3(x: f64, rnd: Rnd, satfinite: bool) -> u8 {
    if x.is_nan() {
        return 0xff;
    }
    let rnd = if rnd == Rnd::None { Rnd::Rn } else { rnd };
    fl::round(x.abs(), 0.0, rnd, UE5M3, satfinite) as u8
}

/// Whether `ty` is one of the packed scale formats.
pub fn is_scale(ty: Ty) -> bool {
    matches!(ty, Ty::UE8M0x2 | Ty::UE5M3x2)
}

/// Executes a `cvt` to or from a packed scale format: `srcs` are the
/// source operands' values (two f32s, or one packed f16x2/bf16x2 or scale
/// pair). Returns `None` for a form the PTX ISA does not define.
pub fn cvt(inst: &Inst, srcs: &[u64]) -> Option<u64> {
    let sat = inst.sub2 & 4 != 0;
    let (dt, st) = (inst.ty, inst.ty2);
    let narrow = |v: f64| -> u64 {
        u64::from(if dt == Ty::UE8M0x2 {
            to_ue8m0(v, inst.rnd, sat)
        } else {
            to_ue5m3(v, inst.rnd, sat)
        })
    };
    if is_scale(dt) {
        if dt == Ty::UE8M0x2 && !matches!(inst.rnd, Rnd::Rz | Rnd::Rp) {
            return None;
        }
        let (hi, lo) = match (st, srcs) {
            (Ty::F32, [a, b]) => (
                f64::from(f32::from_bits(*a as u32)),
                f64::from(f32::from_bits(*b as u32)),
            ),
            (Ty::BF16x2, [a]) => (
                fl::bf16_to_f64((a >> 16) as u16),
                fl::bf16_to_f64(*a as u16),
            ),
            (Ty::F16x2, [a]) if dt == Ty::UE5M3x2 => {
                (fl::f16_to_f64((a >> 16) as u16), fl::f16_to_f64(*a as u16))
            }
            _ => return None,
        };
        return Some((narrow(hi) << 8) | narrow(lo));
    }
    let [a] = srcs else { return None };
    let decode = |c: u64| -> f64 {
        if st == Ty::UE8M0x2 {
            ue8m0_value(c as u8)
        } else {
            ue5m3_value(c as u8)
        }
    };
    let wide = |c: u64| -> Option<u64> {
        let v = decode(c & 0xff);
        Some(match dt {
            Ty::BF16x2 => fl::round(v, 0.0, Rnd::Rn, fl::BF16, false),
            Ty::F16x2 if st == Ty::UE5M3x2 => fl::round(v, 0.0, Rnd::Rn, fl::F16, false),
            _ => return None,
        })
    };
    if inst.rnd != Rnd::Rn {
        return None;
    }
    Some((wide(a >> 8)? << 16) | wide(*a)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ue8m0_rounds_magnitudes_to_powers_of_two() {
        assert_eq!(to_ue8m0(1.0, Rnd::Rz, true), 127);
        assert_eq!(to_ue8m0(1.0, Rnd::Rp, true), 127);
        assert_eq!(to_ue8m0(1.5, Rnd::Rz, true), 127);
        assert_eq!(to_ue8m0(1.5, Rnd::Rp, true), 128);
        assert_eq!(to_ue8m0(-3.0, Rnd::Rz, true), 128);
        assert_eq!(to_ue8m0(-3.0, Rnd::Rp, true), 129);
        assert_eq!(to_ue8m0(0.0, Rnd::Rp, true), 0);
        assert_eq!(to_ue8m0(-0.0, Rnd::Rz, true), 0);
        // f32 subnormals: 2^-127 is exact, just above rounds up to 2^-126.
        assert_eq!(to_ue8m0(2f64.powi(-127), Rnd::Rp, true), 0);
        assert_eq!(to_ue8m0(2f64.powi(-127) * 1.25, Rnd::Rp, true), 1);
        assert_eq!(to_ue8m0(2f64.powi(-140), Rnd::Rz, true), 0);
        assert_eq!(to_ue8m0(f64::from(f32::MAX), Rnd::Rz, true), 0xfe);
        assert_eq!(to_ue8m0(f64::from(f32::MAX), Rnd::Rp, true), 0xfe);
        assert_eq!(to_ue8m0(f64::from(f32::MAX), Rnd::Rp, false), 0xff);
        assert_eq!(to_ue8m0(f64::INFINITY, Rnd::Rz, true), 0xfe);
        assert_eq!(to_ue8m0(f64::NEG_INFINITY, Rnd::Rz, false), 0xff);
        assert_eq!(to_ue8m0(f64::NAN, Rnd::Rz, true), 0xff);
        assert!(ue8m0_value(0xff).is_nan());
        assert_eq!(ue8m0_value(0), 2f64.powi(-127));
    }

    #[test]
    fn ue5m3_rounds_to_nearest_even_and_saturates() {
        assert_eq!(ue5m3_value(0x01), 2f64.powi(-17));
        assert_eq!(ue5m3_value(0x08), 2f64.powi(-14));
        assert_eq!(ue5m3_value(0xfe), 114_688.0);
        assert!(ue5m3_value(0xff).is_nan());
        assert_eq!(to_ue5m3(1.0, Rnd::Rn, true), 0x78);
        assert_eq!(to_ue5m3(-1.0, Rnd::Rn, true), 0x78);
        // 1 + 1/16 is a tie between 1 and 1 + 1/8: even (1) wins.
        assert_eq!(to_ue5m3(1.0625, Rnd::Rn, true), 0x78);
        assert_eq!(to_ue5m3(1.1875, Rnd::Rn, true), 0x7a);
        // Half the smallest subnormal rounds to zero, just above it to 1.
        assert_eq!(to_ue5m3(2f64.powi(-18), Rnd::Rn, true), 0);
        assert_eq!(to_ue5m3(2f64.powi(-18) * 1.01, Rnd::Rn, true), 1);
        // 118784 is the midpoint between 0xFE and the (NaN) next code.
        assert_eq!(to_ue5m3(118_784.0, Rnd::Rn, true), 0xfe);
        assert_eq!(to_ue5m3(118_785.0, Rnd::Rn, true), 0xfe);
        assert_eq!(to_ue5m3(118_785.0, Rnd::Rn, false), 0xff);
        assert_eq!(to_ue5m3(f64::INFINITY, Rnd::Rn, true), 0xfe);
        assert_eq!(to_ue5m3(f64::NAN, Rnd::Rn, true), 0xff);
    }

    #[test]
    fn packed_forms_put_the_first_source_high() {
        let mut inst = Inst::simple(crate::ir::OpK::Cvt);
        inst.ty = Ty::UE8M0x2;
        inst.ty2 = Ty::F32;
        inst.rnd = Rnd::Rz;
        inst.sub2 = 4;
        let two = u64::from(2f32.to_bits());
        let half = u64::from(0.5f32.to_bits());
        assert_eq!(cvt(&inst, &[two, half]), Some(0x807e));
        inst.rnd = Rnd::Rn;
        assert_eq!(cvt(&inst, &[two, half]), None);
        inst.ty = Ty::BF16x2;
        inst.ty2 = Ty::UE8M0x2;
        assert_eq!(cvt(&inst, &[0xff00]), Some(0x7fff_0040));
        assert_eq!(cvt(&inst, &[0x0080]), Some(0x0040_4000));
        inst.ty2 = Ty::UE5M3x2;
        assert_eq!(cvt(&inst, &[0x0178]), Some(0x3700_3f80));
        inst.ty = Ty::UE5M3x2;
        inst.ty2 = Ty::F32;
        assert_eq!(cvt(&inst, &[two, half]), Some(0x8070));
    }
}
