//! The entry's shared-memory scratch as emission claims it: each buffer
//! where the plan's placement puts it
//! ([`crate::lower::plan::alloc::walk`]: the one allocator,
//! [`crate::lower::plan::alloc::placer`], over the buffers' live ranges),
//! claim for claim. The claims and the barriers the analysis of the
//! declared accesses placed ([`crate::lower::simt::membar`]) make the
//! entry's scratch map ([`map`]).

pub mod map;

use crate::ir::OpId;
use crate::lower::plan::alloc::walk::Placed as Planned;
use crate::lower::plan::buffers::What;

use crate::lower::simt::membar::Barrier;
pub use map::{Placed, ScratchMap};

/// What a layout conversion's buffer serves, in the scratch map.
pub const CONVERSION: &str = "a layout conversion";

/// The scratch state of one entry: what emission has claimed of the
/// plan's placement so far, and for which op.
#[derive(Debug, Default)]
pub struct Scratch {
    /// The op being lowered: the claimer of the next buffers.
    claimer: Option<OpId>,
    /// Every claim, in order.
    log: Vec<Placed>,
}

impl Scratch {
    /// How many buffers have been claimed.
    pub fn claims(&self) -> usize {
        self.log.len()
    }

    /// Records the claim of the buffer the plan placed as `p`, in a loop
    /// or not.
    pub fn claim(&mut self, p: &Planned, in_loop: bool) {
        self.log.push(Placed {
            op: self.claimer,
            purpose: matches!(p.what, What::Conversion(_)).then_some(CONVERSION),
            bytes: p.bytes.max(0),
            offset: p.offset,
            in_loop,
            over_dead: p.over_dead,
        });
    }

    /// The op claiming the next buffers.
    pub fn claimer(&self) -> Option<OpId> {
        self.claimer
    }

    /// The next buffers are claimed for `claimer` (the op being lowered,
    /// or the loop an op's lowering claims ahead of); returns the claimer
    /// it replaces.
    pub fn claim_for(&mut self, claimer: Option<OpId>) -> Option<OpId> {
        std::mem::replace(&mut self.claimer, claimer)
    }

    /// The entry's scratch map: every claim so far, the entry's size and
    /// the barriers the analysis of the declared accesses placed.
    pub fn map(&self, entry: &str, bytes: i64, barriers: Vec<Barrier>) -> ScratchMap {
        ScratchMap {
            entry: entry.to_string(),
            buffers: self.log.clone(),
            bytes,
            barriers,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_records_the_claims_as_the_plan_placed_them() {
        let planned = |bytes, offset, over_dead| Planned {
            op: None,
            what: What::Tile,
            bytes,
            offset,
            over_dead,
        };
        let mut s = Scratch::default();
        s.claim_for(Some(OpId::from_index(3)));
        s.claim(&planned(100, 0, false), true);
        s.claim(&planned(100, 0, true), false);
        let map = s.map("k", 1000, Vec::new());
        assert_eq!((map.bytes, map.buffers.len()), (1000, 2));
        let b = map.buffers[1];
        assert_eq!((b.offset, b.over_dead, b.in_loop), (0, true, false));
        assert_eq!(b.op, Some(OpId::from_index(3)));
    }
}
