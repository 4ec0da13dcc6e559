//! A CUDA-agnostic subprocess harness.
//!
//! Guarantees:
//! - The child gets the argv given (no shell), an environment snapshot
//!   (inherited by default, with overrides), stdin from `/dev/null`, and
//!   stdout/stderr on pipes. With [`Command::merge_stderr`] the child's
//!   stderr is `dup2`'ed onto its stdout so one buffer holds both, in order.
//! - Every child is started by `clone(CLONE_VM | CLONE_VFORK)` + `execve`,
//!   the way glibc's `posix_spawn` starts one (no copy of our address
//!   space), but running our own code before `exec`: everything it uses
//!   (argv, envp, limits) is built before the clone, and it makes only
//!   async-signal-safe calls, with our signal handlers reset to their
//!   defaults and every signal blocked until just before `exec`. It applies
//!   a new session or resource limits when asked. An `exec` failure exits
//!   127 (not found) or 126 (found but not executable) and is reported to
//!   [`Command::run`] as an error, with the child's `errno`, which comes
//!   back on a close-on-exec pipe: nothing relies on the child sharing our
//!   memory, so the report is the same where `clone` gives the child a copy
//!   of it instead (user-mode emulators such as `qemu-aarch64` run
//!   `CLONE_VM | CLONE_VFORK` as a `fork`).
//! - No child outlives us: each asks for `SIGKILL` when the thread that
//!   started it ends (`PR_SET_PDEATHSIG`), and exits at once if we died
//!   before it could ask. That thread waits in [`Command::run`] until the
//!   child is reaped, so the signal comes only when the whole process is
//!   gone, even by `SIGKILL`, which no handler sees: the command-line tool
//!   killed by a timeout, or a library user's process that dies mid-compile.
//!   What the child itself starts is not covered (ptxas and nvdisasm start
//!   nothing); a new session's group is, on a timeout, as below.
//! - Both pipes are read concurrently with `poll`, so a child writing
//!   megabytes to either stream never deadlocks against us.
//! - A timeout is a deadline on that `poll` loop: no `SIGALRM`, no signal
//!   handler, nothing process-wide, so many threads may run children at once.
//!   On expiry the child (its whole process group when it leads a new
//!   session) gets `SIGKILL` and is reaped. A session leader's group is also
//!   killed when the leader ends, so nothing it started outlives the run.
//! - Every child is reaped with `wait4` before [`Command::run`] returns, and
//!   its resource usage is returned.
//! - All descriptors are created close-on-exec, so concurrent spawns from
//!   other threads never inherit them.
//! - In the command-line tool (after [`crate::signals::install`]) each child
//!   is registered until it is reaped, so a fatal signal to the tool kills
//!   it; a library user's process registers nothing.
use std::ffi::{CString, OsStr, OsString};
use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A resource limit the child sets before `exec`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rlimit {
    /// The resource, a `libc::RLIMIT_*` constant.
    pub resource: i32,
    /// Soft limit (`libc::RLIM_INFINITY` for none).
    pub soft: u64,
    /// Hard limit (`libc::RLIM_INFINITY` for none).
    pub hard: u64,
}

/// What to run and how.
#[derive(Clone, Debug)]
pub struct Command {
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(OsString, Option<OsString>)>,
    env_clear: bool,
    merge_stderr: bool,
    timeout: Option<Duration>,
    new_session: bool,
    rlimits: Vec<Rlimit>,
}

/// How the child ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Termination {
    /// It exited with this status.
    Exited(i32),
    /// A signal ended it.
    Signaled {
        /// The signal number.
        signal: i32,
        /// Whether a core file was written.
        core_dumped: bool,
    },
    /// The deadline passed; the child was sent `SIGKILL`.
    TimedOut {
        /// Whether it died and was reaped; `false` means it would not die.
        reaped: bool,
    },
}

impl Termination {
    /// Whether the child exited with status 0.
    pub fn success(self) -> bool {
        self == Termination::Exited(0)
    }
}

impl fmt::Display for Termination {
    /// The user-facing text: `exit status N`, the shell-style meanings of
    /// 126 and 127, a signal's description with ` (core dumped)`, or
    /// `Child timed out` / `Child timed out but wouldn't die`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Termination::Exited(127) => f.write_str("exit status 127: program not found"),
            Termination::Exited(126) => {
                f.write_str("exit status 126: Program could not be executed")
            }
            Termination::Exited(c) => write!(f, "exit status {c}"),
            Termination::Signaled {
                signal,
                core_dumped,
            } => {
                f.write_str(signal_description(signal))?;
                if core_dumped {
                    f.write_str(" (core dumped)")?;
                }
                Ok(())
            }
            Termination::TimedOut { reaped: true } => f.write_str("Child timed out"),
            Termination::TimedOut { reaped: false } => {
                f.write_str("Child timed out but wouldn't die")
            }
        }
    }
}

