//! The lowering's layering, kept by the suite: the files under `src/lower`
//! and the modules each names (its `use` items and every `crate::`,
//! `super::` and `self::` path outside comments, a path counting for the
//! longest prefix that is a module file).
//!
//! - The stages import only earlier ones: `analysis` nothing of `plan`,
//!   `emit` or `simt`; `plan` nothing of `emit` or `simt`; `simt` (the
//!   per-thread IR and its optimizer) nothing of the three; `emit` any.
//! - Each engine's plan (`plan/engines/<engine>.rs`) is its own: the
//!   engines' files import none of one another.
//! - So is each engine's emission (`emit/ops/mma_sync*.rs`,
//!   `emit/ops/wgmma*.rs`, `emit/ops/mma_fma*.rs`): no family imports
//!   another's files; what they share lives in shared files (the copies
//!   under `emit/copies/`, `emit/wgmma_isa.rs`, `emit/ops/mma_operands.rs`),
//!   and the copies and the instruction file import no engine's.
//! - No circle of imports joins more than six files, nor files of two
//!   stages.
//! - No file of the lowering is over 800 lines, no function over 150.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path (`["lower", "plan", "engines"]`) and its file.
type Modules = BTreeMap<Vec<String>, PathBuf>;

/// The crate's `.rs` files as modules (`a/b.rs` and `a/b/mod.rs` are
/// `a::b`; `lib.rs` and `main.rs` the root; `bin/` left out).
fn modules(src: &Path) -> Modules {
    let mut out = Modules::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let rel = path
                .strip_prefix(src)
                .expect("under src")
                .with_extension("");
            let mut segs: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if segs.first().map(String::as_str) == Some("bin") {
                continue;
            }
            if segs.last().map(String::as_str) == Some("mod") {
                segs.pop();
            }
            if segs == ["lib"] || segs == ["main"] {
                segs.clear();
            }
            out.insert(segs, path);
        }
    }
    out
}

/// `text` without `//` and `/* */` comments.
fn strip_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            i = end;
        } else if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let mut depth = 0;
    let mut close = tree.len();
    for (k, c) in tree.char_indices().skip(open) {
        depth += i32::from(c == '{') - i32::from(c == '}');
        if depth == 0 {
            close = k;
            break;
        }
    }
    let (head, inner, tail) = (
        &tree[..open],
        &tree[open + 1..close],
        &tree[(close + 1).min(tree.len())..],
    );
    let mut parts = Vec::new();
    let (mut depth, mut cur) = (0, String::new());
    for c in inner.chars() {
        if c == ',' && depth == 0 {
            parts.push(std::mem::take(&mut cur));
            continue;
        }
        depth += i32::from(c == '{') - i32::from(c == '}');
        cur.push(c);
    }
    parts.push(cur);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(&format!("{head}{p}{tail}")))
        .collect()
}

