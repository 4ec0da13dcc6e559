//! Clean-up passes over the SIMT IR, run in rounds: constant folding with
//! immediate propagation and integer identities, `mul.wide` for products
//! of widened 32-bit values ([`super::widen`]), common-subexpression
//! elimination with copy propagation ([`super::cse`]), dead-code
//! elimination and (from level 2) loop-invariant code motion
//! ([`super::licm`]); then barriers repeating the one before them go
//! ([`super::barriers`]).
use rustc_hash::FxHashMap as HashMap;
use smallvec::smallvec;

use super::regs::RegCounts;
use super::{Function, IfStmt, LoopStmt, Stmt};
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};

/// Runs the passes chosen for `opt_level` (0: none; 1: folding, CSE and
/// DCE; 2+: also loop-invariant code motion).
pub fn optimize(f: &mut Function, opt_level: u8) {
    if opt_level == 0 {
        return;
    }
    // Rounds until nothing changes (a round's passes expose work for the
    // next: folded constants feed CSE, CSE leaves dead copies, and both can
    // make more of a loop invariant or free LICM budget), at most four. A
    // round that folded and widened nothing, and whose CSE and DCE changed
    // nothing inside a loop, ends it: what those changes expose, CSE and DCE
    // already took in the same round, and loops are as they were for LICM.
    let mut hoisted = super::regs::RegSet::default();
    for _ in 0..4 {
        let defs = def_counts(&f.body);
        if opt_level >= 2 {
            super::licm::hoist_invariants(f, &defs, &mut hoisted);
        }
        let folded = fold_constants(&mut f.body, &defs);
        let widened = super::widen::widen_multiplies(&mut f.body, &defs);
        let carried = super::offsets::carry_offsets(f, &defs);
        let shared = super::cse::cse(&mut f.body, &defs);
        let removed = dce(&mut f.body);
        if !(folded || widened || carried || shared.in_loops || removed.in_loops) {
            break;
        }
    }
    super::barriers::drop_repeated(&mut f.body);
}

/// What a pass changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Whether it changed anything.
    pub any: bool,
    /// Whether it changed anything inside a loop (header or body).
    pub in_loops: bool,
}

impl Changes {
    /// Records a change, inside a loop or not.
    pub fn note(&mut self, in_loop: bool) {
        self.any = true;
        self.in_loops |= in_loop;
    }
}

pub(super) fn for_each_inst<'a>(body: &'a [Stmt], f: &mut dyn FnMut(&'a Inst)) {
    for s in body {
        match s {
            Stmt::Break | Stmt::Continue | Stmt::Shared(_) => {}
            Stmt::Inst(i) => f(i),
            Stmt::If(node) => {
                let IfStmt {
                    body, else_body, ..
                } = &**node;
                for_each_inst(body, f);
                for_each_inst(else_body, f);
            }
            Stmt::Loop(node) => {
                let LoopStmt { header, body, .. } = &**node;
                for_each_inst(header, f);
                for_each_inst(body, f);
            }
        }
    }
}

/// How many times each register is written in `body`.
pub(super) fn def_counts(body: &[Stmt]) -> RegCounts {
    let mut m = RegCounts::default();
    for_each_inst(body, &mut |i| {
        i.for_each_def(|d| m.add(d));
    });
    m
}

/// Whether `opc` takes immediates in any source position.
fn accepts_immediates(i: &Inst) -> bool {
    let small_float = i.tys.iter().any(|t| matches!(t, Ty::F16 | Ty::BF16));
    !small_float
        && matches!(
            i.opc,
            Opc::Add
                | Opc::Sub
                | Opc::Mul
                | Opc::Mad
                | Opc::Min
                | Opc::Max
                | Opc::And
                | Opc::Or
                | Opc::Xor
                | Opc::Shl
                | Opc::Shr
                | Opc::Setp
                | Opc::Selp
                | Opc::Fma
                | Opc::Div
                | Opc::Rem
        )
}

fn int_value(o: &Operand) -> Option<i64> {
    match o {
        Operand::Imm(v) => Some(*v),
        _ => None,
    }
}

