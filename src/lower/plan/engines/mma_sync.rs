//! The `mma.sync` engine's plan (warp-level tensor cores, sm_80 and
//! newer): which products it takes, the instruction kind, how the warps
//! split the accumulator, whether K is staged in slices, and the layouts
//! of its accumulator and operands. Emission:
//! [`crate::lower::emit::ops::mma_sync`].
use super::k_slices;
use crate::ir::{Module, OpId, Opcode, Scalar};
use crate::lower::analysis::chains::Split;
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::plan::layout::mma_sync::{acc_layout, WarpGrid};
use crate::lower::plan::layout::{Blocked, LinearLayout};
use crate::lower::plan::target::Target;
use crate::options::Gpu;

/// The most accumulator registers per thread a plan may use.
const MAX_ACC_REGS: i64 = 128;

/// The operand element kind of an `mma.sync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// f16 or bf16 operands (m16n8k16).
    Half,
    /// tf32 operands (m16n8k8).
    Tf32,
    /// 8-bit integer or float operands (m16n8k32).
    Byte,
    /// f64 operands and accumulator (m8n8k4).
    F64,
}

impl Kind {
    /// Instruction K.
    pub fn k(self) -> i64 {
        match self {
            Kind::Half => 16,
            Kind::Tf32 => 8,
            Kind::Byte => 32,
            Kind::F64 => 4,
        }
    }

    /// Instruction M.
    pub fn m(self) -> i64 {
        if self == Kind::F64 {
            8
        } else {
            16
        }
    }

    /// Accumulator registers per instruction tile.
    pub fn c_regs(self) -> usize {
        if self == Kind::F64 {
            2
        } else {
            4
        }
    }

    /// Bytes per element.
    pub fn bytes(self) -> i64 {
        match self {
            Kind::Half => 2,
            Kind::Tf32 => 4,
            Kind::Byte => 1,
            Kind::F64 => 8,
        }
    }
}

/// How one matrix multiply maps onto `mma.sync` instructions.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The accumulator's layout.
    pub acc: LinearLayout,
    /// How warps split the accumulator.
    pub grid: WarpGrid,
    /// Operand kind.
    pub kind: Kind,
    /// Accumulator element type.
    pub acc_elem: Scalar,
    /// Whether the operands are too large to stage whole, so that their K
    /// extent is staged in slices.
    pub sliced: bool,
    /// The product's part in a chain split over warp pairs: its warps
    /// beyond `grid.m x grid.n` then split the columns (already in `grid`)
    /// or K, rather than replicate the tile.
    pub split: Option<Split>,
    /// The product's K extent.
    pub k: i64,
}

impl Plan {
    /// How many parts the warps split K into (two for [`Split::K`]).
    pub fn k_parts(&self) -> i64 {
        if self.split == Some(Split::K) {
            2
        } else {
            1
        }
    }

    /// Whether the warps hold A as fragments in registers.
    fn a_in_registers(&self) -> bool {
        a_in_registers(self.kind, self.grid, self.split)
    }
}

impl super::EnginePlan for Plan {
    fn acc_layout(&self) -> Option<LinearLayout> {
        Some(self.acc.clone())
    }

    fn operand_layouts(&self, m: &Module, id: OpId, warps: u32) -> [Option<LinearLayout>; 2] {
        operand_layouts(m, id, self, warps)
    }

