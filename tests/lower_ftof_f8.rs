//! `ftof` to and from f8E4M3FN and f8E5M2 (kernel `ftof_f8`, written with
//! cuTile's bytecode encoders in `tests/data/lower/ops/gen.py`). It is
//! lowered for sm_80 (software rounding on the bits) and sm_90 (`cvt` f8
//! forms), assembled by the real ptxas and run in the PTX emulator over
//! every f16 and bf16 bit pattern, random f32s and f64s and edge values.
//! Results are compared with an f8 encoder and decoder written here, and
//! the sm_80 bytes with the sm_90 ones (the emulator's
//! `cvt.rn.satfinite.e4m3x2.f32` and `.e5m2x2`).
mod common;

use ptx_emu::float::{bf16_to_f64, f16_to_f64, round, E4M3, E5M2};
use ptx_emu::ir::Rnd;
use ptx_emu::{bytes, Device, Module, Param};
use tileiras::options::{Gpu, Options};

const N: usize = 128;

/// An f8 format: exponent bits, mantissa bits, largest finite encoding and
/// whether it has infinities.
#[derive(Clone, Copy)]
struct F8 {
    ebits: i32,
    mbits: i32,
    max: u8,
    inf: bool,
}

const E4: F8 = F8 {
    ebits: 4,
    mbits: 3,
    max: 0x7e,
    inf: false,
};
const E5: F8 = F8 {
    ebits: 5,
    mbits: 2,
    max: 0x7b,
    inf: true,
};

impl F8 {
    fn bias(self) -> i32 {
        (1 << (self.ebits - 1)) - 1
    }

    /// The value of encoding `b`.
    fn decode(self, b: u8) -> f64 {
        let e = i32::from(b >> self.mbits) & ((1 << self.ebits) - 1);
        let m = f64::from(b & ((1 << self.mbits) - 1));
        let top = (1 << self.ebits) - 1;
        let v = if self.inf && e == top {
            if m == 0.0 {
                f64::INFINITY
            } else {
                f64::NAN
            }
        } else if !self.inf && b & 0x7f == 0x7f {
            f64::NAN
        } else if e == 0 {
            m * 2f64.powi(1 - self.bias() - self.mbits)
        } else {
            (m + f64::from(1 << self.mbits)) * 2f64.powi(e - self.bias() - self.mbits)
        };
        if b & 0x80 != 0 {
            -v
        } else {
            v
        }
    }

    /// `v` rounded to nearest even, saturated to the largest finite value
    /// (infinities too); NaN is 0x7F.
    fn encode(self, v: f64) -> u8 {
        if v.is_nan() {
            return 0x7f;
        }
        let sign = if v.is_sign_negative() { 0x80 } else { 0 };
        let a = v.abs();
        if a >= self.decode(self.max) {
            return sign | self.max;
        }
        let emin = 1 - self.bias();
        let e = (((a.to_bits() >> 52) & 0x7ff) as i32 - 1023).max(emin);
        let q = 2f64.powi(e - self.mbits);
        let n = a / q;
        let fl = n.floor();
        let frac = n - fl;
        let mut k = fl as i64;
        if frac > 0.5 || (frac == 0.5 && k % 2 == 1) {
            k += 1;
        }
        let r = k as f64 * q;
        if r > self.decode(self.max) {
            return sign | self.max;
        }
        if r < 2f64.powi(emin) {
            return sign | k as u8;
        }
        let re = ((r.to_bits() >> 52) & 0x7ff) as i32 - 1023;
        let mant = (r / 2f64.powi(re - self.mbits)) as i64 - (1 << self.mbits);
        sign | (((re + self.bias()) << self.mbits) as u8) | mant as u8
    }
}

/// The PTX of `ftof_f8` for `gpu`, after checking that the verifier
/// accepts the module and ptxas accepts the PTX for `arch`.
fn ptx(gpu: Gpu, arch: &str) -> String {
    let path = common::repo().join("tests/data/lower/ops/ftof_f8.tileir");
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let m = tileiras::bytecode::read(&data).expect("ftof_f8 reads");
    if let Err(e) = tileiras::verify::verify(&m) {
        panic!("ftof_f8 is not valid TileIR: {e:?}");
    }
    let options = Options {
        gpu,
        ..Default::default()
    };
    let text = tileiras::lower::lower(&m, &options).unwrap_or_else(|e| panic!("ftof_f8: {e}"));
    common::assemble(&text, &["-arch", arch, "--opt-level", "3"]);
    text
}

