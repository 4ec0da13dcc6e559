//! Malformed-input tests for the bytecode reader: every error path returns an
//! error with an offset, never panics, and (where NVIDIA's tool is installed,
//! which these tests require) says what NVIDIA's `tileirdisasm` says.
mod common;
use std::path::PathBuf;
use std::process::Command;

use tileiras::bytecode::{self, ReadErrorKind};
use tileiras::ir::print::{print_module, PrintOptions};

fn tool() -> PathBuf {
    let root = std::env::var_os("CUDA_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.tools/cuda")));
    let t = root.join("bin/tileirdisasm");
    assert!(
        t.is_file(),
        "NVIDIA tileirdisasm not found at {} (set CUDA_ROOT)",
        t.display()
    );
    t
}

fn corpus_files() -> Vec<(PathBuf, Vec<u8>)> {
    let mut v = Vec::new();
    for d in std::fs::read_dir(common::corpus())
        .expect("corpus directory")
        .flatten()
    {
        if !d.path().is_dir() {
            continue;
        }
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            if f.path().extension().is_some_and(|e| e == "tileir") {
                let data = std::fs::read(f.path()).unwrap();
                v.push((f.path(), data));
            }
        }
    }
    v.sort();
    assert!(v.len() >= 200, "expected the full corpus");
    v
}

fn vadd() -> Vec<u8> {
    std::fs::read(common::corpus().join("vadd_f32_strided/vadd_f32_strided.v13_3.tileir")).unwrap()
}

/// What NVIDIA's tool prints on stderr for `bytes`, line by line without
/// the `error: ` prefix, and its exit status.
fn real_errors(bytes: &[u8], tag: &str) -> (Vec<String>, i32) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{tag}.tileirbc"));
    std::fs::write(&path, bytes).unwrap();
    let o = Command::new(tool())
        .arg(&path)
        .output()
        .expect("run tileirdisasm");
    let lines = String::from_utf8_lossy(&o.stderr)
        .lines()
        .map(|l| l.strip_prefix("error: ").unwrap_or(l).to_string())
        .collect();
    (lines, o.status.code().unwrap_or(-1))
}

/// Asserts our reader rejects `bytes` exactly as NVIDIA's tool does.
fn same_as_nvidia(bytes: &[u8], tag: &str) -> bytecode::ReadError {
    let e = bytecode::read(bytes).expect_err(tag);
    let (real, code) = real_errors(bytes, tag);
    assert_eq!(code, 3, "{tag}: NVIDIA's tool accepted the input: {real:?}");
    assert_eq!(e.disasm_lines(), real, "{tag}");
    assert!(
        e.offset <= bytes.len(),
        "{tag}: offset {} past the end",
        e.offset
    );
    e
}