/// Resource usage of the reaped child, from `wait4`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResourceUsage {
    /// User CPU time.
    pub user_time: Duration,
    /// System CPU time.
    pub system_time: Duration,
    /// Peak resident set size in KiB.
    pub max_rss_kib: u64,
}

/// What a finished child left behind.
#[derive(Clone, Debug)]
pub struct Output {
    /// How it ended.
    pub termination: Termination,
    /// Captured stdout (with stderr interleaved when merged).
    pub stdout: Vec<u8>,
    /// Captured stderr; empty when merged into stdout.
    pub stderr: Vec<u8>,
    /// Resource usage (zero when the child could not be reaped).
    pub usage: ResourceUsage,
    /// Wall time from spawn to reap.
    pub wall_time: Duration,
    /// The child's process id (already reaped).
    pub pid: u32,
}

/// Why a child could not be started or watched.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The program does not exist (exit 127 in shell terms).
    #[error("{program}: program not found (PATH searched: {path})")]
    NotFound {
        /// The program as given.
        program: PathBuf,
        /// The PATH searched (or the path tried, for a program with a `/`).
        path: String,
    },
    /// The program exists but could not be executed (exit 126).
    #[error("{program}: Program could not be executed: {source}")]
    NotExecutable {
        /// The program.
        program: PathBuf,
        /// The `exec` error.
        source: io::Error,
    },
    /// An argument or environment entry held a NUL byte.
    #[error("argument or environment entry contains a NUL byte: {0:?}")]
    Nul(OsString),
    /// An operating-system call failed (pipes, clone, poll, wait).
    #[error("{context}: {source}")]
    System {
        /// What was being done.
        context: &'static str,
        /// The error.
        source: io::Error,
    },
}

impl SpawnError {
    /// Whether the failure is the system's (out of descriptors, processes,
    /// memory) rather than the program's.
    pub fn is_system_resource(&self) -> bool {
        matches!(self, SpawnError::System { .. })
    }
}

fn sys(context: &'static str) -> impl FnOnce(io::Error) -> SpawnError {
    move |source| SpawnError::System { context, source }
}

impl Command {
    /// A command running `program` (a path, or a name searched in `PATH`)
    /// with no arguments, the inherited environment and no timeout.
    pub fn new(program: impl Into<PathBuf>) -> Command {
        Command {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            env_clear: false,
            merge_stderr: false,
            timeout: None,
            new_session: false,
            rlimits: Vec::new(),
        }
    }

    /// Appends one argument.
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Command {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Appends arguments.
    pub fn args<I, S>(&mut self, args: I) -> &mut Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        for a in args {
            self.arg(a);
        }
        self
    }

