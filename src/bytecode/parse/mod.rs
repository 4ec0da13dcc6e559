//! Section and op decoding: the header, string table and section walk here;
//! types, tables, debug info, attributes and ops in the submodules.
use super::layout::{AttrKind, Cond, Step};
use super::limits::*;
use super::reader::Reader;
use super::{
    table, ReadError, ReadErrorKind, Version, MAGIC, MAX_VERSION, MIN_VERSION, MLIR_MAGIC,
    NOT_BYTECODE,
};
use crate::ir::{
    types::DYNAMIC, Attr, Block, DebugAttr, DebugId, Handle, Module, Op, OpId, Opcode, Padding,
    Region, Scalar, Segment, Type, TypeId, Value, ValueDef, ValueId,
};

mod attrs;
mod debug;
mod ops;
mod tables;
mod type_rules;
mod types;

use attrs::*;
use debug::*;
use ops::*;
use tables::*;
use types::*;

const SEC_END: u8 = 0;
const SEC_STRING: u8 = 1;
const SEC_FUNC: u8 = 2;
const SEC_DEBUG: u8 = 3;
const SEC_CONSTANT: u8 = 4;
const SEC_TYPE: u8 = 5;
const SEC_GLOBAL: u8 = 6;
const SEC_PRODUCER: u8 = 7;
const NUM_SECTIONS: u8 = 8;

const V13_3: Version = Version::new(13, 3, 0);
const V13_4: Version = Version::new(13, 4, 0);
const V13_5: Version = Version::new(13, 5, 0);

/// Reads the header; returns the version.
fn read_header(r: &mut Reader<'_>) -> Result<Version, ReadError> {
    let data = r.data();
    if data.len() < MAGIC.len() || data[..MAGIC.len()] != MAGIC {
        let mlir = data.starts_with(&MLIR_MAGIC);
        let mut message = NOT_BYTECODE.to_string();
        if mlir {
            message.push_str(" (it looks like MLIR bytecode instead)");
        }
        let offset = data
            .iter()
            .zip(MAGIC.iter())
            .take_while(|(a, b)| a == b)
            .count();
        return Err(ReadError {
            offset,
            message,
            kind: ReadErrorKind::BadMagic { mlir },
            context: Vec::new(),
            shown_offset: None,
            located: true,
            silent: false,
        });
    }
    r.bytes(MAGIC.len())?;
    let header_err = |r: &Reader<'_>| r.err("failed to parse bytecode header");
    let major = r.u8().map_err(|_| header_err(r))?;
    let minor = r.u8().map_err(|_| header_err(r))?;
    if r.remaining() < 2 {
        return Err(header_err(r));
    }
    let tag = u16::from(r.u8()?) | (u16::from(r.u8()?) << 8);
    let v = Version::new(major, minor, tag);
    let base = Version::new(major, minor, 0);
    if base < MIN_VERSION || base > MAX_VERSION {
        return Err(ReadError {
            offset: r.offset(),
            message: format!("unsupported Tile IR bytecode version: {major}.{minor}"),
            kind: ReadErrorKind::UnsupportedVersion(v),
            context: Vec::new(),
            shown_offset: None,
            located: true,
            silent: false,
        });
    }
    if tag & !1 != 0 {
        let at = r.offset();
        return Err(r
            .err(format!(
                "header has unrecognized version tag bits (0x{:X});",
                tag & !1
            ))
            .with_context(at, "failed to parse bytecode header"));
    }
    if tag == 1 {
        if base != MAX_VERSION {
            return Err(r.err(format!(
                "public-preview bytecode at version {major}.{minor}.{tag} is not readable; preview content is only valid at the current version {MAX_VERSION}"
            )));
        }
        return Err(r.err("public-preview bytecode requires at least one enabled preview feature"));
    }
    Ok(v)
}

/// The string table.
struct Strings<'a> {
    offsets: Vec<u32>,
    data: &'a [u8],
}

