//! Every launch-directive rule against NVIDIA's real ptxas: what we accept
//! assembles without a diagnostic, what we reject gets our diagnostic
//! before ptxas (and, where ptxas notices, ptxas errors or warns too).
mod common;

use std::process::Command;

use tileiras::lower::plan::launch;
use tileiras::options::{Gpu, Options};
use tileiras::ptx::directives::{LaunchDirectives, ThreadBound};
use tileiras::ptx::{self, params, Inst, Line, Opc, Param, ParamTy, Ty};

/// A module with one entry `k` taking `params`, with `d`, printed by our
/// PTX writer.
fn module(gpu: Gpu, d: &LaunchDirectives, params: Vec<Param>) -> String {
    let options = Options {
        gpu,
        ..Options::default()
    };
    let mut m = ptx::Module::new(&options);
    m.items.push(ptx::Item::Entry(ptx::Entry {
        name: "k".into(),
        params,
        reqntid: 128,
        launch: Box::new(d.clone().for_target(gpu)),
        reg_counts: Vec::new(),
        shared_bytes: 0,
        acc_regs: 0,
        local_bytes: 0,
        strings: Vec::new(),
        body: vec![Line::Inst(Box::new(Inst::new(
            Opc::Ret,
            &[],
            &[],
            vec![],
            vec![],
        )))],
        decl: None,
        tensor_maps: Vec::new(),
    }));
    m.to_text()
}

