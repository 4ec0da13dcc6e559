//! The ptxas adapter: PTX text in, cubin bytes out.
//!
//! The argument vector, in order:
//!
//! ```text
//! ptxas [module ptxas-options] -arch sm_NN[a] --opt-level N [--device-debug | --generate-line-info]
//!       (--input-as-string <PTX> | <temp>.ptx) -o /dev/stdout
//!       --enable-extended-smem=true -uumn [-sanitize=memcheck -g-tmem-access-check]
//!       [--knobs-file=<PTX_KNOBS_PATH>, opt-in] [--nv-host=<host object>]
//! ```
//!
//! Decisions, per flag (NVIDIA's ptxas 13.5 wins over the seeds):
//! - PTX goes inline with `--input-as-string` when it fits one argv token
//!   (under [`MAX_ARG_STRLEN`] bytes with its NUL); larger PTX goes to a
//!   temporary `.ptx` file passed positionally (the kernel refuses longer
//!   tokens with `E2BIG`).
//! - `-o /dev/stdout`: without `-o` ptxas writes `elf.o` into the current
//!   directory; into a pipe it writes the same bytes. stdout and stderr are
//!   captured separately (not merged as in the seed), so warnings printed on
//!   success never corrupt the cubin; they come back in [`Assembled::log`].
//! - `--enable-extended-smem=true` and `-uumn` are passed by default, as
//!   NVIDIA's tileiras 13.5 does: with them (and its host object) ptxas
//!   reproduces tileiras' cubins byte for byte. [`PtxasJob::reference_flags`]
//!   turns them off.
//! - `-sanitize=memcheck -g-tmem-access-check` with [`Sanitize::Memcheck`]
//!   (to ptxas only: nvdisasm rejects them).
//! - `--device-debug` / `--generate-line-info` (ptxas' `-g` / `-lineinfo`):
//!   measured on CUDA 13.5, NVIDIA's tileiras passes neither for
//!   `--device-debug` or `--lineinfo`; the debug information travels in the
//!   PTX (`.file`/`.loc`, DWARF sections) and ptxas run without them gives
//!   tileiras' cubin byte for byte, while with them the cubin differs (and
//!   `--device-debug` at `--opt-level` above 0 is `ptxas fatal : Optimized
//!   debugging not supported`). So [`PtxasJob::new`] leaves
//!   [`PtxasJob::device_debug`] and [`PtxasJob::line_info`] off; a caller
//!   may set them. When both are set only `--device-debug` goes (ptxas
//!   warns about the pair and ignores line info).
//! - `--knobs-file=<path>`: the seed forwards `PTX_KNOBS_PATH` when
//!   `MLIR_ENABLE_EVO` is also present ([`crate::env::Gates::knobs_file`]
//!   implements that AND gate). Measured on CUDA 13.5: NVIDIA's tileiras
//!   does not forward it (its ptxas argv is the same with both variables
//!   set), and ptxas 13.5 rejects the option (`ptxas fatal : Unknown option
//!   '-knobs-file'`). So [`PtxasJob::new`] leaves [`PtxasJob::knobs_file`]
//!   empty, as the real tool does, and [`PtxasJob::forward_knobs`] opts in
//!   for a ptxas that takes it; the path is then passed unchecked.
//! - `--nv-host=<path>`: the seed wraps the path in double quotes with `"`
//!   and `\` escaped, but ptxas 13.5 takes argv tokens literally and then
//!   fails with `Could not open input file '"…"'`. We pass the path bare;
//!   [`quote_nv_host`] gives the seed's quoted form for display only.
//!
//! Any failure (non-zero exit, 255 included; 126/127; a signal; a timeout;
//! output without the ELF magic) is a [`ToolError`] carrying ptxas' text
//! verbatim. There is no retry. Temporary files are removed on every path.
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::ToolError;
use super::locate::Toolkit;
use super::process::{Command, ResourceUsage};
use crate::env::Gates;
use crate::options::{Options, Sanitize};
use crate::signals::TempFile;

/// Linux's limit on one argv string, NUL included (`MAX_ARG_STRLEN`).
/// cbindgen:ignore
pub const MAX_ARG_STRLEN: usize = 131072;

/// The four bytes every ELF file starts with.
/// cbindgen:ignore
pub const ELF_MAGIC: [u8; 4] = [0x7f, b'E', b'L', b'F'];

