//! What the plan's walk chose by the room left, op by op: emission reads
//! each decision here ([`Choices`]), and the dump prints them; each
//! choice's buffers are among the placement's.
use std::fmt::Write;

use crate::ir::{Module, OpId};

/// How a load copied straight into its product's B buffer is issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Issue {
    /// Its first copy before its loop, each next one once read.
    BeforeLoop,
    /// First in its block, ahead of the ops before its product.
    Early,
    /// After a product (this one) freed bytes it fits in.
    AfterProduct {
        /// The product it follows.
        product: OpId,
    },
    /// Where it stands.
    InPlace,
    /// Nowhere: its buffer fits no room, so it is loaded through registers.
    Nowhere,
}

/// One choice by the room left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// A product stages its operands in K slices of `k`, in `sets` sets.
    Slices {
        /// The product.
        op: OpId,
        /// Elements of K a slice.
        k: i64,
        /// Sets of buffers.
        sets: u32,
    },
    /// A pipelined loop's ring, or none where not even two stages fit
    /// (the loop is then lowered as any other).
    Ring {
        /// The loop.
        op: OpId,
        /// Its stages.
        stages: Option<i64>,
    },
    /// The A operand of a product staged before its loop, or not for want
    /// of room.
    StagedA {
        /// The loop.
        op: OpId,
        /// The product.
        product: OpId,
        /// Whether it is staged.
        staged: bool,
    },
    /// From a loop on, B buffers' rows are swizzled rather than padded (so
    /// a staged A fits beside them).
    SwizzledRows {
        /// The loop.
        op: OpId,
    },
    /// How a load's B copy is issued.
    Copy {
        /// The load.
        load: OpId,
        /// How.
        issue: Issue,
    },
    /// An op converts an operand a window of it at a time.
    Window {
        /// The op.
        op: OpId,
        /// The claim (its index in the placement) of the window's buffer.
        claim: usize,
        /// Which operand.
        operand: usize,
        /// The tile dimension the window runs along.
        dim: usize,
        /// The window's length along it.
        len: i64,
    },
    /// A load's move from the rows it reads is not made for want of room.
    Unmoved {
        /// The load.
        op: OpId,
    },
    /// A loop's warp pairs sum a chunk of registers a round.
    SplitSum {
        /// The loop.
        op: OpId,
        /// Registers a round.
        regs: i64,
    },
}

/// Every choice of an entry, in walk order, and what emission asks of
/// them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Choices {
    /// The choices.
    pub list: Vec<Choice>,
}

impl Choices {
    /// The K slice and the sets product `op` stages its operands in.
    pub fn slices(&self, op: OpId) -> Option<(i64, u32)> {
        self.list.iter().find_map(|c| match *c {
            Choice::Slices { op: o, k, sets } if o == op => Some((k, sets)),
            _ => None,
        })
    }

    /// The stages of pipelined loop `op`'s ring; `None` where none fits.
    pub fn ring(&self, op: OpId) -> Option<i64> {
        self.list.iter().find_map(|c| match *c {
            Choice::Ring { op: o, stages } if o == op => stages,
            _ => None,
        })
    }

    /// Whether loop `op` stages the A operand of `product` before it.
    pub fn staged_a(&self, op: OpId, product: OpId) -> bool {
        (self.list.iter()).any(|c| {
            *c == Choice::StagedA {
                op,
                product,
                staged: true,
            }
        })
    }

    /// Whether B buffers' rows are swizzled from loop `op` on.
    pub fn swizzled_rows(&self, op: OpId) -> bool {
        self.list.contains(&Choice::SwizzledRows { op })
    }

    /// Whether load `load`'s B copy is issued as `issue`.
    pub fn issued(&self, load: OpId, issue: Issue) -> bool {
        self.list.contains(&Choice::Copy { load, issue })
    }

    /// The window (the dimension it runs along and its length) whose
    /// buffer is the placement's claim `claim`; `None` for a whole tile.
    pub fn window(&self, claim: usize) -> Option<(usize, i64)> {
        self.list.iter().find_map(|c| match *c {
            Choice::Window {
                claim: at,
                dim,
                len,
                ..
            } if at == claim => Some((dim, len)),
            _ => None,
        })
    }

    /// Whether load `op`'s move from the rows it reads is left undone.
    pub fn unmoved(&self, op: OpId) -> bool {
        self.list.contains(&Choice::Unmoved { op })
    }

    /// The registers a round loop `op`'s warp pairs sum.
    pub fn split_sum(&self, op: OpId) -> Option<i64> {
        self.list.iter().find_map(|c| match *c {
            Choice::SplitSum { op: o, regs } if o == op => Some(regs),
            _ => None,
        })
    }
}

/// The dump's lines: one a choice.
pub fn dump(m: &Module, choices: &[Choice], s: &mut String) {
    if choices.is_empty() {
        return;
    }
    let _ = writeln!(s, "  chosen by the room left:");
    let at = |op: OpId| {
        let loc = m
            .location(op)
            .map_or_else(|| "unknown location".to_string(), |l| l.to_string());
        format!("'{}' op at {loc}", m.ops[op].name())
    };
    for c in choices {
        let line = match *c {
            Choice::Slices { op, k, sets } => {
                let sets = if sets == 1 { "one set" } else { "two sets" };
                format!("{}: K slices of {k}, {sets}", at(op))
            }
            Choice::Ring {
                op,
                stages: Some(n),
            } => format!("{}: a ring of {n} stages", at(op)),
            Choice::Ring { op, stages: None } => {
                format!(
                    "{}: no ring (not two stages fit), a loop as any other",
                    at(op)
                )
            }
            Choice::StagedA {
                op,
                product,
                staged,
            } => {
                let what = if staged {
                    "stages"
                } else {
                    "has no room to stage"
                };
                format!("{}: {what} the A of {}", at(op), at(product))
            }
            Choice::SwizzledRows { op } => {
                format!("{}: B buffers' rows swizzled from here on", at(op))
            }
            Choice::Copy { load, issue } => {
                let how = match issue {
                    Issue::BeforeLoop => "copied first before its loop",
                    Issue::Early => "copied first in its block",
                    Issue::AfterProduct { .. } => "copied after a product, into freed bytes",
                    Issue::InPlace => "copied where it stands",
                    Issue::Nowhere => "not copied (no room), loaded through registers",
                };
                format!("{}: {how}", at(load))
            }
            Choice::Window {
                op,
                operand,
                dim,
                len,
                ..
            } => format!(
                "{}: operand {operand} converted {len} along dimension {dim} at a time",
                at(op)
            ),
            Choice::Unmoved { op } => format!("{}: read in its users' layout (no room)", at(op)),
            Choice::SplitSum { op, regs } => {
                format!("{}: warp pairs sum {regs} registers a round", at(op))
            }
        };
        let _ = writeln!(s, "    {line}");
    }
}
