//! Control-flow and region rules: loops and their carried values, `if`,
//! `break`/`continue`/`return`, `reduce`/`scan` bodies, entries and globals.
use super::*;

pub(super) fn loop_iter_values(m: &Module, op: &Op, iter_args: &[ValueId]) -> Check {
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

pub(super) fn is_view(t: &Type) -> bool {
    matches!(
        t,
        Type::PartitionView { .. } | Type::StridedView { .. } | Type::GatherScatterView { .. }
    )
}

pub(super) fn results_not_views(m: &Module, op: &Op) -> Check {
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

pub(super) fn block_args(op: &Op, region: usize) -> &[ValueId] {
    op.regions
        .get(region)
        .and_then(|r| r.blocks.first())
        .map(|b| &b.args[..])
        .unwrap_or(&[])
}

pub(super) fn terminator<'m>(m: &'m Module, op: &Op, region: usize) -> Option<&'m Op> {
    let b = op.regions.get(region)?.blocks.first()?;
    b.ops.last().map(|id| &m.ops[*id])
}

/// Whether `id` has memory effects (ops with regions: whether any op inside
/// has them). Only memory-effect-free ops may sit in `reduce`/`scan` bodies.
pub(super) fn has_memory_effect(m: &Module, id: OpId) -> bool {
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

pub(super) fn aggregate(m: &Module, op: &Op, scan: bool) -> Check {
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

pub(super) fn aggregate_region(m: &Module, op: &Op, n: usize) -> Check {
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

pub(super) fn early_exit(
    m: &Module,
    tree: &Tree,
    id: OpId,
    loops: &[Opcode],
) -> Result<OpId, Fail> {
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

pub(super) fn nested_err(loops: &[Opcode]) -> Fail {
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

pub(super) fn pure_inside_aggregate(m: &Module, tree: &Tree, id: OpId) -> Check {
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

/// Whether a `return` sits anywhere inside `op`'s regions.
pub(super) fn contains_return(m: &Module, op: &Op) -> bool {
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

pub(super) fn check_return(m: &Module, tree: &Tree, id: OpId) -> Check {
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

pub(super) fn op_operands_all(op: &Op) -> &[ValueId] {
    op.operand_group("initValues")
}

pub(super) fn check_if(m: &Module, op: &Op) -> Check {
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

pub(super) fn check_entry(m: &Module, op: &Op) -> Check {
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
    crate::verify::debuginfo::check_function(m, op)?;
    Ok(())
}

pub(super) fn check_get_global(m: &Module, tree: &Tree, op: &Op) -> Check {
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
