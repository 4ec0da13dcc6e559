//! `mmaf_scaled` with f4E2M1FN operands in the PTX emulator, against a CPU
//! reference that decodes f4E2M1FN and the three scale types itself. The
//! kernels of `tests/data/lower/kernels/kernels.py` unpack byte arrays into
//! f4 tiles (`mma_scaled_f4_e8m0`: f8E8M0FNU scales in blocks of 32,
//! `mma_scaled_f4_e4m3`: f8E4M3FN in blocks of 16, `mma_scaled_f4_e5m3`:
//! f8E5M3FNU in blocks of 32) and run on ragged sizes with a K loop on
//! sm_80 (mma.sync), sm_90 (wgmma) and sm_120 (mma.sync, f4 decoded by
//! `cvt.rn.f16x2.e2m1x2`); ptxas assembles them for sm_100a and sm_120a.
//! `mma_scaled_f4_view` loads f4E2M1FN arrays directly (f8E8M0FNU scales). `mma_scaled_f4` multiplies constant f4 ones with f8E8M0FNU
//! scales in blocks of 16.
mod common;
use common::scaled::{accumulated, e4m3, e5m3, e8m0, f4, padded, stride, Rng};

use ptx_emu::{bytes, Device, LaunchConfig, Module, Param};
use tileiras::options::{Gpu, Options};

/// A scale type with its block size.
#[derive(Clone, Copy, Debug)]
enum Scale {
    E8m0,
    E4m3,
    E5m3,
}

impl Scale {
    fn kernel(self) -> &'static str {
        match self {
            Scale::E8m0 => "mma_scaled_f4_e8m0",
            Scale::E4m3 => "mma_scaled_f4_e4m3",
            Scale::E5m3 => "mma_scaled_f4_e5m3",
        }
    }

    fn block(self) -> usize {
        match self {
            Scale::E4m3 => 16,
            _ => 32,
        }
    }

    fn value(self, b: u8) -> f64 {
        match self {
            Scale::E8m0 => e8m0(b),
            Scale::E4m3 => e4m3(b),
            Scale::E5m3 => e5m3(b),
        }
    }

    /// A random finite scale: e8m0 near 1 (2^-20 .. 2^20), e4m3 any finite
    /// byte (negative and subnormal ones too), e5m3 any but NaN.
    fn random(self, rng: &mut Rng) -> u8 {
        let b = rng.next() as u8;
        match self {
            Scale::E8m0 => 107 + b % 41,
            Scale::E4m3 if b & 0x7f == 0x7f => 0x38,
            Scale::E5m3 if b == 0xff => 0x78,
            _ => b,
        }
    }
}

/// Kernel `name` of `tests/data/lower/kernels`, verified and lowered for
/// `gpu`.
fn lower(name: &str, gpu: Gpu) -> String {
    let path = common::repo().join(format!("tests/data/lower/kernels/{name}.tileir"));
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let module = tileiras::bytecode::read(&data).expect("bytecode");
    tileiras::verify::verify(&module).expect("verifies");
    let options = Options {
        gpu,
        ..Default::default()
    };
    tileiras::lower::lower(&module, &options).unwrap_or_else(|e| panic!("{name} {gpu}: {e}"))
}

/// The bytes of f4 codes `v` (rows of even length), two a byte, element
/// `2q` in the low nibble.
fn pack(v: &[u8]) -> Vec<u8> {
    v.chunks(2).map(|p| (p[0] & 0xf) | (p[1] << 4)).collect()
}

/// How a kernel takes its f4 operands.
#[derive(Clone, Copy, PartialEq)]
enum Operands {
    /// uint8 arrays of packed bytes, `[rows, cols / 2]`.
    Bytes,
    /// f4E2M1FN arrays `[rows, cols]` (rows padded to 32 elements).
    F4,
}