/// Wraps `v` to the width of `ty` (sign-extended for signed types).
fn wrap(v: i64, ty: Ty) -> i64 {
    match ty.bits() {
        64 => v,
        b => {
            let m = (1i64 << b) - 1;
            let u = v & m;
            if ty.is_signed() && u >> (b - 1) & 1 == 1 {
                u - (1 << b)
            } else {
                u
            }
        }
    }
}

/// Folds an integer instruction whose sources are all immediates.
fn fold(i: &Inst) -> Option<i64> {
    let ty = *i.tys.first()?;
    if ty.is_float() || i.guard.is_some() || i.dsts.len() != 1 {
        return None;
    }
    let a = int_value(i.srcs.first()?)?;
    if i.opc == Opc::Cvt {
        let from = *i.tys.get(1)?;
        return (int_cvt(i) && i.srcs.len() == 1).then(|| wrap(wrap(a, from), ty));
    }
    let b = i.srcs.get(1).and_then(int_value);
    let wide = i.mods.contains(&"wide");
    let r = match (i.opc, b) {
        (Opc::Mov, None) if i.srcs.len() == 1 => a,
        (Opc::Add, Some(b)) => a.wrapping_add(b),
        (Opc::Sub, Some(b)) => a.wrapping_sub(b),
        (Opc::Mul, Some(b)) if wide => return Some(wrap(a, ty).wrapping_mul(wrap(b, ty))),
        (Opc::Mul, Some(b)) if i.mods.contains(&"lo") => a.wrapping_mul(b),
        (Opc::Shl, Some(b)) if (0..64).contains(&b) => a.wrapping_shl(b as u32),
        (Opc::And, Some(b)) => a & b,
        (Opc::Or, Some(b)) => a | b,
        (Opc::Xor, Some(b)) => a ^ b,
        _ => return None,
    };
    Some(wrap(r, ty))
}

/// Whether `i` converts between integer types (no rounding, no saturation).
pub(super) fn int_cvt(i: &Inst) -> bool {
    i.opc == Opc::Cvt
        && i.mods.is_empty()
        && i.tys.len() == 2
        && i.tys.iter().all(|t| !t.is_float() && *t != Ty::Pred)
}

/// The source an integer instruction reduces to when an operand is an
/// identity or absorbing immediate (`x + 0`, `x * 1`, `x * 0`, `x & 0`,
/// `0 * y + z`).
fn simplify(i: &Inst) -> Option<Operand> {
    let ty = *i.tys.first()?;
    let pred = ty == Ty::Pred;
    if ty.is_float() || i.guard.is_some() || i.dsts.len() != 1 {
        return None;
    }
    let lo = i.mods.as_slice() == ["lo"];
    let s = &i.srcs;
    let imm = |k: usize| s.get(k).and_then(int_value);
    let reg = |k: usize| matches!(s.get(k), Some(Operand::Reg(_))).then(|| s[k].clone());
    if pred {
        // Predicate logic with a constant operand (1 is true).
        return match (i.opc, imm(0), imm(1)) {
            (Opc::Or | Opc::Xor, _, Some(0)) | (Opc::And, _, Some(1)) => reg(0),
            (Opc::Or | Opc::Xor, Some(0), _) | (Opc::And, Some(1), _) => reg(1),
            (Opc::And, Some(0), _) | (Opc::And, _, Some(0)) => Some(Operand::Imm(0)),
            (Opc::Or, Some(1), _) | (Opc::Or, _, Some(1)) => Some(Operand::Imm(1)),
            _ => None,
        };
    }
    match i.opc {
        Opc::Add | Opc::Or | Opc::Xor if imm(1) == Some(0) => reg(0),
        Opc::Add | Opc::Or | Opc::Xor if imm(0) == Some(0) => reg(1),
        Opc::Sub | Opc::Shl | Opc::Shr if imm(1) == Some(0) => reg(0),
        Opc::Mul if lo && imm(1) == Some(1) => reg(0),
        Opc::Mul if lo && imm(0) == Some(1) => reg(1),
        Opc::Mul if lo && (imm(0) == Some(0) || imm(1) == Some(0)) => Some(Operand::Imm(0)),
        Opc::Mad if lo && (imm(0) == Some(0) || imm(1) == Some(0)) => s.get(2).cloned(),
        Opc::And if imm(0) == Some(0) || imm(1) == Some(0) => Some(Operand::Imm(0)),
        _ => None,
    }
}

