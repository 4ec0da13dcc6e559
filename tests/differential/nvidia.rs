//! NVIDIA's PTX and host object for a TileIR module. NVIDIA's `tileiras`
//! runs the `ptxas` beside its own executable on a temporary `.ptx`, with
//! `--nv-host=<object>` naming the x86-64 object of its host callbacks; a
//! shadow tool tree (`bin/tileiras`, a `bin/ptxas` script that copies its
//! `.ptx` argument to `$DIFFERENTIAL_PTX_OUT` and the `--nv-host` object to
//! `$DIFFERENTIAL_PTX_OUT.host`, `lib/libnvvm.so.4`;
//! [`crate::nvidia_reference::shadow_tree`]) captures both. They are cached
//! per (tools' versions, bytecode hash, target) in the cache folder
//! ([`crate::nvidia_reference::cache_root`]: `KEY.ptx`, `KEY.nv_host.o` or `KEY.nohost`,
//! `KEY.refused`). NVIDIA's tileiras takes ptxas from `$CUDA_ROOT`,
//! `$CUDA_HOME` or `$CUDA_PATH` when set, so it runs without them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::nvidia_reference::{cache_and_tools, fnv, write_atomic};

/// The cache folder (named after the tools' versions) and the shadow tool
/// tree (built once, in the test's target temporary folder: it points at
/// this checkout's tools), whose `ptxas` copies its `.ptx` argument to
/// `$DIFFERENTIAL_PTX_OUT` and the `--nv-host` object beside it, then stops
/// tileiras: the PTX and the host object are all that is wanted.
fn tree() -> &'static (PathBuf, PathBuf) {
    static TREE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    TREE.get_or_init(|| {
        let script = "#!/bin/sh\nfor a in \"$@\"; do\n  case \"$a\" in\n    *.ptx) cp \"$a\" \"$DIFFERENTIAL_PTX_OUT\" || exit 2 ;;\n    --nv-host=*) cp \"${a#--nv-host=}\" \"$DIFFERENTIAL_PTX_OUT.host\" || exit 2 ;;\n  esac\ndone\nexit 3\n";
        cache_and_tools("differential-nvidia", script)
    })
}

/// The cache files' common path (no extension) for `bytecode` and `gpu`.
fn key(bytecode: &[u8], gpu: &str) -> PathBuf {
    tree().0.join(format!("{:016x}.{gpu}", fnv(bytecode)))
}

/// `path` with `ext` appended.
fn with(path: &Path, ext: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(ext);
    PathBuf::from(s)
}

/// NVIDIA's PTX for `bytecode` and `gpu` (`sm_80`...), or tileiras'
/// message where it refuses the module.
pub fn ptx(bytecode: &[u8], gpu: &str) -> Result<String, String> {
    let key = key(bytecode, gpu);
    if let Ok(t) = std::fs::read_to_string(with(&key, ".ptx")) {
        return Ok(t);
    }
    if let Ok(t) = std::fs::read_to_string(with(&key, ".refused")) {
        return Err(t);
    }
    capture(bytecode, gpu).map(|c| c.0)
}

/// NVIDIA's host object (the `--nv-host` object its tileiras hands ptxas)
/// for `bytecode` and `gpu`: `Ok(None)` where tileiras passed none, `Err`
/// with tileiras' message where it refuses the module.
#[allow(dead_code)]
pub fn host_object(bytecode: &[u8], gpu: &str) -> Result<Option<Vec<u8>>, String> {
    let key = key(bytecode, gpu);
    if let Ok(b) = std::fs::read(with(&key, ".nv_host.o")) {
        return Ok(Some(b));
    }
    if with(&key, ".nohost").exists() {
        return Ok(None);
    }
    if let Ok(t) = std::fs::read_to_string(with(&key, ".refused")) {
        return Err(t);
    }
    // a PTX cached before host objects were kept: captured again
    capture(bytecode, gpu).map(|c| c.1)
}

/// Runs NVIDIA's tileiras on `bytecode` for `gpu` and caches what its
/// ptxas call saw: the PTX and the host object, or the refusal.
fn capture(bytecode: &[u8], gpu: &str) -> Result<(String, Option<Vec<u8>>), String> {
    let (_, tool) = tree();
    let key = key(bytecode, gpu);
    // A run that ends without PTX and without an error message (killed on
    // a loaded machine) is retried.
    let mut tries = 0;
    let (text, host, msg) = loop {
        let tmp = tempfile::tempdir().unwrap();
        let (input, out) = (tmp.path().join("k.tileir"), tmp.path().join("k.ptx"));
        std::fs::write(&input, bytecode).unwrap();
        let run = Command::new(tool.join("bin/tileiras"))
            .arg("--gpu-name")
            .arg(gpu)
            .arg(&input)
            .arg("-o")
            .arg(tmp.path().join("k.cubin"))
            .env("DIFFERENTIAL_PTX_OUT", &out)
            // these would point tileiras at another ptxas than the shadow one
            .env_remove("CUDA_ROOT")
            .env_remove("CUDA_HOME")
            .env_remove("CUDA_PATH")
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", tool.join("bin/tileiras").display()));
        let text = std::fs::read_to_string(&out).ok();
        let host = std::fs::read(with(&out, ".host")).ok();
        let msg = String::from_utf8_lossy(&run.stderr).into_owned();
        tries += 1;
        if text.is_some() || msg.contains("error") {
            break (text, host, msg);
        }
        assert!(
            tries < 3,
            "tileiras --gpu-name {gpu} wrote no PTX and no error ({}): {msg}{}",
            run.status,
            String::from_utf8_lossy(&run.stdout)
        );
    };
    match text {
        Some(text) => {
            match &host {
                Some(h) => write_atomic(&with(&key, ".nv_host.o"), h),
                None => write_atomic(&with(&key, ".nohost"), b""),
            }
            write_atomic(&with(&key, ".ptx"), text.as_bytes());
            Ok((text, host))
        }
        None => {
            write_atomic(&with(&key, ".refused"), msg.as_bytes());
            Err(msg)
        }
    }
}
