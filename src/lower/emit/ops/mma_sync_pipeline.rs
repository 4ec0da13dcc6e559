//! A `for` loop whose body loads an A and a B tile and multiplies them into
//! the loop-carried accumulator on `mma.sync` (f16/bf16, tf32, 8-bit), software-pipelined:
//! the tiles of the next iterations are copied global-to-shared with
//! `cp.async` into a ring of stages while the current stage's fragments
//! feed the tensor cores. Out-of-bounds chunks are zero-filled (`src-size`
//! 0), so the loads must pad with zero and their chunks must be all in or
//! all out of bounds (the view's divisibility facts prove it), except along
//! the chunk's own dimension, where a chunk straddling a row's end copies
//! only the bytes in bounds (`src-size`) and zero-fills the rest.
use std::rc::Rc;

use crate::ir::{OpId, ValueId};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::layout::Blocked;
use crate::ptx::{Reg, RegClass};

use crate::lower::emit::copies::cp_async::Staged;
use crate::lower::emit::copies::cp_async::{commit, wait};
use crate::lower::emit::copies::ring::{advance_ring, bounds, counter, Bounds, StageCopies};
use crate::lower::emit::copies::swizzle::{Swizzle, Swizzled};
use crate::lower::emit::ops::mma_sync_frags::{acc_fragments, acc_registers, fragment_addrs, Mmas};
use crate::lower::emit::ops::mma_sync_smem::{FragmentAddrs, Operands};
use crate::lower::emit::ops::staging::alloc;
use crate::lower::plan::copies::load::Load;
use crate::lower::plan::copies::pipeline::{MmaSyncTma, StageSize};
use crate::lower::plan::copies::Ring as PlannedRing;
use crate::lower::plan::engines::mma_sync::Plan;
use crate::lower::plan::layout::{disjoint, LinearLayout};

/// The loop's parts, as the plan pipelines it on `mma.sync`.
pub(crate) struct Pattern {
    /// The A load.
    pub(crate) a: Load,
    /// The B load.
    pub(crate) b: Load,
    /// The product.
    pub(crate) mma: OpId,
    /// The induction variable.
    pub(crate) iv: ValueId,
    /// The product's plan.
    pub(crate) plan: Plan,
    /// Whether A and B are rounded to tf32.
    pub(crate) round: (bool, bool),
    /// One stage of the `cp.async` ring.
    stage: StageSize,
    /// The TMA ring, where the plan fills the stages so.
    pub(crate) tma: Option<MmaSyncTma>,
}

/// The plan's `mma.sync` pipeline of `for` op `id`, if it has one.
pub(crate) fn pattern(l: &Lowerer, id: OpId) -> Option<Pattern> {
    let p = l.plan.copies.pipelines.get(&id)?;
    let PlannedRing::MmaSync {
        plan, stage, tma, ..
    } = &p.ring
    else {
        return None;
    };
    let s = p.shape.clone();
    Some(Pattern {
        a: s.a,
        b: s.b,
        mma: s.mma,
        iv: s.iv,
        plan: plan.clone(),
        round: s.round,
        stage: *stage,
        tma: tma.as_deref().cloned(),
    })
}

/// Plans the copies of `ld` into a buffer of row stride `stride` bytes at
/// `off`, swizzled by `sw` when given.
fn staged(
    l: &mut Lowerer,
    ld: &Load,
    off: i64,
    stride: i64,
    sw: Option<Swizzle>,
) -> Option<Staged> {
    let shape = &ld.view.tile_shape;
    let rank = shape.len();
    let eb = i64::from(ld.view.elem.bits() / 8);
    let chunk = ld.chunk?;
    let layout = Blocked::default_for(shape, i64::from(l.plan.warps), chunk).to_linear(shape);
    if !disjoint(&layout) || layout.register.len() < chunk.trailing_zeros() as usize {
        return None;
    }
    let mut strides = vec![shape[rank - 2] * stride, stride, eb];
    strides.drain(..3 - rank);
    let byte = |b: &[i64]| -> i64 { b.iter().zip(&strides).map(|(x, s)| x * s).sum() };
    let (start, smem) =
        crate::lower::emit::copies::address::thread_address_from(l, &layout, off, byte);
    let swizzled = sw.map(|sw| Swizzled::new(l, sw, start, smem));
    let chunks = (0..layout.num_registers())
        .step_by(chunk as usize)
        .filter(|&r| layout.canonical_register(r) == r)
        .map(|r| (r, layout.register_offset(r, byte)))
        .collect();
    Some(Staged {
        chunk,
        layout: Rc::new(layout),
        smem,
        chunks,
        swizzled,
    })
}

