//! The engines that compute matrix multiplies, as the plan sees them: which
//! engine takes each product ([`engine`]: `wgmma` on sm_90a, [`wgmma`];
//! `mma.sync` on sm_80 and newer, [`mma_sync`]; FMAs on the CUDA cores,
//! [`fma`], for everything else), the warps an entry takes for them
//! ([`entry_warps`]), and the layouts each engine wants for its
//! accumulator and operands. Chained products (attention,
//! [`crate::lower::analysis::chains`]) go to `mma.sync` on every target:
//! their A operands are already fragments in registers there. Each
//! engine's own plan fixes the accumulator's layout, which layout
//! assignment seeds before anything else so loop-carried accumulators
//! stay in registers. Emission of each engine lives in
//! [`crate::lower::emit::ops`].
pub mod fma;
pub mod mma_sync;
pub mod wgmma;

use crate::ir::{Module, OpId, Opcode, Scalar};
use crate::lower::analysis::chains::is_mma;
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::plan::layout::LinearLayout;
use crate::lower::plan::target::Target;

/// The element types of the A and B operands the engine multiplies for op
/// `id`: the operands' own, or bf16 for the dequantized operands of
/// `mmaf_scaled`.
pub fn operand_elems(m: &Module, id: OpId) -> Option<(Scalar, Scalar)> {
    let op = &m.ops[id];
    if op.opcode == Opcode::MmaFScaled {
        return Some((Scalar::BF16, Scalar::BF16));
    }
    let elem = |name: &str| match value_tile(m, op.operand(name)?)? {
        (_, Elem::Num(s)) => Some(s),
        _ => None,
    };
    Some((elem("lhs")?, elem("rhs")?))
}

/// What each engine's own plan tells layout assignment and the plan's
/// dump. An engine is a file here with its plan type implementing this, a
/// variant of [`Engine`] and its place in [`engine`]'s order; its emission
/// is a file under [`crate::lower::emit::ops`].
pub trait EnginePlan {
    /// The accumulator (and result) layout it computes in, if it has one.
    fn acc_layout(&self) -> Option<LinearLayout>;
    /// Layouts it would like the A and B operands of product `id` in (in
    /// an entry of `warps` warps), where it has a wish.
    fn operand_layouts(&self, m: &Module, id: OpId, warps: u32) -> [Option<LinearLayout>; 2];
    /// Its decisions, in one line of stable text.
    fn describe(&self) -> String;
    /// The shared memory product `o.id` takes where it stages its own
    /// operands (where no pipeline ring or direct copy holds them), if it
    /// stages them.
    fn staging(&self, o: &Operands) -> Option<Staging>;
}

/// Bytes per scratch buffer slot of an element of kind `e`.
pub fn slot_bytes(e: Elem) -> i64 {
    match e.bits() {
        1 => 4,
        b if b > 32 => 8,
        0..=8 => 1,
        9..=16 => 2,
        _ => 4,
    }
}

/// The bytes of a buffer of `shape` elements of `elem`, each in its
/// [`slot_bytes`], saturating.
pub fn tile_bytes(shape: &[i64], elem: Elem) -> i64 {
    shape
        .iter()
        .fold(slot_bytes(elem), |n, &d| n.saturating_mul(d))
}

/// Registers a thread may give one slice of a product's streamed operands.
pub const SLICE_WORDS: i64 = 24;

/// What the plan knows of one product's operands when its engine sizes
/// the buffers it stages them in.
pub struct Operands<'a> {
    /// The module.
    pub m: &'a Module,
    /// The product.
    pub id: OpId,
    /// The target, with its shared-memory gates.
    pub target: Target,
    /// Warps per tile block.
    pub warps: u32,
    /// The layouts of A, B and the result, where the plan gives them.
    pub layouts: [Option<&'a LinearLayout>; 3],
    /// Whether A and B are loads read slice by slice
    /// ([`crate::lower::plan::copies::stream`]).
    pub streamed: [bool; 2],
}

