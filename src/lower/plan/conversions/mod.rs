//! The layout conversions of an entry, planned: for each op of a family
//! whose operands the plan knows it wants in another layout, which operand
//! moves, to what layout, and how ([`How`]): the registers a thread holds
//! already (a permutation), the value recomputed in the new layout, warp
//! shuffles, or a trip through shared memory with the bytes of its buffer.
//! Emission follows these entries and decides none of them; a planned
//! operand converted where the plan lists no conversion (or not converted
//! where it lists one) is an internal error.
//!
//! Planned so far: the elementwise ops, the atomics and the loads through
//! pointers, which want every tile operand in their result's layout
//! ([`to_result_layout`]); the reductions and scans, which want them in
//! their first operand's; the stores, in the stored tile's; reshapes and
//! broadcasts, which move no data in their own right and want their source
//! in the layout their result's is made from ([`source_layout`]); the
//! products' accumulators (in the result's layout) and scales (where their
//! operand's elements are, [`scale_layout`]); the values control flow
//! carries into its variables ([`carried`]); a view load's move from the
//! rows it reads ([`loads`]); the tiles `print_tko` gathers into every
//! thread; a gather's or scatter's indices ([`gathers`]); and a product's
//! A and B where its engine multiplies them from registers (`mma.sync`'s A
//! fragments, the FMA register path's operands).
use std::fmt::Write;
use std::rc::Rc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::ir::{Attr, Module, OpId, Opcode, Scalar, ValueId};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::plan::copies::stream::loaded;
use crate::lower::plan::engines::mma_sync::{self, a_fragment_layout};
use crate::lower::plan::engines::{fma, tile_bytes, Engine};
use crate::lower::plan::layout::shuffle::route;
use crate::lower::plan::layout::LinearLayout;
use crate::lower::plan::Plan;
use crate::ptx::RegClass;

pub mod carried;
pub mod gathers;
pub mod loads;
pub mod recompute;
pub mod window;

use carried::Scope;

/// How a tile reaches the layout an op wants it in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// Each thread already holds the elements: its registers, reordered.
    Permute,
    /// The value's defining op is cheap: computed again in the new layout
    /// (its own operands converted as it wants them).
    Recompute,
    /// Warp shuffles ([`crate::lower::plan::layout::shuffle`]).
    Shuffle,
    /// Written to a shared-memory buffer of `bytes` and read back; in
    /// windows where the room left there is less.
    Shared {
        /// The bytes of the whole tile in the buffer.
        bytes: i64,
    },
}

/// One operand an op wants in another layout than its value's.
#[derive(Clone, Debug)]
pub struct Conversion {
    /// The op that wants it.
    pub op: OpId,
    /// The operand's value.
    pub value: ValueId,
    /// The value's layout.
    pub from: Rc<LinearLayout>,
    /// The layout the op wants.
    pub to: Rc<LinearLayout>,
    /// How it gets there.
    pub how: How,
    /// Made only where emission, by the room left, takes the path that
    /// needs it: a load's move from the rows it reads ([`loads`]), made
    /// where shared memory has room for it (else the load reads in the
    /// wanted layout as it is); a product's A into its `mma.sync`
    /// fragments, made where no buffer staged before its loop holds A.
    pub where_room: bool,
}

/// The entry's planned conversions.
#[derive(Clone, Debug, Default)]
pub struct Conversions {
    /// The operands (op, value) whose conversions are planned: each one
    /// made is listed, and none other.
    pub planned: HashSet<(OpId, ValueId)>,
    /// The ops all of whose operands' conversions are planned (every op but
    /// the products, whose engines convert some operands of their own).
    pub whole: HashSet<OpId>,
    /// The conversions, in the order of the body.
    pub list: Vec<Conversion>,
    /// Index into `list` by (op, operand value).
    index: HashMap<(OpId, ValueId), usize>,
    /// The layouts reductions and scans hold their results in, where these
    /// differ from the plan's: the distribution of their first operand
    /// (less the reduced dimension), whatever layout their users asked for.
    pub held: HashMap<ValueId, Rc<LinearLayout>>,
}

impl Conversions {
    /// The conversion op `op` makes of its operand `v`, where the plan
    /// covers it (`None` otherwise): `Some(None)` where it makes none.
    pub fn of(&self, op: OpId, v: ValueId) -> Option<Option<&Conversion>> {
        self.planned
            .contains(&(op, v))
            .then(|| self.index.get(&(op, v)).map(|&i| &self.list[i]))
    }

