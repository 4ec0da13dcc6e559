//! Handle soundness: proves every handle in the module is in range and the op
//! tree and value definitions are well formed, so that later checks (and the
//! lowering) may index arenas without further checks.
//!
//! Rules: type, value, op and debug handles in range (inside types,
//! attributes, values and ops too); type references acyclic; each op in the
//! tree exactly once; each value defined exactly once, where its `def` says;
//! operand segments within the operand list; operands dominated by their
//! definitions (earlier in the block or in an enclosing block, or arguments of
//! an enclosing block).
use super::Errors;
use crate::ir::{Attr, Block, DebugAttr, Module, OpId, Type, TypeId, ValueDef, ValueId};

/// The deepest region nesting the verifier follows.
const MAX_DEPTH: usize = 256;

/// Runs every handle rule, recording failures in `errors`.
pub(crate) fn check(module: &Module, errors: &mut Errors<'_>) {
    let before = errors.list.len();
    check_types(module, errors);
    check_debug(module, errors);
    check_values(module, errors);
    if errors.list.len() != before {
        return;
    }
    let mut tree = TreeCheck {
        module,
        seen: vec![false; module.ops.len()],
        defined: vec![false; module.values.len()],
        visible: vec![false; module.values.len()],
    };
    tree.block(&module.body, None, 0, errors);
}

fn type_ok(m: &Module, t: TypeId) -> bool {
    t.index() < m.types.len()
}

/// The types `ty` refers to directly.
pub(crate) fn type_refs(ty: &Type) -> Vec<TypeId> {
    match ty {
        Type::Scalar(_) | Type::Token => vec![],
        Type::Pointer { pointee, .. } => vec![*pointee],
        Type::Tile { element, .. } | Type::TensorView { element, .. } => vec![*element],
        Type::PartitionView { tensor_view, .. }
        | Type::GatherScatterView { tensor_view, .. }
        | Type::StridedView { tensor_view, .. } => vec![*tensor_view],
        Type::Function { inputs, results } => inputs.iter().chain(results).copied().collect(),
    }
}

fn check_types(m: &Module, errors: &mut Errors<'_>) {
    let mut bad = false;
    for (id, ty) in m.types.iter() {
        for r in type_refs(ty) {
            if !type_ok(m, r) {
                errors.plain(
                    format!(
                        "type {} refers to type {} out of range",
                        id.index(),
                        r.index()
                    ),
                    None,
                );
                bad = true;
            }
        }
    }
    if bad {
        return;
    }
    // Cycle detection: 0 = unvisited, 1 = on stack, 2 = done.
    let mut state = vec![0u8; m.types.len()];
    for (start, _) in m.types.iter() {
        if state[start.index()] != 0 {
            continue;
        }
        let mut stack: Vec<(TypeId, usize)> = vec![(start, 0)];
        state[start.index()] = 1;
        while let Some((t, next)) = stack.pop() {
            let refs = type_refs(&m.types[t]);
            if let Some(&r) = refs.get(next) {
                stack.push((t, next + 1));
                match state[r.index()] {
                    0 => {
                        state[r.index()] = 1;
                        stack.push((r, 0));
                    }
                    1 => {
                        errors.plain(format!("type {} refers to itself", r.index()), None);
                        return;
                    }
                    _ => {}
                }
            } else {
                state[t.index()] = 2;
            }
        }
    }
}

fn debug_refs(d: &DebugAttr) -> Vec<crate::ir::DebugId> {
    match d {
        DebugAttr::Unknown | DebugAttr::File { .. } => vec![],
        DebugAttr::CompileUnit { file } => vec![*file],
        DebugAttr::LexicalBlock { scope, file, .. } => vec![*scope, *file],
        DebugAttr::Loc { scope, .. } => vec![*scope],
        DebugAttr::Subprogram {
            file, compile_unit, ..
        } => vec![*file, *compile_unit],
        DebugAttr::CallSite { callee, caller } => vec![*callee, *caller],
    }
}

fn check_debug(m: &Module, errors: &mut Errors<'_>) {
    let ok = |d: &crate::ir::DebugId| d.index() < m.debug.len();
    let mut bad = false;
    for (id, d) in m.debug.iter() {
        if debug_refs(d).iter().any(|r| !ok(r)) {
            errors.plain(
                format!("debug attribute {} refers to one out of range", id.index()),
                None,
            );
            bad = true;
        }
    }
    if !bad {
        // Debug attributes refer to each other without cycles.
        let mut state = vec![0u8; m.debug.len()];
        'outer: for (start, _) in m.debug.iter() {
            if state[start.index()] != 0 {
                continue;
            }
            let mut stack = vec![(start, 0usize)];
            state[start.index()] = 1;
            while let Some((d, next)) = stack.pop() {
                let refs = debug_refs(&m.debug[d]);
                if let Some(&r) = refs.get(next) {
                    stack.push((d, next + 1));
                    match state[r.index()] {
                        0 => {
                            state[r.index()] = 1;
                            stack.push((r, 0));
                        }
                        1 => {
                            errors.plain(
                                format!("debug attribute {} refers to itself", r.index()),
                                None,
                            );
                            break 'outer;
                        }
                        _ => {}
                    }
                } else {
                    state[d.index()] = 2;
                }
            }
        }
    }
    for (_, op) in m.ops.iter() {
        if let Some(d) = op.debug {
            if !ok(&d) {
                errors.plain(
                    format!("debug attribute {} out of range", d.index()),
                    Some(op.offset),
                );
            }
        }
    }
}

