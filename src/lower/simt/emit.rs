//! Flattens the SIMT IR into a PTX body: each `if` becomes guarded branches
//! around its branches, each loop a header, an exit branch and a back edge; registers are renumbered densely per class.
use super::{Function, IfStmt, LoopStmt, Stmt};
use crate::ptx::{Inst, Line, Opc, Operand, Reg, RegClass, SrcLoc};
use smallvec::smallvec;

/// The PTX body of `f` and the highest register number used per class.
pub fn emit(f: Function) -> (Vec<Line>, Vec<(RegClass, u32)>) {
    let mut count = 0;
    super::opt::for_each_inst(&f.body, &mut |_| count += 1);
    let mut lines = Vec::with_capacity(count + count / 4);
    let mut next_label = 0;
    flatten(
        f.body,
        &mut lines,
        &mut next_label,
        &mut Vec::new(),
        &mut None,
    );
    let decls = renumber(&mut lines);
    (lines, decls)
}

/// Appends `body` to `out`; `loc` is the source position of the last
/// `.loc` line written (a new one precedes each instruction whose position
/// differs).
fn flatten(
    body: Vec<Stmt>,
    out: &mut Vec<Line>,
    next_label: &mut u32,
    loops: &mut Vec<(u32, u32)>,
    loc: &mut Option<SrcLoc>,
) {
    for s in body {
        match s {
            Stmt::Inst(i) => {
                if i.loc.is_some() && i.loc != *loc {
                    *loc = i.loc;
                    out.extend(i.loc.map(Line::Loc));
                }
                out.push(Line::Inst(i));
            }
            Stmt::Break => {
                if let Some(&(_, end)) = loops.last() {
                    out.push(branch(end, None));
                }
            }
            Stmt::Continue => {
                if let Some(&(head, _)) = loops.last() {
                    out.push(branch(head, None));
                }
            }
            // Gone before: a barrier or nothing (`membar::place`).
            Stmt::Shared(_) => {}
            Stmt::If(node) => {
                let IfStmt {
                    pred,
                    run_when,
                    body,
                    else_body,
                } = *node;
                // Skip the then-branch unless pred == run_when.
                let skip = fresh(next_label);
                out.push(branch(skip, Some((pred, run_when))));
                flatten(body, out, next_label, loops, loc);
                if else_body.is_empty() {
                    out.push(Line::Label(skip));
                } else {
                    let end = fresh(next_label);
                    out.push(branch(end, None));
                    out.push(Line::Label(skip));
                    flatten(else_body, out, next_label, loops, loc);
                    out.push(Line::Label(end));
                }
            }
            Stmt::Loop(node) => {
                let LoopStmt {
                    header,
                    pred,
                    run_when,
                    body,
                } = *node;
                let head = fresh(next_label);
                let end = fresh(next_label);
                out.push(Line::Label(head));
                flatten(header, out, next_label, loops, loc);
                out.push(branch(end, Some((pred, run_when))));
                loops.push((head, end));
                flatten(body, out, next_label, loops, loc);
                loops.pop();
                out.push(branch(head, None));
                out.push(Line::Label(end));
            }
        }
    }
}

fn fresh(next_label: &mut u32) -> u32 {
    *next_label += 1;
    *next_label
}

/// `bra label`, guarded to be taken when the predicate is `!value`.
fn branch(label: u32, guard: Option<(Reg, bool)>) -> Line {
    let mut bra = Inst::new(Opc::Bra, &[], &[], vec![], smallvec![Operand::Label(label)]);
    bra.guard = guard;
    Line::Inst(Box::new(bra))
}

/// Renumbers the registers of `lines` densely per class; returns the
/// count per class.
fn renumber(lines: &mut [Line]) -> Vec<(RegClass, u32)> {
    // Old register number to new one (0: not seen yet); numbers are dense
    // enough that a table beats hashing.
    let mut map: Vec<u32> = Vec::new();
    let mut counts = [0u32; 4];
    let mut rename = |r: &mut Reg| {
        let n = super::regs::slot(&mut map, *r);
        if *n == 0 {
            let c = &mut counts[r.class as usize];
            *c += 1;
            *n = *c;
        }
        r.id = *n;
    };
    let fix = |o: &mut Operand, rename: &mut dyn FnMut(&mut Reg)| match o {
        Operand::Reg(r) | Operand::Addr(r, _) => rename(r),
        Operand::Vec(v) => v.iter_mut().for_each(&mut *rename),
        _ => {}
    };
    for l in lines.iter_mut() {
        if let Line::Inst(i) = l {
            if let Some((g, _)) = &mut i.guard {
                rename(g);
            }
            for o in i.dsts.iter_mut().chain(i.srcs.iter_mut()) {
                fix(o, &mut rename);
            }
        }
    }
    RegClass::all()
        .iter()
        .filter(|c| counts[**c as usize] > 0)
        .map(|c| (*c, counts[*c as usize]))
        .collect()
}
