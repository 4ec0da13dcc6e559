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

use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::Reg;

use crate::lower::emit::ops::mma_fma::{to_acc, Fma};

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
