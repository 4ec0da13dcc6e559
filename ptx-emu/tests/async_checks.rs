//! The strict checks of asynchronous code (`ptx_emu::AsyncChecks`) on
//! small kernels: each correct kernel runs clean, and each one with a
//! fence, wait or arrive taken out (or a count changed) is reported with
//! its instruction and thread.

use ptx_emu::{bytes, Device, ErrorKind, LaunchConfig, Module, Param, TensorMap};

/// A 128-thread kernel around `body`: `%rd0` is the output buffer, `%rd1`
/// the tensor map's generic address (a box of 128 f32 from `src`), `sm`
/// 512 bytes of shared memory and `bar` an mbarrier.
fn kernel(body: &str) -> String {
    format!(
        ".version 8.7\n.target sm_90a\n.address_size 64\n\
         .visible .entry t(.param .u64 out, .param .align 64 .b8 tmap[128])\n{{\n\
         .reg .b32 %r<40>;\n.reg .b64 %rd<20>;\n.reg .pred %p<8>;\n\
         .shared .align 1024 .b8 sm[512];\n.shared .align 8 .b8 bar[16];\n\
         ld.param.u64 %rd0, [out];\nmov.b64 %rd2, tmap;\ncvta.param.u64 %rd1, %rd2;\n\
         mov.u32 %r1, %tid.x;\nsetp.eq.u32 %p1, %r1, 0;\n\
         mov.u32 %r2, sm;\nmov.u32 %r3, bar;\nmul.lo.u32 %r4, %r1, 4;\nadd.u32 %r5, %r2, %r4;\n\
         {body}\nret;\n}}\n"
    )
}

/// The mbarrier set up for one arrival (thread 0), seen by every thread.
const INIT: &str = "@%p1 mbarrier.init.shared.b64 [bar], 1;\n\
                    fence.mbarrier_init.release.cluster;\nbar.sync 0;\n";

/// Thread 0 expects `BYTES` and loads the box into `sm`.
const LOAD: &str = "@%p1 mbarrier.arrive.expect_tx.shared.b64 %rd3, [bar], BYTES;\n\
     mov.u32 %r6, 0;\n\
     @%p1 cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes \
     [sm], [%rd1, {%r6}], [bar];\n";

/// Every thread waits for the phase of parity 0.
const WAIT: &str = "mov.u32 %r7, 0;\nWAIT:\n\
     mbarrier.try_wait.parity.shared.b64 %p2, [bar], %r7;\n@!%p2 bra WAIT;\n";

/// Each thread copies its word of `sm` to `out`.
const COPY_OUT: &str = "ld.shared.b32 %r8, [%r5];\n\
     mul.wide.u32 %rd4, %r1, 4;\nadd.s64 %rd5, %rd0, %rd4;\nst.global.b32 [%rd5], %r8;\n";

/// Runs `body` with 128 threads on a source of 128 words `i * 3`; the
/// output's words.
fn run(body: &str) -> Result<Vec<u32>, ptx_emu::EmuError> {
    let m = Module::parse(&kernel(body)).unwrap_or_else(|e| panic!("{e}"));
    let mut dev = Device::new();
    let src: Vec<u32> = (0..128).map(|i| i * 3).collect();
    let src = dev.alloc_from(&bytes::from_u32(&src));
    let out = dev.alloc(512);
    let dst = dev.alloc(512);
    let map = |base| TensorMap {
        base,
        elem_size: 4,
        dims: vec![128],
        strides: vec![4],
        box_dims: vec![128],
        swizzle: 0,
    };
    // the store's map (when the body stores) names the second buffer
    let body_stores = body.contains(".global.shared::cta");
    let tm = map(if body_stores { dst.addr() } else { src.addr() });
    dev.launch(
        &m,
        "t",
        LaunchConfig::grid1d(1, 128),
        &[Param::U64(out.addr()), Param::Bytes(tm.encode())],
    )?;
    Ok(bytes::to_u32(&dev.read(if body_stores {
        dst
    } else {
        out
    })))
}

/// The strict report of `body`.
fn report(body: &str) -> ptx_emu::EmuError {
    let e = run(body).expect_err("a report");
    assert!(
        matches!(e.kind, ErrorKind::Async | ErrorKind::Deadlock),
        "{e}"
    );
    e
}

fn load_then(bytes: u32, after: &str) -> String {
    format!("{INIT}{}{after}", LOAD.replace("BYTES", &bytes.to_string()))
}

