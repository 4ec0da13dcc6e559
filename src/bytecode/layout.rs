//! The vocabulary of the op layout table ([`super::table`]): the fields an
//! op's bytecode holds after its opcode, in order.
use super::Version;
use crate::ir::attr::EnumKind;

/// When a field is present.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cond {
    /// Always.
    Always,
    /// From this bytecode version on.
    Since(Version),
    /// When this bit of the op's flags word is set.
    Flag(u8),
}

/// How an attribute is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AttrKind {
    /// One byte, an enum value.
    Enum(EnumKind),
    /// A varint.
    Int,
    /// A string-table index.
    Str,
    /// A type-table index.
    Type,
    /// A varint count of tagged attributes.
    Array,
    /// One tagged attribute.
    Tagged,
    /// A constant-table index; the type is the op's first result type.
    DenseElements,
    /// A varint count of little-endian `i32`s.
    DenseI32,
    /// A varint count of bytes, each a bool.
    DenseBool,
    /// An untagged dictionary of per-architecture dictionaries.
    OptimizationHints,
    /// One byte.
    Bool,
}

/// One field of an op's encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// One result type.
    Result(&'static str),
    /// A varint count of result types, then the types.
    Results,
    /// The flags varint; present from the given version (always if `None`).
    Flags(Option<Version>),
    /// A unit attribute set by a flag bit.
    Unit(&'static str, u8),
    /// An attribute.
    Attr(&'static str, AttrKind, Cond),
    /// One operand.
    Operand(&'static str),
    /// An operand present when the flag bit is set.
    OptOperand(&'static str, u8),
    /// A varint count, then that many operands.
    Sized(&'static str),
    /// A varint total operand count for the following fixed and unsized operands.
    Count,
    /// The operands left over from [`Step::Count`].
    Unsized(&'static str),
    /// A varint region count (must equal the number given), then the regions.
    Regions(u8),
}

/// An op's layout.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    /// The fixed result count, when the op has one.
    #[allow(dead_code)]
    pub results: Option<u32>,
    /// The fields in order.
    pub steps: &'static [Step],
}
