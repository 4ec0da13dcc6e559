//! What every engine reads of a product's operands: the A and B tiles it
//! multiplies (its operands, or the dequantized operands of `mmaf_scaled`,
//! [`super::mma_scaled`]) and whether they are signed.
use crate::ir::{OpId, Opcode};
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::emit::ops::arith::enum_attr;
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

/// Whether the A and B of multiply `id` are signed (`mmai`'s signedness;
/// floats always are).
pub fn signedness(l: &Lowerer, id: OpId) -> (bool, bool) {
    if l.m.ops[id].opcode == Opcode::MmaI {
        (
            enum_attr(l, id, "signedness_lhs") != Some(0),
            enum_attr(l, id, "signedness_rhs") != Some(0),
        )
    } else {
        (true, true)
    }
}
