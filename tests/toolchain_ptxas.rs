//! The ptxas adapter: real ptxas on corpus PTX, the file fallback for large
//! PTX, concurrency, every failure through fake tools, and the argv shape.
mod common;

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use object::read::elf::FileHeader;
use tileiras::env::Gates;
use tileiras::toolchain::process::Termination;
use tileiras::toolchain::ptxas::{self, HostCode, PtxasJob, MAX_ARG_STRLEN};
use tileiras::toolchain::{ToolError, Toolkit};
use tileiras::{Gpu, Options, Sanitize, Status};

const KERNELS: [&str; 4] = [
    "arith_f32",
    "matmul_f16_tma",
    "layernorm_rows_f32",
    "atomic_hist_i32",
];

/// Checks the ELF header of a cubin: magic, 64-bit, EM_CUDA.
fn check_cubin(cubin: &[u8]) {
    assert_eq!(&cubin[..4], b"\x7fELF");
    let hdr = object::elf::FileHeader64::<object::LittleEndian>::parse(cubin).unwrap();
    assert_eq!(hdr.e_machine(object::LittleEndian), object::elf::EM_CUDA);
    assert_eq!(object::elf::EM_CUDA, object::elf::Machine(190));
}

fn job(kernel: &str, gpu: Gpu) -> PtxasJob {
    let sm = if gpu == Gpu::Sm90 { "sm_90" } else { "sm_100" };
    let options = Options {
        gpu,
        ..Options::default()
    };
    PtxasJob::new(corpus_ptx(kernel, sm), &options, &Gates::default())
}

#[test]
fn corpus_ptx_assembles_for_sm90a_and_sm100a() {
    let tk = toolkit();
    for kernel in KERNELS {
        for gpu in [Gpu::Sm90, Gpu::Sm100] {
            let j = job(kernel, gpu);
            assert!(j.fits_inline());
            let out = ptxas::assemble(&tk, &j).unwrap_or_else(|e| panic!("{kernel} {gpu}: {e}"));
            check_cubin(&out.cubin);
        }
    }
}

#[test]
fn with_the_reference_host_object_the_cubin_matches_nvidia_tileiras() {
    let tk = toolkit();
    for kernel in KERNELS {
        let nvidia = nvidia_reference::build(kernel, "sm_90").unwrap();
        let mut j = job(kernel, Gpu::Sm90);
        j.host_code = Some(HostCode::File(nvidia.nv_host.clone()));
        let out = ptxas::assemble(&tk, &j).unwrap();
        check_cubin(&out.cubin);
        // Byte for byte the cubin NVIDIA's tileiras wrote...
        assert_eq!(out.cubin, std::fs::read(&nvidia.cubin).unwrap(), "{kernel}");
        // ...and what ptxas gives with NVIDIA tileiras' own argv.
        let tmp = tempfile::tempdir().unwrap();
        let reference = tmp.path().join("ref.cubin");
        let st = std::process::Command::new(&tk.ptxas)
            .arg("-arch")
            .arg("sm_90a")
            .arg(&nvidia.ptx)
            .arg("-o")
            .arg(&reference)
            .args(["--opt-level", "3", "--enable-extended-smem=true"])
            .arg(format!("--nv-host={}", nvidia.nv_host.display()))
            .arg("-uumn")
            .status()
            .unwrap();
        assert!(st.success());
        assert_eq!(out.cubin, std::fs::read(&reference).unwrap(), "{kernel}");
        // The same object passed as bytes (a temporary file) gives the same cubin.
        let tmp = tempfile::tempdir().unwrap();
        let mut j2 = j.clone();
        j2.host_code = Some(HostCode::Bytes(std::fs::read(&nvidia.nv_host).unwrap()));
        j2.temp_dir = Some(tmp.path().to_owned());
        assert_eq!(ptxas::assemble(&tk, &j2).unwrap().cubin, out.cubin);
        assert!(entries(tmp.path()).is_empty());
    }
}

/// A valid PTX module of `n` small entry functions.
fn big_ptx(n: usize) -> String {
    let mut s = String::from(".version 8.0\n.target sm_90a\n.address_size 64\n\n");
    for i in 0..n {
        s.push_str(&format!(
            ".visible .entry k{i}(.param .u64 p)\n{{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\
             \tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n\
             \tmov.u32 %r1, {i};\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}}\n\n"
        ));
    }
    s
}

