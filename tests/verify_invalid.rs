//! Invalid modules written with cuTile's own bytecode encoders
//! (`tests/data/verify/gen.py`), one per rule family: NVIDIA's
//! `tileirdisasm` and our verifier must give the same verdict, and every
//! message NVIDIA prints must be among ours, word for word. Fails (never
//! skips) when NVIDIA's tools are missing.
mod common;

use std::process::Command;

fn nvidia(path: &std::path::Path) -> (bool, Vec<String>) {
    let tool = common::cuda_root().join("bin/tileirdisasm");
    let out = Command::new(&tool)
        .arg(path)
        .output()
        .expect("run tileirdisasm");
    // One message per `error: ` line, with the lines that continue it (an
    // op MLIR prints on lines of its own).
    let mut errs: Vec<String> = Vec::new();
    let mut open = false;
    for line in String::from_utf8_lossy(&out.stderr).lines() {
        if let Some(i) = line.find("error: ") {
            errs.push(line[i + 7..].to_string());
            open = true;
        } else if line.contains("note: ") {
            open = false;
        } else if let (true, Some(last)) = (open, errs.last_mut()) {
            last.push('\n');
            last.push_str(line);
        }
    }
    let errs = errs
        .into_iter()
        .filter(|m| {
            !m.starts_with("verification failed for deserialized")
                && !m.starts_with("deserialized module does not conform")
                && !m.starts_with("failed to read provided Tile IR bytecode")
        })
        .collect();
    (out.status.success(), errs)
}

#[test]
fn invalid_modules_match_nvidia() {
    let dir = common::repo().join("tests/data/verify");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "tileirbc"))
        .collect();
    files.sort();
    assert!(files.len() >= 30, "only {} cases", files.len());
    let mut mismatches = Vec::new();
    let mut rejected = 0;
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let (ok, theirs) = nvidia(path);
        let module = match tileiras::bytecode::read(&bytes) {
            Ok(m) => m,
            Err(e) => {
                // A type NVIDIA refuses while reading: both readers must refuse.
                rejected += 1;
                if ok {
                    mismatches.push(format!(
                        "{}: our reader refuses ({e}), NVIDIA accepts",
                        path.display()
                    ));
                }
                continue;
            }
        };
        // Verification, then (as NVIDIA's tools) the format invariants.
        let ours: Vec<String> = match tileiras::verify::verify(&module) {
            Ok(()) => match tileiras::verify::invariants::check(&module) {
                Ok(()) => Vec::new(),
                Err(d) => vec![d.message],
            },
            Err(e) => e.into_iter().map(|d| d.message).collect(),
        };
        if !ok {
            rejected += 1;
        }
        // NVIDIA checks types while reading (`error at offset N: <text>`);
        // we check them in the verifier with the same text.
        let theirs: Vec<String> = theirs
            .iter()
            .map(|t| match t.strip_prefix("error at offset ") {
                Some(rest) => rest
                    .split_once(": ")
                    .map_or(t.clone(), |(_, m)| m.to_string()),
                None => t.clone(),
            })
            .collect();
        let agree = if ok {
            ours.is_empty()
        } else {
            !theirs.is_empty()
                && (theirs.iter().all(|t| ours.contains(t)) || ours.contains(&theirs[0]))
        };
        if !agree {
            mismatches.push(format!(
                "{}:\n  NVIDIA: {theirs:?}\n  ours:   {ours:?}",
                path.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    assert!(rejected + 2 >= files.len(), "most cases must be invalid");
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn op_coverage_modules_agree_with_nvidia() {
    // The reader's op-coverage files (cuTile-encoded, every op family and
    // version): wherever NVIDIA accepts one, we must too, and vice versa.
    let dir = common::repo().join("tests/data/bytecode/ops");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "tileirbc"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "only {} coverage files", files.len());
    let mut accepted = 0;
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let module = tileiras::bytecode::read(&bytes).expect("coverage file reads");
        let ours = tileiras::verify::verify(&module);
        let (ok, theirs) = nvidia(path);
        assert_eq!(
            ours.is_ok(),
            ok,
            "{}: ours {ours:?}, NVIDIA {theirs:?}",
            path.display()
        );
        accepted += usize::from(ok);
    }
    assert!(accepted > 0);
}
