//! The nvdisasm adapter on real cubins, and its failures.
mod common;

use std::time::Duration;

use common::*;
use tileiras::env::Gates;
use tileiras::toolchain::nvdisasm::{self, split_command, DisasmJob, EMPTY_COMMAND_MESSAGE};
use tileiras::toolchain::ptxas::{self, HostCode, PtxasJob};
use tileiras::toolchain::{ToolError, Toolkit};
use tileiras::{Options, Status};

fn reference_cubin(kernel: &str) -> Vec<u8> {
    let mut j = PtxasJob::new(
        corpus_ptx(kernel, "sm_90"),
        &Options::default(),
        &Gates::default(),
    );
    j.host_code = Some(HostCode::File(nvidia(kernel).nv_host));
    ptxas::assemble(&toolkit(), &j).unwrap().cubin
}

/// NVIDIA's sm_90 build of a corpus kernel.
fn nvidia(kernel: &str) -> nvidia_reference::Build {
    nvidia_reference::build(kernel, "sm_90").unwrap()
}

#[test]
fn sass_matches_nvidias() {
    let tk = toolkit();
    for kernel in ["arith_f32", "matmul_f16_tma"] {
        let cubin = reference_cubin(kernel);
        let sass = nvdisasm::disassemble(&tk, &cubin, Some(Duration::from_secs(120))).unwrap();
        let reference = nvidia(kernel).sass();
        assert!(reference.contains("EXIT"), "{reference}");
        assert_eq!(nvidia_reference::squeeze(&sass), reference, "{kernel}");
    }
}

#[test]
fn temporary_cubin_is_removed_and_a_callers_file_is_kept() {
    let tk = toolkit();
    let cubin = reference_cubin("arith_f32");
    let tmp = tempfile::tempdir().unwrap();
    let job = DisasmJob {
        temp_dir: Some(tmp.path().to_owned()),
        ..DisasmJob::default()
    };
    let a = nvdisasm::dump_sass(&tk, &cubin, &job).unwrap();
    assert!(
        a.contains(".text.arith_f32") || a.contains("arith_f32"),
        "{a}"
    );
    assert!(entries(tmp.path()).is_empty());

    let file = tmp.path().join("mine.cubin");
    std::fs::write(&file, &cubin).unwrap();
    let job = DisasmJob {
        cubin_path: Some(file.clone()),
        ..DisasmJob::default()
    };
    let b = nvdisasm::dump_sass(&tk, &[], &job).unwrap();
    assert_eq!(a, b);
    assert!(file.exists());
}

#[test]
fn empty_command_is_rejected() {
    for cmd in ["", "   ", "\t\n"] {
        let job = DisasmJob {
            command: cmd.into(),
            ..DisasmJob::default()
        };
        let e = nvdisasm::dump_sass(&toolkit(), b"x", &job).unwrap_err();
        assert_eq!(e.to_string(), EMPTY_COMMAND_MESSAGE);
        assert_eq!(
            e.to_string(),
            "Please provide a valid dumpSassCommand. For example, `nvdisasm -c`."
        );
        assert_eq!(tileiras::Error::from(e).status(), Status::CompileFailed);
    }
}

#[test]
fn command_words() {
    assert_eq!(split_command("nvdisasm -c"), ["nvdisasm", "-c"]);
    assert_eq!(
        split_command("  '/a b/nvdisasm'  -c \"x y\" z\\ w "),
        ["/a b/nvdisasm", "-c", "x y", "z w"]
    );
    assert_eq!(split_command("''"), [""]);
    assert!(split_command(" ").is_empty());
}

#[test]
fn failure_is_a_compile_failure_with_the_tools_text() {
    let tk = toolkit();
    // Real nvdisasm on bytes that are not a cubin.
    let tmp = tempfile::tempdir().unwrap();
    let job = DisasmJob {
        temp_dir: Some(tmp.path().to_owned()),
        ..DisasmJob::default()
    };
    let e = nvdisasm::dump_sass(&tk, b"not a cubin", &job).unwrap_err();
    assert!(matches!(e, ToolError::Failed { .. }), "{e:?}");
    assert!(
        e.to_string().starts_with("nvdisasm failed: exit status"),
        "{e}"
    );
    assert!(!e.tool_output().unwrap().is_empty());
    assert!(entries(tmp.path()).is_empty());
    assert_eq!(tileiras::Error::from(e).status(), Status::CompileFailed);

    // A fake disassembler named in the command, and a timeout.
    let (_d, fake) = fake_tool("hang.sh", "fake-nvdisasm");
    let job = DisasmJob {
        command: format!("{} -c", fake.display()),
        timeout: Some(Duration::from_millis(300)),
        temp_dir: Some(tmp.path().to_owned()),
        ..DisasmJob::default()
    };
    let e = nvdisasm::dump_sass(&tk, b"x", &job).unwrap_err();
    assert_eq!(e.to_string(), "nvdisasm failed: Child timed out");
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn missing_nvdisasm_lists_where_it_looked() {
    let tk = Toolkit::resolve_in(
        &tileiras::toolchain::ToolOverrides {
            ptxas: Some(cuda_root().join("bin/ptxas")),
            nvdisasm: Some("/nonexistent/nvdisasm".into()),
            cuda_root: None,
        },
        &tileiras::toolchain::SearchEnv::from_lookup(|_| None),
    )
    .unwrap();
    let e = nvdisasm::disassemble(&tk, b"x", None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot find nvdisasm; looked in:\n  /nonexistent/nvdisasm (explicit nvdisasm path)\n\
         hint: set CUDA_ROOT to a CUDA toolkit, or install the wheel's `sass` extra \
         (`pip install \"tileiras-rs[sass]\"`, which brings `nvidia-cuda-nvdisasm`)"
    );
}
