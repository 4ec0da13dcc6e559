//! Type rules: well-formed types in the type table, and the type classes and
//! type relations each op declares for its operands and results.
//!
//! Messages follow NVIDIA's generated verifiers: `operand #1 must be tile of
//! f16 or bf16 or f32 or f64 values, but got '!cuda_tile.tile<4xi32>'`,
//! `failed to verify that all of {lhs, rhs, result} have same type`.
use super::fmt::{shape as fmt_shape, ty as fmt_ty};
use super::{op_err, Check, Errors};
use crate::ir::{Module, Op, OpId, Opcode, Scalar, Type, TypeId, ValueId, DYNAMIC};

/// The most elements a tile may hold.
pub const MAX_TILE_ELEMENTS: i64 = 1 << 24;

const INTS: &[Scalar] = &[
    Scalar::I1,
    Scalar::I8,
    Scalar::I16,
    Scalar::I32,
    Scalar::I64,
];
const INTS4: &[Scalar] = &[
    Scalar::I1,
    Scalar::I8,
    Scalar::I16,
    Scalar::I32,
    Scalar::I64,
    Scalar::I4,
];
const BASE_FLOATS: &[Scalar] = &[Scalar::F16, Scalar::BF16, Scalar::F32, Scalar::F64];
const FLOATS: &[Scalar] = &[
    Scalar::F16,
    Scalar::BF16,
    Scalar::F32,
    Scalar::F64,
    Scalar::TF32,
    Scalar::F8E4M3FN,
    Scalar::F8E5M2,
    Scalar::F8E8M0FNU,
    Scalar::F4E2M1FN,
    Scalar::F8E5M3FNU,
];
const NUMBERS: &[Scalar] = &[
    Scalar::I1,
    Scalar::I8,
    Scalar::I16,
    Scalar::I32,
    Scalar::I64,
    Scalar::F16,
    Scalar::BF16,
    Scalar::F32,
    Scalar::F64,
    Scalar::TF32,
    Scalar::F8E4M3FN,
    Scalar::F8E5M2,
    Scalar::F8E8M0FNU,
    Scalar::F4E2M1FN,
    Scalar::F8E5M3FNU,
];
const NUMBERS4: &[Scalar] = &[
    Scalar::I1,
    Scalar::I8,
    Scalar::I16,
    Scalar::I32,
    Scalar::I64,
    Scalar::F16,
    Scalar::BF16,
    Scalar::F32,
    Scalar::F64,
    Scalar::TF32,
    Scalar::F8E4M3FN,
    Scalar::F8E5M2,
    Scalar::F8E8M0FNU,
    Scalar::F4E2M1FN,
    Scalar::F8E5M3FNU,
    Scalar::I4,
];
const MMAF_IN: &[Scalar] = &[
    Scalar::F16,
    Scalar::BF16,
    Scalar::F32,
    Scalar::F64,
    Scalar::TF32,
    Scalar::F8E4M3FN,
    Scalar::F8E5M2,
];
const MMAFS_IN: &[Scalar] = &[Scalar::F8E4M3FN, Scalar::F8E5M2, Scalar::F4E2M1FN];
const MMAFS_SCALE: &[Scalar] = &[Scalar::F8E4M3FN, Scalar::F8E8M0FNU, Scalar::F8E5M3FNU];
const MMAF_OUT: &[Scalar] = &[Scalar::F16, Scalar::F32, Scalar::F64];

