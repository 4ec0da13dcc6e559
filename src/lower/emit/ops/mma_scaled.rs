//! `mmaf_scaled` (block-scaled matrix multiply): the f8 and f4 operands
//! are dequantized in registers and the engines multiply them as bf16.
//!
//! Element `lhs[.., m, k]` becomes `f32(lhs[.., m, k]) * scale` with the
//! scale `lhs_scale[.., m, k / V]` (`V` the block size), and likewise
//! `rhs[.., k, n]` with `rhs_scale[.., k / V, n]`. Each thread needs the
//! scale of every operand element it holds: the scale tile is
//! redistributed to the operand's layout with the K coordinate shifted
//! right by `log2(V)` (a linear map, so still a linear layout, whose
//! duplicated bits repeat one scale over its block).
//!
//! Scales are f8E8M0FNU exponents `2^(s - 127)` (f8 and f4 operands), or
//! for f4E2M1FN operands f8E4M3FN or f8E5M3FNU values. The dequantized
//! operand is exact in bf16 (half the shared memory and registers of
//! tf32), so the tensor cores' products are exact and only the f32
//! accumulation order differs from a sequential sum:
//!
//! - an e4m3/e5m2 value (at most 4 significant bits) times a power of two
//!   has at most 4 significant bits, bf16 has 8 and f32's exponent range;
//!   likewise an f4E2M1FN value (2 bits) times a power of two;
//! - an f4E2M1FN value times an f8E4M3FN or f8E5M3FNU scale (4
//!   significant bits each) has at most 6 significant bits, and its
//!   magnitude lies between `0.5 * 2^-9` (`0.5 * 2^-17` for e5m3) and
//!   `6 * 448` (`6 * 122880`), well inside bf16's normal range.
//!
//! With f8E8M0FNU scales exactness ends where a dequantized operand
//! leaves the f32 normal range: from 2^128 up it is infinite (also where
//! the other operand's scale would bring the product back in range, e.g.
//! `448 * 2^127` times `2^-127`), and below 2^-130 in magnitude it is
//! rounded to a bf16 subnormal (gradual underflow; down to 2^-130 its 4
//! significant bits still fit). The scale 0 (2^-127) is the f32 subnormal
//! it denotes; 0xFF is NaN and makes its block's products NaN, as are
//! e4m3's and e5m2's own NaNs and the e4m3 and e5m3 scales' NaNs (0x7F or
//! 0xFF, and 0xFF).
use smallvec::smallvec;
use std::rc::Rc;

use crate::ir::{OpId, Scalar};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::conversions::{block_shift, scale_layout};
use crate::ptx::{Opc, Operand, Reg, Ty};

use crate::lower::emit::ops::arith::from_f32;
use crate::lower::emit::ops::f4::f4_to_f32;
use crate::lower::emit::ops::f8::f8_to_f32;

/// Fails with an unsupported-feature error (at the op's location) unless op
/// `id` has f8E4M3FN or f8E5M2 operands with f8E8M0FNU scales, or
/// f4E2M1FN operands with f8E8M0FNU, f8E4M3FN or f8E5M3FNU scales, the
/// combinations this lowering dequantizes.
pub fn check(l: &Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let elem = |name: &str| match op.operand(name).and_then(|v| value_tile(l.m, v)) {
        Some((_, Elem::Num(s))) => Some(s),
        _ => None,
    };
    let (Some(e), Some(s)) = (elem("lhs"), elem("lhs_scale")) else {
        return Err(l.unsupported(id));
    };
    if !matches!(e, Scalar::F8E4M3FN | Scalar::F8E5M2 | Scalar::F4E2M1FN) {
        return Err(l.unsupported_feature(id, &format!("'{}' operands", e.name())));
    }
    let scales_ok = match e {
        Scalar::F4E2M1FN => matches!(s, Scalar::F8E8M0FNU | Scalar::F8E4M3FN | Scalar::F8E5M3FNU),
        _ => s == Scalar::F8E8M0FNU,
    };
    if !scales_ok {
        return Err(l.unsupported_feature(id, &format!("'{}' scales", s.name())));
    }
    Ok(())
}

/// The dequantized `lhs` and `rhs` of `mmaf_scaled` op `id` as bf16 tiles
/// in the layouts of the operands.
pub fn dequantized(l: &mut Lowerer, id: OpId) -> Result<(Tile, Tile), LowerError> {
    check(l, id)?;
    let op = &l.m.ops[id];
    let (Some(a), Some(b), Some(sa), Some(sb)) = (
        op.operand("lhs"),
        op.operand("rhs"),
        op.operand("lhs_scale"),
        op.operand("rhs_scale"),
    ) else {
        return Err(l.unsupported(id));
    };
    let a = l.tile(id, a)?;
    let b = l.tile(id, b)?;
    let rank = a.layout.shape.len();
    if rank < 2 {
        return Err(l.unsupported(id));
    }
    let a = dequantize(l, id, &a, sa, rank - 1)?;
    let b = dequantize(l, id, &b, sb, rank - 2)?;
    Ok((a, b))
}

/// Tile `t` (f8 or f4) dequantized with the scales of value `scales`, whose
/// dimension `kdim` is `t`'s divided by the block size.
fn dequantize(
    l: &mut Lowerer,
    id: OpId,
    t: &Tile,
    scales: crate::ir::ValueId,
    kdim: usize,
) -> Result<Tile, LowerError> {
    let Some((sshape, Elem::Num(se))) = value_tile(l.m, scales) else {
        return Err(l.unsupported(id));
    };
    let Elem::Num(e) = t.elem else {
        return Err(l.unsupported(id));
    };
    let (k, sk) = (t.layout.shape[kdim], sshape[kdim]);
    let Some(shift) = block_shift(k, sk) else {
        return Err(l.unsupported_feature(id, "a block size that is not a power of two"));
    };
    let layout = Rc::new(scale_layout(&t.layout, kdim, shift));
    let s = l.tile_in(id, scales, &layout)?;
    let mut regs: Vec<Reg> = Vec::with_capacity(t.regs.len());
    // Many elements share a scale: decode each scale register once.
    let mut decoded: Vec<(Reg, Reg)> = Vec::new();
    for r in 0..t.regs.len() {
        let c = t.layout.canonical_register(r);
        if c != r {
            regs.push(regs[c]);
            continue;
        }
        let x = if e == Scalar::F4E2M1FN {
            f4_to_f32(l, t.regs[r])
        } else {
            f8_to_f32(l, e, t.regs[r])
        };
        let f = match decoded.iter().find(|(raw, _)| *raw == s.regs[r]) {
            Some(&(_, f)) => f,
            None => {
                let f = match se {
                    Scalar::F8E4M3FN => f8_to_f32(l, se, s.regs[r]),
                    _ => crate::lower::emit::ops::f8_scale::scale_to_f32(l, se, s.regs[r]),
                };
                decoded.push((s.regs[r], f));
                f
            }
        };
        let y = l.b.op(
            Opc::Mul,
            &["rn"],
            &[Ty::F32],
            Ty::F32,
            smallvec![Operand::Reg(x), Operand::Reg(f)],
        );
        regs.push(from_f32(l, Scalar::BF16, y, "rn"));
    }
    Ok(Tile {
        elem: Elem::Num(Scalar::BF16),
        layout: t.layout.clone(),
        regs,
    })
}
