//! Chained products (attention's `Q·Kᵀ` and `P·V`, [`crate::lower::analysis::chains`])
//! on sm_90a's warpgroup tensor cores: A from registers, B from a buffer
//! its tile was copied into straight from global memory
//! ([`crate::lower::emit::copies::direct`]).
//!
//! The `mma.sync` plan of such a product gives every warp 16 whole rows
//! (`WarpGrid::rows`). When the warps fill whole warpgroups (`M = 16 x
//! warps`, 4 or 8 warps), that plan's accumulator layout is the `wgmma`
//! accumulator layout ([`crate::lower::plan::layout::wgmma`]) and its A
//! fragments (the m16n8k16 ones) are `wgmma`'s A register fragments. So
//! only the B buffer and the instructions change: the copy lands in the
//! swizzled canonical layout of [`crate::lower::emit::copies::swizzled`] (K-major for `Kᵀ`,
//! MN-major for V), and each warpgroup issues one `m64nNk16` per K step.
//!
//! Decode attention's chain, split over warp pairs (64 rows in eight
//! warps), is one warpgroup of rows twice: the warpgroups take half of
//! `Q·Kᵀ`'s columns each (`m64n(N/2)`, B's descriptor moved to its half),
//! then half of `P·V`'s K each (their halves of P are already their A
//! fragments), the partial sums added after the loop as on `mma.sync`
//! ([`GroupPart`]):
//!
//! ```text
//! cp.async.wait_group; fence.proxy.async; bar.sync
//! wgmma.fence; wgmma.mma_async {acc}, {a}, bdesc, ...; wgmma.commit_group; wgmma.wait_group 0
//! bar.sync (before the buffer is rewritten)
//! ```
use smallvec::smallvec;

use crate::ir::{OpId, Scalar, ValueId};
use crate::lower::analysis::values::Elem;
use crate::lower::emit::context::Lowerer;
use crate::lower::error::LowerError;
use crate::ptx::{Inst, Opc, Operand, Reg};
use rustc_hash::FxHashMap as HashMap;

use crate::lower::emit::copies::direct::{declare_reads, wait_for_copy, DirectB};
use crate::lower::emit::copies::swizzled::write;
use crate::lower::emit::ops::staging::{aligned_base, alloc};
use crate::lower::emit::wgmma_isa::{
    acc_words, descriptor, descriptor_at, group_base, proxy_fence, shape_name, sync_op, type_name,
};
use crate::lower::plan::copies::staged_a::Form;
use crate::lower::plan::engines::mma_sync::{group_n, wgmma_part, GroupPart, Plan};
use crate::lower::plan::engines::operand_elems;
use crate::lower::plan::layout::smem::Smem;

/// Loop-invariant A operands of `wgmma` products written once into
/// swizzled buffers before their loop: byte offset and layout.
#[derive(Default)]
struct StagedA(HashMap<ValueId, (std::ops::Range<i64>, Smem)>);

/// Where the A operand `v` was staged for `wgmma`, if it was: the bytes of
/// its buffer and its layout.
pub fn staged_a(l: &Lowerer, v: ValueId) -> Option<(std::ops::Range<i64>, Smem)> {
    l.states.peek::<StagedA>()?.0.get(&v).cloned()
}

/// Before loop `id` (at the entry's top level), for each product of its
/// body that runs here with A defined outside the loop (attention's Q, as
/// the plan names them, [`crate::lower::plan::copies::staged_a`]):
/// writes A once into a swizzled K-major buffer that the product reads
/// through a descriptor ([`staged_a`]), so A's registers are free
/// inside the loop, as NVIDIA's attention keeps Q. The buffer serves later
/// loops too (attention's second loop), so A's registers die at the first.
/// Returns the values staged. Nothing is staged where the plan found no
/// room.
pub fn stage_invariant_a(l: &mut Lowerer, id: OpId) -> Result<Vec<ValueId>, LowerError> {
    let planned = l.plan.copies.staged_a.get(&id).cloned().unwrap_or_default();
    let mut staged = Vec::new();
    for c in planned {
        let Form::Swizzled(s) = c.form else {
            continue;
        };
        // An earlier loop's buffer serves; nothing where the plan found no
        // room.
        if staged_a(l, c.value).is_some() || !l.chosen().staged_a(id, c.product) {
            continue;
        }
        let t = l.tile_in(c.product, c.value, &std::rc::Rc::new(c.layout))?;
        let buf = alloc(
            l,
            crate::lower::plan::buffers::What::StagedA,
            &[c.form.bytes() / 2],
            Elem::Num(Scalar::F16),
        )?;
        let base = aligned_base(l, buf.offset);
        l.writes(buf.bytes());
        write(l, &t, &s, false, base);
        proxy_fence(l);
        l.states
            .get::<StagedA>()
            .0
            .insert(c.value, (buf.bytes(), s));
        staged.push(c.value);
    }
    Ok(staged)
}

