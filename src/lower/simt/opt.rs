//! Clean-up passes over the SIMT IR: constant folding with immediate
//! propagation, common-subexpression elimination and dead-code elimination.
//! Only registers written exactly once are folded, shared or removed, so the
//! merge registers that `if` bodies overwrite are left alone.
use std::collections::{HashMap, HashSet};

use super::{Function, Stmt};
use crate::ptx::{Inst, Opc, Operand, Reg, Ty};

/// Runs the passes chosen for `opt_level` (0: none; 1+: all).
pub fn optimize(f: &mut Function, opt_level: u8) {
    if opt_level == 0 {
        return;
    }
    for _ in 0..4 {
        let defs = def_counts(&f.body);
        fold_constants(&mut f.body, &defs);
        cse(&mut f.body, &defs);
        dce(&mut f.body);
    }
}

fn for_each_inst<'a>(body: &'a [Stmt], f: &mut dyn FnMut(&'a Inst)) {
    for s in body {
        match s {
            Stmt::Break | Stmt::Continue => {}
            Stmt::Inst(i) => f(i),
            Stmt::If {
                body, else_body, ..
            } => {
                for_each_inst(body, f);
                for_each_inst(else_body, f);
            }
            Stmt::Loop { header, body, .. } => {
                for_each_inst(header, f);
                for_each_inst(body, f);
            }
        }
    }
}

