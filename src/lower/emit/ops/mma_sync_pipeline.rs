//! A `for` loop whose body loads an A and a B tile and multiplies them into
//! the loop-carried accumulator on `mma.sync` (f16/bf16, tf32, 8-bit), software-pipelined:
//! the tiles of the next iterations are copied global-to-shared with
//! `cp.async` into a ring of stages while the current stage's fragments
//! feed the tensor cores. Out-of-bounds chunks are zero-filled (`src-size`
//! 0), so the loads must pad with zero and their chunks must be all in or
//! all out of bounds (the view's divisibility facts prove it), except along
//! the chunk's own dimension, where a chunk straddling a row's end copies
//! only the bytes in bounds (`src-size`) and zero-fills the rest.
use smallvec::smallvec;
use std::rc::Rc;

use crate::ir::{Module, OpId, Opcode, Padding, Scalar, ValueId};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::analysis::view::{def_op, partition, Extent, PartitionInfo};
use crate::lower::emit::context::{class_of, Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::layout::{Blocked, LinearLayout};
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};

use crate::lower::emit::ops::memory::ordering;
use crate::lower::emit::ops::mma_sync_copies::Stream;
use crate::lower::emit::ops::mma_sync_frags::{acc_fragments, acc_registers, fragment_addrs, Mmas};
use crate::lower::emit::ops::mma_sync_smem::{bin, disjoint, row_pads, FragmentAddrs, Operands};
use crate::lower::emit::ops::mma_sync_swizzle::{Swizzle, Swizzled};
use crate::lower::emit::ops::staging::alloc;
use crate::lower::plan::engines::mma_sync::{Kind, Plan};

/// Shared memory the stages may take, in bytes (fits every sm_80+ target).
const STAGE_BUDGET: i64 = 96 * 1024;
/// The most stages.
const MAX_STAGES: i64 = 3;

/// One operand load of the loop body.
pub(super) struct Load {
    pub(super) op: OpId,
    pub(super) view: PartitionInfo,
    pub(super) index: Vec<ValueId>,
    /// Elements per `cp.async` chunk.
    pub(super) chunk: i64,
}

/// The parts of a `for` loop whose body only loads A and B and multiplies
/// them into the loop-carried accumulator, whichever engine multiplies.
pub(super) struct LoopShape {
    /// The A load.
    pub(super) a: Load,
    /// The B load.
    pub(super) b: Load,
    /// The `mmaf` / `mmai` op.
    pub(super) mma: OpId,
    /// The induction variable.
    pub(super) iv: ValueId,
    /// Whether the A and B fragments are rounded to tf32 after loading.
    pub(super) round: (bool, bool),
}

/// The loop's parts, when it has the shape this engine pipelines.
struct Pattern {
    a: Load,
    b: Load,
    mma: OpId,
    iv: ValueId,
    plan: Plan,
    round: (bool, bool),
}

/// Elements per copy chunk of `p` (4, 8 or 16 bytes), if every chunk is
/// aligned (a chunk crossing the tensor's edge copies its in-bounds part).
fn chunk(l: &Lowerer, p: &PartitionInfo) -> Option<i64> {
    chunk_along(l, p, p.tile_shape.len().checked_sub(1)?, &[16, 8, 4])
}

/// Elements per copy chunk of `p` along tile dimension `cd`, the widest of
/// `widths` (bytes) at which every chunk is aligned: `cd` runs along
/// memory, and the tile, its steps, the base and the other strides are
/// multiples of the chunk.
pub(super) fn chunk_along(
    l: &Lowerer,
    p: &PartitionInfo,
    cd: usize,
    widths: &[i64],
) -> Option<i64> {
    let eb = i64::from(p.elem.bits() / 8);
    let d = *p.dim_map.get(cd)?;
    let fact = |e: &Extent| match e {
        Extent::Static(s) => {
            crate::lower::analysis::facts::largest_pow2_dividing(s.unsigned_abs()) as i64
        }
        Extent::Dynamic(x) => l.plan.facts.get(x).map_or(1, |f| f.divisor as i64),
    };
    let base_align = l.plan.facts.get(&p.base).map_or(1, |f| f.divisor as i64);
    widths.iter().map(|b| b / eb).find(|&v| {
        v >= 1
            && p.strides.get(d) == Some(&Extent::Static(1))
            && p.tile_shape[cd] % v == 0
            && p.steps[cd] % v == 0
            && base_align % (v * eb) == 0
            && p.strides
                .iter()
                .enumerate()
                .all(|(k, s)| k == d || fact(s) % v == 0)
    })
}

