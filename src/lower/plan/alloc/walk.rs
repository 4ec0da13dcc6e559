//! The plan's placement of an entry's buffers: the planned op buffers
//! ([`crate::lower::plan::buffers`]) claimed and released in the order
//! emission lowers the ops, by the one allocator ([`Placer`]).
//!
//! Each op claims its buffers (its operands' conversions first, then its
//! own) when it is lowered, and frees them when it is done; an op with
//! regions frees its own once its regions' ops are done, and one outside
//! every loop gives its bytes back to the top. An `alloca` nested in a
//! region takes its slot where the entry starts, for the whole entry.
//!
//! What an op claims by the room left is chosen by the rule emission
//! follows, at the plan's place: the slice and sets of a product that
//! stages its own operands
//! ([`crate::lower::plan::engines::Staging::choose`]), a conversion's
//! window where its whole tile does not fit
//! ([`crate::lower::plan::conversions::window`]), a pipelined loop's ring
//! of as many stages as fit
//! ([`crate::lower::plan::copies::pipeline::Ring::fit`]; a loop whose ring
//! does not fit is lowered as any other).
//!
//! The entry is placed only where every buffer it claims is foreseen: an
//! op whose buffers the plan does not cover, an A operand staged ahead of
//! its loop, a load copied straight into its product's buffer (and the
//! product reading it), a loop's split sum, or a value recomputed in
//! another layout (whose ops are lowered again, with what they claim)
//! leaves the entry to be placed as emission claims.
use std::fmt::Write;

use crate::ir::{Module, OpId, Opcode, Scalar};
use crate::lower::analysis::values::value_tile;
use crate::lower::analysis::values::Elem;
use crate::lower::plan::buffers::{OpBuffer, What};
use crate::lower::plan::conversions::window::{window, window_bytes};
use crate::lower::plan::conversions::How;
use crate::lower::plan::copies::pipeline::Ring;
use crate::lower::plan::engines::slot_bytes;
use crate::lower::plan::engines::Room;
use crate::lower::plan::Plan;

use super::placer::Placer;

/// One planned buffer and where it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The op claiming it; `None` for a nested `alloca`'s slot, claimed
    /// where the entry starts.
    pub op: Option<OpId>,
    /// What it holds.
    pub what: What,
    /// Its size.
    pub bytes: i64,
    /// Its first byte in the entry's scratch.
    pub offset: i64,
}

/// Where every buffer of an entry goes, in the order they are claimed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Allocation {
    /// The buffers, in claim order.
    pub claims: Vec<Placed>,
    /// The entry's shared-memory size: the most bytes in use at once.
    pub bytes: i64,
}

/// Why the plan leaves an entry's buffers to be placed as emission claims
/// them: the first buffer it does not foresee.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unforeseen {
    /// The op claiming it.
    pub op: Option<OpId>,
    /// What makes it unforeseen.
    pub why: &'static str,
}

/// The walk's state.
struct Walk<'a> {
    m: &'a Module,
    plan: &'a Plan,
    placer: Placer,
    /// Loops open around the op being walked.
    loops: usize,
    out: Vec<Placed>,
}

/// Places the buffers of the entry body `ops` under `plan` (its op buffers
/// planned), or says which buffer it does not foresee (the module's doc).
pub fn allocate(m: &Module, ops: &[OpId], plan: &Plan) -> Result<Allocation, Unforeseen> {
    let mut w = Walk {
        m,
        plan,
        placer: Placer::new(plan.target.max_shared_bytes()),
        loops: 0,
        out: Vec::new(),
    };
    for _ in nested_allocas(m, ops) {
        w.claim(None, What::Slot, 8, 16)?;
    }
    for &id in ops {
        w.op(id)?;
    }
    Ok(Allocation {
        claims: w.out,
        bytes: w.placer.peak(),
    })
}

/// The `alloca` ops nested in the regions of `ops`, in the order emission
/// allocates them where the entry starts.
fn nested_allocas(m: &Module, ops: &[OpId]) -> Vec<OpId> {
    let inner = |id: OpId| {
        m.ops[id]
            .regions
            .iter()
            .flat_map(|r| r.blocks.iter().flat_map(|b| b.ops.iter().copied()))
    };
    let mut stack: Vec<OpId> = ops.iter().flat_map(|&id| inner(id)).collect();
    let mut out = Vec::new();
    while let Some(id) = stack.pop() {
        if m.ops[id].opcode == Opcode::Alloca {
            out.push(id);
        }
        stack.extend(inner(id));
    }
    out
}