/// Runs ptxas on `text`: the cubin where it succeeded, and its stderr.
fn assemble(text: &str, gpu: Gpu) -> (Option<Vec<u8>>, String) {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = common::Scratch::new(&format!("launch-directives-{n}"));
    std::fs::write(dir.path("k.ptx"), text).unwrap();
    let out = Command::new(common::cuda_root().join("bin/ptxas"))
        .args(["-arch", gpu.ptx_target()])
        .arg(dir.path("k.ptx"))
        .arg("-o")
        .arg(dir.path("k.cubin"))
        .output()
        .expect("run ptxas");
    let cubin = out
        .status
        .success()
        .then(|| std::fs::read(dir.path("k.cubin")).unwrap());
    (cubin, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Runs ptxas on `text`: (success, stderr).
fn ptxas(text: &str, gpu: Gpu) -> (bool, String) {
    let (cubin, stderr) = assemble(text, gpu);
    (cubin.is_some(), stderr)
}

/// The kernel information of the cubin ptxas makes of `text`, which must
/// assemble.
fn assembled_kernel(text: &str, gpu: Gpu) -> tileiras::elf::cubin_info::CubinKernel {
    let (cubin, stderr) = assemble(text, gpu);
    let cubin = cubin.unwrap_or_else(|| panic!("{gpu}: ptxas failed: {stderr}"));
    tileiras::elf::cubin_info::kernels(&cubin)
        .unwrap()
        .remove(0)
}

/// `d` passes our verifier and ptxas assembles it with no diagnostic.
fn accepted(gpu: Gpu, d: LaunchDirectives) {
    let errs = d.verify(gpu);
    assert!(errs.is_empty(), "{gpu} {d:?}: {errs:?}");
    let text = module(gpu, &d, Vec::new());
    let (ok, stderr) = ptxas(&text, gpu);
    assert!(ok && stderr.is_empty(), "{gpu} {d:?}: {stderr}\n{text}");
}

/// Our verifier rejects `d` with a message containing `ours`; when
/// `theirs` is given, ptxas on the same directives prints it (an error or a
/// warning that it ignores them).
fn rejected(gpu: Gpu, d: LaunchDirectives, ours: &str, theirs: Option<&str>) {
    let errs = d.verify(gpu);
    assert!(
        errs.iter().any(|e| e.0.contains(ours)),
        "{gpu} {d:?}: expected '{ours}' in {errs:?}"
    );
    if let Some(theirs) = theirs {
        // Print without our verifier: what ptxas would have been given.
        let text = module(gpu, &d, Vec::new());
        let (_, stderr) = ptxas(&text, gpu);
        assert!(stderr.contains(theirs), "{gpu} {d:?}: ptxas said {stderr}");
    }
}

fn req(dims: &[i64]) -> LaunchDirectives {
    LaunchDirectives {
        reqntid: Some(dims.to_vec()),
        ..Default::default()
    }
}

#[test]
fn full_set_prints_in_order_and_assembles() {
    let d = LaunchDirectives {
        reqntid: Some(vec![128, 2]),
        minnctapersm: Some(2),
        maxnreg: Some(64),
        blocksareclusters: true,
        explicitcluster: true,
        reqnctapercluster: Some(vec![2, 1, 1]),
        ..Default::default()
    };
    let text = module(Gpu::Sm90, &d, Vec::new());
    assert!(
        text.contains(
            ".reqntid 128, 2\n.minnctapersm 2\n.maxnreg 64\n.blocksareclusters\n.explicitcluster\n.reqnctapercluster 2, 1, 1\n.language 7\n{"
        ),
        "{text}"
    );
    for gpu in [Gpu::Sm90, Gpu::Sm100, Gpu::Sm120] {
        accepted(gpu, d.clone());
    }
    let m = LaunchDirectives {
        maxntid: Some(vec![256]),
        maxclusterrank: Some(8),
        explicitcluster: true,
        ..Default::default()
    };
    assert!(module(Gpu::Sm90, &m, Vec::new())
        .contains(".maxntid 256\n.explicitcluster\n.maxclusterrank 8\n"));
    accepted(Gpu::Sm90, m);
}

#[test]
fn cluster_group_is_suppressed_before_sm_90() {
    let d = LaunchDirectives {
        reqntid: Some(vec![256]),
        minnctapersm: Some(1),
        blocksareclusters: true,
        explicitcluster: true,
        reqnctapercluster: Some(vec![2, 1, 1]),
        ..Default::default()
    };
    for gpu in [Gpu::Sm80, Gpu::Sm86, Gpu::Sm89] {
        let text = module(gpu, &d, Vec::new());
        assert!(!text.contains("cluster"), "{text}");
        accepted(gpu, d.clone());
    }
    // What ptxas says when the group is not suppressed.
    let mut text = module(Gpu::Sm80, &d, Vec::new());
    text = text.replace(".language 7", ".reqnctapercluster 2, 1, 1\n.language 7");
    let (ok, stderr) = ptxas(&text, Gpu::Sm80);
    assert!(!ok && stderr.contains("requires .target sm_90"), "{stderr}");
}

#[test]
fn thread_dimensions_are_one_to_three_positive_i32() {
    for dims in [&[128][..], &[64, 2], &[8, 8, 16], &[1024], &[1, 1, 64]] {
        accepted(Gpu::Sm90, req(dims));
        accepted(
            Gpu::Sm90,
            LaunchDirectives {
                maxntid: Some(dims.to_vec()),
                ..Default::default()
            },
        );
    }
    rejected(
        Gpu::Sm90,
        req(&[]),
        ".reqntid takes 1 to 3 dimensions, got 0",
        None,
    );
    rejected(
        Gpu::Sm90,
        req(&[2, 2, 2, 2]),
        ".reqntid takes 1 to 3 dimensions, got 4",
        Some("syntax error"),
    );
    rejected(
        Gpu::Sm90,
        req(&[0]),
        ".reqntid dimensions must be positive i32 values, got 0",
        Some("Positive non-zero value expected for reqntid"),
    );
    rejected(
        Gpu::Sm90,
        req(&[1 << 31]),
        "positive i32 values, got 2147483648",
        None,
    );
    rejected(
        Gpu::Sm90,
        LaunchDirectives {
            maxntid: Some(vec![-4]),
            ..Default::default()
        },
        ".maxntid dimensions must be positive i32 values, got -4",
        None,
    );
    rejected(
        Gpu::Sm90,
        req(&[32, 1, 65]),
        "at most 64 threads along z",
        Some("out of range"),
    );
    rejected(
        Gpu::Sm90,
        req(&[1025]),
        "1025 threads exceed the limit of 1024 per block",
        None,
    );
}

#[test]
fn maxntid_and_reqntid_are_normalized_to_one() {
    let both = LaunchDirectives {
        maxntid: Some(vec![256]),
        reqntid: Some(vec![128]),
        ..Default::default()
    };
    rejected(
        Gpu::Sm90,
        both.clone(),
        ".maxntid and .reqntid cannot both be specified",
        Some("Conflicting directives: .maxntid and .reqntid"),
    );
    for (bound, kept) in [
        (ThreadBound::Exact, ".reqntid 128"),
        (ThreadBound::Max, ".maxntid 256"),
    ] {
        let mut notes = Vec::new();
        let d = launch::finish(both.clone(), bound, Gpu::Sm90, "k", &mut notes).unwrap();
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].severity, tileiras::Severity::Remark);
        assert!(
            notes[0].message.contains(&format!("emitting {kept}")),
            "{:?}",
            notes[0]
        );
        let text = module(Gpu::Sm90, &d, Vec::new());
        assert!(
            text.contains(kept)
                && !text.contains(if bound == ThreadBound::Exact {
                    ".maxntid"
                } else {
                    ".reqntid"
                })
        );
        accepted(Gpu::Sm90, d);
    }
}

