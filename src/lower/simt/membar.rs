//! Barriers from one analysis over declared shared-memory accesses (the idea
//! of Triton's `MembarAnalysis`). Ops do not write the barriers between
//! their own writes and reads of a buffer; they declare each phase of
//! access instead ([`Stmt::Shared`]: the block reads, or writes, bytes
//! `[start, end)` of the scratch array from here on), at a point every
//! thread of the block reaches (one under an `if` that some threads may
//! skip fails the entry: [`crate::lower::simt::Builder::misplaced`]). This
//! pass walks the function in program
//! order with the accesses pending since the last `bar.sync 0`, and puts a
//! barrier at a declaration that reads bytes pending a write
//! (read-after-write), or writes bytes pending a read or a write
//! (write-after-read, write-after-write); a phase in which each thread
//! reads and rewrites bytes of its own both waits and counts as both. An
//! `if` joins the pending accesses of its branches; a loop is walked until
//! the accesses reaching its head settle, and where what an iteration
//! leaves pending meets the next one's first accesses, a barrier ends the
//! body (and precedes each `continue`). The declarations then go: a
//! barrier where one was placed, nothing elsewhere.
//!
//! Every op declares its accesses, the engines of products too: a
//! `cp.async` copy writes from its issue (and, waited for without a
//! barrier, from its wait on), a `wgmma` reads until its `wait_group`,
//! so it declares its reads after that. An access may name an owner whose
//! own protocol orders it against the owner's other accesses (a product
//! flipping between two sets of buffers, a load's copies into one
//! buffer): the analysis orders it only against the accesses of others.
//! So a buffer placed over bytes another still reads, or one an op of a
//! loop rewrites in the next iteration, gets its barrier here, and only
//! where the bytes meet. Barriers that belong to a protocol (after a
//! `cp.async` or `wgmma` wait, an `mbarrier`'s set-up) are written by
//! the ops; the walk sees them and counts what they order as done.
use std::collections::BTreeMap;
use std::ops::Range;

use super::barriers::{barrier, full_barrier};
use super::{IfStmt, LoopStmt, Stmt};

/// Which way a declared access goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// The block reads the bytes.
    Read,
    /// The block writes the bytes.
    Write,
    /// Each thread reads and writes bytes no other thread touches in the
    /// phase (a line scanned in place).
    ReadWrite,
}

/// A phase of access to shared memory, declared where every thread of the
/// block passes, before the phase's first instruction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Declared {
    /// Read or write.
    pub access: Access,
    /// The bytes of the scratch array.
    pub bytes: Range<i64>,
    /// Whether a barrier goes before the phase (the analysis sets it).
    pub barrier: bool,
    /// The owner whose own protocol orders this access against its other
    /// accesses (a product flipping between two sets of buffers, a load's
    /// copies into one buffer): the analysis orders it only against the
    /// accesses of others. `None`: against every access.
    pub owner: Option<u32>,
    /// The op declaring it (its index in the module), for the report.
    pub by: Option<u32>,
}

impl Declared {
    /// An `access` to `bytes`, ordered against every other, by no op.
    pub fn new(access: Access, bytes: Range<i64>) -> Declared {
        Declared {
            access,
            bytes,
            barrier: false,
            owner: None,
            by: None,
        }
    }
}

/// A barrier the analysis placed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Barrier {
    /// Before a declared access that waits for pending ones.
    Before(Declared),
    /// Before the next iteration of a loop: at its body's end, or at a
    /// `continue`.
    NextIteration,
}

/// Places the barriers the declarations in `body` need and removes the
/// declarations; the barriers it placed, in program order.
pub fn place(body: &mut Vec<Stmt>) -> Vec<Barrier> {
    let mut flow = Flow::default();
    walk(body, Pending::default(), &mut flow);
    let mut placed = Vec::new();
    lower(body, &mut placed);
    placed
}

/// Byte ranges pending since the last barrier, sorted and merged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Ranges(Vec<Range<i64>>);

