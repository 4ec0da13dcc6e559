//! Loading an x86-64 relocatable ELF object into memory of this process:
//! its allocated sections laid out in one shared anonymous mapping, a GOT
//! built after them, relocations applied, the code made executable.

use object::{
    Object, ObjectSection, ObjectSymbol, RelocationFlags, RelocationTarget, SectionFlags,
};
use std::collections::BTreeMap;

/// `sh_flags` bits and x86-64 relocation types (ELF numbers).
const SHF_ALLOC: u64 = 2;
const SHF_EXECINSTR: u64 = 4;
const R_X86_64_64: u32 = 1;
const R_X86_64_PC32: u32 = 2;
const R_X86_64_PLT32: u32 = 4;
const R_X86_64_GOTPCREL: u32 = 9;
const R_X86_64_32: u32 = 10;
const R_X86_64_32S: u32 = 11;
const R_X86_64_PC64: u32 = 24;
const R_X86_64_GOTOFF64: u32 = 25;
const R_X86_64_GOTPC32: u32 = 26;
const R_X86_64_GOT64: u32 = 27;
const R_X86_64_GOTPC64: u32 = 29;
const R_X86_64_GOTPCRELX: u32 = 41;
const R_X86_64_REX_GOTPCRELX: u32 = 42;

/// A mapping of this process (shared, so that a forked child's writes are
/// seen here); unmapped on drop.
pub(crate) struct Mapping {
    /// First byte.
    pub(crate) ptr: *mut u8,
    /// Length in bytes (whole pages).
    pub(crate) len: usize,
}

impl Mapping {
    /// A zeroed read-write mapping of at least `len` bytes, shared with
    /// forked children.
    pub(crate) fn new(len: usize) -> Result<Mapping, String> {
        let len = len.max(1).next_multiple_of(page());
        // SAFETY: an anonymous mapping; no file, no aliasing of Rust memory.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(format!("mmap: {}", std::io::Error::last_os_error()));
        }
        Ok(Mapping {
            ptr: ptr as *mut u8,
            len,
        })
    }

    /// The mapping's address.
    pub(crate) fn addr(&self) -> u64 {
        self.ptr as u64
    }

    /// The bytes at `addr..addr+len`, if inside the mapping.
    pub(crate) fn read(&self, addr: u64, len: usize) -> Option<Vec<u8>> {
        let off = addr.checked_sub(self.addr())? as usize;
        if off.checked_add(len)? > self.len {
            return None;
        }
        // SAFETY: the range lies inside the mapping, which lives as long as self.
        Some(unsafe { std::slice::from_raw_parts(self.ptr.add(off), len) }.to_vec())
    }

    /// Writes `bytes` at offset `off` (inside the mapping).
    pub(crate) fn write(&self, off: usize, bytes: &[u8]) {
        assert!(off + bytes.len() <= self.len);
        // SAFETY: the range lies inside the mapping.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.add(off), bytes.len()) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by mmap with this length.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// The page size.
fn page() -> usize {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(4096) as usize
}

/// A loaded object: its sections in memory, relocated, code executable.
pub struct Image {
    pub(crate) map: Mapping,
    /// Defined symbols: name to address.
    symbols: BTreeMap<String, Symbol>,
    /// The GOT's address and its number of entries.
    got: (u64, usize),
    /// The relocation kinds met, by ELF type, with their counts.
    relocations: BTreeMap<u32, usize>,
}

/// A defined symbol of the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symbol {
    /// Its address in this process.
    pub addr: u64,
    /// Its size in bytes, as the symbol table gives it.
    pub size: u64,
    /// Whether it is global (else local).
    pub global: bool,
    /// Whether it is a function (else data).
    pub function: bool,
}

/// The ELF name of an x86-64 relocation type.
pub fn relocation_name(r_type: u32) -> &'static str {
    match r_type {
        R_X86_64_64 => "R_X86_64_64",
        R_X86_64_PC32 => "R_X86_64_PC32",
        R_X86_64_PLT32 => "R_X86_64_PLT32",
        R_X86_64_GOTPCREL => "R_X86_64_GOTPCREL",
        R_X86_64_32 => "R_X86_64_32",
        R_X86_64_32S => "R_X86_64_32S",
        R_X86_64_PC64 => "R_X86_64_PC64",
        R_X86_64_GOTOFF64 => "R_X86_64_GOTOFF64",
        R_X86_64_GOTPC32 => "R_X86_64_GOTPC32",
        R_X86_64_GOT64 => "R_X86_64_GOT64",
        R_X86_64_GOTPC64 => "R_X86_64_GOTPC64",
        R_X86_64_GOTPCRELX => "R_X86_64_GOTPCRELX",
        R_X86_64_REX_GOTPCRELX => "R_X86_64_REX_GOTPCRELX",
        _ => "unsupported",
    }
}

