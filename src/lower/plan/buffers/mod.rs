//! The shared-memory buffers ops claim for their own work, planned with
//! their sizes: the layout conversions the plan sends through shared
//! memory ([`crate::lower::plan::conversions`]), the movement ops' tiles
//! ([`movement`]), the reductions' partial results across warps
//! ([`reduce`]), the scans' ([`scan`]), the atomics' old values shared
//! with replicas, the sizes a product may stage its own operands in (its
//! engine's K slices in one set or more, [`crate::lower::plan::staging`]),
//! the sizes a load copied straight into its product's B buffer may take
//! ([`crate::lower::plan::copies::direct::buffer_options`]), and what a
//! loop claims around its body ([`loops`]: its ring, staged A operands,
//! prefetched copies, split sums). Which of several sizes an op takes, by
//! the room left, and where every buffer goes, the plan's walk of the entry
//! says ([`crate::lower::plan::alloc::walk`]); emission claims each buffer
//! as the walk placed it (its op, what it holds, its size), else it is an
//! internal error. An `alloca` nested in a region claims its slot where
//! the entry starts, for no op.
pub mod loops;
pub mod movement;
pub mod reduce;
pub mod scan;

use std::fmt::Write;

use rustc_hash::FxHashSet as HashSet;

use crate::ir::{Module, OpId, Opcode, ValueId};
use crate::lower::analysis::values::value_tile;
use crate::lower::plan::conversions::{to_result_layout, How};
use crate::lower::plan::engines::tile_bytes;
use crate::lower::plan::layout::LinearLayout;
use crate::lower::plan::Plan;

/// What a buffer holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    /// An operand on its way to another layout (of this size where it fits
    /// the room left, else a window of it at a time).
    Conversion(ValueId),
    /// A tile a movement op writes and reads back rearranged.
    Tile,
    /// A reduction's partial results, one a warp group.
    Partials,
    /// A product's operands staged by itself: one size it may claim.
    Operands,
    /// A product's B operand copied straight into it by its load: one size
    /// it may take.
    CopiedB,
    /// A pipelined loop's ring of stages (or its stages' barriers): one
    /// size it may take.
    Ring,
    /// An A operand staged before its loop.
    StagedA,
    /// The partial results warp pairs sum through: one size it may take.
    SplitSum,
    /// The address of an `alloca`'s heap memory, handed from thread 0 to
    /// the others.
    Slot,
    /// A scan's totals of its warps, or its whole tile scanned line by
    /// line.
    Scan,
    /// The old values an atomic shares with the threads that hold replicas
    /// of its result.
    Replicas,
}

impl What {
    /// What it holds, in words, for the dump.
    pub fn describe(self) -> &'static str {
        match self {
            What::Conversion(_) => "an operand's layout conversion",
            What::Tile => "its tile rearranged",
            What::Partials => "partial results across warps",
            What::Operands => "its operands staged",
            What::CopiedB => "a B operand copied straight in",
            What::Ring => "its ring of stages",
            What::StagedA => "an A operand staged",
            What::SplitSum => "the sums of warp pairs",
            What::Slot => "the address of its heap memory",
            What::Scan => "a scan's lines or its warps' totals",
            What::Replicas => "old values shared with replicas",
        }
    }

    /// Whether the op claims it only where the room left allows, or one of
    /// several sizes listed for it by the room left.
    pub fn by_room(self) -> bool {
        !matches!(
            self,
            What::Tile
                | What::Partials
                | What::Scan
                | What::Replicas
                | What::Slot
                | What::Conversion(_)
        )
    }
}

/// One buffer an op claims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpBuffer {
    /// The op.
    pub op: OpId,
    /// What it holds.
    pub what: What,
    /// Its size.
    pub bytes: i64,
    /// Its alignment.
    pub align: i64,
}

/// The entry's planned op buffers.
#[derive(Clone, Debug, Default)]
pub struct Buffers {
    /// The buffers, in the order of the body.
    pub list: Vec<OpBuffer>,
    /// The ops all of whose buffers are listed (those of families the plan
    /// covers).
    pub whole: HashSet<OpId>,
}

impl Buffers {
    /// The buffers of op `op`, where the plan covers them all.
    pub fn of(&self, op: OpId) -> Option<impl Iterator<Item = &OpBuffer>> {
        self.whole
            .contains(&op)
            .then(|| self.list.iter().filter(move |b| b.op == op))
    }
}

/// Whether ops of `opcode` claim no buffer of their own (their operands'
/// conversions aside): the elementwise ops, reshapes and broadcasts, loads
/// and stores through pointers, and what ends a region.
fn claims_none(opcode: Opcode) -> bool {
    to_result_layout(opcode)
        || matches!(
            opcode,
            Opcode::Reshape
                | Opcode::Broadcast
                | Opcode::LoadPtrTko
                | Opcode::StorePtrTko
                | Opcode::Yield
                | Opcode::Continue
                | Opcode::Break
        )
}

