//! Math functions: square roots, rounding to integral values, and the
//! transcendental functions (accurate unless the op allows approximation).
use crate::ir::{OpId, Opcode, Scalar, ValueId};
use crate::lower::emit::context::Lowerer;
use crate::lower::error::LowerError;
use crate::ptx::{Opc, Operand, Reg, RegClass, Ty};
use smallvec::smallvec;

use crate::lower::emit::ops::arith::{enum_attr, float_ty, from_f32, rounding, to_f32};
use crate::lower::emit::ops::elementwise::elementwise;
use crate::lower::emit::ops::fmod_f32;
use crate::lower::emit::ops::math_f32;
use crate::lower::emit::ops::math_f64;
use crate::lower::emit::ops::math_f64_trig;

/// An op of the math family with what its lowering reads: the element
/// scalar, the type it computes in, its `flush_to_zero` flag and operands.
struct MathOp {
    id: OpId,
    /// The element scalar of the operands and result.
    s: Scalar,
    /// The type the op computes in: f64 for f64, f32 otherwise (16-bit
    /// floats are widened and rounded back).
    wide: Ty,
    ftz: bool,
    ops: Vec<ValueId>,
}

impl MathOp {
    /// Applies `f` to `r` widened to f32 (or f64) and rounds the result
    /// back to the element type.
    fn through(&self, l: &mut Lowerer, r: Reg, f: &dyn Fn(&mut Lowerer, Reg) -> Reg) -> Reg {
        let w = to_f32(l, self.s, r);
        let d = f(l, w);
        from_f32(l, self.s, d, "rn")
    }
}

/// Lowers the math family (other ops are reported unsupported).
pub fn lower(l: &mut Lowerer, id: OpId, s: Scalar) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let fty = float_ty(s).ok_or_else(|| l.unsupported(id))?;
    let m = MathOp {
        id,
        s,
        // Computes in f32 (or f64) and rounds back to 16-bit floats.
        wide: if fty == Ty::F64 { Ty::F64 } else { Ty::F32 },
        ftz: op.has_flag("flush_to_zero"),
        ops: op.operands.clone(),
    };
    let wide = m.wide;
    match op.opcode {
        Opcode::Sqrt => lower_sqrt(l, &m),
        Opcode::Floor | Opcode::Ceil => lower_round_integral(l, &m, op.opcode == Opcode::Floor),
        Opcode::Rsqrt => lower_approx(l, &m, op.opcode),
        Opcode::Exp2 if wide == Ty::F32 => lower_approx(l, &m, op.opcode),
        Opcode::Exp if wide == Ty::F32 && enum_attr(l, id, "rounding_mode") == Some(4) => {
            lower_approx(l, &m, op.opcode)
        }
        // `tanh.approx.f32` (sm_75 and newer), as NVIDIA's tileiras emits
        // for the approximate rounding mode.
        Opcode::TanH if wide == Ty::F32 && enum_attr(l, id, "rounding_mode") == Some(4) => {
            lower_approx(l, &m, op.opcode)
        }
        Opcode::Exp
        | Opcode::Log
        | Opcode::Log2
        | Opcode::Sin
        | Opcode::Cos
        | Opcode::Tan
        | Opcode::SinH
        | Opcode::CosH
        | Opcode::TanH
            if wide == Ty::F32 =>
        {
            lower_f32_unary(l, &m, op.opcode)
        }
        Opcode::FPowF | Opcode::Atan2 | Opcode::RemF if wide == Ty::F32 => {
            lower_f32_binary(l, &m, op.opcode)
        }
        Opcode::Exp2
        | Opcode::Exp
        | Opcode::Log
        | Opcode::Log2
        | Opcode::Sin
        | Opcode::Cos
        | Opcode::Tan
        | Opcode::SinH
        | Opcode::CosH
        | Opcode::TanH
            if wide == Ty::F64 =>
        {
            lower_f64_unary(l, &m, op.opcode)
        }
        Opcode::FPowF | Opcode::Atan2 | Opcode::RemF if wide == Ty::F64 => {
            lower_f64_binary(l, &m, op.opcode)
        }
        Opcode::FPowI => lower_fpowi(l, &m),
        _ => Err(l.unsupported(id)),
    }
}

