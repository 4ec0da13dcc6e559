//! TileIR bytecode reader: bytes in, [`crate::ir::Module`] out.
//!
//! [`read`] checks the header, splits the input into sections, then decodes
//! strings, types, constants, globals, debug info and functions. Op bodies
//! are decoded by one table (`table.rs`) that lists each op's fields per
//! bytecode version (13.1 to 13.5; 13.5's differences — kernel entries with
//! hints plus argument attributes, function flag checks, DISubprogram flags,
//! `inbounds` on `atomic_red_view_tko` — were found by experiment with
//! NVIDIA's 13.5 `tileirdisasm`, as no producer writes 13.5 yet). Every
//! count is checked against [`limits`] and the remaining input before
//! anything is allocated (lists are read element by element, so a count past
//! the data fails at its end); nothing panics on any input.
//!
//! Errors: [`ReadError::offset`] is always the absolute byte offset.
//! [`ReadError::shown_offset`] and [`ReadError::context`] reproduce what
//! NVIDIA's reader prints (offsets relative to the section, type, constant or
//! function body being decoded, and the chain of `failed to parse ...`
//! lines); [`ReadError::disasm_lines`] gives `tileirdisasm`'s lines and
//! [`ReadError::diagnostics`] `tileiras`'. Types and debug attributes are
//! checked when first used, as NVIDIA's lazy reader does, so an unused bad
//! entry is not an error; a type is checked after the types it refers to,
//! against the rules NVIDIA's reader applies when it builds one (pointers
//! and tensor views hold numbers, not `i4`; tiles hold numbers, `i4` or
//! pointers, pointers to f4E2M1FN only at rank 0, f4E2M1FN in even
//! numbers; power-of-two dimensions; the element limit).
use crate::diag::Diagnostic;

/// cbindgen:ignore
pub mod limits;
pub mod version;

mod layout;
mod parse;
mod reader;
mod table;

pub use crate::ir::Version;

/// The first eight bytes of every TileIR bytecode file.
pub const MAGIC: [u8; 8] = *b"\x7fTileIR\x00";
/// The first four bytes of MLIR's own bytecode format.
pub const MLIR_MAGIC: [u8; 4] = *b"ML\xefR";
/// Oldest bytecode version read (the first of [`version::SUPPORTED_VERSIONS`]).
pub const MIN_VERSION: Version = {
    let (major, minor) = version::SUPPORTED_VERSIONS[0];
    Version::new(major, minor, 0)
};
/// Newest bytecode version read (the last of [`version::SUPPORTED_VERSIONS`]).
pub const MAX_VERSION: Version = {
    let (major, minor) = version::SUPPORTED_VERSIONS[version::SUPPORTED_VERSIONS.len() - 1];
    Version::new(major, minor, 0)
};
/// NVIDIA's message for input that is not valid Tile IR bytecode; also the
/// closing line after any malformed-input or verification error.
pub const NOT_BYTECODE: &str = "input does not correspond to Tile IR bytecode";

/// What kind of failure a [`ReadError`] is; decides how it is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadErrorKind {
    /// The input does not start with the TileIR magic.
    BadMagic {
        /// The input starts with MLIR bytecode's magic instead.
        mlir: bool,
    },
    /// The header names a version this reader does not support.
    UnsupportedVersion(Version),
    /// Anything else: the input is malformed.
    Malformed,
}

/// A bytecode reading error, always with the absolute byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// Absolute byte offset in the input.
    pub offset: usize,
    /// What went wrong.
    pub message: String,
    /// The kind of failure.
    pub kind: ReadErrorKind,
    /// Outer context, innermost first.
    pub context: Vec<ContextLine>,
    /// The offset NVIDIA's reader reports: relative to the innermost
    /// sub-reader (section, type, function body) the error arose in. `None`
    /// until known; then [`ReadError::offset`] is shown.
    pub shown_offset: Option<usize>,
    /// Whether NVIDIA's reader fails here without a message of its own (only
    /// the context lines are shown).
    pub silent: bool,
    /// Whether NVIDIA's reader shows this error with its offset
    /// (`error at offset N: ...`); a few of its messages carry none.
    pub located: bool,
}

