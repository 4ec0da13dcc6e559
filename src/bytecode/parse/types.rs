//! The type section: tile, pointer, view and function types, checked as
//! they are read.
use super::*;

/// Reads an `i64` list with a varint count and `width`-byte little-endian
/// entries, one at a time like NVIDIA's reader: a count past the data fails
/// at the end of the data with `failed to read <what>`, and memory grows only
/// with what was actually read.
pub(super) fn int_list(
    r: &mut Reader<'_>,
    width: usize,
    what: &str,
) -> Result<Vec<i64>, ReadError> {
    let n = r
        .varint()
        .map_err(|_| r.err(format!("failed to read {what}")))?;
    if n > u64::from(u32::MAX - 1) {
        return Err(r.err(format!(
            "array size in bytecode ({n}) exceeds maximum supported capacity"
        )));
    }
    let mut v = Vec::with_capacity((n as usize).min(r.remaining() / width));
    for _ in 0..n {
        if r.remaining() < width {
            return Err(r.err(format!("failed to read {what}")));
        }
        let b = r.bytes(width)?;
        let x = match width {
            4 => i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            _ => {
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                i64::from_le_bytes(a)
            }
        };
        v.push(x);
    }
    Ok(v)
}

pub(super) fn i32_list(r: &mut Reader<'_>, what: &str) -> Result<Vec<i32>, ReadError> {
    Ok(int_list(r, 4, what)?
        .into_iter()
        .map(|x| x as i32)
        .collect())
}

pub(super) fn read_padding(
    r: &mut Reader<'_>,
    present: bool,
) -> Result<Option<Padding>, ReadError> {
    if !present {
        return Ok(None);
    }
    let at = r.offset();
    let v = r.varint()?;
    Padding::from_u64(v)
        .map(Some)
        .ok_or_else(|| ReadError::new(at, format!("invalid padding value: {v}")))
}

/// A tile shape: a varint count of 8-byte dimensions (checked with the
/// tile's other rules once its element type is known, see `type_rules`).
pub(super) fn tile_shape(r: &mut Reader<'_>) -> Result<Vec<i64>, ReadError> {
    int_list(r, 8, "concreteShapeCache")
}

/// A reference from one type to another, for NVIDIA-style error chains.
#[derive(Clone, Debug)]
pub(super) struct TypeRef {
    /// The referenced type-table index.
    pub(super) index: u64,
    /// The field, as NVIDIA's messages name it (`elementType`).
    pub(super) label: &'static str,
    /// Absolute offset just after the index.
    pub(super) offset: usize,
}

/// A decoded type entry: why it failed, if it did, and where it refers.
pub(super) struct TypeEntry {
    pub(super) error: Option<ReadError>,
    /// The entry failed without a message of its own (unreadable tag).
    pub(super) silent: bool,
    pub(super) refs: Vec<TypeRef>,
    /// Absolute offset of the payload after the tag.
    pub(super) base: usize,
    /// Absolute offset where decoding the payload stopped.
    pub(super) end: usize,
}

/// A dimension or stride as NVIDIA's messages show it (`?` when dynamic).
pub(super) fn dim_text(d: i64) -> String {
    if d == DYNAMIC {
        "?".to_string()
    } else {
        d.to_string()
    }
}

/// A view's tile shape must have power-of-two dimensions.
pub(super) fn check_tile_shape(r: &Reader<'_>, shape: &[i32]) -> Result<(), ReadError> {
    if shape.iter().any(|&d| d <= 0 || d & (d - 1) != 0) {
        let list: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        return Err(r.err(format!(
            "tile shape dimensions must have power of two length but got [{}]",
            list.join(", ")
        )));
    }
    Ok(())
}

pub(super) fn parse_type(
    mut entry: Reader<'_>,
    version: Version,
) -> (Result<Type, ReadError>, TypeEntry) {
    let mut refs = Vec::new();
    let tag = match entry.varint() {
        Ok(t) => t,
        Err(e) => {
            let base = entry.offset();
            return (
                Err(e),
                TypeEntry {
                    error: None,
                    silent: true,
                    refs,
                    base,
                    end: base,
                },
            );
        }
    };
    // NVIDIA's reader decodes the payload after the tag with its own reader.
    let mut r = entry.rest();
    let base = r.base();
    let t = parse_type_payload(tag, &mut r, version, &mut refs).map_err(|e| e.rebase(base));
    let end = r.offset();
    (
        t,
        TypeEntry {
            error: None,
            silent: false,
            refs,
            base,
            end,
        },
    )
}

