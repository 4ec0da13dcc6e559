//! Prints the PTX model as text.
use std::fmt::{self, Write};

use super::func::{Entry, GlobalBytes, Line, ParamTy};
use super::inst::{Inst, Operand, Reg, Special};

/// Writes PTX text into any [`fmt::Write`].
pub struct Writer<W: Write> {
    out: W,
    /// Whether entries get `$L__func_begin<n>`/`$L__func_end<n>` labels
    /// for the debug info.
    debug: bool,
    /// Entries written so far.
    entries: usize,
}

impl<W: Write> Writer<W> {
    /// A writer into `out`.
    pub fn new(out: W) -> Self {
        Writer {
            out,
            debug: false,
            entries: 0,
        }
    }

    /// The same writer, labelling entry bodies for debug info when `debug`.
    pub fn with_debug(self, debug: bool) -> Self {
        Writer { debug, ..self }
    }

    /// The underlying output, borrowed.
    pub fn into_inner_ref(&mut self) -> &mut W {
        &mut self.out
    }

    /// The underlying output.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// A module-scope global byte array.
    pub fn global(&mut self, g: &GlobalBytes) -> fmt::Result {
        write!(
            self.out,
            "{}.global .align {} .b8 {}[{}]",
            if g.visible { ".visible " } else { "" },
            g.align,
            g.name,
            g.size
        )?;
        if let Some(init) = &g.init {
            self.out.write_str(" = {")?;
            for (k, b) in init.iter().enumerate() {
                write!(self.out, "{}{b}", if k == 0 { "" } else { ", " })?;
            }
            self.out.write_char('}')?;
        }
        writeln!(self.out, ";")
    }

    /// The `.extern` declaration of `vprintf`.
    pub fn vprintf_decl(&mut self) -> fmt::Result {
        writeln!(
            self.out,
            ".extern .func  (.param .b32 func_retval0) vprintf\n(\n\t.param .b64 vprintf_param_0,\n\t.param .b64 vprintf_param_1\n)\n;"
        )
    }

    /// The `.extern` declarations of the device heap's system calls.
    pub fn heap_decl(&mut self) -> fmt::Result {
        writeln!(
            self.out,
            ".extern .func free\n(\n\t.param .b64 free_param_0\n)\n;\n.extern .func  (.param .b64 func_retval0) __cuda_syscall_aligned_malloc\n(\n\t.param .b64 __cuda_syscall_aligned_malloc_param_0,\n\t.param .b64 __cuda_syscall_aligned_malloc_param_1\n)\n;"
        )
    }

    /// A module-scope initialized byte array (a format string or a constant
    /// table), 16-byte aligned so elements of any size load from it.
    pub fn bytes(&mut self, name: &str, bytes: &[u8]) -> fmt::Result {
        write!(
            self.out,
            ".global .align 16 .b8 {name}[{}] = {{",
            bytes.len()
        )?;
        for (k, b) in bytes.iter().enumerate() {
            write!(self.out, "{}{b}", if k == 0 { "" } else { ", " })?;
        }
        writeln!(self.out, "}};")
    }