/// Where a `wgmma` product's A operand is.
pub enum AOperand<'a> {
    /// Fragments in registers, one per K step of 16.
    Regs(&'a [Vec<Reg>]),
    /// A swizzled K-major buffer over these bytes of the scratch.
    Smem(std::ops::Range<i64>, Smem),
}

/// Accumulates product `id` (by `plan`) into `acc`: A from `a`, B in the
/// swizzled buffer `s` of copy `d`. Returns the accumulator's registers in
/// the plan's layout.
pub fn multiply(
    l: &mut Lowerer,
    id: OpId,
    plan: &Plan,
    a: AOperand,
    d: &DirectB,
    s: &Smem,
    acc: &[Reg],
) -> Result<Vec<Reg>, LowerError> {
    let (ae, _) = operand_elems(l.m, id).unwrap_or((Scalar::F16, Scalar::F16));
    let n = group_n(plan);
    let part =
        wgmma_part(l.m, id, plan, l.plan.target, l.plan.warps).ok_or_else(|| l.unsupported(id))?;
    // This warpgroup's K steps (a split K's half), and where its part of
    // each operand starts beyond warpgroup 0's.
    let k = match &a {
        AOperand::Regs(f) => 16 * f.len() as i64,
        AOperand::Smem(_, sa) => sa.k / plan.k_parts(),
    };
    let (a_step, b_step) = match part {
        GroupPart::Rows => (Some([64, 0]), None),
        GroupPart::Columns => (None, Some([n, 0])),
        GroupPart::K => (Some([0, k]), Some([0, k])),
    };
    wait_for_copy(l, d);
    if d.tma.is_none() {
        // The copies' writes reach the tensor cores' (async) proxy, and
        // every thread's land before any is read.
        proxy_fence(l);
        l.barrier();
    }
    let base = aligned_base(l, d.bytes.start);
    let base = match b_step {
        Some([mn, kk]) => group_base(l, base, s.start(mn, kk)),
        None => base,
    };
    let desc = descriptor(l, base, s);
    // A as each K step reads it: fragments, or a descriptor of this
    // warpgroup's 64 rows.
    enum Source<'a> {
        Regs(&'a [Vec<Reg>]),
        Desc(Reg, Smem),
    }
    let a_bytes = match &a {
        AOperand::Regs(_) => None,
        AOperand::Smem(bytes, _) => Some(bytes.clone()),
    };
    let a = match a {
        AOperand::Regs(f) => Source::Regs(f),
        AOperand::Smem(bytes, sa) => {
            let abase = aligned_base(l, bytes.start);
            let abase = match a_step {
                Some([mn, kk]) if l.plan.warps > 4 => group_base(l, abase, sa.start(mn, kk)),
                _ => abase,
            };
            Source::Desc(descriptor(l, abase, &sa), sa)
        }
    };
    let words = acc_words(l, plan.acc_elem, acc);
    if d.tma.is_some() {
        // Read from here until the wait below.
        declare_reads(l, d);
        if let Some(bytes) = a_bytes.clone() {
            l.reads(bytes);
        }
    }
    let scale_d = l.imm(Elem::Num(Scalar::I1), 1);
    let ty = type_name(ae, true);
    let mods = [
        "mma_async",
        "sync",
        "aligned",
        shape_name(n, 16),
        "f32",
        ty,
        ty,
    ];
    sync_op(l, &["fence", "sync", "aligned"], vec![]);
    for kt in 0..k / 16 {
        let dk = descriptor_at(l, desc, s.start(0, 16 * kt));
        let a_src = match &a {
            Source::Regs(f) => Operand::Vec(f[kt as usize].clone()),
            Source::Desc(ad, sa) => Operand::Reg(descriptor_at(l, *ad, sa.start(0, 16 * kt))),
        };
        let mut srcs = vec![
            a_src,
            Operand::Reg(dk),
            Operand::Reg(scale_d),
            Operand::Imm(1),
            Operand::Imm(1),
        ];
        if matches!(a, Source::Desc(..)) {
            // A K-major.
            srcs.push(Operand::Imm(0));
        }
        srcs.push(Operand::Imm(i64::from(s.mn_major)));
        l.b.push(Inst::new(
            Opc::Wgmma,
            &mods,
            &[],
            smallvec![Operand::Vec(words.clone())],
            srcs,
        ));
    }
    sync_op(l, &["commit_group", "sync", "aligned"], vec![]);
    sync_op(l, &["wait_group", "sync", "aligned"], vec![Operand::Imm(0)]);
    // Every read of the multiply is done here.
    if d.tma.is_none() {
        l.reads(d.bytes.clone());
        if let Some(bytes) = a_bytes {
            l.reads(bytes);
        }
    }
    Ok(words)
}
