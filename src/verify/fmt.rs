//! Types and shapes spelled as NVIDIA's diagnostics spell them: types quoted,
//! dialect types with the `!cuda_tile.` prefix at the top level only
//! (`'!cuda_tile.tile<4xptr<f32>>'`), shapes as comma lists (`4, 4`).
use crate::ir::{Module, Type, TypeId, DYNAMIC};
use std::fmt::{self, Write};

/// A quoted type in diagnostic form.
pub(crate) struct TypeFmt<'m>(pub &'m Module, pub TypeId);

impl fmt::Display for TypeFmt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_type(self.0, self.1, true, &mut s, 0)?;
        write!(f, "'{s}'")
    }
}

/// The quoted diagnostic form of `ty`.
pub(crate) fn ty(m: &Module, t: TypeId) -> String {
    TypeFmt(m, t).to_string()
}

/// Quoted types joined by `, ` (MLIR's form for a type range).
pub(crate) fn tys(m: &Module, list: &[TypeId]) -> String {
    list.iter()
        .map(|t| ty(m, *t))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A shape as MLIR prints an `ArrayRef<int64_t>` in diagnostics: `4, 4`.
pub(crate) fn shape(dims: &[i64]) -> String {
    dims.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn dim(d: i64, out: &mut String) -> fmt::Result {
    if d == DYNAMIC {
        out.push('?');
        Ok(())
    } else {
        write!(out, "{d}")
    }
}

fn write_type(m: &Module, t: TypeId, top: bool, out: &mut String, depth: u32) -> fmt::Result {
    let prefix = if top { "!cuda_tile." } else { "" };
    let Some(ty) = m.types.try_get(t) else {
        out.push_str("<invalid type>");
        return Ok(());
    };
    if depth > 16 {
        out.push_str("...");
        return Ok(());
    }
    match ty {
        Type::Scalar(s) => out.push_str(s.name()),
        Type::Token => write!(out, "{prefix}token")?,
        Type::Pointer { pointee, .. } => {
            write!(out, "{prefix}ptr<")?;
            write_type(m, *pointee, false, out, depth + 1)?;
            out.push('>');
        }
        Type::Tile { element, shape } => {
            write!(out, "{prefix}tile<")?;
            for d in shape {
                dim(*d, out)?;
                out.push('x');
            }
            write_type(m, *element, false, out, depth + 1)?;
            out.push('>');
        }
        Type::TensorView {
            element,
            shape,
            strides,
            ..
        } => {
            write!(out, "{prefix}tensor_view<")?;
            for d in shape {
                dim(*d, out)?;
                out.push('x');
            }
            write_type(m, *element, false, out, depth + 1)?;
            if !shape.is_empty() {
                out.push_str(", strides=[");
                for (i, s) in strides.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    dim(*s, out)?;
                }
                out.push(']');
            }
            out.push('>');
        }
        Type::PartitionView {
            tile_shape,
            tensor_view,
            dim_map,
            padding,
        } => {
            write!(out, "{prefix}partition_view<")?;
            view_head(tile_shape, out)?;
            if let Some(p) = padding {
                write!(out, "padding_value = {}, ", p.name())?;
            }
            write_type(m, *tensor_view, false, out, depth + 1)?;
            view_dim_map(dim_map, out)?;
            out.push('>');
        }
        Type::StridedView {
            tile_shape,
            traversal_strides,
            tensor_view,
            dim_map,
            padding,
        } => {
            write!(out, "{prefix}strided_view<")?;
            view_head(tile_shape, out)?;
            out.push_str("traversal_strides=[");
            let s: Vec<String> = traversal_strides.iter().map(|x| x.to_string()).collect();
            out.push_str(&s.join(","));
            out.push_str("], ");
            if let Some(p) = padding {
                write!(out, "padding_value = {}, ", p.name())?;
            }
            write_type(m, *tensor_view, false, out, depth + 1)?;
            view_dim_map(dim_map, out)?;
            out.push('>');
        }
        Type::GatherScatterView {
            tile_shape,
            tensor_view,
            sparse_dim,
            padding,
        } => {
            write!(out, "{prefix}gather_scatter_view<")?;
            view_head(tile_shape, out)?;
            if let Some(p) = padding {
                write!(out, "padding_value = {}, ", p.name())?;
            }
            write_type(m, *tensor_view, false, out, depth + 1)?;
            write!(out, ", sparse_dim={sparse_dim}>")?;
        }
        Type::Function { inputs, results } => {
            out.push('(');
            for (i, t) in inputs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_type(m, *t, true, out, depth + 1)?;
            }
            out.push_str(") -> ");
            if let [single] = results.as_slice() {
                write_type(m, *single, true, out, depth + 1)?;
            } else {
                out.push('(');
                for (i, t) in results.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_type(m, *t, true, out, depth + 1)?;
                }
                out.push(')');
            }
        }
    }
    Ok(())
}

fn view_head(tile_shape: &[i32], out: &mut String) -> fmt::Result {
    out.push_str("tile=(");
    let s: Vec<String> = tile_shape.iter().map(|x| x.to_string()).collect();
    out.push_str(&s.join("x"));
    out.push_str("), ");
    Ok(())
}

fn view_dim_map(dim_map: &[i32], out: &mut String) -> fmt::Result {
    let identity = dim_map
        .iter()
        .enumerate()
        .all(|(i, d)| *d as i64 == i as i64);
    if !identity {
        let s: Vec<String> = dim_map.iter().map(|x| x.to_string()).collect();
        write!(out, ", dim_map=[{}]", s.join(", "))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Scalar;

    #[test]
    fn spells_types_like_mlir_diagnostics() {
        let mut m = Module::default();
        let f32 = m.types.append(Type::Scalar(Scalar::F32));
        let p = m.types.append(Type::Pointer {
            pointee: f32,
            ptr_attr: None,
        });
        let t = m.types.append(Type::Tile {
            element: p,
            shape: vec![16, 32],
        });
        let s = m.types.append(Type::Tile {
            element: f32,
            shape: vec![],
        });
        let tv = m.types.append(Type::TensorView {
            element: f32,
            shape: vec![DYNAMIC, 4096],
            strides: vec![4096, 1],
            ptr_attr: None,
        });
        let pv = m.types.append(Type::PartitionView {
            tile_shape: vec![4, 4],
            tensor_view: tv,
            dim_map: vec![0, 1],
            padding: None,
        });
        assert_eq!(ty(&m, f32), "'f32'");
        assert_eq!(ty(&m, p), "'!cuda_tile.ptr<f32>'");
        assert_eq!(ty(&m, t), "'!cuda_tile.tile<16x32xptr<f32>>'");
        assert_eq!(ty(&m, s), "'!cuda_tile.tile<f32>'");
        assert_eq!(
            ty(&m, tv),
            "'!cuda_tile.tensor_view<?x4096xf32, strides=[4096,1]>'"
        );
        assert_eq!(
            ty(&m, pv),
            "'!cuda_tile.partition_view<tile=(4x4), tensor_view<?x4096xf32, strides=[4096,1]>>'"
        );
        assert_eq!(shape(&[4, 4]), "4, 4");
        let i1 = m.types.append(Type::Scalar(Scalar::I1));
        let f1 = m.types.append(Type::Function {
            inputs: vec![f32, i1],
            results: vec![i1],
        });
        let f2 = m.types.append(Type::Function {
            inputs: vec![s],
            results: vec![],
        });
        assert_eq!(ty(&m, f1), "'(f32, i1) -> i1'");
        assert_eq!(ty(&m, f2), "'(!cuda_tile.tile<f32>) -> ()'");
    }
}
