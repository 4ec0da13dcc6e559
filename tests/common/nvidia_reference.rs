//! NVIDIA's outputs for the corpus kernels (`tests/data/corpus`), made at
//! run time by the tools `scripts/setup.sh` installs and cached, since the
//! repository keeps only the bytecode.
//!
//! NVIDIA's `tileiras` runs the `ptxas` beside its own executable. A shadow
//! tool tree (`bin/tileiras`, a `bin/ptxas` script that copies its `.ptx`
//! input and its `--nv-host=` object aside before running the real ptxas,
//! `lib/libnvvm.so.4`) captures both, and `tileiras -o` writes the cubin.
//! One compile per (kernel, target) gives the PTX, the host object and the
//! cubin; `nvdisasm -c` of that cubin gives the SASS. Entries are cached
//! in the user's cache folder ([`cache_root`]), keyed by the tools' version
//! text and the bytecode's hash, so a new toolkit or changed bytecode makes
//! them again, and a fresh clone of the same tools finds them made.
//!
//! Self-contained (std only), so the emulator's tests include it too.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The repository root: the nearest ancestor of the including crate's
/// manifest folder that holds `tests/data/corpus`.
pub fn repo() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .find(|a| a.join("tests/data/corpus").is_dir())
        .unwrap_or(here)
        .to_path_buf()
}

/// The corpus folder: one folder a kernel, with its bytecode and `meta.json`.
pub fn corpus() -> PathBuf {
    repo().join("tests/data/corpus")
}

/// The names of the corpus kernels, sorted.
pub fn kernels() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(corpus())
        .unwrap_or_else(|e| panic!("{}: {e}", corpus().display()))
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The kernel's primary bytecode file: version 13.3, else 13.4.
pub fn primary(kernel: &str) -> PathBuf {
    let dir = corpus().join(kernel);
    ["v13_3", "v13_4"]
        .iter()
        .map(|v| dir.join(format!("{kernel}.{v}.tileir")))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{kernel}: no primary bytecode in {}", dir.display()))
}

/// The CUDA root: `CUDA_ROOT`, else `<repo>/.tools/cuda`.
pub fn cuda_root() -> PathBuf {
    std::env::var_os("CUDA_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".tools/cuda"))
}

/// One of NVIDIA's tools under the CUDA root; panics (the test fails, never
/// skips) with the fix when it is missing.
pub fn tool(name: &str) -> PathBuf {
    let p = cuda_root().join("bin").join(name);
    assert!(
        p.is_file(),
        "{} is missing: run scripts/setup.sh or set CUDA_ROOT",
        p.display()
    );
    p
}

/// 64-bit FNV-1a.
pub fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A key of the installed tools' versions (`tileiras`, `ptxas`,
/// `nvdisasm`): caches of what they make are named after it, so a new
/// toolkit makes them again.
pub fn versions_key() -> u64 {
    static KEY: OnceLock<u64> = OnceLock::new();
    *KEY.get_or_init(|| {
        let mut versions = Vec::new();
        for t in ["tileiras", "ptxas", "nvdisasm"] {
            let out = Command::new(tool(t))
                .arg("--version")
                .output()
                .unwrap_or_else(|e| panic!("{t} --version: {e}"));
            versions.extend_from_slice(&out.stdout);
        }
        fnv(&versions)
    })
}

/// The folder NVIDIA's outputs are cached under: `TILEIRAS_TEST_CACHE`,
/// else `tileiras-rs` in `XDG_CACHE_HOME` or `~/.cache`, where it outlives
/// one checkout (only NVIDIA's tools make what is in it, and every entry is
/// named after their versions); else, with no home to write to, the test's
/// target temporary folder. Entries are written aside and renamed into
/// place, so runs of several checkouts may share it; folders of other
/// tools' versions no run has used for 30 days are removed
/// ([`prune_stale`]).
pub fn cache_root() -> PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let chosen = env("TILEIRAS_TEST_CACHE").or_else(|| {
            env("XDG_CACHE_HOME")
                .or_else(|| env("HOME").map(|h| h.join(".cache")))
                .map(|c| c.join("tileiras-rs"))
        });
        chosen
            .filter(|p| std::fs::create_dir_all(p).is_ok())
            .unwrap_or_else(target_tmpdir)
    })
    .clone()
}

/// The target's temporary folder: Cargo's, for a test or a benchmark;
/// else `tmp` in the target folder the running executable was built in
/// (an example runs as `<target>/<profile>/examples/NAME`).
pub fn target_tmpdir() -> PathBuf {
    match option_env!("CARGO_TARGET_TMPDIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let exe = std::env::current_exe().expect("the running executable's path");
            exe.ancestors()
                .nth(3)
                .map(|target| target.join("tmp"))
                .unwrap_or_else(std::env::temp_dir)
        }
    }
}

