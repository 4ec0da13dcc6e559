//! Operands streamed slice by slice: a load that feeds a product whose
//! whole operand tiles would crowd the registers, and that the pipelines
//! and direct copies do not take, is read by its product a slice of K at
//! a time through shared memory.
use crate::ir::{Module, OpId, Opcode, ValueId};
use crate::lower::analysis::values::value_tile;
use crate::lower::analysis::view::{def_op, partition, PartitionInfo};
use crate::lower::plan::copies::direct::only_user;
use crate::lower::plan::copies::direct::{copies_b, Directs};
use crate::lower::plan::copies::pipeline::{chunk_along, too_large_to_stage, weak};
use crate::lower::plan::engines::mma_sync::Kind;
use crate::lower::plan::engines::Engine;
use crate::lower::plan::Plan;

/// Registers a thread would give the accumulator and the whole operand
/// tiles above which loaded operands are streamed.
const MAX_WORDS: i64 = 160;

/// A load its product reads slice by slice.
#[derive(Clone, Debug)]
pub struct Stream {
    /// The product.
    pub product: OpId,
    /// The view and partition the load reads.
    pub view: PartitionInfo,
    /// Leading dimensions of 1 the operand drops.
    pub lead: usize,
}

/// The product `load` feeds, the view it reads, and the operand value
/// (the load's result or its reshape), if the load may be streamed: a
/// weak tensor-view load of 8-, 16- or 32-bit elements whose tile (leading
/// dimensions of 1 aside) is one operand of an `mmaf` / `mmai` later in
/// the same block, with no op between them that writes memory or holds
/// regions.
fn streamable(m: &Module, load: OpId) -> Option<(OpId, PartitionInfo, ValueId)> {
    let o = &m.ops[load];
    if o.opcode != Opcode::LoadViewTko || !weak(m, load) {
        return None;
    }
    let p = partition(m, o.operand("view")?)?;
    if p.sparse_dim.is_some() || !matches!(p.elem.bits(), 8 | 16 | 32) {
        return None;
    }
    let mut v = *o.results.first()?;
    let mut user = only_user(m, v)?;
    if m.ops[user].opcode == Opcode::Reshape {
        v = *m.ops[user].results.first()?;
        user = only_user(m, v)?;
    }
    let mo = &m.ops[user];
    let (lhs, rhs) = (mo.operand("lhs")?, mo.operand("rhs")?);
    if !matches!(mo.opcode, Opcode::MmaF | Opcode::MmaI) || (lhs == v) == (rhs == v) {
        return None;
    }
    let (shape, _) = value_tile(m, v)?;
    let lead = p.tile_shape.len().checked_sub(shape.len())?;
    if p.tile_shape[lead..] != shape[..] || p.tile_shape[..lead].iter().any(|&d| d != 1) {
        return None;
    }
    // The load first, the product later in the same block, nothing that
    // writes memory between them.
    let block = crate::lower::analysis::chains::enclosing_block(m, load)?;
    let at = |x: OpId| block.ops.iter().position(|&y| y == x);
    let (from, to) = (at(load)?, at(user)?);
    if block.ops[from + 1..to].iter().any(|&x| {
        crate::lower::analysis::memory::writes(m.ops[x].opcode) || !m.ops[x].regions.is_empty()
    }) {
        return None;
    }
    Some((user, p, v))
}

/// The load defining operand `v` (through a reshape), if any.
pub fn loaded(m: &Module, v: ValueId) -> Option<OpId> {
    let mut d = def_op(m, v)?;
    if m.ops[d].opcode == Opcode::Reshape {
        d = def_op(m, *m.ops[d].operands.first()?)?;
    }
    Some(d)
}

/// How `load` is streamed, if it is `streamable` into a product on
/// `mma.sync` (whose B is not among the entry's `direct` copies), or on `wgmma`
/// with the other operand streamable too, where an operand is a load
/// `cp.async` cannot copy (not in aligned chunks) or the loop's pipeline
/// cannot hold two stages, and the accumulator and both operand tiles
/// would take more than `MAX_WORDS` (160) registers a thread.
pub fn stream(m: &Module, plan: &Plan, direct: &Directs, load: OpId) -> Option<Stream> {
    let (user, p, v) = streamable(m, load)?;
    let mo = &m.ops[user];
    let (lhs, rhs) = (mo.operand("lhs")?, mo.operand("rhs")?);
    match plan.engine(user)? {
        Engine::MmaSync(mp) => {
            if mp.kind == Kind::F64 || copies_b(direct, user) {
                return None;
            }
        }
        Engine::Wgmma(_) => {
            let other = if lhs == v { rhs } else { lhs };
            let (u, _, _) = streamable(m, loaded(m, other)?)?;
            if u != user {
                return None;
            }
        }
        Engine::Fma => return None,
    }
    // Only where `cp.async` cannot copy an operand (its pipelines and
    // direct copies take the others), or where the mma.sync pipeline
    // cannot hold two stages of whole tiles: whole operand tiles would
    // then pass through registers.
    let copyable = |v: ValueId| {
        loaded(m, v)
            .and_then(|d| streamable(m, d))
            .is_some_and(|(_, p, _)| {
                chunk_along(plan, &p, p.tile_shape.len() - 1, &[16, 8, 4]).is_some()
            })
    };
    let unstaged = matches!(plan.engine(user)?, Engine::MmaSync(_))
        && crate::lower::analysis::chains::enclosing_for(m, load)
            .is_some_and(|f| too_large_to_stage(m, plan, f));
    if copyable(lhs) && copyable(rhs) && !unstaged {
        return None;
    }
    // Register pressure of the product done whole.
    let words = |v: ValueId| {
        value_tile(m, v).map_or(0, |(s, e)| {
            s.iter().product::<i64>() * i64::from(e.bits().max(8) / 8) / 4
        })
    };
    let threads = i64::from(plan.warps) * 32;
    let total = words(lhs) + words(rhs) + words(*mo.results.first()?);
    let lead = p.tile_shape.len() - value_tile(m, v)?.0.len();
    (total / threads > MAX_WORDS).then_some(Stream {
        product: user,
        view: p,
        lead,
    })
}
