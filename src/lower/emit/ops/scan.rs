//! `scan` (inclusive prefix, optionally reversed) along one dimension:
//! in registers and warp shuffles where the layout allows (`par`);
//! otherwise the operands go to shared memory, one thread per line runs the
//! combiner along it in order, and every thread reads its elements back.
use crate::ir::{Attr, OpId};
use crate::lower::analysis::values::Elem;
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};
use smallvec::smallvec;

use crate::lower::emit::ops::reduce::combine;

mod par;
use crate::lower::emit::ops::staging::{alloc, read, write, Buffer, Placement};
use crate::lower::plan::layout::LinearLayout;
use std::rc::Rc;

fn slot_ty(slot: i64) -> Ty {
    match slot {
        8 => Ty::B64,
        2 => Ty::B16,
        1 => Ty::B8,
        _ => Ty::B32,
    }
}

fn load(l: &mut Lowerer, addr: Reg, off: i64, buf: &Buffer, e: Elem) -> Reg {
    let ty = slot_ty(buf.slot);
    let d = l.b.reg(RegClass::for_bits(ty.bits().max(16)));
    l.b.push(Inst::new(
        Opc::Ld,
        &["shared"],
        &[ty],
        smallvec![Operand::Reg(d)],
        smallvec![Operand::Addr(addr, off)],
    ));
    match (e.bits(), buf.slot) {
        (1, _) => l.b.op(
            Opc::Setp,
            &["ne"],
            &[Ty::U32],
            Ty::Pred,
            smallvec![Operand::Reg(d), Operand::Imm(0)],
        ),
        (9..=16, 4) => l.b.op(
            Opc::Cvt,
            &[],
            &[Ty::U16, Ty::U32],
            Ty::U16,
            smallvec![Operand::Reg(d)],
        ),
        _ => d,
    }
}

fn store(l: &mut Lowerer, addr: Reg, off: i64, buf: &Buffer, v: Reg) {
    let v = match v.class {
        RegClass::Pred => l.b.op(
            Opc::Selp,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Imm(1), Operand::Imm(0), Operand::Reg(v)],
        ),
        RegClass::B16 if buf.slot == 4 => l.b.op(
            Opc::Cvt,
            &[],
            &[Ty::U32, Ty::U16],
            Ty::U32,
            smallvec![Operand::Reg(v)],
        ),
        _ => v,
    };
    l.b.push(Inst::new(
        Opc::St,
        &["shared"],
        &[slot_ty(buf.slot)],
        vec![],
        smallvec![Operand::Addr(addr, off), Operand::Reg(v)],
    ));
}

/// Lowers `scan`.
pub fn lower(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let dim = match op.attr("dim") {
        Some(Attr::Int(d)) => *d as usize,
        _ => return Err(l.unsupported(id)),
    };
    let reverse = matches!(
        op.attr("reverse"),
        Some(Attr::Bool(true)) | Some(Attr::Unit)
    );
    let first = *op.operands.first().ok_or_else(|| l.unsupported(id))?;
    let layout = l.tile(id, first)?.layout;
    if dim >= layout.shape.len() {
        return Err(l.unsupported(id));
    }
    let inputs: Vec<Tile> = op
        .operands
        .iter()
        .map(|&v| l.tile_in(id, v, &layout))
        .collect::<Result<_, _>>()?;
    if let Some(regs) = par::lower(l, id, &inputs, dim, reverse)? {
        for ((&r, t), regs) in op.results.iter().zip(&inputs).zip(regs) {
            let t = Tile {
                elem: t.elem,
                layout: layout.clone(),
                regs,
            };
            l.bind(r, t);
        }
        return Ok(());
    }
    let outs = lower_sequential(l, id, &inputs, &layout, dim, reverse)?;
    for (&r, t) in op.results.iter().zip(outs) {
        l.bind(r, t);
    }
    Ok(())
}

/// The sequential scan's shared buffers (one per input, row-major) and
/// how one thread walks a line of them along `dim`.
struct LineScan<'a> {
    id: OpId,
    elems: &'a [Elem],
    bufs: &'a [Buffer],
    shape: &'a [i64],
    /// Row-major element strides of the buffers.
    strides: Vec<i64>,
    dim: usize,
    reverse: bool,
}

