//! Linear layouts: a map from hardware indices (`register`, `lane`, `warp`)
//! to tile coordinates, given by one basis vector per input bit and
//! combined with xor (Triton's `LinearLayout`). Every distributed layout
//! (blocked today; mma and dot-operand fragments later) converts to one.

/// A hardware input dimension of a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HwDim {
    /// The register index within a thread.
    Register,
    /// The lane within a warp.
    Lane,
    /// The warp within the tile block.
    Warp,
}

/// A linear layout over a tile of power-of-two shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinearLayout {
    /// The tile shape (every dimension a power of two).
    pub shape: Vec<i64>,
    /// Bases for register bits: entry `k` is the coordinate bit `k` adds.
    pub register: Vec<Vec<i64>>,
    /// Bases for lane bits (5 of them for 32 lanes).
    pub lane: Vec<Vec<i64>>,
    /// Bases for warp bits.
    pub warp: Vec<Vec<i64>>,
}

impl LinearLayout {
    /// The thread bits (of a tile block of `warps` warps) along which a
    /// tile in this layout is only replicated: those whose basis adds
    /// nothing, and those the layout does not span.
    pub fn replica_bits(&self, warps: u32) -> i64 {
        let bases = self.thread_bases();
        let all_bits = (warps * 32).trailing_zeros() as usize;
        let zero = bases
            .iter()
            .enumerate()
            .filter(|(_, b)| Self::is_zero(b))
            .fold(0i64, |m, (k, _)| m | 1 << k);
        (bases.len()..all_bits).fold(zero, |m, k| m | 1 << k)
    }

    /// The layout of a 0-d tile: one register, the same in every thread.
    pub fn default_scalar() -> LinearLayout {
        LinearLayout {
            shape: Vec::new(),
            register: Vec::new(),
            lane: Vec::new(),
            warp: Vec::new(),
        }
    }

    /// The layout holding every element of a tile of `shape` in every
    /// thread, register `r` being the element at row-major index `r`.
    pub fn replicated(shape: &[i64]) -> LinearLayout {
        let mut register = Vec::new();
        for d in (0..shape.len()).rev() {
            let mut k = 1;
            while k < shape[d] {
                let mut b = vec![0; shape.len()];
                b[d] = k;
                register.push(b);
                k *= 2;
            }
        }
        LinearLayout {
            shape: shape.to_vec(),
            register,
            lane: Vec::new(),
            warp: Vec::new(),
        }
    }

    /// The bases of one hardware dimension.
    pub fn bases(&self, dim: HwDim) -> &[Vec<i64>] {
        match dim {
            HwDim::Register => &self.register,
            HwDim::Lane => &self.lane,
            HwDim::Warp => &self.warp,
        }
    }

    /// Number of registers each thread holds.
    pub fn num_registers(&self) -> usize {
        1 << self.register.len()
    }

    /// Number of threads the layout spans.
    pub fn num_threads(&self) -> u32 {
        1 << (self.lane.len() + self.warp.len())
    }

    /// The coordinate of register `reg` in thread `tid` (lane = low 5 bits).
    pub fn apply(&self, reg: usize, tid: u32) -> Vec<i64> {
        let mut c = vec![0i64; self.shape.len()];
        let mut add = |bases: &[Vec<i64>], bits: u64| {
            for (k, b) in bases.iter().enumerate() {
                if bits >> k & 1 == 1 {
                    for (ci, bi) in c.iter_mut().zip(b) {
                        *ci ^= bi;
                    }
                }
            }
        };
        add(&self.register, reg as u64);
        add(&self.lane, u64::from(tid) & 31);
        add(&self.warp, u64::from(tid) >> 5);
        c
    }

    /// The sum of `offset` over the register bases set in `reg`: register
    /// `reg`'s offset from register 0 where `offset` maps bases to offsets
    /// that add (disjoint bases).
    pub fn register_offset(&self, reg: usize, offset: impl Fn(&[i64]) -> i64) -> i64 {
        (0..self.register.len())
            .filter(|k| reg >> k & 1 == 1)
            .map(|k| offset(&self.register[k]))
            .sum()
    }

