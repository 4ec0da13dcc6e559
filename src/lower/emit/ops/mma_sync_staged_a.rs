//! Loop-invariant A operands of `mma.sync` products (attention's Q) kept
//! in shared memory where registers are short.
//!
//! A chained product's A normally stays in registers as fragments across
//! the loop ([`crate::lower::emit::ops::mma_sync`]). Attention with S and O of 64 registers
//! a thread each and Q's 32 is at the edge of what ptxas holds with the
//! loop's addresses. Where the loop's accumulators and invariant A
//! fragments together exceed 160 words a thread (128 on sm_12x and for
//! split chains; the plan decides, [`crate::lower::plan::copies::staged_a`]), each such A is written once before the
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
use crate::lower::emit::context::Lowerer;
use crate::lower::error::LowerError;
use rustc_hash::FxHashMap as HashMap;

use crate::lower::emit::copies::direct::set_swizzled_rows;
use crate::lower::emit::ops::mma_sync_smem::store_rows;
use crate::lower::emit::ops::staging::alloc;
use crate::lower::plan::copies::staged_a::Form;

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
    /// The end of its buffer in the scratch array.
    pub end: i64,
}

impl RowsA {
    /// The bytes of the scratch array its buffer spans.
    pub fn bytes(&self) -> std::ops::Range<i64> {
        self.offset..self.end
    }
}

/// Before loop `id` (at the entry's top level): stages the invariant A
/// operands of the `mma.sync` products of its body that the plan keeps in
/// rows because registers are short ([`crate::lower::plan::copies::staged_a`]),
/// where the plan found room for them beside the body's B buffers.
/// Records them for [`rows`].
pub fn stage(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let planned = l.plan.copies.staged_a.get(&id).cloned().unwrap_or_default();
    // From this loop on, B buffers are unpadded and their rows swizzled,
    // where the plan chose so to leave room beside them.
    if l.chosen().swizzled_rows(id) {
        set_swizzled_rows(l, true);
    }
    for c in planned {
        let Form::Rows {
            rows: mm, stride, ..
        } = c.form
        else {
            continue;
        };
        // An earlier loop's buffer serves.
        if rows(l, c.value).is_some() {
            continue;
        }
        // Where the plan found room beside the body's B buffers.
        if !l.chosen().staged_a(id, c.product) {
            continue;
        }
        let t = l.tile_in(c.product, c.value, &Rc::new(c.layout))?;
        let buf = alloc(
            l,
            crate::lower::plan::buffers::What::StagedA,
            &[mm, stride / 2],
            t.elem,
        )?;
        l.writes(buf.bytes());
        if !store_rows(l, &t, buf.offset, &[stride, 2]) {
            continue;
        }
        l.states.get::<Staged>().rows.insert(
            c.value,
            RowsA {
                offset: buf.offset,
                stride,
                end: buf.bytes().end,
            },
        );
    }
    Ok(())
}
