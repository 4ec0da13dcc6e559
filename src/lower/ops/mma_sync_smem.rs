//! Shared-memory staging of `mma.sync` operands and the per-lane fragment
//! loads from it.
//!
//! A is stored row-major `[batch][M][K + pad]`; B row-major
//! `[batch][K][N + pad]` for 16- and 32-bit elements, and transposed
//! `[batch][N][K + pad]` for 8-bit ones (their B fragment holds four
//! consecutive K elements). Rows are padded by 16 bytes (32 for tf32 B),
//! which makes the eight 16-byte rows one `ldmatrix` phase reads, and the
//! tf32 B column reads, fall in distinct banks.
use crate::lower::kernel::{Lowerer, Tile};
use crate::lower::LowerError;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};

use super::mma_sync::Kind;
use super::staging::{alloc, write, Placement};

/// Where the staged operands lie.
pub struct Operands {
    /// Operand kind.
    pub kind: Kind,
    /// A's byte offset, row stride and batch stride.
    pub a: (i64, i64, i64),
    /// B's byte offset, row stride and batch stride.
    pub b: (i64, i64, i64),
}

/// Stages tiles `a` (`[batch,] M x K`) and `b` (`[batch,] K x N`).
pub fn operand_buffers(
    l: &mut Lowerer,
    kind: Kind,
    a: &Tile,
    b: &Tile,
) -> Result<Operands, LowerError> {
    let eb = kind.bytes();
    let ashape = &a.layout.shape;
    let bshape = &b.layout.shape;
    let rank = ashape.len();
    let (mm, kk, nn) = (ashape[rank - 2], ashape[rank - 1], bshape[rank - 1]);
    let lead: Vec<i64> = ashape[..rank - 2].to_vec();
    let with = |rows: i64, cols: i64| {
        let mut s = lead.clone();
        s.extend([rows, cols]);
        s
    };
    let apad = 16 / eb;
    let abuf = alloc(l, &with(mm, kk + apad), a.elem)?;
    write(l, a, &abuf, &Placement::identity(rank));
    let (bbuf, bstride) = if kind == Kind::Byte {
        let pad = 16;
        let buf = alloc(l, &with(nn, kk + pad), b.elem)?;
        let mut dims: Vec<usize> = (0..rank).collect();
        dims.swap(rank - 2, rank - 1);
        let place = Placement {
            dims,
            offsets: vec![Operand::Imm(0); rank],
        };
        write(l, b, &buf, &place);
        (buf, (kk + pad) * eb)
    } else {
        let pad = if kind == Kind::Tf32 { 8 } else { 16 / eb };
        let buf = alloc(l, &with(kk, nn + pad), b.elem)?;
        write(l, b, &buf, &Placement::identity(rank));
        (buf, (nn + pad) * eb)
    };
    let astride = (kk + apad) * eb;
    let b_rows = if kind == Kind::Byte { nn } else { kk };
    Ok(Operands {
        kind,
        a: (abuf.offset, astride, mm * astride),
        b: (bbuf.offset, bstride, b_rows * bstride),
    })
}

/// Each lane's base addresses for its fragment loads.
pub struct FragmentAddrs {
    a: Reg,
    b: Reg,
}

fn bin(l: &mut Lowerer, opc: Opc, ty: Ty, x: Reg, y: Operand) -> Reg {
    let mods: &[&'static str] = if opc == Opc::Mul || opc == Opc::Mad {
        &["lo"]
    } else {
        &[]
    };
    l.b.op(opc, mods, &[ty], Ty::U32, vec![Operand::Reg(x), y])
}

fn mad(l: &mut Lowerer, x: Reg, imm: i64, add: Reg) -> Reg {
    l.b.op(
        Opc::Mad,
        &["lo"],
        &[Ty::U32],
        Ty::U32,
        vec![Operand::Reg(x), Operand::Imm(imm), Operand::Reg(add)],
    )
}

