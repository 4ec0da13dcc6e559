//! Operands of a TMA-fed ring that TMA cannot copy (their rows not in
//! 16-byte units): every thread loads its part of a slice of the tile into
//! registers and stores it into the operand's swizzled layout in the
//! stage, slice after slice ([`crate::lower::emit::copies::thread_copy`]).
use crate::lower::plan::copies::load::Load;
use crate::lower::plan::layout::smem::Smem;
use crate::lower::plan::layout::{Blocked, LinearLayout};
use crate::lower::plan::Plan;

/// An operand the threads copy into a ring's stages, slice by slice along
/// the tile's next-to-last dimension, so that at most 64 bytes a thread
/// are in registers at once beside the accumulator.
#[derive(Clone, Debug)]
pub struct ThreadCopy {
    /// The registers' layout of one slice (the load's tile shape but for
    /// the slice's rows), runs of 16 bytes along the last dimension.
    pub layout: LinearLayout,
    /// The rows (along the tile's next-to-last dimension) of a slice.
    pub rows: i64,
    /// Each slice's byte offset in the operand's buffer: multiples of
    /// 1024, whose bits no element of a slice sets (so that a slice lands
    /// at its offset as the first one at 0).
    pub shifts: Vec<i64>,
}

/// Bytes of a slice a thread holds in registers at most.
const THREAD_SLICE_BYTES: i64 = 64;

/// How the threads copy `ld` into `smem` (`k_first`: the tile is `[k,
/// mn]`): the fewest slices of a power of two rows each that hold at most
/// [`THREAD_SLICE_BYTES`] a thread, each a whole 16-byte run a thread and
/// starting at a 1024-byte multiple no element of a slice's offsets
/// sets; none where the tile is not a matrix (but for leading 1s) of a
/// power-of-two shape.
pub fn thread_copy(plan: &Plan, ld: &Load, smem: &Smem, k_first: bool) -> Option<ThreadCopy> {
    let shape = &ld.view.tile_shape;
    let rank = shape.len();
    if rank < 2 || shape[..rank - 2].iter().any(|&t| t != 1) {
        return None;
    }
    let (total, cols) = (shape[rank - 2], shape[rank - 1]);
    if total.count_ones() != 1 || cols.count_ones() != 1 {
        return None;
    }
    let threads = i64::from(plan.warps) * 32;
    let es = smem.es;
    let vec = (16 / es).clamp(1, cols);
    let off = |r: i64, c: i64| {
        if k_first {
            smem.offset(c, r)
        } else {
            smem.offset(r, c)
        }
    };
    // the bits the elements of a slice of `rows` rows set
    let bits = |rows: i64| {
        let r = (0..rows.trailing_zeros()).map(|b| off(1 << b, 0));
        let c = (0..cols.trailing_zeros()).map(|b| off(0, 1 << b));
        r.chain(c).fold(0, |a, o| a | o)
    };
    let shifts = |rows: i64| -> Option<Vec<i64>> {
        let mask = bits(rows);
        (0..total / rows)
            .map(|s| off(s * rows, 0))
            .map(|o| (o % 1024 == 0 && o & mask == 0).then_some(o))
            .collect()
    };
    let mut rows = total;
    while rows * cols * es / threads > THREAD_SLICE_BYTES
        && rows / 2 * cols >= threads * vec
        && shifts(rows / 2).is_some()
    {
        rows /= 2;
    }
    let mut slice = shape.clone();
    slice[rank - 2] = rows;
    Some(ThreadCopy {
        layout: Blocked::default_for(&slice, i64::from(plan.warps), vec).to_linear(&slice),
        rows,
        shifts: shifts(rows)?,
    })
}
