//! A `for` loop whose body loads an A and a B tile and multiplies them on
//! `wgmma` (the loop shape of `mma_sync_pipeline::loop_shape`),
//! software-pipelined over `S` (2 to 4) sets of swizzled operand buffers:
//!
//! ```text
//! prologue: fill stages 0 .. S-2 (TMA boxes and expect_tx by thread 0,
//!           or every thread's cp.async, then
//!           cp.async.mbarrier.arrive.noinc on the stage's full barrier)
//! loop k:   wait full[k % S]; fence.proxy.async; wgmma ...; wait_group 1
//!           if k > 0: mbarrier.arrive empty[(k-1) % S]
//!           if k + S - 1 < n: wait empty[(k-1) % S]; fill it with k + S - 1
//! after:    wait_group 0
//! ```
//!
//! One multiply stays in flight while the next iteration waits for its
//! stage: the tensor cores never wait for the threads' bookkeeping. For
//! accumulators of more than 64 registers a thread (which ran slower so),
//! each iteration fills first, then multiplies and waits (`wait_group 0`),
//! releasing its own stage.
//!
//! A stage is filled one of two ways, as the plan decided:
//!
//! - TMA (`Ring::Wgmma::tma`): thread 0 alone fills. It tells the stage's
//!   full barrier (initialized to one arrival, then
//!   `fence.mbarrier_init`) the bytes to expect
//!   (`mbarrier.arrive.expect_tx`) and issues the tiles' boxes
//!   (`cp.async.bulk.tensor`), which land swizzled where the layouts put
//!   each element (zero outside the tensor) and complete on that barrier.
//!   Before a refill it alone waits for the stage's empty barrier. The
//!   boxes are async-proxy writes made visible by the full barrier's
//!   phase: the consumers need no proxy fence.
//! - `cp.async`: every thread writes its 16-byte chunks straight into their
//!   swizzled place (chunks past the tensor's edge copy their in-bounds
//!   bytes and zero-fill the rest) and arrives on the full barrier once
//!   they have landed (the barrier counts every thread). The copies are
//!   generic-proxy writes that `wgmma` reads through the async proxy, so
//!   each consumer fences the proxies after its wait.
//!
//! A stage is empty when every thread's multiply that read it has
//! completed (the empty barrier counts every thread). A K-major and B
//! MN-major (16-bit types) are copied either way: the rows of the tiles in
//! global memory are then the rows of the swizzled layouts. Types `wgmma`
//! reads K-major only (tf32, 8-bit) take TMA alone: B lands MN-major in
//! the stage, and once the stage is full the threads transpose it into
//! the stage's K-major B buffer ([`crate::lower::emit::ops::wgmma_transpose`]),
//! fence the proxies and synchronize before the multiply.
use smallvec::smallvec;
use std::rc::Rc;

use crate::ir::OpId;
use crate::lower::emit::context::Lowerer;
use crate::lower::error::LowerError;
use crate::ptx::{Opc, Operand, Reg, Ty};

use crate::lower::emit::copies::address::bin;
use crate::lower::emit::copies::cp_async::Staged;
use crate::lower::emit::copies::mbarrier_ring::{
    loop_state, mbarrier, scaled, set_up_stages, stage_offset, tear_down, tma_arrivals, wait_phase,
    Arrivals, Fill, LoopState, Stages,
};
use crate::lower::emit::copies::ring::{bounds, Bounds, StageCopies};
use crate::lower::emit::copies::swizzled::thread_part;
use crate::lower::emit::ops::wgmma;
use crate::lower::emit::ops::wgmma_transpose::Transposer;
use crate::lower::plan::copies::pipeline::{CopyPlan, LoopShape, StageCopy, Transposed};
use crate::lower::plan::copies::Ring as PlannedRing;
use crate::lower::plan::engines::wgmma::Plan;
use crate::lower::plan::layout::smem::Smem;

/// The copy state of `plan` into the buffer at shared address `base`.
fn staged(l: &mut Lowerer, plan: CopyPlan, base: Reg) -> Staged {
    let smem = match thread_part(l, &plan.thread) {
        Some(p) => bin(l, Opc::Add, Ty::U32, base, Operand::Reg(p)),
        None => base,
    };
    Staged {
        chunk: plan.chunk,
        layout: Rc::new(plan.layout),
        smem,
        chunks: plan.chunks,
        // The chunk offsets already are swizzled ones.
        swizzled: None,
    }
}

/// Descriptor `d` moved on by `bytes` (a u32 register, a multiple of 16).
fn moved(l: &mut Lowerer, d: Reg, bytes: Reg) -> Reg {
    let wide = crate::lower::emit::wgmma_isa::descriptor_units(l, bytes);
    l.b.op(
        Opc::Add,
        &[],
        &[Ty::S64],
        Ty::S64,
        smallvec![Operand::Reg(d), Operand::Reg(wide)],
    )
}

