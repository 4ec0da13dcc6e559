//! Ops and attributes the cuTile corpus does not exercise, in kernels
//! written with cuTile's bytecode encoders (`tests/data/lower/ops/gen.py`):
//! `mulhii`, `fpowi`, `get_tensor_shape`, module `global`s with
//! `get_global`, loads and stores with memory orderings and scopes, i8
//! arithmetic, `alloca` with token-ordered accesses, large constant tables
//! and packed i1 constants, and scans (i64, i16 reversed, and a
//! non-commutative combiner), atomic adds on 16-bit floats, `for` loops with
//! an early `continue`, and i1 tiles in memory (bytes).
//! Each is lowered for sm_80 and sm_90, assembled by the real ptxas, and run
//! in the PTX emulator against values computed here from the spec.
mod common;
use common::xorshift as values;

use ptx_emu::float::{bf16_to_f64, f16_to_f64, f64_to_bf16_rn, f64_to_f16_rn};
use ptx_emu::{bytes, Device, Module, Param};
use tileiras::options::{Gpu, Options};

const N: usize = 128;

fn ptx(name: &str, gpu: Gpu) -> String {
    let path = common::repo().join(format!("tests/data/lower/ops/{name}.tileir"));
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let m = tileiras::bytecode::read(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
    let options = Options {
        gpu,
        ..Default::default()
    };
    tileiras::lower::lower(&m, &options).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Lowers `name` for sm_80 and sm_90, checks ptxas accepts both, and runs
/// the sm_90 PTX on `params` (one tile block).
fn run(name: &str, dev: &mut Device, params: &[Param]) -> String {
    assemble(name, &[(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")]);
    launch(name, dev, params, Gpu::Sm90)
}

/// Lowers `name` for `gpu`, checks ptxas accepts it, and runs that PTX.
fn run_on(name: &str, dev: &mut Device, params: &[Param], gpu: Gpu, arch: &str) -> String {
    assemble(name, &[(gpu, arch)]);
    launch(name, dev, params, gpu)
}

/// Checks ptxas accepts our PTX for `name` on each of `targets`.
fn assemble(name: &str, targets: &[(Gpu, &str)]) {
    for &(gpu, arch) in targets {
        common::assemble(
            &ptx(name, gpu),
            &[
                "-arch",
                arch,
                "--opt-level",
                "3",
                "--enable-extended-smem=true",
            ],
        );
    }
}

/// Runs our PTX for `name` on `gpu` with `params` (one tile block).
fn launch(name: &str, dev: &mut Device, params: &[Param], gpu: Gpu) -> String {
    let text = ptx(name, gpu);
    let m = Module::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
    dev.launch_grid(&m, name, (1, 1, 1), params)
        .unwrap_or_else(|e| panic!("{name} {gpu}: {e}\n{text}"));
    text
}

#[test]
fn mulhii_is_the_high_half_of_the_unsigned_product() {
    let mut dev = Device::new();
    // i32, with the corner values first.
    let mut x: Vec<u32> = values(1, N).iter().map(|&v| v as u32).collect();
    let mut y: Vec<u32> = values(2, N).iter().map(|&v| v as u32).collect();
    (x[0], y[0]) = (0x8000_0000, 2);
    (x[1], y[1]) = (u32::MAX, u32::MAX);
    (x[2], y[2]) = (u32::MAX, 0);
    let (px, py) = (
        dev.alloc_from(&bytes::from_u32(&x)),
        dev.alloc_from(&bytes::from_u32(&y)),
    );
    let o = dev.alloc(4 * N);
    let text = run(
        "mulhii_i32",
        &mut dev,
        &[
            Param::U64(px.addr()),
            Param::U64(py.addr()),
            Param::U64(o.addr()),
        ],
    );
    assert!(text.contains("mul.hi.u32"), "{text}");
    let got = bytes::to_u32(&dev.read(o));
    for i in 0..N {
        let want = ((u64::from(x[i]) * u64::from(y[i])) >> 32) as u32;
        assert_eq!(got[i], want, "i32 {i}: {:#x} * {:#x}", x[i], y[i]);
    }
    assert_eq!(got[0], 1);

    // i64.
    let mut x: Vec<i64> = values(3, N).iter().map(|&v| v as i64).collect();
    let y: Vec<i64> = values(4, N).iter().map(|&v| v as i64).collect();
    x[0] = -1;
    let (px, py) = (
        dev.alloc_from(&bytes::from_i64(&x)),
        dev.alloc_from(&bytes::from_i64(&y)),
    );
    let o = dev.alloc(8 * N);
    run(
        "mulhii_i64",
        &mut dev,
        &[
            Param::U64(px.addr()),
            Param::U64(py.addr()),
            Param::U64(o.addr()),
        ],
    );
    let got = bytes::to_i64(&dev.read(o));
    for i in 0..N {
        let want = ((u128::from(x[i] as u64) * u128::from(y[i] as u64)) >> 64) as u64;
        assert_eq!(got[i] as u64, want, "i64 {i}");
    }

    // i16.
    let x: Vec<u16> = values(5, N).iter().map(|&v| v as u16).collect();
    let y: Vec<u16> = values(6, N).iter().map(|&v| v as u16).collect();
    let (px, py) = (
        dev.alloc_from(&bytes::from_u16(&x)),
        dev.alloc_from(&bytes::from_u16(&y)),
    );
    let o = dev.alloc(2 * N);
    run(
        "mulhii_i16",
        &mut dev,
        &[
            Param::U64(px.addr()),
            Param::U64(py.addr()),
            Param::U64(o.addr()),
        ],
    );
    let got = bytes::to_u16(&dev.read(o));
    for i in 0..N {
        let want = ((u32::from(x[i]) * u32::from(y[i])) >> 16) as u16;
        assert_eq!(got[i], want, "i16 {i}");
    }
}

/// `x^n` by repeated squaring in f32 with a correctly rounded reciprocal
/// for negative `n`: the order of roundings `fpowi` is computed with.
fn powi_f32(x: f32, n: i32) -> f32 {
    let mut a = n.unsigned_abs();
    let mut r = if a & 1 == 1 { x } else { 1.0 };
    let mut s = x;
    a >>= 1;
    while a != 0 {
        s *= s;
        if a & 1 == 1 {
            r *= s;
        }
        a >>= 1;
    }
    if n < 0 {
        (1.0f64 / f64::from(r)) as f32
    } else {
        r
    }
}

fn fpowi_inputs() -> (Vec<f32>, Vec<i32>) {
    let v = values(7, 2 * N);
    let mut x: Vec<f32> = v[..N]
        .iter()
        .map(|&b| 0.5 + (b >> 40) as f32 / (1u64 << 24) as f32 * 1.5)
        .collect();
    let mut n: Vec<i32> = v[N..].iter().map(|&b| (b % 41) as i32 - 20).collect();
    for (i, &(xv, nv)) in [
        (-1.5f32, 3),
        (-1.5, 4),
        (-0.0, 3),
        (-0.0, -3),
        (0.0, -2),
        (f32::NAN, 0),
        (2.0, 130),
        (-1.0, i32::MAX),
        (-1.0, i32::MIN),
        (1.0001, 100_000),
    ]
    .iter()
    .enumerate()
    {
        x[i] = xv;
        n[i] = nv;
    }
    (x, n)
}

#[test]
fn fpowi_squares_and_multiplies_like_nvidia() {
    let mut dev = Device::new();
    let (x, n) = fpowi_inputs();
    let (px, pn) = (
        dev.alloc_from(&bytes::from_f32(&x)),
        dev.alloc_from(&bytes::from_i32(&n)),
    );
    let o = dev.alloc(4 * N);
    run(
        "fpowi_f32_i32",
        &mut dev,
        &[
            Param::U64(px.addr()),
            Param::U64(pn.addr()),
            Param::U64(o.addr()),
        ],
    );
    let got = bytes::to_f32(&dev.read(o));
    for i in 0..N {
        let want = powi_f32(x[i], n[i]);
        assert!(
            got[i].to_bits() == want.to_bits() || (got[i].is_nan() && want.is_nan()),
            "{i}: {}^{} = {} (want {want})",
            x[i],
            n[i],
            got[i]
        );
        // And it is the power: close to f64's (for small exponents; each
        // squaring doubles the relative error, so huge ones drift).
        let exact = f64::from(x[i]).powi(n[i]);
        if n[i].unsigned_abs() <= 20
            && exact.is_finite()
            && exact.abs() > 1e-30
            && exact.abs() < 1e30
        {
            let rel = ((f64::from(got[i]) - exact) / exact).abs();
            assert!(rel < 1e-5, "{i}: {}^{}: {} vs {exact}", x[i], n[i], got[i]);
        }
    }
    assert_eq!(got[0], -3.375);
    assert_eq!(got[2].to_bits(), (-0.0f32).to_bits());
    assert_eq!(got[3], f32::NEG_INFINITY);
    assert_eq!(got[4], f32::INFINITY);
    assert_eq!(got[5], 1.0);
    assert_eq!(got[6], f32::INFINITY);
    assert_eq!((got[7], got[8]), (-1.0, 1.0));

    // f16 base, i16 exponent: computed in f32, rounded once at the end.
    let x16: Vec<u16> = x.iter().map(|&v| f64_to_f16_rn(f64::from(v))).collect();
    let n16: Vec<u16> = n
        .iter()
        .map(|&v| v.clamp(-300, 300) as i16 as u16)
        .collect();
    let (px, pn) = (
        dev.alloc_from(&bytes::from_u16(&x16)),
        dev.alloc_from(&bytes::from_u16(&n16)),
    );
    let o = dev.alloc(2 * N);
    run(
        "fpowi_f16_i16",
        &mut dev,
        &[
            Param::U64(px.addr()),
            Param::U64(pn.addr()),
            Param::U64(o.addr()),
        ],
    );
    let got = bytes::to_u16(&dev.read(o));
    for i in 0..N {
        let xf = f16_to_f64(x16[i]) as f32;
        let want = f64_to_f16_rn(f64::from(powi_f32(xf, i32::from(n16[i] as i16))));
        let nan = |b: u16| b & 0x7c00 == 0x7c00 && b & 0x3ff != 0;
        assert!(
            got[i] == want || (nan(got[i]) && nan(want)),
            "f16 {i}: {xf}^{} = {:#x} (want {want:#x})",
            n16[i] as i16,
            got[i]
        );
    }
}

#[test]
fn get_tensor_shape_reads_static_and_dynamic_dimensions() {
    let mut dev = Device::new();
    let base = dev.alloc(4);
    let o = dev.alloc(4 * 3);
    let (m, n) = (5u32, 70_000u32);
    run(
        "tensor_shape_i32_i64_i16",
        &mut dev,
        &[
            Param::U64(base.addr()),
            Param::U32(m),
            Param::U32(n),
            Param::U64(o.addr()),
        ],
    );
    // The i16 result holds n modulo 2^16 (the spec leaves larger sizes
    // undefined; the conversion keeps the low bits).
    assert_eq!(bytes::to_u32(&dev.read(o)), vec![m, 7, n & 0xffff]);
}

#[test]
fn globals_hold_their_initial_values() {
    let mut dev = Device::new();
    let o = dev.alloc(4 * N);
    let text = run("globals_i32", &mut dev, &[Param::U64(o.addr())]);
    assert!(
        text.contains(".global .align 16 .b8 table[512] = {206, 255, 255, 255, 209,"),
        "{text}"
    );
    assert!(
        text.contains(".visible .global .align 4 .b8 counter[4] = {232, 3, 0, 0};"),
        "{text}"
    );
    let got = bytes::to_i32(&dev.read(o));
    for (i, &g) in got.iter().enumerate() {
        assert_eq!(g, (3 * i as i32 - 50) * 2 + 1000, "{i}");
    }
}

#[test]
fn ordered_loads_and_stores_carry_semantics_and_scope() {
    let mut dev = Device::new();
    let x: Vec<i32> = values(9, N).iter().map(|&v| v as i32 >> 4).collect();
    let px = dev.alloc_from(&bytes::from_i32(&x));
    let (o1, o2) = (dev.alloc(4 * N), dev.alloc(4 * N));
    let text = run(
        "ordered_ptr_i32",
        &mut dev,
        &[
            Param::U64(px.addr()),
            Param::U64(o1.addr()),
            Param::U64(o2.addr()),
        ],
    );
    for s in [
        "ld.relaxed.gpu.global.b32",
        "ld.acquire.cta.global.b32",
        "ld.acquire.sys.global.b32",
        "st.release.gpu.global.b32",
        "st.relaxed.sys.global.b32",
    ] {
        assert!(text.contains(s), "{s}:\n{text}");
    }
    let (g1, g2) = (bytes::to_i32(&dev.read(o1)), bytes::to_i32(&dev.read(o2)));
    for i in 0..N {
        assert_eq!(g1[i], x[i].wrapping_mul(3), "{i}");
        assert_eq!(g2[i], x[i], "{i}");
    }
}

#[test]
fn int8_arithmetic_wraps_and_extends_by_signedness() {
    let mut dev = Device::new();
    let v = values(11, 2 * N);
    let mut x: Vec<i8> = v[..N].iter().map(|&b| b as i8).collect();
    let mut y: Vec<i8> = v[N..].iter().map(|&b| (b >> 8) as i8).collect();
    for (i, &(a, b)) in [
        (-128i8, -1i8),
        (127, 1),
        (-1, 127),
        (0, -128),
        (-7, 2),
        (7, -2),
    ]
    .iter()
    .enumerate()
    {
        (x[i], y[i]) = (a, b);
    }
    let raw = |v: &[i8]| v.iter().map(|&b| b as u8).collect::<Vec<u8>>();
    let (px, py) = (dev.alloc_from(&raw(&x)), dev.alloc_from(&raw(&y)));
    const OPS: usize = 18;
    let o = dev.alloc(OPS * N);
    run(
        "int8_ops",
        &mut dev,
        &[
            Param::U64(px.addr()),
            Param::U64(py.addr()),
            Param::U64(o.addr()),
        ],
    );
    let got = dev.read(o);
    let floor_div = |a: i8, b: i8| {
        let (a, b) = (i32::from(a), i32::from(b));
        a.div_euclid(b) - i32::from(b < 0 && a.rem_euclid(b) != 0)
    };
    for i in 0..N {
        let (a, b) = (x[i], y[i]);
        let (ua, ub) = (a as u8, b as u8);
        let amt = (b & 7) as u32;
        let nz = b | 1;
        let want: [u8; OPS] = [
            a.wrapping_add(b) as u8,
            a.wrapping_sub(b) as u8,
            a.wrapping_mul(b) as u8,
            ua.wrapping_shl(amt),
            (a >> amt) as u8,
            ua >> amt,
            a.wrapping_div(nz) as u8,
            (ua / nz as u8),
            floor_div(a, nz) as u8,
            a.wrapping_rem(nz) as u8,
            a.max(b) as u8,
            ua.min(ub),
            ((u16::from(ua) * u16::from(ub)) >> 8) as u8,
            a.wrapping_neg() as u8,
            a.wrapping_abs() as u8,
            if a < b { ua } else { ub },
            if ua < ub { ua } else { ub },
            (a.wrapping_add(3) ^ b) as u8,
        ];
        for (k, &w) in want.iter().enumerate() {
            assert_eq!(got[k * N + i], w, "op {k}, x = {a}, y = {b}");
        }
    }
}

#[test]
fn alloca_memory_is_shared_by_the_tile_block_and_ordered_by_tokens() {
    for name in ["alloca_i32", "alloca_global_i32"] {
        let mut dev = Device::new();
        let x: Vec<i32> = values(13, N).iter().map(|&v| v as i32).collect();
        let px = dev.alloc_from(&bytes::from_i32(&x));
        let o = dev.alloc(4 * N);
        let text = run(
            name,
            &mut dev,
            &[Param::U64(px.addr()), Param::U64(o.addr())],
        );
        assert!(
            text.contains("call.uni (retval0), __cuda_syscall_aligned_malloc, (param0, param1);")
                && text.contains("call.uni free, (param0);")
                && text.contains("trap;"),
            "{text}"
        );
        // The reversed read takes the store's token: a barrier separates them.
        let store = text.find("st.global").expect("a store");
        let reread = text[store..].find("ld.global").expect("a load after it") + store;
        assert!(text[store..reread].contains("bar.sync"), "{text}");
        let got = bytes::to_i32(&dev.read(o));
        for i in 0..N {
            assert_eq!(got[i], x[N - 1 - i], "{name} {i}");
        }
    }
}

#[test]
fn large_constants_load_from_a_table() {
    let mut dev = Device::new();
    let x: Vec<i32> = values(17, N).iter().map(|&v| v as i32 >> 8).collect();
    let px = dev.alloc_from(&bytes::from_i32(&x));
    let (o, mask) = (dev.alloc(4 * N), dev.alloc(4 * N));
    let text = run(
        "constant_table_i32",
        &mut dev,
        &[
            Param::U64(px.addr()),
            Param::U64(o.addr()),
            Param::U64(mask.addr()),
        ],
    );
    assert!(text.contains("ld.global.nc.b32"), "{text}");
    let (got, m) = (bytes::to_i32(&dev.read(o)), bytes::to_i32(&dev.read(mask)));
    for i in 0..N {
        let k = i as i32;
        assert_eq!(got[i], x[i].wrapping_add(3 * k * k - 7), "{i}");
        // i1 constants are packed bits: element i is bit i % 8 of byte i / 8.
        assert_eq!(m[i], i32::from((x[i] < 0) ^ (i % 3 == 0)), "mask {i}");
    }
}

#[test]
fn scans_follow_the_region_argument_order() {
    const R: usize = 4;
    const C: usize = 64;
    let mut dev = Device::new();
    let v = values(19, 3 * R * C);
    let x64: Vec<i64> = v[..R * C].iter().map(|&b| (b as i64) >> 20).collect();
    let x16: Vec<u16> = v[R * C..2 * R * C].iter().map(|&b| b as u16).collect();
    // Mostly zeros, so "last non-zero" often reaches back.
    let x32: Vec<i32> = v[2 * R * C..]
        .iter()
        .map(|&b| if b % 3 == 0 { (b >> 8) as i32 | 1 } else { 0 })
        .collect();
    let (p64, p16, p32) = (
        dev.alloc_from(&bytes::from_i64(&x64)),
        dev.alloc_from(&bytes::from_u16(&x16)),
        dev.alloc_from(&bytes::from_i32(&x32)),
    );
    let (o64, o16, o32) = (
        dev.alloc(8 * R * C),
        dev.alloc(2 * R * C),
        dev.alloc(4 * R * C),
    );
    run(
        "scan_i64_i16_i32",
        &mut dev,
        &[p64, p16, p32, o64, o16, o32].map(|p| Param::U64(p.addr())),
    );
    let (g64, g16, g32) = (
        bytes::to_i64(&dev.read(o64)),
        bytes::to_u16(&dev.read(o16)),
        bytes::to_i32(&dev.read(o32)),
    );
    for i in 0..R {
        for j in 0..C {
            let at = i * C + j;
            let sum: i64 = (0..=j).map(|k| x64[i * C + k]).fold(0, i64::wrapping_add);
            assert_eq!(g64[at], sum, "sum [{i}, {j}]");
            let max = (j..C)
                .map(|k| x16[i * C + k] as i16)
                .max()
                .unwrap_or(i16::MIN);
            assert_eq!(g16[at] as i16, max, "reverse max [{i}, {j}]");
            let last = (0..=i)
                .rev()
                .map(|k| x32[k * C + j])
                .find(|&x| x != 0)
                .unwrap_or(0);
            assert_eq!(g32[at], last, "last non-zero [{i}, {j}]");
        }
    }
}

#[test]
fn for_loops_continue_early_from_inside_an_if() {
    for k in [0usize, 1, 2, 7] {
        let mut dev = Device::new();
        let x: Vec<i32> = values(23 + k as u64, N * k.max(1))
            .iter()
            .map(|&v| v as i32 >> 8)
            .collect();
        let px = dev.alloc_from(&bytes::from_i32(&x));
        let o = dev.alloc(4 * N);
        run(
            "for_early_continue_i32",
            &mut dev,
            &[
                Param::U64(px.addr()),
                Param::U64(o.addr()),
                Param::U32(k as u32),
            ],
        );
        let got = bytes::to_i32(&dev.read(o));
        for i in 0..N {
            let want = (0..k)
                .filter(|r| r % 3 != 1)
                .fold(0i32, |s, r| s.wrapping_add(x[r * N + i]));
            assert_eq!(got[i], want, "K = {k}, {i}");
        }
    }
}

#[test]
fn atomic_add_on_16_bit_floats() {
    // f16 with atom.add.noftz everywhere; bf16 with it from sm_90 and with a
    // compare-and-swap loop before.
    for (name, bf16) in [("atomic_add_f16", false), ("atomic_add_bf16", true)] {
        for (gpu, arch) in [(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")] {
            let mut dev = Device::new();
            // Small integers: every partial sum is exact, whatever the order.
            let xs: Vec<f64> = values(29, N)
                .iter()
                .map(|&v| (v % 17) as f64 - 8.0)
                .collect();
            let enc = |v: f64| {
                if bf16 {
                    f64_to_bf16_rn(v)
                } else {
                    f64_to_f16_rn(v)
                }
            };
            let dec = |b: u16| if bf16 { bf16_to_f64(b) } else { f16_to_f64(b) };
            let x: Vec<u16> = xs.iter().map(|&v| enc(v)).collect();
            let px = dev.alloc_from(&bytes::from_u16(&x));
            let acc = dev.alloc_from(&bytes::from_u16(&[enc(0.0); 8]));
            let old = dev.alloc(2 * N);
            let params = [px, acc, old].map(|p| Param::U64(p.addr()));
            let text = run_on(name, &mut dev, &params, gpu, arch);
            let cas = bf16 && gpu == Gpu::Sm80;
            let ty = if bf16 { "bf16" } else { "f16" };
            let want = if cas {
                "atom.relaxed.gpu.global.cas.b16".to_string()
            } else {
                format!("atom.relaxed.gpu.global.add.noftz.{ty}")
            };
            assert!(text.contains(&want), "{arch}: {text}");
            let (acc, old) = (bytes::to_u16(&dev.read(acc)), bytes::to_u16(&dev.read(old)));
            for (s, &a) in acc.iter().enumerate() {
                let total: f64 = (s..N).step_by(8).map(|i| xs[i]).sum();
                assert_eq!(dec(a), total, "{name} {arch} slot {s}");
                // The old values chain from 0 to the total.
                let seen: Vec<f64> = (s..N).step_by(8).map(|i| dec(old[i])).collect();
                assert!(seen.contains(&0.0), "{name} {arch} slot {s}: {seen:?}");
                for (k, i) in (s..N).step_by(8).enumerate() {
                    let next = seen[k] + xs[i];
                    assert!(
                        next == total || seen.contains(&next),
                        "{name} {arch} slot {s}: {seen:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn bool_tiles_live_in_memory_as_bytes() {
    let mut dev = Device::new();
    let n = 100usize;
    // Any non-zero byte reads as true.
    let x: Vec<u8> = values(31, N)
        .iter()
        .map(|&v| [0u8, 1, 2, 255][(v % 4) as usize])
        .collect();
    let vx: Vec<u8> = values(37, n).iter().map(|&v| (v % 2) as u8).collect();
    let (px, pvx) = (dev.alloc_from(&x), dev.alloc_from(&vx));
    let (o, vo) = (dev.alloc_from(&[7u8; N]), dev.alloc_from(&[7u8; N]));
    let text = run(
        "bool_memory_i1",
        &mut dev,
        &[
            Param::U64(px.addr()),
            Param::U64(o.addr()),
            Param::U64(pvx.addr()),
            Param::U64(vo.addr()),
            Param::U32(n as u32),
        ],
    );
    assert!(
        text.contains("ld.global.b8") && text.contains("st.global.b8"),
        "{text}"
    );
    let (got, vgot) = (dev.read(o), dev.read(vo));
    for i in 0..N {
        assert_eq!(got[i], u8::from((x[i] != 0) ^ (i % 3 == 0)), "pointer {i}");
        // Views: in bounds negated, beyond n untouched.
        let want = if i < n { u8::from(vx[i] == 0) } else { 7 };
        assert_eq!(vgot[i], want, "view {i}");
    }
}

#[test]
fn alloca_inside_a_loop_is_reused_safely() {
    for k in [0usize, 1, 5] {
        let mut dev = Device::new();
        let x: Vec<i32> = values(41 + k as u64, N * k.max(1))
            .iter()
            .map(|&v| v as i32 >> 8)
            .collect();
        let px = dev.alloc_from(&bytes::from_i32(&x));
        let o = dev.alloc(4 * N);
        let text = run(
            "alloca_in_loop_i32",
            &mut dev,
            &[
                Param::U64(px.addr()),
                Param::U64(o.addr()),
                Param::U32(k as u32),
            ],
        );
        // Allocated once, before the loop; freed at the end.
        assert_eq!(
            text.matches("__cuda_syscall_aligned_malloc, (param0")
                .count(),
            1,
            "{text}"
        );
        let got = bytes::to_i32(&dev.read(o));
        for i in 0..N {
            let want = (0..k).fold(0i32, |s, r| s.wrapping_add(x[r * N + N - 1 - i]));
            assert_eq!(got[i], want, "K = {k}, {i}");
        }
    }
}

#[test]
fn for_loops_count_with_i16_and_i8_induction_variables() {
    // (lb, ub, step) for the i16 loop (signed) and the i8 loop (unsigned):
    // empty ranges, a step past the bound, negative i16 bounds, i8 bounds
    // above 127 (only unsigned reads them as such) and ranges ending where
    // a narrow counter would wrap.
    let cases: [([i16; 3], [u8; 3]); 6] = [
        ([0, 5, 1], [0, 5, 1]),
        ([3, 3, 1], [9, 2, 1]),
        ([-7, 4, 3], [100, 200, 37]),
        ([32000, 32767, 200], [250, 255, 2]),
        ([-32768, -32000, 300], [0, 255, 64]),
        ([10, -5, 1], [128, 130, 1]),
    ];
    for (b16, b8) in cases {
        let mut dev = Device::new();
        let x: Vec<i32> = values(41, N)
            .iter()
            .map(|&v| (v % 1000) as i32 - 500)
            .collect();
        let px = dev.alloc_from(&bytes::from_i32(&x));
        let pb16 = dev.alloc_from(&bytes::from_u16(&b16.map(|v| v as u16)));
        let o16 = dev.alloc(4 * N);
        let pb8 = dev.alloc_from(&b8);
        let o8 = dev.alloc(4 * N);
        let params = [px, pb16, o16, pb8, o8].map(|p| Param::U64(p.addr()));
        run("for_i16_i8", &mut dev, &params);
        let sum = |ks: Vec<i32>, xi: i32| {
            ks.iter()
                .fold(0i32, |s, &k| s.wrapping_add(xi.wrapping_mul(k)))
        };
        let range = |lb: i32, ub: i32, st: i32| -> Vec<i32> {
            (0..).map(|n| lb + n * st).take_while(|&k| k < ub).collect()
        };
        let k16 = range(b16[0].into(), b16[1].into(), b16[2].into());
        let k8 = range(b8[0].into(), b8[1].into(), b8[2].into());
        let (g16, g8) = (bytes::to_i32(&dev.read(o16)), bytes::to_i32(&dev.read(o8)));
        for i in 0..N {
            assert_eq!(g16[i], sum(k16.clone(), x[i]), "i16 {b16:?} at {i}");
            assert_eq!(g8[i], sum(k8.clone(), x[i]), "i8 {b8:?} at {i}");
        }
    }
}

#[test]
fn ftoi_to_i1_tests_for_nonzero() {
    // NVIDIA's tileiras compiles ftoi to i1 as `x != 0` (NaN true) whatever
    // the signedness and saturation; cuTile's astype(bool) relies on it.
    let f32s = [
        0.0f32,
        -0.0,
        0.5,
        -0.25,
        1.0,
        -1.0,
        3.5,
        f32::NAN,
        f32::INFINITY,
        f32::MIN_POSITIVE / 2.0,
    ];
    let pick = |i: usize| f32s[i % f32s.len()] as f64 * if i >= f32s.len() { 3.0 } else { 1.0 };
    let xs: Vec<f64> = (0..N).map(pick).collect();
    let mut dev = Device::new();
    let p32 = dev.alloc_from(&bytes::from_f32(
        &xs.iter().map(|&v| v as f32).collect::<Vec<_>>(),
    ));
    let p16 = dev.alloc_from(&bytes::from_u16(
        &xs.iter().map(|&v| f64_to_f16_rn(v)).collect::<Vec<_>>(),
    ));
    let pbf = dev.alloc_from(&bytes::from_u16(
        &xs.iter().map(|&v| f64_to_bf16_rn(v)).collect::<Vec<_>>(),
    ));
    let p64 = dev.alloc_from(&bytes::from_f64(&xs));
    // f8E4M3FN codes: every code once (0x00 and 0x80 are zeros, 0x7f and
    // 0xff NaN, 0x01 the smallest subnormal).
    let codes: Vec<u8> = (0..N).map(|i| (i * 2 + (i >> 6)) as u8).collect();
    let p8 = dev.alloc_from(&codes);
    let out = dev.alloc(6 * N);
    let params = [p32, p16, pbf, p64, p8, out].map(|p| Param::U64(p.addr()));
    for (gpu, arch) in [(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")] {
        let text = run_on("ftoi_i1", &mut dev, &params, gpu, arch);
        assert!(
            !text.contains("cvt.rzi"),
            "{arch}: a compare, not a conversion"
        );
        let got = dev.read(out);
        let nonzero = |v: f64| u8::from(v != 0.0);
        for i in 0..N {
            let x = xs[i];
            let f16 = f16_to_f64(f64_to_f16_rn(x));
            let bf16 = bf16_to_f64(f64_to_bf16_rn(x));
            let e4m3 = codes[i] & 0x7f != 0;
            let want = [
                nonzero(x as f32 as f64),
                nonzero(x as f32 as f64),
                nonzero(f16),
                nonzero(bf16),
                nonzero(x),
                u8::from(e4m3),
            ];
            for (r, w) in want.iter().enumerate() {
                assert_eq!(
                    got[r * N + i],
                    *w,
                    "{arch}: row {r}, x = {x}, code {:#04x}",
                    codes[i]
                );
            }
        }
    }
}

#[test]
fn tokens_flow_through_for_and_if() {
    // K = 0 (the loop never stores, the if takes its else), 1, and 3.
    for k in [0usize, 1, 3] {
        let mut dev = Device::new();
        let x: Vec<i32> = values(61, N).iter().map(|&v| (v % 1000) as i32).collect();
        let px = dev.alloc_from(&bytes::from_i32(&x));
        let out = dev.alloc_from(&bytes::from_i32(&vec![-5; N * k.max(1)]));
        let out2 = dev.alloc_from(&bytes::from_i32(&vec![-7; N]));
        let out3 = dev.alloc(4 * N);
        let text = run(
            "token_flow",
            &mut dev,
            &[
                Param::U64(px.addr()),
                Param::U64(out.addr()),
                Param::U64(out2.addr()),
                Param::U64(out3.addr()),
                Param::U32(k as u32),
            ],
        );
        // The loop's store and the load after it are ordered by a barrier.
        assert!(text.contains("bar.sync"), "K = {k}");
        let (o, o2, o3) = (
            bytes::to_i32(&dev.read(out)),
            bytes::to_i32(&dev.read(out2)),
            bytes::to_i32(&dev.read(out3)),
        );
        for i in 0..N {
            for r in 0..k {
                assert_eq!(o[r * N + i], x[i] + r as i32, "K = {k}: out row {r} at {i}");
            }
            assert_eq!(
                o2[i],
                if k > 1 { 2 * x[i] } else { -7 },
                "K = {k}: out2 at {i}"
            );
            let first = if k > 0 { x[i] } else { -5 };
            assert_eq!(o3[i], first + 1, "K = {k}: out3 at {i}");
        }
    }
}

#[test]
fn large_matmul_recomputes_its_pointer_tiles_instead_of_moving_them() {
    // 128x128x32: moving the 128x128 pointer tile of the store into the
    // accumulator's layout would need 128 KiB of shared memory (more than
    // sm_120 has); it is recomputed there instead. Small integers keep
    // every sum exact.
    let (m, n, k) = (128usize, 128usize, 32usize);
    let r = values(71, m * k + k * n + m * n);
    let small = |v: u64| (v % 9) as i32 - 4;
    let a: Vec<i32> = r[..m * k].iter().map(|&v| small(v)).collect();
    let b: Vec<i32> = r[m * k..m * k + k * n].iter().map(|&v| small(v)).collect();
    let c: Vec<i32> = r[m * k + k * n..].iter().map(|&v| small(v >> 8)).collect();
    let half = |x: &[i32]| -> Vec<u16> { x.iter().map(|&v| f64_to_f16_rn(f64::from(v))).collect() };
    for (gpu, arch) in [
        (Gpu::Sm80, "sm_80"),
        (Gpu::Sm90, "sm_90a"),
        (Gpu::Sm120, "sm_120a"),
    ] {
        let mut dev = Device::new();
        let pa = dev.alloc_from(&bytes::from_u16(&half(&a)));
        let pb = dev.alloc_from(&bytes::from_u16(&half(&b)));
        let pc = dev.alloc_from(&bytes::from_f32(
            &c.iter().map(|&v| v as f32).collect::<Vec<_>>(),
        ));
        let pd = dev.alloc(4 * m * n);
        let params = [pa, pb, pc, pd].map(|p| Param::U64(p.addr()));
        let text = run_on("mma_128x128x32_f16", &mut dev, &params, gpu, arch);
        assert!(
            text.contains("mma.sync") || text.contains("wgmma"),
            "{arch}: tensor cores"
        );
        let d = bytes::to_f32(&dev.read(pd));
        for i in 0..m {
            for j in 0..n {
                let want = c[i * n + j] + (0..k).map(|t| a[i * k + t] * b[t * n + j]).sum::<i32>();
                assert_eq!(d[i * n + j], want as f32, "{arch}: d[{i}, {j}]");
            }
        }
    }
}

/// A tile whose move through shared memory needs more than the target has
/// (a 256x512 f32 permute, 512 KiB) is status 4, and the message names the
/// op and the bytes needed and available.
#[test]
fn a_tile_too_large_for_shared_memory_names_the_op_and_the_bytes() {
    let path = common::repo().join("tests/data/lower/ops/permute_huge_f32.tileir");
    let m = tileiras::bytecode::read(&std::fs::read(path).unwrap()).unwrap();
    for (gpu, available) in [(Gpu::Sm80, 166_912), (Gpu::Sm90, 232_448)] {
        let options = Options {
            gpu,
            ..Default::default()
        };
        let e = tileiras::lower::lower(&m, &options).unwrap_err();
        assert!(e.is_unsupported(), "{e}");
        assert_eq!(
            e.to_string(),
            format!(
                "'cuda_tile.permute' op with a tile too large for shared memory \
                 (524288 bytes needed, {available} available) is not supported by this compiler"
            )
        );
    }
}
