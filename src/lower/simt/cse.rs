//! Common-subexpression elimination over the SIMT IR, with copy
//! propagation: a pure instruction computing what an earlier one in an
//! enclosing scope computed reuses that result, and a copy of a value is
//! replaced by the value.
//!
//! It runs in two sweeps. The first reads the body and decides the renames:
//! expressions are compared in place, through the renames decided so far,
//! so nothing is cloned into the table. The second applies the renames.
use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap as HashMap, FxHasher};
use smallvec::SmallVec;

use super::opt::{for_each_inst, is_ssa, Changes};
use super::regs::{slot, RegCounts, Versions};
use super::{IfStmt, LoopStmt, Stmt};
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass};

/// Reuses earlier results of equal computations in `body`, given each
/// register's definition count; whether any were, and whether inside a loop.
pub fn cse(body: &mut [Stmt], defs: &RegCounts) -> Changes {
    let (renames, changes) = {
        let mut found = Finder {
            defs,
            renames: Renames::default(),
            table: HashMap::with_capacity_and_hasher(defs.span() / 2, Default::default()),
            seen: Vec::with_capacity(defs.span() / 2),
            version_lists: Vec::new(),
            open: vec![true],
            stack: vec![0],
            versions: Versions::default(),
            loop_depth: 0,
            changes: Changes::default(),
        };
        found.walk(body);
        (found.renames, found.changes)
    };
    if changes.any {
        apply(body, &renames);
    }
    changes
}

/// Registers replaced by others (always of the same class), by number.
#[derive(Default)]
struct Renames {
    /// One more than the replacement's number; 0 where none.
    to: Vec<u32>,
}

impl Renames {
    fn get(&self, r: Reg) -> Reg {
        match self.to.get(r.id as usize) {
            Some(&n) if n > 0 => Reg {
                class: r.class,
                id: n - 1,
            },
            _ => r,
        }
    }

    fn insert(&mut self, from: Reg, to: Reg) {
        *slot(&mut self.to, from) = to.id + 1;
    }

    fn operand_eq(&self, a: &Operand, b: &Operand) -> bool {
        match (a, b) {
            (Operand::Reg(x), Operand::Reg(y)) => self.get(*x) == self.get(*y),
            (Operand::Addr(x, i), Operand::Addr(y, j)) => i == j && self.get(*x) == self.get(*y),
            (Operand::Vec(x), Operand::Vec(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| self.get(*p) == self.get(*q))
            }
            _ => a == b,
        }
    }

    fn hash_operand(&self, o: &Operand, h: &mut FxHasher) {
        std::mem::discriminant(o).hash(h);
        match o {
            Operand::Reg(r) => self.get(*r).hash(h),
            Operand::Addr(r, i) => {
                self.get(*r).hash(h);
                i.hash(h);
            }
            Operand::Vec(v) => v.iter().for_each(|r| self.get(*r).hash(h)),
            _ => o.hash(h),
        }
    }
}

/// An expression seen: the instruction computing it, the versions of the
/// variables it reads (a range of [`Finder::version_lists`]), the scope it
/// was seen in and its result (whose class is part of the expression).
struct Seen<'a> {
    inst: &'a Inst,
    versions: std::ops::Range<u32>,
    scope: u32,
    result: Reg,
    /// The next expression with the same hash (`u32::MAX`: none).
    next: u32,
}

/// The first sweep: scoped available expressions. An expression may read
/// variables (registers written in several places): each write of a
/// variable (or the start of a loop that writes it) gives it a new version,
/// so expressions that read an older version no longer match.
struct Finder<'a, 'd> {
    defs: &'d RegCounts,
    renames: Renames,
    /// The first of the expressions seen with each hash.
    table: HashMap<u64, u32>,
    /// The expressions seen.
    seen: Vec<Seen<'a>>,
    /// The versions read by the expressions seen, one list after another.
    version_lists: Vec<u32>,
    /// Whether each scope (numbered in the order they opened) is still open.
    open: Vec<bool>,
    /// The open scopes, innermost last.
    stack: Vec<usize>,
    versions: Versions,
    /// How many loops enclose the statements being read.
    loop_depth: u32,
    changes: Changes,
}

