//! `wgmma.mma_async` with A in registers: each thread of the warpgroup
//! holds A as the PTX ISA's register fragment places it (per warp, rows
//! `16 w + g` and `+ 8`, column pairs `2 t` and `+ 8`, as `mma.sync`'s
//! m16n8k16 A), B is read through a descriptor of the no-swizzle K-major
//! layout, and the accumulator comes back in the D fragment. The result is
//! checked against a CPU product.

use ptx_emu::{bytes, Device, LaunchConfig, Module, Param};

/// The f16 encoding of `x`, a normal f16 value (or zero) with a short mantissa.
fn f16_bits(x: f32) -> u32 {
    if x == 0.0 {
        return 0;
    }
    let b = x.to_bits();
    let e = ((b >> 23) & 0xff) + 15 - 127;
    (b >> 16 & 0x8000) | e << 10 | (b >> 13 & 0x3ff)
}

/// A small value exact in f16, from `i`.
fn value(i: u64) -> f32 {
    let h = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
    ((h % 15) as i64 - 7) as f32 / 4.0
}

/// The product's shape: m64n8k16.
const M: usize = 64;
const N: usize = 8;
const K: usize = 16;

/// A (M x K) and B (K x N), small values exact in f16.
fn operands() -> (Vec<f32>, Vec<f32>) {
    let a = (0..M * K).map(|i| value(i as u64 + 1)).collect();
    let b = (0..K * N).map(|i| value(i as u64 + 500)).collect();
    (a, b)
}

/// Runs the m64n8k16 product of `a` (registers) and `b` (shared memory),
/// with `in_flight` between its commit and its wait; the D registers of
/// the 128 threads.
fn product(a: &[f32], b: &[f32], in_flight: &str) -> Result<Vec<u32>, ptx_emu::EmuError> {
    product_edited(a, b, in_flight, &|s| s)
}

/// [`product`] with its PTX source passed through `edit` first.
fn product_edited(
    a: &[f32],
    b: &[f32],
    in_flight: &str,
    edit: &dyn Fn(String) -> String,
) -> Result<Vec<u32>, ptx_emu::EmuError> {
    let (n, k) = (N, K);
    // Per thread, 4 A words: register i holds row 16 w + g + 8 (i % 2),
    // columns 8 (i / 2) + 2 t and + 1 (low half first).
    let mut words = vec![0u32; 128 * 4];
    for tid in 0..128 {
        let (w, lane) = (tid / 32, tid % 32);
        let (g, t) = (lane / 4, lane % 4);
        for i in 0..4 {
            let row = 16 * w + g + 8 * (i % 2);
            let col = 8 * (i / 2) + 2 * t;
            words[tid * 4 + i] = f16_bits(a[row * k + col]) | f16_bits(a[row * k + col + 1]) << 16;
        }
    }
    // B (k x n) K-major without swizzle: element (n, k) at byte
    // (n % 8) 16 + (k % 8) 2 + (k / 8) LBO, LBO = 128 (SBO 256 unused).
    let mut bsmem = vec![0u16; 128];
    for kk in 0..k {
        for j in 0..n {
            let at = (j % 8) * 16 + (kk % 8) * 2 + (kk / 8) * 128;
            bsmem[at / 2] = f16_bits(b[kk * n + j]) as u16;
        }
    }
    for pair in bsmem.chunks(2) {
        words.push(u32::from(pair[0]) | u32::from(pair[1]) << 16);
    }
    let desc_bits: u64 = (128 >> 4) << 16 | (256 >> 4) << 32;
    let src = format!(
        ".version 8.7\n.target sm_90a\n.address_size 64\n\
         .visible .entry t(.param .u64 out, .param .u64 aux)\n{{\n\
         .reg .b32 %r<60>;\n.reg .b64 %rd<20>;\n.reg .pred %p<4>;\n\
         .shared .align 1024 .b8 bsm[256];\n\
         ld.param.u64 %rd0, [out];\nld.param.u64 %rd1, [aux];\n\
         mov.u32 %r1, %tid.x;\n\
         mul.wide.u32 %rd2, %r1, 16;\nadd.s64 %rd3, %rd1, %rd2;\n\
         ld.global.v4.b32 {{%r10, %r11, %r12, %r13}}, [%rd3];\n\
         setp.lt.u32 %p1, %r1, 16;\n\
         @!%p1 bra SKIP;\n\
         add.s64 %rd4, %rd1, 2048;\nadd.s64 %rd5, %rd4, %rd2;\n\
         ld.global.v4.b32 {{%r20, %r21, %r22, %r23}}, [%rd5];\n\
         mov.u32 %r30, bsm;\nmad.lo.u32 %r31, %r1, 16, %r30;\n\
         st.shared.v4.b32 [%r31], {{%r20, %r21, %r22, %r23}};\n\
         SKIP:\n\
         fence.proxy.async.shared::cta;\nbar.sync 0;\n\
         mov.u32 %r32, bsm;\nshr.u32 %r33, %r32, 4;\ncvt.u64.u32 %rd6, %r33;\n\
         or.b64 %rd7, %rd6, {desc_bits};\n\
         setp.eq.u32 %p2, %r1, %r1;\n\
         mov.b32 %r40, 0;\nmov.b32 %r41, 0;\nmov.b32 %r42, 0;\nmov.b32 %r43, 0;\n\
         wgmma.fence.sync.aligned;\n\
         wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {{%r40, %r41, %r42, %r43}}, \
         {{%r10, %r11, %r12, %r13}}, %rd7, %p2, 1, 1, 0;\n\
         wgmma.commit_group.sync.aligned;\n{in_flight}\nwgmma.wait_group.sync.aligned 0;\n\
         add.s64 %rd9, %rd0, %rd2;\n\
         st.global.v4.b32 [%rd9], {{%r40, %r41, %r42, %r43}};\n\
         ret;\n}}\n"
    );
    let md = Module::parse(&edit(src)).unwrap_or_else(|e| panic!("{e}"));
    let mut dev = Device::new();
    let out = dev.alloc(128 * 16);
    let aux = dev.alloc_from(&bytes::from_u32(&words));
    dev.launch(
        &md,
        "t",
        LaunchConfig::grid1d(1, 128),
        &[Param::U64(out.addr()), Param::U64(aux.addr())],
    )?;
    Ok(bytes::to_u32(&dev.read(out)))
}

