//! Moving tile elements between threads through shared memory: tiles are
//! written into a row-major scratch buffer at their (mapped, offset)
//! coordinates and read back in another layout. This is the general layout
//! conversion, and the data movement of `permute`, `cat`, `extract` and
//! `insert`. Every use sits in uniform control flow (tile ops are never
//! under a per-thread branch), so barriers are safe.
use smallvec::smallvec;
use std::rc::Rc;

use crate::ir::ValueId;
use crate::lower::analysis::values::Elem;
use crate::lower::emit::context::{class_of, Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::buffers::What;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};

/// The PTX type moving one slot of `bytes`.
fn slot_ty(bytes: i64) -> Ty {
    match bytes {
        8 => Ty::B64,
        2 => Ty::B16,
        1 => Ty::B8,
        _ => Ty::B32,
    }
}

/// A scratch buffer in shared memory.
#[derive(Clone, Debug)]
pub struct Buffer {
    /// Byte offset in the entry's scratch array.
    pub offset: i64,
    /// Row-major shape.
    pub shape: Vec<i64>,
    /// Bytes per element slot (4 or 8).
    pub slot: i64,
}

impl Buffer {
    /// The bytes of the scratch array it spans.
    pub fn bytes(&self) -> std::ops::Range<i64> {
        self.offset..self.offset + self.slot * self.shape.iter().product::<i64>()
    }
}

/// How a tile's dimensions land in a buffer: tile dimension `i` is buffer
/// dimension `dims[i]`, shifted by `offsets[i]` (buffer dimensions no tile
/// dimension names are at `fixed`).
#[derive(Clone, Debug)]
pub struct Placement {
    /// Buffer dimension of each tile dimension.
    pub dims: Vec<usize>,
    /// Offset added along each tile dimension (u32 immediate or register).
    pub offsets: Vec<Operand>,
}

impl Placement {
    /// Tile dimension `i` at buffer dimension `i`, no offset.
    pub fn identity(rank: usize) -> Placement {
        Placement {
            dims: (0..rank).collect(),
            offsets: vec![Operand::Imm(0); rank],
        }
    }
}

pub use crate::lower::plan::engines::slot_bytes;

/// Allocates a buffer of `shape` for elements of kind `e`.
pub fn alloc(l: &mut Lowerer, what: What, shape: &[i64], e: Elem) -> Result<Buffer, LowerError> {
    let slot = slot_bytes(e);
    let bytes = shape
        .iter()
        .try_fold(slot, |n, &d| n.checked_mul(d))
        .ok_or_else(|| LowerError::Unsupported {
            what: "a tile too large for shared memory".into(),
            location: None,
        })?;
    let offset = l.claim_scratch(what, bytes, 16)?;
    Ok(Buffer {
        offset,
        shape: shape.to_vec(),
        slot,
    })
}

/// `(addr + 1023) & -1024` of the shared scratch array's byte `offset`.
pub fn aligned_base(l: &mut Lowerer, offset: i64) -> Reg {
    let sym = l.shared_base();
    let raw = l.b.op(
        Opc::Add,
        &[],
        &[Ty::U32],
        Ty::U32,
        smallvec![Operand::Reg(sym), Operand::Imm(offset + 1023)],
    );
    l.b.op(
        Opc::And,
        &[],
        &[Ty::B32],
        Ty::B32,
        smallvec![Operand::Reg(raw), Operand::Imm(-1024)],
    )
}

/// `base + index * slot + offset`: the shared address of slot `index` of a
/// scratch region at byte `offset` whose slots are `slot` bytes.
pub fn slot_address(l: &mut Lowerer, base: Reg, index: Reg, slot: i64, offset: i64) -> Reg {
    let off = l.b.op(
        Opc::Mad,
        &["lo"],
        &[Ty::U32],
        Ty::U32,
        vec![
            Operand::Reg(index),
            Operand::Imm(slot),
            Operand::Imm(offset),
        ],
    );
    l.b.op(
        Opc::Add,
        &[],
        &[Ty::U32],
        Ty::U32,
        smallvec![Operand::Reg(base), Operand::Reg(off)],
    )
}

/// The coordinate of every register's element along every dimension (u32).
pub fn coordinates(l: &mut Lowerer, layout: &LinearLayout) -> Vec<Vec<Reg>> {
    let all: Vec<usize> = (0..layout.num_registers()).collect();
    coordinates_of(l, layout, &all)
}

