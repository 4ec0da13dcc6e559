//! The printer: renders a [`Module`] as NVIDIA's `tileirdisasm` does, in the
//! dialect's custom assembly format, with MLIR's SSA naming rules (name
//! hints, `_N` conflict suffixes scoped by region, result groups `%x:2`,
//! `%x#1`) and, with [`PrintOptions::debug_info`], trailing `loc(#locN)`
//! references and location aliases at the end.
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use super::attr::Attr;
use super::debug::{DebugAttr, DebugId};
use super::float::{format_float, is_neg_zero, to_f64};
use super::op::{Block, Op, OpId, Region, ValueDef, ValueId};
use super::opcode::Opcode;
use super::types::{Padding, Scalar, Type, TypeId, DYNAMIC};
use super::Module;

mod dense;
mod locations;
mod ops;
mod types;

pub(crate) use dense::dense_bits;
use dense::*;
use locations::*;
use types::*;

/// Printer options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrintOptions {
    /// Annotate with debug locations (`tileirdisasm -g`).
    pub debug_info: bool,
}

/// Renders `module` as text.
pub fn print_module(module: &Module, options: &PrintOptions) -> String {
    let mut p = Printer {
        m: module,
        opts: *options,
        out: String::new(),
        names: HashMap::new(),
        groups: HashMap::new(),
        aliases: Aliases::default(),
    };
    for &op in module.top_level() {
        p.names.clear();
        p.groups.clear();
        p.number_op_regions(op);
        p.print_op(op, 0);
    }
    if options.debug_info {
        let defs = p.aliases.finish();
        p.out.push_str(&defs);
        return resolve(&p.out, &p.aliases.names);
    }
    p.out
}

/// Renders one type as text.
pub fn type_to_string(module: &Module, ty: TypeId) -> String {
    let mut s = String::new();
    write_type(module, ty, &mut s, 0);
    s
}

#[derive(Clone, Debug)]
enum Name {
    Named(String),
    Num(u32),
}

struct Printer<'m> {
    m: &'m Module,
    opts: PrintOptions,
    out: String,
    names: HashMap<ValueId, Name>,
    groups: HashMap<OpId, Vec<u32>>,
    aliases: Aliases,
}

#[derive(Clone, Copy)]
struct Counters {
    value: u32,
    arg: u32,
    conflict: u32,
}

