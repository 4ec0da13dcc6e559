//! Loop-invariant A operands (attention's Q) written once into shared
//! memory before their loop, so that their registers are free inside it:
//! - for the `mma.sync` products that multiply on `wgmma`, A goes into a
//!   swizzled K-major buffer their `wgmma` reads through a descriptor;
//! - for other `mma.sync` products, where the loop's accumulators and
//!   invariant A fragments together pass what ptxas holds beside the
//!   loop's addresses, A goes into row-major rows (`[M][K + 8]`) read a
//!   fragment a K step with `ldmatrix`.
//!
//! Only loops at the entry's top level stage. Whether the buffer fits the
//! shared memory left, and whether an earlier loop staged the same A
//! already, is settled where emission places it.
use crate::ir::{Module, OpId, ValueId};
use crate::lower::analysis::chains::is_mma;
use crate::lower::analysis::values::value_tile;
use crate::lower::plan::copies::direct::{copies_b, Directs};
use crate::lower::plan::engines::mma_sync::{a_fragment_layout, on_wgmma, row_pads, Kind};
use crate::lower::plan::engines::Engine;
use crate::lower::plan::layout::smem::Smem;
use crate::lower::plan::layout::{disjoint, LinearLayout};
use crate::lower::plan::Plan;

/// Words a thread of accumulators and invariant A fragments a loop holds
/// in registers at most; past it, those A operands are staged in rows.
const MAX_WORDS: i64 = 160;

/// [`MAX_WORDS`] on sm_12x and for a chain split over warp pairs
/// ([`crate::lower::analysis::chains::split`]). Both attention shapes hold exactly 160
/// (S 64, O 64, Q 32): the 128 x 128 loops spilled 8 to 12 bytes on sm_120
/// with Q in registers, decode split over eight warps 4 to 76 (sm_100,
/// sm_120); none with Q staged.
const SHORT_MAX_WORDS: i64 = 128;

/// An A operand staged before its loop.
#[derive(Clone, Debug)]
pub struct StagedA {
    /// The product that reads it.
    pub product: OpId,
    /// The A value.
    pub value: ValueId,
    /// The A fragments' layout, in which A is written.
    pub layout: LinearLayout,
    /// How it lies in shared memory.
    pub form: Form,
}

/// How a staged A lies in shared memory.
#[derive(Clone, Copy, Debug)]
pub enum Form {
    /// Rows of `stride` bytes (K elements and 16 bytes of padding), `rows`
    /// of them; `kk` elements of K.
    Rows {
        /// M.
        rows: i64,
        /// K.
        kk: i64,
        /// Bytes per row.
        stride: i64,
    },
    /// `wgmma`'s swizzled K-major layout.
    Swizzled(Smem),
}

impl Form {
    /// Bytes the buffer takes (with alignment room for the swizzled one).
    pub fn bytes(&self) -> i64 {
        match self {
            Form::Rows { rows, stride, .. } => rows * stride,
            Form::Swizzled(s) => s.bytes() + 1024,
        }
    }
}

/// The A operands staged before `for` op `id`, a loop at the entry's top
/// level, given the entry's `direct` copies: the swizzled ones first, then
/// the rows.
pub fn staged_a(m: &Module, plan: &Plan, direct: &Directs, id: OpId) -> Vec<StagedA> {
    let mut out = swizzled(m, plan, direct, id);
    out.extend(rows(m, plan, direct, id));
    out
}

/// The A operands of the loop's `mma.sync` products on `wgmma`, defined
/// before the loop in the A fragments' layout, whose B is copied directly.
fn swizzled(m: &Module, plan: &Plan, direct: &Directs, id: OpId) -> Vec<StagedA> {
    let mut out = Vec::new();
    for &op in m.ops[id].body_ops() {
        let Some((mp, a_v, [mm, kk], frag)) = invariant_a(m, plan, id, op) else {
            continue;
        };
        let eligible = on_wgmma(m, op, mp, plan.target, plan.warps)
            && plan.layouts.get(&a_v).is_some_and(|l| **l == frag)
            && copies_b(direct, op);
        if let Some(s) = Smem::new(mm, kk, 2, false).filter(|_| eligible) {
            out.push(StagedA {
                product: op,
                value: a_v,
                layout: frag,
                form: Form::Swizzled(s),
            });
        }
    }
    out
}

/// The A operands the loop's other `mma.sync` products keep in rows,
/// where its accumulators and invariant A fragments pass the registers'
/// bound.
fn rows(m: &Module, plan: &Plan, direct: &Directs, id: OpId) -> Vec<StagedA> {
    let mut words = 0;
    let mut split = false;
    let mut out: Vec<StagedA> = Vec::new();
    for &op in m.ops[id].body_ops() {
        if !is_mma(m.ops[op].opcode) {
            continue;
        }
        let Some(Engine::MmaSync(mp)) = plan.engine(op) else {
            continue;
        };
        // An accumulator element takes a register of its own, 16-bit ones
        // too (as `register_need` counts them).
        words += mp.acc.num_registers() as i64;
        split |= mp.split.is_some();
        let Some((mp, a_v, [mm, kk], frag)) = invariant_a(m, plan, id, op) else {
            continue;
        };
        let invariant = plan.layouts.get(&a_v).is_some_and(|l| **l == frag) && disjoint(&frag);
        if !invariant || on_wgmma(m, op, mp, plan.target, plan.warps) || !copies_b(direct, op) {
            continue;
        }
        words += frag.num_registers() as i64 / 2;
        if !out.iter().any(|s| s.value == a_v) {
            out.push(StagedA {
                product: op,
                value: a_v,
                layout: frag,
                form: Form::Rows {
                    rows: mm,
                    kk,
                    stride: (kk + row_pads(Kind::Half, false).0) * 2,
                },
            });
        }
    }
    let most = if split || plan.target.is_sm12x() {
        SHORT_MAX_WORDS
    } else {
        MAX_WORDS
    };
    if words <= most {
        out.clear();
    }
    out
}

/// The `mma.sync` plan, A value, A's shape and A-fragment layout of
/// product `op` of loop `id`, where A is a 2-d tile defined before the
/// loop.
fn invariant_a<'p>(
    m: &Module,
    plan: &'p Plan,
    id: OpId,
    op: OpId,
) -> Option<(
    &'p crate::lower::plan::engines::mma_sync::Plan,
    ValueId,
    [i64; 2],
    LinearLayout,
)> {
    if !is_mma(m.ops[op].opcode) {
        return None;
    }
    let Some(Engine::MmaSync(mp)) = plan.engine(op) else {
        return None;
    };
    let a_v = m.ops[op].operand("lhs")?;
    let [mm, kk] = match value_tile(m, a_v) {
        Some((shape, _)) if shape.len() == 2 => [shape[0], shape[1]],
        _ => return None,
    };
    let frag = a_fragment_layout(mp, &[mm, kk])?;
    (!defined_in(m, id, a_v)).then_some((mp, a_v, [mm, kk], frag))
}

/// Whether value `v` is defined inside op `id` (a result of an op of its
/// regions, or an argument of one of their blocks).
fn defined_in(m: &Module, id: OpId, v: ValueId) -> bool {
    m.ops[id].regions.iter().any(|r| {
        r.blocks.iter().any(|b| {
            b.args.contains(&v)
                || b.ops
                    .iter()
                    .any(|&o| m.ops[o].results.contains(&v) || defined_in(m, o, v))
        })
    })
}
