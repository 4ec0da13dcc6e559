//! Instruction-level unit tests against hand-computed values, and the
//! emulator's error reports.

use ptx_emu::{bytes, Device, ErrorKind, LaunchConfig, Module, Param};

const HEADER: &str = ".version 8.0\n.target sm_90a\n.address_size 64\n";

fn kernel(body: &str) -> String {
    format!(
        "{HEADER}.visible .entry t(.param .u64 out, .param .u64 aux)\n{{\n\
         .reg .b32 %r<40>;\n.reg .b64 %rd<40>;\n.reg .pred %p<8>;\n.reg .b16 %h<16>;\n.reg .f32 %f<16>;\n.reg .f64 %fd<8>;\n\
         ld.param.u64 %rd0, [out];\nld.param.u64 %rd1, [aux];\n{body}\nret;\n}}\n"
    )
}

/// Runs `body` with `threads` threads in one CTA; returns the 256-byte output buffer.
fn run_n(body: &str, threads: u32) -> Result<Vec<u8>, ptx_emu::EmuError> {
    let m = Module::parse(&kernel(body)).unwrap_or_else(|e| panic!("{e}"));
    let mut dev = Device::new();
    let out = dev.alloc(256);
    let aux = dev.alloc(256);
    dev.launch(
        &m,
        "t",
        LaunchConfig::grid1d(1, threads),
        &[Param::U64(out.addr()), Param::U64(aux.addr())],
    )?;
    Ok(dev.read(out))
}

fn run(body: &str) -> Vec<u8> {
    run_n(body, 1).unwrap_or_else(|e| panic!("{e}"))
}

fn u32s(b: &[u8]) -> Vec<u32> {
    bytes::to_u32(b)
}

