//! `mma.sync` fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k*").
//!
//! Every m16n8 shape shares the accumulator fragment: lane `l` (group
//! `g = l / 4`, thread-in-group `t = l % 4`) holds `c0, c1` at row `g`,
//! columns `2t, 2t + 1`, and `c2, c3` at row `g + 8`. An accumulator tile
//! repeats that fragment over registers (n8 tiles, then m16 tiles, then
//! batches) inside a warp's sub-tile, and warps split rows then columns.

use crate::lower::plan::layout::linear::LinearLayout;

/// How the warps of a tile block split an `M x N` accumulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpGrid {
    /// Warps along M.
    pub m: i64,
    /// Warps along N.
    pub n: i64,
    /// Warps in the tile block (extra ones replicate the tile).
    pub total: i64,
}

impl WarpGrid {
    /// The split of `warps` warps over `m x n` (both powers of two, `m` a
    /// multiple of 16, `n` of 8) that keeps each warp's sub-tile nearest
    /// square, with sub-tiles at least m16 x n8.
    pub fn for_tile(m: i64, n: i64, warps: i64) -> WarpGrid {
        let (mut wm, mut wn) = (1, 1);
        while wm * wn < warps {
            let (tm, tn) = (m / wm, n / wn);
            if tm >= tn && tm >= 32 {
                wm *= 2;
            } else if tn >= 16 {
                wn *= 2;
            } else if tm >= 32 {
                wm *= 2;
            } else {
                break;
            }
        }
        WarpGrid {
            m: wm,
            n: wn,
            total: warps,
        }
    }

    /// Every warp along M, each owning whole rows (`warps` m16 tiles at
    /// least fit in `m`); row reductions then stay within a warp.
    pub fn rows(warps: i64) -> WarpGrid {
        WarpGrid {
            m: warps,
            n: 1,
            total: warps,
        }
    }

    /// Rows of one warp's sub-tile.
    pub fn tile_m(&self, m: i64) -> i64 {
        m / self.m
    }

    /// Columns of one warp's sub-tile.
    pub fn tile_n(&self, n: i64) -> i64 {
        n / self.n
    }
}

fn log2(x: i64) -> u32 {
    x.max(1).trailing_zeros()
}

/// The accumulator layout of a `[batch,] M x N` tile over `grid` with
/// instruction tiles of `m_frag` (16, or 8 for f64's m8n8k4, whose lanes
/// hold only row g) x 8: register `c + C * (nt + NT * (mt + MT * b))` holds
/// fragment element `c` of the warp's n8 tile `nt`, m tile `mt`, batch `b`.
pub fn acc_layout(shape: &[i64], grid: WarpGrid, m_frag: i64) -> LinearLayout {
    let rank = shape.len();
    let (md, nd) = (rank - 2, rank - 1);
    let (m, n) = (shape[md], shape[nd]);
    let (tm, tn) = (grid.tile_m(m), grid.tile_n(n));
    let at = |d: usize, v: i64| {
        let mut b = vec![0i64; rank];
        b[d] = v;
        b
    };
    let mut register = vec![at(nd, 1)];
    if m_frag == 16 {
        register.push(at(md, 8));
    }
    register.extend((0..log2(tn / 8)).map(|i| at(nd, 8 << i)));
    register.extend((0..log2(tm / m_frag)).map(|i| at(md, m_frag << i)));
    if rank == 3 {
        register.extend((0..log2(shape[0])).map(|i| at(0, 1 << i)));
    }
    let lane = vec![at(nd, 2), at(nd, 4), at(md, 1), at(md, 2), at(md, 4)];
    let mut warp: Vec<Vec<i64>> = (0..log2(grid.m)).map(|i| at(md, tm << i)).collect();
    warp.extend((0..log2(grid.n)).map(|i| at(nd, tn << i)));
    while warp.len() < log2(grid.total) as usize {
        warp.push(vec![0; rank]);
    }
    LinearLayout {
        shape: shape.to_vec(),
        register,
        lane,
        warp,
    }
}

#[cfg(test)]
mod tests {
    use crate::lower::plan::layout::mma_sync::*;

    #[test]
    fn single_fragment_matches_the_isa_table() {
        let l = acc_layout(&[16, 8], WarpGrid::for_tile(16, 8, 1), 16);
        for lane in 0..32u32 {
            let (g, t) = (i64::from(lane / 4), i64::from(lane % 4));
            // c0, c1: (g, 2t + i); c2, c3: (g + 8, 2t + i).
            for c in 0..4 {
                let want = vec![g + 8 * (c as i64 / 2), 2 * t + c as i64 % 2];
                assert_eq!(l.apply(c, lane), want, "lane {lane} c{c}");
            }
        }
    }

    #[test]
    fn tile_is_covered_once() {
        for (shape, warps) in [
            (vec![128, 128], 8),
            (vec![64, 64], 4),
            (vec![128, 64], 4),
            (vec![2, 32, 16], 4),
            (vec![16, 8], 4),
        ] {
            let rank = shape.len();
            let (m, n) = (shape[rank - 2], shape[rank - 1]);
            let grid = WarpGrid::for_tile(m, n, warps);
            let l = acc_layout(&shape, grid, 16);
            let mut seen = rustc_hash::FxHashMap::default();
            let live = (grid.m * grid.n * 32) as u32;
            for tid in 0..live {
                for r in 0..l.num_registers() {
                    *seen.entry(l.apply(r, tid)).or_insert(0) += 1;
                }
            }
            assert_eq!(
                seen.len() as i64,
                shape.iter().product::<i64>(),
                "{shape:?}"
            );
            assert!(seen.values().all(|&c| c == 1), "{shape:?}");
        }
    }

    #[test]
    fn f64_fragment_matches_the_isa_table() {
        // m8n8k4 .f64: c0, c1 at row g, columns 2t, 2t + 1.
        let l = acc_layout(&[8, 8], WarpGrid::for_tile(8, 8, 1), 8);
        for lane in 0..32u32 {
            let (g, t) = (i64::from(lane / 4), i64::from(lane % 4));
            for c in 0..2 {
                assert_eq!(
                    l.apply(c, lane),
                    vec![g, 2 * t + c as i64],
                    "lane {lane} c{c}"
                );
            }
        }
    }

    #[test]
    fn warps_split_both_dimensions() {
        assert_eq!(
            WarpGrid::for_tile(128, 128, 8).m * WarpGrid::for_tile(128, 128, 8).n,
            8
        );
        let g = WarpGrid::for_tile(64, 64, 4);
        assert_eq!((g.m, g.n), (2, 2));
        let g = WarpGrid::for_tile(16, 8, 4);
        assert_eq!((g.m, g.n), (1, 1));
    }
}
