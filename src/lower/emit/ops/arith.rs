//! Arithmetic, comparison, selection and math ops, honouring rounding
//! modes, flush-to-zero, NaN propagation, signedness.
use crate::ir::{Attr, OpId, Opcode, Scalar, ValueId};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::emit::context::Lowerer;
use crate::lower::error::LowerError;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};
use smallvec::smallvec;

use crate::lower::emit::ops::elementwise::elementwise;

/// The float PTX type of a float scalar.
pub fn float_ty(s: Scalar) -> Option<Ty> {
    Some(match s {
        Scalar::F16 => Ty::F16,
        Scalar::BF16 => Ty::BF16,
        Scalar::F32 | Scalar::TF32 => Ty::F32,
        Scalar::F64 => Ty::F64,
        _ => return None,
    })
}

/// The integer PTX type of an integer scalar with a signedness.
pub fn int_ty(s: Scalar, signed: bool) -> Option<Ty> {
    Some(match s.bit_width() {
        8 => {
            if signed {
                Ty::S8
            } else {
                Ty::U8
            }
        }
        16 => {
            if signed {
                Ty::S16
            } else {
                Ty::U16
            }
        }
        32 => {
            if signed {
                Ty::S32
            } else {
                Ty::U32
            }
        }
        64 => {
            if signed {
                Ty::S64
            } else {
                Ty::U64
            }
        }
        _ => return None,
    })
}

/// The rounding modifier of a `rounding_mode` enum value (`rn`, `rz`...).
pub fn rounding(v: u8) -> Option<&'static str> {
    match v {
        0 => Some("rn"),
        1 => Some("rz"),
        2 => Some("rm"),
        3 => Some("rp"),
        _ => None,
    }
}

/// The byte of enum attribute `name` of op `id`, if present.
pub fn enum_attr(l: &Lowerer, id: OpId, name: &str) -> Option<u8> {
    match l.m.ops[id].attr(name) {
        Some(Attr::Enum(_, v)) => Some(*v),
        _ => None,
    }
}

fn signed_attr(l: &Lowerer, id: OpId) -> bool {
    enum_attr(l, id, "signedness") != Some(0)
}

/// Element scalar of the first operand (or the result).
fn operand_scalar(l: &Lowerer, id: OpId) -> Option<Scalar> {
    let op = &l.m.ops[id];
    let v = op.operands.first().or(op.results.first())?;
    value_tile(l.m, *v)?.1.scalar()
}

/// Widens a 16-bit float register to f32.
pub fn to_f32(l: &mut Lowerer, s: Scalar, r: Reg) -> Reg {
    match s {
        Scalar::F16 => l.b.op(
            Opc::Cvt,
            &[],
            &[Ty::F32, Ty::F16],
            Ty::F32,
            smallvec![Operand::Reg(r)],
        ),
        Scalar::BF16 => {
            let w = l.b.op(
                Opc::Cvt,
                &[],
                &[Ty::U32, Ty::U16],
                Ty::U32,
                smallvec![Operand::Reg(r)],
            );
            l.b.op(
                Opc::Shl,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(w), Operand::Imm(16)],
            )
        }
        _ => r,
    }
}

/// Rounds an f32 register to a 16-bit float with rounding modifier `rnd`.
pub fn from_f32(l: &mut Lowerer, s: Scalar, r: Reg, rnd: &'static str) -> Reg {
    match s {
        Scalar::F16 => l.b.op(
            Opc::Cvt,
            &[rnd],
            &[Ty::F16, Ty::F32],
            Ty::F16,
            smallvec![Operand::Reg(r)],
        ),
        Scalar::BF16 => l.b.op(
            Opc::Cvt,
            &[rnd],
            &[Ty::BF16, Ty::F32],
            Ty::BF16,
            smallvec![Operand::Reg(r)],
        ),
        _ => r,
    }
}

fn regs(v: &[Reg]) -> Vec<Operand> {
    v.iter().map(|r| Operand::Reg(*r)).collect()
}

/// An op of the arithmetic family with what its lowering reads: its
/// opcode, the scalar of its operands, its `flush_to_zero` flag and its
/// operands.
struct ArithOp {
    id: OpId,
    opcode: Opcode,
    /// The element scalar of the operands.
    s: Scalar,
    ftz: bool,
    ops: Vec<ValueId>,
}