    /// Sets an environment variable for the child.
    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Command {
        self.env
            .push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    /// Removes an environment variable from the child's environment.
    pub fn env_remove(&mut self, key: impl AsRef<OsStr>) -> &mut Command {
        self.env.push((key.as_ref().to_owned(), None));
        self
    }

    /// Starts the child from an empty environment instead of ours.
    pub fn env_clear(&mut self) -> &mut Command {
        self.env_clear = true;
        self.env.clear();
        self
    }

    /// Sends the child's stderr into the stdout buffer (`dup2`).
    pub fn merge_stderr(&mut self, merge: bool) -> &mut Command {
        self.merge_stderr = merge;
        self
    }

    /// Kills the child when it runs longer than this.
    pub fn timeout(&mut self, timeout: Option<Duration>) -> &mut Command {
        self.timeout = timeout;
        self
    }

    /// Runs the child in a new session (`setsid`); a timeout then kills its
    /// whole process group.
    pub fn new_session(&mut self, on: bool) -> &mut Command {
        self.new_session = on;
        self
    }

    /// Adds a resource limit the child sets before `exec`.
    pub fn rlimit(&mut self, limit: Rlimit) -> &mut Command {
        self.rlimits.push(limit);
        self
    }

    /// The program as given.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// The arguments after the program.
    pub fn get_args(&self) -> &[OsString] {
        &self.args
    }

    /// Whether the child does more than redirect and `exec` (a new session
    /// or resource limits). Every child starts the same way, by `clone` and
    /// `exec`; this no longer picks a different path.
    pub fn uses_fork(&self) -> bool {
        self.new_session || !self.rlimits.is_empty()
    }

    /// The child's environment: a snapshot of ours (or empty) with the
    /// overrides applied in order.
    pub fn environment(&self) -> Vec<(OsString, OsString)> {
        let mut vars: Vec<(OsString, OsString)> = if self.env_clear {
            Vec::new()
        } else {
            std::env::vars_os().collect()
        };
        for (k, v) in &self.env {
            vars.retain(|(key, _)| key != k);
            if let Some(v) = v {
                vars.push((k.clone(), v.clone()));
            }
        }
        vars
    }

    /// Runs the child to completion (or to the deadline) and captures its
    /// output. A non-zero exit or a signal is an `Ok` [`Output`]; only a
    /// failure to start or watch the child is an error.
    pub fn run(&self) -> Result<Output, SpawnError> {
        let env = self.environment();
        let path_var = env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone());
        let exe = resolve_program(&self.program, path_var.as_deref())?;

        let c = |s: &OsStr| CString::new(s.as_bytes()).map_err(|_| SpawnError::Nul(s.to_owned()));
        let exe_c = c(exe.as_os_str())?;
        let mut argv_c = Vec::with_capacity(self.args.len() + 1);
        argv_c.push(c(self.program.as_os_str())?);
        for a in &self.args {
            argv_c.push(c(a)?);
        }
        let mut envp_c = Vec::with_capacity(env.len());
        for (k, v) in &env {
            let mut kv = k.clone().into_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            envp_c.push(c(&OsString::from_vec(kv))?);
        }
        let argv = null_terminated(&argv_c);
        let envp = null_terminated(&envp_c);

        let (out_r, out_w) = pipe().map_err(sys("Couldn't create a pipe"))?;
        let err_pipe = if self.merge_stderr {
            None
        } else {
            Some(pipe().map_err(sys("Couldn't create a pipe"))?)
        };
        let err_w_fd = err_pipe
            .as_ref()
            .map_or(out_w.as_raw_fd(), |(_, w)| w.as_raw_fd());

        let start = Instant::now();
        // ETXTBSY: the executable was just written and some other thread's
        // child still holds it open for writing until its own exec.
        // That clears in moments; retry a few times before giving up.
        let mut attempt = 0;
        let pid = loop {
            match self.spawn(&exe, &exe_c, &argv, &envp, out_w.as_raw_fd(), err_w_fd) {
                Err(SpawnError::NotExecutable { ref source, .. })
                    if source.raw_os_error() == Some(libc::ETXTBSY) && attempt < 20 =>
                {
                    attempt += 1;
                    std::thread::sleep(Duration::from_millis(attempt));
                }
                r => break r?,
            }
        };
        // Our copies of the write ends must go, or we never see EOF.
        drop(out_w);
        let err_r = err_pipe.map(|(r, w)| {
            drop(w);
            r
        });
        let child = Child {
            pid,
            group: self.new_session,
            reaped: false,
            tracked: Some(crate::signals::track_child(pid, self.new_session)),
        };
        watch(child, out_r, err_r, self.timeout, start)
    }
}

fn null_terminated(v: &[CString]) -> Vec<*const libc::c_char> {
    v.iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// Finds `program`: a path with a `/` is used as is; a bare name is searched
/// in `path` (the child's `PATH`).
pub fn resolve_program(program: &Path, path: Option<&OsStr>) -> Result<PathBuf, SpawnError> {
    if program.as_os_str().as_bytes().contains(&b'/') {
        return if program.exists() {
            Ok(program.to_owned())
        } else {
            Err(SpawnError::NotFound {
                program: program.to_owned(),
                path: program.display().to_string(),
            })
        };
    }
    use std::os::unix::fs::PermissionsExt;
    let path = path.unwrap_or_default();
    // Like execvp: the first executable file wins; a file found without
    // execute permission is kept to report "could not be executed".
    let mut unexecutable = None;
    for dir in std::env::split_paths(path) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let cand = dir.join(program);
        if let Ok(md) = std::fs::metadata(&cand) {
            if md.is_file() {
                if md.permissions().mode() & 0o111 != 0 {
                    return Ok(cand);
                }
                unexecutable.get_or_insert(cand);
            }
        }
    }
    if let Some(cand) = unexecutable {
        return Ok(cand);
    }
    Err(SpawnError::NotFound {
        program: program.to_owned(),
        path: path.to_string_lossy().into_owned(),
    })
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and ours alone.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((above_stdio(r)?, above_stdio(w)?))
}

