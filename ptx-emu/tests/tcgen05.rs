//! `tcgen05` by hand: a warp allocates tensor memory (the address lands in
//! shared memory), one thread issues `tcgen05.mma` (M 128, N 8, f16 A and B
//! from no-swizzle K-major shared-memory descriptors, f32 D in tensor
//! memory) and commits it to an mbarrier, then every warp reads its 32 rows
//! of D with `tcgen05.ld.32x32b.x8`. The result is checked against a CPU
//! product, and misuse (a read of columns never allocated, a warp reaching
//! another warp's lanes) is reported.

use ptx_emu::{bytes, Device, ErrorKind, LaunchConfig, Module, Param};

/// The f16 encoding of `x`, a normal f16 value (or zero) with a short mantissa.
fn f16_bits(x: f32) -> u16 {
    if x == 0.0 {
        return 0;
    }
    let b = x.to_bits();
    let e = ((b >> 23) & 0xff) + 15 - 127;
    ((b >> 16 & 0x8000) | e << 10 | (b >> 13 & 0x3ff)) as u16
}

/// A small value exact in f16, from `i`.
fn value(i: u64) -> f32 {
    let h = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
    ((h % 15) as i64 - 7) as f32 / 4.0
}

const M: usize = 128;
const N: usize = 8;
const K: usize = 16;

/// Each thread copies its 32 bytes of A (row `%tid.x`) from `aux` (`%rd1`)
/// into `asm_`, and the first 16 threads B's 16 bytes each into `bsm`.
const LOAD_AB: &str = "mul.wide.u32 %rd2, %r1, 32;\nadd.s64 %rd3, %rd1, %rd2;\n\
     ld.global.v4.b32 {%r10, %r11, %r12, %r13}, [%rd3];\n\
     ld.global.v4.b32 {%r14, %r15, %r16, %r17}, [%rd3+16];\n\
     mov.u32 %r30, asm_;\nmad.lo.u32 %r31, %r1, 32, %r30;\n\
     st.shared.v4.b32 [%r31], {%r10, %r11, %r12, %r13};\n\
     st.shared.v4.b32 [%r31+16], {%r14, %r15, %r16, %r17};\n\
     setp.lt.u32 %p1, %r1, 16;\n@!%p1 bra SKIP;\n\
     mul.wide.u32 %rd4, %r1, 16;\nadd.s64 %rd5, %rd1, 4096;\nadd.s64 %rd5, %rd5, %rd4;\n\
     ld.global.v4.b32 {%r20, %r21, %r22, %r23}, [%rd5];\n\
     mov.u32 %r32, bsm;\nmad.lo.u32 %r33, %r1, 16, %r32;\n\
     st.shared.v4.b32 [%r33], {%r20, %r21, %r22, %r23};\n\
     SKIP:\n";

