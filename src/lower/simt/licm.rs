//! Loop-invariant code motion over the SIMT IR: a pure, non-trapping
//! instruction at the top level of a loop's header or body whose sources
//! are not written inside the loop moves to just before the loop.
//!
//! Only registers written exactly once are moved, so the value seen after
//! the move is the one every iteration computed. A `mov` packing registers
//! from before the loop into one moves when that shrinks the loop's
//! live-ins (its sources are read nowhere else). Loads, shuffles, guarded
//! instructions and anything with side effects stay; instructions inside
//! an `if` of the loop stay (they may run rarely). Inner loops are treated
//! first, so an invariant can climb several levels.

use super::opt::count_uses;
use super::regs::{RegCounts, RegSet};
use super::{Function, IfStmt, LoopStmt, Stmt};
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass};

/// Hoists loop invariants out of every loop of `f`, given the definition
/// count of every register (moving instructions does not change it).
/// `hoisted` holds the registers hoisted by earlier calls and gains this
/// call's: a loop's budget counts them, so repeated calls converge.
pub fn hoist_invariants(f: &mut Function, defs: &RegCounts, hoisted: &mut RegSet) {
    let mut uses = RegCounts::default();
    count_uses(&f.body, &mut uses);
    hoist_in(&mut f.body, defs, &uses, hoisted);
}

/// One walk over a loop's statements: adds to `inside` the registers they
/// write, to `uses` each read (tested predicates included), and to
/// `live_ins` each read by an instruction of a register in `hoisted`.
fn scan(
    body: &[Stmt],
    inside: &mut RegSet,
    uses: &mut RegCounts,
    hoisted: &RegSet,
    live_ins: &mut Vec<Reg>,
) {
    for s in body {
        match s {
            Stmt::Break | Stmt::Continue | Stmt::Shared(_) => {}
            Stmt::Inst(i) => {
                i.for_each_def(|d| inside.insert(d));
                i.for_each_use(|u| {
                    uses.add(u);
                    if hoisted.contains(&u) {
                        live_ins.push(u);
                    }
                });
            }
            Stmt::If(node) => {
                let IfStmt {
                    pred,
                    body,
                    else_body,
                    ..
                } = &**node;
                uses.add(*pred);
                scan(body, inside, uses, hoisted, live_ins);
                scan(else_body, inside, uses, hoisted, live_ins);
            }
            Stmt::Loop(node) => {
                let LoopStmt {
                    header, pred, body, ..
                } = &**node;
                uses.add(*pred);
                scan(header, inside, uses, hoisted, live_ins);
                scan(body, inside, uses, hoisted, live_ins);
            }
        }
    }
}

/// Whether `i` computes its result from its sources alone, cannot trap and
/// is cheap to run once more than needed.
fn movable(i: &Inst, defs: &RegCounts) -> bool {
    let pure = i.opc.is_simple();
    let single = matches!(i.dsts.as_slice(), [Operand::Reg(d)] if defs.get(d) == Some(&1));
    // Only plain register and immediate sources: no memory, no parameter;
    // a `mov` may also pack a vector of registers into one.
    let plain_srcs = i.srcs.iter().all(|o| {
        matches!(
            o,
            Operand::Reg(_)
                | Operand::Imm(_)
                | Operand::F32(_)
                | Operand::F64(_)
                | Operand::Special(_)
        ) || (i.opc == Opc::Mov && matches!(o, Operand::Vec(_)))
    });
    pure && single && plain_srcs && i.guard.is_none()
}

/// 32-bit registers' worth of hoisted values a loop may keep live: past
/// it, recomputing in the loop is cheaper than spilling or starving the
/// register allocator.
const LIVE_IN_BUDGET: u32 = 32;

fn weight(r: &Reg) -> u32 {
    match r.class {
        RegClass::B64 => 2,
        _ => 1,
    }
}

/// The live-in cost of the values hoisted out of one loop so far.
#[derive(Default)]
struct Budget {
    /// Reads of each register by instructions still in the loop.
    uses: RegCounts,
    /// Registers hoisted out of this loop.
    hoisted: RegSet,
    /// 32-bit registers' worth of hoisted values the loop still reads.
    pressure: u32,
}

