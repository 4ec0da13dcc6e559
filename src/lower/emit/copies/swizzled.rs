//! Shared-memory operands of `wgmma`: the swizzled canonical layouts of the
//! PTX ISA ("Shared Memory Matrix Layout"), their matrix descriptors, and
//! writing a register tile into one.
//!
//! An operand is an `mn x k` matrix (A: `m x k`; B: `n x k`, read from a
//! `k x n` tile). K-major operands keep rows of `w` bytes along K (`w` the
//! swizzle width: 128, 64 or 32 bytes), 8-row atoms of `8 w` bytes stacked
//! along MN, and `w`-byte column blocks of K one after another. MN-major
//! operands (16-bit types only) swap the roles: `w`-byte rows along MN, one
//! per k. Within every atom the 16-byte chunk index is xored with the row
//! index (bits 4.. xor bits 7.. of the address), so the buffer is aligned
//! to 1024 bytes. The byte offset of an element is then a bitwise-linear
//! function of its coordinates, which makes addresses a per-thread part
//! xor a per-register immediate.
use crate::lower::emit::context::{doubling_runs, Lowerer, Tile};
use crate::lower::plan::layout::smem::Smem;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Inst, Opc, Operand, Reg, Ty};
use smallvec::smallvec;

/// Shared addresses of a register tile's elements in a swizzled buffer at
/// a 1024-aligned address: the byte offsets are linear (xor) in the
/// coordinate bits, so each is a per-thread part xor a per-register
/// immediate.
pub struct Addresses {
    base: Reg,
    part: Option<Reg>,
    tbase: Reg,
    /// The bits the per-thread part may set.
    pub thread_mask: i64,
    /// The byte offset each register bit adds (xor).
    pub regs: Vec<i64>,
    by_low: rustc_hash::FxHashMap<i64, Reg>,
}

impl Addresses {
    /// The addresses of `layout`'s elements at `base`, `off` giving the
    /// byte offset of a coordinate. Emits the per-thread part.
    pub fn new(
        l: &mut Lowerer,
        layout: &LinearLayout,
        off: impl Fn(&[i64]) -> i64,
        base: Reg,
    ) -> Addresses {
        let thread: Vec<i64> = layout.thread_bases().iter().map(|b| off(b)).collect();
        let regs: Vec<i64> = layout.register.iter().map(|b| off(b)).collect();
        let thread_mask = thread.iter().fold(0, |a, &b| a | b);
        let part = thread_part(l, &thread);
        let tbase = match part {
            Some(p) => l.b.op(
                Opc::Add,
                &[],
                &[Ty::U32],
                Ty::U32,
                smallvec![Operand::Reg(base), Operand::Reg(p)],
            ),
            None => base,
        };
        Addresses {
            base,
            part,
            tbase,
            thread_mask,
            regs,
            by_low: Default::default(),
        }
    }

    /// The address of register `r0`'s element: a register and an
    /// immediate offset.
    pub fn at(&mut self, l: &mut Lowerer, r0: usize) -> (Reg, i64) {
        let ro = (0..self.regs.len())
            .filter(|&b| r0 >> b & 1 == 1)
            .fold(0, |a, b| a ^ self.regs[b]);
        // Bits under 1024 may meet the thread's swizzle bits (xor); the
        // rest never meet the thread's bits (add, as an immediate).
        let (lo, hi) = (ro & 1023, ro & !1023);
        if hi & self.thread_mask != 0 {
            let x = l.b.op(
                Opc::Xor,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![
                    Operand::Reg(self.part.unwrap_or(self.base)),
                    Operand::Imm(ro)
                ],
            );
            let a = if self.part.is_some() {
                l.b.op(
                    Opc::Add,
                    &[],
                    &[Ty::U32],
                    Ty::U32,
                    smallvec![Operand::Reg(self.base), Operand::Reg(x)],
                )
            } else {
                x
            };
            (a, 0)
        } else if lo == 0 {
            (self.tbase, hi)
        } else {
            let tbase = self.tbase;
            let a = *self.by_low.entry(lo).or_insert_with(|| {
                l.b.op(
                    Opc::Xor,
                    &[],
                    &[Ty::B32],
                    Ty::B32,
                    smallvec![Operand::Reg(tbase), Operand::Imm(lo)],
                )
            });
            (a, hi)
        }
    }
}

