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

fn write_type(m: &Module, ty: TypeId, s: &mut String, depth: usize) {
    if depth > 64 {
        s.push_str("<<nested>>");
        return;
    }
    let Some(t) = m.types.try_get(ty) else {
        s.push_str("<<invalid>>");
        return;
    };
    let dims = |v: &[i64]| -> String {
        v.iter()
            .map(|&d| {
                if d == DYNAMIC {
                    "?".to_string()
                } else {
                    d.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("x")
    };
    match t {
        Type::Scalar(sc) => s.push_str(sc.name()),
        Type::Token => s.push_str("token"),
        Type::Pointer { pointee, .. } => {
            s.push_str("ptr<");
            write_type(m, *pointee, s, depth + 1);
            s.push('>');
        }
        Type::Tile { element, shape } => {
            s.push_str("tile<");
            if !shape.is_empty() {
                s.push_str(&dims(shape));
                s.push('x');
            }
            write_type(m, *element, s, depth + 1);
            s.push('>');
        }
        Type::TensorView {
            element,
            shape,
            strides,
            ..
        } => {
            s.push_str("tensor_view<");
            if !shape.is_empty() {
                s.push_str(&dims(shape));
                s.push('x');
            }
            write_type(m, *element, s, depth + 1);
            s.push_str(", strides=[");
            let st: Vec<String> = strides
                .iter()
                .map(|&d| {
                    if d == DYNAMIC {
                        "?".to_string()
                    } else {
                        d.to_string()
                    }
                })
                .collect();
            s.push_str(&st.join(","));
            s.push_str("]>");
        }
        Type::PartitionView {
            tile_shape,
            tensor_view,
            dim_map,
            padding,
        } => {
            s.push_str("partition_view<tile=(");
            s.push_str(&join_x(tile_shape));
            s.push_str("), ");
            write_padding(*padding, s);
            write_type(m, *tensor_view, s, depth + 1);
            write_dim_map(dim_map, s);
            s.push('>');
        }
        Type::GatherScatterView {
            tile_shape,
            tensor_view,
            sparse_dim,
            padding,
        } => {
            s.push_str("gather_scatter_view<tile=(");
            s.push_str(&join_x(tile_shape));
            s.push_str("), ");
            write_padding(*padding, s);
            write_type(m, *tensor_view, s, depth + 1);
            let _ = write!(s, ", sparse_dim={sparse_dim}>");
        }
        Type::StridedView {
            tile_shape,
            traversal_strides,
            tensor_view,
            dim_map,
            padding,
        } => {
            s.push_str("strided_view<tile=(");
            s.push_str(&join_x(tile_shape));
            s.push_str("), traversal_strides=[");
            s.push_str(
                &traversal_strides
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            );
            s.push_str("], ");
            write_padding(*padding, s);
            write_type(m, *tensor_view, s, depth + 1);
            write_dim_map(dim_map, s);
            s.push('>');
        }
        Type::Function { inputs, results } => {
            s.push('(');
            for (i, t) in inputs.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_type(m, *t, s, depth + 1);
            }
            s.push_str(") -> (");
            for (i, t) in results.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_type(m, *t, s, depth + 1);
            }
            s.push(')');
        }
    }
}

fn join_x(v: &[i32]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

fn write_padding(p: Option<Padding>, s: &mut String) {
    if let Some(p) = p {
        let _ = write!(s, "padding_value = {}, ", p.name());
    }
}

fn write_dim_map(dim_map: &[i32], s: &mut String) {
    let identity = dim_map.iter().enumerate().all(|(i, &d)| d as usize == i);
    if !identity {
        s.push_str(", dim_map=[");
        s.push_str(
            &dim_map
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        );
        s.push(']');
    }
}

/// MLIR's identifier sanitizer for SSA name hints.
fn sanitize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, c) in name.chars().enumerate() {
        if i == 0 && c.is_ascii_digit() {
            out.push('_');
        }
        if c.is_ascii_alphanumeric() || "$._-".contains(c) {
            out.push(c);
        } else {
            out.push('_');
        }
    }
    out
}

/// `@name`, or `@"..."` when `name` is not a bare identifier.
fn symbol(name: &str) -> String {
    let bare = name
        .bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'.');
    if bare {
        format!("@{name}")
    } else {
        format!("@\"{}\"", escape(name))
    }
}