    /// Lists `c`, if any.
    fn extend(&mut self, c: Option<Conversion>) {
        if let Some(c) = c {
            self.push(c);
        }
    }

    /// Lists `c`.
    fn push(&mut self, c: Conversion) {
        self.index.insert((c.op, c.value), self.list.len());
        self.list.push(c);
    }
}

/// Whether `opcode` is an elementwise op: emission imposes its result's
/// layout on every tile operand.
pub fn to_result_layout(opcode: Opcode) -> bool {
    use Opcode::*;
    matches!(
        opcode,
        AbsF | AbsI
            | AddF
            | AddI
            | AndI
            | Atan2
            | Bitcast
            | Ceil
            | CmpF
            | CmpI
            | Cos
            | CosH
            | DivF
            | DivI
            | Exp
            | Exp2
            | ExtI
            | Floor
            | Fma
            | FToF
            | FToI
            | IToF
            | Log
            | Log2
            | MaxF
            | MaxI
            | MinF
            | MinI
            | MulF
            | MulhiI
            | MulI
            | NegF
            | NegI
            | Offset
            | OrI
            | FPowF
            | FPowI
            | RemF
            | RemI
            | Rsqrt
            | Select
            | ShLI
            | ShRI
            | Sin
            | SinH
            | Sqrt
            | SubF
            | SubI
            | Tan
            | TanH
            | TruncI
            | XOrI
    )
}

/// Whether `opcode` is pure and cheap to compute again, element by element
/// (index and pointer tiles: iota, constants, broadcasts, reshapes,
/// offsets, integer arithmetic): a value it defines is recomputed in the
/// layout a consumer wants rather than moved between threads.
pub fn cheap(opcode: Opcode) -> bool {
    matches!(
        opcode,
        Opcode::Iota
            | Opcode::Constant
            | Opcode::Broadcast
            | Opcode::Reshape
            | Opcode::Offset
            | Opcode::AddI
            | Opcode::SubI
            | Opcode::MulI
            | Opcode::ShLI
            | Opcode::ShRI
            | Opcode::AndI
            | Opcode::OrI
            | Opcode::XOrI
            | Opcode::MinI
            | Opcode::MaxI
            | Opcode::ExtI
            | Opcode::TruncI
    )
}

/// Whether a tile in `from` holds, in each thread, the elements `to` gives
/// it: the thread bases agree and every register of `to` is one of `from`.
pub fn permutes(from: &LinearLayout, to: &LinearLayout) -> bool {
    from.thread_bases() == to.thread_bases()
        && (0..to.num_registers()).all(|r| {
            let want = to.apply(r, 0);
            (0..from.num_registers()).any(|q| from.apply(q, 0) == want)
        })
}

/// Whether warp shuffles move a tile of `elem` from `from` to `to`: 32-bit
/// registers, and a route ([`route`]).
pub fn by_shuffles(elem: Elem, from: &LinearLayout, to: &LinearLayout) -> bool {
    RegClass::for_bits(elem.bits()) == RegClass::B32 && route(from, to).is_some()
}

/// How a tile of `v` moves from `from` to `to`.
pub fn how(m: &Module, v: ValueId, from: &LinearLayout, to: &LinearLayout) -> How {
    if permutes(from, to) {
        return How::Permute;
    }
    if recompute::recomputes(m, v).is_some() {
        return How::Recompute;
    }
    let elem = value_tile(m, v).map(|(_, e)| e);
    if elem.is_some_and(|e| by_shuffles(e, from, to)) {
        return How::Shuffle;
    }
    let elem = elem.unwrap_or(Elem::Num(Scalar::F32));
    How::Shared {
        bytes: tile_bytes(&from.shape, elem),
    }
}

/// The layout reduction or scan `id` works in (its first operand's, as
/// `layout` gives it) and the dimension it works along, where these are
/// well formed.
pub fn along_dim(
    m: &Module,
    id: OpId,
    layout: impl Fn(ValueId) -> Option<Rc<LinearLayout>>,
) -> Option<(Rc<LinearLayout>, usize)> {
    let op = &m.ops[id];
    let Some(Attr::Int(d)) = op.attr("dim") else {
        return None;
    };
    let first = layout(*op.operands.first()?)?;
    let dim = usize::try_from(*d)
        .ok()
        .filter(|&d| d < first.shape.len())?;
    Some((first, dim))
}