    fn staging(&self, o: &super::Operands) -> Option<super::Staging> {
        let shape = &self.acc.shape;
        let rank = shape.len();
        let batch = if rank == 3 { shape[0] } else { 1 };
        let (mm, nn) = (shape[rank - 2], shape[rank - 1]);
        let [a, b, _] = o.layouts;
        // A already in fragment order stays in registers (a dequantized A
        // is made in its own layout).
        let a_in_registers = !o.streamed[0]
            && o.m.ops[o.id].opcode != Opcode::MmaFScaled
            && a.is_some_and(|a| a_fragment_layout(self, &a.shape).is_some_and(|f| f == *a));
        // A layout whose bases overlap is written element by element
        // through the general staging path, which knows no swizzle: such
        // operands keep the padded rows.
        let disjoint = |streamed: bool, l: Option<&LinearLayout>| {
            streamed || l.map_or(true, crate::lower::plan::layout::disjoint)
        };
        let swizzle =
            o.target.always_swizzle && disjoint(o.streamed[0], a) && disjoint(o.streamed[1], b);
        let staged_m = if a_in_registers { 0 } else { mm };
        // Operands too large for the budget are staged one K slice at a
        // time; streamed ones a slice within the registers a thread may
        // give it. Warps splitting K each read their part of one slice of
        // the whole K.
        let parts = self.k_parts();
        let slices = k_slices(self.k, self.kind.k())
            .filter(|&ks| parts == 1 || ks == self.k)
            .filter(|&ks| {
                parts > 1 || o.slice_words(ks) <= super::SLICE_WORDS || ks == self.kind.k()
            })
            .map(|k| {
                let [a, b] = staged_buffers(self.kind, batch, (staged_m, nn), k, swizzle);
                super::Slice {
                    k,
                    bytes: ((a + 15) & !15) + b,
                    buffers: [a, b],
                }
            })
            .filter(|s| s.bytes <= STAGE_BUDGET)
            .collect();
        // Streamed slices alternate between two sets of buffers where
        // they fit.
        let sets = if o.slice_words(self.k) > 0 { 2 } else { 1 };
        Some(super::Staging {
            slices,
            sets,
            a_in_registers,
            swizzle,
            align: 16,
            one_region: false,
        })
    }

    fn describe(&self) -> String {
        let mut s = format!(
            "mma.sync {:?} (m{}n8k{}), warps {}x{} of {}, accumulator {}, K {}",
            self.kind,
            self.kind.m(),
            self.kind.k(),
            self.grid.m,
            self.grid.n,
            self.grid.total,
            self.acc_elem.name(),
            self.k
        );
        if self.sliced {
            s.push_str(", K staged in slices");
        }
        if let Some(split) = self.split {
            s.push_str(&format!(", chain split over warp pairs by {split:?}"));
        }
        s
    }
}

/// Whether warps over `grid` hold A as fragments in registers: 16-bit
/// operands, warps owning whole rows or splitting a chain.
fn a_in_registers(kind: Kind, grid: WarpGrid, split: Option<Split>) -> bool {
    kind == Kind::Half && (grid.n == 1 || split.is_some())
}

/// The operand kind of element types `a`, `b` with accumulator `c`, if
/// `mma.sync` computes it on `target`.
fn kind_of(opcode: Opcode, a: Scalar, b: Scalar, c: Scalar, target: Target) -> Option<Kind> {
    let cap = target.gpu.capability();
    if cap < 80 {
        return None;
    }
    let f8 = |s: Scalar| matches!(s, Scalar::F8E4M3FN | Scalar::F8E5M2);
    match (opcode, a, b, c) {
        (Opcode::MmaF, Scalar::F16, Scalar::F16, Scalar::F32 | Scalar::F16)
        | (Opcode::MmaF, Scalar::BF16, Scalar::BF16, Scalar::F32) => Some(Kind::Half),
        (Opcode::MmaF, Scalar::TF32, Scalar::TF32, Scalar::F32) => Some(Kind::Tf32),
        (Opcode::MmaI, Scalar::I8, Scalar::I8, Scalar::I32) => Some(Kind::Byte),
        // sm_120's f64 mma.sync is a long emulation: FMAs are faster there.
        (Opcode::MmaF, Scalar::F64, Scalar::F64, Scalar::F64) if cap < 120 => Some(Kind::F64),
        (Opcode::MmaF, x, y, Scalar::F32 | Scalar::F16) if f8(x) && f8(y) && cap >= 89 => {
            Some(Kind::Byte)
        }
        _ => None,
    }
}