#[test]
fn ptx_over_128_kib_goes_through_a_temporary_file() {
    let ptx = big_ptx(900);
    assert!(ptx.len() > MAX_ARG_STRLEN, "{}", ptx.len());
    let tmp = tempfile::tempdir().unwrap();
    let mut j = PtxasJob::with_arch(ptx, "sm_90a");
    j.temp_dir = Some(tmp.path().to_owned());
    assert!(!j.fits_inline());
    let out = ptxas::assemble(&toolkit(), &j).unwrap();
    check_cubin(&out.cubin);
    let file = object::File::parse(&*out.cubin).unwrap();
    use object::Object;
    let names: Vec<String> = file
        .symbols()
        .filter_map(|s| object::ObjectSymbol::name(&s).ok().map(str::to_owned))
        .collect();
    assert!(names.iter().any(|n| n == "k0"));
    assert!(names.iter().any(|n| n == "k899"));
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
}

#[test]
fn eight_threads_assemble_at_once() {
    let tk = toolkit();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let tk = &tk;
                s.spawn(move || {
                    let gpu = if i % 2 == 0 { Gpu::Sm90 } else { Gpu::Sm100 };
                    let j = job(KERNELS[i % KERNELS.len()], gpu);
                    let out = ptxas::assemble(tk, &j).unwrap();
                    check_cubin(&out.cubin);
                    out.cubin
                })
            })
            .collect();
        let cubins: Vec<Vec<u8>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        // Same input, same output, whatever the interleaving.
        assert_eq!(
            cubins[0],
            ptxas::assemble(&tk, &job(KERNELS[0], Gpu::Sm90))
                .unwrap()
                .cubin
        );
    });
}

#[test]
fn rejected_ptx_gives_ptxas_text_verbatim_and_status_5() {
    let bad = ".version 8.0\n.target sm_90a\n.address_size 64\n\n\
               .visible .entry k() .maxntid 128, 1, 1 .reqntid 128, 1, 1\n{\n\tret;\n}\n";
    let e = ptxas::assemble(&toolkit(), &PtxasJob::with_arch(bad, "sm_90a")).unwrap_err();
    assert_eq!(e.exit_status(), Some(255));
    let out = e.tool_output().unwrap();
    assert!(
        out.contains(
            "error   : Conflicting directives: .maxntid and .reqntid cannot both be specified"
        ),
        "{out}"
    );
    assert!(
        out.ends_with("ptxas fatal   : Ptx assembly aborted due to errors\n"),
        "{out}"
    );
    assert_eq!(
        e.to_string(),
        format!("ptxas failed: exit status 255\n{}", out.trim_end())
    );
    assert_eq!(tileiras::Error::from(e).status(), Status::CompileFailed);
}

/// A job on a fake ptxas with big PTX (so a temporary file exists) and a
/// fresh temp folder; returns the error and checks the folder is empty.
fn fail_with(script: &str, timeout: Option<Duration>) -> (ToolError, tempfile::TempDir) {
    let (dir, tool) = fake_tool(script, "ptxas");
    let tk = Toolkit::from_paths(&tool, "/nonexistent/nvdisasm");
    let tmp = tempfile::tempdir().unwrap();
    let mut j = PtxasJob::with_arch(big_ptx(900), "sm_90a");
    j.temp_dir = Some(tmp.path().to_owned());
    j.host_code = Some(HostCode::Bytes(b"host object".to_vec()));
    j.timeout = timeout;
    let e = ptxas::assemble(&tk, &j).unwrap_err();
    assert!(
        entries(tmp.path()).is_empty(),
        "{script}: {:?}",
        entries(tmp.path())
    );
    assert_eq!(
        tileiras::Error::from(ToolError::InvalidCommand(String::new())).status(),
        Status::CompileFailed
    );
    (e, dir)
}

fn status(e: ToolError) -> Status {
    tileiras::Error::from(e).status()
}

#[test]
fn fake_ptxas_exit_127() {
    let (e, dir) = fail_with("exit127.sh", None);
    assert_eq!(e.exit_status(), Some(127));
    assert_eq!(
        e.to_string(),
        format!(
            "ptxas ({}) failed: exit status 127: program not found\n\
             fake-tool: something it needs was not found",
            dir.path().join("ptxas").display()
        )
    );
    assert_eq!(status(e), Status::CompileFailed);
}

#[test]
fn fake_ptxas_exit_126() {
    let (e, _dir) = fail_with("exit126.sh", None);
    assert_eq!(e.exit_status(), Some(126));
    assert_eq!(
        e.to_string(),
        "ptxas failed: exit status 126: Program could not be executed\n\
         fake-tool: something it needs could not run"
    );
    assert_eq!(status(e), Status::CompileFailed);
}