fn varint(mut x: u64, out: &mut Vec<u8>) {
    loop {
        let b = (x & 0x7f) as u8;
        x >>= 7;
        if x == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// A minimal bytecode writer: one entry `k(%arg0: tile<i1>)` whose body is
/// `body`, version 13.3, no debug info.
fn module(body: &[u8]) -> Vec<u8> {
    // types: i1, i32, tile<i1>, (tile<i1>) -> ()
    let types = vec![vec![0u8], vec![3u8], vec![13, 0, 0], vec![16, 1, 2, 0]];
    module_with_types(body, &types)
}

/// Like [`module`], with the type table `types` (encoded entries) whose last
/// entry is the entry's function type.
fn module_with_types(body: &[u8], types: &[Vec<u8>]) -> Vec<u8> {
    fn section(id: u8, align: usize, payload: &[u8], out: &mut Vec<u8>) {
        out.push(id | if align > 1 { 0x80 } else { 0 });
        varint(payload.len() as u64, out);
        if align > 1 {
            varint(align as u64, out);
            while out.len() % align != 0 {
                out.push(0xcb);
            }
        }
        out.extend_from_slice(payload);
    }
    fn table(items: &[Vec<u8>], width: usize) -> Vec<u8> {
        let mut t = Vec::new();
        varint(items.len() as u64, &mut t);
        while t.len() % width != 0 {
            t.push(0xcb);
        }
        let mut off = 0u64;
        for i in items {
            t.extend_from_slice(&off.to_le_bytes()[..width]);
            off += i.len() as u64;
        }
        for i in items {
            t.extend_from_slice(i);
        }
        t
    }
    let mut out = b"\x7fTileIR\x00\x0d\x03\x00\x00".to_vec();
    let mut func = Vec::new();
    varint(1, &mut func); // one function
    varint(0, &mut func); // name: string 0
    varint(types.len() as u64 - 1, &mut func); // signature: the last type
    func.push(0x02); // kernel entry
    varint(0, &mut func); // no location
    varint(body.len() as u64, &mut func);
    func.extend_from_slice(body);
    section(2, 8, &func, &mut out);
    section(5, 4, &table(types, 4), &mut out);
    section(1, 4, &table(&[b"k".to_vec()], 4), &mut out);
    out.push(0);
    out
}

const RETURN: [u8; 3] = [92, 0, 0];

/// `if %arg0 { <then> yield } else { yield }` nested `depth` times.
fn nested_ifs(depth: usize) -> Vec<u8> {
    fn region(ops: &[Vec<u8>]) -> Vec<u8> {
        let mut r = vec![1, 0];
        varint(ops.len() as u64, &mut r);
        for o in ops {
            r.extend_from_slice(o);
        }
        r
    }
    let yield_op = vec![109u8, 0, 0];
    let mut inner: Option<Vec<u8>> = None;
    for _ in 0..depth {
        let mut op = vec![50u8, 0, 0, 2];
        let then_ops = match inner.take() {
            Some(i) => vec![i, yield_op.clone()],
            None => vec![yield_op.clone()],
        };
        op.extend(region(&then_ops));
        op.extend(region(std::slice::from_ref(&yield_op)));
        inner = Some(op);
    }
    let mut body = inner.unwrap_or_default();
    body.extend_from_slice(&RETURN);
    body
}

#[test]
fn minimal_module_reads_and_prints() {
    let m = bytecode::read(&module(&RETURN)).expect("minimal module");
    let text = print_module(&m, &PrintOptions::default());
    assert_eq!(text, "entry @k(%arg0: tile<i1>) {\n  return\n}\n");
    let (real, code) = real_errors(&module(&RETURN), "minimal");
    assert_eq!((real, code), (vec![], 0));
}

#[test]
fn every_prefix_of_every_corpus_file_errors() {
    for (path, data) in corpus_files() {
        for len in 0..data.len() {
            let e = match bytecode::read(&data[..len]) {
                Ok(_) => panic!(
                    "{}: prefix of {len} bytes read successfully",
                    path.display()
                ),
                Err(e) => e,
            };
            assert!(
                e.offset <= len,
                "{}: prefix {len}: offset {} out of range",
                path.display(),
                e.offset
            );
            assert!(!e.message.is_empty());
        }
        assert!(bytecode::read(&data).is_ok(), "{}", path.display());
    }
}

#[test]
fn truncations_match_nvidia() {
    let data = vadd();
    let mut lens: Vec<usize> = (0..data.len()).step_by(7).collect();
    lens.extend([4, 8, 9, 11, 12, 13, 14, 154, data.len() - 1]);
    for len in lens {
        same_as_nvidia(&data[..len], &format!("trunc{len}"));
    }
}

#[test]
fn bad_magic() {
    let e = same_as_nvidia(b"hello, world", "magic");
    assert_eq!(e.kind, ReadErrorKind::BadMagic { mlir: false });
    assert_eq!(
        e.to_string(),
        "input does not correspond to Tile IR bytecode"
    );
    let e = same_as_nvidia(b"ML\xefR\x00\x01\x02", "mlir");
    assert_eq!(e.kind, ReadErrorKind::BadMagic { mlir: true });
    assert_eq!(
        e.to_string(),
        "input does not correspond to Tile IR bytecode (it looks like MLIR bytecode instead)"
    );
}

#[test]
fn unsupported_versions() {
    let data = vadd();
    for (major, minor, text) in [
        (99u8, 3u8, "unsupported Tile IR bytecode version: 99.3"),
        (13, 6, "unsupported Tile IR bytecode version: 13.6"),
        (13, 0, "unsupported Tile IR bytecode version: 13.0"),
        (12, 9, "unsupported Tile IR bytecode version: 12.9"),
    ] {
        let mut d = data.clone();
        d[8] = major;
        d[9] = minor;
        let e = same_as_nvidia(&d, &format!("v{major}_{minor}"));
        assert!(matches!(e.kind, ReadErrorKind::UnsupportedVersion(_)));
        assert_eq!(e.to_string(), text);
        assert_eq!(e.offset, 12);
    }
    // A preview tag on a released version.
    let mut d = data.clone();
    d[10] = 1;
    same_as_nvidia(&d, "tag");
}

#[test]
fn section_length_overflow() {
    let mut d = vadd();
    d[13] = 0xff;
    d[14] = 0x7f;
    let e = same_as_nvidia(&d, "seclen");
    assert!(e.message.contains("exceeds remaining data size"), "{e}");
    assert_eq!(e.offset, 15);
}

#[test]
fn bad_section_id() {
    let mut d = vadd();
    d[12] = 0x89;
    let e = same_as_nvidia(&d, "secid");
    assert_eq!(e.message, "unknown section ID: 9");
}

#[test]
fn bad_opcode() {
    let mut d = vadd();
    // First op of the function body: make_token, opcode 0x44 at offset 27.
    assert_eq!(d[27], 0x44);
    d[27] = 0x7f;
    let e = same_as_nvidia(&d, "opcode");
    assert!(e.message.starts_with("unsupported opcode 127"), "{e}");
    assert_eq!(e.offset, 28);
}

#[test]
fn operand_and_type_indices_out_of_range() {
    let mut d = vadd();
    d[28] = 0x70; // make_token's result type index
    let e = same_as_nvidia(&d, "typeidx");
    assert!(e.message.contains("failed to get result type 0"), "{e}");

    let mut body = vec![6u8, 1, 12, 0, 9]; // assume bounded<?, ?> on %9 (absent)
    body.extend_from_slice(&RETURN);
    let e = same_as_nvidia(&module(&body), "operand");
    assert!(e.message.contains("operand index 9 out of bounds"), "{e}");
}

#[test]
fn string_index_out_of_range() {
    let mut d = module(&RETURN);
    // Function name index: first byte after the count in the function section.
    let pos = d.windows(3).position(|w| w == [1, 0, 3]).unwrap();
    d[pos + 1] = 5;
    let e = bytecode::read(&d).expect_err("bad string index");
    assert!(
        e.to_string().contains("string index 5 out of bounds"),
        "{e}"
    );
    assert!(e.offset <= d.len());
}

#[test]
fn over_limit_counts_fail_without_allocating() {
    // A block claiming 2^40 operations, and a huge operand count.
    let mut body = vec![50u8, 0, 0, 2, 1, 0];
    varint(1 << 40, &mut body);
    let e = bytecode::read(&module(&body)).expect_err("huge op count");
    assert!(e.to_string().contains("exceeds"), "{e}");
    let mut body = vec![92u8, 0];
    varint(u64::MAX >> 1, &mut body);
    let d = module(&body);
    let e = bytecode::read(&d).expect_err("huge operand count");
    assert!(e.offset <= d.len(), "{e}");
    // A string table claiming 2^50 entries.
    let mut d = module(&RETURN);
    let n = d.len();
    let strings_at = n - 1 - (4 + 4 + 1); // count, pad to 4, one offset, "k"
    assert_eq!(d[strings_at], 1);
    d.truncate(strings_at);
    let mut tail = Vec::new();
    varint(1 << 50, &mut tail);
    tail.extend_from_slice(&[0, 0, 0, 0, b'k', 0]);
    d.extend_from_slice(&tail);
    assert!(bytecode::read(&d).is_err());
}

#[test]
fn nesting_is_limited() {
    let ok = bytecode::read(&module(&nested_ifs(10))).expect("10 nested regions");
    assert_eq!(
        ok.walk()
            .filter(|&o| ok.ops[o].opcode == tileiras::ir::Opcode::If)
            .count(),
        10
    );
    let e = bytecode::read(&module(&nested_ifs(500))).expect_err("500 nested regions");
    assert!(e.to_string().contains("nesting"), "{e}");
}

#[test]
fn nvidia_invalid_files() {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/bytecode/invalid"
    ));
    let mut n = 0;
    for f in std::fs::read_dir(dir).unwrap().flatten() {
        let data = std::fs::read(f.path()).unwrap();
        let tag = f.file_name().to_string_lossy().into_owned();
        let e = bytecode::read(&data).expect_err(&tag);
        let (real, code) = real_errors(&data, &tag);
        assert_eq!(code, 3, "{tag}");
        // The first (innermost) line is the cause.
        assert_eq!(e.disasm_lines().first(), real.first(), "{tag}");
        n += 1;
    }
    assert!(n >= 6);
}

