//! Shared-memory data-race and proxy checking with vector clocks.
//!
//! Happens-before edges come from CTA barriers (`bar.sync`/`barrier.sync`,
//! `bar.arrive` releases, `bar.red`), mbarriers (an arrive releases into
//! the phase it counts towards; a successful wait acquires the arrivals of
//! the phase it observed complete and of those before, never those that
//! already count towards a later phase), cluster barriers and warp
//! collectives (all participants join). Two accesses to the same shared byte by different
//! threads, at least one a plain write, with no happens-before path between
//! them are a data race. Strong accesses (`.volatile`, `.relaxed`,
//! `.acquire`, `.release`) and atomics are not checked, as in the PTX
//! memory model. Only the last write and the last read of each byte are
//! remembered, so some races may be missed, but every reported race is real.
//!
//! Proxies (PTX ISA, "Memory Consistency Model" > "Proxies" and
//! "Proxy-preserved base causality order"; `fence.proxy.async` in
//! "Parallel Synchronization and Communication Instructions: membar/fence"):
//! * A clock has three parts of `slots` entries each: the happens-before
//!   clock, the *proxy frontier* (per slot, the latest clock whose generic
//!   writes a `fence.proxy.async` has made visible to the async proxy) and
//!   the *tcgen05 frontier* (the latest clock whose `tcgen05` accesses a
//!   `tcgen05.fence::before_thread_sync` ordered before the thread's later
//!   synchronisation). All three travel along the same edges.
//! * A generic write read by the async proxy (a `wgmma` operand, a TMA
//!   store's source, a `tcgen05.mma` operand) must be in the reader's proxy
//!   frontier: write, then `fence.proxy.async` (by the writer or by any
//!   thread ordered after the write), then the synchronisation that orders
//!   the fence before the read.
//! * Writes of the async proxy (TMA loads) are made by *agents*, one per
//!   mbarrier they complete on (up to [`AGENTS`], shared past that: fewer
//!   reports, never false ones): an agent's clock reaches a thread only
//!   through a wait that observes that mbarrier's phase, so a generic read
//!   of a TMA's bytes that did not observe its phase is reported.

use std::collections::HashMap;

/// Agents (asynchronous writers, one per mbarrier) a detector tells apart.
pub(crate) const AGENTS: usize = 32;

/// The parts of a clock: happens-before, proxy frontier, tcgen05
/// frontier, mbarrier-initialisation frontier.
const PARTS: usize = 4;
const PROXY: usize = 1;
const TC: usize = 2;
const MBAR_INIT: usize = 3;

/// One remembered access: slot (a thread, or `n + agent`), its clock, the
/// instruction index, whether it went through the generic proxy, and
/// whether it was an `mbarrier.init`.
#[derive(Clone, Copy)]
pub(crate) struct Acc {
    slot: u16,
    generic: bool,
    mbar_init: bool,
    clock: u32,
    pc: u32,
}

const NONE: Acc = Acc {
    slot: u16::MAX,
    generic: false,
    mbar_init: false,
    clock: 0,
    pc: 0,
};

/// What an access conflicts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConflictKind {
    /// Two unordered accesses of threads (a plain data race).
    Race,
    /// A generic write read by the async proxy with no `fence.proxy.async`
    /// ordered between them.
    Unfenced,
    /// An asynchronous write (a TMA load completing on an mbarrier) whose
    /// mbarrier phase the accessing thread has not observed.
    Unobserved,
    /// An asynchronous write (a TMA load) over bytes another thread's access
    /// not ordered before the copy's issue still uses.
    AsyncOverwrite,
    /// An asynchronous write over bytes a generic access used with no
    /// `fence.proxy.async` ordered between them.
    UnfencedOverwrite,
    /// An mbarrier used, initialised or invalidated with no
    /// synchronisation ordering it with its initialisation, its other uses
    /// or its invalidation.
    MbarOrder,
}

