//! `wgmma` products whose operands are both streamed
//! ([`crate::lower::emit::copies::stream`]): K goes in slices, each slice read from global
//! memory into registers and written into a set of swizzled buffers, two
//! sets used in turn where they fit. A slice's reads go out while the
//! previous slice's multiply is in flight:
//!
//! ```text
//! ld.global (slice s)
//! wgmma.wait_group sets-1; bar.sync      (once the set was used before)
//! st.shared (set s % sets); fence.proxy.async; bar.sync
//! wgmma.fence; wgmma.mma_async ...; wgmma.commit_group
//! ... after the last slice: wgmma.wait_group 0; bar.sync
//! ```
use std::rc::Rc;

use crate::ir::OpId;
use crate::lower::emit::context::Lowerer;
use crate::lower::error::LowerError;
use crate::ptx::{Opc, Operand, Reg, Ty};
use smallvec::smallvec;

use crate::lower::emit::copies::stream::{Slices, Source};
use crate::lower::emit::copies::swizzled::write;
use crate::lower::emit::ops::wgmma::{acc_tile, b_offset, descriptors, multiply, operand_sets};
use crate::lower::emit::wgmma_isa::{acc_words, proxy_fence, sync_op};
use crate::lower::plan::engines::wgmma::{operands, Plan};

/// Lowers product `id` by `plan`, its operands `a` and `b` both streamed.
pub fn lower(
    l: &mut Lowerer,
    id: OpId,
    plan: &Plan,
    (a, b): (Source, Source),
) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let (Some(c_v), Some(&res)) = (op.operand("acc"), op.results.first()) else {
        return Err(l.unsupported(id));
    };
    let [mm, n, kk] = plan.mnk;
    // The plan's slice: within the register allowance, its buffers with a
    // layout.
    let staging = l.plan.staging(id).ok_or_else(|| l.unsupported(id))?;
    let ks = staging.slices[0].k;
    let (asmem, bsmem) = operands([mm, n, ks], plan.types).ok_or_else(|| l.unsupported(id))?;
    let sliced = Plan {
        acc: plan.acc.clone(),
        mnk: [mm, n, ks],
        groups: plan.groups,
        types: plan.types,
    };
    let slices = kk / ks;
    let set = staging.slices[0].bytes;
    let (sets, aligned, region) = operand_sets(l, id, staging)?;
    let mut bases: Vec<(Reg, Reg)> = Vec::new();
    let mut descs: Vec<(Reg, Reg)> = Vec::new();
    for i in 0..sets {
        let add = |l: &mut Lowerer, r: Reg, by: i64| {
            l.b.op(
                Opc::Add,
                &[],
                &[Ty::U32],
                Ty::U32,
                smallvec![Operand::Reg(r), Operand::Imm(by)],
            )
        };
        let abase = add(l, aligned, i * set);
        let bbase = add(l, abase, b_offset(&asmem));
        descs.push(descriptors(l, &sliced, &asmem, &bsmem, abase, bbase));
        bases.push((abase, bbase));
    }
    let layout = Rc::new(plan.acc.clone());
    let acc_in = l.tile_in(id, c_v, &layout)?;
    let acc = acc_words(l, plan.types[2], &acc_in.regs);
    let signs = crate::lower::emit::ops::mma_operands::signedness(l, id);
    let mut reads = Slices::new(l, (&a, &b), 2, ks, None)?;
    for s in 0..slices {
        let [Some(ta), Some(tb)] = reads.next(l)? else {
            return Err(l.unsupported(id));
        };
        let i = (s % sets) as usize;
        if s >= sets {
            // The set's last multiply is done, in every warpgroup.
            sync_op(
                l,
                &["wait_group", "sync", "aligned"],
                vec![Operand::Imm(sets - 1)],
            );
            l.barrier();
        }
        if s == 0 {
            // Its own protocol orders the later slices' writes after the
            // reads before them.
            l.writes(region.clone());
        }
        write(l, &ta, &asmem, false, bases[i].0);
        write(l, &tb, &bsmem, true, bases[i].1);
        proxy_fence(l);
        l.barrier();
        multiply(l, &sliced, signs, (&asmem, &bsmem), descs[i], &acc);
    }
    sync_op(l, &["wait_group", "sync", "aligned"], vec![Operand::Imm(0)]);
    // Every read of the multiplies is done here.
    l.reads(region);
    let t = acc_tile(l, plan, layout, &acc);
    l.bind(res, t);
    Ok(())
}
