//! Layout assignment: gives every tile value a distributed layout.
//!
//! Stores anchor the choice (a blocked layout with the lanes along the
//! dimension contiguous in memory, vectorized when the view proves it
//! safe; loads whose users want another read along memory and convert,
//! [`crate::lower::plan::conversions::loads`]); walking the body backwards, each op passes the layout
//! demanded of its result on to its operands (elementwise ops unchanged,
//! `broadcast` collapses the broadcast dimensions, `reshape` reinterprets
//! the coordinates). Values nobody constrains get the default blocked layout.
//! A value held across a loop for a use after it takes no layout from that
//! use that costs more registers than the default one: the use converts.
//!
//! Before that, matrix multiplies seed their accumulators with the layout
//! their engine computes in (`ops::mma`), and the seed spreads along
//! loop-carried values and `if` results, so an accumulator carried by a loop
//! never leaves its registers. Inside loops that multiply, the values
//! computed from an accumulator inherit its layout too
//! ([`crate::lower::plan::assign_forward`]).
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::rc::Rc;

use crate::ir::{Module, OpId, Opcode, ValueId};
use crate::lower::analysis::facts::Fact;
use crate::lower::analysis::values::value_tile;
use crate::lower::analysis::view::partition;
use crate::lower::plan::engines::{engine_of, Engine, Product};
use crate::lower::plan::layout::{Blocked, LinearLayout};
use crate::lower::plan::target::Target;

/// Layouts per tile value.
pub type Layouts = HashMap<ValueId, Rc<LinearLayout>>;

/// The default blocked layout of `shape` for `warps` warps with `vec`
/// contiguous elements per thread.
pub fn default_layout(shape: &[i64], warps: u32, vec: i64) -> Rc<LinearLayout> {
    Rc::new(Blocked::default_for(shape, i64::from(warps), vec).to_linear(shape))
}

/// Assigns layouts to the tile values of the entry body `ops`.
pub fn assign(
    m: &Module,
    ops: &[OpId],
    facts: &HashMap<ValueId, Fact>,
    target: Target,
    warps: u32,
    products: &[Product],
) -> Layouts {
    let mut out: Layouts = HashMap::default();
    seed_mma(m, ops, warps, products, &mut out);
    let bytes = byte_store_widths(m, ops, facts, target.max_access_bytes());
    let cx = Cx {
        facts,
        target,
        warps,
        products,
        bytes: &bytes,
    };
    assign_block(m, ops, &cx, &mut out);
    out
}

/// What the walk over an entry's body reads besides the module.
#[derive(Clone, Copy)]
struct Cx<'a> {
    facts: &'a HashMap<ValueId, Fact>,
    target: Target,
    warps: u32,
    products: &'a [Product],
    bytes: &'a HashMap<Vec<i64>, i64>,
}

/// The widest vector of the 8-bit (and `i1`, stored as bytes) view stores
/// of each tile shape in `ops` and their regions.
fn byte_store_widths(
    m: &Module,
    ops: &[OpId],
    facts: &HashMap<ValueId, Fact>,
    max_bytes: u32,
) -> HashMap<Vec<i64>, i64> {
    let mut out: HashMap<Vec<i64>, i64> = HashMap::default();
    for id in all_ops(m, ops) {
        let op = &m.ops[id];
        if op.opcode != Opcode::StoreViewTko {
            continue;
        }
        if let (Some(t), Some(v)) = (op.operand("tile"), op.operand("view")) {
            if let (Some((shape, _)), Some(p)) = (value_tile(m, t), partition(m, v)) {
                if p.elem.bits() <= 8 {
                    let w = out.entry(shape).or_insert(1);
                    *w = (*w).max(p.vector_width(facts, max_bytes));
                }
            }
        }
    }
    out
}

/// Every op of `ops` and of the regions nested in them.
fn all_ops(m: &Module, ops: &[OpId]) -> Vec<OpId> {
    m.walk_from(ops).collect()
}

