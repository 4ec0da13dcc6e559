//! `mmaf` / `mmai` without tensor cores, the fallback engine. Multiplies
//! small enough that each thread can hold its rows of A and columns of B
//! read them straight into registers ([`crate::lower::emit::ops::mma_fma_regs`]). Otherwise
//! both operands are staged in shared memory (whole, or one power-of-two K
//! slice at a time when they do not fit, [`crate::lower::emit::ops::staging_window`]) and
//! every thread runs a k-loop of FMAs for the accumulator elements its
//! layout gives it. Correct for every element type and shape (2-D, or 3-D
//! batched); used where no tensor-core engine applies (f32/f64 operands,
//! odd shapes, targets without one).
use rustc_hash::FxHashMap as HashMap;
use smallvec::smallvec;

use std::rc::Rc;

use crate::ir::{OpId, Scalar, ValueId};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Opc, Operand, Reg, RegClass, Ty};

use crate::lower::emit::ops::staging::{alloc, coordinates, write, Buffer, Placement};
use crate::lower::emit::ops::staging_window::{write_window, Window};

/// The type products are accumulated in.
#[derive(Clone, Copy, PartialEq)]
pub enum Acc {
    /// f32 (f16, bf16, tf32, f8 and f32 operands).
    F32,
    /// f64.
    F64,
    /// s32 (8-bit integer operands).
    S32,
}

/// Converts an element register to the accumulation type.
pub fn to_acc(l: &mut Lowerer, s: Scalar, signed: bool, v: Reg, acc: Acc) -> Option<Reg> {
    let r = |x: Reg| Operand::Reg(x);
    Some(match (s, acc) {
        (Scalar::F16, Acc::F32) => {
            l.b.op(Opc::Cvt, &[], &[Ty::F32, Ty::F16], Ty::F32, vec![r(v)])
        }
        (Scalar::BF16, Acc::F32) => crate::lower::emit::ops::arith::to_f32(l, s, v),
        (Scalar::F32 | Scalar::TF32, Acc::F32)
        | (Scalar::F64, Acc::F64)
        | (Scalar::I32, Acc::S32) => v,
        (Scalar::F8E5M2 | Scalar::F8E4M3FN, Acc::F32) => {
            crate::lower::emit::ops::f8::f8_to_f32(l, s, v)
        }
        (Scalar::I8, Acc::S32) => {
            let t = if signed {
                [Ty::S32, Ty::S8]
            } else {
                [Ty::U32, Ty::U8]
            };
            l.b.op(Opc::Cvt, &[], &t, Ty::S32, vec![r(v)])
        }
        _ => return None,
    })
}

/// The K extent the staging of product `id` takes, as the plan chose it by
/// the room left (`None` when not even one K step fits anywhere).
fn k_slice(l: &Lowerer, id: OpId) -> Option<i64> {
    l.chosen().slices(id).map(|(k, _)| k)
}

/// What both paths of the engine know of one matrix multiply.
pub struct Fma {
    /// The op.
    pub id: OpId,
    /// The `lhs` operand.
    pub a_v: ValueId,
    /// The `rhs` operand.
    pub b_v: ValueId,
    c_v: ValueId,
    res: ValueId,
    /// The shape of A.
    pub ashape: Vec<i64>,
    bshape: Vec<i64>,
    cshape: Vec<i64>,
    /// Element type of A.
    pub ae: Scalar,
    /// Element type of B.
    pub be: Scalar,
    ce: Scalar,
    /// Whether A is signed (integer multiplies).
    pub sa: bool,
    /// Whether B is signed.
    pub sb: bool,
    /// The type products accumulate in.
    pub acc_kind: Acc,
}

impl Fma {
    /// The multiply `id`, or an error naming what the engine cannot do.
    fn of(l: &Lowerer, id: OpId) -> Result<Fma, LowerError> {
        let op = &l.m.ops[id];
        let (Some(a_v), Some(b_v), Some(c_v), Some(&res)) = (
            op.operand("lhs"),
            op.operand("rhs"),
            op.operand("acc"),
            op.results.first(),
        ) else {
            return Err(l.unsupported(id));
        };
        let (Some((ashape, _)), Some((bshape, _)), Some((cshape, Elem::Num(ce))), Some((ae, be))) = (
            value_tile(l.m, a_v),
            value_tile(l.m, b_v),
            value_tile(l.m, res),
            crate::lower::plan::engines::operand_elems(l.m, id),
        ) else {
            return Err(l.unsupported(id));
        };
        let rank = cshape.len();
        if !(rank == 2 || rank == 3) || ashape.len() != rank || bshape.len() != rank {
            return Err(l.unsupported_feature(id, "this rank"));
        }
        let acc_kind = match ce {
            Scalar::F64 => Acc::F64,
            Scalar::I32 => Acc::S32,
            Scalar::F32 | Scalar::F16 | Scalar::BF16 => Acc::F32,
            _ => return Err(l.unsupported_feature(id, "this accumulator type")),
        };
        let (sa, sb) = crate::lower::emit::ops::mma_operands::signedness(l, id);
        Ok(Fma {
            id,
            a_v,
            b_v,
            c_v,
            res,
            ashape,
            bshape,
            cshape,
            ae,
            be,
            ce,
            sa,
            sb,
            acc_kind,
        })
    }