/// Lowers the arithmetic family.
pub fn lower(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let Some(s) = operand_scalar(l, id) else {
        return Err(l.unsupported(id));
    };
    let a = ArithOp {
        id,
        opcode: op.opcode,
        s,
        ftz: op.has_flag("flush_to_zero"),
        ops: op.operands.clone(),
    };
    match op.opcode {
        Opcode::AddF | Opcode::SubF | Opcode::MulF | Opcode::DivF | Opcode::Fma => {
            float_arith(l, &a)
        }
        Opcode::MaxF | Opcode::MinF => float_max_min(l, &a),
        Opcode::NegF | Opcode::AbsF => float_neg_abs(l, &a),
        Opcode::AddI
        | Opcode::SubI
        | Opcode::MulI
        | Opcode::MulhiI
        | Opcode::AndI
        | Opcode::OrI
        | Opcode::XOrI
        | Opcode::ShLI
        | Opcode::MaxI
        | Opcode::MinI
        | Opcode::ShRI
        | Opcode::DivI
        | Opcode::RemI => int_binary(l, id, s, &op.opcode, &a.ops),
        Opcode::NegI | Opcode::AbsI => int_neg_abs(l, &a),
        Opcode::CmpF => float_compare(l, &a),
        Opcode::CmpI => int_compare(l, &a),
        Opcode::Select => select(l, &a),
        _ => crate::lower::emit::ops::math::lower(l, id, s),
    }
}

/// `+ - * /` and `fma` on floats, in the op's rounding mode; 16-bit floats
/// the target cannot compute natively go through f32.
fn float_arith(l: &mut Lowerer, a: &ArithOp) -> Result<(), LowerError> {
    let (id, s, ftz) = (a.id, a.s, a.ftz);
    let rnd_attr = enum_attr(l, id, "rounding_mode");
    let fty = float_ty(s).ok_or_else(|| l.unsupported(id))?;
    let opc = match a.opcode {
        Opcode::AddF => Opc::Add,
        Opcode::SubF => Opc::Sub,
        Opcode::MulF => Opc::Mul,
        Opcode::DivF => Opc::Div,
        _ => Opc::Fma,
    };
    let rv = rnd_attr.unwrap_or(0);
    let rnd: &'static str = match (rv, a.opcode) {
        (4, Opcode::DivF) if fty != Ty::F64 => "approx",
        (5, Opcode::DivF) if fty != Ty::F64 => "full",
        _ => rounding(rv).ok_or_else(|| l.unsupported_feature(id, "this rounding mode"))?,
    };
    // 16-bit arithmetic rounds to nearest only.
    let native16 = match fty {
        Ty::F16 => opc != Opc::Div && rnd == "rn",
        Ty::BF16 => {
            rnd == "rn" && (opc == Opc::Fma || (l.plan.target.has_bf16_arith() && opc != Opc::Div))
        }
        _ => true,
    };
    let approx_like = matches!(rnd, "approx" | "full");
    elementwise(l, id, &a.ops, |l, r| {
        if native16 {
            let mut mods = vec![rnd];
            if ftz && (fty == Ty::F32 || fty == Ty::F16) {
                mods.push("ftz");
            }
            let cls = RegClass::for_bits(fty.bits());
            let d = l.b.reg(cls);
            l.b.push(Inst::new(
                opc,
                &mods,
                &[fty],
                smallvec![Operand::Reg(d)],
                regs(r),
            ));
            return Ok(d);
        }
        // Through f32: exact widening, then the op and the way back
        // both round the same way. To nearest, the double rounding
        // is innocuous for + - * / (24 >= 2*11+2 bits); a directed
        // rounding composes exactly, the 16-bit values being f32
        // values.
        let w: Vec<Reg> = r.iter().map(|&x| to_f32(l, s, x)).collect();
        let mut mods = vec![rnd];
        if ftz {
            mods.push("ftz");
        }
        let d = l.b.reg(RegClass::B32);
        l.b.push(Inst::new(
            opc,
            &mods,
            &[Ty::F32],
            smallvec![Operand::Reg(d)],
            regs(&w),
        ));
        Ok(from_f32(l, s, d, if approx_like { "rn" } else { rnd }))
    })
}

