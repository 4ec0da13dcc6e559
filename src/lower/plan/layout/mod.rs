//! Layouts: how a tile's elements are spread over the registers, lanes and
//! warps of a tile block. Pure data and math; lowering reads them.
pub mod blocked;
pub mod coalesced;
pub mod linear;
pub mod mma_sync;
pub mod shuffle;
pub mod smem;
pub mod wgmma;

pub use blocked::Blocked;
pub use linear::{disjoint, HwDim, LinearLayout};
