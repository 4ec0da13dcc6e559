//! Pipelined loops: a `for` loop whose body only loads an A and a B tile
//! and multiplies them into the loop-carried accumulator is pipelined by
//! its product's engine, with a ring of stages in shared memory that
//! `cp.async` or TMA fills for the next iterations while the current one
//! multiplies. This file finds such loops and plans their stages.
use crate::host::MapElem;
use crate::ir::{Module, OpId, Opcode, Padding, Scalar, ValueId};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::analysis::view::{def_op, partition, Extent, PartitionInfo};
use crate::lower::plan::engines::mma_sync::{row_pads, Kind, STAGE_BUDGET};
use crate::lower::plan::engines::{mma_sync, wgmma, Engine};
use crate::lower::plan::layout::smem::Smem;
use crate::lower::plan::layout::{disjoint, Blocked, LinearLayout};
use crate::lower::plan::target::MAX_SHARED_BYTES;
use crate::lower::plan::Plan;

use crate::lower::plan::copies::k_slices;
use crate::lower::plan::copies::load::Load;
use crate::lower::plan::copies::thread_copy::{thread_copy, ThreadCopy};
use crate::lower::plan::copies::tma::{tma_copy, TmaCopy};

/// The most stages of an `mma.sync` ring.
const MMA_SYNC_MAX_STAGES: i64 = 3;
/// The most stages of a `wgmma` ring.
const WGMMA_MAX_STAGES: i64 = 4;

/// The parts of a `for` loop whose body only loads A and B and multiplies
/// them into the loop-carried accumulator, whichever engine multiplies.
#[derive(Clone, Debug)]
pub struct LoopShape {
    /// The A load.
    pub a: Load,
    /// The B load.
    pub b: Load,
    /// The `mmaf` / `mmai` op.
    pub mma: OpId,
    /// The induction variable.
    pub iv: ValueId,
    /// Whether the A and B fragments are rounded to tf32 after loading.
    pub round: (bool, bool),
}

/// A pipelined loop: its shape and its engine's ring.
#[derive(Clone, Debug)]
pub struct Pipeline {
    /// The loop's body.
    pub shape: LoopShape,
    /// The ring, by the product's engine.
    pub ring: Ring,
}

/// A pipelined loop's ring of stages.
#[derive(Clone, Debug)]
pub enum Ring {
    /// `cp.async` groups on `mma.sync`: A `[batch][M][K + pad]` then B
    /// `[batch][K][N + pad]` a stage; or, where both operands can be copied
    /// by TMA, an mbarrier ring of TMA's swizzled layouts.
    MmaSync {
        /// The product's plan.
        plan: mma_sync::Plan,
        /// One stage (of the `cp.async` ring).
        stage: StageSize,
        /// The stages.
        stages: i64,
        /// The TMA ring, which replaces the `cp.async` groups where it
        /// applies ([`mma_sync_tma`]).
        tma: Option<Box<MmaSyncTma>>,
    },
    /// Swizzled operand sets on `wgmma`, each with a full and an empty
    /// mbarrier.
    Wgmma {
        /// The product's plan.
        plan: wgmma::Plan,
        /// A's and B's swizzled layouts.
        smem: (Smem, Smem),
        /// How A's and B's chunks land in them (none where B is
        /// transposed, or where an operand copies in no aligned chunks:
        /// TMA fills that ring).
        copies: Option<Box<(CopyPlan, CopyPlan)>>,
        /// A's and B's copies where TMA copies at least one of them
        /// ([`stage_copies`]), which replace the chunks.
        tma: Option<Box<(StageCopy, StageCopy)>>,
        /// Where the product reads B K-major (tf32 and 8-bit types) but
        /// memory holds it MN-major: TMA copies B as it is, and the
        /// threads transpose it into B's K-major buffer.
        transposed: Option<Transposed>,
        /// Bytes of one set of A and B buffers.
        set: i64,
        /// The stages.
        stages: i64,
        /// The K slices each iteration's tiles are copied and multiplied
        /// in, a stage each (1: whole tiles; [`k_slices`]; more only where
        /// TMA fills the ring). The plan is the product's over one slice.
        slices: i64,
        /// The A and B loads of one slice (the loop's where one slice).
        loads: Box<(Load, Load)>,
    },
}