/// Moves a descriptor that landed on 0, 1 or 2 (our own stdio was closed)
/// to 3 or above, so the child's `dup2` onto 0..=2 cannot clobber it.
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: duplicating a descriptor we own; the result is new and ours.
    let new = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fcntl returned a fresh descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

fn exec_error(exe: &Path, errno: i32) -> SpawnError {
    let source = io::Error::from_raw_os_error(errno);
    if errno == libc::ENOENT {
        SpawnError::NotFound {
            program: exe.to_owned(),
            path: exe.display().to_string(),
        }
    } else {
        SpawnError::NotExecutable {
            program: exe.to_owned(),
            source,
        }
    }
}

/// What the cloned child needs, prepared by the parent before `clone`: the
/// child shares our memory until it calls `execve`, so it allocates nothing
/// and only reads this.
struct ChildArgs<'a> {
    exe: &'a CString,
    argv: &'a [*const libc::c_char],
    envp: &'a [*const libc::c_char],
    out_w: RawFd,
    err_w: RawFd,
    limits: &'a [(i32, libc::rlimit)],
    setsid: bool,
    /// Our pid, for the child's check that it was not orphaned already.
    parent: libc::pid_t,
    /// Write end of the close-on-exec pipe that carries the child's `errno`
    /// when it cannot `exec`: `execve` closes it, so the parent reads end
    /// of file when the child did exec.
    errno_w: RawFd,
}

/// The child's stack: an anonymous mapping with a guard page at its low
/// end, unmapped on drop (after the child has left it by `exec` or `_exit`).
struct ChildStack {
    base: *mut libc::c_void,
    len: usize,
}

/// Room for the child's few frames before `exec`; only touched pages cost.
const CHILD_STACK: usize = 256 * 1024;

impl ChildStack {
    fn new() -> io::Result<ChildStack> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        let len = CHILD_STACK.div_ceil(page) * page + page;
        // SAFETY: a fresh private anonymous mapping; checked below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let stack = ChildStack { base, len };
        // SAFETY: the lowest page of the mapping just made.
        if unsafe { libc::mprotect(base, page, libc::PROT_NONE) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(stack)
    }

    /// The initial stack pointer (stacks grow down on every Linux target
    /// we build for); page-aligned, so 16-byte aligned.
    fn top(&self) -> *mut libc::c_void {
        // SAFETY: one past the end of the mapping.
        unsafe { self.base.cast::<u8>().add(self.len).cast() }
    }
}

impl Drop for ChildStack {
    fn drop(&mut self) {
        // SAFETY: our own mapping, no longer used by anyone.
        unsafe { libc::munmap(self.base, self.len) };
    }
}

impl Command {
    /// Starts the child with `clone(CLONE_VM | CLONE_VFORK)`, as glibc's
    /// `posix_spawn` does, but with our own code between `clone` and
    /// `execve` ([`child_main`]), which asks for `SIGKILL` on our death. We
    /// are suspended until the child has called `execve` or `_exit`, so the
    /// outcome of `exec` is known when `clone` returns.
    fn spawn(
        &self,
        exe: &Path,
        exe_c: &CString,
        argv: &[*const libc::c_char],
        envp: &[*const libc::c_char],
        out_w: RawFd,
        err_w: RawFd,
    ) -> Result<libc::pid_t, SpawnError> {
        let limits: Vec<(i32, libc::rlimit)> = self
            .rlimits
            .iter()
            .map(|l| {
                (
                    l.resource,
                    libc::rlimit {
                        rlim_cur: l.soft as libc::rlim_t,
                        rlim_max: l.hard as libc::rlim_t,
                    },
                )
            })
            .collect();
        let stack = ChildStack::new().map_err(sys("Couldn't map a stack for the child"))?;
        let (errno_r, errno_w) = pipe().map_err(sys("Couldn't create a pipe"))?;
        let args = ChildArgs {
            exe: exe_c,
            argv,
            envp,
            out_w,
            err_w,
            limits: &limits,
            setsid: self.new_session,
            // SAFETY: getpid has no preconditions.
            parent: unsafe { libc::getpid() },
            errno_w: errno_w.as_raw_fd(),
        };
        // Block every signal around the clone: a handler of ours must never
        // run in the child, which shares our memory. The child resets the
        // handlers to their defaults before it unblocks anything.
        // SAFETY: zeroed sigset_t storage filled by sigfillset; the child
        // runs `child_main` on its own stack with `args`, both alive until
        // clone returns (CLONE_VFORK: after the child's execve or _exit).
        let (pid, clone_errno) = unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
            let pid = libc::clone(
                child_main,
                stack.top(),
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                &args as *const ChildArgs as *mut libc::c_void,
            );
            let clone_errno = io::Error::last_os_error();
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            (pid, clone_errno)
        };
        drop(stack);
        // Our copy of the write end must go, or the read below never ends.
        drop(errno_w);
        if pid < 0 {
            return Err(sys("Couldn't spawn")(clone_errno));
        }
        // End of file: the child exec'd. Four bytes: its errno.
        let errno = match read_errno(&errno_r) {
            Ok(None) => return Ok(pid),
            Ok(Some(errno)) => errno,
            Err(e) => {
                // Nothing known of the exec: the child must not run on.
                // SAFETY: killing and reaping our own unreaped child.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, std::ptr::null_mut(), 0);
                }
                return Err(sys("Couldn't read the child's exec status")(e));
            }
        };
        let mut status = 0;
        // SAFETY: reaping our own child, which has exited.
        unsafe {
            while libc::waitpid(pid, &mut status, 0) < 0
                && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
            {}
        }
        Err(match exec_error(exe, errno) {
            SpawnError::NotFound { program, .. } => SpawnError::NotFound {
                path: program.display().to_string(),
                program,
            },
            e => e,
        })
    }
}

