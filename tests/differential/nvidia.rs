//! NVIDIA's PTX and host object for a TileIR module. NVIDIA's `tileiras`
//! runs the `ptxas` beside its own executable on a temporary `.ptx`, with
//! `--nv-host=<object>` naming the x86-64 object of its host callbacks; a
//! shadow tool tree (`bin/tileiras`, a `bin/ptxas` script that copies its
//! `.ptx` argument to `$DIFFERENTIAL_PTX_OUT` and the `--nv-host` object to
//! `$DIFFERENTIAL_PTX_OUT.host`, `lib/libnvvm.so.4`) captures both. They
//! are cached per (bytecode hash, target) under the test's target
//! temporary folder (`KEY.ptx`, `KEY.nv_host.o` or `KEY.nohost`,
//! `KEY.refused`). NVIDIA's tileiras takes ptxas from `$CUDA_ROOT`,
//! `$CUDA_HOME` or `$CUDA_PATH` when set, so it runs without them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The CUDA root: `CUDA_ROOT`, else `<repo>/.tools/cuda`.
fn cuda_root() -> PathBuf {
    std::env::var_os("CUDA_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/cuda"))
}

/// The cache folder and the shadow tool tree in it (built once).
fn tree() -> &'static (PathBuf, PathBuf) {
    static TREE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    TREE.get_or_init(|| {
        let real = cuda_root();
        let tileiras = real.join("bin/tileiras");
        let meta = std::fs::metadata(&tileiras).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (run scripts/setup.sh or set CUDA_ROOT)",
                tileiras.display()
            )
        });
        let cache = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("differential-nvidia-{:x}", meta.len()));
        // `tool2`: the script that also copies the host object
        let tool = cache.join("tool2");
        if !tool.join("bin/ptxas").exists() {
            // built aside, then renamed into place (another test process
            // may have done the same meanwhile)
            let part = cache.join(format!("tool-{}", std::process::id()));
            build_tool(&real, &part);
            if std::fs::rename(&part, &tool).is_err() {
                std::fs::remove_dir_all(&part).unwrap();
            }
        }
        (cache, tool)
    })
}

/// Builds the shadow tool tree at `tool`.
fn build_tool(real: &Path, tool: &Path) {
    let _ = std::fs::remove_dir_all(tool);
    std::fs::create_dir_all(tool.join("bin")).unwrap();
    std::fs::create_dir_all(tool.join("lib")).unwrap();
    // tileiras finds ptxas next to its resolved path: a hard link or a
    // copy, not a symbolic link
    let (tileiras, shadow) = (real.join("bin/tileiras"), tool.join("bin/tileiras"));
    if std::fs::hard_link(&tileiras, &shadow).is_err() {
        std::fs::copy(&tileiras, &shadow).unwrap();
    }
    let real_nvvm = std::fs::canonicalize(real.join("lib/libnvvm.so.4")).unwrap();
    std::os::unix::fs::symlink(real_nvvm, tool.join("lib/libnvvm.so.4")).unwrap();
    // The PTX and the host object are all that is wanted: the script stops
    // tileiras there.
    let script = "#!/bin/sh\nfor a in \"$@\"; do\n  case \"$a\" in\n    *.ptx) cp \"$a\" \"$DIFFERENTIAL_PTX_OUT\" || exit 2 ;;\n    --nv-host=*) cp \"${a#--nv-host=}\" \"$DIFFERENTIAL_PTX_OUT.host\" || exit 2 ;;\n  esac\ndone\nexit 3\n";
    let ptxas = tool.join("bin/ptxas");
    std::fs::write(&ptxas, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ptxas, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// FNV-1a hash of `b` (the cache key).
fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, x| {
        (h ^ *x as u64).wrapping_mul(0x100_0000_01b3)
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

/// Writes `bytes` to `path` through a name of its own, then renames it into
/// place (two threads or processes may capture the same module at once).
fn put(path: &Path, bytes: &[u8]) {
    static PARTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = PARTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let part = with(path, &format!(".{}.{n}", std::process::id()));
    std::fs::write(&part, bytes).unwrap();
    std::fs::rename(&part, path).unwrap();
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
                Some(h) => put(&with(&key, ".nv_host.o"), h),
                None => put(&with(&key, ".nohost"), b""),
            }
            put(&with(&key, ".ptx"), text.as_bytes());
            Ok((text, host))
        }
        None => {
            put(&with(&key, ".refused"), msg.as_bytes());
            Err(msg)
        }
    }
}
