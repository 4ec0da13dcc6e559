//! `load_view_tko` / `store_view_tko` through partition views: per-element
//! address arithmetic from the layout, a bounds check per access (skipped on
//! dimensions declared in bounds), padding for out-of-bounds reads, and
//! 128-bit vector accesses when the view proves alignment. 4-bit elements
//! (two a byte): [`crate::lower::emit::ops::memory_4bit`].
use std::rc::Rc;

use crate::ir::{Attr, OpId, Padding, Scalar, ValueId};
use crate::lower::analysis::values::Elem;
use crate::lower::analysis::view::{partition, Extent, PartitionInfo};
use crate::lower::emit::context::{bits_ty, class_of, Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};
use rustc_hash::FxHashMap;
use smallvec::{smallvec, SmallVec};

/// Per-access facts shared by every register of one load or store.
pub(super) struct Access {
    /// Index of the first element of this thread, per tile dimension (s64).
    pub(super) start: Vec<Reg>,
    /// Tensor extent of each tile dimension (u64 operand).
    pub(super) bound: Vec<Operand>,
    /// Stride of each tile dimension in elements.
    stride: Vec<Extent>,
    /// Stride registers (s64) for dynamic strides, per tile dimension.
    stride_reg: Vec<Option<Reg>>,
    /// Address of this thread's first element.
    addr0: Reg,
    /// Bytes per element.
    esize: i64,
    /// Whether each tile dimension needs a bounds check.
    pub(super) check: Vec<bool>,
    /// For gather/scatter views: the sparse dimension and, per register,
    /// the element's index along it (s64).
    rows: Option<(usize, Vec<Reg>)>,
    /// Out-of-bounds predicates already computed, by tile dimension and
    /// register offset along it (one access's elements share them).
    checked: FxHashMap<(usize, i64), Reg>,
    /// Per tile dimension: whether its start and extent are known
    /// non-negative (its checks then compare the room left, in 32 bits).
    nonneg: Vec<bool>,
    /// Per tile dimension: the room left, `clamp(bound - start, 0, 2^31-1)`
    /// (u32), once computed.
    room: Vec<Option<Reg>>,
    /// Row addresses already computed (dense views), by the register
    /// offsets along the dimensions of dynamic stride.
    rows_at: FxHashMap<SmallVec<[i64; 4]>, Reg>,
}

/// An i8/i16/i32/i64 scalar value widened to 64 bits (zero-extended when
/// known non-negative).
fn widen(l: &mut Lowerer, op: OpId, v: ValueId) -> Result<Reg, LowerError> {
    let t = l.tile(op, v)?;
    let r = t.regs[0];
    let nonneg = l.plan.facts.get(&v).is_some_and(|f| f.nonneg);
    let from = match (t.elem, nonneg) {
        (Elem::Num(Scalar::I64), _) => return Ok(r),
        (Elem::Num(Scalar::I32), true) => Ty::U32,
        (Elem::Num(Scalar::I32), false) => Ty::S32,
        (Elem::Num(Scalar::I16), true) => Ty::U16,
        (Elem::Num(Scalar::I16), false) => Ty::S16,
        (Elem::Num(Scalar::I8), true) => Ty::U8,
        (Elem::Num(Scalar::I8), false) => Ty::S8,
        _ => return Err(l.unsupported_feature(op, "an index or extent of this type")),
    };
    let to = if nonneg { Ty::U64 } else { Ty::S64 };
    Ok(l.b.op(
        Opc::Cvt,
        &[],
        &[to, from],
        Ty::B64,
        smallvec![Operand::Reg(r)],
    ))
}

fn is_pow2_unit(b: &[i64]) -> Option<(usize, u32)> {
    let nz: Vec<(usize, i64)> = b
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, x)| *x != 0)
        .collect();
    match nz.as_slice() {
        [(d, x)] if x.count_ones() == 1 && *x > 0 => Some((*d, x.trailing_zeros())),
        _ => None,
    }
}

