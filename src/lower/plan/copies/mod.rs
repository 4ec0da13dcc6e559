//! How the tile loads that feed products reach them, and which loops are
//! pipelined: decided for the whole entry before emission.
//!
//! - [`direct`]: a B operand of `mma.sync` copied with `cp.async` straight
//!   into its product's buffer;
//! - [`stream`]: an operand its product reads slice by slice;
//! - [`pipeline`]: a loop of two loads and a product, pipelined with a ring
//!   of stages in shared memory;
//! - [`staged_a`]: a loop-invariant A operand written once into shared
//!   memory before its loop.
//!
//! Every other load goes through registers. What the plan cannot know yet
//! is the shared memory left where emission places a buffer: whether a
//! direct copy's or a staged A's buffer fits there (else the load goes
//! through registers, or A stays in them), and how many of a ring's stages
//! fit beside buffers claimed before its loop (the plan's where none are,
//! as in every kernel under tests/data). Emission settles those, and the
//! scratch map (`TILEIRAS_DEBUG_DUMP_PLAN`) shows what it placed.
pub mod direct;
pub mod k_slices;
pub mod load;
pub mod pipeline;
pub mod staged_a;
pub mod stream;
pub mod thread_copy;
pub mod tma;

use rustc_hash::FxHashMap as HashMap;

use crate::ir::{Module, OpId, Opcode};
use crate::lower::plan::Plan;

pub use direct::Direct;
pub use pipeline::{Pipeline, Ring, StageCopy};
pub use staged_a::StagedA;
pub use stream::Stream;

/// The copy mechanisms and pipelined loops of one entry.
#[derive(Clone, Debug, Default)]
pub struct Copies {
    /// Loads copied straight into their product's B buffer, by load op.
    pub direct: direct::Directs,
    /// Loads their products read slice by slice, by load op.
    pub streamed: HashMap<OpId, Stream>,
    /// Pipelined `for` loops, by loop op.
    pub pipelines: HashMap<OpId, Pipeline>,
    /// Loop-invariant A operands staged before the loops at the entry's
    /// top level, by loop op.
    pub staged_a: HashMap<OpId, Vec<StagedA>>,
}

impl Copies {
    /// Whether the B operand of product `id` is a load copied directly.
    pub fn copies_b(&self, id: OpId) -> bool {
        direct::copies_b(&self.direct, id)
    }
}

/// The copies of the entry whose body is `ops`, planned with the rest of
/// `plan` (its engines, layouts and facts).
pub fn plan(m: &Module, ops: &[OpId], plan: &Plan) -> Copies {
    let all: Vec<OpId> = m.walk_from(ops).collect();
    let mut copies = Copies::default();
    for &id in &all {
        match m.ops[id].opcode {
            Opcode::LoadViewTko => {
                if let Some(d) = direct::direct(m, plan, id) {
                    copies.direct.insert(id, d);
                }
            }
            Opcode::For => {
                if let Some(p) = pipeline::pipeline(m, plan, id) {
                    copies.pipelines.insert(id, p);
                }
            }
            _ => {}
        }
    }
    for &id in &all {
        let op = &m.ops[id];
        if matches!(op.opcode, Opcode::If | Opcode::For | Opcode::Loop) {
            for r in &op.regions {
                let Some(b) = r.blocks.first() else { continue };
                for load in direct::early_loads(m, &b.ops) {
                    if let Some(d) = copies.direct.get_mut(&load) {
                        d.early = true;
                    }
                }
            }
        }
        if op.opcode == Opcode::For {
            for (load, tma) in direct::prefetches(m, plan, &copies.direct, id) {
                if let Some(d) = copies.direct.get_mut(&load) {
                    d.prefetched = true;
                    d.tma = tma;
                }
            }
        }
    }
    for &id in ops {
        if m.ops[id].opcode == Opcode::For {
            let staged = staged_a::staged_a(m, plan, &copies.direct, id);
            if !staged.is_empty() {
                copies.staged_a.insert(id, staged);
            }
        }
    }
    for &id in &all {
        if m.ops[id].opcode == Opcode::LoadViewTko {
            if let Some(s) = stream::stream(m, plan, &copies.direct, id) {
                copies.streamed.insert(id, s);
            }
        }
    }
    copies
}

