//! Paths handed to the C API are bytes: a CUDA root or a ptxas path whose
//! name is not UTF-8 is used like any other.
mod common;

use std::ffi::{c_void, CString, OsStr};
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
    let mut config = tileirasConfig::default();
    // SAFETY: a valid, writable config.
    assert_eq!(
        unsafe { tileirasConfigInit(&mut config) },
        tileirasResult::TILEIRAS_SUCCESS
    );
    config.gpu_name = gpu.as_ptr();
    match field {
        Field::CudaRoot => config.cuda_root = path.as_ptr(),
        Field::Ptxas => config.ptxas_path = path.as_ptr(),
    }
    config.output_kind = tileirasOutputKind::TILEIRAS_OUTPUT_CUBIN as u32;
    let mut prog: tileirasProgram = std::ptr::null_mut();
    let mut size = 0usize;
    // SAFETY: every pointer is valid for the call; the program is destroyed
    // before the block ends.
    let cubin = unsafe {
        let bc = bytes.as_ptr().cast::<c_void>();
        let created = tileirasProgramCreate(&mut prog, &config, bc, bytes.len());
        assert_eq!(created, tileirasResult::TILEIRAS_SUCCESS);
        let compiled = tileirasProgramCompile(prog);
        if compiled != tileirasResult::TILEIRAS_SUCCESS {
            tileirasProgramDestroy(&mut prog);
            return Err(compiled);
        }
        assert_eq!(
            tileirasProgramGetOutputSize(prog, &mut size),
            tileirasResult::TILEIRAS_SUCCESS
        );
        let mut out = vec![0u8; size];
        assert_eq!(
            tileirasProgramGetOutput(prog, out.as_mut_ptr().cast()),
            tileirasResult::TILEIRAS_SUCCESS
        );
        assert_eq!(
            tileirasProgramDestroy(&mut prog),
            tileirasResult::TILEIRAS_SUCCESS
        );
        out
    };
    Ok(cubin)
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
