//! Bit-exact floating-point helpers: decoding of narrow formats and correctly
//! rounded conversion of an exact value `hi + lo` (two f64s) into any of the
//! PTX float formats with any rounding mode.

use crate::ir::Rnd;

/// A binary floating-point format.
#[derive(Debug, Clone, Copy)]
pub struct Fmt {
    /// Exponent bits.
    pub ebits: u32,
    /// Stored mantissa bits.
    pub mbits: u32,
    /// Has IEEE infinities (false for e4m3, whose only NaN is S.1111.111).
    pub ieee: bool,
    /// Whether an encoding is NaN (false for e2m1, which has none).
    pub has_nan: bool,
    /// Canonical NaN bits (for a format without NaN, what NaN converts to).
    pub nan: u64,
}

/// IEEE binary16.
pub const F16: Fmt = Fmt {
    ebits: 5,
    mbits: 10,
    ieee: true,
    has_nan: true,
    nan: 0x7fff,
};
/// bfloat16.
pub const BF16: Fmt = Fmt {
    ebits: 8,
    mbits: 7,
    ieee: true,
    has_nan: true,
    nan: 0x7fff,
};
/// IEEE binary32.
pub const F32: Fmt = Fmt {
    ebits: 8,
    mbits: 23,
    ieee: true,
    has_nan: true,
    nan: 0x7fff_ffff,
};
/// TF32 (f32 layout with 10 mantissa bits; result keeps the low 13 bits zero).
pub const TF32: Fmt = Fmt {
    ebits: 8,
    mbits: 10,
    ieee: true,
    has_nan: true,
    nan: 0x7fff_ffff,
};
/// FP8 E4M3 (no infinities, max 448).
pub const E4M3: Fmt = Fmt {
    ebits: 4,
    mbits: 3,
    ieee: false,
    has_nan: true,
    nan: 0x7f,
};
/// FP8 E5M2.
pub const E5M2: Fmt = Fmt {
    ebits: 5,
    mbits: 2,
    ieee: true,
    has_nan: true,
    nan: 0x7f,
};

/// FP4 E2M1 (no infinities or NaN, max 6; NaN converts to +6).
pub const E2M1: Fmt = Fmt {
    ebits: 2,
    mbits: 1,
    ieee: false,
    has_nan: false,
    nan: 0x7,
};

/// Canonical f32 NaN produced by arithmetic.
pub const NAN32: u32 = 0x7fff_ffff;
/// Canonical f64 NaN produced by arithmetic.
pub const NAN64: u64 = 0x7fff_ffff_ffff_ffff;

/// Decodes `bits` of format `f` to an exact f64.
pub fn decode(f: Fmt, bits: u64) -> f64 {
    let sign = (bits >> (f.ebits + f.mbits)) & 1;
    let e = ((bits >> f.mbits) & ((1 << f.ebits) - 1)) as i32;
    let m = bits & ((1 << f.mbits) - 1);
    let bias = (1i32 << (f.ebits - 1)) - 1;
    let emax_field = (1i32 << f.ebits) - 1;
    let v = if f.ieee && e == emax_field {
        if m == 0 {
            f64::INFINITY
        } else {
            f64::NAN
        }
    } else if !f.ieee && f.has_nan && e == emax_field && m == (1 << f.mbits) - 1 {
        f64::NAN
    } else if e == 0 {
        m as f64 * 2f64.powi(1 - bias - f.mbits as i32)
    } else {
        (m + (1 << f.mbits)) as f64 * 2f64.powi(e - bias - f.mbits as i32)
    };
    if sign == 1 {
        -v
    } else {
        v
    }
}

/// f16 bits to f64.
pub fn f16_to_f64(b: u16) -> f64 {
    decode(F16, b as u64)
}

/// bf16 bits to f64.
pub fn bf16_to_f64(b: u16) -> f64 {
    f32::from_bits((b as u32) << 16) as f64
}

/// Round-to-nearest-even f64 to f16 bits.
pub fn f64_to_f16_rn(v: f64) -> u16 {
    round(v, 0.0, Rnd::Rn, F16, false) as u16
}

/// Round-to-nearest-even f64 to bf16 bits.
pub fn f64_to_bf16_rn(v: f64) -> u16 {
    round(v, 0.0, Rnd::Rn, BF16, false) as u16
}

/// Error-free sum: returns (s, e) with s = fl(a+b) and a+b = s+e exactly.
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    if !s.is_finite() {
        return (s, 0.0);
    }
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// Error-free product: returns (p, e) with p = fl(a*b) and a*b = p+e exactly.
pub fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    if !p.is_finite() {
        return (p, 0.0);
    }
    (p, a.mul_add(b, -p))
}