impl<'a> Strings<'a> {
    fn get(&self, index: u64, at: usize) -> Result<String, ReadError> {
        let i = usize::try_from(index).unwrap_or(usize::MAX);
        if i >= self.offsets.len() {
            return Err(ReadError::unlocated(
                at,
                format!("string index {index} out of bounds"),
            ));
        }
        // Like NVIDIA's reader: the extent is [start, next start) taken as
        // a 32-bit length and clamped to the string data.
        let len = self.data.len();
        let s0 = self.offsets[i];
        let e0 = self.offsets.get(i + 1).copied().unwrap_or(len as u32);
        let n = u64::from(e0.wrapping_sub(s0));
        let start = (s0 as usize).min(len);
        let end = (start as u64 + n).min(len as u64) as usize;
        Ok(crate::ir::bytes_to_string(&self.data[start..end]))
    }

    fn read(&self, r: &mut Reader<'_>) -> Result<String, ReadError> {
        let at = r.offset();
        let i = r.varint()?;
        self.get(i, at)
    }
}

/// The constant table.
struct Constants<'a> {
    starts: Vec<u64>,
    data: Reader<'a>,
}

impl<'a> Constants<'a> {
    fn get(&self, index: u64, at: usize) -> Result<Reader<'a>, ReadError> {
        let i = usize::try_from(index).unwrap_or(usize::MAX);
        if i >= self.starts.len() {
            return Err(ReadError::new(
                at,
                format!("constant index {index} out of bounds"),
            ));
        }
        let len = self.data.len() as u64;
        let start = self.starts[i];
        let end = self.starts.get(i + 1).copied().unwrap_or(len);
        if end < start {
            return Err(ReadError::new(
                at,
                format!("invalid constant start indices: end ({end}) is less than start ({start}) for constant {i}"),
            ));
        }
        if end > len {
            return Err(ReadError::new(
                at,
                format!(
                    "constant {i} extends beyond available data: size={}, start={start}, total data size={len}",
                    end - start
                ),
            ));
        }
        let mut r = self.data;
        r.bytes(start as usize)?;
        r.sub((end - start) as usize)
    }
}

/// Debug-info tables from the debug section.
#[derive(Default)]
struct DebugTables<'a> {
    /// Per function: start index into `indices`.
    index_offsets: Vec<u32>,
    /// Debug attribute ids (0 = unknown, else 1 + attr index).
    indices: Vec<u64>,
    /// Per debug attribute: whether it and everything it refers to decoded.
    ok: Vec<bool>,
    /// Per debug attribute: its bytes (tag first), when its extent is valid.
    payloads: Vec<Option<Reader<'a>>>,
    /// Per debug attribute: its kind, once it has decoded without error.
    decoded: std::cell::RefCell<Vec<Option<DebugKind>>>,
}

/// What a debug attribute reference must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DebugKind {
    /// A location (`di_loc`, call site, unknown).
    Location,
    /// A local scope (subprogram or lexical block).
    LocalScope,
    /// A file.
    File,
    /// A compile unit.
    CompileUnit,
}

/// Per-function debug iterator (function location first, then ops in order).
struct DebugIter {
    func: u64,
    next: u64,
}

struct Ctx<'a> {
    version: Version,
    strings: Strings<'a>,
    consts: Constants<'a>,
    debug: DebugTables<'a>,
    /// Number of debug attrs in the module arena (valid ids are 1..=n).
    module: Module,
    /// Per type index: whether it has been checked (Some(Ok)) or failed.
    type_entries: Vec<TypeEntry>,
    type_checked: Vec<bool>,
}

impl<'a> Ctx<'a> {
    fn type_at(&mut self, index: u64, at: usize) -> Result<TypeId, ReadError> {
        self.check_type(index, at, 0)
    }

