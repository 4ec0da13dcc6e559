//! The exported functions.
use std::ffi::{c_char, c_int, c_void, CString};
use std::mem::{offset_of, size_of};
use std::time::Duration;

use parking_lot::Mutex;

use super::boundary::ffi_boundary;
use super::ptr;
use super::types::*;
use crate::bytecode::version::SUPPORTED_VERSIONS;
use crate::diag::{Diagnostic, Severity};
use crate::options::{Gpu, HostArch, HostOs, Options, OutputKind, Sanitize};

use tileirasResult::*;

/// A program: bytecode, configuration, and after a compile its output and
/// log. Opaque to C.
pub struct tileirasProgram_st {
    pub(super) state: Mutex<ProgramState>,
}

/// Handle to a program, created by `tileirasProgramCreate` and released by
/// `tileirasProgramDestroy`.
pub type tileirasProgram = *mut tileirasProgram_st;

pub(super) struct ProgramState {
    options: Options,
    bytecode: Vec<u8>,
    callback: tileirasDiagnosticCallback,
    user_data: *mut c_void,
    output: Option<Vec<u8>>,
    /// Launch facts of each kernel of the last successful compile.
    pub(super) kernels: Option<Vec<super::kernel_info::KernelRecord>>,
    /// Every diagnostic rendered as text, one per line, NUL-terminated.
    log: Vec<u8>,
}

/// A bytecode version this library reads.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct tileirasBytecodeVersion {
    /// Major version (13).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

/// Fills `*config` with the defaults and sets `struct_size`.
///
/// Returns `TILEIRAS_ERROR_INVALID_ARGUMENT` when `config` is NULL.
///
/// # Safety
/// `config` is NULL or valid for writes of one `tileirasConfig`.
#[no_mangle]
pub unsafe extern "C" fn tileirasConfigInit(config: *mut tileirasConfig) -> tileirasResult {
    ffi_boundary!({
        // SAFETY: valid for writes by the caller's contract.
        if unsafe { ptr::write(config, tileirasConfig::default()) } {
            TILEIRAS_SUCCESS
        } else {
            TILEIRAS_ERROR_INVALID_ARGUMENT
        }
    })
}