/// Escapes a string the way MLIR prints string literals.
fn escape(s: &str) -> String {
    let mut out = String::new();
    for b in super::string_to_bytes(s) {
        match b {
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e if b != b'"' => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:02X}");
            }
        }
    }
    out
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

    #[allow(clippy::too_many_lines)]
    fn print_body(&mut self, id: OpId, level: usize) {
        let op = self.op(id);
        let mut s = String::new();
        use Opcode as O;
        match op.opcode {
            // `$source attr-dict : type($result)`
            O::AbsF
            | O::AbsI
            | O::Cos
            | O::CosH
            | O::Ceil
            | O::Floor
            | O::Log
            | O::Log2
            | O::NegF
            | O::Sin
            | O::SinH
            | O::Tan => {
                let _ = write!(s, " {} : {}", self.gv(op, "source"), self.rt(op, 0));
            }
            O::Exp2 | O::Rsqrt => {
                let _ = write!(
                    s,
                    " {}{} : {}",
                    self.gv(op, "source"),
                    self.ftz(op),
                    self.rt(op, 0)
                );
            }
            O::Exp => {
                let r = self.rounding_suffix(op, "full");
                let _ = write!(s, " {} {} : {}", self.gv(op, "source"), r, self.rt(op, 0));
            }
            O::TanH => {
                let r = self.rounding_suffix(op, "full");
                let _ = write!(s, " {} {} : {}", self.gv(op, "source"), r, self.rt(op, 0));
            }
            O::Sqrt => {
                let r = self.rounding_suffix(op, "nearest_even");
                let _ = write!(
                    s,
                    " {} {}{} : {}",
                    self.gv(op, "source"),
                    r,
                    self.ftz(op),
                    self.rt(op, 0)
                );
            }
            O::NegI => {
                let _ = write!(
                    s,
                    " {}{} : {}",
                    self.gv(op, "source"),
                    self.overflow(op),
                    self.rt(op, 0)
                );
            }
            O::AddF | O::SubF | O::MulF | O::DivF => {
                let r = self.rounding_suffix(op, "nearest_even");
                let _ = write!(
                    s,
                    " {}, {} {}{} : {}",
                    self.gv(op, "lhs"),
                    self.gv(op, "rhs"),
                    r,
                    self.ftz(op),
                    self.rt(op, 0)
                );
            }
            O::Fma => {
                let r = self.rounding_suffix(op, "nearest_even");
                let _ = write!(
                    s,
                    " {}, {}, {} {}{} : {}",
                    self.gv(op, "lhs"),
                    self.gv(op, "rhs"),
                    self.gv(op, "acc"),
                    r,
                    self.ftz(op),
                    self.rt(op, 0)
                );
            }
            O::AddI | O::SubI | O::MulI | O::ShLI => {
                let _ = write!(
                    s,
                    " {}, {}{} : {}",
                    self.gv(op, "lhs"),
                    self.gv(op, "rhs"),
                    self.overflow(op),
                    self.rt(op, 0)
                );
            }
            O::AndI | O::OrI | O::XOrI | O::RemF => {
                let _ = write!(
                    s,
                    " {}, {} : {}",
                    self.gv(op, "lhs"),
                    self.gv(op, "rhs"),
                    self.rt(op, 0)
                );
            }
            O::Atan2 | O::MulhiI => {
                let (a, b) = ("x", "y");
                let _ = write!(
                    s,
                    " {}, {} : {}",
                    self.gv(op, a),
                    self.gv(op, b),
                    self.rt(op, 0)
                );
            }
            O::FPowF => {
                let _ = write!(
                    s,
                    " {}, {} : {}",
                    self.gv(op, "source"),
                    self.gv(op, "exponent"),
                    self.rt(op, 0)
                );
            }
            O::FPowI => {
                let _ = write!(
                    s,
                    " {}, {} : {}, {}",
                    self.gv(op, "source"),
                    self.gv(op, "exponent"),
                    self.rt(op, 0),
                    self.gt(op, "exponent")
                );
            }
            O::MaxF | O::MinF => {
                let mut extra = String::new();
                if op.has_flag("flush_to_zero") {
                    extra.push_str(" flush_to_zero");
                }
                if op.has_flag("propagate_nan") {
                    extra.push_str(" propagate_nan");
                }
                let _ = write!(
                    s,
                    " {}, {}{} : {}",
                    self.gv(op, "lhs"),
                    self.gv(op, "rhs"),
                    extra,
                    self.rt(op, 0)
                );
            }
            O::MaxI | O::MinI | O::RemI | O::ShRI => {
                let sg = self.enum_kw(op, "signedness").unwrap_or("signed");
                let _ = write!(
                    s,
                    " {}, {} {} : {}",
                    self.gv(op, "lhs"),
                    self.gv(op, "rhs"),
                    sg,
                    self.rt(op, 0)
                );
            }
            O::DivI => {
                let sg = self.enum_kw(op, "signedness").unwrap_or("signed");
                let r = match self.enum_kw(op, "rounding") {
                    Some(kw) if kw != "zero" => format!(" rounding<{kw}>"),
                    _ => String::new(),
                };
                let _ = write!(
                    s,
                    " {}, {} {}{} : {}",
                    self.gv(op, "lhs"),
                    self.gv(op, "rhs"),
                    sg,
                    r,
                    self.rt(op, 0)
                );
            }
            O::CmpF => {
                let _ = write!(
                    s,
                    " {} {} {}, {} : {} -> {}",
                    self.enum_kw(op, "comparison_predicate").unwrap_or("?"),
                    self.enum_kw(op, "comparison_ordering").unwrap_or("?"),
                    self.gv(op, "lhs"),
                    self.gv(op, "rhs"),
                    self.gt(op, "lhs"),
                    self.rt(op, 0)
                );
            }
            O::CmpI => {
                let _ = write!(
                    s,
                    " {} {}, {}, {} : {} -> {}",
                    self.enum_kw(op, "comparison_predicate").unwrap_or("?"),
                    self.gv(op, "lhs"),
                    self.gv(op, "rhs"),
                    self.enum_kw(op, "signedness").unwrap_or("?"),
                    self.gt(op, "lhs"),
                    self.rt(op, 0)
                );
            }
            O::Select => {
                let _ = write!(
                    s,
                    " {}, {}, {} : {}, {}",
                    self.gv(op, "cond"),
                    self.gv(op, "val_if_true"),
                    self.gv(op, "val_if_false"),
                    self.gt(op, "cond"),
                    self.rt(op, 0)
                );
            }
            // `$source attr-dict : type($source) -> type($result)`
            O::Bitcast
            | O::Broadcast
            | O::Reshape
            | O::IntToPtr
            | O::PtrToInt
            | O::PtrToPtr
            | O::Pack
            | O::Unpack => {
                let _ = write!(
                    s,
                    " {} : {} -> {}",
                    self.gv(op, "source"),
                    self.gt(op, "source"),
                    self.rt(op, 0)
                );
            }
            O::ExtI => {
                let _ = write!(
                    s,
                    " {} {} : {} -> {}",
                    self.gv(op, "from"),
                    self.enum_kw(op, "signedness").unwrap_or("?"),
                    self.gt(op, "from"),
                    self.rt(op, 0)
                );
            }
            O::TruncI => {
                let _ = write!(
                    s,
                    " {}{} : {} -> {}",
                    self.gv(op, "from"),
                    self.overflow(op),
                    self.gt(op, "from"),
                    self.rt(op, 0)
                );
            }
            O::FToF => {
                let r = self.rounding_suffix(op, "nearest_even");
                let _ = write!(
                    s,
                    " {} {} : {} -> {}",
                    self.gv(op, "from"),
                    r,
                    self.gt(op, "from"),
                    self.rt(op, 0)
                );
            }
            O::FToI => {
                let r = self.rounding_suffix(op, "nearest_int_to_zero");
                let sat = if op.has_flag("saturating") {
                    " saturating"
                } else {
                    ""
                };
                let _ = write!(
                    s,
                    " {} {} {}{} : {} -> {}",
                    self.gv(op, "from"),
                    self.enum_kw(op, "signedness").unwrap_or("?"),
                    r,
                    sat,
                    self.gt(op, "from"),
                    self.rt(op, 0)
                );
            }
            O::IToF => {
                let r = self.rounding_suffix(op, "nearest_even");
                let _ = write!(
                    s,
                    " {} {} {} : {} -> {}",
                    self.gv(op, "from"),
                    self.enum_kw(op, "signedness").unwrap_or("?"),
                    r,
                    self.gt(op, "from"),
                    self.rt(op, 0)
                );
            }
            O::Offset => {
                let _ = write!(
                    s,
                    " {}, {} : {}, {} -> {}",
                    self.gv(op, "ptr"),
                    self.gv(op, "offset"),
                    self.gt(op, "ptr"),
                    self.gt(op, "offset"),
                    self.rt(op, 0)
                );
            }
            O::Permute => {
                let p = op
                    .attr("permutation")
                    .map(|a| self.attr_text(a))
                    .unwrap_or_default();
                let _ = write!(
                    s,
                    " {} {} : {} -> {}",
                    self.gv(op, "source"),
                    p,
                    self.gt(op, "source"),
                    self.rt(op, 0)
                );
            }
            O::Cat => {
                let d = op
                    .attr("dim")
                    .map(|a| self.attr_text(a))
                    .unwrap_or_default();
                let _ = write!(
                    s,
                    " {}, {} dim = {} : {}, {} -> {}",
                    self.gv(op, "lhs"),
                    self.gv(op, "rhs"),
                    d,
                    self.gt(op, "lhs"),
                    self.gt(op, "rhs"),
                    self.rt(op, 0)
                );
            }
            O::Extract => {
                let _ = write!(
                    s,
                    " {}[{}] : {} -> {}",
                    self.gv(op, "source"),
                    self.vals(op.operand_group("indices")),
                    self.gt(op, "source"),
                    self.rt(op, 0)
                );
            }
            O::Insert => {
                let _ = write!(
                    s,
                    " {}, {}[{}] : {}, {}",
                    self.gv(op, "source"),
                    self.gv(op, "destination"),
                    self.vals(op.operand_group("indices")),
                    self.gt(op, "source"),
                    self.gt(op, "destination")
                );
            }
            O::Iota | O::MakeToken => {
                let _ = write!(s, " : {}", self.rt(op, 0));
            }
            O::GetTileBlockId | O::GetNumTileBlocks => {
                let _ = write!(s, " : {}", self.rt(op, 0));
            }
            O::GetIndexSpaceShape | O::GetTensorShape => {
                let _ = write!(
                    s,
                    " {} : {} -> {}",
                    self.gv(op, "src"),
                    self.gt(op, "src"),
                    self.rt(op, 0)
                );
            }
            O::JoinTokens => {
                let _ = write!(
                    s,
                    " {} : {}",
                    self.vals(op.operand_group("tokens")),
                    self.rt(op, 0)
                );
            }
            O::Assert => {
                let msg = match op.attr("message") {
                    Some(Attr::String(m)) => escape(m),
                    _ => String::new(),
                };
                let _ = write!(
                    s,
                    " {}, \"{}\" : {}",
                    self.gv(op, "condition"),
                    msg,
                    self.gt(op, "condition")
                );
            }
            O::Assume => {
                let p = op
                    .attr("predicate")
                    .map(|a| self.attr_text(a))
                    .unwrap_or_default();
                let _ = write!(s, " {}, {} : {}", p, self.gv(op, "value"), self.rt(op, 0));
            }
            O::Constant => {
                let v = op
                    .attr("value")
                    .map(|a| self.attr_text(a))
                    .unwrap_or_default();
                let _ = write!(s, " {} : {}", v, self.rt(op, 0));
            }
            O::GetGlobal => {
                let n = match op.attr("name") {
                    Some(Attr::String(n)) => n.clone(),
                    _ => String::new(),
                };
                let _ = write!(s, " {} : {}", symbol(&n), self.rt(op, 0));
            }
            O::Global => {
                let n = match op.attr("sym_name") {
                    Some(Attr::String(n)) => n.clone(),
                    _ => String::new(),
                };
                let vis = match self.enum_kw(op, "symbol_visibility") {
                    Some("private") => "private ",
                    _ => "",
                };
                let cst = if op.has_flag("constant") {
                    " constant"
                } else {
                    ""
                };
                let align = match op.attr("alignment") {
                    Some(Attr::Int(a)) if *a != 0 => format!(" alignment = {a}"),
                    _ => String::new(),
                };
                let (v, t) = match op.attr("value") {
                    Some(Attr::Dense { ty, data }) => (self.dense_text(*ty, data), self.ty(*ty)),
                    _ => (String::new(), String::new()),
                };
                let _ = write!(s, " {vis}{cst} {}{align} {v} : {t}", symbol(&n));
            }
            O::Return | O::Yield | O::Continue | O::Break => {
                let ops = op.operand_group("operands");
                if !ops.is_empty() {
                    let _ = write!(s, " {} : {}", self.vals(ops), self.vtys(ops));
                }
            }
            O::MmaF => {
                let fa = if op.has_flag("fast_acc") {
                    " fast_acc"
                } else {
                    ""
                };
                let _ = write!(
                    s,
                    " {}, {}, {}{} : {}, {}, {}",
                    self.gv(op, "lhs"),
                    self.gv(op, "rhs"),
                    self.gv(op, "acc"),
                    fa,
                    self.gt(op, "lhs"),
                    self.gt(op, "rhs"),
                    self.gt(op, "acc")
                );
            }
            O::MmaFScaled => {
                let names = ["lhs", "rhs", "acc", "lhs_scale", "rhs_scale"];
                let vs: Vec<String> = names.iter().map(|n| self.gv(op, n)).collect();
                let ts: Vec<String> = names.iter().map(|n| self.gt(op, n)).collect();
                let _ = write!(s, " {} : {}", vs.join(", "), ts.join(", "));
            }
            O::MmaI => {
                let _ = write!(
                    s,
                    " {}, {}, {} {} {} : {}, {}, {}",
                    self.gv(op, "lhs"),
                    self.gv(op, "rhs"),
                    self.gv(op, "acc"),
                    self.enum_kw(op, "signedness_lhs").unwrap_or("?"),
                    self.enum_kw(op, "signedness_rhs").unwrap_or("?"),
                    self.gt(op, "lhs"),
                    self.gt(op, "rhs"),
                    self.gt(op, "acc")
                );
            }
            O::Alloca => {
                let ne = op
                    .attr("num_elem")
                    .map(|a| self.attr_text(a))
                    .unwrap_or_default();
                let al = op
                    .attr("alignment")
                    .map(|a| self.attr_text(a))
                    .unwrap_or_default();
                let gl = if op.has_flag("global") { " global" } else { "" };
                let _ = write!(
                    s,
                    " num_elem = {ne}, alignment = {al}{gl} : {}",
                    self.rt(op, 0)
                );
            }
            O::PrintTko => {
                let st = match op.attr("str") {
                    Some(Attr::String(m)) => escape(m),
                    _ => String::new(),
                };
                let _ = write!(s, " \"{st}\"");
                let args = op.operand_group("args");
                if !args.is_empty() {
                    let _ = write!(s, ", {}", self.vals(args));
                }
                if let Some(t) = self.g(op, "token") {
                    let _ = write!(s, " token={}", self.val(t));
                }
                if !args.is_empty() {
                    let _ = write!(s, " : {}", self.vtys(args));
                }
                let _ = write!(s, " -> {}", self.rt(op, 0));
            }
            O::LoadPtrTko => {
                let _ = write!(s, "{} {}", self.mem(op), self.gv(op, "source"));
                let mut tys = vec![self.gt(op, "source")];
                for n in ["mask", "paddingValue"] {
                    if let Some(v) = self.g(op, n) {
                        let _ = write!(s, ", {}", self.val(v));
                        tys.push(self.vty(v));
                    }
                }
                if let Some(t) = self.g(op, "token") {
                    let _ = write!(s, " token={}", self.val(t));
                }
                if let Some(h) = op.attr("optimization_hints") {
                    let _ = write!(s, " optimization_hints = {}", self.attr_text(h));
                }
                let _ = write!(
                    s,
                    " : {} -> {}, {}",
                    tys.join(", "),
                    self.rt(op, 0),
                    self.rt(op, 1)
                );
            }
            O::StorePtrTko => {
                let _ = write!(
                    s,
                    "{} {}, {}",
                    self.mem(op),
                    self.gv(op, "destination"),
                    self.gv(op, "value")
                );
                let mut tys = vec![self.gt(op, "destination"), self.gt(op, "value")];
                if let Some(v) = self.g(op, "mask") {
                    let _ = write!(s, ", {}", self.val(v));
                    tys.push(self.vty(v));
                }
                if let Some(t) = self.g(op, "token") {
                    let _ = write!(s, " token={}", self.val(t));
                }
                if let Some(h) = op.attr("optimization_hints") {
                    let _ = write!(s, " optimization_hints = {}", self.attr_text(h));
                }
                let _ = write!(s, " : {} -> {}", tys.join(", "), self.rt(op, 0));
            }
            O::AtomicCASTko | O::AtomicRMWTko => {
                let mut parts = vec![self.gv(op, "pointers")];
                let mut tys = vec![self.gt(op, "pointers")];
                if op.opcode == O::AtomicCASTko {
                    parts.push(self.gv(op, "cmp"));
                    parts.push(self.gv(op, "val"));
                    tys.push(self.gt(op, "val"));
                } else {
                    parts.push(self.enum_kw(op, "mode").unwrap_or("?").to_string());
                    parts.push(self.gv(op, "arg"));
                    tys.push(self.gt(op, "arg"));
                }
                if let Some(v) = self.g(op, "mask") {
                    parts.push(self.val(v));
                    tys.push(self.vty(v));
                }
                let _ = write!(s, "{} {}", self.mem(op), parts.join(", "));
                if let Some(t) = self.g(op, "token") {
                    let _ = write!(s, " token={}", self.val(t));
                }
                let _ = write!(
                    s,
                    " : {} -> {}, {}",
                    tys.join(", "),
                    self.rt(op, 0),
                    self.rt(op, 1)
                );
            }
            O::AtomicRedViewTko => {
                let idx = op.operand_group("index");
                let _ = write!(
                    s,
                    "{} {}[{}], {}, {}",
                    self.mem(op),
                    self.gv(op, "view"),
                    self.vals(idx),
                    self.enum_kw(op, "mode").unwrap_or("?"),
                    self.gv(op, "value")
                );
                if let Some(t) = self.g(op, "token") {
                    let _ = write!(s, " token = {}", self.val(t));
                }
                s.push_str(&self.view_hints(op));
                let mut tys = vec![self.gt(op, "value"), self.gt(op, "view")];
                if !idx.is_empty() {
                    tys.push(self.index_types(idx));
                }
                let _ = write!(s, " : {} -> {}", tys.join(", "), self.rt(op, 0));
            }
            O::LoadViewTko => {
                let idx = op.operand_group("index");
                let _ = write!(
                    s,
                    "{} {}[{}]",
                    self.mem(op),
                    self.gv(op, "view"),
                    self.vals(idx)
                );
                if let Some(t) = self.g(op, "token") {
                    let _ = write!(s, " token = {}", self.val(t));
                }
                s.push_str(&self.view_hints(op));
                let mut tys = vec![self.gt(op, "view")];
                if !idx.is_empty() {
                    tys.push(self.index_types(idx));
                }
                let _ = write!(
                    s,
                    " : {} -> {}, {}",
                    tys.join(", "),
                    self.rt(op, 0),
                    self.rt(op, 1)
                );
            }
            O::StoreViewTko => {
                let idx = op.operand_group("index");
                let _ = write!(
                    s,
                    "{} {}, {}[{}]",
                    self.mem(op),
                    self.gv(op, "tile"),
                    self.gv(op, "view"),
                    self.vals(idx)
                );
                if let Some(t) = self.g(op, "token") {
                    let _ = write!(s, " token = {}", self.val(t));
                }
                s.push_str(&self.view_hints(op));
                let mut tys = vec![self.gt(op, "tile"), self.gt(op, "view")];
                if !idx.is_empty() {
                    tys.push(self.index_types(idx));
                }
                let _ = write!(s, " : {} -> {}", tys.join(", "), self.rt(op, 0));
            }
            O::MakeTensorView => {
                let rt = op.results.first().map(|&r| self.m.values[r].ty);
                let (shape, strides) = match rt.and_then(|t| self.m.types.try_get(t)) {
                    Some(Type::TensorView { shape, strides, .. }) => {
                        (shape.clone(), strides.clone())
                    }
                    _ => (vec![], vec![]),
                };
                let dshape = op.operand_group("dynamicShape");
                let dstr = op.operand_group("dynamicStrides");
                let render = |dims: &[i64], dynv: &[ValueId]| -> String {
                    let mut k = 0;
                    let parts: Vec<String> = dims
                        .iter()
                        .map(|&d| {
                            if d == DYNAMIC {
                                let t = dynv
                                    .get(k)
                                    .map(|&v| self.val(v))
                                    .unwrap_or_else(|| "?".into());
                                k += 1;
                                t
                            } else {
                                d.to_string()
                            }
                        })
                        .collect();
                    parts.join(", ")
                };
                let _ = write!(
                    s,
                    " {}, shape = [{}], strides = [{}] :",
                    self.gv(op, "base"),
                    render(&shape, dshape),
                    render(&strides, dstr)
                );
                if let Some(&first) = dshape.first().or(dstr.first()) {
                    let _ = write!(s, " {} ->", self.vty(first));
                }
                let _ = write!(s, " {}", self.rt(op, 0));
            }
            O::MakePartitionView | O::MakeStridedView | O::MakeGatherScatterView => {
                let _ = write!(s, " {} : {}", self.gv(op, "tensor_view"), self.rt(op, 0));
            }
            O::Entry => {
                let name = match op.attr("sym_name") {
                    Some(Attr::String(n)) => n.clone(),
                    _ => String::new(),
                };
                let args: Vec<String> = op
                    .regions
                    .first()
                    .and_then(|r| r.blocks.first())
                    .map(|b| {
                        b.args
                            .iter()
                            .map(|&a| format!("{}: {}", self.val(a), self.vty(a)))
                            .collect()
                    })
                    .unwrap_or_default();
                let hints = match op.attr("optimization_hints") {
                    Some(a @ Attr::OptimizationHints(items)) if !items.is_empty() => {
                        format!(" optimization_hints={}", self.attr_text(a))
                    }
                    _ => String::new(),
                };
                let _ = writeln!(s, " {}({}){} {{", symbol(&name), args.join(", "), hints);
                self.out.push_str(&s);
                if let Some(r) = op.regions.first() {
                    self.print_region_body(r, level + 1, false);
                }
                self.indent(level);
                self.out.push('}');
                return;
            }
            O::If => {
                let _ = write!(s, " {}", self.gv(op, "condition"));
                if !op.results.is_empty() {
                    let tys: Vec<String> = op.results.iter().map(|&r| self.vty(r)).collect();
                    let _ = write!(s, " -> ({})", tys.join(", "));
                }
                s.push_str(" {\n");
                self.out.push_str(&s);
                if let Some(r) = op.regions.first() {
                    self.print_region_body(r, level + 1, true);
                }
                self.indent(level);
                self.out.push('}');
                if let Some(r) = op.regions.get(1) {
                    if !r.blocks.is_empty() {
                        self.out.push_str(" else {\n");
                        self.print_region_body(r, level + 1, true);
                        self.indent(level);
                        self.out.push('}');
                    }
                }
                return;
            }
            O::For => {
                let block = op.regions.first().and_then(|r| r.blocks.first());
                let iv = block
                    .and_then(|b| b.args.first())
                    .map(|&a| self.val(a))
                    .unwrap_or_default();
                let unsigned = if op.has_flag("unsignedCmp") {
                    " unsigned"
                } else {
                    ""
                };
                let _ = write!(
                    s,
                    "{} {} in ({} to {}, step {}) : {}",
                    unsigned,
                    iv,
                    self.gv(op, "lowerBound"),
                    self.gv(op, "upperBound"),
                    self.gv(op, "step"),
                    self.gt(op, "lowerBound")
                );
                let init = op.operand_group("initValues");
                if !init.is_empty() {
                    let pairs: Vec<String> = init
                        .iter()
                        .enumerate()
                        .map(|(i, &v)| {
                            let a = block
                                .and_then(|b| b.args.get(i + 1))
                                .map(|&a| self.val(a))
                                .unwrap_or_default();
                            format!("{} = {}", a, self.val(v))
                        })
                        .collect();
                    let tys: Vec<String> = op.results.iter().map(|&r| self.vty(r)).collect();
                    let _ = write!(
                        s,
                        " iter_values({}) -> ({})",
                        pairs.join(", "),
                        tys.join(", ")
                    );
                }
                s.push_str(" {\n");
                self.out.push_str(&s);
                if let Some(r) = op.regions.first() {
                    self.print_region_body(r, level + 1, true);
                }
                self.indent(level);
                self.out.push('}');
                return;
            }
            O::Loop => {
                let block = op.regions.first().and_then(|r| r.blocks.first());
                let init = op.operand_group("initValues");
                if !init.is_empty() {
                    let pairs: Vec<String> = init
                        .iter()
                        .enumerate()
                        .map(|(i, &v)| {
                            let a = block
                                .and_then(|b| b.args.get(i))
                                .map(|&a| self.val(a))
                                .unwrap_or_default();
                            format!("{} = {}", a, self.val(v))
                        })
                        .collect();
                    let _ = write!(
                        s,
                        " iter_values({}) : {}",
                        pairs.join(", "),
                        self.vtys(init)
                    );
                }
                if !op.results.is_empty() {
                    let tys: Vec<String> = op.results.iter().map(|&r| self.vty(r)).collect();
                    if init.is_empty() {
                        let _ = write!(s, " : {}", tys.join(", "));
                    } else {
                        let _ = write!(s, " -> {}", tys.join(", "));
                    }
                }
                s.push_str(" {\n");
                self.out.push_str(&s);
                if let Some(r) = op.regions.first() {
                    self.print_region_body(r, level + 1, true);
                }
                self.indent(level);
                self.out.push('}');
                return;
            }
            O::Reduce | O::Scan => {
                let ops = op.operand_group("operands");
                let dim = op
                    .attr("dim")
                    .map(|a| self.attr_text(a))
                    .unwrap_or_default();
                let ids = op
                    .attr("identities")
                    .map(|a| self.attr_text(a))
                    .unwrap_or_default();
                let _ = write!(s, " {} dim={}", self.vals(ops), dim);
                if op.opcode == O::Scan {
                    let rv = op
                        .attr("reverse")
                        .map(|a| self.attr_text(a))
                        .unwrap_or_default();
                    let _ = write!(s, " reverse={rv}");
                }
                let tys: Vec<String> = op.results.iter().map(|&r| self.vty(r)).collect();
                let _ = writeln!(
                    s,
                    " identities={} : {} -> {} ",
                    ids,
                    self.vtys(ops),
                    tys.join(", ")
                );
                self.out.push_str(&s);
                let block = op.regions.first().and_then(|r| r.blocks.first());
                self.indent(level);
                let args: Vec<String> = block
                    .map(|b| {
                        b.args
                            .iter()
                            .map(|&a| format!("{}: {}", self.val(a), self.vty(a)))
                            .collect()
                    })
                    .unwrap_or_default();
                let _ = writeln!(self.out, "({}) {{", args.join(", "));
                if let Some(r) = op.regions.first() {
                    self.print_region_body(r, level + 1, false);
                }
                self.indent(level);
                self.out.push('}');
                return;
            }
            O::Module => {}
            O::GdcLaunchDependentsTko | O::GdcWaitTko => {
                if let Some(&t) = op.operand_group("token").first() {
                    let _ = write!(s, " token = {}", self.val(t));
                }
                let _ = write!(s, " -> {}", self.rt(op, 0));
            }
            O::MemoryFenceAliasTko => {
                let _ = write!(s, " {}", self.gv(op, "token"));
            }
        }
        self.out.push_str(&s);
    }
}

