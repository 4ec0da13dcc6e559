//! What recomputing a value in another layout converts: its defining op
//! lowered again with its result in that layout wants its operands in
//! layouts of their own, each moved as any conversion is (permuted,
//! recomputed in turn, by shuffles, or through shared memory).
use std::rc::Rc;

use crate::ir::{Module, OpId, Opcode, ValueDef, ValueId};
use crate::lower::analysis::values::value_tile;
use crate::lower::plan::layout::LinearLayout;

use super::{cheap, source_layout, to_result_layout};

/// How deep recomputation reaches through the ops defining a value.
pub const MAX_DEPTH: u32 = 8;

/// The op that recomputes `v` (its defining op, where that is cheap and
/// has one result), if `v` can be recomputed.
pub fn recomputes(m: &Module, v: ValueId) -> Option<OpId> {
    let ValueDef::Result { op, .. } = m.values.try_get(v)?.def else {
        return None;
    };
    let def = &m.ops[op];
    (def.results.len() == 1 && cheap(def.opcode)).then_some(op)
}

/// The operands op `id` (cheap, [`recomputes`]) wants, and in what
/// layouts, when its result is in `to`: an elementwise op's in `to`, a
/// reshape's or broadcast's in the layout `to` is made from, none for
/// iota and constants.
pub fn operand_layouts(
    m: &Module,
    id: OpId,
    to: &Rc<LinearLayout>,
) -> Vec<(ValueId, Rc<LinearLayout>)> {
    let op = &m.ops[id];
    match op.opcode {
        Opcode::Reshape | Opcode::Broadcast => {
            let Some(&src) = op.operands.first() else {
                return Vec::new();
            };
            let Some((shape, _)) = value_tile(m, src) else {
                return Vec::new();
            };
            vec![(src, Rc::new(source_layout(op.opcode, to, &shape)))]
        }
        o if to_result_layout(o) => op
            .operands
            .iter()
            .filter(|&&v| value_tile(m, v).is_some_and(|(s, _)| !s.is_empty()))
            .map(|&v| (v, to.clone()))
            .collect(),
        _ => Vec::new(),
    }
}
