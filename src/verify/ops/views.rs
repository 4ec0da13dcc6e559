//! Rules of tensor and partition views: the tile a view hands out, its
//! indices, loads and stores through it, gather/scatter indices, and
//! atomic reductions into a view.
use super::*;

/// The tile type a view hands out, and its index rank.
pub(super) fn view_tile(m: &Module, view: TypeId) -> Option<(Vec<i64>, TypeId, usize)> {
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

pub(super) fn view_type_string(m: &Module, shape: &[i64], elem: TypeId) -> String {
    let mut s = String::from("'!cuda_tile.tile<");
    for d in shape {
        s.push_str(&format!("{d}x"));
    }
    let e = fmt_ty(m, elem);
    s.push_str(e.trim_matches('\'').trim_start_matches("!cuda_tile."));
    s.push_str(">'");
    s
}

pub(super) fn view_indices(m: &Module, op: &Op, view: TypeId) -> Check {
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

pub(super) fn view_load_store(m: &Module, op: &Op, tile: Option<TypeId>) -> Check {
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

pub(super) fn gather_indices(m: &Module, idx: &[TypeId], tile: &[i32], sparse: u64) -> Check {
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
pub(super) fn ptr_attr_name(v: u8) -> String {
    match v {
        0 => "#cuda_tile.ptr_attr<none>".to_string(),
        1 => "#cuda_tile.ptr_attr<multicast>".to_string(),
        other => format!("#cuda_tile.ptr_attr<{other}>"),
    }
}

pub(super) fn atomic_red_view(m: &Module, op: &Op) -> Check {
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