/// The thread part of the coordinate along each tile dimension, as u32
/// registers (`None` where it is always 0).
fn thread_coords(
    l: &mut Lowerer,
    op: OpId,
    layout: &LinearLayout,
) -> Result<Vec<Option<Reg>>, LowerError> {
    let rank = layout.shape.len();
    let bases = layout.thread_bases();
    let mut out = vec![None; rank];
    let mut k = 0;
    while k < bases.len() {
        if LinearLayout::is_zero(&bases[k]) {
            k += 1;
            continue;
        }
        let Some((d, s)) = is_pow2_unit(&bases[k]) else {
            return Err(l.unsupported_feature(op, "a non-blocked layout"));
        };
        // Extend a run of consecutive bits along the same dimension.
        let mut n = 1;
        while k + n < bases.len() && is_pow2_unit(&bases[k + n]) == Some((d, s + n as u32)) {
            n += 1;
        }
        let tid = l.tid();
        let mut v = tid;
        if k > 0 {
            v = l.b.op(
                Opc::Shr,
                &[],
                &[Ty::U32],
                Ty::U32,
                smallvec![Operand::Reg(v), Operand::Imm(k as i64)],
            );
        }
        if k + n < bases.len() {
            v = l.b.op(
                Opc::And,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(v), Operand::Imm((1i64 << n) - 1)],
            );
        }
        if s > 0 {
            v = l.b.op(
                Opc::Shl,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(v), Operand::Imm(i64::from(s))],
            );
        }
        out[d] = Some(match out[d] {
            None => v,
            Some(prev) => l.b.op(
                Opc::Or,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(prev), Operand::Reg(v)],
            ),
        });
        k += n;
    }
    Ok(out)
}