fn load(l: &Lowerer, m: &Module, op: OpId, body: &[OpId], iv: ValueId) -> Option<Load> {
    let o = &m.ops[op];
    if o.opcode != Opcode::LoadViewTko || !ordering(l, op).is_ok_and(|o| o.is_empty()) {
        return None;
    }
    let view = partition(m, o.operand("view")?)?;
    if view.sparse_dim.is_some()
        || crate::lower::analysis::view::load_padding(view.padding) != Padding::Zero
    {
        return None;
    }
    let index = o.operand_group("index").to_vec();
    // Indices are the induction variable or defined before the loop.
    let inside = |v: ValueId| body.iter().any(|&b| m.ops[b].results.contains(&v));
    if index.iter().any(|&v| v != iv && inside(v)) {
        return None;
    }
    // The induction variable indexes exactly one dimension.
    if index.iter().filter(|&&v| v == iv).count() != 1 {
        return None;
    }
    let chunk = chunk(l, &view)?;
    Some(Load {
        op,
        view,
        index,
        chunk,
    })
}

/// The load op feeding mma operand `v` in `body`, whether an f32 ->
/// tf32 `ftof` sits between them, and the ops between them (the `ftof`,
/// a `reshape` dropping the load's leading dimensions of 1).
fn source(m: &Module, v: ValueId, body: &[OpId]) -> Option<(OpId, bool, usize)> {
    let d = def_op(m, v).filter(|d| body.contains(d))?;
    match m.ops[d].opcode {
        Opcode::LoadViewTko => Some((d, false, 0)),
        Opcode::Reshape => {
            let src = *m.ops[d].operands.first()?;
            let (ld, round, between) = source(m, src, body)?;
            let (from, _) = value_tile(m, src)?;
            let (to, _) = value_tile(m, v)?;
            let lead = from.len().checked_sub(to.len())?;
            (from[lead..] == to[..] && from[..lead].iter().all(|&d| d == 1)).then_some((
                ld,
                round,
                between + 1,
            ))
        }
        Opcode::FToF => {
            let src = *m.ops[d].operands.first()?;
            let ld = def_op(m, src).filter(|d| body.contains(d))?;
            let from = value_tile(m, src)?.1;
            let to = value_tile(m, v)?.1;
            (m.ops[ld].opcode == Opcode::LoadViewTko
                && from == Elem::Num(Scalar::F32)
                && to == Elem::Num(Scalar::TF32))
            .then_some((ld, true, 1))
        }
        _ => None,
    }
}

