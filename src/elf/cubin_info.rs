//! Reads per-kernel launch facts back from a cubin that ptxas wrote: the
//! `.nv.info` (module-wide) and `.nv.info.<kernel>` sections, and the size
//! of `.nv.shared.<kernel>`.
//!
//! `.nv.info*` sections are a sequence of attribute records, each a 4-byte
//! header `format: u8, attribute: u8, value: u16`; for format
//! [`EIFMT_SVAL`] `value` is the byte length of the payload that follows.
//! Attribute numbers are NVIDIA's `EIATTR_*` values (as `cuobjdump -elf`
//! names them), checked against ptxas 13.5 output in the tests.
use object::read::elf::{ElfFile64, SectionHeader};
use object::{Object, ObjectSection, ObjectSymbol};

use super::ElfError;

/// Record format: no value.
pub const EIFMT_NVAL: u8 = 1;
/// Record format: one-byte value in the header.
pub const EIFMT_BVAL: u8 = 2;
/// Record format: two-byte value in the header.
pub const EIFMT_HVAL: u8 = 3;
/// Record format: a payload of `value` bytes follows.
pub const EIFMT_SVAL: u8 = 4;
/// `.maxntid` (three `u32`).
pub const EIATTR_MAX_THREADS: u8 = 0x05;
/// `.reqntid` (three `u32`).
pub const EIATTR_REQNTID: u8 = 0x10;
/// One kernel parameter: index `u32`, ordinal `u16`, offset `u16`, flags
/// `u32` whose bits 18.. hold the size.
pub const EIATTR_KPARAM_INFO: u8 = 0x17;
/// Bytes of parameters in the constant bank (`u16`).
pub const EIATTR_CBANK_PARAM_SIZE: u8 = 0x19;
/// `.maxnreg` (`u16`).
pub const EIATTR_MAXREG_COUNT: u8 = 0x1b;
/// Registers per thread: symbol index `u32`, count `u32` (in `.nv.info`).
pub const EIATTR_REGCOUNT: u8 = 0x2f;
/// `.reqnctapercluster` (three `u32`).
pub const EIATTR_CTA_PER_CLUSTER: u8 = 0x3d;
/// `.explicitcluster` (no value).
pub const EIATTR_EXPLICIT_CLUSTER: u8 = 0x3e;
/// `.maxclusterrank` (`u32`).
pub const EIATTR_MAX_CLUSTER_RANK: u8 = 0x3f;
/// One visible kernel parameter, the form ptxas writes for an entry with
/// hidden parameters (tensor maps), which it does not list: index `u32`,
/// ordinal `u16`, offset `u16`, flags `u32` whose low 16 bits hold the
/// size (bit 26 marks a pointer). Measured on ptxas 13.5.
pub const EIATTR_KPARAM_INFO_V2: u8 = 0x45;

/// A kernel parameter as the cubin records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CubinParam {
    /// Position in the parameter list.
    pub ordinal: u32,
    /// Byte offset in the parameter space.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
}

/// Launch facts of one kernel of a cubin.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CubinKernel {
    /// Entry symbol name.
    pub name: String,
    /// Registers per thread ptxas allocated.
    pub registers: Option<u32>,
    /// Bytes of the kernel's `.nv.shared.<kernel>` section: its static
    /// shared memory, including what ptxas reserves for the system on
    /// sm_90 and newer.
    pub shared_bytes: u32,
    /// `.reqntid` recorded by ptxas.
    pub reqntid: Option<[u32; 3]>,
    /// `.maxntid` recorded by ptxas.
    pub maxntid: Option<[u32; 3]>,
    /// The register limit ptxas applied: `.maxnreg`, or 255 without it.
    pub maxnreg: Option<u32>,
    /// `.reqnctapercluster` recorded by ptxas.
    pub cluster: Option<[u32; 3]>,
    /// Whether `.explicitcluster` was recorded.
    pub explicit_cluster: bool,
    /// `.maxclusterrank` recorded by ptxas.
    pub max_cluster_rank: Option<u32>,
    /// Bytes of parameters.
    pub param_bytes: Option<u32>,
    /// Parameters, by ordinal.
    pub params: Vec<CubinParam>,
}

/// One `.nv.info` record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    /// Format (`EIFMT_*`).
    pub format: u8,
    /// Attribute (`EIATTR_*`).
    pub attribute: u8,
    /// The header value (length for [`EIFMT_SVAL`]).
    pub value: u16,
    /// Payload of an [`EIFMT_SVAL`] record, empty otherwise.
    pub payload: &'a [u8],
}