#[test]
fn register_a_operand_follows_the_isa_fragment() {
    let (n, k) = (N, K);
    let (a, b) = operands();
    let d = product(&a, &b, "").unwrap_or_else(|e| panic!("{e}"));
    // D: register i of lane (g, t) in warp w is row 16 w + g + 8 (i / 2),
    // column 2 t + i % 2.
    for tid in 0..128 {
        let (w, lane) = (tid / 32, tid % 32);
        let (g, t) = (lane / 4, lane % 4);
        for i in 0..4 {
            let (row, col) = (16 * w + g + 8 * (i / 2), 2 * t + i % 2);
            let want: f32 = (0..k).map(|kk| a[row * k + kk] * b[kk * n + col]).sum();
            let got = f32::from_bits(d[tid * 4 + i]);
            assert_eq!(
                got, want,
                "thread {tid} register {i} (row {row}, column {col})"
            );
        }
    }
}

/// `ptx` between the product's commit and its wait is a race whose
/// message says `says`; after the wait it runs.
fn race_in_flight(ptx: &str, says: &str) {
    let (a, b) = operands();
    let e = product(&a, &b, ptx).expect_err(says);
    assert_eq!(e.kind, ptx_emu::ErrorKind::Race, "{e}");
    assert!(e.msg.contains(says), "{e}");
    let after = format!("wgmma.wait_group.sync.aligned 0;\n{ptx}");
    product(&a, &b, &after).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_write_to_an_operand_of_a_wgmma_in_flight_is_a_race() {
    // B's buffer written: the multiply may read either value.
    race_in_flight(
        "setp.eq.u32 %p3, %r1, 0;\n@%p3 st.shared.b32 [%r32+64], %r1;",
        "while a wgmma in flight reads",
    );
}

#[test]
fn an_accumulator_register_of_a_wgmma_in_flight_is_not_to_be_touched() {
    // The accumulator read: a race with the multiply's write.
    race_in_flight(
        "add.rn.f32 %r50, %r41, %r41;",
        "accumulator or A-fragment register of a wgmma in flight",
    );
    // written (a copy into it too)
    race_in_flight(
        "mov.b32 %r41, %r1;",
        "accumulator or A-fragment register of a wgmma in flight",
    );
}

#[test]
fn a_copy_of_an_accumulator_in_flight_is_held_until_the_wait() {
    // NVIDIA's sm_90 code copies the accumulators of a wgmma in flight
    // with mov right after its commit (its loop-carried values, which
    // ptxas folds into the same registers): the copy holds the product
    // once the wait retires it ...
    let (a, b) = operands();
    let plain = product(&a, &b, "").unwrap_or_else(|e| panic!("{e}"));
    let stored = |s: String| {
        s.replace(
            "st.global.v4.b32 [%rd9], {%r40, %r41, %r42, %r43};",
            "st.global.v4.b32 [%rd9], {%r40, %r50, %r42, %r43};",
        )
    };
    let copied =
        product_edited(&a, &b, "mov.b32 %r50, %r41;", &stored).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(copied, plain);
    // ... and is held in flight with it: used before the wait, reported
    race_in_flight(
        "mov.b32 %r50, %r41;\nadd.rn.f32 %r51, %r50, %r50;",
        "accumulator or A-fragment register of a wgmma in flight",
    );
    // a guarded copy is not NVIDIA's practice
    race_in_flight(
        "@%p2 mov.b32 %r50, %r41;",
        "accumulator or A-fragment register of a wgmma in flight",
    );
}

#[test]
fn an_a_fragment_register_of_a_wgmma_in_flight_is_not_to_be_touched() {
    // PTX ISA "wgmma.mma_async": the A fragment is read until the wait.
    race_in_flight(
        "mov.b32 %r11, 0;",
        "accumulator or A-fragment register of a wgmma in flight",
    );
}

/// The strict check's report of the product's kernel with `from` replaced
/// by `to`.
fn strict_report(from: &str, to: &str) -> ptx_emu::EmuError {
    let (a, b) = operands();
    let edit = |s: String| {
        assert!(s.contains(from), "{from:?} is not in the kernel");
        s.replace(from, to)
    };
    let e = product_edited(&a, &b, "", &edit).expect_err(from);
    assert_eq!(e.kind, ptx_emu::ErrorKind::Async, "{e}");
    e
}

#[test]
fn a_b_operand_written_without_a_proxy_fence_is_reported() {
    // PTX ISA, proxies: st.shared writes through the generic proxy, the
    // multiply reads through the async proxy
    let e = strict_report("fence.proxy.async.shared::cta;\n", "");
    assert!(e.msg.contains("no fence.proxy.async"), "{e}");
    assert!(e.inst.contains("wgmma.mma_async"), "{e}");
    // the fence after the barrier, by every reader, serves as well
    let (a, b) = operands();
    let moved = |s: String| {
        s.replace(
            "fence.proxy.async.shared::cta;\nbar.sync 0;",
            "bar.sync 0;\nfence.proxy.async;",
        )
    };
    product_edited(&a, &b, "", &moved).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_wgmma_without_a_wgmma_fence_is_reported() {
    let e = strict_report("wgmma.fence.sync.aligned;\n", "");
    assert!(e.msg.contains("no wgmma.fence"), "{e}");
}

#[test]
fn a_register_written_after_the_wgmma_fence_is_reported() {
    // an accumulator computed after the fence: the multiply may read the old value
    let e = strict_report(
        "wgmma.fence.sync.aligned;\n",
        "wgmma.fence.sync.aligned;\nadd.rn.f32 %r42, %r42, %r42;\n",
    );
    assert!(e.msg.contains("written since its last wgmma.fence"), "{e}");
    // so is an A fragment register
    let e = strict_report(
        "wgmma.fence.sync.aligned;\n",
        "wgmma.fence.sync.aligned;\nxor.b32 %r12, %r12, 0;\n",
    );
    assert!(e.msg.contains("%r12"), "{e}");
}

#[test]
fn moves_into_wgmma_registers_after_the_fence_are_nvidias_practice() {
    // NVIDIA's attention zeroes and copies accumulators between the fence
    // and the multiply; those moves are accepted
    let (a, b) = operands();
    let edit = |s: String| {
        s.replace(
            "wgmma.fence.sync.aligned;\n",
            "wgmma.fence.sync.aligned;\nmov.b32 %r42, 0;\nmov.b32 %r12, %r12;\n",
        )
    };
    product_edited(&a, &b, "", &edit).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_wgmma_never_waited_for_is_reported() {
    // the accumulators stored before any wait retired the multiply
    let (a, b) = operands();
    let edit = |s: String| s.replace("wgmma.wait_group.sync.aligned 0;\n", "");
    let e = product_edited(&a, &b, "", &edit).expect_err("no wait");
    assert!(e.msg.contains("wgmma in flight"), "{e}");
    // and at the exit when nothing reads them
    let e = strict_report(
        "wgmma.wait_group.sync.aligned 0;\nadd.s64 %rd9, %rd0, %rd2;\nst.global.v4.b32 [%rd9], {%r40, %r41, %r42, %r43};",
        "",
    );
    assert!(
        e.msg.contains("exits with 1 wgmma.mma_async in flight"),
        "{e}"
    );
}