impl Image {
    /// Loads the x86-64 relocatable ELF `bytes`.
    pub fn load(bytes: &[u8]) -> Result<Image, String> {
        let file = object::File::parse(bytes).map_err(|e| format!("not an object: {e}"))?;
        if file.architecture() != object::Architecture::X86_64
            || file.kind() != object::ObjectKind::Relocatable
        {
            return Err(format!(
                "not an x86-64 relocatable object ({:?}, {:?})",
                file.architecture(),
                file.kind()
            ));
        }
        // layout: code sections first (their pages made executable), then data, then the GOT
        let flags = |s: &object::Section| match s.flags() {
            SectionFlags::Elf { sh_flags, .. } => sh_flags.0,
            _ => 0,
        };
        let mut place: BTreeMap<usize, usize> = BTreeMap::new(); // section index -> offset
        let mut end = 0usize;
        for code in [true, false] {
            for s in file.sections() {
                let f = flags(&s);
                if f & SHF_ALLOC == 0 || (f & SHF_EXECINSTR != 0) != code {
                    continue;
                }
                let align = (s.align() as usize).max(1);
                end = end.next_multiple_of(align);
                place.insert(s.index().0, end);
                end += s.size() as usize;
            }
            if code {
                end = end.next_multiple_of(page());
            }
        }
        let nsyms = file.symbols().map(|s| s.index().0 + 1).max().unwrap_or(0);
        let got_off = end.next_multiple_of(16);
        let map = Mapping::new(got_off + 8 * nsyms.max(1))?;
        let base = map.addr();
        for s in file.sections() {
            if let Some(off) = place.get(&s.index().0) {
                if s.kind() != object::SectionKind::UninitializedData {
                    let data = s
                        .data()
                        .map_err(|e| format!("section {:?}: {e}", s.name()))?;
                    map.write(*off, data);
                }
            }
        }
        let got = base + got_off as u64;
        // symbol addresses (section symbols too), and the GOT entry of each
        let mut addr_of: BTreeMap<usize, u64> = BTreeMap::new();
        let mut symbols = BTreeMap::new();
        for sym in file.symbols() {
            let a = match sym.section_index() {
                Some(si) => match place.get(&si.0) {
                    Some(off) => base + *off as u64 + sym.address(),
                    None => continue,
                },
                None if sym.name() == Ok("_GLOBAL_OFFSET_TABLE_") => got,
                None => continue,
            };
            addr_of.insert(sym.index().0, a);
            map.write(got_off + 8 * sym.index().0, &a.to_le_bytes());
            if let (Ok(name), Some(_)) = (sym.name(), sym.section_index()) {
                if !name.is_empty() && sym.kind() != object::SymbolKind::Section {
                    symbols.insert(
                        name.to_string(),
                        Symbol {
                            addr: a,
                            size: sym.size(),
                            global: sym.is_global(),
                            function: sym.kind() == object::SymbolKind::Text,
                        },
                    );
                }
            }
        }
        let mut relocations = BTreeMap::new();
        for s in file.sections() {
            let Some(soff) = place.get(&s.index().0) else {
                continue;
            };
            for (off, r) in s.relocations() {
                let RelocationFlags::Elf { r_type } = r.flags() else {
                    return Err("relocation without an ELF type".into());
                };
                let r_type: u32 = r_type.0;
                let (s_addr, g) = match r.target() {
                    RelocationTarget::Symbol(i) => (
                        *addr_of.get(&i.0).ok_or_else(|| {
                            let name = file
                                .symbol_by_index(i)
                                .ok()
                                .and_then(|s| s.name().ok().map(str::to_string))
                                .unwrap_or_default();
                            format!("undefined symbol {name}")
                        })?,
                        8 * i.0 as u64,
                    ),
                    RelocationTarget::Section(i) => (
                        base + *place
                            .get(&i.0)
                            .ok_or("relocation against an unloaded section")?
                            as u64,
                        u64::MAX,
                    ),
                    _ => return Err("relocation target not a symbol".into()),
                };
                let a = r.addend() as u64;
                let p = base + (*soff as u64) + off;
                let at = soff + off as usize;
                let needs_got = || {
                    if g == u64::MAX {
                        Err("GOT relocation against a section".to_string())
                    } else {
                        Ok(g)
                    }
                };
                let v64 = match r_type {
                    R_X86_64_64 => Some(s_addr.wrapping_add(a)),
                    R_X86_64_PC64 => Some(s_addr.wrapping_add(a).wrapping_sub(p)),
                    R_X86_64_GOTOFF64 => Some(s_addr.wrapping_add(a).wrapping_sub(got)),
                    R_X86_64_GOT64 => Some(needs_got()?.wrapping_add(a)),
                    R_X86_64_GOTPC64 => Some(got.wrapping_add(a).wrapping_sub(p)),
                    _ => None,
                };
                if let Some(v) = v64 {
                    map.write(at, &v.to_le_bytes());
                } else {
                    let v = match r_type {
                        R_X86_64_PC32 | R_X86_64_PLT32 => {
                            s_addr.wrapping_add(a).wrapping_sub(p) as i64
                        }
                        R_X86_64_GOTPCREL | R_X86_64_GOTPCRELX | R_X86_64_REX_GOTPCRELX => {
                            (got + needs_got()?).wrapping_add(a).wrapping_sub(p) as i64
                        }
                        R_X86_64_GOTPC32 => got.wrapping_add(a).wrapping_sub(p) as i64,
                        R_X86_64_32S => s_addr.wrapping_add(a) as i64,
                        R_X86_64_32 => {
                            let v = s_addr.wrapping_add(a);
                            if v > u32::MAX as u64 {
                                return Err("R_X86_64_32 out of range".into());
                            }
                            v as u32 as i32 as i64
                        }
                        t => return Err(format!("unsupported relocation type {t}")),
                    };
                    let v32 = i32::try_from(v)
                        .map_err(|_| format!("{} out of range", relocation_name(r_type)))?;
                    map.write(at, &v32.to_le_bytes());
                }
                *relocations.entry(r_type).or_insert(0) += 1;
            }
        }
        let code_pages = place
            .iter()
            .filter_map(|(i, off)| {
                let s = file.section_by_index(object::SectionIndex(*i)).ok()?;
                (flags(&s) & SHF_EXECINSTR != 0).then(|| off + s.size() as usize)
            })
            .max()
            .unwrap_or(0)
            .next_multiple_of(page());
        if code_pages > 0 {
            // SAFETY: the range is the start of our own mapping.
            let rc = unsafe {
                libc::mprotect(
                    map.ptr as *mut libc::c_void,
                    code_pages,
                    libc::PROT_READ | libc::PROT_EXEC,
                )
            };
            if rc != 0 {
                return Err(format!("mprotect: {}", std::io::Error::last_os_error()));
            }
        }
        Ok(Image {
            map,
            symbols,
            got: (got, nsyms),
            relocations,
        })
    }