/// `mad.lo a, b, c` with constant `a` and `b` as `add c, a*b`.
fn constant_product(i: &mut Inst) -> bool {
    let ty = match i.tys.as_slice() {
        [t] if !t.is_float() && *t != Ty::Pred => *t,
        _ => return false,
    };
    if i.opc != Opc::Mad || i.mods.as_slice() != ["lo"] || i.guard.is_some() {
        return false;
    }
    if let [Operand::Imm(a), Operand::Imm(b), c] = i.srcs.as_slice() {
        let k = wrap(a.wrapping_mul(*b), ty);
        *i = Inst::new(
            Opc::Add,
            &[],
            &[ty],
            i.dsts.clone(),
            vec![c.clone(), Operand::Imm(k)],
        );
        return true;
    }
    false
}

/// Folds constants through `body`; whether anything changed.
fn fold_constants(body: &mut [Stmt], defs: &RegCounts) -> bool {
    let mut consts: HashMap<Reg, Operand> = HashMap::default();
    let mut changed = false;
    fold_in(body, defs, &mut consts, &mut changed);
    changed
}

fn fold_in(
    body: &mut [Stmt],
    defs: &RegCounts,
    consts: &mut HashMap<Reg, Operand>,
    changed: &mut bool,
) {
    for s in body.iter_mut() {
        match s {
            Stmt::Break | Stmt::Continue | Stmt::Shared(_) => {}
            Stmt::Inst(i) => {
                if accepts_immediates(i) || i.opc == Opc::Mov || int_cvt(i) {
                    let dst_class = i.def_iter().next().map(|d| d.class);
                    let is_mov = i.opc == Opc::Mov;
                    for o in i.srcs.iter_mut() {
                        if let Operand::Reg(r) = o {
                            if let Some(c) = consts.get(r) {
                                // A `mov` may copy any immediate of its own width.
                                if !is_mov || Some(r.class) == dst_class {
                                    *o = c.clone();
                                    *changed = true;
                                }
                            }
                        }
                    }
                }
                *changed |= constant_product(i);
                if let Some(src) = simplify(i) {
                    let d = i.dsts.clone();
                    let same_class = match (&src, d.first()) {
                        (Operand::Reg(r), Some(Operand::Reg(dr))) => r.class == dr.class,
                        (Operand::Imm(_), _) => true,
                        _ => false,
                    };
                    if same_class {
                        let ty = match i.defs()[0].class {
                            RegClass::Pred => Ty::Pred,
                            RegClass::B16 => Ty::B16,
                            RegClass::B32 => Ty::B32,
                            RegClass::B64 => Ty::B64,
                        };
                        let mov = Inst::new(Opc::Mov, &[], &[ty], d, vec![src]);
                        if **i != mov {
                            **i = mov;
                            *changed = true;
                        }
                    }
                }
                if let Some(v) = fold(i) {
                    let ty = i.tys[0];
                    let wide = i.mods.contains(&"wide");
                    let mov_ty = if wide {
                        Ty::B64
                    } else {
                        Ty::from_bits(ty.bits())
                    };
                    let mov = Inst::new(
                        Opc::Mov,
                        &[],
                        &[mov_ty],
                        i.dsts.clone(),
                        smallvec![Operand::Imm(v)],
                    );
                    if **i != mov {
                        **i = mov;
                        *changed = true;
                    }
                }
                if i.opc == Opc::Mov && i.guard.is_none() {
                    if let (Some(d), Some(src)) =
                        (i.dsts.first().and_then(Operand::reg), i.srcs.first())
                    {
                        let is_imm =
                            matches!(src, Operand::Imm(_) | Operand::F32(_) | Operand::F64(_));
                        let small = matches!(i.tys.first(), Some(Ty::F16 | Ty::BF16 | Ty::B16));
                        if is_imm && !small && defs.get(&d) == Some(&1) {
                            consts.insert(d, src.clone());
                        }
                    }
                }
            }
            Stmt::If(node) => {
                let IfStmt {
                    body, else_body, ..
                } = &mut **node;
                fold_in(body, defs, consts, changed);
                fold_in(else_body, defs, consts, changed);
            }
            Stmt::Loop(node) => {
                let LoopStmt { header, body, .. } = &mut **node;
                fold_in(header, defs, consts, changed);
                fold_in(body, defs, consts, changed);
            }
        }
    }
}

