//! Lowers one entry function: binds parameters, walks the body op by op
//! (each op family in [`crate::lower::emit::ops`]) and produces the PTX entry.
use smallvec::smallvec;
use std::rc::Rc;

use crate::ir::{Module, OpId, Scalar, Type};
use crate::lower::analysis::values::{elem_of, Elem};
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::emit::scratch::ScratchMap;
use crate::lower::error::LowerError;
use crate::lower::plan::layout::LinearLayout;
use crate::lower::plan::Plan;
use crate::lower::simt::{emit::emit, opt::optimize};
use crate::options::Options;
use crate::ptx::{self, Inst, Opc, Operand, ParamTy, RegClass, Ty};

/// The PTX parameter type of an entry argument of element kind `e`.
fn param_ty(e: Elem) -> ParamTy {
    match e {
        Elem::Ptr => ParamTy::GlobalPtr,
        Elem::Num(s) => ParamTy::Scalar(match s {
            Scalar::I64 => Ty::U64,
            Scalar::F32 => Ty::F32,
            Scalar::F64 => Ty::F64,
            Scalar::F16 | Scalar::BF16 | Scalar::I16 => Ty::B16,
            Scalar::I8 | Scalar::I1 => Ty::U8,
            _ => Ty::U32,
        }),
    }
}

/// Fails where the plan does not place the entry's buffers: emission
/// follows its placement and has none to follow.
fn has_placement(m: &Module, entry: OpId, plan: &Plan) -> Result<(), LowerError> {
    let Err(u) = &plan.placement else {
        return Ok(());
    };
    let by = u.op.map_or_else(
        || "the entry".to_string(),
        |o| format!("'{}' op", m.ops[o].name()),
    );
    Err(LowerError::Failed {
        message: format!(
            "the plan places no shared memory of the entry: {}, for {by}",
            u.why
        ),
        location: u
            .op
            .and_then(|o| m.location(o))
            .or_else(|| m.location(entry)),
    })
}

/// Fails where entry `entry` claimed fewer buffers than the plan placed.
fn all_claimed(l: &Lowerer, entry: OpId) -> Result<(), LowerError> {
    let placed = l.plan.placement.as_ref().map_or(0, |p| p.claims.len());
    if placed == l.scratch.claims() {
        return Ok(());
    }
    Err(LowerError::Failed {
        message: format!(
            "{} buffers claimed, where the plan places {placed}",
            l.scratch.claims()
        ),
        location: l.m.location(entry),
    })
}

/// Declares the entry's visible parameters (one per argument of its block)
/// and loads each into the value of its argument.
fn load_params(
    l: &mut Lowerer,
    entry: OpId,
    args: &[crate::ir::ValueId],
    name: &str,
) -> Result<Vec<ptx::Param>, LowerError> {
    let m = l.m;
    let mut params = Vec::new();
    l.visible_params = args.len();
    for (i, &arg) in args.iter().enumerate() {
        let pname = format!("{name}_param_{i}");
        let elem = match m.types.try_get(m.values[arg].ty) {
            Some(Type::Tile { element, shape }) if shape.is_empty() => elem_of(m, *element),
            _ => None,
        };
        let Some(elem) = elem else {
            return Err(LowerError::Unsupported {
                what: "entry argument of a non-scalar type".into(),
                location: m.location(entry),
            });
        };
        let pty = param_ty(elem);
        params.push(ptx::Param {
            name: pname.clone(),
            ty: pty,
        });
        let load_ty = match pty {
            ParamTy::GlobalPtr => Ty::B64,
            ParamTy::Scalar(t) => Ty::from_bits(t.bits()),
            ParamTy::TensorMap => unreachable!("visible parameters are pointers and scalars"),
        };
        let d = l.b.reg(RegClass::for_bits(load_ty.bits().max(16)));
        l.b.push(Inst::new(
            Opc::Ld,
            &["param"],
            &[load_ty],
            smallvec![Operand::Reg(d)],
            smallvec![Operand::Param(pname)],
        ));
        let d = if elem.bits() == 1 {
            // An i1 parameter arrives as a byte.
            l.b.op(
                Opc::Setp,
                &["ne"],
                &[Ty::B16],
                Ty::Pred,
                smallvec![Operand::Reg(d), Operand::Imm(0)],
            )
        } else {
            d
        };
        l.bind(
            arg,
            Tile {
                elem,
                layout: Rc::new(LinearLayout::default_scalar()),
                regs: vec![d],
            },
        );
    }
    Ok(params)
}

