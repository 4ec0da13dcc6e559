//! Tensor and partition views traced back to their defining ops: base
//! pointer, dynamic shape and stride operands, tile shape, dimension map,
//! padding, and what the facts prove about alignment.
use rustc_hash::FxHashMap as HashMap;

use crate::ir::{Module, OpId, Opcode, Padding, Type, ValueDef, ValueId, DYNAMIC};
use crate::lower::analysis::facts::Fact;
use crate::lower::analysis::values::{elem_of, Elem};

/// A dimension size or stride: static or an operand value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent {
    /// Known at compile time.
    Static(i64),
    /// Given by a scalar i32/i64 value.
    Dynamic(ValueId),
}

/// A tensor view and the partition over it.
#[derive(Clone, Debug)]
pub struct PartitionInfo {
    /// The base pointer value.
    pub base: ValueId,
    /// Element kind.
    pub elem: Elem,
    /// Tensor shape per dimension.
    pub shape: Vec<Extent>,
    /// Tensor strides per dimension (in elements).
    pub strides: Vec<Extent>,
    /// Tile shape per tile dimension.
    pub tile_shape: Vec<i64>,
    /// Elements between consecutive tile indices, per tile dimension (the
    /// tile shape for partition views, the traversal strides for strided
    /// views).
    pub steps: Vec<i64>,
    /// Tensor dimension of each tile dimension.
    pub dim_map: Vec<usize>,
    /// For a gather/scatter view, the dimension indexed per element by a
    /// tile of indices rather than by a tile index.
    pub sparse_dim: Option<usize>,
    /// Padding for out-of-bounds reads, if declared.
    pub padding: Option<Padding>,
}

/// The op defining `v`, if it is an op result.
pub fn def_op(m: &Module, v: ValueId) -> Option<OpId> {
    match m.values.try_get(v)?.def {
        ValueDef::Result { op, .. } => Some(op),
        ValueDef::BlockArg { .. } => None,
    }
}

/// Whether load or store `op` lets the compiler copy by TMA on `gpu`: its
/// `allow_tma` optimization hint for the target (keyed by its name, else
/// `default`), true where it says nothing.
pub fn allow_tma(m: &Module, op: OpId, gpu: crate::options::Gpu) -> bool {
    let Some(crate::ir::Attr::OptimizationHints(per_target)) = m.ops[op].attr("optimization_hints")
    else {
        return true;
    };
    let for_target = |key: &str| {
        per_target
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, d)| match d {
                crate::ir::Attr::Dictionary(d) => d.iter().find(|(k, _)| k == "allow_tma"),
                _ => None,
            })
            .map(|(_, v)| !matches!(v, crate::ir::Attr::Bool(false)))
    };
    for_target(gpu.name())
        .or_else(|| for_target("default"))
        .unwrap_or(true)
}

/// The index of the entry argument `v` is, looking through `assume` ops
/// (which only add facts to their first operand).
pub fn entry_arg(m: &Module, v: ValueId) -> Option<usize> {
    match m.values.try_get(v)?.def {
        ValueDef::BlockArg {
            op,
            region: 0,
            index,
        } if m.ops[op].opcode == Opcode::Entry => Some(index as usize),
        ValueDef::Result { op, .. } if m.ops[op].opcode == Opcode::Assume => {
            entry_arg(m, *m.ops[op].operands.first()?)
        }
        _ => None,
    }
}

