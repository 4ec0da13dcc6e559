//! Forward spreading of matrix-multiply accumulator layouts through the
//! bodies of loops that multiply.
//!
//! Inside such a loop, the values computed from an accumulator (scaled,
//! masked, exponentiated, reduced along a row, ...) keep the accumulator's
//! distribution: elementwise results take their operand's layout,
//! reductions the operand's layout sliced, reshapes the same map seen
//! through the new shape. Row statistics then come straight out of the
//! accumulator registers (in-thread folds and shuffles), the softmax of
//! an attention kernel needs no shared-memory round trip per step, and the
//! loop-carried vectors stay in the few registers that slice needs.
use std::rc::Rc;

use crate::ir::{Attr, Module, OpId, Opcode};
use crate::lower::analysis::values::value_tile;
use crate::lower::plan::assign::Layouts;
use crate::lower::plan::layout::LinearLayout;

/// The ops of the bodies of loops (`for`, `loop`) whose body holds a
/// matrix multiply at its top level, in program order.
pub fn multiplying_loop_bodies(m: &Module, all: &[OpId]) -> Vec<Vec<OpId>> {
    let mut out = Vec::new();
    for &id in all {
        let op = &m.ops[id];
        if !matches!(op.opcode, Opcode::For | Opcode::Loop) {
            continue;
        }
        for r in &op.regions {
            for b in &r.blocks {
                if b.ops
                    .iter()
                    .any(|&o| crate::lower::analysis::chains::is_mma(m.ops[o].opcode))
                {
                    out.push(b.ops.clone());
                }
            }
        }
    }
    out
}

/// Gives the results of `body`'s ops a layout derived from an operand's
/// layout where they have none yet; whether anything changed.
pub fn spread(m: &Module, body: &[OpId], out: &mut Layouts) -> bool {
    let mut changed = false;
    for &id in body {
        let op = &m.ops[id];
        let Some(&res) = op.results.first() else {
            continue;
        };
        if op.results.len() != 1 || out.contains_key(&res) {
            continue;
        }
        let Some((shape, _)) = value_tile(m, res) else {
            continue;
        };
        if shape.is_empty() {
            continue;
        }
        let derived = match op.opcode {
            Opcode::Reduce => match (op.attr("dim"), op.operands.first()) {
                (Some(Attr::Int(d)), Some(src)) => out
                    .get(src)
                    .filter(|l| (*d as usize) < l.shape.len())
                    .map(|l| l.slice(*d as usize)),
                _ => None,
            },
            Opcode::Reshape => op
                .operands
                .first()
                .and_then(|src| out.get(src))
                .map(|l| l.reshape(&shape)),
            o if elementwise(o) => op
                .operands
                .iter()
                .filter_map(|v| out.get(v))
                .find(|l| l.shape == shape)
                .map(|l| (**l).clone()),
            _ => None,
        };
        if let Some(l) = derived.filter(|l: &LinearLayout| l.shape == shape) {
            out.insert(res, Rc::new(l));
            changed = true;
        }
    }
    changed
}

/// Whether `opcode` computes each result element from the operand
/// elements at the same coordinates.
fn elementwise(opcode: Opcode) -> bool {
    !matches!(
        opcode,
        Opcode::Reduce
            | Opcode::Scan
            | Opcode::Reshape
            | Opcode::Broadcast
            | Opcode::Permute
            | Opcode::Cat
            | Opcode::Extract
            | Opcode::Insert
            | Opcode::Pack
            | Opcode::Unpack
            | Opcode::Constant
            | Opcode::Iota
            | Opcode::MmaF
            | Opcode::MmaI
            | Opcode::MmaFScaled
            | Opcode::LoadViewTko
            | Opcode::StoreViewTko
            | Opcode::LoadPtrTko
            | Opcode::StorePtrTko
            | Opcode::AtomicRMWTko
            | Opcode::AtomicCASTko
            | Opcode::AtomicRedViewTko
            | Opcode::For
            | Opcode::Loop
            | Opcode::If
            | Opcode::Yield
            | Opcode::Continue
            | Opcode::Break
            | Opcode::Return
            | Opcode::Alloca
            | Opcode::GetGlobal
            | Opcode::GetTileBlockId
            | Opcode::GetNumTileBlocks
            | Opcode::GetIndexSpaceShape
            | Opcode::GetTensorShape
            | Opcode::MakeTensorView
            | Opcode::MakePartitionView
            | Opcode::PrintTko
            | Opcode::Assert
    )
}
