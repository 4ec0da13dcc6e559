//! Kernel entries and module-scope declarations of the PTX model.
use super::directives::LaunchDirectives;
use super::inst::{Inst, RegClass, Ty};

/// The type of a kernel parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamTy {
    /// `.u64 .ptr .global .align 1`: a global pointer.
    GlobalPtr,
    /// A plain scalar of this type (`.u32`, `.f32`, ...).
    Scalar(Ty),
    /// `.hidden .param .align 64 .b8 NAME[128]`: a tensor map the host
    /// callbacks write at launch ([`Entry::tensor_maps`]); callers pass
    /// nothing for it.
    TensorMap,
}

/// A kernel parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name (`kernel_param_0`).
    pub name: String,
    /// Its type.
    pub ty: ParamTy,
}

/// One line of a function body.
// Lines are built once per instruction and written in order: boxing the
// instructions would only add an allocation to each.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// An instruction.
    Inst(Box<Inst>),
    /// A label `$L__BB0_<n>:`.
    Label(u32),
    /// `.loc file line col`: the source position of the lines that follow.
    Loc(super::inst::SrcLoc),
}

/// A `.visible .entry`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Symbol name.
    pub name: String,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// Threads per block the lowering built the body for.
    pub reqntid: u32,
    /// Launch directives printed in the header (filled by
    /// `lower::launch::plan`, already fitted to the target).
    pub launch: Box<LaunchDirectives>,
    /// Highest register number used per class (declaration sizes).
    pub reg_counts: Vec<(RegClass, u32)>,
    /// Bytes of the entry's shared-memory scratch array ([`SHARED_SYMBOL`]).
    pub shared_bytes: u32,
    /// Registers per thread that the accumulators of the entry's matrix
    /// multiplies hold (0 without any): what the `occupancy` hint must
    /// leave room for.
    pub acc_regs: u32,
    /// Bytes of the entry's local argument buffer for `vprintf`
    /// ([`LOCAL_SYMBOL`]); 0 when nothing prints.
    pub local_bytes: u32,
    /// The `vprintf` format strings the body names: symbol and bytes
    /// (NUL-terminated), emitted at module scope.
    pub strings: Vec<(String, Vec<u8>)>,
    /// The body.
    pub body: Vec<Line>,
    /// Where the function is declared in the source (`-g` builds).
    pub decl: Option<super::inst::SrcLoc>,
    /// What the host callbacks write into each [`ParamTy::TensorMap`]
    /// parameter, in parameter order.
    pub tensor_maps: Vec<crate::host::MapDecl>,
}

/// The name of an entry's local `vprintf` argument buffer.
pub const LOCAL_SYMBOL: &str = "__tile_printf_args";

/// The name of an entry's shared-memory scratch array.
pub const SHARED_SYMBOL: &str = "__tile_smem";

/// A module-scope `.global` byte array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalBytes {
    /// Symbol name.
    pub name: String,
    /// Alignment in bytes.
    pub align: u32,
    /// Size in bytes.
    pub size: u32,
    /// `.visible` linkage.
    pub visible: bool,
    /// Initial bytes (`size` of them), else zero-initialised.
    pub init: Option<Vec<u8>>,
}
