//! `ftof` to and from the unsigned scale formats f8E8M0FNU (`2^(e - 127)`,
//! 0xFF NaN) and f8E5M3FNU (5 exponent bits with bias 15, 3 mantissa bits,
//! subnormals, no infinities, 0xFF NaN), and between them and f16, bf16,
//! f32, tf32, f64, f8E4M3FN and f8E5M2.
//!
//! Every value goes through f32: f16, bf16 and the f8 types widen to it
//! exactly; f64 is first rounded to f32 to odd, so that the final rounding
//! is the only one. As PTX's `cvt` to `.ue8m0x2` and `.ue5m3x2` (and
//! NVIDIA's `cuda_fp8.h`) define them, conversions to the scale formats
//! discard the sign, saturate (`.satfinite`: infinities and magnitudes
//! beyond the largest finite value become it) and turn NaN into 0xFF:
//!
//! - to f8E8M0FNU the magnitude is rounded to a power of two toward zero
//!   (`zero`) or up (`positive_inf`); results below `2^-127`, zero
//!   included, are `2^-127` (code 0);
//! - to f8E5M3FNU it is rounded to nearest even (subnormals included).
//!
//! From the scale formats the value is exact in bf16 (0xFF is the NaN
//! 0x7FFF) and rounded from there to f16 (with the op's rounding mode) and
//! to the signed f8 types (to nearest even, saturating).
//!
//! f64 sources rounded to f32 to odd keep their magnitude's rounding
//! direction, so that `positive_inf` rounds the magnitude of negative f64s
//! up too, as `cuda_fp8.h`'s `__nv_cvt_double_to_e8m0` does (NVIDIA's
//! tileiras rounds f64 to f32 toward positive infinity first, which
//! rounds a negative value's magnitude down).
//!
//! The `cvt` scale forms are used where the target has them (`.ue8m0x2` on
//! sm_100 and newer, `.ue5m3x2` on sm_107); bit manipulation elsewhere
//! gives the same bits.
use crate::ir::{OpId, Scalar, ValueId};
use crate::lower::emit::context::Lowerer;
use crate::lower::error::LowerError;
use crate::options::Gpu;
use crate::ptx::{Opc, Operand, Reg, Ty};
use smallvec::smallvec;

use crate::lower::emit::ops::arith::{float_ty, from_f32, to_f32};
use crate::lower::emit::ops::cast::f64_to_f32_odd;
use crate::lower::emit::ops::elementwise::elementwise;
use crate::lower::emit::ops::f8;

/// Whether `s` is one of the unsigned scale formats.
pub fn is_scale(s: Scalar) -> bool {
    matches!(s, Scalar::F8E8M0FNU | Scalar::F8E5M3FNU)
}

/// How a magnitude is rounded to f8E8M0FNU: PTX's `.rz` or `.rp`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pow2 {
    Zero,
    Up,
}

impl Pow2 {
    fn modifier(self) -> &'static str {
        match self {
            Pow2::Zero => "rz",
            Pow2::Up => "rp",
        }
    }
}

/// `ftof` (op `id`, source value `src`, rounding mode `rv`) from `from` to
/// `to`, one of which is a scale format.
pub fn conversion(
    l: &mut Lowerer,
    id: OpId,
    src: ValueId,
    from: Scalar,
    to: Scalar,
    rv: u8,
) -> Result<(), LowerError> {
    let known = |s: Scalar| {
        is_scale(s) || matches!(s, Scalar::F8E4M3FN | Scalar::F8E5M2) || float_ty(s).is_some()
    };
    if !known(from) || !known(to) {
        return Err(l.unsupported_feature(
            id,
            &format!("'{}' to '{}' conversion", from.name(), to.name()),
        ));
    }
    let pow2 = match (to, rv) {
        (Scalar::F8E8M0FNU, 1) => Pow2::Zero,
        (Scalar::F8E8M0FNU, 3) => Pow2::Up,
        (Scalar::F8E8M0FNU, _) => {
            return Err(
                l.unsupported_feature(id, "rounding other than zero or positive_inf to f8E8M0FNU")
            )
        }
        _ => Pow2::Zero,
    };
    if matches!(to, Scalar::F8E5M3FNU | Scalar::F8E4M3FN | Scalar::F8E5M2) && rv != 0 {
        return Err(l.unsupported_feature(
            id,
            &format!("rounding other than nearest_even to {}", to.name()),
        ));
    }
    // Only f16 is narrower than a scale format's value; the other targets
    // hold every value exactly.
    let f16_rnd = if to != Scalar::F16 {
        "rn"
    } else {
        crate::lower::emit::ops::arith::rounding(rv)
            .ok_or_else(|| l.unsupported_feature(id, "this rounding mode"))?
    };
    elementwise(l, id, &[src], move |l, r| {
        if is_scale(from) {
            let h = scale_to_bf16(l, from, r[0]);
            if to == Scalar::BF16 {
                return Ok(h);
            }
            let x = to_f32(l, Scalar::BF16, h);
            return Ok(from_f32_to(l, to, x, pow2, f16_rnd));
        }
        let x = match from {
            Scalar::F8E4M3FN | Scalar::F8E5M2 => f8::f8_to_f32(l, from, r[0]),
            Scalar::F64 => f64_to_f32_odd(l, r[0]),
            _ => to_f32(l, from, r[0]),
        };
        Ok(from_f32_to(l, to, x, pow2, f16_rnd))
    })
}

