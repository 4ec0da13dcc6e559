//! DWARF for device-debug builds (`-g`): the `.debug_abbrev` and
//! `.debug_info` sections PTX carries, describing one compile unit with a
//! subprogram per entry. ptxas builds `.debug_line` itself from the `.loc`
//! lines, and the `$L__func_begin<n>`/`$L__func_end<n>` labels around each
//! entry's body give the subprograms their address ranges.
use std::fmt::Write;

use super::inst::SrcLoc;

/// What the debug info says about one entry.
#[derive(Clone, Debug)]
pub struct Subprogram<'a> {
    /// The entry's symbol (both its name and its linkage name).
    pub name: &'a str,
    /// Where the function is declared (`.file` number and line).
    pub decl: Option<SrcLoc>,
}

// Tags, attributes and forms (DWARF 2).
const TAG_COMPILE_UNIT: u8 = 0x11;
const TAG_SUBPROGRAM: u8 = 0x2e;
const AT_PRODUCER: u8 = 0x25;
const AT_LANGUAGE: u8 = 0x13;
const AT_NAME: u8 = 0x03;
const AT_STMT_LIST: u8 = 0x10;
const AT_LOW_PC: u8 = 0x11;
const AT_HIGH_PC: u8 = 0x12;
const AT_FRAME_BASE: u8 = 0x40;
/// `DW_AT_MIPS_linkage_name` (0x2007), ULEB128-encoded.
const AT_LINKAGE_NAME: [u8; 2] = [0x87, 0x40];
const AT_DECL_FILE: u8 = 0x3a;
const AT_DECL_LINE: u8 = 0x3b;
const AT_EXTERNAL: u8 = 0x3f;
const FORM_ADDR: u8 = 0x01;
const FORM_DATA2: u8 = 0x05;
const FORM_DATA4: u8 = 0x06;
const FORM_STRING: u8 = 0x08;
const FORM_BLOCK1: u8 = 0x0a;
const FORM_DATA1: u8 = 0x0b;
const FORM_FLAG: u8 = 0x0c;
const LANG_C: u16 = 0x0002;
/// `DW_OP_call_frame_cfa`.
const OP_CALL_FRAME_CFA: u8 = 0x9c;