    /// Emits `acc += x * y` in the accumulation type (`fma.rn`, or
    /// `mad.lo` for integers).
    pub fn accumulate(&self, l: &mut Lowerer, acc: Reg, x: Reg, y: Reg) {
        let (ty, opc, mods): (Ty, Opc, &[&str]) = match self.acc_kind {
            Acc::F32 => (Ty::F32, Opc::Fma, &["rn"]),
            Acc::F64 => (Ty::F64, Opc::Fma, &["rn"]),
            Acc::S32 => (Ty::S32, Opc::Mad, &["lo"]),
        };
        l.b.op_into(
            acc,
            opc,
            mods,
            &[ty],
            vec![Operand::Reg(x), Operand::Reg(y), Operand::Reg(acc)],
        );
    }
}

/// Lowers `mmaf`, `mmai` and dequantized `mmaf_scaled`.
pub fn lower(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let f = Fma::of(l, id)?;
    let layout = l.layout_of(f.res);
    let acc_in = l.tile_in(id, f.c_v, &layout)?;
    if let Some(operands) = crate::lower::plan::engines::fma::operand_layouts(l.m, id, &layout) {
        let accs = init_accs(l, &f, &layout, &acc_in)?;
        crate::lower::emit::ops::mma_fma_regs::multiply(l, &f, operands, &accs)?;
        return finish(l, &f, layout, &accs);
    }
    let st = Staged::of(l, &f)?;
    st.stage(l, 0);
    let accs = init_accs(l, &f, &layout, &acc_in)?;
    let addrs = operand_addresses(l, &f, &st, &layout, &accs);
    // The k-loop, once per slice, the next slice (or the op itself, when
    // it runs again) overwriting the buffers.
    let slices = st.kdim / st.ks;
    for s in 0..slices {
        if s > 0 {
            st.stage(l, s);
        }
        k_loop(l, &f, &st, &addrs, &accs)?;
    }
    finish(l, &f, layout, &accs)
}

/// The operands of the shared-memory path: the A and B tiles, the buffers
/// each holds one K slice of, and that slice's extent.
struct Staged {
    /// The A tile.
    a: Tile,
    /// The B tile.
    b: Tile,
    /// A's buffer: its rows, `ks` elements each.
    abuf: Buffer,
    /// B's buffer: `ks` of its rows.
    bbuf: Buffer,
    /// The K extent staged at a time.
    ks: i64,
    /// All of K.
    kdim: i64,
    /// The rank of the product (3 when batched).
    rank: usize,
}

impl Staged {
    /// The operand tiles of multiply `f` and their buffers: all of K when
    /// both fit the shared memory left, else one K slice at a time.
    fn of(l: &mut Lowerer, f: &Fma) -> Result<Staged, LowerError> {
        let (ashape, bshape, rank) = (&f.ashape, &f.bshape, f.cshape.len());
        let kdim = ashape[rank - 1];
        let (a, b) = crate::lower::emit::ops::mma_operands::operand_tiles(l, f.id)?;
        // Operands too large for shared memory whole are staged one K slice
        // at a time.
        let ks = k_slice(l, f.id)
            .ok_or_else(|| l.unsupported_feature(f.id, "a tile too large for shared memory"))?;
        let (mut as_, mut bs_) = (ashape.clone(), bshape.clone());
        as_[rank - 1] = ks;
        bs_[rank - 2] = ks;
        let abuf = alloc(
            l,
            crate::lower::plan::buffers::What::Operands,
            &as_,
            Elem::Num(f.ae),
        )?;
        let bbuf = alloc(
            l,
            crate::lower::plan::buffers::What::Operands,
            &bs_,
            Elem::Num(f.be),
        )?;
        Ok(Staged {
            a,
            b,
            abuf,
            bbuf,
            ks,
            kdim,
            rank,
        })
    }

