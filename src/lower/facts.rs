//! Value facts from `assume` and constants: known power-of-two
//! divisibility and non-negativity of scalar values, used to prove
//! alignment for vector accesses and to pick zero- or sign-extension.
use rustc_hash::FxHashMap as HashMap;

use crate::ir::{Attr, Module, OpId, Opcode, ValueId};

/// What is known about a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fact {
    /// A power of two the value is known to be divisible by (1: nothing).
    pub divisor: u64,
    /// Whether the value is known to be non-negative.
    pub nonneg: bool,
}

impl Default for Fact {
    fn default() -> Self {
        Fact {
            divisor: 1,
            nonneg: false,
        }
    }
}

/// Facts for every value of the entry body `ops`.
pub fn analyze(m: &Module, ops: &[OpId]) -> HashMap<ValueId, Fact> {
    let mut facts: HashMap<ValueId, Fact> = HashMap::default();
    let mut all = Vec::new();
    nested(m, ops, &mut all);
    for id in all {
        let op = &m.ops[id];
        let Some(&res) = op.results.first() else {
            continue;
        };
        match op.opcode {
            Opcode::GetTileBlockId | Opcode::GetNumTileBlocks => {
                for &r in &op.results {
                    facts.insert(
                        r,
                        Fact {
                            divisor: 1,
                            nonneg: true,
                        },
                    );
                }
            }
            Opcode::Assume => {
                let mut f = op
                    .operands
                    .first()
                    .and_then(|v| facts.get(v))
                    .copied()
                    .unwrap_or_default();
                match op.attr("predicate") {
                    Some(Attr::DivBy {
                        divisor,
                        every: None,
                        along: None,
                    }) => {
                        let p = largest_pow2_dividing(*divisor);
                        f.divisor = f.divisor.max(p);
                    }
                    Some(Attr::Bounded { lb: Some(lb), .. }) if *lb >= 0 => f.nonneg = true,
                    _ => {}
                }
                facts.insert(res, f);
            }
            Opcode::Constant => {
                if let Some(v) = crate::lower::values::splat_int(m, op) {
                    let divisor = if v == 0 {
                        1 << 32
                    } else {
                        largest_pow2_dividing(v.unsigned_abs())
                    };
                    facts.insert(
                        res,
                        Fact {
                            divisor,
                            nonneg: v >= 0,
                        },
                    );
                }
            }
            _ => {}
        }
    }
    facts
}

/// The largest power of two dividing `v` (`v` > 0), capped at 2^32.
pub fn largest_pow2_dividing(v: u64) -> u64 {
    if v == 0 {
        1 << 32
    } else {
        (1u64 << v.trailing_zeros()).min(1 << 32)
    }
}

/// `ops` and the ops of their regions, in pre-order.
fn nested(m: &Module, ops: &[OpId], out: &mut Vec<OpId>) {
    for &id in ops {
        out.push(id);
        for r in &m.ops[id].regions {
            for b in &r.blocks {
                nested(m, &b.ops, out);
            }
        }
    }
}
