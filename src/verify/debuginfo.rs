//! Debug-info rules, as NVIDIA's verifier states them:
//! 1. a function location with a scope has a `di_subprogram` scope;
//! 2. that subprogram's linkage name is the function's name;
//! 3. ops of a function without scope have no scope;
//! 4. an op's subprogram (through lexical blocks) is its function's;
//! 5. globals have no scope;
//! 6. a function location is not a call site.
//!
//! Attributes print as NVIDIA prints them in these messages.
use super::{op_err, Check, Fail};
use crate::ir::{Attr, DebugAttr, DebugId, Module, Op, OpId};

/// A string as MLIR escapes it in diagnostics: printable ASCII as is,
/// backslash doubled, every other byte (quotes, controls, UTF-8) as `\XX`.
fn esc(s: &str) -> String {
    let mut out = String::new();
    for b in crate::ir::string_to_bytes(s) {
        match b {
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e if b != b'"' => out.push(b as char),
            _ => out.push_str(&format!("\\{b:02X}")),
        }
    }
    out
}

/// The longest attribute text printed; longer ones end in `...` (shared
/// sub-attributes could otherwise make the text exponentially long).
const MAX_TEXT: usize = 1 << 16;

/// `attr` in diagnostic form; `top` adds the `#cuda_tile.` prefix where
/// NVIDIA prints it.
fn print(m: &Module, d: DebugId, top: bool, depth: u32) -> String {
    let mut out = String::new();
    write_attr(m, d, top, depth, &mut out);
    out
}

fn write_attr(m: &Module, d: DebugId, top: bool, depth: u32, out: &mut String) {
    if depth > 32 || out.len() > MAX_TEXT {
        out.push_str("...");
        return;
    }
    let Some(a) = m.debug.try_get(d) else {
        out.push_str("<invalid>");
        return;
    };
    let prefix = |name: &str| {
        if top {
            format!("#cuda_tile.{name}")
        } else {
            String::new()
        }
    };
    match a {
        DebugAttr::Unknown => out.push_str("loc(unknown)"),
        DebugAttr::File { name, directory } => {
            out.push_str(&format!(
                "{}<\"{}\" in \"{}\">",
                prefix("di_file"),
                esc(name),
                esc(directory)
            ));
        }
        DebugAttr::CompileUnit { file } => {
            out.push_str(&format!("{}<file = ", prefix("di_compile_unit")));
            write_attr(m, *file, false, depth + 1, out);
            out.push('>');
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
            out.push_str(&format!("{}<file = ", prefix("di_subprogram")));
            write_attr(m, *file, false, depth + 1, out);
            out.push_str(&format!(
                ", line = {line}, name = \"{}\", linkageName = \"{}\", compileUnit = ",
                esc(name),
                esc(linkage_name)
            ));
            write_attr(m, *compile_unit, false, depth + 1, out);
            let flags = if *declaration {
                ", flags = declaration"
            } else {
                ""
            };
            out.push_str(&format!(", scopeLine = {scope_line}{flags}>"));
        }
        DebugAttr::LexicalBlock {
            scope,
            file,
            line,
            column,
        } => {
            out.push_str(&format!("{}<scope = ", prefix("di_lexical_block")));
            write_attr(m, *scope, true, depth + 1, out);
            out.push_str(", file = ");
            write_attr(m, *file, false, depth + 1, out);
            out.push_str(&format!(", line = {line}, column = {column}>"));
        }
        DebugAttr::Loc {
            scope,
            filename,
            line,
            column,
        } => {
            out.push_str(&format!(
                "#cuda_tile.di_loc<loc(\"{}\":{line}:{column}) in ",
                esc(filename)
            ));
            write_attr(m, *scope, true, depth + 1, out);
            out.push('>');
        }
        DebugAttr::CallSite { callee, caller } => {
            out.push_str("loc(callsite(");
            write_attr(m, *callee, true, depth + 1, out);
            out.push_str(" at ");
            write_attr(m, *caller, true, depth + 1, out);
            out.push_str("))");
        }
    }
}

/// The `di_loc` a location stands for (call sites: their caller's).
fn di_loc(m: &Module, d: DebugId) -> Option<DebugId> {
    let mut d = d;
    for _ in 0..64 {
        match m.debug.try_get(d)? {
            DebugAttr::Loc { .. } => return Some(d),
            DebugAttr::CallSite { caller, .. } => d = *caller,
            _ => return None,
        }
    }
    None
}