/// `sqrt` in the op's rounding mode (`sqrt.approx` for the approximate
/// mode in f32).
fn lower_sqrt(l: &mut Lowerer, m: &MathOp) -> Result<(), LowerError> {
    let (id, wide, ftz) = (m.id, m.wide, m.ftz);
    let rv = enum_attr(l, id, "rounding_mode").unwrap_or(0);
    let rm: &'static str = if rv == 4 && wide == Ty::F32 {
        "approx"
    } else {
        rounding(rv).ok_or_else(|| l.unsupported_feature(id, "this rounding mode"))?
    };
    elementwise(l, id, &m.ops, |l, r| {
        Ok(m.through(l, r[0], &|l, x| {
            let mods: Vec<&'static str> = if ftz && wide == Ty::F32 {
                vec![rm, "ftz"]
            } else {
                vec![rm]
            };
            l.b.op(Opc::Sqrt, &mods, &[wide], wide, smallvec![Operand::Reg(x)])
        }))
    })
}

/// `floor` (`floor` true) or `ceil`: a conversion rounding to an integral
/// value.
fn lower_round_integral(l: &mut Lowerer, m: &MathOp, floor: bool) -> Result<(), LowerError> {
    let wide = m.wide;
    let rm = if floor { "rmi" } else { "rpi" };
    elementwise(l, m.id, &m.ops, |l, r| {
        Ok(m.through(l, r[0], &|l, x| {
            l.b.op(
                Opc::Cvt,
                &[rm],
                &[wide, wide],
                wide,
                smallvec![Operand::Reg(x)],
            )
        }))
    })
}

/// The ops PTX approximates in one instruction: `rsqrt`, `exp2` in f32,
/// and `exp` and `tanh` in f32 under the approximate rounding mode.
fn lower_approx(l: &mut Lowerer, m: &MathOp, opcode: Opcode) -> Result<(), LowerError> {
    let (wide, ftz) = (m.wide, m.ftz);
    match opcode {
        Opcode::Rsqrt => elementwise(l, m.id, &m.ops, |l, r| {
            Ok(m.through(l, r[0], &|l, x| {
                let mods: Vec<&'static str> = if ftz {
                    vec!["approx", "ftz"]
                } else {
                    vec!["approx"]
                };
                l.b.op(Opc::Rsqrt, &mods, &[wide], wide, smallvec![Operand::Reg(x)])
            }))
        }),
        Opcode::Exp2 => elementwise(l, m.id, &m.ops, |l, r| {
            Ok(m.through(l, r[0], &|l, x| {
                let mods: Vec<&'static str> = if ftz {
                    vec!["approx", "ftz"]
                } else {
                    vec!["approx"]
                };
                l.b.op(
                    Opc::Ex2,
                    &mods,
                    &[Ty::F32],
                    Ty::F32,
                    smallvec![Operand::Reg(x)],
                )
            }))
        }),
        Opcode::Exp => elementwise(l, m.id, &m.ops, |l, r| {
            Ok(m.through(l, r[0], &|l, x| {
                let t = l.b.op(
                    Opc::Mul,
                    &["rn"],
                    &[Ty::F32],
                    Ty::F32,
                    vec![
                        Operand::Reg(x),
                        Operand::F32(std::f32::consts::LOG2_E.to_bits()),
                    ],
                );
                // Subnormal results flush only under the op's `ftz`, as in
                // NVIDIA's `ex2.approx.f32`.
                let mods: &[&'static str] = if ftz { &["approx", "ftz"] } else { &["approx"] };
                l.b.op(
                    Opc::Ex2,
                    mods,
                    &[Ty::F32],
                    Ty::F32,
                    smallvec![Operand::Reg(t)],
                )
            }))
        }),
        Opcode::TanH => elementwise(l, m.id, &m.ops, |l, r| {
            Ok(m.through(l, r[0], &|l, x| {
                l.b.op(
                    Opc::Tanh,
                    &["approx"],
                    &[Ty::F32],
                    Ty::F32,
                    smallvec![Operand::Reg(x)],
                )
            }))
        }),
        _ => Err(l.unsupported(m.id)),
    }
}