/// Rounds the exact value `hi + lo` (|lo| tiny relative to hi, as from
/// [`two_sum`]) to format `f` with rounding mode `mode`. `satfinite` clamps
/// infinities/overflow to the largest finite value (NaN stays NaN).
/// Returns the bits of the result.
pub fn round(hi: f64, lo: f64, mode: Rnd, f: Fmt, satfinite: bool) -> u64 {
    let total = f.ebits + f.mbits;
    let sign_bit = 1u64 << total;
    let bias = (1i32 << (f.ebits - 1)) - 1;
    let max_finite = if f.ieee {
        (((1u64 << f.ebits) - 2) << f.mbits) | ((1 << f.mbits) - 1)
    } else if !f.has_nan {
        (1u64 << (f.ebits + f.mbits)) - 1
    } else {
        (((1u64 << f.ebits) - 1) << f.mbits) | ((1 << f.mbits) - 2)
    };
    let inf = ((1u64 << f.ebits) - 1) << f.mbits;
    if hi.is_nan() {
        return f.nan;
    }
    let neg = hi.is_sign_negative();
    let sbit = if neg { sign_bit } else { 0 };
    let overflow = |sbit: u64| -> u64 {
        // result magnitude overflowed
        let to_inf = match mode {
            Rnd::Rz | Rnd::Rzi => false,
            Rnd::Rm | Rnd::Rmi => sbit != 0,
            Rnd::Rp | Rnd::Rpi => sbit == 0,
            _ => true,
        };
        if to_inf && !satfinite {
            if f.ieee {
                sbit | inf
            } else {
                f.nan | sbit
            }
        } else {
            sbit | max_finite
        }
    };
    if hi.is_infinite() {
        if satfinite {
            return sbit | max_finite;
        }
        return if f.ieee { sbit | inf } else { f.nan | sbit };
    }
    if hi == 0.0 && lo == 0.0 {
        return sbit;
    }
    // Normalize so that the value is a + l with a > 0 (magnitude).
    let (a, l) = if neg { (-hi, -lo) } else { (hi, lo) };
    let (a, l) = if a == 0.0 { (l.abs(), 0.0) } else { (a, l) };
    let ebits_f64 = ((a.to_bits() >> 52) & 0x7ff) as i32;
    let e = if ebits_f64 == 0 {
        -1075
    } else {
        ebits_f64 - 1023
    };
    // A power of two less a little lies in the binade below.
    let e = if l < 0.0 && ebits_f64 != 0 && a.to_bits() & ((1 << 52) - 1) == 0 {
        e - 1
    } else {
        e
    };
    let emin = 1 - bias;
    let q = e.max(emin) - f.mbits as i32;
    let scale = pow2(-q);
    let scaled = a * scale;
    let ls = l * scale;
    let fl = scaled.floor();
    let frac = scaled - fl;
    let away = |fl: f64| -> f64 {
        if frac > 0.0 || (frac == 0.0 && ls > 0.0) {
            fl + 1.0
        } else {
            fl
        }
    };
    let toward = |fl: f64| -> f64 {
        if frac == 0.0 && ls < 0.0 {
            fl - 1.0
        } else {
            fl
        }
    };
    let r = match mode {
        Rnd::Rz | Rnd::Rzi => toward(fl),
        Rnd::Rp | Rnd::Rpi => {
            if neg {
                toward(fl)
            } else {
                away(fl)
            }
        }
        Rnd::Rm | Rnd::Rmi => {
            if neg {
                away(fl)
            } else {
                toward(fl)
            }
        }
        Rnd::Rna => {
            if frac > 0.5 || (frac == 0.5 && ls >= 0.0) {
                fl + 1.0
            } else {
                fl
            }
        }
        _ => {
            if frac > 0.5 || (frac == 0.5 && (ls > 0.0 || (ls == 0.0 && (fl as u64) & 1 == 1))) {
                fl + 1.0
            } else {
                fl
            }
        }
    };
    let mut m = r as u64;
    let mut q = q;
    if m == 1u64 << (f.mbits + 1) {
        m >>= 1;
        q += 1;
    }
    if m == 0 {
        return sbit;
    }
    let bits = if m >= 1 << f.mbits {
        let biased = q + f.mbits as i32 + bias;
        if biased <= 0 {
            unreachable!("normal with non-positive exponent")
        }
        ((biased as u64) << f.mbits) | (m - (1 << f.mbits))
    } else {
        m
    };
    if bits > max_finite {
        return overflow(sbit);
    }
    sbit | bits
}

