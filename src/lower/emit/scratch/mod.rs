//! The entry's shared-memory scratch as emission claims it: each buffer
//! where the plan's placement puts it
//! ([`crate::lower::plan::alloc::walk`]: the one allocator,
//! [`crate::lower::plan::alloc::placer`], over the buffers' live ranges),
//! claim for claim.
//!
//! Bytes that threads may still read (released since the last barrier
//! that every later claim follows: one outside every construct) are dirty;
//! a buffer placed over them starts with a barrier ([`Claim::barrier`]).
//!
//! The barriers an op of a loop owes before its scratch is written again
//! are kept in one account ([`account`]); the claims and those barriers
//! make the entry's scratch map ([`map`]).

pub mod account;
pub mod map;

use crate::ir::OpId;
use crate::lower::plan::alloc::walk::Placed as Planned;
use crate::lower::plan::buffers::What;

use account::{Account, Rewrite};
pub use account::{Owed, Paid};
pub use map::{Placed, ScratchMap};

/// What a layout conversion's buffer serves, in the scratch map.
pub const CONVERSION: &str = "a layout conversion";

/// What [`Scratch::begin_op`] replaced, for [`Scratch::end_op`].
#[derive(Clone, Copy, Debug)]
pub struct OpScope {
    claimer: Option<OpId>,
    barriers_before: Option<usize>,
}

/// A point in the claims: [`Scratch::release`] with it frees the buffers
/// claimed since.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark(usize);

/// Where a claim is made, which decides what a barrier there cleans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// In a loop.
    pub in_loop: bool,
    /// Under an `if` of the body being built
    /// ([`crate::lower::simt::Builder::in_if`], as the barrier account
    /// reads [`crate::lower::simt::Builder::depth`]): a barrier placed here
    /// does not precede every later claim, so it cleans no byte.
    pub conditional: bool,
}

impl Place {
    /// Straight-line code outside every loop.
    pub const ONCE: Place = Place {
        in_loop: false,
        conditional: false,
    };
    /// Straight-line code of a loop body.
    pub const LOOP: Place = Place {
        in_loop: true,
        conditional: false,
    };
}

/// Where a claimed buffer lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    /// Byte offset in the entry's scratch array.
    pub offset: i64,
    /// Whether a barrier must come before the buffer's first write (it
    /// lies on bytes threads may still be reading).
    pub barrier: bool,
}

/// The scratch state of one entry.
#[derive(Debug)]
pub struct Scratch {
    /// The buffers claimed and not released: their claim, first byte and
    /// one past their last.
    live: Vec<(usize, i64, i64)>,
    /// Released byte ranges that threads may still read.
    dirty: Vec<(i64, i64)>,
    /// Whether a buffer of a loop was placed over dead ones.
    reusing: bool,
    /// The entry's shared-memory size, the plan's.
    bytes: i64,
    /// The op being lowered: the claimer of the next buffers.
    claimer: Option<OpId>,
    /// The barriers ops owe before their scratch is written again.
    account: Account,
    /// Every claim, in order.
    log: Vec<Placed>,
}

impl Scratch {
    /// An empty scratch of an entry whose buffers take `bytes` in all.
    pub fn new(bytes: i64) -> Scratch {
        Scratch {
            live: Vec::new(),
            dirty: Vec::new(),
            reusing: false,
            bytes,
            claimer: None,
            account: Account::default(),
            log: Vec::new(),
        }
    }

    /// The entry's shared-memory size: the plan's.
    pub fn bytes(&self) -> i64 {
        self.bytes
    }

    /// How many buffers have been claimed.
    pub fn claims(&self) -> usize {
        self.log.len()
    }

    /// Whether some buffer of a loop was placed over dead ones (the loop
    /// did not fit with every buffer its own bytes).
    pub fn reusing(&self) -> bool {
        self.reusing
    }

    /// The current point: buffers claimed from now on are freed by
    /// [`Scratch::release`] with it.
    pub fn mark(&self) -> Mark {
        Mark(self.log.len())
    }

    /// Claims the buffer the plan placed as `p`, at `place`: where it
    /// lies, and whether a barrier comes first (it lies on dirty bytes).
    pub fn claim(&mut self, p: &Planned, place: Place) -> Claim {
        let (start, end) = (p.offset, p.offset + p.bytes.max(0));
        let barrier = self.dirty.iter().any(|&(s, e)| s < end && start < e);
        if barrier && !place.conditional {
            self.dirty.clear();
        }
        self.live.push((self.log.len(), start, end));
        self.reusing = p.reusing;
        self.log.push(Placed {
            op: self.claimer,
            purpose: matches!(p.what, What::Conversion(_)).then_some(CONVERSION),
            bytes: p.bytes.max(0),
            offset: start,
            in_loop: place.in_loop,
            over_dead: p.over_dead,
            barrier,
        });
        Claim {
            offset: start,
            barrier,
        }
    }
    /// The op claiming the next buffers.
    pub fn claimer(&self) -> Option<OpId> {
        self.claimer
    }

