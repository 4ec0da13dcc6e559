//! The `tileiras` command line against NVIDIA's: exit codes and the first
//! line of the diagnostics, case by case.
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{corpus, cuda_root, Scratch};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(tool: &Path, args: &[&str], dir: &Path) -> Run {
    let out = Command::new(tool)
        .args(args)
        .current_dir(dir)
        .env("CUDA_ROOT", cuda_root())
        .output()
        .expect("run tool");
    Run {
        code: out.status.code().expect("exited"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tileiras"))
}

fn theirs() -> PathBuf {
    cuda_root().join("bin/tileiras")
}

fn vadd() -> String {
    corpus()
        .join("vadd_f32_contig/vadd_f32_contig.v13_3.tileir")
        .display()
        .to_string()
}

/// Writes the inputs the error cases need into `dir`.
fn inputs(dir: &Path) {
    let good = std::fs::read(vadd()).unwrap();
    std::fs::write(dir.join("garbage.bin"), b"hello world\n").unwrap();
    std::fs::write(dir.join("mlir.bin"), b"ML\xefR\x00\x01\x02\x03").unwrap();
    std::fs::write(dir.join("trunc.bin"), &good[..100]).unwrap();
    let mut v99 = good.clone();
    v99[8] = 99;
    std::fs::write(dir.join("v99.bin"), v99).unwrap();
    std::fs::write(dir.join("empty.bin"), b"").unwrap();
    for (file, name) in [
        ("digit_name.bin", &b"9add_f32_contig"[..]),
        ("dash_name.bin", b"vadd-f32_contig"),
    ] {
        std::fs::write(dir.join(file), renamed(&good, name)).unwrap();
    }
}

/// Bytecode `good` (the vector add) with its entry renamed to `name`, of
/// the same length: its one string-table entry rewritten.
fn renamed(good: &[u8], name: &[u8]) -> Vec<u8> {
    let old: &[u8] = b"vadd_f32_contig";
    assert_eq!(name.len(), old.len());
    let at: Vec<usize> = (0..good.len())
        .filter(|&i| good[i..].starts_with(old))
        .collect();
    assert_eq!(at.len(), 1, "the name is in the string table once");
    let mut bytes = good.to_vec();
    bytes[at[0]..at[0] + old.len()].copy_from_slice(name);
    bytes
}

/// An entry taking a `tile<ptr<i4>>`: NVIDIA's reader refuses pointers to
/// `i4`.
fn ptr_i4() -> String {
    common::repo()
        .join("tests/data/verify/ptr_i4_param.tileirbc")
        .display()
        .to_string()
}

/// An entry taking a tensor view: verified, then refused by the format's
/// invariants (entry arguments are tiles).
fn tensor_view_arg() -> String {
    common::repo()
        .join("tests/data/verify/entry_arg_tensor_view.tileirbc")
        .display()
        .to_string()
}

#[test]
fn exit_codes_match_nvidia() {
    let scratch = Scratch::new("cli-codes");
    let dir = &scratch.0;
    inputs(dir);
    let v = vadd();
    let floordiv = corpus()
        .join("uint_floordiv_u32/uint_floordiv_u32.v13_3.tileir")
        .display()
        .to_string();
    let ptr_i4 = ptr_i4();
    let tv_arg = tensor_view_arg();
    let cases: Vec<(&str, Vec<&str>, i32)> = vec![
        ("no input", vec!["--gpu-name=sm_90"], 1),
        (
            "unreadable input",
            vec!["--gpu-name=sm_90", "missing.tileir"],
            1,
        ),
        ("unknown gpu", vec!["--gpu-name=sm_75", &v], 1),
        ("unknown option", vec!["--gpu-name=sm_90", "--bogus", &v], 1),
        (
            "bad opt value",
            vec!["--gpu-name=sm_90", "--opt-level=x", &v],
            1,
        ),
        ("two inputs", vec!["--gpu-name=sm_90", &v, &v], 1),
        (
            "opt level 4",
            vec!["--gpu-name=sm_90", "-O4", &v, "-o", "x.o"],
            2,
        ),
        (
            "opt level -1",
            vec!["--gpu-name=sm_90", "--opt-level=-1", &v, "-o", "x.o"],
            2,
        ),
        (
            "-g with -O3",
            vec!["--gpu-name=sm_90", "-g", &v, "-o", "x.o"],
            2,
        ),
        (
            "missing output dir",
            vec!["--gpu-name=sm_90", &v, "-o", "nodir/x.o"],
            2,
        ),
        (
            "output is a directory",
            vec!["--gpu-name=sm_90", &v, "-o", "."],
            2,
        ),
        ("empty output", vec!["--gpu-name=sm_90", &v, "-o", ""], 2),
        (
            "output ends in a slash",
            vec!["--gpu-name=sm_90", &v, "-o", "x.o/"],
            2,
        ),
        (
            "output under a file",
            vec!["--gpu-name=sm_90", &v, "-o", "garbage.bin/x.o"],
            2,
        ),
        ("no gpu", vec![&v, "-o", "x.o"], 2),
        (
            "prefix -O with two dashes",
            vec!["--gpu-name=sm_90", "--O3", &v, "-o", "x.o"],
            0,
        ),
        (
            "-g=0 with -O3",
            vec!["--gpu-name=sm_90", "-g=0", &v, "-o", "x.o"],
            0,
        ),
        (
            "--device-debug=1 with -O3",
            vec!["--gpu-name=sm_90", "--device-debug=1", &v, "-o", "x.o"],
            2,
        ),
        (
            "-g= (empty is true) with -O0",
            vec!["--gpu-name=sm_90", "-g=", "-O0", &v, "-o", "x.o"],
            0,
        ),
        (
            "--lineinfo=TRUE",
            vec!["--gpu-name=sm_90", "--lineinfo=TRUE", &v, "-o", "x.o"],
            0,
        ),
        (
            "three dashes",
            vec!["---gpu-name=sm_90", &v, "-o", "x.o"],
            1,
        ),
        (
            "apply-controls",
            vec!["--gpu-name=sm_90", "--apply-controls=acf", &v, "-o", "x.o"],
            2,
        ),
        (
            "unknown preview feature",
            vec!["--gpu-name=sm_90", "--preview=simt,x", &v, "-o", "x.o"],
            1,
        ),
        (
            "simt preview",
            vec!["--gpu-name=sm_90", "--preview=simt", &v, "-o", "x.o"],
            0,
        ),
        (
            "library without the simt preview",
            vec!["--gpu-name=sm_90", "-l", "lib.o", &v, "-o", "x.o"],
            5,
        ),
        (
            "missing library",
            vec![
                "--gpu-name=sm_90",
                "--preview=simt",
                "-l",
                "lib.o",
                &v,
                "-o",
                "x.o",
            ],
            5,
        ),
        (
            "library that is not an object",
            vec![
                "--gpu-name=sm_90",
                "--preview=simt",
                "-l",
                "garbage.bin",
                &v,
                "-o",
                "x.o",
            ],
            5,
        ),
        (
            "library with bad bytecode",
            vec![
                "--gpu-name=sm_90",
                "-l",
                "lib.o",
                "garbage.bin",
                "-o",
                "x.o",
            ],
            3,
        ),
        (
            "bad bytecode and a missing output dir",
            vec!["--gpu-name=sm_90", "garbage.bin", "-o", "nodir/x.o"],
            3,
        ),
        ("-h", vec!["-h"], 0),
        ("--help-list", vec!["--help-list"], 0),
        (
            "--print-options",
            vec!["--gpu-name=sm_90", "--print-options", &v, "-o", "x.o"],
            0,
        ),
        (
            "garbage",
            vec!["--gpu-name=sm_90", "garbage.bin", "-o", "x.o"],
            3,
        ),
        (
            "empty file",
            vec!["--gpu-name=sm_90", "empty.bin", "-o", "x.o"],
            3,
        ),
        (
            "mlir bytecode",
            vec!["--gpu-name=sm_90", "mlir.bin", "-o", "x.o"],
            3,
        ),
        (
            "truncated",
            vec!["--gpu-name=sm_90", "trunc.bin", "-o", "x.o"],
            3,
        ),
        (
            "version 99.3",
            vec!["--gpu-name=sm_90", "v99.bin", "-o", "x.o"],
            3,
        ),
        (
            "fails verification",
            vec!["--gpu-name=sm_90", &floordiv, "-o", "x.o"],
            3,
        ),
        (
            "pointer to i4",
            vec!["--gpu-name=sm_90", &ptr_i4, "-o", "x.o"],
            3,
        ),
        (
            "tensor view argument",
            vec!["--gpu-name=sm_90", &tv_arg, "-o", "x.o"],
            3,
        ),
        // ptxas refuses an entry name that is not a PTX identifier.
        (
            "entry name starts with a digit",
            vec!["--gpu-name=sm_90", "digit_name.bin", "-o", "x.o"],
            5,
        ),
        (
            "entry name with a dash",
            vec!["--gpu-name=sm_100", "dash_name.bin", "-o", "x.o"],
            5,
        ),
    ];
    let mut mismatches = Vec::new();
    for (name, args, expected) in &cases {
        let a = run(&ours(), args, dir);
        let b = run(&theirs(), args, dir);
        if a.code != *expected || b.code != *expected {
            mismatches.push(format!(
                "{name}: ours {} (stderr {:?}), NVIDIA's {} (stderr {:?}), expected {expected}",
                a.code, a.stderr, b.code, b.stderr
            ));
        }
        assert!(
            !dir.join("x.o").exists() || b.code == 0,
            "{name}: a failed compile left an output file"
        );
        let _ = std::fs::remove_file(dir.join("x.o"));
    }
    assert!(
        mismatches.is_empty(),
        "exit codes differ:\n{}",
        mismatches.join("\n")
    );
}

#[test]
fn messages_match_nvidia() {
    let scratch = Scratch::new("cli-messages");
    let dir = &scratch.0;
    inputs(dir);
    let v = vadd();
    let ptr_i4 = ptr_i4();
    let tv_arg = tensor_view_arg();
    let verify_case = |name: &str| {
        common::repo()
            .join(format!("tests/data/verify/{name}.tileirbc"))
            .display()
            .to_string()
    };
    let (for_yield, for_return, return_in_for) = (
        verify_case("for_ends_in_yield"),
        verify_case("for_ends_in_return"),
        verify_case("return_in_if_in_for"),
    );
    let cases: Vec<Vec<&str>> = vec![
        vec!["--gpu-name=sm_90"],
        vec!["--gpu-name=sm_90", "missing.tileir"],
        vec!["--gpu-name=sm_75", &v],
        vec!["--gpu-name=sm_90", "--opt-level=x", &v],
        vec!["--gpu-name=sm_90", "-O4", &v],
        vec!["--gpu-name=sm_90", "-g", &v],
        // Boolean options take LLVM's true/false spellings; actions none.
        vec!["--gpu-name=sm_90", "-g=maybe", &v],
        vec!["--gpu-name=sm_90", "--lineinfo=maybe", &v],
        vec!["--help=0"],
        vec!["--version=1"],
        vec!["--gpu-name=sm_90", "-O3x", &v],
        // ptxas' note that sm_90a ignores the tensor-memory check is no
        // warning: nothing is printed.
        vec!["--gpu-name=sm_90", "--sanitize=memcheck", &v],
        vec!["--gpu-name=sm_90", "--apply-controls=acf", &v],
        vec!["--gpu-name=sm_90", "--preview=", &v],
        vec!["--gpu-name=sm_90", "-l", "lib.o", &v],
        vec!["--gpu-name=sm_90", "--preview=simt", "-l", "lib.o", &v],
        vec![
            "--gpu-name=sm_90",
            "--preview=simt",
            "-l",
            "garbage.bin",
            &v,
        ],
        vec![&v],
        vec!["--gpu-name=sm_90", "garbage.bin"],
        vec!["--gpu-name=sm_90", "mlir.bin"],
        vec!["--gpu-name=sm_90", "v99.bin"],
        vec!["--gpu-name=sm_90", "trunc.bin"],
        vec!["--gpu-name=sm_90", &ptr_i4],
        vec!["--gpu-name=sm_90", &tv_arg],
        // The first error NVIDIA's verifier meets: a nested op's own rules
        // before its parent's region rules.
        vec!["--gpu-name=sm_90", &for_yield],
        vec!["--gpu-name=sm_90", &for_return],
        vec!["--gpu-name=sm_90", &return_in_for],
    ];
    for args in &cases {
        let a = run(&ours(), args, dir);
        let b = run(&theirs(), args, dir);
        let first = |s: &str| s.lines().next().unwrap_or("").to_string();
        assert_eq!(
            first(&a.stderr),
            first(&b.stderr),
            "first diagnostic line for {args:?}"
        );
    }
}

/// An entry name that is not a PTX identifier fails the compile (status
/// 5) as with NVIDIA's tileiras, whose ptxas refuses it: NVIDIA's prints
/// only its closing line; ours says first which entry, where, and why.
#[test]
fn entry_name_that_is_not_a_ptx_identifier_fails_the_compile() {
    let scratch = Scratch::new("cli-entry-name");
    let dir = &scratch.0;
    inputs(dir);
    let args = ["--gpu-name=sm_90", "digit_name.bin", "-o", "x.o"];
    let a = run(&ours(), &args, dir);
    let b = run(&theirs(), &args, dir);
    assert_eq!((a.code, b.code), (5, 5), "{}\n{}", a.stderr, b.stderr);
    assert!(!dir.join("x.o").exists());
    assert_eq!(b.stderr, "error: failed to compile Tile IR program\n");
    let lines: Vec<&str> = a.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", a.stderr);
    assert!(lines[0].starts_with("loc(\"kernels.py\":"), "{}", a.stderr);
    assert!(
        lines[0].contains(
            "error: entry \"9add_f32_contig\": the name is not a PTX identifier \
             ([a-zA-Z][a-zA-Z0-9_$]* or [_$%][a-zA-Z0-9_$]+), so ptxas cannot assemble it"
        ),
        "{}",
        a.stderr
    );
    assert_eq!(lines[1], "error: failed to compile Tile IR program");
}

/// Option errors name the tool as it was invoked, as NVIDIA's do: the
/// prefix is its file name, the `--help` hint the path it was run by.
#[test]
fn option_errors_name_the_program_as_invoked() {
    let scratch = Scratch::new("cli-argv0");
    for (who, tool) in [("ours", ours()), ("theirs", theirs())] {
        let dir = scratch.path(who);
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&tool, dir.join("tool")).unwrap();
    }
    for args in [
        &["--bogus"][..],
        &["---lineinfo"],
        &["a.tileir", "b.tileir"],
    ] {
        let a = run(Path::new("./tool"), args, &scratch.path("ours"));
        let b = run(Path::new("./tool"), args, &scratch.path("theirs"));
        assert_eq!((a.code, b.code), (1, 1), "{args:?}");
        let first = |s: &str| s.lines().next().unwrap_or("").to_string();
        assert_eq!(first(&a.stderr), first(&b.stderr), "{args:?}");
        assert!(a.stderr.starts_with("tool: "), "{}", a.stderr);
    }
    let a = run(
        Path::new("./tool"),
        &["a.tileir", "b.tileir"],
        &scratch.path("ours"),
    );
    assert!(a.stderr.contains("See: ./tool --help"), "{}", a.stderr);
}

/// File names are bytes: input and output paths that are not UTF-8 work.
#[test]
fn paths_need_not_be_utf8() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let scratch = Scratch::new("cli-bytes");
    let input = scratch.path("in").join(OsStr::from_bytes(b"k\xff.tileir"));
    std::fs::create_dir(scratch.path("in")).unwrap();
    std::fs::copy(vadd(), &input).unwrap();
    let output = OsStr::from_bytes(b"k\xfe.ptx");
    let out = Command::new(ours())
        .arg("--gpu-name=sm_90")
        .arg("--emit=ptx")
        .arg("-o")
        .arg(output)
        .arg(&input)
        .current_dir(&scratch.0)
        .env("CUDA_ROOT", cuda_root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let ptx = std::fs::read_to_string(scratch.0.join(output)).unwrap();
    assert!(ptx.contains(".entry vadd_f32_contig"), "{ptx}");
    let missing = Command::new(ours())
        .arg("--gpu-name=sm_90")
        .arg(OsStr::from_bytes(b"no\xff.tileir"))
        .current_dir(&scratch.0)
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1), "{missing:?}");
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr),
        "error: unable to read input file 'no\u{fffd}.tileir': No such file or directory\n"
    );
}

