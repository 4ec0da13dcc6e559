//! Section and op decoding.
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
        if depth > MAX_ATTR_DEPTH || visiting.contains(&id) {
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

/// Reads an `i64` list with a varint count and `width`-byte little-endian
/// entries, one at a time like NVIDIA's reader: a count past the data fails
/// at the end of the data with `failed to read <what>`, and memory grows only
/// with what was actually read.
fn int_list(r: &mut Reader<'_>, width: usize, what: &str) -> Result<Vec<i64>, ReadError> {
    let n = r
        .varint()
        .map_err(|_| r.err(format!("failed to read {what}")))?;
    if n > u64::from(u32::MAX - 1) {
        return Err(r.err(format!(
            "array size in bytecode ({n}) exceeds maximum supported capacity"
        )));
    }
    let mut v = Vec::with_capacity((n as usize).min(r.remaining() / width));
    for _ in 0..n {
        if r.remaining() < width {
            return Err(r.err(format!("failed to read {what}")));
        }
        let b = r.bytes(width)?;
        let x = match width {
            4 => i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            _ => {
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                i64::from_le_bytes(a)
            }
        };
        v.push(x);
    }
    Ok(v)
}

fn i32_list(r: &mut Reader<'_>, what: &str) -> Result<Vec<i32>, ReadError> {
    Ok(int_list(r, 4, what)?
        .into_iter()
        .map(|x| x as i32)
        .collect())
}

fn read_padding(r: &mut Reader<'_>, present: bool) -> Result<Option<Padding>, ReadError> {
    if !present {
        return Ok(None);
    }
    let at = r.offset();
    let v = r.varint()?;
    Padding::from_u64(v)
        .map(Some)
        .ok_or_else(|| ReadError::new(at, format!("invalid padding value: {v}")))
}

/// A tile shape: a varint count of 8-byte dimensions, each a power of two.
fn tile_shape(r: &mut Reader<'_>) -> Result<Vec<i64>, ReadError> {
    let v = int_list(r, 8, "concreteShapeCache")?;
    if v.iter().any(|&d| d <= 0 || d & (d - 1) != 0) {
        let list: Vec<String> = v.iter().map(|d| d.to_string()).collect();
        return Err(r.err(format!(
            "all dimensions must be powers of two, got {}",
            list.join(", ")
        )));
    }
    Ok(v)
}

/// A reference from one type to another, for NVIDIA-style error chains.
#[derive(Clone, Debug)]
struct TypeRef {
    /// The referenced type-table index.
    index: u64,
    /// The field, as NVIDIA's messages name it (`elementType`).
    label: &'static str,
    /// Absolute offset just after the index.
    offset: usize,
}

/// A decoded type entry: why it failed, if it did, and where it refers.
struct TypeEntry {
    error: Option<ReadError>,
    /// The entry failed without a message of its own (unreadable tag).
    silent: bool,
    refs: Vec<TypeRef>,
    /// Absolute offset of the payload after the tag.
    base: usize,
    /// Absolute offset where decoding the payload stopped.
    end: usize,
}

/// A dimension or stride as NVIDIA's messages show it (`?` when dynamic).
fn dim_text(d: i64) -> String {
    if d == DYNAMIC {
        "?".to_string()
    } else {
        d.to_string()
    }
}

/// A view's tile shape must have power-of-two dimensions.
fn check_tile_shape(r: &Reader<'_>, shape: &[i32]) -> Result<(), ReadError> {
    if shape.iter().any(|&d| d <= 0 || d & (d - 1) != 0) {
        let list: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        return Err(r.err(format!(
            "tile shape dimensions must have power of two length but got [{}]",
            list.join(", ")
        )));
    }
    Ok(())
}

fn parse_type(mut entry: Reader<'_>, version: Version) -> (Result<Type, ReadError>, TypeEntry) {
    let mut refs = Vec::new();
    let tag = match entry.varint() {
        Ok(t) => t,
        Err(e) => {
            let base = entry.offset();
            return (
                Err(e),
                TypeEntry {
                    error: None,
                    silent: true,
                    refs,
                    base,
                    end: base,
                },
            );
        }
    };
    // NVIDIA's reader decodes the payload after the tag with its own reader.
    let mut r = entry.rest();
    let base = r.base();
    let t = parse_type_payload(tag, &mut r, version, &mut refs).map_err(|e| e.rebase(base));
    let end = r.offset();
    (
        t,
        TypeEntry {
            error: None,
            silent: false,
            refs,
            base,
            end,
        },
    )
}

fn parse_type_payload(
    tag: u64,
    r: &mut Reader<'_>,
    version: Version,
    refs: &mut Vec<TypeRef>,
) -> Result<Type, ReadError> {
    let at = r.offset();
    // Reads a type index; the field name labels NVIDIA's error message.
    let id = |r: &mut Reader<'_>,
              refs: &mut Vec<TypeRef>,
              label: &'static str|
     -> Result<TypeId, ReadError> {
        let v = r
            .varint()
            .map_err(|_| r.err(format!("failed to get {label} type")))?;
        refs.push(TypeRef {
            index: v,
            label,
            offset: r.offset(),
        });
        Ok(Handle::from_index(v.min(MAX_TYPES) as usize))
    };
    let scalar = |s: Scalar, since: Version| -> Result<Type, ReadError> {
        if version < since {
            let name = match s {
                Scalar::F8E8M0FNU => "Float8E8M0FNU",
                Scalar::F4E2M1FN => "Float4E2M1FN",
                Scalar::I4 => "Int4",
                Scalar::F8E5M3FNU => "Float8E5M3FNU",
                other => other.name(),
            };
            return Err(ReadError::unlocated(
                at,
                format!(
                    "type '{name}' requires bytecode version {}.{}+, file version is {}.{}",
                    since.major, since.minor, version.major, version.minor
                ),
            ));
        }
        Ok(Type::Scalar(s))
    };
    let v31 = Version::new(13, 1, 0);
    let t = match tag {
        0 => scalar(Scalar::I1, v31)?,
        1 => scalar(Scalar::I8, v31)?,
        2 => scalar(Scalar::I16, v31)?,
        3 => scalar(Scalar::I32, v31)?,
        4 => scalar(Scalar::I64, v31)?,
        5 => scalar(Scalar::F16, v31)?,
        6 => scalar(Scalar::BF16, v31)?,
        7 => scalar(Scalar::F32, v31)?,
        8 => scalar(Scalar::TF32, v31)?,
        9 => scalar(Scalar::F64, v31)?,
        10 => scalar(Scalar::F8E4M3FN, v31)?,
        11 => scalar(Scalar::F8E5M2, v31)?,
        18 => scalar(Scalar::F8E8M0FNU, Version::new(13, 2, 0))?,
        19 => scalar(Scalar::F4E2M1FN, V13_3)?,
        22 => scalar(Scalar::I4, V13_3)?,
        130 => scalar(Scalar::F8E5M3FNU, V13_4)?,
        17 => Type::Token,
        12 => {
            let flags = if version >= V13_4 { r.varint()? } else { 0 };
            let pointee = id(r, refs, "pointeeType")?;
            let ptr_attr = if flags & 1 != 0 { Some(r.u8()?) } else { None };
            Type::Pointer { pointee, ptr_attr }
        }
        13 => {
            let element = id(r, refs, "elementType")?;
            let shape = tile_shape(r)?;
            Type::Tile { element, shape }
        }
        14 => {
            let flags = if version >= V13_4 { r.varint()? } else { 0 };
            let element = id(r, refs, "elementType")?;
            let shape = int_list(r, 8, "shape")?;
            let strides = int_list(r, 8, "strides")?;
            if shape.iter().any(|&x| x != DYNAMIC && x <= 0) {
                let list: Vec<String> = shape.iter().map(|&d| dim_text(d)).collect();
                return Err(r.err(format!(
                    "dimensions must have strictly positive constant sizes but got [{}]",
                    list.join(", ")
                )));
            }
            if strides.iter().any(|&x| x != DYNAMIC && x <= 0) {
                let list: Vec<String> = strides.iter().map(|&d| dim_text(d)).collect();
                return Err(r.err(format!(
                    "dimensions must have strictly positive constant strides but got [{}]",
                    list.join(", ")
                )));
            }
            let ptr_attr = if flags & 1 != 0 { Some(r.u8()?) } else { None };
            Type::TensorView {
                element,
                shape,
                strides,
                ptr_attr,
            }
        }
        15 => {
            let unified = version >= V13_3;
            let flags = if unified { r.varint()? } else { 0 };
            let tile_shape = i32_list(r, "tile_shape data")?;
            let tensor_view = id(r, refs, "tensor_view")?;
            let dim_map = i32_list(r, "dim_map")?;
            let has = if unified {
                flags & 1 != 0
            } else {
                r.u8()? != 0
            };
            let padding = read_padding(r, has)?;
            check_tile_shape(r, &tile_shape)?;
            Type::PartitionView {
                tile_shape,
                tensor_view,
                dim_map,
                padding,
            }
        }
        16 => {
            let list = |r: &mut Reader<'_>,
                        refs: &mut Vec<TypeRef>,
                        label: &'static str|
             -> Result<Vec<TypeId>, ReadError> {
                let n = r
                    .varint()
                    .map_err(|_| r.err(format!("failed to read number of {label}s")))?;
                // One index at a time: a huge count fails at the end of the data.
                let mut v = Vec::new();
                for _ in 0..n {
                    v.push(id(r, refs, label)?);
                }
                Ok(v)
            };
            let inputs = list(r, refs, "parameter")?;
            let results = list(r, refs, "result")?;
            Type::Function { inputs, results }
        }
        20 if version >= V13_3 => {
            let flags = r.varint()?;
            let tile_shape = i32_list(r, "tile_shape data")?;
            let tensor_view = id(r, refs, "tensor_view")?;
            let sparse_dim = r.varint().map_err(|_| r.err("failed to read sparse_dim"))?;
            let padding = read_padding(r, flags & 1 != 0)?;
            Type::GatherScatterView {
                tile_shape,
                tensor_view,
                sparse_dim,
                padding,
            }
        }
        21 if version >= V13_3 => {
            let flags = r.varint()?;
            let tile_shape = i32_list(r, "tile_shape data")?;
            let traversal_strides = i32_list(r, "traversal_strides data")?;
            let tensor_view = id(r, refs, "tensor_view")?;
            let dim_map = i32_list(r, "dim_map")?;
            let padding = read_padding(r, flags & 1 != 0)?;
            Type::StridedView {
                tile_shape,
                traversal_strides,
                tensor_view,
                dim_map,
                padding,
            }
        }
        _ => return Err(ReadError::unlocated(at, format!("unknown type tag: {tag}"))),
    };
    Ok(t)
}

fn read_types(
    mut s: Reader<'_>,
    version: Version,
    module: &mut Module,
) -> Result<Vec<TypeEntry>, ReadError> {
    let n = s.varint()?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let room = (s.remaining() / 4) as u64;
    if n > room || n > MAX_TYPES {
        return Err(s.err(format!(
            "number of types ({n}) exceeds the maximum of {room} that can fit in the remaining payload of {} bytes.",
            s.remaining()
        )));
    }
    s.skip_padding(4)?;
    let mut starts = Vec::with_capacity(n as usize);
    for _ in 0..n {
        starts.push(s.u32_le()? as usize);
    }
    let data = s.rest();
    let mut entries = Vec::with_capacity(n as usize);
    module.types.reserve(n as usize);
    for i in 0..starts.len() {
        let start = starts[i];
        let end = starts.get(i + 1).copied().unwrap_or(data.len());
        let (parsed, mut entry) = if start > end || end > data.len() {
            let e = ReadError::new(
                data.offset(),
                format!("type {i} has an invalid extent [{start}, {end})"),
            );
            (
                Err(e),
                TypeEntry {
                    error: None,
                    silent: true,
                    refs: Vec::new(),
                    base: data.offset(),
                    end: data.offset(),
                },
            )
        } else {
            let mut d = data;
            d.bytes(start)?;
            parse_type(d.sub(end - start)?, version)
        };
        match parsed {
            Ok(t) => {
                module.types.append(t);
            }
            Err(e) => {
                module.types.append(Type::Token);
                entry.error = Some(e);
            }
        }
        entries.push(entry);
    }
    Ok(entries)
}

fn read_constants(mut s: Reader<'_>) -> Result<Constants<'_>, ReadError> {
    let at = s.offset();
    let n = s.varint()?;
    if n > u64::from(u32::MAX - 1) || n > MAX_CONSTANTS {
        return Err(ReadError::new(
            at,
            format!("number of constants ({n}) exceeds the limit"),
        ));
    }
    if n == 0 {
        return Ok(Constants {
            starts: Vec::new(),
            data: s.rest(),
        });
    }
    s.skip_padding(8)?;
    if (s.remaining() / 8) < n as usize {
        return Err(s.err("insufficient data for constant indices"));
    }
    let mut starts = Vec::with_capacity(n as usize);
    for _ in 0..n {
        starts.push(s.u64_le()?);
    }
    // NVIDIA's reader checks every constant's extent up front.
    let len = s.remaining() as u64;
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(len);
        if end < start {
            return Err(s.err(format!(
                "invalid constant start indices: end ({end}) is less than start ({start}) for constant {i}"
            )));
        }
        if end - start > len || end > len {
            return Err(s.err(format!(
                "constant {i} extends beyond available data: size={}, start={start}, total data size={len}",
                end - start
            )));
        }
    }
    Ok(Constants {
        starts,
        data: s.rest(),
    })
}

struct GlobalInfo {
    at: usize,
    name: u64,
    ty: u64,
    constant: u64,
    alignment: u64,
    visibility: u64,
    is_constant: u64,
}

fn read_globals(mut s: Reader<'_>, ctx: &Ctx<'_>) -> Result<Vec<GlobalInfo>, ReadError> {
    let n = s
        .varint()
        .map_err(|_| s.err("failed to read number of global."))?;
    let min = if ctx.version >= V13_3 { 6 } else { 4 };
    let room = (s.remaining() / min) as u64;
    if n > room || n > MAX_GLOBALS {
        return Err(s.err(format!(
            "number of globals ({n}) exceeds the maximum of {room} that can fit in the remaining payload of {} bytes.",
            s.remaining()
        )));
    }
    let mut v = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let at = s.offset();
        let name = s
            .varint()
            .map_err(|_| s.err("failed to read global symbol name string."))?;
        let ty = s
            .varint()
            .map_err(|_| s.err("failed to read global value type"))?;
        let constant = s
            .varint()
            .map_err(|_| s.err("failed to read global value constant index"))?;
        let alignment = s
            .varint()
            .map_err(|_| s.err("failed to read global alignment"))?;
        let (visibility, is_constant) = if ctx.version >= V13_3 {
            (
                s.varint()
                    .map_err(|_| s.err("failed to read global symbol visibility"))?,
                s.varint()
                    .map_err(|_| s.err("failed to read global constant flag"))?,
            )
        } else {
            (0, 0)
        };
        v.push(GlobalInfo {
            at,
            name,
            ty,
            constant,
            alignment,
            visibility,
            is_constant,
        });
    }
    Ok(v)
}

