//! Staging one slice of a tile: the elements whose coordinate along one
//! dimension lies in an aligned power-of-two window, written at their
//! coordinate less the window's start. Matrix multiplies whose operands do
//! not fit shared memory whole stage them one K slice at a time.
//!
//! Under a linear layout an element's coordinate is its register's part
//! xor its thread's part. The bits of the windowed coordinate at or above
//! the window's length pick the slice; below it they place the element in
//! the slice. So a register is in the slice for every thread, for none, or
//! (when thread bases carry slice bits) for the threads whose slice bits
//! match, which one comparison per register group guards.
use std::collections::BTreeMap;

use smallvec::smallvec;

use std::rc::Rc;

use crate::ir::ValueId;
use crate::lower::emit::context::{class_of, Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Opc, Operand, Reg, Ty};

use crate::lower::emit::ops::staging::{addresses, alloc, read_one, write_regs, Buffer, Placement};

/// The aligned window `[lo, lo + len)` along tile dimension `dim` (`len` a
/// power of two, `lo` a multiple of it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// The windowed tile dimension.
    pub dim: usize,
    /// First coordinate inside.
    pub lo: i64,
    /// Length.
    pub len: i64,
}

impl Window {
    /// Slice `s` of length `len` along `dim`.
    pub fn slice(dim: usize, len: i64, s: i64) -> Window {
        Window {
            dim,
            lo: s * len,
            len,
        }
    }

    /// The slice-picking bits of basis (or coordinate) `b`.
    pub fn high(&self, b: &[i64]) -> i64 {
        b[self.dim] & !(self.len - 1)
    }

    /// Basis `b` inside the window: the slice-picking bits dropped.
    pub fn low(&self, b: &[i64]) -> Vec<i64> {
        let mut b = b.to_vec();
        b[self.dim] &= self.len - 1;
        b
    }

    /// `layout` seen inside the window: extent `len` along the windowed
    /// dimension and every basis without its slice-picking bits.
    pub fn layout(&self, layout: &LinearLayout) -> LinearLayout {
        let low = |bases: &[Vec<i64>]| bases.iter().map(|b| self.low(b)).collect();
        let mut shape = layout.shape.clone();
        shape[self.dim] = self.len;
        LinearLayout {
            shape,
            register: low(&layout.register),
            lane: low(&layout.lane),
            warp: low(&layout.warp),
        }
    }
}

/// The canonical registers of `regs` in `layout`, grouped by the slice
/// bits of their register part under `window` (one group without one).
pub fn slice_groups(
    window: Option<Window>,
    layout: &LinearLayout,
    regs: impl Iterator<Item = usize>,
) -> BTreeMap<i64, Vec<usize>> {
    let mut groups: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for r in regs.filter(|&r| layout.canonical_register(r) == r) {
        let high = window.map_or(0, |w| w.high(&layout.apply(r, 0)));
        groups.entry(high).or_default().push(r);
    }
    groups
}

/// Which elements of a layout a thread holds in window `w`: the thread's
/// slice-picking bits, in a register when threads differ in them.
pub struct Selector {
    w: Window,
    thread: Option<Reg>,
}

/// What guards the elements of one register group.
pub enum Guard {
    /// No thread holds them in the window.
    Never,
    /// Every thread holds them in the window.
    Always,
    /// The threads where this predicate is true.
    When(Reg),
}

impl Selector {
    /// The selector of window `w` over `layout`.
    pub fn new(l: &mut Lowerer, layout: &LinearLayout, w: Window) -> Selector {
        let values: Vec<i64> = layout.thread_bases().iter().map(|b| w.high(b)).collect();
        Selector {
            w,
            thread: l.thread_term(&values),
        }
    }

    /// The guard of the elements whose register part has slice-picking
    /// bits `reg_high`.
    pub fn guard(&self, l: &mut Lowerer, reg_high: i64) -> Guard {
        let want = self.w.lo ^ reg_high;
        match self.thread {
            None if want == 0 => Guard::Always,
            None => Guard::Never,
            Some(t) => Guard::When(l.b.op(
                Opc::Setp,
                &["eq"],
                &[Ty::U32],
                Ty::Pred,
                smallvec![Operand::Reg(t), Operand::Imm(want)],
            )),
        }
    }

    /// Emits `body` under `guard` (nothing for [`Guard::Never`]).
    pub fn guarded(l: &mut Lowerer, guard: Guard, body: impl FnOnce(&mut Lowerer)) {
        match guard {
            Guard::Never => {}
            Guard::Always => body(l),
            Guard::When(p) => {
                l.b.begin_if(p, true);
                body(l);
                l.b.end_if();
            }
        }
    }
}

