//! Golden tests for the printer: every corpus bytecode file must print
//! exactly what NVIDIA's `tileirdisasm` prints for it, with and without `-g`.
//!
//! Every corpus file (primary, 13.1, 13.4) is compared with the output of
//! the real tool, which must be installed (`$CUDA_ROOT/bin/tileirdisasm`,
//! else `<repo>/.tools/cuda/bin/tileirdisasm`): the test fails if it is
//! missing.
mod common;
use std::path::{Path, PathBuf};
use std::process::Command;

use tileiras::bytecode;
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

/// Every `.tileir` file in the corpus, sorted.
fn corpus_files() -> Vec<PathBuf> {
    let mut v = Vec::new();
    let dirs = std::fs::read_dir(common::corpus()).expect("corpus directory (tests/data/corpus)");
    for d in dirs.flatten() {
        if !d.path().is_dir() {
            continue;
        }
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            if f.path().extension().is_some_and(|e| e == "tileir") {
                v.push(f.path());
            }
        }
    }
    v.sort();
    assert!(
        v.len() >= 200,
        "expected the full corpus, found {} files",
        v.len()
    );
    v
}

fn ours(path: &Path, debug_info: bool) -> Result<String, String> {
    let data = std::fs::read(path).unwrap();
    bytecode::read(&data)
        .map(|m| print_module(&m, &PrintOptions { debug_info }))
        .map_err(|e| e.to_string())
}

struct Real {
    ok: bool,
    stdout: String,
    stderr: String,
}

fn real(path: &Path, debug_info: bool) -> Real {
    let mut c = Command::new(tool());
    if debug_info {
        c.arg("-g");
    }
    let o = c.arg(path).output().expect("run tileirdisasm");
    Real {
        ok: o.status.success(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn first_diff(a: &str, b: &str) -> String {
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}:\n  ours: {x}\n  real: {y}", i + 1);
        }
    }
    format!(
        "line counts differ: {} vs {}",
        a.lines().count(),
        b.lines().count()
    )
}

fn compare_all(debug_info: bool) {
    let mut pass = 0;
    let mut refused = 0;
    let mut failures = Vec::new();
    for path in corpus_files() {
        let r = real(&path, debug_info);
        let got = ours(&path, debug_info);
        if !r.ok {
            // The real tool rejects the module after reading it (its
            // verifier); the reader alone must still read it, and the
            // rejection must be the verifier's.
            assert!(
                r.stderr.contains("verification failed"),
                "{}: real tool failed unexpectedly: {}",
                path.display(),
                r.stderr
            );
            assert!(
                got.is_ok(),
                "{}: reader failed: {:?}",
                path.display(),
                got.err()
            );
            refused += 1;
            continue;
        }
        match got {
            Ok(text) if text == r.stdout => pass += 1,
            Ok(text) => failures.push(format!(
                "{}: {}",
                path.display(),
                first_diff(&text, &r.stdout)
            )),
            Err(e) => failures.push(format!("{}: read error {e}", path.display())),
        }
    }
    eprintln!(
        "tileirdisasm{}: {pass} identical, {} different, {refused} refused by the real verifier",
        if debug_info { " -g" } else { "" },
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(pass >= 200);
}

#[test]
fn all_files_match_real_tileirdisasm() {
    compare_all(false);
}

#[test]
fn all_files_match_real_tileirdisasm_with_debug_info() {
    compare_all(true);
}

/// The op-coverage files (`tests/data/bytecode/ops`, written with cuTile's
/// encoders, see `gen.py` there) and NVIDIA's versioning inputs: output,
/// or error lines, must match the real tool.
#[test]
fn extra_files_match_real_tileirdisasm() {
    let data = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/bytecode"));
    let mut files = Vec::new();
    for dir in [data.clone(), data.join("ops")] {
        for f in std::fs::read_dir(dir).unwrap().flatten() {
            if f.path().extension().is_some_and(|e| e == "tileirbc") {
                files.push(f.path());
            }
        }
    }
    files.sort();
    assert!(files.len() >= 20, "found {} files", files.len());
    let mut failures = Vec::new();
    for path in &files {
        for debug_info in [false, true] {
            let r = real(path, debug_info);
            let bytes = std::fs::read(path).unwrap();
            match bytecode::read(&bytes) {
                Ok(m) if r.ok => {
                    let got = print_module(&m, &PrintOptions { debug_info });
                    if got != r.stdout {
                        failures.push(format!(
                            "{}: {}",
                            path.display(),
                            first_diff(&got, &r.stdout)
                        ));
                    }
                }
                Err(e) if !r.ok => {
                    let real_lines: Vec<&str> = r
                        .stderr
                        .lines()
                        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
                        .collect();
                    if e.disasm_lines() != real_lines {
                        failures.push(format!(
                            "{}: errors differ: {:?} vs {real_lines:?}",
                            path.display(),
                            e.disasm_lines()
                        ));
                    }
                }
                Ok(_) => failures.push(format!(
                    "{}: real tool failed: {}",
                    path.display(),
                    r.stderr
                )),
                Err(e) => failures.push(format!("{}: read error {e}", path.display())),
            }
        }
    }
    eprintln!(
        "extra files: {} checked twice, {} failures",
        files.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The `tileirdisasm` binary behaves like NVIDIA's on the command line:
/// same output, messages and exit codes.
#[test]
fn cli_matches_real_tileirdisasm() {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_tileirdisasm"));
    let real_tool = tool();
    let vadd = common::corpus().join("vadd_f32_strided/vadd_f32_strided.v13_3.tileir");
    let vadd = vadd.to_str().unwrap().to_string();
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.bin");
    std::fs::write(&bad, b"not bytecode").unwrap();
    let bad = bad.to_str().unwrap().to_string();
    let cases: Vec<Vec<String>> = vec![
        vec![],
        vec![vadd.clone()],
        vec!["-g".into(), vadd.clone()],
        vec![vadd.clone(), "--print-debug-info".into()],
        vec!["--print-debug-info=false".into(), vadd.clone()],
        vec!["-g=maybe".into(), vadd.clone()],
        vec!["--preview=bogus".into(), vadd.clone()],
        vec!["-x".into(), vadd.clone()],
        vec![vadd.clone(), vadd.clone()],
        vec!["/nonexistent/file.tileir".into()],
        vec![bad.clone()],
    ];
    for args in cases {
        let run = |exe: &Path| {
            let o = Command::new(exe).args(&args).output().unwrap();
            let norm = |b: &[u8]| String::from_utf8_lossy(b).replace(exe.to_str().unwrap(), "PROG");
            (o.status.code(), norm(&o.stdout), norm(&o.stderr))
        };
        assert_eq!(run(&ours), run(&real_tool), "tileirdisasm {args:?}");
    }
    // File names are bytes: names that are not UTF-8 (printed with
    // U+FFFD by the lossy comparison for both tools).
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let named = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"k\xff.tileir"));
    std::fs::copy(&vadd, &named).unwrap();
    let missing = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"no\xfe.tileir"));
    for path in [&named, &missing] {
        let run = |exe: &Path| {
            let o = Command::new(exe).arg(path).output().unwrap();
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            (o.status.code(), text(&o.stdout), text(&o.stderr))
        };
        assert_eq!(run(&ours), run(&real_tool), "tileirdisasm {path:?}");
    }
}
