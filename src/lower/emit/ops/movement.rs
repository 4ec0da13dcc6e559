//! Data movement between tiles: `permute`, `cat`, `extract` and `insert`,
//! each a write into a shared-memory buffer and a read in the result's
//! layout (see [`crate::lower::emit::ops::staging`]).
use crate::ir::{Attr, OpId, Opcode};
use crate::lower::analysis::values::value_tile;
use crate::lower::emit::context::Lowerer;
use crate::lower::error::LowerError;
use crate::ptx::{Opc, Operand, Ty};
use smallvec::smallvec;

use crate::lower::emit::ops::staging::{alloc, read, write, Placement};
use crate::lower::emit::ops::subbyte::{is_4bit, pack_unpack};

/// Offsets `index[i] * shape[i]` (u32) for `extract`/`insert` indices.
fn offsets(
    l: &mut Lowerer,
    id: OpId,
    index: &[crate::ir::ValueId],
    shape: &[i64],
) -> Result<Vec<Operand>, LowerError> {
    if index.len() != shape.len() {
        return Err(l.unsupported(id));
    }
    let mut out = Vec::new();
    for (v, &s) in index.iter().zip(shape) {
        let t = l.tile(id, *v)?;
        let r = t.regs[0];
        let r = if r.class == crate::ptx::RegClass::B64 {
            l.b.op(
                Opc::Cvt,
                &[],
                &[Ty::U32, Ty::U64],
                Ty::U32,
                smallvec![Operand::Reg(r)],
            )
        } else {
            r
        };
        out.push(Operand::Reg(l.b.op(
            Opc::Mul,
            &["lo"],
            &[Ty::S32],
            Ty::S32,
            smallvec![Operand::Reg(r), Operand::Imm(s)],
        )));
    }
    Ok(out)
}

/// Lowers the movement family.
pub fn lower(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let Some(&res) = op.results.first() else {
        return Err(l.unsupported(id));
    };
    let (rshape, elem) = value_tile(l.m, res).ok_or_else(|| l.unsupported(id))?;
    let layout = l.layout_of(res);
    let rank = rshape.len();
    let first = *op.operands.first().ok_or_else(|| l.unsupported(id))?;
    let src = l.tile(id, first)?;
    let out = match op.opcode {
        Opcode::Permute => {
            let Some(Attr::DenseI32(perm)) = op.attr("permutation") else {
                return Err(l.unsupported(id));
            };
            let buf = alloc(
                l,
                crate::lower::plan::buffers::What::Tile,
                &src.layout.shape,
                elem,
            )?;
            l.writes(buf.bytes());
            write(l, &src, &buf, &Placement::identity(rank));
            l.reads(buf.bytes());
            let place = Placement {
                dims: perm.iter().map(|&p| p as usize).collect(),
                offsets: vec![Operand::Imm(0); rank],
            };
            read(l, layout, elem, &buf, &place)
        }
        Opcode::Cat => {
            let dim = match op.attr("dim") {
                Some(Attr::Int(d)) => *d as usize,
                _ => return Err(l.unsupported(id)),
            };
            let rhs_v = *op.operands.get(1).ok_or_else(|| l.unsupported(id))?;
            let rhs = l.tile(id, rhs_v)?;
            let buf = alloc(l, crate::lower::plan::buffers::What::Tile, &rshape, elem)?;
            l.writes(buf.bytes());
            write(l, &src, &buf, &Placement::identity(rank));
            let mut place = Placement::identity(rank);
            place.offsets[dim] =
                Operand::Imm(*src.layout.shape.get(dim).ok_or_else(|| l.unsupported(id))?);
            write(l, &rhs, &buf, &place);
            l.reads(buf.bytes());
            read(l, layout, elem, &buf, &Placement::identity(rank))
        }
        Opcode::Pack | Opcode::Unpack if is_4bit(src.elem) || is_4bit(elem) => {
            pack_unpack(l, id, &src, res)?
        }
        Opcode::Pack | Opcode::Unpack => {
            // Reinterpret the bytes: row-major flat order, little-endian.
            let buf = alloc(
                l,
                crate::lower::plan::buffers::What::Tile,
                &src.layout.shape,
                src.elem,
            )?;
            l.writes(buf.bytes());
            write(l, &src, &buf, &Placement::identity(src.layout.shape.len()));
            l.reads(buf.bytes());
            let slot = match elem.bits() {
                0..=8 => 1,
                9..=16 => 2,
                17..=32 => 4,
                _ => 8,
            };
            if buf.slot * src.layout.shape.iter().product::<i64>()
                != slot * rshape.iter().product::<i64>()
            {
                return Err(l.unsupported_feature(id, "i1 elements"));
            }
            let view = crate::lower::emit::ops::staging::Buffer {
                offset: buf.offset,
                shape: rshape.clone(),
                slot,
            };
            read(l, layout, elem, &view, &Placement::identity(rank))
        }
        Opcode::Extract => {
            let index = op.operand_group("indices").to_vec();
            // One element at constant indices: a shuffle, when every warp
            // holds the source.
            if rshape.iter().all(|&n| n == 1) {
                let at: Option<Vec<i64>> = index
                    .iter()
                    .map(|&v| crate::lower::analysis::values::const_int(l.m, v))
                    .collect();
                if let Some(r) = at
                    .and_then(|at| crate::lower::emit::ops::shuffle_convert::element(l, &src, &at))
                {
                    let regs = vec![r; layout.num_registers()];
                    l.bind(
                        res,
                        crate::lower::emit::context::Tile { elem, layout, regs },
                    );
                    return Ok(());
                }
            }
            let offs = offsets(l, id, &index, &rshape)?;
            let buf = alloc(
                l,
                crate::lower::plan::buffers::What::Tile,
                &src.layout.shape,
                elem,
            )?;
            l.writes(buf.bytes());
            write(l, &src, &buf, &Placement::identity(rank));
            l.reads(buf.bytes());
            read(
                l,
                layout,
                elem,
                &buf,
                &Placement {
                    dims: (0..rank).collect(),
                    offsets: offs,
                },
            )
        }
        _ => {
            // insert: the source tile placed into the destination.
            let dst_v = op.operand("destination").ok_or_else(|| l.unsupported(id))?;
            let src_v = op.operand("source").ok_or_else(|| l.unsupported(id))?;
            let dst = l.tile(id, dst_v)?;
            let small = l.tile(id, src_v)?;
            let index = op.operand_group("indices").to_vec();
            let offs = offsets(l, id, &index, &small.layout.shape)?;
            let buf = alloc(l, crate::lower::plan::buffers::What::Tile, &rshape, elem)?;
            l.writes(buf.bytes());
            write(l, &dst, &buf, &Placement::identity(rank));
            l.writes(buf.bytes());
            write(
                l,
                &small,
                &buf,
                &Placement {
                    dims: (0..rank).collect(),
                    offsets: offs,
                },
            );
            l.reads(buf.bytes());
            read(l, layout, elem, &buf, &Placement::identity(rank))
        }
    };
    l.bind(res, out);
    Ok(())
}
