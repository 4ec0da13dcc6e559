//! Writing output files: atomically where the output is a regular file,
//! straight through where it is a device or a FIFO.
use std::fs::{self, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Symbolic links followed before giving up, as the kernel's `ELOOP` limit.
const MAX_LINKS: usize = 40;

/// Writes `bytes` to `path` as a compiler writes its output.
///
/// - A symbolic link is followed (a dangling one too): the file it names is
///   written and the link stays.
/// - A regular file, or a path where nothing is yet, is written atomically:
///   a temporary file in the same directory is written and renamed over it,
///   so readers see the old file or the whole new one, never part of it. On
///   any failure the temporary file is removed and the path is untouched.
///   A replaced file keeps its permission bits; a new one gets mode `0666`
///   less the umask, like an ordinary created file. (Other hard links to a
///   replaced file keep the old contents.)
/// - Anything else that exists (`/dev/null`, a FIFO), and anything under
///   `/dev` or `/proc` (`/dev/stdout`, `/proc/self/fd/1`, whatever they
///   name), is opened and written in place, never replaced.
///
/// Like other compilers it leaves flushing to disk to the system: an fsync
/// of the file and its directory costs several milliseconds a compile.
pub fn write_output(path: &Path, bytes: &[u8]) -> io::Result<()> {
    // `/dev/stdout` and `/proc/self/fd/N` name an open stream even where
    // that is a regular file (`tileiras -o /dev/stdout >> log`).
    if [Path::new("/dev"), Path::new("/proc")]
        .iter()
        .any(|d| path.starts_with(d))
    {
        return write_in_place(path, bytes);
    }
    // `metadata` follows links as opening does.
    match fs::metadata(path) {
        Ok(m) if m.is_file() => {
            write_atomically(&fs::canonicalize(path)?, bytes, Some(m.permissions()))
        }
        Ok(m) if !m.is_dir() => write_in_place(path, bytes),
        _ => write_atomically(&follow_links(path)?, bytes, None),
    }
}

/// Opens `path` for writing, truncated, and writes `bytes`.
fn write_in_place(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new().write(true).truncate(true).open(path)?;
    f.write_all(bytes)?;
    f.flush()
}

/// `path` with its last component's symbolic links followed to where
/// nothing is yet (a dangling link's target).
fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// The temporary-file-and-rename write of [`write_output`]; the new file
/// gets the permissions `keep` of the file it replaces, else `0666` less
/// the umask.
fn write_atomically(path: &Path, bytes: &[u8], keep: Option<Permissions>) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name")
    })?;
    let mut lead = std::ffi::OsString::from(".");
    lead.push(name);
    lead.push(".");
    // Named after this process, so a later write of the same file removes
    // one left by a process killed before the rename.
    let prefix = crate::tempfiles::prefix_in(dir, &lead);
    // Dropping `tmp` before `persist` succeeds removes the file.
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .permissions(Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    // Removed by the signal handler if the tool is killed before the
    // rename.
    let _tracked = crate::signals::track_file(tmp.path());
    if let Some(p) = keep {
        tmp.as_file().set_permissions(p)?;
    }
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
