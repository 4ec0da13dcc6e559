//! Paths handed to the C API are bytes: a CUDA root or a ptxas path whose
//! name is not UTF-8 is used like any other.
mod common;

use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use tileiras::capi::*;

/// Which path of the config a test sets.
enum Field {
    CudaRoot,
    Ptxas,
}

/// Compiles the vector add for sm_90 with `field` set to `path`; the cubin,
/// or the failing status.
fn compile_with(field: Field, path: &Path) -> Result<Vec<u8>, tileirasResult> {
    let path = CString::new(path.as_os_str().as_bytes()).unwrap();
    let gpu = CString::new("sm_90").unwrap();
    let bytes =
        std::fs::read(common::corpus().join("vadd_f32_contig/vadd_f32_contig.v13_3.tileir"))
            .unwrap();
    let mut config = common::capi::config();
    config.gpu_name = gpu.as_ptr();
    match field {
        Field::CudaRoot => config.cuda_root = path.as_ptr(),
        Field::Ptxas => config.ptxas_path = path.as_ptr(),
    }
    config.output_kind = tileirasOutputKind::TILEIRAS_OUTPUT_CUBIN as u32;
    common::capi::compile(&config, &bytes)
}

#[test]
fn a_cuda_root_that_is_not_utf8_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(OsStr::from_bytes(b"cuda\xff"));
    std::os::unix::fs::symlink(common::cuda_root(), &root).unwrap();
    let cubin = compile_with(Field::CudaRoot, &root).expect("compiles");
    assert_eq!(&cubin[..4], b"\x7fELF");
}

#[test]
fn a_ptxas_path_that_is_not_utf8_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let ptxas = dir.path().join(OsStr::from_bytes(b"ptxas\xff"));
    std::os::unix::fs::symlink(common::cuda_root().join("bin/ptxas"), &ptxas).unwrap();
    let cubin = compile_with(Field::Ptxas, &ptxas).expect("compiles");
    assert_eq!(&cubin[..4], b"\x7fELF");
    // An explicit path has no fallback: a missing one fails the compile.
    let missing = dir.path().join(OsStr::from_bytes(b"none\xfe"));
    assert!(compile_with(Field::Ptxas, &missing).is_err());
}
