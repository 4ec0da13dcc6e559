//! The debug-info section: locations, scopes and their validity.
use super::*;

pub(super) fn read_debug<'a>(mut s: Reader<'a>, ctx: &mut Ctx<'a>) -> Result<(), ReadError> {
    let n_funcs = s
        .varint()
        .map_err(|_| s.err("failed to read total number of operations with debug info"))?;
    s.skip_padding(4)
        .map_err(|_| s.err("failed to skip padding for debug info index offset pointer"))?;
    if n_funcs > (s.remaining() / 4) as u64 {
        return Err(s.err("failed to skip debug info index offsets"));
    }
    let mut index_offsets = Vec::with_capacity(n_funcs as usize);
    for _ in 0..n_funcs {
        index_offsets.push(s.u32_le()?);
    }
    let n_idx = s
        .varint()
        .map_err(|_| s.err("failed to read total number of debug info indices"))?;
    let room = (s.remaining() / 8) as u64;
    if n_idx > room {
        return Err(s.err(format!(
            "number of debug info indices ({n_idx}) exceeds the maximum of {room} that can fit in the remaining payload of {} bytes.",
            s.remaining()
        )));
    }
    s.skip_padding(8)
        .map_err(|_| s.err("failed to skip padding for debug info indices pointer"))?;
    if n_idx > (s.remaining() / 8) as u64 {
        return Err(s.err("failed to skip debug info indices"));
    }
    let mut indices = Vec::with_capacity(n_idx as usize);
    for _ in 0..n_idx {
        indices.push(s.u64_le()?);
    }
    let n_attr = s
        .varint()
        .map_err(|_| s.err("failed to read total number of debug info attributes"))?;
    let room = (s.remaining() / 4) as u64;
    if n_attr > room || n_attr > MAX_DEBUG_ATTRS {
        return Err(s.err(format!(
            "number of debug info attributes ({n_attr}) exceeds the maximum of {room} that can fit in the remaining payload of {} bytes.",
            s.remaining()
        )));
    }
    s.skip_padding(4)
        .map_err(|_| s.err("failed to skip padding for debug info offset pointer"))?;
    if n_attr > (s.remaining() / 4) as u64 {
        return Err(s.err("failed to skip debug info offsets"));
    }
    let mut offsets = Vec::with_capacity(n_attr as usize);
    for _ in 0..n_attr {
        offsets.push(s.u32_le()? as usize);
    }
    let data = s.rest();
    ctx.module.debug.reserve(n_attr as usize);
    let n = n_attr;
    let mut parsed = Vec::with_capacity(offsets.len());
    let mut payloads = Vec::with_capacity(offsets.len());
    for i in 0..offsets.len() {
        let start = offsets[i];
        let end = offsets.get(i + 1).copied().unwrap_or(data.len());
        let attr = if start > end || end > data.len() {
            payloads.push(None);
            None
        } else {
            let mut d = data;
            d.bytes(start)?;
            let payload = d.sub(end - start)?;
            payloads.push(Some(payload));
            parse_debug_attr(payload, ctx, n).ok()
        };
        parsed.push(attr.is_some());
        ctx.module.debug.append(attr.unwrap_or(DebugAttr::Unknown));
    }
    let ok = debug_validity(&ctx.module, &parsed);
    ctx.debug = DebugTables {
        index_offsets,
        indices,
        ok,
        decoded: std::cell::RefCell::new(vec![None; payloads.len()]),
        payloads,
    };
    // Reject reference cycles so walking scopes always ends.
    for i in 0..ctx.module.debug.len() {
        let mut cur = i;
        let mut steps = 0;
        loop {
            let next = match &ctx.module.debug[Handle::<DebugAttr>::from_index(cur)] {
                DebugAttr::CallSite { callee, .. } => Some(callee.index()),
                DebugAttr::Loc { scope, .. } | DebugAttr::LexicalBlock { scope, .. } => {
                    Some(scope.index())
                }
                _ => None,
            };
            match next {
                Some(nx) => {
                    steps += 1;
                    if steps > MAX_DEBUG_DEPTH {
                        ctx.module.debug[Handle::<DebugAttr>::from_index(i)] = DebugAttr::Unknown;
                        break;
                    }
                    cur = nx;
                }
                None => break,
            }
        }
    }
    Ok(())
}