/// B of a `wgmma` ring copied MN-major by TMA and transposed by the
/// threads, stage by stage, into the K-major layout the product reads
/// (tf32 and 8-bit `wgmma` read B K-major only). A set holds A, then B's
/// K-major buffer, then B's copy, each 1024-aligned.
#[derive(Clone, Copy, Debug)]
pub struct Transposed {
    /// B's copy: TMA's MN-major layout.
    pub raw: Smem,
    /// Its byte offset in a set.
    pub raw_offset: i64,
    /// The 4 x 4 element blocks each thread transposes a stage.
    pub blocks: i64,
    /// Whether the elements are rounded to tf32 on the way.
    pub round: bool,
}

/// How one operand of a ring fed by TMA reaches a stage.
#[derive(Clone, Debug)]
pub enum StageCopy {
    /// TMA's boxes, issued by thread 0 and completing on the stage's full
    /// barrier.
    Tma(TmaCopy),
    /// Every thread's loads into registers, stored into the operand's
    /// swizzled layout: for an operand TMA cannot copy (its rows not in
    /// 16-byte units, as an odd stride leaves them), as NVIDIA's code
    /// copies such operands. Each thread arrives on the stage's full
    /// barrier once its stores are done.
    Threads(ThreadCopy),
}

impl StageCopy {
    /// The TMA copy, if TMA copies the operand.
    pub fn tma(&self) -> Option<&TmaCopy> {
        match self {
            StageCopy::Tma(t) => Some(t),
            StageCopy::Threads(_) => None,
        }
    }
}

/// An `mma.sync` ring fed by TMA: A K-major and B MN-major in the
/// swizzled layouts TMA writes (`wgmma`'s), 1024-aligned sets of both, a
/// full and an empty mbarrier a stage.
#[derive(Clone, Debug)]
pub struct MmaSyncTma {
    /// A's and B's layouts.
    pub smem: (Smem, Smem),
    /// A's and B's copies, TMA's for one of them at least.
    pub copies: (StageCopy, StageCopy),
    /// B's byte offset in a set (after A's 1024-aligned buffer).
    pub b_offset: i64,
    /// Bytes of one set of A and B buffers.
    pub set: i64,
    /// The K slices each iteration's tiles are copied and multiplied in,
    /// a stage each (1: whole tiles; [`k_slices`]).
    pub slices: i64,
    /// The A and B loads of one slice (the loop's where one slice).
    pub loads: (Load, Load),
}

impl Ring {
    /// The operands' copies, where TMA fills the stages (one of them at
    /// least).
    pub fn tma(&self) -> Option<(&StageCopy, &StageCopy)> {
        match self {
            Ring::MmaSync { tma: Some(t), .. } => Some((&t.copies.0, &t.copies.1)),
            Ring::Wgmma { tma: Some(t), .. } => Some((&t.0, &t.1)),
            _ => None,
        }
    }

    /// The stages.
    pub fn stages(&self) -> i64 {
        match self {
            Ring::MmaSync { stages, .. } | Ring::Wgmma { stages, .. } => *stages,
        }
    }

    /// The stages that fit beside `used` bytes of shared memory taken
    /// before the loop (the plan's stages where nothing is), if two do.
    pub fn fit(&self, plan: &Plan, used: i64) -> Option<i64> {
        let stages = match self {
            Ring::MmaSync { tma: Some(t), .. } => mma_sync_tma_stages(plan, t.set, used)?,
            Ring::MmaSync { stage, .. } => mma_sync_stages(stage.stage_bytes, used),
            Ring::Wgmma { plan: p, set, .. } => wgmma_ring_stages(plan, p, *set, used)?,
        };
        (stages >= 2).then_some(stages.min(self.stages()))
    }

    /// The bytes of each buffer the ring claims with `stages` stages, in
    /// claim order: `mma.sync`'s stages in one buffer; `wgmma`'s sets (and
    /// 1024 bytes for their alignment), then their mbarriers.
    pub fn claims(&self, stages: i64) -> Vec<i64> {
        match self {
            Ring::MmaSync { tma: Some(t), .. } => vec![stages * t.set + 1024, 16 * stages],
            Ring::MmaSync { stage, .. } => vec![stages * stage.stage_bytes],
            Ring::Wgmma { set, .. } => vec![stages * set + 1024, 16 * stages],
        }
    }

