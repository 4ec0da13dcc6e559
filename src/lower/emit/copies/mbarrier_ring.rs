//! A pipelined loop's ring of stages guarded by mbarriers, whichever
//! engine multiplies: a full and an empty barrier per stage, filled by
//! every thread's `cp.async` chunks (each arriving once they land) or by
//! thread 0's TMA boxes (`expect_tx`, the boxes completing on the full
//! barrier), beside which every thread may copy an operand TMA cannot
//! (and arrive once its stores are done); waited for by parity, released
//! by every thread and refilled once empty. The engines' loops (`ops/wgmma_pipeline.rs`,
//! `ops/mma_sync_tma.rs`) decide when each step runs.
use smallvec::smallvec;

use crate::ir::{Scalar, ValueId};
use crate::lower::analysis::values::Elem;
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::emit::copies::address::bin;
use crate::lower::emit::copies::ring::{advance_ring, counter, Bounds, StageCopies};
use crate::lower::emit::copies::thread_copy::ThreadStage;
use crate::lower::emit::copies::tma::TmaStage;
use crate::lower::emit::ops::staging::alloc;
use crate::lower::error::LowerError;
use crate::lower::plan::copies::load::Load;
use crate::lower::plan::copies::StageCopy;
use crate::lower::plan::layout::smem::Smem;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};

/// `mbarrier.<mods>.shared.b64 [addr]{, src}` (`arrive` writes a state).
pub(crate) fn mbarrier(l: &mut Lowerer, what: &'static str, addr: Reg, src: Option<i64>) {
    let dsts = if what == "arrive" {
        vec![Operand::Reg(l.b.reg(RegClass::B64))]
    } else {
        vec![]
    };
    let mut srcs = smallvec![Operand::Addr(addr, 0)];
    srcs.extend(src.map(Operand::Imm));
    l.b.push(Inst::new(
        Opc::Mbarrier,
        &[what, "shared"],
        &[Ty::B64],
        dsts,
        srcs,
    ));
}

/// Spins until the phase of parity `parity` of the mbarrier at `addr` has
/// completed.
pub(crate) fn wait_phase(l: &mut Lowerer, addr: Reg, parity: Reg) {
    l.b.begin_loop();
    let done = l.b.reg(RegClass::Pred);
    l.b.push(Inst::new(
        Opc::Mbarrier,
        &["try_wait", "parity", "shared"],
        &[Ty::B64],
        smallvec![Operand::Reg(done)],
        smallvec![Operand::Addr(addr, 0), Operand::Reg(parity)],
    ));
    l.b.begin_loop_body(done, false);
    l.b.end_loop();
}

/// Flips parity bit `p` where predicate `wrapped` holds.
fn flip(l: &mut Lowerer, p: Reg, wrapped: Reg) {
    let bit = l.b.op(
        Opc::Selp,
        &[],
        &[Ty::B32],
        Ty::B32,
        smallvec![Operand::Imm(1), Operand::Imm(0), Operand::Reg(wrapped)],
    );
    l.b.op_into(
        p,
        Opc::Xor,
        &[],
        &[Ty::B32],
        smallvec![Operand::Reg(p), Operand::Reg(bit)],
    );
}

/// `base + index * scale` (u32).
pub(crate) fn scaled(l: &mut Lowerer, index: Reg, scale: i64, base: Reg) -> Reg {
    l.b.op(
        Opc::Mad,
        &["lo"],
        &[Ty::U32],
        Ty::U32,
        smallvec![Operand::Reg(index), Operand::Imm(scale), Operand::Reg(base)],
    )
}

/// The byte offset of stage `stage` in a ring of `set`-byte stages.
pub(crate) fn stage_offset(l: &mut Lowerer, stage: Reg, set: i64) -> Reg {
    l.b.op(
        Opc::Mul,
        &["lo"],
        &[Ty::U32],
        Ty::U32,
        smallvec![Operand::Reg(stage), Operand::Imm(set)],
    )
}

/// `cp.async.mbarrier.arrive.noinc.shared.b64 [addr]`: one arrival once
/// this thread's copies so far have landed.
pub(crate) fn arrive_on_copies(l: &mut Lowerer, addr: Reg) {
    l.b.push(Inst::new(
        Opc::CpAsync,
        &["mbarrier", "arrive", "noinc", "shared"],
        &[Ty::B64],
        vec![],
        smallvec![Operand::Addr(addr, 0)],
    ));
}

