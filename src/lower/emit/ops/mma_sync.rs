//! `mmaf` / `mmai` (and dequantized `mmaf_scaled`) on warp-level tensor
//! cores (`mma.sync`, sm_80 and newer).
//!
//! The operands are staged in shared memory with padded rows, or
//! XOR-swizzled unpadded ones under `TILEIR_ALWAYS_SWIZZLE`
//! ([`crate::lower::emit::ops::mma_sync_smem`]); operands larger than the 96 KiB staging
//! budget (or the shared memory left) are staged one power-of-two K slice
//! at a time, the accumulator carried from slice to slice; layout
//! assignment is then asked for operands with their warps off K
//! ([`operand_layouts`]), so that every slice's stores are chosen at
//! compile time. Every warp
//! loads its fragments (`ldmatrix` where the fragment is a b16 matrix view
//! of the data, else `ld.shared`) and issues one `mma.sync` per m16 x n8 tile of its sub-tile and per
//! instruction K step. The accumulator lives in registers in the layout of
//! [`acc_layout`], which layout assignment gives the op's `acc` and result.
//!
//! Shapes: M a multiple of 16, N of 8, K of the instruction K (16 for
//! f16/bf16, 8 for tf32, 32 for 8-bit types, 4 for f64); other shapes, f32
//! operands, f64 on sm_120 and bf16 accumulators go to the FMA engine.
use std::rc::Rc;

use crate::ir::{OpId, Scalar};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::emit::copies::swizzle::Swizzle;
use crate::lower::error::LowerError;
use crate::ptx::Reg;

use crate::lower::emit::copies::stream::{Slices, Source};
use crate::lower::emit::ops::mma_sync_frags::{
    a_fragments, acc_fragments, acc_registers, fragment_addrs, ARegs, Mmas,
};
use crate::lower::emit::ops::mma_sync_smem::{operand_buffers, FragmentAddrs, Operands, Staged};
use crate::lower::plan::engines::mma_sync::{a_fragment_layout, Plan};

/// Lowers op `id` by `plan`.
pub fn lower(l: &mut Lowerer, id: OpId, plan: &Plan) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let (Some(a_v), Some(c_v), Some(&res)) =
        (op.operand("lhs"), op.operand("acc"), op.results.first())
    else {
        return Err(l.unsupported(id));
    };
    let (Some((ashape, _)), Some((ae, be))) = (
        value_tile(l.m, a_v),
        crate::lower::plan::engines::operand_elems(l.m, id),
    ) else {
        return Err(l.unsupported(id));
    };
    let (sa, sb) = crate::lower::emit::ops::mma_operands::signedness(l, id);
    let layout = Rc::new(plan.acc.clone());
    let shape = layout.shape.clone();
    let rank = shape.len();
    let kk = ashape[rank - 1];
    let acc_in = l.tile_in(id, c_v, &layout)?;
    let mma = Mmas::new(plan, &shape, kk, ae, be, sa, sb);
    if let Some(d) = op
        .operand("rhs")
        .and_then(|v| crate::lower::emit::copies::direct::direct(l, v))
    {
        let acc = direct_b(l, id, plan, (a_v, &ashape), &d, mma, &acc_in.regs)?;
        l.bind(res, acc);
        return Ok(());
    }
    let regs = staged_product(l, id, plan, (ae, be), kk, mma, &acc_in.regs)?;
    l.bind(
        res,
        Tile {
            elem: Elem::Num(plan.acc_elem),
            layout,
            regs,
        },
    );
    Ok(())
}

