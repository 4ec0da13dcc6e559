//! The entry's scratch map: every buffer as the allocator placed it and
//! every barrier the analysis of the declared accesses placed
//! ([`crate::lower::simt::membar`]), printed as stable text
//! (`TILEIRAS_DEBUG_DUMP_PLAN` writes it beside the plan).

use std::fmt::Write as _;

use crate::ir::{Module, OpId};
use crate::lower::simt::membar::{Access, Barrier};

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
    /// The barriers the analysis of the declared accesses placed, in
    /// program order.
    pub barriers: Vec<Barrier>,
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
                "  buffer {i}: {} bytes at {}{}{}, for {op}",
                b.bytes,
                b.offset,
                if b.over_dead {
                    ", over dead buffers"
                } else {
                    ""
                },
                if b.in_loop { ", in a loop" } else { "" },
            );
        }
        for b in &self.barriers {
            let _ = writeln!(s, "  barrier {}", describe(m, b));
        }
        s
    }
}

/// Where barrier `b` stands, in words: before which access of which bytes
/// by which op, or before a loop's next iteration.
pub fn describe(m: &Module, b: &Barrier) -> String {
    match b {
        Barrier::NextIteration => "before the next iteration of a loop".to_string(),
        Barrier::Before(d) => {
            let access = match d.access {
                Access::Read => "a read",
                Access::Write => "a write",
                Access::ReadWrite => "an update",
            };
            let op = d.by.map(|i| OpId::from_index(i as usize));
            format!(
                "before {access} of bytes {}..{} by {}",
                d.bytes.start,
                d.bytes.end,
                op_name(m, op)
            )
        }
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