/// The layout the results of reduction or scan `id` are held in: the one
/// it works in, less a reduction's dimension.
fn hold(
    m: &Module,
    id: OpId,
    layout: impl Fn(ValueId) -> Option<Rc<LinearLayout>>,
) -> Option<Rc<LinearLayout>> {
    let (first, dim) = along_dim(m, id, layout)?;
    match m.ops[id].opcode {
        Opcode::Reduce => Some(Rc::new(first.slice(dim))),
        _ => Some(first),
    }
}

/// An operand's value, its layout as held, and the layout its op wants.
pub type Want = (ValueId, Rc<LinearLayout>, Rc<LinearLayout>);

/// The layout op `id` wants each of its tile operands in, where the plan
/// covers its family (`layout` gives a value's layout as held), and
/// whether that is all of them: the elementwise ops, the atomics and the
/// loads through pointers their result's, the reductions and scans their
/// first operand's, the stores their stored tile's, a reshape or broadcast
/// the layout its result's is made from; of a product, its accumulator in
/// the result's layout and a scaled product's scales in its operands'
/// (its engine converts its other operands itself).
fn wants(
    m: &Module,
    id: OpId,
    plan: &Plan,
    layout: impl Fn(ValueId) -> Option<Rc<LinearLayout>>,
) -> Option<(Vec<Want>, bool)> {
    let op = &m.ops[id];
    let result = || plan.layouts.get(op.results.first()?).cloned();
    let to = match op.opcode {
        o if to_result_layout(o)
            || matches!(
                o,
                Opcode::AtomicRMWTko | Opcode::AtomicCASTko | Opcode::LoadPtrTko
            ) =>
        {
            result()?
        }
        Opcode::Reduce | Opcode::Scan => layout(*op.operands.first()?)?,
        Opcode::StorePtrTko => layout(op.operand("value")?)?,
        Opcode::StoreViewTko => layout(op.operand("tile")?)?,
        Opcode::Reshape | Opcode::Broadcast => {
            let src = *op.operands.first()?;
            if loaded(m, src).is_some_and(|load| held_by_copy(plan, load)) {
                // A product's copy holds it: nothing moves.
                return None;
            }
            let (shape, _) = value_tile(m, src)?;
            Rc::new(source_layout(op.opcode, &*result()?, &shape))
        }
        Opcode::MmaF | Opcode::MmaI | Opcode::MmaFScaled => {
            let result = result()?;
            let mut tiles = product_wants(m, id, result.clone(), &layout);
            // On CUDA cores from registers: A and B in the layouts the
            // engine multiplies them in, and nothing else to convert.
            let fma = matches!(plan.engine(id), Some(Engine::Fma));
            let registers = fma.then(|| fma::operand_layouts(m, id, &result)).flatten();
            if let Some([a, b]) = registers {
                for (name, to) in [("lhs", a), ("rhs", b)] {
                    let v = op.operand(name)?;
                    tiles.push((v, layout(v)?, Rc::new(to)));
                }
                return Some((tiles, true));
            }
            return Some((tiles, false));
        }
        _ => return None,
    };
    let tiles: Vec<_> = op
        .operands
        .iter()
        .filter_map(|&v| layout(v).map(|l| (v, l, to.clone())))
        .filter(|(_, l, _)| !l.shape.is_empty())
        .collect();
    // A mismatch of shapes is emission's error to report.
    let same = tiles.iter().all(|(_, l, _)| l.shape == to.shape);
    same.then_some((tiles, true))
}

