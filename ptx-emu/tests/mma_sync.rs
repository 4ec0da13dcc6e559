//! `mma.sync` fragment layouts: each lane loads its fragment registers as
//! the PTX ISA's tables place them, the warp multiplies, and the result
//! fragments are checked against a CPU product.

use ptx_emu::{bytes, Device, LaunchConfig, Module, Param};

/// The f16 encoding of `x`, a normal f16 value (or zero) with a short mantissa.
fn f16_bits(x: f32) -> u32 {
    if x == 0.0 {
        return 0;
    }
    let b = x.to_bits();
    let e = ((b >> 23) & 0xff) - 127 + 15;
    (b >> 16 & 0x8000) | e << 10 | (b >> 13 & 0x3ff)
}

/// Operand element encodings used by the cases.
#[derive(Clone, Copy)]
enum El {
    F16,
    Bf16,
    Tf32,
    S8,
    U8,
    E4m3,
}

impl El {
    fn bits(self) -> u32 {
        match self {
            El::F16 | El::Bf16 => 16,
            El::Tf32 => 32,
            _ => 8,
        }
    }

    /// The encoding of the `i`-th test value and its exact value.
    fn value(self, i: u64) -> (u32, f64) {
        let h = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
        let small = (h % 15) as i64 - 7; // -7..=7
        match self {
            El::F16 => {
                let x = small as f32 / 4.0;
                (f16_bits(x), f64::from(x))
            }
            El::Bf16 => {
                let x = small as f32 / 2.0;
                (x.to_bits() >> 16, f64::from(x))
            }
            El::Tf32 => {
                // Low 13 bits set: the hardware ignores them.
                let x = small as f32 * 0.375;
                (x.to_bits() | (0x1fff * u32::from(small != 0)), f64::from(x))
            }
            El::S8 => ((small * 17) as i8 as u8 as u32, (small * 17) as f64),
            El::U8 => {
                let v = (h % 256) as u32;
                (v, f64::from(v))
            }
            El::E4m3 => {
                // Exponent 5..=9 (2^-2..2^2), any mantissa and sign.
                let e = 5 + (h % 5) as u32;
                let m = ((h >> 8) % 8) as u32;
                let s = ((h >> 12) % 2) as u32;
                let x = (1.0 + f64::from(m) / 8.0) * 2f64.powi(e as i32 - 7);
                (s << 7 | e << 3 | m, if s == 1 { -x } else { x })
            }
        }
    }
}

/// One case: the instruction, operand encoding, K, accumulator kind.
struct Case {
    inst: &'static str,
    el: El,
    k: usize,
    /// Accumulator registers are s32 (else f32).
    int: bool,
    /// Block-scaled (`kind::mxf8f6f4.block_scale.scale_vec::1X`): the
    /// instruction takes scale-a, {1, 1}, scale-b, {2, 1} after C.
    scaled: bool,
}

/// The ue8m0 exponent of the scale of A's row `r` (block-scaled cases).
fn a_scale(r: usize) -> u32 {
    127 + (r as u32 % 5) - 2
}

/// The ue8m0 exponent of the scale of B's column `c`.
fn b_scale(c: usize) -> u32 {
    127 + (c as u32 % 3) - 1
}

/// Row and column of element `j` of A register `r` for lane (g, t).
fn a_coord(c: &Case, r: usize, j: usize, g: usize, t: usize) -> (usize, usize) {
    match (c.el.bits(), c.k) {
        // f16/bf16 m16n8k16: a0..a7 pairs; rows g / g+8, cols 2t+j (+8).
        (16, 16) => (g + 8 * (r % 2), 2 * t + j + 8 * (r / 2)),
        // tf32 m16n8k8: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4).
        (32, 8) => (g + 8 * (r % 2), t + 4 * (r / 2)),
        // 8-bit m16n8k32: a0..a15 quads; rows g / g+8, cols 4t+j (+16).
        (8, 32) => (g + 8 * (r % 2), 4 * t + j + 16 * (r / 2)),
        _ => unreachable!(),
    }
}

/// Row (k) of element `j` of B register `r` for lane (g, t); the column is g.
fn b_row(c: &Case, r: usize, j: usize, t: usize) -> usize {
    match (c.el.bits(), c.k) {
        (16, 16) => 2 * t + j + 8 * r,
        (32, 8) => t + 4 * r,
        (8, 32) => 4 * t + j + 16 * r,
        _ => unreachable!(),
    }
}