/// Creates a program from `size` bytes of Tile IR bytecode at `bytecode`.
/// The bytecode and the config's strings are copied; neither pointer is
/// kept. The callback and its user data are kept for `tileirasProgramCompile`.
/// `*prog` is written only on success.
///
/// Returns `TILEIRAS_ERROR_INVALID_ARGUMENT` for a NULL `prog`, `config` or
/// `bytecode` (with a non-zero size), an unknown GPU name, an optimization
/// level above 3, debug info with an optimization level other than 0, or an
/// unknown enum value.
///
/// # Safety
/// `prog` is NULL or writable; `config` is NULL or points to at least
/// `config->struct_size` readable bytes of a `tileirasConfig`; `bytecode` is
/// NULL or readable for `size` bytes; strings are NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tileirasProgramCreate(
    prog: *mut tileirasProgram,
    config: *const tileirasConfig,
    bytecode: *const c_void,
    size: usize,
) -> tileirasResult {
    ffi_boundary!({
        if prog.is_null() {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: readable for struct_size bytes by contract.
        let Some(config) = (unsafe { read_config(config) }) else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        // SAFETY: readable for `size` bytes by contract.
        let Some(bytes) = (unsafe { ptr::bytes(bytecode, size) }) else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        // SAFETY: strings in the config are NUL-terminated by contract.
        let options = match unsafe { options_from_config(&config) } {
            Ok(o) => o,
            Err(message) => {
                report(
                    config.diagnostic_callback,
                    config.diagnostic_user_data,
                    &Diagnostic::error(message),
                );
                return TILEIRAS_ERROR_INVALID_ARGUMENT;
            }
        };
        let mut storage = Vec::new();
        if storage.try_reserve_exact(bytes.len()).is_err() {
            return TILEIRAS_ERROR_OUT_OF_RESOURCES;
        }
        storage.extend_from_slice(bytes);
        let program = Box::new(tileirasProgram_st {
            state: Mutex::new(ProgramState {
                options,
                bytecode: storage,
                callback: config.diagnostic_callback,
                user_data: config.diagnostic_user_data,
                output: None,
                kernels: None,
                log: vec![0],
            }),
        });
        // SAFETY: `prog` is non-NULL and writable by contract.
        unsafe { ptr::write(prog, Box::into_raw(program)) };
        TILEIRAS_SUCCESS
    })
}

/// Compiles the program. Diagnostics go to the callback as they happen and
/// into the log. On failure the earlier output, if any, is dropped. A program
/// may be compiled again.
///
/// # Safety
/// `prog` is NULL or a live handle from `tileirasProgramCreate`.
#[no_mangle]
pub unsafe extern "C" fn tileirasProgramCompile(prog: tileirasProgram) -> tileirasResult {
    ffi_boundary!({
        // SAFETY: a live handle by contract.
        let Some(program) = (unsafe { ptr::borrow(prog) }) else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        let mut state = program.state.lock();
        let state = &mut *state;
        state.output = None;
        state.kernels = None;
        state.log.clear();
        let (callback, user_data) = (state.callback, state.user_data);
        let log = &mut state.log;
        let mut sink = |d: &Diagnostic| {
            log.extend_from_slice(d.to_string().as_bytes());
            log.push(b'\n');
            report(callback, user_data, d);
        };
        let result = crate::driver::compile(&state.bytecode, &state.options, &mut sink);
        state.log.push(0);
        match result {
            Ok(out) => {
                state.kernels = Some(super::kernel_info::records(&out.kernels));
                let mut bytes = out.bytes;
                if state.options.output.is_text() {
                    // Stored NUL-terminated, so that a lent pointer stays valid.
                    bytes.push(0);
                }
                state.output = Some(bytes);
                TILEIRAS_SUCCESS
            }
            Err(e) => e.status().into(),
        }
    })
}

/// Writes the size in bytes of the compiled output to `*size`. Text outputs
/// (PTX, SASS) include a terminating NUL in the size.
///
/// Returns `TILEIRAS_ERROR_INVALID_ARGUMENT` for NULL arguments or before a
/// successful compile.
///
/// # Safety
/// `prog` is NULL or live; `size` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tileirasProgramGetOutputSize(
    prog: tileirasProgram,
    size: *mut usize,
) -> tileirasResult {
    ffi_boundary!({
        // SAFETY: live handle by contract.
        let Some(program) = (unsafe { ptr::borrow(prog) }) else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        let state = program.state.lock();
        let Some(out) = state.output.as_deref() else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        // SAFETY: writable by contract.
        if unsafe { ptr::write(size, out.len()) } {
            TILEIRAS_SUCCESS
        } else {
            TILEIRAS_ERROR_INVALID_ARGUMENT
        }
    })
}

/// Copies the compiled output into `buffer`, which must hold the size
/// reported by `tileirasProgramGetOutputSize`.
///
/// # Safety
/// `prog` is NULL or live; `buffer` is NULL or writable for the output size.
#[no_mangle]
pub unsafe extern "C" fn tileirasProgramGetOutput(
    prog: tileirasProgram,
    buffer: *mut c_void,
) -> tileirasResult {
    ffi_boundary!({
        // SAFETY: live handle by contract.
        let Some(program) = (unsafe { ptr::borrow(prog) }) else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        let state = program.state.lock();
        let Some(out) = state.output.as_deref() else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        if buffer.is_null() {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: `buffer` is writable for the output size by contract and
        // cannot overlap the library-owned output.
        unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), buffer.cast::<u8>(), out.len()) };
        TILEIRAS_SUCCESS
    })
}

