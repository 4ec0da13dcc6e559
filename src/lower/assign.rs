//! Layout assignment: gives every tile value a distributed layout.
//!
//! Stores anchor the choice (a blocked layout, vectorized when the view
//! proves it safe); walking the body backwards, each op passes the layout
//! demanded of its result on to its operands (elementwise ops unchanged,
//! `broadcast` collapses the broadcast dimensions, `reshape` reinterprets
//! the coordinates). Values nobody constrains get the default blocked layout.
use std::collections::HashMap;
use std::rc::Rc;

use super::facts::Fact;
use super::layout::{Blocked, LinearLayout};
use super::values::value_tile;
use super::view::partition;
use crate::ir::{Module, OpId, Opcode, ValueId};

/// Layouts per tile value.
pub type Layouts = HashMap<ValueId, Rc<LinearLayout>>;

/// The default blocked layout of `shape` for `warps` warps with `vec`
/// contiguous elements per thread.
pub fn default_layout(shape: &[i64], warps: u32, vec: i64) -> Rc<LinearLayout> {
    Rc::new(Blocked::default_for(shape, i64::from(warps), vec).to_linear(shape))
}

/// Assigns layouts to the tile values of the entry body `ops`.
pub fn assign(
    m: &Module,
    ops: &[OpId],
    facts: &HashMap<ValueId, Fact>,
    warps: u32,
    max_bytes: u32,
) -> Layouts {
    let mut out: Layouts = HashMap::new();
    let demand = |out: &mut Layouts, v: ValueId, l: Rc<LinearLayout>| {
        out.entry(v).or_insert(l);
    };
    for &id in ops.iter().rev() {
        let op = &m.ops[id];
        // Results nobody demanded get the default layout.
        for &r in &op.results {
            if let Some((shape, _)) = value_tile(m, r) {
                out.entry(r)
                    .or_insert_with(|| default_layout(&shape, warps, 1));
            }
        }
        let result_layout = op.results.first().and_then(|r| out.get(r)).cloned();
        match op.opcode {
            Opcode::StoreViewTko => {
                if let (Some(t), Some(v)) = (op.operand("tile"), op.operand("view")) {
                    if let (Some((shape, _)), Some(p)) = (value_tile(m, t), partition(m, v)) {
                        let vec = p.vector_width(facts, max_bytes);
                        demand(&mut out, t, default_layout(&shape, warps, vec));
                    }
                }
            }
            Opcode::Broadcast => {
                if let (Some(src), Some(l)) = (op.operands.first(), result_layout) {
                    if let Some((shape, _)) = value_tile(m, *src) {
                        let mut c = (*l).clone();
                        for (d, &s) in shape.iter().enumerate() {
                            if s == 1 && l.shape.get(d).is_some_and(|&r| r != 1) {
                                c = c.collapse(d);
                            }
                        }
                        demand(&mut out, *src, Rc::new(c));
                    }
                }
            }
            Opcode::Reshape => {
                if let (Some(src), Some(l)) = (op.operands.first(), result_layout) {
                    if let Some((shape, _)) = value_tile(m, *src) {
                        demand(&mut out, *src, Rc::new(l.reshape(&shape)));
                    }
                }
            }
            Opcode::LoadViewTko
            | Opcode::MakeTensorView
            | Opcode::MakePartitionView
            | Opcode::Return => {}
            _ => {
                // Elementwise: operands of the result's shape share its layout.
                if let Some(l) = result_layout {
                    for &o in &op.operands {
                        if value_tile(m, o).is_some_and(|(s, _)| s == l.shape && !s.is_empty()) {
                            demand(&mut out, o, l.clone());
                        }
                    }
                }
            }
        }
    }
    out
}
