//! `mmaf` / `mmai` / `mmaf_scaled`: picks the engine that computes each
//! matrix multiply and hands the op to it.
//!
//! Engines, tried in order: `wgmma` (sm_90a warpgroup MMA from shared
//! memory, [`wgmma`]), `mma.sync` (sm_80 and newer, [`mma_sync`]), and FMAs
//! on the CUDA cores ([`mma_fma`]), which handles everything. Chained
//! products ([`crate::lower::analysis::chains`], attention) go to `mma.sync` on every
//! target: their A operands are already fragments in registers there. An engine's
//! plan fixes the accumulator's layout, which layout assignment seeds
//! before anything else so loop-carried accumulators stay in registers.
//!
//! `mmaf_scaled` reaches the engines as an `mmaf` of bf16 operands: its
//! f8 operands are dequantized in registers first ([`mma_scaled`]).
use crate::ir::{OpId, Opcode};
use crate::lower::emit::context::Lowerer;
use crate::lower::error::LowerError;

use crate::lower::emit::ops::{mma_fma, mma_scaled, mma_sync, wgmma};
use crate::lower::plan::engines::Engine;

/// Lowers `mmaf`, `mmai` and `mmaf_scaled` with the engine the plan
/// gives it ([`engine`] picked it).
pub fn lower(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    if l.m.ops[id].opcode == Opcode::MmaFScaled {
        mma_scaled::check(l, id)?;
    }
    match l.plan.engine(id).cloned() {
        Some(Engine::Wgmma(p)) => wgmma::lower(l, id, &p),
        Some(Engine::MmaSync(p)) => mma_sync::lower(l, id, &p),
        Some(Engine::Fma) => mma_fma::lower(l, id),
        None => Err(l.unsupported_feature(id, "no engine in the plan")),
    }
}
