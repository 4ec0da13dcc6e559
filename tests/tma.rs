//! TMA copies in our PTX: the sm_90 `wgmma` ring fed by TMA has the
//! protocol the plan describes (full barriers of one arrival, thread 0's
//! `expect_tx` and boxes, the fence after the barriers' initialization,
//! no `cp.async` and no proxy fence), and so has the `mma.sync` ring of
//! sm_100 and sm_120 (with the readers' proxy fence before they release a
//! stage); the maps are hidden parameters after the visible ones, and
//! `TILEIRAS_NO_TMA` (the `tma` option) turns them back into `cp.async`.
//! ptxas accepts both. Whether the results are right
//! is the differential test's to say (tests/differential.rs runs our TMA
//! kernels with the maps our own host callbacks write, with the emulator's
//! strict asynchronous checks on).
use std::path::Path;

use tileiras::options::{Gpu, Options, OutputKind};

#[path = "differential/nvidia.rs"]
#[allow(dead_code)]
mod nvidia;
#[path = "common/nvidia_reference.rs"]
mod nvidia_reference;

fn ptx(rel: &str, tma: bool) -> String {
    ptx_for(rel, Gpu::Sm90, tma)
}

fn ptx_for(rel: &str, gpu: Gpu, tma: bool) -> String {
    let bytes = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap();
    let module = tileiras::bytecode::read(&bytes).unwrap();
    let options = Options {
        gpu,
        tma,
        ..Default::default()
    };
    tileiras::lower::lower(&module, &options).unwrap()
}

fn count(text: &str, what: &str) -> usize {
    text.matches(what).count()
}

const MATMUL: &str = "tests/data/differential/corpus/matmul_f16_tma.tileir";

#[test]
fn the_matmul_ring_is_fed_by_tma() {
    let p = ptx(MATMUL, true);
    // two maps after the fifteen visible parameters
    assert!(p.contains(".hidden\t.param .align 64 .b8 matmul_f16_tma_param_15[128]"));
    assert!(p.contains(".hidden\t.param .align 64 .b8 matmul_f16_tma_param_16[128]"));
    assert_eq!(count(&p, "cvta.param.u64"), 2, "{p}");
    // Thread 0 prefetches both maps, as NVIDIA's producer does.
    assert_eq!(count(&p, "prefetch.tensormap"), 2, "{p}");
    // four stages: four full barriers of one arrival, four empty ones of 256
    assert_eq!(
        count(&p, "mbarrier.init.shared.b64") - count(&p, "], 256;"),
        4
    );
    assert_eq!(count(&p, "], 1;\n"), 4, "{p}");
    assert_eq!(count(&p, "fence.mbarrier_init.release.cluster"), 1);
    // three fills in the prologue and one refill in the loop, each the
    // expect_tx of the stage's 32768 bytes and three boxes (A 128x64, B
    // two 64x64)
    let fills = count(&p, "mbarrier.arrive.expect_tx");
    assert_eq!(fills, 4, "{p}");
    assert_eq!(count(&p, "cp.async.bulk.tensor.2d"), 3 * fills);
    assert!(p.contains("32768;"), "{p}");
    assert_eq!(count(&p, "cp.async.cg"), 0);
    assert_eq!(count(&p, "fence.proxy.async"), 0);
}

#[test]
fn the_switch_feeds_it_by_cp_async() {
    let p = ptx(MATMUL, false);
    assert!(!p.contains(".hidden"));
    assert_eq!(count(&p, "cp.async.bulk.tensor"), 0);
    assert_eq!(count(&p, "mbarrier.arrive.expect_tx"), 0);
    assert_eq!(count(&p, "prefetch.tensormap"), 0);
    assert!(count(&p, "cp.async.cg") > 0);
    assert!(count(&p, "fence.proxy.async") > 0);
}

