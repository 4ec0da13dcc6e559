//! Globals and functions: op records, their regions, blocks, results and
//! attributes.
use super::*;

pub(super) fn create_global(ctx: &mut Ctx<'_>, g: GlobalInfo) -> Result<(), ReadError> {
    let name = ctx.strings.get(g.name, g.at)?;
    let ty = ctx.type_at(g.ty, g.at)?;
    let value = dense_from_constant(ctx, ty, g.constant, g.at)?;
    let mut attrs: Vec<(&'static str, Attr)> = vec![
        ("sym_name", Attr::String(name)),
        ("value", value),
        ("alignment", Attr::Int(g.alignment)),
    ];
    if g.visibility > 1 {
        return Err(ReadError::new(
            g.at,
            format!("invalid integer value for enum type: {}", g.visibility),
        ));
    }
    attrs.push((
        "symbol_visibility",
        Attr::Enum(crate::ir::EnumKind::SymbolVisibility, g.visibility as u8),
    ));
    if g.is_constant != 0 {
        attrs.push(("constant", Attr::Unit));
    }
    let op = Op {
        opcode: Opcode::Global,
        results: Vec::new(),
        operands: Vec::new(),
        segments: Vec::new(),
        attrs,
        regions: Vec::new(),
        offset: g.at,
        debug: None,
    };
    let id = ctx.module.ops.append(op);
    ctx.module.body.ops.push(id);
    Ok(())
}

pub(super) fn create_function(
    ctx: &mut Ctx<'_>,
    f: FunctionInfo<'_>,
    main_at: usize,
) -> Result<(), ReadError> {
    let name = ctx.strings.get(f.name, f.at).map_err(|e| {
        e.with_context(
            main_at,
            format!("failed to get function name string at index {}", f.name),
        )
    })?;
    if name.is_empty() {
        return Err(ReadError::new(
            main_at,
            format!("function name at index {} is empty", f.name),
        ));
    }
    if f.sig >= ctx.module.types.len() as u64 {
        return Err(ReadError::new(
            main_at,
            format!(
                "function signature index {} out of bounds for function '{name}'",
                f.sig
            ),
        ));
    }
    let sig = ctx.type_at(f.sig, f.at).map_err(|e| {
        // (NVIDIA's message lacks the closing quote.)
        e.with_context(
            main_at,
            format!(
                "failed to parse type at index {} for function '{name}",
                f.sig
            ),
        )
    })?;
    let Type::Function { inputs, .. } = ctx.module.types[sig].clone() else {
        return Err(ReadError::new(
            main_at,
            format!("function signature index {} does not refer to a function type for function '{name}'", f.sig),
        ));
    };
    let mut it = DebugIter {
        func: f.loc,
        next: 0,
    };
    let debug = ctx.debug_next(
        &mut it,
        main_at,
        &format!("failed to read function location for '{name}'"),
    )?;
    if f.flags & 0x02 == 0 {
        return Err(ReadError::new(
            main_at,
            format!("un-expected non-entry function '{name}'"),
        ));
    }
    let hints = match f.hints {
        Some(Attr::OptimizationHints(h)) => Attr::OptimizationHints(h),
        Some(_) => {
            return Err(ReadError::new(
                main_at,
                format!("invalid optimization hints attribute for function '{name}'"),
            ))
        }
        None => Attr::OptimizationHints(Vec::new()),
    };
    let op_id = ctx.module.ops.append(Op {
        opcode: Opcode::Entry,
        results: Vec::new(),
        operands: Vec::new(),
        segments: Vec::new(),
        attrs: vec![
            ("sym_name", Attr::String(name.clone())),
            ("function_type", Attr::Type(sig)),
            ("optimization_hints", hints),
        ],
        regions: Vec::new(),
        offset: f.at,
        debug,
    });
    let mut scope: Vec<ValueId> = Vec::with_capacity(inputs.len());
    let mut block = Block::default();
    for (i, ty) in inputs.iter().enumerate() {
        let v = ctx.module.values.append(Value {
            ty: *ty,
            def: ValueDef::BlockArg {
                op: op_id,
                region: 0,
                index: i as u32,
            },
        });
        scope.push(v);
        block.args.push(v);
    }
    let mut body = f.body;
    let body_at = body.offset();
    while !body.is_empty() {
        let op = parse_op(&mut body, ctx, &mut scope, &mut it, 0).map_err(|e| {
            e.rebase(body_at).with_context(
                main_at,
                format!("failed to parse function body for function '{name}'"),
            )
        })?;
        block.ops.push(op);
    }
    ctx.module.ops[op_id].regions.push(Region {
        blocks: vec![block],
    });
    ctx.module.body.ops.push(op_id);
    Ok(())
}