impl<'a> Finder<'a, '_> {
    /// Replaces `from` by `to` from now on.
    fn rename(&mut self, from: Reg, to: Reg) {
        self.renames.insert(from, to);
        self.changes.note(self.loop_depth > 0);
    }

    fn push(&mut self) {
        self.stack.push(self.open.len());
        self.open.push(true);
    }

    fn pop(&mut self) {
        if let Some(s) = self.stack.pop() {
            self.open[s] = false;
        }
    }

    fn walk(&mut self, body: &'a [Stmt]) {
        for s in body {
            match s {
                Stmt::Break | Stmt::Continue | Stmt::Shared(_) => {}
                Stmt::Inst(i) => self.inst(i),
                Stmt::If(node) => {
                    let IfStmt {
                        body, else_body, ..
                    } = &**node;
                    for b in [body, else_body] {
                        self.push();
                        self.walk(b);
                        self.pop();
                    }
                }
                Stmt::Loop(node) => {
                    let LoopStmt { header, body, .. } = &**node;
                    let mut written = Vec::new();
                    for part in [&header[..], &body[..]] {
                        for_each_inst(part, &mut |i| {
                            i.for_each_def(|d| {
                                if !is_ssa(self.defs, &d) {
                                    written.push(d)
                                }
                            })
                        });
                    }
                    for v in written {
                        self.versions.bump(v);
                    }
                    self.push();
                    self.loop_depth += 1;
                    self.walk(header);
                    self.walk(body);
                    self.loop_depth -= 1;
                    self.pop();
                }
            }
        }
    }

    fn inst(&mut self, i: &'a Inst) {
        let defs = self.defs;
        i.for_each_def(|d| {
            if !is_ssa(defs, &d) {
                self.versions.bump(d);
            }
        });
        let pure = !i.opc.has_side_effects()
            && !matches!(i.opc, Opc::Ld | Opc::Ldmatrix)
            && i.guard.is_none();
        let d = match i.dsts.as_slice() {
            [Operand::Reg(d)] if pure && defs.get(d) == Some(&1) => *d,
            _ => return,
        };
        // A copy of a value: read the value itself.
        if let (Opc::Mov, [Operand::Reg(src)]) = (i.opc, i.srcs.as_slice()) {
            let src = self.renames.get(*src);
            if src.class == d.class && is_ssa(defs, &src) {
                self.rename(d, src);
                return;
            }
        }
        let mut versions: SmallVec<[u32; 2]> = SmallVec::new();
        for o in &i.srcs {
            for u in o.regs() {
                if !is_ssa(defs, u) {
                    versions.push(self.versions.get(u));
                }
            }
        }
        let hash = self.hash(i, d.class, &versions);
        let scope = *self.stack.last().expect("a scope") as u32;
        let head = self.table.get(&hash).copied().unwrap_or(u32::MAX);
        let mut at = head;
        while let Some(s) = self.seen.get(at as usize) {
            let same = s.result.class == d.class
                && self.version_lists[s.versions.start as usize..s.versions.end as usize]
                    == versions[..]
                && s.inst.opc == i.opc
                && s.inst.mods == i.mods
                && s.inst.tys == i.tys
                && s.inst.srcs.len() == i.srcs.len()
                && s.inst
                    .srcs
                    .iter()
                    .zip(&i.srcs)
                    .all(|(a, b)| self.renames.operand_eq(a, b));
            if same {
                break;
            }
            at = s.next;
        }
        match self.seen.get_mut(at as usize) {
            Some(s) if self.open[s.scope as usize] => {
                let to = s.result;
                self.rename(d, to);
            }
            Some(s) => (s.inst, s.scope, s.result) = (i, scope, d),
            None => {
                let start = self.version_lists.len() as u32;
                self.version_lists.extend_from_slice(&versions);
                let end = self.version_lists.len() as u32;
                self.table.insert(hash, self.seen.len() as u32);
                self.seen.push(Seen {
                    inst: i,
                    versions: start..end,
                    scope,
                    result: d,
                    next: head,
                });
            }
        }
    }

    fn hash(&self, i: &Inst, class: RegClass, versions: &[u32]) -> u64 {
        let mut h = FxHasher::default();
        i.opc.hash(&mut h);
        i.mods.hash(&mut h);
        i.tys.hash(&mut h);
        class.hash(&mut h);
        versions.hash(&mut h);
        i.srcs.len().hash(&mut h);
        for o in &i.srcs {
            self.renames.hash_operand(o, &mut h);
        }
        h.finish()
    }
}

