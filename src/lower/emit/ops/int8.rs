//! `i8` integer arithmetic. An `i8` lives in the low byte of a 16-bit
//! register and its high byte is unspecified (loads, constants and
//! truncations leave it as they like), so ops whose low byte depends only
//! on the operands' low bytes (add, sub, mul, and, or, xor, shl, neg) run
//! on the raw registers, and the others first extend the byte by the op's
//! signedness (`cvt.s16.s8` / `cvt.u16.u8`) and compute in 16 bits.
use crate::ir::{OpId, Opcode, ValueId};
use crate::lower::emit::context::Lowerer;
use crate::lower::error::LowerError;
use crate::ptx::{Opc, Operand, Reg, Ty};
use smallvec::smallvec;

use crate::lower::emit::ops::elementwise::elementwise;

/// A shift amount: `r`'s low byte, zero-extended to the 32 bits PTX
/// shifts take.
fn amount(l: &mut Lowerer, r: Reg) -> Reg {
    l.b.op(
        Opc::Cvt,
        &[],
        &[Ty::U32, Ty::U8],
        Ty::U32,
        smallvec![Operand::Reg(r)],
    )
}

/// `r` with its low byte extended to 16 bits.
pub fn widen(l: &mut Lowerer, r: Reg, signed: bool) -> Reg {
    let (d, s) = if signed {
        (Ty::S16, Ty::S8)
    } else {
        (Ty::U16, Ty::U8)
    };
    l.b.op(Opc::Cvt, &[], &[d, s], d, smallvec![Operand::Reg(r)])
}

fn regs(r: &[Reg]) -> Vec<Operand> {
    r.iter().map(|&x| Operand::Reg(x)).collect()
}

/// A binary `i8` op (`addi` ... `remi`, `mulhii`) with signedness `signed`
/// and, for `divi`, rounding `rounding` (1 toward zero, 2 floor, 3 ceil).
pub fn binary(
    l: &mut Lowerer,
    id: OpId,
    opcode: Opcode,
    ops: &[ValueId],
    signed: bool,
    rounding: u8,
) -> Result<(), LowerError> {
    let ty = if signed { Ty::S16 } else { Ty::U16 };
    elementwise(l, id, ops, move |l, r| {
        let raw = |opc: Opc, mods: &[&'static str], t: Ty, l: &mut Lowerer| {
            l.b.op(opc, mods, &[t], t, regs(r))
        };
        Ok(match opcode {
            Opcode::AddI => raw(Opc::Add, &[], Ty::S16, l),
            Opcode::SubI => raw(Opc::Sub, &[], Ty::S16, l),
            Opcode::MulI => raw(Opc::Mul, &["lo"], Ty::S16, l),
            Opcode::AndI => raw(Opc::And, &[], Ty::B16, l),
            Opcode::OrI => raw(Opc::Or, &[], Ty::B16, l),
            Opcode::XOrI => raw(Opc::Xor, &[], Ty::B16, l),
            Opcode::ShLI => {
                let amt = amount(l, r[1]);
                l.b.op(
                    Opc::Shl,
                    &[],
                    &[Ty::B16],
                    Ty::B16,
                    smallvec![Operand::Reg(r[0]), Operand::Reg(amt)],
                )
            }
            Opcode::MulhiI => {
                let (a, b) = (widen(l, r[0], false), widen(l, r[1], false));
                let p = l.b.op(
                    Opc::Mul,
                    &["lo"],
                    &[Ty::U16],
                    Ty::U16,
                    smallvec![Operand::Reg(a), Operand::Reg(b)],
                );
                l.b.op(
                    Opc::Shr,
                    &[],
                    &[Ty::U16],
                    Ty::U16,
                    smallvec![Operand::Reg(p), Operand::Imm(8)],
                )
            }
            Opcode::ShRI => {
                let a = widen(l, r[0], signed);
                let amt = amount(l, r[1]);
                l.b.op(
                    Opc::Shr,
                    &[],
                    &[ty],
                    ty,
                    smallvec![Operand::Reg(a), Operand::Reg(amt)],
                )
            }
            Opcode::MaxI | Opcode::MinI | Opcode::RemI | Opcode::DivI => {
                let (a, b) = (widen(l, r[0], signed), widen(l, r[1], signed));
                let opc = match opcode {
                    Opcode::MaxI => Opc::Max,
                    Opcode::MinI => Opc::Min,
                    Opcode::RemI => Opc::Rem,
                    _ => Opc::Div,
                };
                let q = l.b.op(
                    opc,
                    &[],
                    &[ty],
                    ty,
                    smallvec![Operand::Reg(a), Operand::Reg(b)],
                );
                if opc != Opc::Div || rounding == 1 || (rounding == 2 && !signed) {
                    q
                } else {
                    round_quotient(l, q, a, b, ty, signed, rounding)
                }
            }
            _ => return Err(l.unsupported_feature(id, "i8 operands")),
        })
    })
}

