//! A `for` loop whose body loads an A and a B tile and multiplies them on
//! `wgmma` (the loop shape of `mma_sync_pipeline::loop_shape`),
//! software-pipelined over `S` (2 to 4) sets of swizzled operand buffers:
//!
//! ```text
//! prologue: fill stages 0 .. S-2 (cp.async, then
//!           cp.async.mbarrier.arrive.noinc on the stage's full barrier)
//! loop k:   wait full[k % S]; fence.proxy.async; wgmma ...; wait_group 1
//!           if k > 0: mbarrier.arrive empty[(k-1) % S]
//!           if k + S - 1 < n: wait empty[(k-1) % S]; fill it with k + S - 1
//! after:    wait_group 0
//! ```
//!
//! One multiply stays in flight while the next iteration waits for its
//! stage: the tensor cores never wait for the threads' bookkeeping. For
//! accumulators of more than 64 registers a thread (which ran slower so),
//! each iteration fills first, then multiplies and waits (`wait_group 0`),
//! releasing its own stage.
//!
//! `cp.async` writes each 16-byte chunk straight into its swizzled place
//! (chunks past the tensor's edge copy their in-bounds bytes and zero-fill
//! the rest). Every thread copies and multiplies, so both barriers count
//! every thread of the tile block: a stage is full when every thread's
//! copies into it have landed, and empty when every warpgroup's multiply
//! that read it has completed. The copies are generic-proxy writes that
//! `wgmma` reads through the async proxy, so each consumer fences the
//! proxies after its wait. Only A K-major and B MN-major (16-bit types)
//! are copied this way: the rows of the tiles in global memory are then
//! the rows of the swizzled layouts.
use smallvec::smallvec;
use std::rc::Rc;

use crate::ir::{OpId, Scalar};
use crate::lower::analysis::values::Elem;
use crate::lower::emit::context::Lowerer;
use crate::lower::error::LowerError;
use crate::lower::plan::layout::{Blocked, LinearLayout};
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};

use crate::lower::emit::ops::mma_sync_copies::Stream;
use crate::lower::emit::ops::mma_sync_pipeline::{advance_ring, bounds, loop_shape, Load, Staged};
use crate::lower::emit::ops::mma_sync_smem::{bin, disjoint};
use crate::lower::emit::ops::staging::alloc;
use crate::lower::emit::ops::wgmma;
use crate::lower::emit::ops::wgmma_smem::thread_part;
use crate::lower::plan::engines::Engine;
use crate::lower::plan::layout::smem::Smem;
use crate::lower::plan::target::MAX_SHARED_BYTES;

/// The most stages.
const MAX_STAGES: i64 = 4;

/// How one operand's chunks land in its swizzled buffer.
struct CopyPlan {
    layout: LinearLayout,
    /// Byte offset of each thread-index bit's chunk.
    thread: Vec<i64>,
    /// `(first register, byte offset from the thread's part)` per chunk.
    chunks: Vec<(usize, i64)>,
}

/// Plans the copies of `ld` into `smem` (`k_first`: the tile is `[k, mn]`),
/// if every chunk lands contiguously and its offset adds to the thread's.
fn copy_plan(l: &Lowerer, ld: &Load, smem: &Smem, k_first: bool) -> Option<CopyPlan> {
    let shape = &ld.view.tile_shape;
    let layout = Blocked::default_for(shape, i64::from(l.plan.warps), ld.chunk).to_linear(shape);
    let vec_bits = ld.chunk.trailing_zeros() as usize;
    if shape.len() != 2 || !disjoint(&layout) || layout.register.len() < vec_bits {
        return None;
    }
    let off = |c: &[i64]| {
        if k_first {
            smem.offset(c[1], c[0])
        } else {
            smem.offset(c[0], c[1])
        }
    };
    // A chunk's elements are consecutive bytes.
    if (0..vec_bits).any(|k| off(&layout.register[k]) != smem.es << k) {
        return None;
    }
    let thread: Vec<i64> = layout.thread_bases().iter().map(|b| off(b)).collect();
    let mask = thread.iter().fold(0, |a, &b| a | b);
    let mut chunks = Vec::new();
    for r in (0..layout.num_registers()).step_by(ld.chunk as usize) {
        if layout.canonical_register(r) != r {
            continue;
        }
        let imm = (0..layout.register.len())
            .filter(|k| r >> k & 1 == 1)
            .fold(0, |a, k| a ^ off(&layout.register[k]));
        // Disjoint from the thread's bits: the xor is a sum.
        if imm & mask != 0 {
            return None;
        }
        chunks.push((r, imm));
    }
    Some(CopyPlan {
        layout,
        thread,
        chunks,
    })
}

