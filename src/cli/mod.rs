//! The `tileiras` command line, a drop-in for NVIDIA's: same options, exit
//! codes and diagnostics. [`run`] writes to the streams it is given and
//! returns the exit code; only the binary touches the process's streams.
pub mod args;

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::Path;

use crate::bytecode::version::SUPPORTED_VERSIONS;
use crate::error::Status;
use crate::options::{Options, OutputKind};

/// Runs the tool on `argv` (without the program name); `program` is how it
/// was invoked (`argv[0]`), which option errors name. Returns the exit code.
pub fn run(program: &OsStr, argv: &[OsString], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match run_inner(program, argv, out, err) {
        Ok(code) => code,
        Err(_) => Status::OutOfResources.code(),
    }
}

fn run_inner(
    program: &OsStr,
    argv: &[OsString],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<i32> {
    let args = match args::parse(argv, program) {
        Ok(a) => a,
        Err(message) => {
            writeln!(err, "{message}")?;
            return Ok(1);
        }
    };
    if args.help {
        out.write_all(HELP.as_bytes())?;
        return Ok(0);
    }
    if args.version {
        writeln!(
            out,
            "tileiras: Cuda Tile IR optimizing assembler (tileiras-rs)"
        )?;
        writeln!(out, "version {}", crate::VERSION)?;
        let versions: Vec<String> = SUPPORTED_VERSIONS
            .iter()
            .map(|(a, b)| format!("{a}.{b}"))
            .collect();
        writeln!(out, "Tile IR bytecode versions {}", versions.join(", "))?;
        return Ok(0);
    }
    if args.list_versions {
        for (major, minor) in SUPPORTED_VERSIONS {
            writeln!(out, "{major}.{minor}")?;
        }
        return Ok(0);
    }
    let Some(input) = args.input.as_deref() else {
        writeln!(err, "error: no input file provided")?;
        return Ok(1);
    };
    let bytes = match std::fs::read(input) {
        Ok(b) => b,
        Err(e) => {
            writeln!(
                err,
                "error: unable to read input file '{}': {}",
                input.display(),
                io_reason(&e)
            )?;
            return Ok(Status::OutOfResources.code());
        }
    };
    let Some(gpu) = args.gpu else {
        if bytes.len() >= 10 && bytes.starts_with(&crate::bytecode::MAGIC) {
            writeln!(
                err,
                "error: GPU architecture sm_0 is not supported by this version of tileiras. You may need a newer \
                 toolchain that supports this architecture (bytecode in file is version {}.{}).",
                bytes[8], bytes[9]
            )?;
            return Ok(Status::InvalidArgument.code());
        }
        // Not bytecode at all: let the reader say so (exit 3).
        return compile_and_report(&bytes, &Options::default(), err);
    };
    let opt_level = args.opt_level.unwrap_or(3);
    if !(0..=3).contains(&opt_level) {
        writeln!(err, "error: invalid optimization level: {opt_level}")?;
        return Ok(Status::InvalidArgument.code());
    }
    let output_path = args.output.clone().unwrap_or_else(|| "elf.o".into());
    let shown = output_path.display();
    let to_stdout = output_path.as_os_str() == "-";
    let mut options = Options {
        gpu,
        opt_level: opt_level as u8,
        device_debug: args.device_debug,
        line_info: args.line_info,
        // A cubin whatever the output is named (`elf.o`, `k.o`, `k.ptx`,
        // `-`), as NVIDIA's tool writes; another kind only with `--emit`.
        output: args.emit.unwrap_or(OutputKind::Cubin),
        output_path: (!to_stdout).then(|| output_path.clone()),
        ..Options::default()
    };
    if let Some(a) = args.host_arch {
        options.host_arch = a;
    }
    if let Some(o) = args.host_os {
        options.host_os = o;
    }
    if let Some(s) = args.sanitize {
        options.sanitize = s;
    }
    if let Err(message) = options.validate() {
        writeln!(err, "error: {message}")?;
        return Ok(Status::InvalidArgument.code());
    }
    if args.apply_controls.is_some() {
        writeln!(
            err,
            "error: --apply-controls is not supported on this platform"
        )?;
        return Ok(Status::InvalidArgument.code());
    }
    if !args.libraries.is_empty() && well_formed(&bytes) {
        if let Some((status, message)) = library_problem(&args) {
            writeln!(err, "error: {message}")?;
            return Ok(status.code());
        }
    }
    // Remarks (launch-bound choices, ...) only with --remarks.
    let show_remarks = args.remarks_enabled;
    let mut sink = |d: &crate::Diagnostic| {
        if d.severity != crate::Severity::Remark || show_remarks {
            let _ = writeln!(err, "{d}");
        }
    };
    let output = match crate::driver::compile(&bytes, &options, &mut sink) {
        Ok(o) => o,
        Err(e) => {
            let status = e.status();
            if status == Status::CompileFailed {
                writeln!(err, "error: failed to compile Tile IR program")?;
            }
            return Ok(status.code());
        }
    };
    // Like NVIDIA's tileiras, an output path that cannot name a file is a
    // configuration error (status 2), found after compiling.
    if to_stdout {
        out.write_all(&output.bytes)?;
    } else if let Some(problem) = output_problem(&output_path) {
        writeln!(err, "error: cannot write output file '{shown}': {problem}")?;
        return Ok(Status::InvalidArgument.code());
    } else if let Err(e) = crate::elf::write_output(&output_path, &output.bytes) {
        writeln!(
            err,
            "error: cannot write output file '{shown}': {}",
            io_reason(&e)
        )?;
        return Ok(Status::OutOfResources.code());
    }
    if args.print_kernel_info {
        out.write_all(crate::kernel_info::to_json(&output.kernels).as_bytes())?;
    }
    if args.remark_format.as_deref() == Some("yaml") && args.remarks_enabled {
        // No remarks are produced yet: the file is written, empty, so that
        // callers that read it find it.
        let path = args
            .remarks_output
            .as_deref()
            .unwrap_or(Path::new("tileir_remarks.yaml"));
        if let Err(e) = crate::elf::write_output(path, b"") {
            writeln!(
                err,
                "error: cannot write remarks file '{}': {}",
                path.display(),
                io_reason(&e)
            )?;
            return Ok(Status::OutOfResources.code());
        }
    }
    Ok(0)
}

/// Whether `bytes` read and verify as a TileIR module: what bad bytecode
/// is reported before (status 3) is checked first.
fn well_formed(bytes: &[u8]) -> bool {
    crate::bytecode::read(bytes).is_ok_and(|m| {
        crate::verify::verify(&m).is_ok() && crate::verify::invariants::check(&m).is_ok()
    })
}

/// Why the tile libraries (`-l`) of a well-formed program cannot be used,
/// in NVIDIA's wording where it has one: they need `--preview=simt`, must
/// open and be objects, and this compiler links none.
fn library_problem(args: &args::Args) -> Option<(Status, String)> {
    if !args.preview_simt {
        return Some((
            Status::CompileFailed,
            "libraries require the 'simt' preview feature".into(),
        ));
    }
    // The first library decides: every outcome ends the compile.
    let lib = args.libraries.first()?;
    let reason = match std::fs::read(lib) {
        Err(e) => io_reason(&e),
        Ok(b) if !b.starts_with(b"\x7fELF") => {
            "The file was not recognized as a valid object file".into()
        }
        Ok(_) => {
            return Some((
                Status::Unsupported,
                format!(
                    "tile library '{}': linking tile libraries is not supported",
                    lib.display()
                ),
            ))
        }
    };
    Some((
        Status::CompileFailed,
        format!("failed to open tile library: {reason}"),
    ))
}

/// Why `path` cannot be written as the output file, if it cannot: it is
/// empty, a directory, ends in a slash, or lies in a missing directory.
fn output_problem(path: &Path) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    if bytes.is_empty() {
        return Some("no file name".into());
    }
    if path.is_dir() {
        return Some("Is a directory".into());
    }
    if bytes.ends_with(b"/") || path.file_name().is_none() {
        return Some("not a file name".into());
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty())?;
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => None,
        Ok(_) => Some(format!("'{}' is not a directory", dir.display())),
        Err(_) => Some(format!("directory '{}' does not exist", dir.display())),
    }
}

