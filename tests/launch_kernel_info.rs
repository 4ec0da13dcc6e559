//! Kernel launch info after a compile: entry names, block shape, parameter
//! layout, registers and shared memory, checked against what NVIDIA's
//! ptxas itself reports (`ptxas -v`) and records in the cubin.
mod common;

use std::process::Command;

use tileiras::elf::cubin_info;
use tileiras::options::{Gpu, Options, OutputKind};
use tileiras::{compile, KernelInfo, ParamKind};

fn bytecode(name: &str) -> Vec<u8> {
    let dir = common::corpus().join(name);
    let path = ["v13_3", "v13_4"]
        .iter()
        .map(|v| dir.join(format!("{name}.{v}.tileir")))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{name}: no bytecode in {}", dir.display()));
    std::fs::read(path).expect("read bytecode")
}

fn options(gpu: Gpu, output: OutputKind) -> Options {
    Options {
        gpu,
        output,
        cuda_root: Some(common::cuda_root()),
        ..Options::default()
    }
}

fn build(bytes: &[u8], gpu: Gpu, output: OutputKind) -> tileiras::Output {
    compile(bytes, &options(gpu, output), &mut |_| {}).expect("compiles")
}

/// `ptxas -v` on `ptx`: (registers, smem bytes) of its one entry.
fn ptxas_v(ptx: &str, gpu: Gpu) -> (u32, u32) {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = common::Scratch::new(&format!("launch-info-v{n}"));
    let src = dir.path("k.ptx");
    std::fs::write(&src, ptx).unwrap();
    let out = Command::new(common::cuda_root().join("bin/ptxas"))
        .args(["-v", "-arch", gpu.ptx_target()])
        .arg(&src)
        .arg("-o")
        .arg(dir.path("k.cubin"))
        .output()
        .expect("run ptxas");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    let line = log
        .lines()
        .find(|l| l.contains("Used "))
        .unwrap_or_else(|| panic!("no register line in {log}"));
    let num_before = |word: &str| -> u32 {
        let i = line
            .find(word)
            .unwrap_or_else(|| panic!("{word} in {line}"));
        line[..i]
            .split_whitespace()
            .last()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("number before {word} in {line}"))
    };
    let smem = if line.contains("bytes smem") {
        num_before("bytes smem")
    } else {
        0
    };
    (num_before("registers"), smem)
}

const KERNELS: [&str; 5] = [
    "vadd_f32_contig",
    "row_sum_f32",
    "scalar_params_axpy",
    "cast_int_width",
    "gelu_tanh_f16",
];

#[test]
fn cubin_kernel_info_matches_ptxas() {
    for name in KERNELS {
        let bytes = bytecode(name);
        for gpu in [Gpu::Sm80, Gpu::Sm90] {
            let ptx = build(&bytes, gpu, OutputKind::Ptx);
            let cubin = build(&bytes, gpu, OutputKind::Cubin);
            assert_eq!(ptx.kernels.len(), 1, "{name}");
            assert_eq!(cubin.kernels.len(), 1, "{name}");
            let (p, k) = (&ptx.kernels[0], &cubin.kernels[0]);
            assert_eq!(k.name, name);
            // What the PTX says is the same with or without a cubin.
            let strip = |k: &KernelInfo| KernelInfo {
                registers: None,
                cubin_smem_bytes: None,
                ..k.clone()
            };
            assert_eq!(strip(k), *p, "{name} {gpu}");
            assert_eq!(p.registers, None);
            assert_eq!(p.cubin_smem_bytes, None);
            // The block shape is the .reqntid printed in the PTX.
            let text = String::from_utf8(ptx.bytes.clone()).unwrap();
            assert!(
                text.contains(&format!(".reqntid {}\n", k.block[0])),
                "{name}: {text}"
            );
            assert_eq!(k.block[1..], [1, 1]);
            assert!(k.block_is_exact);
            assert_eq!(k.cluster, [1, 1, 1]);
            assert!(!k.blocks_are_clusters);
            assert_eq!(k.min_ctas_per_sm, Some(1));
            assert_eq!(k.dynamic_smem_bytes, 0);
            // Registers as ptxas -v reports them for the same PTX.
            let (regs, smem) = ptxas_v(&text, gpu);
            assert_eq!(k.registers, Some(regs), "{name} {gpu}");
            assert_eq!(k.static_smem_bytes, smem, "{name} {gpu}");
            let cubin_smem = k.cubin_smem_bytes.unwrap();
            assert!(
                cubin_smem >= smem && cubin_smem <= smem + 1024,
                "{name} {gpu}"
            );
            // The parameter layout as ptxas recorded it in the cubin.
            let facts = cubin_info::kernels(&cubin.bytes).unwrap();
            assert_eq!(facts.len(), 1);
            let f = &facts[0];
            assert_eq!(f.name, name);
            assert_eq!(f.reqntid, Some(k.block));
            assert_eq!(f.param_bytes, Some(k.param_bytes), "{name}");
            let ours: Vec<_> = k.params.iter().map(|p| (p.offset, p.size)).collect();
            let theirs: Vec<_> = f.params.iter().map(|p| (p.offset, p.size)).collect();
            assert_eq!(ours, theirs, "{name} {gpu}");
            for (i, p) in k.params.iter().enumerate() {
                assert_eq!(p.name, format!("{name}_param_{i}"));
                assert_eq!(p.offset % p.align, 0);
            }
        }
    }
}

