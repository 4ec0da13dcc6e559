//! `mmaf` / `mmai` on warp-level tensor cores (`mma.sync`, sm_80 and newer).
use crate::ir::{Module, OpId};
use crate::lower::kernel::Lowerer;
use crate::lower::layout::LinearLayout;
use crate::lower::target::Target;
use crate::lower::LowerError;

/// How one matrix multiply maps onto `mma.sync` instructions.
pub struct Plan {
    /// The accumulator's layout.
    pub acc: LinearLayout,
}

impl Plan {
    /// The accumulator (and result) layout.
    pub fn acc_layout(&self) -> LinearLayout {
        self.acc.clone()
    }
}

/// The warps per tile block this engine wants for op `id`, if it applies.
pub fn preferred_warps(_m: &Module, _id: OpId, _target: Target) -> Option<u32> {
    None
}

/// The plan for op `id` in an entry of `warps` warps, if this engine applies.
pub fn plan(_m: &Module, _id: OpId, _target: Target, _warps: u32) -> Option<Plan> {
    None
}

/// Lowers op `id` by `plan`.
pub fn lower(l: &mut Lowerer, id: OpId, _plan: &Plan) -> Result<(), LowerError> {
    Err(l.unsupported(id))
}
