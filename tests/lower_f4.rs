//! 4-bit elements: `ftof`, `itof` and `ftoi` to and from f4E2M1FN through
//! `pack`/`unpack` (kernel `ftof_f4`), i4 extension and truncation (`int4_pack`) and f4
//! tiles through reshape and permute (`f4_permute`), all written with
//! cuTile's bytecode encoders in `tests/data/lower/ops/gen.py`. Each is
//! lowered for sm_80 and sm_90 (conversions on the bits), assembled by the
//! real ptxas (also for sm_100a and sm_120a, whose `cvt` `e2m1x2` forms
//! the emulator lacks) and run in the PTX emulator; results are compared
//! with an f4E2M1FN encoder and decoder and a nibble packer written here
//! from the format's definition: every f4 code, every f16 and bf16 bit
//! pattern, random and edge f32s, f64s near f4 ties.
mod common;
use common::scaled::f4 as f4_value;
use common::xorshift as values;

use ptx_emu::float::{bf16_to_f64, f16_to_f64};
use ptx_emu::{bytes, Device, Module, Param};
use tileiras::options::Gpu;

const N: usize = 128;

/// The f4E2M1FN code nearest to `v` (ties to the even code), magnitudes
/// beyond 6 saturated to 6 with their sign, NaN to +6 (0x7): the code
/// whose value is closest, found by scanning the eight magnitudes.
fn f4_encode(v: f64) -> u8 {
    if v.is_nan() {
        return 0x7;
    }
    let sign = if v.is_sign_negative() { 8 } else { 0 };
    let a = v.abs();
    if a >= 6.0 {
        return sign | 7;
    }
    let mut best = 0u8;
    for c in 1..8u8 {
        let (d, db) = ((f4_value(c) - a).abs(), (f4_value(best) - a).abs());
        if d < db || (d == db && c % 2 == 0) {
            best = c;
        }
    }
    sign | best
}

/// Element `i` of a packed byte array: the low nibble of byte `i / 2` for
/// even `i`, the high nibble for odd.
fn nibble(b: &[u8], i: usize) -> u8 {
    (b[i / 2] >> (4 * (i % 2))) & 0xf
}

/// The bytes holding nibbles `v` (element `2k` in the low nibble).
fn pack(v: &[u8]) -> Vec<u8> {
    v.chunks(2).map(|p| (p[0] & 0xf) | (p[1] << 4)).collect()
}

/// The PTX of ops kernel `name` for `gpu`, checked by the verifier and by
/// ptxas for `arch` (see [`common::ops_ptx`]).
fn ptx(name: &str, gpu: Gpu, arch: &str) -> String {
    common::ops_ptx(name, gpu, arch)
}

/// Launches kernel `name` of `text` once (one tile block) on `inputs`,
/// with output buffers of `outs` bytes; returns the outputs.
fn launch(text: &str, name: &str, inputs: &[Vec<u8>], outs: &[usize]) -> Vec<Vec<u8>> {
    let m = Module::parse(text).expect("emulator parses the PTX");
    let mut dev = Device::new();
    let ins: Vec<_> = inputs.iter().map(|b| dev.alloc_from(b)).collect();
    let outs: Vec<_> = outs.iter().map(|&n| dev.alloc(n)).collect();
    let params: Vec<Param> = ins
        .iter()
        .chain(outs.iter())
        .map(|p| Param::U64(p.addr()))
        .collect();
    dev.launch_grid(&m, name, (1, 1, 1), &params)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    outs.into_iter().map(|p| dev.read(p)).collect()
}

/// Kernel inputs of `ftof_f4`: f32s, f16 and bf16 bits, f64s, i32s.
struct Inputs {
    x: Vec<f32>,
    h: Vec<u16>,
    b: Vec<u16>,
    d: Vec<f64>,
    n: Vec<i32>,
}

/// Every f16 bit pattern (widened to f32 for the f32 input) and every bf16
/// one; f32 edges and random f32s around the f4 range; the f64s are the
/// f32s nudged by less than an f32 ulp, so that rounding them twice would
/// go wrong at f4 ties.
fn inputs() -> Inputs {
    let mut x: Vec<f32> = (0..=u16::MAX).map(|h| f16_to_f64(h) as f32).collect();
    let mut h: Vec<u16> = (0..=u16::MAX).collect();
    let mut b: Vec<u16> = (0..=u16::MAX).collect();
    let edges: [f32; 20] = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        0.25,
        0.2500001,
        -0.75,
        1.25,
        1.75,
        2.5,
        3.5,
        5.0,
        -5.0,
        5.0001,
        6.0,
        7.0,
        f32::MAX,
        f32::from_bits(1),
    ];
    x.extend(edges);
    // Magnitudes 2^-4 .. 2^4: the f4 range and around.
    x.extend(common::random_f32s(7, 8 * N - edges.len(), 123, 8));
    common::extend_halves(&mut h, &mut b, x.len(), 11);
    let d = common::nudged_f64s(&x, 13);
    // Integers: mostly small (-10..=10), some large, the extremes.
    let mut n: Vec<i32> = values(17, x.len())
        .into_iter()
        .map(|r| match r % 4 {
            0 => r as i32,
            _ => (r >> 8) as i32 % 11,
        })
        .collect();
    n[..6].copy_from_slice(&[i32::MIN, i32::MAX, (1 << 24) + 1, -5, 5, 7]);
    Inputs { x, h, b, d, n }
}

