//! The entry's scratch map: every buffer as the allocator placed it and
//! every barrier an op owed, printed as stable text
//! (`TILEIRAS_DEBUG_DUMP_PLAN` writes it beside the plan).

use std::fmt::Write as _;

use crate::ir::{Module, OpId};
use crate::lower::plan::alloc::account::{Owed, Paid};

/// One claim as the allocator placed it: the entry's scratch map, printed
/// by [`ScratchMap::dump`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The op being lowered when the buffer was claimed.
    pub op: Option<OpId>,
    /// What the buffer serves where that is not the op's own work (a
    /// layout conversion of one of its operands).
    pub purpose: Option<&'static str>,
    /// Its size.
    pub bytes: i64,
    /// Its offset.
    pub offset: i64,
    /// Claimed in a loop.
    pub in_loop: bool,
    /// Placed below the top, over bytes of dead buffers.
    pub over_dead: bool,
    /// A barrier came before it.
    pub barrier: bool,
}

/// The scratch buffers of one entry, in claim order, and its size.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScratchMap {
    /// The entry's PTX name.
    pub entry: String,
    /// Every claim.
    pub buffers: Vec<Placed>,
    /// The entry's shared-memory bytes.
    pub bytes: i64,
    /// The barriers products of loops owed, in order.
    pub owed: Vec<Owed>,
}

impl ScratchMap {
    /// Stable text: one line a buffer.
    pub fn dump(&self, m: &Module) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "scratch of {}: {} bytes, {} buffers",
            self.entry,
            self.bytes,
            self.buffers.len()
        );
        for (i, b) in self.buffers.iter().enumerate() {
            let op = match b.purpose {
                Some(p) => format!("{p} in {}", op_name(m, b.op)),
                None => op_name(m, b.op),
            };
            let _ = writeln!(
                s,
                "  buffer {i}: {} bytes at {}{}{}{}, for {op}",
                b.bytes,
                b.offset,
                if b.over_dead {
                    ", over dead buffers"
                } else {
                    ""
                },
                if b.barrier { ", after a barrier" } else { "" },
                if b.in_loop { ", in a loop" } else { "" },
            );
        }
        for o in &self.owed {
            let paid = match o.paid {
                Paid::Before => "paid by a barrier before it",
                Paid::After => "paid by a later barrier of the body",
                Paid::AtEnd => "paid at the body's end",
                Paid::Own => "paid by its own",
                Paid::Open => "not paid",
            };
            let _ = writeln!(s, "  barrier owed by {}: {paid}", op_name(m, o.op));
        }
        s
    }
}

/// `'name' op at loc(...)`, or "the entry".
fn op_name(m: &Module, op: Option<OpId>) -> String {
    op.map_or_else(
        || "the entry".to_string(),
        |op| {
            let at = m
                .location(op)
                .map_or_else(|| "unknown location".to_string(), |l| l.to_string());
            format!("'{}' op at {at}", m.ops[op].name())
        },
    )
}
