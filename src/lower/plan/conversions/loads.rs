//! The conversion of a tile loaded from a view: where the users' layout
//! would have each lane read its own row, the load reads whole rows
//! ([`crate::lower::plan::layout::coalesced::load_layout`]) and moves the
//! tile into the users' layout after, by shuffles or through shared memory,
//! where shared memory has room for the move when the load is emitted
//! (else it reads in the users' layout as it is).
use std::rc::Rc;

use crate::ir::{Module, OpId};
use crate::lower::analysis::view::partition;
use crate::lower::plan::layout::coalesced::load_layout;
use crate::lower::plan::Plan;

use super::{by_shuffles, Conversion, How};

/// The conversion of the result of `load_view_tko` op `id`, where the
/// plan covers the op: `Some(None)` where it reads in its users' layout,
/// `None` where the plan leaves the load to its product's copy, or the
/// load is of 4-bit elements or through a gather view.
pub fn load_view(m: &Module, id: OpId, plan: &Plan) -> Option<Option<Conversion>> {
    if super::held_by_copy(plan, id) {
        return None;
    }
    from_rows(m, id, plan)
}

/// [`load_view`], for a load the plan leaves to its product's copy too
/// (which, where the copy fits nowhere, reads through registers as any
/// other load).
pub fn from_rows(m: &Module, id: OpId, plan: &Plan) -> Option<Option<Conversion>> {
    let op = &m.ops[id];
    let (view, res) = (op.operand("view")?, *op.results.first()?);
    let p = partition(m, view)?;
    if p.elem.bits() == 4 || p.sparse_dim.is_some() {
        return None;
    }
    let wanted = plan.layouts.get(&res)?;
    let Some(from) = load_layout(&p, wanted, plan.warps).filter(|f| f != wanted) else {
        return Some(None);
    };
    let how = if by_shuffles(p.elem, &from, wanted) {
        How::Shuffle
    } else {
        How::Shared {
            bytes: crate::lower::plan::engines::tile_bytes(&p.tile_shape, p.elem),
        }
    };
    Some(Some(Conversion {
        op: id,
        value: res,
        from,
        to: Rc::clone(wanted),
        how,
        where_room: true,
    }))
}
