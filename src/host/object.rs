//! The relocatable ELF object holding the callbacks, with the sections,
//! symbols and structures `docs/nv-host-callbacks.md` records of NVIDIA's:
//! code (`.ltext` on x86-64, large code model, `.text` on AArch64), the
//! kernels' names (`.lrodata` / `.rodata`), the callbacks structure and
//! kernel table (`.data.rel.ro`), the writable copy `ON_PRE_LOAD` returns
//! (`.lbss` / `.bss`) and an empty `.note.GNU-stack`.

use object::elf;
use object::write::{Object, Relocation, SectionId, Symbol, SymbolId, SymbolSection};
use object::{
    Architecture, BinaryFormat, Endianness, RelocationFlags, SectionFlags, SectionKind,
    SymbolFlags, SymbolKind, SymbolScope,
};

use super::{aarch64, x86_64, Kernel, CALLBACKS_SIZE, KERNEL_ENTRY_SIZE};
use crate::options::HostArch;

/// What a relocation in the code refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelocTarget {
    /// `_GLOBAL_OFFSET_TABLE_`.
    GotPc,
    /// `__CUDA_TILEIR_CALLBACKS`.
    Callbacks,
    /// `__CUDA_TILEIR_CALLBACKS_ON_PRE_LOAD`, the writable copy.
    Copy,
}

/// A relocation in a piece of code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reloc {
    /// Offset in the code.
    pub offset: u64,
    /// What it refers to.
    pub target: RelocTarget,
    /// Addend.
    pub addend: i64,
    /// ELF relocation type.
    pub r_type: object::elf::RelocationType,
}

/// Machine code with its relocations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Code {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Relocations in them.
    pub relocs: Vec<Reloc>,
}

/// `SHF_X86_64_LARGE`: a section of the large code model.
const SHF_X86_64_LARGE: u64 = 0x1000_0000;

/// One ELF section to add.
fn section(
    obj: &mut Object<'_>,
    name: &str,
    kind: SectionKind,
    sh_type: elf::SectionType,
    sh_flags: u64,
) -> SectionId {
    let id = obj.add_section(Vec::new(), name.as_bytes().to_vec(), kind);
    obj.section_mut(id).flags = SectionFlags::Elf {
        sh_type,
        sh_flags: elf::SectionFlags(sh_flags),
    };
    id
}

/// A defined symbol.
fn symbol(
    obj: &mut Object<'_>,
    name: String,
    section: SectionId,
    value: u64,
    size: u64,
    kind: SymbolKind,
    global: bool,
) -> SymbolId {
    obj.add_symbol(Symbol {
        name: name.into_bytes(),
        value,
        size,
        kind,
        scope: if global {
            SymbolScope::Dynamic
        } else {
            SymbolScope::Compilation
        },
        weak: false,
        section: SymbolSection::Section(section),
        flags: SymbolFlags::None,
    })
}