/// The stages' mbarriers: a full and an empty one per stage, and the
/// predicate of thread 0, which sets them up and tears them down.
pub(crate) struct Barriers {
    /// The shared address of stage 0's full barrier (the others follow).
    pub(crate) full: Reg,
    /// The shared address of stage 0's empty barrier (the others follow).
    pub(crate) empty: Reg,
    /// The stages.
    pub(crate) stages: i64,
    /// Whether this thread is thread 0.
    pub(crate) first: Reg,
    /// The bytes of the scratch array the barriers span.
    pub(crate) bytes: std::ops::Range<i64>,
}

impl Barriers {
    /// `mbarrier.<what>` on every barrier (`counts`: the full and the
    /// empty barriers' source operands).
    pub(crate) fn each(&self, l: &mut Lowerer, what: &'static str, counts: [Option<i64>; 2]) {
        for s in 0..2 * self.stages {
            let a = bin(l, Opc::Add, Ty::U32, self.full, Operand::Imm(8 * s));
            mbarrier(l, what, a, counts[usize::from(s >= self.stages)]);
        }
    }
}

/// Who arrives on a stage's full barrier.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arrivals {
    /// Every thread, once its `cp.async` chunks have landed.
    Copies,
    /// Thread 0 alone, with the bytes its TMA boxes bring.
    Tma,
    /// Thread 0 with the TMA's bytes, and every thread once its stores of
    /// the operands TMA does not copy are done.
    TmaAndThreads,
}

/// Allocates `stages` sets of `set` bytes (plus alignment slack) and the
/// stages' barriers; thread 0 initializes the empty barriers to count
/// every thread and the full ones as `arrivals` says (with the fence that
/// shows the initializations to the TMA's completions where TMA fills),
/// and the block's barrier publishes them. Returns the aligned base of the
/// sets and the barriers.
pub(crate) fn set_up_stages(
    l: &mut Lowerer,
    stages: i64,
    set: i64,
    arrivals: Arrivals,
) -> Result<(Reg, Barriers), LowerError> {
    let threads = i64::from(l.plan.warps) * 32;
    let region = alloc(
        l,
        crate::lower::plan::buffers::What::Ring,
        &[stages * set + 1024],
        Elem::Num(Scalar::I8),
    )?;
    let bar_buf = alloc(
        l,
        crate::lower::plan::buffers::What::Ring,
        &[16 * stages],
        Elem::Num(Scalar::I8),
    )?;
    let aligned = crate::lower::emit::ops::staging::aligned_base(l, region.offset);
    let sym = l.shared_base();
    let full = bin(l, Opc::Add, Ty::U32, sym, Operand::Imm(bar_buf.offset));
    let empty = bin(l, Opc::Add, Ty::U32, full, Operand::Imm(8 * stages));
    // Thread 0 sets up the barriers; the block's barrier publishes them.
    let first = l.is_thread_zero();
    let barriers = Barriers {
        full,
        empty,
        stages,
        first,
        bytes: bar_buf.bytes(),
    };
    // The ring's own protocol orders its accesses from here to the barrier
    // after the loop.
    l.writes(region.bytes());
    l.writes(bar_buf.bytes());
    l.b.begin_if(first, true);
    let full_count = match arrivals {
        Arrivals::Copies => threads,
        Arrivals::Tma => 1,
        Arrivals::TmaAndThreads => threads + 1,
    };
    barriers.each(l, "init", [Some(full_count), Some(threads)]);
    if arrivals != Arrivals::Copies {
        crate::lower::emit::copies::tma::init_fence(l);
    }
    l.b.end_if();
    l.barrier();
    Ok((aligned, barriers))
}

/// Who arrives on the full barriers of a ring fed by TMA that copies
/// `loads` (as [`Fill::by_tma`] takes them).
pub(crate) fn tma_arrivals(loads: &[(&Load, &StageCopy, Smem, bool, i64)]) -> Arrivals {
    if loads.iter().all(|l| l.1.tma().is_some()) {
        Arrivals::Tma
    } else {
        Arrivals::TmaAndThreads
    }
}

