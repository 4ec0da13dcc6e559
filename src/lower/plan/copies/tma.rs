//! The TMA copy of a tile into a swizzled buffer: the tensor map the host
//! callbacks write for it, and the boxes one thread issues so that every
//! element lands where the buffer's layout puts it. Pipelined rings
//! ([`super::pipeline`]) and direct copies ([`super::direct`]) plan their
//! TMA copies here.

use crate::host::{MapDecl, MapElem, MapSwizzle, MapValue};
use crate::ir::{Module, Scalar};
use crate::lower::analysis::values::Elem;
use crate::lower::analysis::view::{allow_tma, entry_arg, Extent};
use crate::lower::plan::copies::load::Load;
use crate::lower::plan::layout::smem::Smem;
use crate::lower::plan::Plan;

/// One TMA box of a ring operand's tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TmaBox {
    /// Byte offset in the operand's buffer.
    pub dst: i64,
    /// Element offsets from the tile's start along its last two tile
    /// dimensions (along the others, of one element, 0).
    pub at: [i64; 2],
}

/// A ring operand copied by TMA: one elected thread copies the tile in
/// boxes that land swizzled where the operand's layout puts them, and they
/// complete on the stage's full barrier.
#[derive(Clone, Debug)]
pub struct TmaCopy {
    /// The tensor map (its `map` parameter is placed by the emission).
    pub map: MapDecl,
    /// The tile's boxes.
    pub boxes: Vec<TmaBox>,
    /// The bytes they deliver.
    pub bytes: i64,
    /// Whether the map's last two dimensions are the tile's last two
    /// swapped (a transposed view such as attention's `Kᵀ`, contiguous
    /// along the tile's next-to-last dimension); the boxes' `at` and the
    /// map's dimensions are in the map's order.
    pub transposed: bool,
}

/// The map element type of `e`, if TMA copies it.
fn map_elem(e: Elem) -> Option<MapElem> {
    Some(match e {
        Elem::Num(Scalar::F16) => MapElem::F16,
        Elem::Num(Scalar::BF16) => MapElem::Bf16,
        Elem::Num(Scalar::F32) => MapElem::F32,
        Elem::Num(Scalar::F64) => MapElem::F64,
        Elem::Num(Scalar::I8 | Scalar::F8E4M3FN | Scalar::F8E5M2) => MapElem::B8,
        Elem::Num(Scalar::I16) => MapElem::B16,
        Elem::Num(Scalar::I32) => MapElem::B32,
        Elem::Num(Scalar::I64) => MapElem::B64,
        _ => return None,
    })
}

/// The TMA copy of `ld` into `smem` (`k_first`: the tile is `[k, mn]`),
/// if TMA can write the layout: TMA is on for the plan and the load's
/// `allow_tma` hint does not turn it off, the tensor and the tile have
/// the same rank (2 to 5), the tile is one element along all but its last
/// two dimensions (a batch's one matrix) and its last dimension (or,
/// transposed, its next-to-last) is contiguous (stride 1) in 16-byte
/// chunks, the view's base is an entry argument and its dims and other
/// strides entry arguments or constants (TMA's map is written from them on
/// the host; its dimensions are the tile's, in the tile's order but for
/// the contiguous one, innermost), and the
/// boxes (one element along the leading dimensions, the swizzle's width
/// along the contiguous one, at most 256 along the other) land every
/// element where the layout puts it. The box's swizzle is the layout's:
/// TMA XORs address bits, so the buffer must be aligned to eight swizzle
/// rows, which the ring's 1024-byte alignment gives.
pub fn tma_copy(m: &Module, plan: &Plan, ld: &Load, smem: &Smem, k_first: bool) -> Option<TmaCopy> {
    let v = &ld.view;
    let es = smem.es;
    let rank = v.tile_shape.len();
    if !plan.target.tma
        || plan.target.gpu.capability() < 90
        || !allow_tma(m, ld.op, plan.target.gpu)
        || !(2..=5).contains(&rank)
        || v.shape.len() != rank
        || v.dim_map.len() != rank
        || v.tile_shape[..rank - 2].iter().any(|&t| t != 1)
        || ld.chunk.map(|c| c * es) != Some(16)
    {
        return None;
    }
    let mut seen = v.dim_map.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != rank {
        return None;
    }
    // The map's dimensions are the tile's, the contiguous one innermost:
    // the tile's last, or (transposed) its next-to-last.
    let contiguous = |t: usize| v.strides[v.dim_map[t]] == Extent::Static(1);
    let transposed = if contiguous(rank - 1) {
        false
    } else if contiguous(rank - 2) {
        true
    } else {
        return None;
    };
    let mut order: Vec<usize> = (0..rank).collect();
    if transposed {
        order.swap(rank - 2, rank - 1);
    }
    let arg = |e: &Extent| match e {
        Extent::Dynamic(x) => entry_arg(m, *x).map(MapValue::Arg),
        Extent::Static(v) => u32::try_from(*v)
            .ok()
            .filter(|&v| v > 0)
            .map(MapValue::Const),
    };
    let base = entry_arg(m, v.base)?;
    let dims = (order.iter())
        .map(|&t| arg(&v.shape[v.dim_map[t]]))
        .collect::<Option<Vec<_>>>()?;
    let strides = (order[..rank - 1].iter())
        .map(|&t| arg(&v.strides[v.dim_map[t]]))
        .collect::<Option<Vec<_>>>()?;
    let elem = map_elem(v.elem)?;
    // a constant stride as TMA takes strides: whole 16-byte units
    let whole = |st: &MapValue<usize>| match *st {
        MapValue::Const(c) => i64::from(c) * es % 16 == 0,
        MapValue::Arg(_) => true,
    };
    if elem.size() as i64 != es || !strides.iter().all(whole) {
        return None;
    }
    let w = smem.swizzle;
    let swizzle = match w {
        128 => MapSwizzle::B128,
        64 => MapSwizzle::B64,
        32 => MapSwizzle::B32,
        _ => return None,
    };
    let per = w / es;
    let (t0, t1) = (v.tile_shape[order[rank - 2]], v.tile_shape[order[rank - 1]]);
    let outer = t0.min(256);
    if t1 % per != 0 || t0 % outer != 0 {
        return None;
    }
    let mut boxes = Vec::new();
    for ib in 0..t1 / per {
        for ob in 0..t0 / outer {
            boxes.push(TmaBox {
                dst: ib * t0 * w + ob * outer * w,
                at: [ob * outer, ib * per],
            });
        }
    }
    // Every element lands where the layout puts it.
    let mask = w / 16 - 1;
    let lands = |b: &TmaBox| {
        b.dst % (8 * w) == 0
            && (0..outer).all(|j| {
                (0..per).all(|i| {
                    let lin = j * w + i * es;
                    let at = b.dst + (lin ^ (((lin >> 7) & mask) << 4));
                    let (r, c) = (b.at[0] + j, b.at[1] + i);
                    // (r, c) along the map's outer and inner dimensions.
                    at == if k_first != transposed {
                        smem.offset(c, r)
                    } else {
                        smem.offset(r, c)
                    }
                })
            })
    };
    if !boxes.iter().all(lands) {
        return None;
    }
    Some(TmaCopy {
        map: MapDecl {
            map: 0,
            base,
            dims,
            strides,
            elem,
            tf32: false,
            swizzle,
            box_dims: (v.tile_shape[..rank - 2].iter().map(|&t| t as u32))
                .chain([outer as u32, per as u32])
                .collect(),
        },
        boxes,
        bytes: t0 * t1 * es,
        transposed,
    })
}