/// TMA is not generated: asking for it explicitly is answered with a
/// warning on targets that have it, and the compile still succeeds.
#[test]
fn prefer_tma_warns_that_it_has_no_effect() {
    let scratch = Scratch::new("cli-tma");
    let compile = |gpu: &str, value: &str| {
        let out = Command::new(ours())
            .args([gpu, "-o", "x.cubin", &vadd()])
            .current_dir(&scratch.0)
            .env("CUDA_ROOT", cuda_root())
            .env("TILEIR_PREFER_TMA_FOR_LOAD_STORE", value)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let warned =
        |s: &str| s.contains("warning: TILEIR_PREFER_TMA_FOR_LOAD_STORE=true has no effect");
    assert!(warned(&compile("--gpu-name=sm_90", "true")));
    assert!(!warned(&compile("--gpu-name=sm_90", "false")));
    assert!(!warned(&compile("--gpu-name=sm_80", "true")));
}

/// An object file given with `-l` under the simt preview opens, but this
/// compiler links no tile libraries: status 4, naming the library.
#[test]
fn tile_libraries_are_refused_as_unsupported() {
    let scratch = Scratch::new("cli-library");
    let lib = ours().display().to_string();
    let r = run(
        &ours(),
        &[
            "--gpu-name=sm_90",
            "--preview=simt",
            "-l",
            &lib,
            &vadd(),
            "-o",
            "x.o",
        ],
        &scratch.0,
    );
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        format!("error: tile library '{lib}': linking tile libraries is not supported\n")
    );
    assert!(!scratch.path("x.o").exists());
}

