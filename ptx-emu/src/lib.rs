//! `ptx-emu`: a test-only CPU emulator for PTX text as NVIDIA's `tileiras`
//! writes it.
//!
//! ```ignore
//! let m = Module::parse(ptx_text)?;
//! let mut dev = Device::new();
//! let a = dev.alloc(1024);
//! dev.write(a, &bytes);
//! let out = dev.launch(&m, "kernel", LaunchConfig::grid1d(4, 128), &[Param::U64(a.addr())])?;
//! let back = dev.read(a);
//! ```
//!
//! Semantics notes (where the PTX ISA leaves a choice, the emulator picks the
//! hardware behaviour and documents it here):
//! * Integer `div.u*` by zero gives all ones, `rem.u*` by zero gives the
//!   dividend; `div.s*` by zero gives -1 (all ones), `rem.s*` by zero the
//!   dividend; `div.s` of MIN by -1 wraps to MIN.
//! * Float arithmetic that produces a NaN produces the canonical NaN
//!   (`0x7fffffff` for f32, `0x7fff` for f16/bf16, `0x7fffffffffffffff` for f64).
//! * `.approx` instructions (`ex2`, `lg2`, `sin`, `cos`, `tanh`, `rcp`, `rsqrt`,
//!   `div.approx`) return the correctly rounded value of the exact function.
//!   `Device::approx_div_skew_ulps` moves f32 `div.approx`/`div.full`
//!   results off it, to check code that must hold anywhere within the
//!   ISA's error bound.
//! * All memory is sequentially consistent; fences order nothing more, but
//!   the strict checks below ask for the ones the ISA requires. CTAs run one
//!   after another in linear order, threads of a CTA run until they block
//!   (barrier, warp collective, failing `mbarrier.try_wait`, exit), so every
//!   run is deterministic.
//! * `bar.sync` without a thread count waits for every thread of the CTA; a
//!   thread that exits without arriving makes the barrier a reported deadlock.
//! * A thread runs at most 65536 instructions before the scheduler moves on, so
//!   spin-waits on shared-memory flags written by other threads of the CTA work;
//!   CTAs of different clusters run one after another, so a spin-wait on a flag
//!   written by a later CTA ends with a `Timeout` error (`max_instructions_per_thread`).
//! * TMA tensor maps use this crate's own 128-byte encoding, see [`TensorMap`].
//! * `cp.async` reads its source at issue and writes shared memory only when
//!   the thread's `cp.async.wait_group` / `wait_all` (or
//!   `cp.async.mbarrier.arrive`) completes its group, as late as the ISA
//!   allows: a read before the wait sees the old bytes, another thread's read
//!   not ordered after the wait is a race, and copies a thread never waits
//!   for never land. TMA copies (`cp.async.bulk`) complete at issue.
//! * `wgmma.mma_async` computes when issued, but the shared bytes it read
//!   stay in flight until a `wgmma.wait_group` of a thread of its
//!   warpgroup retires its group: a write to them before that (a store, a
//!   landing `cp.async`, a TMA box) is reported as a `Race`, as the
//!   hardware may read either value; so is an instruction other than a
//!   `wgmma` naming one of its accumulator registers before then.
//! * Shared-memory data races are reported (`ErrorKind::Race`): happens-before
//!   comes from barriers, mbarriers (a TMA box through its mbarrier's phase), cluster barriers
//!   and warp collectives (a `wgmma` orders the threads of each of its
//!   warps only: its `.sync` waits for the warp, not the warpgroup); strong (`.volatile/.relaxed/.acquire/.release`) and
//!   atomic accesses are exempt.  Turn off with `Device::race_check = false`.
//! * `tcgen05` (sm_100): each CTA has 128 lanes x 512 columns of tensor
//!   memory; `tcgen05.mma` runs when issued (exact products, one rounding per
//!   output, as `wgmma`) and `tcgen05.commit` arrives at once; `ld/st` run
//!   per thread; waits and fences move no data (the strict checks hold
//!   what they order). Reads or writes of columns
//!   not allocated, and a warp reaching lanes outside its 32-lane
//!   subpartition, are `OutOfBounds` errors. With `cta_group::2` the even
//!   CTA of a pair issues the MMA for both (each holds half of A, B and D).
//! * Strict checks of asynchronous code ([`AsyncChecks`], each reported as
//!   `ErrorKind::Async` with the instruction and thread, or as a
//!   `Deadlock` that says what a waiter misses; all on by default):
//!   - proxies: a generic write (`st.shared`, `stmatrix`, a landed
//!     `cp.async`, `tcgen05.st`...) read by the async proxy (`wgmma`
//!     operands, a TMA store's source, `tcgen05.mma`/`cp` operands) needs a
//!     `fence.proxy.async` (all spaces or `shared::*`) ordered between
//!     them; a TMA box is the write of an agent of the mbarrier it
//!     completes on, visible only to a thread that observed that phase,
//!     and it must come after every access the issuing thread has not
//!     ordered before the issue; a bulk store reads its source until a
//!     `cp.async.bulk.wait_group(.read)` retires it (writes before then,
//!     and exiting with one in flight, are reported);
//!   - mbarriers: more bytes delivered than a phase expects, more arrivals
//!     than its count, `mbarrier.init` over a pending phase; a waiter that
//!     never wakes is a `Deadlock` naming the missing arrivals or bytes;
//!   - `wgmma`: a `wgmma.fence` before the first `wgmma.mma_async` and
//!     between a computed write of its accumulator or A registers and the
//!     multiply (moves are NVIDIA's practice there and pass);
//!     those registers untouched until a `wgmma.wait_group` retires it
//!     (a `mov` copying one, as NVIDIA's loops copy their loop-carried
//!     accumulators right after the commit, passes, and its destination
//!     is held with the multiply until that wait); none in flight at exit;
//!   - `tcgen05`: an MMA writing cells a `tcgen05.ld` reads before its
//!     `wait::ld`, or reading cells a `tcgen05.st` writes before its
//!     `wait::st`, and a `dealloc` of columns either still reaches (a load's registers may be used before the wait, as
//!     NVIDIA's epilogues do: ptxas orders them); cells an MMA
//!     writes read only after its `commit`'s mbarrier phase is observed
//!     (never before the commit); `ld`/`st`/MMA of another thread's cells
//!     ordered by a synchronisation, with the `tcgen05.fence::*_thread_sync`
//!     pair around it or, as NVIDIA's attention does, after the
//!     `wait::ld/st` alone (a warp's own `ld`/`st`, collectives, in its
//!     program order);
//!   - `setmaxnreg`: counts a multiple of 8 in 24..=256; every thread of a
//!     warpgroup runs the same sequence of requests (from one instruction
//!     or several, as NVIDIA's code does).
//!
//!   The proxy and tensor-memory checks keep vector clocks whether or not
//!   `Device::race_check` reports plain races.
//! * Global memory written by one CTA (cluster) and read or written by another
//!   in the same launch is reported as a race too, unless the kernel contains
//!   atomics or gpu/system-scope fences (which can order CTAs).