/// Kernel inputs: f32s, f16 and bf16 bits, f64s.
struct Inputs {
    x: Vec<f32>,
    h: Vec<u16>,
    b: Vec<u16>,
    d: Vec<f64>,
}

/// Every f16 bit pattern (widened to f32 for the f32 input) and every bf16
/// one; random f32 bit patterns and f32s near the f8 ranges; edge values.
/// The f64s are the f32s nudged by less than an f32 ulp (up, down or not),
/// so that rounding them twice would go wrong at f8 ties.
fn inputs() -> Inputs {
    let mut x: Vec<f32> = (0..=u16::MAX).map(|h| f16_to_f64(h) as f32).collect();
    let mut h: Vec<u16> = (0..=u16::MAX).collect();
    let mut b: Vec<u16> = (0..=u16::MAX).collect();
    let edges: [f32; 24] = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        448.0,
        -448.0,
        464.0,
        464.001,
        480.0,
        57344.0,
        61440.0,
        -61440.1,
        1e6,
        f32::MAX,
        2f32.powi(-9),
        2f32.powi(-10),
        2f32.powi(-10) * 1.0001,
        2f32.powi(-16),
        -2f32.powi(-17),
        2f32.powi(-17) * 1.0001,
        f32::from_bits(1),
        f32::MIN_POSITIVE,
    ];
    x.extend(edges);
    // Magnitudes 2^-20 .. 2^20: the f8 ranges and around.
    x.extend(common::random_f32s(7, 16 * N - edges.len(), 107, 40));
    common::extend_halves(&mut h, &mut b, x.len(), 11);
    let d = common::nudged_f64s(&x, 13);
    Inputs { x, h, b, d }
}

/// Outputs of one launch sequence: the e4m3 and e5m2 rows (from f32, f16,
/// bf16, f64) and the f32, f16, bf16 and f64 rows (from the f32 row's e4m3
/// and e5m2), each row as long as the inputs.
struct Outputs {
    f8: [[Vec<u8>; 4]; 2],
    f32: [Vec<f32>; 2],
    f16: [Vec<u16>; 2],
    bf16: [Vec<u16>; 2],
    f64: [Vec<f64>; 2],
}

/// Runs `ftof_f8` (PTX `text`) over `inp`, one tile of N at a time.
fn run(text: &str, inp: &Inputs) -> Outputs {
    let m = Module::parse(text).expect("emulator parses the PTX");
    let mut dev = Device::new();
    let mut o = Outputs {
        f8: Default::default(),
        f32: Default::default(),
        f16: Default::default(),
        bf16: Default::default(),
        f64: Default::default(),
    };
    for t in 0..inp.x.len() / N {
        let s = t * N..(t + 1) * N;
        let ins = [
            dev.alloc_from(&bytes::from_f32(&inp.x[s.clone()])),
            dev.alloc_from(&bytes::from_u16(&inp.h[s.clone()])),
            dev.alloc_from(&bytes::from_u16(&inp.b[s.clone()])),
            dev.alloc_from(&bytes::from_f64(&inp.d[s.clone()])),
        ];
        let outs = [4, 4, 2 * 4, 2 * 2, 2 * 2, 2 * 8].map(|w| dev.alloc(w * N));
        let params: Vec<Param> = ins
            .iter()
            .chain(outs.iter())
            .map(|p| Param::U64(p.addr()))
            .collect();
        dev.launch_grid(&m, "ftof_f8", (1, 1, 1), &params)
            .expect("ftof_f8 runs");
        for (rows, p) in o.f8.iter_mut().zip(outs) {
            let f8 = dev.read(p);
            for (k, row) in rows.iter_mut().enumerate() {
                row.extend_from_slice(&f8[k * N..(k + 1) * N]);
            }
        }
        let f32s = bytes::to_f32(&dev.read(outs[2]));
        let f16s = bytes::to_u16(&dev.read(outs[3]));
        let bf16s = bytes::to_u16(&dev.read(outs[4]));
        let f64s = bytes::to_f64(&dev.read(outs[5]));
        for j in 0..2 {
            o.f32[j].extend_from_slice(&f32s[j * N..(j + 1) * N]);
            o.f16[j].extend_from_slice(&f16s[j * N..(j + 1) * N]);
            o.bf16[j].extend_from_slice(&bf16s[j * N..(j + 1) * N]);
            o.f64[j].extend_from_slice(&f64s[j * N..(j + 1) * N]);
        }
        for p in ins.into_iter().chain(outs) {
            dev.free(p);
        }
    }
    o
}

