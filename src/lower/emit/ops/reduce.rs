//! `reduce` along one dimension: combine the registers of a thread, then
//! the lanes of a warp by butterfly shuffles, then the warps through shared
//! memory. The result keeps the input's distribution with the reduced
//! dimension sliced away (replicated over the threads that shared it).
use smallvec::smallvec;
use std::rc::Rc;

use crate::ir::{Attr, OpId, ValueId};
use crate::lower::analysis::values::Elem;
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::buffers::reduce::{partial_regions, slot_size};
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};

use crate::lower::emit::ops::shape::flat_index;

/// Applies the combiner region of `id` to `(lhs_i, rhs_i)` pairs.
pub(super) fn combine(
    l: &mut Lowerer,
    id: OpId,
    elems: &[Elem],
    lhs: &[Reg],
    rhs: &[Reg],
) -> Result<Vec<Reg>, LowerError> {
    let op = &l.m.ops[id];
    let block = op
        .regions
        .first()
        .and_then(|r| r.blocks.first())
        .ok_or_else(|| l.unsupported(id))?;
    let scalar = Rc::new(LinearLayout::default_scalar());
    for (i, e) in elems.iter().enumerate() {
        let (Some(&a), Some(&b)) = (block.args.get(2 * i), block.args.get(2 * i + 1)) else {
            return Err(l.unsupported(id));
        };
        l.bind(
            a,
            Tile {
                elem: *e,
                layout: scalar.clone(),
                regs: vec![lhs[i]],
            },
        );
        l.bind(
            b,
            Tile {
                elem: *e,
                layout: scalar.clone(),
                regs: vec![rhs[i]],
            },
        );
    }
    let mut out = None;
    for &o in &block.ops {
        let inner = &l.m.ops[o];
        if inner.opcode == crate::ir::Opcode::Yield {
            out = Some(inner.operands.clone());
            break;
        }
        l.lower_op(o)?;
    }
    let vals: Vec<ValueId> = out.ok_or_else(|| l.unsupported(id))?;
    vals.iter().map(|&v| Ok(l.tile(id, v)?.regs[0])).collect()
}

/// The thread's position among the warps whose warp-index bits are
/// `warp_bits` (bit `j` of the result is warp bit `warp_bits[j]`, i.e.
/// `%tid.x` bit `5 + warp_bits[j]`); `%tid.x` itself when there are none.
pub(super) fn warp_position(l: &mut Lowerer, warp_bits: &[usize]) -> Reg {
    let tid = l.tid();
    let mut pos: Option<Reg> = None;
    for (j, &k) in warp_bits.iter().enumerate() {
        let bit = l.bfe(tid, 5 + k, 1);
        let t = if j == 0 {
            bit
        } else {
            l.b.op(
                Opc::Shl,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(bit), Operand::Imm(j as i64)],
            )
        };
        pos = Some(match pos {
            None => t,
            Some(g) => l.b.op(
                Opc::Or,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(g), Operand::Reg(t)],
            ),
        });
    }
    pos.unwrap_or(tid)
}

/// Shuffles `v` with the lane `lane ^ mask` (any register class).
fn shuffle(l: &mut Lowerer, v: Reg, mask: i64) -> Reg {
    shfl(l, v, "bfly", mask, 31)
}

/// `shfl.sync.<mode>` of `v` with lane operand `b` and clamp `c`, for any
/// register class: 64-bit values move as two 32-bit halves, 16-bit ones
/// widened to 32 bits.
pub(super) fn shfl(l: &mut Lowerer, v: Reg, mode: &'static str, b: i64, c: i64) -> Reg {
    let sh = |l: &mut Lowerer, x: Reg| {
        l.b.op(
            Opc::Shfl,
            &["sync", mode],
            &[Ty::B32],
            Ty::B32,
            vec![
                Operand::Reg(x),
                Operand::Imm(b),
                Operand::Imm(c),
                Operand::Imm(-1),
            ],
        )
    };
    match v.class {
        RegClass::B32 => sh(l, v),
        RegClass::B64 => {
            let (lo, hi) = l.b.split(v);
            let (slo, shi) = (sh(l, lo), sh(l, hi));
            l.b.join(slo, shi)
        }
        RegClass::B16 => {
            let w = l.b.op(
                Opc::Cvt,
                &[],
                &[Ty::U32, Ty::U16],
                Ty::U32,
                smallvec![Operand::Reg(v)],
            );
            let s = sh(l, w);
            l.b.op(
                Opc::Cvt,
                &[],
                &[Ty::U16, Ty::U32],
                Ty::U16,
                smallvec![Operand::Reg(s)],
            )
        }
        RegClass::Pred => {
            let w = l.b.op(
                Opc::Selp,
                &[],
                &[Ty::U32],
                Ty::U32,
                smallvec![Operand::Imm(1), Operand::Imm(0), Operand::Reg(v)],
            );
            let s = sh(l, w);
            l.b.op(
                Opc::Setp,
                &["ne"],
                &[Ty::U32],
                Ty::Pred,
                smallvec![Operand::Reg(s), Operand::Imm(0)],
            )
        }
    }
}