#[test]
fn blocksareclusters_needs_reqntid_and_cluster_dims() {
    let d = LaunchDirectives {
        reqntid: Some(vec![128]),
        blocksareclusters: true,
        ..Default::default()
    };
    rejected(
        Gpu::Sm90,
        d.clone(),
        ".blocksareclusters needs both .reqntid and .reqnctapercluster",
        Some(".reqntid and .reqnctapercluster directive(s) required"),
    );
    let d = LaunchDirectives {
        maxntid: Some(vec![128]),
        reqnctapercluster: Some(vec![2, 1, 1]),
        blocksareclusters: true,
        ..Default::default()
    };
    rejected(
        Gpu::Sm90,
        d,
        ".blocksareclusters needs both",
        Some(".reqntid and .reqnctapercluster directive(s) required"),
    );
    accepted(
        Gpu::Sm90,
        LaunchDirectives {
            reqntid: Some(vec![128]),
            reqnctapercluster: Some(vec![2, 1, 1]),
            blocksareclusters: true,
            ..Default::default()
        },
    );
}

#[test]
fn cluster_dimensions_are_exactly_three() {
    let c = |dims: &[i64]| LaunchDirectives {
        reqntid: Some(vec![128]),
        reqnctapercluster: Some(dims.to_vec()),
        ..Default::default()
    };
    accepted(Gpu::Sm90, c(&[2, 1, 1]));
    accepted(Gpu::Sm90, c(&[2, 2, 2]));
    accepted(Gpu::Sm100, c(&[16, 1, 1]));
    rejected(Gpu::Sm90, c(&[2]), "exactly 3 dimensions, got 1", None);
    rejected(Gpu::Sm90, c(&[2, 1]), "exactly 3 dimensions, got 2", None);
    rejected(Gpu::Sm90, c(&[0, 1, 1]), "positive i32 values, got 0", None);
    rejected(
        Gpu::Sm90,
        c(&[17, 1, 1]),
        "17 CTAs exceed the limit of 16",
        None,
    );
}

#[test]
fn reqnctapercluster_conflicts_with_maxclusterrank() {
    rejected(
        Gpu::Sm90,
        LaunchDirectives {
            reqntid: Some(vec![128]),
            reqnctapercluster: Some(vec![2, 1, 1]),
            maxclusterrank: Some(2),
            ..Default::default()
        },
        ".reqnctapercluster and .maxclusterrank cannot both be specified",
        Some("Conflicting directives: .reqnctapercluster and .maxclusterrank"),
    );
    let r = |n| LaunchDirectives {
        maxclusterrank: Some(n),
        ..Default::default()
    };
    accepted(Gpu::Sm90, r(1));
    accepted(Gpu::Sm90, r(16));
    rejected(Gpu::Sm90, r(0), ".maxclusterrank 0 is out of range", None);
    rejected(Gpu::Sm90, r(17), ".maxclusterrank 17 is out of range", None);
}