/// Seeds the accumulators of matrix multiplies with their engine's layout
/// and spreads each seed over the values a loop or `if` ties to it (init,
/// region argument, terminator operand, result).
fn seed_mma(m: &Module, ops: &[OpId], warps: u32, products: &[Product], out: &mut Layouts) {
    let all = all_ops(m, ops);
    // Operand layouts are wishes for cheap staging: they come last, after
    // the accumulators' layouts have spread.
    let mut operand_seeds = Vec::new();
    for &id in &all {
        let op = &m.ops[id];
        let Some(engine) = engine_of(products, id) else {
            continue;
        };
        if let Some(l) = crate::lower::plan::engines::acc_layout(engine) {
            let l = Rc::new(l);
            if let Some(&r) = op.results.first() {
                demand(out, r, l.clone());
            }
            if let Some(acc) = op.operand("acc") {
                demand(out, acc, l);
            }
            let operands = crate::lower::plan::engines::operand_layouts(m, id, engine, warps);
            for (name, l) in ["lhs", "rhs"].iter().zip(operands) {
                if let (Some(v), Some(l)) = (op.operand(name), l) {
                    operand_seeds.push((v, Rc::new(l)));
                }
            }
        }
    }
    if out.is_empty() {
        for (v, l) in operand_seeds {
            demand(out, v, l);
        }
        return;
    }
    // Groups of values that must share a layout.
    let mut groups: Vec<Vec<ValueId>> = Vec::new();
    for &id in &all {
        let op = &m.ops[id];
        let (_, args) = region_ops(op, 0);
        match op.opcode {
            Opcode::For | Opcode::Loop => {
                let inits = op.operand_group("initValues");
                let skip = usize::from(op.opcode == Opcode::For);
                let mut exits = Vec::new();
                loop_exits(m, op, &mut exits);
                for (i, &init) in inits.iter().enumerate() {
                    let mut g = vec![init];
                    g.extend(args.get(i + skip).copied());
                    if op.opcode == Opcode::For {
                        g.extend(op.results.get(i).copied());
                    }
                    for &t in &exits {
                        if m.ops[t].opcode == Opcode::Continue {
                            g.extend(m.ops[t].operands.get(i).copied());
                        }
                    }
                    groups.push(g);
                }
                if op.opcode == Opcode::Loop {
                    for &t in exits.iter().filter(|&&t| m.ops[t].opcode == Opcode::Break) {
                        for (v, r) in m.ops[t].operands.iter().zip(&op.results) {
                            groups.push(vec![*v, *r]);
                        }
                    }
                }
            }
            Opcode::If => {
                for k in 0..op.regions.len() {
                    let (ops, _) = region_ops(op, k);
                    for &t in &ops {
                        if m.ops[t].opcode == Opcode::Yield {
                            for (v, r) in m.ops[t].operands.iter().zip(&op.results) {
                                groups.push(vec![*v, *r]);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let bodies = crate::lower::plan::assign_forward::multiplying_loop_bodies(m, &all);
    // Spread until nothing changes (each pass seeds at least one value).
    loop {
        let mut changed = false;
        for body in &bodies {
            changed |= crate::lower::plan::assign_forward::spread(m, body, out);
        }
        for g in &groups {
            let Some(l) = g.iter().find_map(|v| out.get(v).cloned()) else {
                continue;
            };
            for &v in g {
                if !out.contains_key(&v) && value_tile(m, v).is_some_and(|(s, _)| s == l.shape) {
                    out.insert(v, l.clone());
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    for (v, l) in operand_seeds {
        demand(out, v, l);
    }
}

fn demand(out: &mut Layouts, v: ValueId, l: Rc<LinearLayout>) {
    out.entry(v).or_insert(l);
}

/// The ops of region `k` of `op` (its single block).
fn region_ops(op: &crate::ir::Op, k: usize) -> (Vec<OpId>, Vec<ValueId>) {
    op.regions
        .get(k)
        .and_then(|r| r.blocks.first())
        .map(|b| (b.ops.clone(), b.args.clone()))
        .unwrap_or_default()
}

/// Demands the layouts of `op`'s results on the operands of the
/// terminators (`yield`, `continue`) of its regions.
fn demand_terminators(m: &Module, op: &crate::ir::Op, out: &mut Layouts) {
    let layouts: Vec<Option<Rc<LinearLayout>>> =
        op.results.iter().map(|r| out.get(r).cloned()).collect();
    for k in 0..op.regions.len() {
        let (ops, _) = region_ops(op, k);
        for id in ops {
            let t = &m.ops[id];
            if matches!(t.opcode, Opcode::Yield | Opcode::Continue) {
                for (v, l) in t.operands.iter().zip(&layouts) {
                    if let Some(l) = l {
                        demand(out, *v, l.clone());
                    }
                }
            }
        }
    }
}

/// The `continue`/`break` ops of a `loop`, through nested `if`s (not into
/// nested loops).
fn loop_exits(m: &Module, op: &crate::ir::Op, out: &mut Vec<OpId>) {
    for r in &op.regions {
        for b in &r.blocks {
            for &id in &b.ops {
                let inner = &m.ops[id];
                match inner.opcode {
                    Opcode::Continue | Opcode::Break => out.push(id),
                    Opcode::If => loop_exits(m, inner, out),
                    _ => {}
                }
            }
        }
    }
}

/// Assigns layouts to the values of `ops` (a block), walking it backwards so
/// that each op passes the layouts demanded of its results on to its
/// operands, and into the blocks of its regions.
fn assign_block(m: &Module, ops: &[OpId], cx: &Cx, out: &mut Layouts) {
    let held = held_across_loops(m, ops);
    for &id in ops.iter().rev() {
        let op = &m.ops[id];
        // Operands held across a loop that this op is first to constrain.
        let fresh: Vec<ValueId> = op
            .operands
            .iter()
            .copied()
            .filter(|v| held.contains(v) && !out.contains_key(v))
            .collect();
        default_results(m, op, cx.warps, out);
        let result_layout = op.results.first().and_then(|r| out.get(r)).cloned();
        match op.opcode {
            Opcode::StoreViewTko => demand_store_tile(m, op, cx, out),
            Opcode::Broadcast => demand_broadcast_source(m, op, result_layout, out),
            Opcode::Reshape => demand_reshape_source(m, op, result_layout, out),
            Opcode::Reduce | Opcode::Scan => demand_reduction_operands(m, op, cx.warps, out),
            Opcode::Loop => assign_loop(m, op, cx, out),
            Opcode::If | Opcode::For => assign_if_or_for(m, op, cx, out),
            Opcode::MmaF | Opcode::MmaI
                if matches!(engine_of(cx.products, id), Some(Engine::Fma)) =>
            {
                let Some(l) = result_layout else { continue };
                demand_fma_operands(m, id, &l, out);
            }
            Opcode::LoadViewTko
            | Opcode::MakeTensorView
            | Opcode::MakePartitionView
            | Opcode::Return => {}
            _ => demand_elementwise_operands(m, op, result_layout, out),
        }
        drop_costly_held_layouts(m, fresh, cx.warps, out);
    }
}

/// Gives the tile results of `op` that nobody demanded the default layout.
fn default_results(m: &Module, op: &crate::ir::Op, warps: u32, out: &mut Layouts) {
    for &r in &op.results {
        if let Some((shape, _)) = value_tile(m, r) {
            out.entry(r)
                .or_insert_with(|| default_layout(&shape, warps, 1));
        }
    }
}

/// Demands of the tile a view store writes the layout that stores it
/// coalesced: lanes along the dimension contiguous in memory, vectorized
/// where the view proves it safe.
fn demand_store_tile(m: &Module, op: &crate::ir::Op, cx: &Cx, out: &mut Layouts) {
    let max_bytes = cx.target.max_access_bytes();
    let warps = cx.warps;
    if let (Some(t), Some(v)) = (op.operand("tile"), op.operand("view")) {
        if let (Some((shape, _)), Some(p)) = (value_tile(m, t), partition(m, v)) {
            let mut vec = p.vector_width(cx.facts, max_bytes);
            // A store already moving 128 bits per access takes as many
            // elements per thread as a byte store of the same shape (in
            // several such accesses), so values shared by both need no
            // layout conversion.
            if vec * i64::from(p.elem.bits().max(8) / 8) == i64::from(max_bytes) {
                vec = vec.max(cx.bytes.get(&shape).copied().unwrap_or(1));
            }
            // Lanes along the dimension contiguous in memory.
            let layout = match crate::lower::plan::layout::coalesced::off_last_contiguous_dim(&p) {
                Some(cd) => crate::lower::plan::layout::coalesced::along(&shape, cd, warps),
                None => default_layout(&shape, warps, vec),
            };
            demand(out, t, layout);
        }
    }
}

/// Demands of a `broadcast`'s source the result's layout with the
/// broadcast dimensions collapsed.
fn demand_broadcast_source(
    m: &Module,
    op: &crate::ir::Op,
    result_layout: Option<Rc<LinearLayout>>,
    out: &mut Layouts,
) {
    if let (Some(src), Some(l)) = (op.operands.first(), result_layout) {
        if let Some((shape, _)) = value_tile(m, *src) {
            let mut c = (*l).clone();
            for (d, &s) in shape.iter().enumerate() {
                if s == 1 && l.shape.get(d).is_some_and(|&r| r != 1) {
                    c = c.collapse(d);
                }
            }
            demand(out, *src, Rc::new(c));
        }
    }
}

/// Demands of a `reshape`'s source the result's layout reinterpreted in
/// the source's shape.
fn demand_reshape_source(
    m: &Module,
    op: &crate::ir::Op,
    result_layout: Option<Rc<LinearLayout>>,
    out: &mut Layouts,
) {
    if let (Some(src), Some(l)) = (op.operands.first(), result_layout) {
        if let Some((shape, _)) = value_tile(m, *src) {
            demand(out, *src, Rc::new(l.reshape(&shape)));
        }
    }
}

/// Reductions and scans take their operands in the default layout unless
/// a later user chose one (reductions with the warps off the reduced
/// dimension, so they need no shared memory); their results come out in
/// the operand's layout (sliced for a reduction), and users wanting another
/// get a conversion.
fn demand_reduction_operands(m: &Module, op: &crate::ir::Op, warps: u32, out: &mut Layouts) {
    let dim = match op.attr("dim") {
        Some(crate::ir::Attr::Int(d)) if op.opcode == Opcode::Reduce => Some(*d as usize),
        _ => None,
    };
    for &o in &op.operands {
        if let Some((shape, _)) = value_tile(m, o) {
            let l = match dim {
                Some(d) => Rc::new(
                    Blocked::for_reduction(&shape, i64::from(warps), 1, d).to_linear(&shape),
                ),
                None => default_layout(&shape, warps, 1),
            };
            demand(out, o, l);
        }
    }
}

/// Loop-carried values of a `loop` take the default layout of their shape;
/// `continue` operands follow them, `break` operands the results
/// (terminators may sit in nested `if`s); then assigns the body.
fn assign_loop(m: &Module, op: &crate::ir::Op, cx: &Cx, out: &mut Layouts) {
    let (_, args) = region_ops(op, 0);
    for &a in &args {
        if let Some((shape, _)) = value_tile(m, a) {
            demand(out, a, default_layout(&shape, cx.warps, 1));
        }
    }
    let inits = op.operand_group("initValues").to_vec();
    for (v, a) in inits.iter().zip(&args) {
        if let Some(l) = out.get(a).cloned() {
            demand(out, *v, l);
        }
    }
    let mut exits = Vec::new();
    loop_exits(m, op, &mut exits);
    for t in exits {
        let t = &m.ops[t];
        let targets: Vec<ValueId> = if t.opcode == Opcode::Break {
            op.results.clone()
        } else {
            args.clone()
        };
        for (v, r) in t.operands.iter().zip(&targets) {
            if let Some(l) = out.get(r).cloned() {
                demand(out, *v, l);
            }
        }
    }
    let (ops, _) = region_ops(op, 0);
    assign_block(m, &ops, cx, out);
}

/// The results' layouts of an `if` or `for` pass to its terminators' operands
/// (and a `for`'s to its inits and region arguments, its induction variable
/// taking the scalar default); then assigns its regions, last first.
fn assign_if_or_for(m: &Module, op: &crate::ir::Op, cx: &Cx, out: &mut Layouts) {
    demand_terminators(m, op, out);
    if op.opcode == Opcode::For {
        let layouts: Vec<Option<Rc<LinearLayout>>> =
            op.results.iter().map(|r| out.get(r).cloned()).collect();
        let inits = op.operand_group("initValues").to_vec();
        let (_, args) = region_ops(op, 0);
        for (i, l) in layouts.into_iter().enumerate() {
            if let Some(l) = l {
                if let Some(v) = inits.get(i) {
                    demand(out, *v, l.clone());
                }
                if let Some(a) = args.get(i + 1) {
                    demand(out, *a, l);
                }
            }
        }
        if let Some(&iv) = args.first() {
            demand(out, iv, default_layout(&[], cx.warps, 1));
        }
    }
    for k in (0..op.regions.len()).rev() {
        let (ops, _) = region_ops(op, k);
        assign_block(m, &ops, cx, out);
    }
}

/// The FMA engine's register path reads A and B in layouts derived from
/// the accumulator's (`l`, the result's): demands them of the operands of
/// multiply `id`.
fn demand_fma_operands(m: &Module, id: OpId, l: &Rc<LinearLayout>, out: &mut Layouts) {
    let op = &m.ops[id];
    if let Some(acc) = op.operand("acc") {
        demand(out, acc, l.clone());
    }
    let operands = crate::lower::plan::engines::fma::operand_layouts(m, id, l);
    for (name, l) in ["lhs", "rhs"].iter().zip(operands.into_iter().flatten()) {
        if let Some(v) = op.operand(name) {
            demand(out, v, Rc::new(l));
        }
    }
}

/// Elementwise: operands of the result's shape share its layout.
fn demand_elementwise_operands(
    m: &Module,
    op: &crate::ir::Op,
    result_layout: Option<Rc<LinearLayout>>,
    out: &mut Layouts,
) {
    if let Some(l) = result_layout {
        for &o in &op.operands {
            if value_tile(m, o).is_some_and(|(s, _)| s == l.shape && !s.is_empty()) {
                demand(out, o, l.clone());
            }
        }
    }
}

/// A value held across a loop for a use after it keeps no layout that
/// takes more registers than the default: the use converts. Drops such
/// layouts of the values in `fresh`.
fn drop_costly_held_layouts(m: &Module, fresh: Vec<ValueId>, warps: u32, out: &mut Layouts) {
    for v in fresh {
        let Some((shape, _)) = value_tile(m, v) else {
            continue;
        };
        let compact = default_layout(&shape, warps, 1);
        if out
            .get(&v)
            .is_some_and(|l| distinct_registers(l) > distinct_registers(&compact))
        {
            out.remove(&v);
        }
    }
}

/// The registers of a layout that hold distinct elements.
fn distinct_registers(l: &LinearLayout) -> usize {
    1 << l
        .register
        .iter()
        .filter(|b| !LinearLayout::is_zero(b))
        .count()
}

/// The values defined by ops of `ops` that a later op of `ops` uses (in
/// its regions too) with a `for` or `loop` op between the two: their
/// registers are held across that loop.
fn held_across_loops(m: &Module, ops: &[OpId]) -> HashSet<ValueId> {
    let mut before_loop = HashSet::default();
    let mut since_loop = Vec::new();
    let mut held = HashSet::default();
    for &id in ops {
        let op = &m.ops[id];
        let used = all_ops(m, &[id])
            .into_iter()
            .flat_map(|o| m.ops[o].operands.iter().copied());
        held.extend(used.filter(|v| before_loop.contains(v)));
        if matches!(op.opcode, Opcode::For | Opcode::Loop) {
            before_loop.extend(since_loop.drain(..));
        }
        since_loop.extend(op.results.iter().copied());
    }
    held
}