/// Lends the compiled output: `*data` points to `*size` bytes owned by the
/// program, valid until the program is compiled again or destroyed. Text
/// outputs are NUL-terminated, and the NUL is counted in `*size`.
///
/// # Safety
/// `prog` is NULL or live; `data` and `size` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tileirasProgramGetOutputPointer(
    prog: tileirasProgram,
    data: *mut *const c_void,
    size: *mut usize,
) -> tileirasResult {
    ffi_boundary!({
        // SAFETY: live handle by contract.
        let Some(program) = (unsafe { ptr::borrow(prog) }) else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        if data.is_null() || size.is_null() {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        }
        let state = program.state.lock();
        let Some(out) = state.output.as_deref() else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        // SAFETY: both non-NULL and writable by contract. The pointer stays
        // valid: the output buffer lives in the boxed program until the next
        // compile or destroy.
        unsafe {
            ptr::write(data, out.as_ptr().cast::<c_void>());
            ptr::write(size, out.len());
        }
        TILEIRAS_SUCCESS
    })
}

/// Writes the size of the log (every diagnostic of the last compile as text,
/// one per line) including its terminating NUL.
///
/// # Safety
/// `prog` is NULL or live; `size` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tileirasProgramGetLogSize(
    prog: tileirasProgram,
    size: *mut usize,
) -> tileirasResult {
    ffi_boundary!({
        // SAFETY: live handle by contract.
        let Some(program) = (unsafe { ptr::borrow(prog) }) else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        let len = program.state.lock().log.len();
        // SAFETY: writable by contract.
        if unsafe { ptr::write(size, len) } {
            TILEIRAS_SUCCESS
        } else {
            TILEIRAS_ERROR_INVALID_ARGUMENT
        }
    })
}

/// Copies the NUL-terminated log into `log`, which must hold the size
/// reported by `tileirasProgramGetLogSize`.
///
/// # Safety
/// `prog` is NULL or live; `log` is NULL or writable for the log size.
#[no_mangle]
pub unsafe extern "C" fn tileirasProgramGetLog(
    prog: tileirasProgram,
    log: *mut c_char,
) -> tileirasResult {
    ffi_boundary!({
        // SAFETY: live handle by contract.
        let Some(program) = (unsafe { ptr::borrow(prog) }) else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        if log.is_null() {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        }
        let state = program.state.lock();
        // SAFETY: writable for the log size by contract; no overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(state.log.as_ptr(), log.cast::<u8>(), state.log.len())
        };
        TILEIRAS_SUCCESS
    })
}

/// Destroys `*prog` and sets `*prog` to NULL. NULL `prog` or NULL `*prog`
/// is accepted and does nothing; destroying the same handle twice through
/// two copies of it is undefined.
///
/// # Safety
/// `prog` is NULL or points to NULL or to a live handle.
#[no_mangle]
pub unsafe extern "C" fn tileirasProgramDestroy(prog: *mut tileirasProgram) -> tileirasResult {
    ffi_boundary!({
        // SAFETY: NULL or a valid pointer to a handle by contract.
        let Some(slot) = (unsafe { ptr::borrow_mut(prog) }) else {
            return TILEIRAS_SUCCESS;
        };
        let handle = std::mem::replace(slot, std::ptr::null_mut());
        if !handle.is_null() {
            // SAFETY: a live handle made by Box::into_raw in Create, released once.
            drop(unsafe { Box::from_raw(handle) });
        }
        TILEIRAS_SUCCESS
    })
}

/// A static, NUL-terminated description of `result`; never NULL. Unknown
/// values give "unknown status".
#[no_mangle]
pub extern "C" fn tileirasGetErrorString(result: c_int) -> *const c_char {
    let text: &'static [u8] = match result {
        0 => b"TILEIRAS_SUCCESS\0",
        1 => b"TILEIRAS_ERROR_OUT_OF_RESOURCES\0",
        2 => b"TILEIRAS_ERROR_INVALID_ARGUMENT\0",
        3 => b"TILEIRAS_ERROR_INVALID_BYTECODE\0",
        4 => b"TILEIRAS_ERROR_UNSUPPORTED\0",
        5 => b"TILEIRAS_ERROR_COMPILATION_FAILED\0",
        _ => b"unknown status\0",
    };
    text.as_ptr().cast::<c_char>()
}