    /// A kernel entry.
    pub fn entry(&mut self, e: &Entry) -> fmt::Result {
        writeln!(self.out, "\t// .globl\t{}", e.name)?;
        write!(self.out, ".visible .entry {}(", e.name)?;
        for (i, p) in e.params.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            match p.ty {
                ParamTy::GlobalPtr => write!(
                    self.out,
                    "{sep}\n\t.param .u64 .ptr .global .align 1 {}",
                    p.name
                )?,
                ParamTy::Scalar(t) => write!(self.out, "{sep}\n\t.param .{} {}", t.name(), p.name)?,
                ParamTy::TensorMap => write!(
                    self.out,
                    "{sep}\n\t.hidden\t.param .align 64 .b8 {}[128]",
                    p.name
                )?,
            }
        }
        writeln!(self.out, "{})", if e.params.is_empty() { "" } else { "\n" })?;
        if *e.launch == super::LaunchDirectives::default() {
            // An entry that skipped launch planning gets NVIDIA's header.
            writeln!(self.out, ".reqntid {}\n.minnctapersm 1", e.reqntid)?;
        } else {
            e.launch.write(&mut self.out)?;
        }
        writeln!(self.out, ".language 7\n{{")?;
        for (class, n) in &e.reg_counts {
            writeln!(
                self.out,
                "\t.reg {} \t{}<{}>;",
                class.decl(),
                class.prefix(),
                n + 1
            )?;
        }
        if e.shared_bytes > 0 {
            writeln!(
                self.out,
                "\t.shared .align 16 .b8 {}[{}];",
                super::func::SHARED_SYMBOL,
                e.shared_bytes
            )?;
        }
        if e.local_bytes > 0 {
            writeln!(
                self.out,
                "\t.local .align 8 .b8 {}[{}];",
                super::func::LOCAL_SYMBOL,
                e.local_bytes
            )?;
        }
        writeln!(self.out)?;
        let n = self.entries;
        self.entries += 1;
        if self.debug {
            writeln!(self.out, "$L__func_begin{n}:")?;
        }
        for line in &e.body {
            match line {
                Line::Label(l) => writeln!(self.out, "$L__BB0_{l}:")?,
                Line::Loc(l) => writeln!(self.out, "\t.loc\t{} {} {}", l.file, l.line, l.col)?,
                Line::Inst(i) if i.opc == super::inst::Opc::Vprintf => self.vprintf(i)?,
                Line::Inst(i) if i.opc == super::inst::Opc::Malloc => self.malloc(i)?,
                Line::Inst(i) if i.opc == super::inst::Opc::Free => self.free(i)?,
                Line::Inst(i)
                    if matches!(
                        i.opc,
                        super::inst::Opc::CvtPackE2m1x2 | super::inst::Opc::CvtUnpackE2m1x2
                    ) =>
                {
                    self.e2m1x2(i)?
                }
                Line::Inst(i) => {
                    self.out.write_char('\t')?;
                    self.inst(i)?;
                    self.out.write_str(";\n")?;
                }
            }
        }
        if self.debug {
            writeln!(self.out, "$L__func_end{n}:")?;
        }
        writeln!(self.out, "}}")
    }

    /// A `vprintf` call sequence: its format and argument-buffer addresses
    /// are the instruction's two sources.
    fn vprintf(&mut self, i: &Inst) -> fmt::Result {
        let (Some(fmt), Some(args)) = (i.srcs.first(), i.srcs.get(1)) else {
            return Err(fmt::Error);
        };
        writeln!(
            self.out,
            "\t{{\n\t.param .b64 \tparam0;\n\t.param .b64 \tparam1;\n\t.param .b32 \tretval0;"
        )?;
        self.out.write_str("\tst.param.b64 \t[param0], ")?;
        operand(&mut self.out, fmt)?;
        self.out.write_str(";\n\tst.param.b64 \t[param1], ")?;
        operand(&mut self.out, args)?;
        writeln!(
            self.out,
            ";\n\tcall.uni (retval0), vprintf, (param0, param1);\n\t}}"
        )
    }

    /// `dst = __cuda_syscall_aligned_malloc(size, align)` as a call sequence.
    fn malloc(&mut self, i: &Inst) -> fmt::Result {
        let (Some(dst), Some(size), Some(align)) = (i.dsts.first(), i.srcs.first(), i.srcs.get(1))
        else {
            return Err(fmt::Error);
        };
        writeln!(
            self.out,
            "\t{{\n\t.param .b64 \tparam0;\n\t.param .b64 \tparam1;\n\t.param .b64 \tretval0;"
        )?;
        self.out.write_str("\tst.param.b64 \t[param0], ")?;
        operand(&mut self.out, size)?;
        self.out.write_str(";\n\tst.param.b64 \t[param1], ")?;
        operand(&mut self.out, align)?;
        self.out.write_str(
            ";\n\tcall.uni (retval0), __cuda_syscall_aligned_malloc, (param0, param1);\n\tld.param.b64 \t",
        )?;
        operand(&mut self.out, dst)?;
        writeln!(self.out, ", [retval0];\n\t}}")
    }

    /// The `e2m1x2` conversions in a scope with the `.b8` register PTX
    /// wants for the pair: `{ .reg .b8 %f4b, %f4z; ... }`.
    fn e2m1x2(&mut self, i: &Inst) -> fmt::Result {
        let Some(d) = i.dsts.first() else {
            return Err(fmt::Error);
        };
        let mut guard = String::new();
        if let Some((g, neg)) = i.guard {
            guard.push('@');
            if neg {
                guard.push('!');
            }
            reg(&mut guard, g)?;
            guard.push(' ');
        }
        self.out.write_str("\t{\n\t.reg .b8 \t%f4b, %f4z;\n\t")?;
        self.out.write_str(&guard)?;
        if i.opc == super::inst::Opc::CvtPackE2m1x2 {
            let (Some(a), Some(b)) = (i.srcs.first(), i.srcs.get(1)) else {
                return Err(fmt::Error);
            };
            self.out.write_str("cvt.rn.satfinite.e2m1x2.f32 \t%f4b, ")?;
            operand(&mut self.out, a)?;
            self.out.write_str(", ")?;
            operand(&mut self.out, b)?;
            write!(self.out, ";\n\t{guard}mov.b16 \t")?;
            operand(&mut self.out, d)?;
            self.out.write_str(", {%f4b, 0};\n")?;
        } else {
            let Some(a) = i.srcs.first() else {
                return Err(fmt::Error);
            };
            self.out.write_str("mov.b16 \t{%f4b, %f4z}, ")?;
            operand(&mut self.out, a)?;
            write!(self.out, ";\n\t{guard}cvt.rn.f16x2.e2m1x2 \t")?;
            operand(&mut self.out, d)?;
            self.out.write_str(", %f4b;\n")?;
        }
        writeln!(self.out, "\t}}")
    }

    /// `free(ptr)` as a call sequence.
    fn free(&mut self, i: &Inst) -> fmt::Result {
        let Some(p) = i.srcs.first() else {
            return Err(fmt::Error);
        };
        self.out
            .write_str("\t{\n\t.param .b64 \tparam0;\n\tst.param.b64 \t[param0], ")?;
        operand(&mut self.out, p)?;
        writeln!(self.out, ";\n\tcall.uni free, (param0);\n\t}}")
    }

    /// One instruction without indentation or semicolon.
    pub fn inst(&mut self, i: &Inst) -> fmt::Result {
        if let Some((g, neg)) = i.guard {
            write!(self.out, "@{}", if neg { "!" } else { "" })?;
            reg(&mut self.out, g)?;
            self.out.write_char(' ')?;
        }
        self.out.write_str(i.opc.name())?;
        for m in &i.mods {
            self.out.write_char('.')?;
            self.out.write_str(m)?;
        }
        for t in &i.tys {
            self.out.write_char('.')?;
            self.out.write_str(t.name())?;
        }
        if let (super::inst::Opc::CpBulkTensor, [dst, Operand::Reg(map), coords, bar]) =
            (i.opc, i.srcs.as_slice())
        {
            self.out.write_str(" \t")?;
            operand(&mut self.out, dst)?;
            self.out.write_str(", [")?;
            reg(&mut self.out, *map)?;
            self.out.write_str(", ")?;
            operand(&mut self.out, coords)?;
            self.out.write_str("], ")?;
            return operand(&mut self.out, bar);
        }
        let mut first = true;
        for o in i.dsts.iter().chain(&i.srcs) {
            self.out.write_str(if first { " \t" } else { ", " })?;
            first = false;
            operand(&mut self.out, o)?;
        }
        Ok(())
    }
}

