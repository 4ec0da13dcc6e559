//! 4-bit elements (f4E2M1FN, i4): `pack` and `unpack` between them and i8
//! tiles, and i4 integer extension and truncation.
//!
//! A 4-bit element lives in its own b16 register, in the low nibble; the
//! other bits are unspecified (as an i8's high byte), so whatever reads
//! the value masks or shifts them out. Packed, two
//! elements share a byte little-endian: element `2k` in the low nibble of
//! byte `k`, element `2k + 1` in the high nibble (PTX's `e2m1x2` order:
//! `cvt.rn.f16x2.e2m1x2` puts the low nibble's value in the low half).
use crate::ir::{OpId, Scalar};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::ptx::{Inst, Opc, Operand, Reg, Ty};
use smallvec::smallvec;

use crate::lower::emit::ops::elementwise::elementwise;
use crate::lower::emit::ops::staging::{alloc, coordinates, write, Placement};

/// Whether `e` is a 4-bit element type.
pub fn is_4bit(e: Elem) -> bool {
    matches!(e, Elem::Num(Scalar::F4E2M1FN | Scalar::I4))
}

/// `pack` of a 4-bit tile into an i8 tile, or `unpack` of an i8 tile into
/// a 4-bit one (op `id`, source `src`, result value `res`; both rank 1).
/// The source goes to shared memory one element a byte; each thread then
/// reads what its result registers need: for `pack` the two bytes of
/// elements `2i` and `2i + 1` (one b16 load), for `unpack` byte `j / 2`,
/// shifted by `4 (j mod 2)`.
pub fn pack_unpack(
    l: &mut Lowerer,
    id: OpId,
    src: &Tile,
    res: crate::ir::ValueId,
) -> Result<Tile, LowerError> {
    let (rshape, elem) = value_tile(l.m, res).ok_or_else(|| l.unsupported(id))?;
    let n: i64 = src.layout.shape.iter().product();
    let rn: i64 = rshape.iter().product();
    let packing = is_4bit(src.elem);
    let fits = if packing { n == 2 * rn } else { rn == 2 * n };
    if rshape.len() != 1 || src.layout.shape.len() != 1 || !fits {
        return Err(l.unsupported_feature(id, "this sub-byte reinterpretation"));
    }
    let layout = l.layout_of(res);
    let buf = alloc(
        l,
        crate::lower::plan::buffers::What::Tile,
        &src.layout.shape,
        src.elem,
    )?;
    l.writes(buf.bytes());
    write(l, src, &buf, &Placement::identity(1));
    l.reads(buf.bytes());
    let coords = coordinates(l, &layout);
    let r = Operand::Reg;
    let base = l.shared_base();
    let base = l.b.op(
        Opc::Add,
        &[],
        &[Ty::U32],
        Ty::U32,
        vec![r(base), Operand::Imm(buf.offset)],
    );
    let mut regs: Vec<Reg> = Vec::with_capacity(coords.len());
    for (k, c) in coords.into_iter().enumerate() {
        let canon = layout.canonical_register(k);
        if canon != k {
            regs.push(regs[canon]);
            continue;
        }
        let j = c[0];
        let v = if packing {
            let addr = l.b.op(
                Opc::Mad,
                &["lo"],
                &[Ty::U32],
                Ty::U32,
                vec![r(j), Operand::Imm(2), r(base)],
            );
            let pair = load(l, Ty::B16, addr);
            let lo = bin(l, Opc::And, pair, Operand::Imm(0xf));
            let hi = bin(l, Opc::Shr, pair, Operand::Imm(4));
            let hi = bin(l, Opc::And, hi, Operand::Imm(0xf0));
            bin(l, Opc::Or, lo, r(hi))
        } else {
            let byte = l.b.op(
                Opc::Shr,
                &[],
                &[Ty::U32],
                Ty::U32,
                vec![r(j), Operand::Imm(1)],
            );
            let addr =
                l.b.op(Opc::Add, &[], &[Ty::U32], Ty::U32, vec![r(byte), r(base)]);
            let b = load(l, Ty::B8, addr);
            let odd = l.b.op(
                Opc::And,
                &[],
                &[Ty::B32],
                Ty::B32,
                vec![r(j), Operand::Imm(1)],
            );
            let shift = l.b.op(
                Opc::Shl,
                &[],
                &[Ty::B32],
                Ty::B32,
                vec![r(odd), Operand::Imm(2)],
            );
            let v = bin(l, Opc::Shr, b, r(shift));
            bin(l, Opc::And, v, Operand::Imm(0xf))
        };
        regs.push(v);
    }
    Ok(Tile { elem, layout, regs })
}