impl Walk<'_> {
    /// Claims `bytes` for `op`, in a loop or not.
    fn claim(
        &mut self,
        op: Option<OpId>,
        what: What,
        bytes: i64,
        align: i64,
    ) -> Result<(), Unforeseen> {
        let offset = (self.placer.claim(bytes, align, self.loops > 0)).ok_or(Unforeseen {
            op,
            why: "a buffer too large for the shared memory left",
        })?;
        self.out.push(Placed {
            op,
            what,
            bytes,
            offset,
        });
        Ok(())
    }

    /// Op `id`: its buffers, its regions' ops, then its buffers freed.
    fn op(&mut self, id: OpId) -> Result<(), Unforeseen> {
        let unforeseen = |why| Err(Unforeseen { op: Some(id), why });
        let listed: Vec<OpBuffer> = match self.plan.buffers.of(id) {
            Some(l) => l.copied().collect(),
            None if self.plan.buffers.list.iter().any(|b| b.op == id) => {
                return unforeseen("an op whose own buffers are not planned")
            }
            None => Vec::new(),
        };
        let recomputed =
            (self.plan.conversions.list.iter()).any(|c| c.op == id && c.how == How::Recompute);
        if recomputed {
            return unforeseen("a value recomputed in another layout");
        }
        if listed.iter().any(|b| b.what == What::Operands) {
            return self.product(id, &listed);
        }
        let mut listed = listed;
        if listed.iter().any(|b| b.what == What::Ring) {
            if self.pipelined(id, &listed)? {
                return Ok(());
            }
            // Its ring does not fit: a loop as any other.
            listed.retain(|b| b.what != What::Ring);
        }
        if let Some(b) = listed.iter().find(|b| b.what.by_room()) {
            return unforeseen(match b.what {
                What::Operands => "a product's operands, by the room left",
                What::CopiedB => "a B operand copied straight to shared memory",
                What::Ring => "a loop's ring of stages, by the room left",
                What::StagedA => "an A operand staged ahead of its loop",
                _ => "a split sum, by the room left",
            });
        }
        let mark = self.placer.mark();
        let op = &self.m.ops[id];
        for b in &listed {
            match b.what {
                What::Conversion(_) => self.conversion(id, b)?,
                _ => self.claim(Some(id), b.what, b.bytes, b.align)?,
            }
        }
        let looping = matches!(op.opcode, Opcode::For | Opcode::Loop);
        self.loops += usize::from(looping);
        for r in &op.regions {
            for b in &r.blocks {
                for &inner in &b.ops {
                    self.op(inner)?;
                }
            }
        }
        self.loops -= usize::from(looping);
        self.placer.release(mark);
        if !op.regions.is_empty() && self.loops == 0 {
            self.placer.release_scope(mark);
        }
        Ok(())
    }

    /// The conversion buffer `b` of op `id`: one for each operand the
    /// value is, the whole tile or, where it does not fit the room left,
    /// the window of it that does
    /// ([`crate::lower::plan::conversions::window`]); none for a load's
    /// move from the rows it reads where the whole tile does not fit (the
    /// load then reads in its users' layout).
    fn conversion(&mut self, id: OpId, b: &OpBuffer) -> Result<(), Unforeseen> {
        let What::Conversion(v) = b.what else {
            return Ok(());
        };
        let operands = &self.m.ops[id].operands;
        for _ in 0..operands.iter().filter(|&&o| o == v).count().max(1) {
            let mut bytes = b.bytes;
            let where_room =
                (self.plan.conversions.of(id, v)).is_some_and(|c| c.is_some_and(|c| c.where_room));
            if where_room && bytes > self.room() {
                // A load's move from the rows it reads is made only where
                // the whole tile fits.
                continue;
            }
            if bytes > self.room() {
                // A window at a time, where one fits.
                if let Some((shape, elem)) = value_tile(self.m, v) {
                    let slot = slot_bytes(elem);
                    if let Some(w) = window(&shape, slot, self.room()) {
                        bytes = window_bytes(&shape, slot, w);
                    }
                }
            }
            self.claim(Some(id), b.what, bytes, b.align)?;
        }
        Ok(())
    }

    /// Pipelined loop `id` (its buffers `listed`), where its ring fits the
    /// room left: the ring's buffers of as many stages as fit and its
    /// accumulator's conversion (on `wgmma` that first), freed once the
    /// loop is done; its body claims nothing more. `false` where the ring
    /// does not fit (or the induction variable is not 32 or 64 bits wide):
    /// the loop is lowered as any other.
    fn pipelined(&mut self, id: OpId, listed: &[OpBuffer]) -> Result<bool, Unforeseen> {
        let unforeseen = |why| Err(Unforeseen { op: Some(id), why });
        let Some(pipe) = self.plan.copies.pipelines.get(&id) else {
            return Ok(false);
        };
        let wide = (self.m.ops[id].for_bounds())
            .and_then(|(lb, _, _)| value_tile(self.m, lb))
            .is_some_and(|(_, e)| matches!(e, Elem::Num(Scalar::I32 | Scalar::I64)));
        let Some(stages) = pipe.ring.fit(self.plan, self.placer.top()).filter(|_| wide) else {
            return Ok(false);
        };
        if listed
            .iter()
            .any(|b| b.what.by_room() && b.what != What::Ring)
        {
            return unforeseen("a pipelined loop with other buffers by the room left");
        }
        let mark = self.placer.mark();
        let conversions = listed
            .iter()
            .filter(|b| matches!(b.what, What::Conversion(_)));
        let wgmma = matches!(pipe.ring, Ring::Wgmma { .. });
        if wgmma {
            for b in conversions.clone() {
                self.conversion(id, b)?;
            }
        }
        for bytes in pipe.ring.claims(stages) {
            self.claim(Some(id), What::Ring, bytes, 16)?;
        }
        if !wgmma {
            for b in conversions {
                self.conversion(id, b)?;
            }
        }
        self.placer.release(mark);
        if self.loops == 0 {
            self.placer.release_scope(mark);
        }
        Ok(true)
    }

    /// Product `id`, which stages its own operands (its buffers `listed`):
    /// its conversions, then the buffers of the slice and sets its engine
    /// chooses by the room left ([`crate::lower::plan::engines::Staging::choose`]).
    fn product(&mut self, id: OpId, listed: &[OpBuffer]) -> Result<(), Unforeseen> {
        let unforeseen = |why| Err(Unforeseen { op: Some(id), why });
        if self.plan.copies.copies_b(id) {
            return unforeseen("a B operand copied straight to shared memory");
        }
        let (Some(staging), Some(engine)) = (self.plan.staging(id), self.plan.engine(id)) else {
            return unforeseen("a product with no staging planned");
        };
        let kk = (self.m.ops[id].operand("lhs"))
            .and_then(|v| value_tile(self.m, v))
            .and_then(|(shape, _)| shape.last().copied())
            .unwrap_or(0);
        let mark = self.placer.mark();
        for b in listed
            .iter()
            .filter(|b| matches!(b.what, What::Conversion(_)))
        {
            self.conversion(id, b)?;
        }
        let room = Room {
            above: self.room(),
            anywhere: self.placer.largest_free(),
            top: self.placer.top(),
        };
        let Some((slice, sets)) = staging.choose(engine, kk, room) else {
            return unforeseen("a product whose operands fit nowhere");
        };
        for bytes in staging.claims(&slice, sets) {
            self.claim(Some(id), What::Operands, bytes, 16)?;
        }
        self.placer.release(mark);
        Ok(())
    }

    /// Shared memory free above the top (the next buffer starts 16-byte
    /// aligned).
    fn room(&self) -> i64 {
        self.plan.target.max_shared_bytes() - ((self.placer.top() + 15) & !15)
    }
}

/// The dump's lines: the size of the entry's scratch and where each
/// buffer goes, or that emission places them.
pub fn dump(m: &Module, plan: &Plan, s: &mut String) {
    let a = match &plan.placement {
        Ok(a) => a,
        Err(u) => {
            let by =
                u.op.map_or_else(|| "the entry".to_string(), |op| op_at(m, op));
            let why = u.why;
            let _ = writeln!(s, "  placement: as emission claims ({why}, for {by})");
            return;
        }
    };
    let _ = writeln!(
        s,
        "  placement: {} bytes, {} buffers",
        a.bytes,
        a.claims.len()
    );
    for p in &a.claims {
        let by =
            p.op.map_or_else(|| "the entry".to_string(), |op| op_at(m, op));
        let what = p.what.describe();
        let _ = writeln!(s, "    {} bytes at {}: {what}, for {by}", p.bytes, p.offset);
    }
}

/// `op` by name and location, for the dump.
fn op_at(m: &Module, op: OpId) -> String {
    let at = m
        .location(op)
        .map_or_else(|| "unknown location".to_string(), |l| l.to_string());
    format!("'{}' op at {at}", m.ops[op].name())
}
