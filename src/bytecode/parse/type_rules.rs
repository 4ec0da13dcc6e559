//! The rules NVIDIA's reader checks when it builds a type, after the types
//! it refers to have been built: what a pointer may point to, what a tile
//! or tensor view may hold, the tile shape limits, and a partition view's
//! rules (tile shape, dimension map, padding). Each failure is the message
//! NVIDIA's reader prints.
use crate::ir::{Module, Scalar, Type, TypeId};
use crate::verify::types::MAX_TILE_ELEMENTS;

/// The element types NVIDIA's dialect calls numbers (every scalar but
/// `i4`), as its messages list them.
const NUMBERS: &str = "f16 or bf16 or f32 or tf32 or f64 or f8E4M3FN or f8E5M2 or f8E8M0FNU or f4E2M1FN or fnv8E5M3FNU or i1 or i8 or i16 or i32 or i64";

/// Whether `t` is a number type: a scalar other than `i4`.
fn is_number(m: &Module, t: TypeId) -> bool {
    matches!(m.types.try_get(t), Some(Type::Scalar(s)) if *s != Scalar::I4)
}

/// Why NVIDIA's reader refuses type `t` of `m`, if it does; the types `t`
/// refers to are already known to be valid.
pub(super) fn violation(m: &Module, t: &Type) -> Option<String> {
    match t {
        Type::Pointer { pointee, .. } if !is_number(m, *pointee) => {
            Some(format!("failed to verify 'pointeeType': {NUMBERS}"))
        }
        Type::TensorView { element, .. } if !is_number(m, *element) => {
            Some(format!("failed to verify 'elementType': {NUMBERS}"))
        }
        Type::Tile { element, shape } => tile_violation(m, *element, shape),
        Type::PartitionView { .. } => crate::verify::types::partition_view_violation(m, t),
        _ => None,
    }
}

/// The tile rules, in NVIDIA's order: the element type (a number, `i4` or
/// a pointer), no pointer-to-f4 tiles beyond rank 0, an even number of f4
/// elements, power-of-two dimensions, the element limit.
fn tile_violation(m: &Module, element: TypeId, shape: &[i64]) -> Option<String> {
    let elem = m.types.try_get(element);
    let f4 = |t: Option<&Type>| matches!(t, Some(Type::Scalar(Scalar::F4E2M1FN)));
    match elem {
        Some(Type::Scalar(_)) => {}
        Some(Type::Pointer { pointee, .. }) => {
            if f4(m.types.try_get(*pointee)) && !shape.is_empty() {
                return Some(
                    "tiles of ptr<f4E2M1FN> must have rank 0; use an f4 tile view for memory accesses"
                        .into(),
                );
            }
        }
        _ => {
            return Some(format!(
                "failed to verify 'elementType': {NUMBERS} or Pointer type or i4 or A not-yet-resolved (parametric) dtype usable as an element type"
            ))
        }
    }
    if f4(elem) && shape.iter().all(|d| d % 2 != 0) {
        return Some("F4E2M1FN tiles must have an even number of elements".into());
    }
    if shape.iter().any(|&d| d <= 0 || d & (d - 1) != 0) {
        let list: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        return Some(format!(
            "all dimensions must be powers of two, got {}",
            list.join(", ")
        ));
    }
    let mut n: i64 = 1;
    for &d in shape {
        if n > MAX_TILE_ELEMENTS / d {
            return Some(format!(
                "tile would exceed the maximum of {MAX_TILE_ELEMENTS} elements"
            ));
        }
        n *= d;
    }
    None
}
