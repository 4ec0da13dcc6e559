//! Entry optimization hints through the lowering: what they become in the
//! PTX header (assembled by NVIDIA's ptxas), and the diagnostics, at the
//! entry's source location, for hints the target cannot honour.
mod common;

use std::process::Command;

use tileiras::ir::{Attr, Module, OpId, Opcode};
use tileiras::lower::{lower_module, LowerError};
use tileiras::options::{Gpu, Options};
use tileiras::{KernelInfo, Severity};

/// vadd_f32_contig with its entry's hints replaced by `hints`.
fn vadd_with(hints: Vec<(&str, Vec<(&str, Attr)>)>) -> Module {
    let bytes =
        std::fs::read(common::corpus().join("vadd_f32_contig/vadd_f32_contig.v13_3.tileir"))
            .unwrap();
    let mut m = tileiras::bytecode::read(&bytes).unwrap();
    let entry: OpId = *m
        .top_level()
        .iter()
        .find(|&&id| m.ops[id].opcode == Opcode::Entry)
        .unwrap();
    let value = Attr::OptimizationHints(
        hints
            .into_iter()
            .map(|(k, items)| {
                (
                    k.to_string(),
                    Attr::Dictionary(items.into_iter().map(|(n, v)| (n.to_string(), v)).collect()),
                )
            })
            .collect(),
    );
    let op = &mut m.ops[entry];
    op.attrs.retain(|(n, _)| *n != "optimization_hints");
    op.attrs.push(("optimization_hints", value));
    m
}

fn options(gpu: Gpu) -> Options {
    Options {
        gpu,
        ..Options::default()
    }
}

fn ptxas_clean(text: &str, gpu: Gpu) {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = common::Scratch::new(&format!("launch-hints-{n}"));
    std::fs::write(dir.path("k.ptx"), text).unwrap();
    let out = Command::new(common::cuda_root().join("bin/ptxas"))
        .args(["-arch", gpu.ptx_target()])
        .arg(dir.path("k.ptx"))
        .arg("-o")
        .arg(dir.path("k.cubin"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "{gpu}: {stderr}");
}

#[test]
fn cluster_and_occupancy_hints_reach_the_header() {
    let m = vadd_with(vec![(
        "default",
        vec![
            ("num_cta_in_cga", Attr::Int(2)),
            ("occupancy", Attr::Int(2)),
        ],
    )]);
    // Below sm_90 there are no clusters: the hint drops out, occupancy stays.
    let (ptx, notes) = lower_module(&m, &options(Gpu::Sm80)).unwrap();
    // One remark: which thread bound, and why.
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0].severity, Severity::Remark);
    assert_eq!(
        notes[0].message,
        "entry 'vadd_f32_contig': .reqntid 128: the generated code depends on the exact thread count"
    );
    assert!(notes[0].location.is_some());
    let text = ptx.to_text();
    assert!(
        text.contains(".reqntid 128\n.minnctapersm 2\n.language 7\n"),
        "{text}"
    );
    ptxas_clean(&text, Gpu::Sm80);
    let k = &KernelInfo::from_module(&ptx)[0];
    assert_eq!(k.min_ctas_per_sm, Some(2));
    assert_eq!((k.cluster, k.blocks_are_clusters), ([1, 1, 1], false));
    // From sm_90 a tile block of two CTAs is a cluster: the directives ask
    // for it, and the cluster's first CTA does the tile block's work.
    for gpu in [Gpu::Sm90, Gpu::Sm100] {
        let (ptx, _) = lower_module(&m, &options(gpu)).unwrap();
        let text = ptx.to_text();
        assert!(
            text.contains(".blocksareclusters\n.reqnctapercluster 2, 1, 1\n"),
            "{gpu}: {text}"
        );
        assert!(text.contains("%cluster_ctarank"), "{gpu}: {text}");
        ptxas_clean(&text, gpu);
        let k = &KernelInfo::from_module(&ptx)[0];
        assert_eq!((k.cluster, k.blocks_are_clusters), ([2, 1, 1], true));
    }
}

#[test]
fn target_hints_win_over_default() {
    let m = vadd_with(vec![
        ("default", vec![("occupancy", Attr::Int(4))]),
        ("sm_90", vec![("occupancy", Attr::Int(8))]),
    ]);
    let text = lower_module(&m, &options(Gpu::Sm90)).unwrap().0.to_text();
    assert!(text.contains(".minnctapersm 8\n"), "{text}");
    ptxas_clean(&text, Gpu::Sm90);
    let text = lower_module(&m, &options(Gpu::Sm100)).unwrap().0.to_text();
    assert!(text.contains(".minnctapersm 4\n"), "{text}");
}

fn failure(m: &Module, gpu: Gpu) -> String {
    let e = lower_module(m, &options(gpu)).unwrap_err();
    assert!(matches!(e, LowerError::Failed { .. }), "{e:?}");
    let d = e.diagnostic().to_string();
    assert!(d.starts_with("loc(\"kernels.py\":"), "at the entry: {d}");
    d
}