/// The kernel: `aux` holds A's 4096 bytes then B's 256 in their shared
/// layouts; `out` gets D row by row (thread t: row t, 8 floats). `ld` is
/// the tensor-memory load each thread runs (its address in `%r50`).
fn kernel(ld: &str) -> String {
    // idesc: f32 D (bit 4), f16 A and B, K-major both, N >> 3 at 17, M >> 4 at 24
    let idesc: u32 = 1 << 4 | ((N as u32) >> 3) << 17 | ((M as u32) >> 4) << 24;
    // descriptors: LBO 128 (next 8 K), SBO 256 (next 8 rows), version 1
    let desc: u64 = (128 >> 4) << 16 | (256 >> 4) << 32 | 1 << 46;
    format!(
        ".version 8.7\n.target sm_100a\n.address_size 64\n\
         .visible .entry t(.param .u64 out, .param .u64 aux)\n{{\n\
         .reg .b32 %r<80>;\n.reg .b64 %rd<20>;\n.reg .pred %p<4>;\n\
         .shared .align 1024 .b8 asm_[4096];\n.shared .align 1024 .b8 bsm[256];\n\
         .shared .align 8 .b8 bar[8];\n.shared .align 4 .b8 taddr[4];\n\
         ld.param.u64 %rd0, [out];\nld.param.u64 %rd1, [aux];\n\
         mov.u32 %r1, %tid.x;\n\
         {LOAD_AB}\
         setp.ne.u32 %p2, %r1, 0;\n\
         @%p2 bra NOINIT;\n\
         mov.u32 %r34, 1;\nmbarrier.init.shared.b64 [bar], %r34;\n\
         NOINIT:\n\
         shr.u32 %r35, %r1, 5;\nsetp.ne.u32 %p3, %r35, 0;\n\
         @%p3 bra NOALLOC;\n\
         mov.u32 %r36, 32;\n\
         tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [taddr], %r36;\n\
         tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n\
         NOALLOC:\n\
         fence.proxy.async.shared::cta;\ntcgen05.fence::before_thread_sync;\n\
         bar.sync 0;\ntcgen05.fence::after_thread_sync;\n\
         ld.shared.b32 %r40, [taddr];\n\
         @%p2 bra WAIT;\n\
         mov.u32 %r41, asm_;\nshr.u32 %r42, %r41, 4;\ncvt.u64.u32 %rd6, %r42;\n\
         or.b64 %rd7, %rd6, {desc};\n\
         mov.u32 %r43, bsm;\nshr.u32 %r44, %r43, 4;\ncvt.u64.u32 %rd8, %r44;\n\
         or.b64 %rd9, %rd8, {desc};\n\
         mov.b32 %r45, {idesc};\nmov.b32 %r46, 0;\nsetp.ne.u32 %p1, %r46, 0;\n\
         tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [%r40], %rd7, %rd9, %r45, \
         {{%r46, %r46, %r46, %r46}}, %p1;\n\
         tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];\n\
         WAIT:\n\
         mov.u32 %r47, 0;\n\
         LOOP:\n\
         mbarrier.try_wait.parity.shared.b64 %p3, [bar], %r47;\n\
         @!%p3 bra LOOP;\n\
         tcgen05.fence::after_thread_sync;\n\
         shl.b32 %r48, %r35, 21;\nadd.u32 %r50, %r40, %r48;\n\
         {ld}\n\
         tcgen05.wait::ld.sync.aligned;\n\
         add.s64 %rd10, %rd0, %rd2;\n\
         st.global.v4.b32 [%rd10], {{%r60, %r61, %r62, %r63}};\n\
         st.global.v4.b32 [%rd10+16], {{%r64, %r65, %r66, %r67}};\n\
         tcgen05.fence::before_thread_sync;\n\
         bar.sync 0;\n\
         @%p2 bra END;\n\
         mov.u32 %r36, 32;\n\
         END:\n\
         setp.ne.u32 %p3, %r35, 0;\n\
         @%p3 bra DONE;\n\
         mov.u32 %r36, 32;\n\
         tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r40, %r36;\n\
         DONE:\n\
         ret;\n}}\n"
    )
}

const LD: &str = "tcgen05.ld.sync.aligned.32x32b.x8.b32 \
                  {%r60, %r61, %r62, %r63, %r64, %r65, %r66, %r67}, [%r50];";

/// Runs `kernel(ld)`: D read back (M x N), or the emulator's error.
fn run(ld: &str) -> (Result<Vec<f32>, ptx_emu::EmuError>, Vec<f32>) {
    run_source(&kernel(ld))
}

/// Runs the kernel `src` (as [`kernel`] makes it) on the test's A and B.
fn run_source(src: &str) -> (Result<Vec<f32>, ptx_emu::EmuError>, Vec<f32>) {
    let a: Vec<f32> = (0..M * K).map(|i| value(i as u64 + 1)).collect();
    let b: Vec<f32> = (0..N * K).map(|i| value(i as u64 + 900)).collect();
    // K-major, no swizzle: (row, k) at (row % 8) 16 + (k % 8) 2 + (k / 8) 128 + (row / 8) 256
    let place = |rows: usize, v: &[f32]| {
        let mut s = vec![0u16; rows * K];
        for r in 0..rows {
            for kk in 0..K {
                let at = (r % 8) * 16 + (kk % 8) * 2 + (kk / 8) * 128 + (r / 8) * 256;
                s[at / 2] = f16_bits(v[r * K + kk]);
            }
        }
        s
    };
    let mut halves = place(M, &a);
    halves.extend(place(N, &b));
    let words: Vec<u32> = halves
        .chunks(2)
        .map(|p| u32::from(p[0]) | u32::from(p[1]) << 16)
        .collect();
    let want: Vec<f32> = (0..M * N)
        .map(|i| (0..K).map(|kk| a[i / N * K + kk] * b[i % N * K + kk]).sum())
        .collect();
    let md = Module::parse(src).unwrap_or_else(|e| panic!("{e}"));
    let mut dev = Device::new();
    let out = dev.alloc(M * N * 4);
    let aux = dev.alloc_from(&bytes::from_u32(&words));
    let r = dev
        .launch(
            &md,
            "t",
            LaunchConfig::grid1d(1, 128),
            &[Param::U64(out.addr()), Param::U64(aux.addr())],
        )
        .map(|_| {
            bytes::to_u32(&dev.read(out))
                .into_iter()
                .map(f32::from_bits)
                .collect()
        });
    (r, want)
}

