//! NVIDIA's PTX for a TileIR module. NVIDIA's `tileiras` runs the `ptxas`
//! beside its own executable on a temporary `.ptx`; a shadow tool tree
//! (`bin/tileiras`, a `bin/ptxas` script that copies its `.ptx` argument
//! to `$DIFFERENTIAL_PTX_OUT`, `lib/libnvvm.so.4`) captures that file. The
//! PTX is cached per (bytecode hash, target) under the test's target
//! temporary folder. NVIDIA's tileiras takes ptxas from `$CUDA_ROOT`,
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
        let tool = cache.join("tool");
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
    // The PTX is all that is wanted: the script stops tileiras there.
    let script = "#!/bin/sh\nfor a in \"$@\"; do\n  case \"$a\" in\n    *.ptx) cp \"$a\" \"$DIFFERENTIAL_PTX_OUT\" || exit 2 ;;\n  esac\ndone\nexit 3\n";
    let ptxas = tool.join("bin/ptxas");
    std::fs::write(&ptxas, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ptxas, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// NVIDIA's PTX for `bytecode` and `gpu` (`sm_80`...), or tileiras'
/// message where it refuses the module.
pub fn ptx(bytecode: &[u8], gpu: &str) -> Result<String, String> {
    let (cache, tool) = tree();
    let key = format!("{:016x}.{gpu}", super::case::fnv(bytecode));
    let (ptx, refused) = (
        cache.join(format!("{key}.ptx")),
        cache.join(format!("{key}.refused")),
    );
    if let Ok(t) = std::fs::read_to_string(&ptx) {
        return Ok(t);
    }
    if let Ok(t) = std::fs::read_to_string(&refused) {
        return Err(t);
    }
    // A run that ends without PTX and without an error message (killed on
    // a loaded machine) is retried.
    let mut tries = 0;
    let (text, msg) = loop {
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
        let msg = String::from_utf8_lossy(&run.stderr).into_owned();
        tries += 1;
        if text.is_some() || msg.contains("error") {
            break (text, msg);
        }
        assert!(
            tries < 3,
            "tileiras --gpu-name {gpu} wrote no PTX and no error ({}): {msg}{}",
            run.status,
            String::from_utf8_lossy(&run.stdout)
        );
    };
    // write the cache entry under a name of its own (two threads may
    // compile the same module at once), then rename it into place
    static PARTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = PARTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let part = cache.join(format!("{key}.{}.{n}", std::process::id()));
    match text {
        Some(text) => {
            std::fs::write(&part, &text).unwrap();
            std::fs::rename(&part, &ptx).unwrap();
            Ok(text)
        }
        None => {
            std::fs::write(&part, &msg).unwrap();
            std::fs::rename(&part, &refused).unwrap();
            Err(msg)
        }
    }
}
