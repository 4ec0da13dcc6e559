//! Element types of the random programs and exact rounding to each.

/// An element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dt {
    F16,
    Bf16,
    F32,
    F64,
    I16,
    I32,
    U32,
    I64,
    Bool,
}

impl Dt {
    /// From the generator's name.
    pub fn parse(s: &str) -> Dt {
        match s {
            "f16" => Dt::F16,
            "bf16" => Dt::Bf16,
            "f32" => Dt::F32,
            "f64" => Dt::F64,
            "i16" => Dt::I16,
            "i32" => Dt::I32,
            "u32" => Dt::U32,
            "i64" => Dt::I64,
            "bool" => Dt::Bool,
            _ => panic!("unknown dtype {s}"),
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Dt::F16 | Dt::Bf16 | Dt::F32 | Dt::F64)
    }

    /// Bytes per element in memory.
    pub fn size(self) -> usize {
        match self {
            Dt::F16 | Dt::Bf16 | Dt::I16 => 2,
            Dt::F32 | Dt::I32 | Dt::U32 => 4,
            Dt::F64 | Dt::I64 => 8,
            Dt::Bool => 1,
        }
    }

    /// Significand bits (with the implicit one), minimum normal exponent
    /// and largest finite value of a float type.
    fn format(self) -> (i32, i32, f64) {
        match self {
            Dt::F16 => (11, -14, 65504.0),
            Dt::Bf16 => (8, -126, (2.0 - 2f64.powi(-7)) * 2f64.powi(127)),
            Dt::F32 => (24, -126, f32::MAX as f64),
            Dt::F64 => (53, -1022, f64::MAX),
            _ => unreachable!("{self:?} is not a float type"),
        }
    }

    /// The largest finite value of a float type.
    pub fn max(self) -> f64 {
        self.format().2
    }

    /// The spacing of this float type's values near `x`.
    pub fn ulp(self, x: f64) -> f64 {
        let (p, emin, _) = self.format();
        let e = if x == 0.0 || !x.is_finite() {
            emin
        } else {
            exponent(x).max(emin)
        };
        2f64.powi(e - (p - 1))
    }

    /// `x` rounded to this type: to nearest even for floats, wrapped for
    /// integers (given as an exact integer value).
    pub fn round(self, x: f64) -> f64 {
        match self {
            Dt::F64 => x,
            Dt::F32 => x as f32 as f64,
            Dt::F16 | Dt::Bf16 => {
                if !x.is_finite() || x == 0.0 {
                    return x;
                }
                let (_, _, max) = self.format();
                let ulp = self.ulp(x);
                let r = (x / ulp).round_ties_even() * ulp;
                if r.abs() > max {
                    f64::INFINITY.copysign(x)
                } else if r == 0.0 {
                    0.0f64.copysign(x)
                } else {
                    r
                }
            }
            _ => unreachable!("{self:?} is not a float type"),
        }
    }

    /// An integer wrapped to this type's width.
    pub fn wrap(self, v: i64) -> i64 {
        match self {
            Dt::I16 => v as i16 as i64,
            Dt::I32 => v as i32 as i64,
            Dt::U32 => v as u32 as i64,
            Dt::I64 => v,
            Dt::Bool => v & 1,
            _ => unreachable!("{self:?} is not an integer type"),
        }
    }

    /// The value's bytes in memory (floats already rounded to the type).
    pub fn encode(self, f: f64, i: i64, out: &mut Vec<u8>) {
        match self {
            Dt::F16 => out.extend(f16_bits(f).to_le_bytes()),
            Dt::Bf16 => out.extend(((f as f32).to_bits() >> 16).to_le_bytes()[..2].iter()),
            Dt::F32 => out.extend((f as f32).to_le_bytes()),
            Dt::F64 => out.extend(f.to_le_bytes()),
            Dt::I16 => out.extend((i as i16).to_le_bytes()),
            Dt::I32 | Dt::U32 => out.extend((i as i32).to_le_bytes()),
            Dt::I64 | Dt::Bool => out.extend(i.to_le_bytes()[..self.size()].iter()),
        }
    }

    /// Element `k` of memory `b`: a float value, or an integer one.
    pub fn decode(self, b: &[u8], k: usize) -> (f64, i64) {
        let s = &b[k * self.size()..(k + 1) * self.size()];
        match self {
            Dt::F16 => (f16_value(u16::from_le_bytes([s[0], s[1]])), 0),
            Dt::Bf16 => (
                f32::from_bits((u16::from_le_bytes([s[0], s[1]]) as u32) << 16) as f64,
                0,
            ),
            Dt::F32 => (f32::from_le_bytes(s.try_into().unwrap()) as f64, 0),
            Dt::F64 => (f64::from_le_bytes(s.try_into().unwrap()), 0),
            Dt::I16 => (0.0, i16::from_le_bytes(s.try_into().unwrap()) as i64),
            Dt::I32 => (0.0, i32::from_le_bytes(s.try_into().unwrap()) as i64),
            Dt::U32 => (0.0, u32::from_le_bytes(s.try_into().unwrap()) as i64),
            Dt::I64 => (0.0, i64::from_le_bytes(s.try_into().unwrap())),
            Dt::Bool => (0.0, s[0] as i64),
        }
    }
}

/// The binary exponent of a finite non-zero `x` (|x| in [2^e, 2^(e+1))).
fn exponent(x: f64) -> i32 {
    let e = ((x.to_bits() >> 52) & 0x7ff) as i32;
    if e == 0 {
        exponent(x * 2f64.powi(64)) - 64
    } else {
        e - 1023
    }
}

/// The f16 bits of a value exactly representable in f16.
fn f16_bits(x: f64) -> u16 {
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    let mag = if x.is_nan() {
        0x7e00
    } else if a.is_infinite() {
        0x7c00
    } else if a < 2f64.powi(-14) {
        (a / 2f64.powi(-24)) as u16
    } else {
        let e = exponent(a);
        (((e + 15) as u16) << 10) | ((a / 2f64.powi(e) - 1.0) * 1024.0) as u16
    };
    sign | mag
}

/// The value of f16 bits.
fn f16_value(b: u16) -> f64 {
    let sign = if b & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((b >> 10) & 0x1f) as i32;
    let m = (b & 0x3ff) as f64;
    sign * match e {
        0 => m * 2f64.powi(-24),
        31 if m == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    }
}
