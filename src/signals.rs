//! Clean-up when the command-line tool is killed.
//!
//! Once [`install`] has run (only the `tileiras` binary calls it),
//! `SIGINT`, `SIGTERM` and `SIGHUP` first kill the children still running
//! (ptxas, nvdisasm) and remove the temporary files still registered, then
//! end the process with the same signal, so its parent sees the usual
//! status. A signal the process was started ignoring (`nohup`, a
//! background job's `SIGINT`) stays ignored. `SIGKILL` runs no handler:
//! the children die all the same (they ask for the parent-death signal,
//! see [`crate::toolchain::process`]), and the temporary files are removed
//! by a later run ([`crate::tempfiles`]).
//!
//! Registration is lock-free and a no-op until [`install`]: a process using
//! the library is never touched. The handler only reads fixed slots and
//! calls `kill`, `unlink`, `signal` and `raise`, all async-signal-safe. A
//! registered path is never freed, because the handler may be reading it
//! on another thread; the tool registers a handful per run.
use std::ffi::{c_char, c_int, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};

/// Files and children tracked at once; more are simply not tracked.
const SLOTS: usize = 64;
/// The signals that clean up.
const SIGNALS: [c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

static INSTALLED: AtomicBool = AtomicBool::new(false);
static FILES: [AtomicPtr<c_char>; SLOTS] = [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];
/// A child's pid, or minus the process group it leads; 0 for a free slot.
static CHILDREN: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

/// Installs the handlers, and gives `SIGPIPE` back its default action
/// (the Rust runtime ignores it), so that a reader that goes away ends the
/// tool with `SIGPIPE` as it ends C tools. Call once, early, from a
/// program's `main`.
pub fn install() {
    INSTALLED.store(true, Ordering::SeqCst);
    // SAFETY: setting the default disposition of SIGPIPE.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    for sig in SIGNALS {
        // SAFETY: querying and setting the disposition of a catchable
        // signal with zeroed (valid) sigaction structs; the handler is
        // async-signal-safe.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction == libc::SIG_IGN
            {
                continue;
            }
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = handler as extern "C" fn(c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

extern "C" fn handler(sig: c_int) {
    for slot in &CHILDREN {
        let pid = slot.load(Ordering::SeqCst);
        if pid != 0 {
            // SAFETY: kill is async-signal-safe; the pid belongs to a child
            // not yet reaped (its slot is cleared as it is reaped).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    for slot in &FILES {
        let path = slot.load(Ordering::SeqCst);
        if !path.is_null() {
            // SAFETY: a NUL-terminated path that is never freed.
            unsafe { libc::unlink(path) };
        }
    }
    // SAFETY: restoring the default action and re-raising ends the process
    // with this signal; both calls are async-signal-safe.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// A registration, withdrawn when dropped.
#[derive(Debug)]
pub struct Tracked {
    slot: Option<(bool, usize)>,
}

impl Tracked {
    fn none() -> Tracked {
        Tracked { slot: None }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        match self.slot {
            // The path stays allocated: see the module comment.
            Some((true, i)) => FILES[i].store(std::ptr::null_mut(), Ordering::SeqCst),
            Some((false, i)) => CHILDREN[i].store(0, Ordering::SeqCst),
            None => {}
        }
    }
}

/// Removes `path` if the tool is killed before the returned registration is
/// dropped. Drop it before the file is removed or renamed.
pub fn track_file(path: &Path) -> Tracked {
    if !INSTALLED.load(Ordering::SeqCst) {
        return Tracked::none();
    }
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return Tracked::none();
    };
    let raw = c.into_raw();
    for (i, slot) in FILES.iter().enumerate() {
        let free = slot.compare_exchange(
            std::ptr::null_mut(),
            raw,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        if free.is_ok() {
            return Tracked {
                slot: Some((true, i)),
            };
        }
    }
    // SAFETY: `raw` came from `into_raw` and was never shared.
    drop(unsafe { CString::from_raw(raw) });
    Tracked::none()
}

/// Kills child `pid` (with `group`, the process group it leads) if the tool
/// is killed before the returned registration is dropped. Drop it as the
/// child is reaped.
pub fn track_child(pid: i32, group: bool) -> Tracked {
    if !INSTALLED.load(Ordering::SeqCst) || pid <= 0 {
        return Tracked::none();
    }
    let target = if group { -pid } else { pid };
    for (i, slot) in CHILDREN.iter().enumerate() {
        if slot
            .compare_exchange(0, target, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return Tracked {
                slot: Some((false, i)),
            };
        }
    }
    Tracked::none()
}

/// A temporary file removed when dropped, and by the signal handler if the
/// tool is killed first.
pub struct TempFile {
    // Declared first, so withdrawn before the file is removed.
    _tracked: Tracked,
    path: tempfile::TempPath,
}

impl TempFile {
    /// Tracks `path`.
    pub fn new(path: tempfile::TempPath) -> TempFile {
        TempFile {
            _tracked: track_file(&path),
            path,
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// An owned copy of the path.
    pub fn to_path_buf(&self) -> PathBuf {
        self.path.to_path_buf()
    }
}