/// Lowers `reduce`.
pub fn lower(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let dim = match op.attr("dim") {
        Some(Attr::Int(d)) => *d as usize,
        _ => return Err(l.unsupported(id)),
    };
    let inputs: Vec<Tile> = op
        .operands
        .iter()
        .map(|&v| l.tile(id, v))
        .collect::<Result<_, _>>()?;
    let Some(first) = inputs.first() else {
        return Err(l.unsupported(id));
    };
    let layout = first.layout.clone();
    if dim >= layout.shape.len() {
        return Err(l.unsupported(id));
    }
    let inputs: Vec<Tile> = op
        .operands
        .iter()
        .map(|&v| l.tile_in(id, v, &layout))
        .collect::<Result<_, _>>()?;
    let elems: Vec<Elem> = inputs.iter().map(|t| t.elem).collect();
    let along = |b: &Vec<i64>| b[dim] != 0;
    if layout
        .bases(crate::lower::plan::layout::HwDim::Register)
        .iter()
        .chain(&layout.thread_bases())
        .any(|b| along(b) && b.iter().filter(|&&x| x != 0).count() > 1)
    {
        return Err(l.unsupported_feature(id, "a layout mixing the reduced dimension"));
    }
    let n = layout.num_registers();
    let along_mask: usize = layout
        .register
        .iter()
        .enumerate()
        .filter(|(_, b)| along(b))
        .fold(0, |m, (k, _)| m | 1 << k);
    let mut red = Reduction::within_threads(l, id, &inputs, &elems, &layout, along_mask)?;
    red.across_lanes(l, &layout, dim)?;
    let warp_bits: Vec<usize> = layout
        .warp
        .iter()
        .enumerate()
        .filter(|(_, b)| along(b))
        .map(|(k, _)| k)
        .collect();
    if !warp_bits.is_empty() {
        red.across_warps(l, &layout, dim, &warp_bits)?;
    }
    // The result: the input's distribution with `dim` sliced away.
    let sliced = Rc::new(layout.slice(dim));
    for (i, &res) in op.results.iter().enumerate() {
        let regs: Vec<Reg> = (0..n)
            .map(|r| {
                let g = layout.canonical_register(r) & !along_mask;
                red.acc[g].as_ref().map(|a| a[i])
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| l.unsupported(id))?;
        let t = Tile {
            elem: elems[i],
            layout: sliced.clone(),
            regs,
        };
        l.bind(res, t);
    }
    Ok(())
}

/// A reduction in progress: per group of registers that differ only
/// along the reduced dimension (keyed by its lowest register), the
/// partial result of every operand.
struct Reduction<'a> {
    id: OpId,
    elems: &'a [Elem],
    /// Per register: the partial results of its group, at the group's key.
    acc: Vec<Option<Vec<Reg>>>,
    /// The keys of the groups, in order.
    groups: Vec<usize>,
}

