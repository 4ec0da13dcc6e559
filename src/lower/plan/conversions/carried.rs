//! The conversions of values carried by control flow: a `for`'s or
//! `loop`'s initial values into its loop-carried variables, a `continue`'s
//! operands into the innermost loop's, a `break`'s into the `loop`'s
//! results, a `yield`'s into its `if`'s results. Each variable is in the
//! layout the plan gave the value it stands for: a `for`'s variables its
//! results' (its body's arguments share them), a `loop`'s its body's
//! arguments' and its results'.
use std::rc::Rc;

use crate::ir::{Module, OpId, Opcode, ValueId};
use crate::lower::plan::layout::LinearLayout;
use crate::lower::plan::Plan;

/// A carried value, its layout as held, and its variable's layout.
type Carried = (ValueId, Rc<LinearLayout>, Rc<LinearLayout>);

/// Where an op sits: the op whose region holds it, and the innermost
/// `for` or `loop` around it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scope {
    /// The op whose region holds it.
    pub parent: Option<OpId>,
    /// The innermost loop around it.
    pub innermost_loop: Option<OpId>,
}

impl Scope {
    /// The scope of the ops in the regions of `id`, itself in `self`.
    pub fn inside(self, m: &Module, id: OpId) -> Scope {
        let looping = matches!(m.ops[id].opcode, Opcode::For | Opcode::Loop);
        Scope {
            parent: Some(id),
            innermost_loop: if looping {
                Some(id)
            } else {
                self.innermost_loop
            },
        }
    }
}

/// The arguments of the body of `id`.
fn body_args(m: &Module, id: OpId) -> &[ValueId] {
    m.ops[id]
        .regions
        .first()
        .and_then(|r| r.blocks.first())
        .map_or(&[], |b| &b.args[..])
}

/// The variables the operands of control-flow op `id` are copied into,
/// where it carries values (`None` otherwise; a `yield` of another op's
/// region than an `if`'s too).
fn targets(m: &Module, id: OpId, scope: Scope) -> Option<(&[ValueId], &[ValueId])> {
    let op = &m.ops[id];
    match op.opcode {
        Opcode::For => Some((op.operand_group("initValues"), &op.results)),
        Opcode::Loop => Some((op.operand_group("initValues"), body_args(m, id))),
        Opcode::Yield => {
            let parent = scope.parent?;
            (m.ops[parent].opcode == Opcode::If)
                .then(|| (&op.operands[..], &m.ops[parent].results[..]))
        }
        Opcode::Continue => {
            let lp = scope.innermost_loop?;
            let vars = match m.ops[lp].opcode {
                Opcode::For => &m.ops[lp].results[..],
                _ => body_args(m, lp),
            };
            Some((&op.operands[..], vars))
        }
        Opcode::Break => {
            let lp = scope.innermost_loop?;
            Some((&op.operands[..], &m.ops[lp].results[..]))
        }
        _ => None,
    }
}

/// What control-flow op `id` in `scope` wants of its carried operands
/// (`layout` gives a value's layout as held), where it carries values.
pub fn wants(
    m: &Module,
    id: OpId,
    scope: Scope,
    plan: &Plan,
    layout: impl Fn(ValueId) -> Option<Rc<LinearLayout>>,
) -> Option<Vec<Carried>> {
    let (values, vars) = targets(m, id, scope)?;
    if values.len() != vars.len() {
        // Emission reports the mismatch.
        return None;
    }
    Some(
        values
            .iter()
            .zip(vars)
            .filter_map(|(&v, var)| Some((v, layout(v)?, plan.layouts.get(var)?.clone())))
            .filter(|(_, from, _)| !from.shape.is_empty())
            .collect(),
    )
}

/// The layouts a `for`'s body arguments are held in where they differ
/// from the plan's: its results' (the induction variable aside).
pub fn held(m: &Module, id: OpId, plan: &Plan) -> Vec<(ValueId, Rc<LinearLayout>)> {
    if m.ops[id].opcode != Opcode::For {
        return Vec::new();
    }
    body_args(m, id)
        .iter()
        .skip(1)
        .zip(&m.ops[id].results)
        .filter_map(|(&a, r)| {
            let l = plan.layouts.get(r)?;
            (plan.layouts.get(&a) != Some(l)).then(|| (a, l.clone()))
        })
        .collect()
}