    fn check_type(&mut self, index: u64, at: usize, depth: usize) -> Result<TypeId, ReadError> {
        let n = self.module.types.len();
        let i = usize::try_from(index).unwrap_or(usize::MAX);
        if i >= n {
            return Err(ReadError::new(
                at,
                format!("type index {index} out of bounds (size={n})"),
            ));
        }
        if let Some(e) = &self.type_entries[i].error {
            return Err(e.clone());
        }
        if self.type_checked[i] {
            return Ok(Handle::from_index(i));
        }
        if depth > MAX_ATTR_DEPTH {
            return Err(ReadError::new(
                at,
                format!("type {index} nests too deeply or refers to itself"),
            ));
        }
        let refs = self.type_entries[i].refs.clone();
        let base = self.type_entries[i].base;
        for r in refs {
            let msg = || format!("failed to get {} type", r.label);
            if r.index >= n as u64 || self.type_entries[r.index as usize].silent {
                return Err(ReadError::new(r.offset, msg()).rebase(base));
            }
            let child = self
                .check_type(r.index, at, depth + 1)
                .map_err(|e| e.with_context(r.offset, msg()).rebase(base))?;
            if r.label == "tensor_view"
                && !matches!(self.module.types[child], Type::TensorView { .. })
            {
                return Err(ReadError::new(
                    r.offset,
                    format!(
                        "expected ::mlir::cuda_tile::TensorViewType but got '{}'",
                        crate::ir::print::type_to_string(&self.module, child)
                    ),
                )
                .rebase(base));
            }
        }
        if let Some(msg) =
            type_rules::violation(&self.module, &self.module.types[Handle::from_index(i)])
        {
            let end = self.type_entries[i].end;
            return Err(ReadError::new(end, msg).rebase(base));
        }
        if let Type::PartitionView {
            tensor_view,
            dim_map,
            ..
        } = &self.module.types[Handle::from_index(i)]
        {
            if let Some(Type::TensorView { shape, .. }) = self.module.types.try_get(*tensor_view) {
                let rank = shape.len() as i64;
                if let Some(&d) = dim_map
                    .iter()
                    .find(|&&d| i64::from(d) < 0 || i64::from(d) >= rank)
                {
                    let end = self.type_entries[i].end;
                    return Err(ReadError::new(
                        end,
                        format!(
                            "target dimension is outside of tensor view dimensions, expected strictly less than {rank}, got {d}"
                        ),
                    )
                    .rebase(base));
                }
            }
        }
        self.type_checked[i] = true;
        Ok(Handle::from_index(i))
    }

    fn read_type(&mut self, r: &mut Reader<'_>) -> Result<TypeId, ReadError> {
        let at = r.offset();
        let i = r.varint()?;
        self.type_at(i, at)
    }

    /// The next location of the function's iterator; `what` is the message
    /// when it cannot be read.
    fn debug_next(
        &self,
        it: &mut DebugIter,
        at: usize,
        what: &str,
    ) -> Result<Option<DebugId>, ReadError> {
        if it.func == 0 {
            return Ok(None);
        }
        let fail = || ReadError::new(at, what);
        let f = usize::try_from(it.func - 1).map_err(|_| fail())?;
        let base = *self.debug.index_offsets.get(f).ok_or_else(fail)? as u64;
        let idx = usize::try_from(base + it.next).map_err(|_| fail())?;
        let id = *self.debug.indices.get(idx).ok_or_else(fail)?;
        it.next += 1;
        if id == 0 {
            return Ok(None);
        }
        match self.check_debug(id, DebugKind::Location, 0) {
            Ok(true) => {}
            Ok(false) => return Err(fail()),
            Err(e) => return Err(e.with_context(at, what)),
        }
        let h = Handle::from_index((id - 1) as usize);
        if !self.debug.ok.get(h.index()).copied().unwrap_or(false) {
            return Err(fail());
        }
        match self.module.debug.try_get(h) {
            Some(DebugAttr::Loc { .. }) | Some(DebugAttr::CallSite { .. }) => Ok(Some(h)),
            Some(DebugAttr::Unknown) => Ok(None),
            _ => Err(fail()),
        }
    }

    /// Checks debug attribute `id` (0 = unknown location) the way NVIDIA's
    /// reader decodes it on use: `Ok(true)` if it decodes and is of kind
    /// `want`, `Ok(false)` if it silently is not, `Err` with the chain of
    /// messages if decoding one of its parts failed.
    fn check_debug(&self, id: u64, want: DebugKind, depth: usize) -> Result<bool, ReadError> {
        self.check_debug_in(id, want, depth, &mut Vec::new())
    }

