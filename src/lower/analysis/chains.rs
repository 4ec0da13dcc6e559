//! Chained matrix multiplies: a product whose result, transformed
//! elementwise, becomes the A operand of another product in the same block
//! (attention's `S = Q·Kᵀ`, `P = exp2(S - m)`, `O += P·V`).
//!
//! Both multiplies of a chain give each warp whole rows of the tile
//! ([`crate::lower::plan::layout::mma_sync::WarpGrid::rows`]): the row
//! statistics between them are then warp shuffles, never a shared-memory
//! exchange, and the first product's accumulator registers are already the
//! second product's A fragments (m16n8k16: the C fragments of two adjacent
//! n8 tiles are one A fragment of k16), so P never leaves the registers.
//!
//! A chain with half as many m16 row tiles as the warps its registers need
//! (decode attention: 64 rows, S of 64 x 256 and O of 64 x 128 in f32 are
//! 192 registers a thread over four warps) is split over warp pairs
//! ([`split`]): both warps of a pair own the same rows, each computes half
//! of S's columns, and multiplies its half of P by the matching half of
//! V's rows into a partial O that the loop carries. The row statistics
//! then cross the pair through shared memory (`reduce` does that for any
//! layout), and the pair's partial accumulators are summed once, after the
//! loop ([`crate::lower::emit::ops::mma_split_sum`]), or after the next split loop where they
//! start it (ragged attention's masked last tiles).
use rustc_hash::FxHashSet as HashSet;

use crate::ir::{Block, Module, OpId, Opcode, Scalar, ValueId};
use crate::lower::analysis::values::{constant_bits, value_tile, Elem};
use crate::lower::analysis::view::def_op;

/// Whether `opcode` is a matrix multiply the engines compute.
pub fn is_mma(opcode: Opcode) -> bool {
    matches!(opcode, Opcode::MmaF | Opcode::MmaI | Opcode::MmaFScaled)
}

/// Whether the matrix multiply `id` is part of a chain: its `lhs` is
/// computed from another product's result, or its result feeds another
/// product's `lhs`, through ops that keep the tile's shape.
pub fn chained(m: &Module, id: OpId) -> bool {
    let Some(block) = enclosing_block(m, id) else {
        return false;
    };
    let mmas = block_mmas(m, block);
    if mmas.len() < 2 {
        return false;
    }
    let lhs = |o: OpId| m.ops[o].operand("lhs");
    let from = |o: OpId| derived(m, block, o);
    // Its lhs comes from another product.
    if let Some(a) = lhs(id) {
        if mmas.iter().any(|&o| o != id && from(o).contains(&a)) {
            return true;
        }
    }
    // Its result becomes another product's lhs.
    let mine = from(id);
    mmas.iter()
        .any(|&o| o != id && lhs(o).is_some_and(|a| mine.contains(&a)))
}

/// The values of `block` computed from the result of product `id` by ops
/// whose result has the product's shape (the result itself included).
fn derived(m: &Module, block: &Block, id: OpId) -> HashSet<ValueId> {
    let mut set = HashSet::default();
    let Some(&res) = m.ops[id].results.first() else {
        return set;
    };
    let Some((shape, _)) = value_tile(m, res) else {
        return set;
    };
    set.insert(res);
    let start = block.ops.iter().position(|&o| o == id).unwrap_or(0);
    for &o in &block.ops[start + 1..] {
        let op = &m.ops[o];
        if is_mma(op.opcode)
            || !op.regions.is_empty()
            || matches!(op.opcode, Opcode::Reduce | Opcode::Scan)
            || !op.operands.iter().any(|v| set.contains(v))
        {
            continue;
        }
        for &r in &op.results {
            if value_tile(m, r).is_some_and(|(s, _)| s == shape) {
                set.insert(r);
            }
        }
    }
    set
}

/// A product's part in a chain split over warp pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// The first product (`S = Q·Kᵀ`): the warps of a pair take half of
    /// its columns each.
    Columns,
    /// The second product (`O = P·V + O`): each warp of a pair multiplies
    /// the half of K its P holds, into a partial accumulator.
    K,
}

/// A chain in a `for` body that [`split`] splits.
struct SplitChain {
    first: OpId,
    second: OpId,
    /// Rows of both products.
    rows: i64,
    /// The loop-carried value the second product accumulates.
    slot: usize,
    /// Whether that value starts at zero.
    zero_init: bool,
}

/// Accumulator registers a thread above which a chain is split over warp
/// pairs (with one warp per m16 row tile).
const SPLIT_REGS: i64 = 160;

