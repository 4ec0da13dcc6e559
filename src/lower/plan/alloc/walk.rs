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
//! The walk places no barrier: every op declares its accesses to the
//! buffers as it is emitted, and one analysis of those accesses puts a
//! barrier wherever a buffer's bytes are written while another's reads
//! or writes of them may still be pending, in the same iteration of a
//! loop or across two ([`crate::lower::simt::membar`]).
//!
//! What an op claims by the room left is chosen here, at the plan's place,
//! and emission follows the choice ([`super::choices`]): the slice and
//! sets of a product that
//! stages its own operands
//! ([`crate::lower::plan::engines::Staging::choose`]), a conversion's
//! window where its whole tile does not fit
//! ([`crate::lower::plan::conversions::window`]), a pipelined loop's ring
//! of as many stages as fit, the A operands staged before a loop and the
//! B copies a loop prefetches or a block issues early, where they fit
//! ([`super::loops`], [`super::direct`]).
//!
//! A value recomputed in another layout has its defining op lowered
//! again, claiming what its operands' moves take ([`super::recompute`]).
//!
//! A B copy that fits nowhere leaves its load to read through registers
//! as any other ([`super::loads`]). A buffer too large for any room left
//! ends the walk: emission reports it where it claims it
//! ([`Allocation::unplaced`]). Where the walk meets what it does not
//! foresee (a value recomputed for a product or a loop, which no kernel
//! does) it says so ([`Unforeseen`]), and the entry fails as emission
//! begins it: an internal error.
use std::fmt::Write;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::ir::{Module, OpId, Opcode, ValueId};
use crate::lower::analysis::values::value_tile;
use crate::lower::plan::buffers::{OpBuffer, What};
use crate::lower::plan::conversions::loads::from_rows;
use crate::lower::plan::conversions::window::{window, window_bytes};
use crate::lower::plan::conversions::{Conversion, How};
use crate::lower::plan::engines::slot_bytes;
use crate::lower::plan::Plan;

use super::choices::{Choice, Choices};
use super::placer::{Mark, Placer};

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
    /// Placed below the top, over bytes of dead buffers.
    pub over_dead: bool,
}

/// Where every buffer of an entry goes, in the order they are claimed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Allocation {
    /// The buffers, in claim order.
    pub claims: Vec<Placed>,
    /// The entry's shared-memory size: the most bytes in use at once.
    pub bytes: i64,
    /// What the walk chose by the room left, in walk order.
    pub choices: Choices,
    /// The first buffer that fits no room left, where the walk stopped:
    /// emission reports it when it claims it.
    pub unplaced: Option<Unforeseen>,
    /// The largest buffer that would have fit where the walk stopped.
    pub fits_at_stop: i64,
}

/// Why the walk placed no further buffer of an entry: the first it does
/// not foresee, or one that fits no room left ([`Unforeseen::fits_nowhere`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unforeseen {
    /// The op claiming it.
    pub op: Option<OpId>,
    /// What makes it unforeseen.
    pub why: &'static str,
}

/// Why a buffer fits no room left.
const TOO_LARGE: &str = "a buffer too large for the shared memory left";
/// Why a product's operands fit no room left.
pub(super) const NO_ROOM_FOR_OPERANDS: &str = "a product whose operands fit nowhere";

impl Unforeseen {
    /// Whether it is a buffer that fits no room left (which emission
    /// reports at its claim), not a gap of the walk.
    pub fn fits_nowhere(&self) -> bool {
        self.why == TOO_LARGE || self.why == NO_ROOM_FOR_OPERANDS
    }
}

/// The direct copies and staged A operands as the walk goes.
#[derive(Debug, Default)]
pub(super) struct Copies {
    /// Loads whose B buffers are claimed and not yet freed: the buffer's
    /// offset, and whether a loop prefetched it (its buffer then serves
    /// every iteration).
    pub(super) live: HashMap<OpId, (i64, bool)>,
    /// Loads whose first copy their loop issued before it.
    pub(super) prefetched: HashSet<OpId>,
    /// Whether B buffers are unpadded, their rows swizzled (where a staged
    /// A did not fit beside padded ones).
    pub(super) swizzled_rows: bool,
    /// A operands staged for `wgmma`, swizzled.
    pub(super) staged_swizzled: HashSet<ValueId>,
    /// A operands staged in rows for `mma.sync`.
    pub(super) staged_rows: HashSet<ValueId>,
}