impl Operands<'_> {
    /// Registers a thread of the tile block gives slice `ks` of K of the
    /// streamed ones of A and B (none for an operand in registers).
    pub fn slice_words(&self, ks: i64) -> i64 {
        let op = &self.m.ops[self.id];
        let threads = i64::from(self.warps) * 32;
        let words = |name: &str, streamed: bool, kdim_from_end: usize| {
            let Some((shape, elem)) = op
                .operand(name)
                .filter(|_| streamed)
                .and_then(|v| value_tile(self.m, v))
            else {
                return 0;
            };
            let kdim = shape[shape.len() - kdim_from_end];
            let whole: i64 = shape.iter().product();
            let bytes = i64::from(elem.bits().max(8) / 8);
            (whole / kdim * ks * bytes + 4 * threads - 1) / (4 * threads)
        };
        words("lhs", self.streamed[0], 1) + words("rhs", self.streamed[1], 2)
    }
}

/// The buffers a product stages its operands in, as its engine plans
/// them: the K slices it may stage at a time, longest first, each with the
/// bytes one set of its buffers takes; emission takes the first whose
/// buffers fit the shared memory left where it places them, and as many
/// sets (up to `sets`) as fit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Staging {
    /// The K slices and the bytes of one set of buffers for each, in the
    /// engine's order of preference.
    pub slices: Vec<Slice>,
    /// Sets of buffers wanted: two where the next slice (or the product's
    /// next run) is written while the other set is read.
    pub sets: u32,
    /// Whether A stays in registers (it is already in the engine's fragment
    /// order), so only B is staged.
    pub a_in_registers: bool,
    /// Whether the buffers' rows are swizzled rather than padded.
    pub swizzle: bool,
    /// The alignment, in bytes, each buffer of a set starts at.
    pub align: i64,
    /// Whether every set lies in one region claimed at once, `align` bytes
    /// more for its alignment (wgmma's), rather than a buffer an operand
    /// and set.
    pub one_region: bool,
}

/// The shared memory left where a product's buffers go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Room {
    /// Bytes free above the scratch in use (from the next 16-byte
    /// boundary).
    pub above: i64,
    /// The largest free bytes anywhere, over dead buffers included.
    pub anywhere: i64,
    /// The top of the scratch in use.
    pub top: i64,
}

/// One K slice a product may stage its operands in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slice {
    /// Elements of K staged at a time.
    pub k: i64,
    /// Bytes one set of buffers takes for it.
    pub bytes: i64,
    /// The bytes of each buffer of one set, in the order they are claimed
    /// (A's then B's; 0 for a buffer not claimed), where each is claimed on
    /// its own (see [`Staging::one_region`]).
    pub buffers: [i64; 2],
}

impl Staging {
    /// The bytes of each buffer claimed to stage `slice` in `sets` sets, in
    /// claim order.
    pub fn claims(&self, slice: &Slice, sets: u32) -> Vec<i64> {
        if self.one_region {
            return vec![slice.bytes * i64::from(sets) + self.align];
        }
        (0..sets)
            .flat_map(|_| slice.buffers)
            .filter(|&b| b > 0)
            .collect()
    }

    /// The slice and the number of sets product `engine` (of K `kk`)
    /// stages its operands in, given the shared memory left where its
    /// buffers go (`room`); `None` when not even its shortest slice fits.
    /// On `mma.sync` the first slice whose set fits the staging budget and
    /// the room above the scratch in use, else the room over dead buffers,
    /// and two sets where the plan wants them, K is sliced and they fit; on
    /// FMAs the first slice that fits, one set; on `wgmma` its one slice,
    /// and two sets where wanted and they fit above the scratch in use.
    pub fn choose(&self, engine: &Engine, kk: i64, room: Room) -> Option<(Slice, u32)> {
        let first = |budget: i64, room: i64| {
            let within = budget.min(room);
            self.slices
                .iter()
                .find(|s| s.bytes <= within)
                .map(|s| (*s, within))
        };
        let (slice, within) = match engine {
            Engine::Wgmma(_) => {
                let set = *self.slices.first()?;
                let left = crate::lower::plan::target::MAX_SHARED_BYTES - room.top;
                let two = self.sets > 1 && 2 * set.bytes + self.align + 16 <= left;
                return Some((set, if two { 2 } else { 1 }));
            }
            Engine::MmaSync(_) => first(mma_sync::STAGE_BUDGET, room.above)
                .or_else(|| first(mma_sync::STAGE_BUDGET, room.anywhere))?,
            Engine::Fma => {
                let slice =
                    first(i64::MAX, room.above).or_else(|| first(i64::MAX, room.anywhere))?;
                return Some((slice.0, 1));
            }
        };
        let two = self.sets > 1 && slice.k < kk && 2 * slice.bytes <= within;
        Some((slice, if two { 2 } else { 1 }))
    }

