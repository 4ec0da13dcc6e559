//! `mmaf` / `mmai` (and dequantized `mmaf_scaled`) on warpgroup tensor cores
//! (`wgmma.mma_async`, sm_90a).
//!
//! Both operands go through shared memory in the swizzled layouts of
//! [`crate::lower::emit::copies::swizzled`]: A (`m x k`) K-major; B (`k x n`) MN-major for 16-bit
//! types (the tile's rows are already contiguous along N), K-major for
//! tf32 and 8-bit types (which `wgmma` reads K-major only). The tile
//! block's warpgroups split M; each runs `m64nNk*` instructions over its
//! 64-row blocks, N in chunks of at most 256 and K in steps of 32 bytes,
//! with the accumulator in registers in the layout of
//! [`crate::lower::plan::layout::wgmma`]:
//!
//! ```text
//! st.shared (operands, buffer set `phase`); fence.proxy.async; bar.sync
//! wgmma.fence; wgmma.mma_async ...; wgmma.commit_group; wgmma.wait_group 0
//! phase ^= 1 (or, with a single set, bar.sync before it is rewritten)
//! ```
//!
//! [`Plan::operand_layouts`] asks layout assignment for A and B layouts
//! that load row vectors from global memory and store 16-byte vectors.
use smallvec::smallvec;
use std::rc::Rc;

use crate::ir::{OpId, Scalar};
use crate::lower::analysis::values::Elem;
use crate::lower::emit::context::{Lowered, Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};

use crate::lower::emit::copies::swizzled::write;
use crate::lower::emit::ops::staging::{aligned_base, alloc};
use crate::lower::emit::wgmma_isa::{
    acc_words, descriptor, descriptor_at, group_base, proxy_fence, shape_name, sync_op, type_name,
};
use crate::lower::plan::engines::wgmma::{operands, Plan};
use crate::lower::plan::engines::Staging;
use crate::lower::plan::layout::smem::Smem;
use crate::lower::simt::membar::Access;

/// Lowers op `id` by `plan`.
pub fn lower(l: &mut Lowerer, id: OpId, plan: &Plan) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let (Some(c_v), Some(&res)) = (op.operand("acc"), op.results.first()) else {
        return Err(l.unsupported(id));
    };
    let streamed = [op.operand("lhs"), op.operand("rhs")]
        .iter()
        .any(|v| v.is_some_and(|v| matches!(l.vals.get(&v), Some(Lowered::Deferred(d)) if d.is::<crate::lower::emit::copies::stream::Streamed>())));
    if streamed {
        let operands = crate::lower::emit::copies::stream::operands(l, id)?;
        return crate::lower::emit::ops::wgmma_stream::lower(l, id, plan, operands);
    }
    let (asmem, bsmem) = operands(plan.mnk, plan.types).ok_or_else(|| l.unsupported(id))?;
    let layout = Rc::new(plan.acc.clone());
    let acc_in = l.tile_in(id, c_v, &layout)?;
    let (a, b) = crate::lower::emit::ops::mma_operands::operand_tiles(l, id)?;

    // Two sets of operand buffers where they fit, used in turn (a phase
    // bit flips after every use), so a warpgroup may write the next set
    // while another still multiplies from this one: one barrier per
    // multiply. Else one set and a barrier before it is rewritten.
    let staging = l.plan.staging(id).ok_or_else(|| l.unsupported(id))?;
    let set = staging.slices[0].bytes;
    let (sets, aligned, region) = operand_sets(l, id, staging)?;
    let phase = (sets > 1).then(|| {
        let p = l.b.reg(RegClass::B32);
        l.b.prepend(Inst::new(
            Opc::Mov,
            &[],
            &[Ty::B32],
            smallvec![Operand::Reg(p)],
            smallvec![Operand::Imm(0)],
        ));
        p
    });
    let abase = match phase {
        Some(p) => l.b.op(
            Opc::Mad,
            &["lo"],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Reg(p), Operand::Imm(set), Operand::Reg(aligned)],
        ),
        None => aligned,
    };
    let bbase = l.b.op(
        Opc::Add,
        &[],
        &[Ty::U32],
        Ty::U32,
        smallvec![Operand::Reg(abase), Operand::Imm(b_offset(&asmem))],
    );
    // Two sets: the barrier of each use orders the next use's writes of
    // one set after the reads of the last use of it (its own protocol).
    let owner = phase.map(|_| id);
    let declare = |l: &mut Lowerer, access| l.declare(access, region.clone(), owner);
    declare(l, Access::Write);
    write(l, &a, &asmem, false, abase);
    write(l, &b, &bsmem, true, bbase);
    proxy_fence(l);
    l.barrier();

    let descs = descriptors(l, plan, &asmem, &bsmem, abase, bbase);
    let acc = acc_words(l, plan.types[2], &acc_in.regs);
    multiply(
        l,
        plan,
        crate::lower::emit::ops::mma_operands::signedness(l, id),
        (&asmem, &bsmem),
        descs,
        &acc,
    );
    sync_op(l, &["wait_group", "sync", "aligned"], vec![Operand::Imm(0)]);
    // Every read of the multiply is done here.
    declare(l, Access::Read);
    if let Some(p) = phase {
        l.b.op_into(
            p,
            Opc::Xor,
            &[],
            &[Ty::B32],
            smallvec![Operand::Reg(p), Operand::Imm(1)],
        );
    }
    let t = acc_tile(l, plan, layout, &acc);
    l.bind(res, t);
    Ok(())
}