/// A type class an operand or result must belong to.
#[derive(Clone, Copy)]
enum Class {
    /// A tile of one of these element types.
    Tile(&'static [Scalar]),
    /// A tile with one of these element types and a custom summary.
    Named(&'static [Scalar], &'static str),
    /// A rank-0 tile of one of these element types.
    Scalar0(&'static [Scalar]),
    /// Any tile.
    AnyTile,
    /// A tile of pointers.
    PtrTile,
    /// A rank-0 tile of a pointer.
    PtrScalar,
    /// A token.
    Token,
    /// A tensor view.
    TensorView,
    /// A partition, strided or gather/scatter view.
    TileView,
    /// A partition view.
    PartitionView,
    /// A strided view.
    StridedView,
    /// A gather/scatter view.
    GatherScatterView,
}

/// An element type's name as NVIDIA's type summaries spell it.
fn summary_name(s: Scalar) -> &'static str {
    match s {
        Scalar::F8E5M3FNU => "fnv8E5M3FNU",
        other => other.name(),
    }
}

fn summary(c: Class) -> String {
    let list = |s: &[Scalar]| {
        s.iter()
            .map(|x| summary_name(*x))
            .collect::<Vec<_>>()
            .join(" or ")
    };
    match c {
        Class::Tile(s) => format!("tile of {} values", list(s)),
        Class::Named(s, n) => format!("{n} of {} values", list(s)),
        Class::Scalar0(s) => format!("0D tile of {} values", list(s)),
        Class::AnyTile => "Tile type".into(),
        Class::PtrTile => "tile of Pointer type values".into(),
        Class::PtrScalar => "0D tile of Pointer type values".into(),
        Class::Token => "cuda tile token type".into(),
        Class::TensorView => "tensor view type".into(),
        Class::TileView => "TileView instance".into(),
        Class::PartitionView => "partition view type".into(),
        Class::StridedView => "strided view type".into(),
        Class::GatherScatterView => "gather/scatter view type".into(),
    }
}

/// Whether two types are the same type (structurally: a module may hold
/// equal types at several indices).
pub(crate) fn same_type(m: &Module, a: TypeId, b: TypeId) -> bool {
    same_type_at(m, a, b, 0)
}

fn same_type_at(m: &Module, a: TypeId, b: TypeId, depth: u32) -> bool {
    if a == b {
        return true;
    }
    let (Some(x), Some(y)) = (m.types.try_get(a), m.types.try_get(b)) else {
        return false;
    };
    if depth > 16 {
        return false;
    }
    let s = |p: &TypeId, q: &TypeId| same_type_at(m, *p, *q, depth + 1);
    let all =
        |p: &[TypeId], q: &[TypeId]| p.len() == q.len() && p.iter().zip(q).all(|(p, q)| s(p, q));
    match (x, y) {
        (Type::Scalar(p), Type::Scalar(q)) => p == q,
        (Type::Token, Type::Token) => true,
        (
            Type::Pointer {
                pointee: p,
                ptr_attr: pa,
            },
            Type::Pointer {
                pointee: q,
                ptr_attr: qa,
            },
        ) => pa == qa && s(p, q),
        (
            Type::Tile {
                element: p,
                shape: ps,
            },
            Type::Tile {
                element: q,
                shape: qs,
            },
        ) => ps == qs && s(p, q),
        (
            Type::TensorView {
                element: p,
                shape: ps,
                strides: pst,
                ptr_attr: pa,
            },
            Type::TensorView {
                element: q,
                shape: qs,
                strides: qst,
                ptr_attr: qa,
            },
        ) => ps == qs && pst == qst && pa == qa && s(p, q),
        (
            Type::PartitionView {
                tile_shape: p1,
                tensor_view: p2,
                dim_map: p3,
                padding: p4,
            },
            Type::PartitionView {
                tile_shape: q1,
                tensor_view: q2,
                dim_map: q3,
                padding: q4,
            },
        ) => p1 == q1 && p3 == q3 && p4 == q4 && s(p2, q2),
        (
            Type::GatherScatterView {
                tile_shape: p1,
                tensor_view: p2,
                sparse_dim: p3,
                padding: p4,
            },
            Type::GatherScatterView {
                tile_shape: q1,
                tensor_view: q2,
                sparse_dim: q3,
                padding: q4,
            },
        ) => p1 == q1 && p3 == q3 && p4 == q4 && s(p2, q2),
        (
            Type::StridedView {
                tile_shape: p1,
                traversal_strides: p2,
                tensor_view: p3,
                dim_map: p4,
                padding: p5,
            },
            Type::StridedView {
                tile_shape: q1,
                traversal_strides: q2,
                tensor_view: q3,
                dim_map: q4,
                padding: q5,
            },
        ) => p1 == q1 && p2 == q2 && p4 == q4 && p5 == q5 && s(p3, q3),
        (
            Type::Function {
                inputs: pi,
                results: pr,
            },
            Type::Function {
                inputs: qi,
                results: qr,
            },
        ) => all(pi, qi) && all(pr, qr),
        _ => false,
    }
}

/// The scalar element of a tile type, if `t` is a tile of scalars.
pub(crate) fn tile_scalar(m: &Module, t: TypeId) -> Option<Scalar> {
    match m.types.try_get(t)? {
        Type::Tile { element, .. } => match m.types.try_get(*element)? {
            Type::Scalar(s) => Some(*s),
            _ => None,
        },
        _ => None,
    }
}

/// The shape of a tile type.
pub(crate) fn tile_shape(m: &Module, t: TypeId) -> Option<&[i64]> {
    match m.types.try_get(t)? {
        Type::Tile { shape, .. } => Some(shape),
        _ => None,
    }
}

/// The element type of a tile type.
pub(crate) fn tile_elem(m: &Module, t: TypeId) -> Option<TypeId> {
    match m.types.try_get(t)? {
        Type::Tile { element, .. } => Some(*element),
        _ => None,
    }
}

/// The pointee of a tile of pointers.
pub(crate) fn tile_pointee(m: &Module, t: TypeId) -> Option<TypeId> {
    match m.types.try_get(tile_elem(m, t)?)? {
        Type::Pointer { pointee, .. } => Some(*pointee),
        _ => None,
    }
}

fn is_view(ty: &Type) -> bool {
    matches!(
        ty,
        Type::PartitionView { .. } | Type::StridedView { .. } | Type::GatherScatterView { .. }
    )
}

fn belongs(m: &Module, t: TypeId, c: Class) -> bool {
    let Some(ty) = m.types.try_get(t) else {
        return false;
    };
    match c {
        Class::Tile(s) | Class::Named(s, _) => tile_scalar(m, t).is_some_and(|e| s.contains(&e)),
        Class::Scalar0(s) => {
            tile_scalar(m, t).is_some_and(|e| s.contains(&e))
                && tile_shape(m, t).is_some_and(|d| d.is_empty())
        }
        Class::AnyTile => matches!(ty, Type::Tile { .. }),
        Class::PtrTile => tile_pointee(m, t).is_some(),
        Class::PtrScalar => {
            tile_pointee(m, t).is_some() && tile_shape(m, t).is_some_and(|d| d.is_empty())
        }
        Class::Token => matches!(ty, Type::Token),
        Class::TensorView => matches!(ty, Type::TensorView { .. }),
        Class::TileView => is_view(ty),
        Class::PartitionView => matches!(ty, Type::PartitionView { .. }),
        Class::StridedView => matches!(ty, Type::StridedView { .. }),
        Class::GatherScatterView => matches!(ty, Type::GatherScatterView { .. }),
    }
}

/// Operand groups (by name) and results (by index) with their classes.
struct Sig {
    operands: &'static [(&'static str, Class)],
    results: &'static [Class],
}

const BF: Class = Class::Tile(BASE_FLOATS);
const IT: Class = Class::Tile(INTS);
const I1T: Class = Class::Tile(&[Scalar::I1]);

