//! Types, padding values, dimension maps and symbol names as the dialect
//! prints them.
use super::*;

pub(super) fn write_type(m: &Module, ty: TypeId, s: &mut String, depth: usize) {
    if depth > 64 {
        s.push_str("<<nested>>");
        return;
    }
    let Some(t) = m.types.try_get(ty) else {
        s.push_str("<<invalid>>");
        return;
    };
    let dims = |v: &[i64]| -> String {
        v.iter()
            .map(|&d| {
                if d == DYNAMIC {
                    "?".to_string()
                } else {
                    d.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("x")
    };
    match t {
        Type::Scalar(sc) => s.push_str(sc.name()),
        Type::Token => s.push_str("token"),
        Type::Pointer { pointee, .. } => {
            s.push_str("ptr<");
            write_type(m, *pointee, s, depth + 1);
            s.push('>');
        }
        Type::Tile { element, shape } => {
            s.push_str("tile<");
            if !shape.is_empty() {
                s.push_str(&dims(shape));
                s.push('x');
            }
            write_type(m, *element, s, depth + 1);
            s.push('>');
        }
        Type::TensorView {
            element,
            shape,
            strides,
            ..
        } => {
            s.push_str("tensor_view<");
            if !shape.is_empty() {
                s.push_str(&dims(shape));
                s.push('x');
            }
            write_type(m, *element, s, depth + 1);
            s.push_str(", strides=[");
            let st: Vec<String> = strides
                .iter()
                .map(|&d| {
                    if d == DYNAMIC {
                        "?".to_string()
                    } else {
                        d.to_string()
                    }
                })
                .collect();
            s.push_str(&st.join(","));
            s.push_str("]>");
        }
        Type::PartitionView {
            tile_shape,
            tensor_view,
            dim_map,
            padding,
        } => {
            s.push_str("partition_view<tile=(");
            s.push_str(&join_x(tile_shape));
            s.push_str("), ");
            write_padding(*padding, s);
            write_type(m, *tensor_view, s, depth + 1);
            write_dim_map(dim_map, s);
            s.push('>');
        }
        Type::GatherScatterView {
            tile_shape,
            tensor_view,
            sparse_dim,
            padding,
        } => {
            s.push_str("gather_scatter_view<tile=(");
            s.push_str(&join_x(tile_shape));
            s.push_str("), ");
            write_padding(*padding, s);
            write_type(m, *tensor_view, s, depth + 1);
            let _ = write!(s, ", sparse_dim={sparse_dim}>");
        }
        Type::StridedView {
            tile_shape,
            traversal_strides,
            tensor_view,
            dim_map,
            padding,
        } => {
            s.push_str("strided_view<tile=(");
            s.push_str(&join_x(tile_shape));
            s.push_str("), traversal_strides=[");
            s.push_str(
                &traversal_strides
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            );
            s.push_str("], ");
            write_padding(*padding, s);
            write_type(m, *tensor_view, s, depth + 1);
            write_dim_map(dim_map, s);
            s.push('>');
        }
        Type::Function { inputs, results } => {
            s.push('(');
            for (i, t) in inputs.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_type(m, *t, s, depth + 1);
            }
            s.push_str(") -> (");
            for (i, t) in results.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_type(m, *t, s, depth + 1);
            }
            s.push(')');
        }
    }
}

pub(super) fn join_x(v: &[i32]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

pub(super) fn write_padding(p: Option<Padding>, s: &mut String) {
    if let Some(p) = p {
        let _ = write!(s, "padding_value = {}, ", p.name());
    }
}

pub(super) fn write_dim_map(dim_map: &[i32], s: &mut String) {
    let identity = dim_map.iter().enumerate().all(|(i, &d)| d as usize == i);
    if !identity {
        s.push_str(", dim_map=[");
        s.push_str(
            &dim_map
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        );
        s.push(']');
    }
}

/// MLIR's identifier sanitizer for SSA name hints.
pub(super) fn sanitize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, c) in name.chars().enumerate() {
        if i == 0 && c.is_ascii_digit() {
            out.push('_');
        }
        if c.is_ascii_alphanumeric() || "$._-".contains(c) {
            out.push(c);
        } else {
            out.push('_');
        }
    }
    out
}

/// `@name`, or `@"..."` when `name` is not a bare identifier.
pub(super) fn symbol(name: &str) -> String {
    let bare = name
        .bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'.');
    if bare {
        format!("@{name}")
    } else {
        format!("@\"{}\"", escape(name))
    }
}

/// Escapes a string the way MLIR prints string literals.
pub(super) fn escape(s: &str) -> String {
    let mut out = String::new();
    for b in crate::ir::string_to_bytes(s) {
        match b {
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e if b != b'"' => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:02X}");
            }
        }
    }
    out
}