const TOOL: &str = "ptxas";

/// A host object for `--nv-host`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostCode {
    /// An existing file; left alone.
    File(PathBuf),
    /// Object bytes, written to a temporary file for the run and removed.
    Bytes(Vec<u8>),
}

/// One ptxas run.
#[derive(Clone, Debug)]
pub struct PtxasJob {
    /// The PTX text.
    pub ptx: String,
    /// `-arch`: `sm_90a`, `sm_100a`, ... ([`crate::Gpu::ptx_target`]).
    pub arch: String,
    /// `--opt-level`, 0..=3.
    pub opt_level: u8,
    /// Tokens from the module's `ptxas-options`, placed first.
    pub module_options: Vec<String>,
    /// `--device-debug` (off in [`PtxasJob::new`], see the module docs).
    pub device_debug: bool,
    /// `--generate-line-info` (off in [`PtxasJob::new`], see the module docs).
    pub line_info: bool,
    /// Sanitizer instrumentation.
    pub sanitize: Sanitize,
    /// `--knobs-file=` value, passed unchecked when set (see the module
    /// docs: ptxas 13.5 rejects the option).
    pub knobs_file: Option<OsString>,
    /// `--nv-host=` object.
    pub host_code: Option<HostCode>,
    /// Pass `--enable-extended-smem=true -uumn` as NVIDIA's tileiras does.
    pub reference_flags: bool,
    /// Time limit for the run.
    pub timeout: Option<Duration>,
    /// Where temporary files go (the system's temp dir when `None`).
    pub temp_dir: Option<PathBuf>,
}

/// ptxas' result.
#[derive(Clone, Debug)]
pub struct Assembled {
    /// The cubin (starts with the ELF magic).
    pub cubin: Vec<u8>,
    /// Whatever ptxas printed on stderr (warnings, `-v` info), verbatim.
    pub log: String,
    /// ptxas' resource usage.
    pub usage: ResourceUsage,
    /// Wall time of the run.
    pub wall_time: Duration,
}

impl PtxasJob {
    /// A job for `ptx` with every flag from `options`, as NVIDIA's tileiras
    /// 13.5 builds it. `gates` is taken for the knob file, which 13.5 does
    /// not forward (see [`PtxasJob::forward_knobs`]).
    pub fn new(ptx: impl Into<String>, options: &Options, gates: &Gates) -> PtxasJob {
        let _ = gates;
        PtxasJob {
            ptx: ptx.into(),
            arch: options.gpu.ptx_target().to_string(),
            opt_level: options.opt_level,
            module_options: Vec::new(),
            // As NVIDIA's tileiras: debug info rides in the PTX (module docs).
            device_debug: false,
            line_info: false,
            sanitize: options.sanitize,
            knobs_file: None,
            host_code: None,
            reference_flags: true,
            timeout: options.tool_timeout,
            temp_dir: None,
        }
    }

    /// A job with default flags: `arch`, `-O3`, nothing else.
    pub fn with_arch(ptx: impl Into<String>, arch: impl Into<String>) -> PtxasJob {
        PtxasJob {
            ptx: ptx.into(),
            arch: arch.into(),
            opt_level: 3,
            module_options: Vec::new(),
            device_debug: false,
            line_info: false,
            sanitize: Sanitize::None,
            knobs_file: None,
            host_code: None,
            reference_flags: true,
            timeout: None,
            temp_dir: None,
        }
    }

    /// Passes `--knobs-file=<PTX_KNOBS_PATH>` when `gates` has both
    /// `MLIR_ENABLE_EVO` and `PTX_KNOBS_PATH`, as the seed describes. Only
    /// for a ptxas that accepts the option; 13.5 does not.
    pub fn forward_knobs(&mut self, gates: &Gates) -> &mut PtxasJob {
        self.knobs_file = gates.knobs_file().map(|p| p.to_owned());
        self
    }

    /// Whether the PTX fits one argv token.
    pub fn fits_inline(&self) -> bool {
        self.ptx.len() < MAX_ARG_STRLEN
    }