#[test]
fn fake_ptxas_exit_255_with_stderr() {
    let (e, _dir) = fail_with("fail.sh", None);
    assert_eq!(e.exit_status(), Some(255));
    assert_eq!(
        e.tool_output().unwrap(),
        "ptxas application ptx input, line 6; error   : Conflicting directives: .maxntid and .reqntid cannot both be specified\n\
         ptxas fatal   : Ptx assembly aborted due to errors\n"
    );
    assert_eq!(status(e), Status::CompileFailed);
}

#[test]
fn fake_ptxas_crashes() {
    let (e, _dir) = fail_with("segv.sh", None);
    let ToolError::Failed { termination, .. } = &e else {
        panic!("{e:?}")
    };
    assert!(matches!(
        termination,
        Termination::Signaled {
            signal: libc::SIGSEGV,
            ..
        }
    ));
    assert!(
        e.to_string() == "ptxas failed: Segmentation fault\nabout to crash"
            || e.to_string() == "ptxas failed: Segmentation fault (core dumped)\nabout to crash",
        "{e}"
    );
    assert_eq!(status(e), Status::CompileFailed);
}

#[test]
fn fake_ptxas_hangs_past_the_timeout() {
    let start = Instant::now();
    let (e, dir) = fail_with("hang.sh", Some(Duration::from_millis(700)));
    assert!(start.elapsed() < Duration::from_secs(10));
    assert!(e.timed_out());
    assert_eq!(e.to_string(), "ptxas failed: Child timed out");
    let pid = read_pid(&dir.path().join("hang.pid"));
    assert!(!process_exists(pid), "ptxas stand-in {pid} left behind");
    assert_eq!(status(e), Status::CompileFailed);
}

#[test]
fn fake_ptxas_enormous_stderr() {
    let (e, _dir) = fail_with("bigerr.sh", Some(Duration::from_secs(60)));
    assert_eq!(e.exit_status(), Some(3));
    let out = e.tool_output().unwrap();
    // stderr verbatim, then the (text) stdout.
    assert_eq!(out.len(), 6_000_004 + 3_000_013);
    assert!(out.starts_with("eeee"));
    assert!(out.contains("eend\nstart\nmiddle\nooo"));
    assert_eq!(status(e), Status::CompileFailed);
}

#[test]
fn missing_ptxas_is_a_spawn_error() {
    let tk = Toolkit::from_paths("/nonexistent/bin/ptxas", "/nonexistent/bin/nvdisasm");
    let e = ptxas::assemble(&tk, &PtxasJob::with_arch("", "sm_90a")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "ptxas: /nonexistent/bin/ptxas: program not found (PATH searched: /nonexistent/bin/ptxas)"
    );
    assert_eq!(status(e), Status::CompileFailed);
}

/// Runs the argv-printing fake ptxas and returns the arguments it got.
fn argv_of(job: &PtxasJob) -> Vec<String> {
    let (_dir, tool) = fake_tool("argv.sh", "ptxas");
    let tk = Toolkit::from_paths(&tool, "/nonexistent/nvdisasm");
    let out = ptxas::assemble(&tk, job).unwrap();
    assert_eq!(out.cubin, b"\x7fELF-fake-cubin");
    out.log.lines().map(str::to_owned).collect()
}

fn gates(vars: &[(&str, &str)]) -> Gates {
    let map: HashMap<String, OsString> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), OsString::from(v)))
        .collect();
    Gates::from_lookup(|k| map.get(k).cloned()).unwrap()
}

#[test]
fn knobs_file_needs_both_variables() {
    let ptx = "PTX";
    let options = Options::default();
    for (vars, expect) in [
        (vec![], false),
        (vec![("MLIR_ENABLE_EVO", "")], false),
        (vec![("PTX_KNOBS_PATH", "/k/knobs.txt")], false),
        (
            vec![("MLIR_ENABLE_EVO", "0"), ("PTX_KNOBS_PATH", "/k/knobs.txt")],
            true,
        ),
    ] {
        let g = gates(&vars);
        // As NVIDIA's tileiras 13.5: never forwarded.
        let argv = argv_of(&PtxasJob::new(ptx, &options, &g));
        assert!(!argv.iter().any(|a| a.starts_with("--knobs")), "{argv:?}");
        // Opted in: forwarded exactly when both are set.
        let mut j = PtxasJob::new(ptx, &options, &g);
        j.forward_knobs(&g);
        let argv = argv_of(&j);
        let knobs: Vec<&String> = argv.iter().filter(|a| a.starts_with("--knobs")).collect();
        if expect {
            assert_eq!(knobs, ["--knobs-file=/k/knobs.txt"], "{vars:?}");
        } else {
            assert!(knobs.is_empty(), "{vars:?}: {argv:?}");
        }
    }
}