/// Writes the elements of `t` inside window `w` into `buf` (whose extent
/// along the window's buffer dimension is `w.len`) under `place`, at their
/// coordinates less `w.lo`.
pub fn write_window(l: &mut Lowerer, t: &Tile, buf: &Buffer, place: &Placement, w: Window) {
    let layout = &t.layout;
    let sel = Selector::new(l, layout, w);
    let mut groups = slice_groups(Some(w), layout, 0..layout.num_registers());
    if sel.thread.is_none() {
        groups.retain(|&high, _| high == w.lo);
    }
    let mut wanted = vec![false; layout.num_registers()];
    for &r in groups.values().flatten() {
        wanted[r] = true;
    }
    let inner = w.layout(layout);
    let addrs = addresses(l, &inner, buf, place, |r| wanted[r]);
    // Replicas hold the same values: one of them writes.
    let owner = l.owner_pred(layout);
    if let Some(q) = owner {
        l.b.begin_if(q, true);
    }
    for (high, regs) in groups {
        let guard = sel.guard(l, high);
        Selector::guarded(l, guard, |l| write_regs(l, t, buf, &addrs, &regs));
    }
    if owner.is_some() {
        l.b.end_if();
    }
}

/// Redistributes `t` (a tile of `v`) to `layout` through shared memory one aligned slice
/// of it at a time, the window `(dim, len)` the plan chose by the room left
/// ([`crate::lower::plan::conversions::window`]): each slice written, then
/// read by the threads holding its elements in `layout`.
pub fn convert_in_slices(
    l: &mut Lowerer,
    v: ValueId,
    t: &Tile,
    layout: &Rc<LinearLayout>,
    (dim, len): (usize, i64),
) -> Result<Tile, LowerError> {
    let shape = &t.layout.shape;
    let mut bshape = shape.clone();
    bshape[dim] = len;
    let buf = alloc(
        l,
        crate::lower::plan::buffers::What::Conversion(v),
        &bshape,
        t.elem,
    )?;
    let place = Placement::identity(shape.len());
    let n = layout.num_registers();
    let mut out: Vec<Option<Reg>> = vec![None; n];
    for r in (0..n).filter(|&r| layout.canonical_register(r) == r) {
        out[r] = Some(l.b.reg(class_of(t.elem)));
    }
    let windows = shape[dim] / len;
    for s in 0..windows {
        let w = Window::slice(dim, len, s);
        // Over the last window's elements, once every thread has read them.
        l.writes(buf.bytes());
        write_window(l, t, &buf, &place, w);
        l.reads(buf.bytes());
        let sel = Selector::new(l, layout, w);
        let mut groups = slice_groups(Some(w), layout, 0..n);
        if sel.thread.is_none() {
            groups.retain(|&high, _| high == w.lo);
        }
        let mut wanted = vec![false; n];
        for &r in groups.values().flatten() {
            wanted[r] = true;
        }
        let inner = w.layout(layout);
        let addrs = addresses(l, &inner, &buf, &place, |r| wanted[r]);
        for (high, regs) in groups {
            let guard = sel.guard(l, high);
            Selector::guarded(l, guard, |l| {
                for r in regs {
                    let (a, off) = addrs[r];
                    let v = read_one(l, t.elem, &buf, Operand::Addr(a, off));
                    if let Some(d) = out[r] {
                        l.b.copy(d, v);
                    }
                }
            });
        }
    }
    let regs = (0..n)
        .map(|r| out[layout.canonical_register(r)].expect("canonical registers are read"))
        .collect();
    Ok(Tile {
        elem: t.elem,
        layout: layout.clone(),
        regs,
    })
}

#[cfg(test)]
mod tests {
    use crate::lower::emit::ops::staging_window::*;

    #[test]
    fn window_masks_the_slice_bits() {
        let w = Window::slice(1, 32, 2);
        assert_eq!(w.lo, 64);
        assert_eq!(w.high(&[3, 77]), 64);
        assert_eq!(w.low(&[3, 77]), vec![3, 13]);
        let layout = LinearLayout {
            shape: vec![4, 128],
            register: vec![vec![0, 1], vec![0, 64]],
            lane: vec![vec![0, 2], vec![0, 32], vec![1, 0]],
            warp: vec![vec![2, 0]],
        };
        let inner = w.layout(&layout);
        assert_eq!(inner.shape, vec![4, 32]);
        assert_eq!(inner.register, vec![vec![0, 1], vec![0, 0]]);
        assert_eq!(inner.lane, vec![vec![0, 2], vec![0, 0], vec![1, 0]]);
    }
}