/// Per-CTA race-detection state.
pub(crate) struct Race {
    /// Threads.
    n: usize,
    /// Slots of one clock part: threads, then agents.
    slots: usize,
    /// Each thread's clock: `PARTS * slots` entries (happens-before, proxy
    /// frontier, tcgen05 frontier, mbarrier-initialisation frontier).
    vc: Vec<u32>,
    /// Each thread's tcgen05 frontier as of its last
    /// `tcgen05.fence::after_thread_sync` (`slots` entries a thread).
    tc_after: Vec<u32>,
    w: Vec<Acc>,
    r: Vec<Acc>,
    bar: Vec<Vec<u32>>,
    /// Per mbarrier: what its agent's asynchronous writes release.
    mbar: HashMap<u32, Vec<u32>>,
    /// Per mbarrier: the threads' arrivals, by the phase they arrived in
    /// (a wait acquires the phases up to the one it observed complete, not
    /// arrivals that already count towards the next).
    mbar_phases: HashMap<u32, std::collections::BTreeMap<u32, Vec<u32>>>,
    cluster: Vec<u32>,
    /// Agents: the mbarrier offset each one completes on, and its clock.
    agent_of: HashMap<u32, usize>,
    agent_mbar: Vec<u32>,
    agent_clock: Vec<u32>,
    /// Report plain data races (proxy conflicts are reported regardless).
    pub(crate) report_races: bool,
    /// Report proxy conflicts.
    pub(crate) report_proxy: bool,
    /// Report tensor-memory conflicts.
    pub(crate) report_tc: bool,
    /// Report mbarrier objects used out of order with their initialisation.
    pub(crate) report_mbar: bool,
    /// The reads being performed are the async proxy's (see
    /// [`Race::async_read`]).
    pub(crate) async_reader: bool,
    /// The write being performed is an `mbarrier.init`.
    pub(crate) mbar_init_write: bool,
    /// The access being performed is strong or atomic: do not check it.
    pub(crate) skip: bool,
}

/// A detected conflict: the other access's slot and instruction index,
/// whether it was a write, and what rule it breaks.
pub(crate) struct Conflict {
    pub(crate) other_tid: usize,
    pub(crate) other_pc: u32,
    pub(crate) other_write: bool,
    pub(crate) addr: usize,
    pub(crate) kind: ConflictKind,
    /// For an agent's write: the mbarrier it completes on.
    pub(crate) mbar: Option<u32>,
}

fn join(dst: &mut [u32], src: &[u32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        if *s > *d {
            *d = *s;
        }
    }
}

impl Race {
    /// A detector for `n` threads over `bytes` bytes (shared memory, then
    /// any further memory such as tensor memory cells).
    pub(crate) fn new(n: usize, bytes: usize) -> Race {
        let slots = n + AGENTS;
        let width = PARTS * slots;
        let mut vc = vec![0; n * width];
        for t in 0..n {
            vc[t * width + t] = 1;
        }
        Race {
            n,
            slots,
            vc,
            tc_after: vec![0; n * slots],
            w: vec![NONE; bytes],
            r: vec![NONE; bytes],
            bar: vec![vec![0; width]; 16],
            mbar: HashMap::new(),
            mbar_phases: HashMap::new(),
            cluster: vec![0; width],
            agent_of: HashMap::new(),
            agent_mbar: vec![0; AGENTS],
            agent_clock: vec![0; AGENTS],
            report_races: true,
            report_proxy: true,
            report_tc: true,
            report_mbar: true,
            async_reader: false,
            mbar_init_write: false,
            skip: false,
        }
    }

    fn width(&self) -> usize {
        PARTS * self.slots
    }

    fn vc(&self, t: usize) -> &[u32] {
        let w = self.width();
        &self.vc[t * w..(t + 1) * w]
    }

    fn vc_mut(&mut self, t: usize) -> &mut [u32] {
        let w = self.width();
        &mut self.vc[t * w..(t + 1) * w]
    }

    fn tick(&mut self, t: usize) {
        let w = self.width();
        self.vc[t * w + t] += 1;
    }

    fn now(&self, t: usize) -> u32 {
        self.vc[t * self.width() + t]
    }

    fn ordered(&self, t: usize, a: Acc) -> bool {
        a.slot == u16::MAX
            || a.slot as usize == t
            || a.clock <= self.vc[t * self.width() + a.slot as usize]
    }

    /// Whether the generic access `a` is in thread `t`'s proxy frontier
    /// (an `mbarrier.init` also in its mbarrier-initialisation frontier).
    fn fenced(&self, t: usize, a: Acc) -> bool {
        !a.generic || a.slot == u16::MAX || {
            let (w, s, x) = (self.width(), self.slots, a.slot as usize);
            let seen = |part: usize| a.clock <= self.vc[t * w + part * s + x];
            seen(PROXY) || a.mbar_init && seen(MBAR_INIT)
        }
    }

