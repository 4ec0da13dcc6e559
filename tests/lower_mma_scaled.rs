//! `mmaf_scaled` (block-scaled f8 matmul): the corpus kernel
//! `mma_scaled_mxfp8` lowered for sm_90 (wgmma), sm_80 and sm_120
//! (mma.sync) runs in the PTX emulator on random e4m3 operands and random
//! e8m0 scales (blocks scaled up to 2^60 and down to 2^-60, one NaN scale)
//! and matches a CPU reference that decodes both formats itself; ptxas
//! assembles it without spills.
mod common;

use ptx_emu::{bytes, Device, LaunchConfig, Module, Param};
use tileiras::options::{Gpu, Options};

/// Deterministic xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

/// The value of an f8E4M3FN byte (`s eeee mmm`, bias 7, no infinities).
fn e4m3(b: u8) -> f64 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let (e, m) = (i32::from((b >> 3) & 15), f64::from(b & 7));
    if b & 0x7f == 0x7f {
        return f64::NAN;
    }
    sign * if e == 0 {
        m / 8.0 * 2f64.powi(-6)
    } else {
        (1.0 + m / 8.0) * 2f64.powi(e - 7)
    }
}

/// The value of an f8E8M0FNU byte: `2^(s - 127)`, 0xFF is NaN.
fn e8m0(s: u8) -> f64 {
    if s == 0xff {
        f64::NAN
    } else {
        2f64.powi(i32::from(s) - 127)
    }
}

/// The corpus kernel's bytecode lowered for `gpu`.
fn ptx(gpu: Gpu) -> String {
    let path = common::corpus().join("mma_scaled_mxfp8/mma_scaled_mxfp8.v13_3.tileir");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let module = tileiras::bytecode::read(&bytes).expect("bytecode");
    let options = Options {
        gpu,
        ..Default::default()
    };
    tileiras::lower::lower(&module, &options).unwrap_or_else(|e| panic!("{gpu}: {e}"))
}

/// Random e4m3 bytes, none NaN.
fn operand(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n)
        .map(|_| rng.next() as u8)
        .map(|b| if b & 0x7f == 0x7f { 0x3e } else { b })
        .collect()
}

/// Runs the kernel for `gpu` on `m x k` by `k x n` and checks every element.
fn run(gpu: Gpu, (m, n, k): (usize, usize, usize), seed: u64) {
    let text = ptx(gpu);
    let module = Module::parse(&text).unwrap_or_else(|e| panic!("{gpu}: {e}"));
    let kb = k / 32;
    let mut rng = Rng(seed);
    let a = operand(&mut rng, m * k);
    let b = operand(&mut rng, k * n);
    // Scales near 1 (2^-20 .. 2^20); every fifth row of A and every third
    // column of B has its blocks scaled by 2^+-60 in turn (opposite signs
    // per block, so products of two extremes stay moderate).
    let mut a_scale: Vec<u8> = (0..m * kb).map(|_| rng.range(107, 147) as u8).collect();
    let mut b_scale: Vec<u8> = (0..kb * n).map(|_| rng.range(107, 147) as u8).collect();
    for i in (0..m).step_by(5) {
        for q in 0..kb {
            a_scale[i * kb + q] = if q % 2 == 0 { 187 } else { 67 };
        }
    }
    for j in (0..n).step_by(3) {
        for q in 0..kb {
            b_scale[q * n + j] = if q % 2 == 0 { 67 } else { 187 };
        }
    }
    // One NaN scale: row 2 of C is NaN.
    a_scale[2 * kb + kb - 1] = 0xff;

    let mut dev = Device::new();
    let mut params = Vec::new();
    let mut arr = |dev: &mut Device, data: &[u8], rows: usize, cols: usize| {
        let p = dev.alloc_from(data);
        params.extend([
            Param::U64(p.addr()),
            Param::U32(rows as u32),
            Param::U32(cols as u32),
            Param::U32(cols as u32),
            Param::U32(1),
        ]);
        p
    };
    arr(&mut dev, &a, m, k);
    arr(&mut dev, &a_scale, m, kb);
    arr(&mut dev, &b, k, n);
    arr(&mut dev, &b_scale, kb, n);
    let pc = arr(&mut dev, &bytes::from_f32(&vec![-12345.0; m * n]), m, n);
    let kernel = module.kernel("mma_scaled_mxfp8").expect("entry");
    let cfg = LaunchConfig {
        grid: ((m / 128) as u32, (n / 128) as u32, 1),
        block: kernel.reqntid.expect("reqntid"),
        cluster: (1, 1, 1),
        dynamic_smem: 0,
    };
    dev.launch(&module, "mma_scaled_mxfp8", cfg, &params)
        .unwrap_or_else(|e| panic!("{gpu}: {e}"));
    let c = bytes::to_f32(&dev.read(pc));

    let mut bad = 0;
    for i in 0..m {
        for j in 0..n {
            let (mut want, mut mag) = (0.0f64, 0.0f64);
            for q in 0..k {
                let x = e4m3(a[i * k + q]) * e8m0(a_scale[i * kb + q / 32]);
                let y = e4m3(b[q * n + j]) * e8m0(b_scale[q / 32 * n + j]);
                want += x * y;
                mag += (x * y).abs();
            }
            let got = f64::from(c[i * n + j]);
            // f32 accumulation of k exact products.
            let ok = if want.is_nan() {
                got.is_nan()
            } else {
                (got - want).abs() <= 1e-6 * mag + f64::from(f32::MIN_POSITIVE)
            };
            if !ok {
                if bad < 10 {
                    eprintln!("{gpu} c[{i}, {j}]: got {got}, want {want} (magnitude {mag})");
                }
                bad += 1;
            }
        }
    }
    assert_eq!(bad, 0, "{gpu}: {bad} wrong elements of {}", m * n);
}

#[test]
fn mxfp8_matmul_on_sm90_matches_the_reference() {
    let ptx = ptx(Gpu::Sm90);
    assert!(ptx.contains("wgmma.mma_async"), "no wgmma");
    run(Gpu::Sm90, (256, 128, 256), 11);
}

#[test]
fn mxfp8_matmul_on_sm80_matches_the_reference() {
    let ptx = ptx(Gpu::Sm80);
    assert!(
        ptx.contains("mma.sync.aligned.m16n8k16"),
        "no bf16 mma.sync"
    );
    run(Gpu::Sm80, (128, 256, 256), 12);
}

#[test]
fn mxfp8_matmul_on_sm120_matches_the_reference() {
    run(Gpu::Sm120, (128, 128, 128), 13);
}

/// ptxas assembles the kernel for every family without local memory.
#[test]
fn mxfp8_matmul_assembles_without_spills() {
    for (gpu, arch) in [
        (Gpu::Sm80, "sm_80"),
        (Gpu::Sm90, "sm_90a"),
        (Gpu::Sm100, "sm_100a"),
        (Gpu::Sm120, "sm_120a"),
    ] {
        let (_, log) = common::assemble(
            &ptx(gpu),
            &["-arch", arch, "-v", "--enable-extended-smem=true"],
        );
        assert!(
            log.contains(" 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"),
            "{gpu}: {log}"
        );
    }
}
