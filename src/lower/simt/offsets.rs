//! Constant offsets carried out of 32-bit index arithmetic, so that
//! neighbouring accesses share one address.
//!
//! `mul.wide (x + c), k`, with `0 <= c < 2^31` setting only bits known to
//! be clear in `x` (`x` a multiple of `2^t` and `c < 2^t`, or `x` masked
//! below `c`'s bits), is `mul.wide x, k` plus `c * k`: the 32-bit sum
//! neither carries nor overflows, and its widening (signed or not) is the
//! widened `x` plus `c`. An `or` or `xor` of such a constant is the same sum
//! (layouts combine a thread's and a register's coordinate bits by xor). Then
//! `base + (y + imm)` becomes `(base + y) + imm`. CSE shares `mul.wide x, k`
//! and `base + y` with the access at `x`, and ptxas folds the constant
//! into the second access's address (`[r+4]`), as it does for NVIDIA's
//! tileiras, which makes the same rewrite.
use rustc_hash::FxHashMap as HashMap;
use smallvec::smallvec;

use super::opt::is_ssa;
use super::regs::RegCounts;
use super::{Function, Stmt};
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Special, Ty};

/// Applies the two rewrites through `f`; whether any applied.
pub fn carry_offsets(f: &mut Function, defs: &RegCounts) -> bool {
    let mut pass = Pass {
        defs,
        sums: Sums::default(),
        zeros: HashMap::default(),
        tid_zeros: !(f.threads.max(1).next_power_of_two() - 1),
        next_reg: f.next_reg,
        changed: false,
    };
    pass.block(&mut f.body);
    f.next_reg = pass.next_reg;
    pass.changed
}

/// Sums `reg + imm` defined earlier on the current path: 32-bit index sums
/// (`x + c`) and 64-bit ones (`t + m`), by destination; `log` lists the
/// entries in the order they were made, so that leaving a nested block
/// forgets its own.
#[derive(Default)]
struct Sums {
    narrow: HashMap<Reg, (Reg, i64)>,
    wide: HashMap<Reg, (Reg, i64)>,
    log: Vec<(bool, Reg)>,
}

impl Sums {
    /// Forgets the entries made since the log had `mark` of them.
    fn truncate(&mut self, mark: usize) {
        for (wide, r) in self.log.drain(mark..) {
            if wide {
                self.wide.remove(&r);
            } else {
                self.narrow.remove(&r);
            }
        }
    }
}

struct Pass<'a> {
    defs: &'a RegCounts,
    sums: Sums,
    /// Bits known to be zero (when some) of 32-bit single definitions,
    /// from their definitions seen so far.
    zeros: HashMap<Reg, u32>,
    /// The bits of `%tid.x` known to be zero (those at or above the block
    /// size's).
    tid_zeros: u32,
    next_reg: u32,
    changed: bool,
}

