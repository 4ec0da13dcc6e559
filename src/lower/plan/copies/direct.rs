//! B operands copied straight from global to shared memory: a tensor-view
//! load whose only user is the B operand of an `mma.sync` product that
//! multiplies A from registers never passes through registers; where the
//! load stands, each thread issues `cp.async` copies of 16-byte chunks
//! into the product's B buffer.
use crate::ir::{Module, OpId, Opcode, Padding, ValueId};
use crate::lower::analysis::values::value_tile;
use crate::lower::analysis::view::{partition, PartitionInfo};
use crate::lower::plan::copies::load::Load;
use crate::lower::plan::copies::pipeline::{chunk_along, weak};
use crate::lower::plan::copies::tma::{tma_copy, TmaCopy};
use crate::lower::plan::engines::mma_sync::{a_fragment_layout, Kind};
use crate::lower::plan::engines::Engine;
use crate::lower::plan::layout::smem::Smem;
use crate::lower::plan::Plan;

/// A load copied straight into its product's B buffer.
#[derive(Clone, Debug)]
pub struct Direct {
    /// The product that reads the buffer.
    pub product: OpId,
    /// The view and partition the load reads.
    pub view: PartitionInfo,
    /// The tile dimension the copies run along.
    pub along: usize,
    /// Elements a copy.
    pub chunk: i64,
    /// Issued at the start of its block, before the ops ahead of it (none
    /// of which writes memory or holds regions other than a reduction's or
    /// a scan's, nor defines its operands), rather than where it stands.
    pub early: bool,
    /// Its first iteration's copy issued before its loop, each later one
    /// once the product has read the buffer ([`prefetches`]).
    pub prefetched: bool,
    /// For a prefetched copy, TMA's boxes where TMA can write the
    /// buffer's layout ([`tma`]).
    pub tma: Option<TmaCopy>,
}

/// Bytes of padding at the end of each B buffer row (keeps `ldmatrix`
/// phases free of bank conflicts, as the staged operands' rows).
pub const ROW_PAD: i64 = 16;

/// The rows, the bytes per row and the orientation (`[N][K]`) of the B
/// buffer of a copy of `p` along tile dimension `cd`, and whether its rows
/// are swizzled rather than padded (where `swizzled_rows` asks and a row
/// is a power of two bytes).
pub fn buffer_shape(p: &PartitionInfo, cd: usize, swizzled_rows: bool) -> (i64, i64, bool, bool) {
    let rank = p.tile_shape.len();
    let (kk, nn) = (p.tile_shape[rank - 2], p.tile_shape[rank - 1]);
    let nk = cd == rank - 2;
    let (rows, cols) = if nk { (nn, kk) } else { (kk, nn) };
    let row = cols * 2;
    let swizzled = swizzled_rows && row >= 128 && row & (row - 1) == 0;
    let stride = if swizzled { row } else { row + ROW_PAD };
    (rows, stride, nk, swizzled)
}

/// The bytes the B buffer of direct copy `d` takes (rows swizzled where
/// `swizzled_rows` asks), and its swizzled layout where `wgmma` reads it.
/// A buffer `wgmma` reads, or TMA writes ([`tma_layout`]), has room to
/// align it to 1024 bytes (and, after it, for the mbarrier of its TMA
/// copies: the buffer starts 16-byte aligned).
pub fn buffer_bytes(
    m: &Module,
    plan: &Plan,
    d: &Direct,
    swizzled_rows: bool,
) -> (i64, Option<Smem>) {
    let rank = d.view.tile_shape.len();
    let (rows, stride, nk, _) = buffer_shape(&d.view, d.along, swizzled_rows);
    let kn = [d.view.tile_shape[rank - 2], d.view.tile_shape[rank - 1]];
    match wgmma_b_layout(m, plan, d.product, kn, nk) {
        Some(s) => (s.bytes() + 1024, Some(s)),
        None => match d.tma.as_ref().and_then(|_| tma_layout(m, plan, d)) {
            Some(s) => (s.bytes() + 1024, None),
            None => (rows * stride, None),
        },
    }
}

/// The swizzled layout a TMA copy of direct copy `d` writes its buffer in:
/// `wgmma`'s where it reads the buffer, else TMA's own for `ldmatrix`
/// (`[N][K]` K-major for a transposed view such as `Kᵀ`, `[K][N]`
/// MN-major otherwise; rows over 128 bytes in 128-byte column blocks,
/// [`crate::lower::emit::copies::swizzle::Swizzle::for_tma`]).
pub fn tma_layout(m: &Module, plan: &Plan, d: &Direct) -> Option<Smem> {
    let rank = d.view.tile_shape.len();
    let (_, _, nk, _) = buffer_shape(&d.view, d.along, false);
    let [k, n] = [d.view.tile_shape[rank - 2], d.view.tile_shape[rank - 1]];
    wgmma_b_layout(m, plan, d.product, [k, n], nk).or_else(|| Smem::new(n, k, 2, !nk))
}

