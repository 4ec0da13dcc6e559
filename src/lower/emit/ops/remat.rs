//! Cheap tiles recomputed in the layout a consumer wants instead of moved
//! between threads through shared memory: index and pointer tiles built
//! from iota, constants, broadcasts, reshapes, offsets and integer
//! arithmetic. Moving a 128x128 pointer tile would take 128 KiB of shared
//! memory and two barriers; recomputing it takes a few integer
//! instructions a register.
use std::rc::Rc;

use crate::ir::ValueId;
use crate::lower::emit::context::{Lowered, Lowerer, Tile};
use crate::lower::plan::conversions::recompute::{recomputes, MAX_DEPTH};
use crate::lower::plan::layout::LinearLayout;

/// How many values are being recomputed in another layout, one inside
/// the other.
#[derive(Default)]
struct Depth(u32);

/// `v` computed again in `layout`, if its defining op is cheap (and so,
/// through [`Lowerer::tile_in`], each of its operands it needs moved);
/// `None` when it is not, or recomputing fails (the caller then moves it).
/// The value keeps its own layout and registers for its other uses.
pub fn rematerialize(l: &mut Lowerer, v: ValueId, layout: &Rc<LinearLayout>) -> Option<Tile> {
    let op = recomputes(l.m, v)?;
    if l.states.get::<Depth>().0 >= MAX_DEPTH {
        return None;
    }
    let saved_layout = l.layout_overrides.insert(v, layout.clone());
    let saved_value = l.vals.remove(&v);
    l.states.get::<Depth>().0 += 1;
    let done = l.lower_op(op);
    l.states.get::<Depth>().0 -= 1;
    let fresh = l.vals.remove(&v);
    match saved_layout {
        Some(s) => l.layout_overrides.insert(v, s),
        None => l.layout_overrides.remove(&v),
    };
    if let Some(s) = saved_value {
        l.vals.insert(v, s);
    }
    match (done, fresh) {
        (Ok(()), Some(Lowered::Tile(t))) if t.layout == *layout => Some(t),
        _ => None,
    }
}
