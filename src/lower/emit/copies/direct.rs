//! B operands copied straight from global to shared memory.
//!
//! A tensor-view load whose only user is the B operand of an `mma.sync`
//! product (f16/bf16, A in registers as fragments, [`crate::lower::emit::ops::mma_sync`])
//! never passes through registers: where the load stands, each thread
//! issues `cp.async` copies of 16-byte chunks into the product's B buffer
//! (out-of-bounds bytes zero-filled, as the zero padding reads), and the
//! product waits for them. The buffer keeps the chunks' memory order: B as
//! `[K][N + pad]` when N runs along memory (read with `ldmatrix.trans`),
//! `[N][K + pad]` when K does (a transposed view such as attention's Kᵀ,
//! read with plain `ldmatrix`). Attention's K and V tiles then cost no
//! registers, and their copies overlap the work between load and product.
use smallvec::smallvec;
use std::rc::Rc;

use crate::ir::ValueId;
use crate::lower::analysis::view::PartitionInfo;
use crate::lower::emit::context::{Lowered, Lowerer, Tile};
use crate::lower::emit::states::Deferred;
use crate::lower::error::LowerError;
use crate::ptx::{Opc, Operand};
use rustc_hash::FxHashMap as HashMap;

use crate::ir::OpId;
use crate::lower::emit::copies::address::thread_address_from;
use crate::lower::emit::copies::cp_async::{chunk_bytes, chunk_source, cp_async};
use crate::lower::emit::copies::cp_async::{commit, wait};
use crate::lower::emit::copies::direct_tma::TmaDirect;
use crate::lower::emit::copies::swizzle::{Swizzle, Swizzled};
use crate::lower::emit::copies::swizzled::Addresses;
use crate::lower::emit::ops::staging::aligned_base;
use crate::lower::emit::ops::staging::alloc;
use crate::lower::emit::ops::view_access::prepare;
use crate::lower::plan::alloc::choices::Issue;
use crate::lower::plan::copies::direct as plan_direct;
use crate::lower::plan::copies::load::Load;
use crate::lower::plan::layout::coalesced::along_vec;
use crate::lower::plan::layout::smem::Smem;
use crate::lower::simt::membar::Access;

/// The copies of this file's loads while an entry is emitted.
#[derive(Default)]
pub struct Copies {
    /// The loads whose `cp.async` copies into a product's B buffer are
    /// committed and not yet waited for, oldest first.
    in_flight: Vec<OpId>,
    /// Loads whose copies a loop's prologue issued, and their buffers
    /// ([`prefetch`]).
    prefetched: HashMap<OpId, Rc<DirectB>>,
    /// Next-iteration copies of prefetched loads waiting to be issued
    /// ([`defer_next`]).
    next: Vec<Rc<DirectB>>,
    /// Whether buffers lose their row padding and swizzle their rows
    /// instead ([`set_swizzled_rows`]).
    swizzled_rows: bool,
}

/// Whether B buffers from now on are unpadded, their rows swizzled (where
/// a row is a power of two bytes, 128 or more): an engine that stages
/// another operand beside them asks for it where padded buffers leave it
/// no room.
pub fn set_swizzled_rows(l: &mut Lowerer, on: bool) {
    l.states.get::<Copies>().swizzled_rows = on;
}

/// Whether B buffers are unpadded, their rows swizzled.
pub fn swizzled_rows(l: &Lowerer) -> bool {
    l.states.peek::<Copies>().is_some_and(|c| c.swizzled_rows)
}