/// The product `id` by `plan` (operand elements `ae`, `be`, K `kk`) with
/// its operands staged in shared memory (A already in fragment order stays
/// in registers), accumulating into `acc`: the accumulator's registers
/// after it.
fn staged_product(
    l: &mut Lowerer,
    id: OpId,
    plan: &Plan,
    (ae, be): (Scalar, Scalar),
    kk: i64,
    mma: Mmas,
    acc: &[Reg],
) -> Result<Vec<Reg>, LowerError> {
    let (a, b) = crate::lower::emit::copies::stream::operands(l, id)?;
    let rank = plan.acc.shape.len();
    let entry = l.plan;
    let staging = entry.staging(id).ok_or_else(|| l.unsupported(id))?;
    let swizzle = staging.swizzle;
    if swizzle && !(a.disjoint() && b.disjoint()) {
        return Err(LowerError::Failed {
            message: "the plan swizzles operand buffers written element by element".into(),
            location: l.m.location(id),
        });
    }
    // A already in fragment order stays in registers.
    let a_regs = match a.tile() {
        Some(t) if staging.a_in_registers => {
            let t = in_fragments(l, id, plan, t)?;
            Some(a_fragments(l, &t))
        }
        _ => None,
    };
    let (ks, sets) = slicing(l, id)?;
    let elems = (
        a.tile().map_or(Elem::Num(ae), |t| t.elem),
        b.tile().map_or(Elem::Num(be), |t| t.elem),
    );
    let (ashape, bshape) = (a.shape(), b.shape());
    let staged: Vec<Staged> = (0..sets)
        .map(|_| {
            operand_buffers(
                l,
                plan.kind,
                (&ashape, &bshape),
                elems,
                ks,
                a_regs.is_none(),
                swizzle,
            )
        })
        .collect::<Result<_, _>>()?;
    // A streamed A whose rows `cp.async` can copy goes global-to-shared
    // without registers (B still through them).
    let copy_a = a_regs.is_none().then_some(plan.kind);
    let reads = Slices::new(l, (&a, &b), rank, ks, copy_a)?;
    let mut slices = SlicedOperands {
        id,
        operands: (&a, &b),
        copies: reads.copies_a(),
        reads,
        staged,
    };
    let k = KSlices {
        kk,
        ks,
        a_regs,
        mma,
    };
    multiply_slices(l, plan, &mut slices, k, acc)
}

/// The K slice length and the number of buffer sets of the staged product
/// `id`, as the plan chose them by the room left
/// ([`crate::lower::plan::alloc::choices::Choices::slices`]).
fn slicing(l: &Lowerer, id: OpId) -> Result<(i64, usize), LowerError> {
    let (k, sets) = (l.chosen().slices(id))
        .ok_or_else(|| l.unsupported_feature(id, "a tile too large for shared memory"))?;
    Ok((k, sets as usize))
}

/// `t`, the A operand of product `id` that the plan keeps in registers, in
/// the fragment order `plan` multiplies it in (converted if its layout is
/// another).
fn in_fragments(l: &mut Lowerer, id: OpId, plan: &Plan, t: &Tile) -> Result<Tile, LowerError> {
    let frag = a_fragment_layout(plan, &t.layout.shape).ok_or_else(|| l.unsupported(id))?;
    if frag == *t.layout {
        return Ok(t.clone());
    }
    let a_v = l.m.ops[id]
        .operand("lhs")
        .ok_or_else(|| l.unsupported(id))?;
    l.tile_in(id, a_v, &Rc::new(frag))
}

/// The operands of a product staged slice by slice: their reads and the
/// sets of buffers the slices land in.
struct SlicedOperands<'o> {
    /// The product.
    id: OpId,
    /// A and B.
    operands: (&'o Source, &'o Source),
    /// The slices' reads (and A's copies).
    reads: Slices,
    /// Whether A's slices are copied global-to-shared with `cp.async`.
    copies: bool,
    /// One or two sets of buffers.
    staged: Vec<Staged>,
}

