//! Ops whose value is a special register or a symbol's address: the tile
//! block's id and the number of tile blocks (`get_tile_block_id`,
//! `get_num_tile_blocks`), and a global's address (`get_global`).
use smallvec::smallvec;
use std::rc::Rc;

use crate::ir::{Attr, OpId, Opcode, Scalar};
use crate::lower::analysis::values::Elem;
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Opc, Operand, Special, Ty};

/// Lowers `get_tile_block_id` or `get_num_tile_blocks` (op `id`): one i32
/// scalar per axis, read from the special register that counts tile blocks
/// (clusters where the target has them).
pub fn lower_block_ids(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let opcode = op.opcode;
    let results = op.results.clone();
    for (axis, r) in results.into_iter().enumerate() {
        let s = if opcode == Opcode::GetTileBlockId {
            if l.plan.target.has_clusters() {
                Special::ClusterId(axis as u8)
            } else {
                Special::CtaId(axis as u8)
            }
        } else if l.plan.cluster {
            // The grid counts tile blocks (clusters); `%nctaid`
            // counts every CTA of every cluster.
            Special::NClusterId(axis as u8)
        } else {
            Special::NCtaId(axis as u8)
        };
        let d = l.b.op(
            Opc::Mov,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Special(s)],
        );
        let layout = l.layout_of(r);
        l.bind(
            r,
            Tile {
                elem: Elem::Num(Scalar::I32),
                layout,
                regs: vec![d],
            },
        );
    }
    Ok(())
}

/// Lowers `get_global` (op `id`): the address of the named global, a
/// scalar pointer.
pub fn lower_global(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let (Some(Attr::String(name)), Some(&res)) = (op.attr("name"), op.results.first()) else {
        return Err(l.unsupported(id));
    };
    let d = l.b.op(
        Opc::Mov,
        &[],
        &[Ty::U64],
        Ty::U64,
        smallvec![Operand::Global(crate::ptx::names::ptx_name(name))],
    );
    l.bind(
        res,
        Tile {
            elem: Elem::Ptr,
            layout: Rc::new(LinearLayout::default_scalar()),
            regs: vec![d],
        },
    );
    Ok(())
}