/// Floor (2) or ceiling (3) division from the truncated quotient `q` of
/// the extended operands `a / b`.
fn round_quotient(
    l: &mut Lowerer,
    q: Reg,
    a: Reg,
    b: Reg,
    ty: Ty,
    signed: bool,
    rounding: u8,
) -> Reg {
    let r = |x: Reg| Operand::Reg(x);
    let rem = l.b.op(Opc::Rem, &[], &[ty], ty, vec![r(a), r(b)]);
    let nz = l.b.op(
        Opc::Setp,
        &["ne"],
        &[ty],
        Ty::Pred,
        vec![r(rem), Operand::Imm(0)],
    );
    let adjust = if signed {
        let x = l.b.op(Opc::Xor, &[], &[Ty::B16], Ty::B16, vec![r(a), r(b)]);
        let m = if rounding == 2 { "lt" } else { "ge" };
        let sign = l.b.op(
            Opc::Setp,
            &[m],
            &[Ty::S16],
            Ty::Pred,
            vec![r(x), Operand::Imm(0)],
        );
        l.b.op(Opc::And, &[], &[Ty::Pred], Ty::Pred, vec![r(nz), r(sign)])
    } else {
        nz
    };
    let delta = if rounding == 2 { -1 } else { 1 };
    let dv = l.b.op(
        Opc::Selp,
        &[],
        &[Ty::S16],
        Ty::S16,
        smallvec![Operand::Imm(delta), Operand::Imm(0), r(adjust)],
    );
    l.b.op(Opc::Add, &[], &[Ty::S16], Ty::S16, vec![r(q), r(dv)])
}

/// `negi` / `absi` on `i8`.
pub fn unary(l: &mut Lowerer, id: OpId, neg: bool, ops: &[ValueId]) -> Result<(), LowerError> {
    elementwise(l, id, ops, move |l, r| {
        Ok(if neg {
            l.b.op(Opc::Neg, &[], &[Ty::S16], Ty::S16, regs(r))
        } else {
            let a = widen(l, r[0], true);
            l.b.op(
                Opc::Abs,
                &[],
                &[Ty::S16],
                Ty::S16,
                smallvec![Operand::Reg(a)],
            )
        })
    })
}

/// `cmpi` on `i8` with PTX comparison `m`.
pub fn compare(
    l: &mut Lowerer,
    id: OpId,
    m: &'static str,
    signed: bool,
    ops: &[ValueId],
) -> Result<(), LowerError> {
    let ty = if signed { Ty::S16 } else { Ty::U16 };
    elementwise(l, id, ops, move |l, r| {
        let (a, b) = (widen(l, r[0], signed), widen(l, r[1], signed));
        Ok(l.b.op(
            Opc::Setp,
            &[m],
            &[ty],
            Ty::Pred,
            smallvec![Operand::Reg(a), Operand::Reg(b)],
        ))
    })
}
