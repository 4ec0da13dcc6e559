//! Chained matrix multiplies: a product whose result, transformed
//! elementwise, becomes the A operand of another product in the same block
//! (attention's `S = Q·Kᵀ`, `P = exp2(S - m)`, `O += P·V`).
//!
//! Both multiplies of a chain give each warp whole rows of the tile
//! ([`crate::lower::layout::mma_sync::WarpGrid::rows`]): the row
//! statistics between them are then warp shuffles, never a shared-memory
//! exchange, and the first product's accumulator registers are already the
//! second product's A fragments (m16n8k16: the C fragments of two adjacent
//! n8 tiles are one A fragment of k16), so P never leaves the registers.
use rustc_hash::FxHashSet as HashSet;

use crate::ir::{Block, Module, OpId, Opcode, ValueId};
use crate::lower::values::value_tile;

use super::mma::is_mma;

/// Whether the matrix multiply `id` is part of a chain: its `lhs` is
/// computed from another product's result, or its result feeds another
/// product's `lhs`, through ops that keep the tile's shape.
pub fn chained(m: &Module, id: OpId) -> bool {
    let Some(block) = enclosing_block(m, id) else {
        return false;
    };
    let mmas: Vec<OpId> = block
        .ops
        .iter()
        .copied()
        .filter(|&o| is_mma(m.ops[o].opcode))
        .collect();
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

/// The block whose op list holds `id`.
pub(super) fn enclosing_block(m: &Module, id: OpId) -> Option<&Block> {
    if m.body.ops.contains(&id) {
        return Some(&m.body);
    }
    m.ops.iter().find_map(|(_, op)| {
        op.regions
            .iter()
            .flat_map(|r| &r.blocks)
            .find(|b| b.ops.contains(&id))
    })
}
