//! Region structure: region and block counts, terminators, and where
//! module-level ops may appear.
//!
//! Rules: `entry`, `for`, `loop`, `reduce`, `scan` have one region and `if`
//! two (its else region may be empty), other ops none; regions hold one
//! block; blocks of `entry` end in `return`, of `for` in `continue`, of `loop`
//! in `continue`, `break` or `return`, of `if` in `yield`, `break`,
//! `continue` or `return`, of `reduce`/`scan` in `yield`; terminators are last in their
//! block and sit directly in a parent their kind allows; `entry` and
//! `global` appear only at module level, and only they do, each with a
//! distinct symbol name.
use super::{op_err, Check, Tree};
use crate::ir::{Module, OpId, Opcode};

/// The number of regions an op of this kind has.
fn region_count(op: Opcode) -> usize {
    match op {
        Opcode::Entry | Opcode::For | Opcode::Loop | Opcode::Reduce | Opcode::Scan => 1,
        Opcode::If => 2,
        _ => 0,
    }
}

/// Whether `op` is a terminator.
pub(crate) fn is_terminator(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Return | Opcode::Yield | Opcode::Break | Opcode::Continue
    )
}

/// The parents a terminator may sit in directly, in NVIDIA's order.
fn allowed_parents(term: Opcode) -> &'static [Opcode] {
    match term {
        Opcode::Return => &[Opcode::Entry, Opcode::If, Opcode::Loop],
        Opcode::Yield => &[Opcode::If, Opcode::Reduce, Opcode::Scan],
        Opcode::Break => &[Opcode::If, Opcode::Loop],
        Opcode::Continue => &[Opcode::For, Opcode::If, Opcode::Loop],
        _ => &[],
    }
}

/// The terminators that may end a block of `parent`; the first is the one
/// NVIDIA names when another op is found.
fn allowed_terminators(parent: Opcode) -> &'static [Opcode] {
    match parent {
        Opcode::Entry => &[Opcode::Return],
        Opcode::For => &[Opcode::Continue],
        Opcode::Loop => &[Opcode::Continue, Opcode::Break, Opcode::Return],
        Opcode::If => &[
            Opcode::Yield,
            Opcode::Break,
            Opcode::Continue,
            Opcode::Return,
        ],
        Opcode::Reduce | Opcode::Scan => &[Opcode::Yield],
        _ => &[],
    }
}

fn full(op: Opcode) -> String {
    format!("cuda_tile.{}", op.mnemonic())
}

fn symbol_name(op: &crate::ir::Op) -> Option<&str> {
    match op.attr("sym_name") {
        Some(crate::ir::Attr::String(s)) => Some(s),
        _ => None,
    }
}

/// Checks the region rules for one op.
pub(crate) fn check_op(m: &Module, tree: &Tree, id: OpId) -> Check {
    let op = &m.ops[id];
    let parent = tree.parent(id);
    let top_level_kind = matches!(op.opcode, Opcode::Entry | Opcode::Global);
    match (parent, top_level_kind) {
        (None, false) => {
            return Err(super::Fail::Plain(
                "'cuda_tile.module' op non-symbol operations are not allowed in a module body"
                    .to_string(),
            ))
        }
        (Some(_), true) => return Err(op_err("expects parent op 'cuda_tile.module'")),
        _ => {}
    }
    if top_level_kind && parent.is_none() {
        if let Some(name) = symbol_name(op) {
            if tree.symbol(name) != Some(id) {
                return Err(super::Fail::Plain(format!(
                    "redefinition of symbol named '{name}'"
                )));
            }
        }
    }
    if op.opcode == Opcode::Module {
        return Err(op_err("cannot be nested in a module"));
    }
    let want = region_count(op.opcode);
    if op.regions.len() != want {
        return Err(op_err(format!(
            "has incorrect number of regions: expected {want} but found {}",
            op.regions.len()
        )));
    }
    for (i, region) in op.regions.iter().enumerate() {
        let may_be_empty = op.opcode == Opcode::If && i == 1;
        match region.blocks.len() {
            1 => {}
            0 if may_be_empty => {}
            0 => {
                return Err(op_err(format!(
                    "region #{i} ('region') failed to verify constraint: region with 1 blocks"
                )))
            }
            _ => return Err(op_err(format!("expects region #{i} to have 0 or 1 blocks"))),
        }
    }
    if is_terminator(op.opcode) {
        let Some((p, region)) = parent else {
            return Err(op_err("must be the last operation in the parent block"));
        };
        let block = &m.ops[p].regions[region as usize].blocks;
        let last = block.iter().any(|b| b.ops.last() == Some(&id));
        if !last {
            return Err(op_err("must be the last operation in the parent block"));
        }
        let allowed = allowed_parents(op.opcode);
        if !allowed.contains(&m.ops[p].opcode) {
            let names: Vec<String> = allowed.iter().map(|o| full(*o)).collect();
            return Err(op_err(format!(
                "expects parent op to be one of '{}'",
                names.join(", ")
            )));
        }
    }
    let terms = allowed_terminators(op.opcode);
    for region in &op.regions {
        for block in &region.blocks {
            let Some(&last) = block.ops.last() else {
                return Err(op_err("expects a non-empty block"));
            };
            let found = m.ops[last].opcode;
            if !terms.contains(&found) {
                return Err(op_err(format!(
                    "expects regions to end with '{}', found '{}'",
                    full(terms[0]),
                    full(found)
                )));
            }
        }
    }
    Ok(())
}
