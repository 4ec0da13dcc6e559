//! Lowering from TileIR to PTX.
//!
//! The pipeline, one entry at a time, data flowing one way:
//!
//! ```text
//! tile IR ─ facts (assume, constants: divisibility, sign)            facts.rs
//!         ─ layout assignment: every tile value gets a linear layout   assign.rs, layout/
//!           (register/lane/warp bases; blocked layouts today, stores
//!           anchor the choice, 128-bit vectors where provable; eight
//!           16-bit or sixteen 8-bit elements travel as four packed
//!           32-bit words, ops/packed.rs)
//!         ─ per-thread SIMT IR: typed PTX instructions on virtual       simt/, ops/<family>.rs
//!           registers, structured if/loop/break/continue
//!         ─ optimizations: constant folding with immediates and        simt/opt.rs,
//!           integer identities, copy propagation, 64-bit products of    simt/widen.rs
//!           widened 32-bit values as mul/mad.wide, scoped CSE (also of
//!           reads of variables until they are written), DCE
//!           (registers written once only); from -O2 also                simt/licm.rs
//!           loop-invariant code motion of pure instructions, within
//!           a live-in register budget
//!         ─ PTX model: labels, dense register numbering                simt/emit.rs
//!         ─ text                                                       crate::ptx::Writer
//! ```
//!
//! With `--lineinfo` or `-g`, every instruction carries the source position
//! of the op it was lowered from (`Lowerer::set_loc`), and the PTX gets
//! `.file`/`.loc` lines; `-g` adds the DWARF compile unit (`ptx::dwarf`).
//!
//! Data moves between threads by warp shuffles (reductions) or through a
//! shared-memory scratch array (`ops/staging.rs`: layout conversions,
//! permute/cat/extract/insert, pack/unpack, cross-warp reductions, scans,
//! the FMA matmul). Matrix multiplies go to an engine (`ops/mma.rs`): on
//! sm_90a `wgmma` from swizzled shared-memory operands (`ops/wgmma.rs`,
//! `ops/wgmma_smem.rs`, `layout/wgmma.rs`); elsewhere `mma.sync`
//! (`ops/mma_sync*.rs`, fragment layouts in `layout/mma_sync.rs`) reads
//! operands staged in padded shared memory with `ldmatrix`, and a `for` loop
//! that only loads A and B and multiplies them is pipelined with `cp.async`
//! stages. `mmaf_scaled` dequantizes its f8 operands to bf16 in registers
//! and goes to the same engines (`ops/mma_scaled.rs`). Target facts (clusters, bf16 arithmetic, vector width)
//! live in `target.rs`. An op or feature not handled yet is a
//! [`LowerError::Unsupported`] naming the op and its source location.
//!
//! Constants from the input (tensor-view shapes, strides and offsets) may be
//! any 64-bit value: arithmetic folding them into immediates uses
//! `checked_*` and fails with [`LowerError::TooLarge`] at the op (status 4)
//! rather than wrap; a function doing such arithmetic carries
//! `#[deny(clippy::arithmetic_side_effects)]` (all of `ops::static_offsets`
//! and of `crate::ptx::check`). Tile sizes are
//! bounded by the verifier (2^24 elements). Every instruction built is
//! range-checked as it is pushed ([`crate::ptx::check`]), so an immediate
//! that does not fit its operand is the op's located error too.
pub mod analysis;
pub mod emit;
pub mod error;
pub mod plan;
pub mod simt;

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
    let mut out = crate::ptx::Module::new(options);
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
                let mut e = emit::entry::lower_entry(
                    module,
                    id,
                    &plan,
                    options,
                    line_info.then_some(&mut files),
                )?;
                plan::launch::plan(module, id, options, &mut e, &mut notes)?;
                entries.push(e);
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
    Ok((out, notes))
}
