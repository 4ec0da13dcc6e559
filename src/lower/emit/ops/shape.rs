//! Constants, `iota`, `reshape` and `broadcast`. Reshape and broadcast
//! move no data: layout assignment gave their sources layouts whose
//! registers already hold the right elements.
use std::rc::Rc;

use crate::ir::{OpId, Opcode, ValueId};
use crate::lower::analysis::values::{constant_bits, value_tile, Elem};
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::conversions::source_layout;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Opc, Operand, Reg, Ty};
use smallvec::smallvec;

/// Largest non-splat constant lowered as a chain of selects.
const MAX_SELECT_TABLE: usize = 16;

/// The row-major flat index of each register's element (u32 registers):
/// the thread part from `%tid.x` bits xor the register part.
pub fn flat_index(l: &mut Lowerer, layout: &LinearLayout) -> Vec<Reg> {
    let shape = layout.shape.clone();
    let flat = |b: &Vec<i64>| crate::lower::plan::layout::linear::flatten(b, &shape);
    let values: Vec<i64> = layout.thread_bases().iter().map(flat).collect();
    let thread = l.thread_term(&values);
    let thread = match thread {
        Some(t) => t,
        None => l.b.op(
            Opc::Mov,
            &[],
            &[Ty::B32],
            Ty::B32,
            smallvec![Operand::Imm(0)],
        ),
    };
    (0..layout.num_registers())
        .map(|r| {
            let c = flat(&layout.apply(r, 0));
            l.b.op(
                Opc::Xor,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(thread), Operand::Imm(c)],
            )
        })
        .collect()
}

/// Lowers the shape family.
pub fn lower(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let Some(&res) = op.results.first() else {
        return Err(l.unsupported(id));
    };
    let (shape, elem) = value_tile(l.m, res).ok_or_else(|| l.unsupported(id))?;
    let layout = l.layout_of(res);
    match op.opcode {
        Opcode::Constant => constant(l, id, res, elem, layout),
        Opcode::Iota => iota(l, id, res, &shape, elem, layout),
        _ => reshape_or_broadcast(l, id, res, elem, layout),
    }
}

/// Lowers `constant` `id` into result `res` of element kind `elem` in
/// `layout`: a splat as one immediate, a small table as selects by flat
/// index, a larger one as loads from a module-scope table.
fn constant(
    l: &mut Lowerer,
    id: OpId,
    res: ValueId,
    elem: Elem,
    layout: Rc<LinearLayout>,
) -> Result<(), LowerError> {
    let bits = constant_bits(l.m, &l.m.ops[id]).ok_or_else(|| l.unsupported(id))?;
    let first = bits.first().copied().unwrap_or(0);
    let regs = if bits.iter().all(|&b| b == first) {
        let r = l.imm(elem, first);
        vec![r; layout.num_registers()]
    } else if elem.bits() == 1 && bits.len() <= MAX_SELECT_TABLE {
        bool_table(l, &bits, &layout)
    } else if bits.len() <= MAX_SELECT_TABLE {
        select_table(l, elem, &bits, &layout)
    } else {
        table_lookup(l, elem, &bits, &layout)
    };
    l.bind(res, Tile { elem, layout, regs });
    Ok(())
}

/// A small boolean table (predicates take no `selp`): for each register,
/// bit `idx` (its flat index) of the table as a mask.
fn bool_table(l: &mut Lowerer, bits: &[u64], layout: &LinearLayout) -> Vec<Reg> {
    let mask = bits
        .iter()
        .enumerate()
        .fold(0i64, |m, (k, &b)| m | (((b & 1) as i64) << k));
    flat_index(l, layout)
        .into_iter()
        .map(|idx| {
            let t = l.b.op(
                Opc::Shr,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Imm(mask), Operand::Reg(idx)],
            );
            let t = l.b.op(
                Opc::And,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(t), Operand::Imm(1)],
            );
            l.b.op(
                Opc::Setp,
                &["ne"],
                &[Ty::B32],
                Ty::Pred,
                smallvec![Operand::Reg(t), Operand::Imm(0)],
            )
        })
        .collect()
}

/// A small table of element kind `elem`: each register's element selected
/// by its flat index from a chain of `selp`.
fn select_table(l: &mut Lowerer, elem: Elem, bits: &[u64], layout: &LinearLayout) -> Vec<Reg> {
    let flat = flat_index(l, layout);
    let cls = crate::lower::emit::context::class_of(elem);
    let ty = Ty::from_bits(elem.bits().max(16));
    let mut regs = Vec::new();
    for idx in flat {
        let mut v = l.imm(elem, bits[0]);
        for (k, &b) in bits.iter().enumerate().skip(1) {
            let p = l.b.op(
                Opc::Setp,
                &["eq"],
                &[Ty::U32],
                Ty::Pred,
                smallvec![Operand::Reg(idx), Operand::Imm(k as i64)],
            );
            let c = l.imm(elem, b);
            let d = l.b.reg(cls);
            l.b.op_into(
                d,
                Opc::Selp,
                &[],
                &[ty],
                smallvec![Operand::Reg(c), Operand::Reg(v), Operand::Reg(p)],
            );
            v = d;
        }
        regs.push(v);
    }
    regs
}