struct FunctionInfo<'a> {
    at: usize,
    name: u64,
    sig: u64,
    flags: u8,
    loc: u64,
    hints: Option<Attr>,
    body: Reader<'a>,
}

fn read_function_table<'a>(
    mut s: Reader<'a>,
    ctx: &mut Ctx<'_>,
) -> Result<Vec<FunctionInfo<'a>>, ReadError> {
    let n = s.varint().map_err(ReadError::silenced)?;
    if n > s.len() as u64 || n > MAX_FUNCTIONS {
        return Err(s.err(format!(
            "number of functions ({n}) exceeds payload size ({})",
            s.len()
        )));
    }
    let mut v = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let at = s.offset();
        let name = s.varint().map_err(ReadError::silenced)?;
        let sig = s.varint().map_err(ReadError::silenced)?;
        let flags = s.u8().map_err(ReadError::silenced)?;
        let loc = s.varint().map_err(ReadError::silenced)?;
        let hints = if ctx.version >= V13_5 {
            // 13.5: bit 1 kernel, bit 2 extern implementation, bit 3 testing
            // form; a kernel always carries its optimization hints and then
            // one more attribute (argument attributes).
            if flags & 0x06 == 0x06 {
                return Err(s.err("function entry cannot be both kernel and extern impl"));
            }
            if flags & 0x08 != 0 {
                return Err(s.err("function entry has testing form in non-test build"));
            }
            if flags & !0x0f != 0 {
                return Err(s.err(format!(
                    "function entry has unrecognized flag bits (0x{:X});",
                    flags & !0x0f
                )));
            }
            if flags & 0x02 != 0 {
                let h = tagged_attr(&mut s, ctx, 0)?;
                let _arg_attrs = tagged_attr(&mut s, ctx, 0)?;
                Some(h)
            } else {
                None
            }
        } else if flags & 0x02 != 0 && flags & 0x04 != 0 {
            Some(tagged_attr(&mut s, ctx, 0)?)
        } else {
            None
        };
        let len = s.varint().map_err(ReadError::silenced)?;
        if len > s.remaining() as u64 {
            return Err(s.err(format!(
                "function body length {len} exceeds remaining bytecode data ({} bytes)",
                s.remaining()
            )));
        }
        let body = s.sub(len as usize)?;
        v.push(FunctionInfo {
            at,
            name,
            sig,
            flags,
            loc,
            hints,
            body,
        });
    }
    Ok(v)
}

