//! Command-line parsing with NVIDIA tileiras' (LLVM-style) spellings:
//! `--name=value` or `--name value` (one or two dashes), `-O3` (prefix
//! form), `-o file`; a later occurrence overrides an earlier one.
use crate::options::{Gpu, HostArch, HostOs, OutputKind, Sanitize};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What the command line asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Args {
    /// The input bytecode file.
    pub input: Option<PathBuf>,
    /// `--gpu-name` / `--arch`.
    pub gpu: Option<Gpu>,
    /// `--opt-level` / `-O`, as written (range checked later, like NVIDIA's).
    pub opt_level: Option<i64>,
    /// `--device-debug` / `-g`.
    pub device_debug: bool,
    /// `--lineinfo`.
    pub line_info: bool,
    /// `--host-arch`.
    pub host_arch: Option<HostArch>,
    /// `--host-os`.
    pub host_os: Option<HostOs>,
    /// `--sanitize`.
    pub sanitize: Option<Sanitize>,
    /// `--output-file` / `-o`.
    pub output: Option<PathBuf>,
    /// `--emit`.
    pub emit: Option<OutputKind>,
    /// `--remark-format`.
    pub remark_format: Option<String>,
    /// `--remarks-output-file`.
    pub remarks_output: Option<PathBuf>,
    /// Whether any `--remarks*` category other than `none` was asked for.
    pub remarks_enabled: bool,
    /// `--help`, `-h`, `--help-hidden`, `--help-list`, `--help-list-hidden`.
    pub help: bool,
    /// `--version`.
    pub version: bool,
    /// `--list-versions`.
    pub list_versions: bool,
    /// `--print-kernel-info`: print each kernel's launch facts as JSON on
    /// stdout after a successful compile.
    pub print_kernel_info: bool,
    /// `--preview=simt`.
    pub preview_simt: bool,
    /// `-l <path>`: tile libraries to link, in order.
    pub libraries: Vec<PathBuf>,
    /// `--apply-controls=<path>`.
    pub apply_controls: Option<PathBuf>,
}

/// Options that take a value, with the choices allowed (`None`: any).
const VALUE_OPTIONS: &[(&str, Option<&[&str]>)] = &[
    ("gpu-name", Some(&GPU_NAMES)),
    ("arch", Some(&GPU_NAMES)),
    ("opt-level", None),
    ("output-file", None),
    ("o", None),
    ("host-arch", Some(&["x86_64", "aarch64"])),
    ("host-os", Some(&["linux", "windows"])),
    ("sanitize", Some(&["memcheck"])),
    ("emit", Some(&["cubin", "obj", "ptx", "sass"])),
    ("apply-controls", None),
    ("l", None),
    ("preview", None),
    ("remark-format", Some(&["command-line", "yaml"])),
    ("remarks", Some(&REMARK_CATEGORIES)),
    ("remarks-analysis", Some(&REMARK_CATEGORIES)),
    ("remarks-failed", Some(&REMARK_CATEGORIES)),
    ("remarks-missed", Some(&REMARK_CATEGORIES)),
    ("remarks-passed", Some(&REMARK_CATEGORIES)),
    ("remarks-output-file", None),
];

const GPU_NAMES: [&str; 12] = [
    "sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90", "sm_100", "sm_103", "sm_107", "sm_110",
    "sm_120", "sm_121",
];
const REMARK_CATEGORIES: [&str; 4] = ["none", "all", "memory", "tensorcore"];
/// Boolean options (`-g` is an alias of `--device-debug`): bare, or
/// `=true`/`=false` in LLVM's spellings.
const BOOL_FLAGS: &[(&str, &str)] = &[
    ("device-debug", "device-debug"),
    ("g", "device-debug"),
    ("lineinfo", "lineinfo"),
    ("list-versions", "list-versions"),
    ("print-kernel-info", "print-kernel-info"),
    // LLVM's option dumps; NVIDIA's tool prints nothing for them.
    ("print-options", "print-options"),
    ("print-all-options", "print-all-options"),
];
/// Options that act and take no value (`-h` is `--help`; every help
/// spelling prints the one help text).
const ACTIONS: &[&str] = &[
    "version",
    "help",
    "h",
    "help-hidden",
    "help-list",
    "help-list-hidden",
];
/// The features `--preview` knows.
const PREVIEW_FEATURES: &[&str] = &["simt"];

