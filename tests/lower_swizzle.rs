//! `TILEIR_ALWAYS_SWIZZLE` on the `mma.sync` path (sm_80 to sm_89,
//! sm_120, with TMA off there): the operand buffers lose their row padding
//! and are XOR-swizzled instead. The corpus matmuls compiled that way run in the
//! PTX emulator against the CPU references of
//! `ptx-emu/tests/support/kernels.rs` (ragged sizes, batched, strided
//! operands, the pipelined K loops), take less shared memory per stage,
//! and assemble.
mod common;
use common::shared_bytes;

#[path = "../ptx-emu/tests/support/kernels.rs"]
#[allow(dead_code, unused_macros, unused_imports)]
mod kernels;

use std::cell::Cell;
use std::process::Command;

use tileiras::options::{Gpu, Options};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus");

/// This compiler rounds tf32 matmul inputs to nearest, as the docstring says.
const TF32_ROUNDS: bool = true;

thread_local! {
    /// The target the emulated kernels of this thread are compiled for.
    static GPU: Cell<Gpu> = const { Cell::new(Gpu::Sm80) };
}

/// The launch's parameters: the check's own, as these kernels are
/// compiled without TMA and take no tensor maps.
fn launch_params(_: &str, params: Vec<ptx_emu::Param>) -> Vec<ptx_emu::Param> {
    params
}

/// Our PTX for corpus kernel `name` on `gpu`, swizzled or padded.
fn lower(name: &str, gpu: Gpu, swizzle: bool) -> String {
    let dir = common::corpus().join(name);
    let path = ["v13_3", "v13_4"]
        .iter()
        .map(|v| dir.join(format!("{name}.{v}.tileir")))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{name}: no bytecode in {}", dir.display()));
    let bytes = std::fs::read(path).expect("read bytecode");
    let module = tileiras::bytecode::read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    // The swizzle is the cp.async ring's: without TMA, which fills its
    // rings in TMA's own layouts.
    let options = Options {
        gpu,
        always_swizzle: swizzle,
        tma: false,
        ..Default::default()
    };
    tileiras::lower::lower(&module, &options).unwrap_or_else(|e| panic!("{name} {gpu}: {e}"))
}

/// The PTX the emulator harness runs: swizzled, for this thread's target.
fn ptx_source(name: &str) -> String {
    let ptx = lower(name, GPU.with(Cell::get), true);
    assert!(ptx.contains("mma.sync.aligned."), "{name}: no mma.sync");
    ptx
}

/// Runs the harness check `check` on code compiled for each of `gpus`.
fn on(gpus: &[Gpu], check: fn()) {
    for &gpu in gpus {
        GPU.with(|g| g.set(gpu));
        check();
    }
}

/// The pipeline stages of a K loop: one commit group each.
fn stages(ptx: &str) -> i64 {
    ptx.matches("cp.async.commit_group").count() as i64
}

/// Assembles `ptx` for `gpu` with ptxas `-v`; returns its report.
fn assemble(name: &str, gpu: Gpu, ptx: &str) -> String {
    let root = common::cuda_root();
    let tmp = tempfile::tempdir().expect("tempdir");
    let src = tmp.path().join(format!("{name}.ptx"));
    std::fs::write(&src, ptx).expect("write ptx");
    let out = Command::new(root.join("bin/ptxas"))
        .arg("-arch")
        .arg(gpu.ptx_target())
        .arg(&src)
        .arg("-o")
        .arg(tmp.path().join(format!("{name}.cubin")))
        .args(["--opt-level", "3", "--enable-extended-smem=true", "-v"])
        .output()
        .expect("run ptxas");
    let report = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{name} {gpu}: {report}");
    report
}

#[test]
fn f16_matmuls_match_the_reference() {
    on(&[Gpu::Sm80, Gpu::Sm120], || {
        kernels::matmul_f16_strided();
        kernels::matmul_f16_divisible();
        kernels::batched_matmul_f16();
    });
}

#[test]
fn f16_and_bf16_pipelined_matmuls_match_the_reference() {
    on(&[Gpu::Sm80], || {
        kernels::matmul_f16_tma();
        kernels::matmul_bf16_tma();
        kernels::matmul_f16_f16acc();
    });
}

/// K loops of one, two and many steps: the ring of (now three) stages
/// wraps, and the race detector checks the hand-offs.
#[test]
fn pipelined_matmuls_over_k_lengths_match_the_reference() {
    on(&[Gpu::Sm80], || {
        kernels::tma_matmuls_over_k(&[16, 104, 576])
    });
}

#[test]
fn tf32_matmul_matches_the_reference() {
    on(&[Gpu::Sm80, Gpu::Sm120], kernels::matmul_tf32);
}

