//! The constant, global and function-table sections.
use super::*;

pub(super) fn read_constants(mut s: Reader<'_>) -> Result<Constants<'_>, ReadError> {
    let at = s.offset();
    let n = s.varint()?;
    if n > u64::from(u32::MAX - 1) || n > MAX_CONSTANTS {
        return Err(ReadError::new(
            at,
            format!("number of constants ({n}) exceeds the limit"),
        ));
    }
    if n == 0 {
        return Ok(Constants {
            starts: Vec::new(),
            data: s.rest(),
        });
    }
    s.skip_padding(8)?;
    if (s.remaining() / 8) < n as usize {
        return Err(s.err("insufficient data for constant indices"));
    }
    let mut starts = Vec::with_capacity(n as usize);
    for _ in 0..n {
        starts.push(s.u64_le()?);
    }
    // NVIDIA's reader checks every constant's extent up front.
    let len = s.remaining() as u64;
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(len);
        if end < start {
            return Err(s.err(format!(
                "invalid constant start indices: end ({end}) is less than start ({start}) for constant {i}"
            )));
        }
        if end - start > len || end > len {
            return Err(s.err(format!(
                "constant {i} extends beyond available data: size={}, start={start}, total data size={len}",
                end - start
            )));
        }
    }
    Ok(Constants {
        starts,
        data: s.rest(),
    })
}

pub(super) struct GlobalInfo {
    pub(super) at: usize,
    pub(super) name: u64,
    pub(super) ty: u64,
    pub(super) constant: u64,
    pub(super) alignment: u64,
    pub(super) visibility: u64,
    pub(super) is_constant: u64,
}

pub(super) fn read_globals(mut s: Reader<'_>, ctx: &Ctx<'_>) -> Result<Vec<GlobalInfo>, ReadError> {
    let n = s
        .varint()
        .map_err(|_| s.err("failed to read number of global."))?;
    let min = if ctx.version >= V13_3 { 6 } else { 4 };
    let room = (s.remaining() / min) as u64;
    if n > room || n > MAX_GLOBALS {
        return Err(s.err(format!(
            "number of globals ({n}) exceeds the maximum of {room} that can fit in the remaining payload of {} bytes.",
            s.remaining()
        )));
    }
    let mut v = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let at = s.offset();
        let name = s
            .varint()
            .map_err(|_| s.err("failed to read global symbol name string."))?;
        let ty = s
            .varint()
            .map_err(|_| s.err("failed to read global value type"))?;
        let constant = s
            .varint()
            .map_err(|_| s.err("failed to read global value constant index"))?;
        let alignment = s
            .varint()
            .map_err(|_| s.err("failed to read global alignment"))?;
        let (visibility, is_constant) = if ctx.version >= V13_3 {
            (
                s.varint()
                    .map_err(|_| s.err("failed to read global symbol visibility"))?,
                s.varint()
                    .map_err(|_| s.err("failed to read global constant flag"))?,
            )
        } else {
            (0, 0)
        };
        v.push(GlobalInfo {
            at,
            name,
            ty,
            constant,
            alignment,
            visibility,
            is_constant,
        });
    }
    Ok(v)
}

pub(super) struct FunctionInfo<'a> {
    pub(super) at: usize,
    pub(super) name: u64,
    pub(super) sig: u64,
    pub(super) flags: u8,
    pub(super) loc: u64,
    pub(super) hints: Option<Attr>,
    pub(super) body: Reader<'a>,
}

pub(super) fn read_function_table<'a>(
    mut s: Reader<'a>,
    ctx: &mut Ctx<'_>,
) -> Result<Vec<FunctionInfo<'a>>, ReadError> {
    let n = s.varint().map_err(ReadError::silenced)?;
    if n > s.len() as u64 || n > MAX_FUNCTIONS {
        return Err(s.err(format!(
            "number of functions ({n}) exceeds payload size ({})",
            s.len()
        )));
    }
    let mut v = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let at = s.offset();
        let name = s.varint().map_err(ReadError::silenced)?;
        let sig = s.varint().map_err(ReadError::silenced)?;
        let flags = s.u8().map_err(ReadError::silenced)?;
        let loc = s.varint().map_err(ReadError::silenced)?;
        let hints = if ctx.version >= V13_5 {
            // 13.5: bit 1 kernel, bit 2 extern implementation, bit 3 testing
            // form; a kernel always carries its optimization hints and then
            // one more attribute (argument attributes).
            if flags & 0x06 == 0x06 {
                return Err(s.err("function entry cannot be both kernel and extern impl"));
            }
            if flags & 0x08 != 0 {
                return Err(s.err("function entry has testing form in non-test build"));
            }
            if flags & !0x0f != 0 {
                return Err(s.err(format!(
                    "function entry has unrecognized flag bits (0x{:X});",
                    flags & !0x0f
                )));
            }
            if flags & 0x02 != 0 {
                let h = tagged_attr(&mut s, ctx, 0)?;
                let _arg_attrs = tagged_attr(&mut s, ctx, 0)?;
                Some(h)
            } else {
                None
            }
        } else if flags & 0x02 != 0 && flags & 0x04 != 0 {
            Some(tagged_attr(&mut s, ctx, 0)?)
        } else {
            None
        };
        let len = s.varint().map_err(ReadError::silenced)?;
        if len > s.remaining() as u64 {
            return Err(s.err(format!(
                "function body length {len} exceeds remaining bytecode data ({} bytes)",
                s.remaining()
            )));
        }
        let body = s.sub(len as usize)?;
        v.push(FunctionInfo {
            at,
            name,
            sig,
            flags,
            loc,
            hints,
            body,
        });
    }
    Ok(v)
}