/// The ring of stage buffers of a pipelined loop.
struct Ring {
    /// The stages.
    stages: i64,
    /// Bytes of one stage.
    stage_bytes: i64,
    /// Where the operands of stage 0 lie.
    ops: Operands,
    /// A's copies into its buffer.
    a: Staged,
    /// B's copies into its buffer.
    b: Staged,
    /// The product's K.
    kk: i64,
    /// The bytes of the scratch array the ring spans.
    bytes: std::ops::Range<i64>,
}

/// Allocates the stage buffers of the loop `id` of `pat`: A `[batch][M][K +
/// pad]`, B `[batch][K][N + pad]`, rows padded by 16 bytes, or unpadded and
/// swizzled under `always_swizzle`; as many stages as the plan chose by the
/// room left (none where not two fit).
fn stage_ring(l: &mut Lowerer, id: OpId, pat: &Pattern) -> Result<Option<Ring>, LowerError> {
    let StageSize {
        mm,
        kk,
        astride,
        bstride,
        abytes,
        stage_bytes,
    } = pat.stage;
    let kind = pat.plan.kind;
    let eb = kind.bytes();
    let swizzle = l.plan.target.always_swizzle;
    // As many stages as the plan found room for, if two did.
    let Some(stages) = l.chosen().ring(id) else {
        return Ok(None);
    };
    let a_elem = pat.a.view.elem;
    let buf = alloc(
        l,
        crate::lower::plan::buffers::What::Ring,
        &[stages * stage_bytes / eb],
        a_elem,
    )?;
    let ops = Operands {
        kind,
        a: (buf.offset, astride, mm * astride),
        b: (buf.offset + abytes, bstride, kk * bstride),
        b_natural: true,
        b_nk: false,
        swizzle: Operands::row_swizzles([swizzle; 2], (astride, bstride)),
    };
    let (Some(a), Some(b)) = (
        staged(l, &pat.a, ops.a.0, astride, ops.a_swizzle()),
        staged(l, &pat.b, ops.b.0, bstride, ops.b_swizzle()),
    ) else {
        return Err(l.unsupported_feature(id, "this copy layout"));
    };
    Ok(Some(Ring {
        stages,
        stage_bytes,
        ops,
        a,
        b,
        kk,
        bytes: buf.bytes(),
    }))
}

/// The accumulator fragments of `plan` in registers `init`, copied into
/// fresh loop variables.
pub(crate) fn loop_accumulator(l: &mut Lowerer, plan: &Plan, init: &[Reg]) -> Vec<Vec<Reg>> {
    let frags0 = acc_fragments(l, plan, init);
    frags0
        .iter()
        .map(|t| {
            t.iter()
                .map(|&r| {
                    let v = l.b.reg(RegClass::B32);
                    l.b.copy(v, r);
                    v
                })
                .collect()
        })
        .collect()
}

/// What a pipelined loop's iterations work with: its bounds, its ring of
/// stages and the copies filling them.
struct Pipeline<'a> {
    /// The loop's bounds.
    bounds: &'a Bounds,
    /// The ring of stages.
    ring: &'a Ring,
    /// The copies into a stage.
    copies: &'a StageCopies<'a>,
}

/// Emits the prologue: fills stages 0 .. S-2 with the iterations from the
/// lower bound `lb` on (those in bounds), each its own `cp.async` group.
/// Returns the induction value of the last one.
fn prologue(l: &mut Lowerer, p: &Pipeline, lb: Reg) -> Reg {
    let ring = (p.ring.stages, p.ring.stage_bytes);
    p.bounds
        .prologue(l, ring, lb, |l, off, _| p.copies.issue(l, off), commit)
}

/// The loop variables of a pipelined loop.
struct RingState {
    /// The induction variable.
    iv: Reg,
    /// The induction value S-1 iterations ahead.
    ahead: Reg,
    /// The byte offset of the stage read.
    rd: Reg,
    /// The byte offset of the stage written.
    wr: Reg,
}

/// The loop variables at the first iteration: the induction variable at
/// `lb`, `ahead` at `next` (the last iteration the prologue fetched), the
/// read stage 0 and the write stage S-1.
fn ring_state(l: &mut Lowerer, p: &Pipeline, lb: Reg, next: Reg) -> RingState {
    let (iv, ahead) = p.bounds.loop_variables(l, lb, next);
    let rd = counter(l, 0);
    let wr = counter(l, (p.ring.stages - 1) * p.ring.stage_bytes);
    RingState { iv, ahead, rd, wr }
}