#![warn(missing_docs)]

mod decode;
mod exec;
pub mod float;
pub mod hw_tensor_map;
pub mod ir;
mod parse;
mod race;
pub mod scale;

pub use exec::TensorMap;
pub use hw_tensor_map::{HwElem, HwTensorMap};
pub use ir::Module;
pub use parse::ParseError;

use std::fmt;

impl Module {
    /// Parses PTX text.
    pub fn parse(src: &str) -> Result<Module, ParseError> {
        parse::parse_module(src)
    }
    /// Finds a kernel by name.
    pub fn kernel(&self, name: &str) -> Option<&ir::Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

/// A device allocation handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DevPtr {
    addr: u64,
    len: usize,
}

impl DevPtr {
    /// Device (generic/global) address of the first byte.
    pub fn addr(&self) -> u64 {
        self.addr
    }
    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }
    /// True for a zero-length allocation.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Launch geometry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Number of CTAs in x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads per CTA in x, y, z.
    pub block: (u32, u32, u32),
    /// CTAs per cluster in x, y, z.
    pub cluster: (u32, u32, u32),
    /// Dynamic shared memory bytes.
    pub dynamic_smem: u32,
}

impl LaunchConfig {
    /// A 1-D grid of `grid` CTAs of `block` threads, no clusters.
    pub fn grid1d(grid: u32, block: u32) -> LaunchConfig {
        LaunchConfig {
            grid: (grid, 1, 1),
            block: (block, 1, 1),
            cluster: (1, 1, 1),
            dynamic_smem: 0,
        }
    }
}

/// A kernel argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Param {
    /// 32-bit scalar.
    U32(u32),
    /// 64-bit scalar or pointer.
    U64(u64),
    /// Raw bytes (e.g. a 128-byte tensor map).
    Bytes(Vec<u8>),
}

