//! Where each element of a load or store through a partition view lies: the
//! per-access facts ([`Access`]) a view, its tile indices and a layout give
//! (this thread's start, extent and stride per tile dimension, its first
//! address), and per element the bounds check (skipped on dimensions
//! declared in bounds) and address ([`element`]). Used by the view loads
//! and stores of [`crate::lower::emit::ops::memory`] and by the products,
//! atomics and 4-bit accesses that read or write views.
use crate::ir::{Attr, OpId, Scalar, ValueId};
use crate::lower::analysis::values::Elem;
use crate::lower::analysis::view::{Extent, PartitionInfo};
use crate::lower::emit::context::Lowerer;
use crate::lower::error::LowerError;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Opc, Operand, Reg, Ty};
use rustc_hash::FxHashMap;
use smallvec::{smallvec, SmallVec};

/// Per-access facts shared by every register of one load or store.
pub(crate) struct Access {
    /// Index of the first element of this thread, per tile dimension (s64).
    pub(crate) start: Vec<Reg>,
    /// Tensor extent of each tile dimension (u64 operand).
    pub(crate) bound: Vec<Operand>,
    /// Stride of each tile dimension in elements.
    stride: Vec<Extent>,
    /// Stride registers (s64) for dynamic strides, per tile dimension.
    stride_reg: Vec<Option<Reg>>,
    /// Address of this thread's first element.
    addr0: Reg,
    /// Bytes per element.
    esize: i64,
    /// Whether each tile dimension needs a bounds check.
    pub(crate) check: Vec<bool>,
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

/// Sets up the access of view `p` at tile indices `index` to the elements
/// of `layout` (of `p`'s tile shape): this thread's start, the extent and
/// stride along each tile dimension, and the address of its first element.
pub(crate) fn prepare(
    l: &mut Lowerer,
    op: OpId,
    p: &PartitionInfo,
    index: &[ValueId],
    layout: &LinearLayout,
) -> Result<Access, LowerError> {
    check_layout(l, op, p, index, layout)?;
    let rank = p.tile_shape.len();
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
        let sparse = p.sparse_dim == Some(i);
        if sparse {
            // Indexed per element (see `Access::rows`): no tile offset.
            start.push(l.b.op(
                Opc::Mov,
                &[],
                &[Ty::B64],
                Ty::S64,
                smallvec![Operand::Imm(0)],
            ));
            nonneg.push(false);
        } else {
            nonneg.push(start_known_nonneg(l, p, index[i], i));
            start.push(tile_start(l, op, index[i], p.steps[i], tc[i])?);
        }
        bound.push(extent_operand(l, op, p.shape[d])?);
        stride.push(p.strides[d]);
        stride_reg.push(stride_register(l, op, p.strides[d])?);
        check.push(sparse || !inbounds.get(i).copied().unwrap_or(false));
    }
    let esize = i64::from(p.elem.bits().max(8) / 8);
    crate::lower::emit::ops::static_offsets::fit(l, op, &p.tile_shape, &stride, esize)?;
    let base = l.tile(op, p.base)?.regs[0];
    let addr0 = match start_offset(l, op, &start, &stride, &stride_reg)? {
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
        Some(sd) => Some((sd, sparse_rows(l, op, layout, index[sd], sd)?)),
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

/// Refuses an index or layout not matching view `p`, and a layout whose
/// register and thread parts overlap (adding them must equal their xor).
fn check_layout(
    l: &Lowerer,
    op: OpId,
    p: &PartitionInfo,
    index: &[ValueId],
    layout: &LinearLayout,
) -> Result<(), LowerError> {
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
    Ok(())
}

/// Whether the start along dense tile dimension `i` of view `p`, `index *
/// step + thread offset`, and the extent there are known non-negative: the
/// index has at most 32 bits and is known non-negative, the step is not
/// negative, and so is the extent.
fn start_known_nonneg(l: &Lowerer, p: &PartitionInfo, index: ValueId, i: usize) -> bool {
    let narrow =
        crate::lower::analysis::values::value_tile(l.m, index).is_some_and(|(_, e)| e.bits() <= 32);
    let known = |v: ValueId| l.plan.facts.get(&v).is_some_and(|f| f.nonneg);
    let extent_nonneg = match p.shape[p.dim_map[i]] {
        Extent::Static(n) => n >= 0,
        Extent::Dynamic(v) => known(v),
    };
    narrow && known(index) && p.steps[i] >= 0 && extent_nonneg
}

/// This thread's first index along a dense tile dimension (s64): tile index
/// `index` times `step`, plus the thread part `thread` of the coordinate.
pub(crate) fn tile_start(
    l: &mut Lowerer,
    op: OpId,
    index: ValueId,
    step: i64,
    thread: Option<Reg>,
) -> Result<Reg, LowerError> {
    let idx = widen(l, op, index)?;
    let mut s = l.b.op(
        Opc::Mul,
        &["lo"],
        &[Ty::S64],
        Ty::S64,
        smallvec![Operand::Reg(idx), Operand::Imm(step)],
    );
    if let Some(t) = thread {
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
    Ok(s)
}

/// Extent `e` of a view as an operand: an immediate, or a register widened
/// to 64 bits.
fn extent_operand(l: &mut Lowerer, op: OpId, e: Extent) -> Result<Operand, LowerError> {
    Ok(match e {
        Extent::Static(n) => Operand::Imm(n),
        Extent::Dynamic(v) => Operand::Reg(widen(l, op, v)?),
    })
}

/// Stride `e` of a view in a 64-bit register when it is dynamic (`None`
/// when static).
fn stride_register(l: &mut Lowerer, op: OpId, e: Extent) -> Result<Option<Reg>, LowerError> {
    Ok(match e {
        Extent::Static(_) => None,
        Extent::Dynamic(v) => Some(widen(l, op, v)?),
    })
}

/// The offset in elements (s64) of this thread's first element: the sum
/// over tile dimensions of `start` times the stride (`None` for rank 0).
fn start_offset(
    l: &mut Lowerer,
    op: OpId,
    start: &[Reg],
    stride: &[Extent],
    stride_reg: &[Option<Reg>],
) -> Result<Option<Reg>, LowerError> {
    let mut off: Option<Reg> = None;
    for i in 0..start.len() {
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
    Ok(off)
}

/// For a gather/scatter access: the index (s64) of each register's element
/// along sparse tile dimension `sd`, from tile index `index` in `layout`
/// sliced to that dimension.
fn sparse_rows(
    l: &mut Lowerer,
    op: OpId,
    layout: &LinearLayout,
    index: ValueId,
    sd: usize,
) -> Result<Vec<Reg>, LowerError> {
    let sliced = crate::lower::plan::conversions::gathers::index_layout(layout, sd);
    let t = l.tile_in(op, index, &std::rc::Rc::new(sliced))?;
    Ok(t.regs
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
        .collect())
}

/// `opc` of `a` and `b` in s64.
pub(crate) fn s64(l: &mut Lowerer, opc: Opc, a: Operand, b: Operand) -> Reg {
    l.b.op(opc, &[], &[Ty::S64], Ty::S64, smallvec![a, b])
}

/// The out-of-bounds predicate and address of the element at register
/// coordinate `c` (`None` predicate: always in bounds).
pub(crate) fn element(
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

impl Access {
    /// `clamp(bound - start, 0, 2^31 - 1)` of tile dimension `d` as u32,
    /// computed once until the access moves; none unless the dimension's
    /// start and extent are known non-negative (the room then decides every
    /// bounds check exactly: offset `c` is out when the room is at most `c`).
    pub(crate) fn room(&mut self, l: &mut Lowerer, d: usize) -> Option<Reg> {
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
    pub(crate) fn advance(&mut self, l: &mut Lowerer, d: usize, by: i64, step: Option<Reg>) {
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
    pub(crate) fn step(&self, l: &mut Lowerer, d: usize, by: i64) -> Option<Reg> {
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
