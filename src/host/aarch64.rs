//! AArch64 code for the callbacks (AAPCS64: the parameter buffer of an
//! argument-change callback arrives in `x3`, its fourth argument).
//!
//! Scratch registers 0..8 are `x8..x15`; `x16` addresses buffer offsets
//! beyond the scaled 12-bit immediates of loads and stores. Each operation
//! has one fixed form; `tests/host_callbacks.rs` disassembles every form.

use super::object::{Code, Reloc, RelocTarget};
use super::program::{Op, Program, Reg};

/// `x3`, the buffer.
const X3: u32 = 3;
/// `x16`, the address temporary.
const X16: u32 = 16;
/// `xzr` / `sp` in register fields.
const ZR: u32 = 31;

fn hw(r: Reg) -> u32 {
    8 + u32::from(r.0)
}

/// `movz`/`movk` of a 64-bit constant into `rd` (the fewest needed).
fn constant(out: &mut Vec<u32>, rd: u32, value: u64) {
    let chunks: Vec<(u32, u32)> = (0..4)
        .map(|h| (h, ((value >> (16 * h)) & 0xffff) as u32))
        .filter(|(h, c)| *c != 0 || *h == 0)
        .collect();
    for (i, (h, c)) in chunks.iter().enumerate() {
        let base = if i == 0 { 0xd280_0000 } else { 0xf280_0000 };
        out.push(base | (h << 21) | (c << 5) | rd);
    }
}

/// A load or store of `rt` at `[x3 + off]`: the scaled immediate form
/// (`imm_op`) where `off` fits, else `x16 = off` and the register form
/// (`reg_op`).
fn mem(out: &mut Vec<u32>, imm_op: u32, reg_op: u32, scale: u32, rt: u32, off: u32) {
    if off % scale == 0 && off / scale < 4096 {
        out.push(imm_op | ((off / scale) << 10) | (X3 << 5) | rt);
    } else {
        constant(out, X16, u64::from(off));
        out.push(reg_op | (X16 << 16) | (X3 << 5) | rt);
    }
}

/// Appends the encoding of `op`.
pub fn encode(out: &mut Vec<u32>, op: &Op) {
    let rrr = |base: u32, d: Reg, s: Reg| base | (hw(s) << 16) | (hw(d) << 5) | hw(d);
    match *op {
        // ldr wt, [x3, #off] (zero-extends)
        Op::LoadU32 { dst, off } => mem(out, 0xb940_0000, 0xb860_6800, 4, hw(dst), off),
        // ldr xt, [x3, #off]
        Op::LoadU64 { dst, off } => mem(out, 0xf940_0000, 0xf860_6800, 8, hw(dst), off),
        // str xt, [x3, #off]
        Op::Store64 { src, off } => mem(out, 0xf900_0000, 0xf820_6800, 8, hw(src), off),
        Op::Const { dst, value } => constant(out, hw(dst), value),
        // add/and/orr xd, xd, xs
        Op::Add(d, s) => out.push(rrr(0x8b00_0000, d, s)),
        Op::And(d, s) => out.push(rrr(0x8a00_0000, d, s)),
        Op::Or(d, s) => out.push(rrr(0xaa00_0000, d, s)),
        // mul xd, xd, xs (madd with xzr)
        Op::Mul(d, s) => out.push(rrr(0x9b00_7c00, d, s)),
        // lsl xd, xd, #n = ubfm xd, xd, #(-n mod 64), #(63 - n)
        Op::Shl(d, n) => {
            let n = u32::from(n);
            out.push(
                0xd340_0000 | (((64 - n) % 64) << 16) | ((63 - n) << 10) | (hw(d) << 5) | hw(d),
            )
        }
        // lsr xd, xd, #n = ubfm xd, xd, #n, #63
        Op::Shr(d, n) => {
            out.push(0xd340_0000 | (u32::from(n) << 16) | (63 << 10) | (hw(d) << 5) | hw(d))
        }
        // cmp xa, xb; cset xd, hs
        Op::SetGeU { dst, a, b } => {
            out.push(0xeb00_0000 | (hw(b) << 16) | (hw(a) << 5) | ZR);
            out.push(0x9a9f_37e0 | hw(dst));
        }
    }
}