impl Ranges {
    fn add(&mut self, r: &Range<i64>) {
        if r.is_empty() {
            return;
        }
        self.0.push(r.clone());
        self.0.sort_by_key(|r| r.start);
        let mut merged: Vec<Range<i64>> = Vec::with_capacity(self.0.len());
        for r in self.0.drain(..) {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        self.0 = merged;
    }

    fn overlaps(&self, r: &Range<i64>) -> bool {
        self.0.iter().any(|p| p.start < r.end && r.start < p.end)
    }

    fn join(&mut self, other: &Ranges) {
        for r in &other.0 {
            self.add(r);
        }
    }
}

/// Byte ranges pending since the last barrier, by owner.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Owned(BTreeMap<Option<u32>, Ranges>);

impl Owned {
    fn add(&mut self, owner: Option<u32>, r: &Range<i64>) {
        if !r.is_empty() {
            self.0.entry(owner).or_default().add(r);
        }
    }

    fn join(&mut self, other: &Owned) {
        for (&owner, ranges) in &other.0 {
            self.0.entry(owner).or_default().join(ranges);
        }
    }

    /// Whether one of these overlaps one of `theirs` that its own
    /// protocol does not order (another owner's, or either owned by none).
    fn meets(&self, theirs: &Owned) -> bool {
        self.0.iter().any(|(mine, ranges)| {
            theirs.0.iter().any(|(other, next)| {
                (mine.is_none() || mine != other) && next.0.iter().any(|r| ranges.overlaps(r))
            })
        })
    }
}

/// The accesses pending since the last barrier on some path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Pending {
    reads: Owned,
    writes: Owned,
}

impl Pending {
    /// The accesses of `d` alone.
    fn of(d: &Declared) -> Pending {
        let mut p = Pending::default();
        p.record(d);
        p
    }

    fn record(&mut self, d: &Declared) {
        match d.access {
            Access::Read => self.reads.add(d.owner, &d.bytes),
            Access::Write => self.writes.add(d.owner, &d.bytes),
            Access::ReadWrite => {
                self.reads.add(d.owner, &d.bytes);
                self.writes.add(d.owner, &d.bytes);
            }
        }
    }

    fn join(&mut self, other: &Pending) {
        self.reads.join(&other.reads);
        self.writes.join(&other.writes);
    }

    /// Whether an access of `next` must wait for one of these.
    fn meets(&self, next: &Pending) -> bool {
        self.writes.meets(&next.reads)
            || self.writes.meets(&next.writes)
            || self.reads.meets(&next.writes)
    }
}

/// What leaves a list of statements other than by its end: the pending
/// accesses at each `break` and `continue` of the innermost loop, joined.
#[derive(Default)]
struct Flow {
    breaks: Option<Pending>,
    continues: Option<Pending>,
}

fn join(into: &mut Option<Pending>, p: &Pending) {
    match into {
        Some(q) => q.join(p),
        None => *into = Some(p.clone()),
    }
}

/// Walks `body` from the pending accesses `st`, marking the declarations
/// that need a barrier; the pending accesses at its end, none where the end
/// is not reached (a `break` or `continue` before it).
fn walk(body: &mut [Stmt], mut st: Pending, flow: &mut Flow) -> Option<Pending> {
    for s in body.iter_mut() {
        match s {
            Stmt::Inst(i) => {
                if full_barrier(i) {
                    st = Pending::default();
                }
            }
            Stmt::Shared(d) => {
                if st.meets(&Pending::of(d)) {
                    d.barrier = true;
                }
                if d.barrier {
                    st = Pending::default();
                }
                st.record(d);
            }
            Stmt::If(node) => {
                let IfStmt {
                    body, else_body, ..
                } = &mut **node;
                let then = walk(body, st.clone(), flow);
                let other = walk(else_body, st.clone(), flow);
                st = match (then, other) {
                    (Some(mut a), Some(b)) => {
                        a.join(&b);
                        a
                    }
                    (Some(a), None) | (None, Some(a)) => a,
                    (None, None) => return None,
                };
            }
            Stmt::Loop(node) => st = walk_loop(node, &st)?,
            Stmt::Break => {
                join(&mut flow.breaks, &st);
                return None;
            }
            Stmt::Continue => {
                join(&mut flow.continues, &st);
                return None;
            }
        }
    }
    Some(st)
}

