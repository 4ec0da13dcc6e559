//! Value facts from `assume`, constants and counting loops: known power-of-two
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
        let res = op.results.first().copied();
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
                if let Some(res) = res {
                    facts.insert(res, f);
                }
            }
            Opcode::For => {
                // An induction variable counting up from a non-negative
                // lower bound by a non-negative step, below its upper bound
                // (signed, or unsigned and non-negative), is non-negative.
                let known = |name: &str| {
                    op.operand(name)
                        .and_then(|v| facts.get(&v))
                        .is_some_and(|f| f.nonneg)
                };
                let below = !op.has_flag("unsignedCmp") || known("upperBound");
                let iv = op
                    .regions
                    .first()
                    .and_then(|r| r.blocks.first())
                    .and_then(|b| b.args.first());
                if let (true, Some(&iv)) = (known("lowerBound") && known("step") && below, iv) {
                    facts.insert(
                        iv,
                        Fact {
                            divisor: 1,
                            nonneg: true,
                        },
                    );
                }
            }
            Opcode::Constant => {
                if let (Some(v), Some(res)) =
                    (crate::lower::analysis::values::splat_int(m, op), res)
                {
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