/// Whether `r` is written at most once (an SSA value, or never written).
pub(super) fn is_ssa(defs: &RegCounts, r: &Reg) -> bool {
    defs.get(r).map_or(true, |&n| n <= 1)
}

/// Adds to `uses` each read of a register in `body` (tested predicates
/// included).
pub(super) fn count_uses(body: &[Stmt], uses: &mut RegCounts) {
    for s in body {
        match s {
            Stmt::Break | Stmt::Continue | Stmt::Shared(_) => {}
            Stmt::Inst(i) => i.for_each_use(|u| uses.add(u)),
            Stmt::If(node) => {
                let IfStmt {
                    pred,
                    body,
                    else_body,
                    ..
                } = &**node;
                uses.add(*pred);
                count_uses(body, uses);
                count_uses(else_body, uses);
            }
            Stmt::Loop(node) => {
                let LoopStmt {
                    header, pred, body, ..
                } = &**node;
                uses.add(*pred);
                count_uses(header, uses);
                count_uses(body, uses);
            }
        }
    }
}

/// Removes instructions whose results nobody reads and `if`s left empty.
/// Statements are visited last to first, and a removal frees the reads it
/// made, so a whole chain of dead computation goes in one sweep; sweeps
/// repeat only for reads that come before their definitions (loops).
fn dce(body: &mut Vec<Stmt>) -> Changes {
    let mut uses = RegCounts::default();
    count_uses(body, &mut uses);
    let mut changes = Changes::default();
    while dce_in(body, &mut uses, false, &mut changes) {}
    changes
}

/// One sweep of DCE over `body` (inside a loop when `in_loop`); whether it
/// removed anything. Removals are also noted in `changes`.
fn dce_in(
    body: &mut Vec<Stmt>,
    uses: &mut RegCounts,
    in_loop: bool,
    changes: &mut Changes,
) -> bool {
    let mut keep = vec![true; body.len()];
    let mut changed = false;
    for (k, s) in body.iter_mut().enumerate().rev() {
        match s {
            Stmt::Break | Stmt::Continue | Stmt::Shared(_) => {}
            Stmt::Inst(i) => {
                let live = i.opc.has_side_effects()
                    || i.dsts.is_empty()
                    || i.def_iter().any(|d| uses.get(&d).is_some());
                if !live {
                    i.for_each_use(|u| uses.sub(&u));
                    keep[k] = false;
                }
            }
            Stmt::If(node) => {
                let IfStmt {
                    pred,
                    body,
                    else_body,
                    ..
                } = &mut **node;
                changed |= dce_in(else_body, uses, in_loop, changes);
                changed |= dce_in(body, uses, in_loop, changes);
                if body.is_empty() && else_body.is_empty() {
                    uses.sub(pred);
                    keep[k] = false;
                }
            }
            Stmt::Loop(node) => {
                let LoopStmt { header, body, .. } = &mut **node;
                changed |= dce_in(body, uses, true, changes);
                changed |= dce_in(header, uses, true, changes);
            }
        }
    }
    let mut keep = keep.into_iter();
    let before = body.len();
    body.retain(|_| keep.next().unwrap_or(true));
    if body.len() != before {
        changes.note(in_loop);
    }
    changed || body.len() != before
}

#[cfg(test)]
mod tests {
    use crate::lower::simt::opt::*;
    use crate::lower::simt::Builder;
    use crate::ptx::{RegClass, Special};

