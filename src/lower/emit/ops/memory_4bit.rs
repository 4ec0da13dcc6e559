//! `load_view_tko` / `store_view_tko` of 4-bit elements (f4E2M1FN): in
//! memory two elements share a byte, element `e` (its offset from the
//! view's base, in elements) in byte `e / 2`, the low nibble for even `e`
//! (as NVIDIA's tileiras addresses them). Addresses come from the shared
//! per-element arithmetic of [`crate::lower::emit::ops::memory`] in element units.
//!
//! A load reads the element's byte and shifts its nibble down. A store
//! cannot write half a byte, and the other half may belong to another
//! thread: it clears its nibble and sets the new bits with two reductions
//! (`red.and`, `red.or`) on the aligned 32-bit word holding the byte, which
//! leave the other nibbles alone whatever order they land in.
use crate::ir::{OpId, Padding, ValueId};
use crate::lower::analysis::view::PartitionInfo;
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::ptx::{Inst, Opc, Operand, Reg, Ty};
use smallvec::smallvec;

use crate::lower::emit::ops::view_access::{element, prepare, Access};

/// The f4E2M1FN code a padding value stands for (`None`: an infinity or
/// NaN, which f4E2M1FN lacks).
fn padding_code(pad: Option<Padding>) -> Option<i64> {
    match pad {
        None | Some(Padding::Zero) => Some(0),
        Some(Padding::NegZero) => Some(0x8),
        _ => None,
    }
}

/// The byte address of the element at register coordinate `c` and its
/// offset from `base` in elements (s64), with the out-of-bounds predicate.
fn byte_of(
    l: &mut Lowerer,
    a: &mut Access,
    base: Reg,
    c: &[i64],
    r: usize,
) -> Result<(Option<Reg>, Reg, Reg), ()> {
    let (oob, addr) = element(l, a, c, r);
    let Operand::Addr(at, imm) = addr else {
        return Err(());
    };
    let s64 = |l: &mut Lowerer, opc: Opc, x: Reg, y: Operand| {
        l.b.op(opc, &[], &[Ty::S64], Ty::S64, smallvec![Operand::Reg(x), y])
    };
    let full = s64(l, Opc::Add, at, Operand::Imm(imm));
    let off = s64(l, Opc::Sub, full, Operand::Reg(base));
    let half = s64(l, Opc::Shr, off, Operand::Imm(1));
    let byte = s64(l, Opc::Add, base, Operand::Reg(half));
    Ok((oob, byte, off))
}

/// The shift (u32) of the nibble of the element at offset `off`: 4 when
/// it is odd, else 0.
fn nibble_shift(l: &mut Lowerer, off: Reg) -> Reg {
    let w = l.b.op(
        Opc::Cvt,
        &[],
        &[Ty::U32, Ty::U64],
        Ty::U32,
        smallvec![Operand::Reg(off)],
    );
    let odd = l.b.op(
        Opc::And,
        &[],
        &[Ty::B32],
        Ty::B32,
        smallvec![Operand::Reg(w), Operand::Imm(1)],
    );
    l.b.op(
        Opc::Shl,
        &[],
        &[Ty::B32],
        Ty::B32,
        smallvec![Operand::Reg(odd), Operand::Imm(2)],
    )
}

