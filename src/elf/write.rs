//! Atomic file writes.
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// directory is written and renamed over `path`, so readers see the old
/// file or the whole new one, never part of it. On any failure the
/// temporary file is removed and `path` is untouched. The new file gets
/// mode `0666` less the umask, like an ordinary created file. Like other
/// compilers it leaves flushing to disk to the system: an fsync of the file
/// and its directory costs several milliseconds a compile.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name")
    })?;
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    // Dropping `tmp` before `persist` succeeds removes the file.
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
