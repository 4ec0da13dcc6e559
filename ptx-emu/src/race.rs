//! Shared-memory data-race detection with vector clocks.
//!
//! Happens-before edges come from CTA barriers (`bar.sync`/`barrier.sync`,
//! `bar.arrive` releases, `bar.red`), mbarriers (arrive releases, a
//! successful wait acquires; a TMA's completion releases the issuing thread's
//! clock), cluster barriers and warp collectives (all participants join).
//! Two accesses to the same shared byte by different threads, at least one a
//! plain write, with no happens-before path between them are a data race.
//! Strong accesses (`.volatile`, `.relaxed`, `.acquire`, `.release`) and
//! atomics are not checked, as in the PTX memory model.  Only the last write
//! and the last read of each byte are remembered, so some races may be missed,
//! but every reported race is real.

use std::collections::HashMap;

/// One remembered access: thread, its clock, and the instruction index.
#[derive(Clone, Copy)]
pub(crate) struct Acc {
    tid: u16,
    clock: u32,
    pc: u32,
}

const NONE: Acc = Acc {
    tid: u16::MAX,
    clock: 0,
    pc: 0,
};

/// Per-CTA race-detection state.
pub(crate) struct Race {
    n: usize,
    vc: Vec<u32>,
    w: Vec<Acc>,
    r: Vec<Acc>,
    bar: Vec<Vec<u32>>,
    mbar: HashMap<u32, Vec<u32>>,
    cluster: Vec<u32>,
    /// The access being performed is strong or atomic: do not check it.
    pub(crate) skip: bool,
}

/// A detected race: the other access's thread and instruction index, and whether it was a write.
pub(crate) struct Conflict {
    pub(crate) other_tid: usize,
    pub(crate) other_pc: u32,
    pub(crate) other_write: bool,
    pub(crate) addr: usize,
}

fn join(dst: &mut [u32], src: &[u32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        if *s > *d {
            *d = *s;
        }
    }
}

impl Race {
    pub(crate) fn new(n: usize, smem: usize) -> Race {
        let mut vc = vec![0; n * n];
        for t in 0..n {
            vc[t * n + t] = 1;
        }
        Race {
            n,
            vc,
            w: vec![NONE; smem],
            r: vec![NONE; smem],
            bar: vec![vec![0; n]; 16],
            mbar: HashMap::new(),
            cluster: vec![0; n],
            skip: false,
        }
    }

    fn vc(&self, t: usize) -> &[u32] {
        &self.vc[t * self.n..(t + 1) * self.n]
    }

    fn tick(&mut self, t: usize) {
        self.vc[t * self.n + t] += 1;
    }

    fn ordered(&self, t: usize, a: Acc) -> bool {
        a.tid == u16::MAX || a.tid as usize == t || a.clock <= self.vc[t * self.n + a.tid as usize]
    }

    /// Checks and records a read of `[o, o+len)` by thread `t` at instruction `pc`.
    pub(crate) fn read(&mut self, t: usize, pc: u32, o: usize, len: usize) -> Result<(), Conflict> {
        if self.skip {
            return Ok(());
        }
        for x in o..o + len {
            let w = self.w[x];
            if !self.ordered(t, w) {
                return Err(Conflict {
                    other_tid: w.tid as usize,
                    other_pc: w.pc,
                    other_write: true,
                    addr: x,
                });
            }
            self.r[x] = Acc {
                tid: t as u16,
                clock: self.vc[t * self.n + t],
                pc,
            };
        }
        Ok(())
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
        for x in o..o + len {
            let (w, r) = (self.w[x], self.r[x]);
            if !self.ordered(t, w) {
                return Err(Conflict {
                    other_tid: w.tid as usize,
                    other_pc: w.pc,
                    other_write: true,
                    addr: x,
                });
            }
            if !self.ordered(t, r) {
                return Err(Conflict {
                    other_tid: r.tid as usize,
                    other_pc: r.pc,
                    other_write: false,
                    addr: x,
                });
            }
            self.w[x] = Acc {
                tid: t as u16,
                clock: self.vc[t * self.n + t],
                pc,
            };
            self.r[x] = NONE;
        }
        Ok(())
    }

    /// Records an asynchronous (TMA) write performed on behalf of thread `t` without checking it.
    pub(crate) fn async_write(&mut self, t: Option<usize>, pc: u32, o: usize, len: usize) {
        let a = match t {
            Some(t) => Acc {
                tid: t as u16,
                clock: self.vc[t * self.n + t],
                pc,
            },
            None => NONE,
        };
        for x in o..(o + len).min(self.w.len()) {
            self.w[x] = a;
            self.r[x] = NONE;
        }
    }

    /// Thread `t` arrives on CTA barrier `id` (release).
    pub(crate) fn bar_arrive(&mut self, id: usize, t: usize) {
        let v = self.vc(t).to_vec();
        join(&mut self.bar[id], &v);
        self.tick(t);
    }

    /// Thread `t` leaves CTA barrier `id` (acquire).
    pub(crate) fn bar_leave(&mut self, id: usize, t: usize) {
        let n = self.n;
        let b = self.bar[id].clone();
        join(&mut self.vc[t * n..(t + 1) * n], &b);
    }

    /// The barrier's phase is over.
    pub(crate) fn bar_reset(&mut self, id: usize) {
        self.bar[id].iter_mut().for_each(|x| *x = 0);
    }

    /// Release of thread `t` into the mbarrier at `off` (arrive, TMA completion).
    pub(crate) fn mbar_release(&mut self, off: u32, t: usize) {
        let v = self.vc(t).to_vec();
        let n = self.n;
        join(self.mbar.entry(off).or_insert_with(|| vec![0; n]), &v);
        self.tick(t);
    }

    /// Thread `t` observed the mbarrier at `off` complete (acquire).
    pub(crate) fn mbar_acquire(&mut self, off: u32, t: usize) {
        let n = self.n;
        if let Some(m) = self.mbar.get(&off).cloned() {
            join(&mut self.vc[t * n..(t + 1) * n], &m);
        }
    }

    /// Cluster barrier arrive (release) / wait (acquire), within this CTA.
    pub(crate) fn cluster_arrive(&mut self, t: usize) {
        let v = self.vc(t).to_vec();
        join(&mut self.cluster, &v);
        self.tick(t);
    }

    /// See [`Race::cluster_arrive`].
    pub(crate) fn cluster_wait(&mut self, t: usize) {
        let n = self.n;
        let c = self.cluster.clone();
        join(&mut self.vc[t * n..(t + 1) * n], &c);
    }

    /// All threads of a warp collective join their clocks.
    pub(crate) fn collective(&mut self, group: &[usize]) {
        let n = self.n;
        let mut j = vec![0; n];
        for &g in group {
            join(&mut j, self.vc(g));
        }
        for &g in group {
            self.vc[g * n..(g + 1) * n].copy_from_slice(&j);
            self.tick(g);
        }
    }
}