    /// Bytes of one stage.
    pub fn stage_bytes(&self) -> i64 {
        match self {
            Ring::MmaSync { tma: Some(t), .. } => t.set,
            Ring::MmaSync { stage, .. } => stage.stage_bytes,
            Ring::Wgmma { set, .. } => *set,
        }
    }
}

/// One stage of an `mma.sync` ring: A `[batch][M][K + pad]` then B
/// `[batch][K][N + pad]`.
#[derive(Clone, Copy, Debug)]
pub struct StageSize {
    /// A's rows.
    pub mm: i64,
    /// The K extent.
    pub kk: i64,
    /// Bytes per (padded) row of A.
    pub astride: i64,
    /// Bytes per (padded) row of B.
    pub bstride: i64,
    /// Bytes of A's buffer.
    pub abytes: i64,
    /// Bytes of the stage, 128-aligned.
    pub stage_bytes: i64,
}

/// How one operand's chunks land in its swizzled `wgmma` buffer.
#[derive(Clone, Debug)]
pub struct CopyPlan {
    /// Elements per chunk.
    pub chunk: i64,
    /// The copy layout.
    pub layout: LinearLayout,
    /// Byte offset of each thread-index bit's chunk.
    pub thread: Vec<i64>,
    /// `(first register, byte offset from the thread's part)` per chunk.
    pub chunks: Vec<(usize, i64)>,
}

/// The pipeline of `for` op `id`, if its body has the shape and its
/// engine's ring holds at least two stages where nothing else takes
/// shared memory.
pub fn pipeline(m: &Module, plan: &Plan, id: OpId) -> Option<Pipeline> {
    let shape = loop_shape(m, plan, id)?;
    if !wide_induction(m, id) {
        return None;
    }
    let ring = match plan.engine(shape.mma)? {
        Engine::MmaSync(p) => mma_sync_ring(m, plan, id, &shape, p)?,
        Engine::Wgmma(p) => wgmma_ring(m, plan, id, &shape, p)?,
        Engine::Fma => return None,
    };
    Some(Pipeline { shape, ring })
}

/// Whether the bounds of `for` op `id` are there and its induction
/// variable is i32 or i64 (narrower ones count in i32 and are left alone).
pub fn wide_induction(m: &Module, id: OpId) -> bool {
    let Some((lb, _, _)) = m.ops[id].for_bounds() else {
        return false;
    };
    matches!(
        value_tile(m, lb),
        Some((_, Elem::Num(Scalar::I64 | Scalar::I32)))
    )
}

/// The `mma.sync` ring of a loop of `shape`: TMA's where it applies and
/// two of its stages fit ([`mma_sync_tma_stages`]), whole or in the fewest
/// K slices that do ([`k_slices`]), else `cp.async`
/// groups, as many stages as the budget holds (at most three), if two do.
fn mma_sync_ring(
    m: &Module,
    plan: &Plan,
    id: OpId,
    shape: &LoopShape,
    p: &mma_sync::Plan,
) -> Option<Ring> {
    let stage = mma_sync_stage(plan, shape, p)?;
    // the fewest K slices whose stages fit
    let tma = k_slices::SLICES.iter().find_map(|&n| {
        let sliced = k_slices::sliced(m, id, shape, n)?;
        let mut t = mma_sync_tma(m, plan, &sliced, p)?;
        let stages = mma_sync_tma_stages(plan, t.set, 0)?;
        t.slices = n;
        t.loads = (sliced.a, sliced.b);
        Some((stages, Box::new(t)))
    });
    let (stages, tma) = match tma {
        Some((stages, t)) => (stages, Some(t)),
        None if chunked(shape) => (mma_sync_stages(stage.stage_bytes, 0), None),
        None => return None,
    };
    (stages >= 2).then(|| Ring::MmaSync {
        plan: p.clone(),
        stage,
        stages,
        tma,
    })
}

/// Whether both loads of `shape` copy in aligned chunks, as `cp.async`
/// rings copy them.
fn chunked(shape: &LoopShape) -> bool {
    shape.a.chunk.is_some() && shape.b.chunk.is_some()
}

