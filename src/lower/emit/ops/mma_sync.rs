//! `mmaf` / `mmai` (and dequantized `mmaf_scaled`) on warp-level tensor
//! cores (`mma.sync`, sm_80 and newer).
//!
//! The operands are staged in shared memory with padded rows, or
//! XOR-swizzled unpadded ones under `TILEIR_ALWAYS_SWIZZLE`
//! ([`crate::lower::emit::ops::mma_sync_smem`]); operands larger than the 96 KiB staging
//! budget (or the shared memory left) are staged one power-of-two K slice
//! at a time, the accumulator carried from slice to slice; layout
//! assignment is then asked for operands with their warps off K
//! ([`operand_layouts`]), so that every slice's stores are chosen at
//! compile time. Every warp
//! loads its fragments (`ldmatrix` where the fragment is a b16 matrix view
//! of the data, else `ld.shared`) and issues one `mma.sync` per m16 x n8 tile of its sub-tile and per
//! instruction K step. The accumulator lives in registers in the layout of
//! [`acc_layout`], which layout assignment gives the op's `acc` and result.
//!
//! Shapes: M a multiple of 16, N of 8, K of the instruction K (16 for
//! f16/bf16, 8 for tf32, 32 for 8-bit types, 4 for f64); other shapes, f32
//! operands, f64 on sm_120 and bf16 accumulators go to the FMA engine.
use smallvec::smallvec;
use std::rc::Rc;

use crate::ir::{OpId, Opcode, Scalar};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};

use crate::lower::emit::ops::arith::enum_attr;
use crate::lower::emit::ops::mma_sync_smem::{
    operand_buffers, pack, staged_bytes, swizzled, FragmentAddrs, Operands, Staged,
};
use crate::lower::emit::ops::staging::room;
use crate::lower::plan::engines::k_slices;
use crate::lower::plan::engines::mma_sync::{a_fragment_layout, Kind, Plan, STAGE_BUDGET};

/// The PTX type name of operand elements `s` (`signed` for integers).
fn operand_ty(s: Scalar, signed: bool) -> &'static str {
    match s {
        Scalar::F16 => "f16",
        Scalar::BF16 => "bf16",
        Scalar::TF32 => "tf32",
        Scalar::F8E4M3FN => "e4m3",
        Scalar::F8E5M2 => "e5m2",
        Scalar::F64 => "f64",
        _ if signed => "s8",
        _ => "u8",
    }
}

/// `mov.b32 {lo, hi}, v`: a b32 register split in two b16 registers.
fn unpack(l: &mut Lowerer, v: Reg) -> (Reg, Reg) {
    let (lo, hi) = (l.b.reg(RegClass::B16), l.b.reg(RegClass::B16));
    l.b.push(Inst::new(
        Opc::Mov,
        &[],
        &[Ty::B32],
        smallvec![Operand::Vec(vec![lo, hi])],
        smallvec![Operand::Reg(v)],
    ));
    (lo, hi)
}

/// Accumulator registers a thread from which [`Mmas`] loads B a pair of
/// n8 tiles at a time.
const CHUNKED_ACC_REGS: i64 = 64;