#[test]
fn mma_into_tensor_memory_and_back() {
    let (got, want) = run(LD);
    let got = got.unwrap_or_else(|e| panic!("{e}"));
    assert!(want.iter().any(|x| *x != 0.0));
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "D row {} column {}", i / N, i % N);
    }
}

#[test]
fn load_from_columns_never_allocated_is_reported() {
    // 32 columns allocated; x8 from column 28 reaches 35
    let ld = "add.u32 %r50, %r50, 28;\n".to_string() + LD;
    let err = run(&ld).0.unwrap_err();
    assert_eq!(err.kind, ErrorKind::OutOfBounds, "{err}");
    assert!(err.msg.contains("not allocated"), "{err}");
}

#[test]
fn warp_reaching_another_subpartition_is_reported() {
    // every warp reads lanes 0-31: warps 1-3 may not
    let ld = "mov.u32 %r50, %r40;\n".to_string() + LD;
    let err = run(&ld).0.unwrap_err();
    assert_eq!(err.kind, ErrorKind::OutOfBounds, "{err}");
    assert!(err.msg.contains("reaches lanes"), "{err}");
}

#[test]
fn ending_with_tensor_memory_allocated_is_reported() {
    let src = kernel(LD).replace(
        "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r40, %r36;",
        "",
    );
    assert_ne!(src, kernel(LD));
    let err = run_source(&src).0.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Deadlock, "{err}");
    assert!(err.msg.contains("32 tensor-memory columns"), "{err}");
}

