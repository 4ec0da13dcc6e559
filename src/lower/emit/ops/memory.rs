//! `load_view_tko` / `store_view_tko` through partition views: padding for
//! out-of-bounds reads and 128-bit vector accesses when the view proves
//! alignment, each element's address and bounds check from
//! [`crate::lower::emit::ops::view_access`]; `load_ptr_tko` / `store_ptr_tko`
//! through tiles of pointers. 4-bit elements (two a byte):
//! [`crate::lower::emit::ops::memory_4bit`].
use std::rc::Rc;

use crate::ir::{Attr, OpId, Padding, Scalar, ValueId};
use crate::lower::analysis::values::Elem;
use crate::lower::analysis::view::{partition, PartitionInfo};
use crate::lower::emit::context::{bits_ty, class_of, Lowerer, Tile};
use crate::lower::emit::ops::view_access::{element, prepare, Access};
use crate::lower::error::LowerError;
use crate::lower::plan::layout::coalesced::load_layout;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};
use smallvec::smallvec;

/// The vector width usable with `layout`: the widest power of two up to
/// the view's width whose elements are this thread's consecutive registers
/// along the fastest dimension.
fn vec_for(p: &PartitionInfo, layout: &LinearLayout, l: &Lowerer) -> usize {
    if p.sparse_dim.is_some() {
        return 1;
    }
    let rank = layout.shape.len();
    let mut v = p.vector_width(&l.plan.facts, l.plan.target.max_access_bytes()) as usize;
    if rank == 0 {
        return 1;
    }
    let steps = layout
        .register
        .iter()
        .enumerate()
        .take_while(|(j, b)| {
            let mut want = vec![0; rank];
            want[rank - 1] = 1 << j;
            **b == want
        })
        .count();
    while v > 1 << steps {
        v /= 2;
    }
    v
}

/// The bits a padding value stands for in element kind `e`, as NVIDIA's
/// tileiras pads (`None`: a value it refuses, an infinity for f8E4M3FN,
/// -0 or an infinity for f8E8M0FNU).
fn padding_bits(e: Elem, pad: Option<Padding>) -> Option<u64> {
    let Elem::Num(s) = e else { return Some(0) };
    let (sign, inf, nan): (u64, Option<u64>, u64) = match s {
        // Unsigned without infinities: -0 is 0, infinities are NaN.
        Scalar::F8E5M3FNU => (0, Some(0xff), 0xff),
        // Powers of two only: zero pads with code 0 (2^-127).
        Scalar::F8E8M0FNU => {
            return match pad {
                Some(Padding::Zero) => Some(0),
                Some(Padding::Nan) | None => Some(0xff),
                _ => None,
            }
        }
        Scalar::F16 => (0x8000, Some(0x7c00), 0x7e00),
        Scalar::BF16 => (0x8000, Some(0x7f80), 0x7fc0),
        Scalar::F32 => (0x8000_0000, Some(0x7f80_0000), 0x7fc0_0000),
        Scalar::F64 => (1 << 63, Some(0x7ff0_0000_0000_0000), 0x7ff8_0000_0000_0000),
        Scalar::F8E5M2 => (0x80, Some(0x7c), 0x7e),
        Scalar::F8E4M3FN => (0x80, None, 0x7f),
        _ => return Some(0),
    };
    match pad {
        Some(Padding::Zero) => Some(0),
        Some(Padding::NegZero) => Some(sign),
        Some(Padding::PosInf) => inf,
        Some(Padding::NegInf) => inf.map(|i| i | sign),
        Some(Padding::Nan) | None => Some(nan),
    }
}

/// How elements of `e` are stored: `i1` as a byte (0 or 1, as NVIDIA's
/// tileiras stores them), everything else as itself.
fn stored(e: Elem) -> Elem {
    if e.bits() == 1 {
        Elem::Num(Scalar::I8)
    } else {
        e
    }
}