/// A B operand copied directly: where its buffer lies and how.
#[derive(Clone, Debug)]
pub struct DirectB {
    /// The load.
    pub load: OpId,
    /// The bytes of the scratch array the buffer spans (from its offset).
    pub bytes: std::ops::Range<i64>,
    /// Bytes per buffer row.
    pub stride: i64,
    /// Rows unpadded and swizzled ([`swizzled_rows`]).
    pub rows_swizzled: bool,
    /// Rows `[N][K]` (K along memory) rather than `[K][N]`.
    pub nk: bool,
    /// The swizzled layout of a buffer that `wgmma` reads
    /// ([`crate::lower::emit::ops::mma_sync_wgmma`]), 1024-aligned above its offset; else rows of
    /// `stride` bytes.
    pub swizzled: Option<Smem>,
    /// TMA's layout of a buffer that `mma.sync`'s `ldmatrix` reads
    /// (through [`Swizzle::for_tma`]), 1024-aligned above its offset,
    /// whether TMA or `cp.async` fills it.
    pub tma_rows: Option<Smem>,
    /// For a load prefetched before its loop, how its product issues the
    /// next iteration's copy into the buffer ([`prefetch`]).
    pub next: Option<NextCopy>,
    /// Copied by TMA, completing on the buffer's own mbarrier, rather
    /// than by `cp.async` ([`crate::lower::emit::copies::direct_tma`]).
    pub tma: Option<Rc<TmaDirect>>,
    /// The view and partition the load reads.
    part: PartitionInfo,
    /// The tile dimension the copies run along.
    cd: usize,
    /// Elements a copy.
    chunk: i64,
}

/// The plan's direct copy of `load`, if it is one: its product, the view
/// it reads, the tile dimension the copies run along and the elements a
/// copy ([`crate::lower::plan::copies::direct`]).
fn candidate(l: &Lowerer, load: OpId) -> Option<(OpId, PartitionInfo, usize, i64)> {
    let d = l.plan.copies.direct.get(&load)?;
    Some((d.product, d.view.clone(), d.along, d.chunk))
}

/// The rows, the bytes per row and the orientation of the B buffer of a
/// copy of `p` along tile dimension `cd`, and whether its rows are
/// swizzled ([`crate::lower::plan::copies::direct::buffer_shape`], where
/// [`swizzled_rows`] asks).
fn buffer_shape(l: &Lowerer, p: &PartitionInfo, cd: usize) -> (i64, i64, bool, bool) {
    plan_direct::buffer_shape(p, cd, swizzled_rows(l))
}

/// The bytes the B buffer of the plan's direct copy `d` takes, its
/// swizzled layout where `wgmma` reads it, and TMA's layout where
/// `ldmatrix` reads one TMA may write
/// ([`crate::lower::plan::copies::direct::buffer_bytes`],
/// [`crate::lower::plan::copies::direct::tma_layout`]).
fn buffer_bytes(l: &Lowerer, d: &plan_direct::Direct) -> (i64, Option<Smem>, Option<Smem>) {
    let (bytes, swizzled) = plan_direct::buffer_bytes(l.m, l.plan, d, swizzled_rows(l));
    let tma_rows = match (&swizzled, &d.tma) {
        (None, Some(_)) => plan_direct::tma_layout(l.m, l.plan, d),
        _ => None,
    };
    (bytes, swizzled, tma_rows)
}

/// Issues, before the other ops of a block `ops`, the direct copies of the
/// block's loads the plan issues early
/// ([`crate::lower::plan::copies::Direct::early`]): their latency then
/// overlaps everything up to their products. With `only`, just those
/// loads, after `product`. Each where the plan found room for its buffer
/// ([`crate::lower::plan::alloc::choices::Issue`]: above the scratch in
/// use first, after a product wherever it fits). Returns the loads issued
/// and those left for want of room.
pub fn issue_early(
    l: &mut Lowerer,
    ops: &[OpId],
    only: Option<&[OpId]>,
    product: Option<OpId>,
) -> Result<(Vec<OpId>, Vec<OpId>), LowerError> {
    let mut out = Vec::new();
    let mut waiting = Vec::new();
    for &id in ops {
        let early = l.plan.copies.direct.get(&id).is_some_and(|d| d.early);
        if !early || only.is_some_and(|o| !o.contains(&id)) {
            continue;
        }
        let copied = l.states.get::<Copies>().prefetched.contains_key(&id);
        if !copied && candidate(l, id).is_none() {
            continue;
        }
        let issue = match product {
            Some(product) => Issue::AfterProduct { product },
            None => Issue::Early,
        };
        if !copied && !l.chosen().issued(id, issue) {
            waiting.push(id);
            continue;
        }
        let before = l.set_loc(id);
        let outer = l.scratch.claim_for(Some(id));
        crate::lower::emit::ops::tokens::order(l, id);
        let done = lower_load(l, id);
        l.scratch.claim_for(outer);
        l.b.loc = before;
        if done? {
            if let Some(&t) = l.m.ops[id].results.get(1) {
                l.vals.insert(t, Lowered::Nothing);
            }
            out.push(id);
        }
    }
    Ok((out, waiting))
}