    /// The defined symbol `name`.
    pub fn symbol(&self, name: &str) -> Option<Symbol> {
        self.symbols.get(name).copied()
    }

    /// Every defined symbol, by name.
    pub fn symbols(&self) -> &BTreeMap<String, Symbol> {
        &self.symbols
    }

    /// The relocation types applied (ELF numbers) with their counts.
    pub fn relocations(&self) -> &BTreeMap<u32, usize> {
        &self.relocations
    }

    /// The GOT this loader built: its address and number of entries.
    pub fn got(&self) -> (u64, usize) {
        self.got
    }

    /// The image's bytes at `addr..addr+len`, if inside it.
    pub fn read(&self, addr: u64, len: usize) -> Option<Vec<u8>> {
        self.map.read(addr, len)
    }

    /// The little-endian u64 at `addr` of the image.
    pub fn u64_at(&self, addr: u64) -> Option<u64> {
        Some(u64::from_le_bytes(self.read(addr, 8)?.try_into().ok()?))
    }

    /// The NUL-terminated string at `addr` of the image.
    pub fn c_str(&self, addr: u64) -> Option<String> {
        let mut out = Vec::new();
        loop {
            let b = *self.read(addr + out.len() as u64, 1)?.first()?;
            if b == 0 {
                return String::from_utf8(out).ok();
            }
            out.push(b);
        }
    }
}