/// The cache folder and the shadow tool tree ([`cache_and_tools`]).
fn tree() -> &'static (PathBuf, PathBuf) {
    static TREE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    TREE.get_or_init(|| {
        let real = std::fs::canonicalize(tool("ptxas")).unwrap();
        let quoted = real.to_str().unwrap().replace('\'', r"'\''");
        let script = format!(
            "#!/bin/sh\nfor a in \"$@\"; do\n  case \"$a\" in\n    \
             --nv-host=*) cp \"${{a#--nv-host=}}\" \"$NVIDIA_REFERENCE_OUT/nv_host.o\" || exit 2 ;;\n    \
             *.ptx) cp \"$a\" \"$NVIDIA_REFERENCE_OUT/k.ptx\" || exit 2 ;;\n  \
             esac\ndone\nexec '{quoted}' \"$@\"\n"
        );
        cache_and_tools("nvidia-reference", &script)
    })
}

/// The cache folder `<what>-<tools' versions>` (made if missing) and a
/// shadow tool tree whose `bin/ptxas` is `ptxas_script`
/// ([`shadow_tree`]), built once in the test's target temporary folder:
/// it points at this checkout's tools, so it stays out of the shared cache.
pub fn cache_and_tools(what: &str, ptxas_script: &str) -> (PathBuf, PathBuf) {
    let name = format!("{what}-{:016x}", versions_key());
    let cache = cache_root().join(&name);
    std::fs::create_dir_all(&cache).unwrap_or_else(|e| panic!("{}: {e}", cache.display()));
    prune_stale(&cache_root(), what, &name, STALE);
    let tools = target_tmpdir().join(name).join("tool");
    shadow_tree(&tools, ptxas_script);
    (cache, tools)
}

/// How long a cache folder of other tools' versions is kept unused.
pub const STALE: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// The file whose time says when a cache folder was last used.
const USED: &str = ".last-used";

/// Marks the cache folder `name` under `root` used now, and removes the
/// folders of the same `what` made by other versions of NVIDIA's tools
/// (`what-` and 16 hex digits) that no run has used for `stale`: a new
/// toolkit starts a folder beside the old one, which would otherwise stay
/// for good. A folder another run is filling is in use, so never stale.
pub fn prune_stale(root: &Path, what: &str, name: &str, stale: std::time::Duration) {
    let _ = std::fs::write(root.join(name).join(USED), b"");
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let now = std::time::SystemTime::now();
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(other) = file.to_str() else {
            continue;
        };
        let ours = other
            .strip_prefix(what)
            .and_then(|r| r.strip_prefix('-'))
            .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()));
        if !ours || other == name {
            continue;
        }
        let used = std::fs::metadata(e.path().join(USED))
            .or_else(|_| e.metadata())
            .and_then(|m| m.modified());
        if used.is_ok_and(|t| now.duration_since(t).is_ok_and(|age| age > stale)) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// A shadow tree of NVIDIA's tools at `at`, unless one is there: NVIDIA's