fn sig(op: Opcode) -> Sig {
    use Class::*;
    let s = |operands, results| Sig { operands, results };
    match op {
        Opcode::AbsF
        | Opcode::Ceil
        | Opcode::Cos
        | Opcode::CosH
        | Opcode::Exp
        | Opcode::Exp2
        | Opcode::Floor
        | Opcode::Log
        | Opcode::Log2
        | Opcode::NegF
        | Opcode::Rsqrt
        | Opcode::Sin
        | Opcode::SinH
        | Opcode::Sqrt
        | Opcode::Tan
        | Opcode::TanH => s(&[("source", BF)], &[BF]),
        Opcode::AbsI | Opcode::NegI => s(&[("source", IT)], &[IT]),
        Opcode::AddF
        | Opcode::SubF
        | Opcode::MulF
        | Opcode::DivF
        | Opcode::RemF
        | Opcode::MaxF
        | Opcode::MinF => s(&[("lhs", BF), ("rhs", BF)], &[BF]),
        Opcode::Atan2 => s(&[("x", BF), ("y", BF)], &[BF]),
        Opcode::FPowF => s(&[("source", BF), ("exponent", BF)], &[BF]),
        Opcode::FPowI => s(
            &[
                ("source", BF),
                (
                    "exponent",
                    Tile(&[Scalar::I1, Scalar::I8, Scalar::I16, Scalar::I32]),
                ),
            ],
            &[BF],
        ),
        Opcode::GdcWaitTko | Opcode::GdcLaunchDependentsTko | Opcode::MemoryFenceAliasTko => {
            s(&[("token", Token)], &[Token])
        }
        Opcode::AddI
        | Opcode::SubI
        | Opcode::MulI
        | Opcode::DivI
        | Opcode::RemI
        | Opcode::MaxI
        | Opcode::MinI
        | Opcode::AndI
        | Opcode::OrI
        | Opcode::XOrI
        | Opcode::ShLI
        | Opcode::ShRI => s(&[("lhs", IT), ("rhs", IT)], &[IT]),
        Opcode::MulhiI => s(&[("x", IT), ("y", IT)], &[IT]),
        Opcode::Fma => s(&[("lhs", BF), ("rhs", BF), ("acc", BF)], &[BF]),
        Opcode::CmpF => s(&[("lhs", BF), ("rhs", BF)], &[I1T]),
        Opcode::CmpI => s(&[("lhs", IT), ("rhs", IT)], &[I1T]),
        Opcode::Assert => s(&[("condition", I1T)], &[]),
        Opcode::Bitcast => s(&[("source", Tile(NUMBERS))], &[Tile(NUMBERS)]),
        Opcode::Broadcast | Opcode::Reshape | Opcode::Permute => {
            s(&[("source", AnyTile)], &[AnyTile])
        }
        Opcode::Cat => s(&[("lhs", AnyTile), ("rhs", AnyTile)], &[AnyTile]),
        Opcode::Constant => s(&[], &[Tile(NUMBERS)]),
        Opcode::Extract => s(
            &[("source", AnyTile), ("indices", Scalar0(&[Scalar::I32]))],
            &[AnyTile],
        ),
        Opcode::ExtI | Opcode::TruncI => s(&[("from", Tile(INTS4))], &[Tile(INTS4)]),
        Opcode::FToF => s(&[("from", Tile(FLOATS))], &[Tile(FLOATS)]),
        Opcode::FToI => s(&[("from", Tile(FLOATS))], &[IT]),
        Opcode::IToF => s(&[("from", IT)], &[Tile(FLOATS)]),
        Opcode::IntToPtr => s(&[("source", Tile(&[Scalar::I64]))], &[PtrTile]),
        Opcode::PtrToInt => s(&[("source", PtrTile)], &[Tile(&[Scalar::I64])]),
        Opcode::PtrToPtr => s(&[("source", PtrTile)], &[PtrTile]),
        Opcode::Offset => s(&[("ptr", PtrTile), ("offset", IT)], &[PtrTile]),
        Opcode::Iota => s(&[], &[IT]),
        Opcode::Select => s(
            &[
                ("cond", I1T),
                ("val_if_true", AnyTile),
                ("val_if_false", AnyTile),
            ],
            &[AnyTile],
        ),
        Opcode::GetTileBlockId | Opcode::GetNumTileBlocks => s(
            &[],
            &[
                Scalar0(&[Scalar::I32]),
                Scalar0(&[Scalar::I32]),
                Scalar0(&[Scalar::I32]),
            ],
        ),
        Opcode::GetGlobal | Opcode::Alloca => s(&[], &[PtrScalar]),
        Opcode::For => s(
            &[
                ("lowerBound", Scalar0(INTS)),
                ("upperBound", Scalar0(INTS)),
                ("step", Scalar0(INTS)),
            ],
            &[],
        ),
        Opcode::If => s(&[("condition", Scalar0(&[Scalar::I1]))], &[]),
        Opcode::JoinTokens => s(&[("tokens", Token)], &[Token]),
        Opcode::MakeToken => s(&[], &[Token]),
        Opcode::LoadPtrTko => s(
            &[
                ("source", PtrTile),
                ("mask", I1T),
                ("paddingValue", Tile(NUMBERS)),
                ("token", Token),
            ],
            &[AnyTile, Token],
        ),
        Opcode::StorePtrTko => s(
            &[
                ("destination", PtrTile),
                ("value", AnyTile),
                ("mask", I1T),
                ("token", Token),
            ],
            &[Token],
        ),
        Opcode::LoadViewTko => s(
            &[("view", TileView), ("index", IT), ("token", Token)],
            &[AnyTile, Token],
        ),
        Opcode::StoreViewTko => s(
            &[
                ("tile", AnyTile),
                ("view", TileView),
                ("index", IT),
                ("token", Token),
            ],
            &[Token],
        ),
        Opcode::AtomicRedViewTko => s(
            &[
                ("view", TileView),
                ("index", IT),
                ("value", AnyTile),
                ("token", Token),
            ],
            &[Token],
        ),
        Opcode::AtomicCASTko => s(
            &[
                ("pointers", PtrTile),
                ("cmp", AnyTile),
                ("val", AnyTile),
                ("mask", I1T),
                ("token", Token),
            ],
            &[AnyTile, Token],
        ),
        Opcode::AtomicRMWTko => s(
            &[
                ("pointers", PtrTile),
                ("arg", AnyTile),
                ("mask", I1T),
                ("token", Token),
            ],
            &[AnyTile, Token],
        ),
        Opcode::PrintTko => s(&[("args", AnyTile), ("token", Token)], &[Token]),
        Opcode::MakeTensorView => s(
            &[
                ("base", PtrScalar),
                ("dynamicShape", Scalar0(INTS)),
                ("dynamicStrides", Scalar0(INTS)),
            ],
            &[TensorView],
        ),
        Opcode::MakePartitionView => s(&[("tensor_view", TensorView)], &[PartitionView]),
        Opcode::MakeStridedView => s(&[("tensor_view", TensorView)], &[StridedView]),
        Opcode::MakeGatherScatterView => s(&[("tensor_view", TensorView)], &[GatherScatterView]),
        Opcode::GetTensorShape => s(&[("src", TensorView)], &[]),
        Opcode::GetIndexSpaceShape => s(&[("src", TileView)], &[]),
        Opcode::MmaF => s(
            &[
                ("lhs", Named(MMAF_IN, "mmaf operand tile type")),
                ("rhs", Named(MMAF_IN, "mmaf operand tile type")),
                ("acc", Named(MMAF_OUT, "mmaf acc/result tile type")),
            ],
            &[Named(MMAF_OUT, "mmaf acc/result tile type")],
        ),
        Opcode::MmaI => s(
            &[
                ("lhs", Named(&[Scalar::I8], "mmai operand tile type")),
                ("rhs", Named(&[Scalar::I8], "mmai operand tile type")),
                ("acc", Named(&[Scalar::I32], "mmai acc tile type")),
            ],
            &[Named(&[Scalar::I32], "mmai result tile type")],
        ),
        Opcode::MmaFScaled => s(
            &[
                ("lhs", Named(MMAFS_IN, "mmaf_scaled operand tile type")),
                ("rhs", Named(MMAFS_IN, "mmaf_scaled operand tile type")),
                ("acc", Named(&[Scalar::F32], "mmaf_scaled result tile type")),
                (
                    "lhs_scale",
                    Named(MMAFS_SCALE, "mmaf_scaled scale tile type"),
                ),
                (
                    "rhs_scale",
                    Named(MMAFS_SCALE, "mmaf_scaled scale tile type"),
                ),
            ],
            &[Named(&[Scalar::F32], "mmaf_scaled result tile type")],
        ),
        Opcode::Insert => s(
            &[
                ("source", AnyTile),
                ("destination", AnyTile),
                ("indices", Scalar0(&[Scalar::I32])),
            ],
            &[AnyTile],
        ),
        Opcode::Pack => s(&[("source", Tile(NUMBERS4))], &[Tile(&[Scalar::I8])]),
        Opcode::Unpack => s(&[("source", Tile(&[Scalar::I8]))], &[Tile(NUMBERS4)]),
        Opcode::Reduce | Opcode::Scan => s(&[("operands", AnyTile)], &[]),
        _ => s(&[], &[]),
    }
}