/// Traces a partition- or strided-view value to its tiling and tensor view.
pub fn partition(m: &Module, pview: ValueId) -> Option<PartitionInfo> {
    let pop = &m.ops[def_op(m, pview)?];
    // A partition view steps by whole tiles; a strided view by its
    // traversal strides.
    let (tile_shape, dim_map, padding, steps) =
        match (pop.opcode, m.types.try_get(m.values[pview].ty)?) {
            (
                Opcode::MakePartitionView,
                Type::PartitionView {
                    tile_shape,
                    dim_map,
                    padding,
                    ..
                },
            ) => (tile_shape, dim_map, padding, tile_shape.clone()),
            (
                Opcode::MakeStridedView,
                Type::StridedView {
                    tile_shape,
                    traversal_strides,
                    dim_map,
                    padding,
                    ..
                },
            ) => (tile_shape, dim_map, padding, traversal_strides.clone()),
            (
                Opcode::MakeGatherScatterView,
                Type::GatherScatterView {
                    tile_shape,
                    padding,
                    ..
                },
            ) => {
                // Indexed by element coordinates on every dimension.
                const IDENTITY: &Vec<i32> = &Vec::new();
                (tile_shape, IDENTITY, padding, vec![1; tile_shape.len()])
            }
            _ => return None,
        };
    let tv = pop.operand("tensor_view")?;
    let top = &m.ops[def_op(m, tv)?];
    if top.opcode != Opcode::MakeTensorView {
        return None;
    }
    let Type::TensorView {
        element,
        shape,
        strides,
        ..
    } = m.types.try_get(m.values[tv].ty)?
    else {
        return None;
    };
    let mut dyn_shape = top.operand_group("dynamicShape").iter();
    let mut dyn_strides = top.operand_group("dynamicStrides").iter();
    let shape = shape
        .iter()
        .map(|&s| {
            if s == DYNAMIC {
                dyn_shape.next().map(|v| Extent::Dynamic(*v))
            } else {
                Some(Extent::Static(s))
            }
        })
        .collect::<Option<Vec<_>>>()?;
    let strides = strides
        .iter()
        .map(|&s| {
            if s == DYNAMIC {
                dyn_strides.next().map(|v| Extent::Dynamic(*v))
            } else {
                Some(Extent::Static(s))
            }
        })
        .collect::<Option<Vec<_>>>()?;
    let rank = tile_shape.len();
    let dim_map: Vec<usize> = if dim_map.len() == rank {
        dim_map.iter().map(|&d| d as usize).collect()
    } else {
        (0..rank).collect()
    };
    if dim_map.iter().any(|&d| d >= shape.len()) || shape.len() != rank {
        return None;
    }
    Some(PartitionInfo {
        base: top.operand("base")?,
        elem: elem_of(m, *element)?,
        shape,
        strides,
        tile_shape: tile_shape.iter().map(|&t| i64::from(t)).collect(),
        steps: steps.iter().map(|&t| i64::from(t)).collect(),
        sparse_dim: match m.types.try_get(m.values[pview].ty) {
            Some(Type::GatherScatterView { sparse_dim, .. }) => Some(*sparse_dim as usize),
            _ => None,
        },
        dim_map,
        padding: *padding,
    })
}

impl PartitionInfo {
    /// Elements per vector access along the fastest tile dimension that the
    /// facts prove aligned and never split by a bounds check (1: scalar):
    /// the widest power of two up to `max_bytes` that they prove.
    pub fn vector_width(&self, facts: &HashMap<ValueId, Fact>, max_bytes: u32) -> i64 {
        // i1 elements are stored as bytes.
        let bits = match self.elem.bits() {
            1 => 8,
            b => b,
        };
        if !(8..=64).contains(&bits) || self.tile_shape.is_empty() {
            return 1;
        }
        let ebytes = i64::from(bits / 8);
        // Up to four 32-bit registers per access: 8- and 16-bit elements
        // pack four or two to a word, so 16 or 8 of them fill 128 bits.
        let mut v = (i64::from(max_bytes) / ebytes).clamp(1, 16);
        while v > 1 && !self.proves_width(facts, v, ebytes) {
            v /= 2;
        }
        v
    }

    /// Whether accesses of `v` elements (of `ebytes` bytes) are aligned and
    /// never straddle the tensor's end along the fastest dimension.
    fn proves_width(&self, facts: &HashMap<ValueId, Fact>, v: i64, ebytes: i64) -> bool {
        let fact = |e: &Extent| match e {
            Extent::Static(s) => {
                crate::lower::analysis::facts::largest_pow2_dividing(s.unsigned_abs()) as i64
            }
            Extent::Dynamic(x) => facts.get(x).map_or(1, |f| f.divisor as i64),
        };
        let last = self.tile_shape.len() - 1;
        let d = self.dim_map[last];
        let contiguous = self.strides[d] == Extent::Static(1);
        let base_align = facts.get(&self.base).map_or(1, |f| f.divisor as i64);
        contiguous
            && self.tile_shape[last] % v == 0
            && self.steps[last] % v == 0
            && base_align % (v * ebytes) == 0
            && fact(&self.shape[d]) % v == 0
            && self
                .strides
                .iter()
                .enumerate()
                .all(|(k, s)| k == d || fact(s) % v == 0)
    }
}

/// The padding a view load gives out-of-bounds elements: the view's
/// declared one, else zero. Without a declared padding the values are left
/// open; NVIDIA's tileiras gives zero wherever the differential runner saw
/// them reach a result: its staged and async copies zero-fill (TMA on sm_90
/// and newer, `cp.async` with a source size on sm_80) and its register
/// loads of matrix operands start from zero. (Its sm_80 sums over such
/// loads add a stale register instead: undefined, and not matched.) Real
/// kernels rely on zero: flash attention multiplies the padded rows of V
/// by zero probabilities.
pub fn load_padding(declared: Option<Padding>) -> Padding {
    declared.unwrap_or(Padding::Zero)
}
