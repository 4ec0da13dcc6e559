//! [`ToolError`]: every way finding or running ptxas or nvdisasm can fail.
use std::path::{Path, PathBuf};

use super::process::{SpawnError, Termination};

/// A failure to find or run an external tool. Every variant names the tool;
/// a failed run carries the tool's own output verbatim, so the message can
/// be forwarded as diagnostics unchanged.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The toolkit or the tool could not be found; `searched` lists every
    /// place looked, in order.
    #[error("{}", not_found_message(tool, searched))]
    NotFound {
        /// The tool (`ptxas`, `nvdisasm`).
        tool: String,
        /// Each place looked, with where it came from.
        searched: Vec<String>,
    },
    /// The tool could not be started (missing, not executable, or the system
    /// refused pipes or a process).
    #[error("{tool}: {source}")]
    Spawn {
        /// The tool.
        tool: String,
        /// Why.
        source: SpawnError,
    },
    /// The tool ran and failed: a non-zero exit (255 for ptxas' PTX errors,
    /// 126, 127), a signal, or a timeout. `output` is what it printed,
    /// verbatim.
    #[error("{}", failed_message(tool, program, termination, output))]
    Failed {
        /// The tool.
        tool: String,
        /// The executable that ran.
        program: PathBuf,
        /// How it ended.
        termination: Termination,
        /// Its captured stderr (and stdout, when it was text), verbatim.
        output: String,
    },
    /// The tool succeeded but its output is not what was expected (a cubin
    /// without the ELF magic).
    #[error("{tool}: {message}{}", if output.is_empty() { String::new() } else { format!("\n{output}") })]
    BadOutput {
        /// The tool.
        tool: String,
        /// What is wrong.
        message: String,
        /// What the tool printed, verbatim.
        output: String,
    },
    /// The tool's command was unusable (an empty `dumpSassCommand`).
    #[error("{0}")]
    InvalidCommand(String),
    /// A temporary file could not be written or read.
    #[error("{tool}: {context}: {source}")]
    Io {
        /// The tool.
        tool: String,
        /// What was being done.
        context: String,
        /// The error.
        source: std::io::Error,
    },
}

/// How to get `tool` when it cannot be found: the line that ends the
/// not-found message.
pub fn install_hint(tool: &str) -> String {
    match tool {
        "ptxas" => "hint: set CUDA_ROOT to a CUDA 13.5 or later toolkit, or run \
                    `pip install nvidia-cuda-nvcc` (13.5 or later) in the Python \
                    environment tileiras is installed in"
            .into(),
        "nvdisasm" => "hint: set CUDA_ROOT to a CUDA toolkit, or install the wheel's \
                       `sass` extra (`pip install \"tileiras-rs[sass]\"`, which brings \
                       `nvidia-cuda-nvdisasm`)"
            .into(),
        _ => format!("hint: set CUDA_ROOT to a CUDA toolkit that has {tool}"),
    }
}

fn not_found_message(tool: &str, searched: &[String]) -> String {
    let mut m = format!("cannot find {tool}; looked in:");
    for s in searched {
        m.push_str("\n  ");
        m.push_str(s);
    }
    m.push('\n');
    m.push_str(&install_hint(tool));
    m
}

fn failed_message(tool: &str, program: &Path, t: &Termination, output: &str) -> String {
    let mut m = match t {
        Termination::Exited(127) => format!("{tool} ({}) failed: {t}", program.display()),
        _ => format!("{tool} failed: {t}"),
    };
    if !output.is_empty() {
        m.push('\n');
        m.push_str(output.trim_end_matches('\n'));
    }
    m
}

impl ToolError {
    /// Whether the failure is the system's (pipes, processes, memory, temp
    /// files), not the tool's; the driver maps it to status 1.
    pub fn is_system_resource(&self) -> bool {
        match self {
            ToolError::Spawn { source, .. } => source.is_system_resource(),
            ToolError::Io { .. } => true,
            _ => false,
        }
    }

    /// The tool's exit status, when it exited.
    pub fn exit_status(&self) -> Option<i32> {
        match self {
            ToolError::Failed {
                termination: Termination::Exited(c),
                ..
            } => Some(*c),
            _ => None,
        }
    }

    /// The tool's verbatim output, when it ran.
    pub fn tool_output(&self) -> Option<&str> {
        match self {
            ToolError::Failed { output, .. } | ToolError::BadOutput { output, .. } => Some(output),
            _ => None,
        }
    }

    /// Whether the tool was killed for running past its time limit.
    pub fn timed_out(&self) -> bool {
        matches!(
            self,
            ToolError::Failed {
                termination: Termination::TimedOut { .. },
                ..
            }
        )
    }

    pub(crate) fn spawn(tool: &str, source: SpawnError) -> ToolError {
        ToolError::Spawn {
            tool: tool.to_string(),
            source,
        }
    }

    pub(crate) fn io(tool: &str, context: impl Into<String>, source: std::io::Error) -> ToolError {
        ToolError::Io {
            tool: tool.to_string(),
            context: context.into(),
            source,
        }
    }
}
