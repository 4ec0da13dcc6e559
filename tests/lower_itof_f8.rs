//! `itof` (nearest_even) from i16, i32 and i64, signed and unsigned, to
//! f8E4M3FN and f8E5M2 (kernel `itof_f8`, written with cuTile's bytecode
//! encoders in `tests/data/lower/ops/gen.py`). The integer rounds to f32
//! (exact below 2^24), then to the f8 format, saturating to its largest
//! finite value. Lowered, assembled by the real ptxas and run in the PTX
//! emulator on sm_80 (bit manipulation) and sm_90 (`cvt` f8 forms), the
//! codes are compared with the nearest code found by search here.
mod common;

use common::scaled::{e4m3, e5m2};
use common::xorshift as values;
use ptx_emu::{bytes, Device, Module, Param};
use tileiras::options::Gpu;

const N: usize = 128;

/// A decoder of f8 codes.
type Decode = fn(u8) -> f64;

/// The code of `decode`'s format nearest to `v` (ties to the even code),
/// among the finite codes; beyond the largest, the largest.
fn nearest(v: f64, decode: Decode) -> u8 {
    let mut best: Option<(u8, f64)> = None;
    for c in 0..=255u8 {
        let d = decode(c);
        if !d.is_finite() || (d == 0.0 && c == 0x80) {
            continue;
        }
        let err = (d - v).abs();
        let better = match best {
            None => true,
            Some((b, e)) => err < e || (err == e && c & 1 == 0 && b & 1 == 1),
        };
        if better {
            best = Some((c, err));
        }
    }
    best.unwrap().0
}

#[test]
fn reference_rounds_to_nearest_even_and_saturates() {
    assert_eq!(nearest(1.0, e4m3), 0x38);
    assert_eq!(nearest(-448.0, e4m3), 0xfe);
    assert_eq!(nearest(1e9, e4m3), 0x7e);
    // 4608 lies halfway between 4096 (0x6c) and 5120 (0x6d): even wins;
    // 4609 is past it.
    assert_eq!(nearest(4608.0, e5m2), 0x6c);
    assert_eq!(nearest(4609.0, e5m2), 0x6d);
    assert_eq!(nearest(1e9, e5m2), 0x7b);
    // Zero is +0, never -0.
    assert_eq!(nearest(0.0, e5m2), 0x00);
}

#[test]
fn itof_to_f8_rounds_once_and_saturates() {
    // Small values, ties of both formats (9, 17, 4608, 4609, 464, 480),
    // values past the largest finite ones, and random ones.
    let special: [i64; 24] = [
        0,
        1,
        -1,
        9,
        17,
        -17,
        447,
        448,
        449,
        464,
        465,
        480,
        4607,
        4608,
        4609,
        -4609,
        57343,
        57344,
        61439,
        61440,
        65535,
        -65536,
        1 << 30,
        -(1 << 31),
    ];
    let rand = values(77, N);
    let x: Vec<i64> = (0..N)
        .map(|i| match special.get(i) {
            Some(&v) => v,
            None => (rand[i] as i64 % 140_000) - 70_000,
        })
        .collect();
    let x32: Vec<i32> = x.iter().map(|&v| v as i32).collect();
    let x16: Vec<i16> = x.iter().map(|&v| v as i16).collect();
    for (gpu, arch) in [(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")] {
        let text = common::ops_ptx("itof_f8", gpu, arch);
        assert_eq!(text.contains("e4m3x2.f32"), gpu == Gpu::Sm90, "{arch}");
        let m = Module::parse(&text).expect("emulator parses the PTX");
        let mut dev = Device::new();
        let p32 = dev.alloc_from(&bytes::from_i32(&x32));
        let p16 = dev.alloc_from(&bytes::from_u16(
            &x16.iter().map(|&v| v as u16).collect::<Vec<_>>(),
        ));
        let p64 = dev.alloc_from(&x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
        let out = dev.alloc(7 * N);
        let params = [p32, p16, p64, out].map(|p| Param::U64(p.addr()));
        dev.launch_grid(&m, "itof_f8", (1, 1, 1), &params)
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        let got = dev.read(out);
        for i in 0..N {
            let rows: [(f64, Decode); 7] = [
                (f64::from(x32[i]), e4m3),
                (f64::from(x32[i] as u32), e4m3),
                (f64::from(x32[i]), e5m2),
                (f64::from(x32[i] as u32), e5m2),
                (f64::from(x16[i]), e4m3),
                (x[i] as f64, e5m2),
                (f64::from(x16[i] as u16), e5m2),
            ];
            for (r, (v, decode)) in rows.into_iter().enumerate() {
                assert_eq!(
                    got[r * N + i],
                    nearest(v, decode),
                    "{arch}: row {r}, value {v}"
                );
            }
        }
    }
}