    fn acc(&self, t: usize, pc: u32, generic: bool) -> Acc {
        Acc {
            slot: t as u16,
            generic,
            mbar_init: false,
            clock: self.now(t),
            pc,
        }
    }

    fn conflict(&self, a: Acc, x: usize, write: bool, kind: ConflictKind) -> Conflict {
        let agent = (a.slot as usize).checked_sub(self.n);
        Conflict {
            other_tid: a.slot as usize,
            other_pc: a.pc,
            other_write: write,
            addr: x,
            kind,
            mbar: agent.map(|g| self.agent_mbar[g]),
        }
    }

    /// The conflict of an access by `t` with the earlier access `a` of
    /// byte `x`, if they are not ordered and the conflict is reported.
    fn unordered(&self, t: usize, a: Acc, x: usize, write: bool) -> Option<Conflict> {
        if self.ordered(t, a) {
            return None;
        }
        let agent = a.slot as usize >= self.n;
        match (agent, self.report_proxy, self.report_races) {
            (true, true, _) => Some(self.conflict(a, x, write, ConflictKind::Unobserved)),
            (false, _, true) => Some(self.conflict(a, x, write, ConflictKind::Race)),
            _ => None,
        }
    }

    /// The conflict of an mbarrier initialisation or use by `t` with the
    /// earlier access `a` of its byte `x`, if they are not ordered.
    fn mbar_unordered(&self, t: usize, a: Acc, x: usize, write: bool) -> Option<Conflict> {
        (self.report_mbar && !self.ordered(t, a))
            .then(|| self.conflict(a, x, write, ConflictKind::MbarOrder))
    }

    /// PTX ISA "mbarrier.init" / "mbarrier.inval": thread `t` uses the
    /// mbarrier object at `[o, o+8)` (an arrive, a completed wait, an
    /// invalidation): its initialisation must be ordered before, and the
    /// use is remembered so that a later initialisation must come after it.
    pub(crate) fn mbar_use(&mut self, t: usize, pc: u32, o: usize) -> Result<(), Conflict> {
        if self.skip {
            return Ok(());
        }
        let me = self.acc(t, pc, true);
        for x in o..(o + 8).min(self.w.len()) {
            if let Some(c) = self.mbar_unordered(t, self.w[x], x, true) {
                return Err(c);
            }
            self.r[x] = me;
        }
        Ok(())
    }

    /// Checks and records a read of `[o, o+len)` by thread `t` at instruction `pc`.
    pub(crate) fn read(&mut self, t: usize, pc: u32, o: usize, len: usize) -> Result<(), Conflict> {
        if self.skip {
            return Ok(());
        }
        if self.async_reader {
            return self.async_read(t, pc, o, len);
        }
        let me = self.acc(t, pc, true);
        for x in o..o + len {
            if let Some(c) = self.unordered(t, self.w[x], x, true) {
                return Err(c);
            }
            self.r[x] = me;
        }
        Ok(())
    }

    /// Checks and records a read of `[o, o+len)` by the async proxy on
    /// behalf of thread `t` (a `wgmma` operand, a TMA store's source): the
    /// last write must be ordered before it and, if generic, fenced.
    pub(crate) fn async_read(
        &mut self,
        t: usize,
        pc: u32,
        o: usize,
        len: usize,
    ) -> Result<(), Conflict> {
        if self.skip {
            return Ok(());
        }
        let me = self.acc(t, pc, false);
        for x in o..o + len {
            let w = self.w[x];
            if let Some(c) = self.unordered(t, w, x, true) {
                return Err(c);
            }
            if self.report_proxy && !self.fenced(t, w) {
                return Err(self.conflict(w, x, true, ConflictKind::Unfenced));
            }
            self.r[x] = me;
        }
        Ok(())
    }

    /// Records a read of `[o, o+len)` by thread `t` without checking it
    /// (the end of an asynchronous read the thread waited for).
    pub(crate) fn record_read(&mut self, t: usize, pc: u32, o: usize, len: usize) {
        let me = self.acc(t, pc, false);
        for x in o..(o + len).min(self.r.len()) {
            self.r[x] = me;
        }
    }

