//! Shared-memory addresses of a thread's part of a tile: the scratch
//! array's base plus the byte offsets the thread's index bits select, and
//! the destinations of copied slices.
use smallvec::smallvec;

use crate::lower::emit::context::{doubling_runs, Lowerer, Tile};
use crate::lower::emit::copies::swizzle::Swizzle;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Opc, Operand, Reg, Ty};

/// Where a copied slice lands: the buffer's byte offset, each operand
/// dimension's byte stride, and the rows' swizzle.
pub struct CopyDest<'a> {
    /// Byte offset of the buffer in shared memory.
    pub off: i64,
    /// Byte stride of each operand dimension.
    pub strides: &'a [i64],
    /// The rows' swizzle, if any.
    pub swizzle: Option<Swizzle>,
}

/// What of one operand a K slice is written from.
#[derive(Clone, Copy)]
pub enum Part<'a> {
    /// The whole tile, of which the slice's elements are written.
    Whole(&'a Tile),
    /// The slice alone, at its coordinates within the slice.
    Slice(&'a Tile),
}

/// The shared-memory address of this thread's first element of a tile in
/// `layout` stored at byte offset `off`, where `byte` gives the byte offset
/// of a layout basis.
pub fn thread_address(
    l: &mut Lowerer,
    layout: &LinearLayout,
    off: i64,
    byte: impl Fn(&[i64]) -> i64,
) -> Reg {
    thread_address_from(l, layout, off, byte).1
}

/// [`thread_address`] and the address of the tile's start.
pub fn thread_address_from(
    l: &mut Lowerer,
    layout: &LinearLayout,
    off: i64,
    byte: impl Fn(&[i64]) -> i64,
) -> (Reg, Reg) {
    let tid = l.tid();
    let base = l.shared_base();
    let start = bin(l, Opc::Add, Ty::U32, base, Operand::Imm(off));
    let bytes: Vec<i64> = layout.thread_bases().iter().map(|b| byte(b)).collect();
    let addr = match thread_offset(l, tid, &bytes) {
        Some(o) => bin(l, Opc::Add, Ty::U32, start, Operand::Reg(o)),
        None => start,
    };
    (start, addr)
}

/// `sum(bit k of tid * bytes[k])`, or `None` when every term is zero. A run
/// of bits whose bytes double from one bit to the next is one field of
/// `tid` times the run's first byte offset. The sum does not depend on where
/// the tile lies, so tiles of one layout share it.
fn thread_offset(l: &mut Lowerer, tid: Reg, bytes: &[i64]) -> Option<Reg> {
    let mut sum = None;
    for (k, run) in doubling_runs(bytes, false) {
        let field = if k == 0 {
            bin(l, Opc::And, Ty::B32, tid, Operand::Imm((1 << run) - 1))
        } else {
            l.bfe(tid, k, run)
        };
        sum = Some(match sum {
            None => bin(l, Opc::Mul, Ty::U32, field, Operand::Imm(bytes[k])),
            Some(s) => mad(l, field, bytes[k], s),
        });
    }
    sum
}

/// `opc.ty d, x, y` (u32 result).
pub fn bin(l: &mut Lowerer, opc: Opc, ty: Ty, x: Reg, y: Operand) -> Reg {
    let mods: &[&'static str] = if opc == Opc::Mul || opc == Opc::Mad {
        &["lo"]
    } else {
        &[]
    };
    l.b.op(opc, mods, &[ty], Ty::U32, smallvec![Operand::Reg(x), y])
}

/// `mad.lo.u32 d, x, imm, add`.
pub fn mad(l: &mut Lowerer, x: Reg, imm: i64, add: Reg) -> Reg {
    l.b.op(
        Opc::Mad,
        &["lo"],
        &[Ty::U32],
        Ty::U32,
        smallvec![Operand::Reg(x), Operand::Imm(imm), Operand::Reg(add)],
    )
}
