//! Every supported corpus kernel, lowered by our pipeline for sm_80, sm_90,
//! sm_100 and sm_120, assembles with NVIDIA's real ptxas (tileiras' flags).
//! The tools come from `$CUDA_ROOT` or `<repo>/.tools/cuda`; the test fails
//! when they are missing.
mod common;
use std::path::PathBuf;
use std::process::Command;

use tileiras::options::Options;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn ptxas() -> PathBuf {
    let root = std::env::var_os("CUDA_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".tools/cuda"));
    let p = root.join("bin/ptxas");
    assert!(
        p.is_file(),
        "ptxas not found under {} (run scripts/setup.sh or set CUDA_ROOT)",
        root.display()
    );
    p
}

/// The kernels listed in `tests/data/lower/supported.txt`.
pub fn supported() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("tests/data/lower/supported.txt"))
        .expect("supported.txt");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

fn bytecode(name: &str) -> Vec<u8> {
    let dir = common::corpus().join(name);
    let path = ["v13_3", "v13_4"]
        .iter()
        .map(|v| dir.join(format!("{name}.{v}.tileir")))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{name}: no bytecode in {}", dir.display()));
    std::fs::read(path).expect("read bytecode")
}

#[test]
fn supported_kernels_assemble_for_every_family() {
    let ptxas = ptxas();
    let tmp = tempfile::tempdir().expect("tempdir");
    let kernels = supported();
    assert!(kernels.len() >= 29, "{kernels:?}");
    let mut failures = Vec::new();
    for name in &kernels {
        let module =
            tileiras::bytecode::read(&bytecode(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        for gpu in common::TARGETS {
            let options = Options {
                gpu,
                ..Default::default()
            };
            let text = tileiras::lower::lower(&module, &options)
                .unwrap_or_else(|e| panic!("{name} {gpu}: {e}"));
            assert!(
                text.contains(&format!(".visible .entry {name}(")),
                "{name}: entry missing"
            );
            // 128 threads, or 256 where a matmul runs on two warpgroups
            // (cluster directives, where asked for, come in between).
            assert!(
                [128, 256]
                    .iter()
                    .any(|t| text.contains(&format!(".reqntid {t}\n.minnctapersm 1\n")))
                    && text.contains("\n.language 7\n"),
                "{name}: directives"
            );
            let ptx = tmp.path().join(format!("{name}.{gpu}.ptx"));
            std::fs::write(&ptx, &text).expect("write ptx");
            let out = Command::new(&ptxas)
                .arg("-arch")
                .arg(gpu.ptx_target())
                .arg(&ptx)
                .arg("-o")
                .arg(tmp.path().join(format!("{name}.{gpu}.cubin")))
                .args(["--opt-level", "3", "--enable-extended-smem=true"])
                .output()
                .expect("run ptxas");
            if !out.status.success() {
                failures.push(format!(
                    "{name} {gpu}: {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn empty_module_lowers_to_a_header() {
    let bytes =
        std::fs::read(repo().join("tests/data/empty_module.v13_3.tileir")).expect("empty module");
    let module = tileiras::bytecode::read(&bytes).expect("read");
    let text = tileiras::lower::lower(&module, &Options::default()).expect("lower");
    assert!(text.contains(".version 9.5\n"), "{text}");
    assert!(!text.contains(".entry"), "{text}");
    let tmp = tempfile::tempdir().expect("tempdir");
    let ptx = tmp.path().join("empty.ptx");
    std::fs::write(&ptx, &text).expect("write");
    let st = Command::new(ptxas())
        .arg("-arch")
        .arg(Options::default().gpu.ptx_target())
        .arg(&ptx)
        .arg("-o")
        .arg(tmp.path().join("empty.cubin"))
        .status()
        .expect("ptxas");
    assert!(st.success());
}

#[test]
fn replicated_small_tiles_change_layout_by_shuffles() {
    // The row indices of `adv_index_rows_f32` (loaded by one warp's lanes,
    // replicated across warps) reach the gather's layout by `shfl.sync.idx`,
    // without shared memory or barriers; the emulator tests check the values.
    let module = tileiras::bytecode::read(&bytecode("adv_index_rows_f32")).expect("read");
    let options = Options {
        gpu: tileiras::options::Gpu::Sm90,
        ..Options::default()
    };
    let text = tileiras::lower::lower(&module, &options).expect("lower");
    assert!(text.contains("shfl.sync.idx.b32"), "{text}");
    assert!(!text.contains("bar.sync"), "{text}");
}
