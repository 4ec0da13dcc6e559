//! TileIR bytecode reader. (Interface in place; the reader lands next.)
pub mod version;

use crate::diag::Diagnostic;

/// A bytecode reading error, always with the absolute byte offset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("error at offset {offset}: {message}")]
pub struct ReadError {
    /// Absolute byte offset in the input.
    pub offset: usize,
    /// What went wrong.
    pub message: String,
}

impl ReadError {
    /// The diagnostics shown for this error.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut d = Diagnostic::error(self.to_string());
        d.offset = Some(self.offset);
        vec![d]
    }
}

/// Reads a whole bytecode file into an IR module.
pub fn read(_bytes: &[u8]) -> Result<crate::ir::Module, ReadError> {
    Err(ReadError {
        offset: 0,
        message: "bytecode reader not available".into(),
    })
}
