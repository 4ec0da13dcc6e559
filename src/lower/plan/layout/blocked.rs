//! Blocked layouts (Triton's `BlockedEncodingAttr`): each thread holds
//! `size_per_thread` contiguous elements, threads of a warp and warps of the
//! tile block tile the shape in `order` (fastest dimension first), and the
//! pattern repeats over registers until the tile is covered.
use crate::lower::plan::layout::linear::LinearLayout;

/// Parameters of a blocked layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// Contiguous elements per thread, per dimension.
    pub size_per_thread: Vec<i64>,
    /// Threads per warp, per dimension (product 32).
    pub threads_per_warp: Vec<i64>,
    /// Warps per tile block, per dimension.
    pub warps_per_cta: Vec<i64>,
    /// Dimensions from fastest to slowest.
    pub order: Vec<usize>,
}

impl Blocked {
    /// The default blocked layout for `shape` over `num_warps` warps:
    /// `vec` contiguous elements per thread along the last dimension, lanes
    /// then warps filling dimensions from the last (fastest) one.
    pub fn default_for(shape: &[i64], num_warps: i64, vec: i64) -> Blocked {
        let order: Vec<usize> = (0..shape.len()).rev().collect();
        Blocked::with_warp_order(shape, num_warps, vec, &order)
    }

    /// The default layout for a tile reduced along `dim`: warps fill the
    /// other dimensions first, so that the reduction stays within warps
    /// (in-thread folds and shuffles) where the shape allows; lanes still
    /// run along the last dimension for coalesced accesses.
    pub fn for_reduction(shape: &[i64], num_warps: i64, vec: i64, dim: usize) -> Blocked {
        let mut order: Vec<usize> = (0..shape.len()).rev().filter(|&d| d != dim).collect();
        if dim < shape.len() {
            order.push(dim);
        }
        Blocked::with_warp_order(shape, num_warps, vec, &order)
    }

    /// `vec` contiguous elements per thread along the last dimension,
    /// lanes filling dimensions from the last one, and warps filling them
    /// in `warp_order`.
    fn with_warp_order(shape: &[i64], num_warps: i64, vec: i64, warp_order: &[usize]) -> Blocked {
        let rank = shape.len();
        let order: Vec<usize> = (0..rank).rev().collect();
        let mut spt = vec![1; rank];
        let mut tpw = vec![1; rank];
        let mut wpc = vec![1; rank];
        if rank == 0 {
            return Blocked {
                size_per_thread: spt,
                threads_per_warp: tpw,
                warps_per_cta: wpc,
                order,
            };
        }
        spt[rank - 1] = vec.min(shape[rank - 1]).max(1);
        let mut lanes = 32;
        let mut warps = num_warps;
        for &d in &order {
            let room = (shape[d] / spt[d]).max(1);
            let t = lanes.min(room);
            tpw[d] = t;
            lanes /= t;
        }
        // Leftover lanes replicate along the slowest dimension.
        tpw[order[rank - 1]] *= lanes;
        for &d in warp_order {
            let room = (shape[d] / (spt[d] * tpw[d])).max(1);
            let w = warps.min(room);
            wpc[d] = w;
            warps /= w;
        }
        wpc[order[rank - 1]] *= warps;
        Blocked {
            size_per_thread: spt,
            threads_per_warp: tpw,
            warps_per_cta: wpc,
            order,
        }
    }

    /// The canonical linear layout of this blocked layout over `shape`.
    pub fn to_linear(&self, shape: &[i64]) -> LinearLayout {
        let rank = shape.len();
        let unit = |d: usize, v: i64| {
            let mut b = vec![0i64; rank];
            b[d] = v;
            b
        };
        // Bases for `count` (a power of two) steps of `step` along `d`,
        // wrapping to zero (replication) beyond the shape.
        let bases = |d: usize, count: i64, step: i64| -> Vec<Vec<i64>> {
            let mut out = Vec::new();
            let mut k = 1;
            while k < count {
                let v = k * step;
                out.push(if v < shape[d] {
                    unit(d, v)
                } else {
                    vec![0; rank]
                });
                k *= 2;
            }
            out
        };
        let mut register = Vec::new();
        let mut lane = Vec::new();
        let mut warp = Vec::new();
        for &d in &self.order {
            register.extend(bases(d, self.size_per_thread[d], 1));
        }
        for &d in &self.order {
            lane.extend(bases(d, self.threads_per_warp[d], self.size_per_thread[d]));
        }
        for &d in &self.order {
            warp.extend(bases(
                d,
                self.warps_per_cta[d],
                self.size_per_thread[d] * self.threads_per_warp[d],
            ));
        }
        // Repeat over registers until the shape is covered.
        for &d in &self.order {
            let cover = self.size_per_thread[d] * self.threads_per_warp[d] * self.warps_per_cta[d];
            let mut v = cover;
            while v < shape[d] {
                register.push(unit(d, v));
                v *= 2;
            }
        }
        LinearLayout {
            shape: shape.to_vec(),
            register,
            lane,
            warp,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::lower::plan::layout::blocked::*;

    #[test]
    fn one_dimensional_cyclic_over_128_threads() {
        let l = Blocked::default_for(&[1024], 4, 1).to_linear(&[1024]);
        assert_eq!(l.num_registers(), 8);
        assert_eq!(l.num_threads(), 128);
        // NVIDIA's mapping: thread t, register i holds element t + 128 i.
        for t in [0u32, 1, 31, 32, 127] {
            for i in 0..8 {
                assert_eq!(l.apply(i, t), vec![i64::from(t) + 128 * i as i64]);
            }
        }
    }

    #[test]
    fn vectorized_four_per_thread() {
        let l = Blocked::default_for(&[1024], 4, 4).to_linear(&[1024]);
        assert_eq!(l.apply(0, 1), vec![4]);
        assert_eq!(l.apply(3, 1), vec![7]);
        assert_eq!(l.apply(4, 0), vec![512]);
    }

    #[test]
    fn covers_every_element_once() {
        for shape in [vec![1024i64], vec![64, 32], vec![8, 16, 4], vec![2, 256]] {
            let l = Blocked::default_for(&shape, 4, 1).to_linear(&shape);
            let n: i64 = shape.iter().product();
            let mut seen = vec![0; n as usize];
            for t in 0..128 {
                for r in 0..l.num_registers() {
                    let c = l.apply(r, t);
                    seen[crate::lower::plan::layout::linear::flatten(&c, &shape) as usize] += 1;
                }
            }
            assert!(seen.iter().all(|&k| k == seen[0] && k >= 1), "{shape:?}");
        }
    }

    #[test]
    fn small_tiles_replicate_over_threads() {
        let l = Blocked::default_for(&[16], 4, 1).to_linear(&[16]);
        assert_eq!(l.num_registers(), 1);
        assert_eq!(l.apply(0, 16), vec![0]);
        let c = l.collapse(0);
        assert!(c
            .register
            .iter()
            .chain(&c.lane)
            .all(|b| LinearLayout::is_zero(b)));
        let r = Blocked::default_for(&[1024], 4, 1)
            .to_linear(&[1024])
            .reshape(&[32, 32]);
        assert_eq!(r.apply(1, 0), vec![4, 0]);
    }
}
