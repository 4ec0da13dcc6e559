//! PTX text parser: turns the text into a [`Module`] of pre-decoded kernels.
//!
//! Registers are resolved to dense indices at parse time (with scoping for
//! nested `{ }` blocks), labels to instruction indices and symbols to their
//! state-space offsets, so that execution never looks at a string.

use crate::ir::*;
use std::collections::HashMap;

/// A parse error with its 1-based line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line of the PTX text.
    pub line: u32,
    /// What went wrong.
    pub msg: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PTX parse error at line {}: {}", self.line, self.msg)
    }
}

impl std::error::Error for ParseError {}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Int(u64),
    /// A float literal already converted to f64 (`0f`/`0d` or decimal with a dot).
    F32Bits(u32),
    F64Bits(u64),
    Str(String),
    Punct(char),
}

struct Lexer {
    toks: Vec<(Tok, u32)>,
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '$' || c == '%' || c == '.'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.'
}

fn lex(src: &str) -> Result<Lexer, ParseError> {
    let chars: Vec<char> = src.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    let mut line = 1u32;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '/' && i + 1 < chars.len() && chars[i + 1] == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && i + 1 < chars.len() && chars[i + 1] == '*' {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                if chars[i] == '\n' {
                    line += 1;
                }
                i += 1;
            }
            i += 2;
            continue;
        }
        if c == '"' {
            let mut s = String::new();
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    i += 1;
                    s.push(match chars[i] {
                        'n' => '\n',
                        't' => '\t',
                        o => o,
                    });
                } else {
                    s.push(chars[i]);
                }
                i += 1;
            }
            i += 1;
            toks.push((Tok::Str(s), line));
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            // 0f / 0d float bit patterns
            if c == '0' && i + 1 < chars.len() && (chars[i + 1] == 'f' || chars[i + 1] == 'F') {
                let hex: String = chars[i + 2..]
                    .iter()
                    .take_while(|c| c.is_ascii_hexdigit())
                    .collect();
                if hex.len() == 8 {
                    i += 2 + 8;
                    toks.push((Tok::F32Bits(u32::from_str_radix(&hex, 16).unwrap()), line));
                    continue;
                }
            }
            if c == '0' && i + 1 < chars.len() && (chars[i + 1] == 'd' || chars[i + 1] == 'D') {
                let hex: String = chars[i + 2..]
                    .iter()
                    .take_while(|c| c.is_ascii_hexdigit())
                    .collect();
                if hex.len() == 16 {
                    i += 2 + 16;
                    toks.push((Tok::F64Bits(u64::from_str_radix(&hex, 16).unwrap()), line));
                    continue;
                }
            }
            if c == '0' && i + 1 < chars.len() && (chars[i + 1] == 'x' || chars[i + 1] == 'X') {
                i += 2;
                let s = i;
                while i < chars.len() && chars[i].is_ascii_hexdigit() {
                    i += 1;
                }
                let hex: String = chars[s..i].iter().collect();
                if i < chars.len() && chars[i] == 'U' {
                    i += 1;
                }
                let v = u64::from_str_radix(&hex, 16).map_err(|e| ParseError {
                    line,
                    msg: format!("bad hex literal: {e}"),
                })?;
                toks.push((Tok::Int(v), line));
                continue;
            }
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            if i < chars.len()
                && chars[i] == '.'
                && i + 1 < chars.len()
                && chars[i + 1].is_ascii_digit()
            {
                i += 1;
                while i < chars.len()
                    && (chars[i].is_ascii_digit()
                        || chars[i] == 'e'
                        || chars[i] == 'E'
                        || ((chars[i] == '-' || chars[i] == '+')
                            && (chars[i - 1] == 'e' || chars[i - 1] == 'E')))
                {
                    i += 1;
                }
                let s: String = chars[start..i].iter().collect();
                let v: f64 = s.parse().map_err(|_| ParseError {
                    line,
                    msg: format!("bad float literal {s}"),
                })?;
                toks.push((Tok::F64Bits(v.to_bits()), line));
                continue;
            }
            let s: String = chars[start..i].iter().collect();
            if i < chars.len() && chars[i] == 'U' {
                i += 1;
            }
            let v = s.parse::<u64>().map_err(|_| ParseError {
                line,
                msg: format!("bad integer literal {s}"),
            })?;
            toks.push((Tok::Int(v), line));
            continue;
        }
        if is_ident_start(c) {
            let start = i;
            i += 1;
            loop {
                if i < chars.len() && is_ident_char(chars[i]) {
                    i += 1;
                } else if i + 1 < chars.len() && chars[i] == ':' && chars[i + 1] == ':' {
                    i += 2;
                } else {
                    break;
                }
            }
            toks.push((Tok::Ident(chars[start..i].iter().collect()), line));
            continue;
        }
        toks.push((Tok::Punct(c), line));
        i += 1;
    }
    Ok(Lexer { toks })
}

