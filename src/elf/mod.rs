//! Output files: the host relocatable object that embeds the cubin, and
//! atomic writes.
//!
//! - [`host_object`] builds an ELF (Linux) or COFF (Windows) relocatable
//!   object for x86-64 or AArch64 holding the cubin in section
//!   [`CUBIN_SECTION`] under the global symbols [`CUBIN_SYMBOL`] (its first
//!   byte) and [`CUBIN_SIZE_SYMBOL`] (a little-endian `u64` byte count in the
//!   read-only data section), plus the SASS text in [`SASS_SECTION`] when
//!   given. From C:
//!
//!   ```c
//!   extern const unsigned char tileiras_cubin[];
//!   extern const unsigned long long tileiras_cubin_size;
//!   ```
//! - [`write_atomically`] writes a file so that readers see the old file or
//!   the whole new one, never a part, and a failure leaves the old file (or
//!   no file) in place.
mod host;
mod write;

pub use host::{
    host_object, CUBIN_ALIGN, CUBIN_SECTION, CUBIN_SIZE_SYMBOL, CUBIN_SYMBOL, SASS_SECTION,
};
pub use write::write_atomically;

/// A failure to build an output object.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ElfError(pub String);

/// Writes `bytes` to `path` through a temporary file in the same directory
/// and a rename, so a failure leaves the file system as it was.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("out"),
        std::process::id()
    ));
    let result = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
