//! Conversions between the f8 types (f8E4M3FN, f8E5M2) and f32: by the
//! `cvt` f8 forms on sm_89 and newer, by bit manipulation before.
//!
//! Narrowing rounds to nearest even and saturates as PTX's only f8 rounding,
//! `cvt.rn.satfinite`, does: magnitudes beyond the largest finite value
//! (infinities included) become it, with their sign; NaN becomes the
//! positive NaN 0x7F.
use crate::ir::Scalar;
use crate::lower::emit::context::Lowerer;
use crate::ptx::{Opc, Operand, Reg, Ty};
use smallvec::smallvec;

/// The exponent and mantissa widths and the exponent bias of `e`.
fn format(e: Scalar) -> (u32, u32, u32) {
    if e == Scalar::F8E5M2 {
        (5, 2, 15)
    } else {
        (4, 3, 7)
    }
}

/// The largest finite encoding of `e` (448 for e4m3, 57344 for e5m2).
fn max_finite(e: Scalar) -> i64 {
    if e == Scalar::F8E5M2 {
        0x7b
    } else {
        0x7e
    }
}

/// The f32 value of the f8E4M3FN or f8E5M2 byte in register `b`: by
/// `cvt.f16x2` on sm_89 and newer, otherwise by bit manipulation:
///
/// E5M2 is the top byte of an f16 (infinities and NaNs included). E4M3's
/// sign and magnitude bits placed in an f32 with the exponent fields
/// aligned at their tops give the value times `2^-120` exactly, subnormals
/// included, and a multiply by `2^120` restores it; its NaN (magnitude
/// 0x7F) becomes NaN.
pub fn f8_to_f32(l: &mut Lowerer, e: Scalar, b: Reg) -> Reg {
    let r = Operand::Reg;
    if l.plan.target.gpu.capability() >= 89 {
        // sm_89+ converts f8 pairs in hardware: the low byte's value is the
        // low half of the f16x2 result (f16 holds every f8 value exactly).
        let pair = if e == Scalar::F8E5M2 {
            "e5m2x2"
        } else {
            "e4m3x2"
        };
        let h2 =
            l.b.op(Opc::Cvt, &["rn", "f16x2", pair], &[], Ty::B32, vec![r(b)]);
        let lo =
            l.b.op(Opc::Cvt, &[], &[Ty::U16, Ty::U32], Ty::U16, vec![r(h2)]);
        return l
            .b
            .op(Opc::Cvt, &[], &[Ty::F32, Ty::F16], Ty::F32, vec![r(lo)]);
    }
    if e == Scalar::F8E5M2 {
        let h = l.b.op(
            Opc::Shl,
            &[],
            &[Ty::B16],
            Ty::B16,
            vec![r(b), Operand::Imm(8)],
        );
        return l
            .b
            .op(Opc::Cvt, &[], &[Ty::F32, Ty::F16], Ty::F32, vec![r(h)]);
    }
    let (x, mag) = placed_to_f32(l, b, 0x7f, 20, 7, 120);
    let nan = l.b.op(
        Opc::Setp,
        &["eq"],
        &[Ty::U32],
        Ty::Pred,
        vec![r(mag), Operand::Imm(0x7f)],
    );
    l.b.op(
        Opc::Selp,
        &[],
        &[Ty::B32],
        Ty::B32,
        smallvec![Operand::Imm(0x7fff_ffff), r(x), r(nan)],
    )
}

/// The f8E4M3FN or f8E5M2 byte (in the low byte of a b16 register, the
/// high byte zero) nearest to the f32 in register `x`, ties to even, with
/// `cvt.rn.satfinite` semantics: by that instruction on sm_89 and newer,
/// on the bits before (see [`f32_to_f8_bits`]).
pub fn f32_to_f8(l: &mut Lowerer, e: Scalar, x: Reg) -> Reg {
    if l.plan.target.gpu.capability() >= 89 {
        // `cvt.rn.satfinite.e4m3x2.f32 d, a, b` puts `a` in the high byte
        // and `b` in the low one: `a` is 0, which converts to 0.
        let pair = if e == Scalar::F8E5M2 {
            "e5m2x2"
        } else {
            "e4m3x2"
        };
        let zero = l.b.op(
            Opc::Mov,
            &[],
            &[Ty::B32],
            Ty::B32,
            smallvec![Operand::Imm(0)],
        );
        return l.b.op(
            Opc::Cvt,
            &["rn", "satfinite", pair, "f32"],
            &[],
            Ty::B16,
            smallvec![Operand::Reg(zero), Operand::Reg(x)],
        );
    }
    let bits = f32_to_f8_bits(l, e, x);
    l.b.op(
        Opc::Cvt,
        &[],
        &[Ty::U16, Ty::U32],
        Ty::U16,
        smallvec![Operand::Reg(bits)],
    )
}

/// The f8 encoding (in a b32 register) of the f32 in `x`, computed on the
/// bits as `cvt.rn.satfinite` rounds:
///
/// - below the smallest normal f8 (`2^(1 - bias)`) the f8 is a subnormal,
///   a multiple `k` of its quantum `q = 2^(1 - bias - M)`: adding
///   `2^(24 - bias - M)`, the f32 whose ulp is `q`, rounds `|x|` to the
///   nearest multiple of `q` (ties to even) in hardware, and `k` (up to the smallest normal's
///   encoding) is the sum's bits minus the constant's;
/// - from there the f32 bits rounded to nearest even at bit `23 - M`
///   (carries go into the exponent), shifted down and rebiased, are the
///   encoding, clamped to the largest finite one (infinities too);
/// - NaN gives 0x7F; the sign is the f32's.
pub fn f32_to_f8_bits(l: &mut Lowerer, e: Scalar, x: Reg) -> Reg {
    let (ebits, m, bias) = format(e);
    debug_assert!(ebits + m == 7);
    f32_to_small_float_bits(l, (ebits, m, bias), true, max_finite(e), 0x7f, x)
}