    /// One line of stable text: `A and B in padded rows, K slices of 64
    /// (36864 bytes a set) or 32 (18432), the longest that fits; up to 2
    /// sets, 16-byte aligned`.
    pub fn describe(&self) -> String {
        let a = if self.a_in_registers {
            "B (A in registers)"
        } else {
            "A and B"
        };
        let rows = if self.swizzle { "swizzled" } else { "padded" };
        let slices: Vec<String> = self
            .slices
            .iter()
            .enumerate()
            .map(|(i, s)| match i {
                0 => format!("{} ({} bytes a set)", s.k, s.bytes),
                _ => format!("{} ({})", s.k, s.bytes),
            })
            .collect();
        let slices = match slices.split_last() {
            None => "no K slice within the stage budget".to_string(),
            Some((only, [])) => format!("K {only}"),
            Some((last, rest)) => format!(
                "K slices of {} or {last}, the longest that fits",
                rest.join(", ")
            ),
        };
        let sets = match self.sets {
            1 => "one set".to_string(),
            n => format!("up to {n} sets"),
        };
        format!(
            "{a} in {rows} rows, {slices}; {sets}, {}-byte aligned",
            self.align
        )
    }
}

/// The engine chosen for one matrix multiply.
#[derive(Clone, Debug)]
pub enum Engine {
    /// Warpgroup MMA (sm_90a).
    Wgmma(wgmma::Plan),
    /// Warp-level `mma.sync`.
    MmaSync(mma_sync::Plan),
    /// FMAs on the CUDA cores.
    Fma,
}

/// The engine for the matrix multiply `id` in an entry of `warps` warps.
pub fn engine(m: &Module, id: OpId, target: Target, warps: u32) -> Engine {
    // Chained products (attention) multiply from registers on mma.sync,
    // whose A fragments their warps already hold.
    let chained = || {
        crate::lower::analysis::chains::chained(m, id)
            && mma_sync::plan(m, id, target, warps)
                .is_some_and(|p| p.grid.n == 1 || p.split.is_some())
    };
    if let Some(p) = wgmma::plan(m, id, target, warps).filter(|_| !chained()) {
        return Engine::Wgmma(p);
    }
    if let Some(p) = mma_sync::plan(m, id, target, warps) {
        return Engine::MmaSync(p);
    }
    Engine::Fma
}

impl Engine {
    /// The engine's own plan.
    pub fn plan(&self) -> &dyn EnginePlan {
        match self {
            Engine::Wgmma(p) => p,
            Engine::MmaSync(p) => p,
            Engine::Fma => &fma::Plan,
        }
    }
}

/// The accumulator (and result) layout `engine` needs, if it needs one.
pub fn acc_layout(engine: &Engine) -> Option<LinearLayout> {
    engine.plan().acc_layout()
}

/// Layouts `engine` would like the A and B operands of op `id` in, where
/// it has a wish.
pub fn operand_layouts(
    m: &Module,
    id: OpId,
    engine: &Engine,
    warps: u32,
) -> [Option<LinearLayout>; 2] {
    engine.plan().operand_layouts(m, id, warps)
}