/// The loop's parts if `for` op `id` has the pipelined shape: a body of
/// two tensor-view loads (indexed by the induction variable in one
/// dimension, zero-padded, copyable in aligned chunks), optional f32 ->
/// tf32 roundings, the multiply and the `continue`.
pub(super) fn loop_shape(l: &Lowerer, id: OpId) -> Option<LoopShape> {
    let m = l.m;
    let op = &m.ops[id];
    let block = op.regions.first()?.blocks.first()?;
    let body = &block.ops;
    let (&[iv, acc_arg], n) = (block.args.as_slice(), body.len()) else {
        return None;
    };
    if !(4..=8).contains(&n) || op.results.len() != 1 || op.operand_group("initValues").len() != 1 {
        return None;
    }
    let (mma, cont) = (body[n - 2], body[n - 1]);
    let (c, mo) = (&m.ops[cont], &m.ops[mma]);
    if c.opcode != Opcode::Continue
        || c.operands != mo.results
        || !matches!(mo.opcode, Opcode::MmaF | Opcode::MmaI)
    {
        return None;
    }
    if mo.operand("acc")? != acc_arg {
        return None;
    }
    let (lhs, rhs) = (mo.operand("lhs")?, mo.operand("rhs")?);
    let (a, ra, between_a) = source(m, lhs, body)?;
    let (b, rb, between_b) = source(m, rhs, body)?;
    // Nothing else in the body.
    if a == b || n != 4 + between_a + between_b {
        return None;
    }
    let a = load(l, m, a, body, iv)?;
    let b = load(l, m, b, body, iv)?;
    let (ashape, _) = value_tile(m, lhs)?;
    let (bshape, _) = value_tile(m, rhs)?;
    // The loads' tiles are the operands, but for leading dimensions of 1.
    let same = |tile: &[i64], operand: &[i64]| {
        let lead = tile.len().saturating_sub(operand.len());
        tile[lead..] == operand[..] && tile[..lead].iter().all(|&d| d == 1)
    };
    if !same(&a.view.tile_shape, &ashape) || !same(&b.view.tile_shape, &bshape) {
        return None;
    }
    Some(LoopShape {
        a,
        b,
        mma,
        iv,
        round: (ra, rb),
    })
}

fn pattern(l: &Lowerer, id: OpId) -> Option<Pattern> {
    let s = loop_shape(l, id)?;
    // Only where the dispatcher picks mma.sync for this op.
    let Some(crate::lower::plan::engines::Engine::MmaSync(plan)) = l.plan.engine(s.mma).cloned()
    else {
        return None;
    };
    if (s.round.0 || s.round.1) && plan.kind != Kind::Tf32 || plan.kind == Kind::F64 {
        return None;
    }
    Some(Pattern {
        a: s.a,
        b: s.b,
        mma: s.mma,
        iv: s.iv,
        plan,
        round: s.round,
    })
}

/// A staged operand: its copy layout, per-thread shared address, and the
/// bytes of one stage.
pub(super) struct Staged {
    pub(super) layout: Rc<LinearLayout>,
    pub(super) smem: Reg,
    /// Shared byte offset of each chunk register from `smem` (logical,
    /// before the swizzle).
    pub(super) chunks: Vec<(usize, i64)>,
    /// The thread's swizzled base, when the buffer is swizzled.
    pub(super) swizzled: Option<Swizzled>,
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
    let layout = Blocked::default_for(shape, i64::from(l.plan.warps), ld.chunk).to_linear(shape);
    if !disjoint(&layout) || layout.register.len() < ld.chunk.trailing_zeros() as usize {
        return None;
    }
    let mut strides = vec![shape[rank - 2] * stride, stride, eb];
    strides.drain(..3 - rank);
    let byte = |b: &[i64]| -> i64 { b.iter().zip(&strides).map(|(x, s)| x * s).sum() };
    let (start, smem) =
        crate::lower::emit::ops::mma_sync_smem::thread_address_from(l, &layout, off, byte);
    let swizzled = sw.map(|sw| Swizzled::new(l, sw, start, smem));
    let chunks = (0..layout.num_registers())
        .step_by(ld.chunk as usize)
        .filter(|&r| layout.canonical_register(r) == r)
        .map(|r| (r, layout.register_offset(r, byte)))
        .collect();
    Some(Staged {
        layout: Rc::new(layout),
        smem,
        chunks,
        swizzled,
    })
}

/// The bounds of a pipelined loop.
pub(super) struct Bounds {
    /// The lower bound.
    pub(super) lb: Tile,
    /// The upper bound.
    pub(super) ub: Reg,
    /// The step.
    pub(super) step: Reg,
    /// The induction variable's type (s32 or s64).
    pub(super) ity: Ty,
    /// The type the loop compares in (unsigned with `unsignedCmp`).
    cmp: Ty,
}

