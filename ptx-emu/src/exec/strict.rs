//! The strict checks of asynchronous code ([`crate::AsyncChecks`]): the
//! state they keep per CTA and the rules, each beside the PTX ISA section
//! it comes from. The proxy and happens-before part lives in the race
//! detector (`race.rs`); this file holds the rest:
//!
//! * `wgmma` register fences and groups in flight;
//! * bulk (TMA) reads of shared memory in flight until their
//!   `cp.async.bulk.wait_group.read`;
//! * mbarrier phases: transaction counts, arrivals, re-initialisation, what
//!   a waiter that never wakes waits for;
//! * `tcgen05.ld` registers until `tcgen05.wait::ld`, `tcgen05.st` columns
//!   until `tcgen05.wait::st`, MMA writes until their `tcgen05.commit`;
//! * `setmaxnreg` counts.

use super::*;

/// A report of a strict check.
pub(super) fn e_async(addr: Option<u64>, msg: impl Into<String>) -> E {
    e(ErrorKind::Async, addr, msg)
}

/// A CTA's state of the strict checks.
#[derive(Default)]
pub(super) struct Strict {
    /// Registers some `wgmma.mma_async` names as accumulator or A
    /// fragment (none without `wgmma`).
    wg_regs: Vec<bool>,
    /// Per thread, a bit per register: written since the thread's last
    /// `wgmma.fence` (only registers of `wg_regs` are tracked).
    wg_dirty: Vec<u64>,
    /// Words of `wg_dirty` a thread.
    wg_words: usize,
    /// Per thread: has executed a `wgmma.fence`.
    wg_fenced: Vec<bool>,
    /// Per thread: shared byte ranges bulk copies (TMA stores) it issued
    /// still read, in bulk groups.
    pub(super) bulk: Vec<InFlight<(usize, usize)>>,
    /// Per thread: the mbarrier (offset) a blocked `try_wait` waits on, and
    /// the parity or phase it waits for.
    pub(super) waiting_on: Vec<Option<(u32, u64)>>,
    /// Tensor-memory cells (`(lane, col)`) `tcgen05.ld`s of each thread
    /// read until its `tcgen05.wait::ld`.
    pub(super) tc_ld: Vec<Vec<(u32, u32)>>,
    /// Per tensor-memory cell: the `tcgen05.ld`s and `tcgen05.st`s not yet
    /// waited for that reach it (made with the first of them).
    tc_ld_count: Vec<u16>,
    tc_st_count: Vec<u16>,
    /// Tensor-memory cells (`lane * COLS + col`) `tcgen05.st`s of each
    /// thread write until its `tcgen05.wait::st`.
    pub(super) tc_st: Vec<Vec<(u32, u32)>>,
    /// Per thread: the mbarriers its `tcgen05.commit`s arrived on so far
    /// (a commit tracks every earlier asynchronous tcgen05 operation of
    /// the thread, so its phase covers the MMAs earlier commits tracked).
    pub(super) tc_commits: Vec<Vec<u32>>,
    /// Cells `tcgen05.mma`s issued by each thread write, not yet committed:
    /// `(lane range, column range)`.
    pub(super) tc_mma: Vec<Vec<(std::ops::Range<u32>, std::ops::Range<u32>)>>,
    /// Per thread: the `setmaxnreg`s it ran (`.inc`, count).
    maxnreg: Vec<Vec<(bool, u32)>>,
}

impl Strict {
    /// The state of a CTA of `n` threads running kernel `k`.
    /// `wg_regs` is the launch's [`wgmma_registers`].
    pub(super) fn new(wg_regs: &[bool], n: usize) -> Strict {
        let wg_words = wg_regs.len().div_ceil(64);
        Strict {
            wg_regs: wg_regs.to_vec(),
            wg_dirty: vec![0; n * wg_words],
            wg_words,
            wg_fenced: vec![false; n],
            bulk: (0..n).map(|_| InFlight::default()).collect(),
            waiting_on: vec![None; n],
            tc_ld: vec![Vec::new(); n],
            tc_ld_count: Vec::new(),
            tc_st_count: Vec::new(),
            tc_st: vec![Vec::new(); n],
            tc_mma: vec![Vec::new(); n],
            tc_commits: vec![Vec::new(); n],
            maxnreg: vec![Vec::new(); n],
        }
    }