fn val_ty(m: &Module, v: ValueId) -> TypeId {
    m.values[v].ty
}

fn group_types(m: &Module, op: &Op, name: &str) -> Vec<TypeId> {
    op.operand_group(name)
        .iter()
        .map(|v| val_ty(m, *v))
        .collect()
}

/// The type of the single operand of group `name`.
pub(crate) fn operand_ty(m: &Module, op: &Op, name: &str) -> Option<TypeId> {
    op.operand(name).map(|v| val_ty(m, v))
}

/// The type of result `i`.
pub(crate) fn result_ty(m: &Module, op: &Op, i: usize) -> Option<TypeId> {
    op.results.get(i).map(|v| val_ty(m, *v))
}

/// Types of the named operand groups and results (`result` = result 0),
/// in order, or `None` if one is absent (optional and missing).
fn named_types(m: &Module, op: &Op, names: &[&str]) -> Vec<TypeId> {
    let mut out = Vec::new();
    for n in names {
        let t = match *n {
            "result" | "to" | "tile_result" => result_ty(m, op, 0),
            _ => operand_ty(m, op, n),
        };
        if let Some(t) = t {
            out.push(t);
        }
    }
    out
}

fn all_same(m: &Module, op: &Op, names: &[&str], what: &str) -> Check {
    let ts = named_types(m, op, names);
    let key = |t: TypeId| -> Option<Vec<i64>> {
        match what {
            "shape" => tile_shape(m, t).map(|s| s.to_vec()),
            "rank" => tile_shape(m, t).map(|s| vec![s.len() as i64]),
            _ => None,
        }
    };
    let same = |a: TypeId, b: TypeId| -> bool {
        if what == "type" {
            same_type(m, a, b)
        } else {
            key(a) == key(b)
        }
    };
    if ts.windows(2).any(|w| !same(w[0], w[1])) {
        let list = names.join(", ");
        let verb = if what == "type" {
            "have same type".to_string()
        } else {
            format!("have same {what}")
        };
        return Err(op_err(format!(
            "failed to verify that all of {{{list}}} {verb}"
        )));
    }
    Ok(())
}

fn same_elem(m: &Module, a: TypeId, b: TypeId) -> bool {
    match (tile_elem(m, a), tile_elem(m, b)) {
        (Some(x), Some(y)) => same_type(m, x, y),
        _ => false,
    }
}

/// Checks the type classes and type relations of one op.
pub(crate) fn check_op(m: &Module, id: OpId) -> Check {
    let op = &m.ops[id];
    for seg in &op.segments {
        if matches!(seg.name, "token" | "mask" | "paddingValue") && seg.len > 1 {
            return Err(op_err(format!(
                "operand group starting at #{} requires 0 or 1 element, but found {}",
                seg.start, seg.len
            )));
        }
    }
    let s = sig(op.opcode);
    // Operand classes, numbered over the whole operand list.
    for (name, class) in s.operands {
        let Some(seg) = op.segments.iter().find(|g| g.name == *name) else {
            continue;
        };
        for (k, v) in op.operand_group(name).iter().enumerate() {
            let t = val_ty(m, *v);
            if !belongs(m, t, *class) {
                let variadic = if is_variadic(op.opcode, name) {
                    "variadic of "
                } else {
                    ""
                };
                return Err(op_err(format!(
                    "operand #{} must be {variadic}{}, but got {}",
                    seg.start as usize + k,
                    summary(*class),
                    fmt_ty(m, t)
                )));
            }
        }
    }
    for (i, class) in s.results.iter().enumerate() {
        if let Some(t) = result_ty(m, op, i) {
            if !belongs(m, t, *class) {
                return Err(op_err(format!(
                    "result #{i} must be {}, but got {}",
                    summary(*class),
                    fmt_ty(m, t)
                )));
            }
        }
    }
    let variadic_results = match op.opcode {
        Opcode::Reduce | Opcode::Scan => Some(Class::AnyTile),
        Opcode::GetTensorShape | Opcode::GetIndexSpaceShape => Some(Class::Scalar0(INTS)),
        _ => None,
    };
    if let Some(class) = variadic_results {
        for (i, r) in op.results.iter().enumerate() {
            let t = val_ty(m, *r);
            if !belongs(m, t, class) {
                return Err(op_err(format!(
                    "result #{i} must be variadic of {}, but got {}",
                    summary(class),
                    fmt_ty(m, t)
                )));
            }
        }
    }
    relations(m, op)
}

