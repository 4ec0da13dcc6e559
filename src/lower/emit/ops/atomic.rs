//! Atomics: `atomic_rmw_tko` and `atomic_cas_tko` through tiles of
//! pointers, `atomic_red_view_tko` through partition views. Each element is
//! updated once (replicated layouts act in their owner threads only, and
//! the old values are then shared with the replicas through shared memory).
use crate::ir::{Attr, OpId, Opcode, Scalar};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::analysis::view::partition;
use crate::lower::emit::context::{class_of, Lowered, Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::ptx::{Inst, Opc, Operand, Reg, Ty};
use smallvec::smallvec;

use crate::lower::emit::ops::staging::{alloc, read, write, Placement};
use crate::lower::emit::ops::view_access::{element, prepare};

fn enum_attr(l: &Lowerer, id: OpId, name: &str) -> Option<u8> {
    match l.m.ops[id].attr(name) {
        Some(Attr::Enum(_, v)) => Some(*v),
        _ => None,
    }
}

/// Ordering and scope modifiers (`acq_rel`, `gpu`).
fn order_scope(l: &Lowerer, id: OpId) -> Result<[&'static str; 2], LowerError> {
    let order = match enum_attr(l, id, "memory_ordering_semantics").unwrap_or(1) {
        0 | 1 => "relaxed",
        2 => "acquire",
        3 => "release",
        _ => "acq_rel",
    };
    let scope = match enum_attr(l, id, "memory_scope").unwrap_or(1) {
        0 => "cta",
        1 => "gpu",
        _ => "sys",
    };
    Ok([order, scope])
}

/// The PTX operation and type of an `atomic_rmw` mode on element `e`.
fn mode(l: &Lowerer, id: OpId, e: Elem) -> Result<(&'static str, Ty), LowerError> {
    let Elem::Num(s) = e else {
        return Err(l.unsupported_feature(id, "pointer elements"));
    };
    let w64 = s.bit_width() == 64;
    let (u, sg, b) = if w64 {
        (Ty::U64, Ty::S64, Ty::B64)
    } else {
        (Ty::U32, Ty::S32, Ty::B32)
    };
    if matches!(s, Scalar::F16 | Scalar::BF16) && enum_attr(l, id, "mode") == Some(4) {
        // `atom.add.noftz.f16` from sm_70, `.bf16` from sm_90 (before it,
        // a compare-and-swap loop: `bf16_add_by_cas`).
        let ty = if s == Scalar::F16 { Ty::F16 } else { Ty::BF16 };
        return Ok(("add.noftz", ty));
    }
    if !(s.bit_width() == 32 || w64) {
        return Err(l.unsupported_feature(id, "sub-word elements"));
    }
    let is_float = matches!(s, Scalar::F32 | Scalar::F64);
    Ok(match (enum_attr(l, id, "mode").unwrap_or(255), is_float) {
        (0, false) => ("and", b),
        (1, false) => ("or", b),
        (2, false) => ("xor", b),
        (3, false) => ("add", u),
        (4, true) => ("add", if w64 { Ty::F64 } else { Ty::F32 }),
        (5, false) => ("max", sg),
        (6, false) => ("min", sg),
        (7, false) => ("max", u),
        (8, false) => ("min", u),
        (9, _) => ("exch", b),
        _ => return Err(l.unsupported_feature(id, "this atomic mode")),
    })
}

/// Whether a bf16 atomic add must be a compare-and-swap loop (no
/// `atom.add.bf16` before sm_90).
fn bf16_add_needs_cas(l: &Lowerer, name: &str, ty: Ty) -> bool {
    name == "add.noftz" && ty == Ty::BF16 && l.plan.target.gpu.capability() < 90
}

/// `*addr += v` on a bf16 element with a compare-and-swap loop (16-bit
/// `atom.cas`, sm_70+); returns the value it replaced. The sum is computed
/// in f32 and rounded once to bf16, which equals the bf16 sum (f32 has more
/// than twice bf16's precision, so the double rounding is harmless).
fn bf16_add_by_cas(
    l: &mut Lowerer,
    addr: Operand,
    v: Reg,
    order: &'static str,
    scope: &'static str,
) -> Reg {
    let r = |x: Reg| Operand::Reg(x);
    let old = l.b.reg(crate::ptx::RegClass::B16);
    l.b.push(Inst::new(
        Opc::Ld,
        &["relaxed", scope, "global"],
        &[Ty::B16],
        vec![r(old)],
        vec![addr.clone()],
    ));
    let vf = crate::lower::emit::ops::arith::to_f32(l, Scalar::BF16, v);
    l.b.begin_loop();
    let of = crate::lower::emit::ops::arith::to_f32(l, Scalar::BF16, old);
    let sum =
        l.b.op(Opc::Add, &["rn"], &[Ty::F32], Ty::F32, vec![r(of), r(vf)]);
    let new = l.b.op(
        Opc::Cvt,
        &["rn"],
        &[Ty::BF16, Ty::F32],
        Ty::B16,
        vec![r(sum)],
    );
    let seen = l.b.reg(crate::ptx::RegClass::B16);
    l.b.push(Inst::new(
        Opc::Atom,
        &[order, scope, "global", "cas"],
        &[Ty::B16],
        vec![r(seen)],
        vec![addr, r(old), r(new)],
    ));
    let done = l.b.op(
        Opc::Setp,
        &["eq"],
        &[Ty::B16],
        Ty::Pred,
        vec![r(seen), r(old)],
    );
    l.b.copy(old, seen);
    l.b.begin_loop_body(done, false);
    l.b.end_loop();
    old
}

/// Lowers `atomic_rmw_tko` and `atomic_cas_tko`.
pub fn lower_rmw(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let cas = op.opcode == Opcode::AtomicCASTko;
    let Some(&res) = op.results.first() else {
        return Err(l.unsupported(id));
    };
    let (_, elem) = value_tile(l.m, res).ok_or_else(|| l.unsupported(id))?;
    let [order, scope] = order_scope(l, id)?;
    let (name, ty) = if cas {
        ("cas", if elem.bits() == 64 { Ty::B64 } else { Ty::B32 })
    } else {
        mode(l, id, elem)?
    };
    let layout = l.layout_of(res);
    let ptrs_v = op.operand("pointers").ok_or_else(|| l.unsupported(id))?;
    let ptrs = l.tile_in(id, ptrs_v, &layout)?;
    let vals = match op.operand(if cas { "val" } else { "arg" }) {
        Some(v) => l.tile_in(id, v, &layout)?,
        None => return Err(l.unsupported(id)),
    };
    let cmp = match op.operand("cmp") {
        Some(v) if cas => Some(l.tile_in(id, v, &layout)?),
        _ => None,
    };
    let mask = match op.operand("mask") {
        Some(m) => Some(l.tile_in(id, m, &layout)?),
        None => None,
    };
    let owner = l.owner_pred(&layout);
    let mut regs: Vec<Reg> = Vec::new();
    for r in 0..layout.num_registers() {
        let c = layout.canonical_register(r);
        if c != r {
            regs.push(regs[c]);
            continue;
        }
        // What a masked-off element returns: `cmp` for a compare-and-swap
        // (as NVIDIA's tileiras gives), else 0.
        let d = l.b.reg(class_of(elem));
        let init = match &cmp {
            Some(cm) => Operand::Reg(cm.regs[r]),
            None => Operand::Imm(0),
        };
        l.b.push(Inst::new(
            Opc::Mov,
            &[],
            &[Ty::from_bits(elem.bits())],
            smallvec![Operand::Reg(d)],
            smallvec![init],
        ));
        if let Some(q) = owner {
            l.b.begin_if(q, true);
        }
        if let Some(m) = &mask {
            l.b.begin_if(m.regs[r], true);
        }
        if bf16_add_needs_cas(l, name, ty) {
            let old = bf16_add_by_cas(
                l,
                Operand::Addr(ptrs.regs[r], 0),
                vals.regs[r],
                order,
                scope,
            );
            l.b.copy(d, old);
        } else {
            let mut srcs = smallvec![Operand::Addr(ptrs.regs[r], 0)];
            if let Some(cm) = &cmp {
                srcs.push(Operand::Reg(cm.regs[r]));
            }
            srcs.push(Operand::Reg(vals.regs[r]));
            l.b.push(Inst::new(
                Opc::Atom,
                &[order, scope, "global", name],
                &[ty],
                smallvec![Operand::Reg(d)],
                srcs,
            ));
        }
        if mask.is_some() {
            l.b.end_if();
        }
        if owner.is_some() {
            l.b.end_if();
        }
        regs.push(d);
    }
    let mut out = Tile {
        elem,
        layout: layout.clone(),
        regs,
    };
    if let Some(q) = owner {
        // Share the old values the owners got with their replicas.
        let buf = alloc(
            l,
            crate::lower::plan::buffers::What::Replicas,
            &layout.shape,
            elem,
        )?;
        let place = Placement::identity(layout.shape.len());
        l.writes(buf.bytes());
        l.b.begin_if(q, true);
        write(l, &out, &buf, &place);
        l.b.end_if();
        l.reads(buf.bytes());
        out = read(l, layout, elem, &buf, &place);
    }
    l.bind(res, out);
    Ok(())
}

/// Lowers `atomic_red_view_tko`: a reduction into the view's elements.
pub fn lower_red_view(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let (Some(view), Some(val)) = (op.operand("view"), op.operand("value")) else {
        return Err(l.unsupported(id));
    };
    let index = op.operand_group("index").to_vec();
    let p = partition(l.m, view)
        .ok_or_else(|| l.unsupported_feature(id, "a view other than a partition view"))?;
    let t = l.tile(id, val)?;
    let [order, scope] = order_scope(l, id)?;
    let (name, ty) = mode(l, id, t.elem)?;
    if name == "exch" {
        return Err(l.unsupported_feature(id, "xchg"));
    }
    let layout = t.layout.clone();
    let mut a = prepare(l, id, &p, &index, &layout)?;
    let owner = l.owner_pred(&layout);
    if let Some(q) = owner {
        l.b.begin_if(q, true);
    }
    for r in 0..layout.num_registers() {
        if layout.canonical_register(r) != r {
            continue;
        }
        let c = layout.apply(r, 0);
        let (oob, addr) = element(l, &mut a, &c, r);
        if let Some(q) = oob {
            l.b.begin_if(q, false);
        }
        if bf16_add_needs_cas(l, name, ty) {
            bf16_add_by_cas(l, addr, t.regs[r], order, scope);
        } else {
            l.b.push(Inst::new(
                Opc::Red,
                &[order, scope, "global", name],
                &[ty],
                vec![],
                vec![addr, Operand::Reg(t.regs[r])],
            ));
        }
        if oob.is_some() {
            l.b.end_if();
        }
    }
    if owner.is_some() {
        l.b.end_if();
    }
    Ok(())
}

/// Lowers the atomics family (op `id`): `atomic_red_view_tko` through its
/// view, the others through tiles of pointers; results left without a
/// value (the token) get none.
pub fn lower(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    if l.m.ops[id].opcode == Opcode::AtomicRedViewTko {
        lower_red_view(l, id)?;
    } else {
        lower_rmw(l, id)?;
    }
    let results = l.m.ops[id].results.clone();
    for r in results {
        l.vals.entry(r).or_insert(Lowered::Nothing);
    }
    Ok(())
}