impl<'a> Reduction<'a> {
    /// Step 1, within the thread: folds the registers of `layout` that
    /// differ only in the bits of `along_mask` (those along the reduced
    /// dimension).
    fn within_threads(
        l: &mut Lowerer,
        id: OpId,
        inputs: &[Tile],
        elems: &'a [Elem],
        layout: &LinearLayout,
        along_mask: usize,
    ) -> Result<Self, LowerError> {
        let n = layout.num_registers();
        let mut acc: Vec<Option<Vec<Reg>>> = vec![None; n];
        for r in 0..n {
            if layout.canonical_register(r) != r {
                continue;
            }
            let g = r & !along_mask;
            let vals: Vec<Reg> = inputs.iter().map(|t| t.regs[r]).collect();
            acc[g] = Some(match acc[g].take() {
                None => vals,
                Some(prev) => combine(l, id, elems, &vals, &prev)?,
            });
        }
        let groups: Vec<usize> = (0..n).filter(|&r| acc[r].is_some()).collect();
        Ok(Reduction {
            id,
            elems,
            acc,
            groups,
        })
    }

    /// Step 2, across lanes: butterfly over the lane bits of `layout` that
    /// step along `dim`.
    fn across_lanes(
        &mut self,
        l: &mut Lowerer,
        layout: &LinearLayout,
        dim: usize,
    ) -> Result<(), LowerError> {
        for (k, b) in layout.lane.iter().enumerate() {
            if b[dim] == 0 {
                continue;
            }
            for &g in &self.groups {
                let mine = self.acc[g].clone().unwrap_or_default();
                let other: Vec<Reg> = mine.iter().map(|&v| shuffle(l, v, 1 << k)).collect();
                self.acc[g] = Some(combine(l, self.id, self.elems, &other, &mine)?);
            }
        }
        Ok(())
    }

    /// Step 3, across warps: every warp group stores its partial results
    /// in shared memory, then every thread combines those of all groups.
    fn across_warps(
        &mut self,
        l: &mut Lowerer,
        layout: &LinearLayout,
        dim: usize,
        warp_bits: &[usize],
    ) -> Result<(), LowerError> {
        let sliced = layout.slice(dim);
        let flat = flat_index(l, &sliced);
        let elems_out: i64 = sliced.shape.iter().product();
        let ngroups = 1i64 << warp_bits.len();
        let group = warp_position(l, warp_bits);
        let base = l.shared_base();
        let (regions, bytes) = self.claim_regions(l, elems_out * ngroups)?;
        l.writes(bytes.clone());
        let scratch = WarpScratch {
            flat,
            ngroups,
            base,
            regions,
        };
        for i in 0..self.elems.len() {
            // One writer per (result element, warp group): lanes that
            // shared the reduced dimension, or replicas, hold the same value.
            let owner = partial_writer(l, layout, &sliced, warp_bits);
            if let Some(q) = owner {
                l.b.begin_if(q, true);
            }
            self.store_partials(l, &scratch, i, group)?;
            if owner.is_some() {
                l.b.end_if();
            }
        }
        l.reads(bytes);
        for gi in 0..self.groups.len() {
            let g = self.groups[gi];
            self.acc[g] = self.combine_partials(l, &scratch, g)?;
        }
        Ok(())
    }

    /// Claims one scratch region per operand, `slots` slots of its size
    /// each, 8-byte aligned, in one scratch buffer; returns their
    /// offsets and the buffer's bytes.
    fn claim_regions(
        &self,
        l: &mut Lowerer,
        slots: i64,
    ) -> Result<(Vec<i64>, std::ops::Range<i64>), LowerError> {
        let (regions, end) = partial_regions(self.elems, slots);
        let base = l
            .claim_scratch(crate::lower::plan::buffers::What::Partials, end, 8)
            .map_err(|_| l.unsupported_feature(self.id, "too much shared memory"))?;
        Ok((
            regions.into_iter().map(|r| base + r).collect(),
            base..base + end,
        ))
    }

    /// Stores operand `i`'s partial result of every group in its slot for
    /// this thread's warp group `group`.
    fn store_partials(
        &self,
        l: &mut Lowerer,
        scratch: &WarpScratch,
        i: usize,
        group: Reg,
    ) -> Result<(), LowerError> {
        let e = self.elems[i];
        for &g in &self.groups {
            let v = self.acc[g]
                .as_ref()
                .map(|a| a[i])
                .ok_or_else(|| l.unsupported(self.id))?;
            let w = widen(l, v);
            let a = scratch.addr(l, scratch.flat[g], Operand::Reg(group), i, e);
            l.b.push(Inst::new(
                Opc::St,
                &["shared"],
                &[slot_ty(e)],
                vec![],
                smallvec![Operand::Addr(a, 0), Operand::Reg(w)],
            ));
        }
        Ok(())
    }

