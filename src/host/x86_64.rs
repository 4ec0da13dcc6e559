//! x86-64 code for the callbacks, for the System V convention (Linux: the
//! parameter buffer of an argument-change callback, its fourth argument,
//! arrives in `rcx`) or the Microsoft x64 one (Windows hosts: in `r9`).
//!
//! Scratch registers 0..6 are caller-saved in both conventions: `rax, rdx,
//! rsi, rdi, r8, r9` (System V), `rax, rdx, rcx, r8, r10, r11`
//! (Microsoft). Each operation has one fixed form;
//! `tests/host_callbacks.rs` disassembles every form with objdump.

use super::object::{Code, Reloc, RelocTarget};
use super::program::{Op, Program, Reg};

/// A calling convention: where the buffer arrives and the scratch
/// registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abi {
    /// System V (Linux).
    SysV,
    /// Microsoft x64 (Windows).
    Win64,
}

impl Abi {
    /// The register holding the buffer.
    fn base(self) -> u8 {
        match self {
            Abi::SysV => 1,  // rcx
            Abi::Win64 => 9, // r9
        }
    }

    /// The hardware number of scratch register `r`.
    fn hw(self, r: Reg) -> u8 {
        let regs: [u8; 6] = match self {
            Abi::SysV => [0, 2, 6, 7, 8, 9],
            Abi::Win64 => [0, 2, 1, 8, 10, 11],
        };
        regs[r.0 as usize]
    }
}

/// REX prefix with W and the high bits of `reg` (ModRM.reg) and `rm`.
fn rex_w(reg: u8, rm: u8) -> u8 {
    0x48 | ((reg >> 3) << 2) | (rm >> 3)
}

/// ModRM byte.
fn modrm(md: u8, reg: u8, rm: u8) -> u8 {
    (md << 6) | ((reg & 7) << 3) | (rm & 7)
}

/// `op r, [base + disp32]` (wide: REX.W) with the given opcode.
fn mem(out: &mut Vec<u8>, wide: bool, opcode: u8, reg: u8, base: u8, off: u32) {
    let rex = 0x40 | (u8::from(wide) << 3) | ((reg >> 3) << 2) | (base >> 3);
    if rex != 0x40 {
        out.push(rex);
    }
    out.extend([opcode, modrm(2, reg, base)]);
    out.extend(off.to_le_bytes());
}

/// Appends the encoding of `op` for `abi`.
pub fn encode(out: &mut Vec<u8>, op: &Op, abi: Abi) {
    let hw = |r: Reg| abi.hw(r);
    let base = abi.base();
    match *op {
        // mov r32, [base + off] (zero-extends)
        Op::LoadU32 { dst, off } => mem(out, false, 0x8b, hw(dst), base, off),
        // mov r64, [base + off]
        Op::LoadU64 { dst, off } => mem(out, true, 0x8b, hw(dst), base, off),
        // mov [base + off], r64
        Op::Store64 { src, off } => mem(out, true, 0x89, hw(src), base, off),
        // movabs r64, imm64
        Op::Const { dst, value } => {
            let d = hw(dst);
            out.extend([rex_w(0, d), 0xb8 + (d & 7)]);
            out.extend(value.to_le_bytes());
        }
        // add/and/or r/m64, r64
        Op::Add(d, s) => out.extend([rex_w(hw(s), hw(d)), 0x01, modrm(3, hw(s), hw(d))]),
        Op::And(d, s) => out.extend([rex_w(hw(s), hw(d)), 0x21, modrm(3, hw(s), hw(d))]),
        Op::Or(d, s) => out.extend([rex_w(hw(s), hw(d)), 0x09, modrm(3, hw(s), hw(d))]),
        // imul r64, r/m64
        Op::Mul(d, s) => out.extend([rex_w(hw(d), hw(s)), 0x0f, 0xaf, modrm(3, hw(d), hw(s))]),
        // shl/shr r64, imm8
        Op::Shl(d, n) => out.extend([rex_w(0, hw(d)), 0xc1, modrm(3, 4, hw(d)), n]),
        Op::Shr(d, n) => out.extend([rex_w(0, hw(d)), 0xc1, modrm(3, 5, hw(d)), n]),
        // xor dst32, dst32; cmp a, b; setae dst8
        Op::SetGeU { dst, a, b } => {
            assert!(dst != a && dst != b, "SetGeU's destination is an operand");
            let (d, a, b) = (hw(dst), hw(a), hw(b));
            if d >= 8 {
                out.push(0x45);
            }
            out.extend([0x31, modrm(3, d, d)]);
            out.extend([rex_w(b, a), 0x39, modrm(3, b, a)]);
            // a REX prefix reaches sil/dil and r8b..r15b
            if d >= 4 {
                out.push(0x40 | (d >> 3));
            }
            out.extend([0x0f, 0x93, modrm(3, 0, d)]);
        }
    }
}

