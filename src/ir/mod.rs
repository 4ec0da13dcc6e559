//! The in-memory TileIR: modules, ops, types and attributes in arenas.
//!
//! Entities live in [`Arena`]s inside the [`Module`] and refer to each other
//! by typed [`Handle`]s: [`TypeId`], [`ValueId`], [`OpId`], [`DebugId`].
//! [`Module::walk`] visits every op in order; [`Op::name`] gives the MLIR
//! name (`cuda_tile.addf`); [`Module::location`] the op's source location.
//! [`print::print_module`] renders the module as NVIDIA's `tileirdisasm` does.
pub mod arena;
pub mod attr;
pub mod debug;
mod float;
pub mod module;
pub mod op;
pub mod opcode;
pub mod print;
pub mod types;

pub use arena::{Arena, Handle};
pub use attr::{Attr, EnumKind};
pub use debug::{DebugAttr, DebugId};
pub use module::{Module, Version, Walk};
pub use op::{Block, Op, OpId, Region, Segment, Value, ValueDef, ValueId};
pub use opcode::Opcode;
pub use types::{Padding, Scalar, Type, TypeId, DYNAMIC};

/// First of the 256 code points (`U+10FF00..=U+10FFFF`, private use) that
/// stand for bytes of invalid UTF-8 in strings read from bytecode, so that the
/// printer can write them back as the original bytes (`\XX`).
pub const RAW_BYTE_BASE: u32 = 0x10_FF00;

/// Decodes bytecode string bytes: valid UTF-8 as is, each byte of an invalid
/// sequence as `RAW_BYTE_BASE + byte`.
pub fn bytes_to_string(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                let n = e.error_len().unwrap_or(bad.len()).max(1);
                for &b in &bad[..n] {
                    out.push(char::from_u32(RAW_BYTE_BASE + u32::from(b)).unwrap_or('\u{fffd}'));
                }
                rest = &bad[n..];
            }
        }
    }
}

/// The original bytes of a string made by [`bytes_to_string`].
pub fn string_to_bytes(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        let u = c as u32;
        if (RAW_BYTE_BASE..=RAW_BYTE_BASE + 0xff).contains(&u) {
            out.push((u - RAW_BYTE_BASE) as u8);
        } else {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    out
}