/// The f32 value of the scale byte of format `s` in the low byte of the
/// b16 register `b` (exact; 0xFF gives the NaN 0x7FFF0000).
pub fn scale_to_f32(l: &mut Lowerer, s: Scalar, b: Reg) -> Reg {
    let h = scale_to_bf16(l, s, b);
    to_f32(l, Scalar::BF16, h)
}

/// `itof` (op `id`, source `src`) from the integer type `from` (`signed`)
/// to f8E5M3FNU: rounded to f32 first, which is exact up to `2^24`, far
/// beyond where f8E5M3FNU saturates, so that rounding happens once.
pub fn from_int(
    l: &mut Lowerer,
    id: OpId,
    src: ValueId,
    from: Scalar,
    to: Scalar,
    signed: bool,
) -> Result<(), LowerError> {
    if to != Scalar::F8E5M3FNU {
        return Err(l.unsupported_feature(id, &format!("integer to '{}'", to.name())));
    }
    crate::lower::emit::ops::cast::itof_through_f32(l, id, src, from, signed, f32_to_e5m3)
}

/// The f32 in register `x` converted to `to` (`pow2`: the rounding to
/// f8E8M0FNU; `f16_rnd`: the rounding to f16).
fn from_f32_to(l: &mut Lowerer, to: Scalar, x: Reg, pow2: Pow2, f16_rnd: &'static str) -> Reg {
    match to {
        Scalar::F8E8M0FNU => f32_to_e8m0(l, x, pow2),
        Scalar::F8E5M3FNU => f32_to_e5m3(l, x),
        Scalar::F8E4M3FN | Scalar::F8E5M2 => f8::f32_to_f8(l, to, x),
        Scalar::F64 => l.b.op(
            Opc::Cvt,
            &[],
            &[Ty::F64, Ty::F32],
            Ty::F64,
            smallvec![Operand::Reg(x)],
        ),
        Scalar::F16 => from_f32(l, to, x, f16_rnd),
        // Exact: bf16 only from the signed f8 types, tf32 and f32 are f32.
        _ => from_f32(l, to, x, "rn"),
    }
}

/// Whether the target converts `s` with `cvt`'s scale forms.
fn native(l: &Lowerer, s: Scalar) -> bool {
    match s {
        Scalar::F8E8M0FNU => l.plan.target.gpu.capability() >= 100,
        _ => l.plan.target.gpu == Gpu::Sm107,
    }
}

/// The PTX name of the packed scale format `s`.
fn pair(s: Scalar) -> &'static str {
    if s == Scalar::F8E8M0FNU {
        "ue8m0x2"
    } else {
        "ue5m3x2"
    }
}

/// One b32 operation `opc.ty d, a, b`.
fn op2(l: &mut Lowerer, opc: Opc, ty: Ty, a: Operand, b: Operand) -> Reg {
    l.b.op(opc, &[], &[ty], Ty::B32, vec![a, b])
}

/// `selp.b32 d, a, b, p`.
fn select(l: &mut Lowerer, a: Operand, b: Operand, p: Reg) -> Reg {
    l.b.op(
        Opc::Selp,
        &[],
        &[Ty::B32],
        Ty::B32,
        vec![a, b, Operand::Reg(p)],
    )
}

/// `setp.<cmp>.u32 p, a, imm`.
fn test(l: &mut Lowerer, cmp: &'static str, a: Reg, imm: i64) -> Reg {
    l.b.op(
        Opc::Setp,
        &[cmp],
        &[Ty::U32],
        Ty::Pred,
        smallvec![Operand::Reg(a), Operand::Imm(imm)],
    )
}

/// The low 16 bits of the b32 register `w`.
fn low16(l: &mut Lowerer, w: Reg) -> Reg {
    l.b.op(
        Opc::Cvt,
        &[],
        &[Ty::U16, Ty::U32],
        Ty::U16,
        smallvec![Operand::Reg(w)],
    )
}