struct P<'a> {
    toks: &'a [(Tok, u32)],
    pos: usize,
}

impl<'a> P<'a> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }
    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|t| &t.0)
    }
    fn line(&self) -> u32 {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map(|t| t.1)
            .unwrap_or(0)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).map(|t| t.0.clone());
        self.pos += 1;
        t
    }
    fn err<T>(&self, msg: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError {
            line: self.line(),
            msg: msg.into(),
        })
    }
    fn is_punct(&self, c: char) -> bool {
        matches!(self.peek(), Some(Tok::Punct(x)) if *x == c)
    }
    fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect_punct(&mut self, c: char) -> Result<(), ParseError> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            self.err(format!("expected '{c}', found {:?}", self.peek()))
        }
    }
    fn ident(&mut self) -> Result<String, ParseError> {
        match self.next() {
            Some(Tok::Ident(s)) => Ok(s),
            t => {
                self.pos -= 1;
                self.err(format!("expected identifier, found {t:?}"))
            }
        }
    }
    fn int(&mut self) -> Result<u64, ParseError> {
        let neg = self.eat_punct('-');
        match self.next() {
            Some(Tok::Int(v)) => Ok(if neg { v.wrapping_neg() } else { v }),
            t => {
                self.pos -= 1;
                self.err(format!("expected integer, found {t:?}"))
            }
        }
    }
    fn skip_to_semicolon(&mut self) {
        while let Some(t) = self.next() {
            if t == Tok::Punct(';') {
                break;
            }
        }
    }
}

/// Size in bytes of a declaration type such as `.b32`, `.f16x2`.
fn type_size(t: &str) -> Option<u32> {
    Some(match t {
        ".pred" => 1,
        ".b8" | ".u8" | ".s8" => 1,
        ".b16" | ".u16" | ".s16" | ".f16" | ".bf16" => 2,
        ".b32" | ".u32" | ".s32" | ".f32" | ".f16x2" | ".bf16x2" => 4,
        ".b64" | ".u64" | ".s64" | ".f64" => 8,
        ".b128" => 16,
        _ => return None,
    })
}

#[derive(Clone, Debug)]
enum SymDef {
    Reg(u32),
    Kparam(u32),
    Cparam(u32),
    Shared(u32),
    Local(u32),
    Global(u32),
    Func(String),
}

struct KernelBuilder {
    nregs: u32,
    reg_names: Vec<String>,
    scopes: Vec<HashMap<String, SymDef>>,
    params: Vec<ParamDecl>,
    param_size: u32,
    shared_size: u32,
    shared_align: u32,
    local_size: u32,
    cparam_size: u32,
    insts: Vec<Inst>,
    texts: Vec<(u32, String)>,
    labels: HashMap<String, u32>,
    pending_labels: Vec<(usize, usize, String)>,
    reqntid: Option<(u32, u32, u32)>,
    maxntid: Option<(u32, u32, u32)>,
    reqnctapercluster: Option<(u32, u32, u32)>,
    blocks_are_clusters: bool,
    dyn_shared: Vec<u32>,
}

impl KernelBuilder {
    fn lookup(&self, name: &str, globals: &HashMap<String, SymDef>) -> Option<SymDef> {
        for s in self.scopes.iter().rev() {
            if let Some(d) = s.get(name) {
                return Some(d.clone());
            }
        }
        globals.get(name).cloned()
    }
    fn declare(&mut self, name: String, d: SymDef) {
        self.scopes.last_mut().unwrap().insert(name, d);
    }
}

fn align_up(v: u32, a: u32) -> u32 {
    v.div_ceil(a.max(1)) * a.max(1)
}

/// A module-level `.func` definition found by the pre-scan.
struct FuncDef {
    name: String,
    rets: Vec<(String, u32, u32)>,
    params: Vec<(String, u32, u32)>,
    body_pos: usize,
}