/// The most accumulator registers a thread may hold for a multiply to stay
/// in flight across iterations.
const MAX_ACC_REGS_IN_FLIGHT: i64 = 64;

/// What pipelining a loop on `wgmma` takes: the loop's shape, the
/// product's plan, the operands' swizzled layouts and how their chunks land
/// there, the stages and the loop's bounds.
struct Pipelined {
    /// The loop's body.
    pat: LoopShape,
    /// The product's plan.
    plan: Plan,
    /// A's and B's swizzled layouts.
    smem: (Smem, Smem),
    /// How A and B reach the stages.
    feed: Feed,
    /// B copied MN-major and transposed by the threads, where so planned.
    transposed: Option<Transposed>,
    /// The stages.
    stages: i64,
    /// Bytes of one stage's set of A and B buffers.
    set: i64,
    /// The loop's bounds.
    bounds: Bounds,
}

/// How A and B reach a `wgmma` ring's stages.
enum Feed {
    /// Their copies, TMA's for one of them at least.
    Tma((StageCopy, StageCopy)),
    /// Every thread's `cp.async` chunks of both.
    CpAsync((CopyPlan, CopyPlan)),
}

/// How `for` op `id` pipelines on `wgmma`, if its body has the shape, the
/// product multiplies on `wgmma` with A K-major and B MN-major (neither
/// rounded to tf32), both operands' chunks land in their swizzled layouts,
/// at least two stages fit and the induction variable is i32 or i64.
fn pipelined(l: &mut Lowerer, id: OpId) -> Result<Option<Pipelined>, LowerError> {
    let Some(pipe) = l.plan.copies.pipelines.get(&id).cloned() else {
        return Ok(None);
    };
    let PlannedRing::Wgmma {
        plan,
        smem,
        copies,
        tma,
        transposed,
        set,
        slices,
        loads,
        ..
    } = pipe.ring.clone()
    else {
        return Ok(None);
    };
    // As many stages as the plan found room for, if two did.
    let Some(stages) = l.chosen().ring(id) else {
        return Ok(None);
    };
    let Some(bounds) = bounds(l, id)? else {
        return Ok(None);
    };
    // K slices: the ring runs over the virtual iterations, each with a
    // slice's loads
    let bounds = match slices {
        1 => bounds,
        n => bounds.sliced(l, n),
    };
    let (a, b) = *loads;
    // TMA where the plan has it, else the chunks' cp.async
    let feed = match (tma, copies) {
        (Some(t), _) => Feed::Tma(*t),
        (None, Some(c)) => Feed::CpAsync(*c),
        (None, None) => return Ok(None),
    };
    Ok(Some(Pipelined {
        pat: LoopShape { a, b, ..pipe.shape },
        plan,
        smem,
        feed,
        transposed,
        stages,
        set,
        bounds,
    }))
}

/// A stage's multiply: the product's plan, the operands' signedness,
/// swizzled layouts and descriptors at stage 0, and the accumulator's
/// words.
struct StageMultiply<'a> {
    /// The product's plan.
    plan: &'a Plan,
    /// Whether A and B are signed.
    signs: (bool, bool),
    /// A's and B's swizzled layouts.
    smem: (&'a Smem, &'a Smem),
    /// A's and B's descriptors at stage 0.
    descs: (Reg, Reg),
    /// The accumulator's words.
    acc: &'a [Reg],
}

impl StageMultiply<'_> {
    /// Multiplies the operands of the stage `off` bytes from stage 0 into
    /// the accumulator.
    fn emit(&self, l: &mut Lowerer, off: Reg) {
        let descs = (moved(l, self.descs.0, off), moved(l, self.descs.1, off));
        wgmma::multiply(l, self.plan, self.signs, self.smem, descs, self.acc);
    }
}

