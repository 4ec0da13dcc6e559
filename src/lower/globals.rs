//! Module-scope `global`s: each becomes a `.global` byte array holding its
//! initial value (so the loader initialises it), and `get_global` takes its
//! address. Names that are not PTX identifiers are spelled with `$xx`
//! escapes, one-to-one.
use crate::ir::{Attr, Module, OpId};
use crate::ptx::GlobalBytes;

use super::LowerError;

/// The PTX spelling of the TileIR symbol `name`: letters, digits and `_`
/// stay; any other byte becomes `$` and two hex digits (so distinct names
/// stay distinct), and a leading digit gets a `$` escape too.
pub fn ptx_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, b) in name.bytes().enumerate() {
        let keep = b.is_ascii_alphabetic() || b == b'_' || (i > 0 && b.is_ascii_digit());
        if keep {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("${b:02x}"));
        }
    }
    if out.is_empty() {
        out.push_str("$00");
    }
    out
}

/// Whether `name` is a PTX identifier (`[a-zA-Z][a-zA-Z0-9_$]*`, or
/// `[_$%][a-zA-Z0-9_$]+`), as an entry's name must be: ptxas cannot parse
/// any other.
pub fn is_ptx_identifier(name: &str) -> bool {
    let follows = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$';
    match name.as_bytes() {
        [first, rest @ ..] if first.is_ascii_alphabetic() => rest.iter().all(follows),
        [b'_' | b'$' | b'%', rest @ ..] => !rest.is_empty() && rest.iter().all(follows),
        _ => false,
    }
}

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

#[cfg(test)]
mod tests {
    use crate::lower::globals::{is_ptx_identifier, ptx_name};

    #[test]
    fn names_become_distinct_ptx_identifiers() {
        assert_eq!(ptx_name("print_mutex"), "print_mutex");
        for good in ["k", "K9", "_k", "$k", "%k", "a$b_c9", "__"] {
            assert!(is_ptx_identifier(good), "{good}");
        }
        for bad in ["", "_", "$", "9k", "a.b", "a-b", "k\u{16}x", "é", "a b"] {
            assert!(!is_ptx_identifier(bad), "{bad}");
        }
        assert_eq!(ptx_name("a.b"), "a$2eb");
        assert_eq!(ptx_name("a_2eb"), "a_2eb");
        assert_eq!(ptx_name("9lives"), "$39lives");
        assert_ne!(ptx_name("a-b"), ptx_name("a_b"));
    }
}
