//! The C-visible types: status codes, enums (passed as integers), the
//! growable config struct and the diagnostic callback.
#![allow(non_camel_case_types)]
use std::ffi::{c_char, c_void};

use crate::error::Status;

/// Status returned by every `tileiras*` function. The numbers are stable.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tileirasResult {
    /// Success.
    TILEIRAS_SUCCESS = 0,
    /// Out of memory or another system resource failure.
    TILEIRAS_ERROR_OUT_OF_RESOURCES = 1,
    /// Invalid configuration or argument (NULL pointer, unknown GPU, bad
    /// optimization level), or a call out of order.
    TILEIRAS_ERROR_INVALID_ARGUMENT = 2,
    /// The input is not valid Tile IR bytecode.
    TILEIRAS_ERROR_INVALID_BYTECODE = 3,
    /// A valid program this compiler or GPU target does not support.
    TILEIRAS_ERROR_UNSUPPORTED = 4,
    /// Compilation failed (verifier, lowering or external tool errors).
    TILEIRAS_ERROR_COMPILATION_FAILED = 5,
}

impl From<Status> for tileirasResult {
    fn from(s: Status) -> Self {
        match s {
            Status::Success => tileirasResult::TILEIRAS_SUCCESS,
            Status::OutOfResources => tileirasResult::TILEIRAS_ERROR_OUT_OF_RESOURCES,
            Status::InvalidArgument => tileirasResult::TILEIRAS_ERROR_INVALID_ARGUMENT,
            Status::InvalidBytecode => tileirasResult::TILEIRAS_ERROR_INVALID_BYTECODE,
            Status::Unsupported => tileirasResult::TILEIRAS_ERROR_UNSUPPORTED,
            Status::CompileFailed => tileirasResult::TILEIRAS_ERROR_COMPILATION_FAILED,
        }
    }
}

/// What a compile produces (the config's `output_kind`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tileirasOutputKind {
    /// A cubin.
    TILEIRAS_OUTPUT_CUBIN = 0,
    /// A host relocatable object embedding the cubin.
    TILEIRAS_OUTPUT_HOST_OBJECT = 1,
    /// PTX text.
    TILEIRAS_OUTPUT_PTX = 2,
    /// SASS text.
    TILEIRAS_OUTPUT_SASS = 3,
}

/// Host architecture of the relocatable object (the config's `host_arch`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tileirasHostArch {
    /// x86-64.
    TILEIRAS_HOST_ARCH_X86_64 = 0,
    /// 64-bit Arm.
    TILEIRAS_HOST_ARCH_AARCH64 = 1,
}

/// Host OS of the relocatable object (the config's `host_os`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tileirasHostOs {
    /// Linux (ELF).
    TILEIRAS_HOST_OS_LINUX = 0,
    /// Windows (COFF).
    TILEIRAS_HOST_OS_WINDOWS = 1,
}

/// Sanitizer instrumentation (the config's `sanitize`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tileirasSanitize {
    /// None.
    TILEIRAS_SANITIZE_NONE = 0,
    /// compute-sanitizer memcheck.
    TILEIRAS_SANITIZE_MEMCHECK = 1,
}

/// Severity of a diagnostic passed to the callback.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tileirasSeverity {
    /// A note.
    TILEIRAS_SEVERITY_NOTE = 0,
    /// A remark.
    TILEIRAS_SEVERITY_REMARK = 1,
    /// A warning.
    TILEIRAS_SEVERITY_WARNING = 2,
    /// An error.
    TILEIRAS_SEVERITY_ERROR = 3,
}

/// Receives each diagnostic as it happens. `message` is the verbatim text;
/// `file` is NULL (and `line`, `column` 0) when the diagnostic has no source
/// location; `rendered` is the one-line text form (`loc("f":1:2): error: m`).
/// Every string is NUL-terminated and valid only during the call. Called on
/// the thread that runs `tileirasProgramCompile`.
pub type tileirasDiagnosticCallback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        severity: u32,
        message: *const c_char,
        file: *const c_char,
        line: u32,
        column: u32,
        rendered: *const c_char,
    ),
>;

/// Compile configuration. Initialise with `tileirasConfigInit`, which sets
/// `struct_size` and every default; the library reads only the first
/// `struct_size` bytes, so programs built against an older, shorter struct
/// keep working. String fields are copied by `tileirasProgramCreate`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tileirasConfig {
    /// `sizeof(tileirasConfig)` as the caller was compiled; set by
    /// `tileirasConfigInit`.
    pub struct_size: usize,
    /// Target GPU: "sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90",
    /// "sm_100", "sm_103", "sm_107", "sm_110", "sm_120" or "sm_121". Required.
    pub gpu_name: *const c_char,
    /// Optimization level 0..3; default 3.
    pub opt_level: u32,
    /// Non-zero for full device debug info (needs `opt_level` 0).
    pub device_debug: u32,
    /// Non-zero for line info.
    pub line_info: u32,
    /// A `tileirasHostArch`; default the library's own architecture.
    pub host_arch: u32,
    /// A `tileirasHostOs`; default the library's own OS.
    pub host_os: u32,
    /// A `tileirasSanitize`; default none.
    pub sanitize: u32,
    /// A `tileirasOutputKind`; default `TILEIRAS_OUTPUT_CUBIN`.
    pub output_kind: u32,
    /// CUDA toolkit root searched before every other place, or NULL. Paths
    /// are bytes (UTF-8 or not).
    pub cuda_root: *const c_char,
    /// Path of the ptxas executable (used as given, no fallback), or NULL
    /// to look it up.
    pub ptxas_path: *const c_char,
    /// Path of the nvdisasm executable (used as given, no fallback), or
    /// NULL to look it up.
    pub nvdisasm_path: *const c_char,
    /// Limit in milliseconds on each external tool's run; 0 for none.
    pub tool_timeout_ms: u64,
    /// Receives each diagnostic, or NULL.
    pub diagnostic_callback: tileirasDiagnosticCallback,
    /// Passed unchanged to `diagnostic_callback`.
    pub diagnostic_user_data: *mut c_void,
}

impl Default for tileirasConfig {
    fn default() -> Self {
        let o = crate::options::Options::default();
        tileirasConfig {
            struct_size: std::mem::size_of::<tileirasConfig>(),
            gpu_name: std::ptr::null(),
            opt_level: 3,
            device_debug: 0,
            line_info: 0,
            host_arch: match o.host_arch {
                crate::options::HostArch::X86_64 => {
                    tileirasHostArch::TILEIRAS_HOST_ARCH_X86_64 as u32
                }
                crate::options::HostArch::Aarch64 => {
                    tileirasHostArch::TILEIRAS_HOST_ARCH_AARCH64 as u32
                }
            },
            host_os: match o.host_os {
                crate::options::HostOs::Linux => tileirasHostOs::TILEIRAS_HOST_OS_LINUX as u32,
                crate::options::HostOs::Windows => tileirasHostOs::TILEIRAS_HOST_OS_WINDOWS as u32,
            },
            sanitize: tileirasSanitize::TILEIRAS_SANITIZE_NONE as u32,
            output_kind: tileirasOutputKind::TILEIRAS_OUTPUT_CUBIN as u32,
            cuda_root: std::ptr::null(),
            ptxas_path: std::ptr::null(),
            nvdisasm_path: std::ptr::null(),
            tool_timeout_ms: 0,
            diagnostic_callback: None,
            diagnostic_user_data: std::ptr::null_mut(),
        }
    }
}