#[test]
fn argv_shape() {
    let options = Options {
        gpu: Gpu::Sm100,
        opt_level: 0,
        device_debug: true,
        line_info: true,
        sanitize: Sanitize::Memcheck,
        ..Options::default()
    };
    let mut j = PtxasJob::new("PTX TEXT", &options, &Gates::default());
    // As NVIDIA's tileiras 13.5: no -g / -lineinfo for ptxas.
    assert!(!j.device_debug && !j.line_info);
    j.device_debug = true;
    j.line_info = true;
    j.module_options = vec!["-maxrregcount".into(), "64".into()];
    j.host_code = Some(HostCode::File(Path::new("/h/a \"b\".o").to_owned()));
    assert_eq!(
        argv_of(&j),
        [
            "-maxrregcount",
            "64",
            "-arch",
            "sm_100a",
            "--opt-level",
            "0",
            "--device-debug",
            "--input-as-string",
            "PTX TEXT",
            "-o",
            "/dev/stdout",
            "--enable-extended-smem=true",
            "-uumn",
            "-sanitize=memcheck",
            "-g-tmem-access-check",
            "--nv-host=/h/a \"b\".o",
        ]
    );
    assert_eq!(
        ptxas::quote_nv_host("/h/a \"b\\c\".o"),
        "\"/h/a \\\"b\\\\c\\\".o\""
    );
    let plain = PtxasJob::new("P", &Options::default(), &Gates::default());
    assert_eq!(
        argv_of(&plain),
        [
            "-arch",
            "sm_90a",
            "--opt-level",
            "3",
            "--input-as-string",
            "P",
            "-o",
            "/dev/stdout",
            "--enable-extended-smem=true",
            "-uumn"
        ]
    );
    // Large PTX: a positional temporary .ptx file instead.
    let mut big = PtxasJob::with_arch("x".repeat(MAX_ARG_STRLEN), "sm_90a");
    big.reference_flags = false;
    let argv = argv_of(&big);
    assert_eq!(argv.len(), 7, "{argv:?}");
    assert!(argv[4].ends_with(".ptx"), "{argv:?}");
    assert!(!Path::new(&argv[4]).exists());
}

#[test]
fn real_ptxas_takes_every_flag_we_pass() {
    let tk = toolkit();
    for (gpu, sm) in [(Gpu::Sm90, "sm_90"), (Gpu::Sm100, "sm_100")] {
        for (debug, line) in [(true, true), (false, true)] {
            let options = Options {
                gpu,
                opt_level: if debug { 0 } else { 3 },
                device_debug: debug,
                line_info: line,
                sanitize: Sanitize::Memcheck,
                ..Options::default()
            };
            let gates = gates(&[("MLIR_ENABLE_EVO", "1")]);
            let mut j = PtxasJob::new(corpus_ptx("arith_f32", sm), &options, &gates);
            j.device_debug = debug;
            j.line_info = line;
            let out = ptxas::assemble(&tk, &j).unwrap_or_else(|e| panic!("{sm} {debug}: {e}"));
            check_cubin(&out.cubin);
            assert!(!out.log.contains("Conflicting options"), "{}", out.log);
        }
    }
    // ptxas 13.5 has no --knobs-file (why it is not forwarded by default);
    // its refusal comes back verbatim.
    let mut j = PtxasJob::with_arch(corpus_ptx("arith_f32", "sm_90"), "sm_90a");
    j.knobs_file = Some("knobs.txt".into());
    let e = ptxas::assemble(&tk, &j).unwrap_err();
    assert_eq!(e.exit_status(), Some(255));
    assert_eq!(
        e.tool_output().unwrap(),
        "ptxas fatal   : Unknown option '-knobs-file'\n"
    );
}

#[test]
fn output_without_elf_magic_is_rejected() {
    let (_d, tool) = fake_tool("order.sh", "ptxas");
    let tk = Toolkit::from_paths(&tool, "/nonexistent/nvdisasm");
    let e = ptxas::assemble(&tk, &PtxasJob::with_arch("P", "sm_90a")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "ptxas: output is not a cubin (no ELF magic; 4 bytes)\n2\n4\n1\n3\n"
    );
    assert_eq!(status(e), Status::CompileFailed);
}
