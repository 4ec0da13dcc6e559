//! Layout conversions by warp shuffles, where the plan's route allows them
//! ([`crate::lower::plan::layout::shuffle`]): each destination register is
//! one `shfl.sync.idx` from a lane computed from the thread id, with no
//! shared memory and no barrier.
use smallvec::smallvec;
use std::rc::Rc;

use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::plan::layout::shuffle::{self, route, Route};
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Opc, Operand, RegClass, Ty};

/// `t` in `layout` by warp shuffles, or `None` when the layouts do not
/// allow it (then the caller goes through shared memory).
pub fn convert(l: &mut Lowerer, t: &Tile, layout: &Rc<LinearLayout>) -> Option<Tile> {
    if t.regs.is_empty() || !t.regs.iter().all(|r| r.class == RegClass::B32) {
        return None;
    }
    let Route { deltas, picks } = route(&t.layout, layout)?;
    // The source lane of this thread, before each register's offset.
    let lane = l.thread_term(&deltas);
    let mut regs = Vec::with_capacity(picks.len());
    for (q, off) in picks {
        let from = match (lane, off) {
            (Some(x), 0) => Operand::Reg(x),
            (Some(x), o) => Operand::Reg(l.b.op(
                Opc::Xor,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(x), Operand::Imm(o)],
            )),
            (None, o) => Operand::Imm(o),
        };
        regs.push(l.b.op(
            Opc::Shfl,
            &["sync", "idx"],
            &[Ty::B32],
            Ty::B32,
            vec![
                Operand::Reg(t.regs[q]),
                from,
                Operand::Imm(31),
                Operand::Imm(-1),
            ],
        ));
    }
    Some(Tile {
        elem: t.elem,
        layout: layout.clone(),
        regs,
    })
}

/// The element of `t` at coordinates `at`, in every thread, by one
/// `shfl.sync.idx` a 32-bit word from the lane that holds it, or `None`
/// when some warp does not hold the whole tile (then the caller goes
/// through shared memory).
pub fn element(l: &mut Lowerer, t: &Tile, at: &[i64]) -> Option<crate::ptx::Reg> {
    if t.regs.is_empty() {
        return None;
    }
    let (reg, lane) = shuffle::element(&t.layout, at)?;
    let v = t.regs[reg];
    let shfl = |l: &mut Lowerer, w: crate::ptx::Reg| {
        l.b.op(
            Opc::Shfl,
            &["sync", "idx"],
            &[Ty::B32],
            Ty::B32,
            vec![
                Operand::Reg(w),
                Operand::Imm(lane),
                Operand::Imm(31),
                Operand::Imm(-1),
            ],
        )
    };
    match v.class {
        RegClass::B32 => Some(shfl(l, v)),
        RegClass::B64 => {
            let (lo, hi) = l.b.split(v);
            let (lo, hi) = (shfl(l, lo), shfl(l, hi));
            Some(l.b.join(lo, hi))
        }
        _ => None,
    }
}
