//! The sum, after the loop, of the partial accumulators that the two warps
//! of each pair hold in a chain split over K ([`crate::lower::analysis::chains::split`]).
//!
//! Each thread writes its registers to shared memory (`[register][thread]`,
//! consecutive lanes in consecutive words), and after a barrier reads the
//! same registers of its partner, the thread of the other warp of the pair,
//! and adds. Both warps then hold the whole sum: `a + b` and `b + a` round
//! alike, so the tile is replicated over the pair as its layout says.
//! [`crate::lower::plan::buffers::loops::ROUND_REGS`] registers go at a
//! time, fewer where the shared memory left holds fewer, as the plan chose
//! ([`crate::lower::plan::alloc::choices::Choices::split_sum`]).
use smallvec::smallvec;

use crate::ir::OpId;
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Inst, Opc, Operand, Reg, Ty};

/// The warp bit of the pairs over which tile `t`'s layout is replicated.
fn pair_bit(l: &Lowerer, id: OpId, t: &Tile) -> Result<usize, LowerError> {
    t.layout
        .warp
        .iter()
        .position(|b| LinearLayout::is_zero(b))
        .ok_or_else(|| l.unsupported(id))
}

/// Zeroes the variables `t` (f32) in the second warp of each pair, before
/// a split loop whose partial accumulator starts from a value other than
/// zero: the first warp's copy carries it, once.
pub fn zero_second_half(l: &mut Lowerer, id: OpId, t: &Tile) -> Result<(), LowerError> {
    let bit = pair_bit(l, id, t)?;
    // The first warp of the pair: its pair bit of `%tid.x` is zero.
    let all_bits = (l.plan.warps * 32).trailing_zeros() as usize;
    let first = l
        .owner_pred_of(32 << bit, all_bits)
        .ok_or_else(|| l.unsupported(id))?;
    for &r in &t.regs {
        l.b.op_into(
            r,
            Opc::Selp,
            &[],
            &[Ty::F32],
            vec![Operand::Reg(r), Operand::F32(0), Operand::Reg(first)],
        );
    }
    Ok(())
}

/// Tile `t` (f32, in a layout replicated over one warp bit, the pair's)
/// summed over each warp pair, for the `for` op `id`.
pub fn sum_pairs(l: &mut Lowerer, id: OpId, t: &Tile) -> Result<Tile, LowerError> {
    let bit = pair_bit(l, id, t)?;
    let threads = i64::from(l.plan.warps) * 32;
    // As many registers a round as the plan found room for.
    let chunk = (l.chosen().split_sum(id))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| l.unsupported_feature(id, "too much shared memory"))?;
    let start = l
        .claim_scratch(
            crate::lower::plan::buffers::What::SplitSum,
            threads * chunk as i64 * 4,
            16,
        )
        .map_err(|_| l.unsupported_feature(id, "too much shared memory"))?;
    let base = l.shared_base();
    let tid = l.tid();
    let slot = |l: &mut Lowerer, thread: Reg| {
        l.b.op(
            Opc::Mad,
            &["lo"],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Reg(thread), Operand::Imm(4), Operand::Reg(base)],
        )
    };
    let own = slot(l, tid);
    let partner = l.b.op(
        Opc::Xor,
        &[],
        &[Ty::B32],
        Ty::U32,
        smallvec![Operand::Reg(tid), Operand::Imm(32 << bit)],
    );
    let other = slot(l, partner);
    let mut regs = Vec::with_capacity(t.regs.len());
    let bytes = start..start + threads * chunk as i64 * 4;
    for part in t.regs.chunks(chunk) {
        l.writes(bytes.clone());
        for (j, &r) in part.iter().enumerate() {
            let off = start + j as i64 * threads * 4;
            l.b.push(Inst::new(
                Opc::St,
                &["shared"],
                &[Ty::F32],
                vec![],
                smallvec![Operand::Addr(own, off), Operand::Reg(r)],
            ));
        }
        l.reads(bytes.clone());
        for (j, &r) in part.iter().enumerate() {
            let off = start + j as i64 * threads * 4;
            let x = l.b.reg_for(Ty::F32);
            l.b.push(Inst::new(
                Opc::Ld,
                &["shared"],
                &[Ty::F32],
                smallvec![Operand::Reg(x)],
                smallvec![Operand::Addr(other, off)],
            ));
            let sum = l.b.op(
                Opc::Add,
                &[],
                &[Ty::F32],
                Ty::F32,
                smallvec![Operand::Reg(r), Operand::Reg(x)],
            );
            regs.push(sum);
        }
    }
    Ok(Tile {
        elem: t.elem,
        layout: t.layout.clone(),
        regs,
    })
}
