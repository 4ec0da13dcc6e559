//! Reading IR types and constants as the lowering needs them.
use crate::ir::{Attr, Module, Op, Scalar, Type, TypeId, ValueId};

/// The element kind of a tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// A scalar number.
    Num(Scalar),
    /// A global pointer.
    Ptr,
}

impl Elem {
    /// Bits one element occupies in a register (pointers: 64).
    pub fn bits(self) -> u32 {
        match self {
            Elem::Num(s) => s.bit_width(),
            Elem::Ptr => 64,
        }
    }

    /// The scalar, if a number.
    pub fn scalar(self) -> Option<Scalar> {
        match self {
            Elem::Num(s) => Some(s),
            Elem::Ptr => None,
        }
    }
}

/// Shape and element of a tile type.
pub fn tile_type(m: &Module, ty: TypeId) -> Option<(Vec<i64>, Elem)> {
    match m.types.try_get(ty)? {
        Type::Tile { element, shape } => Some((shape.clone(), elem_of(m, *element)?)),
        _ => None,
    }
}

/// The element kind a type id names (scalar or pointer).
pub fn elem_of(m: &Module, ty: TypeId) -> Option<Elem> {
    match m.types.try_get(ty)? {
        Type::Scalar(s) => Some(Elem::Num(*s)),
        Type::Pointer { .. } => Some(Elem::Ptr),
        _ => None,
    }
}

/// The scalar a type id names, if it is one.
pub fn scalar_of(m: &Module, ty: TypeId) -> Option<Scalar> {
    match m.types.try_get(ty)? {
        Type::Scalar(s) => Some(*s),
        _ => None,
    }
}

/// The tile type of value `v`.
pub fn value_tile(m: &Module, v: ValueId) -> Option<(Vec<i64>, Elem)> {
    tile_type(m, m.values.try_get(v)?.ty)
}

/// The raw bits of every element of a constant op, zero-extended.
pub fn constant_bits(m: &Module, op: &Op) -> Option<Vec<u64>> {
    let Some(Attr::Dense { ty, data }) = op.attr("value") else {
        return None;
    };
    m.dense_elements(*ty, data).map(|(_, bits)| bits)
}

/// The value of `v` when a splat integer `constant` defines it.
pub fn const_int(m: &Module, v: crate::ir::ValueId) -> Option<i64> {
    let op = &m.ops[crate::lower::analysis::view::def_op(m, v)?];
    if op.opcode != crate::ir::Opcode::Constant {
        return None;
    }
    splat_int(m, op)
}

/// The value of a splat integer constant, sign-extended from its width.
pub fn splat_int(m: &Module, op: &Op) -> Option<i64> {
    let Some(Attr::Dense { ty, .. }) = op.attr("value") else {
        return None;
    };
    let (_, elem) = tile_type(m, *ty)?;
    let s = elem.scalar()?;
    if !s.is_integer() {
        return None;
    }
    let bits = constant_bits(m, op)?;
    let first = *bits.first()?;
    if bits.iter().any(|&b| b != first) {
        return None;
    }
    let w = s.bit_width();
    Some(if w >= 64 {
        first as i64
    } else {
        ((first << (64 - w)) as i64) >> (64 - w)
    })
}