/// Lowers op `id` by `plan`.
pub fn lower(l: &mut Lowerer, id: OpId, plan: &Plan) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let (Some(a_v), Some(c_v), Some(&res)) =
        (op.operand("lhs"), op.operand("acc"), op.results.first())
    else {
        return Err(l.unsupported(id));
    };
    let (Some((ashape, _)), Some((ae, be))) = (
        value_tile(l.m, a_v),
        crate::lower::plan::engines::operand_elems(l.m, id),
    ) else {
        return Err(l.unsupported(id));
    };
    let (sa, sb) = if op.opcode == Opcode::MmaI {
        (
            enum_attr(l, id, "signedness_lhs") != Some(0),
            enum_attr(l, id, "signedness_rhs") != Some(0),
        )
    } else {
        (true, true)
    };
    let layout = Rc::new(plan.acc.clone());
    let shape = layout.shape.clone();
    let rank = shape.len();
    let kk = ashape[rank - 1];
    let acc_in = l.tile_in(id, c_v, &layout)?;
    let mma = Mmas::new(plan, &shape, kk, ae, be, sa, sb);
    if let Some(d) = op
        .operand("rhs")
        .and_then(|v| crate::lower::emit::ops::mma_sync_direct::direct(l, v))
    {
        let acc = direct_b(l, id, plan, (a_v, &ashape), &d, mma, &acc_in.regs)?;
        l.bind(res, acc);
        return Ok(());
    }
    let (a, b) = crate::lower::emit::ops::mma_stream::operands(l, id)?;
    // Operands too large for the budget or the shared memory left are
    // staged one K slice at a time; streamed ones are read a slice at a
    // time too, the next slice while the current one is multiplied.
    let batch = if rank == 3 { shape[0] } else { 1 };
    let (mm, nn) = (shape[rank - 2], shape[rank - 1]);
    let swizzle = swizzled(l, a.disjoint(), b.disjoint());
    // A already in fragment order stays in registers.
    let a_regs = a
        .tile()
        .filter(|a| a_fragment_layout(plan, &a.layout.shape).is_some_and(|f| f == *a.layout))
        .map(|a| a_fragments(l, a));
    let staged_m = if a_regs.is_some() { 0 } else { mm };
    let (ashape, bshape) = (a.shape(), b.shape());
    let threads = i64::from(l.plan.warps) * 32;
    let slice_words =
        |ks: i64| a.slice_words(rank - 1, ks, threads) + b.slice_words(rank - 2, ks, threads);
    let streamed = slice_words(kk) > 0;
    let bytes = |ks: i64| staged_bytes(plan.kind, batch, (staged_m, nn), ks, swizzle);
    // Warps splitting K each read their part of one slice of the whole K.
    let parts = plan.k_parts();
    let ks = k_slices(kk, plan.kind.k())
        .filter(|&ks| parts == 1 || ks == kk)
        .find(|&ks| {
            bytes(ks) <= STAGE_BUDGET.min(room(l))
                && (parts > 1
                    || slice_words(ks) <= crate::lower::emit::ops::mma_stream::SLICE_WORDS
                    || ks == plan.kind.k())
        })
        .ok_or_else(|| l.unsupported_feature(id, "a tile too large for shared memory"))?;
    // Streamed slices alternate between two sets of buffers where they fit.
    let sets = if streamed && ks < kk && 2 * bytes(ks) <= STAGE_BUDGET.min(room(l)) {
        2
    } else {
        1
    };
    let elems = (
        a.tile().map_or(Elem::Num(ae), |t| t.elem),
        b.tile().map_or(Elem::Num(be), |t| t.elem),
    );
    let staged: Vec<Staged> = (0..sets)
        .map(|_| {
            operand_buffers(
                l,
                plan.kind,
                (&ashape, &bshape),
                elems,
                ks,
                a_regs.is_none(),
                swizzle,
            )
        })
        .collect::<Result<_, _>>()?;
    let slices = kk / ks;
    // A streamed A whose rows `cp.async` can copy goes global-to-shared
    // without registers (B still through them).
    let copy_a = a_regs.is_none().then_some(plan.kind);
    let mut reads =
        crate::lower::emit::ops::mma_stream::Slices::new(l, (&a, &b), rank, ks, copy_a)?;
    let copies = reads.copies_a();
    let stage = |l: &mut Lowerer,
                 reads: &mut crate::lower::emit::ops::mma_stream::Slices,
                 to: &Staged,
                 slice: &[Option<Tile>; 2],
                 s: i64| {
        reads.copy(l, to.a_dest());
        match (a.part(&slice[0]), b.part(&slice[1])) {
            (pa, Some(pb)) if pa.is_some() || copies => {
                to.stage(l, pa, pb, s);
                Ok(())
            }
            _ => Err(l.unsupported(id)),
        }
    };
    // Every thread's copies land before the barrier that shows them.
    let barrier = |l: &mut Lowerer| {
        if copies {
            crate::lower::emit::ops::mma_sync_pipeline::wait(l, 0);
        }
        l.barrier();
    };
    let first = reads.next(l)?;
    stage(l, &mut reads, &staged[0], &first, 0)?;
    barrier(l);
    let base = l.shared_base();
    let frags: Vec<FragmentAddrs> = staged
        .iter()
        .map(|st| fragment_addrs(l, plan, &st.ops, base, &shape))
        .collect();
    let mut acc = acc_fragments(l, plan, &acc_in.regs);
    let mut mma = Mmas {
        k_steps: ks / parts / plan.kind.k(),
        ..mma
    };
    for s in 0..slices {
        let set = (s as usize) % staged.len();
        let other = (s as usize + 1) % staged.len();
        // The next slice's reads go out before this one's products. With
        // two sets, they are written into the other one at once: the
        // barrier that ended the last slice ordered the writes after the
        // reads of two slices back.
        let next = if s + 1 < slices {
            let next = reads.next(l)?;
            if staged.len() == 2 {
                stage(l, &mut reads, &staged[other], &next, s + 1)?;
                None
            } else {
                Some(next)
            }
        } else {
            None
        };
        if let Some(regs) = &a_regs {
            mma.a_regs = Some(ARegs {
                frags: regs.clone(),
                k_steps: kk / parts / plan.kind.k(),
                first: s * (ks / parts / plan.kind.k()),
            });
        }
        mma.emit(l, &staged[set].ops, &frags[set], &mut acc, false);
        barrier(l);
        if let Some(next) = next {
            // One set: every thread is done reading it before it is
            // rewritten.
            stage(l, &mut reads, &staged[other], &next, s + 1)?;
            barrier(l);
        }
    }
    let regs = acc_registers(l, plan, acc);
    l.bind(
        res,
        Tile {
            elem: Elem::Num(plan.acc_elem),
            layout,
            regs,
        },
    );
    Ok(())
}