impl SlicedOperands<'_> {
    /// Writes `slice` (slice `s` of K) into buffer set `set`.
    fn stage(
        &mut self,
        l: &mut Lowerer,
        set: usize,
        slice: &[Option<Tile>; 2],
        s: i64,
    ) -> Result<(), LowerError> {
        let to = &self.staged[set];
        for bytes in to.bytes() {
            l.writes(bytes);
        }
        self.reads.copy(l, to.a_dest());
        let (a, b) = self.operands;
        match (a.part(&slice[0]), b.part(&slice[1])) {
            (pa, Some(pb)) if pa.is_some() || self.copies => {
                to.stage(l, pa, pb, s);
                Ok(())
            }
            _ => Err(l.unsupported(self.id)),
        }
    }

    /// The barrier after a slice's writes: every thread's copies land
    /// before the barrier that shows them.
    fn barrier(&self, l: &mut Lowerer) {
        if self.copies {
            crate::lower::emit::copies::cp_async::wait(l, 0);
        }
        l.barrier();
    }
}

/// How a staged product walks K.
struct KSlices {
    /// K.
    kk: i64,
    /// Elements of K a slice.
    ks: i64,
    /// A's fragments, when A stays in registers.
    a_regs: Option<Vec<Vec<Reg>>>,
    /// The instructions multiplying the whole K.
    mma: Mmas,
}

/// Multiplies the staged operands `ops` by `plan` slice by slice of `k`,
/// accumulating into `acc`: stages the first slice, then per slice reads
/// the next one, multiplies the current one and stages the next one (into
/// the other set of buffers at once where there are two). Returns the
/// accumulator's registers.
fn multiply_slices(
    l: &mut Lowerer,
    plan: &Plan,
    ops: &mut SlicedOperands,
    k: KSlices,
    acc: &[Reg],
) -> Result<Vec<Reg>, LowerError> {
    let KSlices {
        kk,
        ks,
        a_regs,
        mma,
    } = k;
    let parts = plan.k_parts();
    let slices = kk / ks;
    let first = ops.reads.next(l)?;
    ops.stage(l, 0, &first, 0)?;
    ops.barrier(l);
    let base = l.shared_base();
    let frags: Vec<FragmentAddrs> = ops
        .staged
        .iter()
        .map(|st| fragment_addrs(l, plan, &st.ops, (base, base), &plan.acc.shape))
        .collect();
    let mut acc = acc_fragments(l, plan, acc);
    let mut mma = Mmas {
        k_steps: ks / parts / plan.kind.k(),
        ..mma
    };
    let sets = ops.staged.len();
    for s in 0..slices {
        let set = (s as usize) % sets;
        let other = (s as usize + 1) % sets;
        // The next slice's reads go out before this one's products. With
        // two sets, they are written into the other one at once: the
        // barrier that ended the last slice ordered the writes after the
        // reads of two slices back.
        let next = if s + 1 < slices {
            let next = ops.reads.next(l)?;
            if sets == 2 {
                ops.stage(l, other, &next, s + 1)?;
                None
            } else {
                Some(next)
            }
        } else {
            None
        };
        if let Some(regs) = &a_regs {
            mma.a_regs = Some(ARegs {
                frags: regs.clone(),
                k_steps: kk / parts / plan.kind.k(),
                first: s * (ks / parts / plan.kind.k()),
            });
        }
        for bytes in ops.staged[set].bytes() {
            l.reads(bytes);
        }
        mma.emit(l, &ops.staged[set].ops, &frags[set], &mut acc, false);
        if s + 1 < slices {
            ops.barrier(l);
        }
        if let Some(next) = next {
            // One set: every thread is done reading it before it is
            // rewritten.
            ops.stage(l, other, &next, s + 1)?;
            ops.barrier(l);
        }
    }
    Ok(acc_registers(l, plan, acc))
}