/// Lowers load `load` as a direct B copy if it is one (binding its result
/// to the copy); false, with nothing emitted, otherwise. A load prefetched
/// before its loop ([`prefetch`]) is bound to the copy already in flight.
pub fn lower_load(l: &mut Lowerer, load: OpId) -> Result<bool, LowerError> {
    if let Some(d) = l.states.get::<Copies>().prefetched.get(&load).cloned() {
        if let Some(&res) = l.m.ops[load].results.first() {
            l.vals.insert(res, Lowered::Deferred(Deferred::new(d)));
        }
        return Ok(true);
    }
    let Some((_, p, cd, chunk)) = candidate(l, load) else {
        return Ok(false);
    };
    if l.chosen().issued(load, Issue::Nowhere) {
        // Nowhere in shared memory, not even over dead buffers: through
        // registers, then.
        return Ok(false);
    }
    let d = Rc::new(buffer(l, load, (p, cd, chunk), None)?);
    copy(l, &d, None)?;
    if let Some(&res) = l.m.ops[load].results.first() {
        l.vals.insert(res, Lowered::Deferred(Deferred::new(d)));
    }
    Ok(true)
}

/// Allocates the B buffer of its product for the copy of `load` (`p`
/// along tile dimension `cd`, `chunk` elements a copy).
fn buffer(
    l: &mut Lowerer,
    load: OpId,
    (p, cd, chunk): (PartitionInfo, usize, i64),
    next: Option<NextCopy>,
) -> Result<DirectB, LowerError> {
    let (_, stride, nk, rows_swizzled) = buffer_shape(l, &p, cd);
    let planned = l
        .plan
        .copies
        .direct
        .get(&load)
        .ok_or_else(|| l.unsupported(load))?;
    let (bytes, swizzled, tma_rows) = buffer_bytes(l, planned);
    let buf = alloc(
        l,
        crate::lower::plan::buffers::What::CopiedB,
        &[bytes / 2],
        crate::lower::analysis::values::Elem::Num(crate::ir::Scalar::F16),
    )?;
    Ok(DirectB {
        load,
        bytes: buf.bytes(),
        stride,
        rows_swizzled: rows_swizzled && swizzled.is_none() && tma_rows.is_none(),
        nk,
        swizzled,
        tma_rows,
        next,
        tma: None,
        part: p,
        cd,
        chunk,
    })
}