#[test]
fn occupancy_beyond_the_target_is_diagnosed_before_ptxas() {
    // NVIDIA's hint verifier accepts occupancy 1..32; the SM holds fewer.
    let m = vadd_with(vec![("default", vec![("occupancy", Attr::Int(20))])]);
    let d = failure(&m, Gpu::Sm86);
    assert!(
        d.ends_with("error: entry 'vadd_f32_contig': invalid launch directives for sm_86: .minnctapersm 20 is out of range: sm_86 keeps 1 to 16 CTAs on one SM"),
        "{d}"
    );
    // 20 CTAs of 128 threads fit sm_90's CTA limit but not its 2048 threads.
    let d = failure(&m, Gpu::Sm90);
    assert!(d.contains(".minnctapersm 20 with 128 threads per block needs 2560 threads on one SM, more than the 2048 of sm_90"), "{d}");
    // 16 fits exactly.
    let m = vadd_with(vec![("default", vec![("occupancy", Attr::Int(16))])]);
    ptxas_clean(
        &lower_module(&m, &options(Gpu::Sm90)).unwrap().0.to_text(),
        Gpu::Sm90,
    );
}

#[test]
fn bad_cluster_size_is_diagnosed() {
    for n in [0, 3, 32] {
        let m = vadd_with(vec![("default", vec![("num_cta_in_cga", Attr::Int(n))])]);
        let d = failure(&m, Gpu::Sm90);
        assert!(
            d.contains(&format!(
                "num_cta_in_cga {n} must be a power of two no larger than 16"
            )),
            "{d}"
        );
    }
}

#[test]
fn non_integer_hint_is_a_warning() {
    let m = vadd_with(vec![("sm_90", vec![("occupancy", Attr::Bool(true))])]);
    let (ptx, notes) = lower_module(&m, &options(Gpu::Sm90)).unwrap();
    let notes: Vec<_> = notes
        .into_iter()
        .filter(|n| n.severity != Severity::Remark)
        .collect();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].severity, Severity::Warning);
    assert!(notes[0]
        .message
        .contains("integer value expected for sm_90.occupancy"));
    assert!(notes[0].location.is_some());
    assert!(ptx.to_text().contains(".minnctapersm 1\n"));
}

#[test]
fn worker_warp_hint_the_lowering_does_not_follow_is_remarked() {
    let m = vadd_with(vec![(
        "default",
        vec![("num_worker_warps_per_cta", Attr::Int(8))],
    )]);
    let (ptx, notes) = lower_module(&m, &options(Gpu::Sm90)).unwrap();
    assert!(notes.iter().any(|n| n.severity == Severity::Remark
        && n.message == "entry 'vadd_f32_contig': num_worker_warps_per_cta 8 not followed: the lowering uses 128 threads"));
    ptxas_clean(&ptx.to_text(), Gpu::Sm90);
    let m = vadd_with(vec![(
        "default",
        vec![("num_worker_warps_per_cta", Attr::Int(4))],
    )]);
    let (_, notes) = lower_module(&m, &options(Gpu::Sm90)).unwrap();
    assert!(!notes
        .iter()
        .any(|n| n.message.contains("num_worker_warps_per_cta")));
}

#[test]
fn parameter_overflow_is_diagnosed_at_the_entry() {
    let m = vadd_with(Vec::new());
    let entry: OpId = *m
        .top_level()
        .iter()
        .find(|&&id| m.ops[id].opcode == Opcode::Entry)
        .unwrap();
    let mut e = tileiras::ptx::Entry {
        name: "vadd_f32_contig".into(),
        params: (0..4096)
            .map(|i| tileiras::ptx::Param {
                name: format!("vadd_f32_contig_param_{i}"),
                ty: tileiras::ptx::ParamTy::GlobalPtr,
            })
            .collect(),
        reqntid: 128,
        launch: Box::default(),
        reg_counts: Vec::new(),
        shared_bytes: 0,
        acc_regs: 0,
        local_bytes: 0,
        strings: Vec::new(),
        body: Vec::new(),
        decl: None,
        tensor_maps: Vec::new(),
    };
    let err = tileiras::lower::plan::launch::plan(
        &m,
        entry,
        &options(Gpu::Sm90),
        &mut e,
        &mut Vec::new(),
    )
    .unwrap_err();
    let d = err.diagnostic().to_string();
    assert!(d.starts_with("loc(\"kernels.py\":"), "{d}");
    assert!(
        d.ends_with("error: entry 'vadd_f32_contig': Formal parameter space overflowed (32768 bytes required, max 32764 bytes allowed)"),
        "{d}"
    );
    // One pointer fewer fits.
    e.params.pop();
    tileiras::lower::plan::launch::plan(&m, entry, &options(Gpu::Sm90), &mut e, &mut Vec::new())
        .unwrap();
}
