//! f4E2M1FN: decoding to f32, rounding f32 to it, and `ftof` to and from
//! it. An f4E2M1FN has a sign bit, 2 exponent bits (bias 1) and 1 mantissa
//! bit; its magnitudes are 0, 0.5, 1, 1.5, 2, 3, 4 and 6, with no infinity
//! or NaN. Its register holds the code in the low nibble (see
//! [`crate::lower::emit::ops::subbyte`]).
//!
//! From sm_100a on the `cvt` `e2m1x2` forms convert in hardware, before by
//! bit manipulation with the same results. Narrowing rounds to nearest
//! even and saturates as PTX's `cvt.rn.satfinite.e2m1x2.f32` does: magnitudes beyond 6 (infinities
//! included) become 6 with their sign, NaN becomes +6 (code 0x7). Every
//! f4E2M1FN value is exact in f16, bf16, f32 and f64 and in the f8 types
//! f8E4M3FN and f8E5M2, so widening is exact.
use crate::ir::{OpId, Scalar, ValueId};
use crate::lower::emit::context::Lowerer;
use crate::lower::error::LowerError;
use crate::ptx::{Opc, Operand, Reg, Ty};
use smallvec::smallvec;

use crate::lower::emit::ops::arith::{from_f32, to_f32};
use crate::lower::emit::ops::elementwise::elementwise;
use crate::lower::emit::ops::f8;

/// The f32 value of the f4E2M1FN code in the low nibble of b16 register
/// `b`: by `cvt.rn.f16x2.e2m1x2` where the target has it (the low half of
/// the result is the low nibble's value, exact in f16), otherwise by bit
/// manipulation: the three magnitude bits placed at the top of an f32's exponent
/// and mantissa fields (exponent field `e`, mantissa bit 22) give the
/// value times `2^-126` exactly (code 1, 0.5, becomes the subnormal
/// `2^-127`), and a multiply by `2^126` restores it; the sign goes to
/// bit 31.
pub fn f4_to_f32(l: &mut Lowerer, b: Reg) -> Reg {
    let r = Operand::Reg;
    if l.plan.target.has_e2m1_cvt() {
        let h2 = l.b.op(Opc::CvtUnpackE2m1x2, &[], &[], Ty::B32, vec![r(b)]);
        let lo =
            l.b.op(Opc::Cvt, &[], &[Ty::U16, Ty::U32], Ty::U16, vec![r(h2)]);
        return l
            .b
            .op(Opc::Cvt, &[], &[Ty::F32, Ty::F16], Ty::F32, vec![r(lo)]);
    }
    crate::lower::emit::ops::f8::placed_to_f32(l, b, 0x7, 22, 3, 126).0
}

/// The f4E2M1FN code (in a b16 register) nearest to the f32 in register
/// `x`, ties to even, saturating (see the module doc): by
/// `cvt.rn.satfinite.e2m1x2.f32` where the target has it (the high code
/// converted from 0), otherwise on the bits:
///
/// - below 1 (the smallest normal) the code is a multiple `k` of the
///   quantum 0.5: adding `2^22`, the f32 whose ulp is 0.5, rounds `|x|` to
///   the nearest multiple (ties to even) in hardware, and `k` (up to 2,
///   the code of 1.0) is the sum's bits minus the constant's;
/// - from 1 up, the f32 bits rounded to nearest even at bit 22 (carries
///   go into the exponent), shifted down and rebiased, are the code,
///   clamped to 0x7 (infinities too);
/// - NaN gives 0x7; the sign is the f32's.
pub fn f32_to_f4(l: &mut Lowerer, x: Reg) -> Reg {
    let r = Operand::Reg;
    if l.plan.target.has_e2m1_cvt() {
        let zero = l.b.op(
            Opc::Mov,
            &[],
            &[Ty::F32],
            Ty::F32,
            smallvec![Operand::F32(0)],
        );
        return l
            .b
            .op(Opc::CvtPackE2m1x2, &[], &[], Ty::B16, vec![r(zero), r(x)]);
    }
    // Two exponent bits with bias 1, one mantissa bit; 0x7 (6) is the
    // largest code, and NaN becomes it too.
    let code =
        crate::lower::emit::ops::f8::f32_to_small_float_bits(l, (2, 1, 1), true, 0x7, 0x7, x);
    l.b.op(Opc::Cvt, &[], &[Ty::U16, Ty::U32], Ty::U16, vec![r(code)])
}

/// `ftof` from or to f4E2M1FN (op `id`, source value `src`, rounding mode
/// `rv`): through f32, which holds every f4 value exactly. f64 sources
/// are first rounded to f32 to odd so that rounding happens once;
/// f8E4M3FN and f8E5M2 go through their f32 conversions.
pub fn conversion(
    l: &mut Lowerer,
    id: OpId,
    src: ValueId,
    from: Scalar,
    to: Scalar,
    rv: u8,
) -> Result<(), LowerError> {
    use Scalar::*;
    for s in [from, to] {
        if !matches!(
            s,
            F4E2M1FN | F16 | BF16 | F32 | TF32 | F64 | F8E4M3FN | F8E5M2
        ) {
            return Err(l.unsupported_feature(id, &format!("'{}' conversions", s.name())));
        }
    }
    if to == F4E2M1FN && rv != 0 {
        return Err(l.unsupported_feature(id, "rounding other than nearest_even to f4E2M1FN"));
    }
    elementwise(l, id, &[src], move |l, r| {
        let x = match from {
            F4E2M1FN => f4_to_f32(l, r[0]),
            F8E4M3FN | F8E5M2 => f8::f8_to_f32(l, from, r[0]),
            F64 => crate::lower::emit::ops::cast::f64_to_f32_odd(l, r[0]),
            _ => to_f32(l, from, r[0]),
        };
        Ok(match to {
            F4E2M1FN => f32_to_f4(l, x),
            F8E4M3FN | F8E5M2 => f8::f32_to_f8(l, to, x),
            F64 => l.b.op(
                Opc::Cvt,
                &[],
                &[Ty::F64, Ty::F32],
                Ty::F64,
                smallvec![Operand::Reg(x)],
            ),
            // Exact: every f4 value is an f16 and a bf16.
            _ => from_f32(l, to, x, "rn"),
        })
    })
}

/// `itof` to f4E2M1FN (op `id`, source value `src`, `signed` the
/// integer's signedness, `rv` the rounding mode): the integer rounds to
/// f32 first; that is exact up to `2^24` in magnitude and anything larger
/// saturates to 6 either way.
pub fn from_int(
    l: &mut Lowerer,
    id: OpId,
    src: ValueId,
    from: Scalar,
    signed: bool,
    rv: u8,
) -> Result<(), LowerError> {
    if rv != 0 {
        return Err(l.unsupported_feature(id, "rounding other than nearest_even to f4E2M1FN"));
    }
    crate::lower::emit::ops::cast::itof_through_f32(l, id, src, from, signed, f32_to_f4)
}