/// The code (in a b32 register) of the f32 in `x` in a small float format
/// of `(exponent bits, mantissa bits, bias)`, rounded as [`f32_to_f8_bits`]
/// describes: clamped to `max_code`, NaN to `nan_code`. A `signed` format
/// keeps the f32's sign in the bit above the exponent; an unsigned one
/// takes the magnitude.
pub(super) fn f32_to_small_float_bits(
    l: &mut Lowerer,
    (ebits, m, bias): (u32, u32, u32),
    signed: bool,
    max_code: i64,
    nan_code: i64,
    x: Reg,
) -> Reg {
    let r = Operand::Reg;
    let imm = Operand::Imm;
    let op = |l: &mut Lowerer, opc: Opc, ty: Ty, a: Operand, b: Operand| {
        l.b.op(opc, &[], &[ty], Ty::B32, vec![a, b])
    };
    let a = op(l, Opc::And, Ty::B32, r(x), imm(0x7fff_ffff));
    let sign = signed.then(|| {
        let sign_bit = i64::from(ebits + m);
        let sign = op(l, Opc::Shr, Ty::U32, r(x), imm(31 - sign_bit));
        op(l, Opc::And, Ty::B32, r(sign), imm(1 << sign_bit))
    });
    // Subnormal range: |x| + 2^(1 - bias - m + 23) has ulp q.
    let magic_exp = 1 - bias as i64 - m as i64 + 23;
    let magic = ((127 + magic_exp) as u32) << 23;
    let sum = l.b.op(
        Opc::Add,
        &["rn"],
        &[Ty::F32],
        Ty::F32,
        vec![r(a), Operand::F32(magic)],
    );
    let sub = op(l, Opc::Sub, Ty::S32, r(sum), imm(i64::from(magic)));
    // Normal range: round to nearest even at bit 23 - m, then rebias.
    let shift = 23 - m;
    let lsb = op(l, Opc::Shr, Ty::U32, r(a), imm(i64::from(shift)));
    let lsb = op(l, Opc::And, Ty::B32, r(lsb), imm(1));
    let t = op(l, Opc::Add, Ty::U32, r(a), r(lsb));
    let t = op(l, Opc::Add, Ty::U32, r(t), imm((1i64 << (shift - 1)) - 1));
    let t = op(l, Opc::Shr, Ty::U32, r(t), imm(i64::from(shift)));
    let rebias = i64::from(127 - bias) << m;
    // Exponents below the f8's wrap here; the subnormal path covers them.
    let t = op(l, Opc::Sub, Ty::U32, r(t), imm(rebias));
    let t = op(l, Opc::Min, Ty::U32, r(t), imm(max_code));
    let min_normal = i64::from(127 + 1 - bias) << 23;
    let small = l.b.op(
        Opc::Setp,
        &["lt"],
        &[Ty::U32],
        Ty::Pred,
        vec![r(a), imm(min_normal)],
    );
    let mag = l.b.op(
        Opc::Selp,
        &[],
        &[Ty::B32],
        Ty::B32,
        vec![r(sub), r(t), r(small)],
    );
    let code = match sign {
        Some(sign) => op(l, Opc::Or, Ty::B32, r(mag), r(sign)),
        None => mag,
    };
    let nan = l.b.op(
        Opc::Setp,
        &["gt"],
        &[Ty::U32],
        Ty::Pred,
        vec![r(a), imm(0x7f80_0000)],
    );
    l.b.op(
        Opc::Selp,
        &[],
        &[Ty::B32],
        Ty::B32,
        vec![imm(nan_code), r(code), r(nan)],
    )
}

/// The f32 value of a small signed float's code in `b` (a b16 register):
/// its magnitude bits (`b & mag_mask`) shifted up by `shift` to the top of
/// an f32's exponent and mantissa fields, its sign (bit `sign_bit`) moved
/// to bit 31, and the result times `2^scale_exp` to restore the value
/// (exact, subnormals included). Also returns the magnitude bits.
pub(super) fn placed_to_f32(
    l: &mut Lowerer,
    b: Reg,
    mag_mask: i64,
    shift: i64,
    sign_bit: i64,
    scale_exp: i32,
) -> (Reg, Reg) {
    let r = Operand::Reg;
    let op = |l: &mut Lowerer, opc: Opc, x: Reg, imm: i64| {
        l.b.op(opc, &[], &[Ty::B32], Ty::B32, vec![r(x), Operand::Imm(imm)])
    };
    let w =
        l.b.op(Opc::Cvt, &[], &[Ty::U32, Ty::U16], Ty::U32, vec![r(b)]);
    let mag = op(l, Opc::And, w, mag_mask);
    let placed = op(l, Opc::Shl, mag, shift);
    let sign = op(l, Opc::And, w, 1 << sign_bit);
    let sign = op(l, Opc::Shl, sign, 31 - sign_bit);
    let bits =
        l.b.op(Opc::Or, &[], &[Ty::B32], Ty::B32, vec![r(placed), r(sign)]);
    let x = l.b.op(
        Opc::Mul,
        &["rn"],
        &[Ty::F32],
        Ty::F32,
        vec![r(bits), Operand::F32(2f32.powi(scale_exp).to_bits())],
    );
    (x, mag)
}