fn read_debug<'a>(mut s: Reader<'a>, ctx: &mut Ctx<'a>) -> Result<(), ReadError> {
    let n_funcs = s
        .varint()
        .map_err(|_| s.err("failed to read total number of operations with debug info"))?;
    s.skip_padding(4)
        .map_err(|_| s.err("failed to skip padding for debug info index offset pointer"))?;
    if n_funcs > (s.remaining() / 4) as u64 {
        return Err(s.err("failed to skip debug info index offsets"));
    }
    let mut index_offsets = Vec::with_capacity(n_funcs as usize);
    for _ in 0..n_funcs {
        index_offsets.push(s.u32_le()?);
    }
    let n_idx = s
        .varint()
        .map_err(|_| s.err("failed to read total number of debug info indices"))?;
    let room = (s.remaining() / 8) as u64;
    if n_idx > room {
        return Err(s.err(format!(
            "number of debug info indices ({n_idx}) exceeds the maximum of {room} that can fit in the remaining payload of {} bytes.",
            s.remaining()
        )));
    }
    s.skip_padding(8)
        .map_err(|_| s.err("failed to skip padding for debug info indices pointer"))?;
    if n_idx > (s.remaining() / 8) as u64 {
        return Err(s.err("failed to skip debug info indices"));
    }
    let mut indices = Vec::with_capacity(n_idx as usize);
    for _ in 0..n_idx {
        indices.push(s.u64_le()?);
    }
    let n_attr = s
        .varint()
        .map_err(|_| s.err("failed to read total number of debug info attributes"))?;
    let room = (s.remaining() / 4) as u64;
    if n_attr > room || n_attr > MAX_DEBUG_ATTRS {
        return Err(s.err(format!(
            "number of debug info attributes ({n_attr}) exceeds the maximum of {room} that can fit in the remaining payload of {} bytes.",
            s.remaining()
        )));
    }
    s.skip_padding(4)
        .map_err(|_| s.err("failed to skip padding for debug info offset pointer"))?;
    if n_attr > (s.remaining() / 4) as u64 {
        return Err(s.err("failed to skip debug info offsets"));
    }
    let mut offsets = Vec::with_capacity(n_attr as usize);
    for _ in 0..n_attr {
        offsets.push(s.u32_le()? as usize);
    }
    let data = s.rest();
    ctx.module.debug.reserve(n_attr as usize);
    let n = n_attr;
    let mut parsed = Vec::with_capacity(offsets.len());
    let mut payloads = Vec::with_capacity(offsets.len());
    for i in 0..offsets.len() {
        let start = offsets[i];
        let end = offsets.get(i + 1).copied().unwrap_or(data.len());
        let attr = if start > end || end > data.len() {
            payloads.push(None);
            None
        } else {
            let mut d = data;
            d.bytes(start)?;
            let payload = d.sub(end - start)?;
            payloads.push(Some(payload));
            parse_debug_attr(payload, ctx, n).ok()
        };
        parsed.push(attr.is_some());
        ctx.module.debug.append(attr.unwrap_or(DebugAttr::Unknown));
    }
    let ok = debug_validity(&ctx.module, &parsed);
    ctx.debug = DebugTables {
        index_offsets,
        indices,
        ok,
        decoded: std::cell::RefCell::new(vec![None; payloads.len()]),
        payloads,
    };
    // Reject reference cycles so walking scopes always ends.
    for i in 0..ctx.module.debug.len() {
        let mut cur = i;
        let mut steps = 0;
        loop {
            let next = match &ctx.module.debug[Handle::<DebugAttr>::from_index(cur)] {
                DebugAttr::CallSite { callee, .. } => Some(callee.index()),
                DebugAttr::Loc { scope, .. } | DebugAttr::LexicalBlock { scope, .. } => {
                    Some(scope.index())
                }
                _ => None,
            };
            match next {
                Some(nx) => {
                    steps += 1;
                    if steps > MAX_ATTR_DEPTH {
                        ctx.module.debug[Handle::<DebugAttr>::from_index(i)] = DebugAttr::Unknown;
                        break;
                    }
                    cur = nx;
                }
                None => break,
            }
        }
    }
    Ok(())
}

