//! A gather's or scatter's indices: the index tile of its sparse
//! dimension, wanted in the access's layout sliced to that dimension, so
//! that each thread holds the indices of the rows it reads or writes.
use std::rc::Rc;

use crate::ir::{Module, OpId, Opcode, ValueId};
use crate::lower::analysis::view::partition;
use crate::lower::plan::layout::LinearLayout;
use crate::lower::plan::Plan;

use super::Want;

/// The layout an index tile is wanted in: the access's `layout` sliced to
/// its sparse dimension `sd`.
pub fn index_layout(layout: &LinearLayout, sd: usize) -> LinearLayout {
    let mut sliced = layout.clone();
    for d in (0..layout.shape.len()).rev() {
        if d != sd {
            sliced = sliced.slice(d);
        }
    }
    sliced
}

/// The index operand of `load_view_tko` or `store_view_tko` op `id`
/// through a gather view, from the layout it is held in (`layout` gives a
/// value's) to the one it is wanted in: a load reads in its result's
/// layout (a gather reads no rows whole), a store writes its tile as held.
/// `None` for other accesses, and for 4-bit elements.
pub fn wants(
    m: &Module,
    id: OpId,
    plan: &Plan,
    layout: impl Fn(ValueId) -> Option<Rc<LinearLayout>>,
) -> Option<Want> {
    let op = &m.ops[id];
    let p = partition(m, op.operand("view")?)?;
    let sd = p.sparse_dim?;
    if p.elem.bits() == 4 {
        return None;
    }
    let index = *op.operand_group("index").get(sd)?;
    let access = match op.opcode {
        Opcode::LoadViewTko => plan.layouts.get(op.results.first()?)?.clone(),
        Opcode::StoreViewTko => layout(op.operand("tile")?)?,
        _ => return None,
    };
    let to = Rc::new(index_layout(&access, sd));
    Some((index, layout(index)?, to))
}
