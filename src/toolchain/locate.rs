//! CUDA toolkit discovery: one resolver for every tool.
//!
//! For a tool `T` (`ptxas`, `nvdisasm`) the places tried, in order, are:
//! 1. the explicit path for `T` ([`ToolOverrides`]), which must exist (a
//!    bare name is looked up in `PATH`); no fallback when it does not;
//! 2. `<root>/bin/T` for the configured CUDA root;
//! 3. `<root>/bin/T` for `CUDA_ROOT`, `CUDA_HOME`, `CUDA_PATH`;
//! 4. `<root>/bin/T` where `<root>` is two directories above the current
//!    executable (`<root>/bin/tileiras`), then two above the shared library
//!    holding this code (`<root>/lib/libtileiras.so`, found with `dladdr`);
//! 5. `<site>/nvidia/cu13/bin/T` for the Python environment this code was
//!    installed into, so that a wheel's `tileiras` uses the ptxas its own
//!    `nvidia-cuda-nvcc` dependency brought before any other on `PATH`: the
//!    `lib/python3*/site-packages` folders of the executable's `<root>`, and
//!    the `site-packages` (or `dist-packages`) folder holding the library
//!    (`<site>/tileiras_rs/lib/libtileiras.so`), else those of its `<root>`;
//! 6. every directory of `PATH`;
//! 7. `<site>/nvidia/cu13/bin/T` for the site-packages directories of
//!    pip-installed NVIDIA packages: `VIRTUAL_ENV`, `CONDA_PREFIX`,
//!    `~/.local`, the prefix of each `python3` on `PATH`, `/usr/local` and
//!    `/usr` (`lib/python3*/site-packages` and `dist-packages`), and, only
//!    when none of those has it, the folders `python3` itself reports.
//!
//! A candidate that does not exist (or is not an executable file) is skipped
//! and recorded; when nothing is found, [`ToolError::NotFound`] lists every
//! place looked. Everything the resolver reads comes from a [`SearchEnv`], so
//! tests inject their own environment instead of mutating the process's.
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::ToolError;
use crate::options::Options;

/// Explicit locations that beat every search.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolOverrides {
    /// A CUDA root to use before the environment variables.
    pub cuda_root: Option<PathBuf>,
    /// The ptxas executable.
    pub ptxas: Option<PathBuf>,
    /// The nvdisasm executable.
    pub nvdisasm: Option<PathBuf>,
}

impl ToolOverrides {
    /// The overrides an [`Options`] carries.
    pub fn from_options(o: &Options) -> ToolOverrides {
        ToolOverrides {
            cuda_root: o.cuda_root.clone(),
            ptxas: o.ptxas.clone(),
            nvdisasm: o.nvdisasm.clone(),
        }
    }
}

/// Variable lookup used by the resolver.
pub type Lookup = Box<dyn Fn(&str) -> Option<OsString> + Send + Sync>;

/// What the resolver may look at. [`SearchEnv::from_process`] reads the real
/// process; tests build one by hand.
pub struct SearchEnv {
    /// Environment variable lookup.
    pub var: Lookup,
    /// The running executable.
    pub current_exe: Option<PathBuf>,
    /// The shared library holding this code, when it is one.
    pub library: Option<PathBuf>,
    /// Install prefixes whose `lib/python3*` folders are scanned for pip
    /// packages after the environment's (`/usr/local`, `/usr`).
    pub system_prefixes: Vec<PathBuf>,
    /// Whether `python3` may be run as the last resort.
    pub ask_python: bool,
}

impl SearchEnv {
    /// The process's own environment, executable and library.
    pub fn from_process() -> SearchEnv {
        SearchEnv {
            var: Box::new(|k| std::env::var_os(k)),
            current_exe: std::env::current_exe().ok(),
            library: this_library(),
            system_prefixes: default_prefixes(),
            ask_python: true,
        }
    }

    /// An environment given by `var` alone: no executable, no library, no
    /// system prefixes, no `python3`.
    pub fn from_lookup(
        var: impl Fn(&str) -> Option<OsString> + Send + Sync + 'static,
    ) -> SearchEnv {
        SearchEnv {
            var: Box::new(var),
            current_exe: None,
            library: None,
            system_prefixes: Vec::new(),
            ask_python: false,
        }
    }

    fn nonempty(&self, k: &str) -> Option<OsString> {
        (self.var)(k).filter(|v| !v.is_empty())
    }
}

fn default_prefixes() -> Vec<PathBuf> {
    vec![PathBuf::from("/usr/local"), PathBuf::from("/usr")]
}