/// `max` and `min` on floats, propagating NaN when the op asks (by hand
/// for f64, which has no `max.NaN`).
fn float_max_min(l: &mut Lowerer, a: &ArithOp) -> Result<(), LowerError> {
    let (id, ftz) = (a.id, a.ftz);
    let fty = float_ty(a.s).ok_or_else(|| l.unsupported(id))?;
    let opc = if a.opcode == Opcode::MaxF {
        Opc::Max
    } else {
        Opc::Min
    };
    let nan = l.m.ops[id].has_flag("propagate_nan");
    elementwise(l, id, &a.ops, |l, r| {
        if fty == Ty::F64 && nan {
            // No max.NaN for f64: the plain result, or the NaN.
            let m = l.b.op(opc, &[], &[fty], fty, regs(r));
            let either = l.b.op(Opc::Setp, &["nan"], &[fty], Ty::Pred, regs(r));
            let q = l.b.op(Opc::Add, &["rn"], &[fty], fty, regs(r));
            return Ok(l.b.op(
                Opc::Selp,
                &[],
                &[fty],
                fty,
                smallvec![Operand::Reg(q), Operand::Reg(m), Operand::Reg(either)],
            ));
        }
        let mut mods = Vec::new();
        if ftz && fty != Ty::F64 {
            mods.push("ftz");
        }
        if nan {
            mods.push("NaN");
        }
        let d = l.b.reg(RegClass::for_bits(fty.bits()));
        l.b.push(Inst::new(
            opc,
            &mods,
            &[fty],
            smallvec![Operand::Reg(d)],
            regs(r),
        ));
        Ok(d)
    })
}

/// `-a` and `|a|` on floats (on the sign bit for 16-bit floats).
fn float_neg_abs(l: &mut Lowerer, a: &ArithOp) -> Result<(), LowerError> {
    let fty = float_ty(a.s).ok_or_else(|| l.unsupported(a.id))?;
    let neg = a.opcode == Opcode::NegF;
    elementwise(l, a.id, &a.ops, |l, r| {
        let bits = fty.bits();
        if bits == 16 {
            // Sign-bit arithmetic: exact for every value, NaN included.
            let (opc, m) = if neg {
                (Opc::Xor, 0x8000)
            } else {
                (Opc::And, 0x7fff)
            };
            return Ok(l.b.op(
                opc,
                &[],
                &[Ty::B16],
                Ty::B16,
                smallvec![Operand::Reg(r[0]), Operand::Imm(m)],
            ));
        }
        let opc = if neg { Opc::Neg } else { Opc::Abs };
        Ok(l.b.op(opc, &[], &[fty], fty, regs(r)))
    })
}

/// `-a` and `|a|` on integers.
fn int_neg_abs(l: &mut Lowerer, a: &ArithOp) -> Result<(), LowerError> {
    let (id, s) = (a.id, a.s);
    if s.bit_width() == 1 {
        // Modulo 2, -a is a; and |a| of a signed i1 (0 or -1) wraps back
        // to a.
        return elementwise(l, id, &a.ops, |_, r| Ok(r[0]));
    }
    if s.bit_width() == 8 {
        return crate::lower::emit::ops::int8::unary(l, id, a.opcode == Opcode::NegI, &a.ops);
    }
    let ity = int_ty(s, true).ok_or_else(|| l.unsupported(id))?;
    let opc = if a.opcode == Opcode::NegI {
        Opc::Neg
    } else {
        Opc::Abs
    };
    elementwise(l, id, &a.ops, |l, r| {
        Ok(l.b.op(opc, &[], &[ity], ity, regs(r)))
    })
}

/// `cmpf`: `setp` by the op's predicate and ordering (16-bit floats
/// compared in f32).
fn float_compare(l: &mut Lowerer, a: &ArithOp) -> Result<(), LowerError> {
    let (id, s) = (a.id, a.s);
    let fty = float_ty(s).ok_or_else(|| l.unsupported(id))?;
    let pred = enum_attr(l, id, "comparison_predicate").unwrap_or(0);
    let ordered = enum_attr(l, id, "comparison_ordering") != Some(0);
    let base = ["eq", "ne", "lt", "le", "gt", "ge"]
        .get(pred as usize)
        .copied()
        .ok_or_else(|| l.unsupported(id))?;
    let m: &'static str = if ordered {
        base
    } else {
        ["equ", "neu", "ltu", "leu", "gtu", "geu"][pred as usize]
    };
    elementwise(l, id, &a.ops, |l, r| {
        let (ty, r): (Ty, Vec<Reg>) = if fty.bits() == 16 {
            (Ty::F32, r.iter().map(|&x| to_f32(l, s, x)).collect())
        } else {
            (fty, r.to_vec())
        };
        Ok(l.b.op(Opc::Setp, &[m], &[ty], Ty::Pred, regs(&r)))
    })
}