fn nest(shape: &[i64], elems: &[u64], fmt: &dyn Fn(u64) -> String, out: &mut String) {
    if shape.len() <= 1 {
        out.push('[');
        out.push_str(&elems.iter().map(|&v| fmt(v)).collect::<Vec<_>>().join(", "));
        out.push(']');
        return;
    }
    let inner: usize = shape[1..]
        .iter()
        .map(|&d| d.max(0) as usize)
        .product::<usize>()
        .max(1);
    out.push('[');
    for (i, chunk) in elems.chunks(inner).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        nest(&shape[1..], chunk, fmt, out);
    }
    out.push(']');
}

/// Sign-extends the low `w` bits of `v`.
fn sext(v: u64, w: u32) -> i64 {
    if w == 0 || w >= 64 {
        return v as i64;
    }
    let shift = 64 - w;
    ((v << shift) as i64) >> shift
}

/// Splits raw constant bytes into `n` element bit patterns (a one-element
/// buffer is a splat and expands).
pub(crate) fn dense_bits(s: Scalar, data: &[u8], n: usize) -> Vec<u64> {
    dense_elements_capped(s, data, n as u64, 1 << 26)
}

/// Splits raw constant bytes into element bit patterns (a splat buffer of one
/// element expands to `n` copies, capped for printing).
fn dense_elements(s: Scalar, data: &[u8], n: u64) -> Vec<u64> {
    dense_elements_capped(s, data, n, 1 << 20)
}