/// What went wrong during a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Access outside any allocation / outside shared or local memory.
    OutOfBounds,
    /// Access not aligned to its size.
    Misaligned,
    /// Read of shared memory never written in this CTA.
    UninitShared,
    /// Threads blocked forever (partial barrier, collective missing members, mbarrier never completing).
    Deadlock,
    /// Instruction not supported by the emulator.
    Unsupported,
    /// `trap` executed.
    Trap,
    /// Bad launch (unknown kernel, parameter mismatch, block size mismatch).
    BadLaunch,
    /// Exceeded the instruction budget.
    Timeout,
    /// Two threads access the same shared-memory byte without synchronisation.
    Race,
    /// A use of the asynchronous machinery the PTX ISA does not guarantee
    /// (a missing proxy fence, an mbarrier transaction count that does not
    /// match, a `wgmma` or `tcgen05` register used before its wait, a bad
    /// `setmaxnreg`): see [`AsyncChecks`].
    Async,
}

/// The strict checks of asynchronous code, each of which can be turned
/// off while debugging (all on by default; `PTX_EMU_ASYNC_CHECKS` read by
/// [`Device::new`]: `off`, or a comma-separated list of checks to turn
/// off, such as `no-proxy,no-wgmma`). Each rule cites its PTX ISA section
/// beside its check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsyncChecks {
    /// Generic-proxy writes read by the async proxy (`wgmma`, TMA stores,
    /// `tcgen05.mma`/`cp`) need a `fence.proxy.async`; async-proxy writes
    /// (TMA loads) are visible to generic reads only through the mbarrier
    /// phase they complete; generic writes must not overwrite bytes a
    /// bulk copy still reads.
    pub proxy: bool,
    /// mbarrier transaction counts and arrivals: no more bytes delivered
    /// than expected, no re-initialisation of a barrier with a phase
    /// pending, a hang reported with the barrier's state.
    pub mbarrier: bool,
    /// `wgmma`: registers written since the last `wgmma.fence` must not
    /// feed a `wgmma.mma_async`; A fragments and accumulators untouched
    /// until the `wait_group` that retires it; nothing in flight at exit.
    pub wgmma: bool,
    /// `tcgen05`: an MMA writes no cells a `ld` reads before its
    /// `wait::ld`, and reads none a `st` writes before its `wait::st`;
    /// tensor memory an MMA writes is read only after its commit's
    /// mbarrier phase; tensor-memory races.
    pub tcgen05: bool,
    /// `setmaxnreg`: executed by every warp of a warpgroup, with the same
    /// count, in the range and steps the ISA allows.
    pub setmaxnreg: bool,
}

impl AsyncChecks {
    /// Every check on.
    pub const ALL: AsyncChecks = AsyncChecks {
        proxy: true,
        mbarrier: true,
        wgmma: true,
        tcgen05: true,
        setmaxnreg: true,
    };
    /// Every check off.
    pub const NONE: AsyncChecks = AsyncChecks {
        proxy: false,
        mbarrier: false,
        wgmma: false,
        tcgen05: false,
        setmaxnreg: false,
    };

    /// The checks `PTX_EMU_ASYNC_CHECKS` leaves on (all when unset):
    /// `off` (or `none`) turns every one off, else each comma-separated
    /// `no-NAME` turns one off (`proxy`, `mbarrier`, `wgmma`, `tcgen05`,
    /// `setmaxnreg`).
    pub fn from_env() -> AsyncChecks {
        match std::env::var("PTX_EMU_ASYNC_CHECKS") {
            Ok(v) => AsyncChecks::parse(&v),
            Err(_) => AsyncChecks::ALL,
        }
    }

    /// Parses the `PTX_EMU_ASYNC_CHECKS` syntax (unknown words are ignored).
    pub fn parse(spec: &str) -> AsyncChecks {
        let mut c = AsyncChecks::ALL;
        for w in spec.split(',').map(str::trim) {
            match w {
                "off" | "none" => c = AsyncChecks::NONE,
                "no-proxy" => c.proxy = false,
                "no-mbarrier" => c.mbarrier = false,
                "no-wgmma" => c.wgmma = false,
                "no-tcgen05" => c.tcgen05 = false,
                "no-setmaxnreg" => c.setmaxnreg = false,
                _ => {}
            }
        }
        c
    }
}