impl Bounds {
    /// Whether induction value `x` is below the upper bound.
    pub(super) fn before_end(&self, l: &mut Lowerer, x: Reg) -> Reg {
        l.b.op(
            Opc::Setp,
            &["lt"],
            &[self.cmp],
            Ty::Pred,
            smallvec![Operand::Reg(x), Operand::Reg(self.ub)],
        )
    }
}

/// The bounds of `for` op `id`, if its induction variable is i32 or i64.
pub(super) fn bounds(l: &mut Lowerer, id: OpId) -> Result<Option<Bounds>, LowerError> {
    let op = &l.m.ops[id];
    let (Some(lb), Some(ub), Some(step)) = (
        op.operand("lowerBound"),
        op.operand("upperBound"),
        op.operand("step"),
    ) else {
        return Ok(None);
    };
    let unsigned = op.has_flag("unsignedCmp");
    let lb = l.tile(id, lb)?;
    let ity = match lb.elem {
        Elem::Num(Scalar::I64) => Ty::S64,
        Elem::Num(Scalar::I32) => Ty::S32,
        _ => return Ok(None),
    };
    let cmp = match (ity, unsigned) {
        (Ty::S64, true) => Ty::U64,
        (Ty::S64, false) => Ty::S64,
        (_, true) => Ty::U32,
        _ => Ty::S32,
    };
    let ub = l.tile(id, ub)?.regs[0];
    let step = l.tile(id, step)?.regs[0];
    Ok(Some(Bounds {
        lb,
        ub,
        step,
        ity,
        cmp,
    }))
}

/// Advances ring position `r` by `by`, back to 0 at `wrap`; returns the
/// predicate of the wrap.
pub(super) fn advance_ring(l: &mut Lowerer, r: Reg, by: i64, wrap: i64) -> Reg {
    let n = bin(l, Opc::Add, Ty::U32, r, Operand::Imm(by));
    let at_end = l.b.op(
        Opc::Setp,
        &["eq"],
        &[Ty::U32],
        Ty::Pred,
        smallvec![Operand::Reg(n), Operand::Imm(wrap)],
    );
    l.b.op_into(
        r,
        Opc::Selp,
        &[],
        &[Ty::B32],
        smallvec![Operand::Imm(0), Operand::Reg(n), Operand::Reg(at_end)],
    );
    at_end
}

/// `cp.async.commit_group`.
pub(super) fn commit(l: &mut Lowerer) {
    l.b.push(Inst::new(
        Opc::CpAsync,
        &["commit_group"],
        &[],
        vec![],
        vec![],
    ));
}

/// `cp.async.wait_group n`: all but the `n` newest groups complete.
pub(super) fn wait(l: &mut Lowerer, n: i64) {
    l.b.push(Inst::new(
        Opc::CpAsync,
        &["wait_group"],
        &[],
        vec![],
        smallvec![Operand::Imm(n)],
    ));
}

/// The `cp.async` copies of a pipelined loop's A and B loads into their
/// stage buffers.
pub(super) struct StageCopies<'a> {
    /// The A and B loads.
    loads: (&'a Load, &'a Load),
    /// Their buffers' copy layouts and addresses.
    staged: (&'a Staged, &'a Staged),
    /// Their copy state.
    streams: (Stream, Stream),
}

impl<'a> StageCopies<'a> {
    /// The copies of `loads` into `staged` at the loop's first iteration
    /// (`lb` holds the lower bound of the induction variable `iv`).
    pub(super) fn new(
        l: &mut Lowerer,
        loads: (&'a Load, &'a Load),
        staged: (&'a Staged, &'a Staged),
        iv: ValueId,
        lb: &Tile,
        bounds: &Bounds,
    ) -> Result<StageCopies<'a>, LowerError> {
        let (step, ity) = (bounds.step, bounds.ity);
        let a = Stream::new(l, loads.0, staged.0, iv, lb, step, ity)?;
        let b = Stream::new(l, loads.1, staged.1, iv, lb, step, ity)?;
        Ok(StageCopies {
            loads,
            staged,
            streams: (a, b),
        })
    }

    /// Copies the current iteration's A and B tiles into the stage at
    /// byte offset `off`.
    pub(super) fn issue(&self, l: &mut Lowerer, off: Reg) {
        self.streams.0.issue(l, self.loads.0, self.staged.0, off);
        self.streams.1.issue(l, self.loads.1, self.staged.1, off);
    }
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
}

