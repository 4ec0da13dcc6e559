//! Lowering from TileIR to PTX.
//!
//! One entry at a time, in four stages, each a folder; a stage imports only
//! the stages before it (`tests/architecture.rs` keeps it so), and what
//! each stage hands on is a plain value:
//!
//! ```text
//! tile IR
//!   │ analysis/   facts read from the IR alone: divisibility and sign   facts.rs
//!   │             (assume, constants), views and their partitions,     view.rs, values.rs
//!   │             product chains (attention), register need, what      chains.rs, register_need.rs
//!   │             memory ops do to memory                               memory.rs
//!   ▼
//!   │ plan/       one Plan per entry, decided before any instruction   mod.rs (Plan, plan_entry)
//!   │             exists: warps, cluster, the layout of every value     assign.rs, layout/
//!   │             (linear layouts: register/lane/warp bases; stores
//!   │             anchor the choice), and every product's engine with   engines/ (mod.rs: the
//!   │             that engine's own plan: wgmma (sm_90a), mma.sync,      choice; wgmma.rs,
//!   │             FMAs; how each load that feeds a product reaches it   mma_sync.rs, fma.rs)
//!   │             (cp.async straight to a B buffer, streamed slice by   copies/ (direct.rs,
//!   │             slice) and which loops are pipelined, with the ring    stream.rs, pipeline.rs)
//!   │             of stages their engine fills; the buffers each        staging.rs
//!   │             product stages its own operands in (its engine's K
//!   │             slices and the bytes of a set); the operands ops      conversions/
//!   │             want in another layout, and how each moves
//!   │             (registers, recomputed, shuffles, shared memory);
//!   │             every buffer an op claims, sized (each size it may    buffers/
//!   │             take by the room left: a product's K slices, a
//!   │             loop's ring stages); where each goes, by the one      alloc/ (placer.rs,
//!   │             allocator walking the entry as emission claims,       walk.rs, loops.rs,
//!   │             which size each takes by the room left there (the     direct.rs, loads.rs,
//!   │             choices emission follows); launch directives          choices.rs), launch.rs
//!   │             (TILEIRAS_DEBUG_DUMP_PLAN prints it: Plan::dump)
//!   ▼
//!   │ emit/       per-thread SIMT IR from the plan: the context          context.rs (Lowerer),
//!   │             (Lowerer: plan, body under construction, lowered       entry.rs, states.rs
//!   │             values, each family's own state), the entry driver,
//!   │             one op family a file; the dispatcher hands each op    ops/mod.rs, ops/<family>.rs
//!   │             to its family, a product to its plan's engine (each   ops/mma.rs, ops/mma_sync*.rs,
//!   │             engine's files import none of another's); how          ops/wgmma*.rs, ops/mma_fma*.rs
//!   │             operands reach shared memory, whichever engine reads  copies/ (cp_async.rs, ring.rs,
//!   │             them (cp.async, rings of stages, direct B copies,      direct.rs, stream.rs, ...)
//!   │             streamed slices), and the wgmma instruction           wgmma_isa.rs
//!   │             they share; shared-memory scratch claimed as the      scratch/ (mod.rs,
//!   │             plan placed it (no allocator here, no second          map.rs)
//!   │             lowering): each buffer the plan's next, by op, what
//!   │             it holds and size, at the plan's offset (an internal
//!   │             error otherwise), every size chosen by the room left
//!   │             the plan's choice; every op declares each phase of
//!   │             its reads and writes of a buffer (a cp.async write
//!   │             from its issue, a wgmma read until its wait), not the
//!   │             barriers before them, between them or before their
//!   │             next iteration (the protocols of cp.async, wgmma and
//!   │             mbarriers keep the barriers after their waits)
//!   ▼
//!   │ simt/       typed PTX instructions on virtual registers with       simt/mod.rs (Builder)
//!   │             structured if/loop/break/continue; the barriers the   simt/membar.rs
//!   │             declared accesses need (read-after-write, write-
//!   │             after-read on overlapping bytes, across branches and
//!   │             loop iterations); optimizations:                      simt/opt.rs, widen.rs,
//!   │             folding with immediates, copy propagation, wide        cse.rs, licm.rs, offsets.rs
//!   │             products, scoped CSE, DCE, from -O2 loop-invariant
//!   │             code motion; labels and dense register numbering      simt/emit.rs
//!   ▼
//! PTX model ─ text                                                      crate::ptx::Writer
//! ```
//!
//! With `--lineinfo` or `-g`, every instruction carries the source position
//! of the op it was lowered from (`Lowerer::set_loc`), and the PTX gets
//! `.file`/`.loc` lines; `-g` adds the DWARF compile unit (`ptx::dwarf`).
//!
//! Data moves between threads by warp shuffles (reductions) or through a
//! shared-memory scratch array (`emit/ops/staging.rs`: layout conversions,
//! permute/cat/extract/insert, pack/unpack, cross-warp reductions, scans,
//! the FMA matmul). A matrix multiply goes to the engine its plan names
//! (`emit/ops/mma.rs`): on sm_90a `wgmma` from swizzled shared-memory
//! operands (`emit/ops/wgmma*.rs`, layouts in `plan/layout/smem.rs` and
//! `plan/layout/wgmma.rs`, written by `emit/copies/swizzled.rs`); elsewhere
//! `mma.sync` (`emit/ops/mma_sync*.rs`, fragment layouts in
//! `plan/layout/mma_sync.rs`) reads operands staged in padded shared memory
//! with `ldmatrix`, and a `for` loop that only loads A and B and multiplies
//! them is pipelined with `cp.async` stages (`plan/copies/pipeline.rs`
//! decides which loops and their stages).
//! `mmaf_scaled` dequantizes its f8 operands to bf16 in registers and goes
//! to the same engines (`emit/ops/mma_scaled.rs`). Target facts (clusters,
//! bf16 arithmetic, vector width) live in `plan/target.rs`. An op or
//! feature not handled yet is a [`LowerError::Unsupported`] naming the op
//! and its source location.
//!
//! Constants from the input (tensor-view shapes, strides and offsets) may be
//! any 64-bit value: arithmetic folding them into immediates uses
//! `checked_*` and fails with [`LowerError::TooLarge`] at the op (status 4)
//! rather than wrap; a function doing such arithmetic carries
//! `#[deny(clippy::arithmetic_side_effects)]` (all of `emit::ops::static_offsets`
//! and of `crate::ptx::check`). Tile sizes are
//! bounded by the verifier (2^24 elements). Every instruction built is
//! range-checked as it is pushed ([`crate::ptx::check`]), so an immediate
//! that does not fit its operand is the op's located error too.
pub mod analysis;
pub mod emit;
pub mod error;
pub mod plan;
pub mod simt;