/// Parses `argv` without the program name; `program` is how the tool was
/// invoked (`argv[0]`). Arguments need not be UTF-8: paths are taken as
/// they are. The error is the complete message, in NVIDIA's wording (exit
/// code 1): prefixed with the program's file name, pointing to
/// `program --help`.
pub fn parse(argv: &[OsString], program: &OsStr) -> Result<Args, String> {
    let name = Path::new(program)
        .file_name()
        .unwrap_or(program)
        .to_string_lossy();
    parse_named(argv, &program.to_string_lossy()).map_err(|e| format!("{name}: {e}"))
}

fn parse_named(argv: &[OsString], program: &str) -> Result<Args, String> {
    let mut args = Args::default();
    let mut it = argv.iter();
    let mut positional_only = false;
    while let Some(arg) = it.next() {
        let bytes = arg.as_bytes();
        if positional_only || !bytes.starts_with(b"-") || bytes == b"-" {
            if args.input.replace(PathBuf::from(arg)).is_some() {
                return Err(format!(
                    "Too many positional arguments specified!\n\
                     Can specify at most 1 positional arguments: See: {program} --help"
                ));
            }
            continue;
        }
        if bytes == b"--" {
            positional_only = true;
            continue;
        }
        let shown = arg.to_string_lossy();
        // One or two dashes, as LLVM takes them; `---x` names no option.
        let dashes = bytes.iter().take_while(|&&c| c == b'-').count();
        if dashes > 2 {
            return Err(unknown(&shown, program));
        }
        let body = &bytes[dashes..];
        let (name, inline) = match body.iter().position(|&c| c == b'=') {
            Some(i) => (&body[..i], Some(OsStr::from_bytes(&body[i + 1..]))),
            None => (body, None),
        };
        let Ok(name) = std::str::from_utf8(name) else {
            return Err(unknown(&shown, program));
        };
        // `-O3` (or `--O3`): the prefix form of --opt-level.
        if name.starts_with('O') && name != "O" {
            args.opt_level = Some(parse_int("--opt-level", &shown[dashes + 1..])?);
            continue;
        }
        if name == "O" {
            match inline {
                Some(v) => {
                    let v = format!("={}", v.to_string_lossy());
                    args.opt_level = Some(parse_int("--opt-level", &v)?)
                }
                None => return Err("for the -O option: requires a value!".to_string()),
            }
            continue;
        }
        if let Some(&(_, option)) = BOOL_FLAGS.iter().find(|(n, _)| *n == name) {
            let on = match inline {
                None => true,
                Some(v) => parse_bool(option, &v.to_string_lossy())?,
            };
            match option {
                "device-debug" => args.device_debug = on,
                "lineinfo" => args.line_info = on,
                "list-versions" => args.list_versions = on,
                "print-kernel-info" => args.print_kernel_info = on,
                _ => {}
            }
            continue;
        }
        if ACTIONS.contains(&name) {
            if let Some(v) = inline {
                return Err(format!(
                    "for the --{name} option: does not allow a value! '{}' specified.",
                    v.to_string_lossy()
                ));
            }
            match name {
                "version" => args.version = true,
                _ => args.help = true,
            }
            continue;
        }
        let Some((_, choices)) = VALUE_OPTIONS.iter().find(|(n, _)| *n == name) else {
            return Err(unknown(&shown, program));
        };
        let raw: &OsStr = match inline {
            Some(v) => v,
            None => match it.next() {
                Some(v) => v,
                None => return Err(format!("for the -{name} option: requires a value!")),
            },
        };
        if matches!(
            name,
            "output-file" | "o" | "remarks-output-file" | "l" | "apply-controls"
        ) {
            let path = PathBuf::from(raw);
            match name {
                "remarks-output-file" => args.remarks_output = Some(path),
                "l" => args.libraries.push(path),
                "apply-controls" => args.apply_controls = Some(path),
                _ => args.output = Some(path),
            }
            continue;
        }
        let value = raw.to_string_lossy().into_owned();
        let spelled = if name.len() == 1 { "-" } else { "--" };
        if let Some(choices) = choices {
            if !choices.contains(&value.as_str()) {
                return Err(format!(
                    "for the {spelled}{name} option: Cannot find option named '{value}'!"
                ));
            }
        }
        match name {
            "gpu-name" | "arch" => args.gpu = Some(value.parse().map_err(|e: String| e)?),
            "opt-level" => args.opt_level = Some(parse_int("--opt-level", &value)?),
            "host-arch" => {
                args.host_arch = Some(if value == "x86_64" {
                    HostArch::X86_64
                } else {
                    HostArch::Aarch64
                })
            }
            "host-os" => {
                args.host_os = Some(if value == "linux" {
                    HostOs::Linux
                } else {
                    HostOs::Windows
                })
            }
            "sanitize" => args.sanitize = Some(Sanitize::Memcheck),
            "emit" => {
                args.emit = Some(match value.as_str() {
                    "cubin" => OutputKind::Cubin,
                    "ptx" => OutputKind::Ptx,
                    "sass" => OutputKind::Sass,
                    _ => OutputKind::HostObject,
                })
            }
            "remark-format" => args.remark_format = Some(value),
            "preview" => {
                check_preview(&value)?;
                args.preview_simt = true;
            }
            n if n.starts_with("remarks") => args.remarks_enabled |= value != "none",
            _ => {}
        }
    }
    Ok(args)
}