/// The coordinates of registers `regs`' elements (u32).
fn coordinates_of(l: &mut Lowerer, layout: &LinearLayout, regs: &[usize]) -> Vec<Vec<Reg>> {
    let rank = layout.shape.len();
    let tb = layout.thread_bases();
    let thread: Vec<Option<Reg>> = (0..rank)
        .map(|d| {
            let values: Vec<i64> = tb.iter().map(|b| b[d]).collect();
            l.thread_term(&values)
        })
        .collect();
    let zero = l.b.op(
        Opc::Mov,
        &[],
        &[Ty::B32],
        Ty::B32,
        smallvec![Operand::Imm(0)],
    );
    regs.iter()
        .map(|&r| {
            let c = layout.apply(r, 0);
            (0..rank)
                .map(|d| {
                    let t = thread[d].unwrap_or(zero);
                    if c[d] == 0 {
                        return t;
                    }
                    l.b.op(
                        Opc::Xor,
                        &[],
                        &[Ty::B32],
                        Ty::B32,
                        smallvec![Operand::Reg(t), Operand::Imm(c[d])],
                    )
                })
                .collect()
        })
        .collect()
}

/// Whether every register bit and every thread bit of `layout` set
/// different bits of the coordinates (then xor is addition, and a
/// register's coordinates are the thread's plus a constant).
fn disjoint_bits(layout: &LinearLayout) -> bool {
    let rank = layout.shape.len();
    let union = |bases: &mut dyn Iterator<Item = &Vec<i64>>| {
        let mut u = vec![0i64; rank];
        for b in bases {
            for (x, y) in u.iter_mut().zip(b) {
                *x |= y;
            }
        }
        u
    };
    let regs = union(&mut layout.register.iter());
    let threads = union(&mut layout.lane.iter().chain(&layout.warp));
    regs.iter().zip(&threads).all(|(r, t)| r & t == 0)
}

/// Shared-memory addresses (register and immediate offset) of the elements
/// of the registers `want` accepts under `place` (other entries are never
/// read).
pub(super) fn addresses(
    l: &mut Lowerer,
    layout: &LinearLayout,
    buf: &Buffer,
    place: &Placement,
    want: impl Fn(usize) -> bool,
) -> Vec<(Reg, i64)> {
    let mut strides = vec![1i64; buf.shape.len()];
    for d in (0..buf.shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * buf.shape[d + 1];
    }
    let base = l.shared_base();
    let start = l.b.op(
        Opc::Add,
        &[],
        &[Ty::U32],
        Ty::U32,
        smallvec![Operand::Reg(base), Operand::Imm(buf.offset)],
    );
    // `coords[i]`'s address: `start + sum (coords[i] + offset[i]) * stride`.
    let address = |l: &mut Lowerer, coords: Vec<Reg>| {
        let mut addr = start;
        for (i, ci) in coords.into_iter().enumerate() {
            let d = place.dims[i];
            let x = l.b.op(
                Opc::Add,
                &[],
                &[Ty::U32],
                Ty::U32,
                smallvec![Operand::Reg(ci), place.offsets[i].clone()],
            );
            addr = l.b.op(
                Opc::Mad,
                &["lo"],
                &[Ty::U32],
                Ty::U32,
                vec![
                    Operand::Reg(x),
                    Operand::Imm(strides[d] * buf.slot),
                    Operand::Reg(addr),
                ],
            );
        }
        addr
    };
    let n = layout.num_registers();
    if disjoint_bits(layout) {
        // One address for the thread; registers differ by immediates.
        let thread = coordinates_of(l, layout, &[0]).pop().unwrap_or_default();
        let at = address(l, thread);
        return (0..n)
            .map(|r| {
                let c = layout.apply(r, 0);
                let imm = c
                    .iter()
                    .enumerate()
                    .map(|(i, ci)| ci * strides[place.dims[i]] * buf.slot)
                    .sum();
                (at, imm)
            })
            .collect();
    }
    let canon: Vec<usize> = (0..n).filter(|&r| want(r)).collect();
    let mut coords = coordinates_of(l, layout, &canon).into_iter();
    let mut out = vec![(start, 0); n];
    for &r in &canon {
        let c = coords.next().unwrap_or_default();
        out[r] = (address(l, c), 0);
    }
    out
}

/// Writes every element of `t` into `buf` under `place` (each once).
pub fn write(l: &mut Lowerer, t: &Tile, buf: &Buffer, place: &Placement) {
    let addrs = addresses(l, &t.layout, buf, place, |r| {
        t.layout.canonical_register(r) == r
    });
    // Replicas hold the same values: one of them writes.
    let owner = l.owner_pred(&t.layout);
    if let Some(q) = owner {
        l.b.begin_if(q, true);
    }
    write_all(l, t, buf, &addrs);
    if owner.is_some() {
        l.b.end_if();
    }
}

