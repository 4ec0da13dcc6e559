//! Debug locations (`-g`): trailing `loc(#locN)` references and the
//! location aliases printed after the module.
use super::*;

#[derive(Default)]
pub(super) struct Aliases {
    entries: Vec<AliasEntry>,
    by_key: HashMap<String, usize>,
    pub(super) names: Vec<String>,
}

pub(super) struct AliasEntry {
    base: &'static str,
    depth: usize,
    /// Definition text with `\u{0}N\u{0}` placeholders for other aliases.
    def: String,
}

impl Aliases {
    pub(super) fn placeholder(&self, idx: usize) -> String {
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

    pub(super) fn visit_op_loc(&mut self, m: &Module, debug: Option<DebugId>) -> usize {
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
    pub(super) fn finish(&mut self) -> String {
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

pub(super) fn unreachable_unknown() -> (String, Vec<usize>) {
    ("loc(unknown)".into(), vec![])
}

/// Replaces `\0N\0` alias placeholders with alias names.
pub(super) fn resolve(text: &str, names: &[String]) -> String {
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
