//! The XOR swizzle of the `mma.sync` operand buffers under
//! `TILEIR_ALWAYS_SWIZZLE`: rows are not padded, the 16-byte chunks of each
//! row are permuted instead.
//!
//! A buffer's rows are `R` bytes, a power of two. With `n = min(8, R / 16)`
//! chunks per swizzle group and `s = log2(max(128, R))`, the byte offset
//! `o` (from the buffer's start) of an element lives at
//!
//! ```text
//! o ^ (((o >> s) % n) << 4)
//! ```
//!
//! - `R >= 128`: bits `s..` of `o` are the row, so the chunk index within
//!   each 128-byte span of a row is XORed with `row % 8`.
//! - `R` of 32 or 64 bytes: `128 / R` rows share a 128-byte line and bits
//!   `7..` are the line; the chunk index is XORed with
//!   `(row / (128 / R)) % n`, which stays below `n`: chunks never leave
//!   their row (XOR with `row % n` alone would put two of the eight rows on
//!   the same banks).
//! - `R = 16`: one chunk a row, nothing to permute; eight consecutive rows
//!   already are eight consecutive chunks. Rows under 16 bytes (8-bit B
//!   with N = 8) are left as they are too.
//!
//! Why it is free of bank conflicts: an `ldmatrix` phase reads eight
//! consecutive rows (the first a multiple of eight) at one logical chunk
//! `c`, and the bank group (four banks) of an address is its bits 4..6,
//! plus a constant for the buffer's (16-byte aligned) start. For
//! `R >= 128` those bits are `c ^ row % 8`: eight values. For smaller `R`
//! they are `row % (128 / R)` (above) and `c ^ (row / (128 / R)) % n`
//! (below), eight distinct pairs. (tf32 B, read a word per lane over four
//! rows and eight columns, has two-way conflicts once `R >= 64`.)
//!
//! The map is linear over bit vectors (`f(x ^ y) = f(x) ^ f(y)`). A thread
//! whose accesses are its own offset `t` plus constants `k` with bits
//! disjoint from `t` computes `f(t)` once; an access then is `f(t)` plus
//! `k` as an immediate when `k` avoids the bits the swizzle reads or
//! changes, else `f(t) ^ f(k_low) + k_high`.
use crate::lower::emit::context::Lowerer;
use crate::ptx::{Opc, Operand, Reg, Ty};

/// The swizzle of one buffer's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Swizzle {
    /// Lowest offset bit of the chunk's XOR source.
    shift: u32,
    /// How many chunk index bits are XORed (`log2 n`).
    bits: u32,
}

impl Swizzle {
    /// The swizzle of rows of `row_bytes` (a power of two).
    pub fn for_rows(row_bytes: i64) -> Swizzle {
        debug_assert!(row_bytes > 0 && row_bytes & (row_bytes - 1) == 0);
        let n = (row_bytes / 16).clamp(1, 8);
        Swizzle {
            shift: row_bytes.max(128).trailing_zeros(),
            bits: n.trailing_zeros(),
        }
    }

    fn ones(self) -> i64 {
        (1 << self.bits) - 1
    }

    /// The offset bits the swizzle reads or changes.
    fn mask(self) -> i64 {
        self.ones() << 4 | self.ones() << self.shift
    }

    /// Where logical byte offset `o` lives.
    pub fn apply(self, o: i64) -> i64 {
        o ^ ((o >> self.shift) & self.ones()) << 4
    }

    /// Emits the swizzle of register `o` (`o` itself when nothing moves).
    pub fn emit(self, l: &mut Lowerer, o: Reg) -> Reg {
        if self.bits == 0 {
            return o;
        }
        let src = l.bfe(o, self.shift as usize, self.bits as usize);
        let moved = l.b.op(
            Opc::Shl,
            &[],
            &[Ty::B32],
            Ty::U32,
            vec![Operand::Reg(src), Operand::Imm(4)],
        );
        l.b.op(
            Opc::Xor,
            &[],
            &[Ty::B32],
            Ty::U32,
            vec![Operand::Reg(o), Operand::Reg(moved)],
        )
    }
}

/// One thread's swizzled base in a buffer: accesses at constant logical
/// offsets from the thread's own element.
#[derive(Clone, Copy, Debug)]
pub struct Swizzled {
    sw: Swizzle,
    /// The buffer's start (shared address).
    start: Reg,
    /// The thread's swizzled offset from `start`.
    phys: Reg,
    /// `start + phys`.
    at: Reg,
}