/// The buffers product `id` may stage its own operands in: each K slice
/// its engine plans, in one set or up to the sets it wants (one of these
/// is claimed, by the room left, where no ring or direct copy holds its
/// operands).
fn product(id: OpId, plan: &Plan) -> Vec<OpBuffer> {
    let Some(staging) = plan.staging(id) else {
        return Vec::new();
    };
    let mut sizes: Vec<i64> = staging
        .slices
        .iter()
        .flat_map(|s| (1..=staging.sets).flat_map(move |n| staging.claims(s, n)))
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
        .into_iter()
        .map(|bytes| OpBuffer {
            op: id,
            what: What::Operands,
            bytes,
            align: staging.align.min(16),
        })
        .collect()
}

/// The buffer a load its product copies straight to shared memory claims
/// where it is issued (one of its sizes: rows padded or swizzled); none
/// for a load its product streams.
fn copied(m: &Module, id: OpId, plan: &Plan) -> Option<Vec<OpBuffer>> {
    if plan.copies.streamed.contains_key(&id) {
        return Some(Vec::new());
    }
    let d = plan.copies.direct.get(&id)?;
    let sizes = crate::lower::plan::copies::direct::buffer_options(m, plan, d);
    let buffer = |bytes| OpBuffer {
        op: id,
        what: What::CopiedB,
        bytes,
        align: 16,
    };
    Some(sizes.into_iter().map(buffer).collect())
}

/// The buffer of atomic `id` whose result some threads hold as replicas of
/// the one that did the atomic: the old values shared through it.
fn atomic(m: &Module, id: OpId, plan: &Plan) -> Option<Vec<OpBuffer>> {
    let res = *m.ops[id].results.first()?;
    let (shape, elem) = value_tile(m, res)?;
    let scalar = LinearLayout::default_scalar();
    let layout = plan.layouts.get(&res).map_or(&scalar, |l| &**l);
    if layout.replica_bits(plan.warps) == 0 {
        return Some(Vec::new());
    }
    Some(vec![OpBuffer {
        op: id,
        what: What::Replicas,
        bytes: tile_bytes(&shape, elem),
        align: 16,
    }])
}

/// The op buffers of the entry body `ops` under `plan` (its layouts and
/// conversions decided).
pub fn plan(m: &Module, ops: &[OpId], plan: &Plan) -> Buffers {
    let mut out = Buffers::default();
    for id in m.walk_from(ops) {
        let own = match m.ops[id].opcode {
            Opcode::Permute
            | Opcode::Cat
            | Opcode::Extract
            | Opcode::Insert
            | Opcode::Pack
            | Opcode::Unpack => movement::buffers(m, id, plan),
            Opcode::Reduce => reduce::buffers(m, id, plan),
            Opcode::Scan => scan::buffers(m, id, plan),
            Opcode::AtomicRMWTko | Opcode::AtomicCASTko => atomic(m, id, plan),
            Opcode::MmaF | Opcode::MmaI | Opcode::MmaFScaled => Some(product(id, plan)),
            o if claims_none(o) => Some(Vec::new()),
            Opcode::LoadViewTko | Opcode::PrintTko if plan.conversions.whole.contains(&id) => {
                Some(Vec::new())
            }
            Opcode::LoadViewTko => copied(m, id, plan),
            Opcode::For => Some(loops::buffers(m, id, plan)),
            // The slot thread 0 hands the heap address over in: where the
            // alloca stands at the entry's top level; one nested in a region
            // is allocated where the entry starts.
            Opcode::Alloca if ops.contains(&id) => Some(vec![OpBuffer {
                op: id,
                what: What::Slot,
                bytes: 8,
                align: 16,
            }]),
            Opcode::Alloca => Some(Vec::new()),
            _ => None,
        };
        let converted = plan.conversions.list.iter().filter(|c| c.op == id);
        let mut listed: Vec<OpBuffer> = converted
            .filter_map(|c| match c.how {
                How::Shared { bytes } => Some(OpBuffer {
                    op: id,
                    what: What::Conversion(c.value),
                    bytes,
                    align: 16,
                }),
                _ => None,
            })
            .collect();
        match own {
            Some(own) => {
                listed.extend(own);
                out.whole.insert(id);
            }
            None if listed.is_empty() => continue,
            None => {}
        }
        out.list.extend(listed);
    }
    out
}

/// The dump's lines: one for each op buffer other than a conversion's
/// (which [`crate::lower::plan::conversions::dump`] prints).
pub fn dump(m: &Module, plan: &Plan, s: &mut String) {
    for b in &plan.buffers.list {
        // The products' are their lines' "own operand buffers", the
        // conversions' their lines', the loops' their copies' lines.
        if b.what.by_room() || matches!(b.what, What::Conversion(_)) {
            continue;
        }
        let what = b.what.describe();
        let at = m
            .location(b.op)
            .map_or_else(|| "unknown location".to_string(), |l| l.to_string());
        let _ = writeln!(
            s,
            "  buffer of '{}' op at {at}: {what}, {} bytes, {}-byte aligned",
            m.ops[b.op].name(),
            b.bytes,
            b.align
        );
    }
}
