//! `ftoi` (toward zero, saturating) of f8E4M3FN and f8E5M2 tiles to i8,
//! i16, i32 and i64, signed and unsigned (kernel `ftoi_f8`, written with
//! cuTile's bytecode encoders in `tests/data/lower/ops/gen.py`), over all
//! 256 codes of each format. The f8 decodes to f32 (by bit manipulation on
//! sm_80, by the `cvt` f8 forms on sm_90), which `cvt.rzi` converts:
//! out-of-range values clamp to the integer's range, NaN becomes 0.
//! Lowered, assembled by the real ptxas and run in the PTX emulator, the
//! results are compared bit for bit with a model written here.
mod common;

use common::scaled::{e4m3, e5m2};
use ptx_emu::{bytes, Device, Module, Param};
use tileiras::options::Gpu;

/// The targets: sm_80 decodes on the bits, sm_90 with `cvt.rn.f16x2.e4m3x2`
/// and `.e5m2x2`.
const TARGETS: [(Gpu, &str); 2] = [(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")];

/// The PTX of ops kernel `name` for `gpu`, checked by the verifier and by
/// ptxas for `arch` (see [`common::ops_ptx`]).
fn ptx(name: &str, gpu: Gpu, arch: &str) -> String {
    common::ops_ptx(name, gpu, arch)
}

/// Checks which f8 decoding the PTX for `arch` uses.
fn check_decoding(text: &str, arch: &str) {
    let hardware = ["cvt.rn.f16x2.e4m3x2", "cvt.rn.f16x2.e5m2x2"];
    for form in hardware {
        assert_eq!(text.contains(form), arch != "sm_80", "{arch}: {form}");
    }
}

/// `v` converted to an integer of `bits` bits (`signed` or not) toward
/// zero, clamped to the integer's range, NaN to 0; returned as the
/// integer's bits, zero-extended.
fn ftoi(v: f64, bits: u32, signed: bool) -> u64 {
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    if v.is_nan() {
        return 0;
    }
    let t = v.trunc();
    let r = if signed {
        let (lo, hi) = (
            -(2f64.powi(bits as i32 - 1)),
            2f64.powi(bits as i32 - 1) - 1.0,
        );
        (t.clamp(lo, hi) as i64) as u64
    } else {
        let hi = 2f64.powi(bits as i32) - 1.0;
        t.clamp(0.0, hi) as u64
    };
    r & mask
}

#[test]
fn reference_ftoi_saturates_and_truncates() {
    assert_eq!(ftoi(-3.75, 8, true), 0xfd);
    assert_eq!(ftoi(-3.75, 8, false), 0);
    assert_eq!(ftoi(448.0, 8, true), 0x7f);
    assert_eq!(ftoi(448.0, 8, false), 0xff);
    assert_eq!(ftoi(-448.0, 8, true), 0x80);
    assert_eq!(ftoi(57344.0, 16, true), 0x7fff);
    assert_eq!(ftoi(57344.0, 16, false), 57344);
    assert_eq!(ftoi(f64::NEG_INFINITY, 64, true), 1 << 63);
    assert_eq!(ftoi(f64::INFINITY, 32, false), 0xffff_ffff);
    assert_eq!(ftoi(f64::NAN, 32, true), 0);
    assert_eq!(ftoi(0.875, 32, true), 0);
}

#[test]
fn ftoi_of_every_f8_code_matches_the_reference() {
    let codes: Vec<u8> = (0..=255).collect();
    let widths = [8u32, 16, 32, 64];
    for (gpu, arch) in TARGETS {
        let text = ptx("ftoi_f8", gpu, arch);
        check_decoding(&text, arch);
        // nearest_int_to_zero, the one rounding the verifier allows ftoi.
        for form in [
            "cvt.rzi.s8.f32",
            "cvt.rzi.u16.f32",
            "cvt.rzi.s32.f32",
            "cvt.rzi.u64.f32",
        ] {
            assert!(text.contains(form), "{arch}: no {form}");
        }
        let m = Module::parse(&text).expect("emulator parses the PTX");
        let mut dev = Device::new();
        let input = dev.alloc_from(&codes);
        let outs: Vec<_> = widths
            .iter()
            .map(|&w| dev.alloc(4 * 256 * w as usize / 8))
            .collect();
        let params: Vec<Param> = std::iter::once(&input)
            .chain(outs.iter())
            .map(|p| Param::U64(p.addr()))
            .collect();
        dev.launch_grid(&m, "ftoi_f8", (1, 1, 1), &params)
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        for (&w, p) in widths.iter().zip(&outs) {
            let raw = dev.read(*p);
            let got: Vec<u64> = match w {
                8 => raw.iter().map(|&b| u64::from(b)).collect(),
                16 => bytes::to_u16(&raw).into_iter().map(u64::from).collect(),
                32 => bytes::to_u32(&raw).into_iter().map(u64::from).collect(),
                _ => raw
                    .chunks_exact(8)
                    .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
                    .collect(),
            };
            let rows = [
                (e4m3 as fn(u8) -> f64, true),
                (e4m3, false),
                (e5m2, true),
                (e5m2, false),
            ];
            for (k, (value, signed)) in rows.into_iter().enumerate() {
                for &c in &codes {
                    let want = ftoi(value(c), w, signed);
                    let g = got[k * 256 + usize::from(c)];
                    assert_eq!(
                        g,
                        want,
                        "{arch}: row {k} (signed {signed}) to i{w} of code {c:#04x} ({})",
                        value(c)
                    );
                }
            }
        }
    }
}
