//! Memory tokens. A tile op runs on every thread of the tile block, each
//! doing its share of the elements, so a memory op ordered after another
//! through its `token` operand must wait until every thread has finished
//! that op: a `bar.sync` goes between them (it also orders the threads'
//! global and shared memory accesses). Needed when the earlier op wrote
//! memory, or when the later op writes memory the earlier one read; two
//! reads need nothing. Tokens carried by loops or out of `if`s are treated
//! as writes.
use crate::ir::{Module, OpId, Opcode, ValueDef, ValueId};
use crate::lower::analysis::memory::{access, Access};
use crate::lower::emit::context::Lowerer;

/// The accesses a token stands for (through `join_tokens`).
fn producers(m: &Module, token: ValueId, out: &mut Vec<Access>, depth: usize) {
    if depth > 64 {
        out.push(Access::Write);
        return;
    }
    let Some(v) = m.values.try_get(token) else {
        return;
    };
    match v.def {
        ValueDef::Result { op, .. } => {
            let o = &m.ops[op];
            match o.opcode {
                Opcode::MakeToken => {}
                Opcode::JoinTokens => {
                    for &t in &o.operands {
                        producers(m, t, out, depth + 1);
                    }
                }
                // A token out of an `if`, `for` or `loop`: any access.
                Opcode::If | Opcode::For | Opcode::Loop => out.push(Access::Write),
                other => out.extend(access(other)),
            }
        }
        // A loop-carried or block-argument token: any earlier access.
        ValueDef::BlockArg { .. } => out.push(Access::Write),
    }
}

/// Emits the barrier memory op `id` needs after the ops its token names.
pub fn order(l: &mut Lowerer, id: OpId) {
    let op = &l.m.ops[id];
    let Some(me) = access(op.opcode) else {
        return;
    };
    let Some(token) = op.operand("token") else {
        return;
    };
    let mut before = Vec::new();
    producers(l.m, token, &mut before, 0);
    let needed = before
        .iter()
        .any(|&a| a == Access::Write || me == Access::Write);
    if needed {
        l.barrier();
    }
}
