//! Conversions: integer extension and truncation, float-to-float,
//! float-to-integer (saturating, as PTX `cvt` does), integer-to-float and
//! bitcasts.
use crate::ir::{OpId, Opcode, Scalar};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::emit::context::Lowerer;
use crate::lower::error::LowerError;
use crate::ptx::{Opc, Operand, Reg, Ty};
use smallvec::smallvec;

use crate::lower::emit::ops::arith::{enum_attr, float_ty, from_f32, int_ty, rounding, to_f32};
use crate::lower::emit::ops::elementwise::elementwise;
use crate::lower::emit::ops::subbyte;
use crate::lower::emit::ops::{f4, f8, f8_scale};

/// `cvt.<mods>.<to>.<from>` of `x` into a fresh register.
fn cvt(l: &mut Lowerer, mods: &[&'static str], to: Ty, from: Ty, x: Reg) -> Reg {
    l.b.op(Opc::Cvt, mods, &[to, from], to, smallvec![Operand::Reg(x)])
}

/// Lowers the conversion family.
pub fn lower(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let (Some(&src), Some(&res)) = (op.operands.first(), op.results.first()) else {
        return Err(l.unsupported(id));
    };
    let (Some((_, Elem::Num(from))), Some((_, Elem::Num(to)))) =
        (value_tile(l.m, src), value_tile(l.m, res))
    else {
        return Err(l.unsupported(id));
    };
    let signed = enum_attr(l, id, "signedness") != Some(0);
    let rv = enum_attr(l, id, "rounding_mode").unwrap_or(0);
    let (fb, tb) = (from.bit_width(), to.bit_width());
    match op.opcode {
        Opcode::ExtI | Opcode::TruncI if fb == 4 || tb == 4 => {
            subbyte::int4_conversion(l, id, src, from, to, signed)
        }
        Opcode::ExtI | Opcode::TruncI => {
            int_resize(l, id, src, from, to, signed, op.opcode == Opcode::ExtI)
        }
        Opcode::FToF if from == Scalar::F4E2M1FN || to == Scalar::F4E2M1FN => {
            f4::conversion(l, id, src, from, to, rv)
        }
        Opcode::IToF if from == Scalar::I1 => itof_i1(l, id, src, to, signed),
        Opcode::IToF if to == Scalar::F4E2M1FN => f4::from_int(l, id, src, from, signed, rv),
        Opcode::FToF if f8_scale::is_scale(from) || f8_scale::is_scale(to) => {
            f8_scale::conversion(l, id, src, from, to, rv)
        }
        Opcode::FToF if is_f8(from) || is_f8(to) => f8_conversion(l, id, src, from, to, rv),
        Opcode::FToF => float_to_float(l, id, src, from, to, rv),
        Opcode::IToF if f8_scale::is_scale(to) => f8_scale::from_int(l, id, src, from, to, signed),
        // Through f32, exact below 2^24, far past where both formats
        // saturate (to their largest finite value): one rounding.
        Opcode::IToF if to == Scalar::F8E4M3FN => {
            itof_through_f32(l, id, src, from, signed, |l, x| {
                f8::f32_to_f8(l, Scalar::F8E4M3FN, x)
            })
        }
        Opcode::IToF if to == Scalar::F8E5M2 => {
            itof_through_f32(l, id, src, from, signed, |l, x| {
                f8::f32_to_f8(l, Scalar::F8E5M2, x)
            })
        }
        Opcode::FToI if to == Scalar::I1 => ftoi_i1(l, id, src, from),
        Opcode::FToI => float_to_int(l, id, src, from, to, signed, rv),
        Opcode::IToF => int_to_float(l, id, src, from, to, signed, rv),
        _ => {
            // Bitcast between same-width kinds: registers are untyped bits
            // (i1 to i1 included).
            if fb != tb {
                return Err(l.unsupported(id));
            }
            elementwise(l, id, &[src], |_, r| Ok(r[0]))
        }
    }
}

/// Lowers `int_to_ptr`, `ptr_to_int` and `ptr_to_ptr` (op `id`): pointers
/// are 64-bit integers in registers, so each register passes unchanged.
pub fn lower_ptr_cast(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let src = *l.m.ops[id]
        .operands
        .first()
        .ok_or_else(|| l.unsupported(id))?;
    let bits = value_tile(l.m, src).map(|(_, e)| e.bits());
    if bits != Some(64) {
        return Err(l.unsupported_feature(id, "a non-64-bit integer"));
    }
    elementwise(l, id, &[src], |_, r| Ok(r[0]))
}

/// `exti` (`ext`) or `trunci` of `src` from integer type `from` to `to`:
/// i1 sources select 0 or 1 (-1 when sign-extended), i1 results test the
/// low bit, the rest convert with `cvt`.
fn int_resize(
    l: &mut Lowerer,
    id: OpId,
    src: crate::ir::ValueId,
    from: Scalar,
    to: Scalar,
    signed: bool,
    ext: bool,
) -> Result<(), LowerError> {
    let (fb, tb) = (from.bit_width(), to.bit_width());
    elementwise(l, id, &[src], |l, r| {
        if fb == 1 {
            let v = if signed && ext { -1 } else { 1 };
            let t = Ty::from_bits(tb.max(16));
            let t = if t == Ty::B16 {
                Ty::S16
            } else if t == Ty::B32 {
                Ty::S32
            } else {
                Ty::S64
            };
            return Ok(l.b.op(
                Opc::Selp,
                &[],
                &[t],
                t,
                smallvec![Operand::Imm(v), Operand::Imm(0), Operand::Reg(r[0])],
            ));
        }
        if tb == 1 {
            // An i8 lives in a 16-bit register.
            let t = Ty::from_bits(fb.max(16));
            let low = l.b.op(
                Opc::And,
                &[],
                &[t],
                t,
                smallvec![Operand::Reg(r[0]), Operand::Imm(1)],
            );
            return Ok(l.b.op(
                Opc::Setp,
                &["ne"],
                &[t],
                Ty::Pred,
                smallvec![Operand::Reg(low), Operand::Imm(0)],
            ));
        }
        let (ft, tt) = if ext {
            (int_ty(from, signed), int_ty(to, signed))
        } else {
            (int_ty(from, false), int_ty(to, false))
        };
        let (Some(ft), Some(tt)) = (ft, tt) else {
            return Err(l.unsupported(id));
        };
        Ok(cvt(l, &[], tt, ft, r[0]))
    })
}

/// `ftof` of `src` between float types `from` and `to` other than the 4-
/// and 8-bit ones, rounding mode `rv`: exact when widening, else one
/// rounding.
fn float_to_float(
    l: &mut Lowerer,
    id: OpId,
    src: crate::ir::ValueId,
    from: Scalar,
    to: Scalar,
    rv: u8,
) -> Result<(), LowerError> {
    let (fb, tb) = (from.bit_width(), to.bit_width());
    let (Some(ft), Some(tt)) = (float_ty(from), float_ty(to)) else {
        return Err(l.unsupported(id));
    };
    if to == Scalar::TF32 {
        return to_tf32(l, id, src, from, rv);
    }
    // Widening is exact: any rounding mode the verifier allows
    // (nearest_away included) gives the same value.
    let rnd = if tb > fb || ft == tt {
        "rn"
    } else {
        rounding(rv).ok_or_else(|| l.unsupported_feature(id, "this rounding mode"))?
    };
    elementwise(l, id, &[src], |l, r| {
        if tb > fb || (ft == tt) {
            // Exact widening (bf16 through its bit pattern).
            let w = if from == Scalar::BF16 || from == Scalar::F16 {
                to_f32(l, from, r[0])
            } else {
                r[0]
            };
            let wt = if from == Scalar::BF16 || from == Scalar::F16 {
                Ty::F32
            } else {
                ft
            };
            if wt == tt {
                return Ok(w);
            }
            return Ok(cvt(l, &[], tt, wt, w));
        }
        if ft == Ty::F64 && tt == Ty::BF16 {
            return Ok(f64_to_bf16(l, r[0], rnd));
        }
        if fb == 16 && tb == 16 && l.plan.target.gpu.capability() < 90 {
            // f16 <-> bf16 has a `cvt` from sm_90; before, through
            // f32, which holds both exactly: one rounding.
            let w = to_f32(l, from, r[0]);
            return Ok(cvt(l, &[rnd], tt, Ty::F32, w));
        }
        Ok(cvt(l, &[rnd], tt, ft, r[0]))
    })
}

/// `ftoi` of `src` from float type `from` to integer type `to` (not i1),
/// rounding to an integer by mode `rv`; saturating, as PTX `cvt` does.
fn float_to_int(
    l: &mut Lowerer,
    id: OpId,
    src: crate::ir::ValueId,
    from: Scalar,
    to: Scalar,
    signed: bool,
    rv: u8,
) -> Result<(), LowerError> {
    let tt = int_ty(to, signed)
        .ok_or_else(|| l.unsupported_feature(id, &format!("'{}' results", to.name())))?;
    let m: &'static str = match rv {
        0 => "rni",
        1 | 6 => "rzi",
        2 => "rmi",
        3 => "rpi",
        _ => return Err(l.unsupported_feature(id, "this rounding mode")),
    };
    // bf16 and the 8- and 4-bit floats convert through f32, which
    // holds every one of their values.
    let ft = match from {
        Scalar::BF16 | Scalar::F4E2M1FN => Ty::F32,
        s if is_f8(s) => Ty::F32,
        _ => float_ty(from).ok_or_else(|| l.unsupported(id))?,
    };
    elementwise(l, id, &[src], |l, r| {
        let x = match from {
            Scalar::F4E2M1FN => f4::f4_to_f32(l, r[0]),
            s if f8_scale::is_scale(s) => f8_scale::scale_to_f32(l, s, r[0]),
            s if is_f8(s) => f8::f8_to_f32(l, s, r[0]),
            Scalar::BF16 => to_f32(l, from, r[0]),
            _ => r[0],
        };
        Ok(cvt(l, &[m], tt, ft, x))
    })
}

