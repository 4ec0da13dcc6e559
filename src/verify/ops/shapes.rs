//! Shape rules of data-movement and MMA ops (`extract`/`insert`, `mmaf`,
//! `mmai`, `mmaf_scaled`), printf formats, and `assume` predicates.
use super::*;

/// Which side of `extract` / `insert` is the sub-tile.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Subtile {
    /// The result is a sub-tile of the source.
    Extract,
    /// The source is a sub-tile of the result.
    Insert,
}

/// `extract` and `insert`: same element type and rank, the large tile's
/// dimensions divisible by the sub-tile's, one index per dimension.
pub(super) fn subtile(m: &Module, op: &Op, kind: Subtile) -> Check {
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

pub(super) fn mma_shapes(m: &Module, op: &Op) -> Check {
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

pub(super) fn mmaf_types(m: &Module, op: &Op) -> Check {
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

pub(super) fn mmaf_scaled(m: &Module, op: &Op) -> Check {
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
pub(super) fn format_args(s: &str) -> Option<usize> {
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

pub(super) fn check_assume(m: &Module, op: &Op) -> Check {
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
