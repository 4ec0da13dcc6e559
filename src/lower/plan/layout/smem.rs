//! The swizzled shared-memory layouts `wgmma` reads its operands in (the
//! 32, 64 and 128-byte swizzles of its matrix descriptors).

/// An operand's layout in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Smem {
    /// Rows along M (A) or N (B).
    pub mn: i64,
    /// Columns along K.
    pub k: i64,
    /// Bytes per element.
    pub es: i64,
    /// Whether MN is the contiguous dimension (`imm-trans` 1).
    pub mn_major: bool,
    /// Swizzle width in bytes (32, 64 or 128).
    pub swizzle: i64,
}

impl Smem {
    /// The layout of an `mn x k` operand of `es`-byte elements, if one of
    /// the swizzled layouts fits (the contiguous extent a multiple of 32
    /// bytes, every extent a power of two, at least 8 rows).
    pub fn new(mn: i64, k: i64, es: i64, mn_major: bool) -> Option<Smem> {
        let contiguous = if mn_major { mn } else { k } * es;
        let other = if mn_major { k } else { mn };
        let swizzle = [128, 64, 32].into_iter().find(|w| contiguous % w == 0)?;
        let pow2 = |x: i64| x > 0 && x & (x - 1) == 0;
        (pow2(mn) && pow2(k) && other >= 8).then_some(Smem {
            mn,
            k,
            es,
            mn_major,
            swizzle,
        })
    }

    /// Bytes the operand occupies.
    pub fn bytes(&self) -> i64 {
        self.mn * self.k * self.es
    }

    /// Byte offset of element `(mn, k)` before the swizzle.
    fn linear(&self, mn: i64, k: i64) -> i64 {
        let w = self.swizzle;
        let per = w / self.es;
        if self.mn_major {
            (mn / per) * (self.k * w) + k * w + (mn % per) * self.es
        } else {
            (k / per) * (self.mn * w) + mn * w + (k % per) * self.es
        }
    }

    /// Byte offset of element `(mn, k)` from the (1024-aligned) buffer.
    pub fn offset(&self, mn: i64, k: i64) -> i64 {
        let a = self.linear(mn, k);
        let mask = self.swizzle / 16 - 1;
        a ^ (((a >> 7) & mask) << 4)
    }

    /// Byte offset of the origin of the instruction block at `(mn0, k0)`
    /// (the descriptor's start address, relative to the buffer).
    pub fn start(&self, mn0: i64, k0: i64) -> i64 {
        self.linear(mn0, k0)
    }

    /// The descriptor bits other than the start address: leading and
    /// stride byte offsets and the swizzle mode.
    pub fn descriptor_bits(&self) -> u64 {
        let w = self.swizzle as u64;
        let (lbo, sbo) = if self.mn_major {
            (self.k as u64 * w, 8 * w)
        } else {
            (16, 8 * w)
        };
        let mode: u64 = match w {
            128 => 1,
            64 => 2,
            _ => 3,
        };
        ((lbo >> 4) & 0x3fff) << 16 | ((sbo >> 4) & 0x3fff) << 32 | mode << 62
    }
}

#[cfg(test)]
mod tests {
    use crate::lower::plan::layout::smem::*;

    #[test]
    fn k_major_128b_matches_the_canonical_layout() {
        // f16 64 x 64: rows of 128 bytes, chunk xor row % 8.
        let s = Smem::new(64, 64, 2, false).unwrap();
        assert_eq!(s.swizzle, 128);
        assert_eq!(s.offset(0, 0), 0);
        assert_eq!(s.offset(0, 8), 16);
        assert_eq!(s.offset(1, 0), 128 + 16);
        assert_eq!(s.offset(3, 9), 3 * 128 + ((1 ^ 3) << 4) + 2);
        // K beyond one row: the next 128-byte column block.
        let s = Smem::new(64, 128, 2, false).unwrap();
        assert_eq!(s.offset(0, 64), 64 * 128);
        assert_eq!(s.start(0, 80), 64 * 128 + 32);
    }

    #[test]
    fn mn_major_matches_nvidias_descriptors() {
        // B of 64 (k) x 128 (n) f16, as NVIDIA's matmul writes it:
        // LBO 8192, SBO 1024, 128-byte swizzle.
        let s = Smem::new(128, 64, 2, true).unwrap();
        assert_eq!(s.descriptor_bits(), 0x4000_0040_0200_0000);
        assert_eq!(s.offset(64, 0), 8192);
        assert_eq!(s.start(0, 16), 16 * 128);
        let a = Smem::new(128, 64, 2, false).unwrap();
        assert_eq!(a.descriptor_bits(), 0x4000_0040_0001_0000);
    }

    #[test]
    fn offsets_are_bitwise_linear() {
        for s in [
            Smem::new(128, 64, 2, false).unwrap(),
            Smem::new(64, 32, 4, false).unwrap(),
            Smem::new(64, 64, 1, false).unwrap(),
            Smem::new(128, 32, 2, true).unwrap(),
        ] {
            // Every element's offset is the xor of its coordinate bits'.
            for x in 0..s.mn {
                for y in 0..s.k {
                    let mut lin = 0;
                    for b in 0..16 {
                        if x >> b & 1 == 1 {
                            lin ^= s.offset(1 << b, 0);
                        }
                        if y >> b & 1 == 1 {
                            lin ^= s.offset(0, 1 << b);
                        }
                    }
                    assert_eq!(s.offset(x, y), lin, "{s:?} {x} {y}");
                }
            }
        }
    }
}
