//! The FMA engine's plan: the layouts its register path reads A and B in,
//! derived from the accumulator's. Emission:
//! [`crate::lower::emit::ops::mma_fma`].
use crate::ir::{Module, OpId, Opcode, Scalar};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::plan::layout::LinearLayout;

/// The FMA engine's plan: it has no decision of its own; its operands'
/// layouts follow the accumulator's ([`operand_layouts`]), which layout
/// assignment applies.
#[derive(Clone, Copy, Debug)]
pub struct Plan;

impl super::EnginePlan for Plan {
    fn acc_layout(&self) -> Option<LinearLayout> {
        None
    }

    fn operand_layouts(&self, _: &Module, _: OpId, _: u32) -> [Option<LinearLayout>; 2] {
        [None, None]
    }

    fn describe(&self) -> String {
        "fma (CUDA cores)".into()
    }

    fn staging(&self, o: &super::Operands) -> Option<super::Staging> {
        let op = &o.m.ops[o.id];
        let default = LinearLayout::default_scalar();
        if operand_layouts(o.m, o.id, o.layouts[2].unwrap_or(&default)).is_some() {
            // the register path
            return None;
        }
        let (ashape, _) = value_tile(o.m, op.operand("lhs")?)?;
        let (bshape, _) = value_tile(o.m, op.operand("rhs")?)?;
        let (ae, be) = super::operand_elems(o.m, o.id)?;
        let kdim = *ashape.last()?;
        let per_k = |shape: &[i64], e: Scalar| {
            shape.iter().product::<i64>() / kdim.max(1) * super::slot_bytes(Elem::Num(e))
        };
        let (a, b) = (per_k(&ashape, ae), per_k(&bshape, be));
        // All of K, else the longest power-of-two slice that fits.
        let slices = super::k_slices(kdim, 1)
            .map(|k| super::Slice {
                k,
                bytes: ((a * k + 15) & !15) + b * k,
                buffers: [a * k, b * k],
            })
            .collect();
        Some(super::Staging {
            slices,
            sets: 1,
            a_in_registers: false,
            swizzle: false,
            align: 16,
            one_region: false,
        })
    }
}

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
pub fn derived(acc: &LinearLayout, shape: &[i64], drop: usize, k_dim: usize) -> LinearLayout {
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

#[cfg(test)]
mod tests {
    use crate::lower::plan::assign::default_layout;
    use crate::lower::plan::engines::fma::*;

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