fn def_counts(body: &[Stmt]) -> HashMap<Reg, u32> {
    let mut m = HashMap::new();
    for_each_inst(body, &mut |i| {
        for d in i.defs() {
            *m.entry(d).or_insert(0) += 1;
        }
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

fn fold_constants(body: &mut [Stmt], defs: &HashMap<Reg, u32>) {
    let mut consts: HashMap<Reg, Operand> = HashMap::new();
    fold_in(body, defs, &mut consts);
}

fn fold_in(body: &mut [Stmt], defs: &HashMap<Reg, u32>, consts: &mut HashMap<Reg, Operand>) {
    for s in body.iter_mut() {
        match s {
            Stmt::Break | Stmt::Continue => {}
            Stmt::Inst(i) => {
                if accepts_immediates(i) || i.opc == Opc::Mov {
                    let dst_class = i.defs().first().map(|d| d.class);
                    let is_mov = i.opc == Opc::Mov;
                    for o in i.srcs.iter_mut() {
                        if let Operand::Reg(r) = o {
                            if let Some(c) = consts.get(r) {
                                // A `mov` may copy any immediate of its own width.
                                if !is_mov || Some(r.class) == dst_class {
                                    *o = c.clone();
                                }
                            }
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
                    *i = Inst::new(
                        Opc::Mov,
                        &[],
                        &[mov_ty],
                        i.dsts.clone(),
                        vec![Operand::Imm(v)],
                    );
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
            Stmt::If {
                body, else_body, ..
            } => {
                fold_in(body, defs, consts);
                fold_in(else_body, defs, consts);
            }
            Stmt::Loop { header, body, .. } => {
                fold_in(header, defs, consts);
                fold_in(body, defs, consts);
            }
        }
    }
}

/// Whether `r` is written at most once (an SSA value, or never written).
fn is_ssa(defs: &HashMap<Reg, u32>, r: &Reg) -> bool {
    defs.get(r).map_or(true, |&n| n <= 1)
}

fn cse(body: &mut [Stmt], defs: &HashMap<Reg, u32>) {
    let mut rename: HashMap<Reg, Reg> = HashMap::new();
    let mut scopes: Vec<HashMap<Inst, Reg>> = vec![HashMap::new()];
    cse_in(body, defs, &mut scopes, &mut rename);
}

fn cse_in(
    body: &mut [Stmt],
    defs: &HashMap<Reg, u32>,
    scopes: &mut Vec<HashMap<Inst, Reg>>,
    rename: &mut HashMap<Reg, Reg>,
) {
    for s in body.iter_mut() {
        match s {
            Stmt::Break | Stmt::Continue => {}
            Stmt::Inst(i) => {
                rename_uses(i, rename);
                let pure = !i.opc.has_side_effects()
                    && !matches!(i.opc, Opc::Ld | Opc::Ldmatrix)
                    && i.guard.is_none();
                let single =
                    i.dsts.len() == 1 && i.defs().len() == 1 && defs.get(&i.defs()[0]) == Some(&1);
                // Reading a variable (a register written in several places)
                // gives different values at different points: never share.
                let reads_ssa = i.uses().iter().all(|u| is_ssa(defs, u));
                if !(pure && single && reads_ssa) {
                    continue;
                }
                let d = i.defs()[0];
                let mut key = i.clone();
                key.dsts = vec![Operand::Imm(i64::from(d.class as u8))];
                if let Some(prev) = scopes.iter().rev().find_map(|m| m.get(&key)) {
                    rename.insert(d, *prev);
                } else if let Some(top) = scopes.last_mut() {
                    top.insert(key, d);
                }
            }
            Stmt::If {
                pred,
                body,
                else_body,
                ..
            } => {
                if let Some(n) = rename.get(pred) {
                    *pred = *n;
                }
                for b in [body, else_body] {
                    scopes.push(HashMap::new());
                    cse_in(b, defs, scopes, rename);
                    scopes.pop();
                }
            }
            Stmt::Loop {
                header, pred, body, ..
            } => {
                scopes.push(HashMap::new());
                cse_in(header, defs, scopes, rename);
                if let Some(n) = rename.get(pred) {
                    *pred = *n;
                }
                cse_in(body, defs, scopes, rename);
                scopes.pop();
            }
        }
    }
}

fn rename_uses(i: &mut Inst, rename: &HashMap<Reg, Reg>) {
    let get = |r: &mut Reg| {
        if let Some(n) = rename.get(r) {
            *r = *n;
        }
    };
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

fn collect_uses(body: &[Stmt], used: &mut HashSet<Reg>) {
    for s in body {
        match s {
            Stmt::Break | Stmt::Continue => {}
            Stmt::Inst(i) => used.extend(i.uses()),
            Stmt::If {
                pred,
                body,
                else_body,
                ..
            } => {
                used.insert(*pred);
                collect_uses(body, used);
                collect_uses(else_body, used);
            }
            Stmt::Loop {
                header, pred, body, ..
            } => {
                used.insert(*pred);
                collect_uses(header, used);
                collect_uses(body, used);
            }
        }
    }
}

fn dce(body: &mut Vec<Stmt>) {
    loop {
        let mut used = HashSet::new();
        collect_uses(body, &mut used);
        if !dce_in(body, &used) {
            break;
        }
    }
}

fn dce_in(body: &mut Vec<Stmt>, used: &HashSet<Reg>) -> bool {
    let before = body.len();
    let mut changed = false;
    body.retain_mut(|s| match s {
        Stmt::Break | Stmt::Continue => true,
        Stmt::Inst(i) => {
            i.opc.has_side_effects()
                || i.dsts.is_empty()
                || i.defs().iter().any(|d| used.contains(d))
        }
        Stmt::If {
            body, else_body, ..
        } => {
            changed |= dce_in(body, used);
            changed |= dce_in(else_body, used);
            !(body.is_empty() && else_body.is_empty())
        }
        Stmt::Loop { header, body, .. } => {
            changed |= dce_in(header, used);
            changed |= dce_in(body, used);
            true
        }
    });
    changed || body.len() != before
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::simt::Builder;
    use crate::ptx::{RegClass, Special};

    #[test]
    fn folds_shares_and_removes() {
        let mut b = Builder::new();
        let c = b.op(Opc::Mov, &[], &[Ty::U32], Ty::U32, vec![Operand::Imm(3)]);
        let t1 = b.op(
            Opc::Mov,
            &[],
            &[Ty::U32],
            Ty::U32,
            vec![Operand::Special(Special::TidX)],
        );
        let t2 = b.op(
            Opc::Mov,
            &[],
            &[Ty::U32],
            Ty::U32,
            vec![Operand::Special(Special::TidX)],
        );
        let s = b.op(
            Opc::Add,
            &[],
            &[Ty::S32],
            Ty::S32,
            vec![Operand::Reg(t1), Operand::Reg(c)],
        );
        let s2 = b.op(
            Opc::Add,
            &[],
            &[Ty::S32],
            Ty::S32,
            vec![Operand::Reg(t2), Operand::Reg(c)],
        );
        let _dead = b.op(
            Opc::Mul,
            &["lo"],
            &[Ty::S32],
            Ty::S32,
            vec![Operand::Reg(s), Operand::Imm(2)],
        );
        let p = b.reg(RegClass::B64);
        b.push(Inst::new(
            Opc::St,
            &["global"],
            &[Ty::B32],
            vec![],
            vec![Operand::Addr(p, 0), Operand::Reg(s2)],
        ));
        let mut f = b.finish();
        optimize(&mut f, 3);
        let (lines, _) = super::super::emit::emit(&f);
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
            vec![Operand::Imm(0)],
            vec![Operand::Imm(-1), Operand::Imm(2)],
        );
        assert_eq!(fold(&i), Some(0x1_ffff_fffe));
        let i = Inst::new(
            Opc::Add,
            &[],
            &[Ty::S32],
            vec![Operand::Imm(0)],
            vec![Operand::Imm(i64::from(i32::MAX)), Operand::Imm(1)],
        );
        assert_eq!(fold(&i), Some(i64::from(i32::MIN)));
    }
}