/// `cmpi`: `setp` by the op's predicate and signedness (i1 compared as
/// 0/1 or 0/-1 in 32 bits, i8 by its own lowering).
fn int_compare(l: &mut Lowerer, a: &ArithOp) -> Result<(), LowerError> {
    let (id, s) = (a.id, a.s);
    let signed = signed_attr(l, id);
    let pred = enum_attr(l, id, "comparison_predicate").unwrap_or(0);
    let m = ["eq", "ne", "lt", "le", "gt", "ge"]
        .get(pred as usize)
        .copied()
        .ok_or_else(|| l.unsupported(id))?;
    if s == Scalar::I1 {
        return elementwise(l, id, &a.ops, |l, r| {
            // i1 compares as 0/1 (signed: true is -1).
            let w: Vec<Reg> = r
                .iter()
                .map(|&x| {
                    let v = if signed { -1 } else { 1 };
                    l.b.op(
                        Opc::Selp,
                        &[],
                        &[Ty::S32],
                        Ty::S32,
                        smallvec![Operand::Imm(v), Operand::Imm(0), Operand::Reg(x)],
                    )
                })
                .collect();
            Ok(l.b.op(Opc::Setp, &[m], &[Ty::S32], Ty::Pred, regs(&w)))
        });
    }
    let ity = if matches!(m, "eq" | "ne") {
        Ty::from_bits(s.bit_width())
    } else {
        int_ty(s, signed).ok_or_else(|| l.unsupported(id))?
    };
    if matches!(ity, Ty::B8 | Ty::S8 | Ty::U8) {
        return crate::lower::emit::ops::int8::compare(l, id, m, signed, &a.ops);
    }
    elementwise(l, id, &a.ops, |l, r| {
        Ok(l.b.op(Opc::Setp, &[m], &[ity], Ty::Pred, regs(r)))
    })
}

/// `select`: `selp` on its condition (and/or logic for predicates).
fn select(l: &mut Lowerer, a: &ArithOp) -> Result<(), LowerError> {
    let id = a.id;
    let Some(rs) = l.m.ops[id]
        .results
        .first()
        .and_then(|&v| value_tile(l.m, v))
    else {
        return Err(l.unsupported(id));
    };
    let e = rs.1;
    elementwise(l, id, &a.ops, |l, r| {
        if e.bits() == 1 {
            let a = l.b.op(
                Opc::And,
                &[],
                &[Ty::Pred],
                Ty::Pred,
                smallvec![Operand::Reg(r[0]), Operand::Reg(r[1])],
            );
            let nc = l.b.op(
                Opc::Not,
                &[],
                &[Ty::Pred],
                Ty::Pred,
                smallvec![Operand::Reg(r[0])],
            );
            let b = l.b.op(
                Opc::And,
                &[],
                &[Ty::Pred],
                Ty::Pred,
                smallvec![Operand::Reg(nc), Operand::Reg(r[2])],
            );
            return Ok(l.b.op(
                Opc::Or,
                &[],
                &[Ty::Pred],
                Ty::Pred,
                smallvec![Operand::Reg(a), Operand::Reg(b)],
            ));
        }
        let ty = Ty::from_bits(e.bits().max(16));
        Ok(l.b.op(
            Opc::Selp,
            &[],
            &[ty],
            ty,
            smallvec![Operand::Reg(r[1]), Operand::Reg(r[2]), Operand::Reg(r[0])],
        ))
    })
}

