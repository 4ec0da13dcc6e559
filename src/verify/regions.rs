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

/// A block that should end in a terminator but ends in `id`, a
/// non-terminator: NVIDIA's "block with no terminator" (checked after the
/// op's own rules, as NVIDIA does).
pub(crate) fn check_unterminated(m: &Module, tree: &Tree, id: OpId) -> Check {
    let op = &m.ops[id];
    let parent = tree.parent(id);
    if let Some((p, region)) = parent {
        let block = m.ops[p].regions[region as usize].blocks.first();
        let is_last = block.is_some_and(|b| b.ops.last() == Some(&id));
        if is_last && !is_terminator(op.opcode) && !allowed_terminators(m.ops[p].opcode).is_empty()
        {
            if let Some(text) = generic_form(m, tree, id) {
                // MLIR starts an op that spans lines on a line of its own.
                let sep = if text.contains('\n') { "\n" } else { "" };
                return Err(super::Fail::Plain(format!(
                    "block with no terminator, has {sep}{text}"
                )));
            }
        }
    }
    Ok(())
}

/// The op in MLIR's generic form as NVIDIA prints it when a block lacks a
/// terminator (`%3 = "cuda_tile.make_token"() : () -> !cuda_tile.token`).
/// Only for attribute-free ops directly in an entry block, whose value
/// numbering is known, and whose regions (if any) hold such ops without
/// results or block arguments; `None` otherwise.
fn generic_form(m: &Module, tree: &Tree, id: OpId) -> Option<String> {
    let (entry, _) = tree.parent(id)?;
    let entry_op = &m.ops[entry];
    if entry_op.opcode != Opcode::Entry {
        return None;
    }
    let block = entry_op.regions.first()?.blocks.first()?;
    // Result numbers: one per op with results, in block order.
    let mut numbers = std::collections::HashMap::new();
    let mut next = 0usize;
    for &o in &block.ops {
        let res = &m.ops[o].results;
        if !res.is_empty() {
            for (k, v) in res.iter().enumerate() {
                let name = if res.len() == 1 {
                    format!("%{next}")
                } else {
                    format!("%{next}#{k}")
                };
                numbers.insert(*v, name);
            }
            next += 1;
        }
        if o == id {
            break;
        }
    }
    for (i, a) in block.args.iter().enumerate() {
        numbers.insert(*a, format!("%arg{i}"));
    }
    print_generic(m, &numbers, id, "")
}

/// Op `id` in generic form, its values named by `numbers`, nested lines
/// indented by `indent`.
fn print_generic(
    m: &Module,
    numbers: &std::collections::HashMap<crate::ir::ValueId, String>,
    id: OpId,
    indent: &str,
) -> Option<String> {
    let op = &m.ops[id];
    let mut regions = Vec::new();
    for r in &op.regions {
        let [block] = r.blocks.as_slice() else {
            return None;
        };
        if !block.args.is_empty() {
            return None;
        }
        let inner = format!("{indent}  ");
        let mut text = String::from("{\n");
        for &o in &block.ops {
            if !m.ops[o].results.is_empty() {
                return None;
            }
            text.push_str(&format!(
                "{inner}{}\n",
                print_generic(m, numbers, o, &inner)?
            ));
        }
        text.push_str(indent);
        text.push('}');
        regions.push(text);
    }
    let regions = if regions.is_empty() {
        String::new()
    } else {
        format!(" ({})", regions.join(", "))
    };
    let constant = if op.opcode == Opcode::Constant {
        Some(format!("value = {}", int_constant(m, op)?))
    } else if op.opcode == Opcode::Assume {
        Some(format!("predicate = #cuda_tile.{}", predicate(op)?))
    } else if !op.attrs.is_empty() {
        return None;
    } else {
        None
    };
    // Ops whose optional/variadic groups are sized by a property.
    let properties = if let Some(text) = constant {
        format!(" <{{{text}}}>")
    } else if op.opcode == Opcode::MakeTensorView {
        let sizes: Vec<String> = op.segments.iter().map(|s| s.len.to_string()).collect();
        format!(
            " <{{operandSegmentSizes = array<i32: {}>}}>",
            sizes.join(", ")
        )
    } else {
        String::new()
    };
    let ty = |v: &crate::ir::ValueId| {
        super::fmt::ty(m, m.values[*v].ty)
            .trim_matches('\'')
            .to_string()
    };
    let operands: Option<Vec<String>> = op
        .operands
        .iter()
        .map(|v| numbers.get(v).cloned())
        .collect();
    let operands = operands?;
    let lhs = match op.results.len() {
        0 => String::new(),
        1 => format!("{} = ", numbers.get(&op.results[0])?),
        n => {
            let first = numbers.get(&op.results[0])?;
            format!("{}:{n} = ", first.trim_end_matches("#0"))
        }
    };
    let in_tys: Vec<String> = op.operands.iter().map(ty).collect();
    let out_tys: Vec<String> = op.results.iter().map(ty).collect();
    let results = if out_tys.len() == 1 {
        out_tys[0].clone()
    } else {
        format!("({})", out_tys.join(", "))
    };
    Some(format!(
        "{lhs}\"{}\"({}){properties}{regions} : ({}) -> {results}",
        op.name(),
        operands.join(", "),
        in_tys.join(", ")
    ))
}