impl<'m> Printer<'m> {
    fn op(&self, id: OpId) -> &'m Op {
        &self.m.ops[id]
    }

    fn scalar(&self, ty: TypeId) -> Option<Scalar> {
        match self.m.types.try_get(ty)? {
            Type::Scalar(s) => Some(*s),
            _ => None,
        }
    }

    fn elem_scalar(&self, ty: TypeId) -> Option<Scalar> {
        match self.m.types.try_get(ty)? {
            Type::Tile { element, .. } => self.scalar(*element),
            Type::Scalar(s) => Some(*s),
            _ => None,
        }
    }

    fn ty(&self, ty: TypeId) -> String {
        type_to_string(self.m, ty)
    }

    fn vty(&self, v: ValueId) -> String {
        self.ty(self.m.values[v].ty)
    }

    // ---------------------------------------------------------------- naming

    /// The name hints an op gives its results: `(result index, name)`.
    fn result_names(&self, id: OpId, depth: usize) -> Option<Vec<(u32, String)>> {
        let op = self.op(id);
        let one = |s: &str| Some(vec![(0u32, s.to_string())]);
        match op.opcode {
            Opcode::Broadcast => one("bcast"),
            Opcode::Reshape => one("reshape"),
            Opcode::MakeTensorView => one("tview"),
            Opcode::MakePartitionView => one("pview"),
            Opcode::MakeStridedView => one("sview"),
            Opcode::MakeGatherScatterView => one("gsview"),
            Opcode::For => Some(if op.results.is_empty() {
                vec![]
            } else {
                vec![(0, "for".into())]
            }),
            Opcode::Reduce => Some(if op.results.is_empty() {
                vec![]
            } else {
                vec![(0, "reduce".into())]
            }),
            Opcode::Constant => Some(vec![(0, self.constant_name(op))]),
            Opcode::Assume => {
                let mut name = "assume".to_string();
                if let Some(v) = op.operand("value") {
                    if let ValueDef::Result { op: prod, index } = self.m.values[v].def {
                        if depth < 64 {
                            if let Some(list) = self.result_names(prod, depth + 1) {
                                name = "assume_".to_string();
                                if let Some((_, n)) = list.iter().find(|(i, _)| *i == index) {
                                    name.push_str(n);
                                }
                            }
                        }
                    }
                }
                one(&name)
            }
            Opcode::AtomicCASTko | Opcode::AtomicRMWTko | Opcode::LoadPtrTko => {
                Some(vec![(0, "result".into()), (1, "result_token".into())])
            }
            Opcode::LoadViewTko => Some(vec![(0, "tile".into()), (1, "result_token".into())]),
            Opcode::GetTileBlockId => Some(vec![
                (0, "blockId_x".into()),
                (1, "blockId_y".into()),
                (2, "blockId_z".into()),
            ]),
            Opcode::GetNumTileBlocks => Some(vec![
                (0, "gridSize_x".into()),
                (1, "gridSize_y".into()),
                (2, "gridSize_z".into()),
            ]),
            _ => None,
        }
    }

    fn constant_name(&self, op: &Op) -> String {
        let Some(Attr::Dense { ty, data }) = op.attr("value") else {
            return "cst".into();
        };
        let Some(s) = self.elem_scalar(*ty) else {
            return "cst".into();
        };
        let elems = dense_elements(s, data, self.num_elements(*ty));
        if s == Scalar::I1 {
            if elems.iter().all(|&v| v != 0) {
                return "true".into();
            }
            if elems.iter().all(|&v| v == 0) {
                return "false".into();
            }
            return "cst_i1".into();
        }
        let mut name = "cst".to_string();
        let splat = elems.first().is_some_and(|f| elems.iter().all(|e| e == f));
        if splat {
            let v = elems[0];
            if s.is_integer() {
                let _ = write!(name, "_{}", sext(v, s.bit_width()));
            } else {
                match to_f64(s, v) {
                    None => name.push_str("_NaN"),
                    Some(f) => {
                        if !is_neg_zero(s, v)
                            && f >= 0.0
                            && f.fract() == 0.0
                            && f < 18446744073709551616.0
                        {
                            let _ = write!(name, "_{}", f as u64);
                        }
                    }
                }
            }
        }
        let _ = write!(name, "_{}", s.name());
        name
    }

    fn num_elements(&self, ty: TypeId) -> u64 {
        match self.m.types.try_get(ty) {
            Some(Type::Tile { shape, .. }) => shape.iter().map(|&d| d.max(0) as u64).product(),
            _ => 1,
        }
    }

    fn unique(&self, used: &mut HashSet<String>, c: &mut Counters, name: &str) -> String {
        let name = sanitize(name);
        let out = if !used.contains(&name) {
            name
        } else {
            loop {
                let probe = format!("{}_{}", name, c.conflict);
                c.conflict += 1;
                if !used.contains(&probe) {
                    break probe;
                }
            }
        };
        used.insert(out.clone());
        out
    }

    fn set_name(
        &mut self,
        v: ValueId,
        name: Option<&str>,
        used: &mut HashSet<String>,
        c: &mut Counters,
    ) {
        match name {
            Some(n) => {
                let u = self.unique(used, c, n);
                self.names.insert(v, Name::Named(u));
            }
            None => {
                self.names.insert(v, Name::Num(c.value));
                c.value += 1;
            }
        }
    }

    fn number_op_regions(&mut self, id: OpId) {
        let c = Counters {
            value: 0,
            arg: 0,
            conflict: 0,
        };
        let used = HashSet::new();
        let op = self.op(id);
        for (ri, r) in op.regions.iter().enumerate() {
            self.number_region(id, ri, r, c, used.clone(), 0);
        }
    }

    fn number_region(
        &mut self,
        owner: OpId,
        ri: usize,
        region: &'m Region,
        mut c: Counters,
        mut used: HashSet<String>,
        depth: usize,
    ) {
        if depth > 256 {
            return;
        }
        let owner_op = self.op(owner);
        // Block argument name hints from the owning op.
        if let Some(block) = region.blocks.first() {
            match owner_op.opcode {
                Opcode::For => {
                    for (i, &a) in block.args.iter().enumerate() {
                        let n = if i == 0 {
                            "loopIdx".to_string()
                        } else {
                            format!("iterArg{}", i - 1)
                        };
                        self.set_name(a, Some(&n), &mut used, &mut c);
                    }
                }
                Opcode::Reduce => {
                    let multi = block.args.len() > 2;
                    for (i, &a) in block.args.iter().enumerate() {
                        let mut n = if i % 2 == 0 {
                            "reduce_lhs".to_string()
                        } else {
                            "reduce_rhs".to_string()
                        };
                        if multi {
                            let _ = write!(n, "{}", i / 2);
                        }
                        self.set_name(a, Some(&n), &mut used, &mut c);
                    }
                }
                _ => {}
            }
        }
        let _ = ri;
        for (bi, block) in region.blocks.iter().enumerate() {
            for &a in &block.args {
                if self.names.contains_key(&a) {
                    continue;
                }
                if bi == 0 {
                    let n = format!("arg{}", c.arg);
                    c.arg += 1;
                    self.set_name(a, Some(&n), &mut used, &mut c);
                } else {
                    self.set_name(a, None, &mut used, &mut c);
                }
            }
            for &o in &block.ops {
                self.number_op(o, &mut used, &mut c);
            }
        }
        for block in &region.blocks {
            for &o in &block.ops {
                let op = self.op(o);
                for (j, r) in op.regions.iter().enumerate() {
                    self.number_region(o, j, r, c, used.clone(), depth + 1);
                }
            }
        }
    }

    fn number_op(&mut self, id: OpId, used: &mut HashSet<String>, c: &mut Counters) {
        let op = self.op(id);
        let mut groups: Vec<u32> = vec![0];
        if let Some(list) = self.result_names(id, 0) {
            for (i, n) in list {
                if let Some(&v) = op.results.get(i as usize) {
                    self.set_name(v, Some(&n), used, c);
                    if i != 0 {
                        groups.push(i);
                    }
                }
            }
        }
        if let Some(&first) = op.results.first() {
            if !self.names.contains_key(&first) {
                self.set_name(first, None, used, c);
            }
        }
        if groups.len() != 1 {
            groups.sort_unstable();
            self.groups.insert(id, groups);
        }
    }

    fn name_text(&self, v: ValueId) -> String {
        match self.names.get(&v) {
            Some(Name::Named(s)) => format!("%{s}"),
            Some(Name::Num(n)) => format!("%{n}"),
            None => "%<<UNKNOWN SSA VALUE>>".to_string(),
        }
    }

    /// A value use: `%x`, `%3`, `%for#1`.
    fn val(&self, v: ValueId) -> String {
        match self.m.values[v].def {
            ValueDef::Result { op, index } => {
                let o = self.op(op);
                let n = o.results.len() as u32;
                if n == 1 {
                    return self.name_text(v);
                }
                let groups: &[u32] = self.groups.get(&op).map(|g| g.as_slice()).unwrap_or(&[0]);
                let pos = groups.partition_point(|&g| g <= index);
                let start = groups[pos.saturating_sub(1)];
                let end = groups.get(pos).copied().unwrap_or(n);
                let leader = o.results[start as usize];
                let mut s = self.name_text(leader);
                if end - start != 1 {
                    let _ = write!(s, "#{}", index - start);
                }
                s
            }
            ValueDef::BlockArg { .. } => self.name_text(v),
        }
    }

    fn vals(&self, vs: &[ValueId]) -> String {
        vs.iter()
            .map(|&v| self.val(v))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn vtys(&self, vs: &[ValueId]) -> String {
        vs.iter()
            .map(|&v| self.vty(v))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The result list before ` = `.
    fn result_list(&self, id: OpId) -> String {
        let op = self.op(id);
        let n = op.results.len() as u32;
        let groups: Vec<u32> = self.groups.get(&id).cloned().unwrap_or_else(|| vec![0]);
        let mut parts = Vec::new();
        for (i, &g) in groups.iter().enumerate() {
            let end = groups.get(i + 1).copied().unwrap_or(n);
            let mut s = self.name_text(op.results[g as usize]);
            if end - g > 1 {
                let _ = write!(s, ":{}", end - g);
            }
            parts.push(s);
        }
        parts.join(", ")
    }

    // --------------------------------------------------------------- printing

    fn indent(&mut self, level: usize) {
        for _ in 0..level {
            self.out.push_str("  ");
        }
    }

    fn loc_suffix(&mut self, id: OpId) -> String {
        if !self.opts.debug_info {
            return String::new();
        }
        let op = self.op(id);
        let idx = self.aliases.visit_op_loc(self.m, op.debug);
        format!(" loc({})", self.aliases.placeholder(idx))
    }

    fn print_op(&mut self, id: OpId, level: usize) {
        // MLIR visits an op's location before its regions.
        let loc = self.loc_suffix(id);
        let op = self.op(id);
        self.indent(level);
        if !op.results.is_empty() {
            let r = self.result_list(id);
            self.out.push_str(&r);
            self.out.push_str(" = ");
        }
        self.out.push_str(op.opcode.mnemonic());
        self.print_body(id, level);
        self.out.push_str(&loc);
        self.out.push('\n');
    }

    fn enum_kw(&self, op: &Op, name: &str) -> Option<&'static str> {
        match op.attr(name) {
            Some(Attr::Enum(k, v)) => k.keyword(*v),
            _ => None,
        }
    }

    fn rounding_suffix(&self, op: &Op, default: &str) -> String {
        match self.enum_kw(op, "rounding_mode") {
            Some(kw) if kw != default => format!("rounding<{kw}>"),
            _ => String::new(),
        }
    }

    fn ftz(&self, op: &Op) -> &'static str {
        if op.has_flag("flush_to_zero") {
            " flush_to_zero"
        } else {
            ""
        }
    }

    fn overflow(&self, op: &Op) -> String {
        match self.enum_kw(op, "overflow") {
            Some(kw) if kw != "none" => format!(" overflow<{kw}>"),
            _ => String::new(),
        }
    }

    fn g(&self, op: &Op, name: &str) -> Option<ValueId> {
        op.operand(name)
    }

    fn gv(&self, op: &Op, name: &str) -> String {
        match op.operand(name) {
            Some(v) => self.val(v),
            None => "<<missing>>".into(),
        }
    }

    fn gt(&self, op: &Op, name: &str) -> String {
        match op.operand(name) {
            Some(v) => self.vty(v),
            None => "<<missing>>".into(),
        }
    }

    fn rt(&self, op: &Op, i: usize) -> String {
        match op.results.get(i) {
            Some(&v) => self.vty(v),
            None => "<<missing>>".into(),
        }
    }

    fn hints_text(&self, a: &Attr) -> String {
        match a {
            Attr::OptimizationHints(items) | Attr::Dictionary(items) => {
                let mut sorted: Vec<&(String, Attr)> = items.iter().collect();
                sorted.sort_by(|a, b| a.0.cmp(&b.0));
                let inner: Vec<String> = sorted
                    .iter()
                    .map(|(k, v)| format!("{} = {}", k, self.hint_value(v)))
                    .collect();
                inner.join(", ")
            }
            _ => String::new(),
        }
    }

    fn hint_value(&self, a: &Attr) -> String {
        match a {
            Attr::Dictionary(_) => format!("{{{}}}", self.hints_text(a)),
            Attr::Integer { ty, value } => {
                let w = self.scalar(*ty).map(|s| s.bit_width()).unwrap_or(64);
                sext(*value, w).to_string()
            }
            Attr::Bool(b) => b.to_string(),
            other => self.attr_text(other),
        }
    }

    fn attr_text(&self, a: &Attr) -> String {
        match a {
            Attr::Unit => "unit".into(),
            Attr::Bool(b) => b.to_string(),
            Attr::Int(v) => v.to_string(),
            Attr::Integer { ty, value } => match self.scalar(*ty) {
                Some(Scalar::I1) => (if *value != 0 { "true" } else { "false" }).to_string(),
                Some(s) => format!("{} : {}", sext(*value, s.bit_width()), s.name()),
                None => value.to_string(),
            },
            Attr::Float { ty, bits } => match self.scalar(*ty) {
                Some(s) => format!("{} : {}", format_float(s, *bits), s.name()),
                None => bits.to_string(),
            },
            Attr::Type(t) => self.ty(*t),
            Attr::String(s) => format!("\"{}\"", escape(s)),
            Attr::Array(v) => format!(
                "[{}]",
                v.iter()
                    .map(|x| self.attr_text(x))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Attr::Dense { ty, data } => self.dense_text(*ty, data),
            Attr::DenseI32(v) => format!(
                "[{}]",
                v.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Attr::DenseBool(v) => format!(
                "[{}]",
                v.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Attr::Enum(k, v) => k.keyword(*v).unwrap_or("?").to_string(),
            Attr::DivBy {
                divisor,
                every,
                along,
            } => {
                let mut s = format!("div_by<{divisor}");
                if let Some(e) = every {
                    let _ = write!(s, ", every {e}");
                }
                if let Some(a) = along {
                    let _ = write!(s, " along {a}");
                }
                s.push('>');
                s
            }
            Attr::SameElements(v) => format!(
                "same_elements<[{}]>",
                v.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Attr::Bounded { lb, ub } => {
                let f = |x: &Option<i64>| x.map(|v| v.to_string()).unwrap_or_else(|| "?".into());
                format!("bounded<{}, {}>", f(lb), f(ub))
            }
            Attr::Dictionary(_) => format!("{{{}}}", self.hints_text(a)),
            Attr::OptimizationHints(_) => format!("<{}>", self.hints_text(a)),
        }
    }

    /// `<f32: 1.0>` or `<i32: [1, 2]>` for a dense constant.
    fn dense_text(&self, ty: TypeId, data: &[u8]) -> String {
        let Some(s) = self.elem_scalar(ty) else {
            return "<>".into();
        };
        let shape: Vec<i64> = match self.m.types.try_get(ty) {
            Some(Type::Tile { shape, .. }) => shape.clone(),
            _ => vec![],
        };
        let n = self.num_elements(ty);
        let elems = dense_elements(s, data, n);
        let fmt = |v: u64| -> String {
            if s == Scalar::I1 {
                (if v != 0 { "true" } else { "false" }).to_string()
            } else if s.is_integer() {
                sext(v, s.bit_width()).to_string()
            } else {
                format_float(s, v)
            }
        };
        let splat = elems.first().is_some_and(|f| elems.iter().all(|e| e == f));
        let body = if splat {
            fmt(elems[0])
        } else {
            let mut out = String::new();
            nest(&shape, &elems, &fmt, &mut out);
            out
        };
        format!("<{}: {}>", s.name(), body)
    }

    fn print_region_body(
        &mut self,
        region: &'m Region,
        level: usize,
        elide_empty_terminator: bool,
    ) {
        if let Some(block) = region.blocks.first() {
            self.print_block_ops(block, level, elide_empty_terminator);
        }
    }

    fn print_block_ops(&mut self, block: &'m Block, level: usize, elide: bool) {
        let n = block.ops.len();
        for (i, &o) in block.ops.iter().enumerate() {
            if elide && i + 1 == n {
                let op = self.op(o);
                if op.operands.is_empty() && matches!(op.opcode, Opcode::Yield | Opcode::Continue) {
                    continue;
                }
            }
            self.print_op(o, level);
        }
    }

    fn index_types(&self, idx: &[ValueId]) -> String {
        let tys: Vec<String> = idx.iter().map(|&v| self.vty(v)).collect();
        if tys.windows(2).all(|w| w[0] == w[1]) {
            tys.first().cloned().unwrap_or_default()
        } else {
            tys.join(", ")
        }
    }

    fn view_hints(&self, op: &Op) -> String {
        let mut s = String::new();
        if let Some(h) = op.attr("optimization_hints") {
            let _ = write!(s, " optimization_hints = {}", self.attr_text(h));
        }
        if let Some(Attr::DenseBool(b)) = op.attr("inbounds") {
            if b.iter().any(|&x| x) {
                let _ = write!(
                    s,
                    " inbounds = {}",
                    self.attr_text(&Attr::DenseBool(b.clone()))
                );
            }
        }
        s
    }

    fn mem(&self, op: &Op) -> String {
        let mut s = String::new();
        if let Some(kw) = self.enum_kw(op, "memory_ordering_semantics") {
            let _ = write!(s, " {kw}");
        }
        if let Some(kw) = self.enum_kw(op, "memory_scope") {
            let _ = write!(s, " {kw}");
        }
        s
    }
}