/// Whether each debug attribute decoded and refers only to attributes that
/// did, without cycles.
pub(super) fn debug_validity(m: &Module, parsed: &[bool]) -> Vec<bool> {
    // 0 = unknown, 1 = in progress, 2 = ok, 3 = bad
    let mut state = vec![0u8; parsed.len()];
    fn visit(m: &Module, parsed: &[bool], state: &mut [u8], i: usize, depth: usize) -> bool {
        match state[i] {
            2 => return true,
            1 | 3 => return false,
            _ => {}
        }
        if !parsed[i] || depth > MAX_DEBUG_DEPTH {
            state[i] = 3;
            return false;
        }
        state[i] = 1;
        let children: Vec<usize> = match &m.debug[Handle::<DebugAttr>::from_index(i)] {
            DebugAttr::Unknown | DebugAttr::File { .. } => vec![],
            DebugAttr::CompileUnit { file } => vec![file.index()],
            DebugAttr::LexicalBlock { scope, file, .. } => vec![scope.index(), file.index()],
            DebugAttr::Loc { scope, .. } => vec![scope.index()],
            DebugAttr::Subprogram {
                file, compile_unit, ..
            } => vec![file.index(), compile_unit.index()],
            DebugAttr::CallSite { callee, caller } => vec![callee.index(), caller.index()],
        };
        let ok = children
            .into_iter()
            .all(|c| c < parsed.len() && visit(m, parsed, state, c, depth + 1));
        state[i] = if ok { 2 } else { 3 };
        ok
    }
    (0..parsed.len())
        .map(|i| visit(m, parsed, &mut state, i, 0))
        .collect()
}

pub(super) fn parse_debug_attr(
    mut r: Reader<'_>,
    ctx: &Ctx<'_>,
    n: u64,
) -> Result<DebugAttr, ReadError> {
    let tag = r.varint()?;
    let id = |r: &mut Reader<'_>| -> Result<DebugId, ReadError> {
        let at = r.offset();
        let v = r.varint()?;
        if v == 0 || v > n {
            return Err(ReadError::new(
                at,
                format!("debug info index {v} out of bounds"),
            ));
        }
        Ok(Handle::from_index((v - 1) as usize))
    };
    Ok(match tag {
        1 => DebugAttr::CompileUnit { file: id(&mut r)? },
        2 => DebugAttr::File {
            name: ctx.strings.read(&mut r)?,
            directory: ctx.strings.read(&mut r)?,
        },
        3 => DebugAttr::LexicalBlock {
            scope: id(&mut r)?,
            file: id(&mut r)?,
            line: r.varint()?,
            column: r.varint()?,
        },
        4 => DebugAttr::Loc {
            scope: id(&mut r)?,
            filename: ctx.strings.read(&mut r)?,
            line: r.varint()?,
            column: r.varint()?,
        },
        5 => DebugAttr::Subprogram {
            file: id(&mut r)?,
            line: r.varint()?,
            name: ctx.strings.read(&mut r)?,
            linkage_name: ctx.strings.read(&mut r)?,
            compile_unit: id(&mut r)?,
            scope_line: r.varint()?,
            declaration: ctx.version >= V13_5 && r.varint()? & 1 != 0,
        },
        // A callee or caller of 0 is the unknown location, as in NVIDIA's
        // reader (its tileiras compiles such a module): the call site is
        // then an unknown location, and its ops keep the position before
        // them.
        6 => {
            let mut peek = r;
            let (callee, caller) = (peek.varint()?, peek.varint()?);
            if callee == 0 || caller == 0 {
                DebugAttr::Unknown
            } else {
                DebugAttr::CallSite {
                    callee: id(&mut r)?,
                    caller: id(&mut r)?,
                }
            }
        }
        _ => DebugAttr::Unknown,
    })
}