/// The second sweep: every read of a renamed register reads its
/// replacement.
fn apply(body: &mut [Stmt], renames: &Renames) {
    let get = |r: &mut Reg| *r = renames.get(*r);
    for s in body {
        match s {
            Stmt::Break | Stmt::Continue | Stmt::Shared(_) => {}
            Stmt::Inst(i) => {
                if let Some((g, _)) = &mut i.guard {
                    get(g);
                }
                for o in i.srcs.iter_mut() {
                    match o {
                        Operand::Reg(r) | Operand::Addr(r, _) => get(r),
                        Operand::Vec(v) => v.iter_mut().for_each(get),
                        _ => {}
                    }
                }
            }
            Stmt::If(node) => {
                let IfStmt {
                    pred,
                    body,
                    else_body,
                    ..
                } = &mut **node;
                get(pred);
                apply(body, renames);
                apply(else_body, renames);
            }
            Stmt::Loop(node) => {
                let LoopStmt {
                    header, pred, body, ..
                } = &mut **node;
                apply(header, renames);
                get(pred);
                apply(body, renames);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::lower::simt::cse::*;
    use crate::lower::simt::opt::def_counts;
    use crate::lower::simt::Builder;
    use crate::ptx::Ty;
    use smallvec::smallvec;

    fn tid_plus(b: &mut Builder, k: i64) -> Reg {
        let t = b.tid_x();
        b.op(
            Opc::Add,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Reg(t), Operand::Imm(k)],
        )
    }

    fn store(b: &mut Builder, v: Reg) {
        let p = b.reg(RegClass::B64);
        b.push(Inst::new(
            Opc::St,
            &["global"],
            &[Ty::B32],
            vec![],
            smallvec![Operand::Addr(p, 0), Operand::Reg(v)],
        ));
    }

    /// The registers the stores of `body` read, in order.
    fn stored(body: &[Stmt]) -> Vec<Reg> {
        let mut out = Vec::new();
        for_each_inst(body, &mut |i| {
            if i.opc == Opc::St {
                out.extend(i.srcs[1].reg());
            }
        });
        out
    }

    #[test]
    fn reuses_values_of_enclosing_scopes_only() {
        let mut b = Builder::new();
        let before = tid_plus(&mut b, 1);
        let p = b.reg(RegClass::Pred);
        b.begin_if(p, true);
        let inside = tid_plus(&mut b, 1);
        let only_inside = tid_plus(&mut b, 2);
        store(&mut b, inside);
        store(&mut b, only_inside);
        b.end_if();
        let after = tid_plus(&mut b, 2);
        store(&mut b, before);
        store(&mut b, after);
        let mut f = b.finish();
        let defs = def_counts(&f.body);
        assert!(cse(&mut f.body, &defs).any);
        // Inside the `if`, tid+1 is the value from before it; tid+2 computed
        // there is not available after the `if`, so `after` stays.
        assert_eq!(stored(&f.body), vec![before, only_inside, before, after]);
    }

    #[test]
    fn a_variable_written_again_is_a_new_value() {
        let mut b = Builder::new();
        let v = b.reg(RegClass::B32);
        b.op_into(v, Opc::Mov, &[], &[Ty::U32], smallvec![Operand::Imm(1)]);
        let add = |b: &mut Builder| {
            b.op(
                Opc::Add,
                &[],
                &[Ty::U32],
                Ty::U32,
                smallvec![Operand::Reg(v), Operand::Imm(5)],
            )
        };
        let x = add(&mut b);
        let y = add(&mut b);
        b.op_into(v, Opc::Mov, &[], &[Ty::U32], smallvec![Operand::Imm(2)]);
        let z = add(&mut b);
        for r in [x, y, z] {
            store(&mut b, r);
        }
        let mut f = b.finish();
        let defs = def_counts(&f.body);
        assert!(cse(&mut f.body, &defs).any);
        assert_eq!(stored(&f.body), vec![x, x, z]);
    }

    #[test]
    fn reports_whether_a_loop_changed() {
        let mut b = Builder::new();
        let x = tid_plus(&mut b, 1);
        let y = tid_plus(&mut b, 1);
        store(&mut b, y);
        let mut f = b.finish();
        let defs = def_counts(&f.body);
        let outside = cse(&mut f.body, &defs);
        assert!(outside.any && !outside.in_loops);
        assert_eq!(stored(&f.body), vec![x]);

        let mut b = Builder::new();
        let x = tid_plus(&mut b, 1);
        let p = b.reg(RegClass::Pred);
        b.begin_loop();
        b.begin_loop_body(p, true);
        let y = tid_plus(&mut b, 1);
        store(&mut b, y);
        b.end_loop();
        let mut f = b.finish();
        let defs = def_counts(&f.body);
        let inside = cse(&mut f.body, &defs);
        assert!(inside.any && inside.in_loops);
        assert_eq!(stored(&f.body), vec![x]);
    }
}
