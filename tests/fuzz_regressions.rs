//! Inputs that fuzzing found (kept under `tests/data/fuzz/`, listed in its
//! `expected.txt`) compile, or fail with the status and diagnostic listed
//! there, on every target family (and with line info on sm_90): never a
//! panic, never a ptxas rejection.
mod common;

use tileiras::options::{Gpu, Options, OutputKind};
use tileiras::Status;

/// The files and what each must give: status code and a diagnostic part.
fn expected() -> Vec<(String, i32, Option<String>)> {
    let dir = common::repo().join("tests/data/fuzz");
    let text = std::fs::read_to_string(dir.join("expected.txt")).expect("expected.txt");
    let list: Vec<(String, i32, Option<String>)> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut parts = l.splitn(3, ' ');
            let file = parts.next().expect("file").to_string();
            let status = parts.next().and_then(|s| s.parse().ok()).expect("status");
            let text = parts.next().filter(|t| *t != "-").map(str::to_string);
            (file, status, text)
        })
        .collect();
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/data/fuzz")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tileir"))
        .collect();
    files.sort();
    for f in &files {
        assert!(
            list.iter().any(|(n, ..)| n == f),
            "{f} has no line in expected.txt"
        );
    }
    assert!(!list.is_empty());
    list
}

#[test]
fn fuzz_finds_compile_or_fail_cleanly() {
    let dir = common::repo().join("tests/data/fuzz");
    for (file, status, text) in expected() {
        let bytes = std::fs::read(dir.join(&file)).expect("read");
        let runs = [Gpu::Sm80, Gpu::Sm90, Gpu::Sm120]
            .into_iter()
            .map(|gpu| (gpu, false))
            .chain([(Gpu::Sm90, true)]);
        for (gpu, line_info) in runs {
            let options = Options {
                gpu,
                line_info,
                output: OutputKind::Cubin,
                cuda_root: Some(common::cuda_root()),
                ..Options::default()
            };
            let mut log = Vec::new();
            let got = match tileiras::compile(&bytes, &options, &mut |d| log.push(d.to_string())) {
                Ok(out) => {
                    assert!(!out.bytes.is_empty(), "{file} {gpu:?}: empty cubin");
                    Status::Success
                }
                Err(e) => e.status(),
            };
            assert_eq!(got.code(), status, "{file} {gpu:?}: {log:?}");
            if let Some(t) = &text {
                let last = log.last().map(String::as_str).unwrap_or("");
                assert!(last.contains(t.as_str()), "{file} {gpu:?}: {last}");
            }
        }
    }
}
