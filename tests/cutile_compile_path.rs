//! cuTile Python's own compile path run against this tileiras, no GPU
//! needed: `tests/cutile/compile_path.py` (run with the set-up's Python,
//! which has cuTile) finds our tileiras on PATH the way cuTile does, then
//! runs cuTile's `tileiras --version` probe, its bytecode-version probe,
//! exports a kernel to a cubin with the exact flags cuTile passes (with and
//! without its disk cache), and checks that cuTile's own stderr parser turns
//! our error for a kernel that cannot compile into its file, line and
//! column.
mod common;

use std::process::Command;

const CHECKS: [&str; 6] = ["found", "version", "bytecode", "kernel", "cache", "error"];

#[test]
fn cutile_compiles_through_this_tileiras() {
    let python = common::repo().join(".tools/venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup.sh",
        python.display()
    );
    let work = tempfile::tempdir().unwrap();
    let out = Command::new(&python)
        .arg(common::repo().join("tests/cutile/compile_path.py"))
        .arg(env!("CARGO_BIN_EXE_tileiras"))
        .arg(env!("CARGO_BIN_EXE_tileirdisasm"))
        .arg(work.path())
        .env("CUDA_ROOT", common::cuda_root())
        .env_remove("CUDA_TILE_CACHE_DIR")
        .env_remove("CUDA_TILE_TEMP_DIR")
        .env_remove("CUDA_TILE_LOGS")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{} failed ({}):\n{stdout}\n{stderr}",
        python.display(),
        out.status
    );
    let passed: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("ok "))
        .collect();
    assert_eq!(passed, CHECKS, "{stdout}\n{stderr}");
}