/// A stored `i1` byte as a predicate: its low byte is non-zero.
fn byte_to_pred(l: &mut Lowerer, b: Reg) -> Reg {
    let low = l.b.op(
        Opc::And,
        &[],
        &[Ty::B16],
        Ty::B16,
        smallvec![Operand::Reg(b), Operand::Imm(255)],
    );
    l.b.op(
        Opc::Setp,
        &["ne"],
        &[Ty::B16],
        Ty::Pred,
        smallvec![Operand::Reg(low), Operand::Imm(0)],
    )
}

/// Predicates as the bytes that store them (1 or 0).
fn preds_to_bytes(l: &mut Lowerer, t: &Tile) -> Tile {
    let regs = t
        .regs
        .iter()
        .map(|&p| {
            l.b.op(
                Opc::Selp,
                &[],
                &[Ty::B16],
                Ty::B16,
                smallvec![Operand::Imm(1), Operand::Imm(0), Operand::Reg(p)],
            )
        })
        .collect();
    Tile {
        elem: Elem::Num(Scalar::I8),
        layout: t.layout.clone(),
        regs,
    }
}

/// The PTX semantics and scope modifiers of a load's or store's memory
/// ordering (`relaxed.gpu`, `acquire.cta`, ...); none for `weak`.
pub(super) fn ordering(l: &Lowerer, op: OpId) -> Result<Vec<&'static str>, LowerError> {
    let o = &l.m.ops[op];
    let sem = match o.attr("memory_ordering_semantics") {
        None | Some(Attr::Enum(_, 0)) => return Ok(Vec::new()),
        Some(Attr::Enum(_, 1)) => "relaxed",
        Some(Attr::Enum(_, 2)) => "acquire",
        Some(Attr::Enum(_, 3)) => "release",
        _ => return Err(l.unsupported_feature(op, "this memory ordering")),
    };
    let scope = match o.attr("memory_scope") {
        Some(Attr::Enum(_, 0)) => "cta",
        Some(Attr::Enum(_, 2)) => "sys",
        _ => "gpu",
    };
    Ok(vec![sem, scope])
}

/// `ord` followed by `mods`: the modifiers of an ordered access.
fn with_ordering(ord: &[&'static str], mods: Vec<&'static str>) -> Vec<&'static str> {
    ord.iter().copied().chain(mods).collect()
}

/// The PTX type moving one element of kind `e` to or from memory, or what
/// this lowering cannot move: i1 (only as bytes) and the 4-bit types (two
/// to a byte in memory; views move them, see [`crate::lower::emit::ops::memory_4bit`]).
pub(super) fn mem_ty(e: Elem) -> Result<Ty, &'static str> {
    if e.bits() == 4 {
        return Err("4-bit elements in memory");
    }
    match bits_ty(e) {
        Ty::Pred => Err("i1 elements in memory"),
        t => Ok(t),
    }
}

/// Lowers `load_view_tko`.
pub fn load_view(l: &mut Lowerer, op: OpId) -> Result<(), LowerError> {
    let ord = ordering(l, op)?;
    let o = &l.m.ops[op];
    let (Some(view), Some(&res)) = (o.operand("view"), o.results.first()) else {
        return Err(l.unsupported(op));
    };
    let index = o.operand_group("index").to_vec();
    let p = partition(l.m, view)
        .ok_or_else(|| l.unsupported_feature(op, "a view other than a partition view"))?;
    if p.elem.bits() == 4 {
        return crate::lower::emit::ops::memory_4bit::load_view(l, op, &p, &index, res, &ord);
    }
    let wanted: Rc<LinearLayout> = l.layout_of(res);
    let elem = p.elem;
    // Rows read whole, then moved into the users' layout, where theirs
    // would have each lane read its own row and the plan found room for
    // the move: as the plan says; for a load it does not cover (a gather,
    // or one left to its product's copy and read into registers where the
    // copy fits nowhere), as the rows' layout says.
    let fits = !l.chosen().unmoved(op);
    let planned = l.plan.conversions.of(op, res);
    let rows = match planned {
        Some(c) => c.filter(|_| fits).map(|c| c.from.clone()),
        None => fits
            .then(|| load_layout(&p, &wanted, l.plan.warps))
            .flatten(),
    };
    let layout = rows.unwrap_or_else(|| wanted.clone());
    let regs = read(l, op, &p, &index, &layout, &ord)?;
    let mut t = Tile { elem, layout, regs };
    if t.layout != wanted {
        t = match planned.flatten() {
            Some(c) => l.follow(op, res, &t, &wanted, c.how)?,
            None => l.move_tile(res, &t, &wanted)?,
        };
    }
    l.bind(res, t);
    Ok(())
}