/// The product `id` by `plan` of A (`a_v`, of shape `ashape`) in
/// registers as fragments and B copied straight into shared memory (`d`),
/// accumulating into `acc`: waits for the copies, multiplies (on `wgmma`
/// where the copy landed in its layout, [`crate::lower::emit::ops::wgmma_regs`]), and
/// returns the result tile.
fn direct_b(
    l: &mut Lowerer,
    id: OpId,
    plan: &Plan,
    (a_v, ashape): (crate::ir::ValueId, &[i64]),
    d: &Rc<crate::lower::emit::ops::mma_sync_direct::DirectB>,
    mma: Mmas,
    acc: &[Reg],
) -> Result<Tile, LowerError> {
    // Copies deferred by earlier products go out before this one waits.
    crate::lower::emit::ops::mma_sync_direct::issue_next(l)?;
    let regs = direct_b_product(l, id, plan, (a_v, ashape), d, mma, acc)?;
    crate::lower::emit::ops::mma_sync_direct::defer_next(l, d);
    release_direct(l, d);
    Ok(Tile {
        elem: Elem::Num(plan.acc_elem),
        layout: Rc::new(plan.acc.clone()),
        regs,
    })
}

/// The multiply of [`direct_b`]: the accumulator's registers after it.
fn direct_b_product(
    l: &mut Lowerer,
    id: OpId,
    plan: &Plan,
    (a_v, ashape): (crate::ir::ValueId, &[i64]),
    d: &crate::lower::emit::ops::mma_sync_direct::DirectB,
    mut mma: Mmas,
    acc: &[Reg],
) -> Result<Vec<Reg>, LowerError> {
    use crate::lower::emit::ops::wgmma_regs::{multiply, AOperand};
    if let (Some(s), Some((offset, sa))) = (
        &d.swizzled,
        crate::lower::emit::ops::wgmma_regs::staged_a(l, a_v),
    ) {
        return Ok(multiply(l, id, plan, AOperand::Smem(offset, sa), d, s, acc));
    }
    // A staged before the loop is read a fragment at a time.
    let rows_a =
        crate::lower::emit::ops::mma_sync_staged_a::rows(l, a_v).filter(|_| d.swizzled.is_none());
    if rows_a.is_none() {
        let frag = a_fragment_layout(plan, ashape).ok_or_else(|| l.unsupported(id))?;
        let a = l.tile_in(id, a_v, &Rc::new(frag))?;
        let frags = a_fragments(l, &a);
        if let Some(s) = &d.swizzled {
            return Ok(multiply(l, id, plan, AOperand::Regs(&frags), d, s, acc));
        }
        mma.a_regs = Some(ARegs {
            frags,
            k_steps: mma.k_steps,
            first: 0,
        });
    }
    let rank = plan.acc.shape.len();
    let (kk, nn) = (ashape[rank - 1], plan.acc.shape[rank - 1]);
    let rows = if d.nk { nn } else { kk };
    let ops = Operands {
        kind: plan.kind,
        a: rows_a.map_or((0, 0, 0), |r| (r.offset, r.stride, 0)),
        b: (d.offset, d.stride, rows * d.stride),
        b_natural: false,
        b_nk: d.nk,
        swizzle: [false, d.rows_swizzled],
    };
    crate::lower::emit::ops::mma_sync_direct::wait_for(l, d.load);
    l.barrier();
    let base = l.shared_base();
    let frags = fragment_addrs(l, plan, &ops, base, &plan.acc.shape);
    let mut acc = acc_fragments(l, plan, acc);
    mma.emit(l, &ops, &frags, &mut acc, false);
    // The next writer of the buffer waits for every warp's reads.
    l.barrier();
    Ok(acc_registers(l, plan, acc))
}