impl Pass<'_> {
    fn block(&mut self, body: &mut Vec<Stmt>) {
        let mut k = 0;
        while k < body.len() {
            match &mut body[k] {
                Stmt::Inst(i) => {
                    if let Some(pair) = self.rewrite(i) {
                        body.splice(k..=k, pair.into_iter().map(|i| Stmt::Inst(Box::new(i))));
                        self.changed = true;
                        continue;
                    }
                    self.record(i);
                }
                Stmt::If(node) => {
                    self.nested(&mut node.body);
                    self.nested(&mut node.else_body);
                }
                Stmt::Loop(node) => {
                    self.nested(&mut node.header);
                    self.nested(&mut node.body);
                }
                Stmt::Break | Stmt::Continue | Stmt::Shared(_) => {}
            }
            k += 1;
        }
    }

    /// Walks a nested block, then forgets the sums it defined (they need not
    /// have run after it).
    fn nested(&mut self, body: &mut Vec<Stmt>) {
        let mark = self.sums.log.len();
        self.block(body);
        self.sums.truncate(mark);
    }

    /// Notes what `i` tells: a sum of a register and a constant (an `add`,
    /// or an `or`/`xor` of a constant whose bits the register has clear), or
    /// the bits of a 32-bit value known to be zero.
    fn record(&mut self, i: &Inst) {
        if i.guard.is_some() || i.tys.len() != 1 {
            return;
        }
        let [Operand::Reg(d)] = i.dsts.as_slice() else {
            return;
        };
        if !is_ssa(self.defs, d) {
            return;
        }
        if i.tys[0].bits() == 32 {
            let n = self.known_zeros(i);
            if n != 0 {
                self.zeros.insert(*d, n);
            }
        }
        let Some((d, x, c)) = reg_plus_imm(i).or_else(|| self.disjoint_or(i)) else {
            return;
        };
        if !is_ssa(self.defs, &x) {
            return;
        }
        let wide = match i.tys[0] {
            Ty::S32 | Ty::U32 | Ty::B32 if c >= 0 => false,
            Ty::S64 | Ty::U64 | Ty::B64 => true,
            _ => return,
        };
        let map = if wide {
            &mut self.sums.wide
        } else {
            &mut self.sums.narrow
        };
        if map.insert(d, (x, c)).is_none() {
            self.sums.log.push((wide, d));
        }
    }

    /// The bits of the 32-bit register `x` known to be zero.
    fn zeros_of(&self, x: &Reg) -> u32 {
        self.zeros.get(x).copied().unwrap_or(0)
    }

    /// The bits known to be zero in what the 32-bit instruction `i`
    /// computes.
    fn known_zeros(&self, i: &Inst) -> u32 {
        let kz = |o: &Operand| match o {
            Operand::Imm(v) => !(*v as u32),
            Operand::Reg(x) => self.zeros_of(x),
            Operand::Special(Special::TidX) => self.tid_zeros,
            _ => 0,
        };
        // The `n` lowest bits.
        let low = |n: u32| -> u32 {
            if n >= 32 {
                u32::MAX
            } else {
                (1u32 << n) - 1
            }
        };
        let tz = |o: &Operand| kz(o).trailing_ones();
        match (i.opc, i.srcs.as_slice()) {
            (Opc::Mov, [a]) => kz(a),
            (Opc::Mul, [a, b]) if i.mods.as_slice() == ["lo"] => low(tz(a) + tz(b)),
            (Opc::Shl, [a, Operand::Imm(k)]) if (0..32).contains(k) => kz(a) << k | low(*k as u32),
            (Opc::Shr, [a, Operand::Imm(k)])
                if (0..32).contains(k) && matches!(i.tys[0], Ty::U32 | Ty::B32) =>
            {
                kz(a) >> k | !(u32::MAX >> k)
            }
            (Opc::And, [a, b]) => kz(a) | kz(b),
            (Opc::Or | Opc::Xor, [a, b]) => kz(a) & kz(b),
            (Opc::Add, [a, b]) if i.mods.is_empty() => low(tz(a).min(tz(b))),
            _ => 0,
        }
    }

    /// `d = x | c` or `d = x ^ c` with the bits of the constant `c` clear in
    /// `x`: the sum `x + c`.
    fn disjoint_or(&self, i: &Inst) -> Option<(Reg, Reg, i64)> {
        if !matches!(i.opc, Opc::Or | Opc::Xor)
            || i.guard.is_some()
            || i.tys.as_slice() != [Ty::B32]
        {
            return None;
        }
        match (i.dsts.as_slice(), i.srcs.as_slice()) {
            (
                [Operand::Reg(d)],
                [Operand::Reg(x), Operand::Imm(c)] | [Operand::Imm(c), Operand::Reg(x)],
            ) if (0..1 << 31).contains(c) && (*c as u32) & !self.zeros_of(x) == 0 => {
                Some((*d, *x, *c))
            }
            _ => None,
        }
    }

    /// The two instructions replacing `i`, if a rewrite applies.
    fn rewrite(&mut self, i: &Inst) -> Option<[Inst; 2]> {
        if i.guard.is_some() || i.dsts.len() != 1 {
            return None;
        }
        let wide_ty = match i.tys.as_slice() {
            [Ty::S32] if i.mods.as_slice() == ["wide"] => Ty::S64,
            [Ty::U32] if i.mods.as_slice() == ["wide"] => Ty::U64,
            [t @ (Ty::S64 | Ty::U64)] if i.opc == Opc::Add && i.mods.is_empty() => *t,
            _ => return None,
        };
        match (i.opc, i.srcs.as_slice()) {
            (Opc::Mul, [Operand::Reg(r), Operand::Imm(k)] | [Operand::Imm(k), Operand::Reg(r)]) => {
                let &(x, c) = self.sums.narrow.get(r)?;
                // Adding `c` sets only bits `x` has clear: no carry, no
                // overflow.
                if c == 0 || c >= 1 << 31 || (c as u32) & !self.zeros_of(&x) != 0 {
                    return None;
                }
                let m = c.checked_mul(*k)?;
                let t = self.fresh();
                Some([
                    Inst::new(
                        Opc::Mul,
                        &["wide"],
                        &i.tys,
                        smallvec![Operand::Reg(t)],
                        smallvec![Operand::Reg(x), Operand::Imm(*k)],
                    ),
                    Inst::new(
                        Opc::Add,
                        &[],
                        &[wide_ty],
                        i.dsts.clone(),
                        smallvec![Operand::Reg(t), Operand::Imm(m)],
                    ),
                ])
            }
            (Opc::Add, [Operand::Reg(a), Operand::Reg(b)]) if a != b => {
                let (base, (t, m)) = match (self.sums.wide.get(a), self.sums.wide.get(b)) {
                    (_, Some(&s)) => (*a, s),
                    (Some(&s), None) => (*b, s),
                    (None, None) => return None,
                };
                let u = self.fresh();
                Some([
                    Inst::new(
                        Opc::Add,
                        &[],
                        &[wide_ty],
                        smallvec![Operand::Reg(u)],
                        smallvec![Operand::Reg(base), Operand::Reg(t)],
                    ),
                    Inst::new(
                        Opc::Add,
                        &[],
                        &[wide_ty],
                        i.dsts.clone(),
                        smallvec![Operand::Reg(u), Operand::Imm(m)],
                    ),
                ])
            }
            _ => None,
        }
    }

    fn fresh(&mut self) -> Reg {
        self.next_reg += 1;
        Reg {
            class: RegClass::B64,
            id: self.next_reg,
        }
    }
}

