//! The entry's shared-memory scratch as emission claims it: each buffer
//! where the plan's placement puts it
//! ([`crate::lower::plan::alloc::walk`]: the one allocator,
//! [`crate::lower::plan::alloc::placer`], over the buffers' live ranges),
//! claim for claim, with a barrier first where the plan says it lies on
//! bytes threads may still read ([`Claim::barrier`]); and the barrier an
//! op of a loop owes before its scratch is written again, where the plan's
//! account says ([`crate::lower::plan::alloc::account`]). The claims and
//! those barriers make the entry's scratch map ([`map`]).

pub mod map;

use crate::ir::OpId;
use crate::lower::plan::alloc::walk::Placed as Planned;
use crate::lower::plan::buffers::What;

pub use crate::lower::plan::alloc::account::{Owed, Paid};
pub use map::{Placed, ScratchMap};

/// What a layout conversion's buffer serves, in the scratch map.
pub const CONVERSION: &str = "a layout conversion";

/// What [`Scratch::begin_op`] replaced, for [`Scratch::end_op`].
#[derive(Clone, Copy, Debug)]
pub struct OpScope {
    claimer: Option<OpId>,
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
    /// The entry's shared-memory size, the plan's.
    bytes: i64,
    /// The op being lowered: the claimer of the next buffers.
    claimer: Option<OpId>,
    /// The barriers ops of loops owe before their scratch is written
    /// again, and how each is paid: the plan's.
    owed: Vec<Owed>,
    /// How many of them emission has met.
    owes: usize,
    /// Every claim, in order.
    log: Vec<Placed>,
}

impl Scratch {
    /// An empty scratch of an entry whose buffers take `bytes` in all, and
    /// whose ops of loops owe the barriers `owed`.
    pub fn new(bytes: i64, owed: Vec<Owed>) -> Scratch {
        Scratch {
            bytes,
            owed,
            owes: 0,
            claimer: None,
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

    /// Claims the buffer the plan placed as `p`, at `place`: where it
    /// lies, and whether a barrier comes first.
    pub fn claim(&mut self, p: &Planned, place: Place) -> Claim {
        let (start, barrier) = (p.offset, p.barrier);
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
        }
    }

    /// The op that [`Scratch::begin_op`] began is done.
    pub fn end_op(&mut self, scope: OpScope) {
        self.claimer = scope.claimer;
    }

    /// The next barrier the plan has an op of a loop owe, in the order
    /// emission meets them; `None` past the last.
    pub fn next_owed(&mut self) -> Option<Owed> {
        let o = self.owed.get(self.owes).copied();
        self.owes += 1;
        o
    }

    /// The entry's scratch map: every claim so far and the size.
    pub fn map(&self, entry: &str) -> ScratchMap {
        ScratchMap {
            entry: entry.to_string(),
            buffers: self.log.clone(),
            bytes: self.bytes,
            owed: self.owed.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_where_the_plan_placed_them() {
        let planned = |bytes, offset, barrier| Planned {
            op: None,
            what: What::Tile,
            bytes,
            offset,
            over_dead: false,
            barrier,
        };
        let mut s = Scratch::new(1000, Vec::new());
        let a = s.claim(&planned(100, 0, false), Place { in_loop: true });
        let b = s.claim(&planned(100, 0, true), Place { in_loop: true });
        assert_eq!(
            (a.offset, a.barrier, b.offset, b.barrier),
            (0, false, 0, true)
        );
        let map = s.map("k");
        assert_eq!((map.bytes, map.buffers.len()), (1000, 2));
        assert!(map.buffers[1].barrier && map.buffers[1].in_loop);
    }
}