/// Reads the `errno` a child that could not `exec` wrote to its status pipe:
/// `None` at end of file (it did exec, or it exited before writing anything).
fn read_errno(fd: &OwnedFd) -> io::Result<Option<i32>> {
    let mut buf = [0u8; 4];
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: reading into the unfilled tail of our own buffer.
        let n = unsafe {
            libc::read(
                fd.as_raw_fd(),
                buf[got..].as_mut_ptr().cast(),
                buf.len() - got,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            break;
        }
        got += n as usize;
    }
    match got {
        0 => Ok(None),
        4 => Ok(Some(i32::from_ne_bytes(buf))),
        _ => Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "a partial errno from the child",
        )),
    }
}

/// The cloned child: die with the thread that started us, reset signal
/// handlers, redirect, limit, exec; or record `errno` and `_exit` (127 for
/// a program not found, 126 otherwise).
///
/// Only async-signal-safe calls, no allocation, no unwinding: this runs in
/// a process that shares the parent's memory until `execve`.
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the parent's `ChildArgs`, alive until we exec or
    // exit (the parent is suspended meanwhile); see `exec_child`.
    unsafe { exec_child(&*(arg as *const ChildArgs)) }
}

/// # Safety
/// Only in a child cloned by [`Command::spawn`]; all pointers valid.
unsafe fn exec_child(a: &ChildArgs) -> ! {
    let fail = |code: i32| -> ! {
        let errno = (*libc::__errno_location()).max(1).to_ne_bytes();
        // A pipe write of 4 bytes is atomic; on failure the exit code alone
        // tells the parent.
        libc::write(a.errno_w, errno.as_ptr().cast(), errno.len());
        libc::_exit(code)
    };
    // SIGKILL when the thread that cloned us ends. That thread stays in
    // `Command::run` until it has reaped us, so this fires only when the
    // whole process ends mid-run: SIGKILLed, crashed, or exiting from
    // another thread. The flag survives `execve` (ptxas is not
    // set-user-ID).
    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
        fail(126);
    }
    // The parent may have died before the prctl: then we were already
    // handed to another process and no signal will come. Go at once.
    if libc::getppid() != a.parent {
        libc::_exit(126);
    }
    // Handlers are ours, and this process shares our memory: back to the
    // defaults before anything is unblocked. Ignored signals stay ignored
    // (as across exec), except SIGPIPE, which Rust ignores for itself.
    for sig in 1..=64 {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
            continue;
        }
        if sig == libc::SIGPIPE
            || (old.sa_sigaction != libc::SIG_IGN && old.sa_sigaction != libc::SIG_DFL)
        {
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
        }
    }
    let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
    if null < 0 || libc::dup2(null, 0) < 0 {
        fail(126);
    }
    if null != 0 {
        libc::close(null);
    }
    if libc::dup2(a.out_w, 1) < 0 || libc::dup2(a.err_w, 2) < 0 {
        fail(126);
    }
    for (res, lim) in a.limits {
        if libc::setrlimit(*res as _, lim) != 0 {
            fail(126);
        }
    }
    if a.setsid && libc::setsid() < 0 {
        fail(126);
    }
    let mut empty: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut empty);
    libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    libc::execve(a.exe.as_ptr(), a.argv.as_ptr(), a.envp.as_ptr());
    let errno = *libc::__errno_location();
    fail(if errno == libc::ENOENT { 127 } else { 126 })
}