#[test]
fn ctas_per_sm_need_launch_bounds() {
    rejected(
        Gpu::Sm90,
        LaunchDirectives {
            minnctapersm: Some(2),
            ..Default::default()
        },
        ".minnctapersm needs launch bounds",
        Some(".minnctapersm is ignored when neither .maxntid nor .reqntid is specified"),
    );
    let mut text = module(Gpu::Sm90, &req(&[128]), Vec::new());
    text = text.replace(".language 7", ".maxnctapersm 2\n.language 7");
    let (ok, stderr) = ptxas(&text, Gpu::Sm90);
    assert!(!ok && stderr.contains(".maxnctapersm"), "{stderr}");
    let d = LaunchDirectives {
        maxnctapersm: Some(2),
        ..Default::default()
    };
    let errs = d.verify(Gpu::Sm90);
    assert!(errs
        .iter()
        .any(|e| e.0.contains(".maxnctapersm needs launch bounds")));
    assert!(errs
        .iter()
        .any(|e| e.0.contains("deprecated since PTX 2.1")));
}

#[test]
fn residency_within_the_targets_limits() {
    let m = |gpu, threads: i64, n: i64| {
        (
            gpu,
            LaunchDirectives {
                reqntid: Some(vec![threads]),
                minnctapersm: Some(n),
                ..Default::default()
            },
        )
    };
    // (gpu, most CTAs per SM, most threads per SM): measured with ptxas 13.5.
    for (gpu, ctas, threads) in [
        (Gpu::Sm80, 32, 2048),
        (Gpu::Sm86, 16, 1536),
        (Gpu::Sm89, 24, 1536),
        (Gpu::Sm90, 32, 2048),
        (Gpu::Sm100, 32, 2048),
        (Gpu::Sm120, 24, 1536),
    ] {
        let (g, d) = m(gpu, 32, ctas);
        accepted(g, d);
        let (g, d) = m(gpu, 32, ctas + 1);
        rejected(
            g,
            d,
            &format!(
                ".minnctapersm {} is out of range: {gpu} keeps 1 to {ctas} CTAs",
                ctas + 1
            ),
            Some("out of range"),
        );
        let (g, d) = m(gpu, threads / 2, 2);
        accepted(g, d);
        let (g, d) = m(gpu, 512, threads / 512 + 1);
        rejected(
            g,
            d,
            &format!("more than the {threads} of {gpu}"),
            Some("Value of threads per SM for entry k is out of range"),
        );
    }
    let (g, d) = m(Gpu::Sm90, 128, 0);
    rejected(g, d, ".minnctapersm 0 is out of range", None);
}

#[test]
fn registers_within_limits() {
    let r = |n| LaunchDirectives {
        reqntid: Some(vec![128]),
        maxnreg: Some(n),
        ..Default::default()
    };
    for gpu in [Gpu::Sm80, Gpu::Sm90, Gpu::Sm100] {
        accepted(gpu, r(24));
        accepted(gpu, r(255));
        rejected(
            gpu,
            r(23),
            ".maxnreg 23 is out of range: 24 to 255",
            Some("lower bound of 24"),
        );
        rejected(
            gpu,
            r(256),
            ".maxnreg 256 is out of range",
            Some("Too many maxnreg"),
        );
        rejected(
            gpu,
            r(0),
            ".maxnreg 0 is out of range",
            Some("Positive non-zero value expected for maxnreg"),
        );
    }
}

fn ptrs(n: usize, extra: Option<Ty>) -> Vec<Param> {
    let mut v: Vec<Param> = (0..n)
        .map(|i| Param {
            name: format!("k_param_{i}"),
            ty: ParamTy::GlobalPtr,
        })
        .collect();
    if let Some(t) = extra {
        v.push(Param {
            name: format!("k_param_{n}"),
            ty: ParamTy::Scalar(t),
        });
    }
    v
}

