//! The window a conversion through shared memory moves at a time where
//! its whole tile does not fit the room left: an aligned slice of the
//! tile's first dimension longer than 1, the longest that fits.
use crate::lower::plan::engines::k_slices;

/// The dimension a tile of `shape` (elements of `slot` bytes) is sliced
/// along and the slice's length, the longest whose bytes fit `room`;
/// `None` when the tile has no dimension longer than 1 or not even a slice
/// of one fits.
pub fn window(shape: &[i64], slot: i64, room: i64) -> Option<(usize, i64)> {
    let dim = shape.iter().position(|&d| d > 1)?;
    let line = shape.iter().product::<i64>() * slot / shape[dim];
    let len = k_slices(shape[dim], 1)
        .skip(1)
        .find(|&len| line * len <= room)?;
    Some((dim, len))
}

/// The bytes of a window of `len` along `dim` of a tile of `shape`
/// (elements of `slot` bytes).
pub fn window_bytes(shape: &[i64], slot: i64, (dim, len): (usize, i64)) -> i64 {
    shape.iter().product::<i64>() * slot / shape[dim] * len
}