/// The `mma.sync` ring of sm_100 and sm_120 fed by TMA: thread 0 waits
/// for the stage's empty barrier and refills it (one box of A, two of B,
/// the copies into the CTA's own shared memory), every thread waits for
/// the full one, reads its fragments, fences the proxies (its `ldmatrix`
/// reads before the boxes that overwrite the stage) and releases the
/// stage; no `cp.async` groups.
#[test]
fn the_mma_sync_ring_is_fed_by_tma() {
    for gpu in [Gpu::Sm100, Gpu::Sm120] {
        let p = ptx_for(MATMUL, gpu, true);
        assert!(p.contains(".hidden\t.param .align 64 .b8 matmul_f16_tma_param_16[128]"));
        assert_eq!(count(&p, "prefetch.tensormap"), 2, "{p}");
        // two stages: two full barriers of one arrival, two empty of 256
        assert_eq!(count(&p, "], 1;\n"), 2, "{p}");
        assert_eq!(count(&p, "], 256;\n"), 2, "{p}");
        assert_eq!(count(&p, "fence.mbarrier_init.release.cluster"), 1);
        let fills = count(&p, "mbarrier.arrive.expect_tx");
        assert_eq!(fills, 2, "{p}");
        assert_eq!(
            count(
                &p,
                "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"
            ),
            3 * fills
        );
        assert_eq!(count(&p, "fence.proxy.async.shared::cta"), 1, "{p}");
        assert_eq!(count(&p, "mbarrier.inval"), 4, "{p}");
        assert!(count(&p, "ldmatrix") > 0 && count(&p, "mma.sync") > 0);
        assert_eq!(count(&p, "cp.async.cg"), 0);
        assert_eq!(count(&p, "cp.async.commit_group"), 0);
        // With the switch: the cp.async groups.
        let p = ptx_for(MATMUL, gpu, false);
        assert!(!p.contains(".hidden"));
        assert_eq!(count(&p, "cp.async.bulk.tensor"), 0);
        assert!(count(&p, "cp.async.commit_group") > 0);
    }
}

/// The kernel information of `bytes` compiled to a cubin for `gpu`, with
/// TMA or without.
fn cubin_kernel(bytes: &[u8], gpu: Gpu, tma: bool) -> tileiras::KernelInfo {
    let options = Options {
        gpu,
        output: OutputKind::Cubin,
        tma,
        ..Default::default()
    };
    let out = tileiras::compile(bytes, &options, &mut |_| {}).unwrap();
    out.kernels.into_iter().next().expect("a kernel")
}

/// ptxas assembles the rings both ways, and the TMA ones need fewer
/// registers (no per-thread copy addresses) and no stack.
#[test]
fn ptxas_assembles_both() {
    let bytes = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(MATMUL)).unwrap();
    for gpu in [Gpu::Sm90, Gpu::Sm100, Gpu::Sm120] {
        let regs: Vec<u32> = [true, false]
            .iter()
            .map(|&tma| cubin_kernel(&bytes, gpu, tma).registers.unwrap())
            .collect();
        eprintln!("{gpu}: registers: TMA {}, cp.async {}", regs[0], regs[1]);
        assert!(regs[0] < regs[1], "{gpu}: {regs:?}");
    }
}

/// A load's `allow_tma = false` hint keeps its tile off TMA, as NVIDIA's
/// tileiras does (it then loads with `ld.global`): cuTile's matmul with
/// the hint on both loads and without it (tests/data/tma/gen.py), ours and
/// NVIDIA's sm_90 PTX.
#[test]
fn the_allow_tma_hint_is_honoured_as_nvidia_s_is() {
    for (file, want) in [
        ("tests/data/tma/matmul_f16_allow_tma_false.tileir", false),
        ("tests/data/tma/matmul_f16_allow_tma_true.tileir", true),
    ] {
        let ours = ptx(file, true);
        assert_eq!(ours.contains("cp.async.bulk.tensor"), want, "{file}");
        assert_eq!(ours.contains(".hidden"), want, "{file}");
        let bytes = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
        let theirs = nvidia::ptx(&bytes, "sm_90").unwrap();
        assert_eq!(
            theirs.contains("cp.async.bulk.tensor"),
            want,
            "NVIDIA's {file}"
        );
    }
}