/// What product `id`, its result in `result`, wants of its accumulator
/// and its scales.
fn product_wants(
    m: &Module,
    id: OpId,
    result: Rc<LinearLayout>,
    layout: &impl Fn(ValueId) -> Option<Rc<LinearLayout>>,
) -> Vec<Want> {
    let op = &m.ops[id];
    let mut out = Vec::new();
    if let Some((acc, from)) = op.operand("acc").and_then(|v| Some((v, layout(v)?))) {
        out.push((acc, from, result));
    }
    if op.opcode != Opcode::MmaFScaled {
        return out;
    }
    for (operand, scales, from_end) in [("lhs", "lhs_scale", 1), ("rhs", "rhs_scale", 2)] {
        let scale = |operand: &str, scales: &str| {
            let (t, s) = (layout(op.operand(operand)?)?, op.operand(scales)?);
            let kdim = t.shape.len().checked_sub(from_end)?;
            let (sshape, _) = value_tile(m, s)?;
            let shift = block_shift(t.shape[kdim], *sshape.get(kdim)?)?;
            Some((s, layout(s)?, Rc::new(scale_layout(&t, kdim, shift))))
        };
        out.extend(scale(operand, scales));
    }
    out
}

/// Of a scaled product's operand with `k` elements along K and `sk` scales:
/// the log2 of its block size (elements a scale), where that is a power of
/// two.
pub fn block_shift(k: i64, sk: i64) -> Option<u32> {
    let block = if sk > 0 && k % sk == 0 { k / sk } else { 0 };
    (block > 0 && block & (block - 1) == 0).then(|| block.trailing_zeros())
}

/// The layout of a scaled product's scales for its operand in `layout`,
/// whose dimension `kdim` has `1 << shift` elements a scale: each element's
/// scale where the element is.
pub fn scale_layout(layout: &LinearLayout, kdim: usize, shift: u32) -> LinearLayout {
    let map = |b: &Vec<i64>| {
        let mut b = b.clone();
        b[kdim] >>= shift;
        b
    };
    let mut shape = layout.shape.clone();
    shape[kdim] >>= shift;
    LinearLayout {
        shape,
        register: layout.register.iter().map(map).collect(),
        lane: layout.lane.iter().map(map).collect(),
        warp: layout.warp.iter().map(map).collect(),
    }
}

/// Whether the product that reads `load` copies it itself (straight to
/// shared memory, or streamed slice by slice).
pub fn held_by_copy(plan: &Plan, load: OpId) -> bool {
    plan.copies.direct.contains_key(&load) || plan.copies.streamed.contains_key(&load)
}

/// The layout the source (of shape `src`) of a reshape or broadcast whose
/// result is in `result` is wanted in: the same registers, lanes and warps
/// over the source's shape (a broadcast's stretched dimensions collapsed).
pub fn source_layout(opcode: Opcode, result: &LinearLayout, src: &[i64]) -> LinearLayout {
    if opcode == Opcode::Reshape {
        return result.reshape(src);
    }
    let mut c = result.clone();
    for (d, &s) in src.iter().enumerate() {
        if s == 1 && result.shape.get(d).is_some_and(|&r| r != 1) {
            c = c.collapse(d);
        }
    }
    c
}

/// The conversions of the entry body `ops` under `plan` (its layouts
/// decided).
pub fn plan(m: &Module, ops: &[OpId], plan: &Plan) -> Conversions {
    let mut out = Conversions::default();
    visit(m, ops, Scope::default(), plan, &mut out);
    out
}

/// Plans the conversions of `ops` (in `scope`) and of the ops in their
/// regions, in the order of the body.
fn visit(m: &Module, ops: &[OpId], scope: Scope, plan: &Plan, out: &mut Conversions) {
    for &id in ops {
        let op = &m.ops[id];
        let layout = |v| held(out, plan, v);
        let wanted = match carried::wants(m, id, scope, plan, layout) {
            Some(tiles) => Some((tiles, true)),
            None => wants(m, id, plan, layout),
        };
        let fragment = match plan.engine(id) {
            Some(Engine::MmaSync(e)) => fragments(m, id, e, layout),
            _ => None,
        };
        if let Some((tiles, whole)) = wanted {
            list(m, id, tiles, whole, false, out);
        }
        if let Some(a) = fragment {
            list(m, id, vec![a], false, true, out);
        }
        if let Some(index) = gathers::wants(m, id, plan, |v| held(out, plan, v)) {
            list(m, id, vec![index], false, false, out);
        }
        if op.opcode == Opcode::PrintTko {
            print(m, id, plan, out);
        }
        if op.opcode == Opcode::LoadViewTko {
            if let Some(load) = loads::load_view(m, id, plan) {
                out.whole.insert(id);
                if let Some(&res) = op.results.first() {
                    out.planned.insert((id, res));
                }
                out.extend(load);
            }
        }
        if matches!(op.opcode, Opcode::Reduce | Opcode::Scan) {
            if let Some(h) = hold(m, id, |v| held(out, plan, v)) {
                for &r in &op.results {
                    if plan.layouts.get(&r) != Some(&h) {
                        out.held.insert(r, h.clone());
                    }
                }
            }
        }
        out.held.extend(carried::held(m, id, plan));
        for r in &op.regions {
            for b in &r.blocks {
                visit(m, &b.ops, scope.inside(m, id), plan, out);
            }
        }
    }
}