impl Swizzled {
    /// The base of the thread whose unswizzled address is `addr` in the
    /// buffer starting at `start`, swizzled by `sw`.
    pub fn new(l: &mut Lowerer, sw: Swizzle, start: Reg, addr: Reg) -> Swizzled {
        if sw.bits == 0 {
            return Swizzled {
                sw,
                start,
                phys: addr,
                at: addr,
            };
        }
        let o = add(l, Opc::Sub, addr, start);
        let phys = sw.emit(l, o);
        let at = add(l, Opc::Add, start, phys);
        Swizzled {
            sw,
            start,
            phys,
            at,
        }
    }

    /// The base, in the same buffer, of unswizzled address `addr`.
    pub fn rebased(&self, l: &mut Lowerer, addr: Reg) -> Swizzled {
        Swizzled::new(l, self.sw, self.start, addr)
    }

    /// The same base in a copy of the buffer `by` bytes on.
    pub fn offset(&self, l: &mut Lowerer, by: Reg) -> Swizzled {
        let at = add(l, Opc::Add, self.at, by);
        if self.sw.bits == 0 {
            return Swizzled { at, ..*self };
        }
        Swizzled {
            start: add(l, Opc::Add, self.start, by),
            at,
            ..*self
        }
    }

    /// The address of the element `imm` logical bytes past the thread's
    /// (`imm`'s bits disjoint from the thread's offset).
    pub fn addr(&self, l: &mut Lowerer, imm: i64) -> Operand {
        let low = imm & self.sw.mask();
        if low == 0 {
            return Operand::Addr(self.at, imm);
        }
        let x = l.b.op(
            Opc::Xor,
            &[],
            &[Ty::B32],
            Ty::U32,
            vec![Operand::Reg(self.phys), Operand::Imm(self.sw.apply(low))],
        );
        let a = add(l, Opc::Add, self.start, x);
        Operand::Addr(a, imm & !self.sw.mask())
    }
}

/// `opc.u32 d, x, y`.
fn add(l: &mut Lowerer, opc: Opc, x: Reg, y: Reg) -> Reg {
    l.b.op(
        opc,
        &[],
        &[Ty::U32],
        Ty::U32,
        vec![Operand::Reg(x), Operand::Reg(y)],
    )
}

#[cfg(test)]
mod tests {
    use crate::lower::emit::copies::swizzle::*;

    /// The bank group (bits 4..6) of each of the eight rows `r0..r0 + 8` at
    /// logical chunk `c`.
    fn groups(sw: Swizzle, row_bytes: i64, r0: i64, c: i64) -> Vec<i64> {
        let mut g: Vec<i64> = (r0..r0 + 8)
            .map(|r| sw.apply(r * row_bytes + c * 16) >> 4 & 7)
            .collect();
        g.sort_unstable();
        g
    }

    #[test]
    fn eight_rows_of_one_chunk_hit_eight_bank_groups() {
        for row_bytes in [32, 64, 128, 256, 512] {
            let sw = Swizzle::for_rows(row_bytes);
            for r0 in (0..64).step_by(8) {
                for c in 0..row_bytes / 16 {
                    assert_eq!(
                        groups(sw, row_bytes, r0, c),
                        (0..8).collect::<Vec<_>>(),
                        "{row_bytes} {r0} {c}"
                    );
                }
            }
        }
    }

    #[test]
    fn chunks_stay_in_their_row_and_the_map_is_a_permutation() {
        for row_bytes in [16, 32, 64, 128, 256] {
            let sw = Swizzle::for_rows(row_bytes);
            let n = 64 * row_bytes;
            let mut seen = vec![false; n as usize];
            for o in 0..n {
                let p = sw.apply(o);
                assert_eq!(p / row_bytes, o / row_bytes, "{row_bytes} {o}");
                assert_eq!(p % 16, o % 16);
                assert!(!seen[p as usize]);
                seen[p as usize] = true;
            }
        }
    }

    #[test]
    fn the_map_is_linear_so_constants_split() {
        let sw = Swizzle::for_rows(64);
        for t in 0..4096 {
            for k in [16, 32, 128, 256, 384, 1024] {
                if t & k == 0 {
                    let low = k & sw.mask();
                    let split = (sw.apply(t) ^ sw.apply(low)) + (k & !sw.mask());
                    assert_eq!(sw.apply(t + k), split, "{t} {k}");
                }
            }
        }
    }

    #[test]
    fn sixteen_byte_rows_are_not_moved() {
        let sw = Swizzle::for_rows(16);
        assert!((0..1024).all(|o| sw.apply(o) == o));
        assert_eq!(sw.mask(), 0);
    }
}