impl Budget {
    /// The budget of a loop whose instructions read `live_ins`, values
    /// hoisted in earlier rounds (some may be written inside the loop,
    /// `inside`): those that are not already count.
    fn resume(&mut self, live_ins: Vec<Reg>, inside: &RegSet) {
        for u in live_ins {
            if !inside.contains(&u) && !self.hoisted.contains(&u) {
                self.hoisted.insert(u);
                self.pressure += weight(&u);
            }
        }
    }

    /// Whether hoisting `i` keeps the pressure within [`LIVE_IN_BUDGET`]
    /// (or lowers it); if so, books the move. Hoisting the last reader of
    /// a hoisted value, or the only reader (`all_uses` counts the reads
    /// in the whole function) of a value from before the loop, frees it.
    fn admit(&mut self, i: &Inst, all_uses: &RegCounts) -> bool {
        let d = i.defs()[0];
        let srcs = i.uses();
        let packs = i.srcs.iter().any(|o| matches!(o, Operand::Vec(_)));
        let (mut freed, mut replaced) = (0, 0);
        for u in &srcs {
            if self.uses.get(u) != Some(&1) {
                continue;
            }
            if self.hoisted.contains(u) {
                freed += weight(u);
            } else if packs && all_uses.get(u) == Some(&1) {
                // A value from before the loop that nothing else reads
                // stops being live in the loop once packed there.
                replaced += weight(u);
            }
        }
        let added = if self.uses.get(&d).copied().unwrap_or(0) > 0 {
            weight(&d)
        } else {
            0
        };
        if packs && replaced <= added {
            // Packing moves only when that shrinks the loop's live-ins
            // (and then costs nothing against the budget).
            return false;
        }
        let next = (self.pressure + if packs { 0 } else { added }).saturating_sub(freed);
        if next > LIVE_IN_BUDGET && next > self.pressure {
            return false;
        }
        self.pressure = next;
        for u in &srcs {
            if let Some(n) = self.uses.get_mut(u) {
                *n = n.saturating_sub(1);
            }
        }
        self.hoisted.insert(d);
        true
    }
}

fn hoist_in(body: &mut Vec<Stmt>, defs: &RegCounts, all_uses: &RegCounts, hoisted: &mut RegSet) {
    let mut out = Vec::with_capacity(body.len());
    for mut s in std::mem::take(body) {
        match &mut s {
            Stmt::Break | Stmt::Continue | Stmt::Shared(_) | Stmt::Inst(_) => {}
            Stmt::If(node) => {
                let IfStmt {
                    body, else_body, ..
                } = &mut **node;
                hoist_in(body, defs, all_uses, hoisted);
                hoist_in(else_body, defs, all_uses, hoisted);
            }
            Stmt::Loop(node) => {
                let LoopStmt {
                    header, pred, body, ..
                } = &mut **node;
                hoist_in(header, defs, all_uses, hoisted);
                hoist_in(body, defs, all_uses, hoisted);
                let mut inside = RegSet::default();
                let mut budget = Budget::default();
                budget.uses.add(*pred);
                let mut live_ins = Vec::new();
                for part in [&*header, &*body] {
                    scan(part, &mut inside, &mut budget.uses, hoisted, &mut live_ins);
                }
                budget.resume(live_ins, &inside);
                for part in [header, body] {
                    part.retain(|st| match st {
                        Stmt::Inst(i)
                            if movable(i, defs)
                                && i.use_iter().all(|u| !inside.contains(&u))
                                && budget.admit(i, all_uses) =>
                        {
                            for d in i.def_iter() {
                                inside.remove(&d);
                                hoisted.insert(d);
                            }
                            out.push(st.clone());
                            false
                        }
                        _ => true,
                    });
                }
            }
        }
        out.push(s);
    }
    *body = out;
}

#[cfg(test)]
mod tests {
    use crate::lower::simt::licm::*;
    use crate::lower::simt::opt::def_counts;
    use crate::lower::simt::Builder;
    use crate::ptx::Ty;
    use smallvec::smallvec;

