//! The lowering plan: the decisions made before emission (warps, the engine
//! of every product and its own plan, the copies and pipelined loops),
//! asserted on the plan's text dump rather than on PTX; the shared-memory
//! scratch map the allocator leaves;
//! and `TILEIRAS_DEBUG_DUMP_PLAN`, which writes both next to the output.
use std::path::{Path, PathBuf};
use std::process::Command;

use tileiras::ir::OpId;
use tileiras::lower::emit::scratch::CONVERSION;
use tileiras::lower::plan::buffers::What;
use tileiras::lower::plan::conversions::How;
use tileiras::lower::plan::{plan_module, Plan};
use tileiras::lower::{lower_module_mapped, ScratchMap};
use tileiras::options::{Gpu, Options};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// The plan dump of the bytecode at `rel` (under tests/data) on `gpu`.
fn dump(rel: &str, gpu: Gpu) -> String {
    let bytes = std::fs::read(data(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let module = tileiras::bytecode::read(&bytes).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let options = Options {
        gpu,
        ..Default::default()
    };
    let plans = plan_module(&module, &options).unwrap_or_else(|e| panic!("{rel}: {e}"));
    plans.iter().map(|p| p.dump(&module)).collect()
}

/// The barriers of `map` (an entry of `m`), as the map says them.
fn described(m: &tileiras::ir::Module, map: &ScratchMap) -> Vec<String> {
    (map.barriers.iter())
        .map(|b| tileiras::lower::emit::scratch::map::describe(m, b))
        .collect()
}

/// The module at `rel` and its entries' scratch maps on `gpu`.
fn scratch(rel: &str, gpu: Gpu) -> (tileiras::ir::Module, Vec<ScratchMap>) {
    scratch_with(
        rel,
        &Options {
            gpu,
            ..Default::default()
        },
    )
}

/// [`scratch`] under `options`.
fn scratch_with(rel: &str, options: &Options) -> (tileiras::ir::Module, Vec<ScratchMap>) {
    let bytes = std::fs::read(data(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let module = tileiras::bytecode::read(&bytes).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let (_, _, maps) =
        lower_module_mapped(&module, options).unwrap_or_else(|e| panic!("{rel}: {e}"));
    (module, maps)
}

/// What the dump's `label: ...` lines say, in order.
fn said<'d>(dump: &'d str, label: &str) -> Vec<&'d str> {
    let prefix = format!("{label}: ");
    dump.lines()
        .filter_map(|l| l.trim().strip_prefix(prefix.as_str()))
        .collect()
}

/// The `engine:` lines of a dump.
fn engines(dump: &str) -> Vec<&str> {
    said(dump, "engine")
}

#[test]
fn a_large_matmul_runs_on_wgmma_on_sm_90_and_mma_sync_elsewhere() {
    let rel = "differential/bench/matmul_f16_128x256x64.tileir";
    let hopper = dump(rel, Gpu::Sm90);
    assert!(
        hopper.contains(": 8 warps (256 threads), one CTA"),
        "{hopper}"
    );
    assert_eq!(
        engines(&hopper),
        ["wgmma, 128x256x64 in 2 warpgroup(s) along M, f16 x f16 -> f32"],
        "{hopper}"
    );
    assert!(
        hopper.contains("lhs 128x64 f16, rhs 64x256 f16, result 128x256 f32"),
        "{hopper}"
    );
    for gpu in [Gpu::Sm80, Gpu::Sm100, Gpu::Sm120] {
        let d = dump(rel, gpu);
        let e = engines(&d);
        assert_eq!(e.len(), 1, "{d}");
        assert!(
            e[0].starts_with("mma.sync Half (m16n8k16), warps 2x4 of 8"),
            "{gpu}: {d}"
        );
    }
}

#[test]
fn attention_chains_stay_on_mma_sync_on_every_target() {
    // The chained products (S = Q·Kᵀ, O = P·V) multiply from registers,
    // where their warps hold A's fragments: mma.sync on sm_90 too.
    let rel = "differential/bench/fmha_d128_f16_causal_128x128_ragged.tileir";
    for gpu in [Gpu::Sm80, Gpu::Sm90, Gpu::Sm120] {
        let d = dump(rel, gpu);
        let e = engines(&d);
        assert_eq!(e.len(), 4, "two loops of two products: {d}");
        assert!(
            e.iter().all(|e| e.starts_with("mma.sync Half")),
            "{gpu}: {d}"
        );
        assert_eq!(d.matches("in a product chain").count(), 4, "{d}");
        // On sm_90 the rows-owning warps fill warpgroups: the products run
        // on wgmma with A from registers where B is copied directly.
        let on_wgmma = d.matches("on wgmma, A from registers").count();
        assert_eq!(on_wgmma, if gpu == Gpu::Sm90 { 4 } else { 0 }, "{gpu}: {d}");
    }
}

#[test]
fn decode_attention_splits_its_chain_over_warpgroups_on_wgmma() {
    // 64 rows in eight warps: the chain is split over warp pairs. On sm_90
    // each warpgroup takes half of S's columns, then half of P·V's K.
    let d = dump(
        "differential/bench/fmha_d128_f16_decode_64x256.tileir",
        Gpu::Sm90,
    );
    assert!(d.contains(": 8 warps (256 threads)"), "{d}");
    assert_eq!(
        d.matches("warpgroups split its columns, m64n128k16 each")
            .count(),
        1,
        "{d}"
    );
    assert_eq!(
        d.matches("warpgroups split its K, m64n128k16 each").count(),
        1,
        "{d}"
    );
    // K (transposed) and V come by TMA into the buffers wgmma reads.
    assert_eq!(
        d.matches("copied straight to shared memory by TMA").count(),
        2,
        "{d}"
    );
    assert_eq!(d.matches("swizzle B128, transposed;").count(), 1, "{d}");
    for gpu in [Gpu::Sm80, Gpu::Sm120] {
        let d = dump("differential/bench/fmha_d128_f16_decode_64x256.tileir", gpu);
        assert!(!d.contains("on wgmma"), "{gpu}: {d}");
        assert!(!d.contains("by TMA"), "{gpu}: {d}");
    }
}

#[test]
fn small_or_f32_products_run_on_fma_and_f64_on_its_own_mma() {
    let d = dump("differential/corpus/matmul_f32.tileir", Gpu::Sm80);
    assert_eq!(engines(&d), ["fma (CUDA cores)"], "{d}");
    let d = dump("differential/corpus/matmul_f64_operator.tileir", Gpu::Sm80);
    let e = engines(&d);
    assert_eq!(e.len(), 1, "{d}");
    assert!(e[0].starts_with("mma.sync F64 (m8n8k4)"), "{d}");
}

#[test]
fn an_entry_without_products_keeps_the_elementwise_warps() {
    let d = dump("lower/ops/masked_addf.tileir", Gpu::Sm90);
    assert!(d.contains(": 4 warps (128 threads), one CTA"), "{d}");
    assert!(engines(&d).is_empty(), "{d}");
    assert!(d.contains("accumulator registers per thread: 0"), "{d}");
}

#[test]
fn a_two_cta_cluster_is_planned_as_one() {
    let d = dump("differential/corpus/matmul_f16_cluster2.tileir", Gpu::Sm90);
    assert!(d.contains("a cluster of CTAs"), "{d}");
    let d = dump("differential/corpus/matmul_f16_cluster2.tileir", Gpu::Sm80);
    assert!(d.contains("one CTA"), "sm_80 has no clusters: {d}");
}

/// The dump's lines about copies and pipelined loops (staged A aside).
fn copies(dump: &str) -> Vec<&str> {
    dump.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("load at ") || l.starts_with("loop "))
        .filter(|l| !l.contains("staged before it"))
        .collect()
}

#[test]
fn a_matmul_loop_is_planned_pipelined_with_its_engines_ring() {
    let rel = "differential/bench/matmul_f16_128x128x64.tileir";
    let at = "loop 1 at loc(\"cutile/test/kernels/matmul.py\":79:4): pipelined, product 0 on";
    let ampere = dump(rel, Gpu::Sm80);
    assert_eq!(
        copies(&ampere),
        [format!(
            "{at} mma.sync, cp.async groups, up to 2 stages of 35840 bytes"
        )],
        "{ampere}"
    );
    let hopper = dump(rel, Gpu::Sm90);
    assert_eq!(
        copies(&hopper),
        [format!(
            "{at} wgmma, TMA and mbarriers, up to 4 stages of 32768 bytes"
        )],
        "{hopper}"
    );
    let hopper_cp_async = dump_with(
        rel,
        &Options {
            gpu: Gpu::Sm90,
            tma: false,
            ..Default::default()
        },
    );
    assert_eq!(
        copies(&hopper_cp_async),
        [format!(
            "{at} wgmma, cp.async and mbarriers, up to 4 stages of 32768 bytes"
        )],
        "{hopper_cp_async}"
    );
    // Emission places the ring the plan sized: the loop's one buffer.
    for gpu in [Gpu::Sm80, Gpu::Sm100, Gpu::Sm120] {
        let bytes = std::fs::read(data(rel)).unwrap();
        let module = tileiras::bytecode::read(&bytes).unwrap();
        let options = Options {
            gpu,
            ..Default::default()
        };
        let plans = plan_module(&module, &options).unwrap();
        let (&id, p) = plans[0].copies.pipelines.iter().next().expect("a pipeline");
        let (m, maps) = scratch(rel, gpu);
        let ring: Vec<_> = maps[0]
            .buffers
            .iter()
            .filter(|b| b.op == Some(id))
            .collect();
        // sm_80's cp.async ring is one buffer of stages; sm_100's and
        // sm_120's TMA ring its aligned sets, then its mbarriers.
        let got: Vec<i64> = ring.iter().map(|b| b.bytes).collect();
        let stages = p.ring.stages();
        let want = if gpu == Gpu::Sm80 {
            vec![stages * p.ring.stage_bytes()]
        } else {
            vec![stages * p.ring.stage_bytes() + 1024, 16 * stages]
        };
        assert_eq!(got, want, "{gpu}: {}", maps[0].dump(&m));
        assert_eq!(p.ring.claims(stages), want, "{gpu}");
    }
}

#[test]
fn attention_copies_k_and_v_straight_to_shared_memory() {
    let rel = "differential/bench/fmha_d128_f16_causal_128x128_ragged.tileir";
    for gpu in [Gpu::Sm80, Gpu::Sm90, Gpu::Sm100, Gpu::Sm120] {
        let d = dump(rel, gpu);
        let c = copies(&d);
        assert_eq!(c.len(), 4, "{gpu}: {d}");
        // The first iteration's copies start before the loop.
        let when = "its first copy before its loop, each next one once read";
        for (i, line) in c.iter().enumerate() {
            // From sm_90 on TMA copies them into the buffers wgmma or
            // ldmatrix reads: Kᵀ from a transposed map (its contiguous K
            // innermost).
            if gpu != Gpu::Sm80 {
                let transposed = if i % 2 == 0 { ", transposed" } else { "" };
                let how = format!(
                    "box [1, 1, 128, 64], swizzle B128{transposed}; 2 box(es), 32768 bytes on the buffer's own mbarrier, issued by thread 0); {when}"
                );
                assert!(
                    line.contains(&format!(
                        "B of product {i}, copied straight to shared memory by TMA"
                    )),
                    "{gpu}: {d}"
                );
                assert!(line.ends_with(&how), "{gpu}: {d}");
                continue;
            }
            // Kᵀ runs along K (its last tile dimension), V along N.
            let along = if i % 2 == 0 { 2 } else { 3 };
            assert!(
                line.ends_with(&format!(
                    "B of product {i}, copied straight to shared memory (cp.async, 8 elements a copy along tile dimension {along}); {when}"
                )),
                "{gpu}: {d}"
            );
        }
    }
}

#[test]
fn attention_stages_q_before_its_loop_where_registers_are_short() {
    // The causal 128x128 kernel: on sm_90 its products multiply on wgmma
    // and read Q through a descriptor from a swizzled buffer; on sm_120
    // (a lower register bound) Q goes into padded rows, where K and V are
    // not prefetched by TMA (which leaves no room for it there); on sm_80
    // it stays in registers. Emission places the buffer the plan sized.
    // The two loops (one location) are numbered.
    let rel = "differential/bench/fmha_d128_f16_causal_128x128_ragged.tileir";
    let staged = |d: &str| -> Vec<String> {
        d.lines()
            .map(str::trim)
            .filter(|l| l.contains("staged before it"))
            .map(str::to_string)
            .collect()
    };
    let at = "at loc(\"cutile/test/kernels/attention.py\":78:4)";
    for (gpu, form) in [
        (Gpu::Sm90, "swizzled K-major for wgmma (33792 bytes)"),
        (Gpu::Sm120, "in rows of 272 bytes (34816 bytes)"),
    ] {
        let d = dump(rel, gpu);
        assert_eq!(
            staged(&d),
            [(1, 0), (2, 2)].map(|(n, p)| format!(
                "loop {n} {at}: A of product {p} staged before it, {form}, where shared memory allows"
            )),
            "{gpu}: {d}"
        );
    }
    let ampere = dump(rel, Gpu::Sm80);
    assert!(staged(&ampere).is_empty(), "{ampere}");
    for (gpu, bytes) in [(Gpu::Sm90, 33792), (Gpu::Sm120, 34816)] {
        let options = Options {
            gpu,
            tma: gpu == Gpu::Sm90,
            ..Default::default()
        };
        let (m, maps) = scratch_with(rel, &options);
        let first = maps[0].buffers.first().expect("buffers");
        assert_eq!(first.bytes, bytes, "{gpu}: {}", maps[0].dump(&m));
        assert!(!first.in_loop, "{gpu}: {}", maps[0].dump(&m));
    }
    let d = dump(rel, Gpu::Sm120);
    assert_eq!(d.matches("has no room to stage the A").count(), 2, "{d}");
}

#[test]
fn a_batch_matmul_too_large_for_registers_streams_its_operands() {
    // cuTile's batch matmul as its tests launch it: on sm_80's mma.sync the
    // two operands are read slice by slice; on sm_100 two stages of its TMA
    // ring fit, on sm_120 two of its K slices; on sm_90's wgmma, TMA's ring
    // takes them (its three-dimensional tiles, one matrix of the batch, no
    // cp.async copy plan covers).
    let rel = "differential/bench/batch_matmul_f16_f16out_128x256x128.tileir";
    let ampere = dump(rel, Gpu::Sm80);
    let c = copies(&ampere);
    assert_eq!(c.len(), 2, "{ampere}");
    assert!(
        c.iter()
            .all(|l| l.ends_with("operand of product 0, streamed slice by slice")),
        "{ampere}"
    );
    let hopper = dump(rel, Gpu::Sm90);
    assert_eq!(
        copies(&hopper),
        ["loop 1 at loc(\"cutile/test/kernels/matmul.py\":162:4): pipelined, product 0 on wgmma, TMA and mbarriers, up to 2 stages of 98304 bytes"],
        "{hopper}"
    );
    assert_eq!(
        hopper.matches("by TMA: map of argument").count(),
        2,
        "{hopper}"
    );
    let consumer = dump(rel, Gpu::Sm120);
    assert_eq!(
        copies(&consumer),
        ["loop 1 at loc(\"cutile/test/kernels/matmul.py\":162:4): pipelined, product 0 on mma.sync, TMA and mbarriers, in 2 K slices of 64 a stage, up to 2 stages of 49152 bytes"],
        "{consumer}"
    );
    let blackwell = dump(rel, Gpu::Sm100);
    assert!(
        blackwell.contains(
            "pipelined, product 0 on mma.sync, TMA and mbarriers, up to 2 stages of 98304 bytes"
        ),
        "{blackwell}"
    );
    assert!(
        blackwell.contains("F16 elements, box [1, 128, 64]"),
        "{blackwell}"
    );
    assert!(!blackwell.contains("streamed"), "{blackwell}");
}

#[test]
fn the_dump_gate_writes_the_plan_next_to_the_output() {
    let rel = "differential/bench/matmul_f16_128x256x64.tileir";
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("k.ptx");
    let status = Command::new(env!("CARGO_BIN_EXE_tileiras"))
        .args(["--gpu-name=sm_90", "--emit=ptx", "-o"])
        .arg(&out)
        .arg(data(rel))
        .env("TILEIRAS_DEBUG_DUMP_PLAN", "")
        .status()
        .expect("run tileiras");
    assert!(status.success());
    let written = std::fs::read_to_string(tmp.path().join("k.dump.plan")).expect("plan dump");
    assert_eq!(written, dump(rel, Gpu::Sm90));
    let written = std::fs::read_to_string(tmp.path().join("k.dump.scratch")).expect("scratch map");
    let (m, maps) = scratch(rel, Gpu::Sm90);
    assert_eq!(written, maps.iter().map(|s| s.dump(&m)).collect::<String>());
    assert!(written.starts_with("scratch of "), "{written}");
    // Without the variable, no dump.
    let quiet = tmp.path().join("q.ptx");
    let status = Command::new(env!("CARGO_BIN_EXE_tileiras"))
        .args(["--gpu-name=sm_90", "--emit=ptx", "-o"])
        .arg(&quiet)
        .arg(data(rel))
        .env_remove("TILEIRAS_DEBUG_DUMP_PLAN")
        .status()
        .expect("run tileiras");
    assert!(status.success());
    assert!(!tmp.path().join("q.dump.plan").exists());
    assert!(!tmp.path().join("q.dump.scratch").exists());
}

#[test]
fn where_shared_memory_holds_k_or_v_v_takes_k_s_bytes() {
    // Decode attention, 64x256 tiles: K's and V's direct copies take
    // 69,632 bytes each. sm_120's 101,376 bytes hold one of them: V's
    // buffer lies over K's, a barrier before V's copy writes it (once
    // K's product has read it), and the entry stays below the two
    // buffers' sum.
    let rel = "differential/bench/fmha_d128_f16_decode_64x256.tileir";
    let (m, maps) = scratch(rel, Gpu::Sm120);
    let map = &maps[0];
    let loads: Vec<_> = map
        .buffers
        .iter()
        .filter(|b| b.bytes == 69632 && b.in_loop)
        .collect();
    assert_eq!(loads.len(), 2, "{}", map.dump(&m));
    let (k, v) = (loads[0], loads[1]);
    assert_eq!(k.offset, v.offset, "{}", map.dump(&m));
    assert!(!k.over_dead && v.over_dead, "{}", map.dump(&m));
    let before_v = format!(
        "before a write of bytes {}..{} by 'cuda_tile.load_view_tko' op at loc(",
        v.offset,
        v.offset + v.bytes,
    );
    assert!(
        described(&m, map).iter().any(|b| b.starts_with(&before_v)),
        "{}",
        map.dump(&m)
    );
    for b in [k, v] {
        let op = b.op.expect("claimed by an op");
        assert_eq!(
            m.ops[op].name(),
            "cuda_tile.load_view_tko",
            "{}",
            map.dump(&m)
        );
    }
    assert!(map.bytes < 2 * 69632, "{}", map.dump(&m));
    // sm_80's 166,912 bytes hold both: no buffer of the loop lies over
    // another, so the loop needs no barrier for it.
    let (m, maps) = scratch(rel, Gpu::Sm80);
    let map = &maps[0];
    assert!(
        map.buffers.iter().all(|b| !(b.in_loop && b.over_dead)),
        "{}",
        map.dump(&m)
    );
    assert!(map.bytes >= 2 * 69632, "{}", map.dump(&m));
}

#[test]
fn outside_loops_scratch_reuses_the_lowest_free_bytes() {
    // Attention's epilogue (O / l, after the loop) stages its conversion
    // over the loop's dead buffers rather than above them; the entry's
    // size is the highest byte any buffer reached.
    let rel = "differential/bench/fmha_d128_f16_decode_64x256.tileir";
    for gpu in [Gpu::Sm80, Gpu::Sm90, Gpu::Sm120] {
        let (m, maps) = scratch(rel, gpu);
        let map = &maps[0];
        let last = map.buffers.last().expect("buffers");
        assert!(!last.in_loop && last.over_dead, "{gpu}: {}", map.dump(&m));
        assert!(
            last.offset + last.bytes < map.bytes,
            "{gpu}: {}",
            map.dump(&m)
        );
        let top = map
            .buffers
            .iter()
            .map(|b| b.offset + b.bytes)
            .max()
            .unwrap_or(0);
        assert_eq!(map.bytes, top, "{gpu}: {}", map.dump(&m));
    }
}

/// The barriers the analysis of the declared accesses placed in the
/// first entry of `rel` for `gpu`, as its scratch map says them.
fn barriers(rel: &str, gpu: Gpu) -> Vec<String> {
    let (m, maps) = scratch(rel, gpu);
    described(&m, &maps[0])
}

/// How many of `barriers` come before a loop's next iteration.
fn next_iterations(barriers: &[String]) -> usize {
    (barriers.iter())
        .filter(|b| *b == "before the next iteration of a loop")
        .count()
}

#[test]
fn a_loop_body_ends_with_a_barrier_only_where_the_next_iteration_rewrites_what_it_read() {
    // cuTile's matmul on sm_80 and sm_120: its product stages K slices in
    // two sets; the next iteration's first slice goes into the set the
    // last slice did not read, and a barrier follows it before the other
    // set is written: no barrier ends the body.
    let matmul = "differential/bench/matmul_bf16_128x256x64.tileir";
    for gpu in [Gpu::Sm80, Gpu::Sm120] {
        let b = barriers(matmul, gpu);
        assert_eq!(next_iterations(&b), 0, "{gpu}: {b:#?}");
    }
    // Its causal attention on sm_120 without TMA: each iteration copies K
    // and V at its start, over what the last iteration's products read:
    // each of the two loops' bodies ends with a barrier. Where the next
    // copies are prefetched (sm_80, and sm_120 by TMA) they are issued
    // within the body, after the product that read the buffer, each after
    // its barrier, and no body ends with one.
    let att = "differential/bench/fmha_d128_f16_causal_128x128_ragged.tileir";
    let no_tma = Options {
        gpu: Gpu::Sm120,
        tma: false,
        ..Default::default()
    };
    let (m, maps) = scratch_with(att, &no_tma);
    let b = described(&m, &maps[0]);
    assert_eq!(next_iterations(&b), 2, "{b:#?}");
    for gpu in [Gpu::Sm80, Gpu::Sm120] {
        let b = barriers(att, gpu);
        assert_eq!(next_iterations(&b), 0, "{gpu}: {b:#?}");
    }
    // cuTile's f32 attention with a ragged K (FMA products, conversions):
    // every barrier stands before a read of bytes just written.
    let b = barriers("repro/fmha_kernel_ragged_k.tileir", Gpu::Sm80);
    assert!(!b.is_empty(), "{b:#?}");
    assert!(b.iter().all(|b| b.starts_with("before a read")), "{b:#?}");
}

#[test]
fn outside_loops_no_barrier_follows_a_products_last_reads() {
    // Outside loops nothing rewrites a product's buffers: no barrier
    // follows its last reads.
    let bytes = std::fs::read(data("lower/ops/mma_128x128x32_f16.tileir")).unwrap();
    let module = tileiras::bytecode::read(&bytes).unwrap();
    let options = Options {
        gpu: Gpu::Sm80,
        ..Default::default()
    };
    let (ptx, _, _) = lower_module_mapped(&module, &options).unwrap();
    let text = ptx.to_text();
    let last_mma = text
        .rfind("mma.sync")
        .expect("the product multiplies on mma.sync");
    assert!(text[..last_mma].contains("bar.sync"), "{text}");
    assert!(!text[last_mma..].contains("bar.sync"), "{text}");
}

#[test]
fn the_scratch_map_names_the_layout_conversions() {
    // cuTile's matmul on sm_80: the loop's ring, then the epilogue's
    // conversion of the accumulator for the f16 cast, over the ring's
    // bytes once the loop is done. The ring's barrier after the loop
    // orders its reads before the conversion's writes: the only barrier
    // the analysis places is the conversion's, before its reads.
    let (m, maps) = scratch("differential/bench/matmul_f16_128x128x64.tileir", Gpu::Sm80);
    let map = &maps[0];
    let said: Vec<(Option<&str>, String)> = map
        .buffers
        .iter()
        .map(|b| (b.purpose, b.op.map_or(String::new(), |op| m.ops[op].name())))
        .collect();
    assert_eq!(
        said,
        [
            (None, "cuda_tile.for".to_string()),
            (Some("a layout conversion"), "cuda_tile.ftof".to_string())
        ],
        "{}",
        map.dump(&m)
    );
    assert!(
        map.dump(&m)
            .contains("at 0, for a layout conversion in 'cuda_tile.ftof' op at loc("),
        "{}",
        map.dump(&m)
    );
    assert_eq!(
        barriers("differential/bench/matmul_f16_128x128x64.tileir", Gpu::Sm80),
        ["before a read of bytes 0..65536 by 'cuda_tile.ftof' op at loc(\"cutile/test/kernels/matmul.py\":96:18)"]
    );
}

#[test]
fn each_engine_plans_the_buffers_its_product_stages_its_operands_in() {
    // cuTile's batch matmuls: the plan gives each product's K slices and
    // the bytes of a set of its buffers; emission places the first slice
    // that fits, as many sets as the plan wants (wgmma's region one 1024
    // bytes more, to align it). Without TMA, which pipelines sm_90's
    // f16 loop on a ring instead.
    let f16 = "differential/bench/batch_matmul_f16_f16out_128x256x128.tileir";
    let f8 = "differential/bench/batch_matmul_f8e4m3_256x256x128.tileir";
    for (rel, gpu, engine, line, placed) in [
        (
            f16,
            Gpu::Sm80,
            "mma.sync",
            "A and B in padded rows, K slices of 32 (27136 bytes a set) or 16 (14592), \
             the longest that fits; up to 2 sets, 16-byte aligned",
            2 * 27136,
        ),
        (
            f16,
            Gpu::Sm90,
            "wgmma",
            "A and B in swizzled rows, K 128 (98304 bytes a set); up to 2 sets, 1024-byte aligned",
            2 * 98304 + 1024,
        ),
        (
            f8,
            Gpu::Sm80,
            "fma",
            "A and B in padded rows, K slices of 128 (65536 bytes a set), 64 (32768), \
             32 (16384), 16 (8192), 8 (4096), 4 (2048), 2 (1024) or 1 (512), \
             the longest that fits; one set, 16-byte aligned",
            65536,
        ),
        (
            f8,
            Gpu::Sm90,
            "mma.sync",
            "A and B in padded rows, K slices of 128 (73728 bytes a set), 64 (40960) \
             or 32 (24576), the longest that fits; one set, 16-byte aligned",
            73728,
        ),
    ] {
        let options = Options {
            gpu,
            tma: false,
            ..Default::default()
        };
        let d = dump_with(rel, &options);
        assert!(engines(&d)[0].starts_with(engine), "{gpu}: {d}");
        assert_eq!(said(&d, "own operand buffers"), [line], "{gpu}: {d}");
        let (m, maps) = scratch_with(rel, &options);
        let bytes: i64 = maps[0]
            .buffers
            .iter()
            .filter(|b| {
                b.purpose.is_none() && b.op.is_some_and(|op| m.ops[op].name() == "cuda_tile.mmaf")
            })
            .map(|b| b.bytes)
            .sum();
        assert_eq!(bytes, placed, "{gpu}: {}", maps[0].dump(&m));
    }
    // Attention's rows-owning warps keep A in registers: only B is staged.
    let d = dump(
        "differential/bench/fmha_d128_f16_causal_128x128_ragged.tileir",
        Gpu::Sm80,
    );
    let own = said(&d, "own operand buffers");
    assert_eq!(own.len(), 4, "{d}");
    assert!(
        own.iter().all(|l| l
            .starts_with("B (A in registers) in padded rows, K slices of 128 (34816 bytes a set)")),
        "{d}"
    );
}

/// The bytecode files under `dir` (in tests/data), sorted.
fn tileir_files(dir: &str) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(data(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tileir"))
        .map(|n| format!("{dir}/{n}"))
        .collect();
    files.sort();
    files
}

/// Calls `check` with the module, each entry's plan and scratch map, and a
/// description (file, target, plan and map dumps), for every bytecode file
/// of cuTile's kernels (the bench and the test suite's) on sm_80, sm_90 and
/// sm_120 that lowers.
fn each_plan_and_map(mut check: impl FnMut(&Plan, &ScratchMap, &dyn Fn() -> String)) {
    let files = [
        tileir_files("differential/bench"),
        tileir_files("differential/cutile"),
    ];
    for rel in files.concat() {
        for gpu in [Gpu::Sm80, Gpu::Sm90, Gpu::Sm120] {
            let bytes = std::fs::read(data(&rel)).expect("read");
            let module = tileiras::bytecode::read(&bytes).expect("bytecode");
            let options = Options {
                gpu,
                ..Default::default()
            };
            let plans = plan_module(&module, &options).expect("plan");
            let (_, _, maps) = lower_module_mapped(&module, &options)
                .unwrap_or_else(|e| panic!("{rel} on {gpu}: {e}"));
            for (plan, map) in plans.iter().zip(&maps) {
                let context = || {
                    format!(
                        "{rel} on {gpu}:\n{}{}",
                        plan.dump(&module),
                        map.dump(&module)
                    )
                };
                check(plan, map, &context);
            }
        }
    }
}

#[test]
fn the_planned_conversions_are_the_ones_made_through_shared_memory() {
    // Every conversion the plan sends through shared memory is a buffer of
    // the scratch map, claimed for its op, of the plan's bytes (fewer where
    // it goes a window at a time), unless the plan makes it only where
    // there is room (a load's move from the rows it reads); and every
    // conversion buffer of an op all of whose conversions the plan covers
    // is one the plan listed.
    let mut shared = 0;
    each_plan_and_map(|plan, map, context| {
        let planned: Vec<(OpId, i64, bool)> = plan
            .conversions
            .list
            .iter()
            .filter_map(|c| match c.how {
                How::Shared { bytes } => Some((c.op, bytes, c.where_room)),
                _ => None,
            })
            .collect();
        let made: Vec<(OpId, i64)> = map
            .buffers
            .iter()
            .filter(|b| b.purpose == Some(CONVERSION))
            .filter_map(|b| b.op.map(|op| (op, b.bytes)))
            .filter(|(op, _)| plan.conversions.whole.contains(op))
            .collect();
        for &(op, bytes, where_room) in &planned {
            let made_it = made.iter().any(|&(o, b)| o == op && b <= bytes);
            assert!(where_room || made_it, "{}", context());
        }
        for &(op, bytes) in &made {
            let listed = planned.iter().any(|&(o, b, _)| o == op && bytes <= b);
            assert!(listed, "{}", context());
        }
        shared += planned.len();
    });
    assert!(shared >= 10, "{shared} conversions through shared memory");
}

#[test]
fn the_planned_op_buffers_are_the_ones_claimed() {
    // The movement ops', reductions', scans' and atomics' own buffers the
    // plan lists are the scratch map's buffers of those ops, byte for byte,
    // and they claim no other; a product, a load copied straight to its
    // product or a loop claims only buffers of the sizes the plan lists
    // for it (which of them, if any, by the room left).
    let mut listed = 0;
    each_plan_and_map(|plan, map, context| {
        let planned: Vec<(OpId, i64, bool)> = plan
            .buffers
            .list
            .iter()
            .filter(|b| !matches!(b.what, What::Conversion(_)))
            .map(|b| (b.op, b.bytes, b.what.by_room()))
            .collect();
        let claimed: Vec<(OpId, i64)> = map
            .buffers
            .iter()
            .filter(|b| b.purpose.is_none())
            .filter_map(|b| b.op.map(|op| (op, b.bytes)))
            .filter(|(op, _)| plan.buffers.whole.contains(op))
            .collect();
        for &(op, bytes, by_room) in &planned {
            let claimed_it = claimed.contains(&(op, bytes));
            assert!(by_room || claimed_it, "{:?} {}", (op, bytes), context());
        }
        for &(op, bytes) in &claimed {
            let listed = planned.iter().any(|&(o, b, _)| (o, b) == (op, bytes));
            assert!(listed, "{:?} {}", (op, bytes), context());
        }
        listed += planned.len();
    });
    assert!(listed >= 10, "{listed} op buffers");
}

#[test]
fn the_dump_says_which_conversions_and_op_buffers_go_through_shared_memory() {
    // Attention's epilogue (O / l): l broadcast to O's rows, then O moved
    // into the division's layout, both through shared memory; the plan
    // says so, with the bytes the scratch map's buffers have.
    let rel = "differential/bench/fmha_d128_f16_causal_128x128_ragged.tileir";
    let d = dump(rel, Gpu::Sm90);
    assert_eq!(
        said(&d, "conversions"),
        ["2 (0 by permuting registers, 0 recomputed, 0 by shuffles, 2 through shared memory)"],
        "{d}"
    );
    let at = "loc(\"cutile/test/kernels/attention.py\":126:10)";
    for (op, bytes) in [("broadcast", 512), ("divf", 65536)] {
        let line =
            format!("'cuda_tile.{op}' op at {at}: operand 0 through shared memory ({bytes} bytes)");
        assert!(d.lines().any(|l| l.trim() == line), "{line}\n{d}");
        let (m, maps) = scratch(rel, Gpu::Sm90);
        let claimed = maps[0].buffers.iter().any(|b| {
            b.bytes == bytes
                && b.purpose == Some(CONVERSION)
                && b.op
                    .is_some_and(|o| m.ops[o].name() == format!("cuda_tile.{op}"))
        });
        assert!(claimed, "{}", maps[0].dump(&m));
    }
    // A transpose writes its 128x64 f16 tile and reads it back permuted.
    let d = dump(
        "differential/cutile/permute_tile_2d_explicit_axes_f16_function.tileir",
        Gpu::Sm80,
    );
    let buffers: Vec<&str> = d
        .lines()
        .filter(|l| {
            l.trim_start()
                .starts_with("buffer of 'cuda_tile.permute' op")
        })
        .collect();
    assert_eq!(buffers.len(), 1, "{d}");
    assert!(
        buffers[0].ends_with("its tile rearranged, 16384 bytes, 16-byte aligned"),
        "{d}"
    );
}

#[test]
fn the_plan_places_the_buffers_where_emission_claims_them() {
    // The plan places every buffer of every entry, and emission claims
    // them claim for claim (the op, the size) where the plan puts them:
    // the scratch map is the placement, and the entry's size the plan's.
    // Products staging their operands, rings, staged A operands, direct B
    // copies and their products, split sums, conversion windows, values
    // recomputed.
    let (mut placed, mut claims) = (0, 0);
    each_plan_and_map(|plan, map, context| {
        let a = match &plan.placement {
            Ok(a) => a,
            Err(u) => panic!("not placed ({}): {}", u.why, context()),
        };
        placed += 1;
        claims += a.claims.len();
        let planned: Vec<_> = (a.claims.iter())
            .map(|c| (c.op, c.bytes, c.offset))
            .collect();
        let made: Vec<_> = (map.buffers.iter())
            .map(|b| (b.op, b.bytes, b.offset))
            .collect();
        assert_eq!(planned, made, "{}", context());
        assert_eq!(a.bytes, map.bytes, "{}", context());
    });
    eprintln!("{placed} entries placed by the plan, {claims} buffers");
    assert!(placed > 0 && claims > 0);
    // A layer norm on sm_90: its reduction's partial results, then the
    // conversions of a value a multiply takes twice, over them once they
    // are dead, then a reshape's over both.
    let d = dump("differential/corpus/layernorm_rows_f32.tileir", Gpu::Sm90);
    for line in [
        "placement: 16384 bytes, 4 buffers",
        "128 bytes at 0: partial results across warps, for 'cuda_tile.reduce' op",
        "8192 bytes at 0: an operand's layout conversion, for 'cuda_tile.mulf' op",
        "8192 bytes at 8192: an operand's layout conversion, for 'cuda_tile.mulf' op",
        "32 bytes at 0: an operand's layout conversion, for 'cuda_tile.reshape' op",
    ] {
        assert!(d.contains(line), "no line {line:?} in\n{d}");
    }
    // A random program recomputing a reshape for three users: each time
    // the reshape converts its operand again, for itself.
    let d = dump("lower/random/p012.tileirbc", Gpu::Sm80);
    assert!(d.contains("placement: 2048 bytes, 7 buffers"), "{d}");
    let again = "8 bytes at 0: an operand's layout conversion, for 'cuda_tile.reshape' op";
    assert_eq!(d.matches(again).count(), 4, "{d}");
    // cuTile's causal attention on sm_90: Q staged before the first loop
    // for the rest of the entry, each loop's prefetched K and V buffers
    // above it (the second loop's on the first's bytes), the epilogue's
    // conversions over them.
    let d = dump(
        "differential/bench/fmha_d128_f16_causal_128x128_ragged.tileir",
        Gpu::Sm90,
    );
    let at = "at loc(\"cutile/test/kernels/attention.py\":78:4)";
    for line in [
        "placement: 101376 bytes, 7 buffers".to_string(),
        format!("33792 bytes at 0: an A operand staged, for 'cuda_tile.for' op {at}"),
        format!(
            "33792 bytes at 67584: a B operand copied straight in, for 'cuda_tile.for' op {at}"
        ),
        "65536 bytes at 33792: an operand's layout conversion, for 'cuda_tile.divf' op".to_string(),
    ] {
        assert!(d.contains(&line), "no line {line:?} in\n{d}");
    }
}

#[test]
fn the_dump_says_what_the_plan_chose_by_the_room_left() {
    // Each choice by the room left, on cuTile's kernels: a product's K
    // slices and sets (sm_80), a pipelined loop's stages (sm_90), a
    // conversion a window at a time (sm_120), attention's staged Q and
    // prefetched K and V (sm_90).
    let chosen = |rel: &str, gpu: Gpu| -> Vec<String> {
        let d = dump(rel, gpu);
        let from = d
            .find("  chosen by the room left:\n")
            .map_or(d.len(), |i| i);
        d[from..]
            .lines()
            .skip(1)
            .map(|l| l.trim().to_string())
            .collect()
    };
    let matmul = "differential/bench/matmul_bf16_128x256x64.tileir";
    let at =
        |line: u32, col: u32| format!("at loc(\"cutile/test/kernels/matmul.py\":{line}:{col})");
    assert_eq!(
        chosen(matmul, Gpu::Sm80),
        [format!(
            "'cuda_tile.mmaf' op {}: K slices of 32, two sets",
            at(92, 22)
        )]
    );
    assert_eq!(
        chosen(matmul, Gpu::Sm90),
        [format!(
            "'cuda_tile.for' op {}: a ring of 2 stages",
            at(79, 4)
        )]
    );
    // sm_120: its TMA ring takes two stages of the 99 KiB (the stage
    // budget holds none of them).
    assert_eq!(
        chosen(matmul, Gpu::Sm120),
        [
            format!("'cuda_tile.for' op {}: a ring of 2 stages", at(79, 4)),
            format!(
                "'cuda_tile.ftof' op {}: operand 0 converted 64 along dimension 0 at a time",
                at(96, 18)
            ),
        ]
    );
    let attention = chosen(
        "differential/bench/fmha_d128_f16_causal_128x128_ragged.tileir",
        Gpu::Sm90,
    );
    let loc =
        |line: u32, col: u32| format!("at loc(\"cutile/test/kernels/attention.py\":{line}:{col})");
    let (k, v) = (loc(80, 12), loc(117, 12));
    assert_eq!(
        attention,
        [
            format!(
                "'cuda_tile.for' op {}: stages the A of 'cuda_tile.mmaf' op {}",
                loc(78, 4),
                loc(87, 13)
            ),
            format!("'cuda_tile.load_view_tko' op {k}: copied first before its loop"),
            format!("'cuda_tile.load_view_tko' op {v}: copied first before its loop"),
            format!("'cuda_tile.load_view_tko' op {k}: copied first before its loop"),
            format!("'cuda_tile.load_view_tko' op {v}: copied first before its loop"),
        ]
    );
}

#[test]
fn a_gathers_and_a_scatters_indices_are_planned_conversions() {
    // A kernel that gathers rows by an index tile and scatters them back:
    // each access wants its index tile in its own layout sliced to the
    // gathered dimension, the gather's by shuffles, the scatter's by
    // recomputing the index tile (an iota plus an offset). Emission
    // follows these entries (a conversion made where none is planned is an
    // internal error), so the kernel lowering shows it follows them.
    let rel = "differential/corpus/adv_index_rows_f32.tileir";
    let module = tileiras::bytecode::read(&std::fs::read(data(rel)).unwrap()).unwrap();
    let options = Options {
        gpu: Gpu::Sm80,
        ..Default::default()
    };
    let plans = plan_module(&module, &options).expect("plan");
    let indices: Vec<(String, How)> = (plans[0].conversions.list.iter())
        .filter(|c| {
            let op = &module.ops[c.op];
            op.operand_group("index").contains(&c.value)
        })
        .map(|c| (module.ops[c.op].name().to_string(), c.how))
        .collect();
    assert_eq!(
        indices,
        [
            ("cuda_tile.load_view_tko".to_string(), How::Shuffle),
            ("cuda_tile.store_view_tko".to_string(), How::Recompute),
        ],
        "{}",
        plans[0].dump(&module)
    );
    lower_module_mapped(&module, &options).expect("lowers");
}

#[test]
fn a_buffer_over_bytes_still_read_waits_for_a_barrier_before_its_first_write() {
    // The analysis of the declared accesses puts a barrier before a
    // buffer's first write only where its bytes may still be read.
    let has = |b: &[String], want: &str| b.iter().any(|l| l.starts_with(want));
    // A layer norm on sm_90: the multiply's first conversion lies over the
    // reduction's partial results, the second above them.
    let b = barriers("differential/corpus/layernorm_rows_f32.tileir", Gpu::Sm90);
    let mulf = "by 'cuda_tile.mulf' op at loc(\"kernels.py\":1620:17)";
    assert!(
        has(&b, &format!("before a write of bytes 0..8192 {mulf}")),
        "{b:#?}"
    );
    assert!(!has(&b, "before a write of bytes 8192..16384"), "{b:#?}");
    // A sum finished by an atomic: the atomic's buffer lies on the
    // reduction's, but the barrier its token orders it with comes first.
    let b = barriers(
        "corpus/global_sum_atomic_f32/global_sum_atomic_f32.v13_1.tileir",
        Gpu::Sm90,
    );
    assert!(!b.iter().any(|l| l.starts_with("before a write")), "{b:#?}");
    // cuTile's decode attention on sm_90: the split sum after the loop
    // lies on the loop's reductions' bytes, but the barrier after the
    // product reading V (before its next copy) came after their reads, so
    // only its later rounds wait (each for the last one's reads); the
    // epilogue's division converts over the broadcast's bytes, which it
    // must wait for.
    let b = barriers(
        "differential/bench/fmha_d128_f16_decode_64x256.tileir",
        Gpu::Sm90,
    );
    let writes: Vec<&str> = (b.iter())
        .filter(|l| l.starts_with("before a write"))
        .filter_map(|l| l.split_once(" op at loc(").map(|(w, _)| w))
        .collect();
    let split = "before a write of bytes 150528..166912 by 'cuda_tile.for'";
    let divf = "before a write of bytes 17408..50176 by 'cuda_tile.divf'";
    // In the loop, K and V come by TMA, whose copies' own barrier orders
    // the last reads of their buffers before the next copy: the analysis
    // places none there.
    assert_eq!(writes, [split, split, split, divf], "{b:#?}");
    // By cp.async, V's next copy (issued at the body's end, the loop
    // lowering it) waits for the analysis' barrier after the product's
    // reads of V; K's (issued at the product reading V) comes after the
    // reductions' barriers, which already follow the product's reads of K.
    let no_tma = Options {
        gpu: Gpu::Sm90,
        tma: false,
        ..Default::default()
    };
    let (m, maps) = scratch_with(
        "differential/bench/fmha_d128_f16_decode_64x256.tileir",
        &no_tma,
    );
    let b = described(&m, &maps[0]);
    let writes: Vec<&str> = (b.iter())
        .filter(|l| l.starts_with("before a write"))
        .filter_map(|l| l.split_once(" op at loc(").map(|(w, _)| w))
        .collect();
    let next_v = "before a write of bytes 83968..150528 by 'cuda_tile.for'";
    assert_eq!(writes, [next_v, split, split, split, divf], "{b:#?}");
}

/// The plan dump of the bytecode at `rel` under `options`.
fn dump_with(rel: &str, options: &Options) -> String {
    let bytes = std::fs::read(data(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let module = tileiras::bytecode::read(&bytes).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let plans = plan_module(&module, options).unwrap_or_else(|e| panic!("{rel}: {e}"));
    plans.iter().map(|p| p.dump(&module)).collect()
}

/// cuTile's sm_90 matmul takes its operands by TMA, in NVIDIA's boxes (its
/// PTX: one 128x64 box of A and two 64x64 boxes of B a stage, 16384
/// bytes each, from maps of arguments 0 and 5); with TMA switched off
/// (`TILEIRAS_NO_TMA`), for Windows hosts (whose host callbacks are not
/// written) and on targets whose products run on `mma.sync`, the ring is
/// filled by `cp.async`.
#[test]
fn ring_operands_come_by_tma_where_the_switch_allows() {
    let rel = "differential/corpus/matmul_f16_tma.tileir";
    let on = |options: &Options| dump_with(rel, options);
    // Windows hosts get callbacks too, so TMA as well.
    let d = on(&Options {
        gpu: Gpu::Sm90,
        ..Default::default()
    });
    let windows = on(&Options {
        gpu: Gpu::Sm90,
        host_os: tileiras::HostOs::Windows,
        ..Default::default()
    });
    assert_eq!(d, windows);
    assert!(d.contains("product 0 on wgmma, TMA and mbarriers"), "{d}");
    assert!(
        d.contains(
            "A by TMA: map of argument 0 (dims: arguments [1, 2], strides: arguments [3]), \
             F16 elements, box [128, 64], swizzle B128; 1 box(es) a stage, 16384 bytes"
        ),
        "{d}"
    );
    assert!(
        d.contains(
            "B by TMA: map of argument 5 (dims: arguments [6, 7], strides: arguments [8]), \
             F16 elements, box [64, 64], swizzle B128; 2 box(es) a stage, 16384 bytes"
        ),
        "{d}"
    );
    let d = on(&Options {
        gpu: Gpu::Sm90,
        tma: false,
        ..Default::default()
    });
    assert!(
        d.contains("product 0 on wgmma, cp.async and mbarriers"),
        "{d}"
    );
    assert!(!d.contains("by TMA"), "{d}");
    let d = on(&Options {
        gpu: Gpu::Sm80,
        ..Default::default()
    });
    assert!(!d.contains("TMA"), "{d}");
    // The mma.sync rings of sm_100 and sm_120: the same maps and boxes,
    // two stages of 32768 bytes; cp.async groups with TMA off.
    for gpu in [Gpu::Sm100, Gpu::Sm120] {
        let d = on(&Options {
            gpu,
            ..Default::default()
        });
        assert!(
            d.contains("product 0 on mma.sync, TMA and mbarriers, up to 2 stages of 32768 bytes"),
            "{d}"
        );
        assert!(
            d.contains("A by TMA: map of argument 0 (dims: arguments [1, 2], strides: arguments [3]), F16 elements, box [128, 64], swizzle B128; 1 box(es)"),
            "{d}"
        );
        assert!(
            d.contains("B by TMA: map of argument 5 (dims: arguments [6, 7], strides: arguments [8]), F16 elements, box [64, 64], swizzle B128; 2 box(es)"),
            "{d}"
        );
        let d = on(&Options {
            gpu,
            tma: false,
            ..Default::default()
        });
        assert!(d.contains("product 0 on mma.sync, cp.async groups"), "{d}");
        assert!(!d.contains("TMA"), "{d}");
    }
}

/// sm_90's tf32 and 8-bit products read B K-major only: the dump says the
/// ring's B is copied as memory holds it and transposed by the threads,
/// with both copies' maps (A's and B's rounding to tf32 where the bytecode
/// rounds them); with TMA off there is no ring.
#[test]
fn a_transposing_wgmma_ring_says_so() {
    let rel = "differential/corpus/matmul_tf32.tileir";
    let d = dump(rel, Gpu::Sm90);
    assert!(
        d.contains(
            "pipelined, product 0 on wgmma, TMA and mbarriers, B transposed K-major by the threads, up to 4 stages of 24576 bytes"
        ),
        "{d}"
    );
    assert_eq!(d.matches("F32 elements rounded to tf32").count(), 2, "{d}");
    let d = dump("differential/corpus/matmul_i8_i32.tileir", Gpu::Sm90);
    assert!(d.contains("B transposed K-major by the threads"), "{d}");
    assert!(!d.contains("rounded to tf32"), "{d}");
    let off = dump_with(
        rel,
        &Options {
            gpu: Gpu::Sm90,
            tma: false,
            ..Default::default()
        },
    );
    assert!(!off.contains("pipelined"), "{off}");
}

/// A ring whose B TMA cannot copy (an odd row stride) says that TMA
/// copies A and the threads copy B; with TMA off it has no ring, as
/// before (its B copies in no aligned chunks).
#[test]
fn a_ring_says_which_operand_the_threads_copy() {
    let rel = "differential/targeted/unaligned_b_matmul_f16.tileir";
    for gpu in [Gpu::Sm90, Gpu::Sm100] {
        let d = dump(rel, gpu);
        assert!(d.contains("TMA and mbarriers, up to 2 stages"), "{d}");
        assert_eq!(
            d.matches("    A by TMA: map of argument 0").count(),
            1,
            "{d}"
        );
        // B, 128 x 256 f16 over 256 threads: slices of 32 rows, 64 bytes
        // a thread
        assert_eq!(
            d.matches("    B by the threads: loaded into registers and stored into the stage in 4 slice(s) of 32 rows").count(),
            1,
            "{d}"
        );
        let off = dump_with(
            rel,
            &Options {
                gpu,
                tma: false,
                ..Default::default()
            },
        );
        assert!(!off.contains("pipelined"), "{off}");
    }
}

/// Where two stages of whole tiles do not fit (sm_120's 99 KiB), the ring
/// copies and multiplies each iteration's tiles in K slices, a stage each,
/// the fewest that fit: TMA's boxes are the slice's, and the plan says so.
#[test]
fn a_ring_too_large_for_two_stages_takes_k_slices() {
    for (name, line, boxes) in [
        (
            "bench/matmul_tf32_128x256x64",
            "in 2 K slices of 32 a stage, up to 2 stages of 49152 bytes",
            ["box [128, 32]", "box [32, 32]"],
        ),
        (
            "targeted/unaligned_b_matmul_f16",
            "in 2 K slices of 64 a stage, up to 2 stages of 49152 bytes",
            ["box [128, 64]", "2 slice(s) of 32 rows"],
        ),
    ] {
        let d = dump(&format!("differential/{name}.tileir"), Gpu::Sm120);
        assert!(d.contains(line), "{name}: {d}");
        for b in boxes {
            assert!(d.contains(b), "{name}: {b}: {d}");
        }
        // sm_90's wgmma ring of the tf32 tiles (B transposed by the
        // threads) takes K slices too
        if name.contains("tf32") {
            let d = dump(&format!("differential/{name}.tileir"), Gpu::Sm90);
            assert!(
                d.contains("B transposed K-major by the threads, in 2 K slices of 32 a stage, up to 2 stages of 81920 bytes"),
                "{name}: {d}"
            );
        }
        // sm_100's shared memory holds two stages of the whole tiles
        let d = dump(&format!("differential/{name}.tileir"), Gpu::Sm100);
        assert!(!d.contains("a stage, up to"), "{name}: {d}");
        assert!(d.contains("TMA and mbarriers, up to"), "{name}: {d}");
    }
}
