//! Every corpus module verifies clean, except the one NVIDIA rejects, which
//! fails with NVIDIA's exact message.
mod common;
use std::path::PathBuf;

fn corpus_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let dirs = std::fs::read_dir(common::corpus()).expect("corpus directory missing");
    for d in dirs.flatten() {
        if let Ok(files) = std::fs::read_dir(d.path()) {
            for f in files.flatten() {
                if f.path().extension().is_some_and(|e| e == "tileir") {
                    out.push(f.path());
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn corpus_verifies_except_known_failure() {
    let files = corpus_files();
    assert!(
        files.len() > 100,
        "only {} corpus modules found",
        files.len()
    );
    let mut failures = Vec::new();
    let mut rejected = 0;
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let module = match tileiras::bytecode::read(&bytes) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{}: read error {e}", path.display()));
                continue;
            }
        };
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let result = tileiras::verify::verify(&module);
        if name.starts_with("uint_floordiv_u32.") {
            rejected += 1;
            let errs = result.expect_err("uint_floordiv_u32 must be rejected");
            let msgs: Vec<String> = errs.iter().map(|d| d.message.clone()).collect();
            assert_eq!(
                msgs,
                vec!["'cuda_tile.divi' op rounding mode 'negative_inf' is not allowed with 'unsigned' flag"],
                "{name}"
            );
            assert!(errs[0].offset.is_some());
        } else if let Err(errs) = result {
            for e in errs {
                failures.push(format!("{name}: {e}"));
            }
        }
    }
    assert_eq!(rejected, 3, "expected the three uint_floordiv_u32 versions");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
