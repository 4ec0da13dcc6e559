//! Conversions whose rounding modes or sources need more than one `cvt`
//! (kernels `ftof_tf32_modes` and `itof_bf16_i1`, written with cuTile's
//! bytecode encoders in `tests/data/lower/ops/gen.py`):
//! - `ftof` to tf32 under nearest_even, zero and nearest_away, from f32 and
//!   (through f32 rounded to odd) from f64; exact widenings under
//!   nearest_away;
//! - `itof` to bf16 from every integer width, which sm_80 has no `cvt` for
//!   (the integer rounds to f32 to odd first);
//! - `itof` from i1 to f32, f16, f8E4M3FN and f64.
//!
//! Lowered for sm_80 and sm_90, assembled by the real ptxas and run in the
//! PTX emulator, the results are compared bit for bit with references
//! computed here by exact arithmetic.
mod common;

use common::xorshift as values;
use ptx_emu::float::{bf16_to_f64, f16_to_f64, f64_to_bf16_rn, f64_to_f16_rn};
use ptx_emu::{bytes, Device, Module, Param};
use tileiras::options::Gpu;

const N: usize = 128;
const TARGETS: [(Gpu, &str); 2] = [(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")];

#[derive(Clone, Copy, Debug)]
enum Mode {
    Even,
    Zero,
    Away,
}

/// `v` rounded to tf32 (f32's exponent range, 10 mantissa bits) under
/// `mode`, as f32 bits; NaN stays NaN.
fn tf32(v: f64, mode: Mode) -> u32 {
    if v.is_nan() {
        return 0x7fff_ffff;
    }
    let sign = if v.is_sign_negative() { 0x8000_0000 } else { 0 };
    let a = v.abs();
    if a == 0.0 {
        return sign;
    }
    if a.is_infinite() {
        return sign | 0x7f80_0000;
    }
    let e = (a.log2().floor() as i32).clamp(-126, 1023);
    // log2 may be off by one near powers of two: fix e so 2^e <= a < 2^(e+1).
    let e = if 2f64.powi(e) > a {
        e - 1
    } else if 2f64.powi(e + 1) <= a {
        e + 1
    } else {
        e
    };
    let q = 2f64.powi(e.max(-126) - 10);
    let n = a / q;
    let fl = n.floor();
    let frac = n - fl;
    let up = match mode {
        Mode::Zero => false,
        Mode::Away => frac >= 0.5,
        Mode::Even => frac > 0.5 || (frac == 0.5 && fl % 2.0 == 1.0),
    };
    let r = (fl + f64::from(u8::from(up))) * q;
    let max = f64::from(f32::from_bits(0x7f7f_e000));
    let r = if r > max {
        match mode {
            Mode::Zero => max,
            _ => f64::INFINITY,
        }
    } else {
        r
    };
    sign | (r as f32).to_bits()
}

#[test]
fn reference_tf32_rounding() {
    let tie = 1.0 + 2f64.powi(-11);
    assert_eq!(tf32(tie, Mode::Even), 0x3f80_0000);
    assert_eq!(tf32(tie, Mode::Away), 0x3f80_2000);
    assert_eq!(tf32(tie + 2f64.powi(-40), Mode::Even), 0x3f80_2000);
    assert_eq!(tf32(1.0 + 3.0 * 2f64.powi(-11), Mode::Even), 0x3f80_4000);
    assert_eq!(tf32(-1.9999, Mode::Zero), 0xbfff_e000);
    assert_eq!(tf32(1e39, Mode::Even), 0x7f80_0000);
    assert_eq!(tf32(1e39, Mode::Zero), 0x7f7f_e000);
    assert_eq!(tf32(1e-50, Mode::Even), 0);
}

/// Whether `got` is `want` (any NaN for a NaN).
fn same32(got: u32, want: u32) -> bool {
    got == want || (f32::from_bits(got).is_nan() && f32::from_bits(want).is_nan())
}

#[test]
fn ftof_to_tf32_honours_each_rounding_mode() {
    let tie = 1.0 + 2f64.powi(-11);
    let special64 = [
        0.0,
        -0.0,
        tie,
        -tie,
        tie + 2f64.powi(-40),
        tie - 2f64.powi(-50),
        1.0 + 3.0 * 2f64.powi(-11),
        1e39,
        -1e39,
        1e-50,
        f64::NAN,
        f64::INFINITY,
        3.4e38,
        1.0e-40,
        f64::from(f32::from_bits(0x7f7f_f000)),
    ];
    let rand = values(91, N);
    let x64: Vec<f64> = (0..N)
        .map(|i| match special64.get(i) {
            Some(&v) => v,
            None => f64::from_bits(rand[i] >> 2 ^ 0x3800_0000_0000_0000),
        })
        .collect();
    let special32: [u32; 12] = [
        0x3f80_1000,
        0xbf80_1000,
        0x3f80_3000,
        0x3f80_1001,
        0x7f7f_f000,
        0x7f7f_efff,
        0x0000_1000,
        0x0000_3000,
        0x7f80_0001,
        0xff80_0000,
        0x8000_0000,
        0x4049_0fdb,
    ];
    let x32: Vec<u32> = (0..N)
        .map(|i| special32.get(i).copied().unwrap_or(rand[i] as u32))
        .collect();
    let x16: Vec<u16> = rand.iter().map(|&r| (r >> 32) as u16).collect();
    let xbf: Vec<u16> = rand.iter().map(|&r| (r >> 48) as u16).collect();
    for (gpu, arch) in TARGETS {
        let text = common::ops_ptx("ftof_tf32_modes", gpu, arch);
        assert!(text.contains("cvt.rna.tf32.f32"), "{arch}");
        assert_eq!(text.contains("cvt.rz.tf32.f32"), gpu == Gpu::Sm90, "{arch}");
        let m = Module::parse(&text).expect("emulator parses the PTX");
        let mut dev = Device::new();
        let ins = [
            dev.alloc_from(&bytes::from_u32(&x32)),
            dev.alloc_from(&bytes::from_f64(&x64)),
            dev.alloc_from(&bytes::from_u16(&x16)),
            dev.alloc_from(&bytes::from_u16(&xbf)),
        ];
        let out = dev.alloc(8 * 4 * N);
        let out64 = dev.alloc(8 * N);
        let params: Vec<Param> = ins
            .iter()
            .chain([&out, &out64])
            .map(|p| Param::U64(p.addr()))
            .collect();
        dev.launch_grid(&m, "ftof_tf32_modes", (1, 1, 1), &params)
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        let got = bytes::to_u32(&dev.read(out));
        let got64 = dev.read(out64);
        for i in 0..N {
            let f = f64::from(f32::from_bits(x32[i]));
            let h = f16_to_f64(x16[i]);
            let b = bf16_to_f64(xbf[i]);
            let want = [
                tf32(f, Mode::Even),
                tf32(f, Mode::Zero),
                tf32(f, Mode::Away),
                tf32(x64[i], Mode::Even),
                tf32(x64[i], Mode::Zero),
                (h as f32).to_bits(),
                (b as f32).to_bits(),
                (h as f32).to_bits(),
            ];
            for (r, &w) in want.iter().enumerate() {
                let g = got[r * N + i];
                assert!(
                    same32(g, w),
                    "{arch}: row {r} at {i} (f32 {:#010x}, f64 {:e}): got {g:#010x}, want {w:#010x}",
                    x32[i],
                    x64[i]
                );
            }
            let g = f64::from_le_bytes(got64[8 * i..8 * i + 8].try_into().unwrap());
            assert!(
                g.to_bits() == f.to_bits() || (g.is_nan() && f.is_nan()),
                "{arch}: f64 at {i}"
            );
        }
    }
}

/// The integer `v` rounded to the nearest bf16 (ties to even), as bits.
fn int_to_bf16(v: i128) -> u16 {
    let a = v.unsigned_abs();
    let bits = 128 - a.leading_zeros();
    let r = if bits <= 8 {
        a
    } else {
        let shift = bits - 8;
        let (q, rem, half) = (a >> shift, a & ((1 << shift) - 1), 1u128 << (shift - 1));
        let q = if rem > half || (rem == half && q & 1 == 1) {
            q + 1
        } else {
            q
        };
        q << shift
    };
    let f = r as f64;
    f64_to_bf16_rn(if v < 0 { -f } else { f })
}

#[test]
fn itof_to_bf16_from_every_width_and_from_i1() {
    // Ties at each width's scale, values just off them, the extremes.
    let special: [i64; 14] = [
        0,
        1,
        -1,
        255,
        257,
        -259,
        32767,
        0x0101_0000,
        0x0101_0001,
        -0x0103_0000,
        i64::MAX,
        i64::MIN,
        0x0180_0000_0000_0000,
        0x0180_0000_0000_0001,
    ];
    let rand = values(93, N);
    let x: Vec<i64> = (0..N)
        .map(|i| {
            special
                .get(i)
                .copied()
                .unwrap_or(rand[i] as i64 >> (i % 50))
        })
        .collect();
    let b: Vec<u8> = (0..N).map(|i| u8::from(rand[i] >> 40 & 1 == 1)).collect();
    for (gpu, arch) in TARGETS {
        let text = common::ops_ptx("itof_bf16_i1", gpu, arch);
        assert_eq!(text.contains("cvt.rn.bf16.s32"), gpu == Gpu::Sm90, "{arch}");
        let m = Module::parse(&text).expect("emulator parses the PTX");
        let mut dev = Device::new();
        let p8 = dev.alloc_from(&x.iter().map(|&v| v as u8).collect::<Vec<_>>());
        let p16 = dev.alloc_from(&bytes::from_u16(
            &x.iter().map(|&v| v as u16).collect::<Vec<_>>(),
        ));
        let p32 = dev.alloc_from(&bytes::from_u32(
            &x.iter().map(|&v| v as u32).collect::<Vec<_>>(),
        ));
        let p64 = dev.alloc_from(&x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
        let pb = dev.alloc_from(&b);
        let obf = dev.alloc(2 * 7 * N);
        let of32 = dev.alloc(4 * 2 * N);
        let of16 = dev.alloc(2 * N);
        let oe4 = dev.alloc(N);
        let of64 = dev.alloc(8 * N);
        let params =
            [p8, p16, p32, p64, pb, obf, of32, of16, oe4, of64].map(|p| Param::U64(p.addr()));
        dev.launch_grid(&m, "itof_bf16_i1", (1, 1, 1), &params)
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        let gbf = bytes::to_u16(&dev.read(obf));
        let g32 = bytes::to_f32(&dev.read(of32));
        let g16 = bytes::to_u16(&dev.read(of16));
        let ge4 = dev.read(oe4);
        let g64 = dev.read(of64);
        for i in 0..N {
            let v = x[i];
            let ints: [i128; 7] = [
                i128::from(v as i8),
                i128::from(v as u8),
                i128::from(v as i16),
                i128::from(v as i32),
                i128::from(v as u32),
                i128::from(v),
                i128::from(v as u64),
            ];
            for (r, &n) in ints.iter().enumerate() {
                assert_eq!(
                    gbf[r * N + i],
                    int_to_bf16(n),
                    "{arch}: row {r}, integer {n}"
                );
            }
            let one = f64::from(b[i]);
            assert_eq!(g32[i], -one as f32, "{arch}: i1 signed to f32 at {i}");
            assert_eq!(g32[N + i], one as f32, "{arch}: i1 unsigned to f32 at {i}");
            assert_eq!(f16_to_f64(g16[i]), -one, "{arch}: i1 signed to f16 at {i}");
            assert_eq!(
                ge4[i],
                if b[i] == 1 { 0x38 } else { 0 },
                "{arch}: i1 to e4m3 at {i}"
            );
            let d = f64::from_le_bytes(g64[8 * i..8 * i + 8].try_into().unwrap());
            assert_eq!(d, one, "{arch}: i1 unsigned to f64 at {i}");
        }
    }
}

/// The f16 bits nearest `v` toward zero (NaN stays NaN; past the largest
/// finite f16, the largest), found by search over the codes.
fn f16_toward_zero(v: f64) -> u16 {
    if v.is_nan() {
        return 0x7e00;
    }
    let sign = if v.is_sign_negative() { 0x8000 } else { 0 };
    let a = v.abs();
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    // Positive codes increase with their values up to 0x7bff.
    let (mut lo, mut hi) = (0u16, 0x7bffu16);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if f16_to_f64(mid) <= a {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    sign | lo
}

#[test]
fn f16_and_bf16_convert_into_each_other_on_every_target() {
    let rand = values(97, N);
    let h: Vec<u16> = rand.iter().map(|&r| r as u16).collect();
    let b: Vec<u16> = rand
        .iter()
        .map(|&r| (r >> 16) as u16 & 0xc7ff | 0x3800)
        .collect();
    for (gpu, arch) in TARGETS {
        let text = common::ops_ptx("ftof_f16_bf16", gpu, arch);
        assert_eq!(text.contains("cvt.rn.bf16.f16"), gpu == Gpu::Sm90, "{arch}");
        let m = Module::parse(&text).expect("emulator parses the PTX");
        let mut dev = Device::new();
        let ph = dev.alloc_from(&bytes::from_u16(&h));
        let pb = dev.alloc_from(&bytes::from_u16(&b));
        let outb = dev.alloc(2 * 2 * N);
        let outh = dev.alloc(2 * 2 * N);
        let params = [ph, pb, outb, outh].map(|p| Param::U64(p.addr()));
        dev.launch_grid(&m, "ftof_f16_bf16", (1, 1, 1), &params)
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        let mut got = bytes::to_u16(&dev.read(outb));
        got.extend(bytes::to_u16(&dev.read(outh)));
        for i in 0..N {
            let (hv, bv) = (f16_to_f64(h[i]), bf16_to_f64(b[i]));
            let want = [
                f64_to_bf16_rn(hv),
                ((hv as f32).to_bits() >> 16) as u16,
                f64_to_f16_rn(bv),
                f16_toward_zero(bv),
            ];
            for (r, &w) in want.iter().enumerate() {
                let g = got[r * N + i];
                let nan = |x: u16| {
                    if r < 2 {
                        bf16_to_f64(x).is_nan()
                    } else {
                        f16_to_f64(x).is_nan()
                    }
                };
                assert!(
                    g == w || (nan(g) && nan(w)),
                    "{arch}: row {r} at {i} (f16 {:#06x}, bf16 {:#06x}): got {g:#06x}, want {w:#06x}",
                    h[i],
                    b[i]
                );
            }
        }
    }
}
