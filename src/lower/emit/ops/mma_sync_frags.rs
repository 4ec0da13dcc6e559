//! `mma.sync` fragments: where each warp's A and B fragments lie in the
//! staged buffers ([`fragment_addrs`]), the accumulator's registers as C
//! fragments and back, A fragments already in registers ([`ARegs`]), and
//! the instructions multiplying them ([`Mmas`]).
use smallvec::smallvec;

use crate::ir::Scalar;
use crate::lower::emit::context::{Lowerer, Tile};
use crate::ptx::{Inst, Opc, Operand, Reg, Ty};

use crate::lower::emit::ops::mma_sync_smem::{pack, FragmentAddrs, Operands};
use crate::lower::plan::engines::mma_sync::{Kind, Plan};

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
    l.b.split(v)
}

/// Accumulator registers a thread from which [`Mmas`] loads B a pair of
/// n8 tiles at a time.
const CHUNKED_ACC_REGS: i64 = 64;

/// Each lane's fragment base addresses for operands `ops` at `bases` (A's
/// and B's).
pub fn fragment_addrs(
    l: &mut Lowerer,
    plan: &Plan,
    ops: &Operands,
    bases: (Reg, Reg),
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
    let addrs = FragmentAddrs::new(l, ops, bases, lane, m0, n0);
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
pub fn a_fragments(l: &mut Lowerer, a: &Tile) -> Vec<Vec<Reg>> {
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
    /// The instruction's modifiers (shape, layouts, types).
    pub mods: [&'static str; 9],
    /// The instruction kind.
    pub kind: Kind,
    /// Products in the batch.
    pub batch: i64,
    /// m16 tiles a warp multiplies.
    pub mt_n: i64,
    /// n8 tiles a warp multiplies.
    pub nt_n: i64,
    /// Instruction K steps.
    pub k_steps: i64,
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