/// A running child; killed and reaped on drop if still unreaped (any early
/// return inside `watch` leaves no zombie and no orphan).
struct Child {
    pid: libc::pid_t,
    group: bool,
    reaped: bool,
    /// Kills the child if the tool is killed first; withdrawn on reaping.
    tracked: Option<crate::signals::Tracked>,
}

impl Child {
    fn kill(&self) -> bool {
        // SAFETY: signalling our own unreaped child (or its process group,
        // which it leads after setsid); the pid cannot have been recycled
        // because we have not reaped it.
        unsafe {
            if self.group {
                libc::kill(-self.pid, libc::SIGKILL) == 0
                    || libc::kill(self.pid, libc::SIGKILL) == 0
            } else {
                libc::kill(self.pid, libc::SIGKILL) == 0
            }
        }
    }

    /// `wait4`, blocking or not. `Ok(None)` while the child still runs.
    fn try_wait(&mut self, block: bool) -> io::Result<Option<(i32, libc::rusage)>> {
        if self.group {
            // Wait without reaping, so the group id cannot be reused while we
            // take down whatever the session leader left behind.
            loop {
                // SAFETY: an all-zero siginfo_t is valid storage for waitid.
                let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
                let mut flags = libc::WEXITED | libc::WNOWAIT;
                if !block {
                    flags |= libc::WNOHANG;
                }
                // SAFETY: waiting for our own child with a valid out-pointer.
                let rc =
                    unsafe { libc::waitid(libc::P_PID, self.pid as libc::id_t, &mut info, flags) };
                if rc < 0 {
                    let e = io::Error::last_os_error();
                    if e.raw_os_error() == Some(libc::EINTR) {
                        continue;
                    }
                    return Err(e);
                }
                // SAFETY: waitid filled `info` (si_pid is 0 when nothing exited).
                if unsafe { info.si_pid() } == 0 {
                    return Ok(None);
                }
                break;
            }
            // SAFETY: the leader is a zombie we have not reaped, so its pid
            // (and group id) still belong to it.
            unsafe { libc::kill(-self.pid, libc::SIGKILL) };
        }
        loop {
            let mut status = 0;
            // SAFETY: an all-zero rusage is valid; wait4 fills it in.
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            let flags = if block || self.group {
                0
            } else {
                libc::WNOHANG
            };
            // SAFETY: waiting for our own child with valid out-pointers.
            let rc = unsafe { libc::wait4(self.pid, &mut status, flags, &mut usage) };
            if rc < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(e);
            }
            if rc == 0 {
                return Ok(None);
            }
            self.reaped = true;
            self.tracked = None;
            return Ok(Some((status, usage)));
        }
    }

    /// Waits until `deadline` (or for ever). Without a deadline this is a
    /// blocking `wait4`; with one, a `pidfd` is polled (Linux 5.3+), else
    /// `WNOHANG` is retried with a short backoff.
    fn wait_until(&mut self, deadline: Option<Instant>) -> io::Result<Option<(i32, libc::rusage)>> {
        let Some(deadline) = deadline else {
            return self.try_wait(true);
        };
        if let Some(r) = self.try_wait(false)? {
            return Ok(Some(r));
        }
        if let Some(pidfd) = pidfd_open(self.pid) {
            loop {
                let now = Instant::now();
                if now >= deadline {
                    return self.try_wait(false);
                }
                let ms = (deadline - now)
                    .as_micros()
                    .div_ceil(1000)
                    .min(i32::MAX as u128) as i32;
                let mut p = libc::pollfd {
                    fd: pidfd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd.
                let rc = unsafe { libc::poll(&mut p, 1, ms) };
                if rc < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                    break; // fall back to polling wait4
                }
                if rc > 0 {
                    if let Some(r) = self.try_wait(false)? {
                        return Ok(Some(r));
                    }
                }
            }
        }
        let mut nap = Duration::from_micros(20);
        loop {
            if let Some(r) = self.try_wait(false)? {
                return Ok(Some(r));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            std::thread::sleep(nap.min(deadline - now));
            nap = (nap * 2).min(Duration::from_millis(1));
        }
    }
}

