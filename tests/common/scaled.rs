//! Reference helpers of the block-scaled matrix multiply tests: the values
//! of the narrow float codes (from the formats' definitions, independently
//! of the compiler), the operands' row layout, and the accumulation
//! tolerance.

/// Deterministic xorshift generator.
pub struct Rng(pub u64);

impl Rng {
    /// The next value.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

/// The value of an f8E4M3FN byte (`s eeee mmm`, bias 7, 0x7F/0xFF NaN).
pub fn e4m3(b: u8) -> f64 {
    if b & 0x7f == 0x7f {
        return f64::NAN;
    }
    let (e, m) = (i32::from((b >> 3) & 15), f64::from(b & 7));
    let v = if e == 0 {
        m / 8.0 * 2f64.powi(-6)
    } else {
        (1.0 + m / 8.0) * 2f64.powi(e - 7)
    };
    if b & 0x80 != 0 {
        -v
    } else {
        v
    }
}

/// The value of an f8E5M2 byte (`s eeeee mm`, bias 15).
pub fn e5m2(b: u8) -> f64 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let (e, m) = (i32::from((b >> 2) & 31), f64::from(b & 3));
    sign * match e {
        0 => m / 4.0 * 2f64.powi(-14),
        31 if m == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1.0 + m / 4.0) * 2f64.powi(e - 15),
    }
}

/// The value of an f8E8M0FNU byte: `2^(s - 127)`, 0xFF is NaN.
pub fn e8m0(s: u8) -> f64 {
    if s == 0xff {
        f64::NAN
    } else {
        2f64.powi(i32::from(s) - 127)
    }
}

/// The value of an f8E5M3FNU byte (`eeeee mmm`, unsigned, bias 15,
/// subnormals at exponent field 0, 0xFF NaN).
pub fn e5m3(b: u8) -> f64 {
    if b == 0xff {
        return f64::NAN;
    }
    let (e, m) = (i32::from(b >> 3), f64::from(b & 7));
    if e == 0 {
        m / 8.0 * 2f64.powi(-14)
    } else {
        (1.0 + m / 8.0) * 2f64.powi(e - 15)
    }
}

/// The value of f4E2M1FN code `c` (low nibble: sign bit 3, exponent bits
/// 2..1 with bias 1, mantissa bit 0; exponent 0 is subnormal, `m * 0.5`;
/// no infinities or NaN).
pub fn f4(c: u8) -> f64 {
    let (e, m) = (i32::from((c >> 1) & 3), f64::from(c & 1));
    let v = if e == 0 {
        m / 2.0
    } else {
        (1.0 + m / 2.0) * 2f64.powi(e - 1)
    };
    if c & 8 != 0 {
        -v
    } else {
        v
    }
}

/// Row stride (elements) of an array with `cols` columns: padded to 16,
/// as the kernels assume of every row stride.
pub fn stride(cols: usize) -> usize {
    cols.div_ceil(16) * 16
}

/// `rows x cols` row-major values laid out with [`stride`], the padding
/// filled with `pad`.
pub fn padded<T: Copy>(v: &[T], rows: usize, cols: usize, pad: T) -> Vec<T> {
    let s = stride(cols);
    let mut out = vec![pad; rows * s];
    for r in 0..rows {
        out[r * s..r * s + cols].copy_from_slice(&v[r * cols..(r + 1) * cols]);
    }
    out
}

/// Whether `got` is `want`, a sum of exact products of total magnitude
/// `mag`, up to the order of an f32 accumulation (NaN matches NaN).
pub fn accumulated(got: f64, want: f64, mag: f64) -> bool {
    if want.is_nan() {
        got.is_nan()
    } else {
        (got - want).abs() <= 1e-6 * mag + f64::from(f32::MIN_POSITIVE)
    }
}