/// The layout value `v` is held in, as planned so far: a reduction's,
/// scan's or loop's where `out` says, else the plan's.
fn held(out: &Conversions, plan: &Plan, v: ValueId) -> Option<Rc<LinearLayout>> {
    out.held.get(&v).or_else(|| plan.layouts.get(&v)).cloned()
}

/// Product `id`'s A on `mma.sync` (its plan `e`) into the fragments it
/// multiplies from registers in, where its engine has them: made where A
/// is not read from a buffer staged before its loop or copied, which
/// emission settles by the room left.
fn fragments(
    m: &Module,
    id: OpId,
    e: &mma_sync::Plan,
    layout: impl Fn(ValueId) -> Option<Rc<LinearLayout>>,
) -> Option<Want> {
    let a = m.ops[id].operand("lhs")?;
    let (shape, _) = value_tile(m, a)?;
    let to = a_fragment_layout(e, &shape)?;
    Some((a, layout(a)?, Rc::new(to)))
}

/// Lists the conversions of `print_tko` op `id`: each tile it prints
/// gathered into every thread through shared memory.
fn print(m: &Module, id: OpId, plan: &Plan, out: &mut Conversions) {
    out.whole.insert(id);
    for &v in m.ops[id].operand_group("args") {
        let (Some((shape, elem)), Some(from)) = (value_tile(m, v), held(out, plan, v)) else {
            continue;
        };
        if shape.is_empty() || !out.planned.insert((id, v)) {
            continue;
        }
        out.push(Conversion {
            op: id,
            value: v,
            from,
            to: Rc::new(LinearLayout::replicated(&shape)),
            how: How::Shared {
                bytes: tile_bytes(&shape, elem),
            },
            where_room: false,
        });
    }
}

/// Lists op `id`'s conversions of `tiles` (all of its own where `whole`;
/// made only where emission finds the room for the path that needs them
/// where `where_room`).
fn list(
    m: &Module,
    id: OpId,
    tiles: Vec<Want>,
    whole: bool,
    where_room: bool,
    out: &mut Conversions,
) {
    if whole {
        out.whole.insert(id);
    }
    for (v, from, to) in tiles {
        if !out.planned.insert((id, v)) || from == to {
            continue;
        }
        let how = how(m, v, &from, &to);
        out.push(Conversion {
            op: id,
            value: v,
            from,
            to,
            how,
            where_room,
        });
    }
}

/// The dump's lines: the count of each kind, and one line for each
/// conversion through shared memory.
pub fn dump(m: &Module, plan: &Plan, s: &mut String) {
    let list = &plan.conversions.list;
    if list.is_empty() {
        return;
    }
    let count = |f: fn(&How) -> bool| list.iter().filter(|c| f(&c.how)).count();
    let _ = writeln!(
        s,
        "  conversions: {} ({} by permuting registers, {} recomputed, {} by shuffles, {} through shared memory)",
        list.len(),
        count(|h| *h == How::Permute),
        count(|h| *h == How::Recompute),
        count(|h| *h == How::Shuffle),
        count(|h| matches!(h, How::Shared { .. })),
    );
    for c in list {
        let How::Shared { bytes } = c.how else {
            continue;
        };
        let at = m
            .location(c.op)
            .map_or_else(|| "unknown location".to_string(), |l| l.to_string());
        let k = m.ops[c.op].operands.iter().position(|&v| v == c.value);
        let _ = writeln!(
            s,
            "    '{}' op at {at}: {} through shared memory ({bytes} bytes){}",
            m.ops[c.op].name(),
            match k {
                Some(k) => format!("operand {k}"),
                None => "its result".into(),
            },
            if c.where_room {
                ", where there is room"
            } else {
                ""
            }
        );
    }
}
