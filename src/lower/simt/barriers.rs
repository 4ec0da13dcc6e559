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
use smallvec::smallvec;

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
            } else if !i.opc.registers_only() {
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
        Stmt::Break | Stmt::Continue | Stmt::Shared(_) => {
            after_barrier = false;
            true
        }
    });
    changed
}

/// `bar.sync 0`: every thread of the block waits for the others.
pub fn barrier() -> Inst {
    Inst::new(Opc::Bar, &["sync"], &[], vec![], smallvec![Operand::Imm(0)])
}

/// `bar.sync 0` for every thread of the block, unguarded.
pub(super) fn full_barrier(i: &Inst) -> bool {
    i.opc == Opc::Bar
        && i.guard.is_none()
        && i.mods.as_slice() == ["sync"]
        && matches!(i.srcs.as_slice(), [Operand::Imm(0)])
}

#[cfg(test)]
mod tests {
    use crate::lower::simt::barriers::*;
    use crate::lower::simt::Builder;
    use crate::ptx::{RegClass, Ty};
    use smallvec::smallvec;

    fn bar(b: &mut Builder) {
        b.push(barrier());
    }

    fn add_one(b: &mut Builder) {
        let t = b.tid_x();
        b.op(
            Opc::Add,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Reg(t), Operand::Imm(1)],
        );
    }

    fn store(b: &mut Builder) {
        let t = b.tid_x();
        b.push(Inst::new(
            Opc::St,
            &["shared"],
            &[Ty::B32],
            vec![],
            smallvec![Operand::Addr(t, 0), Operand::Reg(t)],
        ));
    }

    fn barriers(body: &[Stmt]) -> usize {
        body.iter()
            .filter(|s| matches!(s, Stmt::Inst(i) if full_barrier(i)))
            .count()
    }

    #[test]
    fn a_barrier_after_register_work_alone_goes() {
        let mut b = Builder::new();
        bar(&mut b);
        add_one(&mut b);
        bar(&mut b);
        add_one(&mut b);
        bar(&mut b);
        let mut f = b.finish();
        assert!(drop_repeated(&mut f.body));
        assert_eq!(barriers(&f.body), 1);
    }

    #[test]
    fn a_memory_access_or_a_branch_between_keeps_both() {
        let mut b = Builder::new();
        bar(&mut b);
        store(&mut b);
        bar(&mut b);
        let p = b.reg(RegClass::Pred);
        b.begin_if(p, true);
        add_one(&mut b);
        b.end_if();
        bar(&mut b);
        let mut f = b.finish();
        assert!(!drop_repeated(&mut f.body));
        assert_eq!(barriers(&f.body), 3);
    }
}