pub(super) fn parse_type_payload(
    tag: u64,
    r: &mut Reader<'_>,
    version: Version,
    refs: &mut Vec<TypeRef>,
) -> Result<Type, ReadError> {
    let at = r.offset();
    // Reads a type index; the field name labels NVIDIA's error message.
    let id = |r: &mut Reader<'_>,
              refs: &mut Vec<TypeRef>,
              label: &'static str|
     -> Result<TypeId, ReadError> {
        let v = r
            .varint()
            .map_err(|_| r.err(format!("failed to get {label} type")))?;
        refs.push(TypeRef {
            index: v,
            label,
            offset: r.offset(),
        });
        Ok(Handle::from_index(v.min(MAX_TYPES) as usize))
    };
    let scalar = |s: Scalar, since: Version| -> Result<Type, ReadError> {
        if version < since {
            let name = match s {
                Scalar::F8E8M0FNU => "Float8E8M0FNU",
                Scalar::F4E2M1FN => "Float4E2M1FN",
                Scalar::I4 => "Int4",
                Scalar::F8E5M3FNU => "Float8E5M3FNU",
                other => other.name(),
            };
            return Err(ReadError::unlocated(
                at,
                format!(
                    "type '{name}' requires bytecode version {}.{}+, file version is {}.{}",
                    since.major, since.minor, version.major, version.minor
                ),
            ));
        }
        Ok(Type::Scalar(s))
    };
    let v31 = Version::new(13, 1, 0);
    let t = match tag {
        0 => scalar(Scalar::I1, v31)?,
        1 => scalar(Scalar::I8, v31)?,
        2 => scalar(Scalar::I16, v31)?,
        3 => scalar(Scalar::I32, v31)?,
        4 => scalar(Scalar::I64, v31)?,
        5 => scalar(Scalar::F16, v31)?,
        6 => scalar(Scalar::BF16, v31)?,
        7 => scalar(Scalar::F32, v31)?,
        8 => scalar(Scalar::TF32, v31)?,
        9 => scalar(Scalar::F64, v31)?,
        10 => scalar(Scalar::F8E4M3FN, v31)?,
        11 => scalar(Scalar::F8E5M2, v31)?,
        18 => scalar(Scalar::F8E8M0FNU, Version::new(13, 2, 0))?,
        19 => scalar(Scalar::F4E2M1FN, V13_3)?,
        22 => scalar(Scalar::I4, V13_3)?,
        130 => scalar(Scalar::F8E5M3FNU, V13_4)?,
        17 => Type::Token,
        12 => {
            let flags = if version >= V13_4 { r.varint()? } else { 0 };
            let pointee = id(r, refs, "pointeeType")?;
            let ptr_attr = if flags & 1 != 0 { Some(r.u8()?) } else { None };
            Type::Pointer { pointee, ptr_attr }
        }
        13 => {
            let element = id(r, refs, "elementType")?;
            let shape = tile_shape(r)?;
            Type::Tile { element, shape }
        }
        14 => {
            let flags = if version >= V13_4 { r.varint()? } else { 0 };
            let element = id(r, refs, "elementType")?;
            let shape = int_list(r, 8, "shape")?;
            let strides = int_list(r, 8, "strides")?;
            if shape.iter().any(|&x| x != DYNAMIC && x <= 0) {
                let list: Vec<String> = shape.iter().map(|&d| dim_text(d)).collect();
                return Err(r.err(format!(
                    "dimensions must have strictly positive constant sizes but got [{}]",
                    list.join(", ")
                )));
            }
            if strides.iter().any(|&x| x != DYNAMIC && x <= 0) {
                let list: Vec<String> = strides.iter().map(|&d| dim_text(d)).collect();
                return Err(r.err(format!(
                    "dimensions must have strictly positive constant strides but got [{}]",
                    list.join(", ")
                )));
            }
            let ptr_attr = if flags & 1 != 0 { Some(r.u8()?) } else { None };
            Type::TensorView {
                element,
                shape,
                strides,
                ptr_attr,
            }
        }
        15 => {
            let unified = version >= V13_3;
            let flags = if unified { r.varint()? } else { 0 };
            let tile_shape = i32_list(r, "tile_shape data")?;
            let tensor_view = id(r, refs, "tensor_view")?;
            let dim_map = i32_list(r, "dim_map")?;
            let has = if unified {
                flags & 1 != 0
            } else {
                r.u8()? != 0
            };
            let padding = read_padding(r, has)?;
            check_tile_shape(r, &tile_shape)?;
            Type::PartitionView {
                tile_shape,
                tensor_view,
                dim_map,
                padding,
            }
        }
        16 => {
            let list = |r: &mut Reader<'_>,
                        refs: &mut Vec<TypeRef>,
                        label: &'static str|
             -> Result<Vec<TypeId>, ReadError> {
                let n = r
                    .varint()
                    .map_err(|_| r.err(format!("failed to read number of {label}s")))?;
                // One index at a time: a huge count fails at the end of the data.
                let mut v = Vec::new();
                for _ in 0..n {
                    v.push(id(r, refs, label)?);
                }
                Ok(v)
            };
            let inputs = list(r, refs, "parameter")?;
            let results = list(r, refs, "result")?;
            Type::Function { inputs, results }
        }
        20 if version >= V13_3 => {
            let flags = r.varint()?;
            let tile_shape = i32_list(r, "tile_shape data")?;
            let tensor_view = id(r, refs, "tensor_view")?;
            let sparse_dim = r.varint().map_err(|_| r.err("failed to read sparse_dim"))?;
            let padding = read_padding(r, flags & 1 != 0)?;
            Type::GatherScatterView {
                tile_shape,
                tensor_view,
                sparse_dim,
                padding,
            }
        }
        21 if version >= V13_3 => {
            let flags = r.varint()?;
            let tile_shape = i32_list(r, "tile_shape data")?;
            let traversal_strides = i32_list(r, "traversal_strides data")?;
            let tensor_view = id(r, refs, "tensor_view")?;
            let dim_map = i32_list(r, "dim_map")?;
            let padding = read_padding(r, flags & 1 != 0)?;
            Type::StridedView {
                tile_shape,
                traversal_strides,
                tensor_view,
                dim_map,
                padding,
            }
        }
        _ => return Err(ReadError::unlocated(at, format!("unknown type tag: {tag}"))),
    };
    Ok(t)
}