/// Lowers `iota` `id` into result `res` of `shape` (one dimension) and
/// element kind `elem` in `layout`: each register's flat index.
fn iota(
    l: &mut Lowerer,
    id: OpId,
    res: ValueId,
    shape: &[i64],
    elem: Elem,
    layout: Rc<LinearLayout>,
) -> Result<(), LowerError> {
    let Elem::Num(s) = elem else {
        return Err(l.unsupported(id));
    };
    if shape.len() != 1 || !matches!(s.bit_width(), 1 | 8 | 16 | 32 | 64) {
        return Err(l.unsupported_feature(id, "this shape or type"));
    }
    let flat = flat_index(l, &layout);
    // The index in the element type: widened, truncated (i8 and
    // i16 live in 16-bit registers), or as a predicate (its low
    // bit: an i1 iota has at most two elements).
    let regs = flat
        .into_iter()
        .map(|r| match s.bit_width() {
            64 => l.b.op(
                Opc::Cvt,
                &[],
                &[Ty::U64, Ty::U32],
                Ty::U64,
                smallvec![Operand::Reg(r)],
            ),
            8 | 16 => l.b.op(
                Opc::Cvt,
                &[],
                &[Ty::U16, Ty::U32],
                Ty::U16,
                smallvec![Operand::Reg(r)],
            ),
            1 => {
                let low = l.b.op(
                    Opc::And,
                    &[],
                    &[Ty::B32],
                    Ty::B32,
                    smallvec![Operand::Reg(r), Operand::Imm(1)],
                );
                l.b.op(
                    Opc::Setp,
                    &["ne"],
                    &[Ty::B32],
                    Ty::Pred,
                    smallvec![Operand::Reg(low), Operand::Imm(0)],
                )
            }
            _ => r,
        })
        .collect();
    l.bind(res, Tile { elem, layout, regs });
    Ok(())
}

/// Lowers `reshape` or `broadcast` `id` into result `res` of element kind
/// `elem` in `layout`: in the layout derived from the result's (reshaped,
/// or collapsed along broadcast dimensions), source register r holds the
/// element result register r needs.
fn reshape_or_broadcast(
    l: &mut Lowerer,
    id: OpId,
    res: ValueId,
    elem: Elem,
    layout: Rc<LinearLayout>,
) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let Some(&src) = op.operands.first() else {
        return Err(l.unsupported(id));
    };
    let (src_shape, _) = value_tile(l.m, src).ok_or_else(|| l.unsupported(id))?;
    let derived = source_layout(op.opcode, &layout, &src_shape);
    let t = l.tile_in(id, src, &Rc::new(derived))?;
    let regs = if t.regs.len() == 1 {
        vec![t.regs[0]; layout.num_registers()]
    } else {
        t.regs
    };
    l.bind(res, Tile { elem, layout, regs });
    Ok(())
}

/// A constant with many distinct elements: a module-scope table of its
/// elements in row-major order, each thread loading its own elements by
/// flat index (`ld.global.nc`).
fn table_lookup(l: &mut Lowerer, elem: Elem, bits: &[u64], layout: &LinearLayout) -> Vec<Reg> {
    let width = (elem.bits() as usize).div_ceil(8);
    let mut bytes = Vec::with_capacity(bits.len() * width);
    for b in bits {
        bytes.extend_from_slice(&b.to_le_bytes()[..width]);
    }
    let name = l.bytes_symbol(bytes);
    let base = l.b.op(
        Opc::Mov,
        &[],
        &[Ty::U64],
        Ty::U64,
        smallvec![Operand::Global(name)],
    );
    // i1 elements are bytes in the table.
    let pred = elem.bits() == 1;
    let ty = if pred {
        Ty::B8
    } else {
        Ty::from_bits(elem.bits())
    };
    let flat = flat_index(l, layout);
    let mut regs = Vec::with_capacity(flat.len());
    for idx in flat {
        let off = l.b.op(
            Opc::Mul,
            &["wide"],
            &[Ty::U32],
            Ty::U64,
            smallvec![Operand::Reg(idx), Operand::Imm(width as i64)],
        );
        let addr = l.b.op(
            Opc::Add,
            &[],
            &[Ty::U64],
            Ty::U64,
            smallvec![Operand::Reg(base), Operand::Reg(off)],
        );
        let d = l.b.reg(crate::ptx::RegClass::for_bits(ty.bits().max(16)));
        l.b.push(crate::ptx::Inst::new(
            Opc::Ld,
            &["global", "nc"],
            &[ty],
            smallvec![Operand::Reg(d)],
            smallvec![Operand::Addr(addr, 0)],
        ));
        regs.push(if pred {
            l.b.op(
                Opc::Setp,
                &["ne"],
                &[Ty::B16],
                Ty::Pred,
                smallvec![Operand::Reg(d), Operand::Imm(0)],
            )
        } else {
            d
        });
    }
    regs
}