/// The copies of A (`asmem`) and B (`bsmem`) of a ring fed by TMA: each
/// operand by TMA where [`tma_copy`] can, else by the threads
/// ([`StageCopy::Threads`]), as long as TMA copies one of them.
fn stage_copies(
    m: &Module,
    plan: &Plan,
    shape: &LoopShape,
    (asmem, bsmem): (&Smem, &Smem),
) -> Option<(StageCopy, StageCopy)> {
    let by = |ld: &Load, smem: &Smem, k_first: bool| match tma_copy(m, plan, ld, smem, k_first) {
        Some(t) => Some(StageCopy::Tma(t)),
        None => thread_copy(plan, ld, smem, k_first).map(StageCopy::Threads),
    };
    let copies = (by(&shape.a, asmem, false)?, by(&shape.b, bsmem, true)?);
    (copies.0.tma().is_some() || copies.1.tma().is_some()).then_some(copies)
}

/// The TMA ring of an `mma.sync` loop of `shape`, where TMA can copy one
/// operand at least ([`stage_copies`]): 16-bit or 8-bit operands (not rounded
/// to tf32), or tf32 ones (f32 in memory, their fragments rounded once
/// loaded where the bytecode rounds them); two-dimensional tiles (or one
/// matrix of a batch), A K-major and B MN-major in TMA's swizzled layouts
/// (rows of at most 128 bytes swizzled whole, wider ones cut into
/// 128-byte column blocks). A's fragments are read by `ldmatrix`, B's by
/// `ldmatrix .trans` (16-bit), by 32-bit words (tf32) or by bytes (8-bit),
/// each at its logical offset through the swizzle.
fn mma_sync_tma(
    m: &Module,
    plan: &Plan,
    shape: &LoopShape,
    p: &mma_sync::Plan,
) -> Option<MmaSyncTma> {
    let (ashape, bshape) = (&shape.a.view.tile_shape, &shape.b.view.tile_shape);
    let rank = ashape.len();
    let rounded = shape.round != (false, false);
    let kind_ok = match p.kind {
        Kind::Half => !rounded,
        Kind::Tf32 => true,
        Kind::Byte => !rounded,
        Kind::F64 => false,
    };
    if !kind_ok || rank < 2 || bshape.len() != rank {
        return None;
    }
    // a batch's one matrix ([1, .., M, K]; tma_copy checks the ones)
    let (mm, kk, nn) = (ashape[rank - 2], ashape[rank - 1], bshape[rank - 1]);
    let es = p.kind.bytes();
    let asmem = Smem::new(mm, kk, es, false)?;
    let bsmem = Smem::new(nn, kk, es, true)?;
    let (mut a, mut b) = stage_copies(m, plan, shape, (&asmem, &bsmem))?;
    // f32 rounded to tf32: the copy rounds too, as NVIDIA's maps say (the
    // fragments' own rounding then leaves the values as they are).
    round_on_copy(&mut a, shape.round.0);
    round_on_copy(&mut b, shape.round.1);
    Some(MmaSyncTma {
        smem: (asmem, bsmem),
        copies: (a, b),
        b_offset: (asmem.bytes() + 1023) & !1023,
        set: wgmma::set_bytes(&asmem, &bsmem),
        slices: 1,
        loads: (shape.a.clone(), shape.b.clone()),
    })
}

/// Sets the tf32 bit of `c`'s map where `c` is a TMA copy of f32 the
/// bytecode rounds to tf32 (`round`), as NVIDIA's maps do.
fn round_on_copy(c: &mut StageCopy, round: bool) {
    if let StageCopy::Tma(t) = c {
        t.map.tf32 = round && t.map.elem == MapElem::F32;
    }
}

/// The stages of an `mma.sync` TMA ring of sets of `set` bytes beside
/// `used` bytes: as many (at most three) as the stage budget holds, or
/// where not even two do (a 128 x 256 tile of 16-bit operands takes
/// 49152 bytes a set), two if they fit the target's shared memory (the
/// loop's stages are freed before its epilogue) rather than no ring.
fn mma_sync_tma_stages(plan: &Plan, set: i64, used: i64) -> Option<i64> {
    let cap = plan.target.max_shared_bytes().min(MAX_SHARED_BYTES);
    mbarrier_stages(STAGE_BUDGET - used, set, MMA_SYNC_MAX_STAGES)
        .or_else(|| mbarrier_stages(cap - used, set, 2))
}

