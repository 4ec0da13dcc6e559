//! The FMA engine's register path, for matrix multiplies small enough that
//! every thread can hold the rows of A and the columns of B its accumulator
//! elements need: no shared memory, no barrier, no loop.
//!
//! The operand layouts derive from the accumulator's. A keeps each
//! accumulator basis's batch and M components and B its batch and N
//! components (a component dropped becomes a broadcast), and both take all
//! of K in their lowest register bits. So A's register `k | r << log2 K`
//! holds row `m` of accumulator register `r` at `k`, and B's the column:
//! the products pair registers by index alone. Layout assignment asks the
//! operands' producers for these layouts, so loads read them directly.
use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;

use crate::ir::{Module, OpId, Opcode};
use crate::lower::context::{Lowerer, Tile};
use crate::lower::layout::LinearLayout;
use crate::lower::values::value_tile;
use crate::lower::LowerError;
use crate::ptx::Reg;

use super::mma_fma::{to_acc, Fma};

/// The most registers (of A and B together, distinct within a thread) the
/// operands of a register-path multiply may take.
const MAX_OPERAND_REGS: usize = 64;

/// The A and B layouts of op `id`'s register path when its accumulator is
/// in `acc`, or `None` when the op takes the shared-memory path (operands
/// too large, or a dequantized `mmaf_scaled`).
pub fn operand_layouts(m: &Module, id: OpId, acc: &LinearLayout) -> Option<[LinearLayout; 2]> {
    let op = &m.ops[id];
    if !matches!(op.opcode, Opcode::MmaF | Opcode::MmaI) {
        return None;
    }
    let (ashape, _) = value_tile(m, op.operand("lhs")?)?;
    let (bshape, _) = value_tile(m, op.operand("rhs")?)?;
    let rank = acc.shape.len();
    if !(rank == 2 || rank == 3) || ashape.len() != rank || bshape.len() != rank {
        return None;
    }
    let kdim = ashape[rank - 1];
    if kdim <= 0 || kdim & (kdim - 1) != 0 {
        return None;
    }
    let a = derived(acc, &ashape, rank - 1, rank - 1);
    let b = derived(acc, &bshape, rank - 2, rank - 2);
    let distinct = |l: &LinearLayout| {
        1usize
            << l.register
                .iter()
                .filter(|b| !LinearLayout::is_zero(b))
                .count()
    };
    (distinct(&a) + distinct(&b) <= MAX_OPERAND_REGS).then_some([a, b])
}

/// The layout of an operand of `shape` derived from accumulator layout
/// `acc`: every basis loses its component `drop` (the accumulator dimension
/// the operand lacks, replaced by K) and K takes the lowest register bits,
/// along dimension `k_dim`.
fn derived(acc: &LinearLayout, shape: &[i64], drop: usize, k_dim: usize) -> LinearLayout {
    let zeroed = |bases: &[Vec<i64>]| -> Vec<Vec<i64>> {
        bases
            .iter()
            .map(|b| {
                let mut b = b.clone();
                b[drop] = 0;
                b
            })
            .collect()
    };
    let mut register: Vec<Vec<i64>> = Vec::new();
    let mut step = 1;
    while step < shape[k_dim] {
        let mut b = vec![0; shape.len()];
        b[k_dim] = step;
        register.push(b);
        step *= 2;
    }
    register.extend(zeroed(&acc.register));
    LinearLayout {
        shape: shape.to_vec(),
        register,
        lane: zeroed(&acc.lane),
        warp: zeroed(&acc.warp),
    }
}

/// Multiplies with the operands in registers: `accs` (one variable per
/// canonical accumulator register) take every product of K, in K order.
pub fn multiply(
    l: &mut Lowerer,
    f: &Fma,
    layouts: [LinearLayout; 2],
    accs: &[Option<Reg>],
) -> Result<(), LowerError> {
    let [al, bl] = layouts;
    let a = l.tile_in(f.id, f.a_v, &Rc::new(al))?;
    let b = l.tile_in(f.id, f.b_v, &Rc::new(bl))?;
    let kdim = f.ashape[f.ashape.len() - 1] as usize;
    let mut converted: [HashMap<Reg, Reg>; 2] = Default::default();
    let mut value =
        |l: &mut Lowerer, side: usize, t: &Tile, reg: usize| -> Result<Reg, LowerError> {
            let v = t.regs[reg];
            if let Some(&c) = converted[side].get(&v) {
                return Ok(c);
            }
            let (e, signed) = if side == 0 {
                (f.ae, f.sa)
            } else {
                (f.be, f.sb)
            };
            let c = to_acc(l, e, signed, v, f.acc_kind)
                .ok_or_else(|| l.unsupported_feature(f.id, "this operand type"))?;
            converted[side].insert(v, c);
            Ok(c)
        };
    for k in 0..kdim {
        for (r, acc) in accs.iter().enumerate() {
            let Some(acc) = *acc else { continue };
            let reg = k | (r * kdim);
            let x = value(l, 0, &a, reg)?;
            let y = value(l, 1, &b, reg)?;
            f.accumulate(l, acc, x, y);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::lower::assign::default_layout;
    use crate::lower::ops::mma_fma_regs::*;

    /// Every accumulator element's row of A and column of B sit in the
    /// registers its index pairs with, in the same thread.
    #[test]
    fn operand_registers_pair_with_accumulator_registers() {
        for (shape, k) in [
            (vec![8, 8], 8),
            (vec![16, 16], 4),
            (vec![2, 4, 8], 2),
            (vec![1, 1], 1),
        ] {
            let acc = default_layout(&shape, 4, 1);
            let rank = shape.len();
            let mut ashape = shape.clone();
            ashape[rank - 1] = k;
            let mut bshape = shape.clone();
            bshape[rank - 2] = k;
            let a = derived(&acc, &ashape, rank - 1, rank - 1);
            let b = derived(&acc, &bshape, rank - 2, rank - 2);
            for t in 0..128 {
                for r in 0..acc.num_registers() {
                    let c = acc.apply(r, t);
                    for kk in 0..k as usize {
                        let ca = a.apply(kk | (r * k as usize), t);
                        let cb = b.apply(kk | (r * k as usize), t);
                        let mut want_a = c.clone();
                        want_a[rank - 1] = kk as i64;
                        let mut want_b = c.clone();
                        want_b[rank - 2] = kk as i64;
                        assert_eq!((ca, cb), (want_a, want_b), "{shape:?} t{t} r{r} k{kk}");
                    }
                }
            }
        }
    }
}