/// One stage of a pipelined loop: A `[batch][M][K + pad]` then B
/// `[batch][K][N + pad]`.
struct StageSize {
    /// A's rows.
    mm: i64,
    /// The K extent.
    kk: i64,
    /// Bytes per (padded) row of A.
    astride: i64,
    /// Bytes per (padded) row of B.
    bstride: i64,
    /// Bytes of A's buffer.
    abytes: i64,
    /// Bytes of the stage, 128-aligned.
    stage_bytes: i64,
}

/// The stage of the loop of `pat`.
fn stage_size(l: &Lowerer, pat: &Pattern) -> StageSize {
    let (ashape, bshape) = (&pat.a.view.tile_shape, &pat.b.view.tile_shape);
    let rank = ashape.len();
    let (mm, kk, nn) = (ashape[rank - 2], ashape[rank - 1], bshape[rank - 1]);
    let batch: i64 = ashape[..rank - 2].iter().product();
    let eb = pat.plan.kind.bytes();
    let (apad, bpad) = row_pads(pat.plan.kind, l.plan.target.always_swizzle);
    let (astride, bstride) = ((kk + apad) * eb, (nn + bpad) * eb);
    let (abytes, bbytes) = (batch * mm * astride, batch * kk * bstride);
    StageSize {
        mm,
        kk,
        astride,
        bstride,
        abytes,
        stage_bytes: ((abytes + bbytes) + 127) & !127,
    }
}

/// How many stages of `stage_bytes` the budget holds beside the scratch
/// in use (at most [`MAX_STAGES`]).
fn stage_count(l: &Lowerer, stage_bytes: i64) -> i64 {
    let room = STAGE_BUDGET - l.scratch.top();
    (room / stage_bytes).min(MAX_STAGES)
}

/// Whether `for` op `id` has the pipeline's shape but its whole A and B
/// tiles are too large for two stages: its products then read their
/// operands slice by slice ([`super::mma_stream`]) rather than whole
/// tiles through registers.
pub(super) fn too_large_to_stage(l: &Lowerer, id: OpId) -> bool {
    pattern(l, id).is_some_and(|pat| stage_count(l, stage_size(l, &pat).stage_bytes) < 2)
}

/// Allocates the stage buffers of the loop `id` of `pat`: A `[batch][M][K +
/// pad]`, B `[batch][K][N + pad]`, rows padded by 16 bytes, or unpadded and
/// swizzled under `always_swizzle`; as many stages as fit the budget (none
/// if fewer than two do).
fn stage_ring(l: &mut Lowerer, id: OpId, pat: &Pattern) -> Result<Option<Ring>, LowerError> {
    let StageSize {
        mm,
        kk,
        astride,
        bstride,
        abytes,
        stage_bytes,
    } = stage_size(l, pat);
    let kind = pat.plan.kind;
    let eb = kind.bytes();
    let swizzle = l.plan.target.always_swizzle;
    let stages = stage_count(l, stage_bytes);
    if stages < 2 {
        return Ok(None);
    }
    let a_elem = pat.a.view.elem;
    let buf = alloc(l, &[stages * stage_bytes / eb], a_elem)?;
    let ops = Operands {
        kind,
        a: (buf.offset, astride, mm * astride),
        b: (buf.offset + abytes, bstride, kk * bstride),
        b_natural: true,
        b_nk: false,
        swizzle: [swizzle; 2],
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
    }))
}