    /// Writes K slice `s` of both operands into their buffers, which the
    /// block reads next.
    fn stage(&self, l: &mut Lowerer, s: i64) {
        let (rank, ks) = (self.rank, self.ks);
        let place = Placement::identity(rank);
        l.writes(self.abuf.bytes());
        l.writes(self.bbuf.bytes());
        if ks == self.kdim {
            write(l, &self.a, &self.abuf, &place);
            write(l, &self.b, &self.bbuf, &place);
        } else {
            write_window(
                l,
                &self.a,
                &self.abuf,
                &place,
                Window::slice(rank - 1, ks, s),
            );
            write_window(
                l,
                &self.b,
                &self.bbuf,
                &place,
                Window::slice(rank - 2, ks, s),
            );
        }
        l.reads(self.abuf.bytes());
        l.reads(self.bbuf.bytes());
    }
}

/// A row of A, by (batch, m), or a column of B, by (batch, n).
type LineKey = (i64, i64);

/// Where the operands of each accumulator register start in shared memory.
struct OperandAddresses {
    /// Row addresses in A, by (batch, m).
    a_rows: HashMap<LineKey, Reg>,
    /// Column addresses in B, by (batch, n).
    b_cols: HashMap<LineKey, Reg>,
    /// Per accumulator register: its index, and its keys into `a_rows` and
    /// `b_cols`.
    plan: Vec<(usize, LineKey, LineKey)>,
}

/// The row addresses in A and column addresses in B the accumulator
/// registers of `layout` (those with a variable in `accs`) read at k = 0.
fn operand_addresses(
    l: &mut Lowerer,
    f: &Fma,
    st: &Staged,
    layout: &LinearLayout,
    accs: &[Option<Reg>],
) -> OperandAddresses {
    let rank = st.rank;
    let (m_d, n_d) = (rank - 2, rank - 1);
    let coords = coordinates(l, layout);
    let base = l.shared_base();
    let mut a_rows: HashMap<LineKey, Reg> = HashMap::default();
    let mut b_cols: HashMap<LineKey, Reg> = HashMap::default();
    let mut plan = Vec::new();
    for (r, acc) in accs.iter().enumerate() {
        if acc.is_none() {
            continue;
        }
        let c = layout.apply(r, 0);
        let bt = if rank == 3 { c[0] } else { 0 };
        let key_a = (bt, c[m_d]);
        let key_b = (bt, c[n_d]);
        a_rows.entry(key_a).or_insert_with(|| {
            // ((batch * M + m) * K) * slot
            let batch = (rank == 3).then(|| (coords[r][0], f.ashape[1]));
            let scale = st.ks * st.abuf.slot;
            shared_address(l, base, coords[r][m_d], batch, scale, st.abuf.offset)
        });
        b_cols.entry(key_b).or_insert_with(|| {
            // (batch * K * N + n) * slot
            let batch = (rank == 3).then(|| (coords[r][0], st.ks * f.bshape[2]));
            shared_address(l, base, coords[r][n_d], batch, st.bbuf.slot, st.bbuf.offset)
        });
        plan.push((r, key_a, key_b));
    }
    OperandAddresses {
        a_rows,
        b_cols,
        plan,
    }
}

/// The u32 shared-memory address `base + offset + (batch * len + idx) *
/// scale` of a row or column, `batch` and `len` only for batched products.
fn shared_address(
    l: &mut Lowerer,
    base: Reg,
    idx: Reg,
    batch: Option<(Reg, i64)>,
    scale: i64,
    offset: i64,
) -> Reg {
    let mut idx = idx;
    if let Some((bt, len)) = batch {
        idx = l.b.op(
            Opc::Mad,
            &["lo"],
            &[Ty::U32],
            Ty::U32,
            vec![Operand::Reg(bt), Operand::Imm(len), Operand::Reg(idx)],
        );
    }
    let off = l.b.op(
        Opc::Mul,
        &["lo"],
        &[Ty::U32],
        Ty::U32,
        smallvec![Operand::Reg(idx), Operand::Imm(scale)],
    );
    let off = l.b.op(
        Opc::Add,
        &[],
        &[Ty::U32],
        Ty::U32,
        smallvec![Operand::Reg(off), Operand::Imm(offset)],
    );
    l.b.op(
        Opc::Add,
        &[],
        &[Ty::U32],
        Ty::U32,
        smallvec![Operand::Reg(base), Operand::Reg(off)],
    )
}

