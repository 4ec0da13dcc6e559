//! The plan of one entry: the decisions emission reads, made once, before
//! any instruction exists.
//!
//! [`plan_entry`] runs the analyses over the tile IR (value facts, register
//! need, product chains), picks the warps of the tile block, the engine of
//! every matrix multiply ([`Engine`], with that engine's own plan), and the
//! layout of every tile value, how the loads that feed products reach
//! them ([`copies`]), and the buffers each product stages its own operands
//! in ([`staging`]), the operands ops want in another layout
//! ([`conversions`]), and the buffers ops claim for their own work
//! ([`buffers`]), and where each goes ([`alloc`]: the one allocator,
//! walking the entry in emission's order, choosing each size an op takes by
//! the room left). Emission ([`crate::lower::emit::entry`],
//! [`crate::lower::emit::ops`]) reads the plan and does not recompute any
//! of it; it still asks the room left itself, by the plan's rules and the
//! same allocator run beside it, and fails where a claim is not the one
//! the plan placed.
//!
//! [`Plan::dump`] prints a plan as stable text: `TILEIRAS_DEBUG_DUMP_PLAN`
//! writes it next to the output (`<output>.dump.plan`), and tests assert
//! decisions on it.
pub mod alloc;
pub mod assign;
pub mod assign_forward;
pub mod buffers;
pub mod conversions;
pub mod copies;
mod dump;
pub mod engines;
pub mod launch;
pub mod layout;
pub mod staging;
pub mod target;

use rustc_hash::FxHashMap as HashMap;

use crate::ir::{Attr, Block, Module, OpId, Opcode, ValueId};
use crate::lower::analysis::facts::{analyze, Fact};
use crate::lower::error::LowerError;
use crate::lower::plan::assign::{assign, Layouts};
use crate::lower::plan::engines::{Engine, Product};
use crate::lower::plan::target::Target;
use crate::options::Options;

/// Every decision about one entry that emission reads.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The entry op.
    pub entry: OpId,
    /// The entry's symbol (a PTX identifier).
    pub name: String,
    /// The target, with the environment's shared-memory and swizzle gates.
    pub target: Target,
    /// Warps per tile block.
    pub warps: u32,
    /// Whether a tile block is a cluster of several CTAs (`num_cta_in_cga`
    /// above 1 on a target with clusters): the launch grid then counts
    /// clusters, and the first CTA of each does the tile block's work.
    pub cluster: bool,
    /// Value facts (divisibility, sign) from `assume` ops and constants.
    pub facts: HashMap<ValueId, Fact>,
    /// The layout of every tile value that has one.
    pub layouts: Layouts,
    /// Every matrix multiply of the entry (its regions included), in the
    /// order of the body, with the engine that computes it.
    pub products: Vec<Product>,
    /// How the loads that feed products reach them, and the pipelined
    /// loops.
    pub copies: copies::Copies,
    /// The operands ops want in another layout, and how each moves.
    pub conversions: conversions::Conversions,
    /// The shared-memory buffers ops claim for their own work.
    pub buffers: buffers::Buffers,
    /// Where every buffer goes, where the plan foresees them all, else the
    /// first it does not ([`alloc::walk`]).
    pub placement: Result<alloc::walk::Allocation, alloc::walk::Unforeseen>,
    /// Registers per thread the products' accumulators hold, all together.
    pub acc_regs: u32,
    /// The most 32-bit words the entry's tiles hold at once, the whole tile
    /// block's ([`crate::lower::analysis::register_need`]).
    pub peak_words: u64,
}

impl Plan {
    /// The engine of the matrix multiply `op`; ops that are not one of the
    /// entry's products have none.
    pub fn engine(&self, op: OpId) -> Option<&Engine> {
        engines::engine_of(&self.products, op)
    }

    /// The layout value `v` is held in as emitted: the plan's, or the one a
    /// reduction, scan or loop holds it in ([`conversions::Conversions::held`]).
    pub fn held(&self, v: ValueId) -> Option<&std::rc::Rc<layout::LinearLayout>> {
        self.conversions
            .held
            .get(&v)
            .or_else(|| self.layouts.get(&v))
    }