    #[test]
    fn predicate_logic_with_a_constant_simplifies() {
        let p = Reg {
            class: RegClass::Pred,
            id: 1,
        };
        let d = vec![Operand::Reg(Reg {
            class: RegClass::Pred,
            id: 2,
        })];
        let op = |opc: Opc, a: Operand, b: Operand| {
            simplify(&Inst::new(opc, &[], &[Ty::Pred], d.clone(), vec![a, b]))
        };
        let (q, f, t) = (Operand::Reg(p), Operand::Imm(0), Operand::Imm(1));
        assert_eq!(op(Opc::Xor, q.clone(), f.clone()), Some(q.clone()));
        assert_eq!(op(Opc::Or, f.clone(), q.clone()), Some(q.clone()));
        assert_eq!(op(Opc::And, q.clone(), t.clone()), Some(q.clone()));
        assert_eq!(op(Opc::And, q.clone(), f.clone()), Some(f.clone()));
        assert_eq!(op(Opc::Or, t.clone(), q.clone()), Some(t.clone()));
        // `xor` with true negates: left alone.
        assert_eq!(op(Opc::Xor, q.clone(), t), None);
        assert_eq!(op(Opc::And, q.clone(), q), None);
    }

    #[test]
    fn folds_shares_and_removes() {
        let mut b = Builder::new();
        let c = b.op(
            Opc::Mov,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Imm(3)],
        );
        let t1 = b.tid_x();
        let t2 = b.tid_x();
        let s = b.op(
            Opc::Add,
            &[],
            &[Ty::S32],
            Ty::S32,
            smallvec![Operand::Reg(t1), Operand::Reg(c)],
        );
        let s2 = b.op(
            Opc::Add,
            &[],
            &[Ty::S32],
            Ty::S32,
            smallvec![Operand::Reg(t2), Operand::Reg(c)],
        );
        let _dead = b.op(
            Opc::Mul,
            &["lo"],
            &[Ty::S32],
            Ty::S32,
            smallvec![Operand::Reg(s), Operand::Imm(2)],
        );
        let p = b.reg(RegClass::B64);
        b.push(Inst::new(
            Opc::St,
            &["global"],
            &[Ty::B32],
            vec![],
            smallvec![Operand::Addr(p, 0), Operand::Reg(s2)],
        ));
        let mut f = b.finish();
        optimize(&mut f, 3);
        let (lines, _) = crate::lower::simt::emit::emit(f);
        let mut text = String::new();
        let mut w = crate::ptx::Writer::new(&mut text);
        for l in &lines {
            if let crate::ptx::Line::Inst(i) = l {
                w.inst(i).unwrap();
                w.into_inner_ref().push('\n');
            }
        }
        assert_eq!(text.matches("%tid.x").count(), 1, "{text}");
        assert!(text.contains("add.s32 \t%r2, %r1, 3"), "{text}");
        assert!(!text.contains("mul"), "{text}");
        assert_eq!(text.lines().count(), 3, "{text}");
    }

    #[test]
    fn folds_integer_arithmetic() {
        let i = Inst::new(
            Opc::Mul,
            &["wide"],
            &[Ty::U32],
            smallvec![Operand::Imm(0)],
            smallvec![Operand::Imm(-1), Operand::Imm(2)],
        );
        assert_eq!(fold(&i), Some(0x1_ffff_fffe));
        let i = Inst::new(
            Opc::Add,
            &[],
            &[Ty::S32],
            smallvec![Operand::Imm(0)],
            smallvec![Operand::Imm(i64::from(i32::MAX)), Operand::Imm(1)],
        );
        assert_eq!(fold(&i), Some(i64::from(i32::MIN)));
    }

    #[test]
    fn and_with_zero_is_zero() {
        let x = Reg {
            class: RegClass::B32,
            id: 1,
        };
        let and = |a: Operand, b: Operand| {
            Inst::new(
                Opc::And,
                &[],
                &[Ty::B32],
                smallvec![Operand::Imm(0)],
                smallvec![a, b],
            )
        };
        assert_eq!(
            simplify(&and(Operand::Reg(x), Operand::Imm(0))),
            Some(Operand::Imm(0))
        );
        assert_eq!(
            simplify(&and(Operand::Imm(0), Operand::Reg(x))),
            Some(Operand::Imm(0))
        );
        assert_eq!(simplify(&and(Operand::Reg(x), Operand::Imm(3))), None);
    }

    #[test]
    fn identities_become_copies_and_copies_vanish() {
        let mut b = Builder::new();
        let t = b.tid_x();
        let x0 = b.op(
            Opc::Xor,
            &[],
            &[Ty::B32],
            Ty::B32,
            smallvec![Operand::Reg(t), Operand::Imm(0)],
        );
        let x1 = b.op(
            Opc::Mul,
            &["lo"],
            &[Ty::S32],
            Ty::S32,
            smallvec![Operand::Reg(x0), Operand::Imm(1)],
        );
        let c = b.op(
            Opc::Mov,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Imm(5)],
        );
        let w = b.op(
            Opc::Cvt,
            &[],
            &[Ty::U64, Ty::U32],
            Ty::U64,
            smallvec![Operand::Reg(c)],
        );
        // Not an identity: stays.
        let y = b.op(
            Opc::Shl,
            &[],
            &[Ty::B32],
            Ty::B32,
            smallvec![Operand::Reg(x1), Operand::Imm(2)],
        );
        let p = b.reg(RegClass::B64);
        b.push(Inst::new(
            Opc::St,
            &["global"],
            &[Ty::B32],
            vec![],
            smallvec![Operand::Addr(p, 0), Operand::Reg(y)],
        ));
        b.push(Inst::new(
            Opc::St,
            &["global"],
            &[Ty::B64],
            vec![],
            smallvec![Operand::Addr(p, 8), Operand::Reg(w)],
        ));
        let mut f = b.finish();
        optimize(&mut f, 1);
        let mut insts = Vec::new();
        for_each_inst(&f.body, &mut |i| insts.push(i.clone()));
        assert!(
            !insts
                .iter()
                .any(|i| matches!(i.opc, Opc::Xor | Opc::Mul | Opc::Cvt)),
            "{insts:#?}"
        );
        let shl = insts.iter().find(|i| i.opc == Opc::Shl).expect("shl kept");
        assert_eq!(shl.srcs[0], Operand::Reg(t));
        assert!(
            insts.iter().any(|i| i.opc == Opc::Mov
                && i.defs()[..] == [w]
                && i.srcs[..] == [Operand::Imm(5)]),
            "{insts:#?}"
        );
    }

    #[test]
    fn shares_reads_of_a_variable_until_it_is_written() {
        let mut b = Builder::new();
        let v = b.reg(RegClass::B32);
        b.op_into(
            v,
            Opc::Mov,
            &[],
            &[Ty::U32],
            smallvec![Operand::Special(Special::TidX)],
        );
        let shl = |b: &mut Builder| {
            b.op(
                Opc::Shl,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(v), Operand::Imm(2)],
            )
        };
        let first = shl(&mut b);
        let same = shl(&mut b);
        b.op_into(
            v,
            Opc::Add,
            &[],
            &[Ty::U32],
            smallvec![Operand::Reg(v), Operand::Imm(1)],
        );
        let fresh = shl(&mut b);
        let p = b.reg(RegClass::B64);
        for (k, r) in [first, same, fresh].into_iter().enumerate() {
            b.push(Inst::new(
                Opc::St,
                &["global"],
                &[Ty::B32],
                vec![],
                smallvec![Operand::Addr(p, 4 * k as i64), Operand::Reg(r)],
            ));
        }
        let mut f = b.finish();
        optimize(&mut f, 1);
        let mut stored = Vec::new();
        for_each_inst(&f.body, &mut |i| {
            if i.opc == Opc::St {
                stored.push(i.srcs[1].clone());
            }
        });
        assert_eq!(stored[0], stored[1]);
        assert_ne!(stored[1], stored[2]);
    }
}
