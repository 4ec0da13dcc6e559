//! The accumulator layout of `wgmma.mma_async` (PTX ISA, "Matrix fragments
//! for wgmma.mma_async", the D matrix figure): in a warpgroup of 4 warps,
//! warp `w` holds rows `16w..16w+15` of each 64-row block; lane `l` holds
//! row `l / 4` (and `l / 4 + 8`) and the column pair `2 (l % 4)`; registers
//! step through the column pair, the row + 8, then the 8-column blocks.
//!
//! A tile of `m x n` spread over `groups` warpgroups gives each warpgroup
//! `m / groups` consecutive rows, in 64-row blocks along the last register
//! bits. Register `r` of a thread is element `r` of the instruction's
//! fragment for the 64-row block `r / (n / 2)`, so the f32 and s32
//! fragments are registers in order and the f16 fragment packs registers
//! `2q, 2q + 1` into its register `q`.
use crate::lower::plan::layout::linear::LinearLayout;

/// The accumulator layout of an `m x n` tile on `groups` warpgroups
/// (`m` a multiple of `64 * groups`, `n` a multiple of 8, powers of two).
pub fn accumulator(m: i64, n: i64, groups: i64) -> LinearLayout {
    let row = |v: i64| vec![v, 0];
    let col = |v: i64| vec![0, v];
    let rows_per_group = m / groups;
    let mut register = vec![col(1), row(8)];
    let mut c = 8;
    while c < n {
        register.push(col(c));
        c *= 2;
    }
    let mut r = 64;
    while r < rows_per_group {
        register.push(row(r));
        r *= 2;
    }
    let lane = vec![col(2), col(4), row(1), row(2), row(4)];
    let mut warp = vec![row(16), row(32)];
    let mut g = 1;
    while g < groups {
        warp.push(row(g * rows_per_group));
        g *= 2;
    }
    LinearLayout {
        shape: vec![m, n],
        register,
        lane,
        warp,
    }
}

#[cfg(test)]
mod tests {
    use crate::lower::plan::layout::wgmma::*;

    /// The ISA's D fragment for `.f32`/`.s32`: register `i` of lane `l` in
    /// warp `w` is row `16w + l/4 + 8 * ((i % 4) / 2)`, column
    /// `8 * (i / 4) + 2 * (l % 4) + i % 2`.
    fn isa(i: usize, tid: u32) -> (i64, i64) {
        let (w, l) = (i64::from(tid / 32), i64::from(tid % 32));
        let i = i as i64;
        (
            16 * w + l / 4 + 8 * ((i % 4) / 2),
            8 * (i / 4) + 2 * (l % 4) + i % 2,
        )
    }

    #[test]
    fn matches_the_isa_fragment_for_one_warpgroup() {
        for n in [8i64, 64, 128, 256] {
            let l = accumulator(64, n, 1);
            assert_eq!(l.num_registers() as i64, n / 2);
            for tid in 0..128 {
                for i in 0..l.num_registers() {
                    let (r, c) = isa(i, tid);
                    assert_eq!(l.apply(i, tid), vec![r, c], "n {n} tid {tid} reg {i}");
                }
            }
        }
    }

    #[test]
    fn row_blocks_follow_the_fragment_and_groups_split_rows() {
        // 128 x 64 on one warpgroup: registers 32.. are rows 64..127.
        let l = accumulator(128, 64, 1);
        for tid in [0u32, 5, 37, 127] {
            for i in 0..32 {
                let (r, c) = isa(i, tid);
                assert_eq!(l.apply(i + 32, tid), vec![r + 64, c]);
            }
        }
        // 128 x 128 on two warpgroups: threads 128.. hold rows 64..127.
        let l = accumulator(128, 128, 2);
        assert_eq!(l.num_registers(), 64);
        for tid in [0u32, 77, 130, 255] {
            for i in 0..64 {
                let (r, c) = isa(i, tid % 128);
                assert_eq!(l.apply(i, tid), vec![r + 64 * i64::from(tid / 128), c]);
            }
        }
    }

    #[test]
    fn covers_every_element_once() {
        for (m, n, g) in [(64, 8, 1), (128, 128, 2), (256, 64, 2), (128, 32, 1)] {
            let l = accumulator(m, n, g);
            let mut seen = vec![0u8; (m * n) as usize];
            for tid in 0..(128 * g) as u32 {
                for i in 0..l.num_registers() {
                    let c = l.apply(i, tid);
                    seen[(c[0] * n + c[1]) as usize] += 1;
                }
            }
            assert!(seen.iter().all(|&k| k == 1), "{m}x{n} on {g}");
        }
    }
}

/// A layout for a 2-D operand tile of `shape` on `warps` warps: each
/// thread's first registers step along `runs` (`(dim, count)`: `count`
/// consecutive elements along `dim`, one run after the other), then lanes,
/// warps and further registers walk the rest of the tile along `walk`
/// (the first dimension first). `runs = [(1, v)]`, `walk = [1, 0]` is the
/// default blocked layout with `v` elements per thread.
pub fn operand(shape: &[i64], warps: i64, runs: &[(usize, i64)], walk: [usize; 2]) -> LinearLayout {
    let unit = |d: usize, v: i64| {
        let mut b = vec![0i64; 2];
        b[d] = v;
        b
    };
    let mut next = [1i64; 2];
    let mut register = Vec::new();
    for &(d, count) in runs {
        let end = (next[d] * count).min(shape[d]);
        while next[d] < end {
            register.push(unit(d, next[d]));
            next[d] *= 2;
        }
    }
    // The remaining steps, in the order threads take them.
    let mut steps = Vec::new();
    for d in walk {
        while next[d] < shape[d] {
            steps.push(unit(d, next[d]));
            next[d] *= 2;
        }
    }
    let mut steps = steps.into_iter();
    let mut take = |n: i64| -> Vec<Vec<i64>> {
        let mut out = Vec::new();
        let mut k = 1;
        while k < n {
            out.push(steps.next().unwrap_or_else(|| vec![0, 0]));
            k *= 2;
        }
        out
    };
    let lane = take(32);
    let warp = take(warps);
    register.extend(steps);
    LinearLayout {
        shape: shape.to_vec(),
        register,
        lane,
        warp,
    }
}

#[cfg(test)]
mod operand_tests {
    use crate::lower::plan::layout::wgmma::*;
    use crate::lower::plan::layout::Blocked;

    #[test]
    fn row_vectors_are_the_default_blocked_layout() {
        for (shape, warps, vec) in [
            ([128i64, 64i64], 8i64, 8i64),
            ([64, 64], 4, 16),
            ([32, 64], 4, 4),
        ] {
            assert_eq!(
                operand(&shape, warps, &[(1, vec)], [1, 0]),
                Blocked::default_for(&shape, warps, vec).to_linear(&shape)
            );
        }
    }

    #[test]
    fn column_vectors_keep_lanes_along_rows() {
        let l = operand(&[32, 64], 4, &[(0, 4)], [1, 0]);
        assert_eq!(l.apply(1, 0), vec![1, 0]);
        assert_eq!(l.apply(0, 1), vec![0, 1]);
        assert_eq!(l.apply(0, 32), vec![0, 32]);
        assert_eq!(l.apply(0, 64), vec![4, 0]);
        let mut seen = [0u8; 32 * 64];
        for t in 0..128 {
            for r in 0..l.num_registers() {
                let c = l.apply(r, t);
                seen[(c[0] * 64 + c[1]) as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&k| k == 1));
    }
}
