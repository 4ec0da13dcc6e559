//! TileIR types. Types live in the module's type arena and are referred to
//! by [`TypeId`]; the arena index equals the bytecode type-table index.
use super::arena::Handle;

/// A handle to a [`Type`] in [`super::Module::types`].
pub type TypeId = Handle<Type>;

/// Scalar element kinds (integers, floats, token).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// `i1`
    I1,
    /// `i4` (since 13.3)
    I4,
    /// `i8`
    I8,
    /// `i16`
    I16,
    /// `i32`
    I32,
    /// `i64`
    I64,
    /// `f16`
    F16,
    /// `bf16`
    BF16,
    /// `f32`
    F32,
    /// `tf32`
    TF32,
    /// `f64`
    F64,
    /// `f8E4M3FN`
    F8E4M3FN,
    /// `f8E5M2`
    F8E5M2,
    /// `f8E8M0FNU` (since 13.2)
    F8E8M0FNU,
    /// `f4E2M1FN` (since 13.3)
    F4E2M1FN,
    /// `f8E5M3FNU` (since 13.4)
    F8E5M3FNU,
}

impl Scalar {
    /// The MLIR spelling (`f32`, `i1`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Scalar::I1 => "i1",
            Scalar::I4 => "i4",
            Scalar::I8 => "i8",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::F16 => "f16",
            Scalar::BF16 => "bf16",
            Scalar::F32 => "f32",
            Scalar::TF32 => "tf32",
            Scalar::F64 => "f64",
            Scalar::F8E4M3FN => "f8E4M3FN",
            Scalar::F8E5M2 => "f8E5M2",
            Scalar::F8E8M0FNU => "f8E8M0FNU",
            Scalar::F4E2M1FN => "f4E2M1FN",
            Scalar::F8E5M3FNU => "f8E5M3FNU",
        }
    }

    /// Bit width of one element.
    pub fn bit_width(self) -> u32 {
        match self {
            Scalar::I1 => 1,
            Scalar::I4 | Scalar::F4E2M1FN => 4,
            Scalar::I8
            | Scalar::F8E4M3FN
            | Scalar::F8E5M2
            | Scalar::F8E8M0FNU
            | Scalar::F8E5M3FNU => 8,
            Scalar::I16 | Scalar::F16 | Scalar::BF16 => 16,
            Scalar::TF32 => 19,
            Scalar::I32 | Scalar::F32 => 32,
            Scalar::I64 | Scalar::F64 => 64,
        }
    }

    /// Whether this is an integer kind.
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            Scalar::I1 | Scalar::I4 | Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64
        )
    }

    /// Whether this is a floating-point kind.
    pub fn is_float(self) -> bool {
        !self.is_integer()
    }
}

/// Padding value of a view (`padding_value = zero`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Padding {
    /// `zero`
    Zero,
    /// `neg_zero`
    NegZero,
    /// `nan`
    Nan,
    /// `pos_inf`
    PosInf,
    /// `neg_inf`
    NegInf,
}

impl Padding {
    /// Decodes the bytecode enum value.
    pub fn from_u64(v: u64) -> Option<Self> {
        Some(match v {
            0 => Padding::Zero,
            1 => Padding::NegZero,
            2 => Padding::Nan,
            3 => Padding::PosInf,
            4 => Padding::NegInf,
            _ => return None,
        })
    }

    /// The MLIR keyword.
    pub fn name(self) -> &'static str {
        match self {
            Padding::Zero => "zero",
            Padding::NegZero => "neg_zero",
            Padding::Nan => "nan",
            Padding::PosInf => "pos_inf",
            Padding::NegInf => "neg_inf",
        }
    }
}

/// A TileIR type. Dynamic dimensions and strides are [`DYNAMIC`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// A scalar element type (only valid as an element or inside `tile<>`).
    Scalar(Scalar),
    /// `token`
    Token,
    /// `ptr<pointee>`; `ptr_attr` is the 13.4+ pointer attribute byte.
    Pointer {
        /// Pointee type.
        pointee: TypeId,
        /// Optional pointer attribute (13.4+).
        ptr_attr: Option<u8>,
    },
    /// `tile<SHAPExELEM>`; an empty shape is a 0-d tile.
    Tile {
        /// Element type (scalar or pointer).
        element: TypeId,
        /// Dimensions.
        shape: Vec<i64>,
    },
    /// `tensor_view<SHAPExELEM, strides=[...]>`
    TensorView {
        /// Element type.
        element: TypeId,
        /// Dimensions (`DYNAMIC` for `?`).
        shape: Vec<i64>,
        /// Strides (`DYNAMIC` for `?`).
        strides: Vec<i64>,
        /// Optional pointer attribute (13.4+).
        ptr_attr: Option<u8>,
    },
    /// `partition_view<tile=(...), tensor_view<...>>`
    PartitionView {
        /// Tile shape.
        tile_shape: Vec<i32>,
        /// The tensor-view type partitioned.
        tensor_view: TypeId,
        /// Dimension map.
        dim_map: Vec<i32>,
        /// Padding value, if any.
        padding: Option<Padding>,
    },
    /// `gather_scatter_view<...>` (13.3+)
    GatherScatterView {
        /// Tile shape.
        tile_shape: Vec<i32>,
        /// The tensor-view type.
        tensor_view: TypeId,
        /// The sparse dimension.
        sparse_dim: u64,
        /// Padding value, if any.
        padding: Option<Padding>,
    },
    /// `strided_view<...>` (13.3+)
    StridedView {
        /// Tile shape.
        tile_shape: Vec<i32>,
        /// Traversal strides.
        traversal_strides: Vec<i32>,
        /// The tensor-view type.
        tensor_view: TypeId,
        /// Dimension map.
        dim_map: Vec<i32>,
        /// Padding value, if any.
        padding: Option<Padding>,
    },
    /// A function type `(inputs) -> (results)`.
    Function {
        /// Parameter types.
        inputs: Vec<TypeId>,
        /// Result types.
        results: Vec<TypeId>,
    },
}

/// The marker for a dynamic dimension or stride (`?`), as in MLIR.
///
/// cbindgen:ignore
pub const DYNAMIC: i64 = i64::MIN;
