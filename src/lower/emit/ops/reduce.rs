//! `reduce` along one dimension: combine the registers of a thread, then
//! the lanes of a warp by butterfly shuffles, then the warps through shared
//! memory. The result keeps the input's distribution with the reduced
//! dimension sliced away (replicated over the threads that shared it).
use smallvec::smallvec;
use std::rc::Rc;

use crate::ir::{Attr, OpId, ValueId};
use crate::lower::analysis::values::Elem;
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};

use crate::lower::emit::ops::shape::flat_index;

/// Applies the combiner region of `id` to `(lhs_i, rhs_i)` pairs.
pub(super) fn combine(
    l: &mut Lowerer,
    id: OpId,
    elems: &[Elem],
    lhs: &[Reg],
    rhs: &[Reg],
) -> Result<Vec<Reg>, LowerError> {
    let op = &l.m.ops[id];
    let block = op
        .regions
        .first()
        .and_then(|r| r.blocks.first())
        .ok_or_else(|| l.unsupported(id))?;
    let scalar = Rc::new(LinearLayout::default_scalar());
    for (i, e) in elems.iter().enumerate() {
        let (Some(&a), Some(&b)) = (block.args.get(2 * i), block.args.get(2 * i + 1)) else {
            return Err(l.unsupported(id));
        };
        l.bind(
            a,
            Tile {
                elem: *e,
                layout: scalar.clone(),
                regs: vec![lhs[i]],
            },
        );
        l.bind(
            b,
            Tile {
                elem: *e,
                layout: scalar.clone(),
                regs: vec![rhs[i]],
            },
        );
    }
    let mut out = None;
    for &o in &block.ops {
        let inner = &l.m.ops[o];
        if inner.opcode == crate::ir::Opcode::Yield {
            out = Some(inner.operands.clone());
            break;
        }
        l.lower_op(o)?;
    }
    let vals: Vec<ValueId> = out.ok_or_else(|| l.unsupported(id))?;
    vals.iter().map(|&v| Ok(l.tile(id, v)?.regs[0])).collect()
}

/// The thread's position among the warps whose warp-index bits are
/// `warp_bits` (bit `j` of the result is warp bit `warp_bits[j]`, i.e.
/// `%tid.x` bit `5 + warp_bits[j]`); `%tid.x` itself when there are none.
pub(super) fn warp_position(l: &mut Lowerer, warp_bits: &[usize]) -> Reg {
    let tid = l.tid();
    let mut pos: Option<Reg> = None;
    for (j, &k) in warp_bits.iter().enumerate() {
        let bit = l.bfe(tid, 5 + k, 1);
        let t = if j == 0 {
            bit
        } else {
            l.b.op(
                Opc::Shl,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(bit), Operand::Imm(j as i64)],
            )
        };
        pos = Some(match pos {
            None => t,
            Some(g) => l.b.op(
                Opc::Or,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(g), Operand::Reg(t)],
            ),
        });
    }
    pos.unwrap_or(tid)
}

/// Shuffles `v` with the lane `lane ^ mask` (any register class).
fn shuffle(l: &mut Lowerer, v: Reg, mask: i64) -> Reg {
    shfl(l, v, "bfly", mask, 31)
}

/// `shfl.sync.<mode>` of `v` with lane operand `b` and clamp `c`, for any
/// register class: 64-bit values move as two 32-bit halves, 16-bit ones
/// widened to 32 bits.
pub(super) fn shfl(l: &mut Lowerer, v: Reg, mode: &'static str, b: i64, c: i64) -> Reg {
    let sh = |l: &mut Lowerer, x: Reg| {
        l.b.op(
            Opc::Shfl,
            &["sync", mode],
            &[Ty::B32],
            Ty::B32,
            vec![
                Operand::Reg(x),
                Operand::Imm(b),
                Operand::Imm(c),
                Operand::Imm(-1),
            ],
        )
    };
    match v.class {
        RegClass::B32 => sh(l, v),
        RegClass::B64 => {
            let lo = l.b.reg(RegClass::B32);
            let hi = l.b.reg(RegClass::B32);
            l.b.push(Inst::new(
                Opc::Mov,
                &[],
                &[Ty::B64],
                smallvec![Operand::Vec(vec![lo, hi])],
                smallvec![Operand::Reg(v)],
            ));
            let (slo, shi) = (sh(l, lo), sh(l, hi));
            let d = l.b.reg(RegClass::B64);
            l.b.push(Inst::new(
                Opc::Mov,
                &[],
                &[Ty::B64],
                smallvec![Operand::Reg(d)],
                smallvec![Operand::Vec(vec![slo, shi])],
            ));
            d
        }
        RegClass::B16 => {
            let w = l.b.op(
                Opc::Cvt,
                &[],
                &[Ty::U32, Ty::U16],
                Ty::U32,
                smallvec![Operand::Reg(v)],
            );
            let s = sh(l, w);
            l.b.op(
                Opc::Cvt,
                &[],
                &[Ty::U16, Ty::U32],
                Ty::U16,
                smallvec![Operand::Reg(s)],
            )
        }
        RegClass::Pred => {
            let w = l.b.op(
                Opc::Selp,
                &[],
                &[Ty::U32],
                Ty::U32,
                smallvec![Operand::Imm(1), Operand::Imm(0), Operand::Reg(v)],
            );
            let s = sh(l, w);
            l.b.op(
                Opc::Setp,
                &["ne"],
                &[Ty::U32],
                Ty::Pred,
                smallvec![Operand::Reg(s), Operand::Imm(0)],
            )
        }
    }
}

