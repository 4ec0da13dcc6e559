//! Attributes: op attributes, constants, enums and optimization hints.
use super::types::TypeId;

/// The enum attribute kinds of the dialect; values are the bytecode bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EnumKind {
    /// `and`, `or`, `xor`, `add`, `addf`, `max`, `min`, `umax`, `umin`, `xchg`
    AtomicRmwMode,
    /// `unordered`, `ordered`
    ComparisonOrdering,
    /// `equal`, `not_equal`, `less_than`, ...
    ComparisonPredicate,
    /// `none`, `no_signed_wrap`, `no_unsigned_wrap`, `no_wrap`
    IntegerOverflow,
    /// `weak`, `relaxed`, `acquire`, `release`, `acq_rel`
    MemoryOrdering,
    /// `tl_blk`, `device`, `sys`
    MemoryScope,
    /// `nearest_even`, `zero`, `negative_inf`, `positive_inf`, `approx`, `full`, ...
    RoundingMode,
    /// `unsigned`, `signed`
    Signedness,
    /// `public`, `private`
    SymbolVisibility,
    /// `zero`, `neg_zero`, `nan`, `pos_inf`, `neg_inf`
    PaddingValue,
}

impl EnumKind {
    /// The keywords of this enum, indexed by bytecode value.
    pub fn keywords(self) -> &'static [&'static str] {
        match self {
            EnumKind::AtomicRmwMode => &[
                "and", "or", "xor", "add", "addf", "max", "min", "umax", "umin", "xchg",
            ],
            EnumKind::ComparisonOrdering => &["unordered", "ordered"],
            EnumKind::ComparisonPredicate => &[
                "equal",
                "not_equal",
                "less_than",
                "less_than_or_equal",
                "greater_than",
                "greater_than_or_equal",
            ],
            EnumKind::IntegerOverflow => &["none", "no_signed_wrap", "no_unsigned_wrap", "no_wrap"],
            EnumKind::MemoryOrdering => &["weak", "relaxed", "acquire", "release", "acq_rel"],
            EnumKind::MemoryScope => &["tl_blk", "device", "sys"],
            EnumKind::RoundingMode => &[
                "nearest_even",
                "zero",
                "negative_inf",
                "positive_inf",
                "approx",
                "full",
                "nearest_int_to_zero",
                "nearest_away",
            ],
            EnumKind::Signedness => &["unsigned", "signed"],
            EnumKind::SymbolVisibility => &["public", "private"],
            EnumKind::PaddingValue => &["zero", "neg_zero", "nan", "pos_inf", "neg_inf"],
        }
    }

    /// The keyword for `value`, if valid.
    pub fn keyword(self, value: u8) -> Option<&'static str> {
        self.keywords().get(value as usize).copied()
    }
}

/// An attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum Attr {
    /// A unit attribute (a set flag bit, e.g. `flush_to_zero`).
    Unit,
    /// A boolean.
    Bool(bool),
    /// A plain integer (op integer attributes without a type).
    Int(u64),
    /// A typed integer (`1 : i32`); `value` holds the raw bits.
    Integer {
        /// Integer type.
        ty: TypeId,
        /// Raw bits, zero-extended.
        value: u64,
    },
    /// A typed float; `bits` is the IEEE (or narrow-format) bit pattern.
    Float {
        /// Float type.
        ty: TypeId,
        /// Raw bits.
        bits: u64,
    },
    /// A type attribute.
    Type(TypeId),
    /// A string.
    String(String),
    /// An array of attributes.
    Array(Vec<Attr>),
    /// Dense elements: raw little-endian bytes of a constant, with its type.
    Dense {
        /// The shaped type (tile) the data fills.
        ty: TypeId,
        /// Raw bytes as stored in the constant section.
        data: Vec<u8>,
    },
    /// `dense<i32>` array attribute.
    DenseI32(Vec<i32>),
    /// `dense<i1>` array attribute.
    DenseBool(Vec<bool>),
    /// An enum value.
    Enum(EnumKind, u8),
    /// `div_by<divisor[, every N along M]>`
    DivBy {
        /// Divisor.
        divisor: u64,
        /// `every` parameter.
        every: Option<i64>,
        /// `along` parameter.
        along: Option<i64>,
    },
    /// `same_elements<[...]>`
    SameElements(Vec<i64>),
    /// `bounded<lb, ub>`
    Bounded {
        /// Lower bound (`?` when absent).
        lb: Option<i64>,
        /// Upper bound.
        ub: Option<i64>,
    },
    /// A dictionary of named attributes, in order.
    Dictionary(Vec<(String, Attr)>),
    /// Optimization hints: per-architecture dictionaries.
    OptimizationHints(Vec<(String, Attr)>),
}
