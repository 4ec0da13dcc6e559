//! The sm_90 matmul kernels run on warpgroup tensor cores: our PTX issues
//! `wgmma.mma_async`, and NVIDIA's ptxas turns it into HGMMA (QGMMA for
//! fp8, IGMMA for int8) without spilling. The f16/bf16 K loops are
//! pipelined: `cp.async` copies into swizzled stages, handed over through
//! mbarriers.
mod common;
use std::process::Command;

use tileiras::options::{Gpu, Options};

const KERNELS: [&str; 8] = [
    "matmul_f16_divisible",
    "matmul_f16_strided",
    "matmul_f16_f16acc",
    "matmul_f16_tma",
    "matmul_bf16_tma",
    "matmul_tf32",
    "matmul_fp8_e4m3",
    "matmul_i8_i32",
];

fn our_ptx(name: &str) -> String {
    our_ptx_with(name, true)
}

/// [`our_ptx`], with TMA on or off.
fn our_ptx_with(name: &str, tma: bool) -> String {
    let dir = common::corpus().join(name);
    let path = ["v13_3", "v13_4"]
        .iter()
        .map(|v| dir.join(format!("{name}.{v}.tileir")))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{name}: no bytecode in {}", dir.display()));
    let module = tileiras::bytecode::read(&std::fs::read(path).expect("read bytecode"))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let options = Options {
        gpu: Gpu::Sm90,
        tma,
        ..Default::default()
    };
    tileiras::lower::lower(&module, &options).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Assembles `text` for sm_90a: ptxas' `-v` report and the SASS.
fn assemble(name: &str, text: &str) -> (String, String) {
    let root = common::cuda_root();
    let tmp = tempfile::tempdir().expect("tempdir");
    let ptx = tmp.path().join(format!("{name}.ptx"));
    let cubin = tmp.path().join(format!("{name}.cubin"));
    std::fs::write(&ptx, text).expect("write ptx");
    let out = Command::new(root.join("bin/ptxas"))
        .args([
            "-arch",
            "sm_90a",
            "--opt-level",
            "3",
            "--enable-extended-smem=true",
            "-v",
        ])
        .arg(&ptx)
        .arg("-o")
        .arg(&cubin)
        .output()
        .expect("run ptxas");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{name}: {log}");
    let sass = Command::new(root.join("bin/nvdisasm"))
        .arg("-c")
        .arg(&cubin)
        .output()
        .expect("run nvdisasm");
    (log, String::from_utf8_lossy(&sass.stdout).into_owned())
}

#[test]
fn f16_k_loops_are_pipelined_through_mbarriers() {
    for name in [
        "matmul_f16_divisible",
        "matmul_f16_f16acc",
        "matmul_f16_tma",
        "matmul_bf16_tma",
        "matmul_f16_cluster2",
    ] {
        // By TMA (the default), or by every thread's cp.async with TMA off.
        for (tma, wants, copy_sass) in [
            (
                true,
                [
                    "cp.async.bulk.tensor.2d",
                    "mbarrier.arrive.expect_tx.shared.b64",
                    "fence.mbarrier_init.release.cluster",
                ],
                "UTMALDG",
            ),
            (
                false,
                [
                    "cp.async.cg.shared.global",
                    "cp.async.mbarrier.arrive.noinc.shared.b64",
                    "fence.proxy.async.shared::cta",
                ],
                "LDGSTS",
            ),
        ] {
            let text = our_ptx_with(name, tma);
            for want in wants.into_iter().chain([
                "mbarrier.try_wait.parity.shared.b64",
                "wgmma.mma_async.sync.aligned.m64n",
            ]) {
                assert!(text.contains(want), "{name} (TMA {tma}): no {want}");
            }
            // The operands arrive by copies only, not through registers.
            assert!(!text.contains("st.shared.v4"), "{name}: register stores");
            let (log, sass) = assemble(name, &text);
            assert!(
                log.contains("0 bytes spill stores, 0 bytes spill loads"),
                "{name} spills: {log}"
            );
            assert!(
                sass.contains(copy_sass),
                "{name}: no {copy_sass} in the SASS"
            );
            assert!(sass.contains("HGMMA."), "{name}: no HGMMA in the SASS");
        }
    }
}

#[test]
fn matmuls_use_wgmma_and_gmma_without_spills() {
    for name in KERNELS {
        let text = our_ptx(name);
        assert!(
            text.contains("wgmma.mma_async.sync.aligned.m64n"),
            "{name}: no wgmma"
        );
        let (log, sass) = assemble(name, &text);
        assert!(
            log.contains("0 bytes spill stores, 0 bytes spill loads"),
            "{name} spills: {log}"
        );
        let gmma = sass
            .lines()
            .filter(|l| ["HGMMA.", "QGMMA.", "IGMMA."].iter().any(|g| l.contains(g)))
            .count();
        assert!(gmma > 0, "{name}: no GMMA in the SASS");
    }
}

/// Our sm_90 PTX of the differential `bench` kernel `name`.
fn bench_ptx(name: &str) -> String {
    let path = common::repo().join(format!("tests/data/differential/bench/{name}.tileir"));
    let module = tileiras::bytecode::read(&std::fs::read(&path).expect("read bytecode"))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let options = Options {
        gpu: Gpu::Sm90,
        ..Default::default()
    };
    tileiras::lower::lower(&module, &options).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A pipelined K loop keeps one multiply in flight (`wait_group 1` in the
/// loop, `wait_group 0` after it) where the accumulator takes at most 64
/// registers a thread (128x128 over two warpgroups); larger ones (128x256,
/// 64 + 64 more) wait for each multiply.
#[test]
fn pipelined_loops_keep_one_multiply_in_flight_where_it_pays() {
    let waits = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains("wgmma.wait_group"))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    };
    let small = waits(&bench_ptx("matmul_f16_128x128x64"));
    assert_eq!(
        small,
        [
            "wgmma.wait_group.sync.aligned 1;",
            "wgmma.wait_group.sync.aligned 0;"
        ],
        "128x128"
    );
    let large = waits(&bench_ptx("matmul_f16_128x256x64"));
    assert!(
        !large.is_empty() && large.iter().all(|w| w.ends_with(" 0;")),
        "128x256: {large:?}"
    );
}
