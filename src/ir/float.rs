//! Float formatting as MLIR prints float attributes: `%.6e`-style when that
//! reads back exactly, else the shortest natural form, else hex bits.
use super::types::Scalar;

/// Layout of an IEEE-like binary float format.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Format {
    /// Total bits.
    bits: u32,
    /// Exponent bits.
    exp_bits: u32,
    /// Significand precision, including the implicit bit.
    precision: u32,
    /// Whether the all-ones exponent encodes inf/NaN (IEEE) or values.
    ieee_special: bool,
    /// Whether there is a sign bit.
    signed: bool,
}

impl Format {
    /// The format of a float scalar.
    pub(crate) fn of(s: Scalar) -> Option<Format> {
        let f = |bits, exp_bits, precision, ieee_special, signed| Format {
            bits,
            exp_bits,
            precision,
            ieee_special,
            signed,
        };
        Some(match s {
            Scalar::F16 => f(16, 5, 11, true, true),
            Scalar::BF16 => f(16, 8, 8, true, true),
            Scalar::F32 => f(32, 8, 24, true, true),
            Scalar::TF32 => f(19, 8, 11, true, true),
            Scalar::F64 => f(64, 11, 53, true, true),
            Scalar::F8E4M3FN => f(8, 4, 4, false, true),
            Scalar::F8E5M2 => f(8, 5, 3, true, true),
            Scalar::F8E8M0FNU => f(8, 8, 1, false, false),
            Scalar::F4E2M1FN => f(4, 2, 2, false, true),
            Scalar::F8E5M3FNU => f(8, 5, 4, false, false),
            _ => return None,
        })
    }

    fn bias(&self) -> i32 {
        match (self.exp_bits, self.precision, self.signed) {
            (8, 1, false) => 127,
            (5, 4, false) => 15,
            _ => (1 << (self.exp_bits - 1)) - 1,
        }
    }

    fn mant_bits(&self) -> u32 {
        self.precision - 1
    }
}

/// A decoded float.
enum Class {
    Zero,
    Inf,
    NaN,
    /// value = sig * 2^exp (sig > 0)
    Finite {
        sig: u64,
        exp: i32,
    },
}

fn decode(fmt: Format, bits: u64) -> (bool, Class) {
    let mb = fmt.mant_bits();
    let neg = fmt.signed && (bits >> (fmt.bits - 1)) & 1 == 1;
    let e = ((bits >> mb) & ((1u64 << fmt.exp_bits) - 1)) as i32;
    let m = bits & ((1u64 << mb) - 1);
    let emax = (1i32 << fmt.exp_bits) - 1;
    // Special values.
    if fmt.exp_bits == 8 && fmt.precision == 1 && !fmt.signed {
        // f8E8M0FNU: 2^(e-127), 0xFF is NaN.
        if e == 255 {
            return (false, Class::NaN);
        }
        return (
            false,
            Class::Finite {
                sig: 1,
                exp: e - 127,
            },
        );
    }
    if fmt.ieee_special && e == emax {
        return (neg, if m == 0 { Class::Inf } else { Class::NaN });
    }
    if !fmt.ieee_special && fmt.bits == 8 && e == emax && m == (1u64 << mb) - 1 {
        // FN formats: all-ones is NaN.
        return (neg, Class::NaN);
    }
    let bias = fmt.bias();
    let (sig, exp) = if e == 0 {
        (m, 1 - bias - mb as i32)
    } else {
        (m | (1u64 << mb), e - bias - mb as i32)
    };
    if sig == 0 {
        return (neg, Class::Zero);
    }
    (neg, Class::Finite { sig, exp })
}

/// Little-endian base-2^32 big unsigned integer helpers.
fn big_mul_small(a: &mut Vec<u32>, m: u32) {
    let mut carry: u64 = 0;
    for limb in a.iter_mut() {
        let v = u64::from(*limb) * u64::from(m) + carry;
        *limb = v as u32;
        carry = v >> 32;
    }
    if carry != 0 {
        a.push(carry as u32);
    }
}

fn big_divrem_small(a: &mut Vec<u32>, d: u32) -> u32 {
    let mut rem: u64 = 0;
    for limb in a.iter_mut().rev() {
        let cur = (rem << 32) | u64::from(*limb);
        *limb = (cur / u64::from(d)) as u32;
        rem = cur % u64::from(d);
    }
    while a.last() == Some(&0) {
        a.pop();
    }
    rem as u32
}