    /// Checks and records a write of `[o, o+len)` by thread `t`.
    pub(crate) fn write(
        &mut self,
        t: usize,
        pc: u32,
        o: usize,
        len: usize,
    ) -> Result<(), Conflict> {
        if self.skip {
            return Ok(());
        }
        let mbar = self.mbar_init_write;
        let me = Acc {
            mbar_init: mbar,
            ..self.acc(t, pc, true)
        };
        for x in o..o + len {
            let (w, r) = (self.w[x], self.r[x]);
            for (a, aw) in [(w, true), (r, false)] {
                let c = match mbar {
                    true => self.mbar_unordered(t, a, x, aw),
                    false => self.unordered(t, a, x, aw),
                };
                if let Some(c) = c {
                    return Err(c);
                }
            }
            self.w[x] = me;
            self.r[x] = NONE;
        }
        Ok(())
    }

    /// The agent of the mbarrier at `mbar` (made on first use).
    fn agent(&mut self, mbar: u32) -> usize {
        let next = self.agent_of.len();
        let g = *self.agent_of.entry(mbar).or_insert(next % AGENTS);
        self.agent_mbar[g] = mbar;
        g
    }

    /// An asynchronous write of `[o, o+len)` (a TMA box) issued by thread
    /// `t` (checked against the accesses before it: they must be ordered
    /// before the issue) that completes on the mbarrier at `mbar`: the
    /// bytes are the mbarrier's agent's, visible to a thread once it
    /// observes the phase. `t` is `None` for a copy another CTA issued
    /// (multicast), which is not checked.
    pub(crate) fn async_write(
        &mut self,
        t: Option<usize>,
        pc: u32,
        o: usize,
        len: usize,
        mbar: u32,
    ) -> Result<(), Conflict> {
        let end = (o + len).min(self.w.len());
        if let (Some(t), true) = (t, self.report_proxy) {
            for x in o..end {
                for (a, write) in [(self.w[x], true), (self.r[x], false)] {
                    if !self.ordered(t, a) {
                        let kind = if a.slot as usize >= self.n {
                            ConflictKind::Unobserved
                        } else {
                            ConflictKind::AsyncOverwrite
                        };
                        return Err(self.conflict(a, x, write, kind));
                    }
                    // a generic access before an async-proxy write needs a
                    // proxy fence between them, as a generic write before an
                    // async-proxy read does
                    if !self.fenced(t, a) {
                        return Err(self.conflict(a, x, write, ConflictKind::UnfencedOverwrite));
                    }
                }
            }
        }
        self.agent_write(pc, o, len, mbar);
        Ok(())
    }

    /// The writes of the agent of the mbarrier at `earlier` so far are
    /// visible through the mbarrier at `mbar` too (a later
    /// `tcgen05.commit` of the same thread tracks them as well).
    pub(crate) fn agent_also_through(&mut self, earlier: u32, mbar: u32) {
        if let Some(&g) = self.agent_of.get(&earlier) {
            self.agent_release(g, mbar);
        }
    }

    /// The agent `g`'s writes so far are visible through the mbarrier at
    /// `mbar`.
    fn agent_release(&mut self, g: usize, mbar: u32) {
        let (width, clock, slot) = (self.width(), self.agent_clock[g], self.n + g);
        let m = self.mbar.entry(mbar).or_insert_with(|| vec![0; width]);
        m[slot] = m[slot].max(clock);
    }

    /// Forgets what is known of `[o, o+len)` (bytes another CTA's copy
    /// wrote, or an mbarrier re-initialised).
    pub(crate) fn forget(&mut self, o: usize, len: usize) {
        for x in o..(o + len).min(self.w.len()) {
            self.w[x] = NONE;
            self.r[x] = NONE;
        }
    }

    /// Thread `t` executes `fence.proxy.async`: every generic write ordered
    /// before it joins its proxy frontier.
    pub(crate) fn fence_proxy_async(&mut self, t: usize) {
        let s = self.slots;
        let v = self.vc_mut(t);
        let (hb, rest) = v.split_at_mut(s);
        join(&mut rest[(PROXY - 1) * s..PROXY * s], hb);
        self.tick(t);
    }