fn dense_elements_capped(s: Scalar, data: &[u8], n: u64, cap: u64) -> Vec<u64> {
    let n = n.min(cap) as usize;
    if s == Scalar::I1 {
        // One byte 0x00/0xFF is a splat; otherwise bits are packed LSB first.
        if data.len() == 1 && (data[0] == 0 || data[0] == 0xff) {
            return vec![u64::from(data[0] != 0); n.max(1)];
        }
        return (0..n.max(1))
            .map(|i| u64::from(data.get(i / 8).is_some_and(|b| b >> (i % 8) & 1 == 1)))
            .collect();
    }
    let eb = s.bit_width().div_ceil(8) as usize;
    let mut v: Vec<u64> = data
        .chunks(eb)
        .map(|c| {
            let mut x = 0u64;
            for (i, &b) in c.iter().enumerate() {
                x |= u64::from(b) << (8 * i);
            }
            x
        })
        .collect();
    if v.len() == 1 && n > 1 {
        v = vec![v[0]; n];
    }
    v
}

// -------------------------------------------------------------------- -g

#[derive(Default)]
struct Aliases {
    entries: Vec<AliasEntry>,
    by_key: HashMap<String, usize>,
    names: Vec<String>,
}

struct AliasEntry {
    base: &'static str,
    depth: usize,
    /// Definition text with `\u{0}N\u{0}` placeholders for other aliases.
    def: String,
}