/// `cta_group::2`: two CTAs of a cluster each hold half of A (128 rows of
/// M 256) and half of B (8 of N 16 columns) at the same shared offsets; the
/// even CTA issues one MMA and commits it to both CTAs' mbarriers; each
/// CTA then reads its 128 rows of D (all 16 columns, layout A).
#[test]
fn cta_pair_mma_layout_a() {
    const MP: usize = 256;
    const NP: usize = 16;
    let idesc: u32 = 1 << 4 | ((NP as u32) >> 3) << 17 | ((MP as u32) >> 4) << 24;
    let desc: u64 = (128 >> 4) << 16 | (256 >> 4) << 32 | 1 << 46;
    let src = format!(
        ".version 8.7\n.target sm_100a\n.address_size 64\n\
         .visible .entry t(.param .u64 out, .param .u64 aux)\n.reqnctapercluster 2\n{{\n\
         .reg .b16 %rs<4>;\n.reg .b32 %r<80>;\n.reg .b64 %rd<20>;\n.reg .pred %p<4>;\n\
         .shared .align 1024 .b8 asm_[4096];\n.shared .align 1024 .b8 bsm[256];\n\
         .shared .align 8 .b8 bar[8];\n.shared .align 4 .b8 taddr[4];\n\
         ld.param.u64 %rd0, [out];\nld.param.u64 %rd1, [aux];\n\
         mov.u32 %r1, %tid.x;\nmov.u32 %r2, %cluster_ctarank;\n\
         mad.lo.u32 %r3, %r2, 4352, 0;\ncvt.u64.u32 %rd11, %r3;\nadd.s64 %rd1, %rd1, %rd11;\n\
         {LOAD_AB}\
         setp.ne.u32 %p2, %r1, 0;\n@%p2 bra NOINIT;\n\
         mov.u32 %r34, 1;\nmbarrier.init.shared.b64 [bar], %r34;\n\
         NOINIT:\n\
         shr.u32 %r35, %r1, 5;\nsetp.ne.u32 %p3, %r35, 0;\n@%p3 bra NOALLOC;\n\
         mov.u32 %r36, 32;\n\
         tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [taddr], %r36;\n\
         tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n\
         NOALLOC:\n\
         fence.proxy.async.shared::cta;\ntcgen05.fence::before_thread_sync;\n\
         barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n\
         tcgen05.fence::after_thread_sync;\n\
         ld.shared.b32 %r40, [taddr];\n\
         or.b32 %r37, %r1, %r2;\nsetp.ne.u32 %p2, %r37, 0;\n@%p2 bra WAIT;\n\
         mov.u32 %r41, asm_;\nshr.u32 %r42, %r41, 4;\ncvt.u64.u32 %rd6, %r42;\n\
         or.b64 %rd7, %rd6, {desc};\n\
         mov.u32 %r43, bsm;\nshr.u32 %r44, %r43, 4;\ncvt.u64.u32 %rd8, %r44;\n\
         or.b64 %rd9, %rd8, {desc};\n\
         mov.b32 %r45, {idesc};\nmov.b32 %r46, 0;\nsetp.ne.u32 %p1, %r46, 0;\n\
         tcgen05.mma.cta_group::2.kind::f16.collector::a::discard [%r40], %rd7, %rd9, %r45, \
         {{%r46, %r46, %r46, %r46, %r46, %r46, %r46, %r46}}, %p1;\n\
         mov.b16 %rs1, 3;\n\
         tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [bar], %rs1;\n\
         WAIT:\n\
         mov.u32 %r47, 0;\n\
         LOOP:\n\
         mbarrier.try_wait.parity.shared.b64 %p3, [bar], %r47;\n@!%p3 bra LOOP;\n\
         tcgen05.fence::after_thread_sync;\n\
         shl.b32 %r48, %r35, 21;\nadd.u32 %r50, %r40, %r48;\n\
         tcgen05.ld.sync.aligned.32x32b.x16.b32 {{%r60, %r61, %r62, %r63, %r64, %r65, %r66, %r67, \
         %r68, %r69, %r70, %r71, %r72, %r73, %r74, %r75}}, [%r50];\n\
         tcgen05.wait::ld.sync.aligned;\n\
         mad.lo.u32 %r51, %r2, 128, %r1;\nmul.wide.u32 %rd12, %r51, 64;\nadd.s64 %rd10, %rd0, %rd12;\n\
         st.global.v4.b32 [%rd10], {{%r60, %r61, %r62, %r63}};\n\
         st.global.v4.b32 [%rd10+16], {{%r64, %r65, %r66, %r67}};\n\
         st.global.v4.b32 [%rd10+32], {{%r68, %r69, %r70, %r71}};\n\
         st.global.v4.b32 [%rd10+48], {{%r72, %r73, %r74, %r75}};\n\
         tcgen05.fence::before_thread_sync;\n\
         barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n\
         setp.ne.u32 %p3, %r35, 0;\n@%p3 bra DONE;\n\
         mov.u32 %r36, 32;\n\
         tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r40, %r36;\n\
         DONE:\n\
         ret;\n}}\n"
    );
    let a: Vec<f32> = (0..MP * K).map(|i| value(i as u64 + 3)).collect();
    let b: Vec<f32> = (0..NP * K).map(|i| value(i as u64 + 700)).collect();
    // each CTA's 4352 bytes: its 128 rows of A, then its 8 columns of B
    let place = |rows: &[f32], n: usize| {
        let mut s = vec![0u16; n * K];
        for r in 0..n {
            for kk in 0..K {
                let at = (r % 8) * 16 + (kk % 8) * 2 + (kk / 8) * 128 + (r / 8) * 256;
                s[at / 2] = f16_bits(rows[r * K + kk]);
            }
        }
        s
    };
    let mut halves = Vec::new();
    for c in 0..2 {
        halves.extend(place(&a[c * 128 * K..(c + 1) * 128 * K], 128));
        halves.extend(place(&b[c * 8 * K..(c + 1) * 8 * K], 8));
    }
    let words: Vec<u32> = halves
        .chunks(2)
        .map(|p| u32::from(p[0]) | u32::from(p[1]) << 16)
        .collect();
    let md = Module::parse(&src).unwrap_or_else(|e| panic!("{e}"));
    let mut dev = Device::new();
    let out = dev.alloc(MP * NP * 4);
    let aux = dev.alloc_from(&bytes::from_u32(&words));
    let cfg = LaunchConfig {
        grid: (2, 1, 1),
        block: (128, 1, 1),
        cluster: (2, 1, 1),
        dynamic_smem: 0,
    };
    dev.launch(
        &md,
        "t",
        cfg,
        &[Param::U64(out.addr()), Param::U64(aux.addr())],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let got: Vec<f32> = bytes::to_u32(&dev.read(out))
        .into_iter()
        .map(f32::from_bits)
        .collect();
    for i in 0..MP {
        for j in 0..NP {
            let want: f32 = (0..K).map(|kk| a[i * K + kk] * b[j * K + kk]).sum();
            assert_eq!(got[i * NP + j], want, "D row {i} column {j}");
        }
    }
}

/// The kernel with `from` replaced by `to` (which must change it).
fn mutant(from: &str, to: &str) -> String {
    let src = kernel(LD).replace(from, to);
    assert_ne!(src, kernel(LD), "{from:?} is not in the kernel");
    src
}

/// The strict check's report of the kernel `src`.
fn strict_report(src: &str) -> ptx_emu::EmuError {
    let err = run_source(src).0.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Async, "{err}");
    err
}

