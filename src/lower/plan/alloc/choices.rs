//! What the plan's walk chose by the room left, op by op, for the dump:
//! each choice's buffers are among the placement's.
use std::fmt::Write;

use crate::ir::{Module, OpId};

/// How a load copied straight into its product's B buffer is issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Issue {
    /// Its first copy before its loop, each next one once read.
    BeforeLoop,
    /// First in its block, ahead of the ops before its product.
    Early,
    /// After a product freed bytes it fits in.
    AfterProduct,
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
                    Issue::AfterProduct => "copied after a product, into freed bytes",
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