/// Writes the library version. Any argument may be NULL.
///
/// # Safety
/// Each non-NULL pointer is writable.
#[no_mangle]
pub unsafe extern "C" fn tileirasGetVersion(
    major: *mut u32,
    minor: *mut u32,
    patch: *mut u32,
) -> tileirasResult {
    ffi_boundary!({
        let parse = |s: &str| s.parse::<u32>().unwrap_or(0);
        // SAFETY: each is NULL or writable by contract.
        unsafe {
            ptr::write(major, parse(env!("CARGO_PKG_VERSION_MAJOR")));
            ptr::write(minor, parse(env!("CARGO_PKG_VERSION_MINOR")));
            ptr::write(patch, parse(env!("CARGO_PKG_VERSION_PATCH")));
        }
        TILEIRAS_SUCCESS
    })
}

/// Writes how many bytecode versions this library reads.
///
/// # Safety
/// `count` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tileirasGetNumSupportedBytecodeVersions(
    count: *mut usize,
) -> tileirasResult {
    ffi_boundary!({
        // SAFETY: NULL or writable by contract.
        if unsafe { ptr::write(count, SUPPORTED_VERSIONS.len()) } {
            TILEIRAS_SUCCESS
        } else {
            TILEIRAS_ERROR_INVALID_ARGUMENT
        }
    })
}

/// Writes the bytecode versions this library reads, oldest first, into
/// `versions`, which must hold `tileirasGetNumSupportedBytecodeVersions`
/// entries.
///
/// # Safety
/// `versions` is NULL or writable for that many entries.
#[no_mangle]
pub unsafe extern "C" fn tileirasGetSupportedBytecodeVersions(
    versions: *mut tileirasBytecodeVersion,
) -> tileirasResult {
    ffi_boundary!({
        if versions.is_null() {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        }
        for (i, (major, minor)) in SUPPORTED_VERSIONS.iter().enumerate() {
            let v = tileirasBytecodeVersion {
                major: u32::from(*major),
                minor: u32::from(*minor),
            };
            // SAFETY: writable for SUPPORTED_VERSIONS.len() entries by contract.
            unsafe { versions.add(i).write(v) };
        }
        TILEIRAS_SUCCESS
    })
}

/// Reads a config of any size up to ours: fields past the caller's
/// `struct_size` keep their defaults. `None` for NULL or a size too small to
/// hold `gpu_name`.
///
/// # Safety
/// `config` is NULL or readable for `struct_size` bytes.
unsafe fn read_config(config: *const tileirasConfig) -> Option<tileirasConfig> {
    if config.is_null() {
        return None;
    }
    // SAFETY: the first field is readable by contract.
    let size = unsafe { config.cast::<usize>().read_unaligned() };
    let needed = offset_of!(tileirasConfig, gpu_name) + size_of::<*const c_char>();
    if size < needed {
        return None;
    }
    let mut out = tileirasConfig::default();
    macro_rules! take {
        ($($field:ident),*) => {$(
            if offset_of!(tileirasConfig, $field) + field_size(|c: &tileirasConfig| &c.$field) <= size {
                // SAFETY: the field lies within the caller's struct_size bytes.
                out.$field = unsafe { std::ptr::addr_of!((*config).$field).read_unaligned() };
            }
        )*};
    }
    take!(
        gpu_name,
        opt_level,
        device_debug,
        line_info,
        host_arch,
        host_os,
        sanitize,
        output_kind,
        cuda_root,
        ptxas_path,
        nvdisasm_path,
        tool_timeout_ms,
        diagnostic_callback,
        diagnostic_user_data
    );
    Some(out)
}

fn field_size<T>(_: impl Fn(&tileirasConfig) -> &T) -> usize {
    size_of::<T>()
}

