//! Structured control flow: `if` and `for` with their yielded values, and
//! the index-space queries loops are bounded by. Tile-valued results live
//! in variables (registers written by each branch or each iteration); the
//! `yield`/`continue` terminators copy into the innermost construct's
//! variables.
use crate::ir::{OpId, Opcode, Scalar};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::analysis::view::{partition, Extent};
use crate::lower::emit::context::{class_of, Lowered, Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::ptx::{Opc, Operand, Reg, RegClass, Ty};
use smallvec::smallvec;

/// The variables each enclosing `if`'s `yield` assigns, innermost last.
#[derive(Default)]
struct YieldTargets(Vec<Vec<Tile>>);

/// Fresh variables for result `v` in its assigned layout; none for a token
/// (it has no runtime form: carried through control flow, it is nothing).
fn variables(l: &mut Lowerer, id: OpId, v: crate::ir::ValueId) -> Result<Tile, LowerError> {
    if is_token(l.m, v) {
        return Ok(Tile {
            elem: Elem::Num(Scalar::I1),
            layout: l.layout_of(v),
            regs: Vec::new(),
        });
    }
    let (_, elem) =
        value_tile(l.m, v).ok_or_else(|| l.unsupported_feature(id, "non-tile results"))?;
    let layout = l.layout_of(v);
    let mut regs: Vec<Reg> = Vec::new();
    for r in 0..layout.num_registers() {
        let c = layout.canonical_register(r);
        let reg = if c == r {
            l.b.reg(class_of(elem))
        } else {
            regs[c]
        };
        regs.push(reg);
    }
    Ok(Tile { elem, layout, regs })
}

/// Whether `v` is a token.
fn is_token(m: &crate::ir::Module, v: crate::ir::ValueId) -> bool {
    matches!(
        m.values.try_get(v).and_then(|x| m.types.try_get(x.ty)),
        Some(crate::ir::Type::Token)
    )
}

/// Binds `v` to the variables `t` (a token to nothing).
fn bind_var(l: &mut Lowerer, v: crate::ir::ValueId, t: Tile) {
    if t.regs.is_empty() {
        l.vals.insert(v, Lowered::Nothing);
    } else {
        l.bind(v, t);
    }
}

/// Adds to `pairs` the copies of `v` (redistributed to `t`'s layout) into
/// the variables `t` (none for a token).
fn copies_into(
    l: &mut Lowerer,
    id: OpId,
    v: crate::ir::ValueId,
    t: &Tile,
    pairs: &mut Vec<(Reg, Reg)>,
) -> Result<(), LowerError> {
    if t.regs.is_empty() {
        return Ok(());
    }
    let s = l.tile_in(id, v, &t.layout)?;
    for r in 0..t.regs.len() {
        if t.layout.canonical_register(r) == r {
            pairs.push((t.regs[r], s.regs[r]));
        }
    }
    Ok(())
}

/// Copies `srcs` into `dsts` as one parallel assignment.
fn parallel_copy(l: &mut Lowerer, pairs: &[(Reg, Reg)]) {
    let clash = pairs.iter().any(|(_, s)| pairs.iter().any(|(d, _)| d == s));
    if clash {
        let temps: Vec<Reg> = pairs
            .iter()
            .map(|(_, s)| {
                let t = l.b.reg(s.class);
                l.b.copy(t, *s);
                t
            })
            .collect();
        for ((d, _), t) in pairs.iter().zip(temps) {
            l.b.copy(*d, t);
        }
    } else {
        for (d, s) in pairs {
            if d != s {
                l.b.copy(*d, *s);
            }
        }
    }
}

fn lower_region(l: &mut Lowerer, id: OpId, region: usize) -> Result<(), LowerError> {
    let ops = l.m.ops[id]
        .regions
        .get(region)
        .and_then(|r| r.blocks.first())
        .map(|b| b.ops.clone())
        .unwrap_or_default();
    // B tiles copied straight to shared memory start copying first.
    let (mut early, mut waiting) =
        crate::lower::emit::copies::direct::issue_early(l, &ops, None, None)?;
    for (i, &op) in ops.iter().enumerate() {
        if early.contains(&op) {
            continue;
        }
        l.lower_op(op)?;
        // A product frees its B buffer once read: the copies that did not
        // fit before start now, over it, rather than where they stand
        // (attention's V during the softmax after Q·Kᵀ).
        if !waiting.is_empty() && crate::lower::analysis::chains::is_mma(l.m.ops[op].opcode) {
            let rest = &ops[i + 1..];
            let (issued, left) =
                crate::lower::emit::copies::direct::issue_early(l, rest, Some(&waiting), Some(op))?;
            early.extend(issued);
            waiting = left;
        }
    }
    Ok(())
}

/// Lowers `yield` (of an `if`), `continue` and `break`: copies into the
/// construct's variables, then jumps where a `loop` needs it.
pub fn lower_yield(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let opcode = l.m.ops[id].opcode;
    let (targets, jump) = match opcode {
        Opcode::Yield => (
            l.states
                .get::<YieldTargets>()
                .0
                .last()
                .cloned()
                .ok_or_else(|| l.unsupported(id))?,
            None,
        ),
        _ => {
            let ctx = l.loops.last().cloned().ok_or_else(|| l.unsupported(id))?;
            if !ctx.general && (opcode == Opcode::Break || l.if_depth != ctx.if_depth) {
                return Err(l.unsupported_feature(id, "an early exit from a 'for'"));
            }
            let t = if opcode == Opcode::Break {
                ctx.results
            } else {
                ctx.iter
            };
            (t, ctx.general.then_some(opcode))
        }
    };
    copy_into(l, id, &targets)?;
    match jump {
        Some(Opcode::Break) => l.b.brk(),
        Some(_) => l.b.cont(),
        None => {}
    }
    Ok(())
}

fn copy_into(l: &mut Lowerer, id: OpId, targets: &[Tile]) -> Result<(), LowerError> {
    let operands = l.m.ops[id].operands.clone();
    if operands.len() != targets.len() {
        return Err(l.unsupported(id));
    }
    let mut pairs = Vec::new();
    for (v, t) in operands.iter().zip(targets) {
        copies_into(l, id, *v, t, &mut pairs)?;
    }
    parallel_copy(l, &pairs);
    Ok(())
}

/// Lowers `if` (its condition is a 0-d `i1`, the same in every thread).
pub fn lower_if(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let cond = op.operand("condition").ok_or_else(|| l.unsupported(id))?;
    let c = l.tile(id, cond)?.regs[0];
    let vars = op
        .results
        .iter()
        .map(|&r| variables(l, id, r))
        .collect::<Result<Vec<_>, _>>()?;
    l.states.get::<YieldTargets>().0.push(vars.clone());
    l.if_depth += 1;
    l.b.begin_uniform_if(c, true);
    lower_region(l, id, 0)?;
    if op.regions.len() > 1 {
        l.b.begin_else();
        lower_region(l, id, 1)?;
    }
    l.b.end_if();
    l.if_depth -= 1;
    l.states.get::<YieldTargets>().0.pop();
    for (&r, t) in op.results.iter().zip(vars) {
        bind_var(l, r, t);
    }
    Ok(())
}

/// Lowers `for lb to ub step s` with loop-carried values.
pub fn lower_for(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    if crate::lower::emit::ops::wgmma_pipeline::lower_for(l, id)?
        || crate::lower::emit::ops::mma_sync_tma::lower_for(l, id)?
        || crate::lower::emit::ops::mma_sync_pipeline::lower_for(l, id)?
    {
        return Ok(());
    }
    let op = &l.m.ops[id];
    let Some((lb, ub, step)) = op.for_bounds() else {
        return Err(l.unsupported(id));
    };
    let bound = l.tile(id, lb)?;
    let unsigned = op.has_flag("unsignedCmp");
    // i1, i8 and i16 loops count in i32: the range is the mathematical
    // one, `lb + k * step < ub`, with no wrap-around of the narrow type.
    let (ity, narrow) = match bound.elem {
        Elem::Num(Scalar::I64) => (Ty::S64, None),
        Elem::Num(Scalar::I32) => (Ty::S32, None),
        Elem::Num(s @ (Scalar::I16 | Scalar::I8 | Scalar::I1)) => (Ty::S32, Some(s)),
        _ => return Err(l.unsupported_feature(id, "a non-integer induction variable")),
    };
    let cmp_ty = crate::lower::emit::copies::ring::compare_type(ity, unsigned);
    let wide = |l: &mut Lowerer, r: Reg| match narrow {
        Some(s) => widen_bound(l, r, s, !unsigned),
        None => r,
    };
    let ub = l.tile(id, ub)?.regs[0];
    let ub = wide(l, ub);
    let step = l.tile(id, step)?.regs[0];
    let step = wide(l, step);
    let iv = l.b.reg(RegClass::for_bits(ity.bits()));
    let first = wide(l, bound.regs[0]);
    l.b.copy(iv, first);
    // The body sees the induction variable in its own type.
    let body_iv = match narrow {
        Some(_) => l.b.reg(class_of(bound.elem)),
        None => iv,
    };
    let vars = op
        .results
        .iter()
        .map(|&r| variables(l, id, r))
        .collect::<Result<Vec<_>, _>>()?;
    let inits = op.operand_group("initValues").to_vec();
    let mut pairs = Vec::new();
    for (v, t) in inits.iter().zip(&vars) {
        copies_into(l, id, *v, t, &mut pairs)?;
    }
    parallel_copy(l, &pairs);
    let split = crate::lower::analysis::chains::split_result(l.m, id, l.plan.warps);
    if let Some(s) = split.filter(|s| s.zero_second_half) {
        crate::lower::emit::ops::mma_split_sum::zero_second_half(l, id, &vars[s.slot])?;
    }
    let args = op
        .regions
        .first()
        .and_then(|r| r.blocks.first())
        .map(|b| b.args.clone())
        .unwrap_or_default();
    if let Some(&a) = args.first() {
        l.bind(
            a,
            Tile {
                elem: bound.elem,
                layout: bound.layout.clone(),
                regs: vec![body_iv],
            },
        );
    }
    for (&a, t) in args.iter().skip(1).zip(&vars) {
        bind_var(l, a, t.clone());
    }
    // A `continue` inside an `if` jumps back to the header, so the header
    // advances the induction variable: `iv = next; next = iv + step`.
    let early = crate::lower::analysis::memory::early_continue(l.m, id);
    // The first iteration's B tiles start copying before the loop.
    let prefetched = match args.first() {
        Some(&a) if !early && narrow.is_none() => {
            crate::lower::emit::copies::direct::prefetch(l, id, a, step, ity)?
        }
        _ => Vec::new(),
    };
    let next = early.then(|| {
        let n = l.b.reg(RegClass::for_bits(ity.bits()));
        l.b.copy(n, iv);
        n
    });
    l.b.begin_uniform_loop();
    if let Some(n) = next {
        l.b.copy(iv, n);
        l.b.op_into(
            n,
            Opc::Add,
            &[],
            &[ity],
            smallvec![Operand::Reg(iv), Operand::Reg(step)],
        );
    }
    let p = l.b.op(
        Opc::Setp,
        &["lt"],
        &[cmp_ty],
        Ty::Pred,
        smallvec![Operand::Reg(iv), Operand::Reg(ub)],
    );
    l.b.begin_loop_body(p, true);
    if let Some(s) = narrow {
        narrow_iv(l, body_iv, iv, s);
    }
    l.loops.push(crate::lower::emit::context::LoopCtx {
        general: early,
        iter: vars.clone(),
        results: Vec::new(),
        if_depth: l.if_depth,
    });
    lower_region(l, id, 0)?;
    crate::lower::emit::copies::direct::issue_next(l)?;
    l.loops.pop();
    if !early {
        l.b.op_into(
            iv,
            Opc::Add,
            &[],
            &[ity],
            smallvec![Operand::Reg(iv), Operand::Reg(step)],
        );
    }
    l.b.end_loop();
    crate::lower::emit::copies::direct::drain(l, &prefetched);
    let mut vars = vars;
    if let Some(s) = split.filter(|s| s.sum_after) {
        vars[s.slot] = crate::lower::emit::ops::mma_split_sum::sum_pairs(l, id, &vars[s.slot])?;
    }
    for (&r, t) in op.results.iter().zip(vars) {
        bind_var(l, r, t);
    }
    Ok(())
}

/// The i32 value of the bound `r` of a narrow (`s`: i1, i8 or i16) loop,
/// sign- or zero-extended as the loop compares.
fn widen_bound(l: &mut Lowerer, r: Reg, s: Scalar, signed: bool) -> Reg {
    if s == Scalar::I1 {
        let one = if signed { -1 } else { 1 };
        return l.b.op(
            Opc::Selp,
            &[],
            &[Ty::S32],
            Ty::S32,
            smallvec![Operand::Imm(one), Operand::Imm(0), Operand::Reg(r)],
        );
    }
    let from = match (s, signed) {
        (Scalar::I8, true) => Ty::S8,
        (Scalar::I8, false) => Ty::U8,
        (_, true) => Ty::S16,
        _ => Ty::U16,
    };
    let to = if signed { Ty::S32 } else { Ty::U32 };
    l.b.op(Opc::Cvt, &[], &[to, from], to, smallvec![Operand::Reg(r)])
}

/// Defines `dst`, the induction variable of a narrow loop in its type `s`,
/// from its i32 counter `iv` (truncation; an i1 is `iv != 0`).
fn narrow_iv(l: &mut Lowerer, dst: Reg, iv: Reg, s: Scalar) {
    if s == Scalar::I1 {
        l.b.op_into(
            dst,
            Opc::Setp,
            &["ne"],
            &[Ty::S32],
            smallvec![Operand::Reg(iv), Operand::Imm(0)],
        );
    } else {
        l.b.op_into(
            dst,
            Opc::Cvt,
            &[],
            &[Ty::U16, Ty::U32],
            smallvec![Operand::Reg(iv)],
        );
    }
}

/// Lowers `get_index_space_shape`: tiles per dimension of a partition view,
/// `ceil(extent / tile)`.
pub fn lower_index_space_shape(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let src = op.operand("src").ok_or_else(|| l.unsupported(id))?;
    let p = partition(l.m, src)
        .ok_or_else(|| l.unsupported_feature(id, "a view other than a partition view"))?;
    for (i, &res) in op.results.iter().enumerate() {
        let (_, elem) = value_tile(l.m, res).ok_or_else(|| l.unsupported(id))?;
        let tile = *p.tile_shape.get(i).ok_or_else(|| l.unsupported(id))?;
        let d = p.dim_map[i];
        let wide = elem == Elem::Num(Scalar::I64);
        let (uty, bty) = if wide {
            (Ty::U64, Ty::B64)
        } else {
            (Ty::U32, Ty::B32)
        };
        let reg = match p.shape[d] {
            Extent::Static(n) => l.imm(elem, ((n + tile - 1) / tile) as u64),
            Extent::Dynamic(v) if !is_word(l.tile(id, v)?.elem) || !is_word(elem) => {
                // i8 or i16 somewhere: in 64 bits, then to the result type.
                let t = l.tile(id, v)?;
                let from = match t.elem.bits() {
                    8 => Ty::U8,
                    16 => Ty::U16,
                    32 => Ty::U32,
                    _ => Ty::U64,
                };
                let mut x = t.regs[0];
                if from != Ty::U64 {
                    x = l.b.op(
                        Opc::Cvt,
                        &[],
                        &[Ty::U64, from],
                        Ty::U64,
                        smallvec![Operand::Reg(x)],
                    );
                }
                let up = l.b.op(
                    Opc::Add,
                    &[],
                    &[Ty::U64],
                    Ty::U64,
                    smallvec![Operand::Reg(x), Operand::Imm(tile - 1)],
                );
                let q = l.b.op(
                    Opc::Shr,
                    &[],
                    &[Ty::U64],
                    Ty::B64,
                    smallvec![
                        Operand::Reg(up),
                        Operand::Imm(i64::from(tile.trailing_zeros()))
                    ],
                );
                match elem.bits() {
                    64 => q,
                    32 => l.b.op(
                        Opc::Cvt,
                        &[],
                        &[Ty::U32, Ty::U64],
                        Ty::U32,
                        smallvec![Operand::Reg(q)],
                    ),
                    _ => l.b.op(
                        Opc::Cvt,
                        &[],
                        &[Ty::U16, Ty::U64],
                        Ty::U16,
                        smallvec![Operand::Reg(q)],
                    ),
                }
            }
            Extent::Dynamic(v) => {
                let t = l.tile(id, v)?;
                let mut x = t.regs[0];
                if wide && t.elem != elem {
                    x = l.b.op(
                        Opc::Cvt,
                        &[],
                        &[Ty::U64, Ty::U32],
                        Ty::U64,
                        smallvec![Operand::Reg(x)],
                    );
                } else if !wide && t.elem != elem {
                    x = l.b.op(
                        Opc::Cvt,
                        &[],
                        &[Ty::U32, Ty::U64],
                        Ty::U32,
                        smallvec![Operand::Reg(x)],
                    );
                }
                let up = l.b.op(
                    Opc::Add,
                    &[],
                    &[uty],
                    uty,
                    smallvec![Operand::Reg(x), Operand::Imm(tile - 1)],
                );
                l.b.op(
                    Opc::Shr,
                    &[],
                    &[uty],
                    bty,
                    vec![
                        Operand::Reg(up),
                        Operand::Imm(i64::from(tile.trailing_zeros())),
                    ],
                )
            }
        };
        let layout = l.layout_of(res);
        l.bind(
            res,
            Tile {
                elem,
                layout,
                regs: vec![reg],
            },
        );
    }
    Ok(())
}

/// Whether `e` is an i32 or i64.
fn is_word(e: Elem) -> bool {
    matches!(e, Elem::Num(Scalar::I32 | Scalar::I64))
}

/// Lowers `get_tensor_shape`: each dimension of the tensor view, static or
/// the operand `make_tensor_view` took, as the (unsigned) result type.
pub fn lower_tensor_shape(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let src = op.operand("src").ok_or_else(|| l.unsupported(id))?;
    let top = crate::lower::analysis::view::def_op(l.m, src)
        .map(|t| &l.m.ops[t])
        .filter(|t| t.opcode == Opcode::MakeTensorView)
        .ok_or_else(|| l.unsupported_feature(id, "a tensor view not made by make_tensor_view"))?;
    let Some(crate::ir::Type::TensorView { shape, .. }) = l.m.types.try_get(l.m.values[src].ty)
    else {
        return Err(l.unsupported(id));
    };
    let mut dynamic = top.operand_group("dynamicShape").iter().copied();
    let shape = shape.clone();
    for (&res, &dim) in op.results.iter().zip(&shape) {
        let (_, elem) = value_tile(l.m, res).ok_or_else(|| l.unsupported(id))?;
        let to = elem.bits();
        let reg = if dim == crate::ir::DYNAMIC {
            let v = dynamic.next().ok_or_else(|| l.unsupported(id))?;
            let t = l.tile(id, v)?;
            let from = t.elem.bits();
            if from == to {
                t.regs[0]
            } else {
                let uint = |bits: u32| match bits {
                    0..=8 => Ty::U8,
                    9..=16 => Ty::U16,
                    17..=32 => Ty::U32,
                    _ => Ty::U64,
                };
                let (dt, st) = (uint(to), uint(from));
                let d = l.b.reg(crate::lower::emit::context::class_of(elem));
                l.b.op_into(
                    d,
                    Opc::Cvt,
                    &[],
                    &[dt, st],
                    smallvec![Operand::Reg(t.regs[0])],
                );
                d
            }
        } else {
            let mask = if to >= 64 { u64::MAX } else { (1u64 << to) - 1 };
            l.imm(elem, (dim as u64) & mask)
        };
        let layout = l.layout_of(res);
        l.bind(
            res,
            Tile {
                elem,
                layout,
                regs: vec![reg],
            },
        );
    }
    Ok(())
}

/// Lowers `loop`: runs its body until a `break`; `continue` starts the
/// next iteration with new loop-carried values.
pub fn lower_loop(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let args = op
        .regions
        .first()
        .and_then(|r| r.blocks.first())
        .map(|b| b.args.clone())
        .unwrap_or_default();
    let iter = args
        .iter()
        .map(|&a| variables(l, id, a))
        .collect::<Result<Vec<_>, _>>()?;
    let results = op
        .results
        .iter()
        .map(|&r| variables(l, id, r))
        .collect::<Result<Vec<_>, _>>()?;
    let inits = op.operand_group("initValues").to_vec();
    let mut pairs = Vec::new();
    for (v, t) in inits.iter().zip(&iter) {
        copies_into(l, id, *v, t, &mut pairs)?;
    }
    parallel_copy(l, &pairs);
    for (&a, t) in args.iter().zip(&iter) {
        bind_var(l, a, t.clone());
    }
    l.b.begin_uniform_loop();
    let go = l.b.op(
        Opc::Mov,
        &[],
        &[Ty::Pred],
        Ty::Pred,
        smallvec![Operand::Imm(1)],
    );
    l.b.begin_loop_body(go, true);
    l.loops.push(crate::lower::emit::context::LoopCtx {
        general: true,
        iter,
        results: results.clone(),
        if_depth: l.if_depth,
    });
    lower_region(l, id, 0)?;
    l.loops.pop();
    l.b.end_loop();
    for (&r, t) in op.results.iter().zip(results) {
        bind_var(l, r, t);
    }
    Ok(())
}