/// Byte offset of the B buffer from the A buffer in a set.
pub(super) fn b_offset(a: &Smem) -> i64 {
    (a.bytes() + 1023) & !1023
}

/// The operand sets of product `id` (its plan's `staging`), as many as the
/// plan chose by the room left (two where it wants them and they fit above
/// the scratch in use, else one), in one region: how many, the region's
/// base aligned for the sets' swizzled layouts, and the region's bytes.
pub(super) fn operand_sets(
    l: &mut Lowerer,
    id: OpId,
    staging: &Staging,
) -> Result<(i64, Reg, std::ops::Range<i64>), LowerError> {
    let sets = l.chosen().slices(id).map_or(1, |(_, sets)| i64::from(sets));
    let region = alloc(
        l,
        crate::lower::plan::buffers::What::Operands,
        &[sets * staging.slices[0].bytes + staging.align],
        Elem::Num(Scalar::I8),
    )?;
    Ok((sets, aligned_base(l, region.offset), region.bytes()))
}

/// The matrix descriptors of A (this warpgroup's rows) and B at the shared
/// addresses `abase` and `bbase`: start address in 16-byte units or'ed
/// with the layouts' constant bits.
pub(super) fn descriptors(
    l: &mut Lowerer,
    plan: &Plan,
    asmem: &Smem,
    bsmem: &Smem,
    abase: Reg,
    bbase: Reg,
) -> (Reg, Reg) {
    let rows = plan.mnk[0] / plan.groups;
    let a_group = if plan.groups > 1 {
        group_base(l, abase, asmem.start(rows, 0))
    } else {
        abase
    };
    (descriptor(l, a_group, asmem), descriptor(l, bbase, bsmem))
}

/// The accumulator tile (in `layout`, the plan's) of the `wgmma`
/// registers `acc`.
pub(super) fn acc_tile(
    l: &mut Lowerer,
    plan: &Plan,
    layout: Rc<LinearLayout>,
    acc: &[Reg],
) -> Tile {
    Tile {
        elem: Elem::Num(plan.types[2]),
        layout,
        regs: acc_tile_regs(l, plan, acc),
    }
}

/// The accumulator tile's registers from the `wgmma` registers `acc`.
fn acc_tile_regs(l: &mut Lowerer, plan: &Plan, acc: &[Reg]) -> Vec<Reg> {
    if plan.types[2] != Scalar::F16 {
        return acc.to_vec();
    }
    let mut out = Vec::with_capacity(2 * acc.len());
    for &w in acc {
        let (lo, hi) = l.b.split(w);
        out.extend([lo, hi]);
    }
    out
}

/// `wgmma.fence`, the multiply's `wgmma.mma_async` instructions reading A
/// and B through descriptors `descs` into `acc`, and `wgmma.commit_group`
/// (the caller waits for the group).
pub(super) fn multiply(
    l: &mut Lowerer,
    plan: &Plan,
    (sa, sb): (bool, bool),
    (asmem, bsmem): (&Smem, &Smem),
    (adesc, bdesc): (Reg, Reg),
    acc: &[Reg],
) {
    let [mm, n, k] = plan.mnk;
    let [at, bt, ct] = plan.types;
    let rows = mm / plan.groups;
    let scale_d = l.imm(Elem::Num(Scalar::I1), 1);
    let ni = n.min(256);
    let es = asmem.es;
    let ki = 32 / es;
    let per_frag = if ct == Scalar::F16 { 4 } else { 2 };
    let int = ct == Scalar::I32;
    let mut mods: Vec<&'static str> = vec!["mma_async", "sync", "aligned", shape_name(ni, ki)];
    if int {
        mods.push("satfinite");
    }
    mods.extend([type_name(ct, true), type_name(at, sa), type_name(bt, sb)]);
    sync_op(l, &["fence", "sync", "aligned"], vec![]);
    let mut descs: rustc_hash::FxHashMap<(bool, i64), Reg> = Default::default();
    let mut desc = |l: &mut Lowerer, is_a: bool, off: i64| -> Reg {
        let base = if is_a { adesc } else { bdesc };
        *descs
            .entry((is_a, off))
            .or_insert_with(|| descriptor_at(l, base, off))
    };
    for k0 in (0..k).step_by(ki as usize) {
        for c in 0..rows / 64 {
            for nc in 0..n / ni {
                let da = desc(l, true, asmem.start(64 * c, k0));
                let db = desc(l, false, bsmem.start(nc * ni, k0));
                let first = (c * (n / 2) + nc * (ni / 2)) as usize / (per_frag / 2);
                let count = (ni * 64 / 128) as usize / (per_frag / 2);
                let d = acc[first..first + count].to_vec();
                let mut srcs = smallvec![Operand::Reg(da), Operand::Reg(db), Operand::Reg(scale_d)];
                if !int {
                    srcs.extend([Operand::Imm(1), Operand::Imm(1)]);
                }
                if es == 2 {
                    srcs.extend([Operand::Imm(0), Operand::Imm(i64::from(bsmem.mn_major))]);
                }
                l.b.push(Inst::new(
                    Opc::Wgmma,
                    &mods,
                    &[],
                    smallvec![Operand::Vec(d)],
                    srcs,
                ));
            }
        }
    }
    sync_op(l, &["commit_group", "sync", "aligned"], vec![]);
}
