//! The buffer of a reduction whose reduced dimension spans warps: each
//! warp group's partial results, one region an operand (8-byte aligned),
//! a slot of at least 4 bytes for each result element and warp group.
use crate::ir::{Module, OpId};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::plan::Plan;

use crate::lower::plan::conversions::along_dim;

use super::{OpBuffer, What};

/// The bytes of a partial result's slot: at least 4.
pub fn slot_size(e: Elem) -> i64 {
    i64::from(e.bits().max(32) / 8)
}

/// The buffers of reduction `id`: its operands reduced in the first one's
/// layout, whose warps along the reduced dimension make the groups.
pub fn buffers(m: &Module, id: OpId, plan: &Plan) -> Option<Vec<OpBuffer>> {
    let op = &m.ops[id];
    let (layout, dim) = along_dim(m, id, |v| plan.held(v).cloned())?;
    let groups = layout.warp.iter().filter(|b| b[dim] != 0).count();
    if groups == 0 {
        return Some(Vec::new());
    }
    let sliced = layout.slice(dim);
    let slots = sliced.shape.iter().product::<i64>() << groups;
    let elems = op
        .operands
        .iter()
        .map(|&v| value_tile(m, v).map(|(_, e)| e))
        .collect::<Option<Vec<_>>>()?;
    let (_, bytes) = partial_regions(&elems, slots);
    Some(vec![OpBuffer {
        op: id,
        what: What::Partials,
        bytes,
        align: 8,
    }])
}

/// The regions of a reduction's partial results, one an operand of
/// `elems`, `slots` slots each, 8-byte aligned in one buffer: their starts
/// and the buffer's bytes.
pub fn partial_regions(elems: &[Elem], slots: i64) -> (Vec<i64>, i64) {
    let mut regions = Vec::with_capacity(elems.len());
    let mut end = 0;
    for &e in elems {
        let start = (end + 7) & !7;
        regions.push(start);
        end = start + slots * slot_size(e);
    }
    (regions, end)
}
