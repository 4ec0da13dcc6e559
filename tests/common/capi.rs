//! Compiling through the C API from tests.
use std::ffi::c_void;

use tileiras::capi::*;

/// A config from `tileirasConfigInit`.
pub fn config() -> tileirasConfig {
    let mut config = tileirasConfig::default();
    // SAFETY: a valid, writable config.
    assert_eq!(
        unsafe { tileirasConfigInit(&mut config) },
        tileirasResult::TILEIRAS_SUCCESS
    );
    config
}

/// Creates a program from `bytes` under `config`, compiles it and returns
/// its output, or the status `tileirasProgramCompile` failed with. The
/// config's strings must live through the call.
pub fn compile(config: &tileirasConfig, bytes: &[u8]) -> Result<Vec<u8>, tileirasResult> {
    let mut prog: tileirasProgram = std::ptr::null_mut();
    let mut size = 0usize;
    // SAFETY: every pointer is valid for the call; the program is destroyed
    // before the block ends.
    unsafe {
        let bc = bytes.as_ptr().cast::<c_void>();
        let created = tileirasProgramCreate(&mut prog, config, bc, bytes.len());
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
        Ok(out)
    }
}