fn write_all(l: &mut Lowerer, t: &Tile, buf: &Buffer, addrs: &[(Reg, i64)]) {
    let canon: Vec<usize> = (0..addrs.len())
        .filter(|&r| t.layout.canonical_register(r) == r)
        .collect();
    write_regs(l, t, buf, addrs, &canon);
}

/// Stores the elements of `t`'s registers `regs` at their `addrs`.
pub(super) fn write_regs(
    l: &mut Lowerer,
    t: &Tile,
    buf: &Buffer,
    addrs: &[(Reg, i64)],
    regs: &[usize],
) {
    let ty = slot_ty(buf.slot);
    for &r in regs {
        let (a, off) = addrs[r];
        let v = t.regs[r];
        let v = match v.class {
            RegClass::B16 if buf.slot == 4 => l.b.op(
                Opc::Cvt,
                &[],
                &[Ty::U32, Ty::U16],
                Ty::U32,
                smallvec![Operand::Reg(v)],
            ),
            RegClass::Pred => l.b.op(
                Opc::Selp,
                &[],
                &[Ty::U32],
                Ty::U32,
                smallvec![Operand::Imm(1), Operand::Imm(0), Operand::Reg(v)],
            ),
            _ => v,
        };
        l.b.push(Inst::new(
            Opc::St,
            &["shared"],
            &[ty],
            vec![],
            smallvec![Operand::Addr(a, off), Operand::Reg(v)],
        ));
    }
}

/// Reads a tile of `layout` and kind `elem` from `buf` under `place`.
pub fn read(
    l: &mut Lowerer,
    layout: Rc<LinearLayout>,
    elem: Elem,
    buf: &Buffer,
    place: &Placement,
) -> Tile {
    let addrs = addresses(l, &layout, buf, place, |r| {
        layout.canonical_register(r) == r
    });
    let mut regs: Vec<Reg> = Vec::new();
    for (r, (a, off)) in addrs.into_iter().enumerate() {
        let c = layout.canonical_register(r);
        if c != r {
            regs.push(regs[c]);
            continue;
        }
        regs.push(read_one(l, elem, buf, Operand::Addr(a, off)));
    }
    Tile { elem, layout, regs }
}

/// Loads one element of kind `elem` from `buf` at `at`.
pub(super) fn read_one(l: &mut Lowerer, elem: Elem, buf: &Buffer, at: Operand) -> Reg {
    let ty = slot_ty(buf.slot);
    {
        let d = l.b.reg_for(ty);
        l.b.push(Inst::new(
            Opc::Ld,
            &["shared"],
            &[ty],
            smallvec![Operand::Reg(d)],
            smallvec![at],
        ));
        match class_of(elem) {
            RegClass::B16 if buf.slot == 4 => l.b.op(
                Opc::Cvt,
                &[],
                &[Ty::U16, Ty::U32],
                Ty::U16,
                smallvec![Operand::Reg(d)],
            ),
            RegClass::Pred => l.b.op(
                Opc::Setp,
                &["ne"],
                &[Ty::U32],
                Ty::Pred,
                smallvec![Operand::Reg(d), Operand::Imm(0)],
            ),
            _ => d,
        }
    }
}

/// Redistributes `t` (a tile of `v`) to `layout` through shared memory.
pub fn convert(
    l: &mut Lowerer,
    v: ValueId,
    t: &Tile,
    layout: &Rc<LinearLayout>,
) -> Result<Tile, LowerError> {
    staged_convert(l, v, t, layout)
}

/// [`convert`]: the whole tile at once, or a window of it at a time where
/// the plan chose one by the room left.
fn staged_convert(
    l: &mut Lowerer,
    v: ValueId,
    t: &Tile,
    layout: &Rc<LinearLayout>,
) -> Result<Tile, LowerError> {
    if let Some(w) = l.chosen().window(l.scratch.claims()) {
        // Too large for the shared memory left: a window at a time.
        return crate::lower::emit::ops::staging_window::convert_in_slices(l, v, t, layout, w);
    }
    let buf = alloc(l, What::Conversion(v), &t.layout.shape, t.elem)?;
    let place = Placement::identity(t.layout.shape.len());
    l.writes(buf.bytes());
    write(l, t, &buf, &place);
    l.reads(buf.bytes());
    Ok(read(l, layout.clone(), t.elem, &buf, &place))
}
