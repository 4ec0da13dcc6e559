//! Diagnostics: severity, message and source location, rendered the way
//! cuTile Python parses them (`loc("file":line:col): error: message`).
use std::fmt;

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// A note attached to another diagnostic.
    Note,
    /// A remark: information about a decision the compiler made.
    Remark,
    /// A warning: compilation goes on.
    Warning,
    /// An error: compilation fails.
    Error,
}

impl Severity {
    /// The word used in rendered text (`error`, `warning`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Remark => "remark",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A source location from the bytecode's debug info.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    /// File name as recorded in the debug info.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "loc(\"{}\":{}:{})",
            self.file.escape_default(),
            self.line,
            self.column
        )
    }
}

/// One diagnostic: severity, verbatim message, and where it points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// How serious it is.
    pub severity: Severity,
    /// The message, verbatim.
    pub message: String,
    /// Source location from debug info, when the bytecode has one.
    pub location: Option<Location>,
    /// Byte offset into the bytecode, when one applies.
    pub offset: Option<usize>,
}

impl Diagnostic {
    /// An error with no location.
    pub fn error(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            location: None,
            offset: None,
        }
    }

    /// A diagnostic of the given severity with no location.
    pub fn new(severity: Severity, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            message: message.into(),
            location: None,
            offset: None,
        }
    }

    /// The same diagnostic pointing at `location`.
    pub fn at(mut self, location: Option<Location>) -> Self {
        self.location = location;
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(loc) = &self.location {
            write!(f, "{loc}: ")?;
        }
        write!(f, "{}: {}", self.severity.as_str(), self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_with_and_without_location() {
        let d = Diagnostic::error("bad thing");
        assert_eq!(d.to_string(), "error: bad thing");
        let d = d.at(Some(Location {
            file: "kernels.py".into(),
            line: 3,
            column: 7,
        }));
        assert_eq!(d.to_string(), "loc(\"kernels.py\":3:7): error: bad thing");
    }
}
