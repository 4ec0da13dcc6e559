//! [`LowerError`], the failure of every stage of the lowering.
use crate::diag::{Diagnostic, Location};

/// A lowering failure.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LowerError {
    /// The program is valid but uses something this compiler cannot lower.
    #[error("{what} is not supported by this compiler")]
    Unsupported {
        /// What is unsupported, naming the op (`'cuda_tile.addf' op`).
        what: String,
        /// Where the op is, from debug info.
        location: Option<Location>,
    },
    /// A constant of the program (a stride, shape, offset or tile size),
    /// or one computed from such constants, does not fit where it must go:
    /// 64-bit arithmetic on it overflows, or an instruction operand cannot
    /// hold it. The program is valid; this compiler cannot lower it
    /// (status 4).
    #[error("{message}")]
    TooLarge {
        /// What overflowed, and where it was going.
        message: String,
        /// Where the op is, from debug info.
        location: Option<Location>,
    },
    /// Lowering failed.
    #[error("{message}")]
    Failed {
        /// What went wrong.
        message: String,
        /// Where, from debug info.
        location: Option<Location>,
    },
}

impl LowerError {
    /// Whether this is an unsupported-feature error (status 4).
    pub fn is_unsupported(&self) -> bool {
        matches!(
            self,
            LowerError::Unsupported { .. } | LowerError::TooLarge { .. }
        )
    }

    /// The diagnostic shown for this error.
    pub fn diagnostic(&self) -> Diagnostic {
        let location = match self {
            LowerError::Unsupported { location, .. }
            | LowerError::TooLarge { location, .. }
            | LowerError::Failed { location, .. } => location.clone(),
        };
        Diagnostic::error(self.to_string()).at(location)
    }
}