/// The stages (at most `most`, at least two) of sets of `set` bytes that
/// fit in `room` bytes with 1024 bytes of alignment slack and two
/// mbarriers a stage.
fn mbarrier_stages(room: i64, set: i64, most: i64) -> Option<i64> {
    (2..=most).rev().find(|s| s * set + 1024 + 16 * s <= room)
}

/// How many `mma.sync` stages of `stage_bytes` the budget holds beside
/// `used` bytes (at most three).
fn mma_sync_stages(stage_bytes: i64, used: i64) -> i64 {
    ((STAGE_BUDGET - used) / stage_bytes).min(MMA_SYNC_MAX_STAGES)
}

/// Whether `for` op `id` has the `mma.sync` pipeline's shape but its whole
/// A and B tiles are too large for two stages of either ring: its
/// products then read their operands slice by slice rather than whole
/// tiles through registers.
pub fn too_large_to_stage(m: &Module, plan: &Plan, id: OpId) -> bool {
    let Some(shape) = loop_shape(m, plan, id).filter(chunked) else {
        return false;
    };
    let Some(Engine::MmaSync(p)) = plan.engine(shape.mma) else {
        return false;
    };
    mma_sync_stage(plan, &shape, p).is_some() && mma_sync_ring(m, plan, id, &shape, p).is_none()
}

/// The stage of an `mma.sync` ring for the loop of `shape`, where that
/// engine pipelines it: operands rounded to tf32 only for tf32 products,
/// and no f64.
fn mma_sync_stage(plan: &Plan, shape: &LoopShape, p: &mma_sync::Plan) -> Option<StageSize> {
    let rounded = shape.round.0 || shape.round.1;
    (!(rounded && p.kind != Kind::Tf32 || p.kind == Kind::F64))
        .then(|| stage_size(plan, shape, p.kind))
}