/// Walks a loop until the accesses reaching its head settle: they only
/// grow (each round joins what the body's end and its `continue`s leave),
/// over the finitely many bytes declared, so the walk ends; the pending
/// accesses after it.
///
/// Where what an iteration leaves pending meets the next iteration's first
/// accesses (those before any barrier), the barrier goes at the end of the
/// body (and before each `continue`), not before those accesses: the next
/// iteration's loads of global memory then start before it, free of it.
fn walk_loop(node: &mut LoopStmt, entry: &Pending) -> Option<Pending> {
    let mut head = entry.clone();
    loop {
        let mut flow = Flow::default();
        let after_header = walk(&mut node.header, head.clone(), &mut flow);
        let mut end = match &after_header {
            Some(h) => walk(&mut node.body, h.clone(), &mut flow),
            None => None,
        };
        let mut first = Pending::default();
        if !first_accesses(&node.header, &mut first) {
            first_accesses(&node.body, &mut first);
        }
        if end.as_ref().is_some_and(|e| e.meets(&first)) {
            node.body.push(barrier_mark());
            end = Some(Pending::default());
        }
        if flow.continues.as_ref().is_some_and(|c| c.meets(&first)) {
            before_continues(&mut node.body);
            flow.continues = Some(Pending::default());
        }
        let mut next = head.clone();
        if let Some(e) = &end {
            next.join(e);
        }
        if let Some(c) = &flow.continues {
            next.join(c);
        }
        if next == head {
            let mut out = flow.breaks;
            if let Some(h) = &after_header {
                join(&mut out, h);
            }
            return out;
        }
        head = next;
    }
}

/// Records into `into` the accesses of `body` that come before any barrier
/// on some path from its start; whether every path meets a barrier (or
/// leaves) first.
fn first_accesses(body: &[Stmt], into: &mut Pending) -> bool {
    for s in body {
        match s {
            Stmt::Inst(i) => {
                if full_barrier(i) {
                    return true;
                }
            }
            Stmt::Shared(d) => {
                if d.barrier {
                    return true;
                }
                into.record(d);
            }
            Stmt::If(n) => {
                let then = first_accesses(&n.body, into);
                if first_accesses(&n.else_body, into) && then {
                    return true;
                }
            }
            Stmt::Loop(n) => {
                if first_accesses(&n.header, into) {
                    return true;
                }
                // The body may not run: what follows comes first too.
                first_accesses(&n.body, into);
            }
            Stmt::Break | Stmt::Continue => return true,
        }
    }
    false
}

/// A declaration that only stands for a barrier before a loop's next
/// iteration (no bytes: it meets no access).
fn barrier_mark() -> Stmt {
    let mut d = Declared::new(Access::Read, 0..0);
    d.barrier = true;
    Stmt::Shared(Box::new(d))
}

/// Whether `d` is a [`barrier_mark`].
fn is_mark(d: &Declared) -> bool {
    d.barrier && d.bytes.is_empty()
}