fn compile_and_report(
    bytes: &[u8],
    options: &Options,
    err: &mut dyn Write,
) -> std::io::Result<i32> {
    let mut sink = |d: &crate::Diagnostic| {
        let _ = writeln!(err, "{d}");
    };
    match crate::driver::compile(bytes, options, &mut sink) {
        Ok(_) => Ok(0),
        Err(e) => Ok(e.status().code()),
    }
}

/// The OS error text without Rust's " (os error N)" suffix, as C tools print it.
fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

const HELP: &str = "OVERVIEW: tileiras: Cuda Tile IR optimizing assembler

USAGE: tileiras [options] <tile bytecode file>

OPTIONS:
  -O                               - Alias for --opt-level
  --apply-controls=<path>          - Not supported on this platform (status 2, as NVIDIA's tileiras on Linux)
  --arch                           - Alias for --gpu-name
  --device-debug                   - Generate debug information (if present in the input bytecode)
  --emit=<value>                   - What to write, whatever the output file is named (default: cubin)
    =cubin                         -   cubin
    =obj                           -   host relocatable object embedding the cubin
    =ptx                           -   PTX text
    =sass                          -   SASS text
  -g                               - Alias for --device-debug
  --gpu-name=<value>               - Specify name of NVIDIA GPU to generate code for.
    =sm_80                         -   SM 80
    =sm_86                         -   SM 86
    =sm_87                         -   SM 87
    =sm_88                         -   SM 88
    =sm_89                         -   SM 89
    =sm_90                         -   SM 90
    =sm_100                        -   SM 100
    =sm_103                        -   SM 103
    =sm_107                        -   SM 107
    =sm_110                        -   SM 110
    =sm_120                        -   SM 120
    =sm_121                        -   SM 121
  -h                               - Alias for --help (also --help-hidden, --help-list, --help-list-hidden)
  --help                           - Display available options
  --host-arch=<value>              - Specify the architecture for the generated host code.
    =x86_64                        -   x86_64
    =aarch64                       -   aarch64
  --host-os=<value>                - Specify the operating system for the generated host code.
    =linux                         -   linux
    =windows                       -   windows
  -l <path>                        - Tile libraries to link (needs --preview=simt; linking is not supported)
  --lineinfo                       - Generate line-number information (if present in the input bytecode)
  --list-versions                  - List all supported bytecode versions and exit
  -o                               - Alias for --output-file
  --opt-level=<N>                  - Specify optimization level. Default Value: 3.
  --output-file=<file>             - Specify name of output file.
  --preview=<feature[,feature...]> - Enable one or more named preview features (simt)
  --print-kernel-info              - Print each kernel's launch facts (block, cluster, registers, shared memory, parameters) as JSON on stdout
  --remark-format=<value>          - Specify the format for remark output (command-line, yaml)
  --remarks=<value>                - Enable remarks for a category (none, all, memory, tensorcore)
  --remarks-output-file=<string>   - Output file for YAML remark format. Default is tileir_remarks.yaml
  --sanitize=<value>               - Enable compiler instrumentation for the sanitizer tool specified by the option.
    =memcheck                      -   Sanitize memory accesses
  --version                        - Display the version of this program
";