/// Issues the `cp.async` copies of `d.load` into `d`'s buffer and commits
/// them as a group. With `next`, the copies are the next iteration's: the
/// load's index is taken at the induction variable plus the step, and
/// bounds are checked along every dimension it indexes (past the last
/// tile, nothing is read).
fn copy(l: &mut Lowerer, d: &DirectB, next: Option<&NextCopy>) -> Result<(), LowerError> {
    if let Some(t) = &d.tma {
        return copy_by_tma(l, d, t, next);
    }
    let (load, p, cd, chunk) = (d.load, &d.part, d.cd, d.chunk);
    let rank = p.tile_shape.len();
    let (stride, nk) = (d.stride, d.nk);
    let layout = along_vec(&p.tile_shape, cd, l.plan.warps, chunk);
    if !crate::lower::plan::layout::disjoint(&layout) {
        return Err(l.unsupported_feature(load, "this copy layout"));
    }
    let byte = |b: &[i64]| -> i64 {
        let (k, n) = (b[rank - 2], b[rank - 1]);
        if nk {
            n * stride + k * 2
        } else {
            k * stride + n * 2
        }
    };
    let index = l.m.ops[load].operand_group("index").to_vec();
    // The next iteration's index: the induction variable rebound to
    // `iv + step` while the addresses are computed.
    let saved = match next {
        Some(n) => {
            let (t, ahead) = n.ahead(l, load)?;
            let mut moved = t.clone();
            moved.regs = vec![ahead];
            l.vals.insert(n.iv, Lowered::Tile(moved));
            Some((n.iv, t))
        }
        None => None,
    };
    let prepared = prepare(l, load, p, &index, &layout);
    if let Some((iv, t)) = saved {
        l.vals.insert(iv, Lowered::Tile(t));
    }
    let mut a = prepared?;
    if let Some(n) = next {
        for (i, v) in index.iter().enumerate() {
            if *v == n.iv {
                a.check[i] = true;
            }
        }
    }
    // The destination: padded rows, or the swizzled layout (a thread part
    // xor a register part, from a 1024-aligned base).
    let mut dest = match d.swizzled.as_ref().or(d.tma_rows.as_ref()) {
        Some(s) => {
            let base = aligned_base(l, d.bytes.start);
            let off = |b: &[i64]| s.offset(b[rank - 1], b[rank - 2]);
            Dest::Swizzled(Addresses::new(l, &layout, off, base))
        }
        None if d.rows_swizzled => {
            let (start, at) = thread_address_from(l, &layout, d.bytes.start, byte);
            Dest::SwizzledRows(Swizzled::new(l, Swizzle::for_rows(stride), start, at))
        }
        None => Dest::Rows(thread_address_from(l, &layout, d.bytes.start, byte).1),
    };
    // The copies write the buffer from their issue until their wait, after
    // which a barrier comes before any read ([`wait_for`]); the load owns
    // these writes (they do not wait for each other).
    l.declare(Access::Write, d.bytes.clone(), Some(d.load));
    let owner = l.owner_pred(&layout);
    if let Some(q) = owner {
        l.b.begin_if(q, true);
    }
    let bytes = chunk * 2;
    for r in (0..layout.num_registers()).step_by(chunk as usize) {
        if layout.canonical_register(r) != r {
            continue;
        }
        let c = layout.apply(r, 0);
        // The register's byte offset from the thread's first element.
        let imm = layout.register_offset(r, byte);
        let dst = match &mut dest {
            Dest::Rows(smem) => Operand::Addr(*smem, imm),
            Dest::Swizzled(addrs) => {
                let (at, imm) = addrs.at(l, r);
                Operand::Addr(at, imm)
            }
            Dest::SwizzledRows(s) => s.addr(l, imm),
        };
        let src = chunk_source(l, &mut a, &c, r);
        let size = chunk_bytes(l, &mut a, &c, None, cd, (chunk, 2));
        cp_async(l, dst, src, bytes, size);
    }
    if owner.is_some() {
        l.b.end_if();
    }
    commit(l);
    l.states.get::<Copies>().in_flight.push(load);
    Ok(())
}

/// Issues the TMA copy `t` of `d`'s load: the iteration's the induction
/// variable is bound to (before the loop, the first), or with `next` the
/// next one's (`iv + step`; past the last tile, the boxes read zeros).
fn copy_by_tma(
    l: &mut Lowerer,
    d: &DirectB,
    t: &TmaDirect,
    next: Option<&NextCopy>,
) -> Result<(), LowerError> {
    let n = d.next.as_ref().ok_or_else(|| l.unsupported(d.load))?;
    let iteration = match next {
        Some(next) => next.ahead(l, d.load)?.1,
        None => {
            let Some(Lowered::Tile(iv)) = l.vals.get(&n.iv).cloned() else {
                return Err(l.unsupported(d.load));
            };
            iv.regs[0]
        }
    };
    // Only the first copy, or ldmatrix's reads, call for the proxy fence.
    let generic = next.is_none() || d.swizzled.is_none();
    t.issue(l, (iteration, n.ty), generic, next.is_some());
    Ok(())
}

/// How a prefetched copy finds the next iteration's tile.
#[derive(Clone, Debug)]
pub struct NextCopy {
    /// The loop's induction variable.
    pub iv: ValueId,
    /// The step register.
    pub step: crate::ptx::Reg,
    /// The induction variable's type.
    pub ty: crate::ptx::Ty,
}

