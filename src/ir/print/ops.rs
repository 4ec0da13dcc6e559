//! The text after an op's results: its mnemonic, operands, attributes,
//! regions and trailing types, op by op.
use super::*;

impl<'m> Printer<'m> {
    #[allow(clippy::too_many_lines)]
    pub(super) fn print_body(&mut self, id: OpId, level: usize) {
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