/// The part product `id` takes in a chain split over warp pairs, if its
/// loop's chain is split: two `mmaf` of f16 or bf16 into f32 in
/// one `for` body, the second's A computed from the first's result; both
/// of `M` rows, with `2 M / 16` warps at most eight, and accumulators of
/// more than [`SPLIT_REGS`] registers a thread over `M / 16` warps. The
/// second product's accumulator must be loop-carried and be used in the
/// body only scaled by a broadcast row value, as its own accumulator and by
/// `continue`: halves summed after the loop are then the whole (the second
/// warp of each pair starts from zero).
pub fn split(m: &Module, id: OpId) -> Option<Split> {
    let c = split_chain(m, enclosing_for(m, id)?)?;
    if id == c.first {
        Some(Split::Columns)
    } else if id == c.second {
        Some(Split::K)
    } else {
        None
    }
}

/// The warps a split chain's products want: two per m16 row tile.
pub fn split_warps(m: &Module, id: OpId) -> Option<u32> {
    let c = split_chain(m, enclosing_for(m, id)?)?;
    u32::try_from(2 * c.rows / 16).ok()
}

/// The loop-carried partial accumulators of a split chain's `for` op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitResult {
    /// The loop-carried value (and result) they are.
    pub slot: usize,
    /// Whether the second warp of each pair zeroes its copy of the initial
    /// value first: unless that is zero, or another split loop's partial
    /// accumulators handed over.
    pub zero_second_half: bool,
    /// Whether the pairs sum them after the loop: unless they are handed
    /// over to the next split loop (attention's masked second loop) as
    /// its initial value.
    pub sum_after: bool,
}

/// The partial accumulators of `for` op `for_id`, when its chain is split
/// in an entry of `warps` warps.
pub fn split_result(m: &Module, for_id: OpId, warps: u32) -> Option<SplitResult> {
    let c = split_chain(m, for_id)?;
    if i64::from(warps) != 2 * c.rows / 16 {
        return None;
    }
    let init = *m.ops[for_id].operand_group("initValues").get(c.slot)?;
    let handed_in = def_op(m, init).is_some_and(|d| handed_over(m, d));
    Some(SplitResult {
        slot: c.slot,
        zero_second_half: !c.zero_init && !handed_in,
        sum_after: !handed_over(m, for_id),
    })
}

/// Whether the partial accumulators of split `for` op `for_id` go, as its
/// only use, to another split loop as the initial value of its partial
/// accumulators (of as many rows).
fn handed_over(m: &Module, for_id: OpId) -> bool {
    let Some(c) = split_chain(m, for_id) else {
        return false;
    };
    let Some(&res) = m.ops[for_id].results.get(c.slot) else {
        return false;
    };
    let Some(block) = enclosing_block(m, for_id) else {
        return false;
    };
    let [next] = uses(m, &block.ops, res)[..] else {
        return false;
    };
    let op = &m.ops[next];
    op.opcode == Opcode::For
        && split_chain(m, next).is_some_and(|n| {
            n.rows == c.rows && op.operand_group("initValues").get(n.slot) == Some(&res)
        })
}

/// The `for` op whose body holds `id`.
pub fn enclosing_for(m: &Module, id: OpId) -> Option<OpId> {
    let (Some(o), _) = enclosing(m, id)? else {
        return None;
    };
    (m.ops[o].opcode == Opcode::For).then_some(o)
}