/// `itof` of `src` from integer type `from` (not i1) to float type `to`
/// (not a 4- or 8-bit one), rounding mode `rv`.
fn int_to_float(
    l: &mut Lowerer,
    id: OpId,
    src: crate::ir::ValueId,
    from: Scalar,
    to: Scalar,
    signed: bool,
    rv: u8,
) -> Result<(), LowerError> {
    let ft = int_ty(from, signed).ok_or_else(|| l.unsupported(id))?;
    let tt = float_ty(to).ok_or_else(|| l.unsupported(id))?;
    let rnd = rounding(rv).ok_or_else(|| l.unsupported_feature(id, "this rounding mode"))?;
    if to == Scalar::BF16 {
        return elementwise(l, id, &[src], |l, r| Ok(int_to_bf16(l, r[0], ft)));
    }
    elementwise(l, id, &[src], |l, r| Ok(cvt(l, &[rnd], tt, ft, r[0])))
}

/// `ftof` to tf32 (op `id`, source `src` of float type `from`, rounding
/// mode `rv`), kept in an f32 register. f16 and bf16 widen exactly; f64
/// first rounds to f32 to odd, so that the rounding to tf32's 10-bit
/// mantissa happens once: to nearest even, toward zero, or to nearest with
/// ties away (`cvt.rna.tf32.f32`).
fn to_tf32(
    l: &mut Lowerer,
    id: OpId,
    src: crate::ir::ValueId,
    from: Scalar,
    rv: u8,
) -> Result<(), LowerError> {
    elementwise(l, id, &[src], move |l, r| {
        let x = match from {
            Scalar::F32 => r[0],
            Scalar::F64 => f64_to_f32_odd(l, r[0]),
            Scalar::F16 | Scalar::BF16 => return Ok(to_f32(l, from, r[0])),
            _ => to_f32(l, from, r[0]),
        };
        Ok(match rv {
            1 => truncate_to_tf32(l, x),
            7 => cvt_tf32(l, "rna", x),
            _ => round_to_tf32(l, x),
        })
    })
}