/// Lowers the entry op `entry` to a PTX entry. With `files` (line info
/// builds), instructions carry the source position of the op they come
/// from, and the files named are appended to `files`.
///
/// Shared-memory scratch is claimed where the plan placed it
/// ([`crate::lower::emit::scratch`]), and what an op takes by the room
/// left is the plan's choice ([`crate::lower::plan::alloc::choices`]); an
/// entry whose buffers the plan does not place is an internal error.
pub fn lower_entry<'m>(
    m: &'m Module,
    entry: OpId,
    plan: &'m Plan,
    options: &Options,
    files: Option<&'m mut Vec<String>>,
) -> Result<(ptx::Entry, ScratchMap), LowerError> {
    let block = crate::lower::plan::entry_block(m, entry)?;
    has_placement(m, entry, plan)?;
    let name = plan.name.clone();
    let warps = plan.warps;
    let mut l = Lowerer::new(m, plan, crate::lower::emit::ops::lower_op, files);
    // The prologue sits at the function's scope line, as NVIDIA's does.
    let start = m.scope_location(entry).or_else(|| m.location(entry));
    l.set_position(start);
    let decl = l.b.loc;

    let mut params = load_params(&mut l, entry, &block.args, &name)?;

    // Read %tid.x up front: the register must dominate every use, even
    // when the first use is inside a branch or loop (DCE drops it if unused).
    l.tid();
    // A tile block of several CTAs (a cluster): the first CTA does the
    // tile block's work and the others have none.
    let cluster = plan.cluster;
    if cluster {
        let rank = l.b.op(
            Opc::Mov,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Special(crate::ptx::Special::ClusterCtaRank)],
        );
        let first = l.b.op(
            Opc::Setp,
            &["eq"],
            &[Ty::U32],
            Ty::Pred,
            smallvec![Operand::Reg(rank), Operand::Imm(0)],
        );
        l.b.begin_uniform_if(first, true);
    }
    crate::lower::emit::ops::alloca::hoist_nested(&mut l, &block.ops)?;
    for &id in &block.ops {
        l.lower_op(id)?;
    }
    crate::lower::emit::ops::alloca::free_all(&mut l);
    all_claimed(&l, entry)?;
    if cluster {
        l.b.end_if();
    }
    if let Some(&ret) = block
        .ops
        .iter()
        .rev()
        .find(|&&o| m.ops[o].opcode == crate::ir::Opcode::Return)
    {
        l.set_loc(ret);
    }
    l.b.push(Inst::new(Opc::Ret, &[], &[], vec![], vec![]));
    let reqntid = warps * 32;
    let local_bytes = super::ops::debug::local_bytes(&l);
    // the tensor maps, hidden parameters after the visible ones
    let tensor_maps = std::mem::take(&mut l.tensor_maps);
    for d in &tensor_maps {
        params.push(ptx::Param {
            name: format!("{name}_param_{}", d.map),
            ty: ParamTy::TensorMap,
        });
    }
    if l.b.misplaced {
        return Err(LowerError::Failed {
            message: "a shared-memory access declared under an `if` some threads skip, \
                      where the barrier it may need would not be reached by all"
                .into(),
            location: l.m.location(entry),
        });
    }
    let mut f = l.b.finish();
    f.threads = reqntid;
    let barriers = crate::lower::simt::membar::place(&mut f.body);
    optimize(&mut f, options.opt_level);
    let (body, reg_counts) = emit(f);
    let bytes = (plan.placement.as_ref()).map_or(0, |a| a.bytes);
    let scratch = l.scratch.map(&name, bytes, barriers);
    let entry = ptx::Entry {
        name,
        params,
        reqntid,
        launch: Box::default(),
        reg_counts,
        shared_bytes: u32::try_from(bytes).unwrap_or(u32::MAX),
        acc_regs: plan.acc_regs,
        local_bytes,
        strings: l.strings,
        body,
        decl,
        tensor_maps,
    };
    Ok((entry, scratch))
}
