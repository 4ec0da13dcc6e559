//! Dense constants: element bits and their nested `[...]` text.
use super::*;

pub(super) fn nest(shape: &[i64], elems: &[u64], fmt: &dyn Fn(u64) -> String, out: &mut String) {
    if shape.len() <= 1 {
        out.push('[');
        out.push_str(&elems.iter().map(|&v| fmt(v)).collect::<Vec<_>>().join(", "));
        out.push(']');
        return;
    }
    let inner: usize = shape[1..]
        .iter()
        .map(|&d| d.max(0) as usize)
        .product::<usize>()
        .max(1);
    out.push('[');
    for (i, chunk) in elems.chunks(inner).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        nest(&shape[1..], chunk, fmt, out);
    }
    out.push(']');
}

/// Sign-extends the low `w` bits of `v`.
pub(super) fn sext(v: u64, w: u32) -> i64 {
    if w == 0 || w >= 64 {
        return v as i64;
    }
    let shift = 64 - w;
    ((v << shift) as i64) >> shift
}

/// Splits raw constant bytes into `n` element bit patterns (a one-element
/// buffer is a splat and expands).
pub(crate) fn dense_bits(s: Scalar, data: &[u8], n: usize) -> Vec<u64> {
    dense_elements_capped(s, data, n as u64, 1 << 26)
}

/// Splits raw constant bytes into element bit patterns (a splat buffer of one
/// element expands to `n` copies, capped for printing).
pub(super) fn dense_elements(s: Scalar, data: &[u8], n: u64) -> Vec<u64> {
    dense_elements_capped(s, data, n, 1 << 20)
}

pub(super) fn dense_elements_capped(s: Scalar, data: &[u8], n: u64, cap: u64) -> Vec<u64> {
    let n = n.min(cap) as usize;
    if s == Scalar::I1 {
        // One byte 0x00/0xFF is a splat; otherwise bits are packed LSB first.
        if data.len() == 1 && (data[0] == 0 || data[0] == 0xff) {
            return vec![u64::from(data[0] != 0); n.max(1)];
        }
        return (0..n.max(1))
            .map(|i| u64::from(data.get(i / 8).is_some_and(|b| b >> (i % 8) & 1 == 1)))
            .collect();
    }
    let eb = s.bit_width().div_ceil(8) as usize;
    let mut v: Vec<u64> = data
        .chunks(eb)
        .map(|c| {
            let mut x = 0u64;
            for (i, &b) in c.iter().enumerate() {
                x |= u64::from(b) << (8 * i);
            }
            x
        })
        .collect();
    if v.len() == 1 && n > 1 {
        v = vec![v[0]; n];
    }
    v
}