fn check(c: &Case) {
    let (m, n, k) = (16usize, 8usize, c.k);
    let per = (32 / c.el.bits()) as usize;
    let mut a = vec![(0u32, 0f64); m * k];
    let mut b = vec![(0u32, 0f64); k * n];
    for (i, x) in a.iter_mut().enumerate() {
        *x = c.el.value(i as u64 + 1);
    }
    for (i, x) in b.iter_mut().enumerate() {
        *x = c.el.value(i as u64 + 1000);
    }
    let cval = |i: usize, j: usize| (i * 3 + j) as f64 - 20.0;
    // Per lane: 4 A words, 2 B words, 4 C words, scale-a and scale-b.
    let mut words = vec![0u32; 32 * 12];
    for lane in 0..32 {
        let (g, t) = (lane / 4, lane % 4);
        for r in 0..4 {
            let mut w = 0u32;
            for j in 0..per {
                let (row, col) = a_coord(c, r, j, g, t);
                let bits = c.el.bits();
                w |= (a[row * k + col].0 & ((1u64 << bits) - 1) as u32) << (bits * j as u32);
            }
            words[lane * 12 + r] = w;
        }
        for r in 0..2 {
            let mut w = 0u32;
            for j in 0..per {
                let kk = b_row(c, r, j, t);
                let bits = c.el.bits();
                w |= (b[kk * n + g].0 & ((1u64 << bits) - 1) as u32) << (bits * j as u32);
            }
            words[lane * 12 + 4 + r] = w;
        }
        // C: c0, c1 at row g, cols 2t, 2t+1; c2, c3 at row g+8.
        for r in 0..4 {
            let v = cval(g + 8 * (r / 2), 2 * t + r % 2);
            words[lane * 12 + 6 + r] = if c.int {
                v as i32 as u32
            } else {
                (v as f32).to_bits()
            };
        }
        // Scales: byte 1 of lane 4 (r % 8) + 2 + r / 8 for A's row r, byte
        // 2 of lane 4 c + 1 for B's column c; every other byte a NaN scale
        // that must not be read.
        let mut sa = 0xffff_ffffu32;
        if lane % 4 >= 2 {
            let r = lane / 4 + 8 * (lane % 4 - 2);
            sa = (sa & !0xff00) | a_scale(r) << 8;
        }
        let mut sb = 0xffff_ffffu32;
        if lane % 4 == 1 {
            sb = (sb & !0xff_0000) | b_scale(lane / 4) << 16;
        }
        words[lane * 12 + 10] = sa;
        words[lane * 12 + 11] = sb;
    }
    let scales = if c.scaled {
        ", %r24, {1, 1}, %r25, {2, 1}"
    } else {
        ""
    };
    let body = format!(
        "mov.u32 %r1, %laneid; mul.wide.u32 %rd2, %r1, 48; add.s64 %rd3, %rd1, %rd2;
        ld.global.b32 %r10, [%rd3]; ld.global.b32 %r11, [%rd3+4];
        ld.global.b32 %r12, [%rd3+8]; ld.global.b32 %r13, [%rd3+12];
        ld.global.b32 %r14, [%rd3+16]; ld.global.b32 %r15, [%rd3+20];
        ld.global.b32 %r16, [%rd3+24]; ld.global.b32 %r17, [%rd3+28];
        ld.global.b32 %r18, [%rd3+32]; ld.global.b32 %r19, [%rd3+36];
        ld.global.b32 %r24, [%rd3+40]; ld.global.b32 %r25, [%rd3+44];
        {} {{%r20, %r21, %r22, %r23}}, {{%r10, %r11, %r12, %r13}}, {{%r14, %r15}}, {{%r16, %r17, %r18, %r19}}{scales};
        mul.wide.u32 %rd4, %r1, 16; add.s64 %rd5, %rd0, %rd4;
        st.global.v4.b32 [%rd5], {{%r20, %r21, %r22, %r23}};",
        c.inst
    );
    let src = format!(
        ".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry t(.param .u64 out, .param .u64 aux)\n{{\n\
         .reg .b32 %r<40>;\n.reg .b64 %rd<40>;\n\
         ld.param.u64 %rd0, [out];\nld.param.u64 %rd1, [aux];\n{body}\nret;\n}}\n"
    );
    let md = Module::parse(&src).unwrap_or_else(|e| panic!("{e}"));
    let mut dev = Device::new();
    let out = dev.alloc(32 * 16);
    let aux = dev.alloc_from(&bytes::from_u32(&words));
    dev.launch(
        &md,
        "t",
        LaunchConfig::grid1d(1, 32),
        &[Param::U64(out.addr()), Param::U64(aux.addr())],
    )
    .unwrap_or_else(|e| panic!("{}: {e}", c.inst));
    let d = bytes::to_u32(&dev.read(out));
    for lane in 0..32 {
        let (g, t) = (lane / 4, lane % 4);
        for r in 0..4 {
            let (i, j) = (g + 8 * (r / 2), 2 * t + r % 2);
            let mut want = cval(i, j);
            let scale = if c.scaled {
                2f64.powi(a_scale(i) as i32 + b_scale(j) as i32 - 254)
            } else {
                1.0
            };
            for kk in 0..k {
                want += a[i * k + kk].1 * b[kk * n + j].1 * scale;
            }
            let got = d[lane * 4 + r];
            if c.int {
                assert_eq!(got as i32, want as i32, "{} lane {lane} reg {r}", c.inst);
            } else {
                assert_eq!(
                    f32::from_bits(got),
                    want as f32,
                    "{} lane {lane} reg {r}",
                    c.inst
                );
            }
        }
    }
}

#[test]
fn m16n8k16_f16_and_bf16() {
    for (inst, el) in [
        ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", El::F16),
        (
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
            El::Bf16,
        ),
    ] {
        check(&Case {
            inst,
            el,
            k: 16,
            int: false,
            scaled: false,
        });
    }
}

#[test]
fn m16n8k8_tf32() {
    check(&Case {
        inst: "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
        el: El::Tf32,
        k: 8,
        int: false,
        scaled: false,
    });
}

#[test]
fn m16n8k32_s8_u8() {
    for (inst, el) in [
        ("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", El::S8),
        (
            "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.u8.s32",
            El::U8,
        ),
    ] {
        check(&Case {
            inst,
            el,
            k: 32,
            int: true,
            scaled: false,
        });
    }
}

#[test]
fn m16n8k32_e4m3() {
    check(&Case {
        inst: "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
        el: El::E4m3,
        k: 32,
        int: false,
        scaled: false,
    });
}

#[test]
fn m16n8k32_e4m3_block_scaled() {
    check(&Case {
        inst: "mma.sync.aligned.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.row.col.f32.e4m3.e4m3.f32.ue8m0",
        el: El::E4m3,
        k: 32,
        int: false,
        scaled: true,
    });
}
