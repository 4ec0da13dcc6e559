//! The barriers mma.sync and `wgmma` products of loops owe before their
//! scratch is written again, kept by the plan's walk ([`super::walk`]) as
//! emission lowers the loop bodies, and followed by emission. (Ops that
//! declare their accesses to shared memory, FMA products among them,
//! leave this to the analysis of those accesses,
//! [`crate::lower::simt::membar`]; those engines keep their own protocol
//! of copies and waits and do not declare theirs.)
//!
//! A product in a loop that reads its own scratch writes it again in the
//! next iteration: some barrier must come between its last reads and those
//! writes ([`Account::owe`]). One of the loop body's own barriers does that
//! when it comes before the op or after it in every iteration
//! (straight-line in the body, not under an `if` or in an inner loop);
//! else the body ends with one ([`Account::owes_barrier`], at `continue`
//! and `break`). Where the next iteration rewrites the scratch before the
//! op's place in the body (a product's B operand, copied at the body's
//! start or at its load, [`Rewrite::BeforeOp`]), only a later barrier of
//! the body, or the one at its end, comes between. Outside loops nothing
//! is owed: no op runs twice, and a buffer placed over another's bytes
//! starts with its barrier. So no op ends with a barrier of its own for
//! the writers after it.

use crate::ir::OpId;

/// The barriers of one loop body being lowered.
#[derive(Debug)]
struct Frame {
    /// Open constructs (ifs, loops) at the body: a barrier at this depth
    /// runs once every iteration.
    depth: usize,
    /// Barriers so far straight-line in the body.
    barriers: usize,
    /// The ops that owe a barrier none of the body's has paid yet: their
    /// entries in [`Account::owed`].
    owed: Vec<usize>,
}

/// How the barrier an op owed before rewriting its scratch was paid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paid {
    /// By a barrier of the loop body before the op.
    Before,
    /// By a later barrier of the loop body.
    After,
    /// By one at the body's `continue`/`break`.
    AtEnd,
    /// By its own, right after the op (under an `if`).
    Own,
    /// Not yet (the entry is still being lowered).
    Open,
}

/// Where the next iteration rewrites an op's scratch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rewrite {
    /// Where the op itself runs: a barrier of the body before it comes
    /// between its reads and that write.
    AtOp,
    /// Before the op's place in the body.
    BeforeOp,
}

/// An op of a loop that owed a barrier before rewriting its scratch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owed {
    /// The op.
    pub op: Option<OpId>,
    /// How it was paid.
    pub paid: Paid,
}

/// The account of one entry: the loop bodies being lowered and every
/// barrier owed.
#[derive(Debug, Default)]
pub struct Account {
    /// The innermost loop body's barriers when the op being lowered began.
    barriers_before: Option<usize>,
    /// The loop bodies being lowered, innermost last.
    frames: Vec<Frame>,
    /// Every barrier owed, in order.
    owed: Vec<Owed>,
}

impl Account {
    /// An op begins: the loop body's barriers so far come before it.
    /// Returns what to give [`Account::end_op`] when it is done.
    pub fn begin_op(&mut self) -> Option<usize> {
        let before = self.barriers_before;
        self.barriers_before = self.frames.last().map(|f| f.barriers);
        before
    }

    /// The op is done: `before` is what its [`Account::begin_op`] returned.
    pub fn end_op(&mut self, before: Option<usize>) {
        self.barriers_before = before;
    }

    /// A loop body begins, `depth` constructs open (its loop included,
    /// as the plan's walk counts them: its loops and `if`s).
    pub fn enter_loop(&mut self, depth: usize) {
        self.frames.push(Frame {
            depth,
            barriers: 0,
            owed: Vec::new(),
        });
    }

    /// The innermost loop body is done.
    pub fn leave_loop(&mut self) {
        self.frames.pop();
    }