/// The differential kernels whose product loop TMA feeds on the
/// `mma.sync` ring of sm_100 and sm_120 (16-bit operands, two-dimensional
/// tiles: every such ring of the set; tf32, 8-bit and batched products
/// stay on `cp.async`), and on sm_90's `mma.sync` rings.
#[test]
fn every_16_bit_mma_sync_ring_is_fed_by_tma() {
    let rings = [
        "bench/matmul_bf16_128x128x64",
        "bench/matmul_bf16_128x256x64",
        "bench/matmul_bf16_256x128x64",
        "bench/matmul_f16_128x128x64",
        "bench/matmul_f16_128x256x64",
        "bench/matmul_f16_256x128x64",
        "corpus/matmul_bf16_tma",
        "corpus/matmul_f16_cluster2",
        "corpus/matmul_f16_divisible",
        "corpus/matmul_f16_f16acc",
        "corpus/matmul_f16_tma",
        "cutile/kmatmul_bf16_40x24x64",
        "cutile/kmatmul_f16_100x72x40",
        "cutile/kmatmul_persistent_f16",
        "targeted/unpadded_matmul_f16",
        "targeted_random/unpadded_mma_003",
        "targeted_random/unpadded_mma_008",
        "targeted_random/unpadded_mma_013",
        "targeted_random/unpadded_mma_018",
        "targeted_random/unpadded_mma_023",
        "targeted_random/unpadded_mma_028",
        "targeted_random/unpadded_mma_033",
        "targeted_random/unpadded_mma_038",
    ];
    for name in rings {
        let rel = format!("tests/data/differential/{name}.tileir");
        for gpu in [Gpu::Sm100, Gpu::Sm120] {
            let p = ptx_for(&rel, gpu, true);
            assert!(p.contains("cp.async.bulk.tensor"), "{name} {gpu}");
            assert!(p.contains("mma.sync.aligned"), "{name} {gpu}");
            assert_eq!(count(&p, "cp.async.cg"), 0, "{name} {gpu}");
        }
    }
    for name in [
        "cutile/kmatmul_bf16_40x24x64",
        "cutile/kmatmul_f16_100x72x40",
        "cutile/kmatmul_persistent_f16",
    ] {
        let p = ptx_for(
            &format!("tests/data/differential/{name}.tileir"),
            Gpu::Sm90,
            true,
        );
        assert!(p.contains("cp.async.bulk.tensor"), "{name}");
        assert!(p.contains("mma.sync.aligned"), "{name}");
    }
    // One matrix of a batch ([1, M, K] tiles) is copied by three-dimensional
    // boxes of one element along the batch: the corpus' batched matmul on
    // every target, the 128 x 256 one (98304 bytes a set) too (sm_100's
    // shared memory holds two stages, sm_120's two of its K slices).
    let rel = "tests/data/differential/corpus/batched_matmul_f16.tileir";
    for gpu in [Gpu::Sm90, Gpu::Sm100, Gpu::Sm120] {
        let p = ptx_for(rel, gpu, true);
        assert!(p.contains("cp.async.bulk.tensor.3d.shared::cta"), "{gpu}");
        assert!(!p.contains("cp.async.bulk.tensor.2d"), "{gpu}");
        assert_eq!(count(&p, "cp.async.cg"), 0, "{gpu}");
    }
    let rel = "tests/data/differential/bench/batch_matmul_f16_f16out_128x256x128.tileir";
    for gpu in [Gpu::Sm100, Gpu::Sm120] {
        let p = ptx_for(rel, gpu, true);
        assert!(p.contains("cp.async.bulk.tensor.3d"), "{gpu}");
    }
    // cuTile's 256 x 256 persistent matmul: two stages (65536 bytes a
    // set) fit sm_90's and sm_100's shared memory, two K slices sm_120's.
    let rel = "tests/data/differential/repro/persistent_matmul_256x256x64.tileir";
    for gpu in [Gpu::Sm90, Gpu::Sm100, Gpu::Sm120] {
        let p = ptx_for(rel, gpu, true);
        assert!(p.contains("cp.async.bulk.tensor"), "{gpu}");
        assert!(p.contains("mma.sync.aligned"), "{gpu}");
    }
}

