//! B operands copied straight from global to shared memory.
//!
//! A tensor-view load whose only user is the B operand of an `mma.sync`
//! product (f16/bf16, A in registers as fragments, [`super::mma_sync`])
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

use crate::ir::{Opcode, Padding, ValueId};
use crate::lower::kernel::{Lowered, Lowerer};
use crate::lower::layout::{Blocked, LinearLayout};
use crate::lower::values::value_tile;
use crate::lower::view::{partition, Extent, PartitionInfo};
use crate::lower::LowerError;
use crate::ptx::{Inst, Opc, Operand, Reg, Ty};

use super::memory::{element, ordering, prepare};
use super::mma::{engine, Engine};
use super::mma_sync::{a_fragment_layout, Kind};
use super::mma_sync_smem::{bin, thread_address_from};
use super::staging::alloc;
use crate::ir::OpId;

/// Bytes of padding at the end of each buffer row (keeps `ldmatrix`
/// phases free of bank conflicts, as the staged operands' rows).
const ROW_PAD: i64 = 16;

/// A B operand copied directly: where its buffer lies and how.
#[derive(Clone, Debug)]
pub struct DirectB {
    /// The load.
    pub load: OpId,
    /// The product it feeds.
    pub mma: OpId,
    /// The buffer's byte offset in the scratch array.
    pub offset: i64,
    /// Bytes per buffer row.
    pub stride: i64,
    /// Rows `[N][K]` (K along memory) rather than `[K][N]`.
    pub nk: bool,
}