/// An argument-change callback: `program`, then `return 0`.
pub fn callback(program: &Program, abi: Abi) -> Vec<u8> {
    let mut out = Vec::new();
    for op in &program.ops {
        encode(&mut out, op, abi);
    }
    out.extend([0x31, 0xc0, 0xc3]); // xor eax, eax; ret
    out
}

/// `__CUDA_TILEIR_ON_PRE_LOAD(table, context, n, out)`: with `n = 0`
/// returns 1; with `n < 2` otherwise calls `table[6](context, 16, &local)`;
/// then copies the callbacks structure into the writable copy with word 2
/// zeroed, stores the copy's address through `out` and returns 0. The
/// addresses come through the GOT, as NVIDIA's large-model code gets them.
pub fn on_pre_load(abi: Abi) -> Code {
    match abi {
        Abi::SysV => on_pre_load_sysv(),
        Abi::Win64 => on_pre_load_win64(),
    }
}

/// The GOT into `rbx`, then `rax` = `&CALLBACKS` and `dst` = the copy
/// (`dst`'s movabs opcode bytes and `lea dst, [rbx + dst]` given).
fn got_addresses(c: &mut Vec<u8>, relocs: &mut Vec<Reloc>, movabs_dst: [u8; 2], lea_dst: [u8; 4]) {
    // rbx = the GOT: lea rax, [rip - 7]; movabs rbx, GOT + 9 - P; add rbx, rax
    c.extend([0x48, 0x8d, 0x05, 0xf9, 0xff, 0xff, 0xff]);
    c.extend([0x48, 0xbb]);
    relocs.push(Reloc {
        offset: c.len() as u64,
        target: RelocTarget::GotPc,
        addend: 9,
        r_type: object::elf::R_X86_64_GOTPC64,
    });
    c.extend([0; 8]);
    c.extend([0x48, 0x01, 0xc3]); // add rbx, rax
                                  // rax = &CALLBACKS through its GOT entry
    c.extend([0x48, 0xb8]);
    relocs.push(Reloc {
        offset: c.len() as u64,
        target: RelocTarget::Callbacks,
        addend: 0,
        r_type: object::elf::R_X86_64_GOT64,
    });
    c.extend([0; 8]);
    c.extend([0x48, 0x8b, 0x04, 0x03]); // mov rax, [rbx + rax]
                                        // dst = the copy: movabs dst, copy - GOT; lea dst, [rbx + dst]
    c.extend(movabs_dst);
    relocs.push(Reloc {
        offset: c.len() as u64,
        target: RelocTarget::Copy,
        addend: 0,
        r_type: object::elf::R_X86_64_GOTOFF64,
    });
    c.extend([0; 8]);
    c.extend(lea_dst);
}

/// The copy of the nine words at `[rax]` to `[dst]`, word 2 zeroed, through
/// `tmp` (`modrm_load`: tmp's ModRM for `[rax + disp8]`, `modrm_store`: for
/// `[dst + disp8]`, `modrm_zero`: `/0` for `[dst + disp8]`).
fn copy_words(c: &mut Vec<u8>, modrm_load: u8, modrm_store: u8, modrm_zero: u8) {
    for w in 0..9u8 {
        if w == 2 {
            c.extend([0x48, 0xc7, modrm_zero, 0x10, 0, 0, 0, 0]); // mov qword [dst + 16], 0
        } else {
            c.extend([0x48, 0x8b, modrm_load, 8 * w]); // mov tmp, [rax + 8w]
            c.extend([0x48, 0x89, modrm_store, 8 * w]); // mov [dst + 8w], tmp
        }
    }
}