fn check_values(m: &Module, errors: &mut Errors<'_>) {
    for (id, v) in m.values.iter() {
        if !type_ok(m, v.ty) {
            errors.plain(
                format!(
                    "value %{} has type {} out of range",
                    id.index(),
                    v.ty.index()
                ),
                None,
            );
        }
        let op = match v.def {
            ValueDef::Result { op, .. } | ValueDef::BlockArg { op, .. } => op,
        };
        if op.index() >= m.ops.len() {
            errors.plain(
                format!(
                    "value %{} is defined by op {} out of range",
                    id.index(),
                    op.index()
                ),
                None,
            );
        }
    }
}

fn attr_types_ok(m: &Module, a: &Attr, depth: usize) -> bool {
    if depth > 64 {
        return false;
    }
    match a {
        Attr::Integer { ty, .. }
        | Attr::Float { ty, .. }
        | Attr::Type(ty)
        | Attr::Dense { ty, .. } => type_ok(m, *ty),
        Attr::Array(items) => items.iter().all(|i| attr_types_ok(m, i, depth + 1)),
        Attr::Dictionary(items) | Attr::OptimizationHints(items) => {
            items.iter().all(|(_, i)| attr_types_ok(m, i, depth + 1))
        }
        _ => true,
    }
}

struct TreeCheck<'m> {
    module: &'m Module,
    seen: Vec<bool>,
    defined: Vec<bool>,
    visible: Vec<bool>,
}

impl TreeCheck<'_> {
    fn value_in_range(&self, v: ValueId) -> bool {
        v.index() < self.module.values.len()
    }

    /// Defines `v` at the expected place; reports a second definition or a
    /// `def` that names another place.
    fn define(&mut self, v: ValueId, expect: ValueDef, at: OpId, errors: &mut Errors<'_>) {
        if !self.value_in_range(v) {
            errors.at_op(
                at,
                super::Fail::Plain(format!("value %{} out of range", v.index())),
            );
            return;
        }
        if self.defined[v.index()] {
            errors.at_op(
                at,
                super::Fail::Plain(format!("value %{} is defined more than once", v.index())),
            );
            return;
        }
        self.defined[v.index()] = true;
        if self.module.values[v].def != expect {
            errors.at_op(
                at,
                super::Fail::Plain(format!(
                    "value %{} is defined here but records another definition",
                    v.index()
                )),
            );
            return;
        }
        self.visible[v.index()] = true;
    }

    fn block(
        &mut self,
        block: &Block,
        owner: Option<(OpId, u32)>,
        depth: usize,
        errors: &mut Errors<'_>,
    ) {
        if let Some((op, region)) = owner {
            for (i, &a) in block.args.iter().enumerate() {
                let expect = ValueDef::BlockArg {
                    op,
                    region,
                    index: i as u32,
                };
                self.define(a, expect, op, errors);
            }
        }
        for &id in &block.ops {
            self.op(id, depth, errors);
        }
        // Values of this block go out of scope.
        for &a in &block.args {
            if self.value_in_range(a) {
                self.visible[a.index()] = false;
            }
        }
        for &id in &block.ops {
            if let Some(op) = self.module.ops.try_get(id) {
                for &r in &op.results {
                    if self.value_in_range(r) {
                        self.visible[r.index()] = false;
                    }
                }
            }
        }
    }

    fn op(&mut self, id: OpId, depth: usize, errors: &mut Errors<'_>) {
        let m = self.module;
        let Some(op) = m.ops.try_get(id) else {
            errors.plain(format!("op {} out of range", id.index()), None);
            return;
        };
        if self.seen[id.index()] {
            errors.at_op(
                id,
                super::Fail::Plain(format!("op {} appears more than once", id.index())),
            );
            return;
        }
        self.seen[id.index()] = true;
        for (i, &v) in op.operands.iter().enumerate() {
            if !self.value_in_range(v) {
                errors.at_op(
                    id,
                    super::Fail::Plain(format!(
                        "operand #{i} is value %{} out of range",
                        v.index()
                    )),
                );
            } else if !self.visible[v.index()] {
                errors.at_op(
                    id,
                    super::Fail::Op(format!("operand #{i} does not dominate this use")),
                );
            }
        }
        for s in &op.segments {
            if s.start as u64 + s.len as u64 > op.operands.len() as u64 {
                errors.at_op(
                    id,
                    super::Fail::Plain(format!(
                        "operand segment '{}' lies outside the operand list",
                        s.name
                    )),
                );
            }
        }
        if op.attrs.iter().any(|(_, a)| !attr_types_ok(m, a, 0)) {
            errors.at_op(
                id,
                super::Fail::Plain("attribute refers to a type out of range".to_string()),
            );
        }
        if depth >= MAX_DEPTH && !op.regions.is_empty() {
            errors.at_op(
                id,
                super::Fail::Plain("regions nested too deeply".to_string()),
            );
            return;
        }
        for (r, region) in op.regions.iter().enumerate() {
            for block in &region.blocks {
                self.block(block, Some((id, r as u32)), depth + 1, errors);
            }
        }
        for (i, &v) in op.results.iter().enumerate() {
            let expect = ValueDef::Result {
                op: id,
                index: i as u32,
            };
            self.define(v, expect, id, errors);
        }
    }
}
