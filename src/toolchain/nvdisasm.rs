//! The nvdisasm adapter: cubin bytes in, SASS text out.
//!
//! The command is a string split into words (whitespace; `'…'` and `"…"`
//! group), `nvdisasm -c` by default; a first word `nvdisasm` runs the
//! toolkit's nvdisasm, any other is run as given (a path, or a name searched
//! in `PATH`). The cubin path is appended as the last word: a temporary file
//! removed after the run, or the caller's own file, left alone. stdout is the
//! SASS; a failure (non-zero exit, signal, timeout) is a compile failure
//! carrying nvdisasm's stderr verbatim.
//!
//! The seed's `-uumn` and sanitize tail are not passed: nvdisasm 13.5
//! ignores the first and rejects the second (`Unknown option 'sanitize'`).
use std::path::PathBuf;
use std::time::Duration;

use super::error::ToolError;
use super::locate::Toolkit;
use super::process::Command;

const TOOL: &str = "nvdisasm";

/// The default `dumpSassCommand`.
/// cbindgen:ignore
pub const DEFAULT_COMMAND: &str = "nvdisasm -c";

/// The message for an empty command.
/// cbindgen:ignore
pub const EMPTY_COMMAND_MESSAGE: &str =
    "Please provide a valid dumpSassCommand. For example, `nvdisasm -c`.";

/// One SASS dump.
#[derive(Clone, Debug)]
pub struct DisasmJob {
    /// The command, split into words; the cubin path is appended.
    pub command: String,
    /// An existing cubin file to disassemble instead of writing one.
    pub cubin_path: Option<PathBuf>,
    /// Time limit for the run.
    pub timeout: Option<Duration>,
    /// Where the temporary cubin goes (the system's temp dir when `None`).
    pub temp_dir: Option<PathBuf>,
}

impl Default for DisasmJob {
    fn default() -> Self {
        DisasmJob {
            command: DEFAULT_COMMAND.to_string(),
            cubin_path: None,
            timeout: None,
            temp_dir: None,
        }
    }
}

/// Splits a command string into words: whitespace separates, single and
/// double quotes group, a backslash escapes the next character outside
/// single quotes.
pub fn split_command(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"') | None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
                in_word = true;
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// Disassembles `cubin` with `nvdisasm -c`.
pub fn disassemble(
    toolkit: &Toolkit,
    cubin: &[u8],
    timeout: Option<Duration>,
) -> Result<String, ToolError> {
    dump_sass(
        toolkit,
        cubin,
        &DisasmJob {
            timeout,
            ..DisasmJob::default()
        },
    )
}

/// Runs `job.command` on `cubin` (or on `job.cubin_path`) and returns its
/// stdout.
pub fn dump_sass(toolkit: &Toolkit, cubin: &[u8], job: &DisasmJob) -> Result<String, ToolError> {
    let words = split_command(&job.command);
    let Some((first, rest)) = words.split_first() else {
        return Err(ToolError::InvalidCommand(EMPTY_COMMAND_MESSAGE.to_string()));
    };
    let program: PathBuf = if first == TOOL {
        toolkit.nvdisasm()?.to_owned()
    } else {
        PathBuf::from(first)
    };
    // Removed when this function returns, on every path.
    let (path, temp) = match &job.cubin_path {
        Some(p) => (p.clone(), None),
        None => {
            let t = crate::tempfiles::create(job.temp_dir.as_deref(), ".cubin", cubin)
                .map_err(|e| ToolError::io(TOOL, "Couldn't write a temporary file", e))?;
            (t.to_path_buf(), Some(t))
        }
    };
    let mut cmd = Command::new(&program);
    cmd.args(rest).arg(&path).timeout(job.timeout);
    let out = cmd.run().map_err(|e| ToolError::spawn(TOOL, e))?;
    drop(temp);
    if !out.termination.success() {
        let mut output = String::from_utf8_lossy(&out.stderr).into_owned();
        output.push_str(&String::from_utf8_lossy(&out.stdout));
        return Err(ToolError::Failed {
            tool: TOOL.into(),
            program,
            termination: out.termination,
            output,
        });
    }
    String::from_utf8(out.stdout).map_err(|e| ToolError::BadOutput {
        tool: TOOL.into(),
        message: "output is not UTF-8 text".into(),
        output: String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}