/// Turns a config into options; the error is the user-facing message.
///
/// # Safety
/// The config's string pointers are NULL or NUL-terminated.
unsafe fn options_from_config(c: &tileirasConfig) -> Result<Options, String> {
    let text = |p: *const c_char, what: &str| -> Result<Option<String>, String> {
        // SAFETY: NULL or NUL-terminated by contract.
        unsafe { ptr::opt_str(p) }
            .map(|s| s.map(str::to_owned))
            .map_err(|()| format!("{what} is not valid UTF-8"))
    };
    let gpu_name = text(c.gpu_name, "gpu_name")?.ok_or("no GPU name given (gpu_name is NULL)")?;
    let gpu: Gpu = gpu_name.parse()?;
    let output = match c.output_kind {
        0 => OutputKind::Cubin,
        1 => OutputKind::HostObject,
        2 => OutputKind::Ptx,
        3 => OutputKind::Sass,
        v => return Err(format!("invalid output kind: {v}")),
    };
    let host_arch = match c.host_arch {
        0 => HostArch::X86_64,
        1 => HostArch::Aarch64,
        v => return Err(format!("invalid host architecture: {v}")),
    };
    let host_os = match c.host_os {
        0 => HostOs::Linux,
        1 => HostOs::Windows,
        v => return Err(format!("invalid host OS: {v}")),
    };
    let sanitize = match c.sanitize {
        0 => Sanitize::None,
        1 => Sanitize::Memcheck,
        v => return Err(format!("invalid sanitizer: {v}")),
    };
    let opt_level = u8::try_from(c.opt_level)
        .map_err(|_| format!("invalid optimization level: {}", c.opt_level))?;
    let options = Options {
        gpu,
        opt_level,
        device_debug: c.device_debug != 0,
        line_info: c.line_info != 0,
        host_arch,
        host_os,
        sanitize,
        output,
        // SAFETY (three paths): NULL or NUL-terminated by contract.
        cuda_root: unsafe { ptr::opt_path(c.cuda_root) },
        ptxas: unsafe { ptr::opt_path(c.ptxas_path) },
        nvdisasm: unsafe { ptr::opt_path(c.nvdisasm_path) },
        tool_timeout: (c.tool_timeout_ms != 0).then(|| Duration::from_millis(c.tool_timeout_ms)),
        output_path: None,
        unlimited_smem: false,
        always_swizzle: false,
        // the environment's TILEIRAS_NO_TMA turns it off, as for the CLI
        tma: true,
    };
    options.validate()?;
    Ok(options)
}

/// Calls the user's callback with one diagnostic.
fn report(callback: tileirasDiagnosticCallback, user_data: *mut c_void, d: &Diagnostic) {
    let Some(callback) = callback else { return };
    let cstring = |s: &str| CString::new(s.replace('\0', " ")).unwrap_or_default();
    let message = cstring(&d.message);
    let rendered = cstring(&d.to_string());
    let (file, line, column) = match &d.location {
        Some(loc) => (Some(cstring(&loc.file)), loc.line, loc.column),
        None => (None, 0, 0),
    };
    let severity = match d.severity {
        Severity::Note => tileirasSeverity::TILEIRAS_SEVERITY_NOTE,
        Severity::Remark => tileirasSeverity::TILEIRAS_SEVERITY_REMARK,
        Severity::Warning => tileirasSeverity::TILEIRAS_SEVERITY_WARNING,
        Severity::Error => tileirasSeverity::TILEIRAS_SEVERITY_ERROR,
    } as u32;
    // SAFETY: the callback was supplied by the caller for this purpose; every
    // string is NUL-terminated and lives for the call.
    unsafe {
        callback(
            user_data,
            severity,
            message.as_ptr(),
            file.as_ref().map_or(std::ptr::null(), |f| f.as_ptr()),
            line,
            column,
            rendered.as_ptr(),
        )
    };
}
