//! `tileiras --print-kernel-info`: the launch facts as JSON on stdout, the
//! same as the library's `KernelInfo`s.
mod common;

use std::process::Command;

use tileiras::options::{Gpu, Options, OutputKind};

fn run(input: &std::path::Path, output: &std::path::Path) -> (i32, String, String) {
    run_with(input, output, &[])
}

fn run_with(
    input: &std::path::Path,
    output: &std::path::Path,
    extra: &[&str],
) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tileiras"))
        .env("CUDA_ROOT", common::cuda_root())
        .args(extra)
        .arg("--gpu-name=sm_90")
        .arg("--print-kernel-info")
        .arg(input)
        .arg("-o")
        .arg(output)
        .output()
        .expect("run tileiras");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn prints_the_librarys_kernel_info() {
    let dir = common::Scratch::new("launch-cli");
    let input = common::corpus().join("vadd_f32_contig/vadd_f32_contig.v13_3.tileir");
    for (file, kind, emit) in [
        ("k.cubin", OutputKind::Cubin, "--emit=cubin"),
        ("k.ptx", OutputKind::Ptx, "--emit=ptx"),
    ] {
        let (code, stdout, stderr) = run_with(&input, &dir.path(file), &[emit]);
        assert_eq!(code, 0, "{stderr}");
        assert!(stderr.is_empty(), "{stderr}");
        let options = Options {
            gpu: Gpu::Sm90,
            output: kind,
            cuda_root: Some(common::cuda_root()),
            ..Options::default()
        };
        let lib =
            tileiras::compile(&std::fs::read(&input).unwrap(), &options, &mut |_| {}).unwrap();
        assert_eq!(stdout, tileiras::kernel_info::to_json(&lib.kernels));
        assert!(stdout.starts_with("{\"kernels\": [\n    {\"name\": \"vadd_f32_contig\", \"block\": [128, 1, 1], \"block_is_exact\": true"), "{stdout}");
        assert!(stdout.contains("\"param_bytes\": 48"));
        assert!(stdout.contains("{\"name\": \"vadd_f32_contig_param_3\", \"kind\": \"global_pointer\", \"ptx_type\": \"u64\", \"offset\": 16, \"size\": 8, \"align\": 8}"));
        let registers = if kind == OutputKind::Ptx {
            "\"registers\": null"
        } else {
            "\"registers\": "
        };
        assert!(stdout.contains(registers), "{stdout}");
        assert_eq!(stdout.matches('{').count(), stdout.matches('}').count());
        assert_eq!(stdout.matches('[').count(), stdout.matches(']').count());
    }
    let (code, stdout, _) = run(
        &common::repo().join("tests/data/empty_module.v13_3.tileir"),
        &dir.path("e.cubin"),
    );
    assert_eq!(code, 0);
    assert_eq!(stdout, "{\"kernels\": []}\n");
}

#[test]
fn thread_bound_remark_with_remarks_enabled() {
    let dir = common::Scratch::new("launch-cli-remarks");
    let input = common::corpus().join("vadd_f32_contig/vadd_f32_contig.v13_3.tileir");
    let (code, _, stderr) = run_with(&input, &dir.path("k.cubin"), &["--remarks=all"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.starts_with("loc(\"kernels.py\":"), "{stderr}");
    assert!(
        stderr.contains("remark: entry 'vadd_f32_contig': .reqntid 128: the generated code depends on the exact thread count"),
        "{stderr}"
    );
}
