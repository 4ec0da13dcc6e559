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
//! - [`cubin_info::kernels`] reads each kernel's launch facts (registers,
//!   shared memory, parameters) back from a cubin's `.nv.info` sections.
//! - [`write_output`] writes an output file: a regular file so that readers
//!   see the old file or the whole new one, never a part, and a failure
//!   leaves the old file (or no file) in place; a device or FIFO
//!   (`/dev/null`, `/dev/stdout`) in place; through symbolic links.
pub mod cubin_info;
mod host;
mod write;

pub use host::{
    host_object, CUBIN_ALIGN, CUBIN_SECTION, CUBIN_SIZE_SYMBOL, CUBIN_SYMBOL, SASS_SECTION,
};
pub use write::write_output;

/// A failure to build an output object.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ElfError(pub String);
