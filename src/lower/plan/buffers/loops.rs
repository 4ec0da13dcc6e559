//! The buffers a `for` loop claims before (or right after) its body: its
//! pipeline's ring of stages (as many as fit, from two to the plan's), the
//! A operands staged before it (and their conversions into the fragment
//! layout), the first copies into its products' B buffers it prefetches,
//! and where its products' chain is split over warp pairs, the buffer the
//! pairs sum their partial results through (a chunk of registers at a time,
//! as many as fit).
use crate::ir::{Module, OpId};
use crate::lower::analysis::chains::split_result;
use crate::lower::analysis::values::value_tile;
use crate::lower::plan::copies::direct::buffer_options;
use crate::lower::plan::Plan;

use crate::lower::plan::engines::tile_bytes;

use super::{OpBuffer, What};

/// Registers a thread of a split sum writes in one round, at most (16 KiB
/// over eight warps): the scratch then costs no occupancy the loop's
/// buffers leave.
pub const ROUND_REGS: i64 = 16;

/// The registers a split sum of `regs` registers (over `threads` threads)
/// moves a round where `room` bytes are left: up to [`ROUND_REGS`],
/// halved until a round's words fit.
pub fn round_regs(regs: i64, threads: i64, room: i64) -> i64 {
    let mut chunk = regs.clamp(1, ROUND_REGS);
    while chunk > 1 && threads * chunk * 4 > room {
        chunk = (chunk + 1) / 2;
    }
    chunk
}

/// The buffers `for` op `id` may claim.
pub fn buffers(m: &Module, id: OpId, plan: &Plan) -> Vec<OpBuffer> {
    let mut sizes: Vec<(What, i64)> = Vec::new();
    if let Some(ring) = plan.copies.pipelines.get(&id).map(|p| &p.ring) {
        for s in 2..=ring.stages() {
            sizes.extend(ring.claims(s).into_iter().map(|b| (What::Ring, b)));
        }
    }
    for c in plan.copies.staged_a.get(&id).into_iter().flatten() {
        sizes.push((What::StagedA, c.form.bytes()));
        let held = plan.held(c.value);
        if let (Some((shape, elem)), Some(false)) =
            (value_tile(m, c.value), held.map(|h| **h == c.layout))
        {
            sizes.push((What::Conversion(c.value), tile_bytes(&shape, elem)));
        }
    }
    for load in m.ops[id].body_ops() {
        if let Some(d) = plan.copies.direct.get(load).filter(|d| d.prefetched) {
            sizes.extend(
                buffer_options(m, plan, d)
                    .into_iter()
                    .map(|b| (What::CopiedB, b)),
            );
        }
    }
    if split_result(m, id, plan.warps).is_some() {
        let threads = i64::from(plan.warps) * 32;
        sizes.extend((1..=ROUND_REGS).map(|c| (What::SplitSum, threads * c * 4)));
    }
    let mut distinct: Vec<(What, i64)> = Vec::with_capacity(sizes.len());
    for s in sizes {
        if !distinct.contains(&s) {
            distinct.push(s);
        }
    }
    distinct
        .into_iter()
        .map(|(what, bytes)| OpBuffer {
            op: id,
            what,
            bytes,
            align: 16,
        })
        .collect()
}