/// The single user of `v` and whether it is the only use in the whole
/// entry.
fn only_user(l: &Lowerer, v: ValueId) -> Option<OpId> {
    let mut user = None;
    for id in l.m.walk() {
        let uses = l.m.ops[id].operands.iter().filter(|&&o| o == v).count();
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

/// Elements per 16-byte chunk along tile dimension `cd` of `p`, when
/// every chunk starts 16-byte aligned.
fn chunk(l: &Lowerer, p: &PartitionInfo, cd: usize) -> Option<i64> {
    let eb = i64::from(p.elem.bits() / 8);
    let v = 16 / eb;
    let d = *p.dim_map.get(cd)?;
    let fact = |e: &Extent| match e {
        Extent::Static(s) => crate::lower::facts::largest_pow2_dividing(s.unsigned_abs()) as i64,
        Extent::Dynamic(x) => l.facts.get(x).map_or(1, |f| f.divisor as i64),
    };
    let base_align = l.facts.get(&p.base).map_or(1, |f| f.divisor as i64);
    (p.strides.get(d) == Some(&Extent::Static(1))
        && p.tile_shape[cd] % v == 0
        && p.steps[cd] % v == 0
        && base_align % 16 == 0
        && p.strides
            .iter()
            .enumerate()
            .all(|(k, s)| k == d || fact(s) % v == 0))
    .then_some(v)
}

/// The load `load` as a direct B copy, if it is one: a weak, zero-padded
/// tensor-view load of 16-bit elements whose tile (leading dimensions of 1
/// aside) is the B operand of an `mma.sync` product in the same block that
/// multiplies A from registers, copyable in aligned 16-byte chunks along N
/// or K.
fn candidate(l: &Lowerer, load: OpId) -> Option<(OpId, PartitionInfo, usize, i64)> {
    let m = l.m;
    let o = &m.ops[load];
    if l.target.always_swizzle || !ordering(l, load).is_ok_and(|o| o.is_empty()) {
        return None;
    }
    let p = partition(m, o.operand("view")?)?;
    if p.sparse_dim.is_some()
        || p.elem.bits() != 16
        || crate::lower::view::load_padding(p.padding) != Padding::Zero
    {
        return None;
    }
    let res = *o.results.first()?;
    let mut v = res;
    let mut user = only_user(l, v)?;
    if m.ops[user].opcode == Opcode::Reshape {
        v = *m.ops[user].results.first()?;
        user = only_user(l, v)?;
    }
    let mo = &m.ops[user];
    if mo.opcode != Opcode::MmaF || mo.operand("rhs") != Some(v) || mo.operand("lhs") == Some(v) {
        return None;
    }
    let Engine::MmaSync(plan) = engine(m, user, l.target, l.warps) else {
        return None;
    };
    let (bshape, _) = value_tile(m, v)?;
    let (ashape, _) = value_tile(m, mo.operand("lhs")?)?;
    if plan.kind != Kind::Half || plan.sliced || bshape.len() != 2 {
        return None;
    }
    let frag = a_fragment_layout(&plan, &ashape)?;
    if *l.layout_of(mo.operand("lhs")?) != frag {
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
    let block = super::mma_chain::enclosing_block(m, load)?;
    if !block.ops.contains(&user) {
        return None;
    }
    let cd = [rank - 1, rank - 2]
        .into_iter()
        .find(|&cd| chunk(l, &p, cd).is_some())?;
    let chunk = chunk(l, &p, cd)?;
    Some((user, p, cd, chunk))
}

/// The rows, the bytes per row and the orientation (`[N][K]`) of the B
/// buffer of a copy of `p` along tile dimension `cd`.
fn buffer_shape(p: &PartitionInfo, cd: usize) -> (i64, i64, bool) {
    let rank = p.tile_shape.len();
    let (kk, nn) = (p.tile_shape[rank - 2], p.tile_shape[rank - 1]);
    let nk = cd == rank - 2;
    let (rows, cols) = if nk { (nn, kk) } else { (kk, nn) };
    (rows, cols * 2 + ROW_PAD, nk)
}

/// Issues, before the other ops of a block `ops`, the direct copies of the
/// block's loads whose operands all come from outside the block and that
/// no op writing memory (or holding regions other than a reduction's or
/// a scan's combiner) precedes: their latency then
/// overlaps everything up to their products. Returns the loads issued.
pub fn issue_early(l: &mut Lowerer, ops: &[OpId]) -> Result<Vec<OpId>, LowerError> {
    let mut out = Vec::new();
    let mut inside = rustc_hash::FxHashSet::default();
    for &id in ops {
        let op = &l.m.ops[id];
        let writes = matches!(
            op.opcode,
            Opcode::StorePtrTko
                | Opcode::StoreViewTko
                | Opcode::AtomicRMWTko
                | Opcode::AtomicCASTko
                | Opcode::AtomicRedViewTko
                | Opcode::PrintTko
        );
        let pure_regions = matches!(op.opcode, Opcode::Reduce | Opcode::Scan);
        if writes || !(op.regions.is_empty() || pure_regions) {
            break;
        }
        let outside = op.operands.iter().all(|v| !inside.contains(v));
        inside.extend(op.results.iter().copied());
        if op.opcode != Opcode::LoadViewTko || !outside {
            continue;
        }
        let fits = candidate(l, id).is_some_and(|(_, p, cd, _)| {
            let (rows, stride, _) = buffer_shape(&p, cd);
            rows * stride <= super::staging::room(l)
        });
        if !fits {
            continue;
        }
        let before = l.set_loc(id);
        super::tokens::order(l, id);
        let done = lower_load(l, id);
        l.b.loc = before;
        if done? {
            if let Some(&t) = l.m.ops[id].results.get(1) {
                l.vals.insert(t, Lowered::Nothing);
            }
            out.push(id);
        }
    }
    Ok(out)
}

/// The layout the copies run in: `chunk` contiguous elements per thread
/// along tile dimension `cd`, lanes then warps along it first.
fn copy_layout(shape: &[i64], cd: usize, chunk: i64, warps: u32) -> LinearLayout {
    let rank = shape.len();
    let order: Vec<usize> = (0..rank).filter(|&d| d != cd).chain([cd]).collect();
    let moved: Vec<i64> = order.iter().map(|&d| shape[d]).collect();
    let l = Blocked::default_for(&moved, i64::from(warps), chunk).to_linear(&moved);
    let back = |bases: &[Vec<i64>]| -> Vec<Vec<i64>> {
        bases
            .iter()
            .map(|b| {
                let mut c = vec![0; rank];
                for (k, &d) in order.iter().enumerate() {
                    c[d] = b[k];
                }
                c
            })
            .collect()
    };
    LinearLayout {
        shape: shape.to_vec(),
        register: back(&l.register),
        lane: back(&l.lane),
        warp: back(&l.warp),
    }
}

/// Lowers load `load` as a direct B copy if it is one (binding its result
/// to the copy); false, with nothing emitted, otherwise.
pub fn lower_load(l: &mut Lowerer, load: OpId) -> Result<bool, LowerError> {
    let Some((mma, p, cd, chunk)) = candidate(l, load) else {
        return Ok(false);
    };
    let rank = p.tile_shape.len();
    let (rows, stride, nk) = buffer_shape(&p, cd);
    if rows * stride > super::staging::room(l) {
        if l.reuse_shared {
            // Through registers, then.
            return Ok(false);
        }
        // Out of shared memory: the entry is lowered again with scratch
        // reused op by op, where the buffer may fit.
        return Err(LowerError::Unsupported {
            what: format!(
                "a tile too large for shared memory ({} bytes needed, {} available)",
                rows * stride,
                super::staging::room(l)
            ),
            location: None,
        });
    }
    let buf = alloc(
        l,
        &[rows * stride / 2],
        crate::lower::values::Elem::Num(crate::ir::Scalar::F16),
    )?;
    let layout = copy_layout(&p.tile_shape, cd, chunk, l.warps);
    if !super::mma_sync_smem::disjoint(&layout) {
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
    let (_, smem) = thread_address_from(l, &layout, buf.offset, byte);
    let index = l.m.ops[load].operand_group("index").to_vec();
    let mut a = prepare(l, load, &p, &index, &layout)?;
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
        let imm: i64 = (0..layout.register.len())
            .filter(|k| r >> k & 1 == 1)
            .map(|k| byte(&layout.register[k]))
            .sum();
        // Chunk start's address, without its bounds check.
        let checks = std::mem::replace(&mut a.check, vec![false; rank]);
        let (_, addr) = element(l, &mut a, &c, r);
        a.check = checks;
        let size = chunk_size(l, &a, &c, cd, chunk);
        let src = match addr {
            Operand::Addr(reg, off) => {
                let x = l.b.op(
                    Opc::Add,
                    &[],
                    &[Ty::S64],
                    Ty::S64,
                    smallvec![Operand::Reg(reg), Operand::Imm(off)],
                );
                Operand::Addr(x, 0)
            }
            Operand::Reg(reg) => Operand::Addr(reg, 0),
            other => other,
        };
        let mut srcs = vec![Operand::Addr(smem, imm), src, Operand::Imm(bytes)];
        if let Some(s) = size {
            srcs.push(Operand::Reg(s));
        }
        l.b.push(Inst::new(
            Opc::CpAsync,
            &["cg", "shared", "global"],
            &[],
            vec![],
            srcs,
        ));
    }
    if owner.is_some() {
        l.b.end_if();
    }
    l.b.push(Inst::new(
        Opc::CpAsync,
        &["commit_group"],
        &[],
        vec![],
        vec![],
    ));
    l.copies_in_flight.push(load);
    let d = Rc::new(DirectB {
        load,
        mma,
        offset: buf.offset,
        stride,
        nk,
    });
    if let Some(&res) = l.m.ops[load].results.first() {
        l.vals.insert(res, Lowered::DirectB(d));
    }
    Ok(true)
}

/// The bytes chunk `c` copies (the rest zero-filled): all of them when
/// every dimension is in bounds, none when one other than `cd` is out,
/// and what is left of the row along `cd`; `None` when no dimension needs
/// a check.
fn chunk_size(
    l: &mut Lowerer,
    a: &super::memory::Access,
    c: &[i64],
    cd: usize,
    chunk: i64,
) -> Option<Reg> {
    let mut size: Option<Reg> = None;
    let bytes = chunk * 2;
    for (i, &ci) in c.iter().enumerate() {
        if !a.check[i] {
            continue;
        }
        let idx = l.b.op(
            Opc::Add,
            &[],
            &[Ty::S64],
            Ty::S64,
            smallvec![Operand::Reg(a.start[i]), Operand::Imm(ci)],
        );
        if i == cd {
            let left = l.b.op(
                Opc::Sub,
                &[],
                &[Ty::S64],
                Ty::S64,
                smallvec![a.bound[i].clone(), Operand::Reg(idx)],
            );
            let t = l.b.op(
                Opc::Max,
                &[],
                &[Ty::S64],
                Ty::S64,
                smallvec![Operand::Reg(left), Operand::Imm(0)],
            );
            let t = l.b.op(
                Opc::Min,
                &[],
                &[Ty::S64],
                Ty::S64,
                smallvec![Operand::Reg(t), Operand::Imm(chunk)],
            );
            let t = l.b.op(
                Opc::Cvt,
                &[],
                &[Ty::U32, Ty::S64],
                Ty::U32,
                smallvec![Operand::Reg(t)],
            );
            let t = bin(l, Opc::Mul, Ty::U32, t, Operand::Imm(2));
            size = Some(match size {
                Some(v) => bin(l, Opc::Min, Ty::U32, t, Operand::Reg(v)),
                None => t,
            });
            continue;
        }
        let out = l.b.op(
            Opc::Setp,
            &["ge"],
            &[Ty::U64],
            Ty::Pred,
            smallvec![Operand::Reg(idx), a.bound[i].clone()],
        );
        let prev = size.map_or(Operand::Imm(bytes), Operand::Reg);
        size = Some(l.b.op(
            Opc::Selp,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Imm(0), prev, Operand::Reg(out)],
        ));
    }
    size
}

/// Binds the result of `reshape` op `id` to its operand's direct copy
/// (the copy's tile, with leading dimensions of 1 dropped); false when the
/// operand is no direct copy.
pub fn forward_reshape(l: &mut Lowerer, id: OpId) -> bool {
    let op = &l.m.ops[id];
    let (Some(src), Some(&res)) = (op.operands.first(), op.results.first()) else {
        return false;
    };
    match l.vals.get(src) {
        Some(Lowered::DirectB(d)) => {
            let d = d.clone();
            l.vals.insert(res, Lowered::DirectB(d));
            true
        }
        _ => false,
    }
}

/// Waits for the copies of `load` (`cp.async.wait_group` allowing the
/// copies committed after it to go on).
pub fn wait_for(l: &mut Lowerer, load: OpId) {
    let later = match l.copies_in_flight.iter().position(|&x| x == load) {
        Some(p) => {
            let later = l.copies_in_flight.len() - p - 1;
            l.copies_in_flight.drain(..=p);
            later
        }
        None => 0,
    };
    l.b.push(Inst::new(
        Opc::CpAsync,
        &["wait_group"],
        &[],
        vec![],
        smallvec![Operand::Imm(later as i64)],
    ));
}

/// The direct copy `v` was lowered to, if any.
pub fn direct(l: &Lowerer, v: ValueId) -> Option<Rc<DirectB>> {
    match l.vals.get(&v) {
        Some(Lowered::DirectB(d)) => Some(d.clone()),
        _ => None,
    }
}