impl NextCopy {
    /// The induction variable's lowered tile and the next iteration's
    /// value, `iv + step` (for the copy of `load`).
    fn ahead(&self, l: &mut Lowerer, load: OpId) -> Result<(Tile, crate::ptx::Reg), LowerError> {
        let Some(Lowered::Tile(t)) = l.vals.get(&self.iv).cloned() else {
            return Err(l.unsupported(load));
        };
        let ahead = l.b.op(
            Opc::Add,
            &[],
            &[self.ty],
            self.ty,
            smallvec![Operand::Reg(t.regs[0]), Operand::Reg(self.step)],
        );
        Ok((t, ahead))
    }
}

/// Before loop `id` (induction variable `iv`, bound to the first value,
/// stepping by `step` of type `ty`): issues the copies of the first
/// iteration's direct B loads the plan prefetches
/// ([`crate::lower::plan::copies::direct::prefetches`]), where the plan
/// found room for their buffers. Each product then has its load's next copy issued into
/// the same buffer once it has read it ([`defer_next`]), so a tile's copy
/// overlaps the rest of the iteration rather than only the ops before its
/// product.
/// Returns the loads prefetched ([`drain`] them after the loop).
pub fn prefetch(
    l: &mut Lowerer,
    id: OpId,
    iv: ValueId,
    step: crate::ptx::Reg,
    ty: crate::ptx::Ty,
) -> Result<Vec<OpId>, LowerError> {
    let body = l.m.ops[id].body_ops();
    let picked: Vec<_> = body
        .iter()
        .filter(|load| l.plan.copies.direct.get(load).is_some_and(|d| d.prefetched))
        .filter_map(|&load| candidate(l, load).map(|c| (load, c.1, c.2, c.3)))
        .collect();
    let mut out = Vec::new();
    let mut buffers = Vec::new();
    for (load, p, cd, chunk) in picked {
        if !l.chosen().issued(load, Issue::BeforeLoop) {
            continue;
        }
        let next = NextCopy { iv, step, ty };
        let mut d = buffer(l, load, (p, cd, chunk), Some(next))?;
        let planned = l.plan.copies.direct.get(&load).and_then(|d| d.tma.clone());
        if let (Some(copy), Some(s)) = (planned, d.swizzled.or(d.tma_rows)) {
            let ld = Load {
                op: load,
                view: d.part.clone(),
                index: l.m.ops[load].operand_group("index").to_vec(),
                chunk: Some(chunk),
            };
            let at = (d.bytes.clone(), s.bytes());
            d.tma = Some(Rc::new(TmaDirect::set_up(l, &ld, &copy, iv, at)?));
        }
        buffers.push(Rc::new(d));
    }
    // One fence and one barrier publish every TMA copy's barrier before
    // any is used.
    if buffers.iter().any(|d| d.tma.is_some()) {
        crate::lower::emit::copies::direct_tma::publish(l);
    }
    for d in buffers {
        copy(l, &d, None)?;
        out.push(d.load);
        l.states.get::<Copies>().prefetched.insert(d.load, d);
    }
    Ok(out)
}

/// Defers the next iteration's copy of a prefetched load whose product
/// has read the buffer to the next product or the end of the body
/// ([`issue_next`]): issued there, its addresses take registers where the
/// product's operands no longer do, and the barrier it waits for (the
/// analysis of the declared accesses puts it before the copy's write)
/// lets every warp run on until then.
pub fn defer_next(l: &mut Lowerer, d: &Rc<DirectB>) {
    if d.next.is_some() {
        l.states.get::<Copies>().next.push(d.clone());
    }
}

/// Issues the deferred next-iteration copies ([`defer_next`]).
pub fn issue_next(l: &mut Lowerer) -> Result<(), LowerError> {
    for d in std::mem::take(&mut l.states.get::<Copies>().next) {
        copy(l, &d, d.next.as_ref())?;
    }
    Ok(())
}