/// The `[batch,] M x N` result shape and operand kind of op `id`, if
/// `mma.sync` computes it on `target`.
fn shape_kind(m: &Module, id: OpId, target: Target) -> Option<(Vec<i64>, i64, Kind, Scalar)> {
    let op = &m.ops[id];
    if !crate::lower::analysis::chains::is_mma(op.opcode) {
        return None;
    }
    let (a, b, res) = (op.operand("lhs")?, op.operand("rhs")?, *op.results.first()?);
    let (ashape, _) = value_tile(m, a)?;
    let (bshape, _) = value_tile(m, b)?;
    let (cshape, Elem::Num(ce)) = value_tile(m, res)? else {
        return None;
    };
    let (ae, be) = crate::lower::plan::engines::operand_elems(m, id)?;
    // `mmaf_scaled` multiplies its dequantized operands as an `mmaf`.
    let opcode = if op.opcode == Opcode::MmaI {
        Opcode::MmaI
    } else {
        Opcode::MmaF
    };
    let kind = kind_of(opcode, ae, be, ce, target)?;
    let rank = cshape.len();
    if !(rank == 2 || rank == 3) || ashape.len() != rank || bshape.len() != rank {
        return None;
    }
    let (mm, nn, kk) = (cshape[rank - 2], cshape[rank - 1], ashape[rank - 1]);
    let pow2 = |x: i64| x > 0 && x & (x - 1) == 0;
    if mm % kind.m() != 0
        || nn % 8 != 0
        || kk % kind.k() != 0
        || !pow2(mm)
        || !pow2(nn)
        || !pow2(kk)
    {
        return None;
    }
    if rank == 3 && !pow2(cshape[0]) {
        return None;
    }
    Some((cshape, kk, kind, ce))
}

/// The warps per tile block this engine wants for op `id`, if it applies:
/// eight for tiles of 128 x 128 and more (as NVIDIA's tileiras), else four;
/// for a chained product ([`crate::lower::analysis::chains`]), one per m16 row tile,
/// four to eight.
pub fn preferred_warps(m: &Module, id: OpId, target: Target) -> Option<u32> {
    let (shape, _, kind, _) = shape_kind(m, id, target)?;
    let rank = shape.len();
    // A chain's warps own whole rows: as many as there are m16 tiles, or
    // two for each where the chain is split over warp pairs.
    if kind == Kind::Half {
        if let Some(w) = crate::lower::analysis::chains::split_warps(m, id) {
            return Some(w);
        }
    }
    if kind == Kind::Half && crate::lower::analysis::chains::chained(m, id) {
        return Some((shape[rank - 2] / 16).clamp(4, 8) as u32);
    }
    let least = if shape[rank - 2] * shape[rank - 1] >= 128 * 128 {
        8
    } else {
        4
    };
    // More warps when the accumulator needs their registers.
    let batch: i64 = shape[..rank - 2].iter().product();
    let elems = batch * shape[rank - 2] * shape[rank - 1];
    Some(
        [least, 16]
            .into_iter()
            .find(|&w| elems / (32 * w) <= MAX_ACC_REGS)
            .unwrap_or(least) as u32,
    )
}

/// The plan for op `id` in an entry of `warps` warps, if this engine applies.
pub fn plan(m: &Module, id: OpId, target: Target, warps: u32) -> Option<Plan> {
    let (shape, k, kind, acc_elem) = shape_kind(m, id, target)?;
    let rank = shape.len();
    let (mm, nn) = (shape[rank - 2], shape[rank - 1]);
    let w = i64::from(warps);
    let split = (kind == Kind::Half && rank == 2 && w == 2 * mm / 16)
        .then(|| crate::lower::analysis::chains::split(m, id))
        .flatten();
    let grid = match split {
        Some(Split::Columns) => WarpGrid {
            m: mm / 16,
            n: 2,
            total: w,
        },
        Some(Split::K) => WarpGrid {
            m: mm / 16,
            n: 1,
            total: w,
        },
        None if kind == Kind::Half
            && mm / kind.m() >= w
            && crate::lower::analysis::chains::chained(m, id) =>
        {
            WarpGrid::rows(w)
        }
        None => WarpGrid::for_tile(mm, nn, w),
    };
    let batch = if rank == 3 { shape[0] } else { 1 };
    if batch * mm * nn / (32 * grid.m * grid.n) > MAX_ACC_REGS {
        return None;
    }
    // Rows-owning warps multiply 16-bit A from registers: only B is staged.
    let staged_m = if a_in_registers(kind, grid, split) {
        0
    } else {
        mm
    };
    let ks = k_slices(k, kind.k())
        .find(|&ks| plan_bytes(kind, batch, staged_m, nn, ks) <= STAGE_BUDGET)?;
    Some(Plan {
        acc: acc_layout(&shape, grid, kind.m()),
        grid,
        kind,
        acc_elem,
        sliced: ks < k,
        split,
        k,
    })
}