/// xorshift64*: a small fixed-seed generator, so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(rng: &mut Rng, data: &[u8]) -> Vec<u8> {
    let mut d = data.to_vec();
    for _ in 0..1 + rng.below(3) {
        match rng.below(5) {
            0 => {
                let i = rng.below(d.len());
                d[i] ^= 1 << rng.below(8);
            }
            1 => {
                let i = rng.below(d.len() + 1);
                d.insert(i, rng.next() as u8);
            }
            2 if d.len() > 1 => {
                let i = rng.below(d.len());
                d.remove(i);
            }
            3 => {
                // Bump what may be a length or count field.
                let i = rng.below(d.len());
                d[i] = d[i].wrapping_add(1 + rng.below(4) as u8);
            }
            _ => {
                let i = rng.below(d.len());
                d[i] = [0x00, 0x7f, 0x80, 0xff][rng.below(4)];
            }
        }
    }
    d
}

#[test]
fn mutated_corpus_never_panics() {
    let files = corpus_files();
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let (mut ok, mut err) = (0, 0);
    for (path, data) in &files {
        for _ in 0..24 {
            let d = mutate(&mut rng, data);
            match bytecode::read(&d) {
                Ok(m) => {
                    ok += 1;
                    // Whatever reads must also print and walk.
                    let _ = print_module(&m, &PrintOptions { debug_info: true });
                    let _ = m.walk().count();
                }
                Err(e) => {
                    err += 1;
                    assert!(
                        e.offset <= d.len(),
                        "{}: offset {} past the end",
                        path.display(),
                        e.offset
                    );
                }
            }
        }
    }
    eprintln!("mutations: {ok} read, {err} rejected");
    assert!(ok + err >= 5000);
    assert!(err > 0);
}