    /// The buffers the matrix multiply `op` stages its own operands in,
    /// where it does.
    pub fn staging(&self, op: OpId) -> Option<&engines::Staging> {
        self.products
            .iter()
            .find(|p| p.op == op)
            .and_then(|p| p.staging.as_ref())
    }
}

/// The plans of every entry of `module`, in module order.
pub fn plan_module(module: &Module, options: &Options) -> Result<Vec<Plan>, LowerError> {
    module
        .top_level()
        .iter()
        .filter(|&&id| module.ops[id].opcode == Opcode::Entry)
        .map(|&id| plan_entry(module, id, options))
        .collect()
}

/// The plan of the entry op `entry`.
pub fn plan_entry(m: &Module, entry: OpId, options: &Options) -> Result<Plan, LowerError> {
    let name = entry_name(m, entry)?;
    let block = entry_block(m, entry)?;
    let target = Target {
        unlimited_smem: options.unlimited_smem,
        always_swizzle: options.always_swizzle,
        tma: options.tma,
        ..Target::new(options.gpu)
    };
    let warps = engines::entry_warps(m, &block.ops, target, target.elementwise_warps());
    let facts = analyze(m, &block.ops);
    let products: Vec<Product> = engines::products(m, &block.ops)
        .into_iter()
        .map(|op| Product {
            op,
            engine: engines::engine(m, op, target, warps),
            chained: crate::lower::analysis::chains::chained(m, op),
            staging: None,
        })
        .collect();
    let layouts = assign(m, &block.ops, &facts, target, warps, &products);
    let cluster = target.has_clusters()
        && crate::lower::plan::launch::entry_hints(m, entry, options.gpu, &mut Vec::new())
            .num_cta_in_cga
            .is_some_and(|n| n > 1);
    let mut plan = Plan {
        entry,
        name,
        target,
        warps,
        cluster,
        facts,
        layouts,
        acc_regs: engines::accumulator_registers(m, &block.ops, warps),
        peak_words: crate::lower::analysis::register_need::peak_words(m, &block.ops),
        products,
        copies: copies::Copies::default(),
        conversions: conversions::Conversions::default(),
        buffers: buffers::Buffers::default(),
        placement: Err(alloc::walk::Unforeseen {
            op: None,
            why: "not planned yet",
        }),
    };
    plan.copies = copies::plan(m, &block.ops, &plan);
    let staging = staging::plan(m, &plan);
    for (p, s) in plan.products.iter_mut().zip(staging) {
        p.staging = s;
    }
    plan.conversions = conversions::plan(m, &block.ops, &plan);
    plan.buffers = buffers::plan(m, &block.ops, &plan);
    plan.placement = alloc::walk::allocate(m, &block.ops, &plan);
    Ok(plan)
}

/// The entry's symbol: its name, which the caller launches it by, so not
/// one to respell. A name that is not a PTX identifier fails the compile
/// (status 5), as NVIDIA's tileiras does when ptxas refuses it; here it is
/// refused before ptxas, naming the entry and where it is.
fn entry_name(m: &Module, entry: OpId) -> Result<String, LowerError> {
    match m.ops[entry].attr("sym_name") {
        Some(Attr::String(s)) if !crate::ptx::names::is_ptx_identifier(s) => {
            Err(LowerError::Failed {
                message: format!(
                    "entry {s:?}: the name is not a PTX identifier \
                     ([a-zA-Z][a-zA-Z0-9_$]* or [_$%][a-zA-Z0-9_$]+), so ptxas cannot assemble it"
                ),
                location: m.location(entry),
            })
        }
        Some(Attr::String(s)) => Ok(s.clone()),
        _ => Err(LowerError::Failed {
            message: "entry without a name".into(),
            location: m.location(entry),
        }),
    }
}

/// The entry's body.
pub fn entry_block(m: &Module, entry: OpId) -> Result<&Block, LowerError> {
    m.ops[entry]
        .regions
        .first()
        .and_then(|r| r.blocks.first())
        .ok_or_else(|| LowerError::Failed {
            message: "entry without a body".into(),
            location: m.location(entry),
        })
}