fn pow2(e: i32) -> f64 {
    if e > 1023 {
        pow2(1023) * pow2(e - 1023)
    } else if e < -1022 {
        pow2(-1022) * pow2(e + 1022)
    } else {
        f64::from_bits(((e + 1023) as u64) << 52)
    }
}

/// Rounds the exact value `hi + lo` to f64 with a directed mode (hi is the
/// round-to-nearest result of the exact operation).
pub fn round_f64(hi: f64, lo: f64, mode: Rnd) -> f64 {
    if hi.is_nan() {
        return f64::from_bits(NAN64);
    }
    if lo == 0.0 || hi.is_infinite() && !matches!(mode, Rnd::Rz | Rnd::Rm | Rnd::Rp) {
        return hi;
    }
    if hi.is_infinite() {
        // Overflowed under round-to-nearest: directed modes may clamp.
        let max = if hi > 0.0 { f64::MAX } else { -f64::MAX };
        return match mode {
            Rnd::Rz => max,
            Rnd::Rm if hi > 0.0 => max,
            Rnd::Rp if hi < 0.0 => max,
            _ => hi,
        };
    }
    match mode {
        Rnd::Rz => {
            if hi > 0.0 && lo < 0.0 {
                next_down(hi)
            } else if hi < 0.0 && lo > 0.0 {
                next_up(hi)
            } else {
                hi
            }
        }
        Rnd::Rm => {
            if lo < 0.0 {
                next_down(hi)
            } else {
                hi
            }
        }
        Rnd::Rp => {
            if lo > 0.0 {
                next_up(hi)
            } else {
                hi
            }
        }
        _ => hi,
    }
}

/// Next representable f64 toward +inf.
pub fn next_up(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let b = x.to_bits();
    f64::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
}

/// Next representable f64 toward -inf.
pub fn next_down(x: f64) -> f64 {
    -next_up(-x)
}

/// Flushes an f32 subnormal to a sign-preserving zero.
pub fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() {
        if x.is_sign_negative() {
            -0.0
        } else {
            0.0
        }
    } else {
        x
    }
}

/// Rounds an f64 to an integral value with a PTX integer rounding mode.
pub fn round_int(v: f64, mode: Rnd) -> f64 {
    match mode {
        Rnd::Rzi | Rnd::Rz => v.trunc(),
        Rnd::Rmi | Rnd::Rm => v.floor(),
        Rnd::Rpi | Rnd::Rp => v.ceil(),
        Rnd::Rna => v.round(),
        _ => v.round_ties_even(),
    }
}

/// Converts an f64 (exactly representing a float value) to an integer of
/// `bits` width with rounding `mode`, saturating (NaN gives 0), as PTX `cvt`.
pub fn f_to_int(v: f64, mode: Rnd, bits: u32, signed: bool) -> u64 {
    if v.is_nan() {
        return 0;
    }
    let r = round_int(v, mode);
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    if signed {
        let min = -(2f64.powi(bits as i32 - 1));
        let max_i = if bits == 64 {
            i64::MAX
        } else {
            (1i64 << (bits - 1)) - 1
        };
        if r < min {
            (if bits == 64 {
                i64::MIN
            } else {
                -(1i64 << (bits - 1))
            }) as u64
                & mask
        } else if r >= -min {
            max_i as u64 & mask
        } else {
            (r as i64) as u64 & mask
        }
    } else if r <= 0.0 {
        0
    } else if r >= 2f64.powi(bits as i32) {
        mask
    } else {
        r as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_power_of_two_less_a_little_rounds_in_the_binade_below() {
        // u64::MAX as hi + lo: 2^64 - 1.
        let (hi, lo) = (2f64.powi(64), -1.0);
        assert_eq!(round(hi, lo, Rnd::Rz, F32, false), 0x5f7f_ffff);
        assert_eq!(round(hi, lo, Rnd::Rm, F32, false), 0x5f7f_ffff);
        assert_eq!(round(hi, lo, Rnd::Rn, F32, false), 0x5f80_0000);
        assert_eq!(round(hi, lo, Rnd::Rp, F32, false), 0x5f80_0000);
        assert_eq!(round(-hi, -lo, Rnd::Rz, F32, false), 0xdf7f_ffff);
        assert_eq!(round(1.0, -1e-30, Rnd::Rz, BF16, false), 0x3f7f);
        assert_eq!(round(1.0, 1e-30, Rnd::Rz, BF16, false), 0x3f80);
    }
}