/// The bf16 bits (in a b16 register) of the scale byte of format `s` in
/// the low byte of the b16 register `b` (its high byte zero): by
/// `cvt.rn.bf16x2.<s>x2` where the target has it, otherwise on the bits:
///
/// - f8E8M0FNU code `c` is the bf16 exponent field (`c << 7`), except that
///   0 (`2^-127`) is the subnormal 0x0040 and 0xFF is NaN;
/// - f8E5M3FNU's bits placed in an f32 with the exponent fields aligned at
///   their tops give the value times `2^-112` exactly, subnormals
///   included; a multiply by `2^112` restores it, and its top half is the
///   bf16 (the value has at most 4 significant bits).
fn scale_to_bf16(l: &mut Lowerer, s: Scalar, b: Reg) -> Reg {
    let r = Operand::Reg;
    let imm = Operand::Imm;
    if native(l, s) {
        let h2 = l.b.op(
            Opc::Cvt,
            &["rn", "bf16x2", pair(s)],
            &[],
            Ty::B32,
            vec![r(b)],
        );
        return low16(l, h2);
    }
    let w =
        l.b.op(Opc::Cvt, &[], &[Ty::U32, Ty::U16], Ty::U32, vec![r(b)]);
    let bits = if s == Scalar::F8E8M0FNU {
        let e = op2(l, Opc::Shl, Ty::B32, r(w), imm(7));
        let zero = test(l, "eq", w, 0);
        select(l, imm(0x40), r(e), zero)
    } else {
        let placed = op2(l, Opc::Shl, Ty::B32, r(w), imm(20));
        let x = l.b.op(
            Opc::Mul,
            &["rn"],
            &[Ty::F32],
            Ty::F32,
            vec![r(placed), Operand::F32(2f32.powi(112).to_bits())],
        );
        op2(l, Opc::Shr, Ty::U32, r(x), imm(16))
    };
    let nan = test(l, "eq", w, 0xff);
    let bits = select(l, imm(0x7fff), r(bits), nan);
    low16(l, bits)
}

/// The f8E8M0FNU byte (low byte of a b16 register, high byte zero) of the
/// f32 in register `x`, its magnitude rounded to a power of two by `pow2`:
/// by `cvt.<rz|rp>.satfinite.ue8m0x2.f32` where the target has it,
/// otherwise on the bits of `a = |x|`: its exponent field is the code
/// toward zero; adding `0x7FFFFF` first carries into it exactly when the
/// mantissa is not zero, which rounds up (but magnitudes up to `2^-127`,
/// f32 subnormals, stay at code 0); codes above 0xFE (infinities,
/// overflow) saturate to it and NaN gives 0xFF.
fn f32_to_e8m0(l: &mut Lowerer, x: Reg, pow2: Pow2) -> Reg {
    let r = Operand::Reg;
    let imm = Operand::Imm;
    if native(l, Scalar::F8E8M0FNU) {
        let zero = l.b.op(Opc::Mov, &[], &[Ty::B32], Ty::B32, vec![imm(0)]);
        return l.b.op(
            Opc::Cvt,
            &[pow2.modifier(), "satfinite", pair(Scalar::F8E8M0FNU), "f32"],
            &[],
            Ty::B16,
            vec![r(zero), r(x)],
        );
    }
    let a = op2(l, Opc::And, Ty::B32, r(x), imm(0x7fff_ffff));
    let code = match pow2 {
        Pow2::Zero => op2(l, Opc::Shr, Ty::U32, r(a), imm(23)),
        Pow2::Up => {
            let t = op2(l, Opc::Add, Ty::U32, r(a), imm(0x7f_ffff));
            let t = op2(l, Opc::Shr, Ty::U32, r(t), imm(23));
            let tiny = test(l, "le", a, 0x40_0000);
            select(l, imm(0), r(t), tiny)
        }
    };
    let code = op2(l, Opc::Min, Ty::U32, r(code), imm(0xfe));
    let nan = test(l, "gt", a, 0x7f80_0000);
    let code = select(l, imm(0xff), r(code), nan);
    low16(l, code)
}

/// The f8E5M3FNU byte (low byte of a b16 register, high byte zero) nearest
/// to the magnitude of the f32 in register `x`, ties to even, saturating:
/// by `cvt.rn.satfinite.ue5m3x2.f32` where the target has it, otherwise on
/// the bits of `a = |x|` by the rounding the f8 and f4 formats share
/// ([`f8::f32_to_small_float_bits`], unsigned here):
///
/// - below the smallest normal `2^-14` the result is a multiple `k` of the
///   quantum `2^-17`: adding `2^6`, the f32 whose ulp is that quantum,
///   rounds `a` to it (ties to even) in hardware, and `k` is the sum's bits
///   minus the constant's;
/// - from there the f32 bits rounded to nearest even at bit 20, shifted
///   down and rebiased (`127 - 15`), are the code, clamped to 0xFE
///   (infinities too);
/// - NaN gives 0xFF.
pub(super) fn f32_to_e5m3(l: &mut Lowerer, x: Reg) -> Reg {
    let r = Operand::Reg;
    let imm = Operand::Imm;
    if native(l, Scalar::F8E5M3FNU) {
        let zero = l.b.op(Opc::Mov, &[], &[Ty::B32], Ty::B32, vec![imm(0)]);
        return l.b.op(
            Opc::Cvt,
            &["rn", "satfinite", pair(Scalar::F8E5M3FNU), "f32"],
            &[],
            Ty::B16,
            vec![r(zero), r(x)],
        );
    }
    let code = f8::f32_to_small_float_bits(l, (5, 3, 15), false, 0xfe, 0xff, x);
    low16(l, code)
}