impl LineScan<'_> {
    /// The element index of the first element of line number `line`: its
    /// coordinates along the other dimensions, from the line number
    /// (row-major, powers of two).
    fn first_elem(&self, l: &mut Lowerer, line: Reg) -> Reg {
        let mut elem_index = l.b.op(
            Opc::Mov,
            &[],
            &[Ty::B32],
            Ty::B32,
            smallvec![Operand::Imm(0)],
        );
        let mut rest = line;
        for d in (0..self.shape.len()).rev() {
            if d == self.dim {
                continue;
            }
            let c = l.b.op(
                Opc::And,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(rest), Operand::Imm(self.shape[d] - 1)],
            );
            rest = l.b.op(
                Opc::Shr,
                &[],
                &[Ty::U32],
                Ty::U32,
                vec![
                    Operand::Reg(rest),
                    Operand::Imm(i64::from(self.shape[d].trailing_zeros())),
                ],
            );
            elem_index = l.b.op(
                Opc::Mad,
                &["lo"],
                &[Ty::U32],
                Ty::U32,
                vec![
                    Operand::Reg(c),
                    Operand::Imm(self.strides[d]),
                    Operand::Reg(elem_index),
                ],
            );
        }
        elem_index
    }

    /// The shared address of element `elem_index` in each buffer, from the
    /// shared window's `base`.
    fn addrs(&self, l: &mut Lowerer, base: Reg, elem_index: Reg) -> Vec<Reg> {
        self.bufs
            .iter()
            .map(|b| {
                crate::lower::emit::ops::staging::slot_address(
                    l, base, elem_index, b.slot, b.offset,
                )
            })
            .collect()
    }

    /// Runs the combiner along the line starting at `addrs`, in scan
    /// order, storing every prefix in place.
    fn scan_line(&self, l: &mut Lowerer, addrs: &[Reg]) -> Result<(), LowerError> {
        let n = self.shape[self.dim];
        let stride = self.strides[self.dim];
        let bufs = self.bufs;
        let order: Vec<i64> = if self.reverse {
            (0..n).rev().collect()
        } else {
            (0..n).collect()
        };
        let mut acc: Option<Vec<Reg>> = None;
        for j in order {
            let vals: Vec<Reg> = (0..bufs.len())
                .map(|i| {
                    load(
                        l,
                        addrs[i],
                        j * stride * bufs[i].slot,
                        &bufs[i],
                        self.elems[i],
                    )
                })
                .collect();
            let next = match acc {
                None => vals,
                Some(prev) => combine(l, self.id, self.elems, &vals, &prev)?,
            };
            for i in 0..bufs.len() {
                store(l, addrs[i], j * stride * bufs[i].slot, &bufs[i], next[i]);
            }
            acc = Some(next);
        }
        Ok(())
    }
}

/// Lowers the scan through shared memory (see the module doc): the
/// operands go to shared buffers, each thread scans whole lines in place,
/// and the results are read back in `layout`.
fn lower_sequential(
    l: &mut Lowerer,
    id: OpId,
    inputs: &[Tile],
    layout: &Rc<LinearLayout>,
    dim: usize,
    reverse: bool,
) -> Result<Vec<Tile>, LowerError> {
    let shape = layout.shape.clone();
    let elems: Vec<Elem> = inputs.iter().map(|t| t.elem).collect();
    let n = shape[dim];
    let lines: i64 = shape.iter().product::<i64>() / n.max(1);
    let threads = i64::from(l.plan.warps * 32);
    let place = Placement::identity(shape.len());
    let mut bufs = Vec::new();
    for t in inputs {
        let b = alloc(l, crate::lower::plan::buffers::What::Scan, &shape, t.elem)?;
        l.writes(b.bytes());
        write(l, t, &b, &place);
        bufs.push(b);
    }
    // Each thread scans its lines in place.
    for b in &bufs {
        l.updates(b.bytes());
    }
    // Row-major element strides of the buffer.
    let mut strides = vec![1i64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let scan = LineScan {
        id,
        elems: &elems,
        bufs: &bufs,
        shape: &shape,
        strides,
        dim,
        reverse,
    };
    let tid = l.tid();
    let base = l.shared_base();
    for pass in 0..(lines + threads - 1) / threads {
        let line = l.b.op(
            Opc::Add,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Reg(tid), Operand::Imm(pass * threads)],
        );
        let active = l.b.op(
            Opc::Setp,
            &["lt"],
            &[Ty::U32],
            Ty::Pred,
            smallvec![Operand::Reg(line), Operand::Imm(lines)],
        );
        l.b.begin_if(active, true);
        let elem_index = scan.first_elem(l, line);
        let addrs = scan.addrs(l, base, elem_index);
        scan.scan_line(l, &addrs)?;
        l.b.end_if();
    }
    for b in &bufs {
        l.reads(b.bytes());
    }
    let outs: Vec<Tile> = bufs
        .iter()
        .zip(&elems)
        .map(|(b, e)| read(l, layout.clone(), *e, b, &place))
        .collect();
    Ok(outs)
}