/// Whether `got` is `want` (NaN for NaN; zeros by sign).
fn same(got: f64, want: f64) -> bool {
    (got.is_nan() && want.is_nan()) || got.to_bits() == want.to_bits()
}

/// Checks the outputs of one target against the reference encoder and
/// decoder.
fn check(o: &Outputs, inp: &Inputs, target: &str) {
    for (j, f) in [E4, E5].into_iter().enumerate() {
        let srcs: [Vec<f64>; 4] = [
            inp.x.iter().map(|&v| f64::from(v)).collect(),
            inp.h.iter().map(|&v| f16_to_f64(v)).collect(),
            inp.b.iter().map(|&v| bf16_to_f64(v)).collect(),
            inp.d.clone(),
        ];
        for (k, src) in srcs.iter().enumerate() {
            for (i, &v) in src.iter().enumerate() {
                let (got, want) = (o.f8[j][k][i], f.encode(v));
                assert_eq!(
                    got, want,
                    "{target}: f8 #{j} of source #{k} {v:e}: {got:#04x}, want {want:#04x}"
                );
            }
        }
        for i in 0..inp.x.len() {
            let want = f.decode(o.f8[j][0][i]);
            let got = [
                f64::from(o.f32[j][i]),
                f16_to_f64(o.f16[j][i]),
                bf16_to_f64(o.bf16[j][i]),
                o.f64[j][i],
            ];
            for (t, g) in got.into_iter().enumerate() {
                assert!(
                    same(g, want),
                    "{target}: f8 #{j} {:#04x} widened to type #{t}: {g:e}, want {want:e}",
                    o.f8[j][0][i]
                );
            }
        }
    }
}

#[test]
fn reference_encoder_agrees_with_the_emulators_satfinite_rounding() {
    let inp = inputs();
    for &v in &inp.d {
        for (f, fmt) in [(E4, E4M3), (E5, E5M2)] {
            let emu = round(v, 0.0, Rnd::Rn, fmt, true) as u8;
            assert_eq!(f.encode(v), emu, "{v:e}");
        }
    }
    for b in 0..=255u8 {
        for (f, fmt) in [(E4, E4M3), (E5, E5M2)] {
            assert!(same(f.decode(b), ptx_emu::float::decode(fmt, u64::from(b))));
        }
    }
}

#[test]
fn f8_conversions_match_the_reference_on_sm80_and_sm90() {
    let inp = inputs();
    let sm80 = ptx(Gpu::Sm80, "sm_80");
    let sm90 = ptx(Gpu::Sm90, "sm_90a");
    assert!(!sm80.contains("e4m3x2") && !sm80.contains("e5m2x2"));
    for form in [
        "cvt.rn.satfinite.e4m3x2.f32",
        "cvt.rn.satfinite.e5m2x2.f32",
        "cvt.rn.f16x2.e4m3x2",
        "cvt.rn.f16x2.e5m2x2",
    ] {
        assert!(sm90.contains(form), "sm_90 PTX lacks {form}");
    }
    let software = run(&sm80, &inp);
    let hardware = run(&sm90, &inp);
    check(&hardware, &inp, "sm_90");
    check(&software, &inp, "sm_80");
    // The software rounding is bit-exact with the instruction.
    assert_eq!(software.f8, hardware.f8);
}