/// tf32 and 8-bit products on `mma.sync` are fed by TMA too: tf32 tiles
/// are f32 in memory, copied as they are, and their fragments rounded
/// once loaded (the same `cvt.rn.tf32.f32` as the `cp.async` ring's);
/// B's fragments are read as 32-bit words or bytes through the swizzle.
#[test]
fn tf32_and_8_bit_mma_sync_rings_are_fed_by_tma() {
    for name in [
        "corpus/matmul_tf32",
        "corpus/matmul_i8_i32",
        "corpus/matmul_fp8_e4m3",
    ] {
        let rel = format!("tests/data/differential/{name}.tileir");
        for gpu in [Gpu::Sm100, Gpu::Sm120] {
            let p = ptx_for(&rel, gpu, true);
            assert!(p.contains("cp.async.bulk.tensor.2d"), "{name} {gpu}");
            assert!(p.contains("mma.sync.aligned"), "{name} {gpu}");
            assert_eq!(count(&p, "cp.async.cg"), 0, "{name} {gpu}");
            let off = ptx_for(&rel, gpu, false);
            assert_eq!(count(&off, "cp.async.bulk.tensor"), 0, "{name} {gpu}");
            let tf32 = name.ends_with("tf32");
            // tf32: A's and B's fragments rounded once loaded, by TMA or not
            assert_eq!(count(&p, "cvt.rn.tf32.f32") > 0, tf32, "{name} {gpu}");
            assert_eq!(
                count(&p, "cvt.rn.tf32.f32"),
                count(&off, "cvt.rn.tf32.f32"),
                "{name} {gpu}"
            );
        }
    }
    // The benchmark's 128 x 128 tf32 tile (65536 bytes a set) on sm_100.
    let p = ptx_for(
        "tests/data/differential/bench/matmul_tf32_128x128x64.tileir",
        Gpu::Sm100,
        true,
    );
    assert!(p.contains("cp.async.bulk.tensor.2d"));
    assert!(p.contains("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"));
}

/// On sm_90, tf32 and 8-bit `wgmma` read B K-major only, while memory
/// holds it N-major: TMA copies B as it is into each stage, and once the
/// stage is full every thread transposes its 4 x 4 blocks into B's K-major
/// buffer (16-byte rows for tf32, bytes permuted by `prmt` for 8-bit),
/// then fences the proxies and synchronizes the block before the
/// multiply. A's map rounds to tf32 where the bytecode rounds it (as
/// NVIDIA's does); B is rounded by the threads. With the switch, no ring:
/// the operands go through registers as before.
#[test]
fn sm_90_tf32_and_8_bit_wgmma_rings_transpose_b() {
    for name in [
        "corpus/matmul_tf32",
        "corpus/matmul_i8_i32",
        "corpus/matmul_fp8_e4m3",
        "bench/matmul_tf32_128x128x64",
        // two stages only of two K slices each (160 KiB a whole set)
        "bench/matmul_tf32_128x256x64",
        "bench/matmul_tf32_256x128x64",
    ] {
        let rel = format!("tests/data/differential/{name}.tileir");
        let p = ptx_for(&rel, Gpu::Sm90, true);
        assert!(p.contains("cp.async.bulk.tensor.2d"), "{name}");
        assert!(p.contains("wgmma.mma_async"), "{name}");
        assert!(count(&p, "mbarrier.arrive.expect_tx") > 0, "{name}");
        assert_eq!(count(&p, "ld.global"), 0, "{name}");
        // the transposition: its reads and writes, then one proxy fence
        // and the block's barrier before the multiply
        assert_eq!(count(&p, "fence.proxy.async.shared::cta"), 1, "{name}");
        if name.contains("tf32") {
            assert!(count(&p, "ld.shared.v4.b32") >= 4, "{name}");
            assert!(count(&p, "st.shared.v4.b32") >= 4, "{name}");
            assert!(count(&p, "cvt.rn.tf32.f32") >= 16, "{name}");
        } else {
            assert!(count(&p, "prmt.b32") >= 8, "{name}");
        }
        let off = ptx_for(&rel, Gpu::Sm90, false);
        assert_eq!(count(&off, "cp.async.bulk.tensor"), 0, "{name}");
        assert_eq!(count(&off, "mbarrier"), 0, "{name}");
    }
}

/// The 128 x 256 and 256 x 128 tiles of 16-bit operands, whose two
/// stages (49152 bytes a set) exceed the mma.sync stage budget: their
/// TMA ring takes two stages of the target's shared memory (sm_120's 99
/// KiB, sm_100's 227 KiB), where the cp.async groups had no ring at all
/// and streamed their operands. ptxas assembles them within the target's
/// shared memory, with fewer registers on sm_120 (no spills:
/// tests/lower_mma_streamed.rs).
#[test]
fn the_largest_tiles_take_two_stages_of_the_target_s_shared_memory() {
    for name in ["matmul_f16_128x256x64", "matmul_bf16_256x128x64"] {
        let rel = format!("tests/data/differential/bench/{name}.tileir");
        let bytes = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(&rel)).unwrap();
        for (gpu, room) in [(Gpu::Sm100, 227 * 1024), (Gpu::Sm120, 99 * 1024)] {
            let p = ptx_for(&rel, gpu, true);
            // two stages: two full barriers of one arrival
            assert_eq!(count(&p, "], 1;\n"), 2, "{name} {gpu}");
            assert_eq!(count(&p, "cp.async.cg"), 0, "{name} {gpu}");
            let mut regs = Vec::new();
            for tma in [true, false] {
                let k = cubin_kernel(&bytes, gpu, tma);
                let smem = k.cubin_smem_bytes.unwrap();
                assert!(smem <= room, "{name} {gpu}: {smem} bytes");
                if tma {
                    assert!(smem >= 2 * 49152, "{name} {gpu}: {smem} bytes");
                }
                regs.push(k.registers.unwrap());
            }
            eprintln!(
                "{name} {gpu}: registers: TMA {}, streamed {}",
                regs[0], regs[1]
            );
            if gpu == Gpu::Sm120 {
                assert!(regs[0] < regs[1], "{name} {gpu}: {regs:?}");
            }
        }
    }
}