/// Lowers `reduce`.
pub fn lower(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let dim = match op.attr("dim") {
        Some(Attr::Int(d)) => *d as usize,
        _ => return Err(l.unsupported(id)),
    };
    let inputs: Vec<Tile> = op
        .operands
        .iter()
        .map(|&v| l.tile(id, v))
        .collect::<Result<_, _>>()?;
    let Some(first) = inputs.first() else {
        return Err(l.unsupported(id));
    };
    let layout = first.layout.clone();
    if dim >= layout.shape.len() {
        return Err(l.unsupported(id));
    }
    let inputs: Vec<Tile> = op
        .operands
        .iter()
        .map(|&v| l.tile_in(id, v, &layout))
        .collect::<Result<_, _>>()?;
    let elems: Vec<Elem> = inputs.iter().map(|t| t.elem).collect();
    let along = |b: &Vec<i64>| b[dim] != 0;
    if layout
        .bases(crate::lower::plan::layout::HwDim::Register)
        .iter()
        .chain(&layout.thread_bases())
        .any(|b| along(b) && b.iter().filter(|&&x| x != 0).count() > 1)
    {
        return Err(l.unsupported_feature(id, "a layout mixing the reduced dimension"));
    }
    // 1. Within the thread: fold registers that differ only along `dim`.
    let n = layout.num_registers();
    let along_mask: usize = layout
        .register
        .iter()
        .enumerate()
        .filter(|(_, b)| along(b))
        .fold(0, |m, (k, _)| m | 1 << k);
    let mut acc: Vec<Option<Vec<Reg>>> = vec![None; n];
    for r in 0..n {
        if layout.canonical_register(r) != r {
            continue;
        }
        let g = r & !along_mask;
        let vals: Vec<Reg> = inputs.iter().map(|t| t.regs[r]).collect();
        acc[g] = Some(match acc[g].take() {
            None => vals,
            Some(prev) => combine(l, id, &elems, &vals, &prev)?,
        });
    }
    let groups: Vec<usize> = (0..n).filter(|&r| acc[r].is_some()).collect();
    // 2. Across lanes: butterfly over the lane bits that step along `dim`.
    for (k, b) in layout.lane.iter().enumerate() {
        if !along(b) {
            continue;
        }
        for &g in &groups {
            let mine = acc[g].clone().unwrap_or_default();
            let other: Vec<Reg> = mine.iter().map(|&v| shuffle(l, v, 1 << k)).collect();
            acc[g] = Some(combine(l, id, &elems, &other, &mine)?);
        }
    }
    // 3. Across warps: through shared memory.
    let warp_bits: Vec<usize> = layout
        .warp
        .iter()
        .enumerate()
        .filter(|(_, b)| along(b))
        .map(|(k, _)| k)
        .collect();
    if !warp_bits.is_empty() {
        let sliced = layout.slice(dim);
        let flat = flat_index(l, &sliced);
        let elems_out: i64 = sliced.shape.iter().product();
        let ngroups = 1i64 << warp_bits.len();
        let group = warp_position(l, &warp_bits);
        let base = l.shared_base();
        // One scratch region per operand: [result element][warp group].
        let mut regions = Vec::new();
        let mut end = i64::from(l.shared_bytes);
        for e in &elems {
            let esize = i64::from(e.bits().max(32) / 8);
            let start = (end + 7) & !7;
            regions.push(start);
            end = start + elems_out * ngroups * esize;
        }
        l.claim_shared(end)
            .map_err(|_| l.unsupported_feature(id, "too much shared memory"))?;
        for (i, e) in elems.iter().enumerate() {
            let esize = i64::from(e.bits().max(32) / 8);
            let ty = if esize == 8 { Ty::B64 } else { Ty::B32 };
            let region = regions[i];
            let widen = |l: &mut Lowerer, v: Reg| match v.class {
                RegClass::B16 => l.b.op(
                    Opc::Cvt,
                    &[],
                    &[Ty::U32, Ty::U16],
                    Ty::U32,
                    smallvec![Operand::Reg(v)],
                ),
                RegClass::Pred => l.b.op(
                    Opc::Selp,
                    &[],
                    &[Ty::U32],
                    Ty::U32,
                    smallvec![Operand::Imm(1), Operand::Imm(0), Operand::Reg(v)],
                ),
                _ => v,
            };
            let addr_of = |l: &mut Lowerer, f: Reg, g: Operand| {
                let slot = l.b.op(
                    Opc::Mad,
                    &["lo"],
                    &[Ty::U32],
                    Ty::U32,
                    smallvec![Operand::Reg(f), Operand::Imm(ngroups), g],
                );
                let off = l.b.op(
                    Opc::Mad,
                    &["lo"],
                    &[Ty::U32],
                    Ty::U32,
                    vec![
                        Operand::Reg(slot),
                        Operand::Imm(esize),
                        Operand::Imm(region),
                    ],
                );
                l.b.op(
                    Opc::Add,
                    &[],
                    &[Ty::U32],
                    Ty::U32,
                    smallvec![Operand::Reg(base), Operand::Reg(off)],
                )
            };
            // One writer per (result element, warp group): lanes that
            // shared the reduced dimension, or replicas, hold the same value.
            let sliced_bases = sliced.thread_bases();
            let lanes = layout.lane.len();
            let mask = sliced_bases
                .iter()
                .enumerate()
                .filter(|(k, b)| {
                    LinearLayout::is_zero(b) && !(*k >= lanes && warp_bits.contains(&(k - lanes)))
                })
                .fold(0i64, |m, (k, _)| m | 1 << k);
            let owner = l.owner_pred_of(mask, sliced_bases.len());
            if let Some(q) = owner {
                l.b.begin_if(q, true);
            }
            for &g in &groups {
                let v = acc[g]
                    .as_ref()
                    .map(|a| a[i])
                    .ok_or_else(|| l.unsupported(id))?;
                let w = widen(l, v);
                let a = addr_of(l, flat[g], Operand::Reg(group));
                l.b.push(Inst::new(
                    Opc::St,
                    &["shared"],
                    &[ty],
                    vec![],
                    smallvec![Operand::Addr(a, 0), Operand::Reg(w)],
                ));
            }
            if owner.is_some() {
                l.b.end_if();
            }
        }
        l.b.push(Inst::new(
            Opc::Bar,
            &["sync"],
            &[],
            vec![],
            smallvec![Operand::Imm(0)],
        ));
        for &g in &groups {
            let mut total: Option<Vec<Reg>> = None;
            for w in 0..ngroups {
                let mut vals = Vec::new();
                for (i, e) in elems.iter().enumerate() {
                    let esize = i64::from(e.bits().max(32) / 8);
                    let ty = if esize == 8 { Ty::B64 } else { Ty::B32 };
                    let slot = l.b.op(
                        Opc::Mad,
                        &["lo"],
                        &[Ty::U32],
                        Ty::U32,
                        vec![
                            Operand::Reg(flat[g]),
                            Operand::Imm(ngroups),
                            Operand::Imm(w),
                        ],
                    );
                    let off = l.b.op(
                        Opc::Mad,
                        &["lo"],
                        &[Ty::U32],
                        Ty::U32,
                        vec![
                            Operand::Reg(slot),
                            Operand::Imm(esize),
                            Operand::Imm(regions[i]),
                        ],
                    );
                    let a = l.b.op(
                        Opc::Add,
                        &[],
                        &[Ty::U32],
                        Ty::U32,
                        smallvec![Operand::Reg(base), Operand::Reg(off)],
                    );
                    let d = l.b.reg_for(ty);
                    l.b.push(Inst::new(
                        Opc::Ld,
                        &["shared"],
                        &[ty],
                        smallvec![Operand::Reg(d)],
                        smallvec![Operand::Addr(a, 0)],
                    ));
                    let d = match e.bits() {
                        16 | 8 => l.b.op(
                            Opc::Cvt,
                            &[],
                            &[Ty::U16, Ty::U32],
                            Ty::U16,
                            smallvec![Operand::Reg(d)],
                        ),
                        1 => l.b.op(
                            Opc::Setp,
                            &["ne"],
                            &[Ty::U32],
                            Ty::Pred,
                            smallvec![Operand::Reg(d), Operand::Imm(0)],
                        ),
                        _ => d,
                    };
                    vals.push(d);
                }
                total = Some(match total {
                    None => vals,
                    Some(prev) => combine(l, id, &elems, &vals, &prev)?,
                });
            }
            acc[g] = total;
        }
        // The scratch may be reused (a loop): wait until everyone has read.
        l.b.push(Inst::new(
            Opc::Bar,
            &["sync"],
            &[],
            vec![],
            smallvec![Operand::Imm(0)],
        ));
    }
    // The result: the input's distribution with `dim` sliced away.
    let sliced = Rc::new(layout.slice(dim));
    for (i, &res) in op.results.iter().enumerate() {
        let regs: Vec<Reg> = (0..n)
            .map(|r| {
                let g = layout.canonical_register(r) & !along_mask;
                acc[g].as_ref().map(|a| a[i])
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| l.unsupported(id))?;
        let t = Tile {
            elem: elems[i],
            layout: sliced.clone(),
            regs,
        };
        l.bind(res, t);
    }
    Ok(())
}