/// Parses `( .param .type name[N], ... )`: (name, size, align) each.
fn parse_param_list(p: &mut P) -> Result<Vec<(String, u32, u32)>, ParseError> {
    let mut out = Vec::new();
    p.expect_punct('(')?;
    while !p.eat_punct(')') {
        let d = p.ident()?;
        if d != ".param" && d != ".reg" {
            return p.err(format!(
                "expected .param in a function signature, found {d}"
            ));
        }
        let (mut align, mut elt) = (0u32, 0u32);
        let name;
        loop {
            let s = p.ident()?;
            if s == ".align" {
                align = p.int()? as u32;
            } else if let Some(sz) = type_size(&s) {
                elt = sz;
            } else if s.starts_with('.') {
            } else {
                name = s;
                break;
            }
        }
        let mut count = 1;
        if p.eat_punct('[') {
            count = p.int()? as u32;
            p.expect_punct(']')?;
        }
        out.push((name, elt * count, align.max(elt).max(1)));
        p.eat_punct(',');
    }
    Ok(out)
}

/// Finds every top-level `.func` with a body.
fn prescan_funcs(toks: &[(Tok, u32)]) -> Result<Vec<FuncDef>, ParseError> {
    let mut p = P { toks, pos: 0 };
    let mut depth = 0i32;
    let mut out = Vec::new();
    while let Some(t) = p.next() {
        match t {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => depth -= 1,
            Tok::Ident(s) if s == ".func" && depth == 0 => {
                let rets = if p.is_punct('(') {
                    parse_param_list(&mut p)?
                } else {
                    Vec::new()
                };
                let name = p.ident()?;
                let params = if p.is_punct('(') {
                    parse_param_list(&mut p)?
                } else {
                    Vec::new()
                };
                while let Some(Tok::Ident(d)) = p.peek() {
                    if d.starts_with('.') {
                        p.next();
                        while matches!(p.peek(), Some(Tok::Int(_)) | Some(Tok::Punct(','))) {
                            p.next();
                        }
                    } else {
                        break;
                    }
                }
                if p.is_punct('{') {
                    out.push(FuncDef {
                        name,
                        rets,
                        params,
                        body_pos: p.pos,
                    });
                    skip_braces(&mut p)?;
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Parses PTX text into a module.
pub fn parse_module(src: &str) -> Result<Module, ParseError> {
    let lx = lex(src)?;
    let funcs = prescan_funcs(&lx.toks)?;
    let mut p = P {
        toks: &lx.toks,
        pos: 0,
    };
    let mut module = Module {
        kernels: Vec::new(),
        globals: Vec::new(),
        shared_globals: Vec::new(),
    };
    let mut gsyms: HashMap<String, SymDef> = HashMap::new();
    for f in &funcs {
        gsyms.insert(f.name.clone(), SymDef::Func(f.name.clone()));
    }
    let mut module_shared_size = 0u32;
    while let Some(t) = p.peek().cloned() {
        match t {
            Tok::Ident(s) => match s.as_str() {
                ".version" | ".target" | ".address_size" | ".file" | ".loc" => {
                    p.next();
                    // consume until next directive token on a new line: simply consume idents/numbers/commas
                    let l = p.toks[p.pos - 1].1;
                    while p.pos < p.toks.len() && p.toks[p.pos].1 == l {
                        p.pos += 1;
                    }
                }
                ".section" => {
                    // debug sections: `.section .debug_x { ... }`
                    p.next();
                    while p.pos < p.toks.len() && !p.is_punct('{') {
                        p.pos += 1;
                    }
                    skip_braces(&mut p)?;
                }
                ".pragma" => {
                    p.skip_to_semicolon();
                }
                ".visible" | ".extern" | ".weak" | ".common" => {
                    p.next();
                }
                ".global" | ".const" | ".shared" => {
                    p.next();
                    let space = s.clone();
                    let (name, size, align, init) = parse_var_decl(&mut p)?;
                    if space == ".shared" && size == 0 {
                        // `.extern .shared .b8 name[]`: dynamic shared memory
                        gsyms.insert(name, SymDef::Shared(DYN_SHARED_MARK));
                    } else if space == ".shared" {
                        let off = align_up(module_shared_size, align);
                        module_shared_size = off + size;
                        module.shared_globals.push((name.clone(), off, size));
                        gsyms.insert(name, SymDef::Shared(off));
                    } else {
                        let idx = module.globals.len() as u32;
                        module.globals.push(GlobalVar {
                            name: name.clone(),
                            size,
                            align,
                            init,
                        });
                        gsyms.insert(name, SymDef::Global(idx));
                    }
                }
                ".func" => {
                    p.next();
                    // declaration of an external function (vprintf) or a body we do not support
                    let mut name = None;
                    if p.is_punct('(') {
                        skip_parens(&mut p)?;
                    }
                    if let Some(Tok::Ident(n)) = p.peek().cloned() {
                        name = Some(n);
                        p.next();
                    }
                    if p.is_punct('(') {
                        skip_parens(&mut p)?;
                    }
                    while let Some(Tok::Ident(d)) = p.peek() {
                        if d.starts_with('.') {
                            p.next();
                            while matches!(p.peek(), Some(Tok::Int(_)) | Some(Tok::Punct(','))) {
                                p.next();
                            }
                        } else {
                            break;
                        }
                    }
                    if p.eat_punct(';') {
                        if let Some(n) = name {
                            gsyms.insert(n.clone(), SymDef::Func(n));
                        }
                    } else if p.is_punct('{') {
                        let n = name.clone().unwrap_or_default();
                        // Keep the function name known so calls to it report "unsupported".
                        gsyms.insert(n.clone(), SymDef::Func(n));
                        skip_braces(&mut p)?;
                    }
                }
                ".entry" => {
                    p.next();
                    let k = parse_entry(&mut p, &gsyms, module_shared_size, &funcs)?;
                    module.kernels.push(k);
                }
                _ => return p.err(format!("unexpected top-level token {s}")),
            },
            _ => return p.err(format!("unexpected top-level token {t:?}")),
        }
    }
    Ok(module)
}

fn skip_parens(p: &mut P) -> Result<(), ParseError> {
    p.expect_punct('(')?;
    let mut depth = 1;
    while depth > 0 {
        match p.next() {
            Some(Tok::Punct('(')) => depth += 1,
            Some(Tok::Punct(')')) => depth -= 1,
            None => return p.err("unbalanced parentheses"),
            _ => {}
        }
    }
    Ok(())
}

fn skip_braces(p: &mut P) -> Result<(), ParseError> {
    p.expect_punct('{')?;
    let mut depth = 1;
    while depth > 0 {
        match p.next() {
            Some(Tok::Punct('{')) => depth += 1,
            Some(Tok::Punct('}')) => depth -= 1,
            None => return p.err("unbalanced braces"),
            _ => {}
        }
    }
    Ok(())
}

/// Parses `[.align N] .type name[[N]] [= {..}] ;` after the state space.
fn parse_var_decl(p: &mut P) -> Result<(String, u32, u32, Vec<u8>), ParseError> {
    let mut align = 0u32;
    let mut elt = 1u32;
    loop {
        let s = p.ident()?;
        if s == ".align" {
            align = p.int()? as u32;
        } else if let Some(sz) = type_size(&s) {
            elt = sz;
        } else if s.starts_with('.') {
            // .ptr, .v2 etc: ignore
        } else {
            let name = s;
            let mut count = 1u32;
            let mut unsized_array = false;
            if p.eat_punct('[') {
                if p.eat_punct(']') {
                    unsized_array = true;
                    count = 0;
                } else {
                    count = p.int()? as u32;
                    p.expect_punct(']')?;
                }
            }
            let mut init = Vec::new();
            if p.eat_punct('=') {
                let braced = p.eat_punct('{');
                loop {
                    if braced && p.eat_punct('}') {
                        break;
                    }
                    let v = match p.next() {
                        Some(Tok::Int(v)) => v,
                        Some(Tok::Punct('-')) => match p.next() {
                            Some(Tok::Int(v)) => v.wrapping_neg(),
                            _ => return p.err("bad initializer"),
                        },
                        Some(Tok::F32Bits(b)) => b as u64,
                        Some(Tok::F64Bits(b)) => b,
                        t => return p.err(format!("unsupported initializer token {t:?}")),
                    };
                    init.extend_from_slice(&v.to_le_bytes()[..elt as usize]);
                    if !braced {
                        break;
                    }
                    p.eat_punct(',');
                }
            }
            p.expect_punct(';')?;
            let _ = unsized_array;
            if align == 0 {
                align = elt;
            }
            return Ok((name, count * elt, align, init));
        }
    }
}

fn parse_entry(
    p: &mut P,
    gsyms: &HashMap<String, SymDef>,
    module_shared: u32,
    funcs: &[FuncDef],
) -> Result<Kernel, ParseError> {
    let name = p.ident()?;
    let mut kb = KernelBuilder {
        nregs: 0,
        reg_names: Vec::new(),
        scopes: vec![HashMap::new()],
        params: Vec::new(),
        param_size: 0,
        shared_size: module_shared,
        shared_align: 16,
        local_size: 0,
        cparam_size: 0,
        insts: Vec::new(),
        texts: Vec::new(),
        labels: HashMap::new(),
        pending_labels: Vec::new(),
        reqntid: None,
        maxntid: None,
        reqnctapercluster: None,
        blocks_are_clusters: false,
        dyn_shared: Vec::new(),
    };
    // parameters
    p.expect_punct('(')?;
    while !p.eat_punct(')') {
        let mut d = p.ident()?;
        if d == ".hidden" {
            d = p.ident()?;
        }
        if d != ".param" {
            return p.err(format!("expected .param, found {d}"));
        }
        let mut align = 0u32;
        let mut elt = 0u32;
        let mut after_ptr = false;
        let pname;
        loop {
            let s = p.ident()?;
            if s == ".ptr" || (s.starts_with(".ptr.") && !s.ends_with(".align")) {
                after_ptr = true;
            } else if s.starts_with(".ptr.") && s.ends_with(".align") {
                // `.ptr.global.align 16` written without spaces: pointee alignment
                after_ptr = true;
                p.int()?;
            } else if s == ".align" {
                // `.ptr .space .align N` is the pointee's alignment, not the parameter's
                let a = p.int()? as u32;
                if !after_ptr {
                    align = a;
                }
            } else if let Some(sz) = type_size(&s) {
                elt = sz;
            } else if s.starts_with('.') {
            } else {
                pname = s;
                break;
            }
        }
        let mut count = 1;
        if p.eat_punct('[') {
            count = p.int()? as u32;
            p.expect_punct(']')?;
        }
        let size = elt * count;
        align = align.max(elt.max(1));
        let off = align_up(kb.param_size, align);
        kb.param_size = off + size;
        kb.params.push(ParamDecl {
            name: pname.clone(),
            offset: off,
            size,
            align,
        });
        kb.declare(pname, SymDef::Kparam(off));
        p.eat_punct(',');
    }
    // performance directives
    while let Some(Tok::Ident(d)) = p.peek().cloned() {
        if !d.starts_with('.') {
            break;
        }
        p.next();
        let mut nums = Vec::new();
        while let Some(Tok::Int(_)) = p.peek() {
            nums.push(p.int()? as u32);
            p.eat_punct(',');
        }
        let triple = |v: &Vec<u32>| {
            (
                v.first().copied().unwrap_or(1),
                v.get(1).copied().unwrap_or(1),
                v.get(2).copied().unwrap_or(1),
            )
        };
        match d.as_str() {
            ".reqntid" => kb.reqntid = Some(triple(&nums)),
            ".maxntid" => kb.maxntid = Some(triple(&nums)),
            ".reqnctapercluster" => kb.reqnctapercluster = Some(triple(&nums)),
            ".blocksareclusters" => kb.blocks_are_clusters = true,
            _ => {}
        }
    }
    p.expect_punct('{')?;
    kb.scopes.push(HashMap::new());
    parse_body(p, &mut kb, gsyms)?;
    // resolve labels
    for (ii, oi, l) in std::mem::take(&mut kb.pending_labels) {
        let tgt = *kb.labels.get(&l).ok_or(ParseError {
            line: kb.texts[ii].0,
            msg: format!("unknown label {l}"),
        })?;
        kb.insts[ii].ops[oi] = Opnd::Label(tgt);
    }
    let _ = &kb.dyn_shared;
    let _ = kb.shared_align;
    // Append an implicit exit so falling off the end terminates.
    kb.insts.push(Inst::simple(OpK::Exit));
    kb.texts.push((0, "<end of kernel>".into()));
    // Compile every module function into this kernel's instruction stream.
    let after_kernel = p.pos;
    let mut finfo = HashMap::new();
    for f in funcs {
        let pc = kb.insts.len() as u32;
        let mut formals = HashMap::new();
        let mut slots = |list: &[(String, u32, u32)], kb: &mut KernelBuilder| -> Vec<(u32, u32)> {
            list.iter()
                .map(|(name, size, align)| {
                    let off = align_up(kb.cparam_size, (*align).max(8));
                    kb.cparam_size = off + (*size).max(8);
                    formals.insert(name.clone(), SymDef::Cparam(off));
                    (off, *size)
                })
                .collect()
        };
        let rets = slots(&f.rets, &mut kb);
        let params = slots(&f.params, &mut kb);
        kb.scopes = vec![formals, HashMap::new()];
        kb.labels = HashMap::new();
        p.pos = f.body_pos;
        p.expect_punct('{')?;
        parse_body(p, &mut kb, gsyms)?;
        kb.insts.push(Inst::simple(OpK::Ret));
        kb.texts.push((0, format!("<end of function {}>", f.name)));
        for (ii, oi, l) in std::mem::take(&mut kb.pending_labels) {
            let tgt = *kb.labels.get(&l).ok_or(ParseError {
                line: kb.texts[ii].0,
                msg: format!("unknown label {l} in function {}", f.name),
            })?;
            kb.insts[ii].ops[oi] = Opnd::Label(tgt);
        }
        finfo.insert(f.name.clone(), FuncInfo { pc, params, rets });
    }
    p.pos = after_kernel;
    let dyn_off = align_up(kb.shared_size, 128);
    for ii in 0..kb.insts.len() {
        for o in kb.insts[ii].ops.iter_mut() {
            fix_dyn(o, dyn_off);
        }
    }
    let insts = kb.insts;
    Ok(Kernel {
        name,
        params: kb.params,
        param_size: kb.param_size,
        nregs: kb.nregs,
        reg_names: kb.reg_names,
        static_shared: dyn_off,
        local_size: kb.local_size,
        cparam_size: kb.cparam_size,
        insts,
        texts: kb.texts,
        reqntid: kb.reqntid,
        maxntid: kb.maxntid,
        reqnctapercluster: kb.reqnctapercluster,
        blocks_are_clusters: kb.blocks_are_clusters,
        funcs: finfo,
    })
}

const DYN_SHARED_MARK: u32 = u32::MAX;

fn fix_dyn(o: &mut Opnd, dyn_off: u32) {
    match o {
        Opnd::Mem {
            sym: SymAddr::Shared(x),
            ..
        }
        | Opnd::Addr(SymAddr::Shared(x))
            if *x == DYN_SHARED_MARK =>
        {
            *x = dyn_off
        }
        Opnd::Vec(v) => v.iter_mut().for_each(|o| fix_dyn(o, dyn_off)),
        _ => {}
    }
}

fn parse_body(
    p: &mut P,
    kb: &mut KernelBuilder,
    gsyms: &HashMap<String, SymDef>,
) -> Result<(), ParseError> {
    loop {
        let line = p.line();
        let t = match p.peek().cloned() {
            Some(t) => t,
            None => return p.err("unexpected end of input in kernel body"),
        };
        match t {
            Tok::Punct('}') => {
                p.next();
                kb.scopes.pop();
                if kb.scopes.len() <= 1 {
                    return Ok(());
                }
            }
            Tok::Punct('{') => {
                p.next();
                kb.scopes.push(HashMap::new());
            }
            Tok::Ident(s) if s == ".reg" => {
                p.next();
                let mut ty = String::new();
                loop {
                    let s = p.ident()?;
                    if s.starts_with('.') {
                        ty = s;
                        continue;
                    }
                    let _ = &ty;
                    // name or name<N>
                    if p.eat_punct('<') {
                        let n = p.int()? as u32;
                        p.expect_punct('>')?;
                        for i in 0..n {
                            let r = kb.nregs;
                            kb.nregs += 1;
                            kb.reg_names.push(format!("{s}{i}"));
                            kb.declare(format!("{s}{i}"), SymDef::Reg(r));
                        }
                    } else {
                        let r = kb.nregs;
                        kb.nregs += 1;
                        kb.reg_names.push(s.to_string());
                        kb.declare(s, SymDef::Reg(r));
                    }
                    if p.eat_punct(',') {
                        continue;
                    }
                    p.expect_punct(';')?;
                    break;
                }
            }
            Tok::Ident(s)
                if s == ".local"
                    || s == ".shared"
                    || s == ".param"
                    || s == ".global"
                    || s == ".const" =>
            {
                p.next();
                let (name, size, align, _init) = parse_var_decl(p)?;
                match s.as_str() {
                    ".local" => {
                        let off = align_up(kb.local_size, align);
                        kb.local_size = off + size;
                        kb.declare(name, SymDef::Local(off));
                    }
                    ".shared" => {
                        if size == 0 {
                            kb.declare(name, SymDef::Shared(DYN_SHARED_MARK));
                        } else {
                            let off = align_up(kb.shared_size, align);
                            kb.shared_size = off + size;
                            kb.shared_align = kb.shared_align.max(align);
                            kb.declare(name, SymDef::Shared(off));
                        }
                    }
                    ".param" => {
                        let off = align_up(kb.cparam_size, align.max(8));
                        kb.cparam_size = off + size.max(8);
                        kb.declare(name, SymDef::Cparam(off));
                    }
                    _ => return p.err("function-scope .global/.const are not supported"),
                }
            }
            Tok::Ident(s) if s == ".extern" => {
                // .extern .shared .align 16 .b8 name[];
                p.next();
                let sp = p.ident()?;
                let (name, _size, _align, _) = parse_var_decl(p)?;
                if sp != ".shared" {
                    return p.err("only .extern .shared is supported inside a kernel");
                }
                kb.declare(name, SymDef::Shared(DYN_SHARED_MARK));
            }
            Tok::Ident(s) if s == ".loc" || s == ".file" => {
                // line-oriented debug directives without a semicolon
                let l = p.toks[p.pos].1;
                while p.pos < p.toks.len() && p.toks[p.pos].1 == l {
                    p.pos += 1;
                }
            }
            Tok::Ident(s) if s.starts_with('.') => {
                // other directives inside the body (.pragma ...;): skip
                p.skip_to_semicolon();
            }
            Tok::Ident(s) if matches!(p.peek_at(1), Some(Tok::Punct(':'))) => {
                p.next();
                p.next();
                kb.labels.insert(s, kb.insts.len() as u32);
            }
            _ => {
                let start = p.pos;
                let inst = parse_inst(p, kb, gsyms)?;
                let text = render(&p.toks[start..p.pos]);
                kb.insts.push(inst);
                kb.texts.push((line, text));
            }
        }
    }
}

fn render(toks: &[(Tok, u32)]) -> String {
    let mut s = String::new();
    for (t, _) in toks {
        let piece = match t {
            Tok::Ident(x) => x.clone(),
            Tok::Int(v) => v.to_string(),
            Tok::F32Bits(b) => format!("0f{b:08X}"),
            Tok::F64Bits(b) => format!("0d{b:016X}"),
            Tok::Str(x) => format!("{x:?}"),
            Tok::Punct(c) => c.to_string(),
        };
        if !s.is_empty()
            && !matches!(t, Tok::Punct(',' | ';' | ']' | '}' | ')' | '|' | '+'))
            && !s.ends_with(['[', '{', '(', '|', '+', '-', '!', '@'])
        {
            s.push(' ');
        }
        s.push_str(&piece);
    }
    s
}

fn parse_inst(
    p: &mut P,
    kb: &mut KernelBuilder,
    gsyms: &HashMap<String, SymDef>,
) -> Result<Inst, ParseError> {
    let line0 = p.line();
    let mut guard = None;
    if p.eat_punct('@') {
        let neg = p.eat_punct('!');
        let r = p.ident()?;
        match kb.lookup(&r, gsyms) {
            Some(SymDef::Reg(i)) => guard = Some((i, neg)),
            _ => return p.err(format!("unknown predicate {r}")),
        }
    }
    let opcode = p.ident()?;
    let mut ops = Vec::new();
    let mut label_ops = Vec::new();
    if !p.is_punct(';') {
        loop {
            let o = parse_operand(p, kb, gsyms, &mut label_ops, ops.len())?;
            ops.push(o);
            if p.eat_punct(',') {
                continue;
            }
            break;
        }
    }
    p.expect_punct(';')?;
    let ii = kb.insts.len();
    for (oi, l) in label_ops {
        kb.pending_labels.push((ii, oi, l));
    }
    let mut inst = crate::decode::decode(&opcode, ops).map_err(|m| ParseError {
        line: line0,
        msg: m,
    })?;
    inst.guard = guard;
    Ok(inst)
}

fn sym_to_addr(d: &SymDef) -> Option<SymAddr> {
    Some(match d {
        SymDef::Kparam(o) => SymAddr::Kparam(*o),
        SymDef::Cparam(o) => SymAddr::Cparam(*o),
        SymDef::Shared(o) => SymAddr::Shared(*o),
        SymDef::Local(o) => SymAddr::Local(*o),
        SymDef::Global(i) => SymAddr::Global(*i),
        _ => return None,
    })
}

fn parse_operand(
    p: &mut P,
    kb: &mut KernelBuilder,
    gsyms: &HashMap<String, SymDef>,
    labels: &mut Vec<(usize, String)>,
    idx: usize,
) -> Result<Opnd, ParseError> {
    let t = p.next();
    match t {
        Some(Tok::Punct('[')) => {
            let mut base = None;
            let mut sym = SymAddr::None;
            let mut off: i64 = 0;
            let mut extra = None;
            loop {
                if p.eat_punct(']') {
                    break;
                }
                if p.eat_punct('+') {
                    continue;
                }
                if p.is_punct('-') || matches!(p.peek(), Some(Tok::Int(_))) {
                    off = off.wrapping_add(p.int()? as i64);
                    continue;
                }
                if p.eat_punct(',') {
                    let mut lab = Vec::new();
                    let v = parse_operand(p, kb, gsyms, &mut lab, 0)?;
                    extra = Some(Box::new(v));
                    continue;
                }
                let name = p.ident()?;
                match kb.lookup(&name, gsyms) {
                    Some(SymDef::Reg(r)) => base = Some(r),
                    Some(d) => match sym_to_addr(&d) {
                        Some(a) => sym = a,
                        None => return p.err(format!("bad address symbol {name}")),
                    },
                    None => return p.err(format!("unknown symbol {name} in address")),
                }
            }
            Ok(Opnd::Mem {
                base,
                sym,
                off,
                extra,
            })
        }
        Some(Tok::Punct('{')) => {
            let mut v = Vec::new();
            loop {
                if p.eat_punct('}') {
                    break;
                }
                let mut lab = Vec::new();
                v.push(parse_operand(p, kb, gsyms, &mut lab, 0)?);
                p.eat_punct(',');
            }
            Ok(Opnd::Vec(v))
        }
        Some(Tok::Punct('(')) => {
            // call argument list
            let mut v = Vec::new();
            loop {
                if p.eat_punct(')') {
                    break;
                }
                let mut lab = Vec::new();
                v.push(parse_operand(p, kb, gsyms, &mut lab, 0)?);
                p.eat_punct(',');
            }
            Ok(Opnd::Vec(v))
        }
        Some(Tok::Punct('-')) => match p.next() {
            Some(Tok::Int(v)) => Ok(Opnd::Imm(v.wrapping_neg())),
            Some(Tok::F64Bits(b)) => Ok(Opnd::ImmF((-f64::from_bits(b)).to_bits())),
            t => p.err(format!("bad operand after '-': {t:?}")),
        },
        Some(Tok::Punct('!')) => {
            let name = p.ident()?;
            match kb.lookup(&name, gsyms) {
                Some(SymDef::Reg(r)) => Ok(Opnd::NotReg(r)),
                _ => p.err(format!("unknown predicate {name}")),
            }
        }
        Some(Tok::Int(v)) => Ok(Opnd::Imm(v)),
        Some(Tok::F32Bits(b)) => Ok(Opnd::ImmF32(b)),
        Some(Tok::F64Bits(b)) => Ok(Opnd::ImmF(b)),
        Some(Tok::Ident(name)) => {
            let first = if let Some(sr) = Sreg::parse(&name) {
                Opnd::Sreg(sr)
            } else if name == "_" {
                Opnd::Sink
            } else {
                match kb.lookup(&name, gsyms) {
                    Some(SymDef::Reg(r)) => Opnd::Reg(r),
                    Some(SymDef::Func(f)) => Opnd::Func(f),
                    Some(d) => Opnd::Addr(sym_to_addr(&d).unwrap()),
                    None => {
                        labels.push((idx, name.clone()));
                        Opnd::Label(u32::MAX)
                    }
                }
            };
            if p.eat_punct('|') {
                let second = p.ident()?;
                match (first, kb.lookup(&second, gsyms)) {
                    (Opnd::Reg(a), Some(SymDef::Reg(b))) => Ok(Opnd::Pair(a, b)),
                    (Opnd::Sink, Some(SymDef::Reg(b))) => Ok(Opnd::Pair(u32::MAX, b)),
                    _ => p.err("bad register pair"),
                }
            } else {
                Ok(first)
            }
        }
        Some(Tok::Str(s)) => p.err(format!("unexpected string operand {s:?}")),
        t => p.err(format!("unexpected operand token {t:?}")),
    }
}