/// The chain of `for` op `for_id` split over warp pairs (see [`split`]).
fn split_chain(m: &Module, for_id: OpId) -> Option<SplitChain> {
    let op = &m.ops[for_id];
    let block = op.regions.first()?.blocks.first()?;
    let mmas = block_mmas(m, block);
    let [p1, p2] = mmas[..] else {
        return None;
    };
    let lhs2 = m.ops[p2].operand("lhs")?;
    if !derived(m, block, p1).contains(&lhs2) {
        return None;
    }
    // Two f16/bf16 products into f32 of as many rows, [M, N] each.
    let shape = |p: OpId| -> Option<[i64; 2]> {
        let o = &m.ops[p];
        let half = |name: &str| {
            matches!(
                o.operand(name).and_then(|v| value_tile(m, v)),
                Some((_, Elem::Num(Scalar::F16 | Scalar::BF16)))
            )
        };
        match value_tile(m, *o.results.first()?)? {
            (s, Elem::Num(Scalar::F32))
                if o.opcode == Opcode::MmaF && half("lhs") && half("rhs") && s.len() == 2 =>
            {
                Some([s[0], s[1]])
            }
            _ => None,
        }
    };
    let ([rows, n1], [rows2, n2]) = (shape(p1)?, shape(p2)?);
    let tiles = rows / 16;
    if rows != rows2
        || rows % 16 != 0
        || n1 % 32 != 0
        || n2 % 32 != 0
        || tiles < 2
        || 2 * tiles > 8
        || rows * (n1 + n2) / (32 * tiles) <= SPLIT_REGS
    {
        return None;
    }
    // The second product's accumulator: a loop-carried value, perhaps
    // scaled by a broadcast row value first.
    let acc = m.ops[p2].operand("acc")?;
    let row_value = |v: ValueId| {
        def_op(m, v).is_some_and(|b| {
            let bo = &m.ops[b];
            bo.opcode == Opcode::Broadcast
                && bo
                    .operands
                    .first()
                    .and_then(|&s| value_tile(m, s))
                    .is_some_and(|(s, _)| s.last() == Some(&1))
        })
    };
    let (arg, scale) = match def_op(m, acc) {
        None => (acc, None),
        Some(d) => {
            let mo = &m.ops[d];
            let [x, y] = mo.operands[..] else {
                return None;
            };
            let (arg, by) = if row_value(y) { (x, y) } else { (y, x) };
            if mo.opcode != Opcode::MulF || !row_value(by) {
                return None;
            }
            (arg, Some(d))
        }
    };
    let slot = block.args.iter().position(|&a| a == arg)?.checked_sub(1)?;
    let res2 = *m.ops[p2].results.first()?;
    let term = *block.ops.last()?;
    let continues = &m.ops[term];
    if continues.opcode != Opcode::Continue
        || continues.operands.get(slot) != Some(&res2)
        || uses(m, &block.ops, arg) != [scale.unwrap_or(p2)]
        || (scale.is_some() && uses(m, &block.ops, acc) != [p2])
        || uses(m, &block.ops, res2) != [term]
        || exits_early(m, &block.ops[..block.ops.len() - 1])
    {
        return None;
    }
    let init = *op.operand_group("initValues").get(slot)?;
    let zero_init = def_op(m, init).is_some_and(|d| {
        m.ops[d].opcode == Opcode::Constant
            && constant_bits(m, &m.ops[d]).is_some_and(|b| b.iter().all(|&x| x == 0))
    });
    Some(SplitChain {
        first: p1,
        second: p2,
        rows,
        slot,
        zero_init,
    })
}

/// Whether a `continue` or `break` lies among `ops` or in their regions
/// (one that leaves an iteration early could carry another value).
fn exits_early(m: &Module, ops: &[OpId]) -> bool {
    ops.iter().any(|&o| {
        let op = &m.ops[o];
        matches!(op.opcode, Opcode::Continue | Opcode::Break)
            || op
                .regions
                .iter()
                .flat_map(|r| &r.blocks)
                .any(|b| exits_early(m, &b.ops))
    })
}

/// The ops among `ops` and their regions that use `v`, once per use.
fn uses(m: &Module, ops: &[OpId], v: ValueId) -> Vec<OpId> {
    let mut out = Vec::new();
    for &o in ops {
        let op = &m.ops[o];
        out.extend(op.operands.iter().filter(|&&x| x == v).map(|_| o));
        for b in op.regions.iter().flat_map(|r| &r.blocks) {
            out.extend(uses(m, &b.ops, v));
        }
    }
    out
}

/// The matrix multiplies of `block`'s own op list.
fn block_mmas(m: &Module, block: &Block) -> Vec<OpId> {
    block
        .ops
        .iter()
        .copied()
        .filter(|&o| is_mma(m.ops[o].opcode))
        .collect()
}

/// The block whose op list holds `id`.
pub fn enclosing_block(m: &Module, id: OpId) -> Option<&Block> {
    enclosing(m, id).map(|(_, b)| b)
}

/// The block whose op list holds `id`, and the op whose region it is (none
/// for the entry body).
fn enclosing(m: &Module, id: OpId) -> Option<(Option<OpId>, &Block)> {
    if m.body.ops.contains(&id) {
        return Some((None, &m.body));
    }
    m.ops.iter().find_map(|(o, op)| {
        op.regions
            .iter()
            .flat_map(|r| &r.blocks)
            .find(|b| b.ops.contains(&id))
            .map(|b| (Some(o), b))
    })
}