    /// Thread `t` executes `fence.mbarrier_init.release.cluster`: the
    /// `mbarrier.init`s ordered before it are visible to the async proxy
    /// (and the cluster) once the fence is ordered before their use.
    pub(crate) fn fence_mbarrier_init(&mut self, t: usize) {
        let s = self.slots;
        let v = self.vc_mut(t);
        let (hb, rest) = v.split_at_mut(s);
        let m = &mut rest[(MBAR_INIT - 1) * s..MBAR_INIT * s];
        join(m, hb);
        self.tick(t);
    }

    /// Thread `t` executes `tcgen05.fence::before_thread_sync`: its
    /// `tcgen05` accesses so far are ordered before its later
    /// synchronisation.
    pub(crate) fn tc_fence_before(&mut self, t: usize) {
        let s = self.slots;
        let now = self.now(t);
        let v = self.vc_mut(t);
        v[TC * s + t] = v[TC * s + t].max(now);
        self.tick(t);
    }

    /// Thread `t` executes `tcgen05.fence::after_thread_sync`: the
    /// `tcgen05` accesses of other threads fenced before the
    /// synchronisation it has observed are ordered before its later ones.
    pub(crate) fn tc_fence_after(&mut self, t: usize) {
        let s = self.slots;
        let w = self.width();
        let src = self.vc[t * w + TC * s..t * w + (TC + 1) * s].to_vec();
        join(&mut self.tc_after[t * s..(t + 1) * s], &src);
    }

    /// Whether thread `t`'s tensor-memory access comes after `a`: `a` is
    /// ordered before it by a synchronisation (NVIDIA's attention hands
    /// tensor memory over with `tcgen05.wait::st` and an mbarrier, no
    /// tcgen05 fence; the wait itself is held by the pending-cell checks),
    /// or, for another thread's access, by `tcgen05.fence::before_thread_sync`,
    /// a synchronisation and `tcgen05.fence::after_thread_sync`.
    fn tc_ordered(&self, t: usize, a: Acc) -> bool {
        self.ordered(t, a)
            || (a.slot as usize) < self.n
                && a.clock <= self.tc_after[t * self.slots + a.slot as usize]
    }

    /// Checks and records a `tcgen05` access of cells `[o, o+len)` (after
    /// the shared bytes) by thread `t`: an earlier access of another warp
    /// (a warp's own `tcgen05.ld/st`, collectives, are in its program
    /// order) must be ordered before it ([`Race::tc_ordered`]); an MMA's
    /// writes through the phase its commit completes.
    pub(crate) fn tc_access(
        &mut self,
        t: usize,
        pc: u32,
        o: usize,
        len: usize,
        write: bool,
    ) -> Result<(), Conflict> {
        if self.skip {
            return Ok(());
        }
        let me = self.acc(t, pc, false);
        for x in o..(o + len).min(self.w.len()) {
            let earlier = [(self.w[x], true), (self.r[x], false)];
            for &(a, aw) in &earlier[..1 + write as usize] {
                let same_warp = (a.slot as usize) < self.n && a.slot as usize / 32 == t / 32;
                if a.slot == u16::MAX || same_warp || self.tc_ordered(t, a) || !self.report_tc {
                    continue;
                }
                let kind = match a.slot as usize >= self.n {
                    true => ConflictKind::Unobserved,
                    false => ConflictKind::Race,
                };
                return Err(self.conflict(a, x, aw, kind));
            }
            if write {
                self.w[x] = me;
                self.r[x] = NONE;
            } else {
                self.r[x] = me;
            }
        }
        Ok(())
    }

    /// Checks the tensor-memory cells `[o, o+len)` an MMA issued by thread
    /// `t` reads or writes against other threads' `tcgen05.ld/st`
    /// ([`Race::tc_ordered`]); earlier MMAs' writes are ordered by the
    /// tensor core's pipeline.
    pub(crate) fn tc_check_mma(&mut self, t: usize, o: usize, len: usize) -> Result<(), Conflict> {
        if self.skip || !self.report_tc {
            return Ok(());
        }
        for x in o..(o + len).min(self.w.len()) {
            for (a, aw) in [(self.w[x], true), (self.r[x], false)] {
                let thread = (a.slot as usize) < self.n;
                if thread && !self.tc_ordered(t, a) {
                    return Err(self.conflict(a, x, aw, ConflictKind::Race));
                }
            }
        }
        Ok(())
    }