#[test]
fn integer_wrap_div_rem() {
    let o = u32s(&run("
        mov.b32 %r1, 0x7fffffff; add.s32 %r2, %r1, 1; st.global.b32 [%rd0], %r2;
        mov.b32 %r3, 7; mov.b32 %r4, 0; div.u32 %r5, %r3, %r4; st.global.b32 [%rd0+4], %r5;
        rem.u32 %r6, %r3, %r4; st.global.b32 [%rd0+8], %r6;
        mov.b32 %r7, -7; mov.b32 %r8, 2; div.s32 %r9, %r7, %r8; st.global.b32 [%rd0+12], %r9;
        rem.s32 %r10, %r7, %r8; st.global.b32 [%rd0+16], %r10;
        mov.b32 %r11, 0x80000000; mov.b32 %r12, -1; div.s32 %r13, %r11, %r12; st.global.b32 [%rd0+20], %r13;
        mov.b32 %r14, 0xffffffff; mul.hi.u32 %r15, %r14, %r14; st.global.b32 [%rd0+24], %r15;
        mul.wide.s32 %rd2, %r12, %r3; st.global.b64 [%rd0+32], %rd2;
        mad.lo.s32 %r16, %r3, %r3, %r12; st.global.b32 [%rd0+40], %r16;
        shr.s32 %r17, %r11, 35; st.global.b32 [%rd0+44], %r17;
        shl.b32 %r18, %r3, 32; st.global.b32 [%rd0+48], %r18;
        abs.s32 %r19, %r11; st.global.b32 [%rd0+52], %r19;
    "));
    assert_eq!(o[0], 0x8000_0000);
    assert_eq!(o[1], 0xffff_ffff, "div.u32 by zero");
    assert_eq!(o[2], 7, "rem.u32 by zero");
    assert_eq!(o[3] as i32, -3, "div.s32 truncates");
    assert_eq!(o[4] as i32, -1, "rem.s32 sign of dividend");
    assert_eq!(o[5], 0x8000_0000, "MIN / -1 wraps");
    assert_eq!(o[6], 0xffff_fffe);
    assert_eq!(o[8] as i32 as i64 | ((o[9] as i64) << 32), -7);
    assert_eq!(o[10], 48);
    assert_eq!(o[11], 0xffff_ffff, "shr.s32 by >= 32 fills with the sign");
    assert_eq!(o[12], 0, "shl by >= 32 gives 0");
    assert_eq!(o[13], 0x8000_0000, "abs(MIN) = MIN");
}

#[test]
fn bit_manipulation() {
    let o = u32s(&run("
        mov.b32 %r1, 0x12345678; mov.b32 %r2, 0x9abcdef0;
        prmt.b32 %r3, %r1, %r2, 0x3210; st.global.b32 [%rd0], %r3;
        prmt.b32 %r4, %r1, %r2, 0x7654; st.global.b32 [%rd0+4], %r4;
        prmt.b32 %r5, %r1, %r2, 0x0008; st.global.b32 [%rd0+8], %r5;
        bfe.u32 %r6, %r1, 8, 12; st.global.b32 [%rd0+12], %r6;
        bfe.s32 %r7, %r2, 28, 8; st.global.b32 [%rd0+16], %r7;
        bfi.b32 %r8, %r1, %r2, 4, 8; st.global.b32 [%rd0+20], %r8;
        brev.b32 %r9, %r1; st.global.b32 [%rd0+24], %r9;
        clz.b32 %r10, %r1; st.global.b32 [%rd0+28], %r10;
        popc.b32 %r11, %r2; st.global.b32 [%rd0+32], %r11;
        shf.l.wrap.b32 %r12, %r1, %r2, 36; st.global.b32 [%rd0+36], %r12;
        shf.r.clamp.b32 %r13, %r1, %r2, 40; st.global.b32 [%rd0+40], %r13;
        lop3.b32 %r14, %r1, %r2, %r1, 0x96; st.global.b32 [%rd0+44], %r14;
        not.b32 %r15, %r1; st.global.b32 [%rd0+48], %r15;
    "));
    assert_eq!(o[0], 0x12345678);
    assert_eq!(o[1], 0x9abcdef0);
    assert_eq!(
        o[2], 0x7878_7800,
        "selector 8 sign-replicates a.b0 (0x78 -> 0x00), selectors 0 pick a.b0"
    );
    assert_eq!(o[3], 0x456);
    assert_eq!(o[4], 0xffff_fff9, "sign-extended 0x9");
    assert_eq!(o[5], (0x9abcdef0 & !0xff0) | (0x78 << 4));
    assert_eq!(o[6], 0x12345678u32.reverse_bits());
    assert_eq!(o[7], 3);
    assert_eq!(o[8], 0x9abcdef0u32.count_ones());
    assert_eq!(
        o[9],
        ((((0x9abcdef0u64 << 32) | 0x12345678) << 4) >> 32) as u32
    );
    assert_eq!(
        o[10], 0x9abcdef0,
        "shf.r.clamp clamps the shift to 32: the result is b"
    );
    assert_eq!(o[11], 0x12345678 ^ 0x9abcdef0 ^ 0x12345678);
    assert_eq!(o[12], !0x12345678);
}

#[test]
fn f32_rounding_subnormals_nan() {
    let o = u32s(&run("
        mov.b32 %f1, 0f00010000; mov.b32 %f2, 0f00000000;
        add.f32 %f3, %f1, %f2; st.global.b32 [%rd0], %f3;
        add.ftz.f32 %f4, %f1, %f2; st.global.b32 [%rd0+4], %f4;
        mov.b32 %f5, 0f7FC00001; mov.b32 %f6, 0f3F800000;
        min.f32 %f7, %f5, %f6; st.global.b32 [%rd0+8], %f7;
        max.NaN.f32 %f8, %f5, %f6; st.global.b32 [%rd0+12], %f8;
        min.f32 %f9, %f5, %f5; st.global.b32 [%rd0+16], %f9;
        mov.b32 %f10, 0f30800000;
        fma.rn.f32 %f11, %f6, %f6, %f10; st.global.b32 [%rd0+20], %f11;
        fma.rp.f32 %f12, %f6, %f6, %f10; st.global.b32 [%rd0+24], %f12;
        neg.f32 %f13, %f10; fma.rz.f32 %f14, %f6, %f6, %f13; st.global.b32 [%rd0+28], %f14;
        fma.rm.f32 %f15, %f6, %f6, %f13; st.global.b32 [%rd0+32], %f15;
        add.f32 %f1, %f5, %f6; st.global.b32 [%rd0+36], %f1;
        mov.b32 %f2, 0f80000000; mov.b32 %f3, 0f00000000; min.f32 %f4, %f3, %f2; st.global.b32 [%rd0+40], %f4;
        setp.ltu.f32 %p1, %f5, %f6; selp.b32 %r1, 1, 0, %p1; st.global.b32 [%rd0+44], %r1;
        setp.lt.f32 %p2, %f5, %f6; selp.b32 %r2, 1, 0, %p2; st.global.b32 [%rd0+48], %r2;
        div.rn.f32 %f7, %f6, %f3; st.global.b32 [%rd0+52], %f7;
        mov.b32 %f8, 0f40400000; div.rz.f32 %f9, %f6, %f8; st.global.b32 [%rd0+56], %f9;
        div.rn.f32 %f10, %f6, %f8; st.global.b32 [%rd0+60], %f10;
    "));
    assert_eq!(o[0], 0x0001_0000, "subnormal kept without ftz");
    assert_eq!(o[1], 0, "subnormal flushed with ftz");
    assert_eq!(o[2], 0x3f80_0000, "min with one NaN returns the other");
    assert_eq!(o[3], 0x7fff_ffff, "max.NaN returns canonical NaN");
    assert_eq!(o[4], 0x7fff_ffff, "min of two NaNs is canonical NaN");
    assert_eq!(o[5], 0x3f80_0000, "1 + 2^-30 rounds to 1 (rn)");
    assert_eq!(o[6], 0x3f80_0001, "1 + 2^-30 rounds up (rp)");
    assert_eq!(o[7], 0x3f7f_ffff, "1 - 2^-30 rounds toward zero (rz)");
    assert_eq!(o[8], 0x3f7f_ffff, "1 - 2^-30 rounds down (rm)");
    assert_eq!(o[9], 0x7fff_ffff, "NaN + 1 is canonical NaN");
    assert_eq!(o[10], 0x8000_0000, "min(+0, -0) = -0");
    assert_eq!(o[11], 1, "ltu true on NaN");
    assert_eq!(o[12], 0, "lt false on NaN");
    assert_eq!(o[13], 0x7f80_0000, "1/0 = inf");
    assert_eq!(o[14], 0x3eaa_aaaa, "1/3 toward zero");
    assert_eq!(o[15], 0x3eaa_aaab, "1/3 nearest");
}

/// `Device::approx_div_skew_ulps` moves f32 `div.approx`/`div.full`
/// quotients (not `div.rn`, not zeros or infinities) by ulps, away from
/// zero when positive, saturating at zero.
#[test]
fn approx_division_skew() {
    let body = "
        mov.b32 %f1, 0f3F800000; mov.b32 %f2, 0f40400000; mov.b32 %f3, 0fC0400000;
        mov.b32 %f4, 0f00000000; mov.b32 %f5, 0f00000001;
        div.approx.f32 %f6, %f1, %f2; st.global.b32 [%rd0], %f6;
        div.full.f32 %f7, %f1, %f3; st.global.b32 [%rd0+4], %f7;
        div.rn.f32 %f8, %f1, %f2; st.global.b32 [%rd0+8], %f8;
        div.full.f32 %f9, %f4, %f2; st.global.b32 [%rd0+12], %f9;
        div.approx.f32 %f10, %f1, %f4; st.global.b32 [%rd0+16], %f10;
        div.full.f32 %f11, %f5, %f1; st.global.b32 [%rd0+20], %f11;
    ";
    let m = Module::parse(&kernel(body)).unwrap_or_else(|e| panic!("{e}"));
    let run_skewed = |skew: i32| {
        let mut dev = Device::new();
        dev.approx_div_skew_ulps = skew;
        let out = dev.alloc(256);
        let aux = dev.alloc(256);
        dev.launch(
            &m,
            "t",
            LaunchConfig::grid1d(1, 1),
            &[Param::U64(out.addr()), Param::U64(aux.addr())],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        u32s(&dev.read(out))
    };
    assert_eq!(
        run_skewed(0)[..6],
        [0x3eaa_aaab, 0xbeaa_aaab, 0x3eaa_aaab, 0, 0x7f80_0000, 1]
    );
    assert_eq!(
        run_skewed(2)[..6],
        [0x3eaa_aaad, 0xbeaa_aaad, 0x3eaa_aaab, 0, 0x7f80_0000, 3]
    );
    assert_eq!(
        run_skewed(-2)[..6],
        [0x3eaa_aaa9, 0xbeaa_aaa9, 0x3eaa_aaab, 0, 0x7f80_0000, 0]
    );
}

#[test]
fn conversions() {
    let o = u32s(&run("
        mov.b32 %f1, 0f3F801000; cvt.rn.f16.f32 %h1, %f1; st.global.b16 [%rd0], %h1;
        mov.b32 %f2, 0f3F803000; cvt.rn.f16.f32 %h2, %f2; st.global.b16 [%rd0+2], %h2;
        mov.b32 %f3, 0f477FF000; cvt.rn.f16.f32 %h3, %f3; st.global.b16 [%rd0+4], %h3;
        cvt.rz.f16.f32 %h4, %f3; st.global.b16 [%rd0+6], %h4;
        mov.b32 %f4, 0f33800000; cvt.rn.f16.f32 %h5, %f4; st.global.b16 [%rd0+8], %h5;
        mov.b32 %f5, 0f33000000; cvt.rn.f16.f32 %h6, %f5; st.global.b16 [%rd0+10], %h6;
        cvt.rp.f16.f32 %h7, %f5; st.global.b16 [%rd0+12], %h7;
        mov.b32 %f6, 0f3F808000; cvt.rn.bf16.f32 %h8, %f6; st.global.b16 [%rd0+14], %h8;
        mov.b32 %f7, 0f7FC00000; cvt.rzi.s32.f32 %r1, %f7; st.global.b32 [%rd0+16], %r1;
        mov.b32 %f8, 0f4F32D05E; cvt.rzi.s32.f32 %r2, %f8; st.global.b32 [%rd0+20], %r2;
        mov.b32 %f9, 0fBFC00000; cvt.rmi.f32.f32 %f10, %f9; st.global.b32 [%rd0+24], %f10;
        cvt.rni.s32.f32 %r3, %f9; st.global.b32 [%rd0+28], %r3;
        mov.b32 %f11, 0f40200000; cvt.rni.s32.f32 %r4, %f11; st.global.b32 [%rd0+32], %r4;
        mov.b32 %f12, 0f44000000; mov.b32 %f13, 0fC3E00000; cvt.rn.satfinite.e4m3x2.f32 %h9, %f12, %f13; st.global.b16 [%rd0+36], %h9;
        mov.b32 %r5, 16777217; cvt.rn.f32.u32 %f14, %r5; st.global.b32 [%rd0+40], %f14;
        cvt.rp.f32.u32 %f15, %r5; st.global.b32 [%rd0+44], %f15;
        mov.b32 %r6, -1; cvt.u8.u32 %r7, %r6; st.global.b32 [%rd0+48], %r7;
        cvt.sat.u8.s32 %r8, %r6; st.global.b32 [%rd0+52], %r8;
        cvt.s64.s32 %rd3, %r6; st.global.b64 [%rd0+56], %rd3;
        mov.b32 %f1, 0f3FC00000; cvt.rna.tf32.f32 %r9, %f1; st.global.b32 [%rd0+64], %r9;
        mov.b32 %f2, 0f3F801000; cvt.rna.tf32.f32 %r10, %f2; st.global.b32 [%rd0+68], %r10;
        cvt.sat.f32.f32 %f3, %f12; st.global.b32 [%rd0+72], %f3;
        cvt.f32.f16 %f4, %h5; st.global.b32 [%rd0+76], %f4;
    "));
    let h = |i: usize| (o[i / 2] >> (16 * (i % 2))) as u16;
    assert_eq!(h(0), 0x3c00, "1 + 2^-11 ties to even -> 1.0");
    assert_eq!(h(1), 0x3c02, "1 + 3*2^-11 ties to even -> 1 + 2^-9");
    assert_eq!(h(2), 0x7c00, "65520 rounds to inf (rn)");
    assert_eq!(h(3), 0x7bff, "65520 toward zero is max finite");
    assert_eq!(h(4), 0x0001, "2^-24 is the smallest subnormal");
    assert_eq!(h(5), 0x0000, "2^-25 ties to even zero");
    assert_eq!(h(6), 0x0001, "2^-25 rounds up to 2^-24 (rp)");
    assert_eq!(h(7), 0x3f80, "bf16 tie to even");
    assert_eq!(o[4], 0, "NaN -> 0");
    assert_eq!(o[5], 0x7fff_ffff, "3e9 saturates");
    assert_eq!(o[6], 0xc000_0000, "floor(-1.5) = -2");
    assert_eq!(o[7] as i32, -2, "rni(-1.5) = -2 (ties to even)");
    assert_eq!(o[8], 2, "rni(2.5) = 2");
    assert_eq!(
        o[9] & 0xffff,
        0x7efe,
        "e4m3x2: hi = 512 saturates to 448 (0x7e), lo = -448 (0xfe)"
    );
    assert_eq!(o[10], 0x4b80_0000, "2^24+1 ties to even");
    assert_eq!(o[11], 0x4b80_0001, "2^24+1 rounds up (rp)");
    assert_eq!(o[12], 0xff);
    assert_eq!(o[13], 0, "sat clamps -1 to 0");
    assert_eq!(o[14], 0xffff_ffff);
    assert_eq!(o[15], 0xffff_ffff);
    assert_eq!(o[16], 0x3fc0_0000);
    assert_eq!(o[17], 0x3f80_2000, "tf32 rna: halfway rounds away");
    assert_eq!(o[18], 0x3f80_0000, "sat to 1.0");
    assert_eq!(o[19], 0x3380_0000, "f16 subnormal to f32 exactly");
}

#[test]
fn fp4_conversions() {
    let o = u32s(&run("
        {
        .reg .b8 %q<4>;
        mov.b32 %f1, 0f40A00000; mov.b32 %f2, 0fBE800001;
        cvt.rn.satfinite.e2m1x2.f32 %q1, %f1, %f2; mov.b16 %h1, {%q1, 0}; st.global.b16 [%rd0], %h1;
        mov.b32 %f3, 0f7FC00000; mov.b32 %f4, 0fC1200000;
        cvt.rn.satfinite.e2m1x2.f32 %q2, %f3, %f4; mov.b16 %h2, {%q2, 0}; st.global.b16 [%rd0+2], %h2;
        mov.b16 %h3, 0x00F1; mov.b16 {%q3, %q0}, %h3; cvt.rn.f16x2.e2m1x2 %r1, %q3; st.global.b32 [%rd0+4], %r1;
        }
    "));
    assert_eq!(
        o[0] & 0xffff,
        0x69,
        "hi: 5 ties to even 4 (0x6), lo: -0.25000003 to -0.5 (0x9)"
    );
    assert_eq!(
        o[0] >> 16,
        0x7f,
        "hi: NaN to +6 (0x7), lo: -10 saturates to -6 (0xf)"
    );
    assert_eq!(
        o[1], 0xc600_3800,
        "0xF1: low nibble 0.5 in the low half, -6 in the high"
    );
}

#[test]
fn warp_collectives() {
    // 64 threads: each lane shuffles, votes and reduces; thread 0 of each warp stores.
    let body = "
        mov.u32 %r1, %tid.x; mov.u32 %r2, %laneid;
        shfl.sync.bfly.b32 %r3, %r1, 1, 31, -1;
        shfl.sync.up.b32 %r4|%p1, %r1, 3, 0, -1;
        shfl.sync.down.b32 %r5|%p2, %r1, 3, 31, -1;
        shfl.sync.idx.b32 %r6, %r1, 5, 31, -1;
        setp.lt.u32 %p3, %r2, 10;
        vote.sync.ballot.b32 %r7, %p3, -1;
        vote.sync.any.pred %p4, %p3, -1;
        vote.sync.all.pred %p5, %p3, -1;
        redux.sync.add.u32 %r8, %r1, -1;
        redux.sync.max.s32 %r9, %r1, -1;
        elect.sync %r10|%p6, -1;
        selp.u32 %r11, 1, 0, %p1; selp.u32 %r12, 1, 0, %p2; selp.u32 %r13, 1, 0, %p4; selp.u32 %r14, 1, 0, %p5; selp.u32 %r15, 1, 0, %p6;
        mul.wide.u32 %rd2, %r1, 48; add.s64 %rd3, %rd1, %rd2;
        st.global.v4.b32 [%rd3], {%r3, %r4, %r5, %r6};
        st.global.v4.b32 [%rd3+16], {%r7, %r8, %r9, %r10};
        st.global.v2.b32 [%rd3+32], {%r11, %r12};
        bar.sync 0;
        setp.ne.u32 %p7, %r1, 35; @%p7 bra DONE;
        st.global.v4.b32 [%rd0], {%r13, %r14, %r15, %r3};
        DONE:";
    let m = Module::parse(&kernel(body)).unwrap_or_else(|e| panic!("{e}"));
    let mut dev = Device::new();
    let out = dev.alloc(256);
    let aux = dev.alloc(64 * 48);
    dev.launch(
        &m,
        "t",
        LaunchConfig::grid1d(1, 64),
        &[Param::U64(out.addr()), Param::U64(aux.addr())],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let a = u32s(&dev.read(aux));
    for t in 0..64u32 {
        let r = &a[(t * 12) as usize..(t * 12 + 10) as usize];
        let lane = t % 32;
        let w = t - lane;
        assert_eq!(r[0], t ^ 1, "bfly");
        assert_eq!(r[1], if lane >= 3 { t - 3 } else { t }, "up");
        assert_eq!(r[2], if lane + 3 <= 31 { t + 3 } else { t }, "down");
        assert_eq!(r[3], w + 5, "idx");
        assert_eq!(r[4], 0x3ff, "ballot");
        assert_eq!(r[5], (w..w + 32).sum::<u32>(), "redux.add");
        assert_eq!(r[6], w + 31, "redux.max");
        assert_eq!(r[7], 0, "elect returns the leader lane");
        assert_eq!(r[8], (lane >= 3) as u32);
        assert_eq!(r[9], (lane + 3 <= 31) as u32);
    }
    let o = u32s(&dev.read(out));
    assert_eq!(
        &o[..4],
        &[1, 0, 0, 34],
        "any, all, elected (lane 3 is not), bfly"
    );
}

#[test]
fn atomics_and_shared() {
    // 128 threads: shared-memory atomic counter, global atomics of each flavour.
    let body = "
        .shared .align 4 .b8 sm[16];
        mov.u32 %r1, %tid.x;
        setp.ne.u32 %p1, %r1, 0; @%p1 bra S1;
        mov.b32 %r2, 0; st.shared.b32 [sm], %r2; st.shared.b32 [sm+4], %r2;
        S1: bar.sync 0;
        atom.shared.add.u32 %r3, [sm], 1;
        atom.shared.max.u32 %r4, [sm+4], %r1;
        atom.global.add.u32 %r5, [%rd1], 2;
        mov.b32 %f1, 0f3F000000; red.global.add.f32 [%rd1+4], %f1;
        atom.global.inc.u32 %r6, [%rd1+8], 9;
        atom.global.cas.b32 %r7, [%rd1+12], %r1, 1000;
        atom.global.exch.b32 %r8, [%rd1+16], %r1;
        atom.global.min.s32 %r9, [%rd1+20], %r1;
        bar.sync 0;
        @%p1 bra DONE;
        ld.shared.b32 %r10, [sm]; ld.shared.b32 %r11, [sm+4];
        st.global.v2.b32 [%rd0], {%r10, %r11};
        DONE:";
    let m = Module::parse(&kernel(body)).unwrap_or_else(|e| panic!("{e}"));
    let mut dev = Device::new();
    let out = dev.alloc(256);
    let aux = dev.alloc_from(&bytes::from_i32(&[0, 0, 0, 0, -5, 50]));
    dev.launch(
        &m,
        "t",
        LaunchConfig::grid1d(1, 128),
        &[Param::U64(out.addr()), Param::U64(aux.addr())],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let o = u32s(&dev.read(out));
    assert_eq!(&o[..2], &[128, 127]);
    let a = u32s(&dev.read(aux));
    assert_eq!(a[0], 256);
    assert_eq!(f32::from_bits(a[1]), 64.0);
    assert_eq!(a[2], 128 % 10, "inc wraps at 9 -> 0");
    assert_eq!(a[3], 1000, "cas by thread 0 (old 0 == tid 0)");
    assert!(a[4] < 128, "some thread exchanged last");
    assert_eq!(a[5] as i32, 0, "min");
}

fn err_of(body: &str, threads: u32) -> ptx_emu::EmuError {
    match run_n(body, threads) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

#[test]
fn error_out_of_bounds() {
    let e = err_of("mov.b32 %r1, 5; st.global.b32 [%rd0+256], %r1;", 1);
    assert_eq!(e.kind, ErrorKind::OutOfBounds);
    assert!(e.inst.contains("st.global.b32"), "{e}");
    assert!(e.addr.is_some());
    assert_eq!(e.kernel, "t");
    assert!(e.line > 0);
}

#[test]
fn error_misaligned() {
    let e = err_of("ld.global.b32 %r1, [%rd0+2];", 1);
    assert_eq!(e.kind, ErrorKind::Misaligned, "{e}");
    let e = err_of("ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd0+4];", 1);
    assert_eq!(e.kind, ErrorKind::Misaligned, "{e}");
}

#[test]
fn error_uninitialised_shared() {
    let e = err_of(".shared .align 4 .b8 sm[64]; mov.u32 %r1, %tid.x; setp.eq.u32 %p1, %r1, 1; @%p1 st.shared.b32 [sm], %r1; bar.sync 0; ld.shared.b32 %r2, [sm+4];", 32);
    assert_eq!(e.kind, ErrorKind::UninitShared, "{e}");
    assert_eq!(e.addr, Some(4));
    assert!(e.tid.0 < 32);
}

#[test]
fn error_partial_barrier() {
    let e = err_of(
        "mov.u32 %r1, %tid.x; setp.lt.u32 %p1, %r1, 64; @%p1 bra SKIP; bar.sync 0; SKIP:",
        128,
    );
    assert_eq!(e.kind, ErrorKind::Deadlock, "{e}");
    assert!(e.msg.contains("barrier 0"), "{e}");
    assert_eq!(e.tid, (64, 0, 0));
}

#[test]
fn error_collective_with_exited_thread() {
    let e = err_of("mov.u32 %r1, %tid.x; setp.eq.u32 %p1, %r1, 7; @%p1 bra SKIP; shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1; SKIP:", 32);
    assert_eq!(e.kind, ErrorKind::Deadlock, "{e}");
}

#[test]
fn error_unsupported() {
    let e = err_of("tcgen05.shift.cta_group::1.down [%r1];", 1);
    assert_eq!(e.kind, ErrorKind::Unsupported, "{e}");
    assert!(e.msg.contains("tcgen05.shift"), "{e}");
}

#[test]
fn printf_capture() {
    let src = format!(
        "{HEADER}.extern .func (.param .b32 r) vprintf(.param .b64 a, .param .b64 b);\n\
         .global .align 1 .b8 fmt[15] = {{104, 105, 32, 37, 100, 32, 37, 102, 32, 37, 115, 33, 10, 0, 0}};\n\
         .global .align 1 .b8 str[3] = {{111, 107, 0}};\n\
         .visible .entry t()\n{{\n.local .align 8 .b8 buf[24];\n.reg .b32 %r<4>;\n.reg .b64 %rd<8>;\n\
         mov.u32 %r1, %tid.x; mov.b64 %rd1, buf; cvta.local.u64 %rd2, %rd1;\n\
         st.local.b32 [buf], %r1; mov.b64 %rd3, 0d3FF8000000000000; st.local.b64 [buf+8], %rd3;\n\
         mov.b64 %rd4, str; cvta.global.u64 %rd5, %rd4; st.local.b64 [buf+16], %rd5;\n\
         mov.b64 %rd6, fmt; cvta.global.u64 %rd7, %rd6;\n\
         {{ .param .b64 p0; .param .b64 p1; .param .b32 rv; st.param.b64 [p0], %rd7; st.param.b64 [p1], %rd2;\n\
         call.uni (rv), vprintf, (p0, p1); }}\nret;\n}}\n"
    );
    let m = Module::parse(&src).unwrap_or_else(|e| panic!("{e}"));
    let mut dev = Device::new();
    let r = dev
        .launch(&m, "t", LaunchConfig::grid1d(1, 2), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.printf, "hi 0 1.500000 ok!\nhi 1 1.500000 ok!\n");
}

#[test]
fn packed_half_and_misc_float() {
    let o = u32s(&run("
        mov.b32 %r1, 0x3c004000; mov.b32 %r2, 0x40003c00;
        add.rn.f16x2 %r3, %r1, %r2; st.global.b32 [%rd0], %r3;
        mul.rn.bf16x2 %r4, %r1, %r1; st.global.b32 [%rd0+4], %r4;
        max.f16x2 %r5, %r1, %r2; st.global.b32 [%rd0+8], %r5;
        neg.f16x2 %r6, %r1; st.global.b32 [%rd0+12], %r6;
        mov.b32 %f1, 0f40400000; rcp.rn.f32 %f2, %f1; st.global.b32 [%rd0+16], %f2;
        rcp.rz.f32 %f3, %f1; st.global.b32 [%rd0+20], %f3;
        mov.b32 %f4, 0fBF800000; set.lt.u32.f32 %r7, %f4, %f1; st.global.b32 [%rd0+24], %r7;
        set.gt.f32.f32 %r8, %f4, %f1; st.global.b32 [%rd0+28], %r8;
        slct.s32.f32 %r9, 5, 6, %f4; st.global.b32 [%rd0+32], %r9;
        testp.finite.f32 %p1, %f1; selp.b32 %r10, 1, 0, %p1; st.global.b32 [%rd0+36], %r10;
        copysign.f32 %f5, %f4, %f1; st.global.b32 [%rd0+40], %f5;
        mov.b32 %f6, 0f40000000; sqrt.rz.f32 %f7, %f6; st.global.b32 [%rd0+44], %f7;
        sqrt.rp.f32 %f8, %f6; st.global.b32 [%rd0+48], %f8;
        mov.b64 %fd1, 0d4000000000000000; sqrt.rn.f64 %fd2, %fd1; st.global.b64 [%rd0+56], %fd2;
    "));
    assert_eq!(o[0], 0x4200_4200, "1+2 = 3 and 2+1 = 3 in each f16 lane");
    assert_eq!(o[1], bf16x2_square(0x3c00_4000), "bf16x2 lane-wise square");
    assert_eq!(o[2], 0x4000_4000, "lane-wise max");
    assert_eq!(o[3], 0xbc00_c000);
    assert_eq!(o[4], 0x3eaa_aaab, "rcp.rn(3)");
    assert_eq!(o[5], 0x3eaa_aaaa, "rcp.rz(3)");
    assert_eq!(o[6], 0xffff_ffff, "set true gives all ones");
    assert_eq!(o[7], 0, "set false gives 0.0");
    assert_eq!(o[8], 6, "slct picks b for negative c");
    assert_eq!(o[9], 1);
    assert_eq!(
        o[10], 0xc040_0000,
        "copysign(a = -1, b = 3) = -3: the sign of a on the magnitude of b"
    );
    assert_eq!(o[11], 0x3fb5_04f3, "sqrt(2) toward zero");
    assert_eq!(o[12], 0x3fb5_04f4, "sqrt(2) up");
    assert_eq!(
        f64::from_bits(o[14] as u64 | ((o[15] as u64) << 32)),
        2f64.sqrt()
    );
}

/// bf16x2 lane-wise square of two bf16 lanes holding 0x3c00 (~0.0078) and 0x4000 (2.0).
fn bf16x2_square(x: u32) -> u32 {
    let sq = |h: u32| {
        let f = f32::from_bits(h << 16);
        let p = (f as f64 * f as f64) as f32; // exact: 8-bit mantissas
        p.to_bits() >> 16
    };
    sq(x & 0xffff) | (sq(x >> 16) << 16)
}

#[test]
fn cp_async_and_matrix_load_store() {
    // 32 threads: cp.async 16 bytes each into shared, then ldmatrix.x1 / stmatrix.x1.trans round trip.
    let body = "
        .shared .align 16 .b8 sm[1024];
        mov.u32 %r1, %tid.x;
        mul.wide.u32 %rd2, %r1, 16; add.s64 %rd3, %rd1, %rd2;
        mov.u32 %r2, sm; mul.lo.u32 %r3, %r1, 16; add.u32 %r4, %r2, %r3;
        cp.async.cg.shared.global [%r4], [%rd3], 16;
        cp.async.commit_group; cp.async.wait_all; bar.sync 0;
        and.b32 %r5, %r1, 7; mul.lo.u32 %r6, %r5, 16; add.u32 %r7, %r2, %r6;
        ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r8}, [%r7];
        add.u32 %r9, %r7, 512;
        stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%r9], {%r8};
        bar.sync 0;
        mul.wide.u32 %rd4, %r1, 20; add.s64 %rd5, %rd0, %rd4;
        st.global.b32 [%rd5], %r8;
        setp.lt.u32 %p1, %r1, 8; @!%p1 bra DONE;
        ld.shared.v4.b32 {%r10, %r11, %r12, %r13}, [%r4+512];
        mul.wide.u32 %rd6, %r1, 16; add.s64 %rd7, %rd1, %rd6; st.global.v4.b32 [%rd7+512], {%r10, %r11, %r12, %r13};
        DONE:";
    let m = Module::parse(&kernel(body)).unwrap_or_else(|e| panic!("{e}"));
    let mut dev = Device::new();
    let out = dev.alloc(32 * 20);
    let src: Vec<u16> = (0..1024u16).collect();
    let aux = dev.alloc_from(&bytes::from_u16(&src));
    dev.launch(
        &m,
        "t",
        LaunchConfig::grid1d(1, 32),
        &[Param::U64(out.addr()), Param::U64(aux.addr())],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let o = u32s(&dev.read(out));
    // ldmatrix x1: lane l holds row l/4, columns 2*(l%4), +1 of the 8x8 matrix at rows 0..8 (16 bytes each)
    for lane in 0..32u32 {
        let (r, c) = (lane / 4, 2 * (lane % 4));
        let e = |c: u32| (r * 8 + c) as u16;
        assert_eq!(
            o[(lane * 5) as usize],
            e(c) as u32 | ((e(c + 1) as u32) << 16),
            "ldmatrix lane {lane}"
        );
    }
    // stmatrix .trans wrote the transpose: element (r, c) of the stored matrix = original (c, r)
    let a = bytes::to_u16(&dev.read(aux));
    for r in 0..8usize {
        for c in 0..8usize {
            assert_eq!(
                a[256 + r * 8 + c],
                (c * 8 + r) as u16,
                "transposed ({r},{c})"
            );
        }
    }
}

#[test]
fn mma_sync_m16n8k16_fragments() {
    // A[i][k] = i (f16), B[k][j] = 1 if k == j else 0 -> D[i][j] = A[i][j] + C = i + 0.5
    let body = "
        mov.u32 %r1, %laneid; shr.u32 %r2, %r1, 2; and.b32 %r3, %r1, 3;
        cvt.rn.f16.u32 %h1, %r2; add.u32 %r4, %r2, 8; cvt.rn.f16.u32 %h2, %r4;
        mov.b32 %r5, {%h1, %h1}; mov.b32 %r6, {%h2, %h2};
        mov.b16 %h3, 0x3c00; mov.b16 %h4, 0x0000;
        shl.b32 %r7, %r3, 1; setp.eq.u32 %p1, %r7, %r2; add.u32 %r8, %r7, 1; setp.eq.u32 %p2, %r8, %r2;
        selp.b16 %h5, %h3, %h4, %p1; selp.b16 %h6, %h3, %h4, %p2; mov.b32 %r9, {%h5, %h6};
        mov.b32 %r10, 0;
        mov.b32 %f1, 0f3F000000;
        mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f2, %f3, %f4, %f5}, {%r5, %r6, %r5, %r6}, {%r9, %r10}, {%f1, %f1, %f1, %f1};
        mul.wide.u32 %rd2, %r1, 16; add.s64 %rd3, %rd1, %rd2;
        st.global.v4.f32 [%rd3], {%f2, %f3, %f4, %f5};";
    let m = Module::parse(&kernel(body)).unwrap_or_else(|e| panic!("{e}"));
    let mut dev = Device::new();
    let out = dev.alloc(16);
    let aux = dev.alloc(32 * 16);
    dev.launch(
        &m,
        "t",
        LaunchConfig::grid1d(1, 32),
        &[Param::U64(out.addr()), Param::U64(aux.addr())],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let d = bytes::to_f32(&dev.read(aux));
    for lane in 0..32usize {
        let (g, t) = (lane / 4, lane % 4);
        // A cols 8..15 are also i, but B rows 8..15 are zero; B[k][j] = (k == j) for k < 8 only when j == k
        let _ = t;
        let want = [
            g as f32 + 0.5,
            g as f32 + 0.5,
            (g + 8) as f32 + 0.5,
            (g + 8) as f32 + 0.5,
        ];
        for r in 0..4 {
            assert_eq!(d[lane * 4 + r], want[r], "lane {lane} reg {r}");
        }
    }
}

#[test]
fn carry_chains() {
    // 64-bit sums and differences from 32-bit halves, and the 64 x 64
    // product's halves the way NVIDIA's f64 trig reduction computes them.
    let o = u32s(&run("
        mov.b32 %r1, 0xffffffff; mov.b32 %r2, 1; mov.b32 %r3, 2;
        add.cc.u32 %r4, %r1, %r2; addc.u32 %r5, %r3, 0;
        st.global.b32 [%rd0], %r4; st.global.b32 [%rd0+4], %r5;
        sub.cc.u32 %r6, %r2, %r3; subc.cc.u32 %r7, %r3, %r3; subc.u32 %r8, %r3, 0;
        st.global.b32 [%rd0+8], %r6; st.global.b32 [%rd0+12], %r7; st.global.b32 [%rd0+16], %r8;
        add.cc.u32 %r9, %r2, %r2; addc.u32 %r10, 0, 0; st.global.b32 [%rd0+20], %r10;
        mad.lo.cc.u32 %r11, %r1, %r1, %r1; madc.hi.u32 %r12, %r1, %r1, 0;
        st.global.b32 [%rd0+24], %r11; st.global.b32 [%rd0+28], %r12;
        mov.b64 %rd2, 0xffffffffffffffff; add.cc.u64 %rd3, %rd2, %rd2; addc.cc.u64 %rd4, 0, 0;
        addc.u32 %r13, 5, 0;
        st.global.b64 [%rd0+32], %rd3; st.global.b64 [%rd0+40], %rd4; st.global.b32 [%rd0+48], %r13;
    "));
    assert_eq!(
        (o[0], o[1]),
        (0, 3),
        "0xffffffff + 1 carries into the high word"
    );
    assert_eq!(o[2], 0xffff_ffff, "1 - 2 wraps");
    assert_eq!(o[3], 0xffff_ffff, "the borrow goes into subc");
    assert_eq!(o[4], 1, "2 - 0 - borrow");
    assert_eq!(o[5], 0, "no carry out of 1 + 1");
    // 0xffffffff^2 + 0xffffffff = 0xffffffff_00000000: lo 0, carry into hi
    assert_eq!((o[6], o[7]), (0, 0xffff_ffff));
    assert_eq!(o[8] as u64 | (o[9] as u64) << 32, 0xffff_ffff_ffff_fffe);
    assert_eq!(o[10] as u64 | (o[11] as u64) << 32, 1, "64-bit carry");
    assert_eq!(o[12], 5, "addc.cc.u64 of 0 + 0 + 1 carries nothing out");
}

#[test]
fn error_wide_carry_chain_is_unsupported() {
    let e = err_of("mov.b32 %r1, 1; mad.wide.cc.u32 %rd2, %r1, %r1, %rd1;", 1);
    assert_eq!(e.kind, ErrorKind::Unsupported, "{e}");
}

#[test]
fn min_max_relu_clamp_signed_results_at_zero() {
    let o = u32s(&run("
        mov.b32 %r1, -5; mov.b32 %r2, 3; mov.b32 %r3, 9;
        min.relu.s32 %r4, %r1, %r2; st.global.b32 [%rd0], %r4;
        min.relu.s32 %r5, %r2, %r3; st.global.b32 [%rd0+4], %r5;
        max.relu.s32 %r6, %r1, -2; st.global.b32 [%rd0+8], %r6;
        min.s32 %r7, %r1, %r2; st.global.b32 [%rd0+12], %r7;
    "));
    assert_eq!(o[..4], [0, 3, 0, -5i32 as u32]);
    // float .relu (NaN handling) is not emulated
    let e = err_of("mov.b32 %f1, 1.0; min.relu.f32 %f2, %f1, %f1;", 1);
    assert_eq!(e.kind, ErrorKind::Unsupported, "{e}");
}

#[test]
fn bit_find_extend_dot() {
    let o = u32s(&run("
        mov.b32 %r1, 0x00f00000; bfind.u32 %r2, %r1; st.global.b32 [%rd0], %r2;
        bfind.shiftamt.u32 %r3, %r1; st.global.b32 [%rd0+4], %r3;
        mov.b32 %r4, 0; bfind.u32 %r5, %r4; st.global.b32 [%rd0+8], %r5;
        mov.b32 %r6, -8; bfind.s32 %r7, %r6; st.global.b32 [%rd0+12], %r7;
        mov.b32 %r8, 0xf0; szext.clamp.s32 %r9, %r8, 8; st.global.b32 [%rd0+16], %r9;
        szext.wrap.u32 %r10, %r8, 36; st.global.b32 [%rd0+20], %r10;
        bmsk.clamp.b32 %r11, 4, 8; st.global.b32 [%rd0+24], %r11;
        mov.b32 %r12, 0x01fe03fd; mov.b32 %r13, 0x02020202; mov.b32 %r14, 10;
        dp4a.s32.s32 %r15, %r12, %r13, %r14; st.global.b32 [%rd0+28], %r15;
        dp4a.u32.u32 %r16, %r12, %r13, %r14; st.global.b32 [%rd0+32], %r16;
        mov.b32 %r17, 3; mov.b32 %r18, 10; sad.s32 %r19, %r17, %r18, %r14; st.global.b32 [%rd0+36], %r19;
        isspacep.global %p1, %rd0; selp.b32 %r20, 1, 0, %p1; st.global.b32 [%rd0+40], %r20;
        isspacep.shared %p2, %rd0; selp.b32 %r21, 1, 0, %p2; st.global.b32 [%rd0+44], %r21;
    "));
    assert_eq!(o[0], 23);
    assert_eq!(o[1], 8);
    assert_eq!(o[2], 0xffff_ffff, "no bit set");
    assert_eq!(o[3], 2, "-8 = ...11000: most significant 0 bit is bit 2");
    assert_eq!(o[4], 0xffff_fff0, "sign-extend 0xf0 from 8 bits");
    assert_eq!(o[5], 0x0, "wrap: 36 & 31 = 4 bits of 0xf0 -> 0");
    assert_eq!(o[6], 0xff0);
    assert_eq!(
        o[7] as i32,
        10 + 2 * (-3 + 3 - 2 + 1),
        "signed bytes fd, 03, fe, 01"
    );
    assert_eq!(o[8], 10 + 2 * (0xfd + 3 + 0xfe + 1));
    assert_eq!(o[9], 17);
    assert_eq!(o[10], 1);
    assert_eq!(o[11], 0);
}

#[test]
fn barrier_reductions() {
    let body = "
        mov.u32 %r1, %tid.x;
        setp.lt.u32 %p1, %r1, 10;
        bar.red.popc.u32 %r2, 0, %p1;
        setp.lt.u32 %p2, %r1, 100;
        bar.red.and.pred %p3, 1, %p2;
        setp.eq.u32 %p4, %r1, 63;
        barrier.red.or.pred %p5, 2, 64, %p4;
        bar.red.and.pred %p6, 3, !%p4;
        selp.u32 %r3, 1, 0, %p3; selp.u32 %r4, 1, 0, %p5; selp.u32 %r5, 1, 0, %p6;
        mul.wide.u32 %rd2, %r1, 16; add.s64 %rd3, %rd1, %rd2;
        st.global.v4.b32 [%rd3], {%r2, %r3, %r4, %r5};";
    let m = Module::parse(&kernel(body)).unwrap_or_else(|e| panic!("{e}"));
    let mut dev = Device::new();
    let out = dev.alloc(16);
    let aux = dev.alloc(64 * 16);
    dev.launch(
        &m,
        "t",
        LaunchConfig::grid1d(1, 64),
        &[Param::U64(out.addr()), Param::U64(aux.addr())],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let a = u32s(&dev.read(aux));
    for t in 0..64 {
        assert_eq!(&a[4 * t..4 * t + 4], &[10, 1, 1, 0], "thread {t}");
    }
}

#[test]
fn spin_wait_on_shared_flag_and_mbarrier_polling() {
    // Thread 0 spins on a shared flag that thread 33 sets; thread 32 polls an
    // mbarrier with test_wait until thread 1 arrives.
    let body = "
        .shared .align 8 .b8 sm[16];
        mov.u32 %r1, %tid.x;
        setp.ne.u32 %p1, %r1, 0; @%p1 bra INIT_DONE;
        mov.b32 %r2, 0; st.shared.b32 [sm], %r2; mov.b32 %r3, 1; mbarrier.init.shared.b64 [sm+8], %r3;
        INIT_DONE: bar.sync 0;
        setp.eq.u32 %p2, %r1, 0; @%p2 bra SPIN;
        setp.eq.u32 %p3, %r1, 33; @%p3 bra SETFLAG;
        setp.eq.u32 %p4, %r1, 32; @%p4 bra POLL;
        setp.eq.u32 %p5, %r1, 1; @%p5 bra ARRIVE;
        bra DONE;
        SPIN: ld.volatile.shared.b32 %r4, [sm]; setp.eq.u32 %p6, %r4, 0; @%p6 bra SPIN;
        st.global.b32 [%rd0], %r4; bra DONE;
        SETFLAG: mov.b32 %r5, 77; st.volatile.shared.b32 [sm], %r5; bra DONE;
        POLL: mbarrier.test_wait.parity.shared.b64 %p7, [sm+8], 0; @!%p7 bra POLL;
        mov.b32 %r6, 5; st.global.b32 [%rd0+4], %r6; bra DONE;
        ARRIVE: mbarrier.arrive.shared.b64 %rd2, [sm+8];
        DONE:";
    let o = u32s(&run_n(body, 64).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(&o[..2], &[77, 5]);
}

#[test]
fn error_infinite_loop_hits_the_budget() {
    let m = Module::parse(&kernel("LOOP: bra LOOP;")).unwrap();
    let mut dev = Device::new();
    dev.max_instructions_per_thread = 100_000;
    let out = dev.alloc(16);
    let err = dev
        .launch(
            &m,
            "t",
            LaunchConfig::grid1d(1, 1),
            &[Param::U64(out.addr()), Param::U64(out.addr())],
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Timeout, "{err}");
}

#[test]
fn setp_packed_halves() {
    let o = u32s(&run("
        mov.b32 %r1, 0x3c004000; mov.b32 %r2, 0x40003c00;
        setp.lt.f16x2 %p1|%p2, %r1, %r2;
        selp.u32 %r3, 1, 0, %p1; selp.u32 %r4, 1, 0, %p2;
        st.global.v2.b32 [%rd0], {%r3, %r4};
    "));
    assert_eq!(
        &o[..2],
        &[0, 1],
        "low lane 2 < 1 false, high lane 1 < 2 true"
    );
}

#[test]
fn parses_debug_directives_and_compact_param_attributes() {
    let src = ".version 8.0\n.target sm_90a\n.address_size 64\n.file 1 \"k.py\"\n\
        .visible .entry t(.param .u64 .ptr.global.align 16 out)\n{\n.reg .b32 %r<2>;\n.reg .b64 %rd<2>;\n\
        .loc 1 3 0\nld.param.u64 %rd0, [out];\n.loc 1 4 0\nmov.b32 %r0, 9;\n.pragma \"nounroll\";\nst.global.b32 [%rd0], %r0;\nret;\n}\n\
        .section .debug_abbrev\n{\n.b8 1\n.b8 17\n}\n";
    let m = Module::parse(src).unwrap_or_else(|e| panic!("{e}"));
    let mut dev = Device::new();
    let out = dev.alloc(4);
    dev.launch(
        &m,
        "t",
        LaunchConfig::grid1d(1, 1),
        &[Param::U64(out.addr())],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(u32s(&dev.read(out))[0], 9);
}

#[test]
fn tensor_map_encoding_and_checks() {
    let tm = ptx_emu::TensorMap {
        base: 0x1_0000_0100,
        elem_size: 2,
        dims: vec![100, 7],
        strides: vec![2, 208],
        box_dims: vec![64, 8],
        swizzle: 3,
    };
    assert_eq!(tm.check(), None);
    assert_eq!(ptx_emu::TensorMap::decode(&tm.encode()), Some(tm.clone()));
    let bad_stride = ptx_emu::TensorMap {
        strides: vec![2, 200],
        ..tm.clone()
    };
    assert!(bad_stride.check().unwrap().contains("multiples of 16"));
    let too_wide = ptx_emu::TensorMap {
        box_dims: vec![128, 8],
        ..tm.clone()
    };
    assert!(too_wide.check().unwrap().contains("swizzle span"));
    assert_eq!(
        ptx_emu::TensorMap::decode(&[0u8; 128]),
        None,
        "not our encoding"
    );
}

#[test]
fn shared_memory_race_is_reported_and_barrier_fixes_it() {
    let racy = "
        .shared .align 4 .b8 sm[128];
        mov.u32 %r1, %tid.x; mul.lo.u32 %r2, %r1, 4; mov.u32 %r3, sm; add.u32 %r4, %r3, %r2;
        st.shared.b32 [%r4], %r1;
        bar.sync 0;
        setp.eq.u32 %p1, %r1, 1; @!%p1 bra NOWRITE;
        mov.b32 %r5, 99; st.shared.b32 [sm], %r5;
        NOWRITE:
        SYNC
        setp.eq.u32 %p2, %r1, 0; @!%p2 bra DONE;
        ld.shared.b32 %r6, [sm]; st.global.b32 [%rd0], %r6;
        DONE:";
    let e = err_of(&racy.replace("SYNC", ""), 32);
    assert_eq!(e.kind, ErrorKind::Race, "{e}");
    assert!(e.msg.contains("data race on shared byte 0x0"), "{e}");
    let o =
        u32s(&run_n(&racy.replace("SYNC", "bar.sync 0;"), 32).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(o[0], 99);
    // the same pattern through an mbarrier: thread 1 arrives after writing, thread 0 waits
    let mb = "
        .shared .align 8 .b8 sm[16];
        mov.u32 %r1, %tid.x;
        setp.ne.u32 %p1, %r1, 0; @%p1 bra S;
        mov.b32 %r2, 1; mbarrier.init.shared.b64 [sm+8], %r2; st.shared.b32 [sm], %r2;
        S: bar.sync 0;
        setp.eq.u32 %p2, %r1, 1; @!%p2 bra W;
        mov.b32 %r3, 42; st.shared.b32 [sm], %r3; mbarrier.arrive.shared.b64 %rd2, [sm+8];
        W: setp.eq.u32 %p3, %r1, 0; @!%p3 bra DONE;
        L: mbarrier.try_wait.parity.shared.b64 %p4, [sm+8], 0; @!%p4 bra L;
        ld.shared.b32 %r4, [sm]; st.global.b32 [%rd0], %r4;
        DONE:";
    let o = u32s(&run_n(mb, 32).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(o[0], 42);
}

#[test]
fn inter_cta_global_race_is_reported() {
    let src = kernel("mov.u32 %r1, %ctaid.x; mov.u32 %r2, %tid.x; setp.ne.u32 %p1, %r2, 0; @%p1 bra DONE; st.global.b32 [%rd0], %r1; DONE:");
    let m = Module::parse(&src).unwrap();
    let mut dev = Device::new();
    let out = dev.alloc(16);
    let err = dev
        .launch(
            &m,
            "t",
            LaunchConfig::grid1d(2, 32),
            &[Param::U64(out.addr()), Param::U64(out.addr())],
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Race, "{err}");
    assert_eq!(err.ctaid, (1, 0, 0));
    // with an atomic in the kernel the CTAs may be ordered: no report
    let src = kernel("mov.u32 %r1, %ctaid.x; mov.u32 %r2, %tid.x; setp.ne.u32 %p1, %r2, 0; @%p1 bra DONE; st.global.b32 [%rd0], %r1; atom.global.add.u32 %r3, [%rd0+4], 1; DONE:");
    let m = Module::parse(&src).unwrap();
    dev.launch(
        &m,
        "t",
        LaunchConfig::grid1d(2, 32),
        &[Param::U64(out.addr()), Param::U64(out.addr())],
    )
    .unwrap();
    // and the check can be switched off
    let src = kernel("mov.u32 %r1, %ctaid.x; st.global.b32 [%rd0], %r1;");
    let m = Module::parse(&src).unwrap();
    dev.race_check = false;
    dev.launch(
        &m,
        "t",
        LaunchConfig::grid1d(2, 1),
        &[Param::U64(out.addr()), Param::U64(out.addr())],
    )
    .unwrap();
}

#[test]
fn malformed_instructions_are_parse_errors() {
    let e = Module::parse(&kernel("add.s32 %r1, %r2;")).unwrap_err();
    assert!(e.msg.contains("at least 3 operands"), "{e}");
    assert_eq!(e.line, 14, "the line of the instruction");
    let e = Module::parse(&kernel("ld.global.b32 %r1, %rd0;")).unwrap_err();
    assert!(e.msg.contains("must be an address"), "{e}");
    let e = Module::parse(&kernel("bra NOWHERE;")).unwrap_err();
    assert!(e.msg.contains("unknown label NOWHERE"), "{e}");
}

#[test]
fn dynamic_shared_memory() {
    let src = format!(
        "{HEADER}.extern .shared .align 16 .b8 dyn[];\n.visible .entry t(.param .u64 out)\n{{\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n.shared .align 4 .b8 st[12];\n\
         ld.param.u64 %rd0, [out];\nmov.u32 %r1, %tid.x;\nmov.u32 %r2, dyn;\nshl.b32 %r3, %r1, 2;\nadd.u32 %r4, %r2, %r3;\nst.shared.b32 [%r4], %r1;\n\
         bar.sync 0;\nld.shared.b32 %r5, [dyn+1020];\nmov.u32 %r6, %dynamic_smem_size;\nst.global.v2.b32 [%rd0], {{%r5, %r6}};\nmov.u32 %r7, st;\nst.global.b32 [%rd0+8], %r7;\nst.global.b32 [%rd0+12], %r2;\nret;\n}}\n"
    );
    let m = Module::parse(&src).unwrap_or_else(|e| panic!("{e}"));
    let mut dev = Device::new();
    let out = dev.alloc(16);
    let cfg = LaunchConfig {
        grid: (1, 1, 1),
        block: (256, 1, 1),
        cluster: (1, 1, 1),
        dynamic_smem: 1024,
    };
    dev.launch(&m, "t", cfg, &[Param::U64(out.addr())])
        .unwrap_or_else(|e| panic!("{e}"));
    let o = u32s(&dev.read(out));
    assert_eq!(o[0], 255);
    assert_eq!(o[1], 1024);
    assert!(
        o[3] >= o[2] + 12,
        "dynamic shared memory follows the static variables"
    );
    // too little dynamic shared memory is an out-of-bounds access
    let cfg = LaunchConfig {
        dynamic_smem: 512,
        ..cfg
    };
    let e = dev
        .launch(&m, "t", cfg, &[Param::U64(out.addr())])
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::OutOfBounds, "{e}");
}

#[test]
fn device_function_calls() {
    let src = format!(
        "{HEADER}.func (.param .b32 func_retval0) mad3(.param .b32 a, .param .b32 b)\n;\n\
         .visible .entry t(.param .u64 out)\n{{\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n\
         ld.param.u64 %rd0, [out];\nmov.u32 %r1, %tid.x;\n\
         {{ .param .b32 param0; .param .b32 param1; .param .b32 retval0;\n\
           st.param.b32 [param0], %r1; st.param.b32 [param1], 10;\n\
           call.uni (retval0), mad3, (param0, param1);\n\
           ld.param.b32 %r2, [retval0]; }}\n\
         mul.wide.u32 %rd1, %r1, 4; add.s64 %rd2, %rd0, %rd1; st.global.b32 [%rd2], %r2;\nret;\n}}\n\
         .func (.param .b32 func_retval0) mad3(.param .b32 a, .param .b32 b)\n{{\n.reg .b32 %r<4>;\n\
         ld.param.b32 %r1, [a]; ld.param.b32 %r2, [b];\n\
         setp.eq.u32 %p1, %r1, 0; @%p1 bra $L__ZERO;\n\
         mad.lo.s32 %r3, %r1, 3, %r2; st.param.b32 [func_retval0], %r3; ret;\n\
         $L__ZERO: st.param.b32 [func_retval0], 777; ret;\n}}\n"
    );
    let src = src.replace(
        ".reg .b32 %r<4>;\n",
        ".reg .b32 %r<4>;\n.reg .pred %p<2>;\n",
    );
    let m = Module::parse(&src).unwrap_or_else(|e| panic!("{e}"));
    let mut dev = Device::new();
    let out = dev.alloc(4 * 64);
    dev.launch(
        &m,
        "t",
        LaunchConfig::grid1d(1, 64),
        &[Param::U64(out.addr())],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let o = u32s(&dev.read(out));
    assert_eq!(o[0], 777);
    for t in 1..64u32 {
        assert_eq!(o[t as usize], 3 * t + 10);
    }
}

#[test]
fn cp_async_lands_at_its_wait() {
    // One thread: the shared word holds 7; a cp.async of 99 over it is in
    // flight until a wait completes its group. wait_group 1 with two groups
    // committed lands the older only; wait_all lands the rest, uncommitted
    // copies included.
    let body = "
        .shared .align 16 .b8 sm[64];
        mov.u32 %r1, sm; mov.b32 %r2, 7;
        st.shared.b32 [%r1], %r2; st.shared.b32 [%r1+16], %r2; st.shared.b32 [%r1+32], %r2;
        mov.b32 %r3, 99; st.global.b32 [%rd1], %r3;
        cp.async.ca.shared.global [%r1], [%rd1], 4;
        ld.shared.b32 %r4, [%r1]; st.global.b32 [%rd0], %r4;
        cp.async.commit_group;
        cp.async.ca.shared.global [%r1+16], [%rd1], 4;
        cp.async.commit_group;
        cp.async.ca.shared.global [%r1+32], [%rd1], 4;
        cp.async.wait_group 1;
        ld.shared.b32 %r5, [%r1]; st.global.b32 [%rd0+4], %r5;
        ld.shared.b32 %r6, [%r1+16]; st.global.b32 [%rd0+8], %r6;
        cp.async.wait_all;
        ld.shared.b32 %r7, [%r1+16]; st.global.b32 [%rd0+12], %r7;
        ld.shared.b32 %r8, [%r1+32]; st.global.b32 [%rd0+16], %r8;
    ";
    let o = u32s(&run(body));
    assert_eq!(o[..5], [7, 99, 7, 99, 99]);
}

#[test]
fn a_read_of_another_threads_cp_async_without_its_wait_is_a_race() {
    // Thread 0 copies into the word thread 1 reads after a barrier, but
    // waits for the copy only after the barrier: the copy lands after the
    // read, unordered with it.
    let body = "
        .shared .align 16 .b8 sm[64];
        mov.u32 %r1, sm; mov.u32 %r2, %tid.x;
        setp.eq.u32 %p1, %r2, 0;
        @%p1 st.shared.b32 [%r1], %r2;
        @%p1 cp.async.ca.shared.global [%r1], [%rd1], 4;
        cp.async.commit_group;
        bar.sync 0;
        @!%p1 ld.shared.b32 %r4, [%r1];
        cp.async.wait_group 0;
    ";
    let e = run_n(body, 2).expect_err("the copy lands unordered with the read");
    assert_eq!(e.kind, ErrorKind::Race, "{e}");
}

#[test]
fn cp_async_completion_arrives_on_an_mbarrier() {
    // 8 threads each clear their shared slot, then copy 16 bytes into it
    // (4 in bounds, the rest zero-filled) and arrive through `cp.async.mbarrier.arrive.noinc`
    // on a barrier expecting 8 arrivals; after the wait each reads its
    // neighbour's slot.
    let src = "
        .shared .align 16 .b8 sm[144];
        mov.u32 %r1, %tid.x; mov.u32 %r2, sm;
        mul.lo.u32 %r5, %r1, 16; add.u32 %r6, %r2, %r5;
        mov.b32 %r12, 0; st.shared.v4.b32 [%r6], {%r12, %r12, %r12, %r12};
        setp.ne.u32 %p1, %r1, 0; @%p1 bra S;
        mbarrier.init.shared.b64 [sm+128], COUNT;
        S: bar.sync 0;
        add.u32 %r3, %r1, 1; mul.lo.u32 %r4, %r3, 7;
        mul.wide.u32 %rd2, %r1, 16; add.s64 %rd3, %rd1, %rd2;
        st.global.b32 [%rd3], %r4; st.global.b32 [%rd3+4], %r4;
        cp.async.cg.shared.global [%r6], [%rd3], 16, 4;
        cp.async.mbarrier.arrive.noinc.shared.b64 [sm+128];
        WAIT
        and.b32 %r7, %r3, 7; mul.lo.u32 %r8, %r7, 16; add.u32 %r9, %r2, %r8;
        ld.shared.v2.b32 {%r10, %r11}, [%r9];
        mul.wide.u32 %rd4, %r1, 8; add.s64 %rd5, %rd0, %rd4;
        st.global.v2.b32 [%rd5], {%r10, %r11};";
    let wait = "L: mbarrier.try_wait.parity.shared.b64 %p2, [sm+128], 0; @!%p2 bra L;";
    let o = u32s(
        &run_n(&src.replace("COUNT", "8").replace("WAIT", wait), 8)
            .unwrap_or_else(|e| panic!("{e}")),
    );
    for t in 0..8 {
        assert_eq!(o[2 * t], 7 * ((t as u32 + 1) % 8 + 1), "thread {t}");
        assert_eq!(o[2 * t + 1], 0, "thread {t}: zero fill");
    }
    // Without the wait the neighbour's copy is unordered with the read.
    let e = err_of(&src.replace("COUNT", "8").replace("WAIT", ""), 8);
    assert_eq!(e.kind, ErrorKind::Race, "{e}");
    // A barrier expecting one arrival more never completes.
    let e = err_of(&src.replace("COUNT", "9").replace("WAIT", wait), 8);
    assert_eq!(e.kind, ErrorKind::Deadlock, "{e}");
    assert!(e.msg.contains("1 of 9 arrivals missing"), "{e}");
}

/// A tile block of two CTAs, as cuTile launches it: `.blocksareclusters`
/// with `.reqnctapercluster 2` and a grid of 3 tile blocks runs 6 CTAs in 3
/// clusters; without `.blocksareclusters` the grid counts CTAs. Either way
/// `%nctaid` counts CTAs, `%nclusterid` clusters, and `%clusterid` and
/// `%cluster_ctarank` place each CTA in its cluster.
#[test]
fn cluster_launch_special_registers() {
    for (directives, grid) in [
        (".blocksareclusters\n.reqnctapercluster 2, 1, 1\n", 3),
        (".reqnctapercluster 2, 1, 1\n", 6),
    ] {
        let src = format!(
            "{HEADER}.visible .entry t(.param .u64 out)\n.reqntid 32, 1, 1\n{directives}{{\n\
             .reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .pred %p<2>;\n\
             ld.param.u64 %rd0, [out];\n\
             mov.u32 %r0, %tid.x; setp.ne.u32 %p0, %r0, 0; @%p0 bra DONE;\n\
             mov.u32 %r1, %ctaid.x; mul.wide.u32 %rd1, %r1, 20; add.s64 %rd1, %rd0, %rd1;\n\
             st.global.u32 [%rd1], %r1;\n\
             mov.u32 %r2, %nctaid.x; st.global.u32 [%rd1+4], %r2;\n\
             mov.u32 %r3, %clusterid.x; st.global.u32 [%rd1+8], %r3;\n\
             mov.u32 %r4, %nclusterid.x; st.global.u32 [%rd1+12], %r4;\n\
             mov.u32 %r5, %cluster_ctarank; st.global.u32 [%rd1+16], %r5;\n\
             DONE:\nret;\n}}\n"
        );
        let m = Module::parse(&src).unwrap_or_else(|e| panic!("{e}"));
        let mut dev = Device::new();
        let out = dev.alloc(6 * 20);
        dev.launch_grid(&m, "t", (grid, 1, 1), &[Param::U64(out.addr())])
            .unwrap_or_else(|e| panic!("{e}"));
        let got = u32s(&dev.read(out));
        for cta in 0..6u32 {
            assert_eq!(
                &got[cta as usize * 5..][..5],
                &[cta, 6, cta / 2, 3, cta % 2],
                "{directives} CTA {cta}"
            );
        }
    }
}

/// The mixed-precision forms (PTX 8.6, sm_100+): `add/sub.f32.f16|bf16`
/// widen their first operand, `fma.f32.f16|bf16` their first two, exactly,
/// then compute in f32 with the instruction's rounding.
#[test]
fn mixed_precision_f32_with_half_operands() {
    let o = u32s(&run("
        mov.b16 %h1, 0x3e00; mov.b32 %f1, 0f3F800000;
        sub.rn.f32.f16 %f2, %h1, %f1; st.global.b32 [%rd0], %f2;
        add.rn.f32.f16 %f3, %h1, %f1; st.global.b32 [%rd0+4], %f3;
        mov.b16 %h2, 0x4040; mov.b16 %h3, 0xbf80; mov.b32 %f4, 0f3F000000;
        fma.rn.f32.bf16 %f5, %h2, %h3, %f4; st.global.b32 [%rd0+8], %f5;
        add.rn.f32.bf16 %f6, %h3, %f4; st.global.b32 [%rd0+12], %f6;
        mov.b16 %h4, 0x0001; mov.b32 %f7, 0f00000000;
        add.rz.f32.f16 %f8, %h4, %f7; st.global.b32 [%rd0+16], %f8;
        mov.b16 %h5, 0x7e00;
        sub.rn.f32.f16 %f9, %h5, %f1; st.global.b32 [%rd0+20], %f9;
    "));
    assert_eq!(f32::from_bits(o[0]), 0.5, "1.5 (f16) - 1");
    assert_eq!(f32::from_bits(o[1]), 2.5, "1.5 (f16) + 1");
    assert_eq!(f32::from_bits(o[2]), -2.5, "3 (bf16) * -1 (bf16) + 0.5");
    assert_eq!(f32::from_bits(o[3]), -0.5, "-1 (bf16) + 0.5");
    assert_eq!(
        f32::from_bits(o[4]),
        2f32.powi(-24),
        "f16 subnormal widens exactly"
    );
    assert!(f32::from_bits(o[5]).is_nan(), "NaN (f16) - 1");
}

/// `add/sub/min/max.{s,u}16x2` (sm_90+) work on two 16-bit lanes: each
/// lane wraps on its own, min/max compare signed or unsigned lanes.
#[test]
fn simd_16x2_integer_lanes() {
    let o = u32s(&run("
        mov.b32 %r1, 0x7fff0001; mov.b32 %r2, 0x0001ffff;
        add.s16x2 %r3, %r1, %r2; st.global.b32 [%rd0], %r3;
        add.u16x2 %r4, %r1, %r2; st.global.b32 [%rd0+4], %r4;
        sub.s16x2 %r5, %r1, %r2; st.global.b32 [%rd0+8], %r5;
        min.s16x2 %r6, %r1, %r2; st.global.b32 [%rd0+12], %r6;
        min.u16x2 %r7, %r1, %r2; st.global.b32 [%rd0+16], %r7;
        max.s16x2 %r8, %r1, %r2; st.global.b32 [%rd0+20], %r8;
    "));
    assert_eq!(
        o[0], 0x8000_0000,
        "0x7fff+1 wraps, 1+0xffff carries nothing into the high lane"
    );
    assert_eq!(o[1], 0x8000_0000);
    assert_eq!(o[2], 0x7ffe_0002, "0x7fff-1, 1-(-1)");
    assert_eq!(
        o[3], 0x0001_ffff,
        "signed: min(0x7fff, 1) = 1, min(1, -1) = -1"
    );
    assert_eq!(o[4], 0x0001_0001, "unsigned: min(1, 0xffff) = 1");
    assert_eq!(o[5], 0x7fff_0001);
}

/// `cvt.s8.s32` and `cvt.rzi.s8.f32` into a 16-bit register sign-extend the
/// byte to the register (NVIDIA's i8 reductions take element 0 of each word
/// this way and then compare with `max.s16`); `cvt.u8.s32` zero-extends.
#[test]
fn conversions_to_8_bits_extend_to_the_register() {
    let o = u32s(&run("
        mov.b32 %r1, 0x1234fe80;
        cvt.s8.s32 %h1, %r1; cvt.u32.u16 %r2, %h1; st.global.b32 [%rd0], %r2;
        cvt.u8.s32 %h2, %r1; cvt.u32.u16 %r3, %h2; st.global.b32 [%rd0+4], %r3;
        mov.b32 %f1, 0fC2FE0000;
        cvt.rzi.s8.f32 %h3, %f1; cvt.u32.u16 %r4, %h3; st.global.b32 [%rd0+8], %r4;
        mov.b16 %h4, 0x0001; max.s16 %h5, %h1, %h4; cvt.u32.u16 %r5, %h5; st.global.b32 [%rd0+12], %r5;
    "));
    assert_eq!(o[0], 0xff80, "cvt.s8.s32 of 0x80");
    assert_eq!(o[1], 0x0080, "cvt.u8.s32 of 0x80");
    assert_eq!(o[2], 0xff81, "cvt.rzi.s8.f32 of -127");
    assert_eq!(o[3], 0x0001, "max.s16(-128, 1)");
}

/// The three-input `min/max` (sm_100's `max.f32 d, a, b, c`) takes all
/// three: the largest (smallest) may be any of them.
#[test]
fn three_input_min_max() {
    let o = u32s(&run("
        mov.b32 %f1, 0f3F800000; mov.b32 %f2, 0f40000000; mov.b32 %f3, 0f40400000;
        max.f32 %f4, %f1, %f2, %f3; st.global.b32 [%rd0], %f4;
        max.f32 %f5, %f3, %f1, %f2; st.global.b32 [%rd0+4], %f5;
        min.f32 %f6, %f2, %f3, %f1; st.global.b32 [%rd0+8], %f6;
        mov.b32 %f7, 0f7FC00000; max.f32 %f8, %f1, %f2, %f7; st.global.b32 [%rd0+12], %f8;
        mov.u32 %r1, 5; mov.u32 %r2, 9; mov.u32 %r3, 7;
        max.s32 %r4, %r1, %r3, %r2; st.global.b32 [%rd0+16], %r4;
    "));
    assert_eq!(o[0], 0x4040_0000, "max(1, 2, 3)");
    assert_eq!(o[1], 0x4040_0000, "max(3, 1, 2)");
    assert_eq!(o[2], 0x3f80_0000, "min(2, 3, 1)");
    assert_eq!(o[3], 0x4000_0000, "a NaN third input is ignored");
    assert_eq!(o[4], 9, "max.s32 of three");
}