/// Whether `got` is `want` (zeros by sign).
fn same(got: f64, want: f64) -> bool {
    got.to_bits() == want.to_bits()
}

/// Runs `ftof_f4` (PTX `text`) over `inp` one tile at a time and checks
/// the packed codes from each source and the values widened from the
/// codes (the 256 bytes, so every pair of codes, repeated).
fn check_ftof(text: &str, inp: &Inputs, target: &str) {
    for t in 0..inp.x.len() / N {
        let s = t * N..(t + 1) * N;
        let codes: Vec<u8> = (0..N / 2).map(|i| ((t * N / 2 + i) % 256) as u8).collect();
        let outs = launch(
            text,
            "ftof_f4",
            &[
                bytes::from_f32(&inp.x[s.clone()]),
                bytes::from_u16(&inp.h[s.clone()]),
                bytes::from_u16(&inp.b[s.clone()]),
                bytes::from_f64(&inp.d[s.clone()]),
                codes.clone(),
                bytes::from_i32(&inp.n[s.clone()]),
            ],
            &[5 * N / 2, 4 * N, 2 * N, 2 * N, 8 * N, 4 * N],
        );
        let srcs: [Vec<f64>; 5] = [
            inp.x[s.clone()].iter().map(|&v| f64::from(v)).collect(),
            inp.h[s.clone()].iter().map(|&v| f16_to_f64(v)).collect(),
            inp.b[s.clone()].iter().map(|&v| bf16_to_f64(v)).collect(),
            inp.d[s.clone()].to_vec(),
            inp.n[s.clone()].iter().map(|&v| f64::from(v)).collect(),
        ];
        for (k, src) in srcs.iter().enumerate() {
            let row = &outs[0][k * N / 2..(k + 1) * N / 2];
            for (i, &v) in src.iter().enumerate() {
                let (got, want) = (nibble(row, i), f4_encode(v));
                assert_eq!(
                    got, want,
                    "{target}: f4 of source #{k} {v:e}: {got:#x}, want {want:#x}"
                );
            }
        }
        let f32s = bytes::to_f32(&outs[1]);
        let f16s = bytes::to_u16(&outs[2]);
        let bf16s = bytes::to_u16(&outs[3]);
        let f64s = bytes::to_f64(&outs[4]);
        let ints = bytes::to_i32(&outs[5]);
        for i in 0..N {
            let c = nibble(&codes, i);
            let want = f4_value(c);
            let got = [
                f64::from(f32s[i]),
                f16_to_f64(f16s[i]),
                bf16_to_f64(bf16s[i]),
                f64s[i],
            ];
            for (k, g) in got.into_iter().enumerate() {
                assert!(
                    same(g, want),
                    "{target}: code {c:#x} widened to type #{k}: {g:e}, want {want:e}"
                );
            }
            assert_eq!(ints[i], want.trunc() as i32, "{target}: ftoi of {c:#x}");
        }
    }
}

#[test]
fn reference_codec_round_trips_and_rounds_ties_to_even() {
    for c in 0..16u8 {
        assert_eq!(f4_encode(f4_value(c)), if c == 8 { 8 } else { c }, "{c:#x}");
    }
    let ties = [
        (0.25, 0x0),
        (0.75, 0x2),
        (1.25, 0x2),
        (1.75, 0x4),
        (2.5, 0x4),
        (3.5, 0x6),
        (5.0, 0x6),
        (-5.0, 0xe),
        (1e9, 0x7),
        (f64::NEG_INFINITY, 0xf),
    ];
    for (v, c) in ties {
        assert_eq!(f4_encode(v), c, "{v}");
    }
}

/// On the bits (sm_80, sm_90) and by the `cvt` `e2m1x2` forms (sm_100a,
/// sm_120a, in the emulator's model of them), the same results.
#[test]
fn f4_conversions_match_the_reference() {
    let inp = inputs();
    for (gpu, arch) in [
        (Gpu::Sm80, "sm_80"),
        (Gpu::Sm90, "sm_90a"),
        (Gpu::Sm100, "sm_100a"),
        (Gpu::Sm120, "sm_120a"),
    ] {
        let text = ptx("ftof_f4", gpu, arch);
        check_ftof(&text, &inp, arch);
    }
}

