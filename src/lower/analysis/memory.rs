//! What the tile IR's memory ops do to memory, and the loop shapes that
//! decide whether copies may move ahead of the ops before them.
use crate::ir::{Module, OpId, Opcode, ValueDef, ValueId};

/// What a memory op does to memory.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Access {
    /// It reads memory.
    Read,
    /// It writes memory (an atomic reads and writes).
    Write,
}

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

/// Whether memory op `id` must wait, at a barrier of every thread, for
/// the ops its `token` names: where one of them wrote memory, or `id`
/// writes memory one of them read (two reads need nothing).
pub fn token_barrier(m: &Module, id: OpId) -> bool {
    let op = &m.ops[id];
    let (Some(me), Some(token)) = (access(op.opcode), op.operand("token")) else {
        return false;
    };
    let mut before = Vec::new();
    producers(m, token, &mut before, 0);
    before
        .iter()
        .any(|&a| a == Access::Write || me == Access::Write)
}

/// What op kind `opcode` does to memory, if it is a memory op.
pub fn access(opcode: Opcode) -> Option<Access> {
    match opcode {
        Opcode::LoadPtrTko | Opcode::LoadViewTko => Some(Access::Read),
        Opcode::StorePtrTko
        | Opcode::StoreViewTko
        | Opcode::AtomicRMWTko
        | Opcode::AtomicCASTko
        | Opcode::AtomicRedViewTko => Some(Access::Write),
        _ => None,
    }
}

/// Whether op kind `opcode` writes memory.
pub fn writes(opcode: Opcode) -> bool {
    access(opcode) == Some(Access::Write)
}

/// Whether op kind `opcode` writes memory or prints (which no copy may
/// move before).
pub fn writes_or_prints(opcode: Opcode) -> bool {
    writes(opcode) || opcode == Opcode::PrintTko
}

/// Whether any op of `ops` (or of their regions) writes memory or prints.
pub fn any_writes(m: &Module, ops: &[OpId]) -> bool {
    ops.iter().any(|&id| {
        let op = &m.ops[id];
        writes_or_prints(op.opcode)
            || op
                .regions
                .iter()
                .any(|r| r.blocks.iter().any(|b| any_writes(m, &b.ops)))
    })
}

/// Whether the body of the `for` op `id` has a `continue` inside an `if`
/// (not the one ending the body, and not one of a nested loop).
pub fn early_continue(m: &Module, id: OpId) -> bool {
    fn nested(m: &Module, id: OpId) -> bool {
        m.ops[id].regions.iter().flat_map(|r| &r.blocks).any(|b| {
            b.ops.iter().any(|&x| match m.ops[x].opcode {
                Opcode::Continue => true,
                Opcode::If => nested(m, x),
                _ => false,
            })
        })
    }
    m.ops[id]
        .regions
        .iter()
        .flat_map(|r| &r.blocks)
        .flat_map(|b| &b.ops)
        .any(|&x| m.ops[x].opcode == Opcode::If && nested(m, x))
}
