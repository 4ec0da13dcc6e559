//! The host relocatable object embedding a cubin.
use object::write::{Object, StandardSection, Symbol, SymbolSection};
use object::{
    Architecture, BinaryFormat, Endianness, SectionKind, SymbolFlags, SymbolKind, SymbolScope,
};

use super::ElfError;
use crate::options::{HostArch, HostOs};

/// The section holding the cubin bytes (read-only, allocated).
/// cbindgen:ignore
pub const CUBIN_SECTION: &str = ".tileiras.cubin";
/// The section holding the SASS text (not loaded; for tools), as NVIDIA's
/// tileiras names it.
/// cbindgen:ignore
pub const SASS_SECTION: &str = ".nvdisasm";
/// Global symbol at the cubin's first byte; its size is the cubin's length.
/// cbindgen:ignore
pub const CUBIN_SYMBOL: &str = "tileiras_cubin";
/// Global symbol of a little-endian `u64` holding the cubin's length.
/// cbindgen:ignore
pub const CUBIN_SIZE_SYMBOL: &str = "tileiras_cubin_size";
/// Alignment of the cubin in its section.
/// cbindgen:ignore
pub const CUBIN_ALIGN: u64 = 16;

/// Builds the relocatable object for `arch`/`os` that embeds `cubin` (and
/// `sass` in [`SASS_SECTION`] when given).
pub fn host_object(
    cubin: &[u8],
    sass: Option<&str>,
    arch: HostArch,
    os: HostOs,
) -> Result<Vec<u8>, ElfError> {
    let format = match os {
        HostOs::Linux => BinaryFormat::Elf,
        HostOs::Windows => BinaryFormat::Coff,
    };
    let architecture = match arch {
        HostArch::X86_64 => Architecture::X86_64,
        HostArch::Aarch64 => Architecture::Aarch64,
    };
    let mut obj = Object::new(format, architecture, Endianness::Little);

    let cubin_sec = obj.add_section(
        Vec::new(),
        CUBIN_SECTION.as_bytes().to_vec(),
        SectionKind::ReadOnlyData,
    );
    let offset = obj.append_section_data(cubin_sec, cubin, CUBIN_ALIGN);
    obj.add_symbol(Symbol {
        name: CUBIN_SYMBOL.as_bytes().to_vec(),
        value: offset,
        size: cubin.len() as u64,
        kind: SymbolKind::Data,
        scope: SymbolScope::Dynamic,
        weak: false,
        section: SymbolSection::Section(cubin_sec),
        flags: SymbolFlags::None,
    });

    let rodata = obj.section_id(StandardSection::ReadOnlyData);
    let size_off = obj.append_section_data(rodata, &(cubin.len() as u64).to_le_bytes(), 8);
    obj.add_symbol(Symbol {
        name: CUBIN_SIZE_SYMBOL.as_bytes().to_vec(),
        value: size_off,
        size: 8,
        kind: SymbolKind::Data,
        scope: SymbolScope::Dynamic,
        weak: false,
        section: SymbolSection::Section(rodata),
        flags: SymbolFlags::None,
    });

    if let Some(sass) = sass {
        let s = obj.add_section(
            Vec::new(),
            SASS_SECTION.as_bytes().to_vec(),
            SectionKind::Other,
        );
        obj.append_section_data(s, sass.as_bytes(), 1);
    }
    obj.write()
        .map_err(|e| ElfError(format!("cannot write the host object: {e}")))
}