/// The file holding this code, per `dladdr` (the executable itself when the
/// library is linked statically).
fn this_library() -> Option<PathBuf> {
    // SAFETY: an all-zero Dl_info is valid storage for dladdr to fill.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let addr = this_library as *const libc::c_void;
    // SAFETY: dladdr only reads the address; `info` is valid storage.
    let rc = unsafe { libc::dladdr(addr, &mut info) };
    if rc == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr succeeded; dli_fname is a NUL-terminated string owned
    // by the dynamic loader, copied out at once.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    use std::os::unix::ffi::OsStrExt;
    let p = PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes()));
    std::fs::canonicalize(&p).ok().or(Some(p))
}

/// The located tools.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolkit {
    /// ptxas.
    pub ptxas: PathBuf,
    nvdisasm: Result<PathBuf, Vec<String>>,
}

impl Toolkit {
    /// Finds ptxas (required) and nvdisasm (reported by
    /// [`Toolkit::nvdisasm`] when missing) in the process's environment.
    pub fn resolve(overrides: &ToolOverrides) -> Result<Toolkit, ToolError> {
        Toolkit::resolve_in(overrides, &SearchEnv::from_process())
    }

    /// [`Toolkit::resolve`] in a given environment.
    pub fn resolve_in(overrides: &ToolOverrides, env: &SearchEnv) -> Result<Toolkit, ToolError> {
        let ptxas =
            find_tool("ptxas", overrides.ptxas.as_deref(), overrides, env).map_err(|searched| {
                ToolError::NotFound {
                    tool: "ptxas".into(),
                    searched,
                }
            })?;
        let nvdisasm = find_tool("nvdisasm", overrides.nvdisasm.as_deref(), overrides, env);
        Ok(Toolkit { ptxas, nvdisasm })
    }

    /// A toolkit with the given executables, no search.
    pub fn from_paths(ptxas: impl Into<PathBuf>, nvdisasm: impl Into<PathBuf>) -> Toolkit {
        Toolkit {
            ptxas: ptxas.into(),
            nvdisasm: Ok(nvdisasm.into()),
        }
    }

    /// nvdisasm, or the list of places it was looked for.
    pub fn nvdisasm(&self) -> Result<&Path, ToolError> {
        self.nvdisasm
            .as_deref()
            .map_err(|searched| ToolError::NotFound {
                tool: "nvdisasm".into(),
                searched: searched.clone(),
            })
    }
}