/// Every path the code names: `use` items expanded, and the
/// `crate::`/`super::`/`self::` paths anywhere.
fn paths(code: &str) -> Vec<String> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let boundary = i == 0 || !is_ident(b[i - 1]);
        if boundary
            && b[i..].starts_with(b"use")
            && b.get(i + 3).is_some_and(u8::is_ascii_whitespace)
        {
            if let Some(end) = code[i..].find(';') {
                out.extend(expand(&code[i + 3..i + end]));
                i += end;
                continue;
            }
        }
        let starts = ["crate::", "super::", "self::"]
            .iter()
            .any(|p| b[i..].starts_with(p.as_bytes()));
        if boundary && starts {
            let mut j = i;
            loop {
                while j < b.len() && is_ident(b[j]) {
                    j += 1;
                }
                if b[j..].starts_with(b"::") && b.get(j + 2).is_some_and(|&c| is_ident(c)) {
                    j += 2;
                } else {
                    break;
                }
            }
            out.push(code[i..j].to_string());
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

/// The module file a path in module `here` goes through: the longest
/// prefix of it that is a module.
fn resolve(path: &str, here: &[String], mods: &Modules) -> Option<Vec<String>> {
    let path = path.split(" as ").next().unwrap_or(path);
    let path = path.strip_suffix(" as").unwrap_or(path);
    let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut full: Vec<String> = Vec::new();
    let mut rest = &segs[..];
    match segs.first().copied() {
        Some("crate") => rest = &segs[1..],
        Some("self") | Some("super") => {
            full = here.to_vec();
            while let Some(&s) = rest.first() {
                match s {
                    "super" => {
                        full.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        Some(first) => {
            // A child module named directly in its parent.
            let mut child = here.to_vec();
            child.push(first.to_string());
            if !mods.contains_key(&child) {
                return None;
            }
            full = here.to_vec();
        }
        None => return None,
    }
    full.extend(rest.iter().filter(|s| **s != "*").map(|s| s.to_string()));
    (0..=full.len())
        .rev()
        .map(|n| full[..n].to_vec())
        .find(|m| mods.contains_key(m))
}

/// The import graph among the files under `src/lower`, by module path.
fn graph() -> (Modules, BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mods = modules(&src);
    let mut edges = BTreeMap::new();
    for (here, file) in &mods {
        if here.first().map(String::as_str) != Some("lower") {
            continue;
        }
        let code = strip_comments(&std::fs::read_to_string(file).expect("read source"));
        let targets: BTreeSet<Vec<String>> = paths(&code)
            .iter()
            .filter_map(|p| resolve(p, here, &mods))
            .filter(|t| t != here && t.first().map(String::as_str) == Some("lower"))
            .collect();
        edges.insert(here.clone(), targets);
    }
    (mods, edges)
}

/// The stage of a module of the lowering, if it sits in one.
fn stage(m: &[String]) -> Option<&str> {
    match m.get(1).map(String::as_str) {
        Some(s @ ("analysis" | "plan" | "emit" | "simt")) => Some(s),
        _ => None,
    }
}

fn name(m: &[String]) -> String {
    m.join("::")
}

#[test]
fn the_import_reader_resolves_paths_as_the_compiler_does() {
    let mods: Modules = [
        vec!["lower".to_string()],
        vec!["lower".into(), "plan".into()],
        vec!["lower".into(), "plan".into(), "engines".into()],
        vec!["lower".into(), "emit".into()],
    ]
    .into_iter()
    .map(|m| (m, PathBuf::new()))
    .collect();
    let here = vec!["lower".to_string(), "emit".into()];
    let got = |p: &str| resolve(p, &here, &mods).map(|m| name(&m));
    assert_eq!(
        got("crate::lower::plan::engines::Engine").as_deref(),
        Some("lower::plan::engines")
    );
    assert_eq!(got("super::plan::Plan").as_deref(), Some("lower::plan"));
    assert_eq!(got("self::Thing").as_deref(), Some("lower::emit"));
    assert_eq!(got("crate::ptx::Inst"), None);
    assert_eq!(
        expand("crate::a::{b, c::{d, e}}"),
        ["crate::a::b", "crate::a::c::d", "crate::a::c::e"]
    );
    assert_eq!(
        paths(&strip_comments(
            "use super::x; // crate::y\nlet a = crate::z::w(1);"
        )),
        ["super::x", "crate::z::w"]
    );
}

#[test]
fn the_graph_sees_the_lowering() {
    let (_, edges) = graph();
    let module = |s: &str| s.split("::").map(str::to_string).collect::<Vec<_>>();
    let has = |a: &str, b: &str| {
        edges
            .get(&module(a))
            .is_some_and(|t| t.contains(&module(b)))
    };
    assert!(edges.len() > 80, "{} files", edges.len());
    assert!(has("lower::emit::entry", "lower::plan"));
    assert!(has("lower::plan", "lower::plan::engines"));
    assert!(has("lower::emit::ops::mma", "lower::plan::engines"));
    assert!(has(
        "lower::plan::engines::mma_sync",
        "lower::analysis::chains"
    ));
    assert!(has("lower::emit::ops::wgmma", "lower::emit::wgmma_isa"));
    assert!(has(
        "lower::emit::ops::mma_sync_wgmma",
        "lower::emit::wgmma_isa"
    ));
    assert!(has(
        "lower::emit::ops::wgmma_pipeline",
        "lower::emit::copies::ring"
    ));
    assert!(has(
        "lower::emit::ops::mma_sync",
        "lower::emit::ops::mma_sync_frags"
    ));
}

#[test]
fn stages_import_only_earlier_stages() {
    let (_, edges) = graph();
    let allowed = |from: &str, to: &str| match from {
        "analysis" => to == "analysis",
        "plan" => matches!(to, "analysis" | "plan"),
        "simt" => to == "simt",
        _ => true,
    };
    let mut wrong = Vec::new();
    for (from, targets) in &edges {
        let Some(s) = stage(from) else { continue };
        for to in targets {
            match stage(to) {
                Some(t) if !allowed(s, t) => wrong.push(format!("{} -> {}", name(from), name(to))),
                // The lowering's driver (lower/mod.rs) runs the stages;
                // no stage calls back into it.
                None if to.len() == 1 => wrong.push(format!("{} -> {}", name(from), name(to))),
                _ => {}
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the stages:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn each_engine_plan_is_its_own() {
    let (_, edges) = graph();
    let engine = |m: &[String]| m.len() == 4 && m[1] == "plan" && m[2] == "engines";
    let mut wrong = Vec::new();
    for (from, targets) in &edges {
        if !engine(from) {
            continue;
        }
        for to in targets.iter().filter(|t| engine(t)) {
            wrong.push(format!("{} -> {}", name(from), name(to)));
        }
    }
    assert!(
        wrong.is_empty(),
        "engines reaching into each other:\n{}",
        wrong.join("\n")
    );
}

/// The engine whose emission module `m` belongs to, by its file's name.
fn engine_family(m: &[String]) -> Option<&'static str> {
    if m.len() != 4 || m[1] != "emit" || m[2] != "ops" {
        return None;
    }
    let f = m[3].as_str();
    if f.starts_with("mma_sync") {
        Some("mma.sync")
    } else if f.starts_with("wgmma") {
        Some("wgmma")
    } else if f.starts_with("mma_fma") {
        Some("fma")
    } else {
        None
    }
}

/// Whether module `m` is shared by the engines' emission: a copy
/// mechanism or the `wgmma` instruction.
fn shared_by_engines(m: &[String]) -> bool {
    m.len() >= 3 && m[1] == "emit" && (m[2] == "copies" || m[2] == "wgmma_isa")
}

#[test]
fn each_engines_emission_is_its_own() {
    let (_, edges) = graph();
    let mut wrong = Vec::new();
    for (from, targets) in &edges {
        for to in targets {
            let (a, b) = (engine_family(from), engine_family(to));
            let across = matches!((a, b), (Some(x), Some(y)) if x != y);
            let shared_into_engine = shared_by_engines(from) && b.is_some();
            if across || shared_into_engine {
                wrong.push(format!("{} -> {}", name(from), name(to)));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "engines' emission reaching into each other:\n{}",
        wrong.join("\n")
    );
}

/// The strongly connected components of more than one module.
fn circles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<Vec<String>>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<Vec<String>, usize>,
        low: BTreeMap<Vec<String>, usize>,
        stack: Vec<Vec<String>>,
        on: BTreeSet<Vec<String>>,
        out: Vec<Vec<Vec<String>>>,
    }
    impl Walk<'_> {
        fn visit(&mut self, v: &Vec<String>) {
            let n = self.index.len();
            self.index.insert(v.clone(), n);
            self.low.insert(v.clone(), n);
            self.stack.push(v.clone());
            self.on.insert(v.clone());
            let next: Vec<Vec<String>> = self.edges.get(v).into_iter().flatten().cloned().collect();
            for w in next.iter().filter(|w| self.edges.contains_key(*w)) {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if self.on.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(&w);
                    let done = &w == v;
                    comp.push(w);
                    if done {
                        break;
                    }
                }
                if comp.len() > 1 {
                    self.out.push(comp);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.out
}

#[test]
fn no_import_circle_is_large_or_joins_stages() {
    let (_, edges) = graph();
    for circle in circles(&edges) {
        let names: Vec<String> = circle.iter().map(|m| name(m)).collect();
        assert!(
            circle.len() <= 6,
            "a circle of {} files: {}",
            circle.len(),
            names.join(", ")
        );
        let stages: BTreeSet<Option<&str>> = circle.iter().map(|m| stage(m)).collect();
        assert_eq!(
            stages.len(),
            1,
            "a circle across stages: {}",
            names.join(", ")
        );
    }
}

#[test]
fn lowering_files_and_functions_stay_short() {
    let (mods, _) = graph();
    let mut long = Vec::new();
    for (m, file) in mods
        .iter()
        .filter(|(m, _)| m.first().map(String::as_str) == Some("lower"))
    {
        let text = std::fs::read_to_string(file).expect("read source");
        let lines: Vec<&str> = text.lines().collect();
        if lines.len() > 800 {
            long.push(format!("{}: {} lines", name(m), lines.len()));
        }
        for (i, line) in lines.iter().enumerate() {
            let code = line.trim_start();
            let indent = line.len() - code.len();
            let after_vis = code
                .strip_prefix("pub ")
                .or_else(|| code.strip_prefix("pub(crate) "))
                .or_else(|| code.strip_prefix("pub(super) "))
                .unwrap_or(code);
            let after_const = after_vis.strip_prefix("const ").unwrap_or(after_vis);
            let Some(sig) = after_const.strip_prefix("fn ") else {
                continue;
            };
            let end = lines[i + 1..].iter().position(|l| {
                l.len() > indent
                    && l[..indent].trim().is_empty()
                    && l[indent..].starts_with('}')
                    && matches!(
                        l.as_bytes().get(indent + 1),
                        None | Some(b' ' | b';' | b',' | b')')
                    )
            });
            let n = end.map_or(1, |e| e + 2);
            if n > 150 {
                let f = sig.split(['(', '<']).next().unwrap_or(sig);
                long.push(format!("{}::{f}: {n} lines", name(m)));
            }
        }
    }
    assert!(long.is_empty(), "too long:\n{}", long.join("\n"));
}