/// `d = x + c` with `x` a register and `c` a constant, in either order.
fn reg_plus_imm(i: &Inst) -> Option<(Reg, Reg, i64)> {
    if i.opc != Opc::Add || i.guard.is_some() || !i.mods.is_empty() || i.tys.len() != 1 {
        return None;
    }
    match (i.dsts.as_slice(), i.srcs.as_slice()) {
        (
            [Operand::Reg(d)],
            [Operand::Reg(x), Operand::Imm(c)] | [Operand::Imm(c), Operand::Reg(x)],
        ) => Some((*d, *x, *c)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::lower::simt::offsets::*;
    use crate::lower::simt::opt::{for_each_inst, optimize};
    use crate::lower::simt::Builder;

    /// Loads and stores `base[x op c]` for `c` in `offsets`, with `x` what
    /// `index` makes of `%tid.x` and `op` the 32-bit `combine` (of type
    /// `ty`), widened by `mul.wide`, in a block of `threads` threads;
    /// returns the optimized instructions.
    fn accesses(
        threads: u32,
        offsets: &[i64],
        index: impl FnOnce(&mut Builder, Reg) -> Reg,
        (combine, ty): (Opc, Ty),
    ) -> Vec<Inst> {
        let mut b = Builder::new();
        let base = b.reg(RegClass::B64);
        let t = b.tid_x();
        let x = index(&mut b, t);
        for &c in offsets {
            let i = b.op(
                combine,
                &[],
                &[ty],
                ty,
                smallvec![Operand::Reg(x), Operand::Imm(c)],
            );
            let w = b.op(
                Opc::Mul,
                &["wide"],
                &[Ty::S32],
                Ty::S64,
                smallvec![Operand::Reg(i), Operand::Imm(4)],
            );
            let a = b.op(
                Opc::Add,
                &[],
                &[Ty::S64],
                Ty::S64,
                smallvec![Operand::Reg(base), Operand::Reg(w)],
            );
            let v = b.reg(RegClass::B32);
            b.push(Inst::new(
                Opc::Ld,
                &["global"],
                &[Ty::B32],
                smallvec![Operand::Reg(v)],
                smallvec![Operand::Addr(a, 0)],
            ));
            b.push(Inst::new(
                Opc::St,
                &["global"],
                &[Ty::B32],
                vec![],
                smallvec![Operand::Addr(a, 0), Operand::Reg(v)],
            ));
        }
        let mut f = b.finish();
        f.threads = threads;
        optimize(&mut f, 1);
        let mut insts = Vec::new();
        for_each_inst(&f.body, &mut |i| insts.push(i.clone()));
        insts
    }

    /// Accesses `base[factor * tid + c]` for `c` in `offsets` (i32 index
    /// sums).
    fn loads(offsets: &[i64], factor: i64) -> Vec<Inst> {
        let index = |b: &mut Builder, t: Reg| {
            b.op(
                Opc::Mul,
                &["lo"],
                &[Ty::S32],
                Ty::S32,
                smallvec![Operand::Reg(t), Operand::Imm(factor)],
            )
        };
        accesses(1024, offsets, index, (Opc::Add, Ty::S32))
    }

    fn count(insts: &[Inst], opc: Opc, mods: &[&str]) -> usize {
        insts
            .iter()
            .filter(|i| i.opc == opc && i.mods.as_slice() == mods)
            .count()
    }

    #[test]
    fn carry_free_offsets_share_one_product_and_base() {
        // x = 2 * tid is even: x + 1 neither carries nor overflows.
        let insts = loads(&[0, 1], 2);
        assert_eq!(count(&insts, Opc::Mul, &["wide"]), 1, "{insts:#?}");
        let adds: Vec<_> = insts
            .iter()
            .filter(|i| i.opc == Opc::Add && i.tys[..] == [Ty::S64])
            .collect();
        assert_eq!(adds.len(), 2, "{insts:#?}");
        assert!(
            adds.iter().any(|i| i.srcs[1] == Operand::Imm(4)),
            "{insts:#?}"
        );
        assert!(
            !insts
                .iter()
                .any(|i| i.opc == Opc::Add && i.tys[..] == [Ty::S32]),
            "{insts:#?}"
        );
    }

    #[test]
    fn offsets_that_may_carry_stay_in_32_bits() {
        // x = 2 * tid: x + 2 may carry into bit 1 and past 2^31; x = 3 * tid
        // may be odd.
        for (offsets, factor) in [(&[0, 2][..], 2), (&[0, 1][..], 3), (&[0, -1][..], 2)] {
            let insts = loads(offsets, factor);
            assert_eq!(
                count(&insts, Opc::Mul, &["wide"]),
                2,
                "{offsets:?} x {factor}: {insts:#?}"
            );
        }
        // x = 4 * tid takes + 3.
        let insts = loads(&[0, 3], 4);
        assert_eq!(count(&insts, Opc::Mul, &["wide"]), 1, "{insts:#?}");
    }

    /// Accesses `base[(tid & mask) ^ c]` for `c` in `offsets` (how layouts
    /// combine a thread's coordinate bits with a register's).
    fn xor_loads(mask: i64, offsets: &[i64]) -> Vec<Inst> {
        xor_loads_in(1024, Some(mask), offsets)
    }

    /// [`xor_loads`] in a block of `threads` threads, the index `tid`
    /// itself when `mask` is `None`.
    fn xor_loads_in(threads: u32, mask: Option<i64>, offsets: &[i64]) -> Vec<Inst> {
        let index = |b: &mut Builder, t: Reg| match mask {
            Some(mask) => b.op(
                Opc::And,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(t), Operand::Imm(mask)],
            ),
            None => t,
        };
        accesses(threads, offsets, index, (Opc::Xor, Ty::B32))
    }

    #[test]
    fn thread_indices_have_the_bits_above_the_block_size_clear() {
        // In a block of 128 threads, tid ^ 128 is tid + 128; with up to
        // 1024 threads it may not be.
        let insts = xor_loads_in(128, None, &[0, 128, 256]);
        assert_eq!(count(&insts, Opc::Mul, &["wide"]), 1, "{insts:#?}");
        let insts = xor_loads_in(1024, None, &[0, 128]);
        assert_eq!(count(&insts, Opc::Mul, &["wide"]), 2, "{insts:#?}");
    }

    #[test]
    fn xor_of_bits_the_index_has_clear_is_a_carried_offset() {
        // tid & 7 has bits 3.. clear: ^ 8 and ^ 16 add 32 and 64 bytes to
        // the address of ^ 0.
        let insts = xor_loads(7, &[0, 8, 16]);
        assert_eq!(count(&insts, Opc::Mul, &["wide"]), 1, "{insts:#?}");
        for m in [32, 64] {
            assert!(
                insts
                    .iter()
                    .any(|i| i.opc == Opc::Add && i.srcs.get(1) == Some(&Operand::Imm(m))),
                "+{m}: {insts:#?}"
            );
        }
    }

    #[test]
    fn xor_of_bits_the_index_may_have_set_stays_an_index() {
        // tid & 12 may have bit 2 set: ^ 4 may subtract.
        let insts = xor_loads(12, &[0, 4]);
        assert_eq!(count(&insts, Opc::Mul, &["wide"]), 2, "{insts:#?}");
    }
}
