//! The parallel form of `scan`: each thread scans its registers along the
//! dimension in order, the lanes scan their totals with `shfl.sync.up`
//! (`down` when reversed) in log2 steps, the warps exchange their totals
//! through shared memory, and every element takes the exclusive prefix of
//! the earlier lanes and warps. The combiner sees the newer value on the
//! left, as in the sequential path. Layouts it does not handle (a basis
//! mixing the dimension with others, positions not ordered registers, then
//! contiguous lane bits, then warp bits) return `None` before any code.
use crate::ir::OpId;
use crate::lower::analysis::values::Elem;
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::ptx::{Opc, Operand, Reg, RegClass, Ty};
use smallvec::smallvec;

use crate::lower::emit::ops::reduce::{combine, shfl, warp_position};
use crate::lower::emit::ops::shape::flat_index;
use crate::lower::emit::ops::staging::{alloc, Buffer};
use crate::lower::plan::buffers::scan::{parallel, Spread};
use crate::lower::plan::layout::LinearLayout;

use crate::lower::emit::ops::scan::{load, store};

/// Shuffles `v` from the lane `delta` below (`up`) or above (`down`).
fn shuffle(l: &mut Lowerer, v: Reg, delta: i64, down: bool) -> Reg {
    if down {
        shfl(l, v, "down", delta, 31)
    } else {
        shfl(l, v, "up", delta, 0)
    }
}

/// `p ? a : b` for a non-predicate register.
fn select(l: &mut Lowerer, p: Reg, a: Reg, b: Reg) -> Reg {
    let ty = match a.class {
        RegClass::B64 => Ty::B64,
        RegClass::B16 => Ty::B16,
        _ => Ty::B32,
    };
    l.b.op(
        Opc::Selp,
        &[],
        &[ty],
        ty,
        smallvec![Operand::Reg(a), Operand::Reg(b), Operand::Reg(p)],
    )
}

/// A parallel scan in progress: the scanned values of every register and
/// the thread's total of every line along the dimension.
struct Scan<'a> {
    id: OpId,
    elems: &'a [Elem],
    reverse: bool,
    /// Per register (canonical ones only): the scanned value of each input.
    out: Vec<Option<Vec<Reg>>>,
    /// Per line (keyed by its lowest register): its registers in processing
    /// order.
    lines: Vec<(usize, Vec<usize>)>,
    /// Per line (keyed by its lowest register): the thread's total.
    totals: Vec<(usize, Vec<Reg>)>,
}

impl Scan<'_> {
    /// The registers of line `g`, in processing order.
    fn line_regs(&self, g: usize) -> Vec<usize> {
        self.lines
            .iter()
            .find(|(k, _)| *k == g)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }

    /// Combines `before` (the prefix of earlier lanes or warps) into every
    /// register of line `g` where `p` holds.
    fn add_prefix(
        &mut self,
        l: &mut Lowerer,
        g: usize,
        before: &[Reg],
        p: Reg,
    ) -> Result<(), LowerError> {
        for r in self.line_regs(g) {
            let mine = self.out[r].clone().unwrap_or_default();
            let c = combine(l, self.id, self.elems, &mine, before)?;
            self.out[r] = Some(
                c.iter()
                    .zip(&mine)
                    .map(|(&c, &v)| select(l, p, c, v))
                    .collect(),
            );
        }
        Ok(())
    }
}

/// Step 1, within the thread: groups the registers into lines along `dim`
/// and scans each line in processing order.
fn scan_threads<'a>(
    l: &mut Lowerer,
    id: OpId,
    inputs: &[Tile],
    elems: &'a [Elem],
    layout: &LinearLayout,
    dim: usize,
    reverse: bool,
) -> Result<Scan<'a>, LowerError> {
    let nregs = layout.num_registers();
    let along_mask: usize = layout
        .register
        .iter()
        .enumerate()
        .filter(|(_, b)| b[dim] != 0)
        .fold(0, |mm, (k, _)| mm | 1 << k);
    let coord = |r: usize| -> i64 {
        layout
            .register
            .iter()
            .enumerate()
            .filter(|(k, _)| r >> k & 1 == 1)
            .map(|(_, b)| b[dim])
            .sum()
    };
    let mut out: Vec<Option<Vec<Reg>>> = vec![None; nregs];
    let mut totals: Vec<(usize, Vec<Reg>)> = Vec::new();
    let mut lines: Vec<(usize, Vec<usize>)> = Vec::new();
    for r in 0..nregs {
        if layout.canonical_register(r) != r {
            continue;
        }
        let g = r & !along_mask;
        match lines.iter_mut().find(|(k, _)| *k == g) {
            Some((_, v)) => v.push(r),
            None => lines.push((g, vec![r])),
        }
    }
    for (g, regs) in &mut lines {
        regs.sort_by_key(|&r| coord(r));
        if reverse {
            regs.reverse();
        }
        let mut acc: Option<Vec<Reg>> = None;
        for &r in regs.iter() {
            let vals: Vec<Reg> = inputs.iter().map(|t| t.regs[r]).collect();
            let next = match acc {
                None => vals,
                Some(prev) => combine(l, id, elems, &vals, &prev)?,
            };
            out[r] = Some(next.clone());
            acc = Some(next);
        }
        if let Some(t) = acc {
            totals.push((*g, t));
        }
    }
    Ok(Scan {
        id,
        elems,
        reverse,
        out,
        lines,
        totals,
    })
}

