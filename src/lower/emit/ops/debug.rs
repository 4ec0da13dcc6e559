//! Device debugging ops: `print_tko` and `assert`, both through `vprintf`.
//!
//! `print_tko` gathers every operand tile into each thread (through shared
//! memory) and thread 0 of the tile block prints it: the format's `%`
//! specifier for a tile operand becomes one specifier per element, in
//! row-major order inside nested brackets (`[1, 2, 3]`), so the output is
//! deterministic. Arguments go in a local buffer, one slot per specifier
//! (8-byte slots for 64-bit integers and floats, which are promoted to
//! `f64` as C varargs are), at most [`MAX_ARGS`] per `vprintf` call.
//!
//! `assert` has every thread check the elements it owns; a thread with a
//! false element prints `"<file>:<line>: tile block: [x, y, z], position:
//! [i]: <message>"` for its first such element and traps.
use smallvec::smallvec;
use std::rc::Rc;

use crate::ir::{Attr, OpId, Scalar};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::emit::context::{Lowered, Lowerer, Tile};
use crate::lower::emit::ops::staging;
use crate::lower::error::LowerError;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Inst, Opc, Operand, Reg, Special, Ty, LOCAL_SYMBOL};

/// The local `vprintf` argument buffer of the entry.
#[derive(Default)]
struct LocalBuffer {
    /// Bytes the largest argument list needs.
    bytes: u32,
}

/// Bytes of the local `vprintf` argument buffer the entry's prints need.
pub fn local_bytes(l: &Lowerer) -> u32 {
    l.states.peek::<LocalBuffer>().map_or(0, |b| b.bytes)
}

/// The most arguments one `vprintf` call takes (CUDA's printf limit).
pub const MAX_ARGS: usize = 32;

/// One piece of a print: literal text, or a conversion with its argument.
enum Piece {
    /// Text printed as is (already `%`-escaped).
    Text(String),
    /// A conversion specification and the register it prints.
    Arg(String, Reg, Elem),
}

/// Lowers `print_tko` op `id`: its prints, and no value for its results
/// (the token).
pub fn lower_print(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    emit_print(l, id)?;
    let results = l.m.ops[id].results.clone();
    for r in results {
        l.vals.insert(r, Lowered::Nothing);
    }
    Ok(())
}

/// Emits the prints of `print_tko` op `id`: thread 0 of the tile block
/// calls `vprintf` with every element of its operands.
fn emit_print(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let fmt = match op.attr("str") {
        Some(Attr::String(s)) => s.clone(),
        _ => return Err(l.unsupported_feature(id, "no format string")),
    };
    let args = op.operand_group("args").to_vec();
    // Every operand's elements, in row-major order, in every thread.
    let mut tiles = Vec::new();
    for &a in &args {
        let (shape, elem) = value_tile(l.m, a).ok_or_else(|| l.unsupported(id))?;
        let t = l.tile(id, a)?;
        let regs = if shape.is_empty() {
            vec![t.regs[0]]
        } else {
            let everywhere = Rc::new(LinearLayout::replicated(&t.layout.shape));
            staging::convert(l, a, &t, &everywhere)?.regs
        };
        tiles.push((shape, elem, regs));
    }
    // Split the format into pieces.
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = fmt.chars().peekable();
    let mut next = tiles.into_iter();
    while let Some(c) = chars.next() {
        if c != '%' {
            text.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            text.push_str("%%");
            continue;
        }
        let mut spec = String::from("%");
        for c in chars.by_ref() {
            spec.push(c);
            if c.is_ascii_alphabetic() && !"hlLqjzt".contains(c) {
                break;
            }
        }
        let Some((shape, elem, regs)) = next.next() else {
            return Err(l.unsupported_feature(id, "more specifiers than operands"));
        };
        pieces.push(Piece::Text(std::mem::take(&mut text)));
        tile_pieces(&mut pieces, &spec, &shape, elem, &regs, 0, &mut 0);
    }
    pieces.push(Piece::Text(text));
    if next.next().is_some() {
        return Err(l.unsupported_feature(id, "more operands than specifiers"));
    }
    // Thread 0 prints, in calls of at most MAX_ARGS arguments.
    let first = l.is_thread_zero();
    l.b.begin_if(first, true);
    let mut text = String::new();
    let mut call_args = Vec::new();
    for p in pieces {
        match p {
            Piece::Text(t) => text.push_str(&t),
            Piece::Arg(spec, r, e) => {
                if call_args.len() == MAX_ARGS {
                    let args = std::mem::take(&mut call_args);
                    vprintf(l, &std::mem::take(&mut text), &args);
                }
                text.push_str(&spec);
                call_args.push((r, e, spec));
            }
        }
    }
    if !text.is_empty() || !call_args.is_empty() {
        vprintf(l, &text, &call_args);
    }
    l.b.end_if();
    Ok(())
}