    /// The next buffers are claimed for `claimer` (what an op's lowering
    /// claims ahead of the op itself, whose barrier account has not
    /// begun); returns the claimer it replaces.
    pub fn claim_for(&mut self, claimer: Option<OpId>) -> Option<OpId> {
        std::mem::replace(&mut self.claimer, claimer)
    }

    /// Op `id` begins: it claims the next buffers. Returns what to give
    /// [`Scratch::end_op`] when it is done.
    pub fn begin_op(&mut self, id: OpId) -> OpScope {
        OpScope {
            claimer: self.claimer.replace(id),
            barriers_before: self.account.begin_op(),
        }
    }

    /// The op that [`Scratch::begin_op`] began is done.
    pub fn end_op(&mut self, scope: OpScope) {
        self.claimer = scope.claimer;
        self.account.end_op(scope.barriers_before);
    }

    /// A loop body begins, `depth` constructs open
    /// ([`crate::lower::simt::Builder::depth`]).
    pub fn enter_loop(&mut self, depth: usize) {
        self.account.enter_loop(depth);
    }

    /// The innermost loop body is done.
    pub fn leave_loop(&mut self) {
        self.account.leave_loop();
    }

    /// A barrier of every thread, `depth` constructs open: outside every
    /// construct it cleans the dirty bytes (every later claim follows it);
    /// it pays what the innermost loop body owes when it runs once every
    /// iteration ([`Account::on_barrier`]).
    pub fn on_barrier(&mut self, depth: usize) {
        if depth == 0 {
            self.dirty.clear();
        }
        self.account.on_barrier(depth);
    }

    /// The op being lowered, `depth` constructs open, has read its own
    /// scratch for the last time and writes it again when it runs again
    /// (the next iteration). Whether it needs a barrier right away
    /// ([`Account::owe`]).
    pub fn owe_barrier(&mut self, depth: usize) -> bool {
        self.account.owe(depth, Rewrite::AtOp, self.claimer)
    }

    /// As [`Scratch::owe_barrier`], for scratch the next iteration rewrites
    /// before the op's place in the body (a copy issued at the body's start
    /// or at its load): a barrier of the body before the op does not come
    /// between, so only a later one, or one at the body's end, pays.
    pub fn owe_barrier_early(&mut self, depth: usize) -> bool {
        self.account.owe(depth, Rewrite::BeforeOp, self.claimer)
    }

    /// At a `continue`/`break` of the innermost loop body: whether it owes
    /// a barrier that none of its barriers since has paid
    /// ([`Account::owes_barrier`]); the caller then puts one there.
    pub fn owes_barrier(&mut self) -> bool {
        self.account.owes_barrier()
    }

    /// The entry's scratch map: every claim so far and the size.
    pub fn map(&self, entry: &str) -> ScratchMap {
        ScratchMap {
            entry: entry.to_string(),
            buffers: self.log.clone(),
            bytes: self.bytes,
            owed: self.account.owed().to_vec(),
        }
    }

    /// Frees the buffers claimed since `mark`: their bytes are dead, and
    /// dirty until a barrier.
    pub fn release(&mut self, mark: Mark) {
        let (freed, live) = std::mem::take(&mut self.live)
            .into_iter()
            .partition(|&(seq, _, _)| seq >= mark.0);
        self.live = live;
        let freed: Vec<(usize, i64, i64)> = freed;
        self.dirty.extend(freed.into_iter().map(|(_, s, e)| (s, e)));
    }