pub use emit::scratch::ScratchMap;
pub use error::LowerError;

use crate::diag::Diagnostic;
use crate::ir::{Module, Opcode};
use crate::options::Options;

/// The name of NVIDIA's launch metadata global every module declares.
pub const LAUNCH_META_DATA: &str = "___NV_TILE_LAUNCH_META_DATA___";

/// Lowers a verified module to PTX text for the options' target.
pub fn lower(module: &Module, options: &Options) -> Result<String, LowerError> {
    lower_module(module, options).map(|(ptx, _)| ptx.to_text())
}

/// Lowers a verified module to the PTX model, with the warnings and
/// remarks of launch planning ([`plan::launch::plan`]).
pub fn lower_module(
    module: &Module,
    options: &Options,
) -> Result<(crate::ptx::Module, Vec<Diagnostic>), LowerError> {
    lower_module_mapped(module, options).map(|(ptx, notes, _)| (ptx, notes))
}

/// [`lower_module`], with each entry's shared-memory scratch map.
pub fn lower_module_mapped(
    module: &Module,
    options: &Options,
) -> Result<(crate::ptx::Module, Vec<Diagnostic>, Vec<ScratchMap>), LowerError> {
    let mut out = crate::ptx::Module::new(options);
    let mut maps = Vec::new();
    let mut entries = Vec::new();
    let mut notes = Vec::new();
    let mut files = Vec::new();
    let line_info = options.line_info || options.device_debug;
    let mut globals = Vec::new();
    for &id in module.top_level() {
        match module.ops[id].opcode {
            Opcode::Global => globals.push(emit::globals::lower_global(module, id)?),
            Opcode::Entry => {
                let plan = plan::plan_entry(module, id, options)?;
                let (mut e, map) = emit::entry::lower_entry(
                    module,
                    id,
                    &plan,
                    options,
                    line_info.then_some(&mut files),
                )?;
                plan::launch::plan(module, id, options, &mut e, &mut notes)?;
                entries.push(e);
                maps.push(map);
            }
            _ => {
                return Err(LowerError::Unsupported {
                    what: format!("'{}' op", module.ops[id].name()),
                    location: module.location(id),
                })
            }
        }
    }
    // External functions are declared where some entry calls them.
    let calls = |opc: crate::ptx::Opc| {
        entries.iter().any(|e| {
            e.body
                .iter()
                .any(|line| matches!(line, crate::ptx::Line::Inst(i) if i.opc == opc))
        })
    };
    if calls(crate::ptx::Opc::Malloc) {
        out.items.push(crate::ptx::Item::HeapDecl);
    }
    if calls(crate::ptx::Opc::Vprintf) {
        out.items.push(crate::ptx::Item::VprintfDecl);
    }
    if entries.iter().any(|e| !e.strings.is_empty()) {
        for e in &entries {
            for (name, bytes) in &e.strings {
                out.items
                    .push(crate::ptx::Item::Bytes(name.clone(), bytes.clone()));
            }
        }
    }
    if !entries.is_empty() {
        out.items
            .push(crate::ptx::Item::Global(crate::ptx::GlobalBytes {
                name: LAUNCH_META_DATA.into(),
                align: 8,
                size: 64,
                visible: true,
                init: None,
            }));
    }
    out.items
        .extend(globals.into_iter().map(crate::ptx::Item::Global));
    out.items
        .extend(entries.into_iter().map(crate::ptx::Item::Entry));
    out.files = files;
    // Each op's instructions were checked as they were built (with its
    // location); this also covers what the optimizer made of them.
    crate::ptx::check::module(&out).map_err(|message| LowerError::TooLarge {
        message,
        location: None,
    })?;
    Ok((out, notes, maps))
}