/// Appends the pieces printing the elements of a tile of `shape` from
/// dimension `dim` on (`next` counts the registers used, row-major).
fn tile_pieces(
    out: &mut Vec<Piece>,
    spec: &str,
    shape: &[i64],
    elem: Elem,
    regs: &[Reg],
    dim: usize,
    next: &mut usize,
) {
    if dim == shape.len() {
        out.push(Piece::Arg(spec.to_string(), regs[*next], elem));
        *next += 1;
        return;
    }
    out.push(Piece::Text("[".into()));
    for k in 0..shape[dim] {
        if k > 0 {
            out.push(Piece::Text(", ".into()));
        }
        tile_pieces(out, spec, shape, elem, regs, dim + 1, next);
    }
    out.push(Piece::Text("]".into()));
}

/// Emits one `vprintf` of `text` (NUL added) with `args` stored in the
/// local buffer.
fn vprintf(l: &mut Lowerer, text: &str, args: &[(Reg, Elem, String)]) {
    let local = l.b.op(
        Opc::Mov,
        &[],
        &[Ty::U64],
        Ty::U64,
        smallvec![Operand::Symbol(LOCAL_SYMBOL)],
    );
    let mut off = 0i64;
    for (r, e, spec) in args {
        let (v, ty) = promote(l, *r, *e, spec);
        let size = i64::from(ty.bits() / 8);
        off = (off + size - 1) / size * size;
        l.b.push(Inst::new(
            Opc::St,
            &["local"],
            &[ty],
            vec![],
            smallvec![Operand::Addr(local, off), Operand::Reg(v)],
        ));
        off += size;
    }
    let buffer = &mut l.states.get::<LocalBuffer>().bytes;
    *buffer = (*buffer).max(off.max(8) as u32);
    let buf = l.b.op(
        Opc::Cvta,
        &["local"],
        &[Ty::U64],
        Ty::U64,
        smallvec![Operand::Reg(local)],
    );
    let mut bytes = text.as_bytes().to_vec();
    bytes.push(0);
    let name = l.bytes_symbol(bytes);
    let sym = l.b.op(
        Opc::Mov,
        &[],
        &[Ty::U64],
        Ty::U64,
        smallvec![Operand::Global(name)],
    );
    let fmt = l.b.op(
        Opc::Cvta,
        &["global"],
        &[Ty::U64],
        Ty::U64,
        smallvec![Operand::Reg(sym)],
    );
    l.b.push(Inst::new(
        Opc::Vprintf,
        &[],
        &[],
        vec![],
        smallvec![Operand::Reg(fmt), Operand::Reg(buf)],
    ));
}

/// The register and store type of a printf argument: integers below 32
/// bits widen to 32 (sign-extended unless the conversion is unsigned),
/// floats become `f64`.
fn promote(l: &mut Lowerer, r: Reg, e: Elem, spec: &str) -> (Reg, Ty) {
    let unsigned = spec.ends_with(['u', 'x', 'X', 'o', 'c']);
    let Elem::Num(s) = e else {
        return (r, Ty::B64);
    };
    let cvt = |l: &mut Lowerer, d: Ty, s: Ty, r: Reg| {
        l.b.op(Opc::Cvt, &[], &[d, s], d, smallvec![Operand::Reg(r)])
    };
    match s {
        Scalar::I1 => (
            l.b.op(
                Opc::Selp,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Imm(1), Operand::Imm(0), Operand::Reg(r)],
            ),
            Ty::B32,
        ),
        Scalar::I8 | Scalar::I16 => {
            let from = if s == Scalar::I8 {
                if unsigned {
                    Ty::U8
                } else {
                    Ty::S8
                }
            } else if unsigned {
                Ty::U16
            } else {
                Ty::S16
            };
            let to = if unsigned { Ty::U32 } else { Ty::S32 };
            (cvt(l, to, from, r), Ty::B32)
        }
        Scalar::I32 => (r, Ty::B32),
        Scalar::I64 => (r, Ty::B64),
        Scalar::F64 => (r, Ty::F64),
        // tf32 lives in an f32 register.
        Scalar::F32 | Scalar::TF32 => (cvt(l, Ty::F64, Ty::F32, r), Ty::F64),
        Scalar::F16 => {
            let f = cvt(l, Ty::F32, Ty::F16, r);
            (cvt(l, Ty::F64, Ty::F32, f), Ty::F64)
        }
        Scalar::BF16 => {
            // bf16 is the high half of an f32.
            let w = cvt(l, Ty::U32, Ty::U16, r);
            let f = l.b.op(
                Opc::Shl,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(w), Operand::Imm(16)],
            );
            (cvt(l, Ty::F64, Ty::F32, f), Ty::F64)
        }
        Scalar::F8E4M3FN | Scalar::F8E5M2 => {
            // As NVIDIA's tileiras: the f8 value (exact in f32) as f64.
            let f = crate::lower::emit::ops::f8::f8_to_f32(l, s, r);
            (cvt(l, Ty::F64, Ty::F32, f), Ty::F64)
        }
        Scalar::F8E8M0FNU | Scalar::F8E5M3FNU => {
            let f = crate::lower::emit::ops::f8_scale::scale_to_f32(l, s, r);
            (cvt(l, Ty::F64, Ty::F32, f), Ty::F64)
        }
        Scalar::F4E2M1FN => {
            let f = crate::lower::emit::ops::f4::f4_to_f32(l, r);
            (cvt(l, Ty::F64, Ty::F32, f), Ty::F64)
        }
        Scalar::I4 => {
            // The nibble extended by the specifier's signedness.
            let top = l.b.op(
                Opc::Shl,
                &[],
                &[Ty::B16],
                Ty::B16,
                smallvec![Operand::Reg(r), Operand::Imm(12)],
            );
            let (h, w) = if unsigned {
                (Ty::U16, Ty::U32)
            } else {
                (Ty::S16, Ty::S32)
            };
            let x = l.b.op(
                Opc::Shr,
                &[],
                &[h],
                Ty::B16,
                smallvec![Operand::Reg(top), Operand::Imm(12)],
            );
            (cvt(l, w, h, x), Ty::B32)
        }
    }
}