/// Layouts for A and B: A in registers as fragments ([`a_fragment_layout`])
/// when the warps own whole rows of 16-bit products; when the plan stages
/// K in slices, lanes along the last dimension as by default, but warps
/// along M (A) and N (B) before K, so that the bits of K that pick a slice
/// lie in registers and each slice's stores need no per-thread guard.
pub fn operand_layouts(m: &Module, id: OpId, plan: &Plan, warps: u32) -> [Option<LinearLayout>; 2] {
    let op = &m.ops[id];
    let (Some((ashape, _)), Some((bshape, _))) = (
        op.operand("lhs").and_then(|v| value_tile(m, v)),
        op.operand("rhs").and_then(|v| value_tile(m, v)),
    ) else {
        return [None, None];
    };
    let rank = ashape.len();
    let w = i64::from(warps);
    let sliced = |shape: &[i64], d: usize| {
        plan.sliced
            .then(|| Blocked::for_reduction(shape, w, 1, d).to_linear(shape))
    };
    [
        a_fragment_layout(plan, &ashape).or_else(|| sliced(&ashape, rank - 1)),
        sliced(&bshape, rank - 2),
    ]
}

/// The layout in which an A operand of shape `ashape` is the plan's A
/// fragments, register for register: m16n8k16 only, with warps owning
/// whole rows. Two n8 accumulator tiles are one k16 A fragment, so this is
/// the accumulator layout of a product of A's shape on the same warps
/// (those splitting K holding their part of its columns; those splitting
/// N the same fragments).
pub fn a_fragment_layout(plan: &Plan, ashape: &[i64]) -> Option<LinearLayout> {
    let grid = WarpGrid {
        m: plan.grid.m,
        n: plan.k_parts(),
        total: plan.grid.total,
    };
    (plan.a_in_registers() && ashape.len() >= 2).then(|| acc_layout(ashape, grid, 16))
}

/// Elements of padding at the end of each A and B buffer row: 16 bytes (32
/// for tf32 B, whose columns are read per lane), none when swizzled.
pub fn row_pads(kind: Kind, swizzle: bool) -> (i64, i64) {
    let eb = kind.bytes();
    match (swizzle, kind) {
        (true, _) => (0, 0),
        (false, Kind::Tf32) => (16 / eb, 8),
        (false, _) => (16 / eb, 16 / eb),
    }
}

/// Bytes the buffers of `[batch,] M x K` and `K x N` operands of `kind`
/// staged `ks` elements of K at a time take (`mm` 0: A is not staged), in
/// padded rows or, with `swizzle`, swizzled ones.
pub fn staged_bytes(kind: Kind, batch: i64, (mm, nn): (i64, i64), ks: i64, swizzle: bool) -> i64 {
    let [a, b] = staged_buffers(kind, batch, (mm, nn), ks, swizzle);
    ((a + 15) & !15) + b
}

