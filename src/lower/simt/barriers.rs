//! Barriers that repeat the one before them. A `bar.sync 0` reached from
//! another with only register work between (no memory access, no branch,
//! no join) orders nothing the first did not: every thread already waited
//! at the first, and no access since needs ordering. Such a barrier is
//! dropped. The lowering writes them where a construct's closing barrier
//! meets the next one's opening one: a product's trailing barrier and a
//! loop's end-of-iteration one, or layout conversions through shared
//! memory back to back.
use super::Stmt;
use crate::ptx::{Inst, Opc, Operand};

/// Drops the repeated barriers of `body` and of the lists nested in it;
/// whether any went.
pub fn drop_repeated(body: &mut Vec<Stmt>) -> bool {
    let mut changed = false;
    // Whether a full barrier was passed with only register work since.
    let mut after_barrier = false;
    body.retain_mut(|s| match s {
        Stmt::Inst(i) => {
            if full_barrier(i) {
                if after_barrier {
                    changed = true;
                    return false;
                }
                after_barrier = true;
            } else if !registers_only(i) {
                after_barrier = false;
            }
            true
        }
        Stmt::If(n) => {
            changed |= drop_repeated(&mut n.body);
            changed |= drop_repeated(&mut n.else_body);
            after_barrier = false;
            true
        }
        Stmt::Loop(n) => {
            changed |= drop_repeated(&mut n.header);
            changed |= drop_repeated(&mut n.body);
            after_barrier = false;
            true
        }
        Stmt::Break | Stmt::Continue => {
            after_barrier = false;
            true
        }
    });
    changed
}

/// `bar.sync 0` for every thread of the block, unguarded.
fn full_barrier(i: &Inst) -> bool {
    i.opc == Opc::Bar
        && i.guard.is_none()
        && i.mods.as_slice() == ["sync"]
        && matches!(i.srcs.as_slice(), [Operand::Imm(0)])
}

/// Whether `i` only reads and writes registers (warp shuffles and
/// `mma.sync` included): no memory, no synchronisation, no control flow.
fn registers_only(i: &Inst) -> bool {
    matches!(
        i.opc,
        Opc::Mov
            | Opc::Add
            | Opc::Sub
            | Opc::Mul
            | Opc::Mad
            | Opc::Fma
            | Opc::Div
            | Opc::Rem
            | Opc::Min
            | Opc::Max
            | Opc::Neg
            | Opc::Abs
            | Opc::And
            | Opc::Or
            | Opc::Xor
            | Opc::Not
            | Opc::Shl
            | Opc::Shr
            | Opc::Setp
            | Opc::Selp
            | Opc::Cvt
            | Opc::Rcp
            | Opc::Sqrt
            | Opc::Rsqrt
            | Opc::Ex2
            | Opc::Lg2
            | Opc::Sin
            | Opc::Cos
            | Opc::Tanh
            | Opc::Testp
            | Opc::Copysign
            | Opc::Brev
            | Opc::Clz
            | Opc::Popc
            | Opc::Bfe
            | Opc::Prmt
            | Opc::Mul24
            | Opc::Cnot
            | Opc::Shfl
            | Opc::Mma
            | Opc::Cvta
            | Opc::CvtPackE2m1x2
            | Opc::CvtUnpackE2m1x2
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::{Reg, RegClass, Ty};
    use smallvec::smallvec;

    fn bar() -> Stmt {
        Stmt::Inst(Box::new(Inst::new(
            Opc::Bar,
            &["sync"],
            &[],
            vec![],
            smallvec![Operand::Imm(0)],
        )))
    }

    fn add(d: u32) -> Stmt {
        let r = |id| Reg {
            class: RegClass::B32,
            id,
        };
        Stmt::Inst(Box::new(Inst::new(
            Opc::Add,
            &[],
            &[Ty::U32],
            smallvec![Operand::Reg(r(d))],
            smallvec![Operand::Reg(r(d + 1)), Operand::Imm(1)],
        )))
    }

    fn store() -> Stmt {
        let r = Reg {
            class: RegClass::B32,
            id: 9,
        };
        Stmt::Inst(Box::new(Inst::new(
            Opc::St,
            &["shared"],
            &[Ty::B32],
            vec![],
            smallvec![Operand::Addr(r, 0), Operand::Reg(r)],
        )))
    }

    fn barriers(body: &[Stmt]) -> usize {
        body.iter()
            .filter(|s| matches!(s, Stmt::Inst(i) if full_barrier(i)))
            .count()
    }

    #[test]
    fn a_barrier_after_register_work_alone_goes() {
        let mut body = vec![bar(), add(1), bar(), add(3), bar()];
        assert!(drop_repeated(&mut body));
        assert_eq!(barriers(&body), 1);
        assert_eq!(body.len(), 3);
    }

    #[test]
    fn a_memory_access_or_a_branch_between_keeps_both() {
        let mut body = vec![bar(), store(), bar()];
        assert!(!drop_repeated(&mut body));
        assert_eq!(barriers(&body), 2);
        let mut body = vec![bar(), Stmt::Continue, bar()];
        assert!(!drop_repeated(&mut body));
        assert_eq!(barriers(&body), 2);
    }
}