/// `cvt.<rnd>.tf32.f32` of `x` (`rna` everywhere; `rn` and `rz` from
/// sm_90).
fn cvt_tf32(l: &mut Lowerer, rnd: &'static str, x: Reg) -> Reg {
    l.b.op(
        Opc::Cvt,
        &[rnd],
        &[Ty::TF32, Ty::F32],
        Ty::F32,
        smallvec![Operand::Reg(x)],
    )
}

/// The f32 in `x` rounded toward zero to tf32: `cvt.rz` from sm_90, before
/// it the low 13 bits cleared (a NaN stays a NaN).
fn truncate_to_tf32(l: &mut Lowerer, x: Reg) -> Reg {
    if l.plan.target.gpu.capability() >= 90 {
        return cvt_tf32(l, "rz", x);
    }
    let cleared = l.b.op(
        Opc::And,
        &[],
        &[Ty::B32],
        Ty::B32,
        smallvec![Operand::Reg(x), Operand::Imm(0xffff_e000)],
    );
    let nan = l.b.op(
        Opc::Setp,
        &["nan"],
        &[Ty::F32],
        Ty::Pred,
        smallvec![Operand::Reg(x), Operand::Reg(x)],
    );
    l.b.op(
        Opc::Selp,
        &[],
        &[Ty::B32],
        Ty::B32,
        smallvec![Operand::Reg(x), Operand::Reg(cleared), Operand::Reg(nan)],
    )
}