    /// Reads the partial results of group `g` from every warp group's
    /// slots and combines them in warp-group order.
    fn combine_partials(
        &self,
        l: &mut Lowerer,
        scratch: &WarpScratch,
        g: usize,
    ) -> Result<Option<Vec<Reg>>, LowerError> {
        let mut total: Option<Vec<Reg>> = None;
        for w in 0..scratch.ngroups {
            let mut vals = Vec::new();
            for (i, &e) in self.elems.iter().enumerate() {
                let a = scratch.addr(l, scratch.flat[g], Operand::Imm(w), i, e);
                vals.push(load_partial(l, a, e));
            }
            total = Some(match total {
                None => vals,
                Some(prev) => combine(l, self.id, self.elems, &vals, &prev)?,
            });
        }
        Ok(total)
    }
}

/// The shared scratch of the reduction across warps: per operand a region
/// of slots indexed `[result element][warp group]`.
struct WarpScratch {
    /// Per register group: the flat index of its result element.
    flat: Vec<Reg>,
    /// The number of warp groups along the reduced dimension.
    ngroups: i64,
    /// The shared window's base address.
    base: Reg,
    /// Per operand: the byte offset of its region.
    regions: Vec<i64>,
}

impl WarpScratch {
    /// The shared address of operand `i`'s (of element `e`) slot for the
    /// result element at flat index `f` and warp group `g`.
    fn addr(&self, l: &mut Lowerer, f: Reg, g: Operand, i: usize, e: Elem) -> Reg {
        let slot = l.b.op(
            Opc::Mad,
            &["lo"],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Reg(f), Operand::Imm(self.ngroups), g],
        );
        crate::lower::emit::ops::staging::slot_address(
            l,
            self.base,
            slot,
            slot_size(e),
            self.regions[i],
        )
    }
}

/// The type a scratch slot for an element is stored and loaded as.
fn slot_ty(e: Elem) -> Ty {
    if slot_size(e) == 8 {
        Ty::B64
    } else {
        Ty::B32
    }
}

/// `v` widened to the 32 bits of its scratch slot when it is a 16-bit
/// value or a predicate.
fn widen(l: &mut Lowerer, v: Reg) -> Reg {
    match v.class {
        RegClass::B16 => l.b.op(
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
    }
}

/// Loads the scratch slot at `a` holding an element `e`, narrowed back to
/// its register class.
fn load_partial(l: &mut Lowerer, a: Reg, e: Elem) -> Reg {
    let ty = slot_ty(e);
    let d = l.b.reg_for(ty);
    l.b.push(Inst::new(
        Opc::Ld,
        &["shared"],
        &[ty],
        smallvec![Operand::Reg(d)],
        smallvec![Operand::Addr(a, 0)],
    ));
    match e.bits() {
        16 | 8 => l.b.op(
            Opc::Cvt,
            &[],
            &[Ty::U16, Ty::U32],
            Ty::U16,
            smallvec![Operand::Reg(d)],
        ),
        1 => l.b.op(
            Opc::Setp,
            &["ne"],
            &[Ty::U32],
            Ty::Pred,
            smallvec![Operand::Reg(d), Operand::Imm(0)],
        ),
        _ => d,
    }
}

/// The predicate of the one thread per (result element, warp group) that
/// stores the group's partial result, `None` when every thread does: the
/// threads that differ only in lanes along the reduced dimension, or are
/// replicas, hold the same value.
fn partial_writer(
    l: &mut Lowerer,
    layout: &LinearLayout,
    sliced: &LinearLayout,
    warp_bits: &[usize],
) -> Option<Reg> {
    let sliced_bases = sliced.thread_bases();
    let lanes = layout.lane.len();
    let mask = sliced_bases
        .iter()
        .enumerate()
        .filter(|(k, b)| {
            LinearLayout::is_zero(b) && !(*k >= lanes && warp_bits.contains(&(k - lanes)))
        })
        .fold(0i64, |m, (k, _)| m | 1 << k);
    l.owner_pred_of(mask, sliced_bases.len())
}
