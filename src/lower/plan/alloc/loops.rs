//! The walk through a `for` loop: the A operands staged before a loop at
//! the entry's top level, where they fit; a pipelined loop's ring, where it
//! fits; else the loop's carried values' conversions, the first copies it
//! prefetches (where they fit), its body, and the buffer its warp pairs sum
//! their partial results through.
use crate::ir::{OpId, Scalar};
use crate::lower::analysis::chains::split_result;
use crate::lower::analysis::memory::early_continue;
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::plan::buffers::loops::round_regs;
use crate::lower::plan::buffers::{OpBuffer, What};
use crate::lower::plan::conversions::How;
use crate::lower::plan::copies::direct::body_buffer_bytes;
use crate::lower::plan::copies::pipeline::Ring;
use crate::lower::plan::copies::staged_a::{Form, StagedA};

use super::choices::{Choice, Issue};
use super::walk::{Unforeseen, Walk};

impl Walk<'_> {
    /// Before loop `id` at the entry's top level: its A operands staged
    /// for `wgmma` (swizzled) where they fit, then those staged in rows
    /// where they fit beside the body's B buffers (their rows swizzled
    /// where padded ones leave no room), each with its conversion into
    /// the fragment layout first; claimed for the loop, for the rest of
    /// the entry.
    pub(super) fn stage_a(&mut self, id: OpId) -> Result<(), Unforeseen> {
        let Some(planned) = self.plan.copies.staged_a.get(&id) else {
            return Ok(());
        };
        let body = self.m.ops[id].body_ops();
        for c in planned
            .iter()
            .filter(|c| matches!(c.form, Form::Swizzled(_)))
        {
            let bytes = c.form.bytes();
            if self.copies.staged_swizzled.contains(&c.value) {
                continue;
            }
            if self.stage_one(id, c, bytes, bytes <= self.room())? {
                self.copies.staged_swizzled.insert(c.value);
            }
        }
        for c in planned {
            let Form::Rows { rows, stride, .. } = c.form else {
                continue;
            };
            if self.copies.staged_rows.contains(&c.value) {
                continue;
            }
            let fits = |w: &Walk| {
                let b = body_buffer_bytes(
                    w.m,
                    w.plan,
                    body,
                    w.copies.swizzled_rows,
                    w.placer.reusing(),
                );
                rows * stride + 16 + b <= w.room()
            };
            if !fits(self) && !self.copies.swizzled_rows {
                // Unpadded, swizzled B buffers may leave the room.
                self.copies.swizzled_rows = true;
                self.copies.swizzled_rows = fits(self);
                if self.copies.swizzled_rows {
                    self.choices.push(Choice::SwizzledRows { op: id });
                }
            }
            if self.stage_one(id, c, rows * stride, fits(self))? {
                self.copies.staged_rows.insert(c.value);
            }
        }
        Ok(())
    }

    /// A operand `c` staged before loop `id` in `bytes` where `staged`
    /// (it fits): its conversion, then its buffer. Returns `staged`.
    fn stage_one(
        &mut self,
        id: OpId,
        c: &StagedA,
        bytes: i64,
        staged: bool,
    ) -> Result<bool, Unforeseen> {
        self.choices.push(Choice::StagedA {
            op: id,
            product: c.product,
            staged,
        });
        if staged {
            self.staged_conversion(id, c.product, c.value)?;
            self.claim(Some(id), What::StagedA, bytes, 16)?;
        }
        Ok(staged)
    }

    /// The conversion of A operand `v` of `product` into its fragment
    /// layout, where the plan sends it through shared memory, claimed for
    /// loop `id`.
    fn staged_conversion(
        &mut self,
        id: OpId,
        product: OpId,
        v: crate::ir::ValueId,
    ) -> Result<(), Unforeseen> {
        match self.plan.conversions.of(product, v) {
            Some(Some(c)) => match c.how {
                How::Shared { bytes } => self.convert(Some(id), v, bytes),
                _ => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// Pipelined loop `id` (its buffers `listed`), where its ring fits the
    /// room left: the ring's buffers of as many stages as fit and its
    /// accumulator's conversion (on `wgmma` that first), freed once the
    /// loop is done; its body claims nothing more. `false` where the ring
    /// does not fit (or the induction variable is not 32 or 64 bits wide):
    /// the loop is lowered as any other.
    pub(super) fn pipelined(&mut self, id: OpId, listed: &[OpBuffer]) -> Result<bool, Unforeseen> {
        let Some(pipe) = self.plan.copies.pipelines.get(&id) else {
            return Ok(false);
        };
        let wide = (self.m.ops[id].for_bounds())
            .and_then(|(lb, _, _)| value_tile(self.m, lb))
            .is_some_and(|(_, e)| matches!(e, Elem::Num(Scalar::I32 | Scalar::I64)));
        if !wide {
            return Ok(false);
        }
        let fit = pipe.ring.fit(self.plan, self.placer.top());
        self.choices.push(Choice::Ring {
            op: id,
            stages: fit,
        });
        let Some(stages) = fit else {
            return Ok(false);
        };
        let mark = self.placer.mark();
        let conversions = listed
            .iter()
            .filter(|b| matches!(b.what, What::Conversion(_)));
        let wgmma = matches!(pipe.ring, Ring::Wgmma { .. });
        if wgmma {
            for b in conversions.clone() {
                self.conversion(id, b, false)?;
            }
        }
        for bytes in pipe.ring.claims(stages) {
            self.claim(Some(id), What::Ring, bytes, 16)?;
        }
        if !wgmma {
            for b in conversions {
                self.conversion(id, b, false)?;
            }
        }
        self.release(mark, false);
        if self.loops == 0 {
            self.release(mark, true);
        }
        Ok(true)
    }

    /// Loop `id` (its buffers `listed`) as any other: its carried values'
    /// conversions, the first copies it prefetches where they fit (unless
    /// a `continue` advances it early or its induction variable is
    /// narrow), its body, then its split sum, a chunk of registers at a
    /// time, as many as fit.
    pub(super) fn for_loop(&mut self, id: OpId, listed: &[OpBuffer]) -> Result<(), Unforeseen> {
        let mark = self.placer.mark();
        let staged: Vec<_> = (self.plan.copies.staged_a.get(&id).into_iter().flatten())
            .map(|c| c.value)
            .collect();
        for b in listed {
            if matches!(b.what, What::Conversion(v) if !staged.contains(&v)) {
                self.conversion(id, b, false)?;
            }
        }
        let op = &self.m.ops[id];
        let narrow = (op.for_bounds())
            .and_then(|(lb, _, _)| value_tile(self.m, lb))
            .is_some_and(|(_, e)| matches!(e, Elem::Num(Scalar::I1 | Scalar::I8 | Scalar::I16)));
        let mut prefetched = Vec::new();
        if !early_continue(self.m, id) && !narrow {
            for &load in op.body_ops() {
                let Some(d) = self.plan.copies.direct.get(&load).filter(|d| d.prefetched) else {
                    continue;
                };
                let bytes = self.b_bytes(d);
                if bytes > self.room() {
                    continue;
                }
                self.choices.push(Choice::Copy {
                    load,
                    issue: Issue::BeforeLoop,
                });
                let offset = self.claim(Some(id), What::CopiedB, bytes, 16)?;
                self.copies.live.insert(load, (offset, true));
                self.copies.prefetched.insert(load);
                prefetched.push(load);
            }
        }
        self.loops += 1;
        let body = self.region(op.body_ops());
        self.loops -= 1;
        body?;
        for load in prefetched {
            self.copies.prefetched.remove(&load);
        }
        if let Some(s) = split_result(self.m, id, self.plan.warps).filter(|s| s.sum_after) {
            self.split_sum(id, s.slot)?;
        }
        self.release(mark, false);
        if self.loops == 0 {
            self.release(mark, true);
        }
        Ok(())
    }

    /// The buffer loop `id`'s warp pairs sum its carried value `slot`
    /// through: a chunk of its registers at a time, the most that fit the
    /// room left ([`round_regs`]).
    fn split_sum(&mut self, id: OpId, slot: usize) -> Result<(), Unforeseen> {
        let regs = (self.m.ops[id].results.get(slot))
            .and_then(|r| self.plan.held(*r))
            .map_or(1, |l| l.num_registers() as i64);
        let threads = i64::from(self.plan.warps) * 32;
        let chunk = round_regs(regs, threads, self.room());
        self.choices.push(Choice::SplitSum {
            op: id,
            regs: chunk,
        });
        let mark = self.placer.mark();
        self.claim(Some(id), What::SplitSum, threads * chunk * 4, 16)?;
        self.release(mark, self.loops == 0);
        Ok(())
    }
}