/// Checks that an op has the number of results its kind fixes (NVIDIA checks
/// this before anything else about the op).
pub(crate) fn check_result_count(m: &Module, id: OpId) -> Check {
    let op = &m.ops[id];
    if let Some(n) = result_count(op.opcode) {
        if op.results.len() != n {
            return Err(op_err(match n {
                0 => "requires zero results".to_string(),
                1 => "requires one result".to_string(),
                n => format!("expected {n} results"),
            }));
        }
    }
    Ok(())
}

/// The fixed number of results of an op kind (`None`: variadic).
fn result_count(op: Opcode) -> Option<usize> {
    use Opcode::*;
    match op {
        For | GetIndexSpaceShape | GetTensorShape | If | Loop | PrintTko | Reduce | Scan => None,
        Assert | Break | Continue | Entry | Global | Module | Return | Yield => Some(0),
        AtomicCASTko | AtomicRMWTko | LoadPtrTko | LoadViewTko => Some(2),
        GetNumTileBlocks | GetTileBlockId => Some(3),
        _ => Some(1),
    }
}

/// Whether operand group `name` of `op` is variadic (its summary then reads
/// `variadic of ...`).
fn is_variadic(op: Opcode, name: &str) -> bool {
    matches!(
        (op, name),
        (
            Opcode::LoadViewTko | Opcode::StoreViewTko | Opcode::AtomicRedViewTko,
            "index"
        ) | (Opcode::Extract | Opcode::Insert, "indices")
            | (Opcode::MakeTensorView, "dynamicShape" | "dynamicStrides")
            | (Opcode::JoinTokens, "tokens")
            | (Opcode::PrintTko, "args")
            | (Opcode::For | Opcode::Loop, "initValues")
            | (
                Opcode::Reduce
                    | Opcode::Scan
                    | Opcode::Break
                    | Opcode::Continue
                    | Opcode::Yield
                    | Opcode::Return,
                "operands"
            )
    )
}