/// The accurate one-operand transcendental functions in f32 (16-bit
/// floats widened to f32 and rounded back).
fn lower_f32_unary(l: &mut Lowerer, m: &MathOp, opcode: Opcode) -> Result<(), LowerError> {
    elementwise(l, m.id, &m.ops, |l, r| {
        Ok(m.through(l, r[0], &|l, x| match opcode {
            Opcode::Exp => math_f32::exp(l, x),
            Opcode::Log => math_f32::log(l, x, false),
            Opcode::Log2 => math_f32::log(l, x, true),
            Opcode::Sin => math_f32::trig(l, x, Opcode::Sin),
            Opcode::Cos => math_f32::trig(l, x, Opcode::Cos),
            Opcode::Tan => math_f32::trig(l, x, Opcode::Tan),
            Opcode::SinH => math_f32::sinh_cosh(l, x, false),
            Opcode::CosH => math_f32::sinh_cosh(l, x, true),
            _ => math_f32::tanh(l, x),
        }))
    })
}

/// `pow`, `atan2` and `remf` in f32 (16-bit floats widened to f32 and
/// rounded back).
fn lower_f32_binary(l: &mut Lowerer, m: &MathOp, opcode: Opcode) -> Result<(), LowerError> {
    let s = m.s;
    elementwise(l, m.id, &m.ops, |l, r| {
        let a = to_f32(l, s, r[0]);
        let b = to_f32(l, s, r[1]);
        let d = match opcode {
            Opcode::FPowF => math_f32::pow(l, a, b),
            Opcode::Atan2 => math_f32::atan2(l, a, b),
            _ => fmod_f32::fmod(l, a, b),
        };
        Ok(from_f32(l, s, d, "rn"))
    })
}

/// The one-operand transcendental functions in f64.
fn lower_f64_unary(l: &mut Lowerer, m: &MathOp, opcode: Opcode) -> Result<(), LowerError> {
    elementwise(l, m.id, &m.ops, |l, r| {
        let x = r[0];
        Ok(match opcode {
            Opcode::Exp2 => math_f64::exp2(l, x),
            Opcode::Exp => math_f64::exp(l, x),
            Opcode::Log => math_f64::log(l, x, false),
            Opcode::Log2 => math_f64::log(l, x, true),
            Opcode::Sin => math_f64_trig::sin_cos(l, x, false),
            Opcode::Cos => math_f64_trig::sin_cos(l, x, true),
            Opcode::Tan => math_f64_trig::tan(l, x),
            Opcode::SinH => math_f64::sinh_cosh(l, x, false),
            Opcode::CosH => math_f64::sinh_cosh(l, x, true),
            _ => math_f64::tanh(l, x),
        })
    })
}

/// `pow`, `atan2` and `remf` in f64.
fn lower_f64_binary(l: &mut Lowerer, m: &MathOp, opcode: Opcode) -> Result<(), LowerError> {
    elementwise(l, m.id, &m.ops, |l, r| {
        Ok(match opcode {
            Opcode::FPowF => math_f64::pow(l, r[0], r[1]),
            Opcode::Atan2 => math_f64_trig::atan2(l, r[0], r[1]),
            _ => math_f64::fmod(l, r[0], r[1]),
        })
    })
}

/// `fpowi`: a float to an integer power (see [`powi`]), in f32 for 16-bit
/// floats.
fn lower_fpowi(l: &mut Lowerer, m: &MathOp) -> Result<(), LowerError> {
    let (id, s, wide) = (m.id, m.s, m.wide);
    let ne = m
        .ops
        .get(1)
        .and_then(|&v| crate::lower::analysis::values::value_tile(l.m, v))
        .and_then(|(_, e)| e.scalar())
        .ok_or_else(|| l.unsupported(id))?;
    elementwise(l, id, &m.ops, |l, r| {
        let x = if wide == Ty::F64 {
            r[0]
        } else {
            to_f32(l, s, r[0])
        };
        let d = powi(l, wide, x, r[1], ne.bit_width())
            .ok_or_else(|| l.unsupported_feature(id, "this exponent type"))?;
        Ok(if wide == Ty::F64 {
            d
        } else {
            from_f32(l, s, d, "rn")
        })
    })
}

