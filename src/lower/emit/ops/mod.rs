//! Lowering of tile ops, one family per file, each producing SIMT IR for
//! every register of its result ([`elementwise`] for the elementwise ones).
pub mod alloca;
pub mod arith;
pub mod atomic;
pub mod cast;
pub mod control;
pub mod convert;
pub mod debug;
pub mod elementwise;
pub mod f4;
pub mod f8;
pub mod f8_scale;
pub mod fmod_f32;
pub mod int8;
pub mod math;
pub mod math_f32;
pub mod math_f64;
pub mod math_f64_reduce;
pub mod math_f64_trig;
pub mod memory;
pub mod memory_4bit;
pub mod memory_access;
pub mod mma;
pub mod mma_fma;
pub mod mma_fma_regs;
pub mod mma_operands;
pub mod mma_scaled;
pub mod mma_split_sum;
pub mod mma_sync;
pub mod mma_sync_frags;
pub mod mma_sync_pipeline;
pub mod mma_sync_smem;
pub mod mma_sync_staged_a;
pub mod mma_sync_tma;
pub mod mma_sync_wgmma;
pub mod movement;
pub mod packed;
pub mod reduce;
pub mod remat;
pub mod scan;
pub mod shape;
pub mod shuffle_convert;
pub mod special;
pub mod staging;
pub mod staging_window;
pub mod static_offsets;
pub mod subbyte;
pub mod tokens;
pub mod view_access;
pub mod wgmma;
pub mod wgmma_pipeline;
pub mod wgmma_stream;
pub mod wgmma_transpose;

use crate::ir::{OpId, Opcode};
use crate::lower::emit::context::{is_structural, Lowered, Lowerer};
use crate::lower::error::LowerError;
use crate::ptx::{Inst, Opc};

/// Lowers one op of the entry body.
pub fn lower_op(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let before = l.set_loc(id);
    if l.m.ops[id].opcode == Opcode::For && l.loops.is_empty() && l.if_depth == 0 {
        // Staged for the rest of the entry (the scratch of ops at the
        // entry's top level stays theirs), later loops included; the
        // buffers are the loop's, as its plan lists them.
        let outer = l.scratch.claim_for(Some(id));
        let staged = mma_sync_wgmma::stage_invariant_a(l, id)
            .and_then(|_| mma_sync_staged_a::stage(l, id).map(|_| ()));
        l.scratch.claim_for(outer);
        staged.map_err(|e| named(l, id, e))?;
    }
    let outer = l.scratch.claim_for(Some(id));
    // An immediate that does not fit its operand is the error of the op
    // that pushed it: one pushed before this op (by the op enclosing it)
    // waits until this op is done.
    let pending = l.b.overflow.take();
    let r = lower_op_here(l, id).map_err(|e| named(l, id, e));
    let own = std::mem::replace(&mut l.b.overflow, pending);
    let r = match own {
        Some(why) if r.is_ok() => Err(LowerError::TooLarge {
            message: format!("'{}' op: {why}", l.m.ops[id].name()),
            location: l.m.location(id),
        }),
        _ => r,
    };
    l.scratch.claim_for(outer);
    l.b.loc = before;
    r
}

/// An unsupported-feature error raised below op `id` without naming an op
/// (a shared-memory buffer that does not fit, say) names `id` and its
/// location.
fn named(l: &Lowerer, id: OpId, e: LowerError) -> LowerError {
    match e {
        LowerError::Unsupported {
            what,
            location: None,
        } if !what.starts_with('\'') => l.unsupported_feature(id, &what),
        e => e,
    }
}

/// Lowers one op at the current source position.
fn lower_op_here(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    tokens::order(l, id);
    let opcode = l.m.ops[id].opcode;
    if is_structural(opcode) {
        return lower_structural(l, id);
    }
    match opcode {
        Opcode::LoadViewTko => memory_access::lower_load_view(l, id),
        Opcode::StoreViewTko => memory_access::lower_store_view(l, id),
        Opcode::Assume => forward_assume(l, id),
        Opcode::GetTileBlockId | Opcode::GetNumTileBlocks => special::lower_block_ids(l, id),
        Opcode::Reshape if crate::lower::emit::copies::direct::forward_reshape(l, id) => Ok(()),
        Opcode::Constant | Opcode::Reshape | Opcode::Broadcast | Opcode::Iota => {
            shape::lower(l, id)
        }
        Opcode::ExtI
        | Opcode::TruncI
        | Opcode::FToF
        | Opcode::FToI
        | Opcode::IToF
        | Opcode::Bitcast => cast::lower(l, id),
        Opcode::Offset => arith::offset(l, id),
        Opcode::IntToPtr | Opcode::PtrToInt | Opcode::PtrToPtr => cast::lower_ptr_cast(l, id),
        Opcode::If => control::lower_if(l, id),
        Opcode::Reduce => reduce::lower(l, id),
        Opcode::MmaF | Opcode::MmaI | Opcode::MmaFScaled => mma::lower(l, id),
        Opcode::Scan => scan::lower(l, id),
        Opcode::AtomicRMWTko | Opcode::AtomicCASTko | Opcode::AtomicRedViewTko => {
            atomic::lower(l, id)
        }
        Opcode::Permute
        | Opcode::Cat
        | Opcode::Extract
        | Opcode::Insert
        | Opcode::Pack
        | Opcode::Unpack => movement::lower(l, id),
        Opcode::PrintTko => debug::lower_print(l, id),
        Opcode::Assert => debug::lower_assert(l, id),
        Opcode::For => control::lower_for(l, id),
        Opcode::Loop => control::lower_loop(l, id),
        Opcode::Yield | Opcode::Continue | Opcode::Break => control::lower_yield(l, id),
        Opcode::GetIndexSpaceShape => control::lower_index_space_shape(l, id),
        Opcode::GetTensorShape => control::lower_tensor_shape(l, id),
        Opcode::Alloca => alloca::lower(l, id),
        Opcode::GetGlobal => special::lower_global(l, id),
        Opcode::LoadPtrTko | Opcode::StorePtrTko => memory_access::lower_ptr_access(l, id),
        _ => arith::lower(l, id),
    }
}

/// Lowers a structural op (tokens, views, `return`): its results get no
/// value; a `return` inside an `if` or a loop leaves the whole tile block
/// there.
fn lower_structural(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    for &r in &op.results {
        l.vals.insert(r, Lowered::Nothing);
    }
    if op.opcode == Opcode::Return {
        if !op.operands.is_empty() {
            return Err(l.unsupported(id));
        }
        if l.if_depth > 0 || !l.loops.is_empty() {
            // An early exit: the condition of every enclosing `if` is
            // the same in all threads, so the whole tile block leaves
            // here, after freeing what the entry allocated.
            alloca::free_all(l);
            l.b.push(Inst::new(Opc::Ret, &[], &[], vec![], vec![]));
        }
    }
    Ok(())
}

/// Lowers `assume` (op `id`): its result is its operand's value.
fn forward_assume(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let (src, res) = (op.operands.first().copied(), op.results.first().copied());
    match (src.and_then(|s| l.vals.get(&s).cloned()), res) {
        (Some(v), Some(r)) => {
            l.vals.insert(r, v);
            Ok(())
        }
        _ => Err(l.unsupported(id)),
    }
}