#[test]
fn i8_matmul_matches_the_reference() {
    on(&[Gpu::Sm80, Gpu::Sm120], kernels::matmul_i8_i32);
}

#[test]
fn fp8_matmul_matches_the_reference() {
    on(&[Gpu::Sm89, Gpu::Sm120], kernels::matmul_fp8_e4m3);
}

#[test]
fn f64_matmul_matches_the_reference() {
    on(&[Gpu::Sm80, Gpu::Sm90], kernels::matmul_f64_operator);
}

/// sm_90 multiplies batched tiles on `mma.sync` too.
#[test]
fn batched_matmul_on_sm90_matches_the_reference() {
    on(&[Gpu::Sm90], kernels::batched_matmul_f16);
}

/// Swizzling changes the code and drops the padding: less shared memory,
/// or, where the K loop's stages shrink enough, one more stage in the
/// same budget. ptxas accepts every swizzled kernel without spilling.
#[test]
fn swizzled_buffers_are_smaller_and_assemble() {
    let cases = [
        ("matmul_f16_strided", Gpu::Sm80),
        ("matmul_f16_divisible", Gpu::Sm80),
        ("matmul_f16_f16acc", Gpu::Sm80),
        ("batched_matmul_f16", Gpu::Sm80),
        ("matmul_tf32", Gpu::Sm80),
        ("matmul_i8_i32", Gpu::Sm80),
        ("matmul_f64_operator", Gpu::Sm80),
        ("matmul_fp8_e4m3", Gpu::Sm89),
        ("matmul_f16_divisible", Gpu::Sm120),
        ("matmul_i8_i32", Gpu::Sm120),
    ];
    for (name, gpu) in cases {
        let padded = lower(name, gpu, false);
        let swizzled = lower(name, gpu, true);
        assert_ne!(padded, swizzled, "{name} {gpu}");
        // The swizzle's XORs are there.
        let xors = |p: &str| p.matches("xor.b32").count();
        assert!(xors(&swizzled) > xors(&padded), "{name} {gpu}");
        let (p, s) = (shared_bytes(&padded), shared_bytes(&swizzled));
        let (ps, ss) = (stages(&padded).max(1), stages(&swizzled).max(1));
        assert!(ss >= ps, "{name} {gpu}: {ps} -> {ss} stages");
        if ss == ps {
            assert!(s < p, "{name} {gpu}: {p} -> {s} bytes");
        } else {
            assert!(s / ss < p / ps, "{name} {gpu}: {p}/{ps} -> {s}/{ss}");
        }
        let report = assemble(name, gpu, &swizzled);
        assert!(
            report.contains(" 0 bytes spill stores, 0 bytes spill loads"),
            "{name} {gpu}: spills\n{report}"
        );
    }
}

/// The 128 x 128 x 64 f16 K loop: padded stages of 35840 bytes fit twice
/// in the 96 KiB budget, swizzled ones (A and B exactly 16 KiB each) three
/// times.
#[test]
fn unpadded_stages_fit_one_more_stage() {
    let padded = lower("matmul_f16_divisible", Gpu::Sm80, false);
    let swizzled = lower("matmul_f16_divisible", Gpu::Sm80, true);
    assert_eq!((stages(&padded), shared_bytes(&padded)), (2, 2 * 35840));
    assert_eq!((stages(&swizzled), shared_bytes(&swizzled)), (3, 3 * 32768));
}

/// `TILEIR_ALWAYS_SWIZZLE` reaches the lowering through the command line:
/// presence alone (the value `0` included) gives the swizzled PTX, its
/// absence the padded one.
#[test]
fn the_environment_variable_swizzles_cli_output() {
    let name = "matmul_f16_divisible";
    let input = common::corpus().join(format!("{name}/{name}.v13_4.tileir"));
    let tmp = tempfile::tempdir().expect("tempdir");
    let emit = |set: bool| {
        let out = tmp.path().join(format!("{set}.ptx"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tileiras"));
        cmd.args(["--emit", "ptx", "--gpu-name", "sm_80", "-o"])
            .arg(&out)
            .arg(&input)
            .env("CUDA_ROOT", common::cuda_root())
            .env_remove("TILEIR_ALWAYS_SWIZZLE");
        if set {
            cmd.env("TILEIR_ALWAYS_SWIZZLE", "0");
        }
        let run = cmd.output().expect("run tileiras");
        assert!(run.status.success(), "{run:?}");
        std::fs::read_to_string(out).expect("read ptx")
    };
    let (plain, swizzled) = (emit(false), emit(true));
    assert_eq!(plain, lower(name, Gpu::Sm80, false));
    assert_eq!(swizzled, lower(name, Gpu::Sm80, true));
    assert_ne!(plain, swizzled);
}