    /// Frees the live buffer that starts at `offset` (one an op is done
    /// with before its claimer is).
    pub fn release_at(&mut self, offset: i64) {
        if let Some(i) = self.live.iter().position(|&(_, s, _)| s == offset) {
            let (_, s, e) = self.live.remove(i);
            self.dirty.push((s, e));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan's buffer of `bytes` at `offset`.
    fn planned(bytes: i64, offset: i64) -> Planned {
        Planned {
            op: None,
            what: What::Tile,
            bytes,
            offset,
            over_dead: false,
            reusing: false,
        }
    }

    #[test]
    fn a_barrier_outside_every_construct_cleans_dead_bytes() {
        for (depth, barrier) in [(0, false), (1, true)] {
            let mut s = Scratch::new(256);
            let m = s.mark();
            s.claim(&planned(128, 0), Place::ONCE);
            s.release(m);
            s.on_barrier(depth);
            let c = s.claim(&planned(128, 0), Place::ONCE);
            assert_eq!((c.offset, c.barrier), (0, barrier), "depth {depth}");
        }
    }

    #[test]
    fn a_buffer_over_released_bytes_starts_with_a_barrier() {
        let mut s = Scratch::new(1000);
        let a = s.claim(&planned(100, 0), Place::LOOP);
        let m = s.mark();
        let b = s.claim(&planned(100, 112), Place::LOOP);
        assert!(!a.barrier && !b.barrier);
        // Frees only what was claimed since `m`.
        s.release(m);
        assert!(!s.claim(&planned(96, 224), Place::LOOP).barrier);
        // Over b's bytes: a barrier, which cleans them.
        assert!(s.claim(&planned(16, 112), Place::LOOP).barrier);
        assert!(!s.claim(&planned(16, 128), Place::LOOP).barrier);
        s.release_at(a.offset);
        // A barrier under an `if` cleans nothing for the claims after it.
        let conditional = Place {
            in_loop: false,
            conditional: true,
        };
        assert!(s.claim(&planned(48, 0), conditional).barrier);
        assert!(!s.reusing());
        let reused = Planned {
            reusing: true,
            ..planned(48, 48)
        };
        assert!(s.claim(&reused, Place::ONCE).barrier);
        assert!(s.reusing());
        let map = s.map("k");
        assert_eq!((map.bytes, map.buffers.len()), (1000, 7));
    }

    #[test]
    fn a_loop_body_pays_owed_barriers_with_its_own() {
        let op = |n: usize| OpId::from_index(n);
        // `op` in the innermost body: a barrier between its writes and
        // reads at `depth`, then its debt; true when it pays at once.
        let reduce = |s: &mut Scratch, id: OpId, depth: usize| {
            let scope = s.begin_op(id);
            s.on_barrier(depth);
            let now = s.owe_barrier(depth);
            s.end_op(scope);
            now
        };
        let mut s = Scratch::new(1000);
        // Outside loops nothing is owed.
        assert!(!reduce(&mut s, op(0), 0));
        assert!(!s.owes_barrier());
        // Two reductions in a loop body: the second's barrier (between
        // its writes and reads) pays the first's debt; the first's comes
        // before the second in every iteration, so the second owes
        // nothing.
        s.enter_loop(0);
        assert!(!reduce(&mut s, op(1), 0));
        assert!(!reduce(&mut s, op(2), 0));
        assert!(!s.owes_barrier());
        s.leave_loop();
        // One reduction alone: paid at the body's end.
        s.enter_loop(0);
        assert!(!reduce(&mut s, op(3), 0));
        assert!(s.owes_barrier());
        s.on_barrier(0);
        assert!(!s.owes_barrier());
        s.leave_loop();
        // Under an `if`, with no barrier of the body before it, an op
        // pays at once; a straight-line one after it owes, and a barrier
        // under an `if` (an exit there) does not pay it: every exit puts
        // its own.
        s.enter_loop(0);
        assert!(reduce(&mut s, op(4), 1));
        assert!(!reduce(&mut s, op(5), 0));
        s.on_barrier(1);
        assert!(s.owes_barrier());
        s.on_barrier(1);
        assert!(s.owes_barrier());
        s.leave_loop();
        let paid: Vec<Paid> = s.map("k").owed.iter().map(|o| o.paid).collect();
        assert_eq!(
            paid,
            [
                Paid::After,
                Paid::Before,
                Paid::AtEnd,
                Paid::Own,
                Paid::AtEnd
            ]
        );
        let ops: Vec<Option<OpId>> = s.map("k").owed.iter().map(|o| o.op).collect();
        assert_eq!(ops, [1, 2, 3, 4, 5].map(|n| Some(op(n))));
    }

    #[test]
    fn scratch_rewritten_before_the_op_is_paid_only_after_it() {
        let op = |n: usize| OpId::from_index(n);
        // A product reading a B buffer the next iteration's copy rewrites
        // at the body's start: a barrier before the product (its own wait
        // for the copy) does not come between its reads and that copy.
        let product = |s: &mut Scratch, id: OpId| {
            let scope = s.begin_op(id);
            let now = s.owe_barrier_early(0);
            s.end_op(scope);
            now
        };
        let mut s = Scratch::new(1000);
        assert!(!product(&mut s, op(0)), "outside loops nothing is owed");
        s.enter_loop(0);
        s.on_barrier(0);
        // The first product: paid by the second's barrier before it.
        assert!(!product(&mut s, op(1)));
        s.on_barrier(0);
        // The second: nothing after it, so the body's end pays.
        assert!(!product(&mut s, op(2)));
        assert!(s.owes_barrier());
        s.leave_loop();
        let paid: Vec<Paid> = s.map("k").owed.iter().map(|o| o.paid).collect();
        assert_eq!(paid, [Paid::After, Paid::AtEnd]);
        // Where the op itself rewrites its scratch, the barrier before it
        // pays.
        let mut s = Scratch::new(1000);
        s.enter_loop(0);
        s.on_barrier(0);
        let scope = s.begin_op(op(3));
        assert!(!s.owe_barrier(0));
        s.end_op(scope);
        assert!(!s.owes_barrier());
        assert_eq!(s.map("k").owed[0].paid, Paid::Before);
    }
}