/// Loads the 4-bit tile `res` through partition view `p` at `index` (op
/// `op`, memory ordering modifiers `ord`).
pub fn load_view(
    l: &mut Lowerer,
    op: OpId,
    p: &PartitionInfo,
    index: &[ValueId],
    res: ValueId,
    ord: &[&'static str],
) -> Result<(), LowerError> {
    let layout = l.layout_of(res);
    let pad = padding_code(p.padding).ok_or_else(|| {
        l.unsupported_feature(
            op,
            "infinity or NaN padding for f4E2M1FN, which has neither,",
        )
    })?;
    let mut a = prepare(l, op, p, index, &layout)?;
    let base = l.tile(op, p.base)?.regs[0];
    let n = layout.num_registers();
    let mut regs: Vec<Reg> = Vec::with_capacity(n);
    for r in 0..n {
        let canon = layout.canonical_register(r);
        if canon != r {
            regs.push(regs[canon]);
            continue;
        }
        let c = layout.apply(r, 0);
        let (oob, byte, off) = byte_of(l, &mut a, base, &c, r).map_err(|_| l.unsupported(op))?;
        let d = l.b.reg_for(Ty::B16);
        if let Some(q) = oob {
            // The padding code in both nibbles: either shift finds it.
            l.b.push(Inst::new(
                Opc::Mov,
                &[],
                &[Ty::B16],
                smallvec![Operand::Reg(d)],
                smallvec![Operand::Imm(pad | (pad << 4))],
            ));
            l.b.begin_if(q, false);
        }
        let mods: Vec<&'static str> = ord.iter().copied().chain(["global"]).collect();
        l.b.push(Inst::new(
            Opc::Ld,
            &mods,
            &[Ty::U8],
            smallvec![Operand::Reg(d)],
            smallvec![Operand::Addr(byte, 0)],
        ));
        if oob.is_some() {
            l.b.end_if();
        }
        let sh = nibble_shift(l, off);
        regs.push(l.b.op(
            Opc::Shr,
            &[],
            &[Ty::B16],
            Ty::B16,
            smallvec![Operand::Reg(d), Operand::Reg(sh)],
        ));
    }
    l.bind(
        res,
        Tile {
            elem: p.elem,
            layout,
            regs,
        },
    );
    Ok(())
}

/// Stores the 4-bit tile `t` through partition view `p` at `index` (op
/// `op`, memory ordering modifiers `ord`), one owner per element.
pub fn store_view(
    l: &mut Lowerer,
    op: OpId,
    p: &PartitionInfo,
    index: &[ValueId],
    t: &Tile,
    ord: &[&'static str],
) -> Result<(), LowerError> {
    let layout = t.layout.clone();
    let mut a = prepare(l, op, p, index, &layout)?;
    let base = l.tile(op, p.base)?.regs[0];
    let owner = l.owner_pred(&layout);
    if let Some(q) = owner {
        l.b.begin_if(q, true);
    }
    let b32 = |l: &mut Lowerer, opc: Opc, x: Operand, y: Operand| {
        l.b.op(opc, &[], &[Ty::B32], Ty::B32, vec![x, y])
    };
    for r in 0..layout.num_registers() {
        if layout.canonical_register(r) != r {
            continue;
        }
        let c = layout.apply(r, 0);
        let (oob, byte, off) = byte_of(l, &mut a, base, &c, r).map_err(|_| l.unsupported(op))?;
        if let Some(q) = oob {
            l.b.begin_if(q, false);
        }
        // The aligned word holding the byte, and the nibble's bit offset in it.
        let word = l.b.op(
            Opc::And,
            &[],
            &[Ty::B64],
            Ty::B64,
            smallvec![Operand::Reg(byte), Operand::Imm(-4)],
        );
        let low = l.b.op(
            Opc::Cvt,
            &[],
            &[Ty::U32, Ty::U64],
            Ty::U32,
            smallvec![Operand::Reg(byte)],
        );
        let low = b32(l, Opc::And, Operand::Reg(low), Operand::Imm(3));
        let low = b32(l, Opc::Shl, Operand::Reg(low), Operand::Imm(3));
        let sh = nibble_shift(l, off);
        let sh = l.b.op(
            Opc::Add,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Reg(low), Operand::Reg(sh)],
        );
        let v = l.b.op(
            Opc::Cvt,
            &[],
            &[Ty::U32, Ty::U16],
            Ty::U32,
            smallvec![Operand::Reg(t.regs[r])],
        );
        let v = b32(l, Opc::And, Operand::Reg(v), Operand::Imm(0xf));
        let v = b32(l, Opc::Shl, Operand::Reg(v), Operand::Reg(sh));
        let ones = l.b.op(
            Opc::Mov,
            &[],
            &[Ty::B32],
            Ty::B32,
            smallvec![Operand::Imm(0xf)],
        );
        let mask = b32(l, Opc::Shl, Operand::Reg(ones), Operand::Reg(sh));
        let keep = l.b.op(
            Opc::Not,
            &[],
            &[Ty::B32],
            Ty::B32,
            smallvec![Operand::Reg(mask)],
        );
        for (name, x) in [("and", keep), ("or", v)] {
            let mods: Vec<&'static str> = ord.iter().copied().chain(["global", name]).collect();
            l.b.push(Inst::new(
                Opc::Red,
                &mods,
                &[Ty::B32],
                vec![],
                smallvec![Operand::Addr(word, 0), Operand::Reg(x)],
            ));
        }
        if oob.is_some() {
            l.b.end_if();
        }
    }
    if owner.is_some() {
        l.b.end_if();
    }
    Ok(())
}