/// Whether each debug attribute decoded and refers only to attributes that
/// did, without cycles.
fn debug_validity(m: &Module, parsed: &[bool]) -> Vec<bool> {
    // 0 = unknown, 1 = in progress, 2 = ok, 3 = bad
    let mut state = vec![0u8; parsed.len()];
    fn visit(m: &Module, parsed: &[bool], state: &mut [u8], i: usize, depth: usize) -> bool {
        match state[i] {
            2 => return true,
            1 | 3 => return false,
            _ => {}
        }
        if !parsed[i] || depth > MAX_ATTR_DEPTH {
            state[i] = 3;
            return false;
        }
        state[i] = 1;
        let children: Vec<usize> = match &m.debug[Handle::<DebugAttr>::from_index(i)] {
            DebugAttr::Unknown | DebugAttr::File { .. } => vec![],
            DebugAttr::CompileUnit { file } => vec![file.index()],
            DebugAttr::LexicalBlock { scope, file, .. } => vec![scope.index(), file.index()],
            DebugAttr::Loc { scope, .. } => vec![scope.index()],
            DebugAttr::Subprogram {
                file, compile_unit, ..
            } => vec![file.index(), compile_unit.index()],
            DebugAttr::CallSite { callee, caller } => vec![callee.index(), caller.index()],
        };
        let ok = children
            .into_iter()
            .all(|c| c < parsed.len() && visit(m, parsed, state, c, depth + 1));
        state[i] = if ok { 2 } else { 3 };
        ok
    }
    (0..parsed.len())
        .map(|i| visit(m, parsed, &mut state, i, 0))
        .collect()
}

fn parse_debug_attr(mut r: Reader<'_>, ctx: &Ctx<'_>, n: u64) -> Result<DebugAttr, ReadError> {
    let tag = r.varint()?;
    let id = |r: &mut Reader<'_>| -> Result<DebugId, ReadError> {
        let at = r.offset();
        let v = r.varint()?;
        if v == 0 || v > n {
            return Err(ReadError::new(
                at,
                format!("debug info index {v} out of bounds"),
            ));
        }
        Ok(Handle::from_index((v - 1) as usize))
    };
    Ok(match tag {
        1 => DebugAttr::CompileUnit { file: id(&mut r)? },
        2 => DebugAttr::File {
            name: ctx.strings.read(&mut r)?,
            directory: ctx.strings.read(&mut r)?,
        },
        3 => DebugAttr::LexicalBlock {
            scope: id(&mut r)?,
            file: id(&mut r)?,
            line: r.varint()?,
            column: r.varint()?,
        },
        4 => DebugAttr::Loc {
            scope: id(&mut r)?,
            filename: ctx.strings.read(&mut r)?,
            line: r.varint()?,
            column: r.varint()?,
        },
        5 => DebugAttr::Subprogram {
            file: id(&mut r)?,
            line: r.varint()?,
            name: ctx.strings.read(&mut r)?,
            linkage_name: ctx.strings.read(&mut r)?,
            compile_unit: id(&mut r)?,
            scope_line: r.varint()?,
            declaration: ctx.version >= V13_5 && r.varint()? & 1 != 0,
        },
        6 => DebugAttr::CallSite {
            callee: id(&mut r)?,
            caller: id(&mut r)?,
        },
        _ => DebugAttr::Unknown,
    })
}

fn scalar_of(ctx: &Ctx<'_>, ty: TypeId) -> Option<Scalar> {
    match ctx.module.types.try_get(ty)? {
        Type::Scalar(s) => Some(*s),
        _ => None,
    }
}

/// Number of elements of a tile type, if it is one with static shape.
fn tile_elems(ctx: &Ctx<'_>, ty: TypeId) -> Option<(Scalar, u64)> {
    match ctx.module.types.try_get(ty)? {
        Type::Tile { element, shape } => {
            let s = scalar_of(ctx, *element)?;
            let mut n: u64 = 1;
            for &d in shape {
                n = n.checked_mul(u64::try_from(d).ok()?)?;
            }
            Some((s, n))
        }
        _ => None,
    }
}