    #[test]
    fn hoists_invariants_and_keeps_the_rest() {
        let mut b = Builder::new();
        let base = b.op(
            Opc::Mov,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Imm(7)],
        );
        let i = b.reg(RegClass::B32);
        b.op_into(i, Opc::Mov, &[], &[Ty::U32], smallvec![Operand::Imm(0)]);
        b.begin_loop();
        let p = b.op(
            Opc::Setp,
            &["lt"],
            &[Ty::U32],
            Ty::Pred,
            smallvec![Operand::Reg(i), Operand::Imm(10)],
        );
        b.begin_loop_body(p, true);
        // Invariant, and one depending on it: both move.
        let inv = b.op(
            Opc::Mul,
            &["lo"],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Reg(base), Operand::Imm(4)],
        );
        let inv2 = b.op(
            Opc::Add,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Reg(inv), Operand::Imm(1)],
        );
        // Depends on the induction variable: stays.
        let var = b.op(
            Opc::Add,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Reg(i), Operand::Reg(inv2)],
        );
        // A load with invariant address: stays.
        let addr = b.reg(RegClass::B64);
        let ld = b.reg(RegClass::B32);
        b.push(Inst::new(
            Opc::Ld,
            &["global"],
            &[Ty::B32],
            smallvec![Operand::Reg(ld)],
            smallvec![Operand::Addr(addr, 0)],
        ));
        let s = b.op(
            Opc::Add,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Reg(var), Operand::Reg(ld)],
        );
        b.push(Inst::new(
            Opc::St,
            &["global"],
            &[Ty::B32],
            vec![],
            smallvec![Operand::Addr(addr, 0), Operand::Reg(s)],
        ));
        b.op_into(
            i,
            Opc::Add,
            &[],
            &[Ty::U32],
            smallvec![Operand::Reg(i), Operand::Imm(1)],
        );
        b.end_loop();
        let mut f = b.finish();
        let defs = def_counts(&f.body);
        hoist_invariants(&mut f, &defs, &mut RegSet::default());
        let defines = |st: &Stmt, r: Reg| matches!(st, Stmt::Inst(x) if x.defs()[..] == [r]);
        let top: Vec<&Stmt> = f.body.iter().collect();
        assert!(top.iter().any(|st| defines(st, inv)), "{f:#?}");
        assert!(top.iter().any(|st| defines(st, inv2)), "{f:#?}");
        let inv_at = top.iter().position(|st| defines(st, inv)).unwrap();
        let inv2_at = top.iter().position(|st| defines(st, inv2)).unwrap();
        assert!(inv_at < inv2_at);
        let Some(Stmt::Loop(node)) = f.body.last() else {
            panic!("{f:#?}");
        };
        let LoopStmt { header, body, .. } = &**node;
        assert!(header.iter().any(|st| defines(st, p)), "{f:#?}");
        for r in [var, ld, s] {
            assert!(body.iter().any(|st| defines(st, r)), "{f:#?}");
        }
        assert!(!body.iter().any(|st| defines(st, inv)), "{f:#?}");
    }
    /// A loop that packs two 16-bit values from before it into one 32-bit
    /// register and stores it; `reuse` reads one of them after the loop.
    fn packing_loop(reuse: bool) -> (Function, Reg) {
        let mut b = Builder::new();
        let lo = b.op(
            Opc::Mov,
            &[],
            &[Ty::B16],
            Ty::B16,
            smallvec![Operand::Imm(1)],
        );
        let hi = b.op(
            Opc::Mov,
            &[],
            &[Ty::B16],
            Ty::B16,
            smallvec![Operand::Imm(2)],
        );
        let addr = b.op(
            Opc::Mov,
            &[],
            &[Ty::U64],
            Ty::U64,
            smallvec![Operand::Imm(64)],
        );
        let i = b.reg(RegClass::B32);
        b.op_into(i, Opc::Mov, &[], &[Ty::U32], smallvec![Operand::Imm(0)]);
        b.begin_loop();
        let p = b.op(
            Opc::Setp,
            &["lt"],
            &[Ty::U32],
            Ty::Pred,
            smallvec![Operand::Reg(i), Operand::Imm(10)],
        );
        b.begin_loop_body(p, true);
        let packed = b.reg(RegClass::B32);
        b.push(Inst::new(
            Opc::Mov,
            &[],
            &[Ty::B32],
            smallvec![Operand::Reg(packed)],
            smallvec![Operand::Vec(vec![lo, hi])],
        ));
        b.push(Inst::new(
            Opc::St,
            &["global"],
            &[Ty::B32],
            vec![],
            smallvec![Operand::Addr(addr, 0), Operand::Reg(packed)],
        ));
        b.op_into(
            i,
            Opc::Add,
            &[],
            &[Ty::U32],
            smallvec![Operand::Reg(i), Operand::Imm(1)],
        );
        b.end_loop();
        if reuse {
            b.push(Inst::new(
                Opc::St,
                &["global"],
                &[Ty::B16],
                vec![],
                smallvec![Operand::Addr(addr, 0), Operand::Reg(lo)],
            ));
        }
        (b.finish(), packed)
    }

    #[test]
    fn hoists_a_packing_move_only_when_it_shrinks_the_live_ins() {
        let defines = |st: &Stmt, r: Reg| matches!(st, Stmt::Inst(x) if x.defs()[..] == [r]);
        let (mut f, packed) = packing_loop(false);
        let defs = def_counts(&f.body);
        hoist_invariants(&mut f, &defs, &mut RegSet::default());
        assert!(f.body.iter().any(|st| defines(st, packed)), "{f:#?}");
        // With `lo` live after the loop, packing inside keeps two live-ins
        // against one plus `lo`: no gain, the move stays.
        let (mut f, packed) = packing_loop(true);
        let defs = def_counts(&f.body);
        hoist_invariants(&mut f, &defs, &mut RegSet::default());
        assert!(!f.body.iter().any(|st| defines(st, packed)), "{f:#?}");
    }

    #[test]
    fn repeated_calls_keep_to_one_budget() {
        // A loop reading 40 invariant values: hoisting stops at the budget,
        // and a second call (a later optimization round) hoists no more.
        let mut b = Builder::new();
        let base = b.op(
            Opc::Mov,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Imm(7)],
        );
        let addr = b.op(
            Opc::Mov,
            &[],
            &[Ty::U64],
            Ty::U64,
            smallvec![Operand::Imm(64)],
        );
        let i = b.reg(RegClass::B32);
        b.op_into(i, Opc::Mov, &[], &[Ty::U32], smallvec![Operand::Imm(0)]);
        b.begin_loop();
        let p = b.op(
            Opc::Setp,
            &["lt"],
            &[Ty::U32],
            Ty::Pred,
            smallvec![Operand::Reg(i), Operand::Imm(10)],
        );
        b.begin_loop_body(p, true);
        for k in 0..40 {
            let inv = b.op(
                Opc::Add,
                &[],
                &[Ty::U32],
                Ty::U32,
                smallvec![Operand::Reg(base), Operand::Imm(k)],
            );
            b.push(Inst::new(
                Opc::St,
                &["global"],
                &[Ty::B32],
                vec![],
                smallvec![Operand::Addr(addr, 4 * k), Operand::Reg(inv)],
            ));
        }
        b.op_into(
            i,
            Opc::Add,
            &[],
            &[Ty::U32],
            smallvec![Operand::Reg(i), Operand::Imm(1)],
        );
        b.end_loop();
        let mut f = b.finish();
        let defs = def_counts(&f.body);
        let mut hoisted = RegSet::default();
        let before_loop = |f: &Function| f.body.len() - 1;
        let top = before_loop(&f);
        hoist_invariants(&mut f, &defs, &mut hoisted);
        let moved = before_loop(&f) - top;
        assert_eq!(moved, LIVE_IN_BUDGET as usize, "{f:#?}");
        hoist_invariants(&mut f, &defs, &mut hoisted);
        assert_eq!(before_loop(&f) - top, moved, "{f:#?}");
        // Without the record of earlier moves, the budget would start over.
        hoist_invariants(&mut f, &defs, &mut RegSet::default());
        assert!(before_loop(&f) - top > moved, "{f:#?}");
    }
}
