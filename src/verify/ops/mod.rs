//! Per-op semantic rules: attributes (rounding modes, modifiers, memory
//! ordering and scope, atomic modes), shape rules of data-movement and MMA
//! ops, control flow (loops, `if`, `break`, `continue`, `return`),
//! `reduce`/`scan` bodies, views and entries. The module doc of
//! [`super`] lists them all; messages are NVIDIA's.
//!
//! `check_op` dispatches by opcode; the rules live by theme in `attrs`,
//! `views`, `control` and `shapes`.
use super::fmt::{shape as fmt_shape, ty as fmt_ty, tys as fmt_tys};
use super::types::{
    operand_ty, result_ty, same_type, tile_elem, tile_pointee, tile_scalar, tile_shape,
};
use super::{op_err, Check, Fail, Tree};
use crate::ir::{Attr, EnumKind, Module, Op, OpId, Opcode, Scalar, Type, TypeId, ValueId};

// Enum values, as in the bytecode.

mod attrs;
mod control;
mod shapes;
mod views;

use attrs::*;
use control::*;
use shapes::*;
use views::*;

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

fn scalar_of(m: &Module, t: TypeId) -> Option<Scalar> {
    match m.types.try_get(t)? {
        Type::Scalar(s) => Some(*s),
        _ => None,
    }
}

/// Checks the semantic rules of one op.
/// The rules NVIDIA's verifier checks after an op's nested ops (an op's
/// region verifier): a `for` holds no `return`.
pub(crate) fn check_on_exit(m: &Module, id: OpId) -> Check {
    let op = &m.ops[id];
    if op.opcode == Opcode::For && contains_return(m, op) {
        return Err(op_err("'for' loop cannot contain 'return' operations"));
    }
    Ok(())
}

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
            loop_iter_values(m, op, iters)
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