pub(super) fn prepare(
    l: &mut Lowerer,
    op: OpId,
    p: &PartitionInfo,
    index: &[ValueId],
    layout: &LinearLayout,
) -> Result<Access, LowerError> {
    let rank = p.tile_shape.len();
    if index.len() != rank || layout.shape != p.tile_shape {
        return Err(l.unsupported_feature(op, "an index or layout not matching the view"));
    }
    // Register and thread parts must not overlap for `add` to equal xor.
    for d in 0..rank {
        let bits = |bs: &[Vec<i64>]| bs.iter().fold(0i64, |acc, b| acc | b[d]);
        if bits(&layout.register) & bits(&layout.thread_bases()) != 0 {
            return Err(l.unsupported_feature(op, "an overlapping layout"));
        }
    }
    let tc = thread_coords(l, op, layout)?;
    let inbounds = match l.m.ops[op].attr("inbounds") {
        Some(Attr::DenseBool(v)) => v.clone(),
        _ => Vec::new(),
    };
    let mut start = Vec::new();
    let mut bound = Vec::new();
    let mut stride = Vec::new();
    let mut stride_reg = Vec::new();
    let mut check = Vec::new();
    let mut nonneg = Vec::new();
    for i in 0..rank {
        let d = p.dim_map[i];
        if p.sparse_dim == Some(i) {
            // Indexed per element (see `Access::rows`): no tile offset.
            start.push(l.b.op(
                Opc::Mov,
                &[],
                &[Ty::B64],
                Ty::S64,
                smallvec![Operand::Imm(0)],
            ));
            bound.push(match p.shape[d] {
                Extent::Static(n) => Operand::Imm(n),
                Extent::Dynamic(v) => Operand::Reg(widen(l, op, v)?),
            });
            stride.push(p.strides[d]);
            stride_reg.push(match p.strides[d] {
                Extent::Static(_) => None,
                Extent::Dynamic(v) => Some(widen(l, op, v)?),
            });
            check.push(true);
            nonneg.push(false);
            continue;
        }
        // A start `index * step + thread offset` from an index of at most
        // 32 bits known non-negative, and an extent known non-negative.
        let narrow = crate::lower::analysis::values::value_tile(l.m, index[i])
            .is_some_and(|(_, e)| e.bits() <= 32);
        let known = |v: ValueId| l.plan.facts.get(&v).is_some_and(|f| f.nonneg);
        let extent_nonneg = match p.shape[d] {
            Extent::Static(n) => n >= 0,
            Extent::Dynamic(v) => known(v),
        };
        nonneg.push(narrow && known(index[i]) && p.steps[i] >= 0 && extent_nonneg);
        let idx = widen(l, op, index[i])?;
        let mut s = l.b.op(
            Opc::Mul,
            &["lo"],
            &[Ty::S64],
            Ty::S64,
            smallvec![Operand::Reg(idx), Operand::Imm(p.steps[i])],
        );
        if let Some(t) = tc[i] {
            let t64 = l.b.op(
                Opc::Cvt,
                &[],
                &[Ty::U64, Ty::U32],
                Ty::U64,
                smallvec![Operand::Reg(t)],
            );
            s = l.b.op(
                Opc::Add,
                &[],
                &[Ty::S64],
                Ty::S64,
                smallvec![Operand::Reg(s), Operand::Reg(t64)],
            );
        }
        start.push(s);
        bound.push(match p.shape[d] {
            Extent::Static(n) => Operand::Imm(n),
            Extent::Dynamic(v) => Operand::Reg(widen(l, op, v)?),
        });
        stride.push(p.strides[d]);
        stride_reg.push(match p.strides[d] {
            Extent::Static(_) => None,
            Extent::Dynamic(v) => Some(widen(l, op, v)?),
        });
        check.push(!inbounds.get(i).copied().unwrap_or(false));
    }
    let esize = i64::from(p.elem.bits().max(8) / 8);
    crate::lower::emit::ops::static_offsets::fit(l, op, &p.tile_shape, &stride, esize)?;
    let base = l.tile(op, p.base)?.regs[0];
    let mut off: Option<Reg> = None;
    for i in 0..rank {
        let term = match (stride[i], stride_reg[i]) {
            (Extent::Static(1), _) => start[i],
            (Extent::Static(n), _) => l.b.op(
                Opc::Mul,
                &["lo"],
                &[Ty::S64],
                Ty::S64,
                smallvec![Operand::Reg(start[i]), Operand::Imm(n)],
            ),
            (_, Some(r)) => l.b.op(
                Opc::Mul,
                &["lo"],
                &[Ty::S64],
                Ty::S64,
                smallvec![Operand::Reg(start[i]), Operand::Reg(r)],
            ),
            (Extent::Dynamic(_), None) => {
                return Err(l.unsupported_feature(op, "an unresolved stride"))
            }
        };
        off = Some(match off {
            None => term,
            Some(o) => l.b.op(
                Opc::Add,
                &[],
                &[Ty::S64],
                Ty::S64,
                smallvec![Operand::Reg(o), Operand::Reg(term)],
            ),
        });
    }
    let addr0 = match off {
        None => base,
        Some(o) => {
            let bytes = l.b.op(
                Opc::Mul,
                &["lo"],
                &[Ty::S64],
                Ty::S64,
                smallvec![Operand::Reg(o), Operand::Imm(esize)],
            );
            l.b.op(
                Opc::Add,
                &[],
                &[Ty::S64],
                Ty::S64,
                smallvec![Operand::Reg(base), Operand::Reg(bytes)],
            )
        }
    };
    // Gather/scatter: the index of each element along the sparse dimension.
    let rows = match p.sparse_dim {
        Some(sd) => {
            let mut sliced = layout.clone();
            for d in (0..rank).rev() {
                if d != sd {
                    sliced = sliced.slice(d);
                }
            }
            let t = l.tile_in(op, index[sd], &std::rc::Rc::new(sliced))?;
            let rows = t
                .regs
                .iter()
                .map(|&r| {
                    if r.class == crate::ptx::RegClass::B64 {
                        r
                    } else {
                        l.b.op(
                            Opc::Cvt,
                            &[],
                            &[Ty::S64, Ty::S32],
                            Ty::S64,
                            smallvec![Operand::Reg(r)],
                        )
                    }
                })
                .collect();
            Some((sd, rows))
        }
        None => None,
    };
    Ok(Access {
        start,
        bound,
        stride,
        stride_reg,
        addr0,
        esize,
        check,
        rows,
        checked: FxHashMap::default(),
        room: vec![None; nonneg.len()],
        nonneg,
        rows_at: FxHashMap::default(),
    })
}