    /// The thread-index bases: lane bits then warp bits, indexed by `tid` bit.
    pub fn thread_bases(&self) -> Vec<Vec<i64>> {
        self.lane.iter().chain(&self.warp).cloned().collect()
    }

    /// The same element-to-thread map seen through a reshape to `shape`
    /// (same element count, row-major order).
    pub fn reshape(&self, shape: &[i64]) -> LinearLayout {
        let conv = |b: &Vec<i64>| unflatten(flatten(b, &self.shape), shape);
        LinearLayout {
            shape: shape.to_vec(),
            register: self.register.iter().map(conv).collect(),
            lane: self.lane.iter().map(conv).collect(),
            warp: self.warp.iter().map(conv).collect(),
        }
    }

    /// This layout with dimension `dim` collapsed to size 1: every basis
    /// loses its component along `dim`, so threads and registers that
    /// differed only along it now hold the same element (a broadcast source).
    pub fn collapse(&self, dim: usize) -> LinearLayout {
        let zero = |b: &Vec<i64>| {
            let mut b = b.clone();
            if let Some(x) = b.get_mut(dim) {
                *x = 0;
            }
            b
        };
        let mut shape = self.shape.clone();
        if let Some(s) = shape.get_mut(dim) {
            *s = 1;
        }
        LinearLayout {
            shape,
            register: self.register.iter().map(zero).collect(),
            lane: self.lane.iter().map(zero).collect(),
            warp: self.warp.iter().map(zero).collect(),
        }
    }

    /// Whether a basis is the zero vector (its bit duplicates data).
    pub fn is_zero(b: &[i64]) -> bool {
        b.iter().all(|&x| x == 0)
    }

    /// The lowest register whose element equals that of `reg` (registers
    /// that differ only in zero-basis bits hold the same element).
    pub fn canonical_register(&self, reg: usize) -> usize {
        let mut r = reg;
        for (k, b) in self.register.iter().enumerate() {
            if Self::is_zero(b) {
                r &= !(1 << k);
            }
        }
        r
    }
}

/// Row-major flat index of coordinate `c` in `shape`.
pub fn flatten(c: &[i64], shape: &[i64]) -> i64 {
    c.iter().zip(shape).fold(0, |acc, (&ci, &s)| acc * s + ci)
}

/// Row-major coordinate of flat index `i` in `shape`.
pub fn unflatten(mut i: i64, shape: &[i64]) -> Vec<i64> {
    let mut c = vec![0; shape.len()];
    for (ci, &s) in c.iter_mut().zip(shape).rev() {
        let s = s.max(1);
        *ci = i % s;
        i /= s;
    }
    c
}

impl LinearLayout {
    /// The layout of a reduction's result over dimension `dim`: every basis
    /// loses that component (a basis stepping only along `dim` becomes
    /// zero: the result is replicated where the inputs were spread) and
    /// the dimension disappears from the shape.
    pub fn slice(&self, dim: usize) -> LinearLayout {
        let drop = |b: &Vec<i64>| {
            b.iter()
                .enumerate()
                .filter(|(k, _)| *k != dim)
                .map(|(_, x)| *x)
                .collect()
        };
        LinearLayout {
            shape: self
                .shape
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != dim)
                .map(|(_, x)| *x)
                .collect(),
            register: self.register.iter().map(drop).collect(),
            lane: self.lane.iter().map(drop).collect(),
            warp: self.warp.iter().map(drop).collect(),
        }
    }
}

/// Whether no two bases of `layout` share a set bit in any dimension:
/// coordinates are then sums of bases, so addresses are one per-thread
/// register plus an immediate per register.
pub fn disjoint(layout: &LinearLayout) -> bool {
    let rank = layout.shape.len();
    let mut seen = vec![0i64; rank];
    for b in layout
        .register
        .iter()
        .chain(&layout.lane)
        .chain(&layout.warp)
    {
        for d in 0..rank {
            if seen[d] & b[d] != 0 {
                return false;
            }
            seen[d] |= b[d];
        }
    }
    true
}
