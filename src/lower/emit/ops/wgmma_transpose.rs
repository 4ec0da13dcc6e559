//! B of a `wgmma` ring transposed by the threads
//! ([`crate::lower::plan::copies::pipeline::Transposed`]): tf32 and 8-bit
//! `wgmma` read B K-major only, while memory holds it MN-major. TMA copies
//! B as it is; once a stage is full, each thread moves its 4 x 4 element
//! blocks into the K-major buffer of the same stage:
//!
//! ```text
//! 4 rows of the copy (k .. k+3, n .. n+3): ld.shared.v4.b32 (tf32) or .b32 (8-bit)
//! transposed in registers (8-bit: prmt), rounded to tf32 where asked
//! 4 rows of the K-major buffer (n .. n+3, k .. k+3): st.shared.v4.b32 or .b32
//! ```
//!
//! The writes are generic-proxy writes that `wgmma` reads through the
//! async proxy: the ring fences the proxies and synchronizes the block
//! after them ([`Transposer::emit`]). The K-major buffer lives and dies
//! with its stage: a stage is refilled, and so rewritten, only once every
//! multiply that read it has completed.
use smallvec::smallvec;

use crate::lower::emit::context::Lowerer;
use crate::lower::emit::copies::address::{bin, mad};
use crate::lower::emit::copies::swizzle::{Swizzle, Swizzled};
use crate::lower::plan::copies::pipeline::Transposed;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};

/// One thread's part of the transposition, at stage 0.
pub struct Transposer {
    /// The plan's transposition.
    t: Transposed,
    /// The thread's first block in B's copy (rows of N elements).
    raw: Swizzled,
    /// The thread's first block in the K-major buffer (rows of K elements).
    kmajor: Swizzled,
    /// Logical bytes from one of the thread's blocks to its next, in the
    /// copy and in the K-major buffer.
    step: (i64, i64),
}

impl Transposer {
    /// The thread's blocks of `t` in the stage-0 buffers at `aligned`: the
    /// K-major buffer at `b_offset`, the copy at `t.raw_offset`. Thread
    /// `i` takes block column `i % (N / 4)` and block rows `i / (N / 4)`,
    /// then every `threads / (N / 4)`-th after it.
    pub fn new(l: &mut Lowerer, t: &Transposed, aligned: Reg, b_offset: i64) -> Transposer {
        let (nn, kk, es) = (t.raw.mn, t.raw.k, t.raw.es);
        let threads = i64::from(l.plan.warps) * 32;
        let across = nn / 4;
        let tid = l.tid();
        let nb = bin(l, Opc::And, Ty::B32, tid, Operand::Imm(across - 1));
        let kb = bin(
            l,
            Opc::Shr,
            Ty::U32,
            tid,
            Operand::Imm(i64::from(across.trailing_zeros())),
        );
        let at = |l: &mut Lowerer, start: i64, (n_bytes, k_bytes): (i64, i64)| {
            let start = bin(l, Opc::Add, Ty::U32, aligned, Operand::Imm(start));
            let a = mad(l, nb, n_bytes, start);
            let a = mad(l, kb, k_bytes, a);
            (start, a)
        };
        let (rs, ra) = at(l, t.raw_offset, (4 * es, 4 * nn * es));
        let raw = Swizzled::new(l, Swizzle::for_tma(nn * es, kk), rs, ra);
        let (ks, ka) = at(l, b_offset, (4 * kk * es, 4 * es));
        let kmajor = Swizzled::new(l, Swizzle::for_tma(kk * es, nn), ks, ka);
        let rows = threads / across;
        Transposer {
            t: *t,
            raw,
            kmajor,
            step: (rows * 4 * nn * es, rows * 4 * es),
        }
    }

    /// Transposes the stage `off` bytes past stage 0, then fences the
    /// proxies and synchronizes the block, so that every thread's writes
    /// are there before any warpgroup's `wgmma` reads them.
    pub fn emit(&self, l: &mut Lowerer, off: Reg) {
        let raw = self.raw.offset(l, off);
        let kmajor = self.kmajor.offset(l, off);
        let (nn, kk, es) = (self.t.raw.mn, self.t.raw.k, self.t.raw.es);
        for j in 0..self.t.blocks {
            let rows: Vec<Vec<Reg>> = (0..4)
                .map(|r| {
                    let at = raw.addr(l, j * self.step.0 + r * nn * es);
                    load(l, at, if es == 4 { 4 } else { 1 })
                })
                .collect();
            let cols: Vec<Vec<Reg>> = if es == 4 {
                (0..4)
                    .map(|c| {
                        (0..4)
                            .map(|r| {
                                let x = rows[r][c];
                                if self.t.round {
                                    crate::lower::emit::ops::cast::round_to_tf32(l, x)
                                } else {
                                    x
                                }
                            })
                            .collect()
                    })
                    .collect()
            } else {
                bytes_transposed(l, [rows[0][0], rows[1][0], rows[2][0], rows[3][0]])
                    .into_iter()
                    .map(|w| vec![w])
                    .collect()
            };
            for (c, words) in cols.into_iter().enumerate() {
                let at = kmajor.addr(l, j * self.step.1 + c as i64 * kk * es);
                store(l, at, words);
            }
        }
        crate::lower::emit::wgmma_isa::proxy_fence(l);
        l.barrier();
    }
}

/// `ld.shared.b32` (one word) or `ld.shared.v4.b32` (four).
fn load(l: &mut Lowerer, at: Operand, words: usize) -> Vec<Reg> {
    let d: Vec<Reg> = (0..words).map(|_| l.b.reg(RegClass::B32)).collect();
    let (mods, dst): (&[&'static str], Operand) = if words == 4 {
        (&["shared", "v4"], Operand::Vec(d.clone()))
    } else {
        (&["shared"], Operand::Reg(d[0]))
    };
    l.b.push(Inst::new(Opc::Ld, mods, &[Ty::B32], vec![dst], vec![at]));
    d
}

/// `st.shared.b32` (one word) or `st.shared.v4.b32` (four).
fn store(l: &mut Lowerer, at: Operand, words: Vec<Reg>) {
    let (mods, src): (&[&'static str], Operand) = if words.len() == 4 {
        (&["shared", "v4"], Operand::Vec(words))
    } else {
        (&["shared"], Operand::Reg(words[0]))
    };
    l.b.push(Inst::new(Opc::St, mods, &[Ty::B32], vec![], vec![at, src]));
}

/// The 4 x 4 bytes of rows `x` (byte `c` of row `r`: element `(r, c)`)
/// as four words of columns (byte `r` of word `c`: element `(r, c)`).
fn bytes_transposed(l: &mut Lowerer, x: [Reg; 4]) -> [Reg; 4] {
    let prmt = |l: &mut Lowerer, a: Reg, b: Reg, sel: i64| {
        l.b.op(
            Opc::Prmt,
            &[],
            &[Ty::B32],
            Ty::B32,
            smallvec![Operand::Reg(a), Operand::Reg(b), Operand::Imm(sel)],
        )
    };
    // rows 0 and 1, rows 2 and 3 interleaved: columns 0-1, then 2-3
    let lo01 = prmt(l, x[0], x[1], 0x5140);
    let hi01 = prmt(l, x[0], x[1], 0x7362);
    let lo23 = prmt(l, x[2], x[3], 0x5140);
    let hi23 = prmt(l, x[2], x[3], 0x7362);
    [
        prmt(l, lo01, lo23, 0x5410),
        prmt(l, lo01, lo23, 0x7632),
        prmt(l, hi01, hi23, 0x5410),
        prmt(l, hi01, hi23, 0x7632),
    ]
}
