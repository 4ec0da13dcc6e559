//! The A and B tiles a product's engine multiplies: its operands, or the
//! dequantized operands of `mmaf_scaled` ([`super::mma_scaled`]).
use crate::ir::{OpId, Opcode};
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::emit::ops::mma_scaled;
use crate::lower::error::LowerError;

/// The A and B tiles the engine multiplies for op `id`, in the layouts of
/// the `lhs` and `rhs` operands (dequantized for `mmaf_scaled`).
pub fn operand_tiles(l: &mut Lowerer, id: OpId) -> Result<(Tile, Tile), LowerError> {
    let op = &l.m.ops[id];
    if op.opcode == Opcode::MmaFScaled {
        return mma_scaled::dequantized(l, id);
    }
    let (Some(a), Some(b)) = (op.operand("lhs"), op.operand("rhs")) else {
        return Err(l.unsupported(id));
    };
    Ok((l.tile(id, a)?, l.tile(id, b)?))
}
