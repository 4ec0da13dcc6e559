//! Moving a lowered tile into another layout, as the plan's conversions
//! say ([`crate::lower::plan::conversions`]): a register permutation where
//! the threads agree, else recomputing it ([`crate::lower::emit::ops::remat`]),
//! warp shuffles ([`crate::lower::emit::ops::shuffle_convert`]) or a trip
//! through shared memory ([`crate::lower::emit::ops::staging`]).
use std::rc::Rc;

use crate::ir::{OpId, ValueId};
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::conversions::How;
use crate::lower::plan::layout::LinearLayout;

impl Lowerer<'_> {
    /// The lowered tile of `v` redistributed to `layout`, as the plan's
    /// conversion for op `op` says ([`crate::lower::plan::conversions`]);
    /// for a family the plan does not cover yet: a register permutation
    /// where the thread distribution agrees, else recomputing it, warp
    /// shuffles or a trip through shared memory.
    pub fn tile_in(
        &mut self,
        op: OpId,
        v: ValueId,
        layout: &Rc<LinearLayout>,
    ) -> Result<Tile, LowerError> {
        let t = self.tile(op, v)?;
        let needed = t.layout != *layout && !t.layout.shape.is_empty();
        // A value being recomputed converts its operands to the layout it
        // is recomputed in, which the plan does not list.
        if self.layout_overrides.is_empty() {
            if let Some(planned) = self.plan.conversions.of(op, v) {
                return match (needed, planned) {
                    (false, None) => Ok(t),
                    (true, Some(c)) if c.from == t.layout && c.to == *layout => {
                        self.follow(op, v, &t, layout, c.how)
                    }
                    _ => Err(self.unplanned(op, v, needed)),
                };
            }
        }
        if !needed {
            return Ok(t);
        }
        if t.layout.shape != layout.shape {
            return Err(self.unsupported_feature(op, "mismatched tile shapes"));
        }
        if let Some(regs) = permuted(&t, layout) {
            return Ok(regs);
        }
        if let Some(c) = crate::lower::emit::ops::remat::rematerialize(self, v, layout) {
            return Ok(c);
        }
        self.move_tile(v, &t, layout)
    }

    /// Tile `t` (of `v`, an operand of `op`) moved to `layout` as the plan
    /// says.
    pub fn follow(
        &mut self,
        op: OpId,
        v: ValueId,
        t: &Tile,
        layout: &Rc<LinearLayout>,
        how: How,
    ) -> Result<Tile, LowerError> {
        let done = match how {
            How::Permute => permuted(t, layout),
            How::Recompute => crate::lower::emit::ops::remat::rematerialize(self, v, layout),
            How::Shuffle => crate::lower::emit::ops::shuffle_convert::convert(self, t, layout),
            How::Shared { .. } => {
                return crate::lower::emit::ops::staging::convert(self, v, t, layout)
            }
        };
        done.ok_or_else(|| LowerError::Failed {
            message: format!(
                "'{}' op: the planned conversion of an operand ({how:?}) cannot be made",
                self.m.ops[op].name()
            ),
            location: self.m.location(op),
        })
    }

    /// The internal error of an op whose conversion of `v` the plan does
    /// not list (or lists where none is needed).
    fn unplanned(&self, op: OpId, v: ValueId, needed: bool) -> LowerError {
        let k = self.m.ops[op].operands.iter().position(|&o| o == v);
        LowerError::Failed {
            message: format!(
                "'{}' op: operand {} {} a layout conversion the plan does not list",
                self.m.ops[op].name(),
                k.map_or_else(|| "?".into(), |k| k.to_string()),
                if needed { "needs" } else { "needs no" }
            ),
            location: self.m.location(op),
        }
    }

    /// Tile `t` (of `v`) moved between threads into `layout` (of the same
    /// shape): warp shuffles where they suffice, else shared memory.
    pub fn move_tile(
        &mut self,
        v: ValueId,
        t: &Tile,
        layout: &Rc<LinearLayout>,
    ) -> Result<Tile, LowerError> {
        if let Some(c) = crate::lower::emit::ops::shuffle_convert::convert(self, t, layout) {
            return Ok(c);
        }
        crate::lower::emit::ops::staging::convert(self, v, t, layout)
    }
}

/// `t` in `layout` by reordering each thread's registers, where the thread
/// distribution agrees and each thread holds every element it is given.
fn permuted(t: &Tile, layout: &Rc<LinearLayout>) -> Option<Tile> {
    if t.layout.thread_bases() != layout.thread_bases() {
        return None;
    }
    let regs = (0..layout.num_registers())
        .map(|r| {
            let want = layout.apply(r, 0);
            (0..t.layout.num_registers())
                .find(|&q| t.layout.apply(q, 0) == want)
                .map(|q| t.regs[q])
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Tile {
        elem: t.elem,
        layout: layout.clone(),
        regs,
    })
}