fn dense_from_constant(
    ctx: &Ctx<'_>,
    ty: TypeId,
    index: u64,
    at: usize,
) -> Result<Attr, ReadError> {
    let mut c = ctx.consts.get(index, at)?;
    let Some((s, n)) = tile_elems(ctx, ty) else {
        return Err(ReadError::new(
            at,
            "expect Cuda Tile integer or float type for a dense constant",
        ));
    };
    let size = c.varint().map_err(|_| {
        c.err("failed to read the size of the data buffer")
            .rebase(c.base())
    })?;
    if size > c.remaining() as u64 {
        return Err(c.err("failed to read the raw byte data").rebase(c.base()));
    }
    let data = c.bytes(size as usize)?;
    if s == Scalar::I1 {
        if size != 1 && size != n.div_ceil(8) {
            return Err(c
                .err(format!(
                    "i1 dense attribute payload size {size} is not a recognized encoding for {n} elements"
                ))
                .rebase(c.base()));
        }
        return Ok(Attr::Dense {
            ty,
            data: data.to_vec(),
        });
    }
    let ok = if s == Scalar::I1 {
        false
    } else {
        let eb = u64::from(s.bit_width().div_ceil(8));
        size == eb || Some(size) == n.checked_mul(eb)
    };
    if !ok {
        return Err(c
            .err("failed to validate buffer size and format")
            .rebase(c.base()));
    }
    Ok(Attr::Dense {
        ty,
        data: data.to_vec(),
    })
}

fn tagged_attr(r: &mut Reader<'_>, ctx: &mut Ctx<'_>, depth: usize) -> Result<Attr, ReadError> {
    if depth > MAX_ATTR_DEPTH {
        return Err(r.err("attribute nesting exceeds the limit"));
    }
    let tag = r
        .varint()
        .map_err(|_| r.err("failed to read AttributeTag for self-contained attribute."))?;
    Ok(match tag {
        1 => {
            let ty = ctx.read_type(r)?;
            let Some(s) = scalar_of(ctx, ty).filter(|s| s.is_integer()) else {
                return Err(r.err("failed to read valid IntegerType for IntegerAttr"));
            };
            let value = inline_int(r, s)?;
            Attr::Integer { ty, value }
        }
        2 => {
            let ty = ctx.read_type(r)?;
            let Some(s) = scalar_of(ctx, ty).filter(|s| s.is_float()) else {
                return Err(r.err("failed to read valid FloatType for FloatAttr"));
            };
            let bits = ap_int(r, s.bit_width())?;
            Attr::Float { ty, bits }
        }
        3 => Attr::Bool(r.u8()? != 0),
        4 => Attr::Type(ctx.read_type(r)?),
        5 => Attr::String(ctx.strings.read(r)?),
        6 => {
            let n = r.count(MAX_ATTR_ELEMS.min(r.remaining() as u64), "array size")?;
            let mut v = Vec::with_capacity(n as usize);
            for _ in 0..n {
                v.push(tagged_attr(r, ctx, depth + 1)?);
            }
            Attr::Array(v)
        }
        7 => {
            let ty = ctx.read_type(r)?;
            let cat = r.offset();
            let ci = r.varint()?;
            dense_from_constant(ctx, ty, ci, cat)?
        }
        8 => {
            let divisor = r.varint()?;
            let flags = r.u8()?;
            if flags & !3 != 0 {
                return Err(r.err("unused bits set in optional parameter flags"));
            }
            let every = if flags & 1 != 0 {
                Some(r.svarint()?)
            } else {
                None
            };
            let along = if flags & 2 != 0 {
                Some(r.svarint()?)
            } else {
                None
            };
            Attr::DivBy {
                divisor,
                every,
                along,
            }
        }
        9 => Attr::SameElements(int_list(r, 8, "values")?),
        10 => Attr::Dictionary(dictionary(r, ctx, depth)?),
        11 => Attr::OptimizationHints(dictionary(r, ctx, depth)?),
        12 => {
            let flags = r.u8()?;
            if flags & !3 != 0 {
                return Err(r.err("unused bits set in optional parameter flags"));
            }
            let lb = if flags & 1 != 0 {
                Some(r.svarint()?)
            } else {
                None
            };
            let ub = if flags & 2 != 0 {
                Some(r.svarint()?)
            } else {
                None
            };
            Attr::Bounded { lb, ub }
        }
        _ => {
            return Err(r.err(format!(
                "unsupported AttributeTag {tag} for self-contained attribute"
            )))
        }
    })
}

fn dictionary(
    r: &mut Reader<'_>,
    ctx: &mut Ctx<'_>,
    depth: usize,
) -> Result<Vec<(String, Attr)>, ReadError> {
    let n = r.count(MAX_ATTR_ELEMS.min(r.remaining() as u64), "dictionary size")?;
    let mut v: Vec<(String, Attr)> = Vec::with_capacity(n as usize);
    for i in 0..n {
        let key = ctx.strings.read(r).map_err(|e| {
            e.with_context(
                r.offset(),
                format!("failed to read key for DictionaryAttr element {i}"),
            )
        })?;
        if key.is_empty() {
            return Err(r.err(format!(
                "invalid empty attribute name for DictionaryAttr element {i}"
            )));
        }
        let val = tagged_attr(r, ctx, depth + 1).map_err(|e| {
            e.with_context(
                r.offset(),
                format!("failed to parse DictionaryAttr value for key {key}"),
            )
        })?;
        if v.iter().any(|(k, _)| *k == key) {
            return Err(r.err(format!(
                "failed to parse DictionaryAttr, duplicate key found: {key}"
            )));
        }
        v.push((key, val));
    }
    Ok(v)
}

fn inline_int(r: &mut Reader<'_>, s: Scalar) -> Result<u64, ReadError> {
    let w = s.bit_width();
    if w == 1 {
        return Ok(u64::from(r.u8()? != 0));
    }
    let at = r.offset();
    let v = r.varint()?;
    if w < 64 && v >> w != 0 {
        return Err(ReadError::new(
            at,
            format!("value {v} does not fit in {w} bits"),
        ));
    }
    Ok(v)
}

fn ap_int(r: &mut Reader<'_>, w: u32) -> Result<u64, ReadError> {
    let at = r.offset();
    if w <= 8 {
        let b = r.u8()?;
        if w < 8 && u32::from(b) >> w != 0 {
            return Err(ReadError::new(
                at,
                format!("value {b} does not fit in {w} bits."),
            ));
        }
        return Ok(u64::from(b));
    }
    let v = r.svarint()? as u64;
    if w < 64 && v >> w != 0 {
        return Err(ReadError::new(
            at,
            format!("value {v} does not fit in {w} bits"),
        ));
    }
    Ok(v)
}