/// `tileiras` runs the `ptxas` beside its own executable, so `bin/tileiras`
/// (a hard link or a copy of the real one), `lib/libnvvm.so.4` and a
/// `bin/ptxas` script of text `ptxas_script` see what it hands ptxas. Built
/// aside, then renamed into place (another test process may do the same
/// meanwhile).
pub fn shadow_tree(at: &Path, ptxas_script: &str) {
    if at.join("bin/ptxas").exists() {
        return;
    }
    let part = at.with_extension(format!("part-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&part);
    std::fs::create_dir_all(part.join("bin")).unwrap();
    std::fs::create_dir_all(part.join("lib")).unwrap();
    // tileiras finds ptxas next to its resolved path: a hard link or a
    // copy, not a symbolic link
    let (tileiras, shadow) = (tool("tileiras"), part.join("bin/tileiras"));
    if std::fs::hard_link(&tileiras, &shadow).is_err() {
        std::fs::copy(&tileiras, &shadow).unwrap();
    }
    let nvvm = std::fs::canonicalize(cuda_root().join("lib/libnvvm.so.4")).unwrap();
    std::os::unix::fs::symlink(nvvm, part.join("lib/libnvvm.so.4")).unwrap();
    let ptxas = part.join("bin/ptxas");
    std::fs::write(&ptxas, ptxas_script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ptxas, std::fs::Permissions::from_mode(0o755)).unwrap();
    if std::fs::rename(&part, at).is_err() {
        let _ = std::fs::remove_dir_all(&part);
    }
}

/// What NVIDIA's `tileiras` made of one kernel for one target: files in the
/// cache, kept for the whole test run.
#[derive(Clone, Debug)]
pub struct Build {
    /// The PTX it handed to ptxas.
    pub ptx: PathBuf,
    /// The host object it handed to ptxas as `--nv-host=` (absent where it
    /// passed none).
    pub nv_host: PathBuf,
    /// The cubin it wrote.
    pub cubin: PathBuf,
    dir: PathBuf,
}

impl Build {
    /// The PTX's text.
    pub fn ptx_text(&self) -> String {
        std::fs::read_to_string(&self.ptx).unwrap()
    }

    /// `nvdisasm -c` of the cubin, with every run of blanks collapsed to
    /// one space and trailing blanks removed; cached beside the cubin.
    pub fn sass(&self) -> String {
        let file = self.dir.join("sass.txt");
        if let Ok(t) = std::fs::read_to_string(&file) {
            return t;
        }
        let out = Command::new(tool("nvdisasm"))
            .arg("-c")
            .arg(&self.cubin)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "nvdisasm -c {}: {}",
            self.cubin.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let text = squeeze(&String::from_utf8_lossy(&out.stdout));
        write_atomic(&file, text.as_bytes());
        text
    }
}

/// Every run of blanks in each line collapsed to one space, trailing ones
/// removed (the corpus' SASS normalisation).
pub fn squeeze(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for line in s.lines() {
        let mut prev_blank = false;
        let mut l = String::new();
        for c in line.chars() {
            if c == ' ' || c == '\t' {
                if !prev_blank {
                    l.push(' ');
                }
                prev_blank = true;
            } else {
                l.push(c);
                prev_blank = false;
            }
        }
        out.push_str(l.trim_end_matches(' '));
        out.push('\n');
    }
    out
}

/// Writes `data` to `path` through a file of its own, renamed into place.
pub fn write_atomic(path: &Path, data: &[u8]) {
    static PARTS: AtomicUsize = AtomicUsize::new(0);
    let n = PARTS.fetch_add(1, Ordering::Relaxed);
    let part = path.with_extension(format!("part-{}-{n}", std::process::id()));
    std::fs::write(&part, data).unwrap();
    std::fs::rename(&part, path).unwrap();
}

/// NVIDIA's build of the corpus kernel for `sm` (`sm_90`, `sm_100`...), or
/// its message where it refuses the kernel for that target.
pub fn build(kernel: &str, sm: &str) -> Result<Build, String> {
    build_file(&primary(kernel), sm)
}

/// The kernel's PTX from NVIDIA's `tileiras` for `sm`; panics where it
/// refuses the kernel.
pub fn ptx(kernel: &str, sm: &str) -> String {
    build(kernel, sm)
        .unwrap_or_else(|e| panic!("NVIDIA's tileiras refuses {kernel} for {sm}: {e}"))
        .ptx_text()
}

/// NVIDIA's build of the bytecode file `input` for `sm`, or its message
/// where it refuses the module.
pub fn build_file(input: &Path, sm: &str) -> Result<Build, String> {
    static TMP: AtomicUsize = AtomicUsize::new(0);
    let (cache, shadow) = tree();
    let bytecode = std::fs::read(input).unwrap_or_else(|e| panic!("{}: {e}", input.display()));
    let dir = cache.join(format!("{:016x}.{sm}", fnv(&bytecode)));
    let refused = cache.join(format!("{:016x}.{sm}.refused", fnv(&bytecode)));
    let done = |dir: &Path| Build {
        ptx: dir.join("k.ptx"),
        nv_host: dir.join("nv_host.o"),
        cubin: dir.join("k.cubin"),
        dir: dir.to_path_buf(),
    };
    if dir.join("k.cubin").is_file() {
        return Ok(done(&dir));
    }
    if let Ok(msg) = std::fs::read_to_string(&refused) {
        return Err(msg);
    }
    let n = TMP.fetch_add(1, Ordering::Relaxed);
    let part = cache.join(format!("part-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&part);
    std::fs::create_dir_all(&part).unwrap();
    let out = Command::new(shadow.join("bin/tileiras"))
        .arg("--gpu-name")
        .arg(sm)
        .arg(input)
        .arg("-o")
        .arg(part.join("k.cubin"))
        .env("NVIDIA_REFERENCE_OUT", &part)
        // these would point tileiras at another ptxas than the shadow one
        .env_remove("CUDA_ROOT")
        .env_remove("CUDA_HOME")
        .env_remove("CUDA_PATH")
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", shadow.join("bin/tileiras").display()));
    if !out.status.success() || !part.join("k.cubin").is_file() {
        let msg = String::from_utf8_lossy(&out.stderr).into_owned();
        let _ = std::fs::remove_dir_all(&part);
        // Only a refusal in words is cached: a run killed on a loaded
        // machine says nothing and is tried again next time.
        assert!(
            msg.contains("error"),
            "tileiras --gpu-name {sm} {} failed without a message ({})",
            input.display(),
            out.status
        );
        write_atomic(&refused, msg.as_bytes());
        return Err(msg);
    }
    if std::fs::rename(&part, &dir).is_err() {
        // another thread or process got there first
        let _ = std::fs::remove_dir_all(&part);
    }
    Ok(done(&dir))
}

/// NVIDIA's `tileirdisasm` of `input` (with `-g` when `debug_info`): whether
/// it succeeded, its standard output and its standard error.
pub fn disasm(input: &Path, debug_info: bool) -> (bool, String, String) {
    let mut c = Command::new(tool("tileirdisasm"));
    if debug_info {
        c.arg("-g");
    }
    let o = c.arg(input).output().expect("run tileirdisasm");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}