fn reg(out: &mut impl Write, r: Reg) -> fmt::Result {
    out.write_str(r.class.prefix())?;
    decimal(out, u64::from(r.id))
}

/// Writes `v` in decimal without the formatting machinery (registers and
/// immediates are most of a kernel's text).
fn decimal(out: &mut impl Write, v: u64) -> fmt::Result {
    let pair = |n: u64| {
        let i = 2 * n as usize;
        &PAIRS[i..i + 2]
    };
    if v < 10 {
        return out.write_str(&pair(v)[1..]);
    }
    if v >= 100 {
        decimal(out, v / 100)?;
    } else {
        return out.write_str(pair(v));
    }
    out.write_str(pair(v % 100))
}

/// "00" to "99" in a row: the two digits of `n` are at `2n`.
const PAIRS: &str = match std::str::from_utf8(&pair_digits()) {
    Ok(s) => s,
    Err(_) => panic!("digits are ASCII"),
};

const fn pair_digits() -> [u8; 200] {
    let mut d = [0u8; 200];
    let mut n = 0;
    while n < 100 {
        d[2 * n] = b'0' + (n / 10) as u8;
        d[2 * n + 1] = b'0' + (n % 10) as u8;
        n += 1;
    }
    d
}

/// Writes `v` in decimal, with a `-` when negative.
fn signed(out: &mut impl Write, v: i64) -> fmt::Result {
    if v < 0 {
        out.write_char('-')?;
    }
    decimal(out, v.unsigned_abs())
}