/// `itof` from `i1` (op `id`, source `src`) to the float type `to`: 0, or
/// 1 (`-1` when `signed`), chosen as an f32 and converted exactly.
fn itof_i1(
    l: &mut Lowerer,
    id: OpId,
    src: crate::ir::ValueId,
    to: Scalar,
    signed: bool,
) -> Result<(), LowerError> {
    let one: u32 = if signed { 0xbf80_0000 } else { 0x3f80_0000 };
    elementwise(l, id, &[src], move |l, r| {
        let x = l.b.op(
            Opc::Selp,
            &[],
            &[Ty::F32],
            Ty::F32,
            smallvec![Operand::F32(one), Operand::F32(0), Operand::Reg(r[0])],
        );
        Ok(match to {
            Scalar::F64 => cvt(l, &[], Ty::F64, Ty::F32, x),
            Scalar::F16 | Scalar::BF16 => crate::lower::emit::ops::arith::from_f32(l, to, x, "rn"),
            Scalar::F8E4M3FN | Scalar::F8E5M2 => f8::f32_to_f8(l, to, x),
            Scalar::F8E5M3FNU => f8_scale::f32_to_e5m3(l, x),
            Scalar::F4E2M1FN => f4::f32_to_f4(l, x),
            _ => x,
        })
    })
}

/// `ftoi` to `i1` (op `id`, source `src` of float type `from`): `x != 0`,
/// true for NaN, whatever the signedness and saturation, as NVIDIA's
/// tileiras compiles it and as cuTile's `astype(bool)` (NumPy's `bool(x)`)
/// means it. The specification's truncation agrees wherever its result is
/// defined and `|x| >= 1` or `x == 0`; for `0 < |x| < 1` this gives 1, as
/// NVIDIA's does.
fn ftoi_i1(
    l: &mut Lowerer,
    id: OpId,
    src: crate::ir::ValueId,
    from: Scalar,
) -> Result<(), LowerError> {
    elementwise(l, id, &[src], move |l, r| {
        let (ty, x, zero) = match from {
            Scalar::F64 => (Ty::F64, r[0], Operand::F64(0)),
            Scalar::F32 | Scalar::TF32 => (Ty::F32, r[0], Operand::F32(0)),
            Scalar::F4E2M1FN => (Ty::F32, f4::f4_to_f32(l, r[0]), Operand::F32(0)),
            s if f8_scale::is_scale(s) => {
                (Ty::F32, f8_scale::scale_to_f32(l, s, r[0]), Operand::F32(0))
            }
            s if is_f8(s) => (Ty::F32, f8::f8_to_f32(l, s, r[0]), Operand::F32(0)),
            s => (Ty::F32, to_f32(l, s, r[0]), Operand::F32(0)),
        };
        Ok(l.b.op(
            Opc::Setp,
            &["neu"],
            &[ty],
            Ty::Pred,
            smallvec![Operand::Reg(x), zero],
        ))
    })
}