    /// Notes the registers thread `t` wrote with `inst` (not a `wgmma`).
    ///
    /// A `mov` does not count: NVIDIA's code zeroes and copies accumulator
    /// registers between the `wgmma.fence` and the `wgmma.mma_async`
    /// (the inline block's operands), copies ptxas folds into the
    /// register allocation; what it never does there is compute into them.
    pub(super) fn note_writes(&mut self, t: usize, inst: &Inst) {
        if self.wg_words == 0 || inst.op == OpK::Mov {
            return;
        }
        for r in first_operand_regs(inst) {
            if self.wg_regs.get(r as usize) == Some(&true) {
                self.wg_dirty[t * self.wg_words + r as usize / 64] |= 1 << (r % 64);
            }
        }
    }

    /// `wgmma.fence` by thread `t`.
    pub(super) fn wgmma_fence(&mut self, t: usize) {
        if let Some(t_fenced) = self.wg_fenced.get_mut(t) {
            *t_fenced = true;
        }
        if self.wg_words > 0 {
            let w = self.wg_words;
            self.wg_dirty[t * w..(t + 1) * w].fill(0);
        }
    }

    /// PTX ISA "Asynchronous Warpgroup Level Matrix Instructions:
    /// wgmma.fence": a `wgmma.fence` must come before the first
    /// `wgmma.mma_async` of a warpgroup, and between a register access and
    /// any `wgmma.mma_async` that accesses the same registers as
    /// accumulator or A fragment (accumulator accesses across `wgmma`s of
    /// the same shape are ordered without one).
    pub(super) fn wgmma_issue(&self, k: &Kernel, group: &[usize], inst: &Inst) -> R<()> {
        if self.wg_words == 0 {
            return Ok(());
        }
        let regs = wgmma_regs(inst);
        for &g in group {
            if !self.wg_fenced[g] {
                return Err(e_async(
                    None,
                    format!(
                        "wgmma.mma_async by thread {g} with no wgmma.fence before it \
                         (PTX ISA: wgmma.fence is required before the first wgmma.mma_async)"
                    ),
                ));
            }
            let w = self.wg_words;
            if let Some(&r) = regs
                .iter()
                .find(|&&r| self.wg_dirty[g * w + r as usize / 64] >> (r % 64) & 1 == 1)
            {
                return Err(e_async(
                    None,
                    format!(
                        "wgmma.mma_async reads register {} of thread {g}, written since \
                         its last wgmma.fence (PTX ISA: a register access and a wgmma.mma_async \
                         of the same registers need a wgmma.fence between them)",
                        reg_name(k, r)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The registers `inst` writes through its first operand (none for an
/// instruction whose first operand it only reads).
fn first_operand_regs(inst: &Inst) -> Vec<u32> {
    if inst.ops.is_empty() || !writes_first_operand(inst.op) {
        return Vec::new();
    }
    match &inst.ops[0] {
        Opnd::Reg(r) => vec![*r],
        Opnd::Vec(v) => v
            .iter()
            .filter_map(|o| match o {
                Opnd::Reg(r) => Some(*r),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Per register of `k`: some `wgmma.mma_async` names it as accumulator or
/// A fragment (empty when the wgmma check is off or `k` has no `wgmma`).
pub(super) fn wgmma_registers(k: &Kernel, checks: crate::AsyncChecks) -> Vec<bool> {
    let mut regs = Vec::new();
    if checks.wgmma && k.insts.iter().any(|i| i.op == OpK::Wgmma) {
        regs = vec![false; k.nregs as usize];
        for i in k.insts.iter().filter(|i| i.op == OpK::Wgmma) {
            for r in wgmma_regs(i) {
                regs[r as usize] = true;
            }
        }
    }
    regs
}

/// Whether `op`'s first operand, when a register, is one it writes.
fn writes_first_operand(op: OpK) -> bool {
    !matches!(
        op,
        OpK::St
            | OpK::Red
            | OpK::Bar
            | OpK::BarArrive
            | OpK::BarWarp
            | OpK::ClusterBar
            | OpK::MbarInit
            | OpK::MbarInval
            | OpK::CpAsync
            | OpK::CpAsyncArrive
            | OpK::CpAsyncWait
            | OpK::CpAsyncCommit
            | OpK::CpAsyncWaitAll
            | OpK::CpBulkTensor
            | OpK::CpBulkCommit
            | OpK::CpBulkWait
            | OpK::Bra
            | OpK::Call
            | OpK::Ret
            | OpK::Exit
            | OpK::Trap
            | OpK::Nop
            | OpK::Stmatrix
            | OpK::Wgmma
            | OpK::WgmmaFence
            | OpK::WgmmaCommit
            | OpK::WgmmaWait
            | OpK::FenceProxyAsync
            | OpK::Setmaxnreg
            | OpK::Tcgen05
    )
}

/// The accumulator and A-fragment registers a `wgmma.mma_async` names.
pub(super) fn wgmma_regs(inst: &Inst) -> Vec<u32> {
    let mut out = Vec::new();
    for o in inst.ops.iter().take(2) {
        if let Opnd::Vec(v) = o {
            out.extend(v.iter().filter_map(|x| match x {
                Opnd::Reg(r) => Some(*r),
                _ => None,
            }));
        }
    }
    out
}

/// PTX ISA "Data Movement and Conversion Instructions: cp.async.bulk.tensor"
/// and "cp.async.bulk.wait_group": the source of a bulk copy from shared
/// memory is read until a `cp.async.bulk.wait_group.read` (or
/// `wait_group`) retires its bulk group; a write to those bytes before then
/// may change what the copy stores.
pub(super) fn bulk_reading(cta: &Cta, o: usize, size: usize) -> R<()> {
    for (t, f) in cta.strict.bulk.iter().enumerate() {
        if let Some(&(s, end)) = f.iter().find(|&&(s, end)| o < end && s < o + size) {
            return Err(e_async(
                Some(o as u64),
                format!(
                    "shared write of {size} bytes at {o:#x} while a bulk copy thread {t} \
                     issued still reads {s:#x}..{end:#x} (no cp.async.bulk.wait_group.read \
                     retired it)"
                ),
            ));
        }
    }
    Ok(())
}

/// PTX ISA "Parallel Synchronization and Communication Instructions:
/// mbarrier" ("Phase completion", "tx-count"): a phase completes when its
/// pending arrivals and its transaction count both reach zero. Bytes
/// delivered beyond the expected count once every arrival is in leave the
/// count negative: the phase can never complete.
pub(super) fn mbar_overdelivered(mb: &Mbar, a: u32) -> R<()> {
    if mb.tx < 0 && mb.pending == 0 {
        return Err(e_async(
            Some(a as u64),
            format!(
                "mbarrier at {a:#x}: {} bytes more delivered than its phase {} expects \
                 (expect_tx counts fewer bytes than the copies completing on it)",
                -mb.tx, mb.phase
            ),
        ));
    }
    Ok(())
}

/// What a thread blocked on the mbarrier `(a, parity)` waits for, for the
/// deadlock report.
pub(super) fn mbar_hang(cta: &Cta, a: u32, want: u64) -> String {
    match cta.mbar.get(&a) {
        None => format!("waits on mbarrier at {a:#x}, which is not initialised"),
        Some(mb) => {
            let why = match (mb.pending, mb.tx) {
                (0, tx) if tx > 0 => format!(
                    "every arrival is in but {tx} expected transaction bytes were never \
                     delivered (expect_tx counts more bytes than the copies completing on it)"
                ),
                (p, tx) if tx < 0 => format!(
                    "{p} arrivals missing; {} bytes more delivered than expected",
                    -tx
                ),
                (p, 0) => format!("{p} of {} arrivals missing", mb.expected),
                (p, tx) => format!(
                    "{p} of {} arrivals missing and {tx} expected bytes not delivered",
                    mb.expected
                ),
            };
            format!(
                "waits on mbarrier at {a:#x} for the phase of parity {} to complete; it is in \
                 phase {}: {why}",
                want & 1,
                mb.phase
            )
        }
    }
}

/// PTX ISA "mbarrier.init": initialising an mbarrier object that is in
/// use (a phase with arrivals or transaction bytes pending) is undefined.
pub(super) fn mbar_reinit(cta: &Cta, a: u32) -> R<()> {
    match cta.mbar.get(&a) {
        Some(mb) if mb.pending != mb.expected || mb.tx != 0 => Err(e_async(
            Some(a as u64),
            format!(
                "mbarrier.init of the mbarrier at {a:#x} while its phase {} is pending \
                 ({} of {} arrivals in, transaction count {})",
                mb.phase,
                mb.expected - mb.pending,
                mb.expected,
                mb.tx
            ),
        )),
        _ => Ok(()),
    }
}

/// PTX ISA "setmaxnreg": the count is a multiple of 8 from 24 to 256,
/// and every warp of a warpgroup executes the same `setmaxnreg`. NVIDIA's
/// code runs the producer warp's and the other warps' from different
/// instructions with the same action and count (the ISA's "same
/// instruction" read as the same request): each thread's k-th
/// `setmaxnreg` must equal every other thread's of its warpgroup.
pub(super) fn setmaxnreg(cta: &mut Cta, t: usize, inc: bool, n: u64) -> R<()> {
    if !((24..=256).contains(&n) && n.is_multiple_of(8)) {
        return Err(e_async(
            None,
            format!("setmaxnreg count {n}: the ISA allows multiples of 8 from 24 to 256"),
        ));
    }
    let k = cta.strict.maxnreg[t].len();
    let wg = t / 128 * 128;
    for u in wg..(wg + 128).min(cta.n) {
        if let Some(&(i, c)) = cta.strict.maxnreg[u].get(k) {
            if (i, c) != (inc, n as u32) {
                let name = |i: bool| if i { "inc" } else { "dec" };
                return Err(e_async(
                    None,
                    format!(
                        "setmaxnreg.{} {n} by thread {t} where thread {u} of its warpgroup \
                         ran setmaxnreg.{} {c} (PTX ISA: every warp of a warpgroup executes \
                         the same setmaxnreg)",
                        name(inc),
                        name(i)
                    ),
                ));
            }
        }
    }
    cta.strict.maxnreg[t].push((inc, n as u32));
    Ok(())
}

/// At the end of a CTA: where a thread of a warpgroup ran `setmaxnreg`,
/// every thread of it ran as many.
pub(super) fn setmaxnreg_at_end(cta: &Cta) -> R<()> {
    for wg in (0..cta.n).step_by(128) {
        let threads = wg..(wg + 128).min(cta.n);
        let counts: Vec<usize> = threads
            .clone()
            .map(|t| cta.strict.maxnreg[t].len())
            .collect();
        let (lo, hi) = (counts.iter().min(), counts.iter().max());
        if let (Some(&lo), Some(&hi)) = (lo, hi) {
            if lo != hi {
                let t = threads
                    .clone()
                    .find(|&t| cta.strict.maxnreg[t].len() == lo)
                    .unwrap();
                let u = threads
                    .clone()
                    .find(|&t| cta.strict.maxnreg[t].len() == hi)
                    .unwrap();
                return Err(e_async(
                    None,
                    format!(
                        "thread {u} ran {hi} setmaxnreg, thread {t} of its warpgroup {lo} \
                         (PTX ISA: every warp of a warpgroup executes the same setmaxnreg)"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// What thread `t` must not leave behind when it exits:
/// * PTX ISA "wgmma.wait_group": a `wgmma.mma_async` not retired by a
///   `wgmma.wait_group` has not written its accumulators (and still reads
///   shared memory);
/// * PTX ISA "cp.async.bulk.wait_group": a bulk copy from shared memory
///   not waited for may read it after the CTA exits.
pub(super) fn at_exit(l: &Launch, cta: &Cta, t: usize) -> R<()> {
    if l.checks.wgmma {
        let n = cta.wg[t].iter().count();
        if n > 0 {
            return Err(e_async(
                None,
                format!(
                    "thread {t} exits with {n} wgmma.mma_async in flight \
                     (no wgmma.commit_group and wgmma.wait_group retired them)"
                ),
            ));
        }
    }
    if l.checks.proxy {
        let n = cta.strict.bulk[t].iter().count();
        if n > 0 {
            return Err(e_async(
                None,
                format!(
                    "thread {t} exits with {n} bulk copies from shared memory still reading \
                     (no cp.async.bulk.wait_group retired them)"
                ),
            ));
        }
    }
    Ok(())
}

/// PTX ISA "tcgen05.commit" and "tcgen05.mma": the MMA writes D
/// asynchronously; a `tcgen05.ld/st` of its cells before the `commit`
/// that tracks it (and the wait on that commit's mbarrier) reads or
/// overwrites a value in flight.
pub(super) fn tc_mma_pending(cta: &Cta, lane: u32, col: u32) -> R<()> {
    for (t, pending) in cta.strict.tc_mma.iter().enumerate() {
        if pending
            .iter()
            .any(|(ls, cs)| ls.contains(&lane) && cs.contains(&col))
        {
            return Err(e_async(
                None,
                format!(
                    "tensor memory lane {lane} column {col} accessed while a tcgen05.mma \
                     thread {t} issued writes it, before any tcgen05.commit tracks that MMA"
                ),
            ));
        }
    }
    Ok(())
}

impl Strict {
    /// Thread `t`'s `tcgen05.ld` (`load`) or `tcgen05.st` reaches `cells`
    /// until its wait.
    pub(super) fn tc_issue(&mut self, t: usize, load: bool, cells: Vec<(u32, u32)>) {
        let cols = super::tcgen05::COLS;
        let count = if load {
            &mut self.tc_ld_count
        } else {
            &mut self.tc_st_count
        };
        if count.is_empty() {
            *count = vec![0; (super::tcgen05::LANES * cols) as usize];
        }
        for &(ln, col) in &cells {
            let c = &mut count[(ln * cols + col) as usize];
            *c = c.saturating_add(1);
        }
        match load {
            true => self.tc_ld[t].extend(cells),
            false => self.tc_st[t].extend(cells),
        }
    }

    /// Thread `t`'s `tcgen05.wait::ld` (`load`) or `wait::st`.
    pub(super) fn tc_wait(&mut self, t: usize, load: bool) {
        let cols = super::tcgen05::COLS;
        let (list, count) = match load {
            true => (&mut self.tc_ld[t], &mut self.tc_ld_count),
            false => (&mut self.tc_st[t], &mut self.tc_st_count),
        };
        for (ln, col) in list.drain(..) {
            let c = &mut count[(ln * cols + col) as usize];
            *c = c.saturating_sub(1);
        }
    }

    /// The first of `cells` a `tcgen05.st` (`stores`) or `tcgen05.ld` not
    /// yet waited for reaches, and the thread that issued it.
    fn tc_pending_cell(
        &self,
        cells: &[(u32, std::ops::Range<u32>)],
        stores: bool,
    ) -> Option<(u32, u32, usize)> {
        let cols = super::tcgen05::COLS;
        let (count, lists) = match stores {
            true => (&self.tc_st_count, &self.tc_st),
            false => (&self.tc_ld_count, &self.tc_ld),
        };
        let reached = |ln: u32, col: u32| {
            count
                .get((ln * cols + col) as usize)
                .is_some_and(|&c| c > 0)
        };
        let (ln, col) = cells
            .iter()
            .find_map(|(ln, cs)| cs.clone().find(|&c| reached(*ln, c)).map(|c| (*ln, c)))?;
        let t = lists
            .iter()
            .position(|p| p.contains(&(ln, col)))
            .unwrap_or(0);
        Some((ln, col, t))
    }
}

/// PTX ISA "tcgen05.wait": a `tcgen05.st` (`tcgen05.ld`) is complete
/// only after `tcgen05.wait::st` (`wait::ld`) of its thread: an MMA
/// reading cells a store still writes may read the old values; one
/// writing cells a load still reads may change what it loads.
///
/// NVIDIA's code computes with a load's registers before its
/// `wait::ld` (ptxas orders register uses itself), and waits before the
/// cells are written again: the wait is held to the tensor memory, not
/// to the registers.
pub(super) fn tc_pending(cta: &Cta, cells: &[(u32, std::ops::Range<u32>)], stores: bool) -> R<()> {
    let Some((ln, col, t)) = cta.strict.tc_pending_cell(cells, stores) else {
        return Ok(());
    };
    let msg = match stores {
        true => format!(
            "tcgen05.mma reads tensor memory lane {ln} column {col} that a tcgen05.st \
             of thread {t} writes, before that thread's tcgen05.wait::st"
        ),
        false => format!(
            "tcgen05.mma writes tensor memory lane {ln} column {col} that a tcgen05.ld \
             of thread {t} still reads, before that thread's tcgen05.wait::ld"
        ),
    };
    Err(e_async(None, msg))
}

/// PTX ISA "tcgen05.wait": the columns a `tcgen05.dealloc` gives back
/// must have no `tcgen05.ld` or `tcgen05.st` reaching them that its
/// thread has not waited for.
pub(super) fn tc_pending_at_dealloc(cta: &Cta, cells: &[(u32, std::ops::Range<u32>)]) -> R<()> {
    for (stores, what, wait) in [(false, "tcgen05.ld", "ld"), (true, "tcgen05.st", "st")] {
        if let Some((ln, col, t)) = cta.strict.tc_pending_cell(cells, stores) {
            return Err(e_async(
                None,
                format!(
                    "tcgen05.dealloc gives back tensor memory lane {ln} column {col} that a \
                     {what} of thread {t} still reaches, before that thread's \
                     tcgen05.wait::{wait}"
                ),
            ));
        }
    }
    Ok(())
}

/// The PTX name of register `r` of kernel `k`.
fn reg_name(k: &Kernel, r: u32) -> String {
    k.reg_names
        .get(r as usize)
        .cloned()
        .unwrap_or_else(|| format!("#{r}"))
}