fn operand(out: &mut impl Write, o: &Operand) -> fmt::Result {
    match o {
        Operand::Reg(r) => reg(out, *r),
        Operand::Imm(v) => signed(out, *v),
        Operand::F32(b) => write!(out, "0f{b:08X}"),
        Operand::F64(b) => write!(out, "0d{b:016X}"),
        Operand::Special(s) => {
            let axis = |a: &u8| ["x", "y", "z"].get(*a as usize).copied().unwrap_or("x");
            match s {
                Special::TidX => out.write_str("%tid.x"),
                Special::ClusterId(a) => write!(out, "%clusterid.{}", axis(a)),
                Special::CtaId(a) => write!(out, "%ctaid.{}", axis(a)),
                Special::ClusterCtaRank => out.write_str("%cluster_ctarank"),
                Special::NClusterId(a) => write!(out, "%nclusterid.{}", axis(a)),
                Special::NCtaId(a) => write!(out, "%nctaid.{}", axis(a)),
            }
        }
        Operand::Addr(r, off) => {
            out.write_char('[')?;
            reg(out, *r)?;
            // `[%rd1+-8]` for a negative offset, as NVIDIA writes it:
            // ptxas rejects `[%rd1-8]`.
            if *off != 0 {
                out.write_char('+')?;
                signed(out, *off)?;
            }
            out.write_char(']')
        }
        Operand::Param(p) => write!(out, "[{p}]"),
        Operand::Vec(v) => {
            out.write_char('{')?;
            for (k, r) in v.iter().enumerate() {
                if k > 0 {
                    out.write_str(", ")?;
                }
                reg(out, *r)?;
            }
            out.write_char('}')
        }
        Operand::Label(l) => write!(out, "$L__BB0_{l}"),
        Operand::Symbol(s) => out.write_str(s),
        Operand::Global(s) => out.write_str(s),
    }
}

#[cfg(test)]
mod tests {
    use super::{decimal, signed};

    #[test]
    fn writes_numbers_as_format_does() {
        let mut cases: Vec<u64> = (0..=1000).collect();
        cases.extend([9999, 10_000, 10_001, 123_456_789, u64::MAX / 7, u64::MAX]);
        for v in cases {
            let mut s = String::new();
            decimal(&mut s, v).unwrap();
            assert_eq!(s, v.to_string());
        }
        for v in [0, -1, -10, -99, -100, i64::MIN, i64::MAX] {
            let mut s = String::new();
            signed(&mut s, v).unwrap();
            assert_eq!(s, v.to_string());
        }
    }
}