/// Little-endian bytes of instruction words.
fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// An argument-change callback: `program`, then `return 0`.
pub fn callback(program: &Program) -> Vec<u8> {
    let mut out = Vec::new();
    for op in &program.ops {
        encode(&mut out, op);
    }
    out.extend([0x5280_0000, 0xd65f_03c0]); // mov w0, #0; ret
    bytes(&out)
}

/// `__CUDA_TILEIR_ON_PRE_LOAD(table, context, n, out)`, as
/// [`super::x86_64::on_pre_load`]: 1 for `n = 0`; for `n < 2` a call of
/// `table[6](context, 16, &local)`; then the copy with word 2 zeroed, its
/// address through `out`, and 0.
pub fn on_pre_load() -> Code {
    let mut w: Vec<u32> = vec![
        0,           // cbz w2, one (patched below)
        0xa9be_7bfd, // stp x29, x30, [sp, #-32]!
        0xf900_0bf3, // str x19, [sp, #16]
        0xaa03_03f3, // mov x19, x3
        0x7100_045f, // cmp w2, #1
        0,           // b.gt copy (patched below)
        0xf940_1808, // ldr x8, [x0, #48]
        0xaa01_03e0, // mov x0, x1
        0x5280_0201, // mov w1, #16
        0x9100_73e2, // add x2, sp, #28
        0xd63f_0100, // blr x8
    ];
    let copy = w.len() as u32;
    w[5] = 0x5400_000c | ((copy - 5) << 5); // b.gt
    let mut relocs = Vec::new();
    let mut reloc = |w: &Vec<u32>, target, r_type: object::elf::RelocationType| {
        relocs.push(Reloc {
            offset: 4 * w.len() as u64,
            target,
            addend: 0,
            r_type,
        })
    };
    reloc(
        &w,
        RelocTarget::Callbacks,
        object::elf::R_AARCH64_ADR_GOT_PAGE,
    );
    w.push(0x9000_0008); // adrp x8, :got:CALLBACKS
    reloc(
        &w,
        RelocTarget::Callbacks,
        object::elf::R_AARCH64_LD64_GOT_LO12_NC,
    );
    w.push(0xf940_0108); // ldr x8, [x8, :got_lo12:CALLBACKS]
    reloc(
        &w,
        RelocTarget::Copy,
        object::elf::R_AARCH64_ADR_PREL_PG_HI21,
    );
    w.push(0x9000_000b); // adrp x11, copy
    reloc(
        &w,
        RelocTarget::Copy,
        object::elf::R_AARCH64_ADD_ABS_LO12_NC,
    );
    w.push(0x9100_016b); // add x11, x11, :lo12:copy
    for i in 0..9u32 {
        if i == 2 {
            w.push(0xf900_0000 | (2 << 10) | (11 << 5) | ZR); // str xzr, [x11, #16]
        } else {
            w.push(0xf940_0000 | (i << 10) | (8 << 5) | 9); // ldr x9, [x8, #8i]
            w.push(0xf900_0000 | (i << 10) | (11 << 5) | 9); // str x9, [x11, #8i]
        }
    }
    w.extend([
        0xf900_026b, // str x11, [x19]
        0x5280_0000, // mov w0, #0
        0xf940_0bf3, // ldr x19, [sp, #16]
        0xa8c2_7bfd, // ldp x29, x30, [sp], #32
        0xd65f_03c0, // ret
    ]);
    let one = w.len() as u32;
    w[0] = 0x3400_0002 | (one << 5); // cbz w2, one
    w.extend([0x5280_0020, 0xd65f_03c0]); // mov w0, #1; ret
    Code {
        bytes: bytes(&w),
        relocs,
    }
}