/// After a loop whose loads `loads` were prefetched: waits for the copies
/// still in flight (past the last iteration), so their buffers may serve
/// again.
pub fn drain(l: &mut Lowerer, loads: &[OpId]) {
    if loads.is_empty() {
        return;
    }
    // cp.async groups of these loads (or others') still in flight.
    let copies = l.states.get::<Copies>();
    let by_cp_async = !copies.in_flight.is_empty()
        || loads
            .iter()
            .any(|x| copies.prefetched.get(x).is_some_and(|d| d.tma.is_none()));
    if by_cp_async {
        wait(l, 0);
    }
    l.states.get::<Copies>().in_flight.clear();
    let mut by_tma = Vec::new();
    for x in loads {
        // The copies past the last iteration wrote their buffer until
        // here: what writes it next waits for a barrier after this.
        if let Some(d) = l.states.get::<Copies>().prefetched.remove(x) {
            match &d.tma {
                Some(t) => {
                    t.wait(l);
                    by_tma.push(t.clone());
                }
                None => l.declare(Access::Write, d.bytes.clone(), Some(d.load)),
            }
        }
    }
    // Every thread is past its last wait before thread 0 invalidates the
    // barriers.
    if !by_tma.is_empty() {
        l.barrier();
        for t in by_tma {
            t.invalidate(l);
        }
    }
}

/// Where a copy's chunks land.
enum Dest {
    /// Padded rows: the thread's address plus a register immediate.
    Rows(crate::ptx::Reg),
    /// A swizzled `wgmma` layout.
    Swizzled(Addresses),
    /// Unpadded rows, swizzled for `ldmatrix`.
    SwizzledRows(Swizzled),
}

/// Binds the result of reshape `id` to what its operand was lowered to
/// when that is a load a product reads itself (copied directly, or
/// streamed, [`crate::lower::emit::copies::stream`]); false otherwise.
pub fn forward_reshape(l: &mut Lowerer, id: OpId) -> bool {
    let op = &l.m.ops[id];
    let (Some(src), Some(&res)) = (op.operands.first(), op.results.first()) else {
        return false;
    };
    match l.vals.get(src) {
        Some(v @ Lowered::Deferred(_)) => {
            let v = v.clone();
            l.vals.insert(res, v);
            true
        }
        _ => false,
    }
}

/// Waits for the copies into `d`'s buffer: on its barrier where TMA
/// copies it, else as [`wait_for`] (each thread its own chunks: a barrier
/// must follow before the buffer is read).
pub fn wait_for_copy(l: &mut Lowerer, d: &DirectB) {
    match &d.tma {
        Some(t) => t.wait(l),
        None => wait_for(l, d.load),
    }
}

/// Declares the product's reads of `d`'s buffer (at the point from which
/// they run until the product is done). Where TMA fills the buffer, its
/// mbarrier orders the copy's writes before them (every thread waited on
/// it, [`wait_for_copy`]) and the next copy's barrier orders them before
/// its writes ([`crate::lower::emit::copies::direct_tma::TmaDirect::issue`]):
/// the load owns them. Else the barrier analysis orders them.
pub fn declare_reads(l: &mut Lowerer, d: &DirectB) {
    let owner = d.tma.as_ref().map(|_| d.load);
    l.declare(Access::Read, d.bytes.clone(), owner);
}

/// Waits for the copies of `load` (`cp.async.wait_group` allowing the
/// copies committed after it to go on).
pub fn wait_for(l: &mut Lowerer, load: OpId) {
    let in_flight = &mut l.states.get::<Copies>().in_flight;
    let later = match in_flight.iter().position(|&x| x == load) {
        Some(p) => {
            let later = in_flight.len() - p - 1;
            in_flight.drain(..=p);
            later
        }
        None => 0,
    };
    wait(l, later as i64);
}

/// The direct copy `v` was lowered to, if any.
pub fn direct(l: &Lowerer, v: ValueId) -> Option<Rc<DirectB>> {
    match l.vals.get(&v) {
        Some(Lowered::Deferred(d)) => d.get::<DirectB>(),
        _ => None,
    }
}