fn is_executable(p: &Path) -> bool {
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Two directories above `file`: `<root>/bin/x` gives `<root>`.
fn two_up(file: &Path) -> Option<PathBuf> {
    file.parent()?.parent().map(Path::to_path_buf)
}

/// Finds `tool` by the documented order; on a miss, every place looked.
pub fn find_tool(
    tool: &str,
    explicit: Option<&Path>,
    overrides: &ToolOverrides,
    env: &SearchEnv,
) -> Result<PathBuf, Vec<String>> {
    let mut searched = Vec::new();
    if let Some(p) = explicit {
        if is_executable(p) {
            return Ok(p.to_owned());
        }
        // A bare name (no `/`) is looked up in PATH, as a shell would.
        let bare = !p.as_os_str().as_encoded_bytes().contains(&b'/');
        if bare {
            if let Some(path) = env.nonempty("PATH") {
                for dir in std::env::split_paths(&path) {
                    let cand = dir.join(p);
                    if !dir.as_os_str().is_empty() && is_executable(&cand) {
                        return Ok(cand);
                    }
                }
                searched.push(format!(
                    "{} (explicit {tool} name, in PATH={})",
                    p.display(),
                    path.to_string_lossy()
                ));
                return Err(searched);
            }
        }
        searched.push(format!("{} (explicit {tool} path)", p.display()));
        return Err(searched);
    }
    let mut roots: Vec<(PathBuf, String)> = Vec::new();
    if let Some(r) = &overrides.cuda_root {
        roots.push((r.clone(), "configured CUDA root".into()));
    }
    for var in ["CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"] {
        if let Some(v) = env.nonempty(var) {
            roots.push((PathBuf::from(v), var.to_string()));
        }
    }
    if let Some(r) = env.current_exe.as_deref().and_then(two_up) {
        roots.push((r, "two directories above the executable".into()));
    }
    if let Some(r) = env.library.as_deref().and_then(two_up) {
        if !roots.iter().any(|(p, _)| *p == r) {
            roots.push((r, "two directories above the library".into()));
        }
    }
    for (root, why) in &roots {
        let cand = root.join("bin").join(tool);
        if is_executable(&cand) {
            return Ok(cand);
        }
        searched.push(format!("{} ({why})", cand.display()));
    }
    let own = own_site_packages(env);
    for site in &own {
        let cand = site.join("nvidia").join("cu13").join("bin").join(tool);
        if is_executable(&cand) {
            return Ok(cand);
        }
        searched.push(format!(
            "{} (pip package nvidia/cu13 beside this tileiras)",
            cand.display()
        ));
    }
    if let Some(path) = env.nonempty("PATH") {
        for dir in std::env::split_paths(&path) {
            if dir.as_os_str().is_empty() {
                continue;
            }
            let cand = dir.join(tool);
            if is_executable(&cand) {
                return Ok(cand);
            }
        }
        searched.push(format!("PATH={}", path.to_string_lossy()));
    } else {
        searched.push("PATH (unset)".into());
    }
    let sites = site_packages(env);
    for site in sites.iter().filter(|s| !own.contains(s)) {
        let cand = site.join("nvidia").join("cu13").join("bin").join(tool);
        if is_executable(&cand) {
            return Ok(cand);
        }
        searched.push(format!("{} (pip package nvidia/cu13)", cand.display()));
    }
    if env.ask_python {
        for site in python_site_packages(env) {
            if sites.contains(&site) || own.contains(&site) {
                continue;
            }
            let cand = site.join("nvidia").join("cu13").join("bin").join(tool);
            if is_executable(&cand) {
                return Ok(cand);
            }
            searched.push(format!(
                "{} (pip package nvidia/cu13, from python3)",
                cand.display()
            ));
        }
    }
    Err(searched)
}

/// The `lib/python3*/{site,dist}-packages` folders under `prefix`.
fn python_dirs(prefix: &Path, out: &mut Vec<PathBuf>) {
    for lib in ["lib", "lib64"] {
        let Ok(rd) = std::fs::read_dir(prefix.join(lib)) else {
            continue;
        };
        let mut names: Vec<PathBuf> = rd
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .map(|e| e.path())
            .collect();
        names.sort();
        names.reverse(); // newest python first
        for d in names {
            for leaf in ["site-packages", "dist-packages"] {
                let s = d.join(leaf);
                if s.is_dir() && !out.contains(&s) {
                    out.push(s);
                }
            }
        }
    }
}

/// The site-packages folders of the Python environment the running
/// executable or library was installed into (a wheel puts `tileiras` in
/// `<prefix>/bin` and the library in `<site>/tileiras_rs/lib`).
pub fn own_site_packages(env: &SearchEnv) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(prefix) = env.current_exe.as_deref().and_then(two_up) {
        python_dirs(&prefix, &mut out);
    }
    if let Some(lib) = env.library.as_deref() {
        let site = lib.ancestors().skip(1).find(|d| {
            d.file_name()
                .is_some_and(|n| n == "site-packages" || n == "dist-packages")
        });
        match site {
            Some(site) => {
                if site.is_dir() && !out.iter().any(|s| s == site) {
                    out.push(site.to_path_buf());
                }
            }
            None => {
                if let Some(prefix) = two_up(lib) {
                    python_dirs(&prefix, &mut out);
                }
            }
        }
    }
    out
}

/// Site-packages folders found without running Python.
pub fn site_packages(env: &SearchEnv) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(v) = env.nonempty(var) {
            python_dirs(Path::new(&v), &mut out);
        }
    }
    if let Some(home) = env.nonempty("HOME") {
        python_dirs(&Path::new(&home).join(".local"), &mut out);
    }
    // A python3 on PATH lives in <prefix>/bin.
    if let Some(path) = env.nonempty("PATH") {
        for dir in std::env::split_paths(&path) {
            if is_executable(&dir.join("python3")) {
                if let Some(prefix) = dir.parent() {
                    python_dirs(prefix, &mut out);
                }
            }
        }
    }
    for p in &env.system_prefixes {
        python_dirs(p, &mut out);
    }
    out
}

/// The site-packages folders `python3` reports (last resort; bounded by a
/// timeout).
fn python_site_packages(env: &SearchEnv) -> Vec<PathBuf> {
    let mut cmd = super::process::Command::new("python3");
    cmd.args([
        "-c",
        "import site,sys\nfor p in site.getsitepackages()+[site.getusersitepackages()]: print(p)",
    ])
    .timeout(Some(Duration::from_secs(10)));
    if let Some(path) = (env.var)("PATH") {
        cmd.env("PATH", path);
    }
    match cmd.run() {
        Ok(out) if out.termination.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(PathBuf::from)
            .collect(),
        _ => Vec::new(),
    }
}