/// The warps per tile block an entry whose body is `ops` wants: the most
/// any of its matrix multiplies' engines asks for, else `default`; then,
/// unless a chained product fixes them, doubled (up to eight) while its
/// tiles would need more than [`NEED_REGS`] registers a thread
/// ([`crate::lower::analysis::register_need`]) and every product keeps its engine.
pub fn entry_warps(m: &Module, ops: &[OpId], target: Target, default: u32) -> u32 {
    let products = products(m, ops);
    let mut warps = products
        .iter()
        .filter_map(|&id| {
            wgmma::preferred_warps(m, id, target)
                .filter(|_| !crate::lower::analysis::chains::chained(m, id))
                .or_else(|| mma_sync::preferred_warps(m, id, target))
        })
        .fold(default, u32::max);
    // A chain's warps own whole rows: its count stands.
    if products
        .iter()
        .any(|&id| crate::lower::analysis::chains::chained(m, id))
    {
        return warps;
    }
    // More warps while the tiles' registers need them, as long as every
    // product keeps its engine.
    let need = crate::lower::analysis::register_need::peak_words(m, ops);
    let kinds = |w: u32| -> Vec<u8> {
        products
            .iter()
            .map(|&id| match engine(m, id, target, w) {
                Engine::Wgmma(_) => 0,
                Engine::MmaSync(_) => 1,
                Engine::Fma => 2,
            })
            .collect()
    };
    while warps < MAX_NEED_WARPS
        && need / (u64::from(warps) * 32) > NEED_REGS
        && kinds(warps * 2) == kinds(warps)
    {
        warps *= 2;
    }
    warps
}

/// Registers a thread's tiles may need at once before an entry takes more
/// warps.
const NEED_REGS: u64 = 192;
/// The most warps an entry takes for its tiles' registers.
const MAX_NEED_WARPS: u32 = 8;

/// Registers per thread (of `warps` warps) that the accumulators of the
/// matrix multiplies among `ops` and their regions hold, all together.
pub fn accumulator_registers(m: &Module, ops: &[OpId], warps: u32) -> u32 {
    let threads = u64::from(warps.max(1)) * 32;
    let words: u64 = products(m, ops)
        .into_iter()
        .filter_map(|id| value_tile(m, *m.ops[id].results.first()?))
        .map(|(shape, elem)| {
            let elems: u64 = shape.iter().map(|&d| d.max(1) as u64).product();
            elems * u64::from(elem.bits().max(32) / 32)
        })
        .sum();
    u32::try_from(words.div_ceil(threads)).unwrap_or(u32::MAX)
}

/// The K extents a `k`-long reduction may be staged in, longest first:
/// all of `k`, then its power-of-two slices down to `min`.
pub fn k_slices(k: i64, min: i64) -> impl Iterator<Item = i64> {
    let slices = (0..k.max(1).trailing_zeros())
        .rev()
        .map(|b| 1i64 << b)
        .filter(move |&ks| ks >= min);
    std::iter::once(k).chain(slices)
}

/// The matrix multiplies among `ops` and in their regions, in body order.
pub fn products(m: &Module, ops: &[OpId]) -> Vec<OpId> {
    let mut found = Vec::new();
    for &id in ops {
        let op = &m.ops[id];
        if is_mma(op.opcode) {
            found.push(id);
        }
        for r in &op.regions {
            for b in &r.blocks {
                found.extend(products(m, &b.ops));
            }
        }
    }
    found
}

/// One matrix multiply and the engine chosen for it.
#[derive(Clone, Debug)]
pub struct Product {
    /// The `mmaf`, `mmai` or `mmaf_scaled` op.
    pub op: OpId,
    /// Its engine, with that engine's plan.
    pub engine: Engine,
    /// Whether it is part of a chain (attention's `S = Q·Kᵀ`, `O = P·V`,
    /// [`crate::lower::analysis::chains`]).
    pub chained: bool,
    /// The buffers it stages its own operands in, where it does
    /// ([`crate::lower::plan::staging`]).
    pub staging: Option<Staging>,
}

/// The engine of product `op` among `products`; ops that are not one of
/// them have none.
pub fn engine_of(products: &[Product], op: OpId) -> Option<&Engine> {
    products.iter().find(|p| p.op == op).map(|p| &p.engine)
}
