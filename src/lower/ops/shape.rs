//! Constants, `iota`, `reshape` and `broadcast`. Reshape and broadcast
//! move no data: layout assignment gave their sources layouts whose
//! registers already hold the right elements.
use crate::ir::{OpId, Opcode};
use crate::lower::kernel::{Lowerer, Tile};
use crate::lower::values::{constant_bits, value_tile, Elem};
use crate::lower::LowerError;
use crate::ptx::{Opc, Operand, Reg, Ty};

/// Lowers the shape family.
pub fn lower(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = l.m.ops[id].clone();
    let Some(&res) = op.results.first() else {
        return Err(l.unsupported(id));
    };
    let (shape, elem) = value_tile(l.m, res).ok_or_else(|| l.unsupported(id))?;
    let layout = l.layout_of(res);
    match op.opcode {
        Opcode::Constant => {
            let bits = constant_bits(l.m, &op).ok_or_else(|| l.unsupported(id))?;
            let first = bits.first().copied().unwrap_or(0);
            if bits.iter().any(|&b| b != first) {
                return Err(l.unsupported_feature(id, "a non-splat value"));
            }
            let r = l.imm(elem, first);
            let regs = vec![r; layout.num_registers()];
            l.bind(res, Tile { elem, layout, regs });
            Ok(())
        }
        Opcode::Iota => {
            let Elem::Num(s) = elem else {
                return Err(l.unsupported(id));
            };
            if shape.len() != 1 || !(s.bit_width() == 32 || s.bit_width() == 64) {
                return Err(l.unsupported_feature(id, "this shape or type"));
            }
            let ty = Ty::from_bits(s.bit_width());
            let sty = if ty == Ty::B32 { Ty::S32 } else { Ty::S64 };
            // Element index = thread part + register part (disjoint bits).
            let tb = layout.thread_bases();
            let tid = l.tid();
            let mut thread: Option<Reg> = None;
            for (k, b) in tb.iter().enumerate() {
                if b[0] == 0 {
                    continue;
                }
                let bit = l.b.op(
                    Opc::Bfe,
                    &[],
                    &[Ty::U32],
                    Ty::U32,
                    vec![Operand::Reg(tid), Operand::Imm(k as i64), Operand::Imm(1)],
                );
                let term = l.b.op(
                    Opc::Mul,
                    &["lo"],
                    &[Ty::S32],
                    Ty::S32,
                    vec![Operand::Reg(bit), Operand::Imm(b[0])],
                );
                thread = Some(match thread {
                    None => term,
                    Some(t) => l.b.op(
                        Opc::Xor,
                        &[],
                        &[Ty::B32],
                        Ty::B32,
                        vec![Operand::Reg(t), Operand::Reg(term)],
                    ),
                });
            }
            let thread = match thread {
                Some(t) => t,
                None => {
                    l.b.op(Opc::Mov, &[], &[Ty::B32], Ty::B32, vec![Operand::Imm(0)])
                }
            };
            let thread = if ty == Ty::B64 {
                l.b.op(
                    Opc::Cvt,
                    &[],
                    &[Ty::U64, Ty::U32],
                    Ty::U64,
                    vec![Operand::Reg(thread)],
                )
            } else {
                thread
            };
            let mut regs = Vec::new();
            for r in 0..layout.num_registers() {
                let c = layout.apply(r, 0)[0];
                regs.push(l.b.op(
                    Opc::Xor,
                    &[],
                    &[ty],
                    sty,
                    vec![Operand::Reg(thread), Operand::Imm(c)],
                ));
            }
            l.bind(res, Tile { elem, layout, regs });
            Ok(())
        }
        _ => {
            // Reshape / broadcast: in the layout derived from the result's
            // (reshaped, or collapsed along broadcast dimensions), source
            // register r holds the element result register r needs.
            let Some(&src) = op.operands.first() else {
                return Err(l.unsupported(id));
            };
            let (src_shape, _) = value_tile(l.m, src).ok_or_else(|| l.unsupported(id))?;
            let derived = if op.opcode == Opcode::Reshape {
                layout.reshape(&src_shape)
            } else {
                let mut c = (*layout).clone();
                for (d, &s) in src_shape.iter().enumerate() {
                    if s == 1 && layout.shape.get(d).is_some_and(|&r| r != 1) {
                        c = c.collapse(d);
                    }
                }
                c
            };
            let t = l.tile_in(id, src, &std::rc::Rc::new(derived))?;
            let regs = if t.regs.len() == 1 {
                vec![t.regs[0]; layout.num_registers()]
            } else {
                t.regs
            };
            l.bind(res, Tile { elem, layout, regs });
            Ok(())
        }
    }
}