#[test]
fn attention_s_k_and_v_come_by_tma_into_their_buffers() {
    // Decode attention on sm_90: K (a transposed view) and V are copied
    // straight into the buffers wgmma reads, by TMA: two 4-d boxes of
    // 256 x 64 each a tile, on each buffer's own barrier (one arrival),
    // the first before the loop and each next once the product has read
    // the buffer; the barriers are invalidated after the loop.
    let rel = "tests/data/differential/bench/fmha_d128_f16_decode_64x256.tileir";
    let p = ptx(rel, true);
    assert_eq!(
        count(&p, "cp.async.bulk.tensor.4d.shared::cta.global"),
        8,
        "{p}"
    );
    assert_eq!(count(&p, ".hidden\t.param .align 64 .b8"), 2, "{p}");
    assert_eq!(count(&p, "prefetch.tensormap"), 2, "{p}");
    assert_eq!(count(&p, "mbarrier.init.shared.b64"), 2, "{p}");
    assert_eq!(count(&p, "mbarrier.arrive.expect_tx"), 4, "{p}");
    assert_eq!(count(&p, "mbarrier.inval.shared.b64"), 2, "{p}");
    assert_eq!(count(&p, "cp.async.cg"), 0, "{p}");
    // The switch gives the cp.async copies back.
    let p = ptx(rel, false);
    assert_eq!(count(&p, "cp.async.bulk.tensor"), 0);
    assert_eq!(count(&p, "mbarrier."), 0);
    assert!(count(&p, "cp.async.cg.shared.global") > 0);
    // On sm_100 mma.sync's ldmatrix reads the buffers in TMA's layout.
    let p = ptx_for(rel, Gpu::Sm100, true);
    assert_eq!(count(&p, "cp.async.bulk.tensor.4d"), 8);
    assert_eq!(count(&p, "cp.async.cg"), 0);
    // sm_120's shared memory holds K's buffer or V's, not both: they take
    // turns in the same bytes, copied by cp.async at the top of the body.
    let p = ptx_for(rel, Gpu::Sm120, true);
    assert_eq!(count(&p, "cp.async.bulk.tensor"), 0);
    // The 128x128 tiles' buffers fit side by side there: TMA, two loops.
    let causal = "tests/data/differential/bench/fmha_d128_f16_causal_128x128_ragged.tileir";
    let p = ptx_for(causal, Gpu::Sm120, true);
    assert_eq!(count(&p, "cp.async.bulk.tensor.4d"), 16);
    assert_eq!(count(&p, "mbarrier.init.shared.b64"), 4);
    // An accumulator of 128 registers a thread (64 x 256 in four warps):
    // on wgmma TMA prefetches the tiles all the same (a copy takes a few
    // coordinates); on mma.sync, whose next cp.async copies' addresses
    // would spill, they are copied at the top of the body.
    let clamped = "tests/data/differential/targeted/clamped_attention_f16.tileir";
    assert_eq!(count(&ptx(clamped, true), "cp.async.bulk.tensor.2d"), 8);
    let p = ptx_for(clamped, Gpu::Sm100, true);
    assert_eq!(count(&p, "cp.async.bulk.tensor"), 0);
}