fn create_global(ctx: &mut Ctx<'_>, g: GlobalInfo) -> Result<(), ReadError> {
    let name = ctx.strings.get(g.name, g.at)?;
    let ty = ctx.type_at(g.ty, g.at)?;
    let value = dense_from_constant(ctx, ty, g.constant, g.at)?;
    let mut attrs: Vec<(&'static str, Attr)> = vec![
        ("sym_name", Attr::String(name)),
        ("value", value),
        ("alignment", Attr::Int(g.alignment)),
    ];
    if g.visibility > 1 {
        return Err(ReadError::new(
            g.at,
            format!("invalid integer value for enum type: {}", g.visibility),
        ));
    }
    attrs.push((
        "symbol_visibility",
        Attr::Enum(crate::ir::EnumKind::SymbolVisibility, g.visibility as u8),
    ));
    if g.is_constant != 0 {
        attrs.push(("constant", Attr::Unit));
    }
    let op = Op {
        opcode: Opcode::Global,
        results: Vec::new(),
        operands: Vec::new(),
        segments: Vec::new(),
        attrs,
        regions: Vec::new(),
        offset: g.at,
        debug: None,
    };
    let id = ctx.module.ops.append(op);
    ctx.module.body.ops.push(id);
    Ok(())
}

fn create_function(
    ctx: &mut Ctx<'_>,
    f: FunctionInfo<'_>,
    main_at: usize,
) -> Result<(), ReadError> {
    let name = ctx.strings.get(f.name, f.at).map_err(|e| {
        e.with_context(
            main_at,
            format!("failed to get function name string at index {}", f.name),
        )
    })?;
    if name.is_empty() {
        return Err(ReadError::new(
            main_at,
            format!("function name at index {} is empty", f.name),
        ));
    }
    if f.sig >= ctx.module.types.len() as u64 {
        return Err(ReadError::new(
            main_at,
            format!(
                "function signature index {} out of bounds for function '{name}'",
                f.sig
            ),
        ));
    }
    let sig = ctx.type_at(f.sig, f.at).map_err(|e| {
        // (NVIDIA's message lacks the closing quote.)
        e.with_context(
            main_at,
            format!(
                "failed to parse type at index {} for function '{name}",
                f.sig
            ),
        )
    })?;
    let Type::Function { inputs, .. } = ctx.module.types[sig].clone() else {
        return Err(ReadError::new(
            main_at,
            format!("function signature index {} does not refer to a function type for function '{name}'", f.sig),
        ));
    };
    let mut it = DebugIter {
        func: f.loc,
        next: 0,
    };
    let debug = ctx.debug_next(
        &mut it,
        main_at,
        &format!("failed to read function location for '{name}'"),
    )?;
    if f.flags & 0x02 == 0 {
        return Err(ReadError::new(
            main_at,
            format!("un-expected non-entry function '{name}'"),
        ));
    }
    let hints = match f.hints {
        Some(Attr::OptimizationHints(h)) => Attr::OptimizationHints(h),
        Some(_) => {
            return Err(ReadError::new(
                main_at,
                format!("invalid optimization hints attribute for function '{name}'"),
            ))
        }
        None => Attr::OptimizationHints(Vec::new()),
    };
    let op_id = ctx.module.ops.append(Op {
        opcode: Opcode::Entry,
        results: Vec::new(),
        operands: Vec::new(),
        segments: Vec::new(),
        attrs: vec![
            ("sym_name", Attr::String(name.clone())),
            ("function_type", Attr::Type(sig)),
            ("optimization_hints", hints),
        ],
        regions: Vec::new(),
        offset: f.at,
        debug,
    });
    let mut scope: Vec<ValueId> = Vec::with_capacity(inputs.len());
    let mut block = Block::default();
    for (i, ty) in inputs.iter().enumerate() {
        let v = ctx.module.values.append(Value {
            ty: *ty,
            def: ValueDef::BlockArg {
                op: op_id,
                region: 0,
                index: i as u32,
            },
        });
        scope.push(v);
        block.args.push(v);
    }
    let mut body = f.body;
    let body_at = body.offset();
    while !body.is_empty() {
        let op = parse_op(&mut body, ctx, &mut scope, &mut it, 0).map_err(|e| {
            e.rebase(body_at).with_context(
                main_at,
                format!("failed to parse function body for function '{name}'"),
            )
        })?;
        block.ops.push(op);
    }
    ctx.module.ops[op_id].regions.push(Region {
        blocks: vec![block],
    });
    ctx.module.body.ops.push(op_id);
    Ok(())
}

/// The handle of a `token` type, appending one to the type arena if needed.
fn token_type(ctx: &mut Ctx<'_>) -> TypeId {
    let entries = &ctx.type_entries;
    if let Some((h, _)) = ctx.module.types.iter().find(|(h, t)| {
        **t == Type::Token && entries.get(h.index()).is_some_and(|e| e.error.is_none())
    }) {
        return h;
    }
    ctx.type_entries.push(TypeEntry {
        error: None,
        silent: false,
        refs: Vec::new(),
        base: 0,
        end: 0,
    });
    ctx.type_checked.push(true);
    ctx.module.types.append(Type::Token)
}

fn is_terminator(op: Opcode) -> bool {
    op.is_terminator()
}