/// `opc` of `a` and `b` in s64.
pub(super) fn s64(l: &mut Lowerer, opc: Opc, a: Operand, b: Operand) -> Reg {
    l.b.op(opc, &[], &[Ty::S64], Ty::S64, smallvec![a, b])
}

/// The out-of-bounds predicate and address of the element at register
/// coordinate `c` (`None` predicate: always in bounds).
pub(super) fn element(
    l: &mut Lowerer,
    a: &mut Access,
    c: &[i64],
    r: usize,
) -> (Option<Reg>, Operand) {
    let sparse = a.rows.as_ref().map(|(sd, rows)| (*sd, rows[r]));
    let mut oob: Option<Reg> = None;
    for (i, &ci) in c.iter().enumerate() {
        if !a.check[i] {
            continue;
        }
        let p = if let Some((_, row)) = sparse.filter(|(sd, _)| *sd == i) {
            l.b.op(
                Opc::Setp,
                &["ge"],
                &[Ty::U64],
                Ty::Pred,
                smallvec![Operand::Reg(row), a.bound[i].clone()],
            )
        } else if let Some(&p) = a.checked.get(&(i, ci)) {
            p
        } else {
            let p = match a.room(l, i) {
                // No wrap-around: out of bounds when the room left is at
                // most `ci`; one 32-bit register serves every offset.
                Some(room) => l.b.op(
                    Opc::Setp,
                    &["le"],
                    &[Ty::U32],
                    Ty::Pred,
                    smallvec![Operand::Reg(room), Operand::Imm(ci)],
                ),
                None => {
                    let idx = match ci {
                        0 => a.start[i],
                        _ => s64(l, Opc::Add, Operand::Reg(a.start[i]), Operand::Imm(ci)),
                    };
                    l.b.op(
                        Opc::Setp,
                        &["ge"],
                        &[Ty::U64],
                        Ty::Pred,
                        smallvec![Operand::Reg(idx), a.bound[i].clone()],
                    )
                }
            };
            a.checked.insert((i, ci), p);
            p
        };
        oob = Some(match oob {
            None => p,
            Some(q) => l.b.op(
                Opc::Or,
                &[],
                &[Ty::Pred],
                Ty::Pred,
                smallvec![Operand::Reg(q), Operand::Reg(p)],
            ),
        });
    }
    let mut imm = 0i64;
    let mut addr = a.addr0;
    if let Some((sd, row)) = sparse {
        let scaled = match (a.stride[sd], a.stride_reg[sd]) {
            (Extent::Static(n), _) => l.b.op(
                Opc::Mul,
                &["lo"],
                &[Ty::S64],
                Ty::S64,
                smallvec![Operand::Reg(row), Operand::Imm(n * a.esize)],
            ),
            (_, Some(s)) => {
                let t = l.b.op(
                    Opc::Mul,
                    &["lo"],
                    &[Ty::S64],
                    Ty::S64,
                    smallvec![Operand::Reg(row), Operand::Reg(s)],
                );
                l.b.op(
                    Opc::Mul,
                    &["lo"],
                    &[Ty::S64],
                    Ty::S64,
                    smallvec![Operand::Reg(t), Operand::Imm(a.esize)],
                )
            }
            _ => row,
        };
        addr = l.b.op(
            Opc::Add,
            &[],
            &[Ty::S64],
            Ty::S64,
            smallvec![Operand::Reg(addr), Operand::Reg(scaled)],
        );
    }
    // Static strides fold into the immediate; dynamic ones add registers,
    // shared by the elements with the same offsets along those dimensions
    // (`key`: the offset along each dynamic-stride dimension, else 0).
    let mut key: SmallVec<[i64; 4]> = SmallVec::new();
    for (i, &ci) in c.iter().enumerate() {
        let k = match (a.stride[i], a.stride_reg[i]) {
            _ if ci == 0 || sparse.is_some_and(|(sd, _)| sd == i) => 0,
            (Extent::Static(n), _) => {
                imm += ci * n * a.esize;
                0
            }
            (_, Some(_)) => ci,
            _ => 0,
        };
        key.push(k);
    }
    if sparse.is_none() {
        if let Some(&row_addr) = a.rows_at.get(&key) {
            return (oob, Operand::Addr(row_addr, imm));
        }
    }
    for (i, &k) in key.iter().enumerate() {
        let Some(r) = a.stride_reg[i].filter(|_| k != 0) else {
            continue;
        };
        let t = l.b.op(
            Opc::Mul,
            &["lo"],
            &[Ty::S64],
            Ty::S64,
            smallvec![Operand::Reg(r), Operand::Imm(k * a.esize)],
        );
        addr = l.b.op(
            Opc::Add,
            &[],
            &[Ty::S64],
            Ty::S64,
            smallvec![Operand::Reg(addr), Operand::Reg(t)],
        );
    }
    if sparse.is_none() {
        a.rows_at.insert(key, addr);
    }
    (oob, Operand::Addr(addr, imm))
}

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
    // Rows read whole, then moved into the users' layout, when theirs
    // would have each lane read its own row.
    let layout = crate::lower::emit::ops::coalesce::load_layout_in(l, &p, &wanted)
        .unwrap_or_else(|| wanted.clone());
    let elem = p.elem;
    let regs = read(l, op, &p, &index, &layout, &ord)?;
    let mut t = Tile { elem, layout, regs };
    if t.layout != wanted {
        t = l.move_tile(&t, &wanted)?;
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

impl Access {
    /// `clamp(bound - start, 0, 2^31 - 1)` of tile dimension `d` as u32,
    /// computed once until the access moves; none unless the dimension's
    /// start and extent are known non-negative (the room then decides every
    /// bounds check exactly: offset `c` is out when the room is at most `c`).
    pub(super) fn room(&mut self, l: &mut Lowerer, d: usize) -> Option<Reg> {
        if !self.nonneg[d] {
            return None;
        }
        if let Some(r) = self.room[d] {
            return Some(r);
        }
        let left = s64(
            l,
            Opc::Sub,
            self.bound[d].clone(),
            Operand::Reg(self.start[d]),
        );
        let left = s64(l, Opc::Max, Operand::Reg(left), Operand::Imm(0));
        let left = s64(
            l,
            Opc::Min,
            Operand::Reg(left),
            Operand::Imm(i64::from(i32::MAX)),
        );
        let r = l.b.op(
            Opc::Cvt,
            &[],
            &[Ty::U32, Ty::S64],
            Ty::U32,
            smallvec![Operand::Reg(left)],
        );
        self.room[d] = Some(r);
        Some(r)
    }

    /// Moves the access `by` elements along tile dimension `d`; `step`
    /// holds `by` times the dimension's stride in bytes when that stride
    /// is dynamic.
    pub(super) fn advance(&mut self, l: &mut Lowerer, d: usize, by: i64, step: Option<Reg>) {
        self.start[d] = l.b.op(
            Opc::Add,
            &[],
            &[Ty::S64],
            Ty::S64,
            smallvec![Operand::Reg(self.start[d]), Operand::Imm(by)],
        );
        self.checked.clear();
        self.room[d] = None;
        let bytes = match (self.stride[d], step) {
            (Extent::Static(n), _) => Operand::Imm(n * by * self.esize),
            (_, Some(r)) => Operand::Reg(r),
            _ => return,
        };
        self.addr0 = l.b.op(
            Opc::Add,
            &[],
            &[Ty::S64],
            Ty::S64,
            smallvec![Operand::Reg(self.addr0), bytes],
        );
        self.rows_at.clear();
    }

    /// `by` times the stride of tile dimension `d` in bytes, in a register
    /// when the stride is dynamic.
    pub(super) fn step(&self, l: &mut Lowerer, d: usize, by: i64) -> Option<Reg> {
        let r = self.stride_reg[d]?;
        Some(l.b.op(
            Opc::Mul,
            &["lo"],
            &[Ty::S64],
            Ty::S64,
            smallvec![Operand::Reg(r), Operand::Imm(by * self.esize)],
        ))
    }
}

/// [`read`] through access `a` (prepared for `p` with its elements as
/// stored).
pub(super) fn read_at(
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
