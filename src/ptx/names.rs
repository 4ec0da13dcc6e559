//! PTX spellings of symbols: which names are PTX identifiers, and a
//! one-to-one escape for those that are not.

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

#[cfg(test)]
mod tests {
    use crate::ptx::names::{is_ptx_identifier, ptx_name};

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
