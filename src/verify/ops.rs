//! Per-op semantic rules: attributes (rounding modes, modifiers, memory
//! ordering and scope, atomic modes), shape rules of data-movement and MMA
//! ops, control flow (loops, `if`, `break`, `continue`, `return`),
//! `reduce`/`scan` bodies, views and entries. The module doc of
//! [`super`] lists them all; messages are NVIDIA's.
use super::fmt::{shape as fmt_shape, ty as fmt_ty, tys as fmt_tys};
use super::types::{
    operand_ty, result_ty, same_type, tile_elem, tile_pointee, tile_scalar, tile_shape,
};
use super::{op_err, Check, Fail, Tree};
use crate::ir::{Attr, EnumKind, Module, Op, OpId, Opcode, Scalar, Type, TypeId, ValueId};

// Enum values, as in the bytecode.
const RM_NEAREST_EVEN: u8 = 0;
const RM_ZERO: u8 = 1;
const RM_NEGATIVE_INF: u8 = 2;
const RM_POSITIVE_INF: u8 = 3;
const RM_APPROX: u8 = 4;
const RM_FULL: u8 = 5;
const RM_NEAREST_INT_TO_ZERO: u8 = 6;
const MO_WEAK: u8 = 0;
const MO_RELAXED: u8 = 1;
const MO_ACQUIRE: u8 = 2;
const MO_RELEASE: u8 = 3;
const SCOPE_SYS: u8 = 2;
const SIGN_UNSIGNED: u8 = 0;
const OVERFLOW_NUW: u8 = 2;
const RMW_ADDF: u8 = 4;
const RMW_XCHG: u8 = 9;

fn enum_attr(op: &Op, name: &str, kind: EnumKind) -> Option<u8> {
    match op.attr(name) {
        Some(Attr::Enum(k, v)) if *k == kind => Some(*v),
        _ => None,
    }
}

fn int_attr(op: &Op, name: &str) -> Option<i64> {
    match op.attr(name) {
        Some(Attr::Int(v)) => Some(*v as i64),
        Some(Attr::Integer { value, .. }) => Some(*value as i64),
        _ => None,
    }
}

fn kw(kind: EnumKind, v: u8) -> &'static str {
    kind.keyword(v).unwrap_or("<invalid>")
}

fn tys_of(m: &Module, vals: &[ValueId]) -> Vec<TypeId> {
    vals.iter().map(|v| m.values[*v].ty).collect()
}

fn types_eq(m: &Module, a: &[TypeId], b: &[TypeId]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_type(m, *x, *y))
}

/// The element scalar of the op's first result (or `None`).
fn result_scalar(m: &Module, op: &Op) -> Option<Scalar> {
    result_ty(m, op, 0).and_then(|t| tile_scalar(m, t))
}

fn scalar_name(s: Option<Scalar>) -> &'static str {
    s.map(|s| s.name()).unwrap_or("<none>")
}

fn ieee_rounding(op: &Op) -> Check {
    let r = enum_attr(op, "rounding_mode", EnumKind::RoundingMode).unwrap_or(RM_NEAREST_EVEN);
    if r > RM_POSITIVE_INF {
        return Err(op_err(
            "invalid rounding mode specified, expect one of [nearest_even, zero, negative_inf, positive_inf]",
        ));
    }
    Ok(())
}

fn ftz(m: &Module, op: &Op) -> Check {
    if op.has_flag("flush_to_zero") {
        let s = result_scalar(m, op);
        if s != Some(Scalar::F32) {
            return Err(op_err(format!(
                "flush_to_zero modifier only supported for f32 data type, but got: '{}'",
                scalar_name(s)
            )));
        }
    }
    Ok(())
}

fn approx_f32(m: &Module, op: &Op, approx: bool) -> Check {
    let s = result_scalar(m, op);
    if approx && s != Some(Scalar::F32) {
        return Err(op_err(format!(
            "approx modifier only supported for f32 data type, but got: '{}'",
            scalar_name(s)
        )));
    }
    Ok(())
}

fn div_sqrt_modifiers(m: &Module, op: &Op, approx: bool, full: bool) -> Check {
    let s = result_scalar(m, op);
    let is_f32 = s == Some(Scalar::F32);
    if op.has_flag("flush_to_zero") && !is_f32 {
        return Err(op_err(format!(
            "flush_to_zero modifier only supported for f32 data type, but got: '{}'",
            scalar_name(s)
        )));
    }
    if approx && !is_f32 {
        return Err(op_err(format!(
            "approx modifier only supported for f32 data type, but got: '{}'",
            scalar_name(s)
        )));
    }
    if full && !is_f32 {
        return Err(op_err(format!(
            "full modifier only supported for f32 data type, but got: '{}'",
            scalar_name(s)
        )));
    }
    Ok(())
}

fn memory_load(op: &Op) -> Check {
    memory_access(op, "load", MO_ACQUIRE, "acquire")
}

fn memory_store(op: &Op) -> Check {
    memory_access(op, "store", MO_RELEASE, "release")
}

fn memory_access(op: &Op, what: &str, third: u8, third_name: &str) -> Check {
    let ord =
        enum_attr(op, "memory_ordering_semantics", EnumKind::MemoryOrdering).unwrap_or(MO_WEAK);
    if ord != MO_WEAK && ord != MO_RELAXED && ord != third {
        return Err(op_err(format!(
            "expect one of: weak, relaxed, or {third_name}, but got: {}",
            kw(EnumKind::MemoryOrdering, ord)
        )));
    }
    let scope = enum_attr(op, "memory_scope", EnumKind::MemoryScope);
    if ord == MO_WEAK {
        if scope.is_some() {
            return Err(op_err(format!("weak {what} must not have memory scope")));
        }
    } else if scope.is_none() {
        return Err(op_err(format!(
            "memory scope is required for {} {what}",
            kw(EnumKind::MemoryOrdering, ord)
        )));
    }
    Ok(())
}

fn atomic_ordering(op: &Op) -> Check {
    let ord =
        enum_attr(op, "memory_ordering_semantics", EnumKind::MemoryOrdering).unwrap_or(MO_WEAK);
    if ord == MO_WEAK {
        return Err(op_err(
            "memory ordering semantics must be one of: relaxed, acquire, release, acq_rel",
        ));
    }
    Ok(())
}

fn rmw_mode(mode: u8, elem: Option<Scalar>) -> Check {
    let name = kw(EnumKind::AtomicRmwMode, mode);
    match mode {
        RMW_ADDF => {
            if !matches!(
                elem,
                Some(Scalar::F16 | Scalar::BF16 | Scalar::F32 | Scalar::F64)
            ) {
                return Err(op_err(format!(
                    "'{name}' works only with floats f16, bf16, f32, and f64"
                )));
            }
        }
        RMW_XCHG => {
            let w = elem.map(|e| e.bit_width());
            if w != Some(32) && w != Some(64) {
                return Err(op_err(format!(
                    "'{name}' works only with integers or float of 32 or 64 bitwidth"
                )));
            }
        }
        _ => {
            if !matches!(elem, Some(Scalar::I32 | Scalar::I64)) {
                return Err(op_err(format!(
                    "'{name}' works only with integers i32 and i64"
                )));
            }
        }
    }
    Ok(())
}

fn scalar_of(m: &Module, t: TypeId) -> Option<Scalar> {
    match m.types.try_get(t)? {
        Type::Scalar(s) => Some(*s),
        _ => None,
    }
}

/// The tile type a view hands out, and its index rank.
fn view_tile(m: &Module, view: TypeId) -> Option<(Vec<i64>, TypeId, usize)> {
    let (tile_shape, tv) = match &m.types[view] {
        Type::PartitionView {
            tile_shape,
            tensor_view,
            ..
        }
        | Type::StridedView {
            tile_shape,
            tensor_view,
            ..
        }
        | Type::GatherScatterView {
            tile_shape,
            tensor_view,
            ..
        } => (tile_shape, *tensor_view),
        _ => return None,
    };
    let Type::TensorView { element, .. } = &m.types[tv] else {
        return None;
    };
    let shape: Vec<i64> = tile_shape.iter().map(|d| *d as i64).collect();
    let rank = shape.len();
    Some((shape, *element, rank))
}

fn view_type_string(m: &Module, shape: &[i64], elem: TypeId) -> String {
    let mut s = String::from("'!cuda_tile.tile<");
    for d in shape {
        s.push_str(&format!("{d}x"));
    }
    let e = fmt_ty(m, elem);
    s.push_str(e.trim_matches('\'').trim_start_matches("!cuda_tile."));
    s.push_str(">'");
    s
}

fn view_indices(m: &Module, op: &Op, view: TypeId) -> Check {
    let idx = tys_of(m, op.operand_group("index"));
    if let Type::GatherScatterView {
        tile_shape,
        sparse_dim,
        ..
    } = &m.types[view]
    {
        return gather_indices(m, &idx, tile_shape, *sparse_dim);
    }
    for t in &idx {
        match tile_shape(m, *t) {
            None => {
                return Err(op_err(format!(
                    "expected index type to be a tile type, got {}",
                    fmt_ty(m, *t)
                )))
            }
            Some(s) if !s.is_empty() => {
                return Err(op_err(format!(
                    "expected index type to be a scalar tile, got {}",
                    fmt_ty(m, *t)
                )))
            }
            _ => {}
        }
    }
    if let Some(first) = idx.first() {
        for (i, t) in idx.iter().enumerate() {
            if !same_type(m, *t, *first) {
                return Err(op_err(format!(
                    "expected index type {i} to be the same as other index types ({}), got {}",
                    fmt_ty(m, *first),
                    fmt_ty(m, *t)
                )));
            }
        }
    }
    Ok(())
}