/// The records of one `.nv.info*` section.
pub fn records(data: &[u8]) -> Result<Vec<Record<'_>>, ElfError> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < data.len() {
        let Some(h) = data.get(at..at + 4) else {
            return Err(ElfError(format!(
                "truncated .nv.info record at offset {at}"
            )));
        };
        let (format, attribute, value) = (h[0], h[1], u16::from_le_bytes([h[2], h[3]]));
        at += 4;
        let payload = if format == EIFMT_SVAL {
            let end = at + usize::from(value);
            let p = data.get(at..end).ok_or_else(|| {
                ElfError(format!(
                    ".nv.info record at offset {} runs past the section",
                    at - 4
                ))
            })?;
            at = end;
            p
        } else {
            &[]
        };
        out.push(Record {
            format,
            attribute,
            value,
            payload,
        });
    }
    Ok(out)
}

fn u32_at(p: &[u8], i: usize) -> Option<u32> {
    p.get(i * 4..i * 4 + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn dims(p: &[u8]) -> Option<[u32; 3]> {
    Some([u32_at(p, 0)?, u32_at(p, 1)?, u32_at(p, 2)?])
}

/// The kernels of `cubin`, in symbol-table order, with what its
/// `.nv.info` sections record.
pub fn kernels(cubin: &[u8]) -> Result<Vec<CubinKernel>, ElfError> {
    let file = ElfFile64::<object::Endianness>::parse(cubin)
        .map_err(|e| ElfError(format!("cannot read cubin: {e}")))?;
    let mut out: Vec<CubinKernel> = Vec::new();
    for sec in file.sections() {
        let Ok(name) = sec.name() else { continue };
        let Some(kernel) = name.strip_prefix(".nv.info.") else {
            continue;
        };
        let data = sec
            .data()
            .map_err(|e| ElfError(format!("cannot read {name}: {e}")))?;
        let mut k = CubinKernel {
            name: kernel.to_string(),
            ..Default::default()
        };
        for r in records(data)? {
            let p = r.payload;
            match r.attribute {
                EIATTR_REQNTID => k.reqntid = dims(p),
                EIATTR_MAX_THREADS => k.maxntid = dims(p),
                EIATTR_CTA_PER_CLUSTER => k.cluster = dims(p),
                EIATTR_EXPLICIT_CLUSTER => k.explicit_cluster = true,
                EIATTR_MAX_CLUSTER_RANK => {
                    k.max_cluster_rank = u32_at(p, 0).or(Some(u32::from(r.value)))
                }
                EIATTR_MAXREG_COUNT => k.maxnreg = Some(u32::from(r.value)),
                EIATTR_CBANK_PARAM_SIZE => k.param_bytes = Some(u32::from(r.value)),
                EIATTR_KPARAM_INFO if p.len() >= 12 => {
                    let flags = u32_at(p, 2).unwrap_or(0);
                    k.params.push(CubinParam {
                        ordinal: u32::from(u16::from_le_bytes([p[4], p[5]])),
                        offset: u32::from(u16::from_le_bytes([p[6], p[7]])),
                        size: (flags >> 18) & 0x3fff,
                    });
                }
                EIATTR_KPARAM_INFO_V2 if p.len() >= 12 => {
                    let flags = u32_at(p, 2).unwrap_or(0);
                    k.params.push(CubinParam {
                        ordinal: u32::from(u16::from_le_bytes([p[4], p[5]])),
                        offset: u32::from(u16::from_le_bytes([p[6], p[7]])),
                        size: flags & 0xffff,
                    });
                }
                _ => {}
            }
        }
        k.params.sort_by_key(|p| p.ordinal);
        if let Some(s) = file.section_by_name(&format!(".nv.shared.{kernel}")) {
            k.shared_bytes = u32::try_from(s.size()).unwrap_or(u32::MAX);
        }
        out.push(k);
    }
    // Registers: `.nv.info` maps symbol indices to counts.
    if let Some(sec) = file.section_by_name(".nv.info") {
        let data = sec
            .data()
            .map_err(|e| ElfError(format!("cannot read .nv.info: {e}")))?;
        for r in records(data)? {
            if r.attribute != EIATTR_REGCOUNT {
                continue;
            }
            let (Some(sym), Some(count)) = (u32_at(r.payload, 0), u32_at(r.payload, 1)) else {
                continue;
            };
            let Ok(sym) = file.symbol_by_index(object::SymbolIndex(sym as usize)) else {
                continue;
            };
            let Ok(name) = sym.name() else { continue };
            if let Some(k) = out.iter_mut().find(|k| k.name == name) {
                k.registers = Some(count);
            }
        }
    }
    // Fall back to the register count ptxas keeps in `.text.<kernel>`'s
    // `sh_info` (bits 24..32) when `.nv.info` has none.
    let endian = file.endian();
    for k in out.iter_mut().filter(|k| k.registers.is_none()) {
        if let Some(s) = file.section_by_name(&format!(".text.{}", k.name)) {
            let info = s.elf_section_header().sh_info(endian);
            k.registers = Some(info >> 24);
        }
    }
    Ok(out)
}