impl Aliases {
    fn placeholder(&self, idx: usize) -> String {
        format!("\u{0}{idx}\u{0}")
    }

    fn insert(&mut self, key: String, base: &'static str) -> (usize, bool) {
        if let Some(&i) = self.by_key.get(&key) {
            return (i, false);
        }
        let i = self.entries.len();
        self.entries.push(AliasEntry {
            base,
            depth: 0,
            def: String::new(),
        });
        self.by_key.insert(key, i);
        (i, true)
    }

    fn visit_op_loc(&mut self, m: &Module, debug: Option<DebugId>) -> usize {
        match debug {
            None => self.unknown(),
            Some(d) => self.visit_loc(m, d, 0),
        }
    }

    fn unknown(&mut self) -> usize {
        let (i, new) = self.insert("loc(unknown)".into(), "loc");
        if new {
            self.entries[i].def = "loc(unknown)".into();
        }
        i
    }

    fn key_of(m: &Module, d: DebugId, depth: usize) -> String {
        if depth > 64 {
            return "?".into();
        }
        match m.debug.try_get(d) {
            None | Some(DebugAttr::Unknown) => "loc(unknown)".into(),
            Some(DebugAttr::File { name, directory }) => format!("file<{name:?},{directory:?}>"),
            Some(DebugAttr::CompileUnit { file }) => {
                format!("cu<{}>", Self::key_of(m, *file, depth + 1))
            }
            Some(DebugAttr::Subprogram {
                file,
                line,
                name,
                linkage_name,
                compile_unit,
                scope_line,
                declaration,
            }) => format!(
                "sp<{},{line},{name:?},{linkage_name:?},{},{scope_line},{declaration}>",
                Self::key_of(m, *file, depth + 1),
                Self::key_of(m, *compile_unit, depth + 1)
            ),
            Some(DebugAttr::LexicalBlock {
                scope,
                file,
                line,
                column,
            }) => format!(
                "lb<{},{},{line},{column}>",
                Self::key_of(m, *scope, depth + 1),
                Self::key_of(m, *file, depth + 1)
            ),
            Some(DebugAttr::Loc {
                scope,
                filename,
                line,
                column,
            }) => format!(
                "diloc<{filename:?}:{line}:{column},{}>",
                Self::key_of(m, *scope, depth + 1)
            ),
            Some(DebugAttr::CallSite { callee, caller }) => format!(
                "callsite<{},{}>",
                Self::key_of(m, *callee, depth + 1),
                Self::key_of(m, *caller, depth + 1)
            ),
        }
    }

