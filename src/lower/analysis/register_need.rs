//! How many registers an entry's tiles need at once: the largest sum of
//! the tiles live at one point, from liveness over the entry's ops in
//! order. A reshape shares its source's registers and a splat constant
//! takes none worth counting; an op with regions adds its regions' own
//! peak to what lives across it. Entries take more warps while this is
//! high ([`crate::lower::plan::engines::entry_warps`]).
use rustc_hash::{FxHashMap, FxHashSet};

use crate::ir::{Module, OpId, Opcode, ValueId};
use crate::lower::analysis::values::value_tile;

/// The 32-bit registers the tiles live at once among `ops` take at most (the
/// whole tile block's, before it is spread over threads).
pub fn peak_words(m: &Module, ops: &[OpId]) -> u64 {
    let mut alias: FxHashMap<ValueId, ValueId> = FxHashMap::default();
    for id in m.walk() {
        let op = &m.ops[id];
        if op.opcode == Opcode::Reshape {
            if let (Some(&src), Some(&res)) = (op.operands.first(), op.results.first()) {
                alias.insert(res, src);
            }
        }
    }
    let root = |mut v: ValueId| {
        while let Some(&s) = alias.get(&v) {
            v = s;
        }
        v
    };
    block_peak(m, ops, &root)
}

/// [`peak_words`] of one block's `ops`, values named by their `root`.
fn block_peak(m: &Module, ops: &[OpId], root: &dyn Fn(ValueId) -> ValueId) -> u64 {
    // The last op (by position here) using each value, nested uses
    // counting at the op holding them.
    let mut last: FxHashMap<ValueId, usize> = FxHashMap::default();
    for (i, &id) in ops.iter().enumerate() {
        let mut uses = FxHashSet::default();
        operands_within(m, id, &mut uses);
        for v in uses {
            last.insert(root(v), i);
        }
    }
    let mut live: FxHashMap<ValueId, u64> = FxHashMap::default();
    let mut peak = 0;
    for (i, &id) in ops.iter().enumerate() {
        let op = &m.ops[id];
        if !matches!(op.opcode, Opcode::Reshape | Opcode::Constant) {
            for &r in &op.results {
                live.insert(r, words(m, r));
            }
        }
        let inner = op
            .regions
            .iter()
            .flat_map(|r| &r.blocks)
            .map(|b| block_peak(m, &b.ops, root))
            .max()
            .unwrap_or(0);
        peak = peak.max(live.values().sum::<u64>() + inner);
        live.retain(|v, _| last.get(v).is_some_and(|&j| j > i));
    }
    peak
}

/// The operands of op `id` and of the ops in its regions.
fn operands_within(m: &Module, id: OpId, out: &mut FxHashSet<ValueId>) {
    let op = &m.ops[id];
    out.extend(op.operands.iter().copied());
    for b in op.regions.iter().flat_map(|r| &r.blocks) {
        for &inner in &b.ops {
            operands_within(m, inner, out);
        }
    }
}

/// The 32-bit registers tile `v` takes (none for a value that is not a
/// tile). Elements narrower than a word take one each: the lowering keeps
/// 8- and 16-bit elements in registers of their own (packing them only
/// into an instruction's operands), and ptxas gives each such register a
/// whole 32-bit one. Counting f16 tiles packed put cuTile's f16 FFT at 120
/// registers a thread over four warps; it spilled 248 bytes there.
fn words(m: &Module, v: ValueId) -> u64 {
    value_tile(m, v).map_or(0, |(shape, elem)| {
        let elems: u64 = shape.iter().map(|&d| d.max(1) as u64).product();
        (elems * u64::from(elem.bits().max(32))).div_ceil(32)
    })
}
