//! The entry's shared-memory scratch as emission claims it: each buffer
//! where the plan's placement puts it
//! ([`crate::lower::plan::alloc::walk`]: the one allocator,
//! [`crate::lower::plan::alloc::placer`], over the buffers' live ranges),
//! claim for claim, with a barrier first where the plan says it lies on
//! bytes threads may still read ([`Claim::barrier`]).
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

/// Where a claim is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// In a loop.
    pub in_loop: bool,
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

    /// Claims the buffer the plan placed as `p`, at `place`: where it
    /// lies, and whether a barrier comes first.
    pub fn claim(&mut self, p: &Planned, place: Place) -> Claim {
        let (start, barrier) = (p.offset, p.barrier);
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

    /// A barrier of every thread, `depth` constructs open: it pays what
    /// the innermost loop body owes when it runs once every iteration
    /// ([`Account::on_barrier`]).
    pub fn on_barrier(&mut self, depth: usize) {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_where_the_plan_placed_them() {
        let planned = |bytes, offset, barrier, reusing| Planned {
            op: None,
            what: What::Tile,
            bytes,
            offset,
            over_dead: false,
            reusing,
            barrier,
        };
        let mut s = Scratch::new(1000);
        let a = s.claim(&planned(100, 0, false, false), Place { in_loop: true });
        let b = s.claim(&planned(100, 0, true, true), Place { in_loop: true });
        assert_eq!(
            (a.offset, a.barrier, b.offset, b.barrier),
            (0, false, 0, true)
        );
        assert!(s.reusing());
        let map = s.map("k");
        assert_eq!((map.bytes, map.buffers.len()), (1000, 2));
        assert!(map.buffers[1].barrier && map.buffers[1].in_loop);
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