/// How a stage is filled: every thread's `cp.async` chunks, or thread 0's
/// TMA boxes (and every thread's copies of the operands TMA does not
/// copy).
pub(crate) enum Fill<'a> {
    /// The copies of the A and B tiles into a stage.
    CpAsync(StageCopies<'a>),
    /// The TMA copies, the operands the threads copy (none where TMA
    /// copies both), and the stages' aligned base.
    Tma(TmaStage, Option<ThreadStage>, Reg),
}

impl Fill<'_> {
    /// The fill of a ring fed by TMA: `loads` (each with its copy, its
    /// swizzled layout, whether its tile is `[k, mn]`, and its buffer's
    /// byte offset in a stage) indexed by the induction variable (with its
    /// tile at the lower bound), the stages at `aligned`. Thread 0
    /// (`first`) prefetches the maps.
    pub(crate) fn by_tma(
        l: &mut Lowerer,
        loads: &[(&Load, &StageCopy, Smem, bool, i64)],
        (iv, lb): (ValueId, &Tile),
        (aligned, first): (Reg, Reg),
    ) -> Result<Fill<'static>, LowerError> {
        let by_tma: Vec<_> = (loads.iter())
            .filter_map(|&(ld, c, _, _, at)| c.tma().map(|t| (ld, t, at)))
            .collect();
        let by_threads: Vec<_> = (loads.iter())
            .filter_map(|&(ld, c, smem, k_first, at)| match c {
                StageCopy::Threads(copy) => Some((ld, copy, smem, k_first, at)),
                StageCopy::Tma(_) => None,
            })
            .collect();
        let tma = TmaStage::new(l, &by_tma, iv)?;
        l.b.begin_if(first, true);
        tma.prefetch(l);
        l.b.end_if();
        let threads = (!by_threads.is_empty()).then(|| ThreadStage::new(&by_threads, iv, lb));
        Ok(Fill::Tma(tma, threads, aligned))
    }
}

/// The stages as the loop fills them.
pub(crate) struct Stages<'a> {
    /// How a stage is filled.
    pub(crate) fill: Fill<'a>,
    /// Bytes of one stage.
    pub(crate) set: i64,
    /// The stages' barriers.
    pub(crate) barriers: &'a Barriers,
    /// The loop's bounds.
    pub(crate) bounds: &'a Bounds,
    /// The first error a fill met (the loops' emission cannot return it
    /// where it happens; [`Stages::finish`] does).
    failed: std::cell::RefCell<Option<LowerError>>,
}

