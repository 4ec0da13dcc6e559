//! The tensor-core matrix multiplies: our PTX for the corpus matmul kernels
//! uses `mma.sync`, and NVIDIA's ptxas turns it into tensor-core SASS
//! (HMMA/IMMA/QMMA/DMMA) without spilling.
mod common;
use std::process::Command;

use tileiras::options::{Gpu, Options};

/// Our PTX for corpus kernel `name` on `gpu`.
fn lower(name: &str, gpu: Gpu) -> String {
    let dir = common::corpus().join(name);
    let path = ["v13_3", "v13_4"]
        .iter()
        .map(|v| dir.join(format!("{name}.{v}.tileir")))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{name}: no bytecode in {}", dir.display()));
    let bytes = std::fs::read(path).expect("read bytecode");
    let module = tileiras::bytecode::read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let options = Options {
        gpu,
        ..Default::default()
    };
    tileiras::lower::lower(&module, &options).unwrap_or_else(|e| panic!("{name} {gpu}: {e}"))
}

/// Assembles `ptx`; returns ptxas' `-v` report and the SASS text.
fn assemble(name: &str, gpu: Gpu, ptx: &str) -> (String, String) {
    let root = common::cuda_root();
    let tmp = tempfile::tempdir().expect("tempdir");
    let src = tmp.path().join(format!("{name}.ptx"));
    let cubin = tmp.path().join(format!("{name}.cubin"));
    std::fs::write(&src, ptx).expect("write ptx");
    let out = Command::new(root.join("bin/ptxas"))
        .arg("-arch")
        .arg(gpu.ptx_target())
        .arg(&src)
        .arg("-o")
        .arg(&cubin)
        .args(["--opt-level", "3", "--enable-extended-smem=true", "-v"])
        .output()
        .expect("run ptxas");
    let report = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{name} {gpu}: {report}");
    let sass = Command::new(root.join("bin/nvdisasm"))
        .arg("-c")
        .arg(&cubin)
        .output()
        .expect("run nvdisasm");
    (report, String::from_utf8_lossy(&sass.stdout).into_owned())
}

fn check(name: &str, gpu: Gpu, sass_op: &str) {
    let ptx = lower(name, gpu);
    assert!(
        ptx.contains("mma.sync.aligned."),
        "{name} {gpu}: no mma.sync"
    );
    let (report, sass) = assemble(name, gpu, &ptx);
    assert!(
        sass.contains(sass_op),
        "{name} {gpu}: no {sass_op} in the SASS"
    );
    assert!(
        report.contains(" 0 bytes spill stores, 0 bytes spill loads"),
        "{name} {gpu}: spills\n{report}"
    );
}

#[test]
fn f16_and_bf16_matmuls_use_hmma() {
    for name in [
        "matmul_f16_divisible",
        "matmul_f16_strided",
        "matmul_f16_f16acc",
        "matmul_f16_tma",
        "matmul_bf16_tma",
        "batched_matmul_f16",
    ] {
        check(name, Gpu::Sm80, "HMMA.16816");
    }
}

#[test]
fn tf32_matmul_uses_hmma() {
    check("matmul_tf32", Gpu::Sm80, "HMMA.1688.F32.TF32");
}

#[test]
fn i8_matmul_uses_imma() {
    check("matmul_i8_i32", Gpu::Sm80, "IMMA.16832");
}

#[test]
fn f64_matmul_uses_dmma() {
    check("matmul_f64_operator", Gpu::Sm80, "DMMA.884");
}

#[test]
fn fp8_matmul_uses_qmma_where_the_target_has_it() {
    for gpu in [Gpu::Sm89, Gpu::Sm120] {
        check("matmul_fp8_e4m3", gpu, "QMMA.16832");
    }
    // sm_80 has no f8 tensor cores: FMAs.
    assert!(!lower("matmul_fp8_e4m3", Gpu::Sm80).contains("mma.sync"));
}

#[test]
fn other_families_assemble_mma_sync() {
    for gpu in [
        Gpu::Sm86,
        Gpu::Sm87,
        Gpu::Sm89,
        Gpu::Sm100,
        Gpu::Sm120,
        Gpu::Sm121,
    ] {
        for name in [
            "matmul_f16_divisible",
            "matmul_tf32",
            "matmul_i8_i32",
            "matmul_f64_operator",
        ] {
            let ptx = lower(name, gpu);
            assemble(name, gpu, &ptx);
        }
    }
}