/// Writes the object for `arch` (`abi`: the x86-64 convention) with one
/// argument-change callback per kernel (their code already encoded).
pub fn write(
    kernels: &[(Kernel, Vec<u8>)],
    arch: HostArch,
    abi: x86_64::Abi,
) -> Result<Vec<u8>, String> {
    let (architecture, large, abs64) = match arch {
        HostArch::X86_64 => (Architecture::X86_64, SHF_X86_64_LARGE, elf::R_X86_64_64),
        HostArch::Aarch64 => (Architecture::Aarch64, 0, elf::R_AARCH64_ABS64),
    };
    let prefix = if large != 0 { ".l" } else { "." };
    let mut obj = Object::new(BinaryFormat::Elf, architecture, Endianness::Little);
    obj.add_file_symbol(b"tileiras-host-callbacks".to_vec());
    let (alloc, write, exec) = (elf::SHF_ALLOC.0, elf::SHF_WRITE.0, elf::SHF_EXECINSTR.0);
    let text = section(
        &mut obj,
        &format!("{prefix}text"),
        SectionKind::Text,
        elf::SHT_PROGBITS,
        alloc | exec | large,
    );
    let bss = section(
        &mut obj,
        &format!("{prefix}bss"),
        SectionKind::UninitializedData,
        elf::SHT_NOBITS,
        alloc | write | large,
    );
    let rodata = section(
        &mut obj,
        &format!("{prefix}rodata"),
        SectionKind::ReadOnlyData,
        elf::SHT_PROGBITS,
        alloc | large,
    );
    let relro = section(
        &mut obj,
        ".data.rel.ro",
        SectionKind::ReadOnlyDataWithRel,
        elf::SHT_PROGBITS,
        alloc | write,
    );
    section(
        &mut obj,
        ".note.GNU-stack",
        SectionKind::Other,
        elf::SHT_PROGBITS,
        0,
    );

    // the callbacks, then ON_PRE_LOAD
    let mut callbacks = Vec::new();
    for (n, (_, code)) in kernels.iter().enumerate() {
        let at = obj.append_section_data(text, code, 16);
        callbacks.push(symbol(
            &mut obj,
            format!("__CUDA_TILEIR_FUNC_ON_ARGUMENTS_CHANGE_{n}"),
            text,
            at,
            code.len() as u64,
            SymbolKind::Text,
            false,
        ));
    }
    let pre = match arch {
        HostArch::X86_64 => x86_64::on_pre_load(abi),
        HostArch::Aarch64 => aarch64::on_pre_load(),
    };
    let pre_at = obj.append_section_data(text, &pre.bytes, 16);
    let pre_sym = symbol(
        &mut obj,
        "__CUDA_TILEIR_ON_PRE_LOAD".into(),
        text,
        pre_at,
        pre.bytes.len() as u64,
        SymbolKind::Text,
        true,
    );

    // the kernels' names
    let mut names = Vec::new();
    for (n, (k, _)) in kernels.iter().enumerate() {
        let mut s = k.name.as_bytes().to_vec();
        s.push(0);
        let at = obj.append_section_data(rodata, &s, 1);
        names.push(symbol(
            &mut obj,
            format!("__CUDA_TILEIR_FUNC_NAME_{n}"),
            rodata,
            at,
            s.len() as u64,
            SymbolKind::Data,
            false,
        ));
    }

    // the kernel table and the callbacks structure
    let table_size = (KERNEL_ENTRY_SIZE * kernels.len()) as u64;
    let table_at = obj.append_section_data(relro, &vec![0; table_size as usize], 16);
    let table = symbol(
        &mut obj,
        "__CUDA_TILEIR_FUNC_CALLBACKS".into(),
        relro,
        table_at,
        table_size,
        SymbolKind::Data,
        false,
    );
    let mut structure = [0u64; CALLBACKS_SIZE / 8];
    structure[0] = 2;
    structure[4] = KERNEL_ENTRY_SIZE as u64;
    structure[6] = kernels.len() as u64;
    structure[7] = 2;
    let bytes: Vec<u8> = structure.iter().flat_map(|w| w.to_le_bytes()).collect();
    let cb_at = obj.append_section_data(relro, &bytes, 16);
    let cb = symbol(
        &mut obj,
        "__CUDA_TILEIR_CALLBACKS".into(),
        relro,
        cb_at,
        CALLBACKS_SIZE as u64,
        SymbolKind::Data,
        true,
    );
    let copy_at = obj.append_section_bss(bss, CALLBACKS_SIZE as u64, 16);
    let copy = symbol(
        &mut obj,
        "__CUDA_TILEIR_CALLBACKS_ON_PRE_LOAD".into(),
        bss,
        copy_at,
        CALLBACKS_SIZE as u64,
        SymbolKind::Data,
        false,
    );
    let pointer = |obj: &mut Object<'_>, offset: u64, symbol: SymbolId| {
        obj.add_relocation(
            relro,
            Relocation {
                offset,
                symbol,
                addend: 0,
                flags: RelocationFlags::Elf { r_type: abs64 },
            },
        )
        .map_err(|e| e.to_string())
    };
    for n in 0..kernels.len() {
        let entry = table_at + (KERNEL_ENTRY_SIZE * n) as u64;
        pointer(&mut obj, entry, names[n])?;
        pointer(&mut obj, entry + 40, callbacks[n])?;
    }
    pointer(&mut obj, cb_at + 40, table)?;
    pointer(&mut obj, cb_at + 64, pre_sym)?;

    // ON_PRE_LOAD's own relocations
    let got = (arch == HostArch::X86_64).then(|| {
        obj.add_symbol(Symbol {
            name: b"_GLOBAL_OFFSET_TABLE_".to_vec(),
            value: 0,
            size: 0,
            kind: SymbolKind::Unknown,
            scope: SymbolScope::Dynamic,
            weak: false,
            section: SymbolSection::Undefined,
            flags: SymbolFlags::None,
        })
    });
    for r in &pre.relocs {
        let symbol = match r.target {
            RelocTarget::GotPc => got.ok_or("a GOT-relative relocation on AArch64")?,
            RelocTarget::Callbacks => cb,
            RelocTarget::Copy => copy,
        };
        obj.add_relocation(
            text,
            Relocation {
                offset: pre_at + r.offset,
                symbol,
                addend: r.addend,
                flags: RelocationFlags::Elf { r_type: r.r_type },
            },
        )
        .map_err(|e| e.to_string())?;
    }
    obj.write().map_err(|e| e.to_string())
}
