//! The walk through what a region's B copies and products claim: the
//! loads copied straight into their product's B buffer
//! ([`crate::lower::plan::copies::direct`]), issued early where the plan
//! says so and their buffers fit, else where they stand; the products,
//! reading such a buffer (and freeing it) or staging their own operands.
use crate::ir::OpId;
use crate::lower::analysis::chains::is_mma;
use crate::lower::analysis::values::value_tile;
use crate::lower::plan::buffers::{OpBuffer, What};
use crate::lower::plan::copies::direct::{buffer_bytes, Direct};
use crate::lower::plan::engines::Room;

use super::choices::{Choice, Issue};
use super::walk::{Unforeseen, Walk};

impl Walk<'_> {
    /// The bytes of the B buffer of direct copy `d` as buffers are now
    /// (padded or swizzled rows).
    pub(super) fn b_bytes(&self, d: &Direct) -> i64 {
        let sw = self.copies.swizzled_rows;
        buffer_bytes(self.m, self.plan, d, sw).0
    }

    /// The ops of a block: the early copies first, where they fit, then
    /// the ops in order; after each product, the early copies that did not
    /// fit before, wherever they fit now.
    pub(super) fn region(&mut self, ops: &[OpId]) -> Result<(), Unforeseen> {
        let (mut early, mut waiting) = self.issue_early(ops, None, None)?;
        for (i, &id) in ops.iter().enumerate() {
            if early.contains(&id) {
                continue;
            }
            self.op(id)?;
            if !waiting.is_empty() && is_mma(self.m.ops[id].opcode) {
                let (issued, left) = self.issue_early(&ops[i + 1..], Some(&waiting), Some(id))?;
                early.extend(issued);
                waiting = left;
            }
        }
        Ok(())
    }

    /// The copies among `ops` the plan issues early (with `only`, just
    /// those, wherever they fit, after `product`; else where they fit above
    /// the scratch in use): those issued, and those left for want of room.
    fn issue_early(
        &mut self,
        ops: &[OpId],
        only: Option<&[OpId]>,
        product: Option<OpId>,
    ) -> Result<(Vec<OpId>, Vec<OpId>), Unforeseen> {
        let (mut out, mut waiting) = (Vec::new(), Vec::new());
        for &id in ops {
            let Some(d) = self.plan.copies.direct.get(&id).filter(|d| d.early) else {
                continue;
            };
            if only.is_some_and(|o| !o.contains(&id)) {
                continue;
            }
            let room = match only {
                Some(_) => self.placer.largest_free(),
                None => self.room(),
            };
            if !self.copies.prefetched.contains(&id) && self.b_bytes(d) > room {
                waiting.push(id);
                continue;
            }
            let issue = match product {
                Some(product) => Issue::AfterProduct { product },
                None => Issue::Early,
            };
            if self.load_as(id, issue)? {
                out.push(id);
            }
        }
        Ok((out, waiting))
    }

    /// Load `id`, copied straight into its product's B buffer: the buffer,
    /// claimed for it and kept until its product has read it (none where
    /// its loop prefetched it). `false` where it fits nowhere.
    pub(super) fn load(&mut self, id: OpId) -> Result<bool, Unforeseen> {
        self.load_as(id, Issue::InPlace)
    }

    /// [`Walk::load`], issued as `issue` says where it is copied.
    fn load_as(&mut self, id: OpId, issue: Issue) -> Result<bool, Unforeseen> {
        if self.copies.prefetched.contains(&id) {
            return Ok(true);
        }
        let Some(d) = self.plan.copies.direct.get(&id) else {
            return Ok(false);
        };
        let bytes = self.b_bytes(d);
        if bytes > self.room() && bytes > self.placer.largest_free() {
            self.choices.push(Choice::Copy {
                load: id,
                issue: Issue::Nowhere,
            });
            return Ok(false);
        }
        self.choices.push(Choice::Copy { load: id, issue });
        let offset = self.claim(Some(id), What::CopiedB, bytes, 16)?;
        self.copies.live.insert(id, (offset, false));
        Ok(true)
    }

    /// Product `id` (its buffers `listed`): reading a B buffer a load
    /// copied into, its conversions, then the buffer freed (unless its
    /// loop prefetched it); else its conversions and the buffers of the
    /// slice and sets its engine chooses by the room left
    /// ([`crate::lower::plan::engines::Staging::choose`]).
    pub(super) fn product(&mut self, id: OpId, listed: &[OpBuffer]) -> Result<(), Unforeseen> {
        let unforeseen = |why| Err(Unforeseen { op: Some(id), why });
        let mark = self.placer.mark();
        let a = self.m.ops[id].operand("lhs");
        let conversions = listed
            .iter()
            .filter(|b| matches!(b.what, What::Conversion(_)));
        let copied = (self.plan.copies.direct.iter())
            .filter(|(_, d)| d.product == id)
            .find_map(|(load, d)| Some((*load, *self.copies.live.get(load)?, d)));
        if let Some((load, (offset, prefetched), d)) = copied {
            let swizzled = buffer_bytes(self.m, self.plan, d, false).1.is_some();
            let a_staged = a.is_some_and(|a| match swizzled {
                true => self.copies.staged_swizzled.contains(&a),
                false => self.copies.staged_rows.contains(&a),
            });
            for b in conversions {
                self.conversion(id, b, a_staged)?;
            }
            // Once read, the buffer is free, but where the loop prefetched
            // it: the next iteration's copy goes into it.
            if !prefetched {
                self.placer.release_at(offset);
                self.copies.live.remove(&load);
            }
            self.release(mark, false);
            return Ok(());
        }
        let (Some(staging), Some(engine)) = (self.plan.staging(id), self.plan.engine(id)) else {
            return unforeseen("a product with no staging planned");
        };
        let a_staged = a.is_some_and(|a| {
            self.copies.staged_rows.contains(&a) || self.copies.staged_swizzled.contains(&a)
        });
        for b in conversions {
            self.conversion(id, b, a_staged)?;
        }
        let kk = a
            .and_then(|v| value_tile(self.m, v))
            .and_then(|(shape, _)| shape.last().copied())
            .unwrap_or(0);
        let room = Room {
            above: self.room(),
            anywhere: self.placer.largest_free(),
            top: self.placer.top(),
        };
        let Some((slice, sets)) = staging.choose(engine, kk, room) else {
            return unforeseen(super::walk::NO_ROOM_FOR_OPERANDS);
        };
        self.choices.push(Choice::Slices {
            op: id,
            k: slice.k,
            sets,
        });
        for bytes in staging.claims(&slice, sets) {
            self.claim(Some(id), What::Operands, bytes, 16)?;
        }
        self.release(mark, false);
        Ok(())
    }
}