/// The bytes of the A and B buffers of [`staged_bytes`] (A's 0 where `mm`
/// is).
pub fn staged_buffers(
    kind: Kind,
    batch: i64,
    (mm, nn): (i64, i64),
    ks: i64,
    swizzle: bool,
) -> [i64; 2] {
    let eb = kind.bytes();
    let (apad, bpad) = row_pads(kind, swizzle);
    let a = batch * mm * (ks + apad) * eb;
    let b = match kind {
        Kind::Byte => batch * nn * (ks + bpad) * eb,
        _ => batch * ks * (nn + bpad) * eb,
    };
    [a, b]
}

/// Shared memory the staged operands may take, in bytes.
pub const STAGE_BUDGET: i64 = 96 * 1024;

/// A conservative bound on the bytes operands staged `ks` elements of K
/// at a time take.
fn plan_bytes(kind: Kind, batch: i64, mm: i64, nn: i64, ks: i64) -> i64 {
    batch * ((mm + nn) * (ks + 16) * kind.bytes() + (ks * 8 * kind.bytes()))
}

/// What each warpgroup of a product on `wgmma` takes of it: whole warpgroups
/// split M (64 rows each), N (warp pairs splitting the columns of a split
/// chain) or K (the second product of a split chain).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupPart {
    /// Warpgroup `g` takes rows `64 g ..` over every column.
    Rows,
    /// One warpgroup of rows; warpgroup `g` takes columns `g N / 2 ..`.
    Columns,
    /// One warpgroup of rows; warpgroup `g` takes K `g K / 2 ..`, its
    /// partial sums added after the loop.
    K,
}

/// Columns each warpgroup's `wgmma` instructions span under `plan`.
pub fn group_n(plan: &Plan) -> i64 {
    plan.grid.tile_n(plan.acc.shape[plan.acc.shape.len() - 1])
}

/// Whether product `id`, planned on `mma.sync` with `plan` in an entry of
/// `warps` warps, multiplies on sm_90a's `wgmma` instead when its B
/// operand is copied straight into a buffer ([`wgmma_part`] says how).
pub fn on_wgmma(m: &Module, id: OpId, plan: &Plan, target: Target, warps: u32) -> bool {
    wgmma_part(m, id, plan, target, warps).is_some()
}

/// How the warpgroups of product `id` (planned on `mma.sync` with `plan`
/// in an entry of `warps` warps) split it on sm_90a's `wgmma`, if it
/// multiplies there: f16/bf16 operands, an f32 accumulator, and every
/// warp owning 16 whole rows, four consecutive warps a warpgroup, so that
/// the plan's accumulator and A fragments are `wgmma`'s
/// ([`crate::lower::emit::ops::mma_sync_wgmma`]).
pub fn wgmma_part(
    m: &Module,
    id: OpId,
    plan: &Plan,
    target: Target,
    warps: u32,
) -> Option<GroupPart> {
    let shape = &plan.acc.shape;
    let warps = i64::from(warps);
    let half = matches!(
        super::operand_elems(m, id),
        Some((a, b)) if a == b && matches!(a, Scalar::F16 | Scalar::BF16)
    );
    let suited = target.gpu == Gpu::Sm90
        && half
        && plan.kind == Kind::Half
        && plan.acc_elem == Scalar::F32
        && !plan.sliced
        && shape.len() == 2
        && warps % 4 == 0
        && shape[0] == 16 * plan.grid.m;
    if !suited {
        return None;
    }
    let n = group_n(plan);
    // A warpgroup's part of a split starts on a whole block of every
    // swizzled layout (64 elements).
    let part = match plan.split {
        None if plan.grid.n == 1 && plan.grid.m == warps => GroupPart::Rows,
        Some(Split::Columns) if plan.grid.m == 4 && plan.grid.n == 2 && n % 64 == 0 => {
            GroupPart::Columns
        }
        Some(Split::K) if plan.grid.m == 4 && plan.grid.n == 1 && plan.k % 128 == 0 => GroupPart::K,
        _ => return None,
    };
    let every_warp = warps == plan.grid.m * plan.grid.n * plan.k_parts();
    (every_warp && n % 8 == 0 && n <= 256).then_some(part)
}
