//! Module-scope `global`s: each becomes a `.global` byte array holding its
//! initial value (so the loader initialises it), and `get_global` takes its
//! address. Names that are not PTX identifiers are spelled with `$xx`
//! escapes, one-to-one ([`crate::ptx::names::ptx_name`]).
use crate::ir::{Attr, Module, OpId};
use crate::ptx::names::ptx_name;
use crate::ptx::GlobalBytes;

use crate::lower::error::LowerError;

/// The byte array of the `global` op `id`: its value's elements in order,
/// little-endian, each in its natural size (`i1` in a byte).
pub fn lower_global(m: &Module, id: OpId) -> Result<GlobalBytes, LowerError> {
    let op = &m.ops[id];
    let failed = |what: &str| LowerError::Failed {
        message: format!("'cuda_tile.global' op {what}"),
        location: m.location(id),
    };
    let Some(Attr::String(name)) = op.attr("sym_name") else {
        return Err(failed("without a name"));
    };
    let Some(Attr::Dense { ty, data }) = op.attr("value") else {
        return Err(failed("without a dense value"));
    };
    let (scalar, elems) = m
        .dense_elements(*ty, data)
        .ok_or_else(|| failed("with a value of an unsupported type"))?;
    let width = (scalar.bit_width() as usize).div_ceil(8);
    let mut init = Vec::with_capacity(elems.len() * width);
    for e in elems {
        init.extend_from_slice(&e.to_le_bytes()[..width]);
    }
    let align = match op.attr("alignment") {
        Some(Attr::Int(a)) if *a > 0 => u32::try_from(*a).unwrap_or(u32::MAX),
        _ => 1,
    }
    .max(u32::try_from(width).unwrap_or(1));
    let private = matches!(op.attr("symbol_visibility"), Some(Attr::Enum(_, 1)));
    Ok(GlobalBytes {
        name: ptx_name(name),
        align,
        size: u32::try_from(init.len()).map_err(|_| failed("too large"))?,
        visible: !private,
        init: Some(init),
    })
}
