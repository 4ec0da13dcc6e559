//! Coalesced view accesses. A warp whose consecutive lanes sit on
//! different rows of memory touches one 32-byte sector per lane, so:
//! - stores of a view whose unit-stride dimension is not the tile's last
//!   (column-major tensors) get a layout with the lanes [`along`] that
//!   dimension (layout assignment asks [`off_last_contiguous_dim`]);
//! - a load whose users want the lanes elsewhere (a tile read in the
//!   transposed `order`, stored in the natural one) is read along memory
//!   ([`load_layout`]) and moved through shared memory into its users'
//!   layout, as NVIDIA's tileiras transposes, where the tile fits.
use std::rc::Rc;

use crate::lower::analysis::view::PartitionInfo;
use crate::lower::emit::context::Lowerer;
use crate::lower::plan::layout::LinearLayout;

use crate::lower::emit::ops::staging::{room, slot_bytes};
use crate::lower::plan::layout::coalesced::load_layout;

/// [`load_layout`] for a load `l` lowers, when shared memory has room for
/// the move (else the users' layout, read as it is).
pub fn load_layout_in(
    l: &Lowerer,
    p: &PartitionInfo,
    wanted: &LinearLayout,
) -> Option<Rc<LinearLayout>> {
    let bytes = p.tile_shape.iter().product::<i64>() * slot_bytes(p.elem);
    if bytes > room(l) {
        return None;
    }
    load_layout(p, wanted, l.plan.warps)
}
