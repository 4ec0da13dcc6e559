//! Output files: the host relocatable object that embeds the cubin, and
//! atomic writes.

/// A failure to build an output object.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ElfError(pub String);
