//! 64-bit products of 32-bit values widened by `cvt` (address arithmetic:
//! an index times an element size or stride) as `mul.wide` / `mad.wide`
//! of the 32-bit values: one instruction instead of the extension and a
//! 64-bit multiply.
use rustc_hash::FxHashMap as HashMap;
use smallvec::smallvec;

use super::opt::{for_each_inst, int_cvt, is_ssa};
use super::regs::{RegCounts, Versions};
use super::{IfStmt, LoopStmt, Stmt};
use crate::ptx::{Opc, Operand, Reg, Ty};

/// Rewrites a 64-bit `mul.lo`/`mad.lo` of a 32-bit value widened by `cvt`
/// (and of a constant or a value widened the same way) into `mul.wide` /
/// `mad.wide` of the 32-bit value: the same product, one instruction
/// instead of the extension and a 64-bit multiply. Whether any was.
pub fn widen_multiplies(body: &mut [Stmt], defs: &RegCounts) -> bool {
    let mut widened = Widened::default();
    widen_in(body, defs, &mut widened);
    widened.changed
}

/// The 64-bit registers known to hold a 32-bit value widened by `cvt`.
#[derive(Default)]
struct Widened {
    /// For each widened register: the 32-bit source, whether the extension
    /// is signed, and the source's version when it was widened.
    of: HashMap<Reg, (Reg, bool, u32)>,
    /// Versions of the variables written so far.
    versions: Versions,
    /// Whether a multiply was rewritten.
    changed: bool,
}

impl Widened {
    /// The 32-bit source of `r` and its signedness, if `r` still holds it.
    fn get(&self, r: &Reg) -> Option<(Reg, bool)> {
        let &(a, signed, v) = self.of.get(r)?;
        (self.versions.get(&a) == v).then_some((a, signed))
    }
}

