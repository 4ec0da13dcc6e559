//! Lowering from TileIR to PTX.
use crate::diag::{Diagnostic, Location};
use crate::ir::Module;
use crate::options::Options;

/// A lowering failure.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LowerError {
    /// The program is valid but uses something this compiler cannot lower yet.
    #[error("{what} is not supported by this compiler yet")]
    Unsupported {
        /// What is unsupported, naming the op (`'cuda_tile.addf' op`).
        what: String,
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
        matches!(self, LowerError::Unsupported { .. })
    }

    /// The diagnostic shown for this error.
    pub fn diagnostic(&self) -> Diagnostic {
        let location = match self {
            LowerError::Unsupported { location, .. } | LowerError::Failed { location, .. } => {
                location.clone()
            }
        };
        Diagnostic::error(self.to_string()).at(location)
    }
}

/// Lowers a verified module to PTX text for the options' target.
///
/// Stub: reports the first op of the module (in [`Module::walk`] order) as
/// unsupported, naming it and pointing at its debug location.
pub fn lower(module: &Module, _options: &Options) -> Result<String, LowerError> {
    match module.walk().next() {
        Some(id) => Err(LowerError::Unsupported {
            what: format!("'{}' op", module.ops[id].name()),
            location: module.location(id),
        }),
        None => Err(LowerError::Unsupported {
            what: "an empty module".into(),
            location: None,
        }),
    }
}