/// System V: `(rdi, rsi, edx, rcx)`; `rbx` and `r14` saved.
fn on_pre_load_sysv() -> Code {
    let mut c = Vec::new();
    let mut relocs = Vec::new();
    c.extend([0x53, 0x41, 0x56]); // push rbx; push r14
    c.extend([0x48, 0x83, 0xec, 0x08]); // sub rsp, 8 (the call's stack aligned)
    c.extend([0x85, 0xd2]); // test edx, edx
    c.extend([0x75, 0x0d]); // jne +13
    c.extend([0xb8, 1, 0, 0, 0]); // mov eax, 1
    c.extend([0x48, 0x83, 0xc4, 0x08, 0x41, 0x5e, 0x5b, 0xc3]); // add rsp, 8; pop r14; pop rbx; ret
    c.extend([0x49, 0x89, 0xce]); // mov r14, rcx
    c.extend([0x83, 0xfa, 0x02]); // cmp edx, 2
    c.extend([0x7d, 0x13]); // jge +19
    c.extend([0x48, 0x89, 0xf8]); // mov rax, rdi
    c.extend([0x48, 0x89, 0xf7]); // mov rdi, rsi
    c.extend([0xbe, 0x10, 0, 0, 0]); // mov esi, 16
    c.extend([0x48, 0x8d, 0x54, 0x24, 0x04]); // lea rdx, [rsp + 4]
    c.extend([0xff, 0x50, 0x30]); // call [rax + 0x30]
                                  // rsi = the copy
    got_addresses(&mut c, &mut relocs, [0x48, 0xbe], [0x48, 0x8d, 0x34, 0x33]);
    copy_words(&mut c, 0x50, 0x56, 0x46); // through rdx
    c.extend([0x49, 0x89, 0x36]); // mov [r14], rsi
    c.extend([0x31, 0xc0]); // xor eax, eax
    c.extend([0x48, 0x83, 0xc4, 0x08, 0x41, 0x5e, 0x5b, 0xc3]); // add rsp, 8; pop r14; pop rbx; ret
    Code { bytes: c, relocs }
}

/// Microsoft x64: `(rcx, rdx, r8d, r9)`; `rbx` and `rsi` saved, 32 bytes
/// of shadow space for the call.
fn on_pre_load_win64() -> Code {
    let mut c = Vec::new();
    let mut relocs = Vec::new();
    c.extend([0x53, 0x56]); // push rbx; push rsi
    c.extend([0x48, 0x83, 0xec, 0x28]); // sub rsp, 40 (shadow space, aligned)
    c.extend([0x45, 0x85, 0xc0]); // test r8d, r8d
    c.extend([0x75, 0x0c]); // jne +12
    c.extend([0xb8, 1, 0, 0, 0]); // mov eax, 1
    c.extend([0x48, 0x83, 0xc4, 0x28, 0x5e, 0x5b, 0xc3]); // add rsp, 40; pop rsi; pop rbx; ret
    c.extend([0x4c, 0x89, 0xce]); // mov rsi, r9
    c.extend([0x41, 0x83, 0xf8, 0x02]); // cmp r8d, 2
    c.extend([0x7d, 0x13]); // jge +19
    c.extend([0x48, 0x89, 0xc8]); // mov rax, rcx
    c.extend([0x48, 0x89, 0xd1]); // mov rcx, rdx
    c.extend([0xba, 0x10, 0, 0, 0]); // mov edx, 16
    c.extend([0x4c, 0x8d, 0x44, 0x24, 0x24]); // lea r8, [rsp + 36]
    c.extend([0xff, 0x50, 0x30]); // call [rax + 0x30]
                                  // rdx = the copy
    got_addresses(&mut c, &mut relocs, [0x48, 0xba], [0x48, 0x8d, 0x14, 0x13]);
    copy_words(&mut c, 0x48, 0x4a, 0x42); // through rcx
    c.extend([0x48, 0x89, 0x16]); // mov [rsi], rdx
    c.extend([0x31, 0xc0]); // xor eax, eax
    c.extend([0x48, 0x83, 0xc4, 0x28, 0x5e, 0x5b, 0xc3]); // add rsp, 40; pop rsi; pop rbx; ret
    Code { bytes: c, relocs }
}
