//! Elementwise ops: one result register from the operands' registers at
//! the same index, in the result's layout.
use crate::ir::{OpId, ValueId};
use crate::lower::analysis::values::value_tile;
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::ptx::Reg;

/// Lowers an elementwise op: the result's layout is imposed on every
/// operand, and `f` builds one result register from the operands'
/// registers at the same index (each distinct element once).
pub fn elementwise(
    l: &mut Lowerer,
    id: OpId,
    operands: &[ValueId],
    mut f: impl FnMut(&mut Lowerer, &[Reg]) -> Result<Reg, LowerError>,
) -> Result<(), LowerError> {
    let Some(&res) = l.m.ops[id].results.first() else {
        return Err(l.unsupported(id));
    };
    let (_, elem) = value_tile(l.m, res).ok_or_else(|| l.unsupported(id))?;
    let layout = l.layout_of(res);
    let tiles = operands
        .iter()
        .map(|&v| l.tile_in(id, v, &layout))
        .collect::<Result<Vec<_>, _>>()?;
    let n = layout.num_registers();
    let mut regs: Vec<Reg> = Vec::with_capacity(n);
    for r in 0..n {
        let canon = layout.canonical_register(r);
        if canon != r {
            regs.push(regs[canon]);
            continue;
        }
        let srcs: Vec<Reg> = tiles.iter().map(|t| t.regs[r]).collect();
        regs.push(f(l, &srcs)?);
    }
    l.bind(res, Tile { elem, layout, regs });
    Ok(())
}
