//! The only place raw pointers from C become Rust references or slices.
//! Each helper states the caller contract it relies on; NULL is checked
//! everywhere and turned into `None`.
use std::ffi::{c_char, c_void, CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// Borrows `*ptr` for the call. `None` for NULL.
///
/// # Safety
/// A non-NULL `ptr` points to a valid, initialized `T` that nothing mutates
/// during the call.
pub(crate) unsafe fn borrow<'a, T>(ptr: *const T) -> Option<&'a T> {
    // SAFETY: the caller guarantees a non-NULL pointer is valid for reads.
    unsafe { ptr.as_ref() }
}

/// Borrows `*ptr` mutably for the call. `None` for NULL.
///
/// # Safety
/// A non-NULL `ptr` points to a valid `T` that nothing else accesses during
/// the call.
pub(crate) unsafe fn borrow_mut<'a, T>(ptr: *mut T) -> Option<&'a mut T> {
    // SAFETY: the caller guarantees exclusive access through a non-NULL pointer.
    unsafe { ptr.as_mut() }
}

/// A byte slice from `(data, size)`; a zero size gives an empty slice even for
/// NULL. `None` when `data` is NULL and `size` is not zero.
///
/// # Safety
/// A non-NULL `data` is valid for reads of `size` bytes for the call.
pub(crate) unsafe fn bytes<'a>(data: *const c_void, size: usize) -> Option<&'a [u8]> {
    if size == 0 {
        return Some(&[]);
    }
    if data.is_null() || size > isize::MAX as usize {
        return None;
    }
    // SAFETY: non-NULL, size checked against isize::MAX, validity by contract.
    Some(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) })
}

/// An optional UTF-8 C string: `Ok(None)` for NULL, `Err(())` when it is not
/// UTF-8.
///
/// # Safety
/// A non-NULL `s` points to a NUL-terminated string valid for the call.
pub(crate) unsafe fn opt_str<'a>(s: *const c_char) -> Result<Option<&'a str>, ()> {
    if s.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL and NUL-terminated by contract.
    let c = unsafe { CStr::from_ptr(s) };
    c.to_str().map(Some).map_err(|_| ())
}

/// An optional path given as a C string: `None` for NULL. A path is bytes,
/// UTF-8 or not.
///
/// # Safety
/// A non-NULL `s` points to a NUL-terminated string valid for the call.
pub(crate) unsafe fn opt_path(s: *const c_char) -> Option<PathBuf> {
    if s.is_null() {
        return None;
    }
    // SAFETY: non-NULL and NUL-terminated by contract.
    let c = unsafe { CStr::from_ptr(s) };
    Some(PathBuf::from(OsStr::from_bytes(c.to_bytes())))
}

/// Writes `value` through `out` when it is not NULL; returns whether it did.
///
/// # Safety
/// A non-NULL `out` is valid for writes of one `T`.
pub(crate) unsafe fn write<T>(out: *mut T, value: T) -> bool {
    if out.is_null() {
        return false;
    }
    // SAFETY: non-NULL and writable by contract.
    unsafe { out.write(value) };
    true
}