/// Differential check on mutated corpus files: whenever NVIDIA's tool reads
/// and prints a mutant, ours must read it and print exactly the same text.
#[test]
fn mutants_nvidia_accepts_print_identically() {
    let files = corpus_files();
    let mut rng = Rng(0xd1ff_0000_0000_0042);
    let (mut accepted, mut rejected) = (0, 0);
    let dir = tempfile::tempdir().unwrap();
    for round in 0..400 {
        let (path, data) = &files[rng.below(files.len())];
        // One byte changed: most mutants stay readable.
        let mut d = data.clone();
        let i = rng.below(d.len());
        d[i] = rng.next() as u8;
        let file = dir.path().join(format!("m{round}.tileirbc"));
        std::fs::write(&file, &d).unwrap();
        let o = Command::new(tool()).arg(&file).output().unwrap();
        let _ = std::fs::remove_file(&file);
        if !o.status.success() {
            rejected += 1;
            continue;
        }
        accepted += 1;
        let m = bytecode::read(&d).unwrap_or_else(|e| {
            panic!(
                "{} (mutant {round}): NVIDIA reads it, we fail: {e}",
                path.display()
            )
        });
        let text = tileiras::ir::string_to_bytes(&print_module(&m, &PrintOptions::default()));
        assert!(
            text == o.stdout,
            "{} (mutant {round}): output differs",
            path.display()
        );
    }
    eprintln!("mutants: {accepted} printed identically, {rejected} rejected by NVIDIA");
    assert!(accepted > 50);
}

/// A tile type entry: element type index and dimensions.
fn tile_type(element: u8, dims: &[i64]) -> Vec<u8> {
    let mut t = vec![13, element, dims.len() as u8];
    for d in dims {
        t.extend_from_slice(&d.to_le_bytes());
    }
    t
}