/// The copy state of `plan` into the buffer at shared address `base`.
fn staged(l: &mut Lowerer, plan: CopyPlan, base: Reg) -> Staged {
    let smem = match thread_part(l, &plan.thread) {
        Some(p) => bin(l, Opc::Add, Ty::U32, base, Operand::Reg(p)),
        None => base,
    };
    Staged {
        layout: Rc::new(plan.layout),
        smem,
        chunks: plan.chunks,
        // The chunk offsets already are swizzled ones.
        swizzled: None,
    }
}

/// `mbarrier.<mods>.shared.b64 [addr]{, src}` (`arrive` writes a state).
fn mbarrier(l: &mut Lowerer, what: &'static str, addr: Reg, src: Option<i64>) {
    let dsts = if what == "arrive" {
        vec![Operand::Reg(l.b.reg(RegClass::B64))]
    } else {
        vec![]
    };
    let mut srcs = smallvec![Operand::Addr(addr, 0)];
    srcs.extend(src.map(Operand::Imm));
    l.b.push(Inst::new(
        Opc::Mbarrier,
        &[what, "shared"],
        &[Ty::B64],
        dsts,
        srcs,
    ));
}

/// Spins until the phase of parity `parity` of the mbarrier at `addr` has
/// completed.
fn wait_phase(l: &mut Lowerer, addr: Reg, parity: Reg) {
    l.b.begin_loop();
    let done = l.b.reg(RegClass::Pred);
    l.b.push(Inst::new(
        Opc::Mbarrier,
        &["try_wait", "parity", "shared"],
        &[Ty::B64],
        smallvec![Operand::Reg(done)],
        smallvec![Operand::Addr(addr, 0), Operand::Reg(parity)],
    ));
    l.b.begin_loop_body(done, false);
    l.b.end_loop();
}

/// Flips parity bit `p` where predicate `wrapped` holds.
fn flip(l: &mut Lowerer, p: Reg, wrapped: Reg) {
    let bit = l.b.op(
        Opc::Selp,
        &[],
        &[Ty::B32],
        Ty::B32,
        smallvec![Operand::Imm(1), Operand::Imm(0), Operand::Reg(wrapped)],
    );
    l.b.op_into(
        p,
        Opc::Xor,
        &[],
        &[Ty::B32],
        smallvec![Operand::Reg(p), Operand::Reg(bit)],
    );
}

/// A fresh u32 variable holding `v`.
fn var(l: &mut Lowerer, v: i64) -> Reg {
    let r = l.b.reg(RegClass::B32);
    l.b.op_into(r, Opc::Mov, &[], &[Ty::U32], smallvec![Operand::Imm(v)]);
    r
}

/// `base + index * scale` (u32).
fn scaled(l: &mut Lowerer, index: Reg, scale: i64, base: Reg) -> Reg {
    l.b.op(
        Opc::Mad,
        &["lo"],
        &[Ty::U32],
        Ty::U32,
        smallvec![Operand::Reg(index), Operand::Imm(scale), Operand::Reg(base)],
    )
}

/// Descriptor `d` moved on by `bytes` (a u32 register, a multiple of 16).
fn moved(l: &mut Lowerer, d: Reg, bytes: Reg) -> Reg {
    let wide = wgmma::descriptor_units(l, bytes);
    l.b.op(
        Opc::Add,
        &[],
        &[Ty::S64],
        Ty::S64,
        smallvec![Operand::Reg(d), Operand::Reg(wide)],
    )
}

/// `cp.async.mbarrier.arrive.noinc.shared.b64 [addr]`: one arrival once
/// this thread's copies so far have landed.
fn arrive_on_copies(l: &mut Lowerer, addr: Reg) {
    l.b.push(Inst::new(
        Opc::CpAsync,
        &["mbarrier", "arrive", "noinc", "shared"],
        &[Ty::B64],
        vec![],
        smallvec![Operand::Addr(addr, 0)],
    ));
}

/// The stages that fit in `room` bytes of shared memory for sets of
/// `set` bytes (plus alignment slack and two barriers per stage), if at
/// least two do.
fn stage_count(room: i64, set: i64) -> Option<i64> {
    (2..=MAX_STAGES)
        .rev()
        .find(|s| s * set + 1024 + 16 * s <= room)
}

/// The most accumulator registers a thread may hold for a multiply to stay
/// in flight across iterations.
const MAX_ACC_REGS_IN_FLIGHT: i64 = 64;

