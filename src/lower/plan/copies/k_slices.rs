//! K slices of a pipelined loop whose whole tiles do not fit two stages of
//! a TMA ring (sm_12x's 99 KiB holds two 48 KiB stages, not two 96 KiB
//! ones): each iteration's A and B tiles are copied and multiplied in
//! `n` slices along K, a stage each, as NVIDIA's sm_120 code stages them.
//! The ring then runs over `n` virtual iterations a real one: slice `j`
//! of iteration `i` is the virtual iteration `i n + j`, whose tiles (K
//! `K / n`) start at `(i n + j) K / n = i K + j K / n` along K.
use crate::ir::{Module, OpId};
use crate::lower::analysis::values::const_int;
use crate::lower::plan::copies::load::Load;
use crate::lower::plan::copies::pipeline::LoopShape;

/// The slice counts tried, fewest first.
pub const SLICES: [i64; 3] = [1, 2, 4];

/// The loop `id` of `shape` with its tiles cut into `n` K slices (`n` 1:
/// as it is), if the loop steps by 1 and each load's induction-indexed
/// dimension is its K (A's last, B's next-to-last) and advances by whole
/// tiles (so that virtual iterations are contiguous along K).
pub fn sliced(m: &Module, id: OpId, shape: &LoopShape, n: i64) -> Option<LoopShape> {
    if n == 1 {
        return Some(shape.clone());
    }
    let (_, _, step) = m.ops[id].for_bounds()?;
    if const_int(m, step) != Some(1) {
        return None;
    }
    let rank = shape.a.view.tile_shape.len();
    let a = slice(&shape.a, shape.iv, rank - 1, n)?;
    let b = slice(&shape.b, shape.iv, rank.checked_sub(2)?, n)?;
    Some(LoopShape {
        a,
        b,
        ..shape.clone()
    })
}

/// `ld` with its tile and step along `kdim` (the dimension the induction
/// variable `iv` indexes) cut `n`-fold.
fn slice(ld: &Load, iv: crate::ir::ValueId, kdim: usize, n: i64) -> Option<Load> {
    let d = ld.index.iter().position(|&v| v == iv)?;
    let k = *ld.view.tile_shape.get(d)?;
    if d != kdim || k % n != 0 || ld.view.steps[d] != k {
        return None;
    }
    let mut s = ld.clone();
    s.view.tile_shape[d] = k / n;
    s.view.steps[d] = k / n;
    let last = s.view.tile_shape.len() - 1;
    s.chunk = (s.chunk).filter(|c| s.view.tile_shape[last] % c == 0 && s.view.steps[last] % c == 0);
    Some(s)
}