/// `itof` (op `id`, source `src`) from the integer type `from` (`signed`)
/// through f32: each integer rounds to f32 with `cvt.rn`, then `narrow`
/// converts that f32. For the small formats this rounds once: f32 is exact
/// up to `2^24`, far beyond where they saturate.
pub(super) fn itof_through_f32(
    l: &mut Lowerer,
    id: OpId,
    src: crate::ir::ValueId,
    from: Scalar,
    signed: bool,
    narrow: fn(&mut Lowerer, Reg) -> Reg,
) -> Result<(), LowerError> {
    let it = int_ty(from, signed).ok_or_else(|| l.unsupported(id))?;
    elementwise(l, id, &[src], move |l, r| {
        let x = cvt(l, &["rn"], Ty::F32, it, r[0]);
        Ok(narrow(l, x))
    })
}

/// Whether `s` is one of the 8-bit float types.
fn is_f8(s: Scalar) -> bool {
    matches!(
        s,
        Scalar::F8E4M3FN | Scalar::F8E5M2 | Scalar::F8E8M0FNU | Scalar::F8E5M3FNU
    )
}

/// `ftof` from or to f8E4M3FN or f8E5M2 (op `id`, source value `src`,
/// rounding mode `rv`): through f32, which holds every f8 value exactly.
/// Narrowing rounds to nearest even with saturation (see [`f8`]); f64
/// sources are first rounded to f32 to odd so that rounding happens once.
fn f8_conversion(
    l: &mut Lowerer,
    id: OpId,
    src: crate::ir::ValueId,
    from: Scalar,
    to: Scalar,
    rv: u8,
) -> Result<(), LowerError> {
    for s in [from, to] {
        if is_f8(s) && !matches!(s, Scalar::F8E4M3FN | Scalar::F8E5M2) {
            return Err(l.unsupported_feature(id, &format!("'{}' conversions", s.name())));
        }
        if !is_f8(s) && float_ty(s).is_none() {
            return Err(l.unsupported(id));
        }
    }
    if is_f8(to) && rv != 0 {
        return Err(l.unsupported_feature(id, "rounding other than nearest_even to an f8 type"));
    }
    elementwise(l, id, &[src], move |l, r| {
        let x = match from {
            Scalar::F8E4M3FN | Scalar::F8E5M2 => f8::f8_to_f32(l, from, r[0]),
            Scalar::F64 => f64_to_f32_odd(l, r[0]),
            _ => to_f32(l, from, r[0]),
        };
        Ok(match to {
            Scalar::F8E4M3FN | Scalar::F8E5M2 => f8::f32_to_f8(l, to, x),
            Scalar::F64 => cvt(l, &[], Ty::F64, Ty::F32, x),
            // Exact: every f8 value is an f16 and a bf16.
            _ => from_f32(l, to, x, "rn"),
        })
    })
}

/// Rounds the f32 register `x` to tf32 (10-bit mantissa, kept in an f32
/// register): to nearest even, natively from sm_90 (`cvt.rn.tf32.f32`),
/// on the bits before.
pub fn round_to_tf32(l: &mut Lowerer, x: crate::ptx::Reg) -> crate::ptx::Reg {
    if l.plan.target.gpu.capability() >= 90 {
        return cvt_tf32(l, "rn", x);
    }
    // Before sm_90 only `.rna` exists: round to nearest
    // even on the bits (x + 0xfff + lsb, low 13 bits
    // cleared); infinities and NaNs pass unchanged.
    let op = |l: &mut Lowerer, opc: Opc, ty: Ty, a: Operand, b: Operand| {
        l.b.op(opc, &[], &[ty], Ty::B32, vec![a, b])
    };
    let lsb = op(l, Opc::Shr, Ty::U32, Operand::Reg(x), Operand::Imm(13));
    let lsb = op(l, Opc::And, Ty::B32, Operand::Reg(lsb), Operand::Imm(1));
    let bias = op(l, Opc::Add, Ty::U32, Operand::Reg(lsb), Operand::Imm(0xfff));
    let sum = op(l, Opc::Add, Ty::U32, Operand::Reg(x), Operand::Reg(bias));
    let rounded = op(
        l,
        Opc::And,
        Ty::B32,
        Operand::Reg(sum),
        Operand::Imm(!0x1fff_i64 & 0xffff_ffff),
    );
    let abs = op(
        l,
        Opc::And,
        Ty::B32,
        Operand::Reg(x),
        Operand::Imm(0x7fff_ffff),
    );
    let special = l.b.op(
        Opc::Setp,
        &["ge"],
        &[Ty::U32],
        Ty::Pred,
        smallvec![Operand::Reg(abs), Operand::Imm(0x7f80_0000)],
    );
    l.b.op(
        Opc::Selp,
        &[],
        &[Ty::B32],
        Ty::B32,
        vec![
            Operand::Reg(x),
            Operand::Reg(rounded),
            Operand::Reg(special),
        ],
    )
}