/// A descriptor that becomes readable when `pid` exits, where the kernel
/// has `pidfd_open`.
fn pidfd_open(pid: libc::pid_t) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor
    // or -1; it touches no memory of ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: the syscall returned a fresh descriptor that we now own.
    Some(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

impl Drop for Child {
    fn drop(&mut self) {
        if !self.reaped {
            self.kill();
            let _ = self.wait_until(Some(Instant::now() + Duration::from_secs(5)));
        }
    }
}

/// How long we keep draining pipes held open by grandchildren after the
/// child itself is gone.
const ORPHAN_DRAIN: Duration = Duration::from_millis(100);
/// How long a `SIGKILL`ed child gets to die before we give up on it.
const KILL_GRACE: Duration = Duration::from_secs(5);

struct Stream {
    fd: Option<OwnedFd>,
    buf: Vec<u8>,
}

impl Stream {
    /// Reads what is available; closes the stream at EOF.
    fn read_available(&mut self) -> io::Result<()> {
        let Some(fd) = &self.fd else { return Ok(()) };
        let mut chunk = [0u8; 65536];
        loop {
            // SAFETY: reading into a local buffer of the stated length.
            let n = unsafe { libc::read(fd.as_raw_fd(), chunk.as_mut_ptr().cast(), chunk.len()) };
            if n > 0 {
                self.buf.extend_from_slice(&chunk[..n as usize]);
                if (n as usize) < chunk.len() {
                    return Ok(());
                }
                continue;
            }
            if n == 0 {
                self.fd = None;
                return Ok(());
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => return Ok(()),
                _ => return Err(e),
            }
        }
    }
}

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// What one round of [`pump`] ended with.
enum Pumped {
    /// Every stream reached EOF.
    Closed,
    /// The deadline passed.
    Deadline,
    /// Nothing happened for a tick; time to look at the child.
    Idle,
}

/// How long the pipes may stay silent before we check on the child itself.
const TICK: Duration = Duration::from_millis(50);

/// Polls the streams until they close, `deadline` passes, or (with
/// `idle_tick`) nothing arrives for [`TICK`].
fn pump(
    streams: &mut [Stream; 2],
    deadline: Option<Instant>,
    idle_tick: bool,
) -> Result<Pumped, SpawnError> {
    loop {
        let mut fds: Vec<libc::pollfd> = Vec::with_capacity(2);
        let mut which = Vec::with_capacity(2);
        for (i, s) in streams.iter().enumerate() {
            if let Some(fd) = &s.fd {
                fds.push(libc::pollfd {
                    fd: fd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                });
                which.push(i);
            }
        }
        if fds.is_empty() {
            return Ok(Pumped::Closed);
        }
        let mut wait = if idle_tick { Some(TICK) } else { None };
        if let Some(d) = deadline {
            let now = Instant::now();
            if now >= d {
                return Ok(Pumped::Deadline);
            }
            wait = Some(wait.map_or(d - now, |w| w.min(d - now)));
        }
        // Round up so we never spin on a sub-millisecond remainder.
        let timeout_ms = wait.map_or(-1, |w| {
            w.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
        });
        // SAFETY: `fds` is a valid array of `fds.len()` pollfd entries.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(SpawnError::System {
                context: "poll",
                source: e,
            });
        }
        if rc == 0 {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(Pumped::Deadline);
            }
            if idle_tick {
                return Ok(Pumped::Idle);
            }
            continue;
        }
        for (p, &i) in fds.iter().zip(&which) {
            if p.revents != 0 {
                streams[i]
                    .read_available()
                    .map_err(sys("Couldn't read from a child's pipe"))?;
            }
        }
    }
}