fn widen_in(body: &mut [Stmt], defs: &RegCounts, widened: &mut Widened) {
    for s in body.iter_mut() {
        match s {
            Stmt::Break | Stmt::Continue | Stmt::Shared(_) => {}
            Stmt::Inst(i) => {
                // A variable written anew no longer has the widened value.
                for d in i.def_iter() {
                    if !is_ssa(defs, &d) {
                        widened.versions.bump(d);
                    }
                }
                if i.guard.is_some() || i.dsts.len() != 1 {
                    continue;
                }
                if let ([Operand::Reg(d)], [Operand::Reg(a)], [to, from]) =
                    (i.dsts.as_slice(), i.srcs.as_slice(), i.tys.as_slice())
                {
                    let signed = match (to, from) {
                        (Ty::S64, Ty::S32) => Some(true),
                        (Ty::U64, Ty::U32) => Some(false),
                        _ => None,
                    };
                    if let Some(signed) = signed {
                        if int_cvt(i) && is_ssa(defs, d) {
                            let v = widened.versions.get(a);
                            widened.of.insert(*d, (*a, signed, v));
                        }
                    }
                    continue;
                }
                let lo64 =
                    i.mods.as_slice() == ["lo"] && matches!(i.tys.as_slice(), [Ty::S64 | Ty::U64]);
                if !(lo64 && matches!(i.opc, Opc::Mul | Opc::Mad)) {
                    continue;
                }
                let narrow = |o: &Operand| -> Option<(Operand, Option<bool>)> {
                    match o {
                        Operand::Reg(r) => {
                            widened.get(r).map(|(a, sg)| (Operand::Reg(a), Some(sg)))
                        }
                        Operand::Imm(k) => Some((Operand::Imm(*k), None)),
                        _ => None,
                    }
                };
                let (Some((x, sx)), Some((y, sy))) = (narrow(&i.srcs[0]), narrow(&i.srcs[1]))
                else {
                    continue;
                };
                let signed = match (sx, sy) {
                    (Some(a), Some(b)) if a == b => a,
                    (Some(a), None) | (None, Some(a)) => a,
                    _ => continue,
                };
                let fits = |o: &Operand| match o {
                    Operand::Imm(k) if signed => i32::try_from(*k).is_ok(),
                    Operand::Imm(k) => u32::try_from(*k).is_ok(),
                    _ => true,
                };
                if !(fits(&x) && fits(&y)) {
                    continue;
                }
                i.mods = smallvec!["wide"];
                i.tys = smallvec![if signed { Ty::S32 } else { Ty::U32 }];
                i.srcs[0] = x;
                i.srcs[1] = y;
                widened.changed = true;
            }
            Stmt::If(node) => {
                let IfStmt {
                    body, else_body, ..
                } = &mut **node;
                widen_in(body, defs, widened);
                widen_in(else_body, defs, widened);
            }
            Stmt::Loop(node) => {
                let LoopStmt { header, body, .. } = &mut **node;
                // Widened before the loop, changed in it: not the same value.
                for part in [&*header, &*body] {
                    for_each_inst(part, &mut |i| {
                        i.for_each_def(|d| {
                            if !is_ssa(defs, &d) {
                                widened.versions.bump(d);
                            }
                        })
                    });
                }
                widen_in(header, defs, widened);
                widen_in(body, defs, widened);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::lower::simt::opt::optimize;
    use crate::lower::simt::widen::*;
    use crate::lower::simt::Builder;
    use crate::ptx::{Inst, RegClass, Special};

    #[test]
    fn widened_products_use_mul_wide() {
        let mut b = Builder::new();
        let t = b.tid_x();
        let s = b.op(
            Opc::Cvt,
            &[],
            &[Ty::S64, Ty::S32],
            Ty::S64,
            smallvec![Operand::Reg(t)],
        );
        let u = b.op(
            Opc::Cvt,
            &[],
            &[Ty::U64, Ty::U32],
            Ty::U64,
            smallvec![Operand::Reg(t)],
        );
        let by4 = b.op(
            Opc::Mul,
            &["lo"],
            &[Ty::S64],
            Ty::S64,
            smallvec![Operand::Reg(s), Operand::Imm(4)],
        );
        // Mixed extensions and a constant past 32 bits: kept.
        let mixed = b.op(
            Opc::Mul,
            &["lo"],
            &[Ty::S64],
            Ty::S64,
            smallvec![Operand::Reg(s), Operand::Reg(u)],
        );
        let big = b.op(
            Opc::Mul,
            &["lo"],
            &[Ty::S64],
            Ty::S64,
            smallvec![Operand::Reg(u), Operand::Imm(1 << 33)],
        );
        let p = b.reg(RegClass::B64);
        for (k, v) in [by4, mixed, big].into_iter().enumerate() {
            b.push(Inst::new(
                Opc::St,
                &["global"],
                &[Ty::B64],
                vec![],
                smallvec![Operand::Addr(p, 8 * k as i64), Operand::Reg(v)],
            ));
        }
        let mut f = b.finish();
        optimize(&mut f, 1);
        let mut insts = Vec::new();
        for_each_inst(&f.body, &mut |i| insts.push(i.clone()));
        let def = |r: Reg| insts.iter().find(|i| i.defs()[..] == [r]).unwrap().clone();
        let w = def(by4);
        assert_eq!(
            (w.mods.as_slice(), w.tys.as_slice()),
            (&["wide"][..], &[Ty::S32][..])
        );
        assert_eq!(w.srcs[..], [Operand::Reg(t), Operand::Imm(4)]);
        assert_eq!(def(mixed).mods[..], ["lo"]);
        assert_eq!(def(big).mods[..], ["lo"]);
    }

    #[test]
    fn a_rewritten_variable_is_not_widened_stale() {
        let mut b = Builder::new();
        let v = b.reg(RegClass::B32);
        b.op_into(
            v,
            Opc::Mov,
            &[],
            &[Ty::U32],
            smallvec![Operand::Special(Special::TidX)],
        );
        let x = b.op(
            Opc::Cvt,
            &[],
            &[Ty::U64, Ty::U32],
            Ty::U64,
            smallvec![Operand::Reg(v)],
        );
        let before = b.op(
            Opc::Mul,
            &["lo"],
            &[Ty::U64],
            Ty::U64,
            smallvec![Operand::Reg(x), Operand::Imm(4)],
        );
        b.op_into(
            v,
            Opc::Add,
            &[],
            &[Ty::U32],
            smallvec![Operand::Reg(v), Operand::Imm(1)],
        );
        let after = b.op(
            Opc::Mul,
            &["lo"],
            &[Ty::U64],
            Ty::U64,
            smallvec![Operand::Reg(x), Operand::Imm(8)],
        );
        let p = b.reg(RegClass::B64);
        for (k, r) in [before, after].into_iter().enumerate() {
            b.push(Inst::new(
                Opc::St,
                &["global"],
                &[Ty::B64],
                vec![],
                smallvec![Operand::Addr(p, 8 * k as i64), Operand::Reg(r)],
            ));
        }
        let mut f = b.finish();
        optimize(&mut f, 1);
        let mut insts = Vec::new();
        for_each_inst(&f.body, &mut |i| insts.push(i.clone()));
        let def = |r: Reg| insts.iter().find(|i| i.defs()[..] == [r]).unwrap().clone();
        assert_eq!(def(before).mods[..], ["wide"]);
        assert_eq!(def(after).mods[..], ["lo"]);
    }
}