/// Step 2, across lanes: Hillis-Steele on the totals, then the exclusive
/// prefix of the earlier lanes into every register. Returns whether this
/// lane is the last along `dim` when warps follow (the writer of the
/// warp's totals).
fn scan_lanes(
    l: &mut Lowerer,
    s: &mut Scan<'_>,
    spread: &Spread,
) -> Result<Option<Reg>, LowerError> {
    let (k0, m) = (spread.lane_first, spread.lane_bits);
    let tid = l.tid();
    let mut pos = l.bfe(tid, k0, m);
    if s.reverse {
        pos = l.b.op(
            Opc::Xor,
            &[],
            &[Ty::B32],
            Ty::B32,
            smallvec![Operand::Reg(pos), Operand::Imm((1 << m) - 1)],
        );
    }
    for step in 0..m {
        let p = l.b.op(
            Opc::Setp,
            &["ge"],
            &[Ty::U32],
            Ty::Pred,
            smallvec![Operand::Reg(pos), Operand::Imm(1 << step)],
        );
        for (_, t) in s.totals.iter_mut() {
            let other: Vec<Reg> = t
                .iter()
                .map(|&v| shuffle(l, v, 1 << (k0 + step), s.reverse))
                .collect();
            let c = combine(l, s.id, s.elems, t, &other)?;
            *t = c
                .iter()
                .zip(t.iter())
                .map(|(&c, &v)| select(l, p, c, v))
                .collect();
        }
    }
    if spread.reg_bits == 0 {
        // One register per line: the lane scan is the result.
        for (g, t) in &s.totals {
            for r in s.line_regs(*g) {
                s.out[r] = Some(t.clone());
            }
        }
    } else {
        let p = l.b.op(
            Opc::Setp,
            &["ne"],
            &[Ty::U32],
            Ty::Pred,
            smallvec![Operand::Reg(pos), Operand::Imm(0)],
        );
        for i in 0..s.totals.len() {
            let g = s.totals[i].0;
            let before: Vec<Reg> = s.totals[i]
                .1
                .iter()
                .map(|&v| shuffle(l, v, 1 << k0, s.reverse))
                .collect();
            s.add_prefix(l, g, &before, p)?;
        }
    }
    if spread.warp_bits.is_empty() {
        return Ok(None);
    }
    Ok(Some(l.b.op(
        Opc::Setp,
        &["eq"],
        &[Ty::U32],
        Ty::Pred,
        smallvec![Operand::Reg(pos), Operand::Imm((1 << m) - 1)],
    )))
}

/// The shared scratch of step 3: per input a buffer of one slot per line
/// and warp, at `base`.
struct WarpScratch {
    bufs: Vec<Buffer>,
    base: Reg,
    /// The number of warps along the dimension.
    nw: i64,
}

impl WarpScratch {
    /// The shared address of the slot of the line at flat index `f` and
    /// warp `wp` in buffer `b`.
    fn addr(&self, l: &mut Lowerer, f: Reg, wp: Operand, b: &Buffer) -> Reg {
        let slot = l.b.op(
            Opc::Mad,
            &["lo"],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Reg(f), Operand::Imm(self.nw), wp],
        );
        crate::lower::emit::ops::staging::slot_address(l, self.base, slot, b.slot, b.offset)
    }
}

/// The predicate of the one thread per line and warp that writes the
/// warp's totals: the last lane along `dim` (`last_lane`), and the first
/// of any replicas.
fn warp_total_writer(
    l: &mut Lowerer,
    layout: &LinearLayout,
    last_lane: Option<Reg>,
) -> Option<Reg> {
    let tb = layout.thread_bases();
    let mask = tb
        .iter()
        .enumerate()
        .filter(|(_, b)| LinearLayout::is_zero(b))
        .fold(0i64, |mm, (k, _)| mm | 1 << k);
    let owner = l.owner_pred_of(mask, tb.len());
    match (owner, last_lane) {
        (Some(o), Some(q)) => Some(l.b.op(
            Opc::And,
            &[],
            &[Ty::Pred],
            Ty::Pred,
            smallvec![Operand::Reg(o), Operand::Reg(q)],
        )),
        (o, q) => o.or(q),
    }
}