/// The product `id` by `plan` of A (`a_v`, of shape `ashape`) in
/// registers as fragments and B copied straight into shared memory (`d`),
/// accumulating into `acc`: waits for the copies, multiplies (on `wgmma`
/// where the copy landed in its layout, [`crate::lower::emit::ops::mma_sync_wgmma`]), and
/// returns the result tile.
fn direct_b(
    l: &mut Lowerer,
    id: OpId,
    plan: &Plan,
    (a_v, ashape): (crate::ir::ValueId, &[i64]),
    d: &Rc<crate::lower::emit::copies::direct::DirectB>,
    mma: Mmas,
    acc: &[Reg],
) -> Result<Tile, LowerError> {
    // Copies deferred by earlier products go out before this one waits.
    crate::lower::emit::copies::direct::issue_next(l)?;
    let regs = direct_b_product(l, id, plan, (a_v, ashape), d, mma, acc)?;
    crate::lower::emit::copies::direct::defer_next(l, d);
    Ok(Tile {
        elem: Elem::Num(plan.acc_elem),
        layout: Rc::new(plan.acc.clone()),
        regs,
    })
}

/// The multiply of [`direct_b`]: the accumulator's registers after it.
fn direct_b_product(
    l: &mut Lowerer,
    id: OpId,
    plan: &Plan,
    (a_v, ashape): (crate::ir::ValueId, &[i64]),
    d: &crate::lower::emit::copies::direct::DirectB,
    mut mma: Mmas,
    acc: &[Reg],
) -> Result<Vec<Reg>, LowerError> {
    use crate::lower::emit::ops::mma_sync_wgmma::{multiply, AOperand};
    if let (Some(s), Some((offset, sa))) = (
        &d.swizzled,
        crate::lower::emit::ops::mma_sync_wgmma::staged_a(l, a_v),
    ) {
        return multiply(l, id, plan, AOperand::Smem(offset, sa), d, s, acc);
    }
    // A staged before the loop is read a fragment at a time.
    let rows_a =
        crate::lower::emit::ops::mma_sync_staged_a::rows(l, a_v).filter(|_| d.swizzled.is_none());
    if rows_a.is_none() {
        let frag = a_fragment_layout(plan, ashape).ok_or_else(|| l.unsupported(id))?;
        let a = l.tile_in(id, a_v, &Rc::new(frag))?;
        let frags = a_fragments(l, &a);
        if let Some(s) = &d.swizzled {
            return multiply(l, id, plan, AOperand::Regs(&frags), d, s, acc);
        }
        mma.a_regs = Some(ARegs {
            frags,
            k_steps: mma.k_steps,
            first: 0,
        });
    }
    let rank = plan.acc.shape.len();
    let (kk, nn) = (ashape[rank - 1], plan.acc.shape[rank - 1]);
    let rows = if d.nk { nn } else { kk };
    let mut ops = Operands {
        kind: plan.kind,
        a: rows_a.map_or((0, 0, 0), |r| (r.offset, r.stride, 0)),
        b: (d.bytes.start, d.stride, rows * d.stride),
        b_natural: false,
        b_nk: d.nk,
        swizzle: Operands::row_swizzles([false, d.rows_swizzled], (0, d.stride)),
    };
    crate::lower::emit::copies::direct::wait_for_copy(l, d);
    if d.tma.is_none() {
        l.barrier();
    }
    let base = l.shared_base();
    let b_base = match &d.tma_rows {
        // TMA's layout from the buffer's 1024-aligned base: rows of the
        // whole K (Kᵀ) or N, their 128-byte column blocks apart.
        Some(s) => {
            let row = if d.nk { s.k } else { s.mn } * s.es;
            ops.b = (0, row, rows * row);
            ops.swizzle[1] = Some(Swizzle::for_tma(row, rows));
            crate::lower::emit::ops::staging::aligned_base(l, d.bytes.start)
        }
        None => base,
    };
    let frags = fragment_addrs(l, plan, &ops, (base, b_base), &plan.acc.shape);
    let mut acc = acc_fragments(l, plan, acc);
    crate::lower::emit::copies::direct::declare_reads(l, d);
    if let Some(r) = rows_a {
        l.reads(r.bytes());
    }
    mma.emit(l, &ops, &frags, &mut acc, false);
    Ok(acc_registers(l, plan, acc))
}