fn parse_op(
    r: &mut Reader<'_>,
    ctx: &mut Ctx<'_>,
    scope: &mut Vec<ValueId>,
    it: &mut DebugIter,
    depth: usize,
) -> Result<OpId, ReadError> {
    if depth > MAX_NESTING {
        return Err(r.err("region nesting exceeds the limit"));
    }
    let at = r.offset();
    let code = r
        .varint()
        .map_err(|_| r.err("failed to read operation opcode."))?;
    // The highest public opcode of each version; below it, gaps are
    // "unknown", above it everything is "unsupported".
    let max_code: u64 = match (ctx.version.major, ctx.version.minor) {
        (13, 1) => 109,
        (13, 2) => 110,
        (13, 3) => 117,
        _ => 122,
    };
    let opcode = match Opcode::from_code(code) {
        Some(op)
            if code <= max_code && Version::new(op.since().0, op.since().1, 0) <= ctx.version =>
        {
            op
        }
        None if code <= max_code => {
            return Err(r.err(format!("unknown or unimplemented opcode: {code}")))
        }
        _ => {
            return Err(r.err(format!(
                "unsupported opcode {code} for bytecode version {}",
                ctx.version
            )))
        }
    };
    let debug = ctx.debug_next(it, r.offset(), "failed to read operation location.")?;
    let name = || format!("{:?}Op", opcode);
    let layout = table::layout(opcode);
    let mut result_types: Vec<TypeId> = Vec::new();
    let mut flags: u64 = 0;
    let mut attrs: Vec<(&'static str, Attr)> = Vec::new();
    let mut operands: Vec<ValueId> = Vec::new();
    let mut segments: Vec<Segment> = Vec::new();
    let mut count: Option<u64> = None;
    let mut regions: Vec<Region> = Vec::new();
    let op_id = ctx.module.ops.append(Op {
        opcode,
        results: Vec::new(),
        operands: Vec::new(),
        segments: Vec::new(),
        attrs: Vec::new(),
        regions: Vec::new(),
        offset: at,
        debug,
    });
    let fixed_after_count = |steps: &[Step], from: usize| {
        steps[from..]
            .iter()
            .filter(|s| matches!(s, Step::Operand(_)))
            .count() as u64
    };
    // Operands are read one index at a time, each at least one byte, so a
    // huge count fails at the end of the data without allocating for it.
    // Ops with operand segments (sized or optional groups) name the segment
    // in their messages; the others number operands from 0.
    let segmented = layout
        .steps
        .iter()
        .any(|s| matches!(s, Step::Sized(_) | Step::OptOperand(..)));
    let read_operand = |r: &mut Reader<'_>,
                        scope: &[ValueId],
                        segment: &str,
                        element: u64,
                        overall: usize|
     -> Result<ValueId, ReadError> {
        let what = if segmented {
            format!("{segment} segment, element {element}")
        } else {
            format!("operand {overall}")
        };
        let idx = r
            .varint()
            .map_err(|_| r.err(format!("failed to read operand index for {what}")))?;
        match usize::try_from(idx).ok().and_then(|k| scope.get(k)) {
            Some(v) => Ok(*v),
            None => Err(r.err(format!(
                "operand index {idx} out of bounds (size={}) for {what}",
                scope.len()
            ))),
        }
    };
    for (si, step) in layout.steps.iter().enumerate() {
        match *step {
            Step::Result(_) => {
                let i = result_types.len();
                let t = read_result_type(r, ctx, i, opcode)?;
                result_types.push(t);
            }
            Step::Results => {
                // Read one type at a time: a huge count fails at the end of the
                // data, as in NVIDIA's reader.
                let n = r.varint()?;
                for i in 0..n {
                    let t = read_result_type(r, ctx, i as usize, opcode)?;
                    result_types.push(t);
                }
            }
            Step::Flags(since) => {
                if since.map_or(true, |v| ctx.version >= v) {
                    flags = r.varint()?;
                }
            }
            Step::Unit(n, bit) => {
                if flags >> bit & 1 != 0 {
                    attrs.push((n, Attr::Unit));
                }
            }
            Step::Attr(n, kind, cond) => {
                let present = match cond {
                    Cond::Always => true,
                    Cond::Since(v) => ctx.version >= v,
                    Cond::Flag(b) => flags >> b & 1 != 0,
                };
                if present {
                    let a = op_attr(r, ctx, kind, &result_types).map_err(|e| {
                        let e = if kind == AttrKind::Tagged {
                            e.with_context(
                                r.offset(),
                                "failed to parse self-contained attribute for AssumePredicateAttrInterface",
                            )
                        } else {
                            e
                        };
                        let what = if matches!(cond, Cond::Flag(_)) {
                            "optional attribute"
                        } else {
                            "attribute"
                        };
                        e.with_context(r.offset(), format!("failed to parse {what} '{n}'"))
                    })?;
                    attrs.push((n, a));
                }
            }
            Step::Operand(n) => {
                let start = operands.len() as u32;
                operands.push(read_operand(r, scope, n, 0, operands.len())?);
                segments.push(Segment {
                    name: n,
                    start,
                    len: 1,
                });
            }
            Step::OptOperand(n, bit) => {
                let start = operands.len() as u32;
                let mut len = 0;
                if flags >> bit & 1 != 0 {
                    operands.push(read_operand(r, scope, n, 0, operands.len())?);
                    len = 1;
                }
                segments.push(Segment {
                    name: n,
                    start,
                    len,
                });
            }
            Step::Sized(n) => {
                let k = r
                    .varint()
                    .map_err(|_| r.err("failed to read operand count"))?;
                let start = operands.len() as u32;
                for j in 0..k {
                    operands.push(read_operand(r, scope, n, j, operands.len())?);
                }
                segments.push(Segment {
                    name: n,
                    start,
                    len: k as u32,
                });
            }
            Step::Count => {
                let cat = r.offset();
                let k = r
                    .varint()
                    .map_err(|_| r.err("failed to read operand count"))?;
                let fixed = fixed_after_count(layout.steps, si);
                if k < fixed {
                    return Err(ReadError::new(
                        cat,
                        format!(
                            "operand count {k} is less than the {fixed} operands {} requires",
                            name()
                        ),
                    ));
                }
                count = Some(k - fixed);
            }
            Step::Unsized(n) => {
                let k = count.take().unwrap_or(0);
                let start = operands.len() as u32;
                for j in 0..k {
                    operands.push(read_operand(r, scope, n, j, operands.len())?);
                }
                segments.push(Segment {
                    name: n,
                    start,
                    len: k as u32,
                });
            }
            Step::Regions(expected) => {
                let rat = r.offset();
                let k = r.varint()?;
                if k != u64::from(expected) || k > MAX_REGIONS {
                    return Err(ReadError::new(
                        rat,
                        format!("{} expects {expected} regions, found {k}", name()),
                    ));
                }
                for ri in 0..k {
                    let reg = parse_region(r, ctx, scope, it, op_id, ri as u32, depth + 1)
                        .map_err(|e| {
                            e.with_context(r.offset(), format!("failed to parse region {ri}"))
                        })?;
                    regions.push(reg);
                }
            }
        }
    }
    // Before 13.2, print_tko had no result; NVIDIA's reader still gives it a
    // token result, which is not addressable by later operands.
    let mut hidden = 0;
    if opcode == Opcode::PrintTko && ctx.version < Version::new(13, 2, 0) && result_types.is_empty()
    {
        result_types.push(token_type(ctx));
        hidden = 1;
    }
    let mut results = Vec::with_capacity(result_types.len());
    let visible = result_types.len() - hidden;
    for (i, ty) in result_types.into_iter().enumerate() {
        let v = ctx.module.values.append(Value {
            ty,
            def: ValueDef::Result {
                op: op_id,
                index: i as u32,
            },
        });
        results.push(v);
        if i < visible {
            scope.push(v);
        }
    }
    let op = &mut ctx.module.ops[op_id];
    op.results = results;
    op.operands = operands;
    op.segments = segments;
    op.attrs = attrs;
    op.regions = regions;
    Ok(op_id)
}

/// Reads a result type index; like NVIDIA's reader, a bad index is reported
/// only as `failed to get result type N for XOp`.
fn read_result_type(
    r: &mut Reader<'_>,
    ctx: &mut Ctx<'_>,
    i: usize,
    op: Opcode,
) -> Result<TypeId, ReadError> {
    let msg = || format!("failed to get result type {i} for {op:?}Op");
    let idx = r.varint().map_err(|_| r.err(msg()))?;
    if idx >= ctx.module.types.len() as u64 || ctx.type_entries[idx as usize].silent {
        return Err(r.err(msg()));
    }
    let at = r.offset();
    ctx.type_at(idx, at)
        .map_err(|e| e.with_context(r.offset(), msg()))
}

fn parse_region(
    r: &mut Reader<'_>,
    ctx: &mut Ctx<'_>,
    scope: &mut Vec<ValueId>,
    it: &mut DebugIter,
    owner: OpId,
    index: u32,
    depth: usize,
) -> Result<Region, ReadError> {
    let n = r
        .varint()
        .map_err(|_| r.err("failed to read region block count"))?;
    if n > MAX_BLOCKS {
        return Err(r.err(format!(
            "region has {n} blocks; at most {MAX_BLOCKS} is supported"
        )));
    }
    let mut region = Region::default();
    for bi in 0..n {
        let b = parse_block(r, ctx, scope, it, owner, index, depth).map_err(|e| {
            e.with_context(r.offset(), format!("failed to parse block {bi} in region."))
        })?;
        region.blocks.push(b);
    }
    Ok(region)
}

fn parse_block(
    r: &mut Reader<'_>,
    ctx: &mut Ctx<'_>,
    scope: &mut Vec<ValueId>,
    it: &mut DebugIter,
    owner: OpId,
    region: u32,
    depth: usize,
) -> Result<Block, ReadError> {
    let nargs = r
        .varint()
        .map_err(|_| r.err("failed to read block argument count."))?;
    if nargs > MAX_BLOCK_ARGS || nargs > r.remaining() as u64 {
        return Err(r.err(format!(
            "block argument count {nargs} exceeds the remaining data"
        )));
    }
    let saved = scope.len();
    let mut block = Block::default();
    for i in 0..nargs {
        let msg = || format!("failed to read block argument type: {i}");
        let idx = r.varint().map_err(|_| r.err(msg()))?;
        if idx >= ctx.module.types.len() as u64 || ctx.type_entries[idx as usize].silent {
            return Err(r.err(msg()));
        }
        let at = r.offset();
        let ty = ctx
            .type_at(idx, at)
            .map_err(|e| e.with_context(r.offset(), msg()))?;
        let v = ctx.module.values.append(Value {
            ty,
            def: ValueDef::BlockArg {
                op: owner,
                region,
                index: i as u32,
            },
        });
        block.args.push(v);
        scope.push(v);
    }
    let nops = r
        .varint()
        .map_err(|_| r.err("failed to read block operation count."))?;
    if nops > MAX_BLOCK_OPS || nops > r.remaining() as u64 {
        return Err(r.err(format!(
            "block operation count {nops} exceeds the remaining data"
        )));
    }
    for i in 0..nops {
        let op = parse_op(r, ctx, scope, it, depth).map_err(|e| {
            e.with_context(
                r.offset(),
                format!("failed to parse operation {i} in block."),
            )
        })?;
        block.ops.push(op);
    }
    match block.ops.last() {
        None => {
            return Err(r.err(
                "invalid block structure: block is expected to have a terminator operation, but it is empty",
            ))
        }
        Some(&last) => {
            let op = &ctx.module.ops[last];
            if !is_terminator(op.opcode) {
                return Err(r.err(format!(
                    "invalid block structure: block is expected to have a terminator operation, but the last operation '{}' is not a terminator.",
                    op.name()
                )));
            }
        }
    }
    scope.truncate(saved);
    Ok(block)
}

fn op_attr(
    r: &mut Reader<'_>,
    ctx: &mut Ctx<'_>,
    kind: AttrKind,
    results: &[TypeId],
) -> Result<Attr, ReadError> {
    Ok(match kind {
        AttrKind::Enum(k) => {
            let v = r
                .varint()
                .map_err(|_| r.err("failed to read VarInt for enum attribute."))?;
            if v as usize >= k.keywords().len() {
                return Err(r.err(format!("invalid integer value for enum type: {v}")));
            }
            Attr::Enum(k, v as u8)
        }
        AttrKind::Int => Attr::Int(r.varint()?),
        AttrKind::Str => Attr::String(
            ctx.strings
                .read(r)
                .map_err(|e| e.with_context(r.offset(), "failed to read StringAttr."))?,
        ),
        AttrKind::Type => Attr::Type(ctx.read_type(r)?),
        AttrKind::Array => {
            let n = r.count(MAX_ATTR_ELEMS.min(r.remaining() as u64), "array size")?;
            let mut v = Vec::with_capacity(n as usize);
            for _ in 0..n {
                v.push(tagged_attr(r, ctx, 1)?);
            }
            Attr::Array(v)
        }
        AttrKind::Tagged => {
            // Only `assume` has one: its predicate.
            let a = tagged_attr(r, ctx, 0)?;
            if !matches!(
                a,
                Attr::DivBy { .. } | Attr::SameElements(_) | Attr::Bounded { .. }
            ) {
                return Err(
                    r.err("failed to cast parsed attribute to AssumePredicateAttrInterface")
                );
            }
            a
        }
        AttrKind::DenseElements => {
            let at = r.offset();
            let ci = r.varint()?;
            let Some(&ty) = results.first() else {
                return Err(ReadError::new(at, "dense constant without a result type"));
            };
            dense_from_constant(ctx, ty, ci, at)?
        }
        AttrKind::DenseI32 => {
            let v = i32_list(r, "DenseI32ArrayAttr values")?;
            if let Some(x) = v.iter().find(|&&x| x == i32::MAX || x == i32::MIN) {
                return Err(r.err(format!("array contains unsupported value {x}")));
            }
            Attr::DenseI32(v)
        }
        AttrKind::DenseBool => {
            let at = r.offset();
            let n = r.varint()?;
            if n > r.remaining() as u64 || n > MAX_ATTR_ELEMS {
                return Err(ReadError::new(
                    at,
                    format!("array size in bytecode ({n}) exceeds the remaining data"),
                ));
            }
            Attr::DenseBool(r.bytes(n as usize)?.iter().map(|&b| b != 0).collect())
        }
        AttrKind::OptimizationHints => Attr::OptimizationHints(dictionary(r, ctx, 0)?),
        AttrKind::Bool => Attr::Bool(r.u8()? != 0),
    })
}
