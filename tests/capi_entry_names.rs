//! An entry whose name is not a PTX identifier fails the compile through
//! the C API with `TILEIRAS_ERROR_COMPILATION_FAILED`, the status NVIDIA's
//! tileiras gives when ptxas refuses the name; the log names the entry and
//! points at its source.
mod common;

use std::ffi::{c_void, CString};

use tileiras::capi::*;

/// The vector add with its entry renamed to `name` (same length).
fn vadd_named(name: &[u8]) -> Vec<u8> {
    let old: &[u8] = b"vadd_f32_contig";
    assert_eq!(name.len(), old.len());
    let mut bytes =
        std::fs::read(common::corpus().join("vadd_f32_contig/vadd_f32_contig.v13_3.tileir"))
            .unwrap();
    let at: Vec<usize> = (0..bytes.len())
        .filter(|&i| bytes[i..].starts_with(old))
        .collect();
    assert_eq!(at.len(), 1, "the name is in the string table once");
    bytes[at[0]..at[0] + old.len()].copy_from_slice(name);
    bytes
}

/// Compiles `bytes` for sm_90 to a cubin: the status and the log.
fn compile(bytes: &[u8]) -> (tileirasResult, String) {
    let gpu = CString::new("sm_90").unwrap();
    let root = CString::new(common::cuda_root().into_os_string().into_encoded_bytes()).unwrap();
    let mut config = common::capi::config();
    config.gpu_name = gpu.as_ptr();
    config.cuda_root = root.as_ptr();
    config.output_kind = tileirasOutputKind::TILEIRAS_OUTPUT_CUBIN as u32;
    let mut prog: tileirasProgram = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; the program is destroyed
    // before the block ends.
    unsafe {
        let bc = bytes.as_ptr().cast::<c_void>();
        let created = tileirasProgramCreate(&mut prog, &config, bc, bytes.len());
        assert_eq!(created, tileirasResult::TILEIRAS_SUCCESS);
        let status = tileirasProgramCompile(prog);
        let mut size = 0usize;
        assert_eq!(
            tileirasProgramGetLogSize(prog, &mut size),
            tileirasResult::TILEIRAS_SUCCESS
        );
        let mut log = vec![0u8; size];
        assert_eq!(
            tileirasProgramGetLog(prog, log.as_mut_ptr().cast()),
            tileirasResult::TILEIRAS_SUCCESS
        );
        tileirasProgramDestroy(&mut prog);
        log.pop();
        (status, String::from_utf8(log).unwrap())
    }
}

#[test]
fn an_entry_name_that_is_not_a_ptx_identifier_fails_the_compile() {
    let (status, log) = compile(&vadd_named(b"vadd_f32_contiX"));
    assert_eq!(status, tileirasResult::TILEIRAS_SUCCESS, "{log}");
    for (name, shown) in [
        (&b"9add_f32_contig"[..], "\"9add_f32_contig\""),
        (b"vadd-f32_contig", "\"vadd-f32_contig\""),
        (b"vadd\x16f32_contig", "\"vadd\\u{16}f32_contig\""),
    ] {
        let (status, log) = compile(&vadd_named(name));
        assert_eq!(
            status,
            tileirasResult::TILEIRAS_ERROR_COMPILATION_FAILED,
            "{shown}: {log}"
        );
        assert!(log.starts_with("loc(\"kernels.py\":"), "{log}");
        assert!(
            log.contains(&format!(
                "error: entry {shown}: the name is not a PTX identifier"
            )),
            "{log}"
        );
    }
}