    /// A barrier of every thread, `depth` constructs open: it pays what
    /// the innermost loop body owes when it runs once every iteration.
    pub fn on_barrier(&mut self, depth: usize) {
        let Some(f) = self.frames.last_mut() else {
            return;
        };
        if f.depth != depth {
            return;
        }
        f.barriers += 1;
        for i in f.owed.drain(..) {
            if self.owed[i].paid == Paid::Open {
                self.owed[i].paid = Paid::After;
            }
        }
    }

    /// Op `op`, `depth` constructs open, has read its own scratch for the
    /// last time, and the next iteration writes it again where `rewrite`
    /// says. Whether it needs a barrier right away: not when the loop body
    /// has one before the op and the op itself rewrites the scratch, nor
    /// when the op is straight-line in the body (the barrier is owed, paid
    /// by a later one of the body or at its end); under an `if`, it does.
    pub fn owe(&mut self, depth: usize, rewrite: Rewrite, op: Option<OpId>) -> bool {
        let Some(f) = self.frames.last_mut() else {
            return false;
        };
        if rewrite == Rewrite::AtOp && self.barriers_before.is_some_and(|b| b > 0) {
            self.owed.push(Owed {
                op,
                paid: Paid::Before,
            });
            return false;
        }
        if depth != f.depth {
            self.owed.push(Owed {
                op,
                paid: Paid::Own,
            });
            return true;
        }
        f.owed.push(self.owed.len());
        self.owed.push(Owed {
            op,
            paid: Paid::Open,
        });
        false
    }

    /// At a `continue`/`break` of the innermost loop body: whether it owes
    /// a barrier that none of its barriers since has paid. If so the
    /// caller puts one there, which pays it (for every exit, where it runs
    /// once every iteration; else each exit puts its own).
    pub fn owes_barrier(&mut self) -> bool {
        let Some(f) = self.frames.last() else {
            return false;
        };
        if f.owed.is_empty() {
            return false;
        }
        for &i in &f.owed {
            self.owed[i].paid = Paid::AtEnd;
        }
        true
    }

    /// Every barrier owed so far, in order.
    pub fn owed(&self) -> &[Owed] {
        &self.owed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_body_pays_owed_barriers_with_its_own() {
        let op = |n: usize| OpId::from_index(n);
        // `op` in the innermost body: a barrier between its writes and
        // reads at `depth`, then its debt; true when it pays at once.
        let reduce = |s: &mut Account, id: OpId, depth: usize| {
            let before = s.begin_op();
            s.on_barrier(depth);
            let now = s.owe(depth, Rewrite::AtOp, Some(id));
            s.end_op(before);
            now
        };
        let mut s = Account::default();
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
        let paid: Vec<Paid> = s.owed().iter().map(|o| o.paid).collect();
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
        let ops: Vec<Option<OpId>> = s.owed().iter().map(|o| o.op).collect();
        assert_eq!(ops, [1, 2, 3, 4, 5].map(|n| Some(op(n))));
    }

    #[test]
    fn scratch_rewritten_before_the_op_is_paid_only_after_it() {
        let op = |n: usize| OpId::from_index(n);
        // A product reading a B buffer the next iteration's copy rewrites
        // at the body's start: a barrier before the product (its own wait
        // for the copy) does not come between its reads and that copy.
        let product = |s: &mut Account, id: OpId| {
            let before = s.begin_op();
            let now = s.owe(0, Rewrite::BeforeOp, Some(id));
            s.end_op(before);
            now
        };
        let mut s = Account::default();
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
        let paid: Vec<Paid> = s.owed().iter().map(|o| o.paid).collect();
        assert_eq!(paid, [Paid::After, Paid::AtEnd]);
        // Where the op itself rewrites its scratch, the barrier before it
        // pays.
        let mut s = Account::default();
        s.enter_loop(0);
        s.on_barrier(0);
        let before = s.begin_op();
        assert!(!s.owe(0, Rewrite::AtOp, Some(op(3))));
        s.end_op(before);
        assert!(!s.owes_barrier());
        assert_eq!(s.owed()[0].paid, Paid::Before);
    }
}