/// `ld.shared` of type `ty` (b8 or b16) at `addr` into a b16 register.
fn load(l: &mut Lowerer, ty: Ty, addr: Reg) -> Reg {
    let d = l.b.reg_for(ty);
    l.b.push(Inst::new(
        Opc::Ld,
        &["shared"],
        &[ty],
        smallvec![Operand::Reg(d)],
        smallvec![Operand::Addr(addr, 0)],
    ));
    d
}

/// A b16 operation `opc` of register `a` and operand `b` (a shift amount
/// register is u32, as PTX wants).
fn bin(l: &mut Lowerer, opc: Opc, a: Reg, b: Operand) -> Reg {
    l.b.op(opc, &[], &[Ty::B16], Ty::B16, smallvec![Operand::Reg(a), b])
}

/// `exti` from i4 or `trunci` to i4 (op `id`, source value `src`, `from`
/// and `to` the element types, `signed` the extension's signedness). i4
/// widens by sign- or zero-extending its nibble (in the b16 register,
/// then on to the result's width); narrowing to i4 keeps the low bits; i1
/// extends to 0 or 1 (signed: 0 or -1 = 0xF) and truncates to bit 0.
pub fn int4_conversion(
    l: &mut Lowerer,
    id: OpId,
    src: crate::ir::ValueId,
    from: Scalar,
    to: Scalar,
    signed: bool,
) -> Result<(), LowerError> {
    let reg = Operand::Reg;
    let wide = |s: Scalar, signed: bool| -> Option<Ty> {
        Some(match (s.bit_width(), signed) {
            (4 | 8 | 16, true) => Ty::S16,
            (4 | 8 | 16, false) => Ty::U16,
            (32, true) => Ty::S32,
            (32, false) => Ty::U32,
            (64, true) => Ty::S64,
            (64, false) => Ty::U64,
            _ => return None,
        })
    };
    if from == Scalar::I1 {
        return elementwise(l, id, &[src], move |l, r| {
            let one = if signed { 0xf } else { 1 };
            Ok(l.b.op(
                Opc::Selp,
                &[],
                &[Ty::B16],
                Ty::B16,
                smallvec![Operand::Imm(one), Operand::Imm(0), reg(r[0])],
            ))
        });
    }
    if to == Scalar::I1 {
        return elementwise(l, id, &[src], |l, r| {
            let low = bin(l, Opc::And, r[0], Operand::Imm(1));
            Ok(l.b.op(
                Opc::Setp,
                &["ne"],
                &[Ty::B16],
                Ty::Pred,
                vec![reg(low), Operand::Imm(0)],
            ))
        });
    }
    if to == Scalar::I4 {
        // The low bits of the source register (its low 16 bits first).
        let t = wide(from, false).ok_or_else(|| l.unsupported(id))?;
        return elementwise(l, id, &[src], move |l, r| {
            Ok(if from.bit_width() > 16 {
                l.b.op(Opc::Cvt, &[], &[Ty::U16, t], Ty::U16, vec![reg(r[0])])
            } else {
                r[0]
            })
        });
    }
    let t = wide(to, signed).ok_or_else(|| l.unsupported(id))?;
    elementwise(l, id, &[src], move |l, r| {
        // The nibble moved to the top of the b16 register and shifted
        // back, arithmetically for a signed extension.
        let top = bin(l, Opc::Shl, r[0], Operand::Imm(12));
        let h16 = if signed { Ty::S16 } else { Ty::U16 };
        let h = l.b.op(
            Opc::Shr,
            &[],
            &[h16],
            Ty::B16,
            vec![reg(top), Operand::Imm(12)],
        );
        Ok(if to.bit_width() <= 16 {
            h
        } else {
            l.b.op(Opc::Cvt, &[], &[t, h16], t, vec![reg(h)])
        })
    })
}
