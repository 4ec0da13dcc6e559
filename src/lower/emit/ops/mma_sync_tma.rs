//! A pipelined `mma.sync` loop whose operand tiles TMA copies (the plan's
//! [`crate::lower::plan::copies::pipeline::MmaSyncTma`]), over `S` (2 or
//! 3) sets of swizzled A and B buffers:
//!
//! ```text
//! set-up:   thread 0 inits full[s] (1 arrival) and empty[s] (every
//!           thread), fence.mbarrier_init, prefetch.tensormap; bar.sync
//! prologue: thread 0 fills stages 0 .. S-2 (expect_tx, the boxes)
//! loop k:   thread 0: wait empty[(k-1) % S], fill it with k + S - 1
//!           wait full[k % S]; ldmatrix + mma.sync
//!           fence.proxy.async.shared::cta; arrive empty[k % S]
//! after:    bar.sync; thread 0 invalidates the barriers
//! ```
//!
//! The buffers are TMA's layouts: A K-major and B MN-major, rows of at
//! most 128 bytes swizzled whole, wider rows cut into 128-byte column
//! blocks ([`Swizzle::for_tma`]); the fragments' reads (`ldmatrix`, and
//! for B of tf32 or 8-bit operands 32-bit words or bytes) address them at
//! their logical offsets through that swizzle.
//! The boxes are async-proxy writes made visible to the readers by the
//! full barrier's phase; the readers' loads are generic-proxy reads,
//! ordered before the next boxes overwrite the stage by the proxy fence
//! each thread issues before it releases the stage. `mma.sync` is
//! synchronous: nothing stays in flight, so the refill comes first and
//! its copies run while the stage read is multiplied.
use std::rc::Rc;

use crate::ir::OpId;
use crate::lower::emit::context::Lowerer;
use crate::lower::emit::copies::mbarrier_ring::{
    loop_state, mbarrier, scaled, set_up_stages, stage_offset, tear_down, tma_arrivals, wait_phase,
    Fill, Stages,
};
use crate::lower::emit::copies::ring::bounds;
use crate::lower::emit::copies::swizzle::Swizzle;
use crate::lower::emit::ops::mma_sync_frags::fragment_addrs;
use crate::lower::emit::ops::mma_sync_pipeline::{
    bind_accumulator, loop_accumulator, pattern, stage_mmas, Pattern,
};
use crate::lower::emit::ops::mma_sync_smem::Operands;
use crate::lower::error::LowerError;
use crate::lower::plan::copies::pipeline::MmaSyncTma;

/// Where A and B of a stage lie, from the stages' aligned base: A's sets
/// first, B's 1024-aligned after them, both in TMA's layouts.
fn operands(pat: &Pattern, tma: &MmaSyncTma) -> Operands {
    let (asmem, bsmem) = tma.smem;
    let es = pat.plan.kind.bytes();
    let (mm, kk, nn) = (asmem.mn, asmem.k, bsmem.mn);
    Operands {
        kind: pat.plan.kind,
        a: (0, kk * es, mm * kk * es),
        b: (tma.b_offset, nn * es, kk * nn * es),
        b_natural: true,
        b_nk: false,
        swizzle: [
            Some(Swizzle::for_tma(kk * es, mm)),
            Some(Swizzle::for_tma(nn * es, kk)),
        ],
    }
}

/// Lowers `for` op `id` pipelined on `mma.sync` with its stages filled by
/// TMA, where the plan says so; false (and nothing emitted) otherwise, or
/// where its bounds or stages are not there.
pub fn lower_for(l: &mut Lowerer, id: OpId) -> Result<bool, LowerError> {
    let Some(pat) = pattern(l, id) else {
        return Ok(false);
    };
    let Some(tma) = &pat.tma else {
        return Ok(false);
    };
    let op = &l.m.ops[id];
    let Some(bounds) = bounds(l, id)? else {
        return Ok(false);
    };
    // K slices: the ring runs over the virtual iterations
    let bounds = match tma.slices {
        1 => bounds,
        n => bounds.sliced(l, n),
    };
    // As many stages as the plan found room for, if two did.
    let Some(stages) = l.chosen().ring(id) else {
        return Ok(false);
    };
    let layout = Rc::new(pat.plan.acc.clone());
    let inits = op.operand_group("initValues").to_vec();
    let init = l.tile_in(id, inits[0], &layout)?;
    let mut acc = loop_accumulator(l, &pat.plan, &init.regs);

    let ops = operands(&pat, tma);
    let (asmem, bsmem) = tma.smem;
    let loads = [
        (&tma.loads.0, &tma.copies.0, asmem, false, ops.a.0),
        (&tma.loads.1, &tma.copies.1, bsmem, true, ops.b.0),
    ];
    let (aligned, barriers) = set_up_stages(l, stages, tma.set, tma_arrivals(&loads))?;
    let fill = Fill::by_tma(l, &loads, (pat.iv, &bounds.lb), (aligned, barriers.first))?;
    let ring = Stages::new(fill, tma.set, &barriers, &bounds);
    let lb = bounds.lb.regs[0];
    let next = ring.prologue(l, lb);
    let state = loop_state(l, &bounds, lb, next, stages);
    let shape = layout.shape.clone();
    let frags = fragment_addrs(l, &pat.plan, &ops, (aligned, aligned), &shape);
    let mmas = stage_mmas(l, id, &pat, &shape, tma.smem.0.k)?;
    let (rd, wr) = (state.rd, state.wr);
    bounds.emit_loop(l, state.iv, |l| {
        bounds.step_on(l, state.ahead);
        // Thread 0 refills the stage every thread released last iteration.
        let free = scaled(l, wr, 8, barriers.empty);
        ring.refill(l, &state, free);
        let ready = scaled(l, rd, 8, barriers.full);
        wait_phase(l, ready, state.rd_parity);
        let off = stage_offset(l, rd, tma.set);
        let f = frags.offset(l, off);
        mmas.emit(l, &ops, &f, &mut acc, true);
        // The stage's generic-proxy reads before the boxes that refill it.
        crate::lower::emit::wgmma_isa::proxy_fence(l);
        let done = scaled(l, rd, 8, barriers.empty);
        mbarrier(l, "arrive", done, None);
        state.advance(l, stages);
    });
    ring.finish()?;
    tear_down(l, &barriers);
    bind_accumulator(l, id, &pat.plan, layout, acc);
    Ok(true)
}
