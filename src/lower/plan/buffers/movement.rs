//! The buffer of a movement op (`permute`, `cat`, `extract`, `insert`,
//! `pack`, `unpack`): the tile it writes to shared memory and reads back
//! rearranged; none where `extract` takes one element every warp holds by
//! a shuffle.
use crate::ir::{Module, OpId, Opcode};
use crate::lower::analysis::values::{const_int, value_tile};
use crate::lower::plan::layout::shuffle;
use crate::lower::plan::Plan;
use crate::ptx::RegClass;

use crate::lower::plan::engines::tile_bytes;

use super::{OpBuffer, What};

/// The buffers of movement op `id`, where its operands are tiles.
pub fn buffers(m: &Module, id: OpId, plan: &Plan) -> Option<Vec<OpBuffer>> {
    let op = &m.ops[id];
    let (rshape, elem) = value_tile(m, *op.results.first()?)?;
    let src = *op.operands.first()?;
    let (sshape, selem) = value_tile(m, src)?;
    let (shape, elem) = match op.opcode {
        Opcode::Cat | Opcode::Insert => (rshape, elem),
        Opcode::Pack | Opcode::Unpack => (sshape, selem),
        Opcode::Extract if by_shuffle(m, id, plan, &rshape) => return Some(Vec::new()),
        _ => (sshape, elem),
    };
    Some(vec![OpBuffer {
        op: id,
        what: What::Tile,
        bytes: tile_bytes(&shape, elem),
        align: 16,
    }])
}

/// Whether `extract` op `id` (its result of `rshape`) takes its one
/// element, at constant indices, by a shuffle: every warp holds its
/// source, of 32- or 64-bit elements.
fn by_shuffle(m: &Module, id: OpId, plan: &Plan, rshape: &[i64]) -> bool {
    let op = &m.ops[id];
    if !rshape.iter().all(|&n| n == 1) {
        return false;
    }
    let at: Option<Vec<i64>> = op
        .operand_group("indices")
        .iter()
        .map(|&v| const_int(m, v))
        .collect();
    let src = op.operands.first().copied();
    let layout = src.and_then(|v| plan.held(v));
    let words = src.and_then(|v| value_tile(m, v)).is_some_and(|(_, e)| {
        matches!(RegClass::for_bits(e.bits()), RegClass::B32 | RegClass::B64)
    });
    match (at, layout) {
        (Some(at), Some(layout)) => words && shuffle::element(layout, &at).is_some(),
        _ => false,
    }
}