/// Integer arithmetic on i1 (predicates; 0 and 1 unsigned, 0 and -1
/// signed), modulo 2: `+` and `-` are xor, `*` and, a shift left keeps `a`
/// only by 0, max and min are and/or by signedness; a division by the one
/// non-zero divisor gives `a` back, its remainder 0, and the high half of
/// a 1-bit product is 0.
fn i1_binary(
    l: &mut Lowerer,
    id: OpId,
    opcode: Opcode,
    ops: &[crate::ir::ValueId],
    signed: bool,
) -> Result<(), LowerError> {
    let p = Ty::Pred;
    elementwise(l, id, ops, move |l, r| {
        let (a, b) = (Operand::Reg(r[0]), Operand::Reg(r[1]));
        let bin = |l: &mut Lowerer, opc: Opc, a: Operand, b: Operand| {
            l.b.op(opc, &[], &[p], p, smallvec![a, b])
        };
        Ok(match opcode {
            Opcode::AndI | Opcode::MulI => bin(l, Opc::And, a, b),
            Opcode::OrI => bin(l, Opc::Or, a, b),
            Opcode::XOrI | Opcode::AddI | Opcode::SubI => bin(l, Opc::Xor, a, b),
            // `a << b` and, unsigned, `a >> b`: `a` when `b` is 0, else 0.
            Opcode::ShLI => and_not(l, r[0], r[1]),
            Opcode::ShRI if !signed => and_not(l, r[0], r[1]),
            // The sign bit shifted in is the bit itself.
            Opcode::ShRI | Opcode::DivI => r[0],
            Opcode::MaxI if signed => bin(l, Opc::And, a, b),
            Opcode::MaxI => bin(l, Opc::Or, a, b),
            Opcode::MinI if signed => bin(l, Opc::Or, a, b),
            Opcode::MinI => bin(l, Opc::And, a, b),
            Opcode::RemI | Opcode::MulhiI => l.imm(Elem::Num(Scalar::I1), 0),
            _ => return Err(l.unsupported_feature(id, "i1 operands")),
        })
    })
}

/// `a && !b` on predicates.
fn and_not(l: &mut Lowerer, a: Reg, b: Reg) -> Reg {
    let nb = l.b.op(
        Opc::Not,
        &[],
        &[Ty::Pred],
        Ty::Pred,
        smallvec![Operand::Reg(b)],
    );
    l.b.op(
        Opc::And,
        &[],
        &[Ty::Pred],
        Ty::Pred,
        smallvec![Operand::Reg(a), Operand::Reg(nb)],
    )
}

fn int_binary(
    l: &mut Lowerer,
    id: OpId,
    s: Scalar,
    opcode: &Opcode,
    ops: &[crate::ir::ValueId],
) -> Result<(), LowerError> {
    let signed = signed_attr(l, id);
    let bits = s.bit_width();
    if bits == 1 {
        return i1_binary(l, id, *opcode, ops, signed);
    }
    if bits == 8 {
        let rounding = enum_attr(l, id, "rounding").unwrap_or(1);
        return crate::lower::emit::ops::int8::binary(l, id, *opcode, ops, signed, rounding);
    }
    let sty = int_ty(s, true).ok_or_else(|| l.unsupported(id))?;
    let ty = int_ty(s, signed).ok_or_else(|| l.unsupported(id))?;
    let bty = Ty::from_bits(bits);
    let uty = int_ty(s, false).ok_or_else(|| l.unsupported(id))?;
    let rounding = enum_attr(l, id, "rounding").unwrap_or(1);
    let opcode = *opcode;
    elementwise(l, id, ops, move |l, r| {
        let (opc, mods, t): (Opc, Vec<&'static str>, Ty) = match opcode {
            Opcode::AddI => (Opc::Add, vec![], sty),
            Opcode::SubI => (Opc::Sub, vec![], sty),
            Opcode::MulI => (Opc::Mul, vec!["lo"], sty),
            // The high half of the unsigned product, as the spec defines it.
            Opcode::MulhiI => (Opc::Mul, vec!["hi"], uty),
            Opcode::AndI => (Opc::And, vec![], bty),
            Opcode::OrI => (Opc::Or, vec![], bty),
            Opcode::XOrI => (Opc::Xor, vec![], bty),
            Opcode::ShLI => (Opc::Shl, vec![], bty),
            Opcode::ShRI => (Opc::Shr, vec![], ty),
            Opcode::MaxI => (Opc::Max, vec![], ty),
            Opcode::MinI => (Opc::Min, vec![], ty),
            Opcode::RemI => (Opc::Rem, vec![], ty),
            _ => (Opc::Div, vec![], ty),
        };
        // Shift amounts are 32-bit in PTX.
        let mut srcs = regs(r);
        if matches!(opc, Opc::Shl | Opc::Shr) && bits != 32 {
            let from = if bits == 64 { Ty::U64 } else { Ty::U16 };
            let amt = l.b.op(
                Opc::Cvt,
                &[],
                &[Ty::U32, from],
                Ty::U32,
                smallvec![Operand::Reg(r[1])],
            );
            srcs[1] = Operand::Reg(amt);
        }
        let q = l.b.op(opc, &mods, &[t], t, srcs);
        if opc != Opc::Div || rounding == 1 || (rounding == 2 && !signed) {
            return Ok(q);
        }
        // Floor (2) or ceiling (3) division: adjust the truncated quotient
        // by one when the remainder is non-zero and its sign calls for it.
        let rem = l.b.op(Opc::Rem, &[], &[t], t, regs(r));
        let nz = l.b.op(
            Opc::Setp,
            &["ne"],
            &[t],
            Ty::Pred,
            smallvec![Operand::Reg(rem), Operand::Imm(0)],
        );
        let adjust = if signed {
            let x = l.b.op(Opc::Xor, &[], &[bty], bty, regs(r));
            let m = if rounding == 2 { "lt" } else { "ge" };
            let sign = l.b.op(
                Opc::Setp,
                &[m],
                &[t],
                Ty::Pred,
                smallvec![Operand::Reg(x), Operand::Imm(0)],
            );
            l.b.op(
                Opc::And,
                &[],
                &[Ty::Pred],
                Ty::Pred,
                smallvec![Operand::Reg(nz), Operand::Reg(sign)],
            )
        } else {
            nz
        };
        let delta = if rounding == 2 { -1 } else { 1 };
        let dv = l.b.op(
            Opc::Selp,
            &[],
            &[sty],
            sty,
            smallvec![Operand::Imm(delta), Operand::Imm(0), Operand::Reg(adjust)],
        );
        Ok(l.b.op(
            Opc::Add,
            &[],
            &[sty],
            sty,
            smallvec![Operand::Reg(q), Operand::Reg(dv)],
        ))
    })
}