impl FragmentAddrs {
    /// The addresses of lane `lane` in the warp whose sub-tile starts at
    /// row `m0`, column `n0`; `base` is the scratch array's address.
    pub fn new(l: &mut Lowerer, ops: &Operands, base: Reg, lane: Reg, m0: Reg, n0: Reg) -> Self {
        let lo4 = bin(l, Opc::And, Ty::B32, lane, Operand::Imm(15));
        let hi = bin(l, Opc::Shr, Ty::U32, lane, Operand::Imm(4));
        // A (ldmatrix x4): row m0 + lane % 16, 16-byte column lane / 16.
        let a = bin(l, Opc::Add, Ty::U32, base, Operand::Imm(ops.a.0));
        let row = bin(l, Opc::Add, Ty::U32, m0, Operand::Reg(lo4));
        let a = mad(l, row, ops.a.1, a);
        let a = mad(l, hi, 16, a);
        let eb = ops.kind.bytes();
        let b = bin(l, Opc::Add, Ty::U32, base, Operand::Imm(ops.b.0));
        let b = match ops.kind {
            Kind::Half => {
                // ldmatrix .trans: row k = lane % 16, columns n0 + 8 (lane / 16).
                let b = mad(l, lo4, ops.b.1, b);
                let b = mad(l, hi, 16, b);
                mad(l, n0, eb, b)
            }
            Kind::Tf32 => {
                // b0: row k = lane % 4, column n0 + lane / 4.
                let k = bin(l, Opc::And, Ty::B32, lane, Operand::Imm(3));
                let g = bin(l, Opc::Shr, Ty::U32, lane, Operand::Imm(2));
                let n = bin(l, Opc::Add, Ty::U32, n0, Operand::Reg(g));
                let b = mad(l, k, ops.b.1, b);
                mad(l, n, eb, b)
            }
            Kind::Byte => {
                // ldmatrix on B^T: row n0 + lane % 8 + 8 (lane / 16),
                // 16-byte column (lane / 8) % 2.
                let r = bin(l, Opc::And, Ty::B32, lane, Operand::Imm(7));
                let r = mad(l, hi, 8, r);
                let r = bin(l, Opc::Add, Ty::U32, r, Operand::Reg(n0));
                let c = bin(l, Opc::Shr, Ty::U32, lane, Operand::Imm(3));
                let c = bin(l, Opc::And, Ty::B32, c, Operand::Imm(1));
                let b = mad(l, r, ops.b.1, b);
                mad(l, c, 16, b)
            }
        };
        FragmentAddrs { a, b }
    }

    /// The A fragment (4 registers) of m16 tile `mt`, K step `kt`, batch `bt`.
    pub fn load_a(&self, l: &mut Lowerer, ops: &Operands, bt: i64, mt: i64, kt: i64) -> Vec<Reg> {
        let k = ops.kind;
        let off = bt * ops.a.2 + mt * 16 * ops.a.1 + kt * k.k() * k.bytes();
        ldmatrix(l, self.a, off, 4, false)
    }

    /// The B fragments (2 registers each) of the `nt_n` n8 tiles at K step
    /// `kt`, batch `bt`.
    pub fn load_b(
        &self,
        l: &mut Lowerer,
        ops: &Operands,
        bt: i64,
        nt_n: i64,
        kt: i64,
    ) -> Vec<Vec<Reg>> {
        let k = ops.kind;
        let (_, stride, bstride) = ops.b;
        let mut out = Vec::new();
        match k {
            Kind::Tf32 => {
                for nt in 0..nt_n {
                    let off = bt * bstride + kt * 8 * stride + nt * 8 * 4;
                    let r0 = ld_shared(l, self.b, off);
                    let r1 = ld_shared(l, self.b, off + 4 * stride);
                    out.push(vec![r0, r1]);
                }
            }
            Kind::Half | Kind::Byte => {
                let trans = k == Kind::Half;
                let mut nt = 0;
                while nt < nt_n {
                    let two = nt + 1 < nt_n;
                    let off = bt * bstride
                        + if trans {
                            kt * 16 * stride + nt * 8 * 2
                        } else {
                            nt * 8 * stride + kt * 32
                        };
                    let r = ldmatrix(l, self.b, off, if two { 4 } else { 2 }, trans);
                    out.push(r[..2].to_vec());
                    if two {
                        out.push(r[2..].to_vec());
                    }
                    nt += 2;
                }
            }
        }
        out
    }
}

/// `ldmatrix.sync.aligned.m8n8.x{count}[.trans].shared.b16`.
fn ldmatrix(l: &mut Lowerer, addr: Reg, off: i64, count: usize, trans: bool) -> Vec<Reg> {
    let d: Vec<Reg> = (0..count).map(|_| l.b.reg(RegClass::B32)).collect();
    let num = if count == 4 { "x4" } else { "x2" };
    let mods: &[&'static str] = if trans {
        &["sync", "aligned", "m8n8", num, "trans", "shared"]
    } else {
        &["sync", "aligned", "m8n8", num, "shared"]
    };
    l.b.push(Inst::new(
        Opc::Ldmatrix,
        mods,
        &[Ty::B16],
        vec![Operand::Vec(d.clone())],
        vec![Operand::Addr(addr, off)],
    ));
    d
}

/// `ld.shared.b32`.
fn ld_shared(l: &mut Lowerer, addr: Reg, off: i64) -> Reg {
    let d = l.b.reg(RegClass::B32);
    l.b.push(Inst::new(
        Opc::Ld,
        &["shared"],
        &[Ty::B32],
        vec![Operand::Reg(d)],
        vec![Operand::Addr(addr, off)],
    ));
    d
}