#[test]
fn parameter_space_is_checked_before_ptxas() {
    for gpu in [Gpu::Sm80, Gpu::Sm90, Gpu::Sm100] {
        // 4095 pointers and an i32: exactly the 32764-byte limit.
        let fits = ptrs(4095, Some(Ty::U32));
        let layout = params::layout(&fits, gpu);
        assert_eq!(layout.size, params::MAX_PARAM_BYTES);
        assert_eq!(params::check(&layout), None);
        let (ok, stderr) = ptxas(&module(gpu, &req(&[128]), fits), gpu);
        assert!(ok && stderr.is_empty(), "{stderr}");
        // One more pointer does not fit.
        let over = ptrs(4096, None);
        let layout = params::layout(&over, gpu);
        assert_eq!(
            params::check(&layout).unwrap(),
            "Formal parameter space overflowed (32768 bytes required, max 32764 bytes allowed)"
        );
        let (ok, stderr) = ptxas(&module(gpu, &req(&[128]), over), gpu);
        assert!(
            !ok && stderr.contains("too much parameter space"),
            "{stderr}"
        );
    }
}

#[test]
fn parameter_layout_matches_ptxas_alignment() {
    // u8, u64 pointer, b16, f64, u32: each at its natural alignment.
    let ps = vec![
        Param {
            name: "k_param_0".into(),
            ty: ParamTy::Scalar(Ty::U8),
        },
        Param {
            name: "k_param_1".into(),
            ty: ParamTy::GlobalPtr,
        },
        Param {
            name: "k_param_2".into(),
            ty: ParamTy::Scalar(Ty::B16),
        },
        Param {
            name: "k_param_3".into(),
            ty: ParamTy::Scalar(Ty::F64),
        },
        Param {
            name: "k_param_4".into(),
            ty: ParamTy::Scalar(Ty::U32),
        },
    ];
    let layout = params::layout(&ps, Gpu::Sm90);
    let ours: Vec<_> = layout.slots.iter().map(|s| (s.offset, s.size)).collect();
    let k = assembled_kernel(&module(Gpu::Sm90, &req(&[128]), ps), Gpu::Sm90);
    let theirs: Vec<_> = k.params.iter().map(|p| (p.offset, p.size)).collect();
    assert_eq!(ours, theirs);
    assert_eq!(ours, [(0, 1), (8, 8), (16, 2), (24, 8), (32, 4)]);
    assert_eq!(k.param_bytes, Some(layout.size));
}

#[test]
fn cluster_hints_give_nvidias_directive_set() {
    // matmul_f16_cluster2 asks for num_cta_in_cga = 2 and occupancy = 1;
    // NVIDIA's PTX for it has .reqntid 256, .minnctapersm 1,
    // .reqnctapercluster 2 and .blocksareclusters.
    for version in ["v13_3", "v13_1"] {
        let path = common::corpus().join(format!(
            "matmul_f16_cluster2/matmul_f16_cluster2.{version}.tileir"
        ));
        let m = tileiras::bytecode::read(&std::fs::read(path).unwrap()).unwrap();
        let entry = *m
            .top_level()
            .iter()
            .find(|&&id| m.ops[id].opcode == tileiras::ir::Opcode::Entry)
            .unwrap();
        let mut notes = Vec::new();
        let hints = launch::entry_hints(&m, entry, Gpu::Sm90, &mut notes);
        assert!(notes.is_empty());
        assert_eq!(hints.num_cta_in_cga, Some(2), "{version}");
        assert_eq!(hints.occupancy, Some(1));
        for gpu in [Gpu::Sm90, Gpu::Sm100, Gpu::Sm80] {
            let d = launch::requested(&hints, 256, ThreadBound::Exact);
            let d = launch::finish(d, ThreadBound::Exact, gpu, "k", &mut notes).unwrap();
            let text = module(gpu, &d, Vec::new());
            let want = if gpu == Gpu::Sm80 {
                ".reqntid 256\n.minnctapersm 1\n.language 7\n"
            } else {
                ".reqntid 256\n.minnctapersm 1\n.blocksareclusters\n.reqnctapercluster 2, 1, 1\n.language 7\n"
            };
            assert!(text.contains(want), "{gpu}: {text}");
            accepted(gpu, d);
        }
        // Hints for another target fall back to `default` (13.3) or are
        // absent (13.1 names sm_90 only).
        let other = launch::entry_hints(&m, entry, Gpu::Sm100, &mut notes);
        let want = if version == "v13_3" { Some(2) } else { None };
        assert_eq!(other.num_cta_in_cga, want);
    }
}

