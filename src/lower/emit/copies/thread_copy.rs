//! Operands of a TMA-fed ring that TMA cannot copy (their rows are not in
//! 16-byte units, as an odd stride leaves them): every thread loads its
//! part of a slice of the iteration's tile into registers (`ld.global`,
//! elements outside the tensor zero) and stores it into the operand's
//! swizzled layout in the stage, up to 16 bytes a store, slice after
//! slice (the plan's [`ThreadCopy`]), so that the registers a slice takes
//! stay few beside the accumulator. The ring's full barrier then counts
//! every thread's arrival beside the TMA's bytes.
use std::rc::Rc;

use crate::ir::ValueId;
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::emit::copies::address::bin;
use crate::lower::emit::copies::swizzled::write;
use crate::lower::emit::ops::memory::read_at;
use crate::lower::emit::ops::view_access::prepare;
use crate::lower::error::LowerError;
use crate::lower::plan::copies::load::Load;
use crate::lower::plan::copies::thread_copy::ThreadCopy;
use crate::lower::plan::layout::smem::Smem;
use crate::ptx::{Opc, Operand, Reg, Ty};

/// One operand the threads copy.
struct ThreadOperand {
    /// Its load.
    load: Load,
    /// Its slices.
    copy: ThreadCopy,
    /// Its swizzled layout in the stage.
    smem: Smem,
    /// Whether the tile is `[k, mn]`.
    k_first: bool,
    /// Byte offset of its buffer in a stage (1024-aligned).
    at: i64,
}

/// The operands of a ring the threads copy.
pub(crate) struct ThreadStage {
    operands: Vec<ThreadOperand>,
    /// The induction variable, and its tile at the lower bound (whose
    /// type and layout each iteration's value takes).
    iv: (ValueId, Tile),
}

impl ThreadStage {
    /// The copies of `loads` (each with its slices, its swizzled layout,
    /// whether its tile is `[k, mn]`, and its buffer's byte offset in a
    /// stage), indexed by the induction variable `iv` (`lb` its tile at
    /// the lower bound).
    pub(crate) fn new(
        loads: &[(&Load, &ThreadCopy, Smem, bool, i64)],
        iv: ValueId,
        lb: &Tile,
    ) -> ThreadStage {
        let operands = loads
            .iter()
            .map(|&(load, copy, smem, k_first, at)| ThreadOperand {
                load: load.clone(),
                copy: copy.clone(),
                smem,
                k_first,
                at,
            })
            .collect();
        ThreadStage {
            operands,
            iv: (iv, lb.clone()),
        }
    }

    /// Copies the tiles of iteration `iteration` (the induction value)
    /// into the stage at shared address `stage`. Run by every thread.
    pub(crate) fn issue(
        &self,
        l: &mut Lowerer,
        stage: Reg,
        iteration: Reg,
    ) -> Result<(), LowerError> {
        let (iv, lb) = &self.iv;
        let before = l.vals.remove(iv);
        l.bind(
            *iv,
            Tile {
                regs: vec![iteration],
                ..lb.clone()
            },
        );
        let copied = (self.operands.iter()).try_for_each(|o| o.issue(l, stage));
        l.vals.remove(iv);
        if let Some(v) = before {
            l.vals.insert(*iv, v);
        }
        copied
    }
}

impl ThreadOperand {
    /// Copies the operand's tile (its load's index as bound now) into the
    /// stage at shared address `stage`, slice after slice.
    fn issue(&self, l: &mut Lowerer, stage: Reg) -> Result<(), LowerError> {
        let (ld, c) = (&self.load, &self.copy);
        let rank = ld.view.tile_shape.len();
        let d = rank - 2;
        let mut part = ld.view.clone();
        part.tile_shape[d] = c.rows;
        let mut a = prepare(l, ld.op, &part, &ld.index, &c.layout)?;
        let step = a.step(l, d, c.rows);
        let two = Rc::new(c.layout.reshape(&part.tile_shape[d..]));
        let base = bin(l, Opc::Add, Ty::U32, stage, Operand::Imm(self.at));
        for (s, &shift) in c.shifts.iter().enumerate() {
            if s > 0 {
                a.advance(l, d, c.rows, step);
            }
            let regs = read_at(l, ld.op, &part, &c.layout, &mut a, &[])?;
            let tile = Tile {
                elem: part.elem,
                layout: two.clone(),
                regs,
            };
            let at = bin(l, Opc::Add, Ty::U32, base, Operand::Imm(shift));
            write(l, &tile, &self.smem, self.k_first, at);
        }
        Ok(())
    }
}