/// `x^n` for an integer `n` of `bits` bits by repeated squaring, in `ty`
/// (f32 or f64): `r = x` if `|n|` is odd else 1, then for each further bit
/// of `|n|` square `x` and multiply it in where the bit is set; `1/r`
/// (`rcp.rn`) for negative `n`. NVIDIA's tileiras computes `fpowi` the
/// same way, so results agree bit for bit.
fn powi(l: &mut Lowerer, ty: Ty, x: Reg, n: Reg, bits: u32) -> Option<Reg> {
    let r = |x: Reg| Operand::Reg(x);
    let one = if ty == Ty::F64 {
        Operand::F64(1f64.to_bits())
    } else {
        Operand::F32(1f32.to_bits())
    };
    if bits == 1 {
        // A signed i1 is 0 or -1: x^0 = 1, x^-1 = 1/x.
        let inv = l.b.op(Opc::Rcp, &["rn"], &[ty], ty, vec![r(x)]);
        return Some(l.b.op(Opc::Selp, &[], &[ty], ty, vec![r(inv), one, r(n)]));
    }
    let (sty, bty) = match bits {
        8 | 16 => (Ty::S16, Ty::B16),
        32 => (Ty::S32, Ty::B32),
        64 => (Ty::S64, Ty::B64),
        _ => return None,
    };
    // |n| (the most negative n stays itself: as unsigned, its magnitude).
    let nn = if bits == 8 {
        // An i8 arrives in a 16-bit register; sign-extend its low byte.
        l.b.op(Opc::Cvt, &[], &[Ty::S16, Ty::S8], Ty::S16, vec![r(n)])
    } else {
        n
    };
    let neg = l.b.op(Opc::Neg, &[], &[sty], sty, vec![r(nn)]);
    let a0 = l.b.op(Opc::Max, &[], &[sty], sty, vec![r(nn), r(neg)]);
    let uty = if bits == 64 { Ty::U64 } else { Ty::U32 };
    let a0 = if bty == Ty::B16 {
        l.b.op(Opc::Cvt, &[], &[Ty::U32, Ty::U16], Ty::U32, vec![r(a0)])
    } else {
        a0
    };
    let ubty = Ty::from_bits(uty.bits());
    let low =
        l.b.op(Opc::And, &[], &[ubty], ubty, vec![r(a0), Operand::Imm(1)]);
    let odd = l.b.op(
        Opc::Setp,
        &["ne"],
        &[ubty],
        Ty::Pred,
        vec![r(low), Operand::Imm(0)],
    );
    let rv = l.b.reg(RegClass::for_bits(ty.bits()));
    l.b.op_into(rv, Opc::Selp, &[], &[ty], vec![r(x), one, r(odd)]);
    let xv = l.b.reg(RegClass::for_bits(ty.bits()));
    l.b.copy(xv, x);
    let av = l.b.reg(RegClass::for_bits(uty.bits()));
    l.b.op_into(av, Opc::Shr, &[], &[uty], vec![r(a0), Operand::Imm(1)]);
    l.b.begin_loop();
    let more = l.b.op(
        Opc::Setp,
        &["ne"],
        &[ubty],
        Ty::Pred,
        vec![r(av), Operand::Imm(0)],
    );
    l.b.begin_loop_body(more, true);
    l.b.op_into(xv, Opc::Mul, &["rn"], &[ty], vec![r(xv), r(xv)]);
    let bit =
        l.b.op(Opc::And, &[], &[ubty], ubty, vec![r(av), Operand::Imm(1)]);
    let set = l.b.op(
        Opc::Setp,
        &["ne"],
        &[ubty],
        Ty::Pred,
        vec![r(bit), Operand::Imm(0)],
    );
    let p = l.b.op(Opc::Mul, &["rn"], &[ty], ty, vec![r(rv), r(xv)]);
    l.b.op_into(rv, Opc::Selp, &[], &[ty], vec![r(p), r(rv), r(set)]);
    l.b.op_into(av, Opc::Shr, &[], &[uty], vec![r(av), Operand::Imm(1)]);
    l.b.end_loop();
    let negative = l.b.op(
        Opc::Setp,
        &["lt"],
        &[sty],
        Ty::Pred,
        vec![r(nn), Operand::Imm(0)],
    );
    let inv = l.b.op(Opc::Rcp, &["rn"], &[ty], ty, vec![r(rv)]);
    Some(l.b.op(Opc::Selp, &[], &[ty], ty, vec![r(inv), r(rv), r(negative)]))
}