/// Lowers `assert`.
pub fn lower_assert(l: &mut Lowerer, id: OpId) -> Result<(), LowerError> {
    let op = &l.m.ops[id];
    let msg = match op.attr("message") {
        Some(Attr::String(s)) => s.replace('%', "%%"),
        _ => String::new(),
    };
    let cond = *op
        .operand_group("condition")
        .first()
        .or(op.operands.first())
        .ok_or_else(|| l.unsupported(id))?;
    let t: Tile = l.tile(id, cond)?;
    let layout = t.layout.clone();
    let rank = layout.shape.len();
    let owner = l.owner_pred(&layout);
    if let Some(o) = owner {
        l.b.begin_if(o, true);
    }
    let coords = staging::coordinates(l, &layout);
    // Walking the registers backwards leaves the first false one's position.
    let mut all: Option<Reg> = None;
    let mut pos: Option<Vec<Reg>> = None;
    for r in (0..layout.num_registers()).rev() {
        if layout.canonical_register(r) != r {
            continue;
        }
        let c = t.regs[r];
        pos = Some(match pos {
            None => coords[r].clone(),
            Some(p) => p
                .iter()
                .zip(&coords[r])
                .map(|(&keep, &here)| {
                    l.b.op(
                        Opc::Selp,
                        &[],
                        &[Ty::B32],
                        Ty::B32,
                        smallvec![Operand::Reg(keep), Operand::Reg(here), Operand::Reg(c)],
                    )
                })
                .collect(),
        });
        all = Some(match all {
            None => c,
            Some(a) => l.b.op(
                Opc::And,
                &[],
                &[Ty::Pred],
                Ty::Pred,
                smallvec![Operand::Reg(a), Operand::Reg(c)],
            ),
        });
    }
    let (Some(all), Some(pos)) = (all, pos) else {
        return Err(l.unsupported(id));
    };
    l.b.begin_if(all, false);
    let mut args = Vec::new();
    for axis in 0..3u8 {
        let s = if l.plan.target.has_clusters() {
            Special::ClusterId(axis)
        } else {
            Special::CtaId(axis)
        };
        let b = l.b.op(
            Opc::Mov,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Special(s)],
        );
        args.push((b, Elem::Num(Scalar::I32), "%d".to_string()));
    }
    for p in pos {
        args.push((p, Elem::Num(Scalar::I32), "%d".to_string()));
    }
    let at = match l.m.location(id) {
        Some(loc) => {
            let file = std::path::Path::new(&loc.file)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or(loc.file.clone());
            format!("{}:{}: ", file.replace('%', "%%"), loc.line)
        }
        None => String::new(),
    };
    let position = vec!["%d"; rank].join(", ");
    let text = format!("{at}tile block: [%d, %d, %d], position: [{position}]: {msg}\n");
    vprintf(l, &text, &args);
    l.b.push(Inst::new(Opc::Trap, &[], &[], vec![], vec![]));
    l.b.end_if();
    if owner.is_some() {
        l.b.end_if();
    }
    Ok(())
}
