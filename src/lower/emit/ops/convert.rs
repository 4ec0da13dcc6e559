//! Moving a lowered tile into another layout: a register permutation where
//! the threads agree, else recomputing it ([`crate::lower::emit::ops::remat`]), warp shuffles
//! ([`crate::lower::emit::ops::shuffle_convert`]) or a trip through shared memory
//! ([`crate::lower::emit::ops::staging`]).
use std::rc::Rc;

use crate::ir::{OpId, ValueId};
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::layout::LinearLayout;

impl Lowerer<'_> {
    /// The lowered tile of `v` redistributed to `layout`: a register
    /// permutation where the thread distribution agrees, else a trip
    /// through shared memory.
    pub fn tile_in(
        &mut self,
        op: OpId,
        v: ValueId,
        layout: &Rc<LinearLayout>,
    ) -> Result<Tile, LowerError> {
        let t = self.tile(op, v)?;
        if t.layout == *layout || t.layout.shape.is_empty() {
            return Ok(t);
        }
        let same_threads = t.layout.thread_bases() == layout.thread_bases();
        let mut regs = Vec::with_capacity(layout.num_registers());
        for r in 0..layout.num_registers() {
            let want = layout.apply(r, 0);
            let found = (0..t.layout.num_registers()).find(|&q| t.layout.apply(q, 0) == want);
            match (same_threads, found) {
                (true, Some(q)) => regs.push(t.regs[q]),
                _ => {
                    if t.layout.shape != layout.shape {
                        return Err(self.unsupported_feature(op, "mismatched tile shapes"));
                    }
                    if let Some(c) = crate::lower::emit::ops::remat::rematerialize(self, v, layout)
                    {
                        return Ok(c);
                    }
                    return self.move_tile(&t, layout);
                }
            }
        }
        Ok(Tile {
            elem: t.elem,
            layout: layout.clone(),
            regs,
        })
    }

    /// Tile `t` moved between threads into `layout` (of the same shape):
    /// warp shuffles where they suffice, else shared memory.
    pub fn move_tile(&mut self, t: &Tile, layout: &Rc<LinearLayout>) -> Result<Tile, LowerError> {
        if let Some(c) = crate::lower::emit::ops::shuffle_convert::convert(self, t, layout) {
            return Ok(c);
        }
        crate::lower::emit::ops::staging::convert(self, t, layout)
    }
}