#[test]
fn list_versions_and_help() {
    let scratch = Scratch::new("cli-info");
    let a = run(&ours(), &["--list-versions"], &scratch.0);
    let b = run(&theirs(), &["--list-versions"], &scratch.0);
    assert_eq!(a.code, 0);
    assert_eq!(
        a.stdout.split_whitespace().collect::<Vec<_>>(),
        b.stdout.split_whitespace().collect::<Vec<_>>()
    );
    let h = run(&ours(), &["--help"], &scratch.0);
    assert_eq!(h.code, 0);
    for option in [
        "--gpu-name",
        "--opt-level",
        "--device-debug",
        "--lineinfo",
        "--host-arch",
        "--host-os",
        "--sanitize",
    ] {
        assert!(h.stdout.contains(option), "--help lists {option}");
    }
    let v = run(&ours(), &["--version"], &scratch.0);
    assert_eq!(v.code, 0);
    assert!(v.stdout.contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn valid_kernel_reaches_lowering() {
    // A NaN-padded load of an f4E2M1FN array verifies, but f4E2M1FN has no
    // NaN: unsupported (NVIDIA's tileiras fails on it too), reported at the
    // load's source location.
    let unsupported = common::repo().join("tests/data/lower/kernels/f4_nan_padding.tileir");
    let unsupported = unsupported.to_str().unwrap();
    let scratch = Scratch::new("cli-lowering");
    let r = run(
        &ours(),
        &["--gpu-name=sm_100", unsupported, "-o", "out.cubin"],
        &scratch.0,
    );
    assert_eq!(r.code, 4, "stderr: {}", r.stderr);
    assert!(
        r.stderr.starts_with("loc(\"kernels.py\":"),
        "points at the source: {}",
        r.stderr
    );
    assert!(
        r.stderr.contains(
            "'cuda_tile.load_view_tko' op with infinity or NaN padding for f4E2M1FN, which has neither, is not supported"
        ),
        "names the op: {}",
        r.stderr
    );
    assert!(!scratch.path("out.cubin").exists());
    let theirs = run(
        &theirs(),
        &["--gpu-name=sm_100", unsupported, "-o", "out.cubin"],
        &scratch.0,
    );
    assert_ne!(theirs.code, 0, "NVIDIA's tileiras refuses it too");
}

#[test]
fn kernels_the_lowering_once_refused_compile() {
    // The ftoi from f32 to i1 and the print of an f8E4M3FN tile.
    for name in ["f32_to_bool", "print_e4m3"] {
        let kernel = common::repo().join(format!("tests/data/lower/kernels/{name}.tileir"));
        let kernel = kernel.to_str().unwrap();
        let scratch = Scratch::new(&format!("cli-{name}"));
        let r = run(
            &ours(),
            &["--gpu-name=sm_90", kernel, "-o", "out.cubin"],
            &scratch.0,
        );
        assert_eq!(r.code, 0, "{name}: stderr: {}", r.stderr);
        assert!(scratch.path("out.cubin").exists(), "{name}");
    }
}

fn empty_module() -> PathBuf {
    common::repo().join("tests/data/empty_module.v13_3.tileir")
}

/// `-o` names what the output goes to, as with NVIDIA's tileiras: the
/// standard output as `-` or through `/proc/self/fd/1` (what `/dev/stdout`
/// names), a FIFO, or the file a symbolic link names; none of them is
/// replaced by a regular file.
#[test]
fn output_goes_to_streams_fifos_and_link_targets() {
    let scratch = Scratch::new("cli-streams");
    let input = vadd();
    let ptx = |out: &str| {
        let r = run(
            &ours(),
            &["--gpu-name=sm_90", "--emit=ptx", "-o", out, &input],
            &scratch.0,
        );
        assert_eq!(r.code, 0, "{out}: {}", r.stderr);
        r.stdout
    };
    let text = ptx("/proc/self/fd/1");
    assert!(text.contains(".target sm_90a"), "{text}");
    assert_eq!(ptx("-"), text, "-o - is the standard output");
    // With no --emit, `-o -` writes the cubin (no extension to go by).
    let cubin = Command::new(ours())
        .args(["--gpu-name=sm_90", "-o", "-", &input])
        .current_dir(&scratch.0)
        .env("CUDA_ROOT", cuda_root())
        .output()
        .unwrap();
    assert!(cubin.status.success(), "{cubin:?}");
    assert_eq!(&cubin.stdout[..4], b"\x7fELF");
    assert_eq!(cubin.stdout[18], 190, "EM_CUDA");
    assert!(!scratch.path("-").exists());

    std::os::unix::fs::symlink("real.ptx", scratch.path("link.ptx")).unwrap();
    assert_eq!(ptx("link.ptx"), "");
    assert_eq!(
        std::fs::read_to_string(scratch.path("real.ptx")).unwrap(),
        text
    );
    let link = std::fs::symlink_metadata(scratch.path("link.ptx")).unwrap();
    assert!(link.file_type().is_symlink());

    let fifo = scratch.path("pipe");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    assert_eq!(ptx("pipe"), "");
    assert_eq!(reader.join().unwrap(), text);
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

/// A cubin's ELF type and machine.
fn elf_kind(bytes: &[u8]) -> (u16, u16) {
    assert_eq!(&bytes[..4], b"\x7fELF");
    (
        u16::from_le_bytes([bytes[16], bytes[17]]),
        u16::from_le_bytes([bytes[18], bytes[19]]),
    )
}

/// A cubin whatever `-o` names, the default `elf.o` too, as NVIDIA's
/// tileiras writes; PTX, SASS or a host object only with `--emit`.
#[test]
fn output_is_a_cubin_unless_emit_says_otherwise() {
    const CUBIN: (u16, u16) = (2, 190); // ET_EXEC, EM_CUDA
    let (scratch, nvidia) = (Scratch::new("cli-kinds"), Scratch::new("cli-kinds-nvidia"));
    let input = vadd();
    for name in [
        "k.cubin", "k.o", "k.obj", "k.bin", "k.ptx", "k.sass", "k", "",
    ] {
        let mut args = vec!["--gpu-name=sm_90", input.as_str()];
        if !name.is_empty() {
            args.extend(["-o", name]);
        }
        let file = if name.is_empty() { "elf.o" } else { name };
        for (tool, dir) in [(ours(), &scratch), (theirs(), &nvidia)] {
            let r = run(&tool, &args, &dir.0);
            assert_eq!(r.code, 0, "{} {args:?}: {}", tool.display(), r.stderr);
            let out = std::fs::read(dir.path(file)).unwrap();
            assert_eq!(elf_kind(&out), CUBIN, "{} -o {file}", tool.display());
        }
    }
}

#[test]
fn emit_picks_the_output_kind() {
    let scratch = Scratch::new("cli-emit");
    let input = empty_module().display().to_string();
    let compile = |args: &[&str]| {
        let mut all = vec!["--gpu-name=sm_90", input.as_str()];
        all.extend_from_slice(args);
        let r = run(&ours(), &all, &scratch.0);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    };
    compile(&["--emit=cubin", "-o", "k.ptx"]);
    let cubin = std::fs::read(scratch.path("k.ptx")).unwrap();
    assert_eq!(elf_kind(&cubin), (2, 190));

    compile(&["--emit=ptx", "-o", "k.ptx"]);
    let ptx = std::fs::read_to_string(scratch.path("k.ptx")).unwrap();
    assert!(ptx.contains(".target sm_90a"), "{ptx}");

    compile(&["--emit=sass", "-o", "k.sass"]);
    let sass = std::fs::read_to_string(scratch.path("k.sass")).unwrap();
    assert!(sass.contains(".target\tsm_90a"), "{sass}");

    compile(&["--emit=ptx", "-o", "k.bin"]);
    assert_eq!(std::fs::read_to_string(scratch.path("k.bin")).unwrap(), ptx);

    // A host relocatable object embedding the cubin, for the default name too.
    compile(&["--emit=obj"]);
    let obj = std::fs::read(scratch.path("elf.o")).unwrap();
    assert_eq!(elf_kind(&obj), (1, 62), "ET_REL, EM_X86_64");
    assert!(
        obj.windows(cubin.len()).any(|w| w == cubin.as_slice()),
        "the object embeds the cubin"
    );

    compile(&["--emit=obj", "--host-os=windows", "-o", "k.obj"]);
    let coff = std::fs::read(scratch.path("k.obj")).unwrap();
    assert_eq!(
        u16::from_le_bytes([coff[0], coff[1]]),
        0x8664,
        "COFF x86-64 machine"
    );
    compile(&["--emit=obj", "--host-arch=aarch64", "-o", "k.o"]);
    let arm = std::fs::read(scratch.path("k.o")).unwrap();
    assert_eq!(elf_kind(&arm).1, 183, "EM_AARCH64");

    // Remarks requested in YAML: the file exists (empty: none are produced).
    compile(&[
        "-o",
        "r.cubin",
        "--remark-format=yaml",
        "--remarks=all",
        "--remarks-output-file=r.yaml",
    ]);
    assert!(scratch.path("r.yaml").is_file());
    // No temporary files are left next to the outputs.
    let leftovers: Vec<_> = std::fs::read_dir(&scratch.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') || n.contains("tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn ptxas_failure_is_status_5_and_leaves_no_file() {
    let scratch = Scratch::new("cli-ptxas-fails");
    let fake = common::repo().join("capi-tests/fake-ptxas-fails.sh");
    let out = Command::new(ours())
        .args([
            "--gpu-name=sm_90",
            &empty_module().display().to_string(),
            "-o",
            "k.cubin",
        ])
        .current_dir(&scratch.0)
        .env("CUDA_ROOT", scratch.path("nowhere"))
        .env("PATH", "")
        .output()
        .unwrap();
    // Without any toolkit the error lists the places looked.
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ptxas"), "{stderr}");
    assert!(!scratch.path("k.cubin").exists());
    // A ptxas that fails: its text is forwarded verbatim.
    let bin = scratch.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(&fake, bin.join("ptxas")).unwrap();
    let out = Command::new(ours())
        .args([
            "--gpu-name=sm_90",
            &empty_module().display().to_string(),
            "-o",
            "k.cubin",
        ])
        .current_dir(&scratch.0)
        .env("CUDA_ROOT", &scratch.0)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("fake ptxas failure: line 1; error   : injected by the C API tests"),
        "{stderr}"
    );
    assert!(
        stderr
            .trim_end()
            .ends_with("error: failed to compile Tile IR program"),
        "{stderr}"
    );
    assert!(!scratch.path("k.cubin").exists());
}