#[test]
fn vadd_layout_is_pointer_then_two_i32() {
    let out = build(&bytecode("vadd_f32_contig"), Gpu::Sm90, OutputKind::Cubin);
    let k = &out.kernels[0];
    let got: Vec<_> = k
        .params
        .iter()
        .map(|p| (p.kind, p.ptx_type, p.offset, p.size))
        .collect();
    let mut want = Vec::new();
    for base in [0, 16, 32] {
        want.push((ParamKind::GlobalPointer, "u64", base, 8));
        want.push((ParamKind::Scalar, "u32", base + 8, 4));
        want.push((ParamKind::Scalar, "u32", base + 12, 4));
    }
    assert_eq!(got, want);
    assert_eq!(k.param_bytes, 48);
    assert_eq!(k.block, [128, 1, 1]);
}

#[test]
fn empty_module_has_no_kernels() {
    let bytes = std::fs::read(common::repo().join("tests/data/empty_module.v13_3.tileir")).unwrap();
    for kind in [OutputKind::Ptx, OutputKind::Cubin] {
        assert!(build(&bytes, Gpu::Sm90, kind).kernels.is_empty());
    }
}

#[test]
fn nv_info_records_what_the_directives_asked() {
    let ptx = "\
.version 9.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u32 a, .param .u64 .ptr .global .align 1 b, .param .u8 c, .param .align 16 .b8 d[24], .param .f32 e)
.reqntid 64, 2
.minnctapersm 2
.maxnreg 40
.blocksareclusters
.reqnctapercluster 2, 1, 1
{
\t.shared .align 4 .b8 sm[100];
\t.reg .b32 r<3>;
\t.reg .b64 rd<3>;
\tld.param.u32 r1, [a];
\tld.param.u64 rd1, [b];
\tst.shared.u32 [sm+4], r1;
\tbar.sync 0;
\tld.shared.u32 r2, [sm+8];
\tst.global.u32 [rd1], r2;
\tret;
}
";
    let dir = common::Scratch::new("launch-nvinfo");
    std::fs::write(dir.path("k.ptx"), ptx).unwrap();
    let (regs, smem) = ptxas_v(ptx, Gpu::Sm90);
    let out = Command::new(common::cuda_root().join("bin/ptxas"))
        .args(["-arch", "sm_90a"])
        .arg(dir.path("k.ptx"))
        .arg("-o")
        .arg(dir.path("k.cubin"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cubin = std::fs::read(dir.path("k.cubin")).unwrap();
    let ks = cubin_info::kernels(&cubin).unwrap();
    assert_eq!(ks.len(), 1);
    let k = &ks[0];
    assert_eq!(k.name, "k");
    assert_eq!(k.reqntid, Some([64, 2, 1]));
    assert_eq!(k.maxntid, None);
    assert_eq!(k.maxnreg, Some(40));
    assert_eq!(k.cluster, Some([2, 1, 1]));
    assert_eq!(k.registers, Some(regs));
    assert_eq!(smem, 100);
    // The section includes the 1 KiB ptxas reserves on sm_90.
    assert_eq!(k.shared_bytes, 100 + 1024);
    assert_eq!(k.param_bytes, Some(60));
    let layout: Vec<_> = k
        .params
        .iter()
        .map(|p| (p.ordinal, p.offset, p.size))
        .collect();
    assert_eq!(
        layout,
        [(0, 0, 4), (1, 8, 8), (2, 16, 1), (3, 32, 24), (4, 56, 4)]
    );
}

#[test]
fn nv_info_records_upper_bounds_and_cluster_rank() {
    let ptx = "\
.version 9.5
.target sm_90a
.address_size 64
.visible .entry k()
.maxntid 96, 2
.explicitcluster
.maxclusterrank 4
{
\tret;
}
";
    let dir = common::Scratch::new("launch-nvinfo-max");
    std::fs::write(dir.path("k.ptx"), ptx).unwrap();
    let out = Command::new(common::cuda_root().join("bin/ptxas"))
        .args(["-arch", "sm_90a"])
        .arg(dir.path("k.ptx"))
        .arg("-o")
        .arg(dir.path("k.cubin"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ks = cubin_info::kernels(&std::fs::read(dir.path("k.cubin")).unwrap()).unwrap();
    let k = &ks[0];
    assert_eq!(k.maxntid, Some([96, 2, 1]));
    assert_eq!(k.reqntid, None);
    assert!(k.explicit_cluster);
    assert_eq!(k.max_cluster_rank, Some(4));
    assert_eq!(k.cluster, None);
    // Without .maxnreg ptxas records its own limit.
    assert_eq!(k.maxnreg, Some(255));
    assert_eq!(k.shared_bytes, 0);
    assert!(k.params.is_empty());
}

#[test]
fn truncated_nv_info_is_an_error() {
    assert!(cubin_info::records(&[4, 0x17, 12, 0, 1, 2]).is_err());
    assert!(cubin_info::records(&[3, 0x1b]).is_err());
    let r = cubin_info::records(&[3, 0x1b, 40, 0, 1, 0x3e, 0, 0]).unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!(
        (r[0].attribute, r[0].value),
        (cubin_info::EIATTR_MAXREG_COUNT, 40)
    );
    assert_eq!(r[1].attribute, cubin_info::EIATTR_EXPLICIT_CLUSTER);
    assert!(cubin_info::kernels(b"not an elf").is_err());
}

#[test]
fn cluster_kernel_reports_its_cluster_shape() {
    // matmul_f16_cluster2: num_cta_in_cga = 2, occupancy = 1. Below sm_90
    // there are no clusters: one CTA per tile block.
    let bytes = bytecode("matmul_f16_cluster2");
    let out = build(&bytes, Gpu::Sm80, OutputKind::Cubin);
    let k = &out.kernels[0];
    let f = &cubin_info::kernels(&out.bytes).unwrap()[0];
    assert_eq!(f.reqntid, Some(k.block));
    assert_eq!((k.cluster, k.blocks_are_clusters), ([1, 1, 1], false));
    assert_eq!(f.cluster, None);
    assert_eq!(k.min_ctas_per_sm, Some(1));
    assert!(k.static_smem_bytes > 0);
    let ours: Vec<_> = k.params.iter().map(|p| (p.offset, p.size)).collect();
    let theirs: Vec<_> = f.params.iter().map(|p| (p.offset, p.size)).collect();
    assert_eq!(ours, theirs);
    // From sm_90 the tile block is a cluster of two CTAs; the kernel info
    // and the cubin's own records agree on it.
    for gpu in [Gpu::Sm90, Gpu::Sm100] {
        let out = build(&bytes, gpu, OutputKind::Cubin);
        let k = &out.kernels[0];
        let f = &cubin_info::kernels(&out.bytes).unwrap()[0];
        assert_eq!(
            (k.cluster, k.blocks_are_clusters),
            ([2, 1, 1], true),
            "{gpu}"
        );
        assert_eq!(f.cluster, Some([2, 1, 1]), "{gpu}");
        assert_eq!(f.reqntid, Some(k.block), "{gpu}");
    }
}

/// The kernels listed in `tests/data/lower/supported.txt`.
fn supported() -> Vec<String> {
    let text =
        std::fs::read_to_string(common::repo().join("tests/data/lower/supported.txt")).unwrap();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

#[test]
fn every_supported_kernel_matches_its_cubin() {
    let kernels = supported();
    assert!(kernels.len() > 20);
    for name in kernels {
        let out = build(&bytecode(&name), Gpu::Sm90, OutputKind::Cubin);
        let facts = cubin_info::kernels(&out.bytes).unwrap();
        assert_eq!(out.kernels.len(), facts.len(), "{name}");
        for k in &out.kernels {
            let f = facts.iter().find(|f| f.name == k.name).unwrap();
            assert!(k.block_is_exact, "{name}");
            assert_eq!(f.reqntid, Some(k.block), "{name}");
            assert_eq!(f.param_bytes.unwrap_or(0), k.param_bytes, "{name}");
            // The cubin lists the visible parameters only; hidden tensor
            // maps follow them, and the parameter size counts them.
            let ours: Vec<_> = k
                .params
                .iter()
                .filter(|p| p.kind != ParamKind::HiddenTensorMap)
                .map(|p| (p.offset, p.size))
                .collect();
            let theirs: Vec<_> = f.params.iter().map(|p| (p.offset, p.size)).collect();
            assert_eq!(ours, theirs, "{name}");
            assert_eq!(k.registers, f.registers, "{name}");
            assert!(k.registers.is_some_and(|r| r > 0 && r <= 255), "{name}");
            let cubin_smem = k.cubin_smem_bytes.unwrap();
            assert!(cubin_smem >= k.static_smem_bytes, "{name}");
        }
    }
}