/// The bytes the B buffers of the direct copies among `ops` take (rows
/// swizzled where `swizzled_rows` asks): all of them, or the largest once
/// the entry reuses scratch (each buffer is free once its product has read
/// it).
pub fn body_buffer_bytes(
    m: &Module,
    plan: &Plan,
    ops: &[OpId],
    swizzled_rows: bool,
    reusing: bool,
) -> i64 {
    let bytes = ops
        .iter()
        .filter_map(|id| plan.copies.direct.get(id))
        .map(|d| buffer_bytes(m, plan, d, swizzled_rows).0);
    if reusing {
        bytes.max().unwrap_or(0)
    } else {
        bytes.sum()
    }
}

/// The sizes the B buffer of direct copy `d` may take: its rows padded, or
/// swizzled where emission asks (once it finds the shared memory for
/// the staged A beside them short).
pub fn buffer_options(m: &Module, plan: &Plan, d: &Direct) -> Vec<i64> {
    let mut sizes: Vec<i64> = [false, true]
        .into_iter()
        .map(|sw| buffer_bytes(m, plan, d, sw).0)
        .collect();
    sizes.dedup();
    sizes
}

/// The layout of the B buffer of product `user` (B of `k x n`, copied as
/// `[N][K]` rows when `nk`) when the product multiplies on `wgmma`
/// ([`crate::lower::plan::engines::mma_sync::on_wgmma`]).
fn wgmma_b_layout(m: &Module, plan: &Plan, user: OpId, [k, n]: [i64; 2], nk: bool) -> Option<Smem> {
    let Some(Engine::MmaSync(e)) = plan.engine(user) else {
        return None;
    };
    crate::lower::plan::engines::mma_sync::on_wgmma(m, user, e, plan.target, plan.warps)
        .then(|| Smem::new(n, k, 2, !nk))
        .flatten()
}

/// The entry's direct copies, by load op.
pub type Directs = rustc_hash::FxHashMap<OpId, Direct>;

/// Whether the B operand of product `id` is a load among `direct`.
pub fn copies_b(direct: &Directs, id: OpId) -> bool {
    direct.values().any(|d| d.product == id)
}

/// The single user of `v` in the whole module, if it has one use.
pub fn only_user(m: &Module, v: ValueId) -> Option<OpId> {
    let mut user = None;
    for id in m.walk() {
        let uses = m.ops[id].operands.iter().filter(|&&o| o == v).count();
        if uses == 0 {
            continue;
        }
        if uses > 1 || user.is_some() {
            return None;
        }
        user = Some(id);
    }
    user
}

/// The load `load` as a direct B copy, if it is one: a weak, zero-padded
/// tensor-view load of 16-bit elements whose tile (leading dimensions of 1
/// aside) is the B operand of an `mma.sync` product in the same block that
/// multiplies A from registers, copyable in aligned 16-byte chunks along N
/// or K.
pub fn direct(m: &Module, plan: &Plan, load: OpId) -> Option<Direct> {
    let o = &m.ops[load];
    if plan.target.always_swizzle || !weak(m, load) {
        return None;
    }
    let p = partition(m, o.operand("view")?)?;
    if p.sparse_dim.is_some()
        || p.elem.bits() != 16
        || crate::lower::analysis::view::load_padding(p.padding) != Padding::Zero
    {
        return None;
    }
    let res = *o.results.first()?;
    let mut v = res;
    let mut user = only_user(m, v)?;
    if m.ops[user].opcode == Opcode::Reshape {
        v = *m.ops[user].results.first()?;
        user = only_user(m, v)?;
    }
    let mo = &m.ops[user];
    if mo.opcode != Opcode::MmaF || mo.operand("rhs") != Some(v) || mo.operand("lhs") == Some(v) {
        return None;
    }
    let Some(Engine::MmaSync(mplan)) = plan.engine(user) else {
        return None;
    };
    let (bshape, _) = value_tile(m, v)?;
    let (ashape, _) = value_tile(m, mo.operand("lhs")?)?;
    if mplan.kind != Kind::Half || mplan.sliced || bshape.len() != 2 {
        return None;
    }
    let frag = a_fragment_layout(mplan, &ashape)?;
    if !plan
        .layouts
        .get(&mo.operand("lhs")?)
        .is_some_and(|l| **l == frag)
    {
        return None;
    }
    // The tile is B's shape with leading 1s.
    let rank = p.tile_shape.len();
    if rank < 2
        || p.tile_shape[rank - 2..] != bshape[..]
        || p.tile_shape[..rank - 2].iter().any(|&d| d != 1)
    {
        return None;
    }
    // Both in the same block, the load first.
    let block = crate::lower::analysis::chains::enclosing_block(m, load)?;
    if !block.ops.contains(&user) {
        return None;
    }
    let (cd, chunk) = [rank - 1, rank - 2]
        .into_iter()
        .find_map(|cd| Some((cd, chunk_along(plan, &p, cd, &[16])?)))?;
    Some(Direct {
        product: user,
        view: p,
        along: cd,
        chunk,
        early: false,
        prefetched: false,
        tma: None,
    })
}