/// An emulation error with its location.
#[derive(Debug, Clone)]
pub struct EmuError {
    /// Error category.
    pub kind: ErrorKind,
    /// Kernel name.
    pub kernel: String,
    /// PTX line of the instruction (0 if none).
    pub line: u32,
    /// Instruction text.
    pub inst: String,
    /// CTA index of the thread.
    pub ctaid: (u32, u32, u32),
    /// Thread index.
    pub tid: (u32, u32, u32),
    /// Address involved, if any.
    pub addr: Option<u64>,
    /// Details (for `Trap`, the printf output that preceded it).
    pub msg: String,
}

impl fmt::Display for EmuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} in kernel {} at line {} `{}` (ctaid {:?}, tid {:?})",
            self.kind, self.kernel, self.line, self.inst, self.ctaid, self.tid
        )?;
        if let Some(a) = self.addr {
            write!(f, " address {a:#x}")?;
        }
        write!(f, ": {}", self.msg)
    }
}

impl std::error::Error for EmuError {}

/// Result of a successful launch.
#[derive(Debug, Clone, Default)]
pub struct LaunchResult {
    /// Captured `vprintf` output.
    pub printf: String,
    /// Dynamic instructions executed (all threads).
    pub instructions: u64,
    /// The PTX lines of the instructions some thread executed (a guarded
    /// one with its guard true), ascending.
    pub executed_lines: Vec<u32>,
}

#[derive(Debug, Clone)]
struct Alloc {
    base: u64,
    data: Vec<u8>,
    /// Per byte: 1 + (cluster sequence number mod 65535) of its last writer in the running launch.
    shadow: Vec<u16>,
}

/// Emulated device memory plus launch entry point.
#[derive(Debug, Clone)]
pub struct Device {
    allocs: Vec<Alloc>,
    next: u64,
    last: usize,
    /// Per-thread instruction budget (guards against infinite loops).
    pub max_instructions_per_thread: u64,
    /// Report shared-memory data races (on by default).
    pub race_check: bool,
    /// The strict checks of asynchronous code ([`AsyncChecks`]; all on by
    /// default, less those `PTX_EMU_ASYNC_CHECKS` turns off).
    pub async_checks: AsyncChecks,
    /// Ulps by which finite nonzero f32 `div.approx` and `div.full`
    /// results move away from zero (toward it when negative); 0, the
    /// correctly rounded quotient, by default.
    pub approx_div_skew_ulps: i32,
}

impl Default for Device {
    fn default() -> Self {
        Self::new()
    }
}

/// Generic-address base of the global allocations.
pub const GLOBAL_BASE: u64 = 0x1_0000_0000;

impl Device {
    /// An empty device.
    pub fn new() -> Device {
        Device {
            allocs: Vec::new(),
            next: GLOBAL_BASE,
            last: 0,
            max_instructions_per_thread: 1 << 28,
            race_check: true,
            async_checks: AsyncChecks::from_env(),
            approx_div_skew_ulps: 0,
        }
    }

    /// Allocates `bytes` zeroed bytes, 256-byte aligned, with an unmapped guard gap after it.
    pub fn alloc(&mut self, bytes: usize) -> DevPtr {
        let base = self.next;
        self.next = (base + bytes as u64 + 4096 + 255) & !255;
        self.allocs.push(Alloc {
            base,
            data: vec![0; bytes],
            shadow: Vec::new(),
        });
        DevPtr {
            addr: base,
            len: bytes,
        }
    }

    /// Allocates and fills.
    pub fn alloc_from(&mut self, data: &[u8]) -> DevPtr {
        let p = self.alloc(data.len());
        self.write(p, data);
        p
    }

    /// Frees an allocation.
    pub fn free(&mut self, p: DevPtr) {
        self.allocs.retain(|a| a.base != p.addr);
        self.last = 0;
    }

    fn find(&self, addr: u64) -> Option<usize> {
        if let Some(a) = self.allocs.get(self.last) {
            if addr >= a.base && addr < a.base + a.data.len() as u64 {
                return Some(self.last);
            }
        }
        let i = self.allocs.partition_point(|a| a.base <= addr);
        if i == 0 {
            return None;
        }
        let a = &self.allocs[i - 1];
        if addr < a.base + a.data.len() as u64 {
            Some(i - 1)
        } else {
            None
        }
    }

    /// Slice of device memory `[addr, addr+len)` if inside one allocation.
    pub(crate) fn slice_mut(&mut self, addr: u64, len: usize) -> Option<&mut [u8]> {
        let i = self.find(addr)?;
        self.last = i;
        let a = &mut self.allocs[i];
        let off = (addr - a.base) as usize;
        a.data.get_mut(off..off + len)
    }