/// Step 3, across warps: each warp's totals through shared memory, then
/// the exclusive prefix of the earlier warps into every register.
fn scan_warps(
    l: &mut Lowerer,
    s: &mut Scan<'_>,
    layout: &LinearLayout,
    dim: usize,
    warp_bits: &[usize],
    last_lane: Option<Reg>,
) -> Result<(), LowerError> {
    let wpos = warp_position(l, warp_bits);
    let nw = 1i64 << warp_bits.len();
    let sliced = layout.slice(dim);
    let flat = flat_index(l, &sliced);
    let nlines: i64 = sliced.shape.iter().product();
    let bufs: Vec<Buffer> = s
        .elems
        .iter()
        .map(|&e| alloc(l, crate::lower::plan::buffers::What::Scan, &[nlines, nw], e))
        .collect::<Result<_, _>>()?;
    let base = l.shared_base();
    let writer = warp_total_writer(l, layout, last_lane);
    let scratch = WarpScratch { bufs, base, nw };
    for b in &scratch.bufs {
        l.writes(b.bytes());
    }
    if let Some(q) = writer {
        l.b.begin_if(q, true);
    }
    for (g, t) in &s.totals {
        for (i, b) in scratch.bufs.iter().enumerate() {
            let addr = scratch.addr(l, flat[*g], Operand::Reg(wpos), b);
            store(l, addr, 0, b, t[i]);
        }
    }
    if writer.is_some() {
        l.b.end_if();
    }
    for b in &scratch.bufs {
        l.reads(b.bytes());
    }
    let rwpos = if s.reverse {
        l.b.op(
            Opc::Xor,
            &[],
            &[Ty::B32],
            Ty::B32,
            smallvec![Operand::Reg(wpos), Operand::Imm(nw - 1)],
        )
    } else {
        wpos
    };
    let first_warp = l.b.op(
        Opc::Setp,
        &["ne"],
        &[Ty::U32],
        Ty::Pred,
        smallvec![Operand::Reg(rwpos), Operand::Imm(0)],
    );
    let groups: Vec<usize> = s.totals.iter().map(|(g, _)| *g).collect();
    for g in groups {
        let before = earlier_warps(l, s, &scratch, flat[g], rwpos)?;
        s.add_prefix(l, g, &before, first_warp)?;
    }
    Ok(())
}

/// The combined totals of the warps before this one (`rwpos`, in scan
/// order) for the line at flat index `f`, read back from the scratch.
fn earlier_warps(
    l: &mut Lowerer,
    s: &Scan<'_>,
    scratch: &WarpScratch,
    f: Reg,
    rwpos: Reg,
) -> Result<Vec<Reg>, LowerError> {
    let nw = scratch.nw;
    let addrs: Vec<Reg> = scratch
        .bufs
        .iter()
        .map(|b| scratch.addr(l, f, Operand::Imm(0), b))
        .collect();
    let mut acc: Option<Vec<Reg>> = None;
    for q in 0..nw - 1 {
        let wq = if s.reverse { nw - 1 - q } else { q };
        let vals: Vec<Reg> = scratch
            .bufs
            .iter()
            .enumerate()
            .map(|(i, b)| load(l, addrs[i], wq * b.slot, b, s.elems[i]))
            .collect();
        acc = Some(match acc {
            None => vals,
            Some(prev) => {
                let c = combine(l, s.id, s.elems, &vals, &prev)?;
                let p = l.b.op(
                    Opc::Setp,
                    &["gt"],
                    &[Ty::U32],
                    Ty::Pred,
                    smallvec![Operand::Reg(rwpos), Operand::Imm(q)],
                );
                c.iter()
                    .zip(&prev)
                    .map(|(&c, &v)| select(l, p, c, v))
                    .collect()
            }
        });
    }
    Ok(acc.unwrap_or_default())
}

/// Lowers the scan in parallel when the layout allows it (see the module
/// doc); `None` leaves the op untouched for the sequential path.
pub(super) fn lower(
    l: &mut Lowerer,
    id: OpId,
    inputs: &[Tile],
    dim: usize,
    reverse: bool,
) -> Result<Option<Vec<Vec<Reg>>>, LowerError> {
    let Some(first) = inputs.first() else {
        return Ok(None);
    };
    let layout = first.layout.clone();
    let elems: Vec<Elem> = inputs.iter().map(|t| t.elem).collect();
    let Some(spread) = parallel(&layout, dim, &elems) else {
        return Ok(None);
    };
    let mut s = scan_threads(l, id, inputs, &elems, &layout, dim, reverse)?;
    let mut last_lane: Option<Reg> = None;
    if spread.lane_bits > 0 {
        last_lane = scan_lanes(l, &mut s, &spread)?;
    }
    if !spread.warp_bits.is_empty() {
        scan_warps(l, &mut s, &layout, dim, &spread.warp_bits, last_lane)?;
    }
    let nregs = layout.num_registers();
    let res: Option<Vec<Vec<Reg>>> = (0..inputs.len())
        .map(|i| {
            (0..nregs)
                .map(|r| s.out[layout.canonical_register(r)].as_ref().map(|v| v[i]))
                .collect()
        })
        .collect();
    Ok(res)
}