pub(super) fn read_types(
    mut s: Reader<'_>,
    version: Version,
    module: &mut Module,
) -> Result<Vec<TypeEntry>, ReadError> {
    let n = s.varint()?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let room = (s.remaining() / 4) as u64;
    if n > room || n > MAX_TYPES {
        return Err(s.err(format!(
            "number of types ({n}) exceeds the maximum of {room} that can fit in the remaining payload of {} bytes.",
            s.remaining()
        )));
    }
    s.skip_padding(4)?;
    let mut starts = Vec::with_capacity(n as usize);
    for _ in 0..n {
        starts.push(s.u32_le()? as usize);
    }
    let data = s.rest();
    let mut entries = Vec::with_capacity(n as usize);
    module.types.reserve(n as usize);
    for i in 0..starts.len() {
        let start = starts[i];
        let end = starts.get(i + 1).copied().unwrap_or(data.len());
        let (parsed, mut entry) = if start > end || end > data.len() {
            let e = ReadError::new(
                data.offset(),
                format!("type {i} has an invalid extent [{start}, {end})"),
            );
            (
                Err(e),
                TypeEntry {
                    error: None,
                    silent: true,
                    refs: Vec::new(),
                    base: data.offset(),
                    end: data.offset(),
                },
            )
        } else {
            let mut d = data;
            d.bytes(start)?;
            parse_type(d.sub(end - start)?, version)
        };
        match parsed {
            Ok(t) => {
                module.types.append(t);
            }
            Err(e) => {
                module.types.append(Type::Token);
                entry.error = Some(e);
            }
        }
        entries.push(entry);
    }
    Ok(entries)
}
