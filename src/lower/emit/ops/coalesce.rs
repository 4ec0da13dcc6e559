//! Coalesced view accesses. A warp whose consecutive lanes sit on
//! different rows of memory touches one 32-byte sector per lane, so:
//! - stores of a view whose unit-stride dimension is not the tile's last
//!   (column-major tensors) get a layout with the lanes [`along`] that
//!   dimension (layout assignment asks [`off_last_contiguous_dim`]);
//! - a load whose users want the lanes elsewhere (a tile read in the
//!   transposed `order`, stored in the natural one) is read along memory
//!   ([`load_layout`]) and moved through shared memory into its users'
//!   layout, as NVIDIA's tileiras transposes, where the tile fits.
use crate::lower::analysis::view::PartitionInfo;
use crate::lower::emit::context::Lowerer;
use crate::lower::emit::ops::staging::room;
use crate::lower::plan::engines::tile_bytes;

/// Whether shared memory has room, where the next buffer goes, to move a
/// tile of view `p` read along memory into its users' layout.
pub fn room_for_move(l: &Lowerer, p: &PartitionInfo) -> bool {
    tile_bytes(&p.tile_shape, p.elem) <= room(l)
}