/// Runs kernel `name` (PTX `text`, f4 operands as `how`, scales `scale`)
/// on `m x k` by `k x n` and checks every element of C against the
/// reference and C's row padding.
fn run_kernel(
    text: &str,
    name: &str,
    how: Operands,
    scale: Scale,
    (m, n, k): (usize, usize, usize),
    seed: u64,
) {
    let what = format!("{name} {m}x{n}x{k}");
    let module = Module::parse(text).unwrap_or_else(|e| panic!("{what}: {e}"));
    let kb = k / scale.block();
    let mut rng = Rng(seed);
    let a: Vec<u8> = (0..m * k).map(|_| rng.next() as u8 & 0xf).collect();
    let b: Vec<u8> = (0..k * n).map(|_| rng.next() as u8 & 0xf).collect();
    let mut a_scale: Vec<u8> = (0..m * kb).map(|_| scale.random(&mut rng)).collect();
    let b_scale: Vec<u8> = (0..kb * n).map(|_| scale.random(&mut rng)).collect();
    // One NaN scale: row 2 of C is NaN.
    a_scale[2 * kb + kb - 1] = 0xff;

    let mut dev = Device::new();
    let mut params = Vec::new();
    let mut arr = |dev: &mut Device, data: &[u8], shape: [usize; 2], row_stride: usize| {
        let p = dev.alloc_from(data);
        params.push(Param::U64(p.addr()));
        params.extend([shape[0], shape[1], row_stride, 1].map(|x| Param::U32(x as u32)));
        p
    };
    // Operand padding bytes are 6s, scale padding NaN: neither is read.
    // An f4 array's row stride (in elements) is a multiple of 32, its
    // bytes those of the packed uint8 array with rows of half as many.
    let operand = |codes: &[u8], rows: usize, cols: usize| {
        let bytes = padded(&pack(codes), rows, cols / 2, 0x77);
        match how {
            Operands::Bytes => (bytes, [rows, cols / 2], stride(cols / 2)),
            Operands::F4 => (bytes, [rows, cols], 2 * stride(cols / 2)),
        }
    };
    let (ab, ashape, astride) = operand(&a, m, k);
    let (bb, bshape, bstride) = operand(&b, k, n);
    arr(&mut dev, &ab, ashape, astride);
    arr(
        &mut dev,
        &padded(&a_scale, m, kb, 0xff),
        [m, kb],
        stride(kb),
    );
    arr(&mut dev, &bb, bshape, bstride);
    arr(&mut dev, &padded(&b_scale, kb, n, 0xff), [kb, n], stride(n));
    let sentinel = -12345.0f32;
    let c0 = bytes::from_f32(&vec![sentinel; m * stride(n)]);
    let pc = arr(&mut dev, &c0, [m, n], stride(n));
    let entry = module.kernel(name).expect("entry");
    let cfg = LaunchConfig {
        grid: (m.div_ceil(64) as u32, n.div_ceil(64) as u32, 1),
        block: entry.reqntid.expect("reqntid"),
        cluster: (1, 1, 1),
        dynamic_smem: 0,
    };
    dev.launch(&module, name, cfg, &params)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let c = bytes::to_f32(&dev.read(pc));

    let mut bad = 0;
    for i in 0..m {
        for j in n..stride(n) {
            assert_eq!(
                c[i * stride(n) + j].to_bits(),
                sentinel.to_bits(),
                "{what}: padding c[{i}, {j}] written"
            );
        }
        for j in 0..n {
            let (mut want, mut mag) = (0.0f64, 0.0f64);
            for q in 0..k {
                let x = f4(a[i * k + q]) * scale.value(a_scale[i * kb + q / scale.block()]);
                let y = f4(b[q * n + j]) * scale.value(b_scale[(q / scale.block()) * n + j]);
                want += x * y;
                mag += (x * y).abs();
            }
            let got = f64::from(c[i * stride(n) + j]);
            // f32 accumulation of k exact products.
            if !accumulated(got, want, mag) {
                if bad < 10 {
                    eprintln!("{what} c[{i}, {j}]: got {got}, want {want} (magnitude {mag})");
                }
                bad += 1;
            }
        }
    }
    assert_eq!(bad, 0, "{what}: {bad} wrong elements of {}", m * n);
}