    /// Visits a debug attribute; returns its alias index.
    fn visit_loc(&mut self, m: &Module, d: DebugId, depth: usize) -> usize {
        let attr = match m.debug.try_get(d) {
            None | Some(DebugAttr::Unknown) => return self.unknown(),
            Some(a) => a.clone(),
        };
        if depth > 64 {
            return self.unknown();
        }
        let key = Self::key_of(m, d, 0);
        let base = match &attr {
            DebugAttr::File { .. } => "di_file",
            DebugAttr::CompileUnit { .. } => "di_compile_unit",
            DebugAttr::Subprogram { .. } => "di_subprogram",
            DebugAttr::LexicalBlock { .. } => "di_lexical_block",
            _ => "loc",
        };
        let (i, new) = self.insert(key, base);
        if !new {
            return i;
        }
        let (def, children): (String, Vec<usize>) = match attr {
            DebugAttr::Unknown => unreachable_unknown(),
            DebugAttr::File { name, directory } => (
                format!(
                    "#cuda_tile.di_file<\"{}\" in \"{}\">",
                    escape(&name),
                    escape(&directory)
                ),
                vec![],
            ),
            DebugAttr::CompileUnit { file } => {
                let f = self.visit_loc(m, file, depth + 1);
                (
                    format!("#cuda_tile.di_compile_unit<file = {}>", self.placeholder(f)),
                    vec![f],
                )
            }
            DebugAttr::Subprogram {
                file,
                line,
                name,
                linkage_name,
                compile_unit,
                scope_line,
                declaration,
            } => {
                let f = self.visit_loc(m, file, depth + 1);
                let cu = self.visit_loc(m, compile_unit, depth + 1);
                let flags = if declaration {
                    ", flags = declaration"
                } else {
                    ""
                };
                (
                    format!(
                        "#cuda_tile.di_subprogram<file = {}, line = {line}, name = \"{}\", linkageName = \"{}\", compileUnit = {}, scopeLine = {scope_line}{flags}>",
                        self.placeholder(f),
                        escape(&name),
                        escape(&linkage_name),
                        self.placeholder(cu)
                    ),
                    vec![f, cu],
                )
            }
            DebugAttr::LexicalBlock {
                scope,
                file,
                line,
                column,
            } => {
                let sc = self.visit_loc(m, scope, depth + 1);
                let f = self.visit_loc(m, file, depth + 1);
                (
                    format!(
                        "#cuda_tile.di_lexical_block<scope = {}, file = {}, line = {line}, column = {column}>",
                        self.placeholder(sc),
                        self.placeholder(f)
                    ),
                    vec![sc, f],
                )
            }
            DebugAttr::Loc {
                scope,
                filename,
                line,
                column,
            } => {
                let flc_key = format!("loc({filename:?}:{line}:{column})");
                let (fi, fnew) = self.insert(flc_key, "loc");
                if fnew {
                    self.entries[fi].def =
                        format!("loc(\"{}\":{line}:{column})", escape(&filename));
                }
                let sc = self.visit_loc(m, scope, depth + 1);
                (
                    format!(
                        "#cuda_tile.di_loc<{} in {}>",
                        self.placeholder(fi),
                        self.placeholder(sc)
                    ),
                    vec![fi, sc],
                )
            }
            DebugAttr::CallSite { callee, caller } => {
                let a = self.visit_loc(m, callee, depth + 1);
                let b = self.visit_loc(m, caller, depth + 1);
                (
                    format!(
                        "loc(callsite({} at {}))",
                        self.placeholder(a),
                        self.placeholder(b)
                    ),
                    vec![a, b],
                )
            }
        };
        let depth_v = children
            .iter()
            .map(|&c| self.entries[c].depth + 1)
            .max()
            .unwrap_or(0);
        self.entries[i].def = def;
        self.entries[i].depth = depth_v;
        i
    }