    /// The arguments after the program name. `ptx_file` replaces the inline
    /// PTX; `host_file` is the `--nv-host` path.
    pub fn argv(&self, ptx_file: Option<&Path>, host_file: Option<&Path>) -> Vec<OsString> {
        let mut a: Vec<OsString> = Vec::new();
        a.extend(self.module_options.iter().map(OsString::from));
        a.push("-arch".into());
        a.push(self.arch.clone().into());
        a.push("--opt-level".into());
        a.push(self.opt_level.to_string().into());
        if self.device_debug {
            a.push("--device-debug".into());
        }
        // ptxas warns that the two conflict and ignores line info under -g.
        if self.line_info && !self.device_debug {
            a.push("--generate-line-info".into());
        }
        match ptx_file {
            Some(f) => a.push(f.as_os_str().to_owned()),
            None => {
                a.push("--input-as-string".into());
                a.push(self.ptx.clone().into());
            }
        }
        a.push("-o".into());
        a.push("/dev/stdout".into());
        if self.reference_flags {
            a.push("--enable-extended-smem=true".into());
            a.push("-uumn".into());
        }
        if self.sanitize == Sanitize::Memcheck {
            a.push("-sanitize=memcheck".into());
            a.push("-g-tmem-access-check".into());
        }
        if let Some(k) = &self.knobs_file {
            let mut t = OsString::from("--knobs-file=");
            t.push(k);
            a.push(t);
        }
        if let Some(h) = host_file {
            let mut t = OsString::from("--nv-host=");
            t.push(h.as_os_str());
            a.push(t);
        }
        a
    }

    fn temp(&self, suffix: &str, bytes: &[u8]) -> Result<TempFile, ToolError> {
        crate::tempfiles::create(self.temp_dir.as_deref(), suffix, bytes)
            .map_err(|e| ToolError::io(TOOL, "Couldn't write a temporary file", e))
    }
}

/// The seed's quoted `--nv-host` value: `"` and `\` escaped, the whole path
/// in double quotes. For display (command lines in logs), not for argv.
pub fn quote_nv_host(path: &str) -> String {
    let mut s = String::with_capacity(path.len() + 2);
    s.push('"');
    for c in path.chars() {
        if c == '"' || c == '\\' {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('"');
    s
}

/// Runs ptxas on `job.ptx` and returns the cubin.
pub fn assemble(toolkit: &Toolkit, job: &PtxasJob) -> Result<Assembled, ToolError> {
    // The guards remove the temporary files when this function returns, on
    // every path.
    let ptx_file = if job.fits_inline() {
        None
    } else {
        Some(job.temp(".ptx", job.ptx.as_bytes())?)
    };
    let host_file = match &job.host_code {
        None => None,
        Some(HostCode::File(p)) => Some(HostFile::Borrowed(p.clone())),
        Some(HostCode::Bytes(b)) => Some(HostFile::Owned(job.temp(".o", b)?)),
    };
    let mut cmd = Command::new(&toolkit.ptxas);
    cmd.args(job.argv(
        ptx_file.as_ref().map(TempFile::path),
        host_file.as_ref().map(HostFile::path),
    ))
    .timeout(job.timeout);
    let out = cmd.run().map_err(|e| ToolError::spawn(TOOL, e))?;
    drop(ptx_file);
    drop(host_file);
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.termination.success() {
        let mut output = log;
        if !out.stdout.is_empty() && !out.stdout.starts_with(&ELF_MAGIC) {
            output.push_str(&String::from_utf8_lossy(&out.stdout));
        }
        return Err(ToolError::Failed {
            tool: TOOL.into(),
            program: toolkit.ptxas.clone(),
            termination: out.termination,
            output,
        });
    }
    if !out.stdout.starts_with(&ELF_MAGIC) {
        let mut output = log;
        output.push_str(&String::from_utf8_lossy(&out.stdout));
        return Err(ToolError::BadOutput {
            tool: TOOL.into(),
            message: format!(
                "output is not a cubin (no ELF magic; {} bytes)",
                out.stdout.len()
            ),
            output,
        });
    }
    Ok(Assembled {
        cubin: out.stdout,
        log,
        usage: out.usage,
        wall_time: out.wall_time,
    })
}

enum HostFile {
    Borrowed(PathBuf),
    Owned(TempFile),
}

impl HostFile {
    fn path(&self) -> &Path {
        match self {
            HostFile::Borrowed(p) => p,
            HostFile::Owned(t) => t.path(),
        }
    }
}