fn big_bits(a: &[u32]) -> usize {
    match a.last() {
        None => 0,
        Some(&top) => (a.len() - 1) * 32 + (32 - top.leading_zeros() as usize),
    }
}

/// APFloat-style `toString`.
fn to_string(
    fmt: Format,
    bits: u64,
    precision: usize,
    max_padding: usize,
    truncate_zero: bool,
) -> String {
    let (neg, class) = decode(fmt, bits);
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    let (sig, exp2) = match class {
        Class::Inf => {
            out.push_str("Inf");
            return out;
        }
        Class::NaN => return "NaN".to_string(),
        Class::Zero => {
            if max_padding == 0 {
                if truncate_zero {
                    out.push_str("0.0E+0");
                } else {
                    out.push_str("0.0");
                    for _ in 1..precision {
                        out.push('0');
                    }
                    out.push_str("e+00");
                }
            } else {
                out.push('0');
            }
            return out;
        }
        Class::Finite { sig, exp } => (sig, exp),
    };
    let precision = if precision == 0 {
        2 + fmt.precision as usize * 59 / 196
    } else {
        precision
    };
    // Drop trailing binary zeros.
    let tz = sig.trailing_zeros();
    let sig = sig >> tz;
    let mut exp: i64 = i64::from(exp2) + i64::from(tz);
    let mut big: Vec<u32> = vec![sig as u32, (sig >> 32) as u32];
    while big.last() == Some(&0) {
        big.pop();
    }
    if exp > 0 {
        for _ in 0..exp {
            big_mul_small(&mut big, 2);
        }
        exp = 0;
    } else if exp < 0 {
        for _ in 0..(-exp) {
            big_mul_small(&mut big, 5);
        }
    }
    // exp is now a power of ten.
    let required = (precision * 196).div_ceil(59);
    let mut discard = big_bits(&big).saturating_sub(required) * 59 / 196;
    let mut buffer: Vec<u8> = Vec::new();
    let mut in_trail = true;
    while !big.is_empty() {
        let digit = big_divrem_small(&mut big, 10) as u8;
        if discard > 0 {
            discard -= 1;
            exp += 1;
            continue;
        }
        if in_trail && digit == 0 {
            exp += 1;
        } else {
            in_trail = false;
            buffer.push(b'0' + digit);
        }
    }
    if buffer.is_empty() {
        buffer.push(b'0');
    }
    if buffer.len() > precision {
        let mut first = buffer.len() - precision;
        if buffer[first - 1] < b'5' {
            while first < buffer.len() && buffer[first] == b'0' {
                first += 1;
            }
        } else {
            let mut i = first;
            loop {
                if i == buffer.len() {
                    break;
                }
                if buffer[i] == b'9' {
                    first += 1;
                    i += 1;
                } else {
                    buffer[i] += 1;
                    break;
                }
            }
        }
        exp += first as i64;
        buffer.drain(..first);
        if buffer.is_empty() {
            buffer.push(b'1');
        }
    }
    let digits = buffer.len();
    let scientific = if max_padding == 0 {
        true
    } else if exp >= 0 {
        exp as usize > max_padding || digits + exp as usize > precision
    } else {
        let msd = exp + digits as i64 - 1;
        if msd >= 0 {
            false
        } else {
            (-msd) as usize > max_padding
        }
    };
    if scientific {
        exp += digits as i64 - 1;
        out.push(buffer[digits - 1] as char);
        out.push('.');
        if digits == 1 && truncate_zero {
            out.push('0');
        } else {
            for &d in buffer[..digits - 1].iter().rev() {
                out.push(d as char);
            }
        }
        if !truncate_zero && precision + 1 > digits {
            for _ in 0..(precision + 1 - digits) {
                out.push('0');
            }
        }
        out.push(if truncate_zero { 'E' } else { 'e' });
        out.push(if exp >= 0 { '+' } else { '-' });
        let a = exp.unsigned_abs();
        if truncate_zero {
            out.push_str(&a.to_string());
        } else {
            out.push_str(&format!("{a:02}"));
        }
        return out;
    }
    if exp >= 0 {
        for &d in buffer.iter().rev() {
            out.push(d as char);
        }
        for _ in 0..exp {
            out.push('0');
        }
        return out;
    }
    let unit = (-exp) as usize;
    if unit < digits {
        for &d in buffer[unit..].iter().rev() {
            out.push(d as char);
        }
        out.push('.');
        for &d in buffer[..unit].iter().rev() {
            out.push(d as char);
        }
    } else {
        out.push_str("0.");
        for _ in digits..unit {
            out.push('0');
        }
        for &d in buffer.iter().rev() {
            out.push(d as char);
        }
    }
    out
}