fn relations(m: &Module, op: &Op) -> Check {
    match op.opcode {
        Opcode::AbsF
        | Opcode::AbsI
        | Opcode::Ceil
        | Opcode::Cos
        | Opcode::CosH
        | Opcode::Exp
        | Opcode::Exp2
        | Opcode::Floor
        | Opcode::Log
        | Opcode::Log2
        | Opcode::NegF
        | Opcode::NegI
        | Opcode::Rsqrt
        | Opcode::Sin
        | Opcode::SinH
        | Opcode::Sqrt
        | Opcode::Tan
        | Opcode::TanH => all_same(m, op, &["source", "result"], "type"),
        Opcode::AddF
        | Opcode::SubF
        | Opcode::MulF
        | Opcode::DivF
        | Opcode::RemF
        | Opcode::MaxF
        | Opcode::MinF
        | Opcode::AddI
        | Opcode::SubI
        | Opcode::MulI
        | Opcode::DivI
        | Opcode::MaxI
        | Opcode::MinI
        | Opcode::AndI
        | Opcode::OrI
        | Opcode::XOrI
        | Opcode::ShLI
        | Opcode::ShRI => all_same(m, op, &["lhs", "rhs", "result"], "type"),
        Opcode::RemI => {
            all_same(m, op, &["result", "lhs", "rhs"], "type")?;
            all_same(m, op, &["result", "lhs", "rhs"], "shape")
        }
        Opcode::Assume => all_same(m, op, &["value", "result"], "type"),
        Opcode::MulhiI => all_same(m, op, &["x", "y", "result"], "type"),
        Opcode::Atan2 => all_same(m, op, &["x", "y", "result"], "type"),
        Opcode::FPowF => {
            all_same(m, op, &["result", "source", "exponent"], "type")?;
            all_same(m, op, &["source", "exponent", "result"], "rank")
        }
        Opcode::Fma => all_same(m, op, &["lhs", "rhs", "acc", "result"], "type"),
        Opcode::FPowI => {
            all_same(m, op, &["result", "source"], "type")?;
            all_same(m, op, &["source", "exponent"], "shape")
        }
        Opcode::CmpF | Opcode::CmpI => {
            all_same(m, op, &["lhs", "rhs"], "type")?;
            let (Some(l), Some(r)) = (operand_ty(m, op, "lhs"), result_ty(m, op, 0)) else {
                return Ok(());
            };
            if tile_shape(m, l) != tile_shape(m, r) {
                return Err(op_err(
                    "failed to verify that Result type has i1 element type and same shape as operands",
                ));
            }
            Ok(())
        }
        Opcode::Bitcast | Opcode::IntToPtr | Opcode::PtrToInt | Opcode::PtrToPtr => {
            all_same(m, op, &["source", "result"], "shape")
        }
        Opcode::ExtI | Opcode::TruncI | Opcode::FToF | Opcode::FToI | Opcode::IToF => {
            all_same(m, op, &["from", "to"], "shape")
        }
        Opcode::Broadcast => {
            all_same(m, op, &["source", "result"], "rank")?;
            same_elem_check(m, op, &["source"])
        }
        Opcode::Reshape => same_elem_check(m, op, &["source"]),
        Opcode::Permute => {
            let (Some(a), Some(b)) = (operand_ty(m, op, "source"), result_ty(m, op, 0)) else {
                return Ok(());
            };
            if !same_elem(m, a, b) {
                return Err(op_err(
                    "failed to verify that all of {source, result} have the same element type",
                ));
            }
            all_same(m, op, &["source", "result"], "rank")
        }
        Opcode::Cat => all_same(m, op, &["lhs", "rhs", "result"], "rank"),
        Opcode::Extract => all_same(m, op, &["source", "result"], "rank"),
        Opcode::Pack | Opcode::Unpack => all_same(m, op, &["source", "result"], "rank"),
        Opcode::Offset => {
            let (Some(p), Some(o), Some(r)) = (
                operand_ty(m, op, "ptr"),
                operand_ty(m, op, "offset"),
                result_ty(m, op, 0),
            ) else {
                return Ok(());
            };
            all_same(m, op, &["result", "ptr"], "type")?;
            if tile_shape(m, p) != tile_shape(m, o) || tile_shape(m, p) != tile_shape(m, r) {
                return Err(op_err(
                    "requires the same shape for all operands and results",
                ));
            }
            Ok(())
        }
        Opcode::Select => {
            all_same(m, op, &["val_if_true", "val_if_false", "result"], "type")?;
            all_same(
                m,
                op,
                &["cond", "val_if_true", "val_if_false", "result"],
                "shape",
            )
        }
        Opcode::MmaF | Opcode::MmaI => {
            all_same(m, op, &["acc", "result"], "type")?;
            if op.opcode == Opcode::MmaF {
                let (Some(l), Some(r)) = (operand_ty(m, op, "lhs"), operand_ty(m, op, "rhs"))
                else {
                    return Ok(());
                };
                if !same_elem(m, l, r) {
                    return Err(op_err(
                        "failed to verify that all of {lhs, rhs} have the same element type",
                    ));
                }
            }
            all_same(m, op, &["lhs", "rhs", "acc"], "rank")
        }
        Opcode::MmaFScaled => {
            all_same(m, op, &["acc", "result"], "type")?;
            for pair in [["lhs", "rhs"], ["lhs_scale", "rhs_scale"]] {
                let (Some(a), Some(b)) = (operand_ty(m, op, pair[0]), operand_ty(m, op, pair[1]))
                else {
                    continue;
                };
                if !same_elem(m, a, b) {
                    return Err(op_err(format!(
                        "failed to verify that all of {{{}, {}}} have the same element type",
                        pair[0], pair[1]
                    )));
                }
            }
            all_same(
                m,
                op,
                &["lhs", "rhs", "acc", "lhs_scale", "rhs_scale"],
                "rank",
            )
        }
        Opcode::Insert => all_same(m, op, &["destination", "result"], "type"),
        Opcode::AtomicCASTko => {
            all_same(m, op, &["pointers", "cmp", "val", "result"], "shape")?;
            all_same(m, op, &["cmp", "val", "result"], "type")
        }
        Opcode::AtomicRMWTko => {
            all_same(m, op, &["pointers", "arg", "result"], "shape")?;
            all_same(m, op, &["arg", "result"], "type")
        }
        Opcode::LoadPtrTko => {
            let (Some(src), Some(res)) = (operand_ty(m, op, "source"), result_ty(m, op, 0)) else {
                return Ok(());
            };
            if !pointer_of(m, src, res) {
                return Err(op_err(
                    "failed to verify that `source` type is expected a pointer type of `result` type",
                ));
            }
            if let Some(mask) = operand_ty(m, op, "mask") {
                if tile_shape(m, mask) != tile_shape(m, src) {
                    return Err(op_err(
                        "failed to verify that shape of 'mask' must match the shape of 'source'",
                    ));
                }
            }
            if let Some(pad) = operand_ty(m, op, "paddingValue") {
                if !same_type(m, pad, res) {
                    return Err(op_err(
                        "failed to verify that type of 'paddingValue' must match the type of 'result'",
                    ));
                }
            }
            Ok(())
        }
        Opcode::StorePtrTko => {
            let (Some(dst), Some(val)) =
                (operand_ty(m, op, "destination"), operand_ty(m, op, "value"))
            else {
                return Ok(());
            };
            if !pointer_of(m, dst, val) {
                return Err(op_err(
                    "failed to verify that `destination` type is expected a pointer type of `value` type",
                ));
            }
            if let Some(mask) = operand_ty(m, op, "mask") {
                if tile_shape(m, mask) != tile_shape(m, dst) {
                    return Err(op_err(
                        "failed to verify that shape of 'destination' must match the shape of 'mask'",
                    ));
                }
            }
            Ok(())
        }
        Opcode::Reduce | Opcode::Scan => {
            let ts = group_types(m, op, "operands");
            if ts
                .windows(2)
                .any(|w| tile_shape(m, w[0]) != tile_shape(m, w[1]))
            {
                return Err(op_err("requires the same shape for all operands"));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn same_elem_check(m: &Module, op: &Op, inputs: &[&str]) -> Check {
    let Some(r) = result_ty(m, op, 0) else {
        return Ok(());
    };
    for n in inputs {
        if let Some(t) = operand_ty(m, op, n) {
            if !same_elem(m, t, r) {
                return Err(op_err(
                    "requires the same element type for all operands and results",
                ));
            }
        }
    }
    Ok(())
}

/// Whether `ptrs` is a tile of pointers to the elements of `vals`, of the
/// same shape.
fn pointer_of(m: &Module, ptrs: TypeId, vals: TypeId) -> bool {
    let (Some(p), Some(e)) = (tile_pointee(m, ptrs), tile_elem(m, vals)) else {
        return false;
    };
    same_type(m, p, e) && tile_shape(m, ptrs) == tile_shape(m, vals)
}

/// Checks every type in the type table (NVIDIA checks these when it builds
/// the types while reading).
pub(crate) fn check_type_table(m: &Module, errors: &mut Errors<'_>) {
    // Only types the module uses: NVIDIA builds (and checks) a table entry
    // when something refers to it.
    let mut used = vec![false; m.types.len()];
    let mut stack: Vec<TypeId> = m.values.iter().map(|(_, v)| v.ty).collect();
    for (_, op) in m.ops.iter() {
        for (_, a) in &op.attrs {
            attr_types(a, &mut stack, 0);
        }
    }
    while let Some(t) = stack.pop() {
        let Some(slot) = used.get_mut(t.index()) else {
            continue;
        };
        if std::mem::replace(slot, true) {
            continue;
        }
        stack.extend(super::handles::type_refs(&m.types[t]));
    }
    for (id, t) in m.types.iter() {
        if !used[id.index()] {
            continue;
        }
        if let Err(msg) = check_type(m, t) {
            errors.plain(msg, None);
        }
    }
}

/// Pushes the types an attribute refers to.
fn attr_types(a: &crate::ir::Attr, out: &mut Vec<TypeId>, depth: u32) {
    use crate::ir::Attr;
    if depth > 64 {
        return;
    }
    match a {
        Attr::Integer { ty, .. }
        | Attr::Float { ty, .. }
        | Attr::Type(ty)
        | Attr::Dense { ty, .. } => out.push(*ty),
        Attr::Array(items) => items.iter().for_each(|i| attr_types(i, out, depth + 1)),
        Attr::Dictionary(items) | Attr::OptimizationHints(items) => items
            .iter()
            .for_each(|(_, i)| attr_types(i, out, depth + 1)),
        _ => {}
    }
}

/// Whether `t` is a number type (the pointee of a pointer, the element of
/// a tensor view): a scalar other than `i4`.
fn is_number(m: &Module, t: TypeId) -> bool {
    matches!(m.types.try_get(t), Some(Type::Scalar(s)) if *s != Scalar::I4)
}

fn tile_dims_ok(shape: &[i64], elem: Option<Scalar>) -> Result<(), String> {
    if elem == Some(Scalar::F4E2M1FN) && (shape.is_empty() || shape.iter().all(|d| d % 2 != 0)) {
        return Err("F4E2M1FN tiles must have an even number of elements".into());
    }
    let mut n: i64 = 1;
    for &d in shape {
        if d <= 0 {
            return Err(format!(
                "all dimensions must be positive constants, got {}",
                fmt_shape(shape)
            ));
        }
        if d & (d - 1) != 0 {
            return Err(format!(
                "all dimensions must be powers of two, got {}",
                fmt_shape(shape)
            ));
        }
        if n > MAX_TILE_ELEMENTS / d {
            return Err(format!(
                "tile would exceed the maximum of {MAX_TILE_ELEMENTS} elements"
            ));
        }
        n *= d;
    }
    Ok(())
}

/// Why a partition view type breaks the dialect's rules, if it does:
/// NVIDIA's reader checks these as it builds the type (the reader asks).
pub(crate) fn partition_view_violation(m: &Module, t: &Type) -> Option<String> {
    match t {
        Type::PartitionView { .. } => check_type(m, t).err(),
        _ => None,
    }
}

fn check_type(m: &Module, t: &Type) -> Result<(), String> {
    match t {
        Type::Scalar(_) | Type::Token | Type::Function { .. } => Ok(()),
        Type::Pointer { pointee, .. } => {
            if is_number(m, *pointee) {
                Ok(())
            } else {
                Err(format!(
                    "pointer type must point to a number, got {}",
                    fmt_ty(m, *pointee)
                ))
            }
        }
        Type::Tile { element, shape } => {
            let elem = match &m.types[*element] {
                Type::Scalar(s) => Some(*s),
                Type::Pointer { pointee, .. } => {
                    let f4 = matches!(
                        m.types.try_get(*pointee),
                        Some(Type::Scalar(Scalar::F4E2M1FN))
                    );
                    if f4 && !shape.is_empty() {
                        return Err("tiles of ptr<f4E2M1FN> must have rank 0; use an f4 tile view for memory accesses".into());
                    }
                    None
                }
                _ => return Err(format!("invalid tile element type {}", fmt_ty(m, *element))),
            };
            tile_dims_ok(shape, elem)
        }
        Type::TensorView {
            element,
            shape,
            strides,
            ..
        } => {
            if !is_number(m, *element) {
                return Err(format!(
                    "invalid tensor_view element type {}",
                    fmt_ty(m, *element)
                ));
            }
            if shape.len() != strides.len() {
                return Err(format!(
                    "expected shape and stride to be of same rank but got shape of rank {} and stride of rank {}",
                    shape.len(),
                    strides.len()
                ));
            }
            let show = |v: &[i64]| {
                let s: Vec<String> = v
                    .iter()
                    .map(|d| {
                        if *d == DYNAMIC {
                            "?".into()
                        } else {
                            d.to_string()
                        }
                    })
                    .collect();
                format!("[{}]", s.join(", "))
            };
            if shape.iter().any(|d| *d <= 0 && *d != DYNAMIC) {
                return Err(format!(
                    "dimensions must have strictly positive constant sizes but got {}",
                    show(shape)
                ));
            }
            if strides.iter().any(|d| *d <= 0 && *d != DYNAMIC) {
                return Err(format!(
                    "dimensions must have strictly positive constant strides but got {}",
                    show(strides)
                ));
            }
            Ok(())
        }
        Type::PartitionView {
            tile_shape,
            tensor_view,
            dim_map,
            padding,
        } => view_like(m, tile_shape, *tensor_view, Some(dim_map), *padding),
        Type::StridedView {
            tile_shape,
            traversal_strides,
            tensor_view,
            dim_map,
            padding,
        } => {
            view_like(m, tile_shape, *tensor_view, Some(dim_map), *padding)?;
            if traversal_strides.len() != tile_shape.len() {
                return Err(format!(
                    "expected {} traversal strides, got {}",
                    tile_shape.len(),
                    traversal_strides.len()
                ));
            }
            if traversal_strides.iter().any(|s| *s <= 0) {
                let s: Vec<String> = traversal_strides.iter().map(|x| x.to_string()).collect();
                return Err(format!(
                    "traversal strides must be strictly positive but got [{}]",
                    s.join(", ")
                ));
            }
            Ok(())
        }
        Type::GatherScatterView {
            tile_shape,
            tensor_view,
            sparse_dim,
            padding,
        } => {
            view_like(m, tile_shape, *tensor_view, None, *padding)?;
            if *sparse_dim >= tile_shape.len() as u64 {
                return Err(format!(
                    "sparse dimension {sparse_dim} is out of range for tiles of rank {}",
                    tile_shape.len()
                ));
            }
            Ok(())
        }
    }
}

fn view_like(
    m: &Module,
    tile_shape: &[i32],
    tensor_view: TypeId,
    dim_map: Option<&[i32]>,
    padding: Option<crate::ir::Padding>,
) -> Result<(), String> {
    let Type::TensorView { element, shape, .. } = &m.types[tensor_view] else {
        return Err(format!(
            "expected 'tensor_view' type, but got {}",
            fmt_ty(m, tensor_view)
        ));
    };
    let list = |v: &[i32]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if tile_shape.is_empty() {
        return Err("0-dimension tile shape is not supported".into());
    }
    if tile_shape.len() != shape.len() {
        return Err(format!(
            "expected tensor_view rank and tile rank to match, got tensor_view of rank {} and tiles of rank {}",
            shape.len(),
            tile_shape.len()
        ));
    }
    if let Some(dim_map) = dim_map {
        if dim_map.len() != tile_shape.len() {
            return Err(format!(
                "expected dim_map to map exactly all {} dimensions of the tile, got {} mappings",
                tile_shape.len(),
                dim_map.len()
            ));
        }
    }
    if tile_shape.iter().any(|d| *d <= 0) {
        return Err(format!(
            "tile shape dimensions must have positive length but got [{}]",
            list(tile_shape)
        ));
    }
    if tile_shape.iter().any(|d| d & (d - 1) != 0) {
        return Err(format!(
            "tile shape dimensions must have power of two length but got [{}]",
            list(tile_shape)
        ));
    }
    if let Some(dim_map) = dim_map {
        let mut used: Vec<Option<usize>> = vec![None; tile_shape.len()];
        for (tile_dim, &d) in dim_map.iter().enumerate() {
            if d < 0 {
                return Err(format!("target dimension must not be negative, got {d}"));
            }
            if d as usize >= shape.len() {
                return Err(format!(
                    "target dimension is outside of tensor view dimensions, expected strictly less than {}, got {d}",
                    shape.len()
                ));
            }
            if let Some(prev) = used[d as usize] {
                return Err(format!(
                    "target dimension {d} mapped at least twice (for tile dimensions {prev} and {tile_dim})"
                ));
            }
            used[d as usize] = Some(tile_dim);
        }
    }
    let shape64: Vec<i64> = tile_shape.iter().map(|d| *d as i64).collect();
    let elem = match &m.types[*element] {
        Type::Scalar(s) => Some(*s),
        _ => None,
    };
    tile_dims_ok(&shape64, elem)?;
    if let Some(p) = padding {
        let special = !matches!(p, crate::ir::Padding::Zero);
        if special && !elem.is_some_and(|e| e.is_float()) {
            return Err(format!(
                "padding_value {} can only be used with floating point element types, got {}",
                p.name(),
                fmt_ty(m, *element)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_types_at_different_indices_are_the_same() {
        let mut m = Module::default();
        let a = m.types.append(Type::Scalar(Scalar::F32));
        let b = m.types.append(Type::Scalar(Scalar::F32));
        let ta = m.types.append(Type::Tile {
            element: a,
            shape: vec![4],
        });
        let tb = m.types.append(Type::Tile {
            element: b,
            shape: vec![4],
        });
        let tc = m.types.append(Type::Tile {
            element: b,
            shape: vec![8],
        });
        assert!(same_type(&m, ta, tb));
        assert!(!same_type(&m, ta, tc));
        assert!(!same_type(&m, a, ta));
    }

    #[test]
    fn pointers_point_to_numbers_and_f4_pointer_tiles_are_scalars() {
        let mut m = Module::default();
        let i4 = m.types.append(Type::Scalar(Scalar::I4));
        let f4 = m.types.append(Type::Scalar(Scalar::F4E2M1FN));
        let p4 = Type::Pointer {
            pointee: i4,
            ptr_attr: None,
        };
        assert_eq!(
            check_type(&m, &p4).unwrap_err(),
            "pointer type must point to a number, got 'i4'"
        );
        let pf4 = m.types.append(Type::Pointer {
            pointee: f4,
            ptr_attr: None,
        });
        let tile = |shape: Vec<i64>| Type::Tile {
            element: pf4,
            shape,
        };
        assert!(check_type(&m, &tile(vec![])).is_ok());
        assert_eq!(
            check_type(&m, &tile(vec![2])).unwrap_err(),
            "tiles of ptr<f4E2M1FN> must have rank 0; use an f4 tile view for memory accesses"
        );
        let view = Type::TensorView {
            element: i4,
            shape: vec![16],
            strides: vec![1],
            ptr_attr: None,
        };
        assert_eq!(
            check_type(&m, &view).unwrap_err(),
            "invalid tensor_view element type 'i4'"
        );
    }

    #[test]
    fn tile_dimensions_follow_nvidia() {
        assert!(tile_dims_ok(&[4, 8], Some(Scalar::F32)).is_ok());
        assert_eq!(
            tile_dims_ok(&[6], Some(Scalar::F32)).unwrap_err(),
            "all dimensions must be powers of two, got 6"
        );
        assert_eq!(
            tile_dims_ok(&[1, 1], Some(Scalar::F4E2M1FN)).unwrap_err(),
            "F4E2M1FN tiles must have an even number of elements"
        );
        assert_eq!(
            tile_dims_ok(&[1 << 20, 1 << 20], Some(Scalar::F32)).unwrap_err(),
            "tile would exceed the maximum of 16777216 elements"
        );
    }
}
