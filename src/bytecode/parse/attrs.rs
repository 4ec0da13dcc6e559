//! Attributes: tagged attribute payloads, dictionaries, integers and dense
//! constants.
use super::*;

pub(super) fn scalar_of(ctx: &Ctx<'_>, ty: TypeId) -> Option<Scalar> {
    match ctx.module.types.try_get(ty)? {
        Type::Scalar(s) => Some(*s),
        _ => None,
    }
}

/// Number of elements of a tile type, if it is one with static shape.
pub(super) fn tile_elems(ctx: &Ctx<'_>, ty: TypeId) -> Option<(Scalar, u64)> {
    match ctx.module.types.try_get(ty)? {
        Type::Tile { element, shape } => {
            let s = scalar_of(ctx, *element)?;
            let mut n: u64 = 1;
            for &d in shape {
                n = n.checked_mul(u64::try_from(d).ok()?)?;
            }
            Some((s, n))
        }
        _ => None,
    }
}

pub(super) fn dense_from_constant(
    ctx: &Ctx<'_>,
    ty: TypeId,
    index: u64,
    at: usize,
) -> Result<Attr, ReadError> {
    let mut c = ctx.consts.get(index, at)?;
    let Some((s, n)) = tile_elems(ctx, ty) else {
        return Err(ReadError::new(
            at,
            "expect Cuda Tile integer or float type for a dense constant",
        ));
    };
    let size = c.varint().map_err(|_| {
        c.err("failed to read the size of the data buffer")
            .rebase(c.base())
    })?;
    if size > c.remaining() as u64 {
        return Err(c.err("failed to read the raw byte data").rebase(c.base()));
    }
    let data = c.bytes(size as usize)?;
    if s == Scalar::I1 {
        if size != 1 && size != n.div_ceil(8) {
            return Err(c
                .err(format!(
                    "i1 dense attribute payload size {size} is not a recognized encoding for {n} elements"
                ))
                .rebase(c.base()));
        }
        return Ok(Attr::Dense {
            ty,
            data: data.to_vec(),
        });
    }
    let ok = if s == Scalar::I1 {
        false
    } else {
        let eb = u64::from(s.bit_width().div_ceil(8));
        size == eb || Some(size) == n.checked_mul(eb)
    };
    if !ok {
        return Err(c
            .err("failed to validate buffer size and format")
            .rebase(c.base()));
    }
    Ok(Attr::Dense {
        ty,
        data: data.to_vec(),
    })
}

