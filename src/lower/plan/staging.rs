//! The buffers each product stages its own operands in, as its engine
//! plans them ([`crate::lower::plan::engines::EnginePlan::staging`]): the
//! K slices it may stage at a time and the bytes of one set of its buffers
//! for each. A product does so where no pipeline ring or direct copy holds
//! its operands, which emission settles by the room left; so every
//! product's staging is planned. Emission takes the first slice that fits
//! the shared memory left where it places the buffers.
use crate::ir::{Module, OpId};
use crate::lower::plan::copies::stream::loaded;
use crate::lower::plan::engines::{Operands, Staging};
use crate::lower::plan::Plan;

/// The staging of every product of `plan` (its layouts and copies
/// decided), in the order of `plan.products`.
pub fn plan(m: &Module, plan: &Plan) -> Vec<Option<Staging>> {
    plan.products
        .iter()
        .map(|p| p.engine.plan().staging(&operands(m, plan, p.op)))
        .collect()
}

/// What `plan` knows of the operands of product `id`.
fn operands<'a>(m: &'a Module, plan: &'a Plan, id: OpId) -> Operands<'a> {
    let op = &m.ops[id];
    let layout = |v: Option<crate::ir::ValueId>| v.and_then(|v| plan.layouts.get(&v)).map(|l| &**l);
    let streamed = |name: &str| {
        op.operand(name)
            .and_then(|v| loaded(m, v))
            .is_some_and(|load| {
                plan.copies
                    .streamed
                    .get(&load)
                    .is_some_and(|s| s.product == id)
            })
    };
    Operands {
        m,
        id,
        target: plan.target,
        warps: plan.warps,
        layouts: [
            layout(op.operand("lhs")),
            layout(op.operand("rhs")),
            layout(op.results.first().copied()),
        ],
        streamed: [streamed("lhs"), streamed("rhs")],
    }
}
