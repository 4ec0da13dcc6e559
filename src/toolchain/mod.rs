//! External tools: the subprocess harness, toolkit discovery, ptxas and
//! nvdisasm adapters.

/// A failure to find or run an external tool.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The tool could not be found.
    #[error("{0}")]
    NotFound(String),
}

impl ToolError {
    /// Whether the failure is the system's (pipes, memory), not the tool's.
    pub fn is_system_resource(&self) -> bool {
        false
    }
}