/// The integer in `x` (PTX type `ft`) rounded to the nearest bf16 (the
/// one rounding `itof` allows). From sm_90 `cvt.rn.bf16` takes 16- to
/// 64-bit integers (8-bit ones widen first); before it, the integer rounds
/// to f32 to odd (truncated, its last bit set when inexact), and that f32
/// rounds to bf16 exactly as the integer would.
fn int_to_bf16(l: &mut Lowerer, x: Reg, ft: Ty) -> Reg {
    let reg = Operand::Reg;
    if l.plan.target.gpu.capability() >= 90 {
        let (x, ft) = match ft {
            Ty::S8 => (cvt(l, &[], Ty::S16, ft, x), Ty::S16),
            Ty::U8 => (cvt(l, &[], Ty::U16, ft, x), Ty::U16),
            _ => (x, ft),
        };
        return cvt(l, &["rn"], Ty::BF16, ft, x);
    }
    let t = cvt(l, &["rz"], Ty::F32, ft, x);
    if ft.bits() <= 16 {
        // Exact in f32.
        return cvt(l, &["rn"], Ty::BF16, Ty::F32, t);
    }
    // A wider integer may be inexact; its truncated f32 is then an
    // integer, which converts back exactly.
    let back = cvt(l, &["rzi"], ft, Ty::F32, t);
    let inexact =
        l.b.op(Opc::Setp, &["ne"], &[ft], Ty::Pred, vec![reg(back), reg(x)]);
    let odd = sticky(l, t, inexact);
    cvt(l, &["rn"], Ty::BF16, Ty::F32, odd)
}

/// f64 to bf16 with one rounding: round to nearest goes through f32
/// rounded to odd (truncated, its last bit set when inexact), which has
/// enough extra bits that the second rounding is exact; round to zero
/// composes without help.
fn f64_to_bf16(l: &mut Lowerer, x: Reg, rnd: &'static str) -> Reg {
    if rnd != "rn" {
        let n = cvt(l, &[rnd], Ty::F32, Ty::F64, x);
        return cvt(l, &[rnd], Ty::BF16, Ty::F32, n);
    }
    let odd = f64_to_f32_odd(l, x);
    cvt(l, &["rn"], Ty::BF16, Ty::F32, odd)
}

/// The f64 in register `x` rounded to f32 to odd: truncated, its last bit
/// set when inexact. Rounding that once more to a format at least two bits
/// narrower (bf16, the f8 types) gives the correctly rounded result.
pub(super) fn f64_to_f32_odd(l: &mut Lowerer, x: Reg) -> Reg {
    let reg = Operand::Reg;
    let t = cvt(l, &["rz"], Ty::F32, Ty::F64, x);
    let back = cvt(l, &[], Ty::F64, Ty::F32, t);
    let inexact = l.b.op(
        Opc::Setp,
        &["neu"],
        &[Ty::F64],
        Ty::Pred,
        vec![reg(back), reg(x)],
    );
    sticky(l, t, inexact)
}

/// The truncated f32 `t` rounded to odd: its last bit set when `inexact`.
fn sticky(l: &mut Lowerer, t: Reg, inexact: Reg) -> Reg {
    let bit = l.b.op(
        Opc::Selp,
        &[],
        &[Ty::B32],
        Ty::B32,
        smallvec![Operand::Imm(1), Operand::Imm(0), Operand::Reg(inexact)],
    );
    l.b.op(
        Opc::Or,
        &[],
        &[Ty::B32],
        Ty::B32,
        vec![Operand::Reg(t), Operand::Reg(bit)],
    )
}