pub(super) fn tagged_attr(
    r: &mut Reader<'_>,
    ctx: &mut Ctx<'_>,
    depth: usize,
) -> Result<Attr, ReadError> {
    if depth > MAX_ATTR_DEPTH {
        return Err(r.err("attribute nesting exceeds the limit"));
    }
    let tag = r
        .varint()
        .map_err(|_| r.err("failed to read AttributeTag for self-contained attribute."))?;
    Ok(match tag {
        1 => {
            let ty = ctx.read_type(r)?;
            let Some(s) = scalar_of(ctx, ty).filter(|s| s.is_integer()) else {
                return Err(r.err("failed to read valid IntegerType for IntegerAttr"));
            };
            let value = inline_int(r, s)?;
            Attr::Integer { ty, value }
        }
        2 => {
            let ty = ctx.read_type(r)?;
            let Some(s) = scalar_of(ctx, ty).filter(|s| s.is_float()) else {
                return Err(r.err("failed to read valid FloatType for FloatAttr"));
            };
            let bits = ap_int(r, s.bit_width())?;
            Attr::Float { ty, bits }
        }
        3 => Attr::Bool(r.u8()? != 0),
        4 => Attr::Type(ctx.read_type(r)?),
        5 => Attr::String(ctx.strings.read(r)?),
        6 => {
            let n = r.count(MAX_ATTR_ELEMS.min(r.remaining() as u64), "array size")?;
            let mut v = Vec::with_capacity(n as usize);
            for _ in 0..n {
                v.push(tagged_attr(r, ctx, depth + 1)?);
            }
            Attr::Array(v)
        }
        7 => {
            let ty = ctx.read_type(r)?;
            let cat = r.offset();
            let ci = r.varint()?;
            dense_from_constant(ctx, ty, ci, cat)?
        }
        8 => {
            let divisor = r.varint()?;
            let flags = r.u8()?;
            if flags & !3 != 0 {
                return Err(r.err("unused bits set in optional parameter flags"));
            }
            let every = if flags & 1 != 0 {
                Some(r.svarint()?)
            } else {
                None
            };
            let along = if flags & 2 != 0 {
                Some(r.svarint()?)
            } else {
                None
            };
            Attr::DivBy {
                divisor,
                every,
                along,
            }
        }
        9 => Attr::SameElements(int_list(r, 8, "values")?),
        10 => Attr::Dictionary(dictionary(r, ctx, depth)?),
        11 => Attr::OptimizationHints(dictionary(r, ctx, depth)?),
        12 => {
            let flags = r.u8()?;
            if flags & !3 != 0 {
                return Err(r.err("unused bits set in optional parameter flags"));
            }
            let lb = if flags & 1 != 0 {
                Some(r.svarint()?)
            } else {
                None
            };
            let ub = if flags & 2 != 0 {
                Some(r.svarint()?)
            } else {
                None
            };
            Attr::Bounded { lb, ub }
        }
        _ => {
            return Err(r.err(format!(
                "unsupported AttributeTag {tag} for self-contained attribute"
            )))
        }
    })
}

pub(super) fn dictionary(
    r: &mut Reader<'_>,
    ctx: &mut Ctx<'_>,
    depth: usize,
) -> Result<Vec<(String, Attr)>, ReadError> {
    let n = r.count(MAX_ATTR_ELEMS.min(r.remaining() as u64), "dictionary size")?;
    let mut v: Vec<(String, Attr)> = Vec::with_capacity(n as usize);
    for i in 0..n {
        let key = ctx.strings.read(r).map_err(|e| {
            e.with_context(
                r.offset(),
                format!("failed to read key for DictionaryAttr element {i}"),
            )
        })?;
        if key.is_empty() {
            return Err(r.err(format!(
                "invalid empty attribute name for DictionaryAttr element {i}"
            )));
        }
        let val = tagged_attr(r, ctx, depth + 1).map_err(|e| {
            e.with_context(
                r.offset(),
                format!("failed to parse DictionaryAttr value for key {key}"),
            )
        })?;
        if v.iter().any(|(k, _)| *k == key) {
            return Err(r.err(format!(
                "failed to parse DictionaryAttr, duplicate key found: {key}"
            )));
        }
        v.push((key, val));
    }
    Ok(v)
}

pub(super) fn inline_int(r: &mut Reader<'_>, s: Scalar) -> Result<u64, ReadError> {
    let w = s.bit_width();
    if w == 1 {
        return Ok(u64::from(r.u8()? != 0));
    }
    let at = r.offset();
    let v = r.varint()?;
    if w < 64 && v >> w != 0 {
        return Err(ReadError::new(
            at,
            format!("value {v} does not fit in {w} bits"),
        ));
    }
    Ok(v)
}

pub(super) fn ap_int(r: &mut Reader<'_>, w: u32) -> Result<u64, ReadError> {
    let at = r.offset();
    if w <= 8 {
        let b = r.u8()?;
        if w < 8 && u32::from(b) >> w != 0 {
            return Err(ReadError::new(
                at,
                format!("value {b} does not fit in {w} bits."),
            ));
        }
        return Ok(u64::from(b));
    }
    let v = r.svarint()? as u64;
    if w < 64 && v >> w != 0 {
        return Err(ReadError::new(
            at,
            format!("value {v} does not fit in {w} bits"),
        ));
    }
    Ok(v)
}
