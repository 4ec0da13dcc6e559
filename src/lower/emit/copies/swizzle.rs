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
    /// TMA's column blocks ([`Swizzle::for_tma`]): `log2` of the 128-byte
    /// spans a row holds (0: rows stay whole) ...
    spans: u32,
    /// ... and `log2` of the rows.
    rows: u32,
}

impl Swizzle {
    /// The swizzle of rows of `row_bytes` (a power of two).
    pub fn for_rows(row_bytes: i64) -> Swizzle {
        debug_assert!(row_bytes > 0 && row_bytes & (row_bytes - 1) == 0);
        let n = (row_bytes / 16).clamp(1, 8);
        Swizzle {
            shift: row_bytes.max(128).trailing_zeros(),
            bits: n.trailing_zeros(),
            spans: 0,
            rows: 0,
        }
    }

    /// The layout TMA writes a `rows x row_bytes` tile in with the
    /// 128-, 64- or 32-byte swizzle (both powers of two, rows at least
    /// eight): rows of at most 128 bytes as [`Swizzle::for_rows`] has
    /// them; wider rows cut into 128-byte column blocks, each `rows` rows
    /// of 128 bytes swizzled as 128-byte rows are (the `wgmma` canonical
    /// layouts, [`crate::lower::plan::layout::smem::Smem`]). The logical
    /// offset stays the row-major one: the blocks permute its bits (the
    /// span within the row and the row swap places), so the map stays
    /// linear.
    pub fn for_tma(row_bytes: i64, rows: i64) -> Swizzle {
        debug_assert!(rows >= 8 && rows & (rows - 1) == 0);
        if row_bytes <= 128 {
            return Swizzle::for_rows(row_bytes);
        }
        Swizzle {
            shift: 7,
            bits: 3,
            spans: (row_bytes / 128).trailing_zeros(),
            rows: rows.trailing_zeros(),
        }
    }

    fn ones(self) -> i64 {
        (1 << self.bits) - 1
    }

    /// The bits of a (permuted) offset the XOR reads or changes.
    fn mask(self) -> i64 {
        self.ones() << 4 | self.ones() << self.shift
    }

    /// The XOR of a permuted offset `p`.
    fn xor(self, p: i64) -> i64 {
        p ^ ((p >> self.shift) & self.ones()) << 4
    }

    /// The column-block offset of logical offset `o`: the span within the
    /// row (bits `7..7+spans`) moves above the row (bits
    /// `7+spans..7+spans+rows`), which moves down to bit 7.
    fn permute(self, o: i64) -> i64 {
        if self.spans == 0 {
            return o;
        }
        let (s, r) = (self.spans, self.rows);
        let span = (o >> 7) & ((1 << s) - 1);
        let row = (o >> (7 + s)) & ((1 << r) - 1);
        let field = ((1 << (s + r)) - 1) << 7;
        (o & !field) | row << 7 | span << (7 + r)
    }

    /// Where logical byte offset `o` lives.
    pub fn apply(self, o: i64) -> i64 {
        self.xor(self.permute(o))
    }

    /// Emits the swizzle of register `o` (`o` itself when nothing moves).
    pub fn emit(self, l: &mut Lowerer, o: Reg) -> Reg {
        if self.bits == 0 {
            return o;
        }
        let o = self.emit_permute(l, o);
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

    /// Emits [`Swizzle::permute`] of register `o`.
    fn emit_permute(self, l: &mut Lowerer, o: Reg) -> Reg {
        if self.spans == 0 {
            return o;
        }
        let (s, r) = (self.spans as usize, self.rows as usize);
        let span = l.bfe(o, 7, s);
        let row = l.bfe(o, 7 + s, r);
        let field = ((1i64 << (s + r)) - 1) << 7;
        let rest = l.b.op(
            Opc::And,
            &[],
            &[Ty::B32],
            Ty::U32,
            vec![Operand::Reg(o), Operand::Imm(!field & 0xffff_ffff)],
        );
        let mut out = rest;
        for (part, at) in [(row, 7), (span, 7 + r)] {
            let moved = l.b.op(
                Opc::Shl,
                &[],
                &[Ty::B32],
                Ty::U32,
                vec![Operand::Reg(part), Operand::Imm(at as i64)],
            );
            out = l.b.op(
                Opc::Or,
                &[],
                &[Ty::B32],
                Ty::U32,
                vec![Operand::Reg(out), Operand::Reg(moved)],
            );
        }
        out
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
        // Permuted, the offset's bits stay disjoint from the thread's: what
        // the XOR neither reads nor changes adds as an immediate.
        let p = self.sw.permute(imm);
        let low = p & self.sw.mask();
        if low == 0 {
            return Operand::Addr(self.at, p);
        }
        let x = l.b.op(
            Opc::Xor,
            &[],
            &[Ty::B32],
            Ty::U32,
            vec![Operand::Reg(self.phys), Operand::Imm(self.sw.xor(low))],
        );
        let a = add(l, Opc::Add, self.start, x);
        Operand::Addr(a, p & !self.sw.mask())
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

    /// TMA's box layout: column blocks of 128-byte rows (or whole rows of
    /// at most 128 bytes), the chunk XORed with bits 7.. of the offset.
    fn tma(row_bytes: i64, rows: i64, r: i64, c: i64) -> i64 {
        let w = row_bytes.min(128);
        let lin = (c / w) * rows * w + r * w + c % w;
        lin ^ (((lin >> 7) & (w / 16 - 1)) << 4)
    }

    #[test]
    fn the_tma_layout_is_what_tma_writes() {
        for (row_bytes, rows) in [(32, 64), (64, 64), (128, 128), (256, 64), (512, 32)] {
            let sw = Swizzle::for_tma(row_bytes, rows);
            for r in 0..rows {
                for c in (0..row_bytes).step_by(2) {
                    assert_eq!(
                        sw.apply(r * row_bytes + c),
                        tma(row_bytes, rows, r, c),
                        "{row_bytes} x {rows}: {r} {c}"
                    );
                }
            }
            // Eight consecutive rows at one chunk: eight bank groups.
            for r0 in (0..rows).step_by(8) {
                for c in 0..row_bytes / 16 {
                    assert_eq!(groups(sw, row_bytes, r0, c), (0..8).collect::<Vec<_>>());
                }
            }
        }
    }

    #[test]
    fn permuted_constants_split_as_the_addresses_split_them() {
        // B 64 x 128 f16: a thread's bits and its fragments' constants.
        let sw = Swizzle::for_tma(256, 64);
        for t in 0..16384 {
            for k in [32, 64, 96, 2048, 4096, 8192, 4096 + 32, 16384] {
                if t & k == 0 {
                    let p = sw.permute(k);
                    let split = (sw.apply(t) ^ sw.xor(p & sw.mask())) + (p & !sw.mask());
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