fn loc_scope(m: &Module, loc: DebugId) -> Option<DebugId> {
    match m.debug.try_get(loc)? {
        DebugAttr::Loc { scope, .. } => Some(*scope),
        _ => None,
    }
}

/// The subprogram a local scope belongs to (through lexical blocks).
fn subprogram(m: &Module, scope: DebugId) -> Option<DebugId> {
    let mut s = scope;
    for _ in 0..64 {
        match m.debug.try_get(s)? {
            DebugAttr::Subprogram { .. } => return Some(s),
            DebugAttr::LexicalBlock { scope, .. } => s = *scope,
            _ => return None,
        }
    }
    None
}

/// Rules 1, 2 and 6 for an entry.
pub(crate) fn check_function(m: &Module, op: &Op) -> Check {
    let Some(loc) = op.debug else {
        return Ok(());
    };
    if matches!(m.debug.try_get(loc), Some(DebugAttr::CallSite { .. })) {
        return Err(op_err(format!(
            "invalid function debug info location: {}. Function location must not be a CallSiteLoc.",
            print(m, loc, true, 0)
        )));
    }
    let Some(dl) = di_loc(m, loc) else {
        return Ok(());
    };
    let Some(scope) = loc_scope(m, dl) else {
        return Ok(());
    };
    let Some(DebugAttr::Subprogram { linkage_name, .. }) = m.debug.try_get(scope) else {
        return Err(op_err(format!(
            "invalid function debug info scope: {}. Function location must have cuda_tile.di_subprogram debug info scope.",
            print(m, scope, true, 0)
        )));
    };
    let name = match op.attr("sym_name") {
        Some(Attr::String(s)) => s.as_str(),
        _ => "",
    };
    if linkage_name != name {
        return Err(op_err(format!(
            "invalid function debug info scope: {}. Function name \"{}\" does not match subprogram scope linkage name \"{}\".",
            print(m, scope, true, 0),
            esc(name),
            esc(linkage_name)
        )));
    }
    Ok(())
}

fn op_subprogram(m: &Module, op: &Op) -> Option<DebugId> {
    subprogram(m, loc_scope(m, di_loc(m, op.debug?)?)?)
}

/// Rules 3 and 4 over the ops of entry `entry`: the first op that breaks
/// one, with the failure.
pub(crate) fn check_function_body(m: &Module, entry: OpId) -> Option<(OpId, Fail)> {
    let fn_sp = op_subprogram(m, &m.ops[entry]);
    let fn_text = fn_sp.map(|s| print(m, s, true, 0));
    let mut stack: Vec<OpId> = Vec::new();
    let push_children = |stack: &mut Vec<OpId>, id: OpId| {
        for r in m.ops[id].regions.iter().rev() {
            for b in r.blocks.iter().rev() {
                stack.extend(b.ops.iter().rev().copied());
            }
        }
    };
    push_children(&mut stack, entry);
    while let Some(id) = stack.pop() {
        if let Some(sp) = op_subprogram(m, &m.ops[id]).filter(|sp| Some(*sp) != fn_sp) {
            let text = print(m, sp, true, 0);
            match &fn_text {
                None => {
                    return Some((
                        id,
                        op_err(format!(
                            "invalid operation debug info scope: {text}. Operation has debug info scope, but function debug info scope is undefined."
                        )),
                    ))
                }
                Some(f) if *f != text => {
                    return Some((
                        id,
                        Fail::Plain(format!(
                            "invalid operation debug info scope: {text}. Operation debug info scope does not match function debug info scope: {f}."
                        )),
                    ))
                }
                _ => {}
            }
        }
        push_children(&mut stack, id);
    }
    None
}

/// Rule 5 for a global.
pub(crate) fn check_global(m: &Module, op: &Op) -> Check {
    if let Some(dl) = op.debug.and_then(|d| di_loc(m, d)) {
        return Err(op_err(format!(
            "invalid operation debug info scope: {}. Global variables must not have scope.",
            print(m, dl, true, 0)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn strings_escape_like_mlir() {
        assert_eq!(esc("fma_f32"), "fma_f32");
        assert_eq!(esc("a\"b\\c\u{e}"), "a\\22b\\\\c\\0E");
        assert_eq!(esc("é"), "\\C3\\A9");
    }
}
