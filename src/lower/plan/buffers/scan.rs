//! The buffers of a scan: where its dimension spreads over registers,
//! then contiguous lane bits, then warp bits ([`spread`]), a parallel scan
//! whose warps, where the dimension spans several, exchange their totals
//! through one buffer an operand (`[lines][warps]`); else a sequential scan
//! through one buffer an operand of the whole tile.
use crate::ir::{Module, OpId};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::plan::layout::LinearLayout;
use crate::lower::plan::Plan;

use crate::lower::plan::engines::tile_bytes;

use crate::lower::plan::conversions::along_dim;

use super::{OpBuffer, What};

/// How the scanned dimension spreads over a thread's registers, its warp's
/// lanes and the warps: low bits in registers, then contiguous lane bits,
/// then warp bits.
pub struct Spread {
    /// Register bits along the dimension.
    pub reg_bits: usize,
    /// The first lane bit along the dimension.
    pub lane_first: usize,
    /// How many lane bits run along the dimension.
    pub lane_bits: usize,
    /// The warp bits along the dimension, in order.
    pub warp_bits: Vec<usize>,
}

/// How `dim` (of `n` positions) spreads over `layout`, or `None` when the
/// layout is not one the parallel scan handles (see the module doc).
pub fn spread(layout: &LinearLayout, dim: usize, n: i64) -> Option<Spread> {
    let pure = |b: &Vec<i64>| {
        b[dim] == 0
            || (b[dim].count_ones() == 1 && b.iter().enumerate().all(|(k, &x)| k == dim || x == 0))
    };
    if !layout
        .register
        .iter()
        .chain(&layout.lane)
        .chain(&layout.warp)
        .all(pure)
    {
        return None;
    }
    // Registers along `dim` cover the low bits of the position, the lanes
    // the high ones, from contiguous lane bits `k0..k0 + m` in order.
    let reg_along: i64 = layout.register.iter().map(|b| b[dim]).sum();
    let a = layout.register.iter().filter(|b| b[dim] != 0).count();
    if reg_along != (1 << a) - 1 {
        return None;
    }
    let lane_bits: Vec<usize> = (0..layout.lane.len())
        .filter(|&k| layout.lane[k][dim] != 0)
        .collect();
    let m = lane_bits.len();
    let k0 = lane_bits.first().copied().unwrap_or(0);
    for (j, &k) in lane_bits.iter().enumerate() {
        if k != k0 + j || layout.lane[k][dim] != 1 << (a + j) {
            return None;
        }
    }
    let warp_bits: Vec<usize> = (0..layout.warp.len())
        .filter(|&k| layout.warp[k][dim] != 0)
        .collect();
    for (j, &k) in warp_bits.iter().enumerate() {
        if layout.warp[k][dim] != 1 << (a + m + j) {
            return None;
        }
    }
    let w = warp_bits.len();
    if 1i64 << (a + m + w) != n {
        return None;
    }
    Some(Spread {
        reg_bits: a,
        lane_first: k0,
        lane_bits: m,
        warp_bits,
    })
}

/// How a scan of `elems` operands in `layout` along `dim` spreads, where
/// it runs in parallel (no `i1` operand, a power-of-two dimension, a
/// spread [`spread`] handles); else it runs line by line.
pub fn parallel(layout: &LinearLayout, dim: usize, elems: &[Elem]) -> Option<Spread> {
    let n = layout.shape[dim];
    if elems.iter().any(|e| e.bits() == 1) || n <= 0 || n.count_ones() != 1 {
        return None;
    }
    spread(layout, dim, n)
}

/// The buffers of scan `id`: its operands scanned in the first one's
/// layout.
pub fn buffers(m: &Module, id: OpId, plan: &Plan) -> Option<Vec<OpBuffer>> {
    let op = &m.ops[id];
    let (layout, dim) = along_dim(m, id, |v| plan.held(v).cloned())?;
    let elems = op
        .operands
        .iter()
        .map(|&v| value_tile(m, v).map(|(_, e)| e))
        .collect::<Option<Vec<_>>>()?;
    let shape = match parallel(&layout, dim, &elems) {
        Some(s) if s.warp_bits.is_empty() => return Some(Vec::new()),
        Some(s) => vec![
            layout.slice(dim).shape.iter().product::<i64>(),
            1 << s.warp_bits.len(),
        ],
        None => layout.shape.clone(),
    };
    let buffer = |e| OpBuffer {
        op: id,
        what: What::Scan,
        bytes: tile_bytes(&shape, e),
        align: 16,
    };
    Some(elems.into_iter().map(buffer).collect())
}
