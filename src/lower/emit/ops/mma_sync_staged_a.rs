//! Loop-invariant A operands of `mma.sync` products (attention's Q) kept
//! in shared memory where registers are short.
//!
//! A chained product's A normally stays in registers as fragments across
//! the loop ([`crate::lower::emit::ops::mma_sync`]). Attention with S and O of 64 registers
//! a thread each and Q's 32 is at the edge of what ptxas holds with the
//! loop's addresses. Where the loop's accumulators and invariant A
//! fragments together exceed [`MAX_WORDS`] a thread ([`SHORT_MAX_WORDS`]
//! on sm_12x and for split chains), each such A is written once before the
//! loop into a row-major buffer (`[M][K + 8]`, rows padded by 16 bytes as
//! the staged operands of [`crate::lower::emit::ops::mma_sync_smem`]) and the products read
//! one fragment a K step with `ldmatrix`, as `wgmma` reads a staged Q
//! through a descriptor ([`crate::lower::emit::ops::mma_sync_wgmma::stage_invariant_a`]).
//!
//! Where padded B buffers leave no room for it (sm_120's 99 KiB: K and V
//! of 128 x 128 take 68 KiB padded, Q 34 KiB), the direct B buffers lose
//! their padding and swizzle their rows instead
//! ([`crate::lower::emit::copies::direct::set_swizzled_rows`]).
use std::rc::Rc;

use crate::ir::{OpId, ValueId};
use crate::lower::analysis::values::value_tile;
use crate::lower::emit::context::{Lowered, Lowerer};
use crate::lower::error::LowerError;
use rustc_hash::FxHashMap as HashMap;

use crate::lower::analysis::chains::is_mma;
use crate::lower::emit::copies::direct::{body_buffer_bytes, set_swizzled_rows, swizzled_rows};
use crate::lower::emit::ops::mma_sync_smem::store_rows;
use crate::lower::emit::ops::staging::{alloc, room};
use crate::lower::plan::engines::mma_sync::row_pads;
use crate::lower::plan::engines::mma_sync::{a_fragment_layout, Kind};
use crate::lower::plan::engines::Engine;
use crate::lower::plan::layout::disjoint;

/// Words a thread of accumulators and invariant A fragments a loop holds
/// in registers at most; past it, those A operands are staged.
const MAX_WORDS: i64 = 160;

/// [`MAX_WORDS`] on sm_12x and for a chain split over warp pairs
/// ([`crate::lower::analysis::chains::split`]). Both attention shapes hold exactly 160
/// (S 64, O 64, Q 32): the 128 x 128 loops spilled 8 to 12 bytes on sm_120
/// with Q in registers, decode split over eight warps 4 to 76 (sm_100,
/// sm_120); none with Q staged.
const SHORT_MAX_WORDS: i64 = 128;

/// The A operands staged before loops, while an entry is emitted.
#[derive(Default)]
struct Staged {
    /// Loop-invariant A operands written once into row-major buffers.
    rows: HashMap<ValueId, RowsA>,
}

/// Where the A operand `v` was staged, if it was.
pub fn rows(l: &Lowerer, v: ValueId) -> Option<RowsA> {
    l.states.peek::<Staged>()?.rows.get(&v).copied()
}

/// Where a staged A operand lies: its byte offset in the scratch array and
/// the bytes per row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowsA {
    /// Byte offset of row 0.
    pub offset: i64,
    /// Bytes per row (K elements plus the padding).
    pub stride: i64,
}

/// Before loop `id` (at the entry's top level): stages the invariant A
/// operands of the `mma.sync` products of its body when registers are
/// short (see the module comment) and the shared memory left holds them
/// beside the body's B buffers. Records them for [`rows`].
pub fn stage(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let m = l.m;
    let body = m.ops[id].body_ops();
    let mut words = 0;
    let mut split = false;
    let mut staged = Vec::new();
    for &op in body {
        if !is_mma(m.ops[op].opcode) {
            continue;
        }
        let Some(Engine::MmaSync(plan)) = l.plan.engine(op).cloned() else {
            continue;
        };
        // An accumulator element takes a register of its own, 16-bit ones
        // too (as `register_need` counts them).
        words += plan.acc.num_registers() as i64;
        split |= plan.split.is_some();
        let Some(a_v) = m.ops[op].operand("lhs") else {
            continue;
        };
        let [mm, kk] = match value_tile(m, a_v) {
            Some((shape, _)) if shape.len() == 2 => [shape[0], shape[1]],
            _ => continue,
        };
        let Some(frag) = a_fragment_layout(&plan, &[mm, kk]) else {
            continue;
        };
        // Defined before the loop as a tile in fragment order.
        let invariant = matches!(l.vals.get(&a_v), Some(Lowered::Tile(t)) if *t.layout == frag)
            && disjoint(&frag);
        if !invariant
            || crate::lower::plan::engines::mma_sync::on_wgmma(
                l.m,
                op,
                &plan,
                l.plan.target,
                l.plan.warps,
            )
            || !l.plan.copies.copies_b(op)
        {
            continue;
        }
        words += frag.num_registers() as i64 / 2;
        if rows(l, a_v).is_none() && !staged.iter().any(|s: &(OpId, ValueId, _)| s.1 == a_v) {
            staged.push((op, a_v, (mm, kk, frag)));
        }
    }
    let most = if split || l.plan.target.is_sm12x() {
        SHORT_MAX_WORDS
    } else {
        MAX_WORDS
    };
    if words <= most {
        return Ok(());
    }
    for (op, a_v, (mm, kk, frag)) in staged {
        let stride = (kk + row_pads(Kind::Half, false).0) * 2;
        // A beside the body's B buffers (16 bytes for alignment).
        let fits = |l: &Lowerer| mm * stride + 16 + body_buffer_bytes(l, body) <= room(l);
        if !fits(l) && !swizzled_rows(l) {
            // Unpadded, swizzled B buffers may leave the room.
            set_swizzled_rows(l, true);
            let fit = fits(l);
            set_swizzled_rows(l, fit);
        }
        if !fits(l) {
            continue;
        }
        let t = l.tile_in(op, a_v, &Rc::new(frag))?;
        let buf = alloc(l, &[mm, stride / 2], t.elem)?;
        if !store_rows(l, &t, buf.offset, &[stride, 2]) {
            continue;
        }
        l.states.get::<Staged>().rows.insert(
            a_v,
            RowsA {
                offset: buf.offset,
                stride,
            },
        );
    }
    Ok(())
}