/// Every scale type's kernel on `gpu`, and the one loading f4 arrays
/// directly, on a ragged size and one that fills whole tiles.
fn run_all(gpu: Gpu) {
    for (s, scale) in [Scale::E8m0, Scale::E4m3, Scale::E5m3]
        .into_iter()
        .enumerate()
    {
        let name = scale.kernel();
        let text = lower(name, gpu);
        run_kernel(
            &text,
            name,
            Operands::Bytes,
            scale,
            (100, 70, 96),
            11 + s as u64,
        );
        run_kernel(
            &text,
            name,
            Operands::Bytes,
            scale,
            (64, 128, 128),
            23 + s as u64,
        );
    }
    let name = "mma_scaled_f4_view";
    let text = lower(name, gpu);
    for (mnk, seed) in [
        ((100, 70, 96), 31),
        ((64, 128, 128), 37),
        ((33, 66, 160), 41),
    ] {
        run_kernel(&text, name, Operands::F4, Scale::E8m0, mnk, seed);
    }
}

#[test]
fn f4_matmuls_on_sm80_match_the_reference() {
    run_all(Gpu::Sm80);
}

#[test]
fn f4_matmuls_on_sm90_match_the_reference() {
    let text = lower("mma_scaled_f4_e8m0", Gpu::Sm90);
    assert!(text.contains("wgmma.mma_async"), "sm_90 uses wgmma");
    run_all(Gpu::Sm90);
}

#[test]
fn f4_matmuls_on_sm120_match_the_reference() {
    let text = lower("mma_scaled_f4_e8m0", Gpu::Sm120);
    assert!(
        text.contains("cvt.rn.f16x2.e2m1x2"),
        "sm_120 unpacks in hardware"
    );
    run_all(Gpu::Sm120);
}

#[test]
fn f4_matmuls_assemble_for_sm100_and_sm120() {
    for scale in [Scale::E8m0, Scale::E4m3, Scale::E5m3] {
        for (gpu, arch) in [(Gpu::Sm100, "sm_100a"), (Gpu::Sm120, "sm_120a")] {
            let text = lower(scale.kernel(), gpu);
            common::assemble(&text, &["-arch", arch, "--opt-level", "3"]);
        }
    }
}

/// Constant f4 ones: c[i, j] = sum_k a_scale[i, k / 16] * b_scale[k / 16, j]
/// (as powers of two).
#[test]
fn f4_constant_operands_multiply_with_their_scales() {
    for gpu in [Gpu::Sm80, Gpu::Sm90] {
        let text = lower("mma_scaled_f4", gpu);
        let module = Module::parse(&text).expect("parses");
        let mut rng = Rng(5);
        let sa: Vec<u8> = (0..64 * 4).map(|_| 120 + (rng.next() % 15) as u8).collect();
        let sb: Vec<u8> = (0..4 * 64).map(|_| 120 + (rng.next() % 15) as u8).collect();
        let mut dev = Device::new();
        let mut params = Vec::new();
        let mut arr = |dev: &mut Device, data: &[u8], rows: usize, cols: usize| {
            let p = dev.alloc_from(data);
            params.push(Param::U64(p.addr()));
            params.extend([rows, cols, stride(cols), 1].map(|x| Param::U32(x as u32)));
            p
        };
        arr(&mut dev, &padded(&sa, 64, 4, 0xff), 64, 4);
        arr(&mut dev, &padded(&sb, 4, 64, 0xff), 4, 64);
        let pc = arr(&mut dev, &vec![0u8; 64 * 64 * 4], 64, 64);
        let cfg = LaunchConfig {
            grid: (1, 1, 1),
            block: module
                .kernel("mma_scaled_f4")
                .and_then(|k| k.reqntid)
                .expect("reqntid"),
            cluster: (1, 1, 1),
            dynamic_smem: 0,
        };
        dev.launch(&module, "mma_scaled_f4", cfg, &params)
            .unwrap_or_else(|e| panic!("{gpu}: {e}"));
        let c = bytes::to_f32(&dev.read(pc));
        for i in 0..64 {
            for j in 0..64 {
                let want: f64 = (0..64)
                    .map(|q| e8m0(sa[i * 4 + q / 16]) * e8m0(sb[(q / 16) * 64 + j]))
                    .sum();
                let got = f64::from(c[i * 64 + j]);
                assert!(
                    (got - want).abs() <= 1e-6 * want,
                    "{gpu} c[{i}, {j}]: {got}, want {want}"
                );
            }
        }
    }
}
