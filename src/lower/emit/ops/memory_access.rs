//! Memory access ops as the dispatcher hands them out: a view load goes to
//! the product that copies or streams it, else into registers
//! ([`crate::lower::emit::ops::memory`]); view stores and pointer loads and
//! stores; each leaves its token result without a value.
use crate::ir::{OpId, Opcode};
use crate::lower::emit::context::{Lowered, Lowerer};
use crate::lower::error::LowerError;

use crate::lower::emit::copies::{direct, stream};
use crate::lower::emit::ops::memory;

/// Lowers `load_view_tko` (op `id`): a load a product copies straight into
/// its B buffer, or streams slice by slice, is lowered by the product's
/// engine; the others read into registers.
pub fn lower_load_view(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let by_product = memory::ordering(l, id).is_ok()
        && (direct::lower_load(l, id)? || stream::lower_load(l, id));
    if !by_product {
        memory::load_view(l, id)?;
    }
    if let Some(&t) = l.m.ops[id].results.get(1) {
        l.vals.insert(t, Lowered::Nothing);
    }
    Ok(())
}

/// Lowers `store_view_tko` (op `id`).
pub fn lower_store_view(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    memory::store_view(l, id)?;
    for &r in &l.m.ops[id].results {
        l.vals.insert(r, Lowered::Nothing);
    }
    Ok(())
}

/// Lowers `load_ptr_tko` or `store_ptr_tko` (op `id`) through its tile of
/// pointers; results left without a value (the token) get none.
pub fn lower_ptr_access(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    if l.m.ops[id].opcode == Opcode::LoadPtrTko {
        memory::load_ptr(l, id)?;
    } else {
        memory::store_ptr(l, id)?;
    }
    let results = l.m.ops[id].results.clone();
    for r in results {
        l.vals.entry(r).or_insert(Lowered::Nothing);
    }
    Ok(())
}