fn parse_int(option: &str, value: &str) -> Result<i64, String> {
    value.parse().map_err(|_| {
        format!("for the {option} option: '{value}' value invalid for integer argument!")
    })
}

/// An LLVM boolean option value (empty is true, as in `-g=`); the error,
/// without the program prefix, names `option` (an alias's target). Shared
/// with `tileirdisasm`.
pub fn parse_bool(option: &str, value: &str) -> Result<bool, String> {
    match value {
        "" | "true" | "TRUE" | "True" | "1" => Ok(true),
        "false" | "FALSE" | "False" | "0" => Ok(false),
        _ => Err(format!(
            "for the --{option} option: '{value}' is invalid value for boolean argument! Try 0 or 1"
        )),
    }
}

/// Checks a `--preview` list; the error, without the program prefix, names
/// the first unknown feature. Shared with `tileirdisasm`.
pub fn check_preview(list: &str) -> Result<(), String> {
    match list.split(',').find(|f| !PREVIEW_FEATURES.contains(f)) {
        None => Ok(()),
        Some(feature) => Err(format!(
            "for the --preview option: unknown preview feature '{feature}'; supported \
             features: {}",
            PREVIEW_FEATURES.join(", ")
        )),
    }
}

fn unknown(arg: &str, program: &str) -> String {
    format!("Unknown command line argument '{arg}'.  Try: '{program} --help'")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Args, String> {
        parse(
            &args.iter().map(OsString::from).collect::<Vec<_>>(),
            OsStr::new("tileiras"),
        )
    }

    #[test]
    fn spellings() {
        let a = p(&[
            "--gpu-name=sm_90",
            "in.tileir",
            "-O2",
            "-o",
            "x.cubin",
            "--lineinfo",
        ])
        .unwrap();
        assert_eq!(a.gpu, Some(Gpu::Sm90));
        assert_eq!(a.opt_level, Some(2));
        assert_eq!(a.output.as_deref(), Some(Path::new("x.cubin")));
        assert_eq!(a.input.as_deref(), Some(Path::new("in.tileir")));
        assert!(a.line_info);
        let a = p(&[
            "-gpu-name",
            "sm_100",
            "--arch=sm_80",
            "--opt-level",
            "1",
            "-g",
            "--output-file=y",
        ])
        .unwrap();
        assert_eq!(a.gpu, Some(Gpu::Sm80));
        assert_eq!(a.opt_level, Some(1));
        assert!(a.device_debug);
        assert_eq!(a.output.as_deref(), Some(Path::new("y")));
        // Boolean values; a later occurrence wins.
        let a = p(&["-g", "--device-debug=False", "--lineinfo=1", "--O2"]).unwrap();
        assert!(!a.device_debug);
        assert!(p(&["--lineinfo="]).unwrap().line_info, "empty is true");
        assert!(a.line_info);
        assert_eq!(a.opt_level, Some(2));
    }

    #[test]
    fn errors_use_nvidia_wording() {
        assert_eq!(
            p(&["--gpu-name=sm_75"]).unwrap_err(),
            "tileiras: for the --gpu-name option: Cannot find option named 'sm_75'!"
        );
        assert_eq!(
            p(&["--opt-level=x"]).unwrap_err(),
            "tileiras: for the --opt-level option: 'x' value invalid for integer argument!"
        );
        assert!(p(&["--bogus"])
            .unwrap_err()
            .starts_with("tileiras: Unknown command line argument '--bogus'."));
        assert!(p(&["a", "b"])
            .unwrap_err()
            .starts_with("tileiras: Too many positional arguments specified!"));
        assert_eq!(
            p(&["-g=maybe"]).unwrap_err(),
            "tileiras: for the --device-debug option: 'maybe' is invalid value for boolean \
             argument! Try 0 or 1"
        );
        assert_eq!(
            p(&["--help=0"]).unwrap_err(),
            "tileiras: for the --help option: does not allow a value! '0' specified."
        );
        assert!(p(&["---lineinfo"])
            .unwrap_err()
            .starts_with("tileiras: Unknown command line argument '---lineinfo'."));
        assert_eq!(
            p(&["-O"]).unwrap_err(),
            "tileiras: for the -O option: requires a value!"
        );
    }

    #[test]
    fn paths_need_not_be_utf8_and_errors_name_the_program() {
        use std::os::unix::ffi::OsStringExt;
        let input = OsString::from_vec(b"in\xff.tileir".to_vec());
        let inline = OsString::from_vec(b"--output-file=o\xfe.cubin".to_vec());
        let a = parse(&[input.clone(), inline], OsStr::new("tileiras")).unwrap();
        assert_eq!(a.input, Some(PathBuf::from(&input)));
        assert_eq!(
            a.output,
            Some(PathBuf::from(OsStr::from_bytes(b"o\xfe.cubin")))
        );
        let bad = OsString::from_vec(b"--bo\xffgus".to_vec());
        assert_eq!(
            parse(&[bad], OsStr::new("/opt/cuda/bin/tileiras")).unwrap_err(),
            "tileiras: Unknown command line argument '--bo\u{fffd}gus'.  \
             Try: '/opt/cuda/bin/tileiras --help'"
        );
    }

    #[test]
    fn emit_and_remarks() {
        let a = p(&[
            "--emit=sass",
            "--remarks=all",
            "--remark-format=yaml",
            "--remarks-output-file=r.yaml",
        ])
        .unwrap();
        assert_eq!(a.emit, Some(OutputKind::Sass));
        assert!(a.remarks_enabled);
        assert_eq!(a.remarks_output.as_deref(), Some(Path::new("r.yaml")));
        assert!(p(&["--emit=exe"]).is_err());
    }
}
