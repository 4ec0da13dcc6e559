//! The bytecode format's own invariants, checked after verification as
//! NVIDIA's tileiras does: every entry argument is a tile (its rank is the
//! verifier's business). A tensor view or token passed to an entry is a
//! malformed module, not an unsupported one.
use crate::diag::Diagnostic;
use crate::ir::{Attr, Module, Opcode, Type};

/// The message that follows an invariant failure.
pub const NOT_CONFORMING: &str =
    "deserialized module does not conform to bytecode format invariants";

/// Checks the invariants of a verified module; the first failure, with the
/// entry's bytecode offset.
pub fn check(m: &Module) -> Result<(), Diagnostic> {
    for &top in m.top_level() {
        let op = &m.ops[top];
        if op.opcode != Opcode::Entry {
            continue;
        }
        let Some(Attr::Type(ft)) = op.attr("function_type") else {
            continue;
        };
        let Some(Type::Function { inputs, .. }) = m.types.try_get(*ft) else {
            continue;
        };
        for (i, &t) in inputs.iter().enumerate() {
            if !matches!(m.types.try_get(t), Some(Type::Tile { .. })) {
                let mut d = Diagnostic::error(format!(
                    "unsupported type in bytecode for entry argument #{i}: {}; expected a rank-0 !cuda_tile.tile type",
                    super::fmt::ty(m, t)
                ));
                d.offset = Some(op.offset);
                return Err(d);
            }
        }
    }
    Ok(())
}