    /// Inter-CTA race check of an access by writer id `me`: returns the id of
    /// another CTA that wrote one of the bytes during this launch.
    pub(crate) fn gcheck(
        &mut self,
        addr: u64,
        len: usize,
        me: u16,
        write: bool,
    ) -> Result<(), u16> {
        let Some(i) = self.find(addr) else {
            return Ok(());
        };
        let a = &mut self.allocs[i];
        if a.shadow.len() != a.data.len() {
            a.shadow = vec![0; a.data.len()];
        }
        let off = (addr - a.base) as usize;
        for x in off..(off + len).min(a.shadow.len()) {
            let s = a.shadow[x];
            if s != 0 && s != me {
                return Err(s);
            }
            if write {
                a.shadow[x] = me;
            }
        }
        Ok(())
    }

    /// Forgets the inter-CTA write history (end of a launch).
    pub(crate) fn gclear(&mut self) {
        for a in &mut self.allocs {
            a.shadow = Vec::new();
        }
    }

    /// Writes bytes at the start of an allocation.
    pub fn write(&mut self, p: DevPtr, data: &[u8]) {
        self.write_at(p.addr, data);
    }

    /// Writes bytes at any device address (panics if out of bounds).
    pub fn write_at(&mut self, addr: u64, data: &[u8]) {
        self.slice_mut(addr, data.len())
            .expect("write outside allocation")
            .copy_from_slice(data);
    }

    /// Reads a whole allocation.
    pub fn read(&mut self, p: DevPtr) -> Vec<u8> {
        self.read_at(p.addr, p.len)
    }

    /// Reads bytes at any device address (panics if out of bounds).
    pub fn read_at(&mut self, addr: u64, len: usize) -> Vec<u8> {
        self.slice_mut(addr, len)
            .expect("read outside allocation")
            .to_vec()
    }

    /// Runs a kernel with the block shape its `.reqntid` (else `.maxntid`) names (1-D 128 threads
    /// if it has none) and no dynamic shared memory: `grid` counts CTAs (or
    /// clusters for `.blocksareclusters` kernels).
    pub fn launch_grid(
        &mut self,
        m: &Module,
        kernel: &str,
        grid: (u32, u32, u32),
        params: &[Param],
    ) -> Result<LaunchResult, EmuError> {
        let block = m
            .kernel(kernel)
            .and_then(|k| k.reqntid.or(k.maxntid))
            .unwrap_or((128, 1, 1));
        exec::launch(
            self,
            m,
            kernel,
            LaunchConfig {
                grid,
                block,
                cluster: (1, 1, 1),
                dynamic_smem: 0,
            },
            params,
        )
    }

    /// Runs a kernel to completion.
    pub fn launch(
        &mut self,
        m: &Module,
        kernel: &str,
        cfg: LaunchConfig,
        params: &[Param],
    ) -> Result<LaunchResult, EmuError> {
        exec::launch(self, m, kernel, cfg, params)
    }
}

/// Little-endian helpers for tests.
pub mod bytes {
    /// f32 slice to bytes.
    pub fn from_f32(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
    /// bytes to f32 vec.
    pub fn to_f32(b: &[u8]) -> Vec<f32> {
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
    /// i32 slice to bytes.
    pub fn from_i32(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
    /// bytes to i32 vec.
    pub fn to_i32(b: &[u8]) -> Vec<i32> {
        b.chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
    /// u32 slice to bytes.
    pub fn from_u32(v: &[u32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
    /// bytes to u32 vec.
    pub fn to_u32(b: &[u8]) -> Vec<u32> {
        b.chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
    /// u16 slice to bytes.
    pub fn from_u16(v: &[u16]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
    /// bytes to u16 vec.
    pub fn to_u16(b: &[u8]) -> Vec<u16> {
        b.chunks_exact(2)
            .map(|c| u16::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
    /// i64 slice to bytes.
    pub fn from_i64(v: &[i64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
    /// bytes to i64 vec.
    pub fn to_i64(b: &[u8]) -> Vec<i64> {
        b.chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
    /// f64 slice to bytes.
    pub fn from_f64(v: &[f64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
    /// bytes to f64 vec.
    pub fn to_f64(b: &[u8]) -> Vec<f64> {
        b.chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
}
