//! How each op is laid out in bytecode: the ordered fields after the opcode.
//! Generated once from the dialect's bytecode encodings; edit by hand.
use super::layout::{AttrKind, Cond, Layout, Step::*};
use super::Version;
use crate::ir::attr::EnumKind;
use crate::ir::Opcode;

const V13_2: Version = Version::new(13, 2, 0);
const V13_3: Version = Version::new(13, 3, 0);
const V13_4: Version = Version::new(13, 4, 0);
const V13_5: Version = Version::new(13, 5, 0);

/// The layout of `op`.
pub(crate) fn layout(op: Opcode) -> Layout {
    match op {
        Opcode::AbsF => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::AbsI => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::AddF => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Flags(None),
                Unit("flush_to_zero", 0),
                Attr(
                    "rounding_mode",
                    AttrKind::Enum(EnumKind::RoundingMode),
                    Cond::Always,
                ),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::AddI => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr(
                    "overflow",
                    AttrKind::Enum(EnumKind::IntegerOverflow),
                    Cond::Always,
                ),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::AndI => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("lhs"), Operand("rhs")],
        },
        Opcode::Assert => Layout {
            results: Some(0),
            steps: &[
                Attr("message", AttrKind::Str, Cond::Always),
                Operand("condition"),
            ],
        },
        Opcode::Assume => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr("predicate", AttrKind::Tagged, Cond::Always),
                Operand("value"),
            ],
        },
        Opcode::AtomicCASTko => Layout {
            results: Some(2),
            steps: &[
                Result("result_type"),
                Result("result_token_type"),
                Flags(None),
                Attr(
                    "memory_ordering_semantics",
                    AttrKind::Enum(EnumKind::MemoryOrdering),
                    Cond::Always,
                ),
                Attr(
                    "memory_scope",
                    AttrKind::Enum(EnumKind::MemoryScope),
                    Cond::Always,
                ),
                Operand("pointers"),
                Operand("cmp"),
                Operand("val"),
                OptOperand("mask", 0),
                OptOperand("token", 1),
            ],
        },
        Opcode::AtomicRMWTko => Layout {
            results: Some(2),
            steps: &[
                Result("result_type"),
                Result("result_token_type"),
                Flags(None),
                Attr(
                    "memory_ordering_semantics",
                    AttrKind::Enum(EnumKind::MemoryOrdering),
                    Cond::Always,
                ),
                Attr(
                    "memory_scope",
                    AttrKind::Enum(EnumKind::MemoryScope),
                    Cond::Always,
                ),
                Attr(
                    "mode",
                    AttrKind::Enum(EnumKind::AtomicRmwMode),
                    Cond::Always,
                ),
                Operand("pointers"),
                Operand("arg"),
                OptOperand("mask", 0),
                OptOperand("token", 1),
            ],
        },
        Opcode::Bitcast => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::Break => Layout {
            results: Some(0),
            steps: &[Results, Count, Unsized("operands")],
        },
        Opcode::Broadcast => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::Cat => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr("dim", AttrKind::Int, Cond::Always),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::Ceil => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::CmpF => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr(
                    "comparison_predicate",
                    AttrKind::Enum(EnumKind::ComparisonPredicate),
                    Cond::Always,
                ),
                Attr(
                    "comparison_ordering",
                    AttrKind::Enum(EnumKind::ComparisonOrdering),
                    Cond::Always,
                ),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::CmpI => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr(
                    "comparison_predicate",
                    AttrKind::Enum(EnumKind::ComparisonPredicate),
                    Cond::Always,
                ),
                Attr(
                    "signedness",
                    AttrKind::Enum(EnumKind::Signedness),
                    Cond::Always,
                ),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::Constant => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr("value", AttrKind::DenseElements, Cond::Always),
            ],
        },
        Opcode::Continue => Layout {
            results: Some(0),
            steps: &[Results, Count, Unsized("operands")],
        },
        Opcode::Cos => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::CosH => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::DivF => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Flags(None),
                Unit("flush_to_zero", 0),
                Attr(
                    "rounding_mode",
                    AttrKind::Enum(EnumKind::RoundingMode),
                    Cond::Always,
                ),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::DivI => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr(
                    "signedness",
                    AttrKind::Enum(EnumKind::Signedness),
                    Cond::Always,
                ),
                Attr(
                    "rounding",
                    AttrKind::Enum(EnumKind::RoundingMode),
                    Cond::Always,
                ),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::Entry => Layout {
            results: Some(0),
            steps: &[
                Flags(None),
                Attr("sym_name", AttrKind::Str, Cond::Always),
                Attr("function_type", AttrKind::Type, Cond::Always),
                Attr("arg_attrs", AttrKind::Array, Cond::Flag(0)),
                Attr("res_attrs", AttrKind::Array, Cond::Flag(1)),
                Attr(
                    "optimization_hints",
                    AttrKind::OptimizationHints,
                    Cond::Flag(2),
                ),
                Regions(1),
            ],
        },
        Opcode::Exp => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr(
                    "rounding_mode",
                    AttrKind::Enum(EnumKind::RoundingMode),
                    Cond::Since(V13_3),
                ),
                Operand("source"),
            ],
        },
        Opcode::Exp2 => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Flags(None),
                Unit("flush_to_zero", 0),
                Operand("source"),
            ],
        },
        Opcode::ExtI => Layout {
            results: Some(1),
            steps: &[
                Result("to_type"),
                Attr(
                    "signedness",
                    AttrKind::Enum(EnumKind::Signedness),
                    Cond::Always,
                ),
                Operand("from"),
            ],
        },
        Opcode::Extract => Layout {
            results: Some(1),
            steps: &[Results, Count, Operand("source"), Unsized("indices")],
        },
        Opcode::Floor => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::Fma => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Flags(None),
                Unit("flush_to_zero", 0),
                Attr(
                    "rounding_mode",
                    AttrKind::Enum(EnumKind::RoundingMode),
                    Cond::Always,
                ),
                Operand("lhs"),
                Operand("rhs"),
                Operand("acc"),
            ],
        },
        Opcode::For => Layout {
            results: None,
            steps: &[
                Results,
                Flags(Some(V13_2)),
                Unit("unsignedCmp", 0),
                Count,
                Operand("lowerBound"),
                Operand("upperBound"),
                Operand("step"),
                Unsized("initValues"),
                Regions(1),
            ],
        },
        Opcode::FToF => Layout {
            results: Some(1),
            steps: &[
                Result("to_type"),
                Attr(
                    "rounding_mode",
                    AttrKind::Enum(EnumKind::RoundingMode),
                    Cond::Always,
                ),
                Operand("from"),
            ],
        },
        Opcode::FToI => Layout {
            results: Some(1),
            steps: &[
                Result("to_type"),
                Flags(Some(V13_4)),
                Unit("saturating", 0),
                Attr(
                    "signedness",
                    AttrKind::Enum(EnumKind::Signedness),
                    Cond::Always,
                ),
                Attr(
                    "rounding_mode",
                    AttrKind::Enum(EnumKind::RoundingMode),
                    Cond::Always,
                ),
                Operand("from"),
            ],
        },
        Opcode::GetGlobal => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr("name", AttrKind::Str, Cond::Always),
            ],
        },
        Opcode::GetIndexSpaceShape => Layout {
            results: None,
            steps: &[Results, Operand("src")],
        },
        Opcode::GetNumTileBlocks => Layout {
            results: Some(3),
            steps: &[
                Result("gridSize_x_type"),
                Result("gridSize_y_type"),
                Result("gridSize_z_type"),
            ],
        },
        Opcode::GetTensorShape => Layout {
            results: None,
            steps: &[Results, Operand("src")],
        },
        Opcode::GetTileBlockId => Layout {
            results: Some(3),
            steps: &[
                Result("blockId_x_type"),
                Result("blockId_y_type"),
                Result("blockId_z_type"),
            ],
        },
        Opcode::Global => Layout {
            results: Some(0),
            steps: &[
                Flags(Some(V13_3)),
                Unit("constant", 0),
                Attr("sym_name", AttrKind::Str, Cond::Always),
                Attr("value", AttrKind::DenseElements, Cond::Always),
                Attr("alignment", AttrKind::Int, Cond::Always),
                Attr(
                    "symbol_visibility",
                    AttrKind::Enum(EnumKind::SymbolVisibility),
                    Cond::Since(V13_3),
                ),
            ],
        },
        Opcode::If => Layout {
            results: None,
            steps: &[Results, Operand("condition"), Regions(2)],
        },
        Opcode::IntToPtr => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::Iota => Layout {
            results: Some(1),
            steps: &[Result("result_type")],
        },
        Opcode::IToF => Layout {
            results: Some(1),
            steps: &[
                Result("to_type"),
                Attr(
                    "signedness",
                    AttrKind::Enum(EnumKind::Signedness),
                    Cond::Always,
                ),
                Attr(
                    "rounding_mode",
                    AttrKind::Enum(EnumKind::RoundingMode),
                    Cond::Always,
                ),
                Operand("from"),
            ],
        },
        Opcode::JoinTokens => Layout {
            results: Some(1),
            steps: &[Results, Count, Unsized("tokens")],
        },
        Opcode::LoadPtrTko => Layout {
            results: Some(2),
            steps: &[
                Result("result_type"),
                Result("result_token_type"),
                Flags(None),
                Attr(
                    "memory_ordering_semantics",
                    AttrKind::Enum(EnumKind::MemoryOrdering),
                    Cond::Always,
                ),
                Attr(
                    "memory_scope",
                    AttrKind::Enum(EnumKind::MemoryScope),
                    Cond::Flag(0),
                ),
                Attr(
                    "optimization_hints",
                    AttrKind::OptimizationHints,
                    Cond::Flag(1),
                ),
                Operand("source"),
                OptOperand("mask", 2),
                OptOperand("paddingValue", 3),
                OptOperand("token", 4),
            ],
        },
        Opcode::LoadViewTko => Layout {
            results: Some(2),
            steps: &[
                Results,
                Flags(None),
                Attr(
                    "memory_ordering_semantics",
                    AttrKind::Enum(EnumKind::MemoryOrdering),
                    Cond::Always,
                ),
                Attr(
                    "memory_scope",
                    AttrKind::Enum(EnumKind::MemoryScope),
                    Cond::Flag(0),
                ),
                Attr(
                    "optimization_hints",
                    AttrKind::OptimizationHints,
                    Cond::Flag(1),
                ),
                Attr("inbounds", AttrKind::DenseBool, Cond::Since(V13_4)),
                Operand("view"),
                Sized("index"),
                OptOperand("token", 2),
            ],
        },
        Opcode::Log => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::Log2 => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::Loop => Layout {
            results: None,
            steps: &[Results, Count, Unsized("initValues"), Regions(1)],
        },
        Opcode::MakePartitionView => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("tensor_view")],
        },
        Opcode::MakeTensorView => Layout {
            results: Some(1),
            steps: &[
                Results,
                Operand("base"),
                Sized("dynamicShape"),
                Sized("dynamicStrides"),
            ],
        },
        Opcode::MakeToken => Layout {
            results: Some(1),
            steps: &[Result("result_type")],
        },
        Opcode::MaxF => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Flags(None),
                Unit("propagate_nan", 0),
                Unit("flush_to_zero", 1),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::MaxI => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr(
                    "signedness",
                    AttrKind::Enum(EnumKind::Signedness),
                    Cond::Always,
                ),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::MinF => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Flags(None),
                Unit("propagate_nan", 0),
                Unit("flush_to_zero", 1),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::MinI => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr(
                    "signedness",
                    AttrKind::Enum(EnumKind::Signedness),
                    Cond::Always,
                ),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::MmaF => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Flags(Some(V13_3)),
                Unit("fast_acc", 0),
                Operand("lhs"),
                Operand("rhs"),
                Operand("acc"),
            ],
        },
        Opcode::MmaI => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr(
                    "signedness_lhs",
                    AttrKind::Enum(EnumKind::Signedness),
                    Cond::Always,
                ),
                Attr(
                    "signedness_rhs",
                    AttrKind::Enum(EnumKind::Signedness),
                    Cond::Always,
                ),
                Operand("lhs"),
                Operand("rhs"),
                Operand("acc"),
            ],
        },
        Opcode::Module => Layout {
            results: Some(0),
            steps: &[
                Flags(Some(V13_3)),
                Attr("sym_name", AttrKind::Str, Cond::Always),
                Attr("producer", AttrKind::Str, Cond::Flag(0)),
                Regions(1),
            ],
        },
        Opcode::MulF => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Flags(None),
                Unit("flush_to_zero", 0),
                Attr(
                    "rounding_mode",
                    AttrKind::Enum(EnumKind::RoundingMode),
                    Cond::Always,
                ),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::MulhiI => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("x"), Operand("y")],
        },
        Opcode::MulI => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr(
                    "overflow",
                    AttrKind::Enum(EnumKind::IntegerOverflow),
                    Cond::Always,
                ),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::NegF => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::NegI => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr(
                    "overflow",
                    AttrKind::Enum(EnumKind::IntegerOverflow),
                    Cond::Since(V13_2),
                ),
                Operand("source"),
            ],
        },
        Opcode::Offset => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("ptr"), Operand("offset")],
        },
        Opcode::OrI => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("lhs"), Operand("rhs")],
        },
        Opcode::Permute => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr("permutation", AttrKind::DenseI32, Cond::Always),
                Operand("source"),
            ],
        },
        Opcode::FPowF => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Operand("source"),
                Operand("exponent"),
            ],
        },
        Opcode::PrintTko => Layout {
            results: None,
            steps: &[
                Results,
                Flags(Some(V13_2)),
                Attr("str", AttrKind::Str, Cond::Always),
                Sized("args"),
                OptOperand("token", 0),
            ],
        },
        Opcode::PtrToInt => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::PtrToPtr => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::Reduce => Layout {
            results: None,
            steps: &[
                Results,
                Attr("dim", AttrKind::Int, Cond::Always),
                Attr("identities", AttrKind::Array, Cond::Always),
                Count,
                Unsized("operands"),
                Regions(1),
            ],
        },
        Opcode::RemF => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("lhs"), Operand("rhs")],
        },
        Opcode::RemI => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr(
                    "signedness",
                    AttrKind::Enum(EnumKind::Signedness),
                    Cond::Always,
                ),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::Reshape => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::Return => Layout {
            results: Some(0),
            steps: &[Results, Count, Unsized("operands")],
        },
        Opcode::Rsqrt => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Flags(None),
                Unit("flush_to_zero", 0),
                Operand("source"),
            ],
        },
        Opcode::Scan => Layout {
            results: None,
            steps: &[
                Results,
                Attr("dim", AttrKind::Int, Cond::Always),
                Attr("reverse", AttrKind::Bool, Cond::Always),
                Attr("identities", AttrKind::Array, Cond::Always),
                Count,
                Unsized("operands"),
                Regions(1),
            ],
        },
        Opcode::Select => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Operand("cond"),
                Operand("val_if_true"),
                Operand("val_if_false"),
            ],
        },
        Opcode::ShLI => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr(
                    "overflow",
                    AttrKind::Enum(EnumKind::IntegerOverflow),
                    Cond::Always,
                ),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::ShRI => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr(
                    "signedness",
                    AttrKind::Enum(EnumKind::Signedness),
                    Cond::Always,
                ),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::Sin => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::SinH => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::Sqrt => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Flags(None),
                Unit("flush_to_zero", 0),
                Attr(
                    "rounding_mode",
                    AttrKind::Enum(EnumKind::RoundingMode),
                    Cond::Always,
                ),
                Operand("source"),
            ],
        },
        Opcode::StorePtrTko => Layout {
            results: Some(1),
            steps: &[
                Result("result_token_type"),
                Flags(None),
                Attr(
                    "memory_ordering_semantics",
                    AttrKind::Enum(EnumKind::MemoryOrdering),
                    Cond::Always,
                ),
                Attr(
                    "memory_scope",
                    AttrKind::Enum(EnumKind::MemoryScope),
                    Cond::Flag(0),
                ),
                Attr(
                    "optimization_hints",
                    AttrKind::OptimizationHints,
                    Cond::Flag(1),
                ),
                Operand("destination"),
                Operand("value"),
                OptOperand("mask", 2),
                OptOperand("token", 3),
            ],
        },
        Opcode::StoreViewTko => Layout {
            results: Some(1),
            steps: &[
                Results,
                Flags(None),
                Attr(
                    "memory_ordering_semantics",
                    AttrKind::Enum(EnumKind::MemoryOrdering),
                    Cond::Always,
                ),
                Attr(
                    "memory_scope",
                    AttrKind::Enum(EnumKind::MemoryScope),
                    Cond::Flag(0),
                ),
                Attr(
                    "optimization_hints",
                    AttrKind::OptimizationHints,
                    Cond::Flag(1),
                ),
                Attr("inbounds", AttrKind::DenseBool, Cond::Since(V13_4)),
                Operand("tile"),
                Operand("view"),
                Sized("index"),
                OptOperand("token", 2),
            ],
        },
        Opcode::SubF => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Flags(None),
                Unit("flush_to_zero", 0),
                Attr(
                    "rounding_mode",
                    AttrKind::Enum(EnumKind::RoundingMode),
                    Cond::Always,
                ),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::SubI => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr(
                    "overflow",
                    AttrKind::Enum(EnumKind::IntegerOverflow),
                    Cond::Always,
                ),
                Operand("lhs"),
                Operand("rhs"),
            ],
        },
        Opcode::Tan => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::TanH => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Attr(
                    "rounding_mode",
                    AttrKind::Enum(EnumKind::RoundingMode),
                    Cond::Since(V13_2),
                ),
                Operand("source"),
            ],
        },
        Opcode::TruncI => Layout {
            results: Some(1),
            steps: &[
                Result("to_type"),
                Attr(
                    "overflow",
                    AttrKind::Enum(EnumKind::IntegerOverflow),
                    Cond::Always,
                ),
                Operand("from"),
            ],
        },
        Opcode::XOrI => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("lhs"), Operand("rhs")],
        },
        Opcode::Yield => Layout {
            results: Some(0),
            steps: &[Results, Count, Unsized("operands")],
        },
        Opcode::Atan2 => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("x"), Operand("y")],
        },
        Opcode::Pack => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::Unpack => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("source")],
        },
        Opcode::Alloca => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Flags(None),
                Unit("global", 0),
                Attr("num_elem", AttrKind::Int, Cond::Always),
                Attr("alignment", AttrKind::Int, Cond::Always),
            ],
        },
        Opcode::MmaFScaled => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Operand("lhs"),
                Operand("rhs"),
                Operand("acc"),
                Operand("lhs_scale"),
                Operand("rhs_scale"),
            ],
        },
        Opcode::MakeGatherScatterView => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("tensor_view")],
        },
        Opcode::MakeStridedView => Layout {
            results: Some(1),
            steps: &[Result("result_type"), Operand("tensor_view")],
        },
        Opcode::AtomicRedViewTko => Layout {
            results: Some(1),
            steps: &[
                Results,
                Flags(None),
                Attr(
                    "memory_ordering_semantics",
                    AttrKind::Enum(EnumKind::MemoryOrdering),
                    Cond::Always,
                ),
                Attr(
                    "memory_scope",
                    AttrKind::Enum(EnumKind::MemoryScope),
                    Cond::Always,
                ),
                Attr(
                    "mode",
                    AttrKind::Enum(EnumKind::AtomicRmwMode),
                    Cond::Always,
                ),
                // Found by experiment with tileirdisasm 13.5.
                Attr("inbounds", AttrKind::DenseBool, Cond::Since(V13_5)),
                Operand("view"),
                Sized("index"),
                Operand("value"),
                OptOperand("token", 0),
            ],
        },
        Opcode::Insert => Layout {
            results: Some(1),
            steps: &[
                Results,
                Count,
                Operand("source"),
                Operand("destination"),
                Unsized("indices"),
            ],
        },
        Opcode::GdcLaunchDependentsTko => Layout {
            results: Some(1),
            steps: &[Result("result_token_type"), Count, Unsized("token")],
        },
        Opcode::GdcWaitTko => Layout {
            results: Some(1),
            steps: &[Result("result_token_type"), Count, Unsized("token")],
        },
        Opcode::FPowI => Layout {
            results: Some(1),
            steps: &[
                Result("result_type"),
                Operand("source"),
                Operand("exponent"),
            ],
        },
        Opcode::MemoryFenceAliasTko => Layout {
            results: Some(1),
            steps: &[Result("result_token_type"), Operand("token")],
        },
    }
}