    /// Writes of `[o, o+len)` by the tensor core (an MMA's accumulator),
    /// completing on the mbarrier at `mbar` (its `tcgen05.commit`):
    /// visible once that phase is observed.
    pub(crate) fn tc_async_write(&mut self, o: usize, len: usize, mbar: u32) {
        self.agent_write(0, o, len, mbar);
    }

    /// The write of `[o, o+len)` by the agent of the mbarrier at `mbar`
    /// (instruction `pc`), visible through that mbarrier.
    fn agent_write(&mut self, pc: u32, o: usize, len: usize, mbar: u32) {
        let g = self.agent(mbar);
        self.agent_clock[g] += 1;
        let a = Acc {
            slot: (self.n + g) as u16,
            generic: false,
            mbar_init: false,
            clock: self.agent_clock[g],
            pc,
        };
        for x in o..(o + len).min(self.w.len()) {
            self.w[x] = a;
            self.r[x] = NONE;
        }
        self.agent_release(g, mbar);
    }

    /// Thread `t` arrives on CTA barrier `id` (release).
    pub(crate) fn bar_arrive(&mut self, id: usize, t: usize) {
        let v = self.vc(t).to_vec();
        join(&mut self.bar[id], &v);
        self.tick(t);
    }

    /// Thread `t` leaves CTA barrier `id` (acquire).
    pub(crate) fn bar_leave(&mut self, id: usize, t: usize) {
        let b = self.bar[id].clone();
        join(self.vc_mut(t), &b);
    }

    /// The barrier's phase is over.
    pub(crate) fn bar_reset(&mut self, id: usize) {
        self.bar[id].iter_mut().for_each(|x| *x = 0);
    }

    /// Release of thread `t` into the mbarrier at `off` (arrive).
    pub(crate) fn mbar_release(&mut self, off: u32, t: usize, phase: u32) {
        let v = self.vc(t).to_vec();
        let width = self.width();
        let phases = self.mbar_phases.entry(off).or_default();
        join(phases.entry(phase).or_insert_with(|| vec![0; width]), &v);
        self.tick(t);
    }

    /// Thread `t` observed phase `phase` of the mbarrier at `off` complete
    /// (acquire): what its agent released, and the arrivals of that phase
    /// and those before it. Arrivals already counting towards a later
    /// phase are not acquired: an `mbarrier.init` count one short lets a
    /// phase complete before a thread's arrival, whose writes then race
    /// with the readers.
    pub(crate) fn mbar_acquire(&mut self, off: u32, t: usize, phase: Option<u32>) {
        let width = self.width();
        let mut m = self
            .mbar
            .get(&off)
            .cloned()
            .unwrap_or_else(|| vec![0; width]);
        if let (Some(phases), Some(phase)) = (self.mbar_phases.get_mut(&off), phase) {
            // the phases two or more before the one observed fold into the
            // first of them (no wait observes them apart any more)
            let old: Vec<u32> = (phases.range(..phase.saturating_sub(1)))
                .map(|(&p, _)| p)
                .collect();
            if let Some((&first, rest)) = old.split_first() {
                for p in rest {
                    if let Some(c) = phases.remove(p) {
                        join(phases.entry(first).or_default(), &c);
                    }
                }
            }
            for (_, c) in phases.range(..=phase) {
                join(&mut m, c);
            }
        }
        join(self.vc_mut(t), &m);
    }

    /// Cluster barrier arrive (release) / wait (acquire), within this CTA.
    pub(crate) fn cluster_arrive(&mut self, t: usize) {
        let v = self.vc(t).to_vec();
        join(&mut self.cluster, &v);
        self.tick(t);
    }

    /// See [`Race::cluster_arrive`].
    pub(crate) fn cluster_wait(&mut self, t: usize) {
        let c = self.cluster.clone();
        join(self.vc_mut(t), &c);
    }

    /// All threads of a warp collective join their clocks.
    pub(crate) fn collective(&mut self, group: &[usize]) {
        let mut j = vec![0; self.width()];
        for &g in group {
            join(&mut j, self.vc(g));
        }
        for &g in group {
            self.vc_mut(g).copy_from_slice(&j);
            self.tick(g);
        }
    }
}