#[test]
fn a_static_extent_is_a_constant_of_the_map() {
    // The H100 run's causal attention: its views' batch dimension is a
    // static 1. The maps of K and V keep it as a constant dim of the
    // callbacks (NVIDIA's leave it out), so TMA copies them too.
    let rel = "tests/data/differential/repro/fmha_d128_causal_128x128.tileir";
    for gpu in [Gpu::Sm90, Gpu::Sm100, Gpu::Sm120] {
        let p = ptx_for(rel, gpu, true);
        assert_eq!(count(&p, "cp.async.bulk.tensor.4d"), 16, "{gpu:?}");
    }
    let bytes = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap();
    let module = tileiras::bytecode::read(&bytes).unwrap();
    let options = Options {
        gpu: Gpu::Sm90,
        ..Default::default()
    };
    let plans = tileiras::lower::plan::plan_module(&module, &options).unwrap();
    let d: String = plans.iter().map(|p| p.dump(&module)).collect();
    assert_eq!(
        d.matches("(dims: arguments [constant 1, ").count(),
        4,
        "{d}"
    );
}

/// B of an odd row stride is not in the 16-byte units TMA copies: the
/// threads copy it beside TMA's copy of A, as NVIDIA's code copies such
/// an operand (loads into registers, stores into the stage's swizzled
/// layout). The full barriers count every thread and thread 0's
/// `expect_tx`; `wgmma` reads the stores through the async proxy, so on
/// sm_90 the readers fence the proxies after their wait, and on sm_100
/// (`ldmatrix` reads) the one fence is the readers' before TMA refills.
/// With the switch: no ring's barriers and no map.
#[test]
fn an_operand_tma_cannot_copy_is_copied_by_the_threads_beside_it() {
    let rel = "tests/data/differential/targeted/unaligned_b_matmul_f16.tileir";
    for gpu in [Gpu::Sm90, Gpu::Sm100] {
        let p = ptx_for(rel, gpu, true);
        // one map, A's
        assert_eq!(count(&p, ".hidden\t.param .align 64 .b8"), 1, "{p}");
        assert_eq!(count(&p, "prefetch.tensormap"), 1, "{p}");
        // two stages: full barriers of 256 threads and thread 0's
        // expect_tx, empty ones of 256
        assert_eq!(count(&p, "], 257;\n"), 2, "{p}");
        assert_eq!(count(&p, "], 256;\n"), 2, "{p}");
        let fills = count(&p, "mbarrier.arrive.expect_tx");
        assert_eq!(fills, 2, "{p}");
        assert_eq!(count(&p, "cp.async.bulk.tensor.2d"), 2 * fills, "{p}");
        // every thread's copy of B (128 elements, in four slices of two
        // 16-byte runs) and its arrival, in each fill
        assert_eq!(count(&p, "ld.global.b16"), 2 * 128, "{p}");
        assert_eq!(count(&p, "st.shared.v4.b32"), 2 * 16, "{p}");
        assert_eq!(count(&p, "mbarrier.arrive.shared.b64"), 3, "{p}");
        assert_eq!(count(&p, "fence.proxy.async.shared::cta"), 1, "{p}");
        assert_eq!(count(&p, "cp.async.cg"), 0);
        let off = ptx_for(rel, gpu, false);
        assert_eq!(count(&off, "cp.async.bulk.tensor"), 0, "{gpu:?}");
        assert!(!off.contains(".hidden"), "{gpu:?}");
    }
}

/// sm_120's 99 KiB holds no two stages of tf32's 128 x 256 x 64 tiles (96
/// KiB a set): the ring runs over K slices of 32, two a loop iteration, a
/// stage each (A one 128 x 32 box, B eight of 32 x 32), counted in 64 bits
/// so that the slices' count cannot overflow the loop's 32-bit bounds.
#[test]
fn sm_120_rings_too_large_for_two_stages_run_over_k_slices() {
    let rel = "tests/data/differential/bench/matmul_tf32_128x256x64.tileir";
    let p = ptx_for(rel, Gpu::Sm120, true);
    assert_eq!(count(&p, "], 1;\n"), 2, "{p}");
    let fills = count(&p, "mbarrier.arrive.expect_tx");
    assert_eq!(fills, 2, "{p}");
    assert_eq!(count(&p, "cp.async.bulk.tensor.2d"), 9 * fills, "{p}");
    // a slice's 16384 + 32768 bytes
    assert!(p.contains(", 49152;"), "{p}");
    assert!(p.contains("setp.lt.s64"), "{p}");
    let off = ptx_for(rel, Gpu::Sm120, false);
    assert_eq!(count(&off, "cp.async.bulk.tensor"), 0);
}