/// Rounds an `f64` to the nearest value of `fmt` (ties to even); returns bits.
fn encode_from_f64(fmt: Format, v: f64) -> Option<u64> {
    if fmt.bits == 64 {
        return Some(v.to_bits());
    }
    if fmt.bits == 32 && fmt.precision == 24 {
        return Some(u64::from((v as f32).to_bits()));
    }
    // Search: enumerate all values for narrow formats (at most 2^19 for tf32,
    // 2^16 for 16-bit). Compare exactly in f64.
    if !v.is_finite() {
        return None;
    }
    if v == 0.0 {
        // Zeros by sign (the search below cannot tell them apart).
        let neg = v.is_sign_negative() && fmt.signed;
        return Some(if neg { 1u64 << (fmt.bits - 1) } else { 0 });
    }
    let n: u64 = 1u64 << fmt.bits;
    let mut best: Option<(f64, u64)> = None;
    for b in 0..n {
        let (neg, c) = decode(fmt, b);
        let val = match c {
            Class::Zero => 0.0,
            Class::Finite { sig, exp } => (sig as f64) * 2f64.powi(exp),
            _ => continue,
        };
        let val = if neg { -val } else { val };
        let d = (val - v).abs();
        match best {
            None => best = Some((d, b)),
            Some((bd, bb)) => {
                if d < bd || (d == bd && b & 1 == 0 && bb & 1 == 1) {
                    best = Some((d, b));
                }
            }
        }
    }
    best.map(|(_, b)| b)
}

fn parses_back(fmt: Format, s: &str, bits: u64) -> bool {
    let Ok(v) = s.parse::<f64>() else {
        return false;
    };
    let back = if fmt.bits == 32 && fmt.precision == 24 {
        match s.parse::<f32>() {
            Ok(f) => Some(u64::from(f.to_bits())),
            Err(_) => None,
        }
    } else {
        encode_from_f64(fmt, v)
    };
    back == Some(bits)
}

/// Formats float bits of scalar kind `s` the way MLIR prints a float attribute.
pub(crate) fn format_float(s: Scalar, bits: u64) -> String {
    let Some(fmt) = Format::of(s) else {
        return format!("0x{bits:X}");
    };
    let mask = if fmt.bits == 64 {
        u64::MAX
    } else {
        (1u64 << fmt.bits) - 1
    };
    let bits = bits & mask;
    let (_, class) = decode(fmt, bits);
    if !matches!(class, Class::Inf | Class::NaN) {
        let s6 = to_string(fmt, bits, 6, 0, false);
        if parses_back(fmt, &s6, bits) {
            return s6;
        }
        let s0 = to_string(fmt, bits, 0, 3, true);
        if s0.contains('.') {
            return s0;
        }
    }
    format!("0x{bits:X}")
}

/// The float value as an `f64` (exact for every supported format), or `None`
/// for NaN.
pub(crate) fn to_f64(s: Scalar, bits: u64) -> Option<f64> {
    match s {
        Scalar::F64 => return Some(f64::from_bits(bits)).filter(|v| !v.is_nan()),
        Scalar::F32 => return Some(f64::from(f32::from_bits(bits as u32))).filter(|v| !v.is_nan()),
        _ => {}
    }
    let fmt = Format::of(s)?;
    let (neg, class) = decode(fmt, bits);
    let v = match class {
        Class::Zero => 0.0,
        Class::Inf => f64::INFINITY,
        Class::NaN => return None,
        Class::Finite { sig, exp } => (sig as f64) * 2f64.powi(exp),
    };
    Some(if neg { -v } else { v })
}

/// Whether the value is negative zero.
pub(crate) fn is_neg_zero(s: Scalar, bits: u64) -> bool {
    match Format::of(s) {
        Some(fmt) => matches!(decode(fmt, bits), (true, Class::Zero)),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_zeros_print_as_numbers() {
        assert_eq!(format_float(Scalar::F16, 0x8000), "-0.000000e+00");
        assert_eq!(format_float(Scalar::F8E4M3FN, 0x80), "-0.000000e+00");
        assert_eq!(format_float(Scalar::F4E2M1FN, 0x8), "-0.000000e+00");
        assert_eq!(format_float(Scalar::F4E2M1FN, 0x0), "0.000000e+00");
        assert_eq!(format_float(Scalar::F4E2M1FN, 0xf), "-6.000000e+00");
    }
}