fn watch(
    mut child: Child,
    out_r: OwnedFd,
    err_r: Option<OwnedFd>,
    timeout: Option<Duration>,
    start: Instant,
) -> Result<Output, SpawnError> {
    set_nonblocking(&out_r).map_err(sys("fcntl"))?;
    if let Some(e) = &err_r {
        set_nonblocking(e).map_err(sys("fcntl"))?;
    }
    let mut streams = [
        Stream {
            fd: Some(out_r),
            buf: Vec::new(),
        },
        Stream {
            fd: err_r,
            buf: Vec::new(),
        },
    ];
    let deadline = timeout.map(|t| start + t);
    let waited = loop {
        match pump(&mut streams, deadline, true)? {
            Pumped::Closed => break child.wait_until(deadline).map_err(sys("wait4"))?,
            Pumped::Deadline => {
                // Perhaps the child exited and a grandchild holds the pipes.
                let r = child.try_wait(false).map_err(sys("wait4"))?;
                if r.is_some() {
                    pump(&mut streams, Some(Instant::now() + ORPHAN_DRAIN), false)?;
                }
                break r;
            }
            Pumped::Idle => {
                if let Some(r) = child.try_wait(false).map_err(sys("wait4"))? {
                    // The child is gone but something it started keeps the
                    // pipes open: take what is there and stop.
                    pump(&mut streams, Some(Instant::now() + ORPHAN_DRAIN), false)?;
                    break Some(r);
                }
            }
        }
    };
    let (termination, usage) = match waited {
        Some((status, usage)) => (decode_status(status), usage),
        None => {
            child.kill();
            match child
                .wait_until(Some(Instant::now() + KILL_GRACE))
                .map_err(sys("wait4"))?
            {
                Some((_, usage)) => (Termination::TimedOut { reaped: true }, usage),
                None => {
                    // Leave the drop guard nothing more to do: we tried.
                    child.reaped = true;
                    // SAFETY: an all-zero rusage is a valid value.
                    (Termination::TimedOut { reaped: false }, unsafe {
                        std::mem::zeroed()
                    })
                }
            }
        }
    };
    let [out, err] = streams;
    Ok(Output {
        termination,
        stdout: out.buf,
        stderr: err.buf,
        usage: ResourceUsage {
            user_time: timeval(usage.ru_utime),
            system_time: timeval(usage.ru_stime),
            max_rss_kib: usage.ru_maxrss.max(0) as u64,
        },
        wall_time: start.elapsed(),
        pid: child.pid as u32,
    })
}

fn timeval(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
}

/// Decodes a `wait4` status word.
pub fn decode_status(status: i32) -> Termination {
    if libc::WIFEXITED(status) {
        Termination::Exited(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        Termination::Signaled {
            signal: libc::WTERMSIG(status),
            core_dumped: libc::WCOREDUMP(status),
        }
    } else {
        Termination::Exited(-1)
    }
}

/// The conventional description of a signal (`Segmentation fault` for
/// `SIGSEGV`), as `strsignal` gives it on glibc.
pub fn signal_description(signal: i32) -> &'static str {
    match signal {
        libc::SIGHUP => "Hangup",
        libc::SIGINT => "Interrupt",
        libc::SIGQUIT => "Quit",
        libc::SIGILL => "Illegal instruction",
        libc::SIGTRAP => "Trace/breakpoint trap",
        libc::SIGABRT => "Aborted",
        libc::SIGBUS => "Bus error",
        libc::SIGFPE => "Floating point exception",
        libc::SIGKILL => "Killed",
        libc::SIGUSR1 => "User defined signal 1",
        libc::SIGSEGV => "Segmentation fault",
        libc::SIGUSR2 => "User defined signal 2",
        libc::SIGPIPE => "Broken pipe",
        libc::SIGALRM => "Alarm clock",
        libc::SIGTERM => "Terminated",
        libc::SIGSTKFLT => "Stack fault",
        libc::SIGCHLD => "Child exited",
        libc::SIGCONT => "Continued",
        libc::SIGSTOP => "Stopped (signal)",
        libc::SIGTSTP => "Stopped",
        libc::SIGTTIN => "Stopped (tty input)",
        libc::SIGTTOU => "Stopped (tty output)",
        libc::SIGURG => "Urgent I/O condition",
        libc::SIGXCPU => "CPU time limit exceeded",
        libc::SIGXFSZ => "File size limit exceeded",
        libc::SIGVTALRM => "Virtual timer expired",
        libc::SIGPROF => "Profiling timer expired",
        libc::SIGWINCH => "Window changed",
        libc::SIGIO => "I/O possible",
        libc::SIGPWR => "Power failure",
        libc::SIGSYS => "Bad system call",
        _ => "Unknown signal",
    }
}

/// The symbolic name of a signal (`SIGSEGV`), or `SIG<n>` for others.
pub fn signal_name(signal: i32) -> String {
    let known = [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGTRAP, "SIGTRAP"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGXCPU, "SIGXCPU"),
        (libc::SIGXFSZ, "SIGXFSZ"),
        (libc::SIGSYS, "SIGSYS"),
    ];
    known
        .iter()
        .find(|(n, _)| *n == signal)
        .map_or_else(|| format!("SIG{signal}"), |(_, s)| s.to_string())
}