fn view_load_store(m: &Module, op: &Op, tile: Option<TypeId>) -> Check {
    let Some(view) = operand_ty(m, op, "view") else {
        return Ok(());
    };
    let Some((shape, elem, rank)) = view_tile(m, view) else {
        return Ok(());
    };
    let n = op.operand_group("index").len();
    if let Some(Attr::DenseBool(inbounds)) = op.attr("inbounds") {
        if inbounds.len() != n {
            return Err(op_err(format!(
                "inbounds size ({}) must match the number of index dimensions ({n})",
                inbounds.len()
            )));
        }
    }
    if n != rank {
        return Err(op_err(format!(
            "expected {rank} index operands (based on view type), got {n}"
        )));
    }
    if let Some(t) = tile {
        let same = tile_shape(m, t) == Some(&shape[..])
            && tile_elem(m, t).is_some_and(|e| same_type(m, e, elem));
        if !same {
            return Err(op_err(format!(
                "expected tile type to be {} (based on view type), got {}",
                view_type_string(m, &shape, elem),
                fmt_ty(m, t)
            )));
        }
    }
    view_indices(m, op, view)
}

fn gather_indices(m: &Module, idx: &[TypeId], tile: &[i32], sparse: u64) -> Check {
    if idx.is_empty() {
        return Ok(());
    }
    if sparse >= idx.len() as u64 {
        return Err(op_err(format!(
            "gather/scatter dimension {sparse} is out of range for index count {}",
            idx.len()
        )));
    }
    let sd = sparse as usize;
    let Some(gs) = tile_shape(m, idx[sd]) else {
        return Err(op_err(format!(
            "expected index at sparse_dim position {sd} to be a tile type for GatherScatterView"
        )));
    };
    if gs.len() != 1 {
        return Err(op_err(format!(
            "expected index at sparse_dim position {sd} to be a 1D tensor for GatherScatterView, got rank {}",
            gs.len()
        )));
    }
    let want = tile.get(sd).copied().unwrap_or(0) as i64;
    if gs[0] != want {
        return Err(op_err(format!(
            "expected gather/scatter index size ({}) to match tile shape at gather/scatter dimension {sd} ({want})",
            gs[0]
        )));
    }
    let mut base: Option<TypeId> = None;
    for (i, t) in idx.iter().enumerate() {
        if i == sd {
            continue;
        }
        if !tile_shape(m, *t).is_some_and(|s| s.is_empty()) {
            return Err(op_err(format!(
                "expected index {i} to be a scalar tile for GatherScatterView"
            )));
        }
        match base {
            None => base = Some(*t),
            Some(b) if !same_type(m, b, *t) => {
                return Err(op_err(format!(
                    "expected scalar index {i} to have the same type as other scalar indices ({}), got {}",
                    fmt_ty(m, b),
                    fmt_ty(m, *t)
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

/// A pointer attribute as NVIDIA prints it.
fn ptr_attr_name(v: u8) -> String {
    match v {
        0 => "#cuda_tile.ptr_attr<none>".to_string(),
        1 => "#cuda_tile.ptr_attr<multicast>".to_string(),
        other => format!("#cuda_tile.ptr_attr<{other}>"),
    }
}

fn loop_iter_values(m: &Module, op: &Op, iter_args: &[ValueId]) -> Check {
    let inits = op.operand_group("initValues");
    if iter_args.len() != inits.len() {
        return Err(op_err(format!(
            "mismatch in number of region iterator values and loop iterator inits: {} vs {}",
            iter_args.len(),
            inits.len()
        )));
    }
    for (i, (init, arg)) in inits.iter().zip(iter_args).enumerate() {
        let at = m.values[*arg].ty;
        match &m.types[at] {
            Type::TensorView { .. } => {
                return Err(op_err(format!(
                    "loop-carried value {i} is a tensor_view, which is not supported"
                )))
            }
            t if is_view(t) => {
                return Err(op_err(format!(
                    "loop-carried value {i} is a tile view, which is not supported"
                )))
            }
            _ => {}
        }
        let it = m.values[*init].ty;
        if !same_type(m, it, at) {
            return Err(op_err(format!(
                "init value {i} and region iter_value {i} have different type: {} != {}",
                fmt_ty(m, it),
                fmt_ty(m, at)
            )));
        }
    }
    results_not_views(m, op)
}

fn is_view(t: &Type) -> bool {
    matches!(
        t,
        Type::PartitionView { .. } | Type::StridedView { .. } | Type::GatherScatterView { .. }
    )
}

fn results_not_views(m: &Module, op: &Op) -> Check {
    for (i, r) in op.results.iter().enumerate() {
        match &m.types[m.values[*r].ty] {
            Type::TensorView { .. } => {
                return Err(op_err(format!(
                    "result type {i} is a tensor_view, which is not supported"
                )))
            }
            t if is_view(t) => {
                return Err(op_err(format!(
                    "result type {i} is a tile view, which is not supported"
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

fn block_args(op: &Op, region: usize) -> &[ValueId] {
    op.regions
        .get(region)
        .and_then(|r| r.blocks.first())
        .map(|b| &b.args[..])
        .unwrap_or(&[])
}

fn terminator<'m>(m: &'m Module, op: &Op, region: usize) -> Option<&'m Op> {
    let b = op.regions.get(region)?.blocks.first()?;
    b.ops.last().map(|id| &m.ops[*id])
}

/// Whether `id` has memory effects (ops with regions: whether any op inside
/// has them). Only memory-effect-free ops may sit in `reduce`/`scan` bodies.
fn has_memory_effect(m: &Module, id: OpId) -> bool {
    let mut stack = vec![id];
    while let Some(id) = stack.pop() {
        let op = &m.ops[id];
        if matches!(
            op.opcode,
            Opcode::Assert
                | Opcode::Assume
                | Opcode::AtomicCASTko
                | Opcode::AtomicRMWTko
                | Opcode::AtomicRedViewTko
                | Opcode::LoadPtrTko
                | Opcode::LoadViewTko
                | Opcode::StorePtrTko
                | Opcode::StoreViewTko
                | Opcode::PrintTko
                | Opcode::Alloca
                | Opcode::GdcLaunchDependentsTko
                | Opcode::GdcWaitTko
                | Opcode::MemoryFenceAliasTko
        ) {
            return true;
        }
        for r in &op.regions {
            for b in &r.blocks {
                stack.extend(b.ops.iter().copied());
            }
        }
    }
    false
}

fn aggregate(m: &Module, op: &Op, scan: bool) -> Check {
    let operands = op.operand_group("operands");
    let n = operands.len();
    if n == 0 {
        return Err(op_err("expect at least 1 operand"));
    }
    if n != op.results.len() {
        return Err(op_err("expect same number of operands and results"));
    }
    if let Some(Attr::Array(ids)) = op.attr("identities") {
        if ids.len() != n {
            return Err(op_err(format!(
                "expect identities to match the number of operands but got: {n} operands and {} identities",
                ids.len()
            )));
        }
        for (i, (v, id)) in operands.iter().zip(ids).enumerate() {
            let ot = m.values[*v].ty;
            let Some(oe) = tile_elem(m, ot) else {
                return Err(op_err(format!(
                    "expected TileType for operand at index {i} but got: {}",
                    fmt_ty(m, ot)
                )));
            };
            let it = match id {
                Attr::Integer { ty, .. } | Attr::Float { ty, .. } => *ty,
                _ => continue,
            };
            let (os, is) = (scalar_of(m, oe), scalar_of(m, it));
            if matches!(
                (os, is),
                (Some(Scalar::BF16), Some(Scalar::F16)) | (Some(Scalar::F16), Some(Scalar::BF16))
            ) {
                continue;
            }
            if !same_type(m, oe, it) {
                return Err(op_err(format!(
                    "expect same type for operand at index: {i} and identity at index: {i} but got: {} and {}",
                    fmt_ty(m, oe),
                    fmt_ty(m, it)
                )));
            }
        }
    }
    let first = m.values[operands[0]].ty;
    let rank = tile_shape(m, first).map(|s| s.len()).unwrap_or(0);
    let dim = int_attr(op, "dim").unwrap_or(0);
    if dim < 0 || dim >= rank as i64 {
        return Err(op_err(format!(
            "dimension ({dim}) is out of bound [0, {rank})"
        )));
    }
    if scan {
        for (i, (v, r)) in operands.iter().zip(&op.results).enumerate() {
            if m.types[m.values[*v].ty] != m.types[m.values[*r].ty] {
                return Err(op_err(format!(
                    "expect same type for operand at index: {i} and result at index: {i}"
                )));
            }
        }
    } else {
        let mut inferred = Vec::new();
        let mut ok = true;
        for (v, r) in operands.iter().zip(&op.results) {
            let ot = m.values[*v].ty;
            let rt = m.values[*r].ty;
            let mut want: Vec<i64> = tile_shape(m, ot).unwrap_or(&[]).to_vec();
            if (dim as usize) < want.len() {
                want.remove(dim as usize);
            }
            let elem = tile_elem(m, ot).unwrap_or(ot);
            ok &= tile_shape(m, rt) == Some(&want[..])
                && tile_elem(m, rt).is_some_and(|e| same_type(m, e, elem));
            inferred.push(view_type_string(m, &want, elem));
        }
        if !ok {
            return Err(Fail::Ops(vec![
                format!(
                    "inferred type(s) {} are incompatible with return type(s) of operation {}",
                    inferred.join(", "),
                    fmt_tys(m, &tys_of(m, &op.results))
                ),
                "failed to infer returned types".to_string(),
            ]));
        }
    }
    aggregate_region(m, op, n)
}

fn aggregate_region(m: &Module, op: &Op, n: usize) -> Check {
    let Some(block) = op.regions.first().and_then(|r| r.blocks.first()) else {
        return Ok(());
    };
    if block.ops.is_empty() {
        return Err(op_err("expect non-empty block"));
    }
    if block.args.len() != 2 * n {
        return Err(op_err(format!(
            "expect {} block arguments but got: {}",
            2 * n,
            block.args.len()
        )));
    }
    let arg_tys = tys_of(m, &block.args);
    for (i, t) in arg_tys.iter().enumerate() {
        if tile_shape(m, *t) != Some(&[][..]) {
            return Err(op_err(format!(
                "expect 0-rank tile type at index: {i} but got: {}",
                fmt_ty(m, *t)
            )));
        }
    }
    for i in (0..2 * n).step_by(2) {
        let (a, b) = (tile_elem(m, arg_tys[i]), tile_elem(m, arg_tys[i + 1]));
        if let (Some(a), Some(b)) = (a, b) {
            if !same_type(m, a, b) {
                return Err(op_err(format!(
                    "expect same element type for block argument at index: {i} and {} but got: {} and {}",
                    i + 1,
                    fmt_ty(m, a),
                    fmt_ty(m, b)
                )));
            }
        }
    }
    let operands = op.operand_group("operands");
    for (i, v) in operands.iter().enumerate() {
        let (oe, ae) = (tile_elem(m, m.values[*v].ty), tile_elem(m, arg_tys[2 * i]));
        if let (Some(oe), Some(ae)) = (oe, ae) {
            if !same_type(m, oe, ae) {
                return Err(op_err(format!(
                    "expect same type for operand at index: {i} and block argument at index: {} but got: {} and {}",
                    2 * i,
                    fmt_ty(m, oe),
                    fmt_ty(m, ae)
                )));
            }
        }
    }
    if let Some(term) = terminator(m, op, 0) {
        if term.opcode == Opcode::Yield {
            let tt = tys_of(m, &term.operands);
            if tt.len() != n {
                return Err(op_err(format!(
                    "expect number of terminators operands ({}) to match number of operands ({n})",
                    tt.len()
                )));
            }
            for (i, (v, t)) in operands.iter().zip(&tt).enumerate() {
                let ot = m.values[*v].ty;
                let (Some(oe), Some(te)) = (tile_elem(m, ot), tile_elem(m, *t)) else {
                    return Err(op_err(format!(
                        "expected TileType for operand and terminator types but got: {} and {}",
                        fmt_ty(m, ot),
                        fmt_ty(m, *t)
                    )));
                };
                if !same_type(m, oe, te) {
                    return Err(op_err(format!(
                        "expect same type for operand at index: {i} and terminator argument at index: {i} but got: {} and {}",
                        fmt_ty(m, oe),
                        fmt_ty(m, te)
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Which side of `extract` / `insert` is the sub-tile.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Subtile {
    /// The result is a sub-tile of the source.
    Extract,
    /// The source is a sub-tile of the result.
    Insert,
}

/// `extract` and `insert`: same element type and rank, the large tile's
/// dimensions divisible by the sub-tile's, one index per dimension.
fn subtile(m: &Module, op: &Op, kind: Subtile) -> Check {
    let (Some(st), Some(rt)) = (operand_ty(m, op, "source"), result_ty(m, op, 0)) else {
        return Ok(());
    };
    let (Some(s), Some(r)) = (tile_shape(m, st), tile_shape(m, rt)) else {
        return Ok(());
    };
    let same_elem = match (tile_elem(m, st), tile_elem(m, rt)) {
        (Some(a), Some(b)) => same_type(m, a, b),
        _ => false,
    };
    if !same_elem {
        return Err(op_err("source and result element type do not match"));
    }
    if s.len() != r.len() {
        return Err(op_err("source and result must have the same rank"));
    }
    let ((big_name, big), (small_name, small)) = match kind {
        Subtile::Extract => (("source", &s), ("result", &r)),
        Subtile::Insert => (("result", &r), ("source", &s)),
    };
    for i in 0..big.len() {
        if small[i] == 0 || big[i] % small[i] != 0 {
            return Err(op_err(format!(
                "{big_name} dimension {i} size ({}) must be evenly divisible by {small_name} dimension {i} size ({})",
                big[i], small[i]
            )));
        }
    }
    let n = op.operand_group("indices").len();
    if n != big.len() {
        return Err(op_err(format!(
            "expected {} indices, but got {n}",
            big.len()
        )));
    }
    Ok(())
}

fn mma_shapes(m: &Module, op: &Op) -> Check {
    let (Some(l), Some(r), Some(a)) = (
        operand_ty(m, op, "lhs").and_then(|t| tile_shape(m, t)),
        operand_ty(m, op, "rhs").and_then(|t| tile_shape(m, t)),
        operand_ty(m, op, "acc").and_then(|t| tile_shape(m, t)),
    ) else {
        return Ok(());
    };
    if l.len() != 2 && l.len() != 3 {
        return Err(op_err("operands must be 2D or 3D tiles"));
    }
    if r.len() != l.len() || a.len() != l.len() {
        return Ok(());
    }
    let b = usize::from(l.len() == 3);
    let (row, col) = (b, b + 1);
    let (ls, rs, as_) = (fmt_shape(l), fmt_shape(r), fmt_shape(a));
    if b == 1 {
        if l[0] != r[0] {
            return Err(op_err(format!(
                "shape error: dim 0 of lhs ({}) and dim 0 of rhs ({}) must match, but got lhs shape ({ls}) and rhs shape ({rs})",
                l[0], r[0]
            )));
        }
        if l[0] != a[0] {
            return Err(op_err(format!(
                "shape error: dim 0 of lhs ({}) and dim 0 of acc ({}) must match, but got lhs shape ({ls}) and acc shape ({as_})",
                l[0], a[0]
            )));
        }
    }
    if l[col] != r[row] {
        return Err(op_err(format!(
            " shape error: dim {col} of lhs ({}) and dim {row} of rhs ({}) must match, but got lhs shape ({ls}) and rhs shape ({rs})",
            l[col], r[row]
        )));
    }
    if l[row] != a[row] {
        return Err(op_err(format!(
            " shape error: dim {row} of lhs ({}) and dim {row} of acc ({}) must match, but got lhs shape ({ls}) and acc shape ({as_})",
            l[row], a[row]
        )));
    }
    if r[col] != a[col] {
        return Err(op_err(format!(
            " shape error: dim {col} of rhs ({}) and dim {col} of acc ({}) must match, but got rhs shape ({rs}) and acc shape ({as_})",
            r[col], a[col]
        )));
    }
    Ok(())
}

fn mmaf_types(m: &Module, op: &Op) -> Check {
    let (Some(l), Some(a)) = (
        operand_ty(m, op, "lhs").and_then(|t| tile_scalar(m, t)),
        operand_ty(m, op, "acc").and_then(|t| tile_scalar(m, t)),
    ) else {
        return Ok(());
    };
    use Scalar::*;
    let allowed: &[Scalar] = match l {
        F4E2M1FN | F8E4M3FN | F8E5M2 | F16 => &[F16, F32],
        BF16 | TF32 | F32 => &[F32],
        F64 => &[F64],
        _ => {
            return Err(op_err(format!(
                "unsupported input element type: '{}'",
                l.name()
            )))
        }
    };
    if !allowed.contains(&a) {
        let list: Vec<String> = allowed.iter().map(|s| format!("'{}'", s.name())).collect();
        return Err(op_err(format!(
            "unsupported combination of element types. Input type '{}' expects accumulator/result type to be one of {{{}}}, but got '{}'",
            l.name(),
            list.join(", "),
            a.name()
        )));
    }
    Ok(())
}

fn mmaf_scaled(m: &Module, op: &Op) -> Check {
    let ty = |n: &str| operand_ty(m, op, n);
    let (Some(lt), Some(rt), Some(lst), Some(rst)) =
        (ty("lhs"), ty("rhs"), ty("lhs_scale"), ty("rhs_scale"))
    else {
        return Ok(());
    };
    let (Some(l), Some(r), Some(ls), Some(rs)) = (
        tile_shape(m, lt),
        tile_shape(m, rt),
        tile_shape(m, lst),
        tile_shape(m, rst),
    ) else {
        return Ok(());
    };
    if r.len() != l.len() || ls.len() != l.len() || rs.len() != l.len() {
        return Ok(());
    }
    let b = usize::from(l.len() == 3);
    let (row, col) = (b, b + 1);
    let (lsh, rsh, lssh, rssh) = (fmt_shape(l), fmt_shape(r), fmt_shape(ls), fmt_shape(rs));
    if b == 1 {
        if l[0] != ls[0] {
            return Err(op_err(format!("shape error: dim 0 of lhs ({}) and dim 0 of lhs_scale ({}) must match, but got lhs shape ({lsh}) and lhs_scale shape ({lssh})", l[0], ls[0])));
        }
        if r[0] != rs[0] {
            return Err(op_err(format!("shape error: dim 0 of rhs ({}) and dim 0 of rhs_scale ({}) must match, but got rhs shape ({rsh}) and rhs_scale shape ({rssh})", r[0], rs[0])));
        }
    }
    if l[row] != ls[row] {
        return Err(op_err(format!("shape error: dim {row} of lhs ({}) and dim {row} of lhs_scale ({}) must match, but got lhs shape ({lsh}) and lhs_scale shape ({lssh})", l[row], ls[row])));
    }
    if r[col] != rs[col] {
        return Err(op_err(format!("shape error: dim {col} of rhs ({}) and dim {col} of rhs_scale ({}) must match, but got rhs shape ({rsh}) and rhs_scale shape ({rssh})", r[col], rs[col])));
    }
    if ls[col] != rs[row] {
        return Err(op_err(format!("shape error: dim {col} of lhs_scale ({}) and dim {row} of rhs_scale ({}) must match, but got lhs_scale shape ({lssh}) and rhs_scale shape ({rssh})", ls[col], rs[row])));
    }
    let (Some(le), Some(se)) = (tile_scalar(m, lt), tile_scalar(m, lst)) else {
        return Ok(());
    };
    if se == Scalar::F8E4M3FN && le != Scalar::F4E2M1FN {
        return Err(op_err(format!("unsupported combination of element types. Scale type 'f8E4M3FN' expects lhs and rhs element types to be 'f4E2M1FN', but got '{}'", le.name())));
    }
    if se == Scalar::F8E8M0FNU
        && !matches!(le, Scalar::F8E4M3FN | Scalar::F8E5M2 | Scalar::F4E2M1FN)
    {
        return Err(op_err(format!("unsupported combination of element types. Scale type 'f8E8M0FNU' expects lhs and rhs element types to be one of {{'f8E4M3FN', 'f8E5M2', 'f4E2M1FN'}}, but got '{}'", le.name())));
    }
    let (k, sk) = (l[col], ls[col]);
    if sk == 0 || k % sk != 0 {
        return Err(op_err(format!("shape error: dim {col} of lhs_scale ({sk}) must be a divisor of dim {col} of lhs ({k}), but got lhs_scale shape ({lssh}) and lhs shape ({lsh})")));
    }
    let vec = k / sk;
    if matches!(le, Scalar::F8E4M3FN | Scalar::F8E5M2) && vec != 32 {
        return Err(op_err(format!("shape error: f8 element type requires block scale factor of lhs_scale and rhs_scale to be 32, but got {vec}")));
    }
    if le == Scalar::F4E2M1FN {
        if se == Scalar::F8E4M3FN && vec != 16 {
            return Err(op_err(format!("shape error: f4E2M1FN element type with f8E4M3FN scales requires block scale factor of lhs_scale and rhs_scale to be 16, but got {vec}")));
        }
        if se == Scalar::F8E8M0FNU && vec != 16 && vec != 32 {
            return Err(op_err(format!("shape error: f4E2M1FN element type with f8E8M0FNU scales requires block scale factor of lhs_scale and rhs_scale to be 16 or 32, but got {vec}")));
        }
        if se == Scalar::F8E5M3FNU && vec != 16 && vec != 32 {
            return Err(op_err(format!("shape error: f4E2M1FN element type with fnv8E5M3FNU scales requires block scale factor of lhs_scale and rhs_scale to be 16 or 32, but got {vec}")));
        }
    }
    Ok(())
}

/// Counts the `%` conversions of a printf format; `None` if one is
/// unterminated. A conversion ends at the first of `diuoxXeEfFgGaAcsSpn%`
/// (or a NUL byte, which NVIDIA's `strchr` test also accepts).
fn format_args(s: &str) -> Option<usize> {
    let b = crate::ir::string_to_bytes(s);
    let mut n = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        let end =
            (i + 1..b.len()).find(|&j| b[j] == 0 || b"diuoxXeEfFgGaAcsSpn%".contains(&b[j]))?;
        if end == i + 1 && b[end] == b'%' {
            i += 2;
            continue;
        }
        n += 1;
        i += 1;
    }
    Some(n)
}

fn early_exit(m: &Module, tree: &Tree, id: OpId, loops: &[Opcode]) -> Result<OpId, Fail> {
    let mut cur = id;
    loop {
        let Some((p, _)) = tree.parent(cur) else {
            return Err(nested_err(loops));
        };
        let k = m.ops[p].opcode;
        if loops.contains(&k) {
            return Ok(p);
        }
        if k != Opcode::If {
            return Err(nested_err(loops));
        }
        cur = p;
    }
}

fn nested_err(loops: &[Opcode]) -> Fail {
    let mut names: Vec<String> = loops
        .iter()
        .map(|o| format!("cuda_tile.{}", o.mnemonic()))
        .collect();
    names.push("cuda_tile.if".into());
    op_err(format!(
        "can only be nested within a ancestor chain of '{}' operations",
        names.join("', '")
    ))
}

/// Checks the semantic rules of one op.
pub(crate) fn check_op(m: &Module, tree: &Tree, id: OpId) -> Check {
    let op = &m.ops[id];
    match op.opcode {
        Opcode::AddF | Opcode::SubF | Opcode::MulF | Opcode::Fma => {
            ieee_rounding(op)?;
            ftz(m, op)
        }
        Opcode::MaxF | Opcode::MinF | Opcode::Exp2 | Opcode::Rsqrt => ftz(m, op),
        Opcode::DivF => {
            let r = enum_attr(op, "rounding_mode", EnumKind::RoundingMode).unwrap_or(0);
            if r > RM_FULL {
                return Err(op_err("invalid rounding mode specified, expect one of [nearest_even, zero, negative_inf, positive_inf, approx, full]"));
            }
            div_sqrt_modifiers(m, op, r == RM_APPROX, r == RM_FULL)
        }
        Opcode::Sqrt => {
            let r = enum_attr(op, "rounding_mode", EnumKind::RoundingMode).unwrap_or(0);
            if r > RM_APPROX {
                return Err(op_err("invalid rounding mode specified, expect one of [nearest_even, zero, negative_inf, positive_inf, approx]"));
            }
            div_sqrt_modifiers(m, op, r == RM_APPROX, false)
        }
        Opcode::Exp | Opcode::TanH => {
            let r = enum_attr(op, "rounding_mode", EnumKind::RoundingMode).unwrap_or(RM_FULL);
            if r != RM_APPROX && r != RM_FULL {
                return Err(op_err(
                    "invalid rounding mode specified, expect one of [approx, full]",
                ));
            }
            approx_f32(m, op, r == RM_APPROX)
        }
        Opcode::DivI => {
            let r = enum_attr(op, "rounding", EnumKind::RoundingMode).unwrap_or(RM_ZERO);
            if !matches!(r, RM_ZERO | RM_NEGATIVE_INF | RM_POSITIVE_INF) {
                return Err(op_err(
                    "invalid rounding mode specified, expect one of [zero, negative_inf, positive_inf]",
                ));
            }
            let sign = enum_attr(op, "signedness", EnumKind::Signedness);
            if r == RM_NEGATIVE_INF && sign == Some(SIGN_UNSIGNED) {
                return Err(op_err(
                    "rounding mode 'negative_inf' is not allowed with 'unsigned' flag",
                ));
            }
            Ok(())
        }
        Opcode::NegI => {
            if enum_attr(op, "overflow", EnumKind::IntegerOverflow) == Some(OVERFLOW_NUW) {
                return Err(op_err("'no_unsigned_wrap' overflow flag is not supported"));
            }
            Ok(())
        }
        Opcode::ExtI | Opcode::TruncI => {
            let (Some(f), Some(t)) = (
                operand_ty(m, op, "from").and_then(|t| tile_scalar(m, t)),
                result_ty(m, op, 0).and_then(|t| tile_scalar(m, t)),
            ) else {
                return Ok(());
            };
            if op.opcode == Opcode::ExtI && t.bit_width() <= f.bit_width() {
                return Err(op_err("extending to smaller or identical integer"));
            }
            if op.opcode == Opcode::TruncI && t.bit_width() >= f.bit_width() {
                return Err(op_err("truncating to larger or identical integer"));
            }
            Ok(())
        }
        Opcode::FToF => {
            let (Some(f), Some(t)) = (operand_ty(m, op, "from"), result_ty(m, op, 0)) else {
                return Ok(());
            };
            if same_type(m, f, t) {
                return Err(op_err("converting tiles must not be a no-op"));
            }
            let r = enum_attr(op, "rounding_mode", EnumKind::RoundingMode)
                .unwrap_or(RM_NEAREST_EVEN);
            let (Some(fs), Some(ts)) = (tile_scalar(m, f), tile_scalar(m, t)) else {
                return Ok(());
            };
            ftof_rounding(fs, ts, r)
        }
        Opcode::FToI => {
            let r = enum_attr(op, "rounding_mode", EnumKind::RoundingMode)
                .unwrap_or(RM_NEAREST_INT_TO_ZERO);
            if r != RM_NEAREST_INT_TO_ZERO {
                return Err(op_err(
                    "invalid rounding mode specified. Only 'nearest_int_to_zero' is supported",
                ));
            }
            Ok(())
        }
        Opcode::IToF => {
            if result_scalar(m, op) == Some(Scalar::F8E8M0FNU) {
                return Err(op_err("integer to f8E8M0FNU conversion is not supported, please first convert to another float type"));
            }
            let r = enum_attr(op, "rounding_mode", EnumKind::RoundingMode)
                .unwrap_or(RM_NEAREST_EVEN);
            if r != RM_NEAREST_EVEN {
                return Err(op_err(
                    "invalid rounding mode specified. Only 'nearest_even' is supported",
                ));
            }
            Ok(())
        }
        Opcode::Bitcast => {
            let (Some(s), Some(r)) = (operand_ty(m, op, "source"), result_ty(m, op, 0)) else {
                return Ok(());
            };
            let (Some(se), Some(re)) = (tile_scalar(m, s), tile_scalar(m, r)) else {
                return Ok(());
            };
            if se.bit_width() != re.bit_width() {
                return Err(op_err(format!(
                    "types must be equal width, cannot convert {} of width {} to type {} of width {}",
                    fmt_ty(m, s),
                    se.bit_width(),
                    fmt_ty(m, r),
                    re.bit_width()
                )));
            }
            Ok(())
        }
        Opcode::Broadcast => {
            let (Some(s), Some(r)) = (
                operand_ty(m, op, "source").and_then(|t| tile_shape(m, t)),
                result_ty(m, op, 0).and_then(|t| tile_shape(m, t)),
            ) else {
                return Ok(());
            };
            if s.iter().zip(r).any(|(a, b)| a != b && *a != 1) {
                return Err(op_err(format!(
                    "expects the shape of source tile to be compatible with that of the result tile, but got: {} and {}",
                    fmt_shape(s),
                    fmt_shape(r)
                )));
            }
            Ok(())
        }
        Opcode::Cat => {
            let (Some(l), Some(r), Some(res)) = (
                operand_ty(m, op, "lhs").and_then(|t| tile_shape(m, t)),
                operand_ty(m, op, "rhs").and_then(|t| tile_shape(m, t)),
                result_ty(m, op, 0).and_then(|t| tile_shape(m, t)),
            ) else {
                return Ok(());
            };
            let dim = int_attr(op, "dim").unwrap_or(0);
            let rank = l.len() as i64;
            if dim < 0 || dim >= rank {
                return Err(op_err(format!("expect dim to be [0, {rank}), but got: {dim}")));
            }
            let d = dim as usize;
            if r.len() != l.len() || res.len() != l.len() {
                return Ok(());
            }
            if l[d] + r[d] != res[d] {
                return Err(op_err(format!(
                    "invalid concat at position {d}, expected: {} but got: {}",
                    l[d] + r[d],
                    res[d]
                )));
            }
            for i in 0..l.len() {
                if i == d {
                    continue;
                }
                if l[i] != r[i] {
                    return Err(op_err(format!("expect lhs and rhs shapes to match at non-concat position {i}, expected: {} but got: {}", l[i], r[i])));
                }
                if l[i] != res[i] {
                    return Err(op_err(format!("expect lhs and result shapes to match at non-concat position {i}, expected: {} but got: {}", l[i], res[i])));
                }
            }
            Ok(())
        }
        Opcode::Permute => {
            let (Some(s), Some(r)) = (
                operand_ty(m, op, "source").and_then(|t| tile_shape(m, t)),
                result_ty(m, op, 0).and_then(|t| tile_shape(m, t)),
            ) else {
                return Ok(());
            };
            let perm: Vec<i32> = match op.attr("permutation") {
                Some(Attr::DenseI32(p)) => p.clone(),
                _ => Vec::new(),
            };
            let rank = s.len();
            if rank < 2 {
                return Err(op_err(format!("expects at least rank 2, but got: {rank}")));
            }
            if perm.len() != rank {
                return Err(op_err(format!(
                    "expect permutation size ({}) to equal the rank of the source ({rank})",
                    perm.len()
                )));
            }
            let mut sorted = perm.clone();
            sorted.sort_unstable();
            sorted.dedup();
            if sorted.len() != perm.len() {
                return Err(op_err("expect permutation elements to be unique"));
            }
            for (i, p) in perm.iter().enumerate() {
                if *p < 0 || *p as usize >= rank {
                    return Err(op_err(format!(
                        "permutation element at index {i} ({p}) is out of bound [0, {rank})"
                    )));
                }
            }
            if r.len() != rank {
                return Ok(());
            }
            for (i, p) in perm.iter().enumerate() {
                if r[i] != s[*p as usize] {
                    return Err(op_err(format!(
                        "result shape invalid at index {i}, expected: {}, but got: {}",
                        s[*p as usize], r[i]
                    )));
                }
            }
            Ok(())
        }
        Opcode::Reshape => {
            let (Some(s), Some(r)) = (
                operand_ty(m, op, "source").and_then(|t| tile_shape(m, t)),
                result_ty(m, op, 0).and_then(|t| tile_shape(m, t)),
            ) else {
                return Ok(());
            };
            if s.iter().product::<i64>() != r.iter().product::<i64>() {
                return Err(op_err(
                    "expected source tile and result tile to have the same number of elements",
                ));
            }
            Ok(())
        }
        Opcode::Extract => subtile(m, op, Subtile::Extract),
        Opcode::Iota => {
            let Some(rt) = result_ty(m, op, 0) else {
                return Ok(());
            };
            let (Some(shape), Some(e)) = (tile_shape(m, rt), tile_scalar(m, rt)) else {
                return Ok(());
            };
            if shape.len() != 1 {
                return Err(op_err("expects result type to be 1-d tile"));
            }
            let w = e.bit_width();
            if w < 64 && (shape[0] as u64) > (1u64 << w) {
                return Err(op_err(format!(
                    "the number of elements {} exceeds the maximum value of element type '{}'",
                    shape[0],
                    e.name()
                )));
            }
            Ok(())
        }
        Opcode::Select => {
            if result_scalar(m, op) == Some(Scalar::F4E2M1FN) {
                return Err(op_err("cannot operate on sub-byte type F4E2M1FN"));
            }
            Ok(())
        }
        Opcode::Pack | Opcode::Unpack => {
            let (Some(st), Some(rt)) = (operand_ty(m, op, "source"), result_ty(m, op, 0)) else {
                return Ok(());
            };
            let (Some(s), Some(r)) = (tile_shape(m, st), tile_shape(m, rt)) else {
                return Ok(());
            };
            let (Some(se), Some(re)) = (tile_scalar(m, st), tile_scalar(m, rt)) else {
                return Ok(());
            };
            if s.len() != 1 {
                return Err(op_err("expects source and result to be rank-1 tiles"));
            }
            if se.bit_width() == re.bit_width() {
                return Err(op_err(
                    "expects source and result to have different element type widths",
                ));
            }
            let bits = |e: Scalar, d: &[i64]| -> i64 {
                let w = match e {
                    Scalar::I1 => 1,
                    other => other.bit_width() as i64,
                };
                w * d.iter().product::<i64>()
            };
            let (sb, rb) = (bits(se, s), bits(re, r));
            if sb % 8 != 0 {
                return Err(op_err("expects source tile to be byte-aligned"));
            }
            if rb % 8 != 0 {
                return Err(op_err("expects result tile to be byte-aligned"));
            }
            if sb != rb {
                return Err(op_err(format!("expects source and result to have the same size in bytes, but got source tile size {} bytes and result tile size {} bytes", sb / 8, rb / 8)));
            }
            Ok(())
        }
        Opcode::MmaF => {
            mma_shapes(m, op)?;
            mmaf_types(m, op)
        }
        Opcode::MmaI => mma_shapes(m, op),
        Opcode::MmaFScaled => {
            mma_shapes(m, op)?;
            mmaf_scaled(m, op)
        }
        Opcode::Insert => subtile(m, op, Subtile::Insert),
        Opcode::JoinTokens => {
            if op.operand_group("tokens").len() < 2 {
                return Err(op_err("expect two or more tokens"));
            }
            Ok(())
        }
        Opcode::LoadPtrTko => memory_load(op),
        Opcode::StorePtrTko => memory_store(op),
        Opcode::LoadViewTko => {
            view_load_store(m, op, result_ty(m, op, 0))?;
            memory_load(op)
        }
        Opcode::StoreViewTko => {
            view_load_store(m, op, operand_ty(m, op, "tile"))?;
            memory_store(op)
        }
        Opcode::AtomicRMWTko => {
            let (Some(p), Some(a)) = (operand_ty(m, op, "pointers"), operand_ty(m, op, "arg"))
            else {
                return Ok(());
            };
            let (Some(pt), Some(ae)) = (tile_pointee(m, p), tile_elem(m, a)) else {
                return Ok(());
            };
            if !same_type(m, pt, ae) {
                return Err(op_err(format!(
                    "expected pointee type ({}) to match element type of 'arg' ({})",
                    fmt_ty(m, pt),
                    fmt_ty(m, ae)
                )));
            }
            if let Some(mask) = operand_ty(m, op, "mask") {
                if tile_shape(m, mask) != tile_shape(m, a) {
                    return Err(op_err(
                        "failed to verify that all of {pointers, arg, mask} have same shape",
                    ));
                }
            }
            let mode = enum_attr(op, "mode", EnumKind::AtomicRmwMode).unwrap_or(0);
            rmw_mode(mode, scalar_of(m, ae))?;
            atomic_ordering(op)
        }
        Opcode::AtomicCASTko => {
            let (Some(p), Some(v)) = (operand_ty(m, op, "pointers"), operand_ty(m, op, "val"))
            else {
                return Ok(());
            };
            let (Some(pt), Some(ve)) = (tile_pointee(m, p), tile_elem(m, v)) else {
                return Ok(());
            };
            if !same_type(m, pt, ve) {
                return Err(op_err(format!(
                    "expected pointee type ({}) to match element type of 'val' ({})",
                    fmt_ty(m, pt),
                    fmt_ty(m, ve)
                )));
            }
            let w = scalar_of(m, ve).map(|s| s.bit_width());
            if w != Some(32) && w != Some(64) {
                return Err(op_err("expect only float or integer types with 32 or 64 bit"));
            }
            if let Some(mask) = operand_ty(m, op, "mask") {
                if tile_shape(m, mask) != tile_shape(m, v) {
                    return Err(op_err("failed to verify that all of {pointers, val, cmp and mask} have same shape"));
                }
            }
            atomic_ordering(op)
        }
        Opcode::AtomicRedViewTko => atomic_red_view(m, op),
        Opcode::MakeTensorView => {
            let (Some(b), Some(r)) = (operand_ty(m, op, "base"), result_ty(m, op, 0)) else {
                return Ok(());
            };
            let Type::TensorView {
                element,
                shape,
                strides,
                ..
            } = &m.types[r]
            else {
                return Ok(());
            };
            let Some(pt) = tile_pointee(m, b) else {
                return Ok(());
            };
            if !same_type(m, *element, pt) {
                return Err(op_err(format!(
                    "expected pointer to {} to build tensor_view of this type, got {}",
                    fmt_ty(m, *element),
                    fmt_ty(m, pt)
                )));
            }
            let base_attr = match tile_elem(m, b).map(|e| &m.types[e]) {
                Some(Type::Pointer { ptr_attr, .. }) => *ptr_attr,
                _ => None,
            };
            let view_attr = match &m.types[r] {
                Type::TensorView { ptr_attr, .. } => *ptr_attr,
                _ => None,
            };
            match (base_attr, view_attr) {
                (None, Some(_)) => {
                    return Err(op_err(
                        "pointer base without ptr_attr cannot produce tensor_view with ptr_attr",
                    ))
                }
                (Some(a), None) => {
                    return Err(op_err(format!(
                        "tensor_view must preserve ptr_attr from base pointer ({})",
                        ptr_attr_name(a)
                    )))
                }
                (Some(a), Some(v)) if a != v => {
                    return Err(op_err(format!(
                        "ptr_attr mismatch between base pointer ({}) and result tensor_view ({})",
                        ptr_attr_name(a),
                        ptr_attr_name(v)
                    )))
                }
                _ => {}
            }
            let dyn_shape = shape.iter().filter(|d| **d == crate::ir::DYNAMIC).count();
            let dyn_strides = strides.iter().filter(|d| **d == crate::ir::DYNAMIC).count();
            let ds = tys_of(m, op.operand_group("dynamicShape"));
            let dt = tys_of(m, op.operand_group("dynamicStrides"));
            if dyn_shape != ds.len() {
                return Err(op_err(format!(
                    "expected {dyn_shape} dynamic shape operands, got {}",
                    ds.len()
                )));
            }
            if dyn_strides != dt.len() {
                return Err(op_err(format!(
                    "expected {dyn_strides} dynamic stride operands, got {}",
                    dt.len()
                )));
            }
            let base = ds.first().or(dt.first()).copied();
            if let Some(base) = base {
                for (what, list) in [("shape", &ds), ("stride", &dt)] {
                    for (i, t) in list.iter().enumerate() {
                        if !same_type(m, *t, base) {
                            return Err(op_err(format!(
                                "expected dynamic {what} index {i} to be of the same type as the other dynamic values ({}), got {}",
                                fmt_ty(m, base),
                                fmt_ty(m, *t)
                            )));
                        }
                    }
                }
            }
            Ok(())
        }
        Opcode::MakePartitionView | Opcode::MakeStridedView | Opcode::MakeGatherScatterView => {
            let (Some(tv), Some(r)) = (operand_ty(m, op, "tensor_view"), result_ty(m, op, 0))
            else {
                return Ok(());
            };
            let inner = match &m.types[r] {
                Type::PartitionView { tensor_view, .. }
                | Type::StridedView { tensor_view, .. }
                | Type::GatherScatterView { tensor_view, .. } => *tensor_view,
                _ => return Ok(()),
            };
            if !same_type(m, tv, inner) {
                return Err(op_err(format!(
                    "expected the type of the provided tensor_view value ({}) to be the same as the view's tensor_view type ({})",
                    fmt_ty(m, tv),
                    fmt_ty(m, inner)
                )));
            }
            Ok(())
        }
        Opcode::GetTensorShape => {
            let Some(src) = operand_ty(m, op, "src") else {
                return Ok(());
            };
            if let Type::TensorView { shape, .. } = &m.types[src] {
                if shape.len() != op.results.len() {
                    return Err(op_err(format!(
                        "expected {} results due to tensor rank, but got {}",
                        shape.len(),
                        op.results.len()
                    )));
                }
            }
            Ok(())
        }
        Opcode::GetIndexSpaceShape => {
            let Some(src) = operand_ty(m, op, "src") else {
                return Ok(());
            };
            if let Some((_, _, rank)) = view_tile(m, src) {
                if rank != op.results.len() {
                    return Err(op_err(format!(
                        "expected {rank} results due to view index space rank, but got {}",
                        op.results.len()
                    )));
                }
            }
            Ok(())
        }
        Opcode::PrintTko => {
            let s = match op.attr("str") {
                Some(Attr::String(s)) => s.as_str(),
                _ => "",
            };
            let Some(n) = format_args(s) else {
                return Err(op_err("found unterminated format expression"));
            };
            let got = op.operand_group("args").len();
            if n != got {
                return Err(op_err(format!(
                    "incorrect number of operands: expected {n}, found {got}"
                )));
            }
            Ok(())
        }
        Opcode::Reduce => aggregate(m, op, false),
        Opcode::Scan => aggregate(m, op, true),
        Opcode::For => {
            let args = block_args(op, 0);
            let Some((iv, iters)) = args.split_first() else {
                return Err(op_err(
                    "expected at least one block argument for induction variable",
                ));
            };
            if let Some(lb) = operand_ty(m, op, "lowerBound") {
                let it = m.values[*iv].ty;
                if !same_type(m, it, lb) {
                    return Err(op_err(format!(
                        "expected induction variable to be same type as bounds and step: {} vs {}",
                        fmt_ty(m, it),
                        fmt_ty(m, lb)
                    )));
                }
            }
            let bounds: Vec<TypeId> = ["lowerBound", "upperBound", "step"]
                .iter()
                .filter_map(|n| operand_ty(m, op, n))
                .collect();
            if bounds.windows(2).any(|w| m.types[w[0]] != m.types[w[1]]) {
                return Err(op_err(
                    "failed to verify that all of {lowerBound, upperBound, step} have same type",
                ));
            }
            let inits = tys_of(m, op.operand_group("initValues"));
            let results = tys_of(m, &op.results);
            if !types_eq(m, &inits, &results) {
                return Err(op_err(
                    "failed to verify that all of {initValues, resultValues} have same type",
                ));
            }
            loop_iter_values(m, op, iters)?;
            if contains_return(m, op) {
                return Err(op_err("'for' loop cannot contain 'return' operations"));
            }
            Ok(())
        }
        Opcode::Loop => loop_iter_values(m, op, block_args(op, 0)),
        Opcode::If => check_if(m, op),
        Opcode::Break => {
            let lp = early_exit(m, tree, id, &[Opcode::Loop])?;
            let want = tys_of(m, &m.ops[lp].results);
            let got = tys_of(m, &op.operands);
            if !types_eq(m, &want, &got) {
                return Err(op_err(format!(
                    "operand types must correspond to the parent loop result types: ({}) vs ({})",
                    fmt_tys(m, &got),
                    fmt_tys(m, &want)
                )));
            }
            Ok(())
        }
        Opcode::Continue => {
            let lp = early_exit(m, tree, id, &[Opcode::For, Opcode::Loop])?;
            let parent = &m.ops[lp];
            let got = tys_of(m, &op.operands);
            if parent.opcode == Opcode::Loop {
                let want = tys_of(m, op_operands_all(parent));
                if !types_eq(m, &want, &got) {
                    return Err(Fail::Plain(format!(
                        "`loop` is missing a valid terminator. `continue` op should have operand types that match the parent loop iter_values: ({}), but found: ({})",
                        fmt_tys(m, &want),
                        fmt_tys(m, &got)
                    )));
                }
            } else {
                let want = tys_of(m, &parent.results);
                if !types_eq(m, &want, &got) {
                    return Err(Fail::Plain(format!(
                        "`for` is missing a valid terminator. `continue` op should have operand types that match the parent loop return types: ({}), but found: ({})",
                        fmt_tys(m, &want),
                        fmt_tys(m, &got)
                    )));
                }
            }
            Ok(())
        }
        Opcode::Return => check_return(m, tree, id),
        Opcode::Assume => check_assume(m, op),
        Opcode::Entry => check_entry(m, op),
        Opcode::Global => {
            super::debuginfo::check_global(m, op)?;
            if let Some(Attr::Dense { ty, .. }) = op.attr("value") {
                if tile_shape(m, *ty).map(|s| s.len()) != Some(1) {
                    return Err(op_err("type must have rank 1"));
                }
            }
            Ok(())
        }
        Opcode::GetGlobal => check_get_global(m, tree, op),
        Opcode::Alloca => {
            let align = int_attr(op, "alignment").unwrap_or(0);
            if align <= 0 || align & (align - 1) != 0 {
                return Err(op_err("'alignment' must be power of two"));
            }
            let Some(pt) = result_ty(m, op, 0).and_then(|t| tile_pointee(m, t)) else {
                return Ok(());
            };
            let size = scalar_of(m, pt)
                .map(|s| match s {
                    Scalar::I1 => 1,
                    s => (s.bit_width() / 8) as i64,
                })
                .unwrap_or(0);
            if align < size {
                return Err(op_err(format!(
                    "'alignment' ({align}) must be at least the natural size ({size} bytes) for element type {}",
                    fmt_ty(m, pt)
                )));
            }
            Ok(())
        }
        _ => Ok(()),
    }
    .and_then(|()| pure_inside_aggregate(m, tree, id))
}

fn pure_inside_aggregate(m: &Module, tree: &Tree, id: OpId) -> Check {
    let op = &m.ops[id];
    if let Some((p, _)) = tree.parent(id) {
        let pk = m.ops[p].opcode;
        if matches!(pk, Opcode::Reduce | Opcode::Scan)
            && op.opcode != Opcode::Yield
            && has_memory_effect(m, id)
        {
            return Err(op_err(format!(
                "only memory-effect-free operations are allowed inside 'cuda_tile.{}'",
                pk.mnemonic()
            )));
        }
    }
    Ok(())
}

/// The rounding modes `ftof` allows, by conversion kind.
fn ftof_rounding(from: Scalar, to: Scalar, r: u8) -> Check {
    const NEAREST_AWAY: u8 = 7;
    let low_precision = matches!(
        to,
        Scalar::F8E4M3FN | Scalar::F8E5M2 | Scalar::F4E2M1FN | Scalar::F8E5M3FNU
    );
    if to == Scalar::F8E8M0FNU {
        if r != RM_ZERO && r != RM_POSITIVE_INF {
            return Err(op_err("invalid rounding mode specified for conversion to f8E8M0FNU. Only 'zero' and 'positive_inf' are supported"));
        }
    } else if low_precision {
        if r != RM_NEAREST_EVEN {
            return Err(op_err("invalid rounding mode specified for conversion to low-precision type. Only 'nearest_even' is supported"));
        }
    } else if to.bit_width() > from.bit_width() {
        if !matches!(r, RM_NEAREST_EVEN..=RM_POSITIVE_INF | NEAREST_AWAY) {
            return Err(op_err("invalid rounding mode specified for widening conversion. Only IEEE float rounding modes are supported: 'nearest_even', 'zero', 'negative_inf', 'positive_inf', 'nearest_away'"));
        }
    } else if from == Scalar::F64 && to == Scalar::F32 {
        if r > RM_POSITIVE_INF {
            return Err(op_err("invalid rounding mode specified for conversion from f64 to f32. Only 'nearest_even', 'zero', 'negative_inf', and 'positive_inf' are supported"));
        }
    } else if from == Scalar::F32 && to == Scalar::TF32 {
        if !matches!(r, RM_NEAREST_EVEN | RM_ZERO | NEAREST_AWAY) {
            return Err(op_err("invalid rounding mode specified for conversion from f32 to tf32. Only 'nearest_even', 'zero', and 'nearest_away' are supported"));
        }
    } else if r != RM_NEAREST_EVEN && r != RM_ZERO {
        return Err(op_err("invalid rounding mode specified. Only 'nearest_even' and 'zero' are supported for narrowing conversions to standard types"));
    }
    Ok(())
}

/// Whether a `return` sits anywhere inside `op`'s regions.
fn contains_return(m: &Module, op: &Op) -> bool {
    let mut stack: Vec<OpId> = op
        .regions
        .iter()
        .flat_map(|r| r.blocks.iter().flat_map(|b| b.ops.iter().copied()))
        .collect();
    while let Some(id) = stack.pop() {
        let inner = &m.ops[id];
        if inner.opcode == Opcode::Return {
            return true;
        }
        for r in &inner.regions {
            for b in &r.blocks {
                stack.extend(b.ops.iter().copied());
            }
        }
    }
    false
}

fn check_assume(m: &Module, op: &Op) -> Check {
    let Some(t) = result_ty(m, op, 0) else {
        return Ok(());
    };
    let elem = tile_elem(m, t).map(|e| &m.types[e]);
    let int_or_ptr = matches!(elem, Some(Type::Pointer { .. }))
        || matches!(elem, Some(Type::Scalar(s)) if s.is_integer());
    let shape = tile_shape(m, t);
    match op.attr("predicate") {
        Some(Attr::DivBy {
            divisor,
            every,
            along,
        }) => {
            let n = "'cuda_tile.div_by'";
            if *divisor == 0 || divisor & (divisor - 1) != 0 {
                return Err(op_err(format!("{n} divisor must be a power of 2")));
            }
            if every.is_some() != along.is_some() {
                return Err(op_err(format!(
                    "{n} 'every'/'along' must be used in combination"
                )));
            }
            if *divisor > 1 << 62 {
                return Err(op_err(format!("{n} divisor is too large")));
            }
            if matches!(m.types[t], Type::TensorView { .. }) {
                if every.is_some() {
                    return Err(op_err(format!("{n} 'every'/'along' cannot be used if the constrained value is a tensor_view")));
                }
                return Ok(());
            }
            let Some(shape) = shape else {
                return Err(op_err(format!(
                    "{n} is valid only for tile of integer/pointer or tensor_view values"
                )));
            };
            if shape.is_empty() && every.is_some() {
                return Err(op_err(format!(
                    "{n} 'every'/'along' cannot be used if the constrained value is a 0D tile"
                )));
            }
            if !int_or_ptr {
                return Err(op_err(format!(
                    "{n} is valid only for tile of integer/pointer or tensor_view values"
                )));
            }
            let (Some(every), Some(along)) = (every, along) else {
                return Ok(());
            };
            let rank = shape.len() as i64;
            if *along < 0 || *along >= rank {
                return Err(op_err(format!(
                    "{n} every_dim ({along}) must be >= 0 and < tile rank ({rank})"
                )));
            }
            let size = shape[*along as usize];
            if *every < 0 || *every > size {
                return Err(op_err(format!("expected {n} every_dim to be within 0 and the size of the respective dimension ({size})")));
            }
            Ok(())
        }
        Some(Attr::SameElements(values)) => {
            let n = "'cuda_tile.same_elements'";
            let Some(shape) = shape.filter(|_| int_or_ptr) else {
                return Err(op_err(format!(
                    "{n} is valid only for tile of integer/pointer values"
                )));
            };
            if values.len() != shape.len() {
                return Err(op_err(format!(
                    "expected number of values in {n} ({}) to match rank of constrained tile ({})",
                    values.len(),
                    shape.len()
                )));
            }
            for (i, (v, d)) in values.iter().zip(shape).enumerate() {
                if *v < 0 || v > d {
                    return Err(op_err(format!("expected {n} value {i} to be within 0 and the size of the respective dimension ({d})")));
                }
            }
            Ok(())
        }
        Some(Attr::Bounded { lb, ub }) => {
            let n = "'cuda_tile.bounded'";
            let Some(Type::Scalar(s)) = elem.filter(|_| shape.is_some()) else {
                return Err(op_err(format!(
                    "{n} is valid only for tile of integer values"
                )));
            };
            if !s.is_integer() {
                return Err(op_err(format!(
                    "{n} is valid only for tile of integer values"
                )));
            }
            let w = s.bit_width();
            let (min, max) = if w >= 64 {
                (i64::MIN, i64::MAX)
            } else {
                (-(1i64 << (w - 1)), (1i64 << (w - 1)) - 1)
            };
            if let Some(lb) = lb {
                if *lb < min || *lb > max {
                    return Err(op_err(format!(
                        "{n} expects lower bound to be within [{min}, {max}]"
                    )));
                }
            }
            if let Some(ub) = ub {
                if *ub < min || *ub > max {
                    return Err(op_err(format!(
                        "{n} expects upper bound to be within [{min}, {max}]"
                    )));
                }
            }
            if let (Some(lb), Some(ub)) = (lb, ub) {
                if lb > ub {
                    return Err(op_err(format!(
                        "{n} expects lower bound to be less than or equal to upper bound"
                    )));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn check_return(m: &Module, tree: &Tree, id: OpId) -> Check {
    let op = &m.ops[id];
    let mut cur = id;
    let entry = loop {
        let Some((p, _)) = tree.parent(cur) else {
            return Err(op_err(
                "must be used within a cuda_tile.entry, cuda_tile.if, or cuda_tile.loop operation",
            ));
        };
        match m.ops[p].opcode {
            Opcode::Entry => break p,
            Opcode::If | Opcode::Loop => cur = p,
            _ => return Err(op_err(
                "must be used within a cuda_tile.entry, cuda_tile.if, or cuda_tile.loop operation",
            )),
        }
    };
    let entry = &m.ops[entry];
    let n_results = match entry.attr("function_type") {
        Some(Attr::Type(t)) => match &m.types[*t] {
            Type::Function { results, .. } => results.len(),
            _ => 0,
        },
        _ => 0,
    };
    let name = match entry.attr("sym_name") {
        Some(Attr::String(s)) => s.as_str(),
        _ => "",
    };
    if op.operands.len() != n_results {
        return Err(op_err(format!(
            "has {} operands, but enclosing function (@{name}) returns {n_results}",
            op.operands.len()
        )));
    }
    if !op.operands.is_empty() {
        return Err(op_err(format!(
            "has {} operands, but entry function must return 0 operands",
            op.operands.len()
        )));
    }
    Ok(())
}

fn op_operands_all(op: &Op) -> &[ValueId] {
    op.operand_group("initValues")
}

fn check_if(m: &Module, op: &Op) -> Check {
    let rets = tys_of(m, &op.results);
    let has = !rets.is_empty();
    for (i, t) in rets.iter().enumerate() {
        match &m.types[*t] {
            Type::TensorView { .. } => {
                return Err(op_err(format!(
                    "result type {i} is a tensor_view, which is not supported"
                )))
            }
            t if is_view(t) => {
                return Err(op_err(format!(
                    "result type {i} is a tile view, which is not supported"
                )))
            }
            _ => {}
        }
    }
    for (region, name) in [(0usize, "then"), (1, "else")] {
        let Some(term) = terminator(m, op, region) else {
            if region == 1 && has {
                return Err(op_err("has non-empty return type, must define else branch"));
            }
            continue;
        };
        if term.opcode != Opcode::Yield {
            continue;
        }
        let y = tys_of(m, &term.operands);
        if has && y.is_empty() {
            return Err(op_err(format!(
                "has return type of {} but {name} branch does not yield anything",
                fmt_tys(m, &rets)
            )));
        }
        if !has && !y.is_empty() {
            return Err(op_err(format!(
                "does not return a value, but {name} branch yields {}",
                fmt_tys(m, &y)
            )));
        }
        if !types_eq(m, &y, &rets) {
            return Err(op_err(format!(
                "type does not match yield type, {name} branch yields {} but op result type is {}",
                fmt_tys(m, &y),
                fmt_tys(m, &rets)
            )));
        }
    }
    Ok(())
}

fn check_entry(m: &Module, op: &Op) -> Check {
    let Some(Attr::Type(ft)) = op.attr("function_type") else {
        return Err(op_err("requires attribute 'function_type'"));
    };
    let Type::Function { inputs, results } = &m.types[*ft] else {
        return Err(op_err(
            "attribute 'function_type' failed to satisfy constraint: type attribute of function type",
        ));
    };
    let args = tys_of(m, block_args(op, 0));
    if args.len() != inputs.len() {
        return Err(op_err(format!(
            "entry block must have {} arguments to match function signature",
            inputs.len()
        )));
    }
    for (i, (a, f)) in args.iter().zip(inputs).enumerate() {
        if !same_type(m, *a, *f) {
            return Err(op_err(format!(
                "type of entry block argument #{i}({}) must match the type of the corresponding argument in function signature({})",
                fmt_ty(m, *a),
                fmt_ty(m, *f)
            )));
        }
    }
    if !results.is_empty() || !op.results.is_empty() {
        return Err(op_err("entry op must not return values"));
    }
    // Private entries (the function flags' visibility bit, once the reader
    // records it as `symbol_visibility`).
    if enum_attr(op, "symbol_visibility", EnumKind::SymbolVisibility) == Some(1) {
        return Err(op_err("entry op must have public symbol visibility"));
    }
    for t in inputs {
        if tile_shape(m, *t).is_some_and(|s| !s.is_empty()) {
            return Err(op_err(
                "entry op must have scalar types (rank 0 !cuda_tile.tile)",
            ));
        }
    }
    super::debuginfo::check_function(m, op)?;
    Ok(())
}

fn check_get_global(m: &Module, tree: &Tree, op: &Op) -> Check {
    let name = match op.attr("name") {
        Some(Attr::String(s)) => s.clone(),
        _ => String::new(),
    };
    let global = tree
        .symbol(&name)
        .map(|g| &m.ops[g])
        .filter(|g| g.opcode == Opcode::Global);
    let Some(global) = global else {
        return Err(op_err(format!(
            "'{name}' does not reference a valid global"
        )));
    };
    let Some(Attr::Dense { ty, .. }) = global.attr("value") else {
        return Ok(());
    };
    let (Some(ge), Some(rt)) = (tile_elem(m, *ty), result_ty(m, op, 0)) else {
        return Ok(());
    };
    let Some(pt) = tile_pointee(m, rt) else {
        return Ok(());
    };
    if !same_type(m, ge, pt) {
        let ptr = tile_elem(m, rt).unwrap_or(rt);
        return Err(op_err(format!(
            "pointee type of result type {} does not match type {} of the global @{name}",
            fmt_ty(m, ptr),
            fmt_ty(m, ge)
        )));
    }
    Ok(())
}

fn atomic_red_view(m: &Module, op: &Op) -> Check {
    let Some(view) = operand_ty(m, op, "view") else {
        return Ok(());
    };
    match &m.types[view] {
        Type::GatherScatterView { .. } => {
            return Err(op_err(
                "gather_scatter_view is not supported; use partition_view instead",
            ))
        }
        Type::PartitionView {
            padding: Some(_), ..
        }
        | Type::StridedView {
            padding: Some(_), ..
        } => {
            return Err(op_err(
                "views with padding_value are not supported for atomic reductions",
            ))
        }
        _ => {}
    }
    let Some((shape, elem, rank)) = view_tile(m, view) else {
        return Err(op_err("view operand must be a TileView type"));
    };
    let Some(vt) = operand_ty(m, op, "value") else {
        return Ok(());
    };
    let Some(ve) = tile_elem(m, vt) else {
        return Ok(());
    };
    if !same_type(m, elem, ve) {
        return Err(op_err(format!(
            "view element type ({}) must match value element type ({})",
            fmt_ty(m, elem),
            fmt_ty(m, ve)
        )));
    }
    let vs = tile_shape(m, vt).unwrap_or(&[]);
    if vs != &shape[..] {
        return Err(op_err(format!(
            "view tile shape {} must match value shape {} for element-wise atomic operations",
            fmt_shape(&shape),
            fmt_shape(vs)
        )));
    }
    let mode = enum_attr(op, "mode", EnumKind::AtomicRmwMode).unwrap_or(0);
    if mode == RMW_XCHG {
        return Err(op_err("atomic_red_view_tko op cannot use xchg operation"));
    }
    rmw_mode(mode, scalar_of(m, ve))?;
    let ord = enum_attr(op, "memory_ordering_semantics", EnumKind::MemoryOrdering);
    if ord != Some(MO_RELAXED) {
        return Err(op_err(
            "only 'relaxed' memory ordering is supported for view-based atomic reductions",
        ));
    }
    if enum_attr(op, "memory_scope", EnumKind::MemoryScope) == Some(SCOPE_SYS) {
        return Err(op_err("memory scope 'sys' is not supported for view-based atomic reductions; use 'tl_blk' or 'device' for TMA compatibility"));
    }
    let idx = tys_of(m, op.operand_group("index"));
    if idx.len() != rank {
        return Err(op_err(format!(
            "expected {rank} index operand(s) for view with tile rank {rank}, got {}",
            idx.len()
        )));
    }
    for (i, t) in idx.iter().enumerate() {
        let s = tile_shape(m, *t).unwrap_or(&[]);
        if !s.is_empty() {
            return Err(op_err(format!(
                "index operand {i} must be a scalar tile (rank 0), got shape {}",
                fmt_shape(s)
            )));
        }
        if !tile_scalar(m, *t).is_some_and(|e| e.is_integer()) {
            return Err(op_err(format!(
                "index operand {i} must be a scalar integer tile, got element type {}",
                tile_elem(m, *t).map(|e| fmt_ty(m, e)).unwrap_or_default()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::format_args;

    #[test]
    fn printf_conversions_count_as_nvidia() {
        assert_eq!(format_args("no args"), Some(0));
        assert_eq!(format_args("%d and %5.2f, 100%%"), Some(2));
        assert_eq!(format_args("value %"), None);
        assert_eq!(format_args("%5%"), None);
        assert_eq!(format_args("%\0"), Some(1));
    }
}