/// The TMA copy of direct copy `d` of `load`, prefetched (the caller
/// checks) in a loop of induction variable `iv` that indexes it, where TMA can copy the tile
/// into the buffer's layout ([`tma_layout`], and
/// [`crate::lower::plan::copies::tma::tma_copy`]; a transposed view
/// such as attention's `Kᵀ` too). One thread issues its boxes, which
/// complete on the buffer's own mbarrier.
pub fn tma(m: &Module, plan: &Plan, load: OpId, d: &Direct, iv: ValueId) -> Option<TmaCopy> {
    let index = m.ops[load].operand_group("index").to_vec();
    if !index.contains(&iv) {
        return None;
    }
    let s = tma_layout(m, plan, d)?;
    let ld = Load {
        op: load,
        view: d.view.clone(),
        index,
        chunk: Some(d.chunk),
    };
    tma_copy(m, plan, &ld, &s, true)
}

/// The loads among the first ops of block `ops` (of an `if`, `for` or
/// `loop`) that no op writing memory or holding regions other than a
/// reduction's or a scan's precedes, and whose operands come from outside
/// the block.
pub fn early_loads(m: &Module, ops: &[OpId]) -> Vec<OpId> {
    let mut out = Vec::new();
    let mut inside = rustc_hash::FxHashSet::default();
    for &id in ops {
        let op = &m.ops[id];
        let pure_regions = matches!(op.opcode, Opcode::Reduce | Opcode::Scan);
        if crate::lower::analysis::memory::writes_or_prints(op.opcode)
            || !(op.regions.is_empty() || pure_regions)
        {
            break;
        }
        let outside = op.operands.iter().all(|v| !inside.contains(v));
        inside.extend(op.results.iter().copied());
        if op.opcode == Opcode::LoadViewTko && outside {
            out.push(id);
        }
    }
    out
}

/// Accumulator registers a thread above which a product's next copies
/// are not issued ahead: their addresses would spill the loop.
const MAX_ACC_REGS_AHEAD: usize = 64;

/// The direct copies of `for` op `id` whose first iteration's copy is
/// issued before the loop (`direct`: the entry's direct copies): the loads
/// at the top level of the body indexed by the induction variable and by
/// values from before the loop, whose product is at the body's top level
/// too, when nothing in the body writes memory, no `continue` stands in
/// an `if`, the induction variable is i32 or i64, and no such product's
/// accumulator passes 64 registers a thread, but where TMA copies the
/// tile ([`tma`]) for `wgmma` (on `mma.sync`, ptxas spills more: 8 -> 132
/// bytes for a 64x256 accumulator in four warps on sm_100). On sm_12x
/// only the copies TMA makes: ptxas spills what
/// the next `cp.async` copies' addresses add (the 128x128 attention loops:
/// 32 -> 140 bytes), where a TMA copy takes a few coordinates.
pub fn prefetches(
    m: &Module,
    plan: &Plan,
    direct: &Directs,
    id: OpId,
) -> Vec<(OpId, Option<TmaCopy>)> {
    let op = &m.ops[id];
    let Some(block) = op.regions.first().and_then(|r| r.blocks.first()) else {
        return Vec::new();
    };
    let body = &block.ops;
    if !crate::lower::plan::copies::pipeline::wide_induction(m, id)
        || block.args.is_empty()
        || crate::lower::analysis::memory::early_continue(m, id)
        || crate::lower::analysis::memory::any_writes(m, body)
    {
        return Vec::new();
    }
    let iv = block.args[0];
    let inside = |v: ValueId| body.iter().any(|&b| m.ops[b].results.contains(&v));
    let mut picked = Vec::new();
    for &load in body {
        let Some(d) = direct.get(&load) else {
            continue;
        };
        let Some(Engine::MmaSync(mp)) = plan.engine(d.product) else {
            continue;
        };
        let copy = tma(m, plan, load, d, iv);
        let by_tma = copy.is_some();
        let on_wgmma = crate::lower::plan::engines::mma_sync::on_wgmma(
            m,
            d.product,
            mp,
            plan.target,
            plan.warps,
        );
        if mp.acc.num_registers() > MAX_ACC_REGS_AHEAD && !(by_tma && on_wgmma) {
            return Vec::new();
        }
        let index = m.ops[load].operand_group("index");
        let ahead = index.iter().all(|&v| v == iv || !inside(v));
        let cheap = !plan.target.is_sm12x() || by_tma;
        if ahead && cheap && body.contains(&d.product) {
            picked.push((load, copy));
        }
    }
    // On sm_12x, all of them at once or none: a buffer kept through the
    // loop must leave room for the others (else they take turns in the
    // same bytes, copied at the top of the body).
    let bytes: i64 = (picked.iter())
        .filter_map(|(l, _)| direct.get(l))
        .map(|d| tma_layout(m, plan, d).map_or(i64::MAX / 4, |s| s.bytes() + 1024))
        .sum();
    if plan.target.is_sm12x() && bytes > plan.target.max_shared_bytes() / 4 * 3 {
        return Vec::new();
    }
    picked
}