impl<'a> Stages<'a> {
    /// The stages of `fill`, `set` bytes each, guarded by `barriers`, in
    /// the loop of `bounds`.
    pub(crate) fn new(
        fill: Fill<'a>,
        set: i64,
        barriers: &'a Barriers,
        bounds: &'a Bounds,
    ) -> Stages<'a> {
        Stages {
            fill,
            set,
            barriers,
            bounds,
            failed: std::cell::RefCell::new(None),
        }
    }

    /// Fills stage index `stage` with iteration `iteration`: copies the
    /// iteration's tiles into it and arrives on its full barrier, every
    /// thread once its chunks have landed (`cp.async`), or thread 0 with
    /// the bytes its boxes bring (TMA; the caller runs it in thread 0
    /// where TMA copies both operands, else it runs in every thread, which
    /// copies the other operand and arrives once its stores are done).
    pub(crate) fn fill(&self, l: &mut Lowerer, stage: Reg, iteration: Reg) {
        let off = stage_offset(l, stage, self.set);
        let bar = scaled(l, stage, 8, self.barriers.full);
        match &self.fill {
            Fill::CpAsync(copies) => {
                copies.issue(l, off);
                arrive_on_copies(l, bar);
            }
            Fill::Tma(tma, threads, aligned) => {
                let at = bin(l, Opc::Add, Ty::U32, *aligned, Operand::Reg(off));
                let Some(threads) = threads else {
                    tma.issue(l, at, bar, (iteration, self.bounds.ity));
                    return;
                };
                l.b.begin_if(self.barriers.first, true);
                tma.issue(l, at, bar, (iteration, self.bounds.ity));
                l.b.end_if();
                if let Err(e) = threads.issue(l, at, iteration) {
                    self.failed.borrow_mut().get_or_insert(e);
                }
                mbarrier(l, "arrive", bar, None);
            }
        }
    }

    /// The first error a fill met, if any.
    pub(crate) fn finish(self) -> Result<(), LowerError> {
        self.failed.into_inner().map_or(Ok(()), Err)
    }

    /// Whether thread 0 alone fills the stages (TMA copies every operand).
    pub(crate) fn by_one_thread(&self) -> bool {
        matches!(self.fill, Fill::Tma(_, None, _))
    }

    /// The prologue: fills stages 0 .. S-2 with the iterations from the
    /// lower bound `lb` on (those in bounds). Returns the induction value
    /// of the last one.
    pub(crate) fn prologue(&self, l: &mut Lowerer, lb: Reg) -> Reg {
        let ring = (self.barriers.stages, 1);
        let first = self.barriers.first;
        let one = self.by_one_thread();
        self.bounds.prologue(
            l,
            ring,
            lb,
            |l, stage, iteration| {
                if one {
                    l.b.begin_if(first, true);
                }
                self.fill(l, stage, iteration);
                if one {
                    l.b.end_if();
                }
            },
            |_| {},
        )
    }

    /// Refills the stage written (its empty barrier at `free`) with the
    /// iteration S-1 ahead, if in bounds, once every warpgroup has
    /// released it: every thread waits and copies its chunks, or thread 0
    /// alone waits and issues the boxes.
    pub(crate) fn refill(&self, l: &mut Lowerer, state: &LoopState, free: Reg) {
        let mut go = self.bounds.before_end(l, state.ahead);
        if self.by_one_thread() {
            go = l.b.op(
                Opc::And,
                &[],
                &[Ty::Pred],
                Ty::Pred,
                smallvec![Operand::Reg(go), Operand::Reg(self.barriers.first)],
            );
        }
        l.b.begin_if(go, true);
        wait_phase(l, free, state.wr_parity);
        self.fill(l, state.wr, state.ahead);
        l.b.end_if();
    }
}

/// The loop's variables: induction variable, the iteration S-1 ahead, the
/// stage read and its full-barrier parity, the stage written and the
/// parity of its last empty phase.
pub(crate) struct LoopState {
    /// The induction variable.
    pub(crate) iv: Reg,
    /// The induction value S-1 iterations ahead.
    pub(crate) ahead: Reg,
    /// The index of the stage read.
    pub(crate) rd: Reg,
    /// The parity of its full barrier's phase to wait for.
    pub(crate) rd_parity: Reg,
    /// The index of the stage written.
    pub(crate) wr: Reg,
    /// The parity of its empty barrier's last phase.
    pub(crate) wr_parity: Reg,
}

/// The loop's variables at the first iteration: the induction variable at
/// `lb`, `ahead` at `next` (the last iteration the prologue fetched), the
/// stage read 0 and the stage written S-1 (its parity 1 at first: a fresh
/// barrier's preceding phase counts as complete).
pub(crate) fn loop_state(
    l: &mut Lowerer,
    bounds: &Bounds,
    lb: Reg,
    next: Reg,
    stages: i64,
) -> LoopState {
    let (iv, ahead) = bounds.loop_variables(l, lb, next);
    let (rd, rd_parity) = (counter(l, 0), counter(l, 0));
    let (wr, wr_parity) = (counter(l, stages - 1), counter(l, 1));
    LoopState {
        iv,
        ahead,
        rd,
        rd_parity,
        wr,
        wr_parity,
    }
}

impl LoopState {
    /// Moves the stages read and written on by one (of `stages`), flipping
    /// each one's parity where it wraps around.
    pub(crate) fn advance(&self, l: &mut Lowerer, stages: i64) {
        for (r, parity) in [(self.rd, self.rd_parity), (self.wr, self.wr_parity)] {
            let wrapped = advance_ring(l, r, 1, stages);
            flip(l, parity, wrapped);
        }
    }
}

/// After the loop: every thread is past its last wait before thread 0
/// invalidates the barriers.
pub(crate) fn tear_down(l: &mut Lowerer, barriers: &Barriers) {
    l.barrier();
    l.writes(barriers.bytes.clone());
    l.b.begin_if(barriers.first, true);
    barriers.each(l, "inval", [None, None]);
    l.b.end_if();
}