/// An `assume` predicate as MLIR prints it (`bounded<0, ?>`,
/// `div_by<16>`, `same_elements<[1, 4]>`).
fn predicate(op: &crate::ir::Op) -> Option<String> {
    use crate::ir::Attr;
    Some(match op.attr("predicate")? {
        Attr::DivBy {
            divisor,
            every,
            along,
        } => {
            let mut s = format!("div_by<{divisor}");
            if let Some(e) = every {
                s.push_str(&format!(", every {e}"));
            }
            if let Some(a) = along {
                s.push_str(&format!(" along {a}"));
            }
            s.push('>');
            s
        }
        Attr::SameElements(v) => {
            let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            format!("same_elements<[{}]>", items.join(", "))
        }
        Attr::Bounded { lb, ub } => {
            let f = |x: &Option<i64>| x.map_or_else(|| "?".to_string(), |v| v.to_string());
            format!("bounded<{}, {}>", f(lb), f(ub))
        }
        _ => return None,
    })
}

/// An integer constant's value attribute in MLIR's form
/// (`dense<1> : !cuda_tile.tile<i32>`, `dense<[1, 2]> : ...`); `None` for
/// other constants.
fn int_constant(m: &Module, op: &crate::ir::Op) -> Option<String> {
    let Some(crate::ir::Attr::Dense { ty, data }) = op.attr("value") else {
        return None;
    };
    let elem = super::types::tile_scalar(m, *ty)?;
    let shape = super::types::tile_shape(m, *ty)?;
    let bytes = match elem {
        crate::ir::Scalar::I8 => 1,
        crate::ir::Scalar::I16 => 2,
        crate::ir::Scalar::I32 => 4,
        crate::ir::Scalar::I64 => 8,
        _ => return None,
    };
    if data.is_empty() || data.len() % bytes != 0 {
        return None;
    }
    let values: Vec<i64> = data
        .chunks(bytes)
        .map(|c| {
            let mut v: u64 = 0;
            for (i, b) in c.iter().enumerate() {
                v |= u64::from(*b) << (8 * i);
            }
            let shift = 64 - 8 * bytes as u32;
            ((v << shift) as i64) >> shift
        })
        .collect();
    let ty_text = super::fmt::ty(m, *ty).trim_matches('\'').to_string();
    let body = if values.iter().all(|v| *v == values[0]) {
        values[0].to_string()
    } else if shape.len() == 1 {
        let items: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        format!("[{}]", items.join(", "))
    } else {
        return None;
    };
    Some(format!("dense<{body}> : {ty_text}"))
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
            let mut names: Vec<String> = allowed.iter().map(|o| full(*o)).collect();
            if op.opcode == Opcode::Return {
                // NVIDIA's 13.5 dialect also allows its preview functions.
                names.insert(1, "cuda_tile.preview$func".into());
            }
            return Err(op_err(format!(
                "expects parent op to be one of '{}'",
                names.join(", ")
            )));
        }
    }
    Ok(())
}

/// The region rule NVIDIA's verifier checks after an op's nested ops (as
/// MLIR checks region traits on the way out): each block ends in a
/// terminator the op allows.
pub(crate) fn check_region_ends(m: &Module, tree: &Tree, id: OpId) -> Check {
    let op = &m.ops[id];
    let terms = allowed_terminators(op.opcode);
    for region in &op.regions {
        for block in &region.blocks {
            let Some(&last) = block.ops.last() else {
                return Err(op_err("expects a non-empty block"));
            };
            let found = m.ops[last].opcode;
            if !terms.contains(&found)
                && (is_terminator(found) || generic_form(m, tree, last).is_none())
            {
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