#[test]
fn pointees_tile_and_view_elements_follow_nvidias_reader() {
    const I4: u8 = 22;
    const F4: u8 = 19;
    const TOKEN: u8 = 17;
    let ptr = |pointee: u8| vec![12u8, pointee];
    let entry = |param: u8| vec![16u8, 1, param, 0];
    let mut view = vec![14u8, 0, 1];
    view.extend_from_slice(&16i64.to_le_bytes());
    view.push(1);
    view.extend_from_slice(&1i64.to_le_bytes());
    // (name, types, message of the innermost error)
    let cases: Vec<(&str, Vec<Vec<u8>>, &str)> = vec![
        (
            "ptr_i4",
            vec![vec![I4], ptr(0), tile_type(1, &[]), entry(2)],
            "failed to verify 'pointeeType': ",
        ),
        (
            "ptr_token",
            vec![vec![TOKEN], ptr(0), tile_type(1, &[]), entry(2)],
            "failed to verify 'pointeeType': ",
        ),
        (
            // The pointee fails before the shape is looked at.
            "ptr_i4_tile_of_3",
            vec![vec![I4], ptr(0), tile_type(1, &[3]), entry(2)],
            "failed to verify 'pointeeType': ",
        ),
        (
            "ptr_f4_tile_of_2",
            vec![vec![F4], ptr(0), tile_type(1, &[2]), entry(2)],
            "tiles of ptr<f4E2M1FN> must have rank 0; use an f4 tile view for memory accesses",
        ),
        (
            "ptr_f4_tile_of_3",
            vec![vec![F4], ptr(0), tile_type(1, &[3]), entry(2)],
            "tiles of ptr<f4E2M1FN> must have rank 0; use an f4 tile view for memory accesses",
        ),
        (
            "tensor_view_i4",
            vec![vec![I4], view, entry(1)],
            "failed to verify 'elementType': ",
        ),
        (
            "tile_token",
            vec![vec![TOKEN], tile_type(0, &[]), entry(1)],
            "failed to verify 'elementType': ",
        ),
        (
            "f4_tile_of_3",
            vec![vec![F4], tile_type(0, &[3]), entry(1)],
            "F4E2M1FN tiles must have an even number of elements",
        ),
        (
            "f4_scalar_tile",
            vec![vec![F4], tile_type(0, &[]), entry(1)],
            "F4E2M1FN tiles must have an even number of elements",
        ),
        (
            "i32_tile_of_6",
            vec![vec![3], tile_type(0, &[6]), entry(1)],
            "all dimensions must be powers of two, got 6",
        ),
        (
            "huge_tile",
            vec![vec![3], tile_type(0, &[1 << 20, 1 << 20]), entry(1)],
            "tile would exceed the maximum of 16777216 elements",
        ),
    ];
    for (name, types, message) in cases {
        let d = module_with_types(&RETURN, &types);
        let e = same_as_nvidia(&d, name);
        assert_eq!(e.kind, ReadErrorKind::Malformed, "{name}");
        assert!(e.message.starts_with(message), "{name}: {e}");
    }
    // A scalar pointer to f4E2M1FN is a valid type.
    let d = module_with_types(&RETURN, &[vec![F4], ptr(0), tile_type(1, &[]), entry(2)]);
    let m = bytecode::read(&d).expect("tile<ptr<f4E2M1FN>>");
    let text = print_module(&m, &PrintOptions::default());
    assert_eq!(
        text,
        "entry @k(%arg0: tile<ptr<f4E2M1FN>>) {\n  return\n}\n"
    );
    assert_eq!(real_errors(&d, "ptr_f4"), (vec![], 0));
}

#[test]
fn partition_view_rules_are_reader_errors_as_nvidia_reports_them() {
    // NVIDIA's reader checks a partition view type as it builds it: the
    // message comes with its offset and the chain of what was being read.
    for name in [
        "view_dim_map_twice",
        "view_padding_int",
        "view_tile_not_pow2",
    ] {
        let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/verify"))
            .join(format!("{name}.tileirbc"));
        let data = std::fs::read(&path).unwrap();
        same_as_nvidia(&data, name);
    }
}