/// Lowers `offset`: pointer plus an element count scaled by the pointee size.
pub fn offset(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let Some(&res) = op.results.first() else {
        return Err(l.unsupported(id));
    };
    let size = match l.m.types.try_get(l.m.values[res].ty) {
        Some(crate::ir::Type::Tile { element, .. }) => match l.m.types.try_get(*element) {
            Some(crate::ir::Type::Pointer { pointee, .. }) => {
                // tf32 (19 bits) is stored in 4 bytes.
                crate::lower::analysis::values::scalar_of(l.m, *pointee)
                    .map(|s| i64::from(s.bit_width().max(8).next_power_of_two() / 8))
            }
            _ => None,
        },
        _ => None,
    }
    .ok_or_else(|| l.unsupported(id))?;
    let Some(s) = op
        .operands
        .get(1)
        .and_then(|&v| value_tile(l.m, v))
        .and_then(|t| t.1.scalar())
    else {
        return Err(l.unsupported(id));
    };
    let ops = op.operands.clone();
    elementwise(l, id, &ops, |l, r| {
        let bytes = match s.bit_width() {
            64 => l.b.op(
                Opc::Mul,
                &["lo"],
                &[Ty::S64],
                Ty::S64,
                smallvec![Operand::Reg(r[1]), Operand::Imm(size)],
            ),
            32 => l.b.op(
                Opc::Mul,
                &["wide"],
                &[Ty::S32],
                Ty::S64,
                smallvec![Operand::Reg(r[1]), Operand::Imm(size)],
            ),
            16 => {
                let w = l.b.op(
                    Opc::Cvt,
                    &[],
                    &[Ty::S64, Ty::S16],
                    Ty::S64,
                    smallvec![Operand::Reg(r[1])],
                );
                l.b.op(
                    Opc::Mul,
                    &["lo"],
                    &[Ty::S64],
                    Ty::S64,
                    smallvec![Operand::Reg(w), Operand::Imm(size)],
                )
            }
            _ => return Err(l.unsupported(id)),
        };
        Ok(l.b.op(
            Opc::Add,
            &[],
            &[Ty::S64],
            Ty::S64,
            smallvec![Operand::Reg(r[0]), Operand::Reg(bytes)],
        ))
    })
}
