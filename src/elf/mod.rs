//! Output files: the host relocatable object that embeds the cubin, and
//! atomic writes.

/// A failure to build an output object.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ElfError(pub String);

/// Writes `bytes` to `path` through a temporary file in the same directory
/// and a rename, so a failure leaves the file system as it was.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("out"),
        std::process::id()
    ));
    let result = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