/// Emits the loop: each iteration waits for the stage read to be full,
/// multiplies it, releases a stage and refills it with the iteration S-1
/// ahead, and advances the ring.
fn pipelined_loop(
    l: &mut Lowerer,
    stages: &Stages,
    state: &LoopState,
    mul: &StageMultiply,
    transposer: Option<&Transposer>,
) {
    let bounds = stages.bounds;
    let barriers = stages.barriers;
    let (ity, lb) = (bounds.ity, bounds.lb.regs[0]);
    let &LoopState {
        iv,
        ahead,
        rd,
        rd_parity,
        wr,
        ..
    } = state;
    bounds.emit_loop(l, iv, |l| {
        bounds.step_on(l, ahead);
        // Where the multiply stays in flight (an accumulator of at most 64
        // registers a thread: larger ones ran slower so on an H100), the
        // previous multiply is done after it is issued, and its stage (the
        // one written next) is refilled once every warpgroup has released
        // it. Otherwise the stage is refilled first, so the copies run
        // during the multiply, which is waited for and its own stage
        // released.
        let [mm, nn, _] = mul.plan.mnk;
        let threads = i64::from(l.plan.warps) * 32;
        let in_flight = mm * nn / threads <= MAX_ACC_REGS_IN_FLIGHT;
        let free = scaled(l, wr, 8, barriers.empty);
        if !in_flight {
            stages.refill(l, state, free);
        }
        let ready = scaled(l, rd, 8, barriers.full);
        wait_phase(l, ready, rd_parity);
        // cp.async's chunks are generic-proxy writes that wgmma reads
        // through the async proxy; TMA's boxes already are async-proxy
        // writes, made visible by the barrier's phase
        if !stages.by_one_thread() {
            crate::lower::emit::wgmma_isa::proxy_fence(l);
        }
        let off = stage_offset(l, rd, stages.set);
        if let Some(t) = transposer {
            t.emit(l, off);
        }
        mul.emit(l, off);
        crate::lower::emit::wgmma_isa::sync_op(
            l,
            &["wait_group", "sync", "aligned"],
            vec![Operand::Imm(i64::from(in_flight))],
        );
        if in_flight {
            let later = l.b.op(
                Opc::Setp,
                &["ne"],
                &[ity],
                Ty::Pred,
                smallvec![Operand::Reg(iv), Operand::Reg(lb)],
            );
            l.b.begin_if(later, true);
            mbarrier(l, "arrive", free, None);
            l.b.end_if();
            stages.refill(l, state, free);
        } else {
            let done = scaled(l, rd, 8, barriers.empty);
            mbarrier(l, "arrive", done, None);
        }
        state.advance(l, barriers.stages);
    });
}

/// Lowers `for` op `id` pipelined on `wgmma`, if its body has the shape
/// and the stages fit; false (and nothing emitted) otherwise.
pub fn lower_for(l: &mut Lowerer, id: OpId) -> Result<bool, LowerError> {
    let Some(Pipelined {
        pat,
        plan,
        smem: (asmem, bsmem),
        feed,
        transposed,
        stages,
        set,
        bounds,
    }) = pipelined(l, id)?
    else {
        return Ok(false);
    };
    let op = &l.m.ops[id];
    let inits = op.operand_group("initValues").to_vec();
    let layout = Rc::new(plan.acc.clone());
    let init = l.tile_in(id, inits[0], &layout)?;

    let arrivals = match &feed {
        Feed::Tma((ta, tb)) => {
            tma_arrivals(&[(&pat.a, ta, asmem, false, 0), (&pat.b, tb, bsmem, true, 0)])
        }
        Feed::CpAsync(_) => Arrivals::Copies,
    };
    let (aligned, barriers) = set_up_stages(l, stages, set, arrivals)?;
    let b_offset = wgmma::b_offset(&asmem);
    let bbuf = bin(l, Opc::Add, Ty::U32, aligned, Operand::Imm(b_offset));
    let (sa, sb);
    let fill = match &feed {
        Feed::Tma((ta, tb)) => {
            let (b_at, braw) = transposed.map_or((b_offset, bsmem), |t| (t.raw_offset, t.raw));
            let loads = [
                (&pat.a, ta, asmem, false, 0),
                (&pat.b, tb, braw, true, b_at),
            ];
            let first = barriers.first;
            Fill::by_tma(l, &loads, (pat.iv, &bounds.lb), (aligned, first))?
        }
        Feed::CpAsync((ca, cb)) => {
            sa = staged(l, ca.clone(), aligned);
            sb = staged(l, cb.clone(), bbuf);
            Fill::CpAsync(StageCopies::new(
                l,
                (&pat.a, &pat.b),
                (&sa, &sb),
                pat.iv,
                &bounds.lb,
                &bounds,
            )?)
        }
    };
    let descs = wgmma::descriptors(l, &plan, &asmem, &bsmem, aligned, bbuf);
    let acc = crate::lower::emit::wgmma_isa::acc_words(l, plan.types[2], &init.regs);
    let signs = crate::lower::emit::ops::mma_operands::signedness(l, pat.mma);

    let lb = bounds.lb.regs[0];
    let ring = Stages::new(fill, set, &barriers, &bounds);
    let next = ring.prologue(l, lb);
    let state = loop_state(l, &bounds, lb, next, stages);
    let mul = StageMultiply {
        plan: &plan,
        signs,
        smem: (&asmem, &bsmem),
        descs,
        acc: &acc,
    };
    let transposer = transposed.map(|t| Transposer::new(l, &t, aligned, b_offset));
    pipelined_loop(l, &ring, &state, &mul, transposer.as_ref());
    crate::lower::emit::wgmma_isa::sync_op(
        l,
        &["wait_group", "sync", "aligned"],
        vec![Operand::Imm(0)],
    );
    ring.finish()?;
    // Every thread is past its last wait before the barriers go away.
    tear_down(l, &barriers);

    let t = wgmma::acc_tile(l, &plan, layout, &acc);
    if let Some(&r) = op.results.first() {
        l.bind(r, t);
    }
    Ok(true)
}