#[test]
fn a_tma_load_observed_through_its_mbarrier_runs() {
    let out = run(&load_then(512, &format!("{WAIT}{COPY_OUT}"))).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out, (0..128).map(|i| i * 3).collect::<Vec<u32>>());
}

#[test]
fn a_generic_read_of_a_tma_box_without_the_wait_is_reported() {
    // PTX ISA: the async proxy's writes are visible once the mbarrier
    // phase they complete on is observed
    // thread 0 issues the copy and reads the box's first word at once
    let zero = "st.shared.b32 [%r5], %r1;\nfence.proxy.async.shared::cta;\nbar.sync 0;\n";
    let read = "@%p1 ld.shared.b32 %r8, [%r5];\n";
    let e = report(&format!("{zero}{}", load_then(512, read)));
    assert_eq!(e.kind, ErrorKind::Async, "{e}");
    assert!(e.msg.contains("without observing the phase"), "{e}");
    assert!(e.inst.contains("ld.shared"), "{e}");
}

#[test]
fn more_bytes_delivered_than_expected_are_reported() {
    let e = report(&load_then(256, &format!("{WAIT}{COPY_OUT}")));
    assert_eq!(e.kind, ErrorKind::Async, "{e}");
    assert!(e.msg.contains("256 bytes more delivered"), "{e}");
    assert!(e.inst.contains("cp.async.bulk.tensor"), "{e}");
}

#[test]
fn fewer_bytes_delivered_than_expected_hang_and_say_why() {
    let e = report(&load_then(1024, &format!("{WAIT}{COPY_OUT}")));
    assert_eq!(e.kind, ErrorKind::Deadlock, "{e}");
    assert!(
        e.msg
            .contains("512 expected transaction bytes were never delivered"),
        "{e}"
    );
    assert!(e.inst.contains("mbarrier.try_wait"), "{e}");
}

#[test]
fn reinitialising_an_mbarrier_with_a_phase_pending_is_reported() {
    // two arrivals expected, one in: the phase is pending
    let body = "@%p1 mbarrier.init.shared.b64 [bar], 2;\n\
                @%p1 mbarrier.arrive.shared.b64 %rd3, [bar];\n\
                @%p1 mbarrier.init.shared.b64 [bar], 2;\n";
    let e = report(body);
    assert_eq!(e.kind, ErrorKind::Async, "{e}");
    assert!(e.msg.contains("while its phase 0 is pending"), "{e}");
    // a barrier whose phase completed may be initialised again
    run("@%p1 mbarrier.init.shared.b64 [bar], 1;\n\
         @%p1 mbarrier.arrive.shared.b64 %rd3, [bar];\n\
         @%p1 mbarrier.init.shared.b64 [bar], 1;\n")
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn more_arrivals_than_the_count_are_reported() {
    let body = "@%p1 mbarrier.init.shared.b64 [bar], 1;\nbar.sync 0;\n\
                @%p1 mbarrier.arrive.shared.b64 %rd3, [bar], 2;\n";
    let e = report(body);
    assert!(
        e.msg.contains("more arrivals than mbarrier.init's count"),
        "{e}"
    );
}

/// Every thread writes its word `tid + 7` to `sm`, then `sync`, then
/// thread 0 stores the box to the second buffer and waits for it.
fn store_body(sync: &str, after_store: &str) -> String {
    format!(
        "add.u32 %r9, %r1, 7;\nst.shared.b32 [%r5], %r9;\n{sync}\
         mov.u32 %r6, 0;\n\
         @%p1 cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%rd1, {{%r6}}], [sm];\n\
         @%p1 cp.async.bulk.commit_group;\n{after_store}"
    )
}

const STORE_WAIT: &str = "@%p1 cp.async.bulk.wait_group.read 0;\n";

#[test]
fn a_tma_store_after_a_proxy_fence_runs() {
    let body = store_body("fence.proxy.async.shared::cta;\nbar.sync 0;\n", STORE_WAIT);
    let out = run(&body).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out, (0..128).map(|i| i + 7).collect::<Vec<u32>>());
}

#[test]
fn a_tma_store_without_a_proxy_fence_is_reported() {
    let e = report(&store_body("bar.sync 0;\n", STORE_WAIT));
    assert_eq!(e.kind, ErrorKind::Async, "{e}");
    assert!(e.msg.contains("no fence.proxy.async"), "{e}");
    assert!(e.inst.contains("cp.async.bulk.tensor"), "{e}");
}

