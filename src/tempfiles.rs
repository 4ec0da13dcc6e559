//! Temporary files that a later run can clean up after a killed one.
//!
//! A process killed by `SIGKILL` (a caller's timeout) or dying in a library
//! user's process runs no clean-up, so the PTX, host object or cubin it had
//! written for ptxas or nvdisasm would stay in the temporary directory for
//! good. Each such file is therefore named after its owner:
//! `tileiras-<host>-<pid>-<start>-<random><suffix>`, where `<host>` is a
//! hash of the boot id and the PID namespace, `<pid>` the owning process
//! and `<start>` its start time (clock ticks after boot, from
//! `/proc/<pid>/stat`). The first time a process creates such a file in a
//! directory, it removes the files there of the same host whose owner is
//! gone: no process with that pid, or one started at another time (the pid
//! was reused). Files of live processes, of other machines or containers
//! sharing the directory, and anything not named this way are left alone;
//! so is everything when `/proc` cannot tell.
use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::signals::TempFile;

/// How every owned temporary file's name begins.
pub const PREFIX: &str = "tileiras-";

/// A hash of the boot id and the PID namespace: pids and start times only
/// mean something within one boot of one machine and one namespace.
fn host_tag() -> u64 {
    static TAG: OnceLock<u64> = OnceLock::new();
    *TAG.get_or_init(|| {
        let mut seed = std::fs::read("/proc/sys/kernel/random/boot_id").unwrap_or_default();
        if let Ok(ns) = std::fs::read_link("/proc/self/ns/pid") {
            seed.extend_from_slice(ns.as_os_str().as_bytes());
        }
        // FNV-1a: stable across builds and versions, unlike std's hashers.
        seed.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    })
}

/// The start time of process `pid` (field 22 of `/proc/<pid>/stat`).
/// `Ok(None)` when there is no such process; an error when `/proc` could
/// not tell.
fn start_time(pid: u32) -> io::Result<Option<u64>> {
    let stat = match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    // The command name (field 2) is in parentheses and may hold anything;
    // field 3 follows the last `)`.
    let after = stat
        .rfind(')')
        .map(|i| &stat[i + 1..])
        .ok_or_else(|| io::Error::other("malformed /proc stat"))?;
    after
        .split_whitespace()
        .nth(19)
        .and_then(|f| f.parse().ok())
        .map(Some)
        .ok_or_else(|| io::Error::other("malformed /proc stat"))
}

/// This process' owner fields, `(pid, start)`; `None` when `/proc` does
/// not say (then nothing is swept). Looked up again after a `fork`.
fn me() -> Option<(u32, u64)> {
    static ME: Mutex<Option<(u32, u64)>> = Mutex::new(None);
    let pid = std::process::id();
    let mut me = ME.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(m) = *me {
        if m.0 == pid {
            return Some(m);
        }
    }
    let start = start_time(pid).ok().flatten()?;
    *me = Some((pid, start));
    *me
}

/// The owner part of this process' file names,
/// `tileiras-<host>-<pid>-<start>-`; a random part and a suffix follow.
pub fn name_prefix() -> String {
    let (pid, start) = me().unwrap_or((std::process::id(), 0));
    format!("{PREFIX}{:016x}-{pid}-{start}-", host_tag())
}

/// The owner `(pid, start)` of a file named by this module on this host
/// after `lead`, or `None` for any other name.
fn owner(name: &[u8], lead: &[u8]) -> Option<(u32, u64)> {
    let rest = name.strip_prefix(lead)?.strip_prefix(PREFIX.as_bytes())?;
    let mut fields = rest.splitn(4, |&b| b == b'-');
    let (host, pid, start) = (fields.next()?, fields.next()?, fields.next()?);
    fields.next()?;
    let host = std::str::from_utf8(host).ok()?;
    if host.len() != 16 || u64::from_str_radix(host, 16).ok()? != host_tag() {
        return None;
    }
    let number = |f: &[u8]| -> Option<u64> {
        if f.is_empty() || !f.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(f).ok()?.parse().ok()
    };
    Some((u32::try_from(number(pid)?).ok()?, number(start)?))
}

/// Whether the owner of a file is certainly gone.
fn owner_gone(pid: u32, start: u64) -> bool {
    match start_time(pid) {
        Ok(None) => true,
        Ok(Some(s)) => s != start,
        Err(_) => false,
    }
}

/// Removes the files in `dir` named after `lead` and an owner of this host
/// that is gone (see the module comment); returns how many were removed.
pub fn sweep(dir: &Path, lead: &OsStr) -> usize {
    let Some(me) = me() else { return 0 };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, start)) = owner(name.as_bytes(), lead.as_bytes()) else {
            continue;
        };
        if (pid, start) == me || !owner_gone(pid, start) {
            continue;
        }
        if entry.file_type().is_ok_and(|t| t.is_file())
            && std::fs::remove_file(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// The prefix for a new file in `dir` whose name starts with `lead`
/// (empty in the temporary directory): `lead` and [`name_prefix`]. The
/// first call for a directory and lead in this process [`sweep`]s it.
pub fn prefix_in(dir: &Path, lead: &OsStr) -> OsString {
    static SWEPT: Mutex<Option<HashSet<(PathBuf, OsString)>>> = Mutex::new(None);
    let first = SWEPT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashSet::new)
        .insert((dir.to_owned(), lead.to_owned()));
    if first {
        sweep(dir, lead);
    }
    let mut prefix = lead.to_owned();
    prefix.push(name_prefix());
    prefix
}

/// Creates a temporary file holding `bytes` in `dir` (the system's
/// temporary directory, `TMPDIR`, when `None`), named after this process
/// and ending in `suffix`. It is removed when the returned guard drops, by
/// the command-line tool's signal handler, or else by a later run.
pub fn create(dir: Option<&Path>, suffix: &str, bytes: &[u8]) -> io::Result<TempFile> {
    let dir = dir.map_or_else(std::env::temp_dir, Path::to_owned);
    let prefix = prefix_in(&dir, OsStr::new(""));
    let f = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(suffix)
        .tempfile_in(&dir)?;
    let t = TempFile::new(f.into_temp_path());
    std::fs::write(t.path(), bytes)?;
    Ok(t)
}