/// One line of context around a [`ReadError`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextLine {
    /// Absolute byte offset.
    pub offset: usize,
    /// Offset as NVIDIA's reader reports it (see [`ReadError::shown_offset`]).
    pub shown_offset: Option<usize>,
    /// The message.
    pub message: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            ReadErrorKind::Malformed if !self.located => f.write_str(&self.message),
            ReadErrorKind::Malformed => {
                let shown = self.shown_offset.unwrap_or(self.offset);
                write!(f, "error at offset {shown}: {}", self.message)
            }
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ReadError {}

impl ReadError {
    /// A malformed-input error at `offset`.
    #[cold]
    pub fn new(offset: usize, message: impl Into<String>) -> Self {
        ReadError {
            offset,
            message: message.into(),
            kind: ReadErrorKind::Malformed,
            context: Vec::new(),
            shown_offset: None,
            located: true,
            silent: false,
        }
    }

    /// The same error, shown only through its context lines.
    #[cold]
    pub fn silenced(self) -> Self {
        ReadError {
            silent: true,
            ..self
        }
    }

    /// A malformed-input error NVIDIA shows without an offset.
    #[cold]
    pub fn unlocated(offset: usize, message: impl Into<String>) -> Self {
        ReadError {
            located: false,
            ..ReadError::new(offset, message)
        }
    }

    /// Adds an outer context line.
    #[cold]
    pub fn with_context(mut self, offset: usize, message: impl Into<String>) -> Self {
        self.context.push(ContextLine {
            offset,
            shown_offset: None,
            message: message.into(),
        });
        self
    }

    /// Makes offsets not yet placed relative to `base`, the start of the
    /// sub-reader the error is leaving.
    #[cold]
    pub(crate) fn rebase(mut self, base: usize) -> Self {
        if self.shown_offset.is_none() {
            self.shown_offset = Some(self.offset.saturating_sub(base));
        }
        for c in &mut self.context {
            if c.shown_offset.is_none() {
                c.shown_offset = Some(c.offset.saturating_sub(base));
            }
        }
        self
    }

    /// The diagnostics `tileiras` shows for this error: the error with its
    /// context chain, then, for malformed input, the closing line
    /// `input does not correspond to Tile IR bytecode`.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut out = self.chain();
        if self.kind == ReadErrorKind::Malformed {
            out.push(Diagnostic::error(NOT_BYTECODE));
        }
        out
    }

    /// The error and its context lines as diagnostics, innermost first.
    pub fn chain(&self) -> Vec<Diagnostic> {
        let mut d = Diagnostic::error(self.to_string());
        d.offset = Some(self.offset);
        let mut out = if self.silent && !self.context.is_empty() {
            Vec::new()
        } else {
            vec![d]
        };
        if self.kind == ReadErrorKind::Malformed {
            for c in &self.context {
                let shown = c.shown_offset.unwrap_or(c.offset);
                let mut d = Diagnostic::error(format!("error at offset {shown}: {}", c.message));
                d.offset = Some(c.offset);
                out.push(d);
            }
        }
        out
    }

    /// The lines NVIDIA's `tileirdisasm` prints for this error (each without
    /// the leading `error: `), ending with its closing line.
    pub fn disasm_lines(&self) -> Vec<String> {
        match self.kind {
            ReadErrorKind::BadMagic { .. } => vec![self.message.clone()],
            ReadErrorKind::UnsupportedVersion(v) => vec![
                format!(
                    "error at offset {}: unsupported Tile version {}.{}.{}, this reader supports versions [{} - {}]",
                    self.offset, v.major, v.minor, v.tag, MIN_VERSION, MAX_VERSION
                ),
                format!("error at offset {}: failed to parse bytecode header", self.offset),
                "failed to read provided Tile IR bytecode".to_string(),
            ],
            ReadErrorKind::Malformed => {
                let mut v: Vec<String> = self.chain().into_iter().map(|d| d.message).collect();
                v.push("failed to read provided Tile IR bytecode".to_string());
                v
            }
        }
    }
}

/// Reads a whole bytecode file into an IR module.
pub fn read(bytes: &[u8]) -> Result<crate::ir::Module, ReadError> {
    parse::read_module(bytes)
}