#[test]
fn an_mma_over_cells_a_load_still_reads_is_reported() {
    // thread 0 issues a second MMA into D right after its load, with no
    // tcgen05.wait::ld between
    let mma = "@!%p2 tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [%r40], %rd7, \
               %rd9, %r45, {%r46, %r46, %r46, %r46}, %p1;";
    let err = strict_report(&mutant(
        "tcgen05.wait::ld.sync.aligned;",
        &format!("{mma}\ntcgen05.wait::ld.sync.aligned;"),
    ));
    assert!(
        err.msg.contains("before that thread's tcgen05.wait::ld"),
        "{err}"
    );
}

#[test]
fn using_a_load_result_before_its_wait_is_nvidias_practice() {
    // NVIDIA's epilogues convert and add a load's registers before its
    // wait::ld: ptxas orders the register uses, so the emulator accepts it
    let src = mutant(
        "tcgen05.wait::ld.sync.aligned;",
        "mov.b64 %rd15, {%r60, %r61};\nadd.s64 %rd16, %rd15, 0;\ntcgen05.wait::ld.sync.aligned;",
    );
    let (got, want) = run_source(&src);
    assert_eq!(got.unwrap_or_else(|e| panic!("{e}")), want);
}

#[test]
fn reading_what_an_mma_writes_without_its_commit_phase_is_reported() {
    // no wait on the commit's mbarrier: the MMA may not have written D yet
    let err = strict_report(&mutant(
        "mbarrier.try_wait.parity.shared.b64 %p3, [bar], %r47;\n@!%p3 bra LOOP;",
        "",
    ));
    // whichever comes first in the emulator's schedule: a load before the
    // MMA's issue, or one after it that did not observe the commit
    assert!(
        err.msg.contains("without observing the phase") || err.msg.contains("tensor memory race"),
        "{err}"
    );
}

#[test]
fn operands_written_without_a_proxy_fence_are_reported() {
    // the MMA reads A and B through the async proxy
    let err = strict_report(&mutant("fence.proxy.async.shared::cta;", ""));
    assert!(err.msg.contains("no fence.proxy.async"), "{err}");
    assert!(err.inst.contains("tcgen05.mma"), "{err}");
    // a fence of the global state space does not cover shared memory
    let err = strict_report(&mutant(
        "fence.proxy.async.shared::cta;",
        "fence.proxy.async.global;",
    ));
    assert!(err.msg.contains("no fence.proxy.async"), "{err}");
}

#[test]
fn every_check_can_be_turned_off() {
    let src = mutant("fence.proxy.async.shared::cta;", "");
    let md = Module::parse(&src).unwrap();
    let mut dev = Device::new();
    dev.async_checks = ptx_emu::AsyncChecks::parse("no-proxy");
    let out = dev.alloc(M * N * 4);
    let aux = dev.alloc(8192);
    dev.launch(
        &md,
        "t",
        LaunchConfig::grid1d(1, 128),
        &[Param::U64(out.addr()), Param::U64(aux.addr())],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        ptx_emu::AsyncChecks::parse("off"),
        ptx_emu::AsyncChecks::NONE
    );
    assert!(!ptx_emu::AsyncChecks::parse("no-proxy,no-wgmma").proxy);
}

#[test]
fn giving_back_columns_a_load_still_reads_is_reported() {
    // no tcgen05.wait::ld at all: the loads still reach the columns at the
    // dealloc
    let err = strict_report(&mutant("tcgen05.wait::ld.sync.aligned;", ""));
    assert!(err.msg.contains("tcgen05.dealloc gives back"), "{err}");
    assert!(err.inst.contains("tcgen05.dealloc"), "{err}");
}
