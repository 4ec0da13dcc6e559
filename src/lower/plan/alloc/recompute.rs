//! The walk through a value recomputed in another layout: its defining op
//! lowered again, claiming (for itself) the buffers its operands' moves
//! take, freed once it is done, as emission recomputes it.
use std::rc::Rc;

use crate::ir::{OpId, ValueId};
use crate::lower::analysis::values::value_tile;
use crate::lower::plan::conversions::recompute::{operand_layouts, recomputes, MAX_DEPTH};
use crate::lower::plan::conversions::{by_shuffles, permutes};
use crate::lower::plan::engines::tile_bytes;
use crate::lower::plan::layout::LinearLayout;

use super::walk::{Unforeseen, Walk};

impl Walk<'_> {
    /// `v` recomputed in `to`, `depth` recomputations open around it.
    pub(super) fn recompute(
        &mut self,
        v: ValueId,
        to: &Rc<LinearLayout>,
        depth: u32,
    ) -> Result<(), Unforeseen> {
        let Some(def) = recomputes(self.m, v) else {
            return Err(Unforeseen {
                op: None,
                why: "a value that cannot be recomputed",
            });
        };
        let mark = self.placer.mark();
        for (u, need) in operand_layouts(self.m, def, to) {
            self.move_operand(def, u, &need, depth)?;
        }
        self.release(mark, false);
        Ok(())
    }

    /// Operand `u` of `op` (being recomputed, `depth` recomputations open)
    /// moved to `need`: permuted, recomputed where recomputation may reach
    /// that deep, by shuffles, else through shared memory.
    fn move_operand(
        &mut self,
        op: OpId,
        u: ValueId,
        need: &Rc<LinearLayout>,
        depth: u32,
    ) -> Result<(), Unforeseen> {
        let Some(held) = self.plan.held(u).cloned() else {
            return Ok(());
        };
        if held == *need || held.shape.is_empty() || permutes(&held, need) {
            return Ok(());
        }
        let Some((_, elem)) = value_tile(self.m, u).filter(|_| held.shape == need.shape) else {
            return Err(Unforeseen {
                op: Some(op),
                why: "a recomputed operand of another shape",
            });
        };
        if recomputes(self.m, u).is_some() && depth + 1 < MAX_DEPTH {
            return self.recompute(u, need, depth + 1);
        }
        if by_shuffles(elem, &held, need) {
            return Ok(());
        }
        self.convert(Some(op), u, tile_bytes(&held.shape, elem))
    }
}