/// The walk's state.
pub(super) struct Walk<'a> {
    pub(super) m: &'a Module,
    pub(super) plan: &'a Plan,
    pub(super) placer: Placer,
    /// Loops open around the op being walked.
    pub(super) loops: usize,
    /// `if`s open around the op being walked.
    pub(super) ifs: usize,
    /// The direct copies and staged A operands so far.
    pub(super) copies: Copies,
    out: Vec<Placed>,
    /// What it chose by the room left.
    pub(super) choices: Vec<Choice>,
}

/// Places the buffers of the entry body `ops` under `plan` (its op buffers
/// planned), or says which buffer it does not foresee (the module's doc).
pub fn allocate(m: &Module, ops: &[OpId], plan: &Plan) -> Result<Allocation, Unforeseen> {
    let mut w = Walk {
        m,
        plan,
        placer: Placer::new(plan.target.max_shared_bytes()),
        loops: 0,
        ifs: 0,
        copies: Copies::default(),
        out: Vec::new(),
        choices: Vec::new(),
    };
    let walked = (|| {
        for _ in nested_allocas(m, ops) {
            w.claim(None, What::Slot, 8, 16)?;
        }
        ops.iter().try_for_each(|&id| w.op(id))
    })();
    let unplaced = match walked {
        Err(u) if !u.fits_nowhere() => return Err(u),
        r => r.err(),
    };
    Ok(Allocation {
        claims: w.out,
        bytes: w.placer.peak(),
        choices: Choices { list: w.choices },
        fits_at_stop: w.placer.largest_free(),
        unplaced,
    })
}