/// The handle of a `token` type, appending one to the type arena if needed.
pub(super) fn token_type(ctx: &mut Ctx<'_>) -> TypeId {
    let entries = &ctx.type_entries;
    if let Some((h, _)) = ctx.module.types.iter().find(|(h, t)| {
        **t == Type::Token && entries.get(h.index()).is_some_and(|e| e.error.is_none())
    }) {
        return h;
    }
    ctx.type_entries.push(TypeEntry {
        error: None,
        silent: false,
        refs: Vec::new(),
        base: 0,
        end: 0,
    });
    ctx.type_checked.push(true);
    ctx.module.types.append(Type::Token)
}

pub(super) fn is_terminator(op: Opcode) -> bool {
    op.is_terminator()
}

pub(super) fn parse_op(
    r: &mut Reader<'_>,
    ctx: &mut Ctx<'_>,
    scope: &mut Vec<ValueId>,
    it: &mut DebugIter,
    depth: usize,
) -> Result<OpId, ReadError> {
    if depth > MAX_NESTING {
        return Err(r.err("region nesting exceeds the limit"));
    }
    let at = r.offset();
    let code = r
        .varint()
        .map_err(|_| r.err("failed to read operation opcode."))?;
    // The highest public opcode of each version; below it, gaps are
    // "unknown", above it everything is "unsupported".
    let max_code: u64 = match (ctx.version.major, ctx.version.minor) {
        (13, 1) => 109,
        (13, 2) => 110,
        (13, 3) => 117,
        _ => 122,
    };
    let opcode = match Opcode::from_code(code) {
        Some(op)
            if code <= max_code && Version::new(op.since().0, op.since().1, 0) <= ctx.version =>
        {
            op
        }
        None if code <= max_code => {
            return Err(r.err(format!("unknown or unimplemented opcode: {code}")))
        }
        _ => {
            return Err(r.err(format!(
                "unsupported opcode {code} for bytecode version {}",
                ctx.version
            )))
        }
    };
    let debug = ctx.debug_next(it, r.offset(), "failed to read operation location.")?;
    let name = || format!("{:?}Op", opcode);
    let layout = table::layout(opcode);
    let mut result_types: Vec<TypeId> = Vec::new();
    let mut flags: u64 = 0;
    let mut attrs: Vec<(&'static str, Attr)> = Vec::new();
    let mut operands: Vec<ValueId> = Vec::new();
    let mut segments: Vec<Segment> = Vec::new();
    let mut count: Option<u64> = None;
    let mut regions: Vec<Region> = Vec::new();
    let op_id = ctx.module.ops.append(Op {
        opcode,
        results: Vec::new(),
        operands: Vec::new(),
        segments: Vec::new(),
        attrs: Vec::new(),
        regions: Vec::new(),
        offset: at,
        debug,
    });
    let fixed_after_count = |steps: &[Step], from: usize| {
        steps[from..]
            .iter()
            .filter(|s| matches!(s, Step::Operand(_)))
            .count() as u64
    };
    // Operands are read one index at a time, each at least one byte, so a
    // huge count fails at the end of the data without allocating for it.
    // Ops with operand segments (sized or optional groups) name the segment
    // in their messages; the others number operands from 0.
    let segmented = layout
        .steps
        .iter()
        .any(|s| matches!(s, Step::Sized(_) | Step::OptOperand(..)));
    let read_operand = |r: &mut Reader<'_>,
                        scope: &[ValueId],
                        segment: &str,
                        element: u64,
                        overall: usize|
     -> Result<ValueId, ReadError> {
        let what = if segmented {
            format!("{segment} segment, element {element}")
        } else {
            format!("operand {overall}")
        };
        let idx = r
            .varint()
            .map_err(|_| r.err(format!("failed to read operand index for {what}")))?;
        match usize::try_from(idx).ok().and_then(|k| scope.get(k)) {
            Some(v) => Ok(*v),
            None => Err(r.err(format!(
                "operand index {idx} out of bounds (size={}) for {what}",
                scope.len()
            ))),
        }
    };
    for (si, step) in layout.steps.iter().enumerate() {
        match *step {
            Step::Result(_) => {
                let i = result_types.len();
                let t = read_result_type(r, ctx, i, opcode)?;
                result_types.push(t);
            }
            Step::Results => {
                // Read one type at a time: a huge count fails at the end of the
                // data, as in NVIDIA's reader.
                let n = r.varint()?;
                for i in 0..n {
                    let t = read_result_type(r, ctx, i as usize, opcode)?;
                    result_types.push(t);
                }
            }
            Step::Flags(since) => {
                if since.map_or(true, |v| ctx.version >= v) {
                    flags = r.varint()?;
                }
            }
            Step::Unit(n, bit) => {
                if flags >> bit & 1 != 0 {
                    attrs.push((n, Attr::Unit));
                }
            }
            Step::Attr(n, kind, cond) => {
                let present = match cond {
                    Cond::Always => true,
                    Cond::Since(v) => ctx.version >= v,
                    Cond::Flag(b) => flags >> b & 1 != 0,
                };
                if present {
                    let a = op_attr(r, ctx, kind, &result_types).map_err(|e| {
                        let e = if kind == AttrKind::Tagged {
                            e.with_context(
                                r.offset(),
                                "failed to parse self-contained attribute for AssumePredicateAttrInterface",
                            )
                        } else {
                            e
                        };
                        let what = if matches!(cond, Cond::Flag(_)) {
                            "optional attribute"
                        } else {
                            "attribute"
                        };
                        e.with_context(r.offset(), format!("failed to parse {what} '{n}'"))
                    })?;
                    attrs.push((n, a));
                }
            }
            Step::Operand(n) => {
                let start = operands.len() as u32;
                operands.push(read_operand(r, scope, n, 0, operands.len())?);
                segments.push(Segment {
                    name: n,
                    start,
                    len: 1,
                });
            }
            Step::OptOperand(n, bit) => {
                let start = operands.len() as u32;
                let mut len = 0;
                if flags >> bit & 1 != 0 {
                    operands.push(read_operand(r, scope, n, 0, operands.len())?);
                    len = 1;
                }
                segments.push(Segment {
                    name: n,
                    start,
                    len,
                });
            }
            Step::Sized(n) => {
                let k = r
                    .varint()
                    .map_err(|_| r.err("failed to read operand count"))?;
                let start = operands.len() as u32;
                for j in 0..k {
                    operands.push(read_operand(r, scope, n, j, operands.len())?);
                }
                segments.push(Segment {
                    name: n,
                    start,
                    len: k as u32,
                });
            }
            Step::Count => {
                let cat = r.offset();
                let k = r
                    .varint()
                    .map_err(|_| r.err("failed to read operand count"))?;
                let fixed = fixed_after_count(layout.steps, si);
                if k < fixed {
                    return Err(ReadError::new(
                        cat,
                        format!(
                            "operand count {k} is less than the {fixed} operands {} requires",
                            name()
                        ),
                    ));
                }
                count = Some(k - fixed);
            }
            Step::Unsized(n) => {
                let k = count.take().unwrap_or(0);
                let start = operands.len() as u32;
                for j in 0..k {
                    operands.push(read_operand(r, scope, n, j, operands.len())?);
                }
                segments.push(Segment {
                    name: n,
                    start,
                    len: k as u32,
                });
            }
            Step::Regions(expected) => {
                let rat = r.offset();
                let k = r.varint()?;
                if k != u64::from(expected) || k > MAX_REGIONS {
                    return Err(ReadError::new(
                        rat,
                        format!("{} expects {expected} regions, found {k}", name()),
                    ));
                }
                for ri in 0..k {
                    let reg = parse_region(r, ctx, scope, it, op_id, ri as u32, depth + 1)
                        .map_err(|e| {
                            e.with_context(r.offset(), format!("failed to parse region {ri}"))
                        })?;
                    regions.push(reg);
                }
            }
        }
    }
    // Before 13.2, print_tko had no result; NVIDIA's reader still gives it a
    // token result, which is not addressable by later operands.
    let mut hidden = 0;
    if opcode == Opcode::PrintTko && ctx.version < Version::new(13, 2, 0) && result_types.is_empty()
    {
        result_types.push(token_type(ctx));
        hidden = 1;
    }
    let mut results = Vec::with_capacity(result_types.len());
    let visible = result_types.len() - hidden;
    for (i, ty) in result_types.into_iter().enumerate() {
        let v = ctx.module.values.append(Value {
            ty,
            def: ValueDef::Result {
                op: op_id,
                index: i as u32,
            },
        });
        results.push(v);
        if i < visible {
            scope.push(v);
        }
    }
    let op = &mut ctx.module.ops[op_id];
    op.results = results;
    op.operands = operands;
    op.segments = segments;
    op.attrs = attrs;
    op.regions = regions;
    Ok(op_id)
}

/// Reads a result type index; like NVIDIA's reader, a bad index is reported
/// only as `failed to get result type N for XOp`.
pub(super) fn read_result_type(
    r: &mut Reader<'_>,
    ctx: &mut Ctx<'_>,
    i: usize,
    op: Opcode,
) -> Result<TypeId, ReadError> {
    let msg = || format!("failed to get result type {i} for {op:?}Op");
    let idx = r.varint().map_err(|_| r.err(msg()))?;
    if idx >= ctx.module.types.len() as u64 || ctx.type_entries[idx as usize].silent {
        return Err(r.err(msg()));
    }
    let at = r.offset();
    ctx.type_at(idx, at)
        .map_err(|e| e.with_context(r.offset(), msg()))
}

pub(super) fn parse_region(
    r: &mut Reader<'_>,
    ctx: &mut Ctx<'_>,
    scope: &mut Vec<ValueId>,
    it: &mut DebugIter,
    owner: OpId,
    index: u32,
    depth: usize,
) -> Result<Region, ReadError> {
    let n = r
        .varint()
        .map_err(|_| r.err("failed to read region block count"))?;
    if n > MAX_BLOCKS {
        return Err(r.err(format!(
            "region has {n} blocks; at most {MAX_BLOCKS} is supported"
        )));
    }
    let mut region = Region::default();
    for bi in 0..n {
        let b = parse_block(r, ctx, scope, it, owner, index, depth).map_err(|e| {
            e.with_context(r.offset(), format!("failed to parse block {bi} in region."))
        })?;
        region.blocks.push(b);
    }
    Ok(region)
}

pub(super) fn parse_block(
    r: &mut Reader<'_>,
    ctx: &mut Ctx<'_>,
    scope: &mut Vec<ValueId>,
    it: &mut DebugIter,
    owner: OpId,
    region: u32,
    depth: usize,
) -> Result<Block, ReadError> {
    let nargs = r
        .varint()
        .map_err(|_| r.err("failed to read block argument count."))?;
    if nargs > MAX_BLOCK_ARGS || nargs > r.remaining() as u64 {
        return Err(r.err(format!(
            "block argument count {nargs} exceeds the remaining data"
        )));
    }
    let saved = scope.len();
    let mut block = Block::default();
    for i in 0..nargs {
        let msg = || format!("failed to read block argument type: {i}");
        let idx = r.varint().map_err(|_| r.err(msg()))?;
        if idx >= ctx.module.types.len() as u64 || ctx.type_entries[idx as usize].silent {
            return Err(r.err(msg()));
        }
        let at = r.offset();
        let ty = ctx
            .type_at(idx, at)
            .map_err(|e| e.with_context(r.offset(), msg()))?;
        let v = ctx.module.values.append(Value {
            ty,
            def: ValueDef::BlockArg {
                op: owner,
                region,
                index: i as u32,
            },
        });
        block.args.push(v);
        scope.push(v);
    }
    let nops = r
        .varint()
        .map_err(|_| r.err("failed to read block operation count."))?;
    if nops > MAX_BLOCK_OPS || nops > r.remaining() as u64 {
        return Err(r.err(format!(
            "block operation count {nops} exceeds the remaining data"
        )));
    }
    for i in 0..nops {
        let op = parse_op(r, ctx, scope, it, depth).map_err(|e| {
            e.with_context(
                r.offset(),
                format!("failed to parse operation {i} in block."),
            )
        })?;
        block.ops.push(op);
    }
    match block.ops.last() {
        None => {
            return Err(r.err(
                "invalid block structure: block is expected to have a terminator operation, but it is empty",
            ))
        }
        Some(&last) => {
            let op = &ctx.module.ops[last];
            if !is_terminator(op.opcode) {
                return Err(r.err(format!(
                    "invalid block structure: block is expected to have a terminator operation, but the last operation '{}' is not a terminator.",
                    op.name()
                )));
            }
        }
    }
    scope.truncate(saved);
    Ok(block)
}

pub(super) fn op_attr(
    r: &mut Reader<'_>,
    ctx: &mut Ctx<'_>,
    kind: AttrKind,
    results: &[TypeId],
) -> Result<Attr, ReadError> {
    Ok(match kind {
        AttrKind::Enum(k) => {
            let v = r
                .varint()
                .map_err(|_| r.err("failed to read VarInt for enum attribute."))?;
            if v as usize >= k.keywords().len() {
                return Err(r.err(format!("invalid integer value for enum type: {v}")));
            }
            // `nearest_away` came with bytecode 13.4.
            if k == crate::ir::EnumKind::RoundingMode && v == 7 && ctx.version < super::V13_4 {
                return Err(r.err(format!(
                    "enum value {v} is not available in bytecode version {}.{}",
                    ctx.version.major, ctx.version.minor
                )));
            }
            Attr::Enum(k, v as u8)
        }
        AttrKind::Int => Attr::Int(r.varint()?),
        AttrKind::Str => Attr::String(
            ctx.strings
                .read(r)
                .map_err(|e| e.with_context(r.offset(), "failed to read StringAttr."))?,
        ),
        AttrKind::Type => Attr::Type(ctx.read_type(r)?),
        AttrKind::Array => {
            let n = r.count(MAX_ATTR_ELEMS.min(r.remaining() as u64), "array size")?;
            let mut v = Vec::with_capacity(n as usize);
            for _ in 0..n {
                v.push(tagged_attr(r, ctx, 1)?);
            }
            Attr::Array(v)
        }
        AttrKind::Tagged => {
            // Only `assume` has one: its predicate.
            let a = tagged_attr(r, ctx, 0)?;
            if !matches!(
                a,
                Attr::DivBy { .. } | Attr::SameElements(_) | Attr::Bounded { .. }
            ) {
                return Err(
                    r.err("failed to cast parsed attribute to AssumePredicateAttrInterface")
                );
            }
            a
        }
        AttrKind::DenseElements => {
            let at = r.offset();
            let ci = r.varint()?;
            let Some(&ty) = results.first() else {
                return Err(ReadError::new(at, "dense constant without a result type"));
            };
            dense_from_constant(ctx, ty, ci, at)?
        }
        AttrKind::DenseI32 => {
            let v = i32_list(r, "DenseI32ArrayAttr values")?;
            if let Some(x) = v.iter().find(|&&x| x == i32::MAX || x == i32::MIN) {
                return Err(r.err(format!("array contains unsupported value {x}")));
            }
            Attr::DenseI32(v)
        }
        AttrKind::DenseBool => {
            let at = r.offset();
            let n = r.varint()?;
            if n > r.remaining() as u64 || n > MAX_ATTR_ELEMS {
                return Err(ReadError::new(
                    at,
                    format!("array size in bytecode ({n}) exceeds the remaining data"),
                ));
            }
            Attr::DenseBool(r.bytes(n as usize)?.iter().map(|&b| b != 0).collect())
        }
        AttrKind::OptimizationHints => Attr::OptimizationHints(dictionary(r, ctx, 0)?),
        AttrKind::Bool => Attr::Bool(r.u8()? != 0),
    })
}
