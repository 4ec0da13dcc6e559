//! The top-level error and the one place that maps errors to the five public
//! status codes.
use crate::diag::Diagnostic;
use crate::{bytecode, elf, lower, toolchain};

/// The public status codes; the C API and the command line use these numbers.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Success.
    Success = 0,
    /// Out of memory or another system resource failure.
    OutOfResources = 1,
    /// Invalid configuration or argument, or a call out of order.
    InvalidArgument = 2,
    /// The input is not valid TileIR bytecode.
    InvalidBytecode = 3,
    /// A valid program this compiler or GPU target does not support.
    Unsupported = 4,
    /// Compilation failed.
    CompileFailed = 5,
}

impl Status {
    /// The status as the integer the C API returns and the CLI exits with.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// A short description of the status.
    pub fn description(self) -> &'static str {
        match self {
            Status::Success => "success",
            Status::OutOfResources => "out of memory or system resources",
            Status::InvalidArgument => "invalid configuration or argument",
            Status::InvalidBytecode => "input is not valid Tile IR bytecode",
            Status::Unsupported => "program not supported by this compiler or target",
            Status::CompileFailed => "compilation failed",
        }
    }
}

/// Everything that can stop a compilation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configuration or argument was invalid.
    #[error("{0}")]
    InvalidArgument(String),
    /// The bytecode could not be read.
    #[error(transparent)]
    Read(#[from] bytecode::ReadError),
    /// The module failed verification; the diagnostics say why.
    #[error("verification failed for deserialized cuda_tile::ModuleOp")]
    Verify(Vec<Diagnostic>),
    /// The module breaks an invariant of the bytecode format that
    /// verification does not cover; the diagnostic says which.
    #[error("{}", crate::verify::invariants::NOT_CONFORMING)]
    Invariant(Diagnostic),
    /// Lowering to PTX failed or met something unsupported.
    #[error(transparent)]
    Lower(#[from] lower::LowerError),
    /// An external tool (ptxas, nvdisasm) could not run or failed.
    #[error(transparent)]
    Tool(#[from] toolchain::ToolError),
    /// Writing the host object failed.
    #[error(transparent)]
    Elf(#[from] elf::ElfError),
    /// The host callbacks (tensor-map setup at launch) could not be built.
    #[error(transparent)]
    Host(#[from] crate::host::HostError),
    /// An operating-system resource failed (memory, files, pipes).
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl Error {
    /// The public status code for this error. One exhaustive match: a new
    /// variant does not compile until it is given a code.
    pub fn status(&self) -> Status {
        match self {
            Error::InvalidArgument(_) => Status::InvalidArgument,
            Error::Read(_) => Status::InvalidBytecode,
            // NVIDIA's tileiras treats a module that fails verification after
            // deserialization as input that is not valid Tile IR (exit 3).
            Error::Verify(_) | Error::Invariant(_) => Status::InvalidBytecode,
            Error::Lower(e) => {
                if e.is_unsupported() {
                    Status::Unsupported
                } else {
                    Status::CompileFailed
                }
            }
            Error::Tool(e) => {
                if e.is_system_resource() {
                    Status::OutOfResources
                } else {
                    Status::CompileFailed
                }
            }
            Error::Elf(_) | Error::Host(_) => Status::CompileFailed,
            Error::Io { .. } => Status::OutOfResources,
        }
    }

    /// The diagnostics this error stands for, in the order they are shown.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        match self {
            // NVIDIA's tileiras: the verifier's errors, then these two lines.
            Error::Verify(diags) => {
                let mut v = diags.clone();
                v.push(Diagnostic::error(self.to_string()));
                v.push(Diagnostic::error(bytecode::NOT_BYTECODE));
                v
            }
            Error::Invariant(d) => vec![
                d.clone(),
                Diagnostic::error(self.to_string()),
                Diagnostic::error(bytecode::NOT_BYTECODE),
            ],
            Error::Read(e) => e.diagnostics(),
            Error::Lower(e) => vec![e.diagnostic()],
            _ => vec![Diagnostic::error(self.to_string())],
        }
    }
}