/// The dump's lines for the copies of `plan`, ordered by op.
pub fn dump(m: &Module, plan: &Plan, out: &mut String) {
    use std::fmt::Write;
    let copies = &plan.copies;
    let product = |id: OpId| {
        plan.products
            .iter()
            .position(|p| p.op == id)
            .map_or_else(|| "?".to_string(), |i| i.to_string())
    };
    let at = |id: OpId| {
        m.location(id)
            .map_or_else(|| "unknown location".to_string(), |l| l.to_string())
    };
    // Loops are numbered in op order, as two may share a location.
    let loops: Vec<OpId> = m
        .walk_from(m.ops[plan.entry].body_ops())
        .filter(|&id| matches!(m.ops[id].opcode, Opcode::For | Opcode::Loop))
        .collect();
    let a_loop = |id: OpId| {
        let n = loops.iter().position(|&l| l == id).map_or(0, |i| i + 1);
        format!("loop {n} at {}", at(id))
    };
    let mut ids: Vec<OpId> = copies
        .direct
        .keys()
        .chain(copies.streamed.keys())
        .chain(copies.pipelines.keys())
        .chain(copies.staged_a.keys())
        .copied()
        .collect();
    ids.sort();
    ids.dedup();
    for id in ids {
        if let Some(d) = copies.direct.get(&id) {
            let when = match (d.prefetched, d.early) {
                (true, _) => "; its first copy before its loop, each next one once read",
                (false, true) => "; issued at the start of its block",
                (false, false) => "",
            };
            match &d.tma {
                Some(c) => {
                    let m = &c.map;
                    let _ = writeln!(
                        out,
                        "  load at {}: B of product {}, copied straight to shared memory by TMA (map of argument {} (dims: arguments {:?}, strides: arguments {:?}), box {:?}, swizzle {:?}{}; {} box(es), {} bytes on the buffer's own mbarrier, issued by thread 0){when}",
                        at(id),
                        product(d.product),
                        m.base,
                        m.dims,
                        m.strides,
                        m.box_dims,
                        m.swizzle,
                        if c.transposed { ", transposed" } else { "" },
                        c.boxes.len(),
                        c.bytes
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "  load at {}: B of product {}, copied straight to shared memory (cp.async, {} elements a copy along tile dimension {}){when}",
                        at(id),
                        product(d.product),
                        d.chunk,
                        d.along
                    );
                }
            }
        }
        if let Some(s) = copies.streamed.get(&id) {
            let _ = writeln!(
                out,
                "  load at {}: operand of product {}, streamed slice by slice",
                at(id),
                product(s.product)
            );
        }
        if let Some(p) = copies.pipelines.get(&id) {
            let mut engine: String = match &p.ring {
                Ring::MmaSync { tma: Some(_), .. } => "mma.sync, TMA and mbarriers".into(),
                Ring::MmaSync { .. } => "mma.sync, cp.async groups".into(),
                Ring::Wgmma {
                    transposed: Some(_),
                    ..
                } => "wgmma, TMA and mbarriers, B transposed K-major by the threads".into(),
                Ring::Wgmma { tma: Some(_), .. } => "wgmma, TMA and mbarriers".into(),
                Ring::Wgmma { .. } => "wgmma, cp.async and mbarriers".into(),
            };
            let slices = match &p.ring {
                Ring::MmaSync { tma: Some(t), .. } => (t.slices, t.smem.0.k),
                Ring::Wgmma { slices, plan, .. } => (*slices, plan.mnk[2]),
                Ring::MmaSync { .. } => (1, 0),
            };
            if slices.0 > 1 {
                let _ = write!(engine, ", in {} K slices of {} a stage", slices.0, slices.1);
            }
            let _ = writeln!(
                out,
                "  {}: pipelined, product {} on {engine}, up to {} stages of {} bytes",
                a_loop(id),
                product(p.shape.mma),
                p.ring.stages(),
                p.ring.stage_bytes()
            );
            if let Some(t) = p.ring.tma() {
                for (name, c) in [("A", t.0), ("B", t.1)] {
                    let c = match c {
                        StageCopy::Tma(c) => c,
                        StageCopy::Threads(t) => {
                            let _ = writeln!(
                                out,
                                "    {name} by the threads: loaded into registers and stored into the stage in {} slice(s) of {} rows (not in 16-byte units, which TMA needs), then every thread arrives on the stage's full mbarrier",
                                t.shifts.len(),
                                t.rows
                            );
                            continue;
                        }
                    };
                    let d = &c.map;
                    let _ = writeln!(
                        out,
                        "    {name} by TMA: map of argument {} (dims: arguments {:?}, strides: arguments {:?}), {:?} elements{}, box {:?}, swizzle {:?}; {} box(es) a stage, {} bytes on the stage's full mbarrier (expect_tx), issued by thread 0",
                        d.base,
                        d.dims,
                        d.strides,
                        d.elem,
                        if d.tf32 { " rounded to tf32" } else { "" },
                        d.box_dims,
                        d.swizzle,
                        c.boxes.len(),
                        c.bytes
                    );
                }
            }
        }
        for a in copies.staged_a.get(&id).into_iter().flatten() {
            let form = match a.form {
                staged_a::Form::Rows { stride, .. } => format!("in rows of {stride} bytes"),
                staged_a::Form::Swizzled(_) => "swizzled K-major for wgmma".to_string(),
            };
            let _ = writeln!(
                out,
                "  {}: A of product {} staged before it, {form} ({} bytes), where shared memory allows",
                a_loop(id),
                product(a.product),
                a.form.bytes()
            );
        }
    }
}