/// One item of a section's body.
enum Datum {
    Byte(u8),
    /// A 32-bit reference to a section (`.b32 .debug_line`).
    SectionRef(&'static str),
    /// A 64-bit address: a label, or 0.
    Addr(Option<String>),
    Word(u32),
}

impl Datum {
    fn size(&self) -> u32 {
        match self {
            Datum::Byte(_) => 1,
            Datum::SectionRef(_) | Datum::Word(_) => 4,
            Datum::Addr(_) => 8,
        }
    }
}

fn bytes(out: &mut Vec<Datum>, b: &[u8]) {
    out.extend(b.iter().map(|&b| Datum::Byte(b)));
}

fn string(out: &mut Vec<Datum>, s: &str) {
    bytes(out, s.as_bytes());
    out.push(Datum::Byte(0));
}

fn abbrev() -> Vec<u8> {
    let mut a = vec![1, TAG_COMPILE_UNIT, 1];
    a.extend([AT_PRODUCER, FORM_STRING, AT_LANGUAGE, FORM_DATA2]);
    a.extend([AT_NAME, FORM_STRING, AT_STMT_LIST, FORM_DATA4]);
    a.extend([AT_LOW_PC, FORM_ADDR, 0, 0]);
    a.extend([2, TAG_SUBPROGRAM, 0]);
    a.extend([AT_LOW_PC, FORM_ADDR, AT_HIGH_PC, FORM_ADDR]);
    a.extend([AT_FRAME_BASE, FORM_BLOCK1]);
    a.extend(AT_LINKAGE_NAME);
    a.extend([FORM_STRING, AT_NAME, FORM_STRING]);
    a.extend([AT_DECL_FILE, FORM_DATA1, AT_DECL_LINE, FORM_DATA4]);
    a.extend([AT_EXTERNAL, FORM_FLAG, 0, 0, 0]);
    a
}

/// The compile unit's DIEs, after the unit header.
fn info(producer: &str, unit_name: &str, subs: &[Subprogram<'_>]) -> Vec<Datum> {
    let mut d = vec![Datum::Byte(1)];
    string(&mut d, producer);
    bytes(&mut d, &LANG_C.to_le_bytes());
    string(&mut d, unit_name);
    d.push(Datum::SectionRef(".debug_line"));
    d.push(Datum::Addr(None));
    for (i, s) in subs.iter().enumerate() {
        d.push(Datum::Byte(2));
        d.push(Datum::Addr(Some(format!("$L__func_begin{i}"))));
        d.push(Datum::Addr(Some(format!("$L__func_end{i}"))));
        bytes(&mut d, &[1, OP_CALL_FRAME_CFA]);
        string(&mut d, s.name);
        string(&mut d, s.name);
        let decl = s.decl.unwrap_or(SrcLoc {
            file: 0,
            line: 0,
            col: 0,
        });
        d.push(Datum::Byte(u8::try_from(decl.file).unwrap_or(0)));
        d.push(Datum::Word(decl.line));
        d.push(Datum::Byte(1));
    }
    d.push(Datum::Byte(0));
    d
}

fn section(out: &mut String, name: &str, data: &[Datum]) {
    let _ = writeln!(out, "\t.section\t{name}\n\t{{");
    for x in data {
        let _ = match x {
            Datum::Byte(b) => writeln!(out, ".b8 {b}"),
            Datum::Word(w) => writeln!(out, ".b32 {w}"),
            Datum::SectionRef(s) => writeln!(out, ".b32 {s}"),
            Datum::Addr(Some(l)) => writeln!(out, ".b64 {l}"),
            Datum::Addr(None) => writeln!(out, ".b64 0"),
        };
    }
    let _ = writeln!(out, "\t}}");
}

/// The `.debug_abbrev` and `.debug_info` sections for a module whose
/// entries are `subs` (in order) and whose main source file is `unit_name`.
pub fn sections(producer: &str, unit_name: &str, subs: &[Subprogram<'_>]) -> String {
    let mut out = String::new();
    let abbrev: Vec<Datum> = abbrev().into_iter().map(Datum::Byte).collect();
    section(&mut out, ".debug_abbrev", &abbrev);
    let dies = info(producer, unit_name, subs);
    // Unit header after the length: version 2, abbrev offset, address size.
    let mut unit = Vec::new();
    bytes(&mut unit, &2u16.to_le_bytes());
    unit.push(Datum::SectionRef(".debug_abbrev"));
    unit.push(Datum::Byte(8));
    unit.extend(dies);
    let length: u32 = unit.iter().map(Datum::size).sum();
    let mut all = vec![Datum::Word(length)];
    all.extend(unit);
    section(&mut out, ".debug_info", &all);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_length_counts_the_bytes_after_it() {
        // NVIDIA's unit for one entry `vadd_f32_contig` with a 36-byte
        // producer and `kernels.py` is 125 bytes long with a one-byte
        // decl_line; ours uses four bytes for it.
        let producer = "x".repeat(36);
        let s = sections(
            &producer,
            "kernels.py",
            &[Subprogram {
                name: "vadd_f32_contig",
                decl: Some(SrcLoc {
                    file: 1,
                    line: 110,
                    col: 0,
                }),
            }],
        );
        assert!(s.contains("\t.section\t.debug_info\n\t{\n.b32 128\n.b8 2\n.b8 0\n.b32 .debug_abbrev\n.b8 8\n.b8 1\n"), "{s}");
        assert!(s.contains(".b64 $L__func_begin0\n.b64 $L__func_end0\n.b8 1\n.b8 156\n"));
        assert!(s.contains(".b8 1\n.b32 110\n.b8 1\n.b8 0\n\t}"), "{s}");
    }
}