/// The accumulator fragments of `plan` in registers `init`, copied into
/// fresh loop variables.
fn loop_accumulator(l: &mut Lowerer, plan: &Plan, init: &[Reg]) -> Vec<Vec<Reg>> {
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
/// lower bound `lb` on (those in bounds). Returns the induction value of
/// the last one.
fn prologue(l: &mut Lowerer, p: &Pipeline, lb: Reg) -> Reg {
    let (step, ity) = (p.bounds.step, p.bounds.ity);
    let mut next = lb;
    for s in 0..p.ring.stages - 1 {
        if s > 0 {
            next = l.b.op(
                Opc::Add,
                &[],
                &[ity],
                ity,
                smallvec![Operand::Reg(next), Operand::Reg(step)],
            );
        }
        let go = p.bounds.before_end(l, next);
        let off = l.b.op(
            Opc::Mov,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Imm(s * p.ring.stage_bytes)],
        );
        l.b.begin_if(go, true);
        p.copies.issue(l, off);
        l.b.end_if();
        commit(l);
    }
    next
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
    let elem = p.bounds.lb.elem;
    let iv = l.b.reg(class_of(elem));
    l.b.copy(iv, lb);
    let ahead = l.b.reg(class_of(elem));
    l.b.copy(ahead, next);
    let rd = l.b.reg(RegClass::B32);
    l.b.op_into(rd, Opc::Mov, &[], &[Ty::U32], smallvec![Operand::Imm(0)]);
    let wr = l.b.reg(RegClass::B32);
    l.b.op_into(
        wr,
        Opc::Mov,
        &[],
        &[Ty::U32],
        smallvec![Operand::Imm((p.ring.stages - 1) * p.ring.stage_bytes)],
    );
    RingState { iv, ahead, rd, wr }
}

/// The instructions multiplying a stage's fragments for the loop's
/// product (`shape`, K `kk`) of `pat`, op `id` the loop.
fn stage_mmas(
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
    let (step, ity) = (p.bounds.step, p.bounds.ity);
    let (stages, stage_bytes) = (p.ring.stages, p.ring.stage_bytes);
    l.b.begin_loop();
    let go_on = p.bounds.before_end(l, iv);
    l.b.begin_loop_body(go_on, true);
    wait(l, stages - 2);
    l.barrier();
    l.b.op_into(
        ahead,
        Opc::Add,
        &[],
        &[ity],
        smallvec![Operand::Reg(ahead), Operand::Reg(step)],
    );
    // `ahead` now is iv + (S-1) * step: the iteration to fetch.
    let fetch = ahead;
    let go = p.bounds.before_end(l, fetch);
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
    l.b.op_into(
        iv,
        Opc::Add,
        &[],
        &[ity],
        smallvec![Operand::Reg(iv), Operand::Reg(step)],
    );
    l.b.end_loop();
}

/// Lowers `for` op `id` pipelined, if its body has the shape; false (and
/// nothing emitted) otherwise.
pub fn lower_for(l: &mut Lowerer, id: OpId) -> Result<bool, LowerError> {
    let Some(pat) = pattern(l, id) else {
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
    let next = prologue(l, &p, lb);
    // The loop: induction variable, read and write stage offsets, and the
    // induction value S-1 iterations ahead.
    let state = ring_state(l, &p, lb, next);
    let base = l.shared_base();
    let shape = layout.shape.clone();
    let frags = fragment_addrs(l, &pat.plan, &ring.ops, base, &shape);
    let mmas = stage_mmas(l, id, &pat, &shape, ring.kk)?;
    pipelined_loop(l, &p, state, (&frags, &mmas), &mut acc);
    wait(l, 0);
    l.barrier();
    let regs = acc_registers(l, &pat.plan, acc);
    if let Some(&r) = op.results.first() {
        l.bind(
            r,
            Tile {
                elem: Elem::Num(pat.plan.acc_elem),
                layout,
                regs,
            },
        );
    }
    Ok(true)
}