/// Writes the elements of `t` (shape `[mn, k]`, or `[k, mn]` when
/// `k_first`) into the operand buffer at the 1024-aligned shared address
/// `base`. Each thread stores up to 16 contiguous bytes at a time.
pub fn write(l: &mut Lowerer, t: &Tile, op: &Smem, k_first: bool, base: Reg) {
    let layout = t.layout.clone();
    let off = |c: &[i64]| {
        if k_first {
            op.offset(c[1], c[0])
        } else {
            op.offset(c[0], c[1])
        }
    };
    let owner = l.owner_pred(&layout);
    if let Some(q) = owner {
        l.b.begin_if(q, true);
    }
    let mut addrs = Addresses::new(l, &layout, off, base);
    let regs = addrs.regs.clone();
    // Vector bits: register bits stepping one element, two, four... (up
    // to 16 bytes), as long as nothing else touches the vector's bytes.
    let mut vb: Vec<usize> = Vec::new();
    while op.es << (vb.len() + 1) <= 16 {
        match (0..regs.len()).find(|&b| regs[b] == op.es << vb.len()) {
            Some(b) => vb.push(b),
            None => break,
        }
    }
    loop {
        let align = (op.es << vb.len()) - 1;
        let others = (0..regs.len())
            .filter(|b| !vb.contains(b))
            .fold(addrs.thread_mask, |a, b| a | regs[b]);
        if vb.is_empty() || others & align == 0 {
            break;
        }
        vb.pop();
    }
    let vmask = vb.iter().fold(0usize, |a, &b| a | 1 << b);
    let n = layout.num_registers();
    for r0 in 0..n {
        if r0 & vmask != 0 || layout.canonical_register(r0) != r0 {
            continue;
        }
        let (addr, imm) = addrs.at(l, r0);
        let vals: Vec<Reg> = (0..1usize << vb.len())
            .map(|i| {
                let r = vb
                    .iter()
                    .enumerate()
                    .fold(r0, |r, (j, &b)| r | (i >> j & 1) << b);
                t.regs[r]
            })
            .collect();
        store(l, &vals, op.es, addr, imm);
    }
    if owner.is_some() {
        l.b.end_if();
    }
}

/// The xor of the byte offsets `thread[j]` of the set bits `j` of the
/// thread's index (bit-linear offsets of a swizzled layout), or `None`
/// when every offset is 0. A run of bits whose offsets double (and
/// multiply without carries) takes one `bfe` and one multiply.
pub fn thread_part(l: &mut Lowerer, thread: &[i64]) -> Option<Reg> {
    let tid = l.tid();
    let mut part: Option<Reg> = None;
    for (j, run) in doubling_runs(thread, true) {
        let bits = l.bfe(tid, j, run);
        let term = l.b.op(
            Opc::Mul,
            &["lo"],
            &[Ty::S32],
            Ty::S32,
            smallvec![Operand::Reg(bits), Operand::Imm(thread[j])],
        );
        part = Some(match part {
            None => term,
            Some(p) => l.b.op(
                Opc::Xor,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(p), Operand::Reg(term)],
            ),
        });
    }
    part
}

/// Stores `vals` (elements of `es` bytes, contiguous) at `[addr + off]`.
fn store(l: &mut Lowerer, vals: &[Reg], es: i64, addr: Reg, off: i64) {
    // Pack into 32-bit words (or one narrower value).
    let mut words: Vec<Reg> = vals.to_vec();
    let mut width = es;
    if width == 1 && words.len() >= 2 {
        words = words
            .chunks(2)
            .map(|p| {
                let lo = l.b.op(
                    Opc::And,
                    &[],
                    &[Ty::B16],
                    Ty::B16,
                    smallvec![Operand::Reg(p[0]), Operand::Imm(0xff)],
                );
                let hi = l.b.op(
                    Opc::Shl,
                    &[],
                    &[Ty::B16],
                    Ty::B16,
                    smallvec![Operand::Reg(p[1]), Operand::Imm(8)],
                );
                l.b.op(
                    Opc::Or,
                    &[],
                    &[Ty::B16],
                    Ty::B16,
                    smallvec![Operand::Reg(lo), Operand::Reg(hi)],
                )
            })
            .collect();
        width = 2;
    }
    if width == 2 && words.len() >= 2 {
        words = words.chunks(2).map(|p| l.b.join(p[0], p[1])).collect();
        width = 4;
    }
    let ty = match width {
        1 => Ty::B8,
        2 => Ty::B16,
        _ => Ty::B32,
    };
    let (mods, src): (&[&'static str], Operand) = match words.len() {
        1 => (&["shared"], Operand::Reg(words[0])),
        2 => (&["shared", "v2"], Operand::Vec(words)),
        _ => (&["shared", "v4"], Operand::Vec(words)),
    };
    l.b.push(Inst::new(
        Opc::St,
        mods,
        &[ty],
        vec![],
        smallvec![Operand::Addr(addr, off), src],
    ));
}
