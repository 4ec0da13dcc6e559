//! Running foreign host code in a forked child: the child calls
//! `ON_PRE_LOAD` with a recording table, then (when asked) one
//! argument-change callback on a parameter buffer, all in memory shared
//! with the parent; a fault or a hang of the child is an error here.

use crate::image::{Image, Mapping};
use std::sync::atomic::{AtomicPtr, Ordering};

/// How many slots the table handed to `ON_PRE_LOAD` has.
pub const SLOTS: usize = 32;
/// How many slot calls are recorded (later ones are counted only).
const MAX_CALLS: usize = 64;
/// Seconds a child may run.
const CHILD_SECONDS: u32 = 10;

/// One call the host code made through the table given to `ON_PRE_LOAD`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SlotCall {
    /// The slot's byte offset in the table (8 bytes a slot).
    pub offset: u64,
    /// The six integer-register arguments (rdi, rsi, rdx, rcx, r8, r9).
    pub args: [u64; 6],
}

/// What the child writes for the parent.
#[repr(C)]
struct Shared {
    calls: u64,
    log: [SlotCall; MAX_CALLS],
    pre_load_status: i64,
    out: u64,
    on_args_status: i64,
    /// The context area handed to ON_PRE_LOAD (its second argument).
    context: [u8; 256],
}

/// Where slot calls are recorded (in the child: the shared area).
static RECORD: AtomicPtr<Shared> = AtomicPtr::new(std::ptr::null_mut());

/// A table slot: records its call, returns 0.
extern "C" fn slot<const I: usize>(a: u64, b: u64, c: u64, d: u64, e: u64, f: u64) -> u64 {
    let r = RECORD.load(Ordering::SeqCst);
    if !r.is_null() {
        // SAFETY: RECORD points at the live shared area while a child runs.
        unsafe {
            let n = (*r).calls as usize;
            if n < MAX_CALLS {
                (*r).log[n] = SlotCall {
                    offset: 8 * I as u64,
                    args: [a, b, c, d, e, f],
                };
            }
            (*r).calls += 1;
        }
    }
    0
}

/// The slot functions' addresses, in table order.
macro_rules! table {
    ($($i:literal)*) => { [$(slot::<$i> as *const () as usize),*] };
}

fn table() -> [usize; SLOTS] {
    table!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31)
}

/// The result of one child run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildRun {
    /// `ON_PRE_LOAD`'s return value.
    pub pre_load_status: i32,
    /// The table calls it made, in order.
    pub calls: Vec<SlotCall>,
    /// The address it stored through its fourth argument.
    pub out: u64,
    /// The address of the context area passed as its second argument.
    pub context: u64,
    /// The argument-change callback's return value, when one ran.
    pub on_args_status: Option<i32>,
}

type PreLoad = unsafe extern "C" fn(*const usize, *mut u8, i32, *mut u64) -> i32;
type OnArgs = unsafe extern "C" fn(u64, u64, u64, *mut u8) -> i32;

/// Runs `ON_PRE_LOAD(table, context, n, &out)` in a child, then, for
/// `on_args = Some((f, first, params))`, `f(first[0], first[1], first[2],
/// params)`; `params` is updated with what the callback wrote.
pub(crate) fn run(
    image: &Image,
    pre_load: u64,
    n: i32,
    on_args: Option<(u64, [u64; 3], &mut [u8])>,
) -> Result<ChildRun, String> {
    let shared = Mapping::new(std::mem::size_of::<Shared>())?;
    let sh = shared.ptr as *mut Shared;
    let (f, first, params) = match on_args {
        Some((f, first, p)) => (f, first, Some(p)),
        None => (0, [0; 3], None),
    };
    let buf = Mapping::new(params.as_ref().map_or(1, |p| p.len()))?;
    if let Some(p) = &params {
        buf.write(0, p);
    }
    let table = table();
    let _ = image;
    // SAFETY: fork; the child only calls the loaded code and the slot
    // functions (no allocation, no locks) and leaves with _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: in the child; the addresses come from the loaded image.
        unsafe {
            libc::alarm(CHILD_SECONDS);
            RECORD.store(sh, Ordering::SeqCst);
            let pl: PreLoad = std::mem::transmute::<usize, PreLoad>(pre_load as usize);
            let mut out = 0u64;
            let s = pl(
                table.as_ptr(),
                (*sh).context.as_mut_ptr(),
                n,
                &mut out as *mut u64,
            );
            (*sh).pre_load_status = s as i64;
            (*sh).out = out;
            if f != 0 {
                let cb: OnArgs = std::mem::transmute::<usize, OnArgs>(f as usize);
                (*sh).on_args_status = cb(first[0], first[1], first[2], buf.ptr) as i64;
            }
            libc::_exit(0);
        }
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
        return Err(format!("waitpid: {}", std::io::Error::last_os_error()));
    }
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        return Err(if sig == libc::SIGALRM {
            format!("host code ran past {CHILD_SECONDS} s")
        } else {
            // SAFETY: strsignal returns a static string for any number.
            let name = unsafe { std::ffi::CStr::from_ptr(libc::strsignal(sig)) };
            format!(
                "host code died of signal {sig} ({})",
                name.to_string_lossy()
            )
        });
    }
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(format!("host code's process ended with status {status:#x}"));
    }
    // SAFETY: the child is gone; the shared area is ours alone.
    let s = unsafe { &*sh };
    if let Some(p) = params {
        p.copy_from_slice(&buf.read(buf.addr(), p.len()).unwrap());
    }
    Ok(ChildRun {
        pre_load_status: s.pre_load_status as i32,
        calls: s.log[..(s.calls as usize).min(MAX_CALLS)].to_vec(),
        out: s.out,
        context: s.context.as_ptr() as u64,
        on_args_status: (f != 0).then_some(s.on_args_status as i32),
    })
}