/// The `alloca` ops nested in the regions of `ops`, in the order emission
/// allocates them where the entry starts.
pub fn nested_allocas(m: &Module, ops: &[OpId]) -> Vec<OpId> {
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
    /// Claims `bytes` for `op`, in a loop or not; returns where.
    pub(super) fn claim(
        &mut self,
        op: Option<OpId>,
        what: What,
        bytes: i64,
        align: i64,
    ) -> Result<i64, Unforeseen> {
        let top = self.placer.top();
        let offset = (self.placer.claim(bytes, align, self.loops > 0))
            .ok_or(Unforeseen { op, why: TOO_LARGE })?;
        self.out.push(Placed {
            op,
            what,
            bytes,
            offset,
            over_dead: offset < top,
        });
        Ok(offset)
    }

    /// Frees the buffers claimed since `mark` (and, with `scope`, gives
    /// their bytes back to the top), forgetting the direct copies among
    /// them.
    pub(super) fn release(&mut self, mark: Mark, scope: bool) {
        let freed = if scope {
            self.placer.release_scope(mark)
        } else {
            self.placer.release(mark)
        };
        self.copies
            .live
            .retain(|_, (offset, _)| !freed.iter().any(|&(s, _)| s == *offset));
    }

    /// Op `id`: its buffers, its regions' ops, then its buffers freed.
    pub(super) fn op(&mut self, id: OpId) -> Result<(), Unforeseen> {
        let unforeseen = |why| Err(Unforeseen { op: Some(id), why });
        let listed: Vec<OpBuffer> = match self.plan.buffers.of(id) {
            Some(l) => l.copied().collect(),
            None if self.plan.buffers.list.iter().any(|b| b.op == id) => {
                return unforeseen("an op whose own buffers are not planned")
            }
            None => Vec::new(),
        };
        let conversions: Vec<&Conversion> = (self.plan.conversions.list.iter())
            .filter(|c| c.op == id)
            .collect();
        let recomputed = conversions.iter().any(|c| c.how == How::Recompute);
        let op = &self.m.ops[id];
        if op.opcode == Opcode::For && self.loops == 0 && self.ifs == 0 {
            self.stage_a(id)?;
        }
        let product =
            listed.iter().any(|b| b.what == What::Operands) || self.plan.copies.copies_b(id);
        let special = matches!(op.opcode, Opcode::For | Opcode::LoadViewTko) || product;
        if recomputed && special {
            return unforeseen("a value recomputed in another layout");
        }
        if op.opcode == Opcode::LoadViewTko && self.plan.copies.direct.contains_key(&id) {
            if self.load(id)? {
                return Ok(());
            }
            // Copied nowhere: read through registers as any other load.
            let mark = self.placer.mark();
            if let Some(Some(c)) = from_rows(self.m, id, self.plan) {
                self.move_from_rows(id, &c)?;
            }
            self.release(mark, false);
            return Ok(());
        }
        if product {
            return self.product(id, &listed);
        }
        if op.opcode == Opcode::For {
            if listed.iter().any(|b| b.what == What::Ring) && self.pipelined(id, &listed)? {
                return Ok(());
            }
            return self.for_loop(id, &listed);
        }
        if listed.iter().any(|b| b.what.by_room()) {
            return unforeseen("an op's buffers by the room left");
        }
        let mark = self.placer.mark();
        for c in conversions {
            if c.where_room && op.opcode == Opcode::LoadViewTko {
                self.move_from_rows(id, c)?;
                continue;
            }
            match c.how {
                How::Shared { bytes } => {
                    let b = OpBuffer {
                        op: id,
                        what: What::Conversion(c.value),
                        bytes,
                        align: 16,
                    };
                    self.conversion(id, &b, false)?;
                }
                How::Recompute => {
                    for _ in op.operands.iter().filter(|&&o| o == c.value) {
                        self.recompute(c.value, &c.to, 0)?;
                    }
                }
                How::Permute | How::Shuffle => {}
            }
        }
        for b in listed
            .iter()
            .filter(|b| !matches!(b.what, What::Conversion(_)))
        {
            self.claim(Some(id), b.what, b.bytes, b.align)?;
        }
        let looping = op.opcode == Opcode::Loop;
        let branching = op.opcode == Opcode::If;
        self.loops += usize::from(looping);
        self.ifs += usize::from(branching);
        for r in &op.regions {
            for b in &r.blocks {
                self.region(&b.ops)?;
            }
        }
        self.loops -= usize::from(looping);
        self.ifs -= usize::from(branching);
        self.release(mark, false);
        if !op.regions.is_empty() && self.loops == 0 {
            self.release(mark, true);
        }
        Ok(())
    }

    /// The conversion buffer `b` of op `id`: one for each operand the
    /// value is, the whole tile or, where it does not fit the room left,
    /// the window of it that does
    /// ([`crate::lower::plan::conversions::window`]).
    pub(super) fn conversion(
        &mut self,
        id: OpId,
        b: &OpBuffer,
        a_staged: bool,
    ) -> Result<(), Unforeseen> {
        let What::Conversion(v) = b.what else {
            return Ok(());
        };
        let where_room =
            (self.plan.conversions.of(id, v)).is_some_and(|c| c.is_some_and(|c| c.where_room));
        if where_room && a_staged {
            // A product's A staged before its loop is read from there.
            return Ok(());
        }
        let operands = &self.m.ops[id].operands;
        for _ in 0..operands.iter().filter(|&&o| o == v).count().max(1) {
            self.convert(Some(id), v, b.bytes)?;
        }
        Ok(())
    }

    /// Claims the buffer of a conversion of `v` (of `bytes`) for `op`: the
    /// whole tile, or where it does not fit the room left the window of it
    /// that does.
    pub(super) fn convert(
        &mut self,
        op: Option<OpId>,
        v: ValueId,
        bytes: i64,
    ) -> Result<(), Unforeseen> {
        let mut bytes = bytes;
        if bytes > self.room() {
            if let Some((shape, elem)) = value_tile(self.m, v) {
                let slot = slot_bytes(elem);
                if let Some(w) = window(&shape, slot, self.room()) {
                    bytes = window_bytes(&shape, slot, w);
                    if let Some(op) = op {
                        let operands = &self.m.ops[op].operands;
                        self.choices.push(Choice::Window {
                            op,
                            claim: self.out.len(),
                            operand: operands.iter().position(|&o| o == v).unwrap_or(0),
                            dim: w.0,
                            len: w.1,
                        });
                    }
                }
            }
        }
        self.claim(op, What::Conversion(v), bytes, 16)?;
        Ok(())
    }

    /// Shared memory free above the top (the next buffer starts 16-byte
    /// aligned).
    pub(super) fn room(&self) -> i64 {
        self.placer.room_above()
    }
}

/// The dump's lines: the size of the entry's scratch and where each
/// buffer goes, or why the walk placed none.
pub fn dump(m: &Module, plan: &Plan, s: &mut String) {
    let a = match &plan.placement {
        Ok(Allocation {
            unplaced: Some(u), ..
        })
        | Err(u) => {
            let by =
                u.op.map_or_else(|| "the entry".to_string(), |op| op_at(m, op));
            let why = u.why;
            let _ = writeln!(s, "  placement: none ({why}, for {by})");
            return;
        }
        Ok(a) => a,
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
    super::choices::dump(m, &a.choices.list, s);
}

/// `op` by name and location, for the dump.
fn op_at(m: &Module, op: OpId) -> String {
    let at = m
        .location(op)
        .map_or_else(|| "unknown location".to_string(), |l| l.to_string());
    format!("'{}' op at {at}", m.ops[op].name())
}