/// From sm_100a on f4E2M1FN converts by the `cvt` `e2m1x2` forms, which
/// ptxas accepts (the emulator lacks them); before, on the bits.
#[test]
fn f4_kernels_assemble_for_sm100_and_sm120() {
    for name in ["ftof_f4", "int4_pack", "f4_permute", "f4_constant"] {
        for (gpu, arch) in [(Gpu::Sm100, "sm_100a"), (Gpu::Sm120, "sm_120a")] {
            let text = ptx(name, gpu, arch);
            if name == "ftof_f4" {
                for form in ["cvt.rn.satfinite.e2m1x2.f32", "cvt.rn.f16x2.e2m1x2"] {
                    assert!(text.contains(form), "{arch} PTX lacks {form}");
                }
            }
        }
    }
    for (gpu, arch) in [(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")] {
        assert!(!ptx("ftof_f4", gpu, arch).contains("e2m1"), "{arch}");
    }
}

/// i4 to and from wider integers and i1, and `select` of i4 tiles.
#[test]
fn i4_extends_truncates_and_packs() {
    for (gpu, arch) in [(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")] {
        let text = ptx("int4_pack", gpu, arch);
        for seed in [3u64, 5, 9] {
            let codes: Vec<u8> = values(seed, N / 2).into_iter().map(|v| v as u8).collect();
            let x: Vec<i32> = values(seed + 100, N)
                .into_iter()
                .map(|v| v as i32)
                .collect();
            let outs = launch(
                &text,
                "int4_pack",
                &[codes.clone(), bytes::from_i32(&x)],
                &[4 * N, 2 * N, N, N / 2, N / 2, N / 2],
            );
            let sext = bytes::to_i32(&outs[0]);
            let zext = bytes::to_u16(&outs[1]);
            for i in 0..N {
                let c = nibble(&codes, i);
                let signed = if c >= 8 {
                    i32::from(c) - 16
                } else {
                    i32::from(c)
                };
                assert_eq!(sext[i], signed, "{arch}: sext of {c:#x}");
                assert_eq!(zext[i], u16::from(c), "{arch}: zext of {c:#x}");
                assert_eq!(outs[2][i] as i8, signed as i8, "{arch}: i8 sext of {c:#x}");
            }
            let low: Vec<u8> = x.iter().map(|&v| (v & 0xf) as u8).collect();
            assert_eq!(outs[3], pack(&low), "{arch}: trunci to i4, packed");
            let bits: Vec<u8> = (0..N).map(|i| nibble(&codes, i) & 1).collect();
            let ones: Vec<u8> = bits.iter().map(|&b| if b == 1 { 0xf } else { 0 }).collect();
            let sel: Vec<u8> = (0..N)
                .map(|i| if bits[i] == 1 { nibble(&codes, i) } else { 0 })
                .collect();
            assert_eq!(outs[4], pack(&ones), "{arch}: i1 sign-extended to i4");
            assert_eq!(outs[5], pack(&sel), "{arch}: select of i4");
        }
    }
}

#[test]
fn f4_tiles_move_through_reshape_and_permute() {
    for (gpu, arch) in [(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")] {
        let text = ptx("f4_permute", gpu, arch);
        for seed in [1u64, 2, 4] {
            let codes: Vec<u8> = values(seed, N / 2).into_iter().map(|v| v as u8).collect();
            let outs = launch(&text, "f4_permute", std::slice::from_ref(&codes), &[N / 2]);
            // v as 8 x N/8, transposed to N/8 x 8, flattened.
            let cols = N / 8;
            let want: Vec<u8> = (0..N)
                .map(|o| {
                    let (j, i) = (o / 8, o % 8);
                    nibble(&codes, i * cols + j)
                })
                .collect();
            assert_eq!(outs[0], pack(&want), "{arch}: seed {seed}");
        }
    }
}

#[test]
fn f4_constants_join_by_cat() {
    for (gpu, arch) in [(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")] {
        let text = ptx("f4_constant", gpu, arch);
        let outs = launch(&text, "f4_constant", &[], &[N / 2]);
        let want: Vec<u8> = (0..N / 2)
            .map(|i| (3 * i % 16) as u8)
            .chain((0..N / 2).map(|i| ((5 * i + 1) % 16) as u8))
            .collect();
        assert_eq!(outs[0], pack(&want), "{arch}");
    }
}

#[test]
fn f4_and_i4_tiles_print() {
    for (gpu, arch) in [(Gpu::Sm80, "sm_80"), (Gpu::Sm120, "sm_120a")] {
        let text = ptx("print_f4_i4", gpu, arch);
        let codes: Vec<u8> = (0..8u8).map(|i| (2 * i) | ((2 * i + 1) << 4)).collect();
        let m = Module::parse(&text).expect("emulator parses the PTX");
        let mut dev = Device::new();
        let p = dev.alloc_from(&codes);
        let out = dev
            .launch_grid(&m, "print_f4_i4", (1, 1, 1), &[Param::U64(p.addr())])
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        let list = |f: &dyn Fn(u8) -> String| (0..16u8).map(f).collect::<Vec<_>>().join(", ");
        let want = format!(
            "f4 [{}]\ni4 [{}] [{}]\n",
            list(&|c| format!("{:.6}", f4_value(c))),
            list(&|c| format!(
                "{}",
                if c >= 8 {
                    i32::from(c) - 16
                } else {
                    i32::from(c)
                }
            )),
            list(&|c| format!("{c}")),
        );
        assert_eq!(out.printf, want, "{arch}");
    }
}
