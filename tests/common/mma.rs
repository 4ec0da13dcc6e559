//! The matrix multiply tests' harness: kernels of
//! `tests/data/lower/ops/gen.py` that compute `d = a @ b + c` over small
//! integers (every sum exact whatever the order) run in the PTX emulator and
//! are checked element by element.
use super::xorshift as values;
use ptx_emu::{bytes, Device, Module, Param};
use tileiras::options::Options;

/// A (`batch x m x k`), B (`batch x k x n`) and C (`batch x m x n`) of
/// f64 values in `[-4, 4]`.
pub fn operands(seed: u64, (batch, m, n, k): (usize, usize, usize, usize)) -> [Vec<f64>; 3] {
    let (sa, sb, sc) = (batch * m * k, batch * k * n, batch * m * n);
    let r = values(seed, sa + sb + sc);
    let small = |v: &u64| (v % 9) as f64 - 4.0;
    [
        r[..sa].iter().map(small).collect(),
        r[sa..sa + sb].iter().map(small).collect(),
        r[sa + sb..].iter().map(small).collect(),
    ]
}

/// How a kernel's operands (A, B) and accumulators (C, D) lie in memory.
pub struct Elems {
    /// Encodes A and B.
    pub ab: fn(&[f64]) -> Vec<u8>,
    /// Encodes C and D.
    pub cd: fn(&[f64]) -> Vec<u8>,
    /// Decodes D.
    pub dec: fn(&[u8]) -> Vec<f64>,
}

pub const F64: Elems = Elems {
    ab: enc_f64,
    cd: enc_f64,
    dec: dec_f64,
};
pub const F32: Elems = Elems {
    ab: enc_f32,
    cd: enc_f32,
    dec: dec_f32,
};
pub const I8_I32: Elems = Elems {
    ab: enc_i8,
    cd: enc_i32,
    dec: dec_i32,
};

/// Lowers ops kernel `name` with `options`, assembles it for `arch`, runs
/// one tile block on `a`, `b`, `c` (stored as `e` says), and checks `d`
/// against the exact product (and, for kernels that also store A after the
/// product, that copy); returns the PTX.
pub fn check(
    name: &str,
    (batch, m, n, k): (usize, usize, usize, usize),
    options: &Options,
    arch: &str,
    e: &Elems,
) -> String {
    let (enc, dec) = (e.cd, e.dec);
    let [a, b, c] = operands(17, (batch, m, n, k));
    let text = super::ops_ptx_with(name, options, arch);
    let module = Module::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut dev = Device::new();
    let pa = dev.alloc_from(&(e.ab)(&a));
    let pb = dev.alloc_from(&(e.ab)(&b));
    let pc = dev.alloc_from(&enc(&c));
    let pd = dev.alloc(c.len() * enc(&[0.0]).len());
    let keeps_a = text.contains(&format!("{name}_param_4"));
    let pe = dev.alloc(a.len() * (e.ab)(&[0.0]).len());
    let mut params = vec![pa, pb, pc, pd]
        .into_iter()
        .map(|p| Param::U64(p.addr()))
        .collect::<Vec<_>>();
    if keeps_a {
        params.push(Param::U64(pe.addr()));
    }
    dev.launch_grid(&module, name, (1, 1, 1), &params)
        .unwrap_or_else(|e| panic!("{name} {arch}: {e}"));
    let d = dec(&dev.read(pd));
    for z in 0..batch {
        let (a, b) = (&a[z * m * k..], &b[z * k * n..]);
        for i in 0..m {
            for j in 0..n {
                let at = (z * m + i) * n + j;
                let want = c[at] + (0..k).map(|t| a[i * k + t] * b[t * n + j]).sum::<f64>();
                assert_eq!(d[at], want, "{name} {arch}: d[{z}, {i}, {j}]");
            }
        }
    }
    if keeps_a {
        assert_eq!(dev.read(pe), (e.ab)(&a), "{name} {arch}: the copy of A");
    }
    text
}

pub fn enc_i8(x: &[f64]) -> Vec<u8> {
    x.iter().map(|&v| v as i8 as u8).collect()
}

pub fn enc_i32(x: &[f64]) -> Vec<u8> {
    x.iter().flat_map(|&v| (v as i32).to_le_bytes()).collect()
}

pub fn dec_i32(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(4)
        .map(|w| f64::from(i32::from_le_bytes([w[0], w[1], w[2], w[3]])))
        .collect()
}

pub fn enc_f64(x: &[f64]) -> Vec<u8> {
    bytes::from_f64(x)
}

pub fn dec_f64(b: &[u8]) -> Vec<f64> {
    bytes::to_f64(b)
}

pub fn enc_f32(x: &[f64]) -> Vec<u8> {
    bytes::from_f32(&x.iter().map(|&v| v as f32).collect::<Vec<_>>())
}

pub fn dec_f32(b: &[u8]) -> Vec<f64> {
    bytes::to_f32(b).into_iter().map(f64::from).collect()
}

/// f16 A and B with f32 C and D.
pub const F16_F32: Elems = Elems {
    ab: enc_f16,
    cd: enc_f32,
    dec: dec_f32,
};
/// f32 A and B (rounded to a narrower type in the kernel) with f16 C and D.
pub const F32_F16: Elems = Elems {
    ab: enc_f32,
    cd: enc_f16,
    dec: dec_f16,
};
/// f16 throughout.
pub const F16: Elems = Elems {
    ab: enc_f16,
    cd: enc_f16,
    dec: dec_f16,
};

/// The f16 codes of integers below 2048 in magnitude (exact in f16).
pub fn enc_f16(x: &[f64]) -> Vec<u8> {
    x.iter()
        .flat_map(|&v| {
            assert!(
                v.fract() == 0.0 && v.abs() < 2048.0,
                "{v} is not a small integer"
            );
            let sign = if v < 0.0 { 0x8000u16 } else { 0 };
            let a = v.abs() as u32;
            let code = if a == 0 {
                sign
            } else {
                let e = 31 - a.leading_zeros();
                sign | ((e + 15) << 10 | (a << (10 - e)) & 0x3ff) as u16
            };
            code.to_le_bytes()
        })
        .collect()
}

/// The values of f16 codes (normal numbers and zeros).
pub fn dec_f16(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(2)
        .map(|w| {
            let c = u16::from_le_bytes([w[0], w[1]]);
            let (e, m) = (i32::from(c >> 10 & 0x1f), f64::from(c & 0x3ff));
            let mag = if e == 0 {
                m * 2f64.powi(-24)
            } else {
                (1.0 + m / 1024.0) * 2f64.powi(e - 15)
            };
            if c & 0x8000 != 0 {
                -mag
            } else {
                mag
            }
        })
        .collect()
}