    /// Assigns names and returns the alias definitions; the placeholders in
    /// the printed text are replaced by the caller through [`Self::resolve`].
    fn finish(&mut self) -> String {
        let mut order: Vec<usize> = (0..self.entries.len()).collect();
        order.sort_by(|&a, &b| {
            let (ea, eb) = (&self.entries[a], &self.entries[b]);
            ea.depth.cmp(&eb.depth).then(ea.base.cmp(eb.base))
        });
        let mut counts: HashMap<&'static str, usize> = HashMap::new();
        let mut names = vec![String::new(); self.entries.len()];
        for &i in &order {
            let base = self.entries[i].base;
            let c = counts.entry(base).or_insert(0);
            names[i] = if *c == 0 {
                format!("#{base}")
            } else {
                format!("#{base}{c}")
            };
            *c += 1;
        }
        let mut out = String::new();
        for &i in &order {
            let _ = writeln!(out, "{} = {}", names[i], self.entries[i].def);
        }
        self.names = names;
        out
    }
}

fn unreachable_unknown() -> (String, Vec<usize>) {
    ("loc(unknown)".into(), vec![])
}

/// Replaces `\0N\0` alias placeholders with alias names.
fn resolve(text: &str, names: &[String]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(p) = rest.find('\u{0}') {
        out.push_str(&rest[..p]);
        let after = &rest[p + 1..];
        match after.find('\u{0}') {
            Some(q) => {
                let idx: usize = after[..q].parse().unwrap_or(usize::MAX);
                out.push_str(names.get(idx).map(|s| s.as_str()).unwrap_or("#loc"));
                rest = &after[q + 1..];
            }
            None => {
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}