    fn check_debug_in(
        &self,
        id: u64,
        want: DebugKind,
        depth: usize,
        visiting: &mut Vec<u64>,
    ) -> Result<bool, ReadError> {
        if id == 0 {
            return Ok(want == DebugKind::Location);
        }
        let Some(Some(payload)) = usize::try_from(id - 1)
            .ok()
            .and_then(|i| self.debug.payloads.get(i))
        else {
            return Ok(false);
        };
        let slot = (id - 1) as usize;
        if let Some(Some(kind)) = self.debug.decoded.borrow().get(slot) {
            return Ok(*kind == want);
        }
        if depth > MAX_DEBUG_DEPTH || visiting.contains(&id) {
            return Ok(false);
        }
        visiting.push(id);
        let r = self.check_debug_payload(*payload, depth, visiting);
        visiting.pop();
        match r? {
            Some(kind) => {
                if let Some(s) = self.debug.decoded.borrow_mut().get_mut(slot) {
                    *s = Some(kind);
                }
                Ok(kind == want)
            }
            None => Ok(false),
        }
    }

    fn check_debug_payload(
        &self,
        payload: Reader<'_>,
        depth: usize,
        visiting: &mut Vec<u64>,
    ) -> Result<Option<DebugKind>, ReadError> {
        let mut entry = payload;
        let Ok(tag) = entry.varint() else {
            return Ok(None);
        };
        let mut r = entry.rest();
        let base = r.base();
        let kind = match tag {
            1 => DebugKind::CompileUnit,
            2 => DebugKind::File,
            3 | 5 => DebugKind::LocalScope,
            _ => DebugKind::Location,
        };
        let visiting = std::cell::RefCell::new(visiting);
        let child = |r: &mut Reader<'_>, k: DebugKind, msg: &str| -> Result<(), ReadError> {
            let v = r.varint().map_err(|_| r.err(msg))?;
            let mut guard = visiting.borrow_mut();
            match self.check_debug_in(v, k, depth + 1, &mut guard) {
                Ok(true) => Ok(()),
                Ok(false) => Err(r.err(msg)),
                Err(e) => Err(e.with_context(r.offset(), msg)),
            }
        };
        let string = |r: &mut Reader<'_>, msg: &str| -> Result<(), ReadError> {
            let at = r.offset();
            let v = r.varint().map_err(|_| r.err(msg))?;
            self.strings.get(v, at).map(|_| ()).map_err(|e| {
                ReadError {
                    located: false,
                    ..e
                }
                .with_context(r.offset(), msg)
            })
        };
        let number = |r: &mut Reader<'_>, msg: &str| -> Result<(), ReadError> {
            r.varint().map(|_| ()).map_err(|_| r.err(msg))
        };
        let result = (|| -> Result<(), ReadError> {
            match tag {
                1 => child(
                    &mut r,
                    DebugKind::File,
                    "failed to read file attribute when parsing DICompileUnitAttr",
                ),
                2 => {
                    string(
                        &mut r,
                        "failed to read file name attribute when parsing DIFileAttr",
                    )?;
                    string(
                        &mut r,
                        "failed to read directory attribute when parsing DIFileAttr",
                    )
                }
                3 => {
                    child(
                        &mut r,
                        DebugKind::LocalScope,
                        "failed to read scope attribute when parsing DILexicalBlockAttr",
                    )?;
                    child(
                        &mut r,
                        DebugKind::File,
                        "failed to read file attribute when parsing DILexicalBlockAttr",
                    )?;
                    number(
                        &mut r,
                        "failed to read line number when parsing DILexicalBlockAttr",
                    )?;
                    number(
                        &mut r,
                        "failed to read column number when parsing DILexicalBlockAttr",
                    )
                }
                4 => {
                    child(
                        &mut r,
                        DebugKind::LocalScope,
                        "failed to read scope attribute when parsing DILocAttr",
                    )?;
                    string(
                        &mut r,
                        "failed to read file name attribute when parsing FileLineColLoc",
                    )?;
                    number(
                        &mut r,
                        "failed to read line number when parsing FileLineColLoc",
                    )?;
                    number(
                        &mut r,
                        "failed to read column number when parsing FileLineColLoc",
                    )
                }
                5 => {
                    child(
                        &mut r,
                        DebugKind::File,
                        "failed to read file attribute when parsing DISubprogramAttr",
                    )?;
                    number(
                        &mut r,
                        "failed to read line number when parsing DISubprogramAttr",
                    )?;
                    string(
                        &mut r,
                        "failed to read name attribute when parsing DISubprogramAttr",
                    )?;
                    string(
                        &mut r,
                        "failed to read linkage name attribute when parsing DISubprogramAttr",
                    )?;
                    child(
                        &mut r,
                        DebugKind::CompileUnit,
                        "failed to read compile unit attribute when parsing DISubprogramAttr",
                    )?;
                    number(
                        &mut r,
                        "failed to read scope line number when parsing DISubprogramAttr",
                    )?;
                    if self.version >= V13_5 {
                        let f = r.varint().map_err(|_| {
                            r.err("failed to read flags when parsing DISubprogramAttr")
                        })?;
                        if f & !1 != 0 {
                            return Err(r.err(format!(
                                "unrecognized flag bits (0x{:X}) when parsing DISubprogramAttr",
                                f & !1
                            )));
                        }
                    }
                    Ok(())
                }
                6 => {
                    child(
                        &mut r,
                        DebugKind::Location,
                        "failed to read callee attribute when parsing CallSiteLoc",
                    )?;
                    child(
                        &mut r,
                        DebugKind::Location,
                        "failed to read caller attribute when parsing CallSiteLoc",
                    )
                }
                _ => Ok(()),
            }
        })();
        result.map_err(|e| e.rebase(base))?;
        Ok(Some(kind))
    }
}