/// Where scratch is reused, a direct copy's buffer is free again once read
/// when it is the last one claimed (a later B copy, say, may take its
/// place).
fn release_direct(l: &mut Lowerer, d: &crate::lower::emit::ops::mma_sync_direct::DirectB) {
    if d.next.is_none() && i64::from(l.shared_bytes) == d.end {
        l.release_shared(u32::try_from(d.offset).unwrap_or(u32::MAX));
    }
}

/// Each lane's fragment base addresses for operands `ops` at `base`.
pub fn fragment_addrs(
    l: &mut Lowerer,
    plan: &Plan,
    ops: &Operands,
    base: Reg,
    shape: &[i64],
) -> FragmentAddrs {
    let rank = shape.len();
    let grid = plan.grid;
    let (tm, tn) = (grid.tile_m(shape[rank - 2]), grid.tile_n(shape[rank - 1]));
    let tid = l.tid();
    let op2 = |l: &mut Lowerer, opc: Opc, ty: Ty, x: Reg, imm: i64| {
        let mods: &[&'static str] = if opc == Opc::Mul { &["lo"] } else { &[] };
        l.b.op(
            opc,
            mods,
            &[ty],
            Ty::U32,
            smallvec![Operand::Reg(x), Operand::Imm(imm)],
        )
    };
    let lane = op2(l, Opc::And, Ty::B32, tid, 31);
    let warp = op2(l, Opc::Shr, Ty::U32, tid, 5);
    let wm = op2(l, Opc::And, Ty::B32, warp, grid.m - 1);
    let wn = op2(
        l,
        Opc::Shr,
        Ty::U32,
        warp,
        i64::from(grid.m.trailing_zeros()),
    );
    let wn = op2(l, Opc::And, Ty::B32, wn, grid.n - 1);
    let m0 = op2(l, Opc::Mul, Ty::U32, wm, tm);
    let n0 = op2(l, Opc::Mul, Ty::U32, wn, tn);
    let addrs = FragmentAddrs::new(l, ops, base, lane, m0, n0);
    if plan.k_parts() == 1 {
        return addrs;
    }
    // Warps splitting K start at their part's first row of B (column of A).
    let wk = op2(
        l,
        Opc::Shr,
        Ty::U32,
        warp,
        i64::from((grid.m * grid.n).trailing_zeros()),
    );
    let wk = op2(l, Opc::And, Ty::B32, wk, plan.k_parts() - 1);
    let k0 = op2(l, Opc::Mul, Ty::U32, wk, plan.k / plan.k_parts());
    addrs.at_k(l, ops, k0)
}

/// The A fragments of tile `a`, which is in [`a_fragment_layout`]: for
/// batch `b`, m16 tile `mt`, K step `kt` (index `(b * MT + mt) * KT +
/// kt`), the packed pairs of C elements 0-1 and 2-3 of the n8 tiles `2 kt`
/// and `2 kt + 1` of a product of A's shape.
fn a_fragments(l: &mut Lowerer, a: &Tile) -> Vec<Vec<Reg>> {
    let rank = a.layout.shape.len();
    // The thread's n8 tiles: the register bases along the columns, less
    // the one within a fragment.
    let col_bits = a
        .layout
        .register
        .iter()
        .filter(|b| b[rank - 1] != 0)
        .count();
    let nt_n = 1i64 << col_bits.saturating_sub(1);
    let regs = &a.regs;
    let tiles = regs.len() as i64 / (4 * nt_n);
    let mut out = Vec::new();
    for t in 0..tiles {
        for kt in 0..nt_n / 2 {
            let r = |nt: i64, c: i64| regs[(4 * (t * nt_n + nt) + c) as usize];
            let (n0, n1) = (2 * kt, 2 * kt + 1);
            out.push(vec![
                pack(l, r(n0, 0), r(n0, 1)),
                pack(l, r(n0, 2), r(n0, 3)),
                pack(l, r(n1, 0), r(n1, 1)),
                pack(l, r(n1, 2), r(n1, 3)),
            ]);
        }
    }
    out
}

/// A fragments held in registers (see [`a_fragments`]), for the K steps
/// from `first` on.
pub struct ARegs {
    /// Fragments by `(batch * MT + mt) * k_steps + kt`.
    pub frags: Vec<Vec<Reg>>,
    /// K steps in all.
    pub k_steps: i64,
    /// The first K step the instructions multiply.
    pub first: i64,
}

/// The accumulator registers (`[batch,] M x N` in the plan's layout) as
/// `mma.sync` C fragments: 4 per m16 x n8 tile, f16 pairs packed.
pub fn acc_fragments(l: &mut Lowerer, plan: &Plan, regs: &[Reg]) -> Vec<Vec<Reg>> {
    regs.chunks(plan.kind.c_regs())
        .map(|r| {
            if plan.acc_elem == Scalar::F16 {
                vec![pack(l, r[0], r[1]), pack(l, r[2], r[3])]
            } else {
                r.to_vec()
            }
        })
        .collect()
}

/// The accumulator's registers in the plan's layout from C fragments.
pub fn acc_registers(l: &mut Lowerer, plan: &Plan, acc: Vec<Vec<Reg>>) -> Vec<Reg> {
    let mut regs = Vec::with_capacity(4 * acc.len());
    for t in acc {
        if plan.acc_elem == Scalar::F16 {
            for v in t {
                let (lo, hi) = unpack(l, v);
                regs.extend([lo, hi]);
            }
        } else {
            regs.extend(t);
        }
    }
    regs
}

/// Fragments `frags`, rounded to tf32 when `on` (operands of f32 that
/// `ftof` rounded).
fn rounded(l: &mut Lowerer, on: bool, mut frags: Vec<Vec<Reg>>) -> Vec<Vec<Reg>> {
    if on {
        for r in frags.iter_mut().flatten() {
            *r = crate::lower::emit::ops::cast::round_to_tf32(l, *r);
        }
    }
    frags
}

/// The `mma.sync` instructions of one matrix multiply.
pub struct Mmas {
    /// Whether A and B fragments are rounded to tf32 once loaded (the
    /// operands were f32 rounded by `ftof`).
    pub round: (bool, bool),
    /// A's fragments, when in registers rather than in shared memory.
    pub a_regs: Option<ARegs>,
    mods: [&'static str; 9],
    kind: Kind,
    batch: i64,
    mt_n: i64,
    nt_n: i64,
    k_steps: i64,
}

impl Mmas {
    /// For `plan` over result `shape`, reduction length `k`, operand
    /// elements `ae`, `be` (signed: `sa`, `sb`).
    pub fn new(
        plan: &Plan,
        shape: &[i64],
        k: i64,
        ae: Scalar,
        be: Scalar,
        sa: bool,
        sb: bool,
    ) -> Mmas {
        let rank = shape.len();
        let (dty, cty) = match plan.acc_elem {
            Scalar::F16 => ("f16", "f16"),
            Scalar::I32 => ("s32", "s32"),
            Scalar::F64 => ("f64", "f64"),
            _ => ("f32", "f32"),
        };
        let shape_mod = match plan.kind {
            Kind::Half => "m16n8k16",
            Kind::Tf32 => "m16n8k8",
            Kind::Byte => "m16n8k32",
            Kind::F64 => "m8n8k4",
        };
        let (aty, bty) = (operand_ty(ae, sa), operand_ty(be, sb));
        Mmas {
            round: (false, false),
            a_regs: None,
            mods: [
                "sync", "aligned", shape_mod, "row", "col", dty, aty, bty, cty,
            ],
            kind: plan.kind,
            batch: if rank == 3 { shape[0] } else { 1 },
            mt_n: plan.grid.tile_m(shape[rank - 2]) / plan.kind.m(),
            nt_n: plan.grid.tile_n(shape[rank - 1]) / 8,
            k_steps: k / plan.k_parts() / plan.kind.k(),
        }
    }

    /// How many n8 tiles' B fragments are loaded at a time. Where the
    /// accumulator takes [`CHUNKED_ACC_REGS`] registers or more a thread
    /// (attention's S, 64 to 128, beside O and Q): two, one `ldmatrix.x4`
    /// right before their products, so B holds 4 registers at a time
    /// rather than 2 for every n8 tile of the K step. Otherwise all at
    /// once. 8-bit B keeps the batch: ptxas schedules those products worse
    /// a pair at a time (the f8 matmuls on sm_100 spilled 344 bytes, not
    /// 224).
    fn b_chunk(&self) -> i64 {
        let acc_regs = self.mt_n * self.nt_n * 4;
        if self.kind != Kind::Byte && acc_regs >= CHUNKED_ACC_REGS {
            2
        } else {
            self.nt_n
        }
    }

    /// Loads the fragments and accumulates into `acc` (in place when
    /// `in_place`, else into fresh registers).
    pub fn emit(
        &self,
        l: &mut Lowerer,
        ops: &Operands,
        frags: &FragmentAddrs,
        acc: &mut [Vec<Reg>],
        in_place: bool,
    ) {
        let (mt_n, nt_n) = (self.mt_n, self.nt_n);
        let chunk = self.b_chunk();
        for bt in 0..self.batch {
            for kt in 0..self.k_steps {
                let af: Vec<Vec<Reg>> = (0..mt_n)
                    .map(|mt| match &self.a_regs {
                        Some(a) => {
                            a.frags[((bt * mt_n + mt) * a.k_steps + a.first + kt) as usize].clone()
                        }
                        None => frags.load_a(l, ops, bt, mt, kt),
                    })
                    .collect();
                let af = rounded(l, self.round.0, af);
                for n0 in (0..nt_n).step_by(chunk as usize) {
                    let n1 = (n0 + chunk).min(nt_n);
                    let bf = frags.load_b(l, ops, bt, n0..n1, kt);
                    let bf = rounded(l, self.round.1, bf);
                    for (mt, a) in af.iter().enumerate() {
                        for (nt, b) in (n0..n1).zip(&bf) {
                            let t = (bt * mt_n + mt as i64) * nt_n + nt;
                            self.product(l, a, b, &mut acc[t as usize], in_place);
                        }
                    }
                }
            }
        }
    }

    /// One `mma.sync` of fragments `a` and `b` into `acc` (in place, or
    /// into fresh registers that then stand for it).
    fn product(&self, l: &mut Lowerer, a: &[Reg], b: &[Reg], acc: &mut Vec<Reg>, in_place: bool) {
        let d: Vec<Reg> = if in_place {
            acc.clone()
        } else {
            acc.iter().map(|r| l.b.reg(r.class)).collect()
        };
        l.b.push(Inst::new(
            Opc::Mma,
            &self.mods,
            &[],
            smallvec![Operand::Vec(d.clone())],
            vec![
                Operand::Vec(a.to_vec()),
                Operand::Vec(b.to_vec()),
                Operand::Vec(acc.clone()),
            ],
        ));
        *acc = d;
    }
}
