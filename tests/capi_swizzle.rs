//! `TILEIR_ALWAYS_SWIZZLE` reaches the lowering through the C API as it does
//! through the command line. This binary's only test sets the variable in
//! its own process.
mod common;

use std::ffi::CString;

use tileiras::capi::*;
use tileiras::options::{Gpu, Options};

/// PTX for `bytes` on sm_80 through `tileirasProgramCompile`.
fn compile(bytes: &[u8]) -> String {
    let gpu = CString::new("sm_80").unwrap();
    let mut config = common::capi::config();
    config.gpu_name = gpu.as_ptr();
    config.output_kind = tileirasOutputKind::TILEIRAS_OUTPUT_PTX as u32;
    let out = common::capi::compile(&config, bytes).expect("compiles");
    let text = String::from_utf8(out).expect("PTX text");
    text.trim_end_matches('\0').to_string()
}

/// Our PTX straight from the lowering, swizzled or padded.
fn lower(bytes: &[u8], swizzle: bool) -> String {
    let module = tileiras::bytecode::read(bytes).expect("bytecode");
    let options = Options {
        gpu: Gpu::Sm80,
        always_swizzle: swizzle,
        ..Default::default()
    };
    tileiras::lower::lower(&module, &options).expect("lowers")
}

#[test]
fn the_environment_variable_swizzles_c_api_output() {
    let name = "matmul_f16_divisible";
    let path = common::corpus().join(format!("{name}/{name}.v13_4.tileir"));
    let bytes = std::fs::read(path).expect("read bytecode");
    std::env::remove_var("TILEIR_ALWAYS_SWIZZLE");
    let plain = compile(&bytes);
    std::env::set_var("TILEIR_ALWAYS_SWIZZLE", "0");
    let swizzled = compile(&bytes);
    std::env::remove_var("TILEIR_ALWAYS_SWIZZLE");
    assert_eq!(plain, lower(&bytes, false));
    assert_eq!(swizzled, lower(&bytes, true));
    assert_ne!(plain, swizzled);
}