#[test]
fn writing_a_tma_store_source_before_its_read_wait_is_reported() {
    let rewrite = "@%p1 st.shared.b32 [sm], %r1;\n";
    let e = report(&store_body(
        "fence.proxy.async.shared::cta;\nbar.sync 0;\n",
        rewrite,
    ));
    assert!(e.msg.contains("still reads"), "{e}");
    // after the wait the bytes are free again
    run(&store_body(
        "fence.proxy.async.shared::cta;\nbar.sync 0;\n",
        &format!("{STORE_WAIT}{rewrite}"),
    ))
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn exiting_with_a_tma_store_still_reading_is_reported() {
    let e = report(&store_body(
        "fence.proxy.async.shared::cta;\nbar.sync 0;\n",
        "",
    ));
    assert!(
        e.msg
            .contains("bulk copies from shared memory still reading"),
        "{e}"
    );
}

#[test]
fn setmaxnreg_counts_follow_the_isa() {
    // every warp of the warpgroup, the same request: fine, from different
    // instructions too (as NVIDIA's producer warp and its siblings do)
    run(
        "shr.u32 %r10, %r1, 5;\nsetp.eq.u32 %p3, %r10, 0;\n@%p3 bra ONE;\n\
         setmaxnreg.dec.sync.aligned.u32 40;\nbra.uni DONE;\n\
         ONE:\nsetmaxnreg.dec.sync.aligned.u32 40;\nDONE:\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let e = report("setmaxnreg.inc.sync.aligned.u32 260;\n");
    assert!(e.msg.contains("multiples of 8 from 24 to 256"), "{e}");
    let e = report("setmaxnreg.inc.sync.aligned.u32 100;\n");
    assert!(e.msg.contains("multiples of 8 from 24 to 256"), "{e}");
    // one warp asks for another count
    let e = report(
        "shr.u32 %r10, %r1, 5;\nsetp.eq.u32 %p3, %r10, 1;\n@%p3 bra ONE;\n\
         setmaxnreg.dec.sync.aligned.u32 40;\nbra.uni DONE;\n\
         ONE:\nsetmaxnreg.dec.sync.aligned.u32 48;\nDONE:\n",
    );
    assert!(e.msg.contains("of its warpgroup ran setmaxnreg.dec"), "{e}");
    // one warp only
    let e = report(
        "shr.u32 %r10, %r1, 5;\nsetp.ne.u32 %p3, %r10, 0;\n@%p3 bra DONE;\n\
         setmaxnreg.dec.sync.aligned.u32 40;\nDONE:\n",
    );
    assert!(e.msg.contains("of its warpgroup 0"), "{e}");
}

#[test]
fn a_tma_load_over_generic_writes_needs_a_proxy_fence() {
    // PTX ISA, proxies: a generic write, then an async-proxy write of the
    // same bytes, need a fence.proxy.async between them
    let zero = "st.shared.b32 [%r5], %r1;\nbar.sync 0;\n";
    let e = report(&format!(
        "{zero}{}",
        load_then(512, &format!("{WAIT}{COPY_OUT}"))
    ));
    assert!(e.msg.contains("overwrites shared byte"), "{e}");
    assert!(e.msg.contains("no fence.proxy.async"), "{e}");
    let fenced = "st.shared.b32 [%r5], %r1;\nfence.proxy.async.shared::cta;\nbar.sync 0;\n";
    run(&format!(
        "{fenced}{}",
        load_then(512, &format!("{WAIT}{COPY_OUT}"))
    ))
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn an_mbarrier_initialised_without_a_fence_for_the_async_proxy_is_reported() {
    // PTX ISA "mbarrier.init": fence.mbarrier_init (or fence.proxy.async)
    // makes the initialisation visible to the TMA that completes on it
    let body = load_then(512, &format!("{WAIT}{COPY_OUT}"))
        .replace("fence.mbarrier_init.release.cluster;\n", "");
    let e = report(&body);
    assert!(e.msg.contains("use of the mbarrier"), "{e}");
    assert!(e.msg.contains("mbarrier.init"), "{e}");
    let body = load_then(512, &format!("{WAIT}{COPY_OUT}")).replace(
        "fence.mbarrier_init.release.cluster;\n",
        "fence.proxy.async.shared::cta;\n",
    );
    run(&body).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn an_mbarrier_used_before_its_initialisation_is_ordered_is_reported() {
    // PTX ISA "mbarrier.init": the other threads wait on the barrier with
    // no synchronisation after thread 0 initialised it
    let body = load_then(512, &format!("{WAIT}{COPY_OUT}")).replace("bar.sync 0;\n", "");
    let e = report(&body);
    assert!(e.msg.contains("the initialisation by thread 0"), "{e}");
    assert!(e.inst.contains("mbarrier.try_wait"), "{e}");
}