/// Lowers `for` op `id` pipelined on `wgmma`, if its body has the shape
/// and the stages fit; false (and nothing emitted) otherwise.
pub fn lower_for(l: &mut Lowerer, id: OpId) -> Result<bool, LowerError> {
    let Some(pat) = loop_shape(l, id) else {
        return Ok(false);
    };
    let Some(Engine::Wgmma(plan)) = l.plan.engine(pat.mma).cloned() else {
        return Ok(false);
    };
    let Some((asmem, bsmem)) = crate::lower::plan::engines::wgmma::operands(plan.mnk, plan.types)
    else {
        return Ok(false);
    };
    if pat.round != (false, false) || asmem.mn_major || !bsmem.mn_major {
        return Ok(false);
    }
    let (Some(ca), Some(cb)) = (
        copy_plan(l, &pat.a, &asmem, false),
        copy_plan(l, &pat.b, &bsmem, true),
    ) else {
        return Ok(false);
    };
    // Leave room for the rest of the kernel: the accumulator tile once
    // more (an epilogue's layout change goes through shared memory).
    let [mm, nn, _] = plan.mnk;
    let cap = l.plan.target.max_shared_bytes().min(MAX_SHARED_BYTES);
    let room = cap - i64::from(l.shared_bytes) - mm * nn * 4;
    let set = crate::lower::plan::engines::wgmma::set_bytes(&asmem, &bsmem);
    let Some(stages) = stage_count(room, set) else {
        return Ok(false);
    };
    let Some(bounds) = bounds(l, id)? else {
        return Ok(false);
    };
    let op = &l.m.ops[id];
    let inits = op.operand_group("initValues").to_vec();
    let layout = Rc::new(plan.acc.clone());
    let init = l.tile_in(id, inits[0], &layout)?;

    let threads = i64::from(l.plan.warps) * 32;
    let tid = l.tid();
    let region = alloc(l, &[stages * set + 1024], Elem::Num(Scalar::I8))?;
    let bar_buf = alloc(l, &[16 * stages], Elem::Num(Scalar::I8))?;
    let aligned = crate::lower::emit::ops::staging::aligned_base(l, region.offset);
    let sym = l.shared_base();
    let full = bin(l, Opc::Add, Ty::U32, sym, Operand::Imm(bar_buf.offset));
    let empty = bin(l, Opc::Add, Ty::U32, full, Operand::Imm(8 * stages));
    // Thread 0 sets up the barriers; the block's barrier publishes them.
    let first = l.b.op(
        Opc::Setp,
        &["eq"],
        &[Ty::U32],
        Ty::Pred,
        smallvec![Operand::Reg(tid), Operand::Imm(0)],
    );
    let each_barrier = |l: &mut Lowerer, what: &'static str, count: Option<i64>| {
        for s in 0..2 * stages {
            let a = bin(l, Opc::Add, Ty::U32, full, Operand::Imm(8 * s));
            mbarrier(l, what, a, count);
        }
    };
    l.b.begin_if(first, true);
    each_barrier(l, "init", Some(threads));
    l.b.end_if();
    l.barrier();

    let bbuf = bin(
        l,
        Opc::Add,
        Ty::U32,
        aligned,
        Operand::Imm(wgmma::b_offset(&asmem)),
    );
    let sa = staged(l, ca, aligned);
    let sb = staged(l, cb, bbuf);
    let (adesc, bdesc) = wgmma::descriptors(l, &plan, &asmem, &bsmem, aligned, bbuf);
    let acc = wgmma::acc_words(l, plan.types[2], &init.regs);
    let signs = wgmma::signedness(l, pat.mma);

    let (step, ity) = (bounds.step, bounds.ity);
    let lb = bounds.lb.regs[0];
    let copies_a = Stream::new(l, &pat.a, &sa, pat.iv, &bounds.lb, step, ity)?;
    let copies_b = Stream::new(l, &pat.b, &sb, pat.iv, &bounds.lb, step, ity)?;
    let fill = |l: &mut Lowerer, stage: Reg| {
        let off = l.b.op(
            Opc::Mul,
            &["lo"],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Reg(stage), Operand::Imm(set)],
        );
        copies_a.issue(l, &pat.a, &sa, off);
        copies_b.issue(l, &pat.b, &sb, off);
        let bar = scaled(l, stage, 8, full);
        arrive_on_copies(l, bar);
    };
    // Prologue: stages 0 .. S-2.
    let mut next = lb;
    for s in 0..stages - 1 {
        if s > 0 {
            next = l.b.op(
                Opc::Add,
                &[],
                &[ity],
                ity,
                smallvec![Operand::Reg(next), Operand::Reg(step)],
            );
        }
        let go = bounds.before_end(l, next);
        let stage = l.b.op(
            Opc::Mov,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Imm(s)],
        );
        l.b.begin_if(go, true);
        fill(l, stage);
        l.b.end_if();
    }
    // Loop state: induction variable, the iteration S-1 ahead, the stage
    // read and its full-barrier parity, the stage written and the parity
    // of its last empty phase (1 at first: a fresh barrier's preceding
    // phase counts as complete).
    let iv =
        l.b.reg(crate::lower::emit::context::class_of(bounds.lb.elem));
    l.b.copy(iv, lb);
    let ahead =
        l.b.reg(crate::lower::emit::context::class_of(bounds.lb.elem));
    l.b.copy(ahead, next);
    let (rd, rd_parity) = (var(l, 0), var(l, 0));
    let (wr, wr_parity) = (var(l, stages - 1), var(l, 1));

    l.b.begin_loop();
    let p = bounds.before_end(l, iv);
    l.b.begin_loop_body(p, true);
    l.b.op_into(
        ahead,
        Opc::Add,
        &[],
        &[ity],
        smallvec![Operand::Reg(ahead), Operand::Reg(step)],
    );
    // Where the multiply stays in flight (an accumulator of at most 64
    // registers a thread: larger ones ran slower so on an H100), the
    // previous multiply is done after it is issued, and its stage (the one
    // written next) is refilled once every warpgroup has released it.
    // Otherwise the stage is refilled first, so the copies run during the
    // multiply, which is waited for and its own stage released.
    let in_flight = mm * nn / threads <= MAX_ACC_REGS_IN_FLIGHT;
    let free = scaled(l, wr, 8, empty);
    let refill = |l: &mut Lowerer| {
        let go = bounds.before_end(l, ahead);
        l.b.begin_if(go, true);
        wait_phase(l, free, wr_parity);
        fill(l, wr);
        l.b.end_if();
    };
    if !in_flight {
        refill(l);
    }
    let ready = scaled(l, rd, 8, full);
    wait_phase(l, ready, rd_parity);
    wgmma::proxy_fence(l);
    let off = l.b.op(
        Opc::Mul,
        &["lo"],
        &[Ty::U32],
        Ty::U32,
        smallvec![Operand::Reg(rd), Operand::Imm(set)],
    );
    let descs = (moved(l, adesc, off), moved(l, bdesc, off));
    wgmma::multiply(l, &plan, signs, (&asmem, &bsmem), descs, &acc);
    wgmma::sync_op(
        l,
        &["wait_group", "sync", "aligned"],
        vec![Operand::Imm(i64::from(in_flight))],
    );
    if in_flight {
        let later = l.b.op(
            Opc::Setp,
            &["ne"],
            &[ity],
            Ty::Pred,
            smallvec![Operand::Reg(iv), Operand::Reg(lb)],
        );
        l.b.begin_if(later, true);
        mbarrier(l, "arrive", free, None);
        l.b.end_if();
        refill(l);
    } else {
        let done = scaled(l, rd, 8, empty);
        mbarrier(l, "arrive", done, None);
    }
    for (r, parity) in [(rd, rd_parity), (wr, wr_parity)] {
        let wrapped = advance_ring(l, r, 1, stages);
        flip(l, parity, wrapped);
    }
    l.b.op_into(
        iv,
        Opc::Add,
        &[],
        &[ity],
        smallvec![Operand::Reg(iv), Operand::Reg(step)],
    );
    l.b.end_loop();
    wgmma::sync_op(l, &["wait_group", "sync", "aligned"], vec![Operand::Imm(0)]);
    // Every thread is past its last wait before the barriers go away.
    l.barrier();
    l.b.begin_if(first, true);
    each_barrier(l, "inval", None);
    l.b.end_if();

    let t = wgmma::acc_tile(l, &plan, layout, &acc);
    if let Some(&r) = op.results.first() {
        l.bind(r, t);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use crate::lower::emit::ops::wgmma_pipeline::*;

    #[test]
    fn stages_are_as_many_as_fit_from_two_to_four() {
        let set = 32 * 1024;
        // Each stage also takes 16 bytes of barriers; 1024 bytes align.
        assert_eq!(stage_count(4 * set + 1024 + 64, set), Some(4));
        assert_eq!(stage_count(4 * set + 1024 + 63, set), Some(3));
        assert_eq!(stage_count(10 * set, set), Some(4));
        assert_eq!(stage_count(2 * set + 1024 + 32, set), Some(2));
        assert_eq!(stage_count(2 * set + 1024 + 31, set), None);
        assert_eq!(stage_count(-5, set), None);
    }
}