/// Puts a barrier before each `continue` of the loop whose body is `body`
/// (not of loops nested in it) that has none yet.
fn before_continues(body: &mut Vec<Stmt>) {
    let mut i = 0;
    while i < body.len() {
        match &mut body[i] {
            Stmt::If(n) => {
                before_continues(&mut n.body);
                before_continues(&mut n.else_body);
            }
            Stmt::Continue => {
                let marked = i > 0 && matches!(&body[i - 1], Stmt::Shared(d) if is_mark(d));
                if !marked {
                    body.insert(i, barrier_mark());
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// Replaces each declaration by its barrier (recorded in `placed`), or by
/// nothing.
fn lower(body: &mut Vec<Stmt>, placed: &mut Vec<Barrier>) {
    let mut out = Vec::with_capacity(body.len());
    for mut s in body.drain(..) {
        match &mut s {
            Stmt::Shared(d) => {
                if d.barrier {
                    placed.push(match is_mark(d) {
                        true => Barrier::NextIteration,
                        false => Barrier::Before((**d).clone()),
                    });
                    out.push(Stmt::Inst(Box::new(barrier())));
                }
                continue;
            }
            Stmt::If(node) => {
                lower(&mut node.body, placed);
                lower(&mut node.else_body, placed);
            }
            Stmt::Loop(node) => {
                lower(&mut node.header, placed);
                lower(&mut node.body, placed);
            }
            Stmt::Inst(_) | Stmt::Break | Stmt::Continue => {}
        }
        out.push(s);
    }
    *body = out;
}

#[cfg(test)]
mod tests {
    use crate::lower::simt::membar::*;
    use crate::lower::simt::Builder;
    use crate::ptx::RegClass;

    fn bars(body: &[Stmt]) -> usize {
        body.iter()
            .map(|s| match s {
                Stmt::Inst(i) => usize::from(full_barrier(i)),
                Stmt::If(n) => bars(&n.body) + bars(&n.else_body),
                Stmt::Loop(n) => bars(&n.header) + bars(&n.body),
                _ => 0,
            })
            .sum()
    }

    /// Declares `access` to `bytes` owned by `owner`.
    fn owned(b: &mut Builder, access: Access, bytes: Range<i64>, owner: u32) {
        let mut d = Declared::new(access, bytes);
        d.owner = Some(owner);
        b.declared(d);
    }

    /// A loop whose body is what `f` builds.
    fn looped(b: &mut Builder, f: impl FnOnce(&mut Builder)) {
        let p = b.reg(RegClass::Pred);
        b.begin_uniform_loop();
        b.begin_loop_body(p, true);
        f(b);
        b.end_loop();
    }

    /// The first statement of `body`, a loop.
    fn first_loop(body: &[Stmt]) -> &LoopStmt {
        match body.first() {
            Some(Stmt::Loop(l)) => l,
            _ => panic!("a loop: {body:?}"),
        }
    }

    /// Places the barriers of what `f` builds; how many, and the body.
    fn placed(f: impl FnOnce(&mut Builder)) -> (usize, Vec<Stmt>) {
        let mut b = Builder::new();
        f(&mut b);
        assert!(!b.misplaced);
        let mut body = b.finish().body;
        let n = place(&mut body).len();
        assert!(!body.iter().any(|s| matches!(s, Stmt::Shared(_))));
        (n, body)
    }

    #[test]
    fn a_read_of_written_bytes_waits_and_one_of_other_bytes_does_not() {
        let (n, body) = placed(|b| {
            b.declare(Access::Write, 0..64);
            b.declare(Access::Read, 64..128);
            b.declare(Access::Read, 32..48);
        });
        assert_eq!((n, bars(&body)), (1, 1));
        // The barrier stands where the read of written bytes was declared.
        assert!(matches!(&body[0], Stmt::Inst(i) if full_barrier(i)));
    }

    #[test]
    fn a_write_waits_for_reads_and_writes_but_reads_do_not_wait_for_reads() {
        assert_eq!(
            placed(|b| {
                b.declare(Access::Read, 0..64);
                b.declare(Access::Read, 0..64);
            })
            .0,
            0
        );
        assert_eq!(
            placed(|b| {
                b.declare(Access::Read, 0..64);
                b.declare(Access::Write, 60..70);
            })
            .0,
            1
        );
        assert_eq!(
            placed(|b| {
                b.declare(Access::Write, 0..64);
                b.declare(Access::Write, 0..64);
                b.declare(Access::Write, 64..80);
            })
            .0,
            1
        );
    }

    #[test]
    fn a_barrier_written_by_an_op_orders_what_came_before() {
        let (n, body) = placed(|b| {
            b.declare(Access::Write, 0..64);
            b.push(barrier());
            b.declare(Access::Read, 0..64);
        });
        assert_eq!((n, bars(&body)), (0, 1));
    }

    #[test]
    fn an_in_place_phase_waits_like_a_write_and_counts_as_both() {
        let (n, _) = placed(|b| {
            b.declare(Access::Write, 0..64);
            b.declare(Access::ReadWrite, 0..64);
            b.declare(Access::ReadWrite, 64..128);
            b.declare(Access::Read, 0..64);
        });
        assert_eq!(n, 2);
    }

    #[test]
    fn either_branch_of_an_if_leaves_its_accesses_pending() {
        let (n, _) = placed(|b| {
            let p = b.reg(RegClass::Pred);
            b.begin_uniform_if(p, true);
            b.begin_else();
            b.declare(Access::Write, 0..64);
            b.end_if();
            b.declare(Access::Read, 0..64);
        });
        assert_eq!(n, 1);
    }

    #[test]
    fn a_loop_body_waits_for_what_the_last_iteration_read() {
        // The body writes then reads its buffer: a barrier between, and one
        // at the body's end, before the next iteration writes it again.
        let (n, body) = placed(|b| {
            looped(b, |b| {
                b.declare(Access::Write, 0..64);
                b.tid_x();
                b.declare(Access::Read, 0..64);
                b.tid_x();
            });
            b.declare(Access::Write, 128..192);
        });
        assert_eq!(n, 2);
        assert_eq!(bars(&body), 2);
        let l = first_loop(&body);
        assert!(matches!(l.body.last(), Some(Stmt::Inst(i)) if full_barrier(i)));
        assert!(
            !matches!(l.body.first(), Some(Stmt::Inst(i)) if full_barrier(i)),
            "{body:?}"
        );
        // Where the iteration leaves by `continue`, the barrier goes
        // before it; none where a barrier comes first in the next one.
        let (n, body) = placed(|b| {
            looped(b, |b| {
                b.declare(Access::Write, 0..64);
                b.declare(Access::Read, 0..64);
                b.cont();
            });
        });
        assert_eq!(n, 2, "{body:?}");
        let l = first_loop(&body);
        let k = l.body.len();
        assert!(matches!(l.body[k - 1], Stmt::Continue), "{body:?}");
        assert!(matches!(&l.body[k - 2], Stmt::Inst(i) if full_barrier(i)));
        let (n, _) = placed(|b| {
            looped(b, |b| {
                b.push(barrier());
                b.declare(Access::Write, 0..64);
                b.declare(Access::Read, 0..64);
            });
        });
        assert_eq!(n, 1);
        // Reads of another buffer in the loop leave the write after it be.
        let (n, _) = placed(|b| {
            b.declare(Access::Write, 0..64);
            b.push(barrier());
            looped(b, |b| {
                b.declare(Access::Read, 0..64);
            });
            b.declare(Access::Write, 128..192);
        });
        assert_eq!(n, 0);
    }

    #[test]
    fn an_owner_orders_its_own_accesses_and_the_analysis_the_others() {
        // A ring rewritten each iteration by its own protocol: no barrier
        // between its accesses, one before another op's write over them.
        let (n, body) = placed(|b| {
            looped(b, |b| {
                owned(b, Access::Write, 0..64, 7);
                owned(b, Access::Read, 0..64, 7);
            });
            b.declare(Access::Write, 32..48);
        });
        assert_eq!((n, bars(&body)), (1, 1));
        assert!(matches!(body.last(), Some(Stmt::Inst(i)) if full_barrier(i)));
        // Two owners over the same bytes wait for each other.
        let (n, _) = placed(|b| {
            owned(b, Access::Read, 0..64, 1);
            owned(b, Access::Write, 0..64, 2);
        });
        assert_eq!(n, 1);
    }

    #[test]
    fn an_access_declared_where_some_threads_skip_or_loop_longer_is_marked_misplaced() {
        let mut b = Builder::new();
        let p = b.reg(RegClass::Pred);
        b.begin_uniform_if(p, true);
        b.declare(Access::Write, 0..64);
        b.end_if();
        assert!(!b.misplaced);
        b.begin_uniform_if(p, true);
        b.begin_if(p, true);
        b.declare(Access::Write, 0..64);
        b.end_if();
        b.end_if();
        assert!(b.misplaced);
        // In a loop every thread runs alike, not misplaced; in one whose
        // trip count may differ between threads, misplaced.
        let mut b = Builder::new();
        looped(&mut b, |b| b.declare(Access::Write, 0..64));
        assert!(!b.misplaced);
        b.begin_loop();
        b.begin_loop_body(p, true);
        b.declare(Access::Write, 0..64);
        b.end_loop();
        assert!(b.misplaced);
    }

    #[test]
    fn what_a_break_leaves_pending_reaches_past_the_loop() {
        let (n, _) = placed(|b| {
            looped(b, |b| {
                let p = b.reg(RegClass::Pred);
                b.begin_uniform_if(p, true);
                b.declare(Access::Write, 0..64);
                b.brk();
                b.end_if();
            });
            b.declare(Access::Read, 0..64);
        });
        assert_eq!(n, 1);
    }
}
