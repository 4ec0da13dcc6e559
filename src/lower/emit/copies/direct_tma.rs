//! A B operand copied straight into its product's buffer by TMA, in a
//! swizzled layout TMA writes and the product reads (`wgmma`'s on sm_90,
//! TMA's own through `ldmatrix` on `mma.sync`; the plan's
//! [`crate::lower::plan::copies::direct::tma`]): the loop's prefetched
//! copies ([`crate::lower::emit::copies::direct`]) without `cp.async`.
//! The buffer has its own mbarrier, in its alignment slack after the
//! aligned operand:
//!
//! ```text
//! before the loop: thread 0: mbarrier.init [bar], 1; fence.mbarrier_init; prefetch.tensormap
//!                  bar.sync (one for all the loop's buffers)
//! each copy:       fence.proxy.async (each thread's earlier accesses of the bytes)
//!                  bar.sync (after the first: the last copy's reads done)
//!                  thread 0: mbarrier.arrive.expect_tx [bar], bytes; cp.async.bulk.tensor ... [bar]
//! each wait:       mbarrier.try_wait.parity [bar], phase (every thread); phase ^= 1
//!                  (no barrier: each thread's wait shows it the copy's writes)
//! after the loop:  the last copy's wait; bar.sync (one for all); thread 0: mbarrier.inval [bar]
//! ```
use smallvec::smallvec;

use crate::ir::{OpId, ValueId};
use crate::lower::emit::context::Lowerer;
use crate::lower::emit::copies::address::bin;
use crate::lower::emit::copies::mbarrier_ring::{mbarrier, wait_phase};
use crate::lower::emit::copies::ring::counter;
use crate::lower::emit::copies::tma::{init_fence, TmaStage};
use crate::lower::emit::ops::staging::aligned_base;
use crate::lower::emit::wgmma_isa::proxy_fence;
use crate::lower::error::LowerError;
use crate::lower::plan::copies::load::Load;
use crate::lower::plan::copies::tma::TmaCopy;
use crate::lower::simt::membar::Access;
use crate::ptx::{Opc, Operand, Reg, Ty};

/// After the [`TmaDirect::set_up`] of a loop's copies: thread 0 makes the
/// barriers' initialization visible to the async proxy (one fence for
/// all), and the block's barrier publishes them.
pub fn publish(l: &mut Lowerer) {
    let first = l.is_thread_zero();
    l.b.begin_if(first, true);
    init_fence(l);
    l.b.end_if();
    l.barrier();
}

/// A direct copy's TMA boxes and the buffer's barrier.
#[derive(Debug)]
pub struct TmaDirect {
    /// The load.
    load: OpId,
    /// The boxes, indexed by the loop's induction variable.
    stage: TmaStage,
    /// The buffer's 1024-aligned shared address.
    base: Reg,
    /// The barrier's shared address.
    bar: Reg,
    /// The parity of the barrier's phase the next wait waits for.
    phase: Reg,
    /// Whether this thread is thread 0.
    first: Reg,
    /// The bytes of the scratch array the buffer (and barrier) span.
    bytes: std::ops::Range<i64>,
}

impl TmaDirect {
    /// Before the loop of induction variable `iv`: the copy of `load` by
    /// `copy` into the buffer over `bytes` (an operand of `operand_bytes`
    /// from its 1024-aligned base, the barrier after it); thread 0 sets up
    /// the barrier and prefetches the map. [`publish`] must follow, once
    /// for all the loop's copies, before any is issued.
    pub fn set_up(
        l: &mut Lowerer,
        ld: &Load,
        copy: &TmaCopy,
        iv: ValueId,
        (bytes, operand_bytes): (std::ops::Range<i64>, i64),
    ) -> Result<TmaDirect, LowerError> {
        let stage = TmaStage::new(l, &[(ld, copy, 0)], iv)?;
        let base = aligned_base(l, bytes.start);
        let bar = bin(l, Opc::Add, Ty::U32, base, Operand::Imm(operand_bytes));
        let first = l.is_thread_zero();
        l.declare(Access::Write, bytes.clone(), Some(ld.op));
        l.b.begin_if(first, true);
        mbarrier(l, "init", bar, Some(1));
        stage.prefetch(l);
        l.b.end_if();
        let phase = counter(l, 0);
        Ok(TmaDirect {
            load: ld.op,
            stage,
            base,
            bar,
            phase,
            first,
            bytes,
        })
    }

    /// Issues the copy of the tile at induction value `iteration` (of type
    /// `ity`): with `generic`, every thread's earlier accesses of the
    /// buffer reach the async proxy first (before the loop, where other
    /// buffers' bytes may have lain, and where `ldmatrix` reads it; not
    /// where `wgmma`, of the async proxy too, was its only reader since
    /// the last copy), and thread 0 issues the boxes once the barrier
    /// analysis has ordered the buffer's last reads before them.
    /// With `next` (a copy in the loop, not the one before it), the last
    /// copy's reads must be done first.
    pub fn issue(&self, l: &mut Lowerer, (iteration, ity): (Reg, Ty), generic: bool, next: bool) {
        if generic {
            proxy_fence(l);
        }
        if next {
            // The last copy's reads (owned by the load, so the analysis
            // leaves them to this protocol) are done in every thread.
            l.barrier();
        }
        l.declare(Access::Write, self.bytes.clone(), Some(self.load));
        l.b.begin_if(self.first, true);
        self.stage.issue(l, self.base, self.bar, (iteration, ity));
        l.b.end_if();
    }

    /// Every thread waits for the copy in flight to land.
    pub fn wait(&self, l: &mut Lowerer) {
        wait_phase(l, self.bar, self.phase);
        l.b.op_into(
            self.phase,
            Opc::Xor,
            &[],
            &[Ty::B32],
            smallvec![Operand::Reg(self.phase), Operand::Imm(1)],
        );
    }

    /// After the loop, once every thread has waited for the copy past its
    /// last iteration ([`TmaDirect::wait`]) and a block barrier followed:
    /// thread 0 invalidates the barrier.
    pub fn invalidate(&self, l: &mut Lowerer) {
        l.writes(self.bytes.clone());
        l.b.begin_if(self.first, true);
        mbarrier(l, "inval", self.bar, None);
        l.b.end_if();
    }
}
