//! Matrix-multiply kernels beyond the reference corpus, written in cuTile
//! Python (`tests/data/lower/kernels/kernels.py`, exported by `gen.py`): a
//! fused bias + ReLU epilogue, a bf16 matmul with a sigmoid-gate epilogue
//! stored as bf16, and an attention kernel with two matmuls around an
//! online softmax; and the f32-to-bool conversion cuTile writes for
//! `astype(bool)`. Each is lowered for sm_80, sm_90 and sm_120, assembled
//! by the real ptxas, and run in the PTX emulator on ragged sizes against
//! CPU references written from the docstrings.
mod common;

use common::launch::Launch;

use ptx_emu::float::{bf16_to_f64, f16_to_f64, f64_to_bf16_rn, f64_to_f16_rn};
use ptx_emu::{bytes, Param};
use tileiras::options::{Gpu, Options};

const TARGETS: [(Gpu, &str); 3] = [
    (Gpu::Sm80, "sm_80"),
    (Gpu::Sm90, "sm_90a"),
    (Gpu::Sm120, "sm_120a"),
];

/// Our PTX for kernel `name` on `gpu`, checked by ptxas.
fn ptx(name: &str, gpu: Gpu, arch: &str) -> tileiras::ptx::Module {
    let path = common::repo().join(format!("tests/data/lower/kernels/{name}.tileir"));
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let m = tileiras::bytecode::read(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
    let options = Options {
        gpu,
        ..Default::default()
    };
    let (module, _) =
        tileiras::lower::lower_module(&m, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
    let text = module.to_text();
    common::assemble(
        &text,
        &[
            "-arch",
            arch,
            "--opt-level",
            "3",
            "--enable-extended-smem=true",
        ],
    );
    module
}

/// Deterministic values in [-1, 1).
fn uniform(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

/// f16 bits and their exact values.
fn f16s(seed: u64, n: usize) -> (Vec<u16>, Vec<f64>) {
    let bits: Vec<u16> = uniform(seed, n).iter().map(|&v| f64_to_f16_rn(v)).collect();
    let vals = bits.iter().map(|&b| f16_to_f64(b)).collect();
    (bits, vals)
}

/// The sum of `|a[i,k] b[k,j]|`, which bounds the accumulation error.
fn matmul(a: &[f64], b: &[f64], m: usize, n: usize, k: usize) -> (Vec<f64>, Vec<f64>) {
    let mut c = vec![0.0; m * n];
    let mut mag = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            for t in 0..k {
                let p = a[i * k + t] * b[t * n + j];
                c[i * n + j] += p;
                mag[i * n + j] += p.abs();
            }
        }
    }
    (c, mag)
}

#[test]
fn matmul_bias_relu_f16_on_ragged_sizes() {
    let (m, n, k) = (100, 72, 80);
    let (ab, a) = f16s(1, m * k);
    let (bb, b) = f16s(2, k * n);
    let bias: Vec<f32> = uniform(3, n).iter().map(|&v| v as f32).collect();
    let (s, mag) = matmul(&a, &b, m, n, k);
    for (gpu, arch) in TARGETS {
        let lowered = ptx("matmul_bias_relu_f16", gpu, arch);
        let mut l = Launch::new();
        l.array(&bytes::from_u16(&ab), &[m, k]);
        l.array(&bytes::from_u16(&bb), &[k, n]);
        l.array(&bytes::from_f32(&bias), &[n]);
        let c = l.array(&bytes::from_f32(&vec![-7.0; m * n]), &[m, n]);
        l.run_lowered(&lowered, "matmul_bias_relu_f16", (2, 2, 1));
        let got = bytes::to_f32(&l.dev.read(c));
        for i in 0..m * n {
            let want = (s[i] + f64::from(bias[i % n])).max(0.0);
            let tol = 1e-6 * (mag[i] + f64::from(bias[i % n].abs())) + 1e-7;
            assert!(
                (f64::from(got[i]) - want).abs() <= tol,
                "{arch} c[{}, {}] = {}, want {want}",
                i / n,
                i % n,
                got[i]
            );
        }
    }
}

#[test]
fn matmul_bf16_sigmoid_gate_on_ragged_sizes() {
    // Row strides are multiples of 8 elements, as the kernel declares.
    let (m, n, k) = (70, 88, 40);
    let ab: Vec<u16> = uniform(4, m * k)
        .iter()
        .map(|&v| f64_to_bf16_rn(v))
        .collect();
    let bb: Vec<u16> = uniform(5, k * n)
        .iter()
        .map(|&v| f64_to_bf16_rn(v))
        .collect();
    let a: Vec<f64> = ab.iter().map(|&x| bf16_to_f64(x)).collect();
    let b: Vec<f64> = bb.iter().map(|&x| bf16_to_f64(x)).collect();
    let (s, _) = matmul(&a, &b, m, n, k);
    for (gpu, arch) in TARGETS {
        let lowered = ptx("matmul_bf16_sigmoid_gate", gpu, arch);
        let mut l = Launch::new();
        l.array(&bytes::from_u16(&ab), &[m, k]);
        l.array(&bytes::from_u16(&bb), &[k, n]);
        let c = l.array(&bytes::from_u16(&vec![0x7fc0; m * n]), &[m, n]);
        l.run_lowered(&lowered, "matmul_bf16_sigmoid_gate", (2, 2, 1));
        let got = bytes::to_u16(&l.dev.read(c));
        for i in 0..m * n {
            let want = s[i] / (1.0 + (-s[i]).exp());
            let g = bf16_to_f64(got[i]);
            // One rounding to bf16 (8 bits), after f32 math: within a bf16 ulp.
            let tol = want.abs() * 2f64.powi(-7) + 1e-6;
            assert!(
                (g - want).abs() <= tol,
                "{arch} c[{}, {}] = {g}, want {want}",
                i / n,
                i % n
            );
        }
    }
}

#[test]
fn attention_f16_matches_softmax_attention() {
    let (sq, sk, d) = (100, 150, 64);
    let scale = 0.125f32;
    let (qb, q) = f16s(6, sq * d);
    let (kb, k) = f16s(7, sk * d);
    let (vb, v) = f16s(8, sk * d);
    // Reference: o = softmax(scale q k^T) v, in f64.
    let mut want = vec![0.0f64; sq * d];
    for i in 0..sq {
        let s: Vec<f64> = (0..sk)
            .map(|j| f64::from(scale) * (0..d).map(|t| q[i * d + t] * k[j * d + t]).sum::<f64>())
            .collect();
        let mx = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let p: Vec<f64> = s.iter().map(|&x| (x - mx).exp()).collect();
        let l: f64 = p.iter().sum();
        for t in 0..d {
            want[i * d + t] = (0..sk).map(|j| p[j] * v[j * d + t]).sum::<f64>() / l;
        }
    }
    for (gpu, arch) in TARGETS {
        let lowered = ptx("attention_f16", gpu, arch);
        let mut l = Launch::new();
        l.array(&bytes::from_u16(&qb), &[sq, d]);
        l.array(&bytes::from_u16(&kb), &[sk, d]);
        l.array(&bytes::from_u16(&vb), &[sk, d]);
        let o = l.array(&bytes::from_f32(&vec![f32::NAN; sq * d]), &[sq, d]);
        l.params.push(Param::U32(scale.to_bits()));
        l.run_lowered(&lowered, "attention_f16", (2, 1, 1));
        let got = bytes::to_f32(&l.dev.read(o));
        for i in 0..sq * d {
            // The probabilities are rounded to f16 (2^-11 relative) before
            // the second matmul; |v| < 1.
            assert!(
                (f64::from(got[i]) - want[i]).abs() <= 2e-3,
                "{arch} o[{}, {}] = {}, want {}",
                i / d,
                i % d,
                got[i],
                want[i]
            );
        }
    }
}

/// The attention kernel keeps its score tile, softmax statistics and both
/// accumulators in registers: ptxas spills nothing, and the matrix
/// multiplies stay on the tensor cores (`mma.sync` on sm_90 too: a chain
/// of products multiplies P from registers there).
#[test]
fn attention_f16_assembles_without_spills() {
    for (gpu, arch, engine, sass_op) in [
        (
            Gpu::Sm80,
            "sm_80",
            "mma.sync.aligned.m16n8k16",
            "HMMA.16816",
        ),
        (
            Gpu::Sm90,
            "sm_90a",
            "mma.sync.aligned.m16n8k16",
            "HMMA.16816",
        ),
    ] {
        let text = ptx("attention_f16", gpu, arch).to_text();
        assert!(text.contains(engine), "{arch}: no {engine}");
        let (cubin, log) = common::assemble(
            &text,
            &[
                "-arch",
                arch,
                "--opt-level",
                "3",
                "--enable-extended-smem=true",
                "-v",
            ],
        );
        assert!(
            log.contains(" 0 bytes spill stores, 0 bytes spill loads"),
            "{arch}: spills\n{log}"
        );
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("k.cubin");
        std::fs::write(&path, cubin).expect("write cubin");
        let sass = std::process::Command::new(common::cuda_root().join("bin/nvdisasm"))
            .arg("-c")
            .arg(&path)
            .output()
            .expect("run nvdisasm");
        let sass = String::from_utf8_lossy(&sass.stdout);
        assert!(sass.contains(sass_op), "{arch}: no {sass_op} in the SASS");
    }
}

#[test]
fn f32_to_bool_is_nonzero_test() {
    // cuTile's astype(bool): x != 0, NaN true, subnormals true; only the
    // first 16 elements are written.
    let a: Vec<f32> = [
        0.0,
        -0.0,
        0.5,
        -0.25,
        1.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e-45,
        -3.0,
        0.0,
        7.5,
        -0.0,
        f32::MIN_POSITIVE,
        2.0,
        0.0,
        9.0,
        0.0,
    ]
    .to_vec();
    for (gpu, arch) in TARGETS {
        let lowered = ptx("f32_to_bool", gpu, arch);
        let mut l = Launch::new();
        l.array(&bytes::from_f32(&a), &[a.len()]);
        let c = l.array(&vec![7u8; a.len()], &[a.len()]);
        l.run_lowered(&lowered, "f32_to_bool", (1, 1, 1));
        let got = l.dev.read(c);
        for (i, &x) in a.iter().enumerate() {
            let want = if i < 16 {
                u8::from(x != 0.0 || x.is_nan())
            } else {
                7
            };
            assert_eq!(got[i], want, "{arch}: c[{i}] for {x}");
        }
    }
}