/// Reads the tile of view `p` at `index` (tile indices) in `layout` (of
/// `p`'s tile shape) with `ord`'s ordering, out-of-bounds elements padded.
/// Returns the registers of the tile.
pub(super) fn read(
    l: &mut Lowerer,
    op: OpId,
    p: &PartitionInfo,
    index: &[ValueId],
    layout: &LinearLayout,
    ord: &[&'static str],
) -> Result<Vec<Reg>, LowerError> {
    let mut stored_p = p.clone();
    stored_p.elem = stored(p.elem);
    let mut a = prepare(l, op, &stored_p, index, layout)?;
    read_at(l, op, p, layout, &mut a, ord)
}

/// [`read`] through access `a` (prepared for `p` with its elements as
/// stored).
pub(crate) fn read_at(
    l: &mut Lowerer,
    op: OpId,
    p: &PartitionInfo,
    layout: &LinearLayout,
    a: &mut Access,
    ord: &[&'static str],
) -> Result<Vec<Reg>, LowerError> {
    let elem = p.elem;
    let mut p = p.clone();
    p.elem = stored(elem);
    let ty = mem_ty(p.elem).map_err(|w| l.unsupported_feature(op, w))?;
    let vec = vec_for(&p, layout, l);
    let pad = padding_bits(
        p.elem,
        Some(crate::lower::analysis::view::load_padding(p.padding)),
    )
    .ok_or_else(|| l.unsupported_feature(op, "this padding value for its element type"))?;
    let n = layout.num_registers();
    let mut regs: Vec<Option<Reg>> = vec![None; n];
    let mut r = 0;
    while r < n {
        let canon = layout.canonical_register(r);
        if canon != r {
            regs[r] = regs[canon];
            r += 1;
            continue;
        }
        let c = layout.apply(r, 0);
        let (oob, addr) = element(l, a, &c, r);
        // Sub-word elements load as packed 32-bit words, split after.
        let bits = p.elem.bits();
        let packed = crate::lower::emit::ops::packed::words(bits, vec);
        let (lty, words): (Ty, Vec<Reg>) = match packed {
            Some(k) => (Ty::B32, (0..k).map(|_| l.b.reg(RegClass::B32)).collect()),
            None => (ty, (0..vec).map(|_| l.b.reg(class_of(p.elem))).collect()),
        };
        if oob.is_some() {
            let (mty, src) = match packed {
                Some(_) => (
                    Ty::B32,
                    Operand::Imm(crate::lower::emit::ops::packed::splat(pad, bits)),
                ),
                None => (
                    if ty == Ty::B8 { Ty::B16 } else { ty },
                    Operand::Reg(l.imm(p.elem, pad)),
                ),
            };
            for d in &words {
                l.b.push(Inst::new(
                    Opc::Mov,
                    &[],
                    &[mty],
                    smallvec![Operand::Reg(*d)],
                    vec![src.clone()],
                ));
            }
        }
        if let Some(q) = oob {
            l.b.begin_if(q, false);
        }
        let (mods, dsts): (Vec<&'static str>, Operand) = match words.len() {
            1 => (vec!["global"], Operand::Reg(words[0])),
            2 => (vec!["global", "v2"], Operand::Vec(words.clone())),
            _ => (vec!["global", "v4"], Operand::Vec(words.clone())),
        };
        let mods = with_ordering(ord, mods);
        l.b.push(Inst::new(Opc::Ld, &mods, &[lty], vec![dsts], vec![addr]));
        if oob.is_some() {
            l.b.end_if();
        }
        let dst: Vec<Reg> = match packed {
            Some(_) => words
                .iter()
                .flat_map(|&w| crate::lower::emit::ops::packed::unpack(l, w, bits))
                .collect(),
            None => words,
        };
        for (j, d) in dst.into_iter().enumerate() {
            regs[r + j] = Some(d);
        }
        r += vec;
    }
    let mut regs = regs
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| l.unsupported_feature(op, "a sparse layout"))?;
    if elem != p.elem {
        regs = regs.into_iter().map(|b| byte_to_pred(l, b)).collect();
    }
    Ok(regs)
}

/// Lowers `store_view_tko`.
pub fn store_view(l: &mut Lowerer, op: OpId) -> Result<(), LowerError> {
    let ord = ordering(l, op)?;
    let o = &l.m.ops[op];
    let (Some(view), Some(tile)) = (o.operand("view"), o.operand("tile")) else {
        return Err(l.unsupported(op));
    };
    let index = o.operand_group("index").to_vec();
    let mut p = partition(l.m, view)
        .ok_or_else(|| l.unsupported_feature(op, "a view other than a partition view"))?;
    let layout = l.tile(op, tile)?.layout;
    let mut t = l.tile_in(op, tile, &layout)?;
    if p.elem.bits() == 4 {
        return crate::lower::emit::ops::memory_4bit::store_view(l, op, &p, &index, &t, &ord);
    }
    if p.elem.bits() == 1 {
        p.elem = stored(p.elem);
        t = preds_to_bytes(l, &t);
    }
    let ty = mem_ty(p.elem).map_err(|w| l.unsupported_feature(op, w))?;
    let mut a = prepare(l, op, &p, &index, &layout)?;
    let vec = vec_for(&p, &layout, l);
    let n = layout.num_registers();
    let owner = l.owner_pred(&layout);
    if let Some(q) = owner {
        l.b.begin_if(q, true);
    }
    let mut r = 0;
    while r < n {
        if layout.canonical_register(r) != r {
            r += 1;
            continue;
        }
        let c = layout.apply(r, 0);
        let (oob, addr) = element(l, &mut a, &c, r);
        // Sub-word elements store as packed 32-bit words.
        let bits = p.elem.bits();
        let (sty, vals) = match crate::lower::emit::ops::packed::words(bits, vec) {
            Some(_) => (
                Ty::B32,
                t.regs[r..r + vec]
                    .chunks((32 / bits) as usize)
                    .map(|e| crate::lower::emit::ops::packed::pack(l, e, bits))
                    .collect(),
            ),
            None => (ty, t.regs[r..r + vec].to_vec()),
        };
        if let Some(q) = oob {
            l.b.begin_if(q, false);
        }
        let (mods, val): (Vec<&'static str>, Operand) = match vals.len() {
            1 => (vec!["global"], Operand::Reg(vals[0])),
            2 => (vec!["global", "v2"], Operand::Vec(vals)),
            _ => (vec!["global", "v4"], Operand::Vec(vals)),
        };
        let mods = with_ordering(&ord, mods);
        l.b.push(Inst::new(Opc::St, &mods, &[sty], vec![], vec![addr, val]));
        if oob.is_some() {
            l.b.end_if();
        }
        r += vec;
    }
    if owner.is_some() {
        l.b.end_if();
    }
    Ok(())
}

/// Lowers `load_ptr_tko`: one load per element from a tile of pointers,
/// skipped where the mask is false (the result is then the padding value,
/// or zero without one).
pub fn load_ptr(l: &mut Lowerer, op: OpId) -> Result<(), LowerError> {
    let ord = ordering(l, op)?;
    let o = l.m.ops[op].clone();
    let (Some(src), Some(&res)) = (o.operand("source"), o.results.first()) else {
        return Err(l.unsupported(op));
    };
    let Some((_, elem)) = crate::lower::analysis::values::value_tile(l.m, res) else {
        return Err(l.unsupported(op));
    };
    let mem = stored(elem);
    let ty = mem_ty(mem).map_err(|w| l.unsupported_feature(op, w))?;
    let layout = l.layout_of(res);
    let ptrs = l.tile_in(op, src, &layout)?;
    let mask = match o.operand("mask") {
        Some(m) => Some(l.tile_in(op, m, &layout)?),
        None => None,
    };
    let pad = match o.operand("paddingValue") {
        Some(p) => {
            let t = l.tile_in(op, p, &layout)?;
            Some(if mem != elem {
                preds_to_bytes(l, &t)
            } else {
                t
            })
        }
        None => None,
    };
    let mut regs: Vec<Reg> = Vec::new();
    for r in 0..layout.num_registers() {
        let canon = layout.canonical_register(r);
        if canon != r {
            regs.push(regs[canon]);
            continue;
        }
        let d = l.b.reg(class_of(mem));
        let mty = if ty == Ty::B8 { Ty::B16 } else { ty };
        if let Some(m) = &mask {
            let init = match &pad {
                Some(p) => Operand::Reg(p.regs[r]),
                None => Operand::Imm(0),
            };
            l.b.push(Inst::new(
                Opc::Mov,
                &[],
                &[mty],
                smallvec![Operand::Reg(d)],
                vec![init],
            ));
            l.b.begin_if(m.regs[r], true);
        }
        l.b.push(Inst::new(
            Opc::Ld,
            &with_ordering(&ord, vec!["global"]),
            &[ty],
            smallvec![Operand::Reg(d)],
            smallvec![Operand::Addr(ptrs.regs[r], 0)],
        ));
        if mask.is_some() {
            l.b.end_if();
        }
        regs.push(if mem != elem { byte_to_pred(l, d) } else { d });
    }
    l.bind(res, Tile { elem, layout, regs });
    Ok(())
}

/// Lowers `store_ptr_tko`: one store per element through a tile of
/// pointers, skipped where the mask is false.
pub fn store_ptr(l: &mut Lowerer, op: OpId) -> Result<(), LowerError> {
    let ord = ordering(l, op)?;
    let o = l.m.ops[op].clone();
    let (Some(dst), Some(val)) = (o.operand("destination"), o.operand("value")) else {
        return Err(l.unsupported(op));
    };
    let mut t = l.tile(op, val)?;
    if t.elem.bits() == 1 {
        t = preds_to_bytes(l, &t);
    }
    let ty = mem_ty(t.elem).map_err(|w| l.unsupported_feature(op, w))?;
    let layout = t.layout.clone();
    let ptrs = l.tile_in(op, dst, &layout)?;
    let mask = match o.operand("mask") {
        Some(m) => Some(l.tile_in(op, m, &layout)?),
        None => None,
    };
    let owner = l.owner_pred(&layout);
    if let Some(q) = owner {
        l.b.begin_if(q, true);
    }
    for r in 0..layout.num_registers() {
        if layout.canonical_register(r) != r {
            continue;
        }
        if let Some(m) = &mask {
            l.b.begin_if(m.regs[r], true);
        }
        l.b.push(Inst::new(
            Opc::St,
            &with_ordering(&ord, vec!["global"]),
            &[ty],
            vec![],
            smallvec![Operand::Addr(ptrs.regs[r], 0), Operand::Reg(t.regs[r])],
        ));
        if mask.is_some() {
            l.b.end_if();
        }
    }
    if owner.is_some() {
        l.b.end_if();
    }
    Ok(())
}