/// Reads a whole module.
pub(crate) fn read_module(bytes: &[u8]) -> Result<Module, ReadError> {
    if bytes.len() > MAX_INPUT_SIZE {
        return Err(ReadError::new(
            0,
            format!(
                "input of {} bytes exceeds the limit of {MAX_INPUT_SIZE}",
                bytes.len()
            ),
        ));
    }
    let mut r = Reader::new(bytes, 0);
    let version = read_header(&mut r)?;

    let mut sections: [Option<Reader<'_>>; NUM_SECTIONS as usize] = Default::default();
    loop {
        let hdr_at = r.offset();
        let hdr_ctx = |e: ReadError, r: &Reader<'_>| {
            e.with_context(r.offset(), "failed to parse section header")
        };
        if r.is_empty() {
            let e = r.err("unexpected end of data while reading section header");
            return Err(hdr_ctx(e, &r));
        }
        let b = r.u8()?;
        let id = b & 0x7f;
        let aligned = b & 0x80 != 0;
        if id == SEC_END {
            if aligned {
                let e = r.err("end section should not have alignment flag set");
                return Err(hdr_ctx(e, &r));
            }
            if !r.is_empty() {
                return Err(r.err("end section is not the last section"));
            }
            break;
        }
        if id >= NUM_SECTIONS {
            let e = r.err(format!("unknown section ID: {id}"));
            return Err(hdr_ctx(e, &r));
        }
        let len = match r.varint() {
            Ok(v) => v,
            Err(_) => {
                let e = r.err("failed to read section length");
                return Err(hdr_ctx(e, &r));
            }
        };
        if len > r.remaining() as u64 {
            let e = r.err(format!(
                "section length {len} exceeds remaining data size {}",
                r.remaining()
            ));
            return Err(hdr_ctx(e, &r));
        }
        let mut alignment = 1u64;
        if aligned {
            alignment = match r.varint() {
                Ok(v) => v,
                Err(e) => return Err(hdr_ctx(e, &r)),
            };
            if alignment == 0 || !alignment.is_power_of_two() {
                let e = r.err(format!("invalid alignment value: {alignment}"));
                return Err(hdr_ctx(e, &r));
            }
            if let Err(e) = r.skip_padding(usize::try_from(alignment).unwrap_or(usize::MAX)) {
                return Err(hdr_ctx(e, &r));
            }
        }
        let required = match id {
            SEC_STRING | SEC_TYPE => 4,
            SEC_CONSTANT | SEC_DEBUG | SEC_FUNC => 8,
            _ => 1,
        };
        if required > 1 && (!aligned || alignment % required != 0) {
            let has = if aligned {
                format!("has alignment of {alignment}")
            } else {
                "has no alignment flag set".to_string()
            };
            return Err(r.err(format!(
                "section {id} must have alignment that is a multiple of {required} bytes, but {has}"
            )));
        }
        if len > r.remaining() as u64 {
            return Err(r.err(format!(
                "section length {len} exceeds remaining bytecode data. {}",
                r.remaining()
            )));
        }
        let _ = hdr_at;
        sections[id as usize] = Some(r.sub(len as usize)?);
    }

    // Strings.
    let strings = match sections[SEC_STRING as usize] {
        Some(s) => read_strings(s).map_err(|e| {
            e.rebase(s.base())
                .with_context(r.offset(), "failed to parse string section")
        })?,
        None => return Err(r.err("string section is mandatory")),
    };
    let mut module = Module {
        version,
        name: "kernels".to_string(),
        ..Module::default()
    };
    if let Some(mut s) = sections[SEC_PRODUCER as usize] {
        let at = s.offset();
        let i = s
            .varint()
            .map_err(|_| {
                s.err("failed to read producer string index")
                    .rebase(s.base())
            })
            .map_err(|e| e.with_context(r.offset(), "failed to parse producer section"))?;
        let p = strings
            .get(i, at)
            .map_err(|e| {
                e.with_context(at, format!("failed to get producer string at index {i}"))
                    .rebase(s.base())
            })
            .map_err(|e| e.with_context(r.offset(), "failed to parse producer section"))?;
        module.producer = Some(p);
    }
    let mut type_entries = Vec::new();
    if let Some(s) = sections[SEC_TYPE as usize] {
        type_entries = read_types(s, version, &mut module).map_err(|e| {
            e.rebase(s.base())
                .with_context(r.offset(), "failed to parse type section")
        })?;
    }
    let consts = match sections[SEC_CONSTANT as usize] {
        Some(s) => read_constants(s).map_err(|e| {
            e.rebase(s.base())
                .with_context(r.offset(), "failed to parse constant section")
        })?,
        None => Constants {
            starts: Vec::new(),
            data: Reader::new(&[], r.offset()),
        },
    };
    let ntypes = module.types.len();
    let mut ctx = Ctx {
        version,
        strings,
        consts,
        debug: DebugTables::default(),
        module,
        type_entries,
        type_checked: vec![false; ntypes],
    };
    let globals = match sections[SEC_GLOBAL as usize] {
        Some(s) => read_globals(s, &ctx).map_err(|e| {
            e.rebase(s.base())
                .with_context(r.offset(), "failed to parse global section")
        })?,
        None => Vec::new(),
    };
    let funcs = match sections[SEC_FUNC as usize] {
        Some(s) => read_function_table(s, &mut ctx).map_err(|e| {
            e.rebase(s.base())
                .with_context(r.offset(), "failed to parse function section")
        })?,
        None => return Err(r.err("function section is mandatory")),
    };
    if let Some(s) = sections[SEC_DEBUG as usize] {
        read_debug(s, &mut ctx).map_err(|e| {
            e.rebase(s.base())
                .with_context(r.offset(), "failed to parse debug section")
        })?;
    }
    for g in globals {
        create_global(&mut ctx, g)
            .map_err(|e| e.with_context(r.offset(), "failed to create global from bytecode"))?;
    }
    for f in funcs {
        create_function(&mut ctx, f, r.offset())
            .map_err(|e| e.with_context(r.offset(), "failed to create function from bytecode"))?;
    }
    Ok(ctx.module)
}

fn read_strings(mut s: Reader<'_>) -> Result<Strings<'_>, ReadError> {
    let n = s.varint()?;
    if n == 0 {
        return Ok(Strings {
            offsets: Vec::new(),
            data: &[],
        });
    }
    let room = (s.remaining() / 4) as u64;
    if n > room || n > MAX_STRINGS {
        return Err(s.err(format!(
            "number of strings ({n}) exceeds the maximum of {room} that can fit in the remaining payload of {} bytes.",
            s.remaining()
        )));
    }
    s.skip_padding(4)?;
    let mut offsets = Vec::with_capacity(n as usize);
    for _ in 0..n {
        offsets.push(s.u32_le()?);
    }
    let data = s.rest().data();
    Ok(Strings { offsets, data })
}