/// The k-loop over the staged K slice: at each k, every thread loads the A
/// and B elements its accumulators need from shared memory and accumulates
/// their products.
// The caches are filled by fallible code that also needs `l`; the entry API
// would hold the map borrow across it.
#[allow(clippy::map_entry)]
fn k_loop(
    l: &mut Lowerer,
    f: &Fma,
    st: &Staged,
    addrs: &OperandAddresses,
    accs: &[Option<Reg>],
) -> Result<(), LowerError> {
    let (id, rank, ks, acc_kind) = (f.id, st.rank, st.ks, f.acc_kind);
    let (abuf, bbuf) = (&st.abuf, &st.bbuf);
    let k = l.b.reg(RegClass::B32);
    l.b.op_into(k, Opc::Mov, &[], &[Ty::B32], smallvec![Operand::Imm(0)]);
    l.b.begin_uniform_loop();
    let go = l.b.op(
        Opc::Setp,
        &["lt"],
        &[Ty::U32],
        Ty::Pred,
        smallvec![Operand::Reg(k), Operand::Imm(ks)],
    );
    l.b.begin_loop_body(go, true);
    let load = |l: &mut Lowerer,
                addr: Reg,
                step: i64,
                slot: i64,
                s: Scalar,
                signed: bool|
     -> Option<Reg> {
        let a = l.b.op(
            Opc::Mad,
            &["lo"],
            &[Ty::U32],
            Ty::U32,
            vec![
                Operand::Reg(k),
                Operand::Imm(step * slot),
                Operand::Reg(addr),
            ],
        );
        let ty = match slot {
            8 => Ty::B64,
            2 => Ty::B16,
            1 => Ty::B8,
            _ => Ty::B32,
        };
        let d = l.b.reg(RegClass::for_bits(ty.bits().max(16)));
        l.b.push(crate::ptx::Inst::new(
            Opc::Ld,
            &["shared"],
            &[ty],
            smallvec![Operand::Reg(d)],
            smallvec![Operand::Addr(a, 0)],
        ));
        to_acc(l, s, signed, d, acc_kind)
    };
    let mut a_vals: HashMap<LineKey, Reg> = HashMap::default();
    let mut b_vals: HashMap<LineKey, Reg> = HashMap::default();
    for &(r, ka, kb) in &addrs.plan {
        if !a_vals.contains_key(&ka) {
            let v = load(l, addrs.a_rows[&ka], 1, abuf.slot, f.ae, f.sa)
                .ok_or_else(|| l.unsupported_feature(id, "this operand type"))?;
            a_vals.insert(ka, v);
        }
        if !b_vals.contains_key(&kb) {
            let v = load(
                l,
                addrs.b_cols[&kb],
                f.bshape[rank - 1],
                bbuf.slot,
                f.be,
                f.sb,
            )
            .ok_or_else(|| l.unsupported_feature(id, "this operand type"))?;
            b_vals.insert(kb, v);
        }
        let acc = accs[r].ok_or_else(|| l.unsupported(id))?;
        f.accumulate(l, acc, a_vals[&ka], b_vals[&kb]);
    }
    l.b.op_into(
        k,
        Opc::Add,
        &[],
        &[Ty::U32],
        smallvec![Operand::Reg(k), Operand::Imm(1)],
    );
    l.b.end_loop();
    Ok(())
}

/// One accumulation variable per canonical register of the accumulator
/// layout, initialised from the `acc` operand.
fn init_accs(
    l: &mut Lowerer,
    f: &Fma,
    layout: &LinearLayout,
    acc_in: &Tile,
) -> Result<Vec<Option<Reg>>, LowerError> {
    let n = layout.num_registers();
    let mut accs: Vec<Option<Reg>> = vec![None; n];
    for (r, slot) in accs.iter_mut().enumerate() {
        if layout.canonical_register(r) != r {
            continue;
        }
        let v = to_acc(l, f.ce, true, acc_in.regs[r], f.acc_kind)
            .ok_or_else(|| l.unsupported_feature(f.id, "this accumulator type"))?;
        let bits = if f.acc_kind == Acc::F64 { 64 } else { 32 };
        let var = l.b.reg(RegClass::for_bits(bits));
        l.b.copy(var, v);
        *slot = Some(var);
    }
    Ok(accs)
}

/// Binds the result: the accumulation variables in the accumulator's own
/// element type.
fn finish(
    l: &mut Lowerer,
    f: &Fma,
    layout: Rc<LinearLayout>,
    accs: &[Option<Reg>],
) -> Result<(), LowerError> {
    let n = layout.num_registers();
    let mut regs: Vec<Reg> = Vec::with_capacity(n);
    for (r, acc) in accs.iter().enumerate() {
        let c = layout.canonical_register(r);
        if c != r {
            regs.push(regs[c]);
            continue;
        }
        let v = acc.ok_or_else(|| l.unsupported(f.id))?;
        let v = match f.ce {
            Scalar::F16 | Scalar::BF16 => {
                crate::lower::emit::ops::arith::from_f32(l, f.ce, v, "rn")
            }
            _ => v,
        };
        regs.push(v);
    }
    l.bind(
        f.res,
        Tile {
            elem: Elem::Num(f.ce),
            layout,
            regs,
        },
    );
    Ok(())
}
