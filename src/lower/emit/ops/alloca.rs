//! `alloca`: memory from the device heap for the tile block, as NVIDIA's
//! tileiras provides it. Thread 0 calls `__cuda_syscall_aligned_malloc`
//! (trapping when the heap is exhausted, as the spec asks) and hands the
//! address to the other threads through shared memory; the allocation is
//! freed when the entry ends. An alloca inside a loop or branch is
//! allocated once, at the entry's start (its size is static): its lifetime
//! ends with its block, so every execution of the block may reuse the same
//! memory, once all threads are past its previous use (a barrier where the
//! alloca stands).
use crate::ir::{Attr, OpId, Type};
use crate::lower::analysis::values::Elem;
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Inst, Opc, Operand, Reg, Ty};
use smallvec::smallvec;

use crate::lower::emit::ops::staging::alloc;

/// The entry's heap allocations, freed when it ends ([`free_all`]).
#[derive(Default)]
struct Allocations(Vec<Reg>);

/// Allocates, at the current point (the entry's start), every `alloca`
/// nested in the regions of `ops`; their ops then find their results bound.
pub fn hoist_nested(l: &mut Lowerer, ops: &[OpId]) -> Result<(), LowerError> {
    for id in crate::lower::plan::alloc::walk::nested_allocas(l.m, ops) {
        lower(l, id)?;
    }
    Ok(())
}

/// Lowers `alloca` into a heap allocation shared by the tile block. A
/// hoisted alloca's op finds its result bound and only waits at a barrier:
/// every thread is then done with the memory's previous use (the block's
/// previous execution), which the reuse must not overtake.
pub fn lower(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let res = *op.results.first().ok_or_else(|| l.unsupported(id))?;
    if l.vals.contains_key(&res) {
        l.barrier();
        return Ok(());
    }
    let int = |name: &str| match op.attr(name) {
        Some(Attr::Int(v)) => i64::try_from(*v).ok(),
        _ => None,
    };
    let (Some(n), align) = (int("num_elem"), int("alignment").unwrap_or(1)) else {
        return Err(l.unsupported(id));
    };
    // The pointee's size.
    let pointee = match l.m.types.try_get(l.m.values[res].ty) {
        Some(Type::Tile { element, .. }) => match l.m.types.try_get(*element) {
            Some(Type::Pointer { pointee, .. }) => match l.m.types.try_get(*pointee) {
                Some(Type::Scalar(s)) => Some(*s),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    };
    let elem = pointee.ok_or_else(|| l.unsupported(id))?;
    let bytes = n
        .checked_mul(i64::from(elem.bit_width().div_ceil(8)))
        .ok_or_else(|| l.unsupported_feature(id, "this allocation size"))?;
    let slot = alloc(
        l,
        crate::lower::plan::buffers::What::Slot,
        &[1],
        Elem::Num(crate::ir::Scalar::I64),
    )?;
    let r = |x: Reg| Operand::Reg(x);
    let base = l.shared_base();
    let first = l.is_thread_zero();
    l.writes(slot.bytes());
    l.b.begin_if(first, true);
    let p = l.b.reg_for(Ty::B64);
    l.b.push(Inst::new(
        Opc::Malloc,
        &[],
        &[],
        vec![r(p)],
        smallvec![Operand::Imm(bytes), Operand::Imm(align.max(1))],
    ));
    let null = l.b.op(
        Opc::Setp,
        &["eq"],
        &[Ty::U64],
        Ty::Pred,
        vec![r(p), Operand::Imm(0)],
    );
    l.b.begin_if(null, true);
    l.b.push(Inst::new(Opc::Trap, &[], &[], vec![], vec![]));
    l.b.end_if();
    l.b.push(Inst::new(
        Opc::St,
        &["shared"],
        &[Ty::B64],
        vec![],
        smallvec![Operand::Addr(base, slot.offset), r(p)],
    ));
    l.b.end_if();
    l.reads(slot.bytes());
    let d = l.b.reg_for(Ty::B64);
    l.b.push(Inst::new(
        Opc::Ld,
        &["shared"],
        &[Ty::B64],
        vec![r(d)],
        smallvec![Operand::Addr(base, slot.offset)],
    ));
    l.states.get::<Allocations>().0.push(d);
    l.bind(
        res,
        Tile {
            elem: Elem::Ptr,
            layout: std::rc::Rc::new(LinearLayout::default_scalar()),
            regs: vec![d],
        },
    );
    Ok(())
}

/// Frees the entry's allocations (after a barrier, so no thread still
/// uses them), from thread 0.
pub fn free_all(l: &mut Lowerer) {
    let allocations = l
        .states
        .peek::<Allocations>()
        .map(|a| a.0.clone())
        .unwrap_or_default();
    if allocations.is_empty() {
        return;
    }
    l.barrier();
    let first = l.is_thread_zero();
    l.b.begin_if(first, true);
    for p in allocations {
        l.b.push(Inst::new(
            Opc::Free,
            &[],
            &[],
            vec![],
            smallvec![Operand::Reg(p)],
        ));
    }
    l.b.end_if();
}