#[test]
fn thread_bound_follows_what_the_body_needs() {
    let entry = |body: Vec<Line>, shared_bytes| ptx::Entry {
        name: "k".into(),
        params: Vec::new(),
        reqntid: 128,
        launch: Box::default(),
        reg_counts: Vec::new(),
        shared_bytes,
        acc_regs: 0,
        local_bytes: 0,
        strings: Vec::new(),
        body,
        decl: None,
        tensor_maps: Vec::new(),
    };
    let ret = Line::Inst(Box::new(Inst::new(Opc::Ret, &[], &[], vec![], vec![])));
    // The same work in every thread: any count up to 128 is fine.
    let uniform = entry(vec![ret.clone()], 0);
    assert_eq!(launch::thread_bound(&uniform), ThreadBound::Max);
    let d = launch::requested(&Default::default(), 128, ThreadBound::Max);
    let d = launch::finish(d, ThreadBound::Max, Gpu::Sm90, "k", &mut Vec::new()).unwrap();
    assert_eq!(d.to_text(Gpu::Sm90), ".maxntid 128\n.minnctapersm 1\n");
    accepted(Gpu::Sm90, d);
    // Reading %tid.x, a barrier, or shared memory: the exact count.
    let r = ptx::Reg {
        class: ptx::RegClass::B32,
        id: 1,
    };
    let tid = Line::Inst(Box::new(Inst::new(
        Opc::Mov,
        &[],
        &[Ty::U32],
        vec![ptx::Operand::Reg(r)],
        vec![ptx::Operand::Special(ptx::Special::TidX)],
    )));
    assert_eq!(
        launch::thread_bound(&entry(vec![tid, ret.clone()], 0)),
        ThreadBound::Exact
    );
    let bar = Line::Inst(Box::new(Inst::new(
        Opc::Bar,
        &["sync"],
        &[],
        vec![],
        vec![ptx::Operand::Imm(0)],
    )));
    assert_eq!(
        launch::thread_bound(&entry(vec![bar, ret.clone()], 0)),
        ThreadBound::Exact
    );
    assert_eq!(
        launch::thread_bound(&entry(vec![ret], 16)),
        ThreadBound::Exact
    );
}

#[test]
fn hidden_tensor_maps_lie_where_ptxas_puts_them() {
    // Nine bytes of visible parameters, then two maps: ptxas aligns the
    // maps to 64 bytes of constant bank 0, where the parameters start at
    // 0x210 on sm_90 and at 0 on sm_100 and sm_120. Its parameter size
    // tells where the second map ends.
    let ps = vec![
        Param {
            name: "k_param_0".into(),
            ty: ParamTy::GlobalPtr,
        },
        Param {
            name: "k_param_1".into(),
            ty: ParamTy::Scalar(Ty::U8),
        },
        Param {
            name: "k_param_2".into(),
            ty: ParamTy::TensorMap,
        },
        Param {
            name: "k_param_3".into(),
            ty: ParamTy::TensorMap,
        },
    ];
    for (gpu, first) in [(Gpu::Sm90, 0x30), (Gpu::Sm100, 0x40), (Gpu::Sm120, 0x40)] {
        let layout = params::layout(&ps, gpu);
        assert_eq!(layout.slots[2].offset, first, "{gpu}");
        assert_eq!(layout.slots[3].offset, first + 128, "{gpu}");
        let k = assembled_kernel(&module(gpu, &req(&[128]), ps.clone()), gpu);
        assert_eq!(k.param_bytes, Some(layout.size), "{gpu}");
    }
}
