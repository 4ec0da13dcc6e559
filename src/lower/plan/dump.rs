//! [`Plan::dump`]: a plan as stable text, one decision a line.
use std::fmt::Write;

use super::{Plan, Product};
use crate::ir::{Module, ValueId};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::plan::engines::mma_sync::{group_n, wgmma_part, GroupPart};
use crate::lower::plan::engines::Engine;

impl Plan {
    /// The plan as text: the entry and its warps, then every product with
    /// its operands, engine and own operand buffers (what it stages its
    /// operands in where no ring or direct copy holds them), then the
    /// copies and pipelined loops, then the planned layout conversions and
    /// op buffers.
    /// The same module and options give the same text.
    pub fn dump(&self, m: &Module) -> String {
        let mut s = String::new();
        let cluster = if self.cluster {
            "a cluster of CTAs"
        } else {
            "one CTA"
        };
        let _ = writeln!(
            s,
            "entry {} for {}: {} warps ({} threads), {cluster}",
            self.name,
            self.target.gpu,
            self.warps,
            self.warps * 32
        );
        let _ = writeln!(
            s,
            "  values: {} with facts, {} with layouts",
            self.facts.len(),
            self.layouts.len()
        );
        let _ = writeln!(s, "  accumulator registers per thread: {}", self.acc_regs);
        let _ = writeln!(
            s,
            "  tiles live at once: {} words ({} a thread)",
            self.peak_words,
            self.peak_words.div_ceil(u64::from(self.warps.max(1)) * 32)
        );
        for (i, p) in self.products.iter().enumerate() {
            product(&mut s, m, self, i, p);
        }
        crate::lower::plan::copies::dump(m, self, &mut s);
        crate::lower::plan::conversions::dump(m, self, &mut s);
        crate::lower::plan::buffers::dump(m, self, &mut s);
        crate::lower::plan::alloc::walk::dump(m, self, &mut s);
        s
    }
}

/// The lines of one product.
fn product(s: &mut String, m: &Module, plan: &Plan, i: usize, p: &Product) {
    let op = &m.ops[p.op];
    let at = m
        .location(p.op)
        .map_or_else(|| "unknown location".to_string(), |l| l.to_string());
    let _ = writeln!(s, "  product {i}: '{}' op at {at}", op.name());
    let operand = |name: &str| op.operand(name).map(|v| tile(m, v));
    let _ = writeln!(
        s,
        "    lhs {}, rhs {}, result {}",
        operand("lhs").unwrap_or_else(|| "?".into()),
        operand("rhs").unwrap_or_else(|| "?".into()),
        op.results
            .first()
            .map_or_else(|| "?".into(), |&v| tile(m, v)),
    );
    if p.chained {
        let _ = writeln!(s, "    in a product chain (attention)");
    }
    let _ = writeln!(s, "    engine: {}", p.engine.plan().describe());
    if let Engine::MmaSync(e) = &p.engine {
        if let Some(part) = wgmma_part(m, p.op, e, plan.target, plan.warps) {
            let split = match part {
                GroupPart::Rows => "rows",
                GroupPart::Columns => "columns",
                GroupPart::K => "K",
            };
            let _ = writeln!(
                s,
                "    on wgmma, A from registers, where B is copied straight to shared memory; \
                 warpgroups split its {split}, m64n{}k16 each",
                group_n(e)
            );
        }
    }
    if let Some(staging) = &p.staging {
        let _ = writeln!(s, "    own operand buffers: {}", staging.describe());
    }
}

/// `128x64 f16`.
fn tile(m: &Module, v: ValueId) -> String {
    match value_tile(m, v) {
        Some((shape, elem)) => {
            let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
            let elem = match elem {
                Elem::Num(s) => s.name(),
                Elem::Ptr => "ptr",
            };
            format!("{} {elem}", dims.join("x"))
        }
        None => "?".into(),
    }
}
