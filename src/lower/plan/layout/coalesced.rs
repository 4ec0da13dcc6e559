//! Layouts that read or write a view along memory: the lanes along the
//! tile dimension contiguous in memory ([`along`]), for stores of
//! column-major views and for loads whose users want another layout
//! ([`load_layout`]; emission moves the tile, [`crate::lower::plan::conversions::loads`]).
use std::rc::Rc;

use crate::lower::analysis::view::{Extent, PartitionInfo};
use crate::lower::plan::assign::default_layout;
use crate::lower::plan::layout::LinearLayout;

/// Bytes a warp's lanes must span along the contiguous dimension for the
/// load to be worth moving: one 32-byte sector.
const MIN_ROW_BYTES: i64 = 32;

/// [`contiguous_dim`] when it is not the last tile dimension (where the
/// default layouts put their lanes already).
pub fn off_last_contiguous_dim(p: &PartitionInfo) -> Option<usize> {
    contiguous_dim(p).filter(|&cd| cd != p.tile_shape.len() - 1)
}

/// The tile dimension of view `p` that runs along memory (its tensor
/// dimension has unit stride), when a warp's lanes along it would span a
/// sector.
pub fn contiguous_dim(p: &PartitionInfo) -> Option<usize> {
    let rank = p.tile_shape.len();
    if rank < 2 || p.sparse_dim.is_some() {
        return None;
    }
    let cd = (0..rank).find(|&i| {
        p.dim_map
            .get(i)
            .and_then(|&d| p.strides.get(d))
            .is_some_and(|s| *s == Extent::Static(1))
    })?;
    let ebytes = i64::from(p.elem.bits().max(8) / 8);
    (p.tile_shape[cd] * ebytes >= MIN_ROW_BYTES).then_some(cd)
}

/// The default blocked layout of `shape` for `warps` warps with dimension
/// `cd` fastest (the lanes step along it).
pub fn along(shape: &[i64], cd: usize, warps: u32) -> Rc<LinearLayout> {
    along_vec(shape, cd, warps, 1)
}

/// [`along`] with `vec` contiguous elements per thread along `cd`.
pub fn along_vec(shape: &[i64], cd: usize, warps: u32, vec: i64) -> Rc<LinearLayout> {
    let rank = shape.len();
    let order: Vec<usize> = (0..rank).filter(|&d| d != cd).chain([cd]).collect();
    let moved_shape: Vec<i64> = order.iter().map(|&d| shape[d]).collect();
    let moved = default_layout(&moved_shape, warps, vec);
    let back = |bases: &[Vec<i64>]| -> Vec<Vec<i64>> {
        bases
            .iter()
            .map(|b| {
                let mut c = vec![0; rank];
                for (k, &d) in order.iter().enumerate() {
                    c[d] = b[k];
                }
                c
            })
            .collect()
    };
    Rc::new(LinearLayout {
        shape: shape.to_vec(),
        register: back(&moved.register),
        lane: back(&moved.lane),
        warp: back(&moved.warp),
    })
}

/// The layout to load a tile of view `p` in, in an entry of `warps` warps,
/// when `wanted`, its users' layout, has consecutive lanes off the
/// dimension contiguous in memory: [`along`] that dimension. `None` when
/// `wanted` reads memory well enough.
pub fn load_layout(
    p: &PartitionInfo,
    wanted: &LinearLayout,
    warps: u32,
) -> Option<Rc<LinearLayout>> {
    let cd = contiguous_dim(p)?;
    let lanes_along = |layout: &LinearLayout| layout.lane.first().is_some_and(|b| b[cd] != 0);
    if wanted.shape != p.tile_shape || lanes_along(wanted) {
        return None;
    }
    let layout = along(&p.tile_shape, cd, warps);
    lanes_along(&layout).then_some(layout)
}

#[cfg(test)]
mod tests {
    use crate::ir::{Scalar, ValueId};
    use crate::lower::analysis::values::Elem;
    use crate::lower::plan::layout::coalesced::*;

    /// A `[64, 32]` f16 tile of a 2-D view with unit stride along tensor
    /// dimension 1, tile dimension `i` on tensor dimension `dim_map[i]`.
    fn view(dim_map: Vec<usize>) -> PartitionInfo {
        let v = ValueId::from_index(0);
        PartitionInfo {
            base: v,
            elem: Elem::Num(Scalar::F16),
            shape: vec![Extent::Dynamic(v), Extent::Dynamic(v)],
            strides: vec![Extent::Dynamic(v), Extent::Static(1)],
            tile_shape: vec![64, 32],
            steps: vec![64, 32],
            dim_map,
            sparse_dim: None,
            padding: None,
        }
    }

    #[test]
    fn transposed_tiles_load_along_memory_rows() {
        // Order F: tile dimension 0 runs along memory. The users' default
        // layout puts lanes on dimension 1 (32 rows a warp); the load's
        // lanes step along dimension 0 instead.
        let wanted = default_layout(&[64, 32], 4, 1);
        let got = load_layout(&view(vec![1, 0]), &wanted, 4).expect("a coalesced layout");
        for lane in 0..32 {
            assert_eq!(got.apply(0, lane), vec![i64::from(lane), 0], "lane {lane}");
        }
        // Every element still held once.
        let mut seen = std::collections::HashSet::new();
        for t in 0..128 {
            for r in 0..got.num_registers() {
                assert!(seen.insert(got.apply(r, t)));
            }
        }
        assert_eq!(seen.len(), 64 * 32);
    }

    #[test]
    fn tiles_read_along_rows_already_keep_their_layout() {
        let wanted = default_layout(&[64, 32], 4, 1);
        assert!(load_layout(&view(vec![0, 1]), &wanted, 4).is_none());
    }
}
