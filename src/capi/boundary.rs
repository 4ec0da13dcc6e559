//! The panic boundary every exported function body sits in.

/// Runs `$body` (which evaluates to a `tileirasResult`) inside
/// `catch_unwind`; a panic becomes `TILEIRAS_ERROR_COMPILATION_FAILED`, so no
/// unwind ever crosses the C ABI.
macro_rules! ffi_boundary {
    ($body:block) => {{
        match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(
            || -> $crate::capi::types::tileirasResult { $body },
        )) {
            Ok(status) => status,
            Err(_) => $crate::capi::types::tileirasResult::TILEIRAS_ERROR_COMPILATION_FAILED,
        }
    }};
}

pub(crate) use ffi_boundary;