/// The instructions multiplying a stage's fragments for the loop's
/// product (`shape`, K `kk`) of `pat`, op `id` the loop.
pub(crate) fn stage_mmas(
    l: &Lowerer,
    id: OpId,
    pat: &Pattern,
    shape: &[i64],
    kk: i64,
) -> Result<Mmas, LowerError> {
    let (Some((_, Elem::Num(ae))), Some((_, Elem::Num(be)))) = (
        value_tile(l.m, l.m.ops[pat.mma].operand("lhs").unwrap_or(pat.iv)),
        value_tile(l.m, l.m.ops[pat.mma].operand("rhs").unwrap_or(pat.iv)),
    ) else {
        return Err(l.unsupported(id));
    };
    let (sa, sb) = crate::lower::emit::ops::mma_operands::signedness(l, pat.mma);
    let mut mmas = Mmas::new(&pat.plan, shape, kk, ae, be, sa, sb);
    mmas.round = pat.round;
    Ok(mmas)
}

/// Emits the loop: each iteration waits for its stage, fetches the
/// iteration S-1 ahead into the stage written, multiplies the stage read
/// (`frags` its fragments' addresses at stage 0) into `acc`, and advances
/// the ring.
fn pipelined_loop(
    l: &mut Lowerer,
    p: &Pipeline,
    state: RingState,
    (frags, mmas): (&FragmentAddrs, &Mmas),
    acc: &mut [Vec<Reg>],
) {
    let RingState { iv, ahead, rd, wr } = state;
    let (stages, stage_bytes) = (p.ring.stages, p.ring.stage_bytes);
    p.bounds.emit_loop(l, iv, |l| {
        wait(l, stages - 2);
        l.barrier();
        // `ahead` becomes iv + (S-1) * step: the iteration to fetch.
        p.bounds.step_on(l, ahead);
        let go = p.bounds.before_end(l, ahead);
        l.b.begin_if(go, true);
        p.copies.issue(l, wr);
        l.b.end_if();
        commit(l);
        let f = frags.offset(l, rd);
        mmas.emit(l, &p.ring.ops, &f, acc, true);
        // Advance the ring.
        for r in [rd, wr] {
            advance_ring(l, r, stage_bytes, stages * stage_bytes);
        }
    });
}

/// Binds the result of `for` op `id` to the accumulator `acc` left by its
/// pipelined loop, in the product's layout.
pub(crate) fn bind_accumulator(
    l: &mut Lowerer,
    id: OpId,
    plan: &Plan,
    layout: Rc<LinearLayout>,
    acc: Vec<Vec<Reg>>,
) {
    let regs = acc_registers(l, plan, acc);
    if let Some(&r) = l.m.ops[id].results.first() {
        l.bind(
            r,
            Tile {
                elem: Elem::Num(plan.acc_elem),
                layout,
                regs,
            },
        );
    }
}

/// Lowers `for` op `id` pipelined on `cp.async` groups, if its body has
/// the shape and the plan does not fill its stages by TMA; false (and
/// nothing emitted) otherwise.
pub fn lower_for(l: &mut Lowerer, id: OpId) -> Result<bool, LowerError> {
    let Some(pat) = pattern(l, id).filter(|p| p.tma.is_none()) else {
        return Ok(false);
    };
    let op = &l.m.ops[id];
    let Some(bounds) = bounds(l, id)? else {
        return Ok(false);
    };
    let Some(ring) = stage_ring(l, id, &pat)? else {
        return Ok(false);
    };
    // The accumulator, in loop variables.
    let layout = Rc::new(pat.plan.acc.clone());
    let inits = op.operand_group("initValues").to_vec();
    let init = l.tile_in(id, inits[0], &layout)?;
    let mut acc = loop_accumulator(l, &pat.plan, &init.regs);

    let lb = bounds.lb.regs[0];
    let ivt = Tile {
        elem: bounds.lb.elem,
        layout: bounds.lb.layout.clone(),
        regs: vec![lb],
    };
    let copies = StageCopies::new(
        l,
        (&pat.a, &pat.b),
        (&ring.a, &ring.b),
        pat.iv,
        &ivt,
        &bounds,
    )?;
    let p = Pipeline {
        bounds: &bounds,
        ring: &ring,
        copies: &copies,
    };
    // The ring's own protocol orders its accesses from its first copies
    // to the barrier after the loop.
    l.writes(ring.bytes.clone());
    let next = prologue(l, &p, lb);
    // The loop: induction variable, read and write stage offsets, and the
    // induction value S-1 iterations ahead.
    let state = ring_state(l, &p, lb, next);
    let base = l.shared_base();
    let shape = layout.shape.clone();
    let frags = fragment_addrs(l, &pat.plan, &ring.ops, (base, base), &shape);
    let mmas = stage_mmas(l, id, &pat, &shape, ring.kk)?;
    pipelined_loop(l, &p, state, (&frags, &mmas), &mut acc);
    wait(l, 0);
    l.barrier();
    bind_accumulator(l, id, &pat.plan, layout, acc);
    Ok(true)
}