/// The stage of an `mma.sync` ring for the loop of `shape`.
fn stage_size(plan: &Plan, shape: &LoopShape, kind: Kind) -> StageSize {
    let (ashape, bshape) = (&shape.a.view.tile_shape, &shape.b.view.tile_shape);
    let rank = ashape.len();
    let (mm, kk, nn) = (ashape[rank - 2], ashape[rank - 1], bshape[rank - 1]);
    let batch: i64 = ashape[..rank - 2].iter().product();
    let eb = kind.bytes();
    let (apad, bpad) = row_pads(kind, plan.target.always_swizzle);
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

/// The `wgmma` ring of a loop of `shape`: A K-major and B MN-major (neither
/// rounded to tf32), both operands' chunks landing in their swizzled
/// layouts, or both copied by TMA; or, for types `wgmma` reads K-major
/// only (tf32, 8-bit), B copied MN-major by TMA and transposed by the
/// threads ([`transposed`]). As many stages as fit beside the accumulator
/// tile once more (an epilogue's layout change goes through shared
/// memory), if two do; where not, TMA's ring in the fewest K slices whose
/// two stages do.
fn wgmma_ring(
    m: &Module,
    plan: &Plan,
    id: OpId,
    shape: &LoopShape,
    p: &wgmma::Plan,
) -> Option<Ring> {
    // the fewest K slices whose stages fit (TMA's rings only)
    k_slices::SLICES.iter().find_map(|&n| {
        let sliced = k_slices::sliced(m, id, shape, n)?;
        let mut p = p.clone();
        p.mnk[2] = sliced.a.view.tile_shape.last().copied()?;
        let ring = wgmma_slice_ring(m, plan, &sliced, &p, n)?;
        (n == 1 || ring.tma().is_some()).then_some(ring)
    })
}

/// The `wgmma` ring of [`wgmma_ring`] for the loop of `shape` in `slices`
/// K slices (`p` the product's plan over one slice).
fn wgmma_slice_ring(
    m: &Module,
    plan: &Plan,
    shape: &LoopShape,
    p: &wgmma::Plan,
    slices: i64,
) -> Option<Ring> {
    let (asmem, bsmem) = wgmma::operands(p.mnk, p.types)?;
    if asmem.mn_major {
        return None;
    }
    let (copies, tma, transposed, set) = if bsmem.mn_major {
        if shape.round != (false, false) {
            return None;
        }
        let copies = copy_plan(plan, &shape.a, &asmem, false)
            .zip(copy_plan(plan, &shape.b, &bsmem, true))
            .map(Box::new);
        let tma = stage_copies(m, plan, shape, (&asmem, &bsmem)).map(Box::new);
        if copies.is_none() && tma.is_none() {
            return None;
        }
        let set = wgmma::set_bytes(&asmem, &bsmem);
        (copies, tma, None, set)
    } else {
        let (ta, tb, t) = transposed(m, plan, shape, p, &asmem, &bsmem)?;
        let set = t.raw_offset + ((t.raw.bytes() + 1023) & !1023);
        let copies = (StageCopy::Tma(ta), StageCopy::Tma(tb));
        (None, Some(Box::new(copies)), Some(t), set)
    };
    let stages = wgmma_ring_stages(plan, p, set, 0)?;
    Some(Ring::Wgmma {
        plan: p.clone(),
        smem: (asmem, bsmem),
        copies: copies.filter(|_| slices == 1),
        tma,
        transposed,
        set,
        stages,
        slices,
        loads: Box::new((shape.a.clone(), shape.b.clone())),
    })
}

/// The TMA copies of a `wgmma` ring whose B (`bsmem`, K-major) the threads
/// transpose from TMA's MN-major copy, where TMA copies both (A with
/// tf32's rounding where the bytecode rounds it, as NVIDIA's maps do; B
/// rounded by the copy and again by the threads), B's elements are 4 bytes (tf32) or 1 (8-bit),
/// and its 4 x 4 blocks share out evenly over the threads.
fn transposed(
    m: &Module,
    plan: &Plan,
    shape: &LoopShape,
    p: &wgmma::Plan,
    asmem: &Smem,
    bsmem: &Smem,
) -> Option<(TmaCopy, TmaCopy, Transposed)> {
    let [_, nn, kk] = p.mnk;
    let es = bsmem.es;
    let threads = i64::from(plan.warps) * 32;
    let blocks = (kk / 4) * (nn / 4);
    if !matches!(es, 1 | 4) || blocks % threads != 0 || shape.round.1 && es != 4 {
        return None;
    }
    let raw = Smem::new(nn, kk, es, true)?;
    let mut ta = tma_copy(m, plan, &shape.a, asmem, false)?;
    let mut tb = tma_copy(m, plan, &shape.b, &raw, true)?;
    ta.map.tf32 = shape.round.0 && ta.map.elem == MapElem::F32;
    tb.map.tf32 = shape.round.1 && tb.map.elem == MapElem::F32;
    let raw_offset = wgmma::set_bytes(asmem, bsmem);
    Some((
        ta,
        tb,
        Transposed {
            raw,
            raw_offset,
            blocks: blocks / threads,
            round: shape.round.1,
        },
    ))
}

/// The stages of a `wgmma` ring of sets of `set` bytes for product `p`
/// beside `used` bytes: as many as fit beside the accumulator tile once
/// more (an epilogue's layout change through shared memory), or where not
/// even two do (tf32's 128 x 128 x 64 tiles with B transposed take 98304
/// bytes a set), two if they fit the target's shared memory (the loop's
/// stages are freed before its epilogue) rather than no ring.
fn wgmma_ring_stages(plan: &Plan, p: &wgmma::Plan, set: i64, used: i64) -> Option<i64> {
    let [mm, nn, _] = p.mnk;
    let cap = plan.target.max_shared_bytes().min(MAX_SHARED_BYTES);
    wgmma_stages(cap - used - mm * nn * 4, set).or_else(|| mbarrier_stages(cap - used, set, 2))
}

/// The `wgmma` stages that fit in `room` bytes of shared memory for sets
/// of `set` bytes (plus alignment slack and two barriers per stage), if
/// at least two do.
pub fn wgmma_stages(room: i64, set: i64) -> Option<i64> {
    mbarrier_stages(room, set, WGMMA_MAX_STAGES)
}

/// Plans the copies of `ld` into `smem` (`k_first`: the tile is `[k, mn]`),
/// if every chunk lands contiguously and its offset adds to the thread's.
fn copy_plan(plan: &Plan, ld: &Load, smem: &Smem, k_first: bool) -> Option<CopyPlan> {
    let shape = &ld.view.tile_shape;
    let chunk = ld.chunk?;
    let layout = Blocked::default_for(shape, i64::from(plan.warps), chunk).to_linear(shape);
    let vec_bits = chunk.trailing_zeros() as usize;
    if shape.len() != 2 || !disjoint(&layout) || layout.register.len() < vec_bits {
        return None;
    }
    let off = |c: &[i64]| {
        if k_first {
            smem.offset(c[1], c[0])
        } else {
            smem.offset(c[0], c[1])
        }
    };
    // A chunk's elements are consecutive bytes.
    if (0..vec_bits).any(|k| off(&layout.register[k]) != smem.es << k) {
        return None;
    }
    let thread: Vec<i64> = layout.thread_bases().iter().map(|b| off(b)).collect();
    let mask = thread.iter().fold(0, |a, &b| a | b);
    let mut chunks = Vec::new();
    for r in (0..layout.num_registers()).step_by(chunk as usize) {
        if layout.canonical_register(r) != r {
            continue;
        }
        let imm = (0..layout.register.len())
            .filter(|k| r >> k & 1 == 1)
            .fold(0, |a, k| a ^ off(&layout.register[k]));
        // Disjoint from the thread's bits: the xor is a sum.
        if imm & mask != 0 {
            return None;
        }
        chunks.push((r, imm));
    }
    Some(CopyPlan {
        chunk,
        layout,
        thread,
        chunks,
    })
}

/// Elements per copy chunk of `p` (4, 8 or 16 bytes), if every chunk is
/// aligned (a chunk crossing the tensor's edge copies its in-bounds part).
fn chunk(plan: &Plan, p: &PartitionInfo) -> Option<i64> {
    chunk_along(plan, p, p.tile_shape.len().checked_sub(1)?, &[16, 8, 4])
}

/// Elements per copy chunk of `p` along tile dimension `cd`, the widest of
/// `widths` (bytes) at which every chunk is aligned: `cd` runs along
/// memory, and the tile, its steps, the base and the other strides are
/// multiples of the chunk.
pub fn chunk_along(plan: &Plan, p: &PartitionInfo, cd: usize, widths: &[i64]) -> Option<i64> {
    let eb = i64::from(p.elem.bits() / 8);
    let d = *p.dim_map.get(cd)?;
    let fact = |e: &Extent| match e {
        Extent::Static(s) => {
            crate::lower::analysis::facts::largest_pow2_dividing(s.unsigned_abs()) as i64
        }
        Extent::Dynamic(x) => plan.facts.get(x).map_or(1, |f| f.divisor as i64),
    };
    let base_align = plan.facts.get(&p.base).map_or(1, |f| f.divisor as i64);
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

/// Whether op `op` is weak: no memory ordering.
pub fn weak(m: &Module, op: OpId) -> bool {
    matches!(
        m.ops[op].attr("memory_ordering_semantics"),
        None | Some(crate::ir::Attr::Enum(_, 0))
    )
}

/// Load `op` of a loop body `body` with induction variable `iv`, if it is
/// one a ring can copy: weak, zero-padded, indexed by the induction
/// variable in exactly one dimension and otherwise by values defined
/// before the loop, in aligned chunks.
fn load(m: &Module, plan: &Plan, op: OpId, body: &[OpId], iv: ValueId) -> Option<Load> {
    let o = &m.ops[op];
    if o.opcode != Opcode::LoadViewTko || !weak(m, op) {
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
    let chunk = chunk(plan, &view);
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
pub fn loop_shape(m: &Module, plan: &Plan, id: OpId) -> Option<LoopShape> {
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
    let a = load(m, plan, a, body, iv)?;
    let b = load(m, plan, b, body, iv)?;
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

#[cfg(test)]
mod tests {
    use crate::lower::plan::copies::pipeline::wgmma_stages;

    #[test]
    fn stages_are_as_many_as_fit_from_two_to_four() {
        let set = 32 * 1024;
        // Each stage also takes 16 bytes of barriers; 1024 bytes align.
        assert_eq!(wgmma_stages(4 * set + 1024 + 64, set), Some(4));
        assert_eq!(wgmma_stages(4 * set + 1024 + 63, set), Some(3));
        assert_eq!(wgmma_stages(10 * set, set), Some(4));
        assert_eq!(wgmma_stages(2 * set + 1024 + 32, set), Some(2));
        assert_eq!(wgmma_stages(2 * set + 1024 + 31, set), None);
        assert_eq!(wgmma_stages(-5, set), None);
    }
}
