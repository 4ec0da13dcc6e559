//! Matrix multiplies whose operands do not fit shared memory whole: the
//! engines stage them one K slice at a time (`mma.sync` for f64, tf32 and
//! i8, FMAs for f32 and for f64 on sm_120), batched or not. Each kernel of
//! `tests/data/lower/ops/gen.py` computes `d = a @ b + c` over small
//! integers, so every sum is exact whatever the order, and runs in the PTX
//! emulator after the real ptxas accepts it.
mod common;
use common::shared_bytes;
use common::xorshift as values;

use ptx_emu::{bytes, Device, Module, Param};
use std::cell::Cell;
use tileiras::options::{Gpu, Options};

thread_local! {
    /// Whether this thread's kernels swizzle their operand buffers
    /// (`TILEIR_ALWAYS_SWIZZLE`) rather than pad them.
    static SWIZZLE: Cell<bool> = const { Cell::new(false) };
}

/// A (`batch x m x k`), B (`batch x k x n`) and C (`batch x m x n`) of
/// f64 values in `[-4, 4]`.
fn operands(seed: u64, (batch, m, n, k): (usize, usize, usize, usize)) -> [Vec<f64>; 3] {
    let (sa, sb, sc) = (batch * m * k, batch * k * n, batch * m * n);
    let r = values(seed, sa + sb + sc);
    let small = |v: &u64| (v % 9) as f64 - 4.0;
    [
        r[..sa].iter().map(small).collect(),
        r[sa..sa + sb].iter().map(small).collect(),
        r[sa + sb..].iter().map(small).collect(),
    ]
}

/// How a kernel's operands (A, B) and accumulators (C, D) lie in memory.
struct Elems {
    ab: fn(&[f64]) -> Vec<u8>,
    cd: fn(&[f64]) -> Vec<u8>,
    dec: fn(&[u8]) -> Vec<f64>,
}

const F64: Elems = Elems {
    ab: enc_f64,
    cd: enc_f64,
    dec: dec_f64,
};
const F32: Elems = Elems {
    ab: enc_f32,
    cd: enc_f32,
    dec: dec_f32,
};
const I8_I32: Elems = Elems {
    ab: enc_i8,
    cd: enc_i32,
    dec: dec_i32,
};

/// Lowers ops kernel `name` for `gpu`, assembles it for `arch`, runs one
/// tile block on `a`, `b`, `c` (stored as `e` says), and checks `d`
/// against the exact product; returns the PTX.
fn check(
    name: &str,
    (batch, m, n, k): (usize, usize, usize, usize),
    gpu: Gpu,
    arch: &str,
    e: &Elems,
) -> String {
    let options = Options {
        gpu,
        always_swizzle: SWIZZLE.with(Cell::get),
        ..Default::default()
    };
    let (enc, dec) = (e.cd, e.dec);
    let [a, b, c] = operands(17, (batch, m, n, k));
    let text = common::ops_ptx_with(name, &options, arch);
    let module = Module::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut dev = Device::new();
    let pa = dev.alloc_from(&(e.ab)(&a));
    let pb = dev.alloc_from(&(e.ab)(&b));
    let pc = dev.alloc_from(&enc(&c));
    let pd = dev.alloc(c.len() * enc(&[0.0]).len());
    let params = [pa, pb, pc, pd].map(|p| Param::U64(p.addr()));
    dev.launch_grid(&module, name, (1, 1, 1), &params)
        .unwrap_or_else(|e| panic!("{name} {arch}: {e}"));
    let d = dec(&dev.read(pd));
    for z in 0..batch {
        let (a, b) = (&a[z * m * k..], &b[z * k * n..]);
        for i in 0..m {
            for j in 0..n {
                let at = (z * m + i) * n + j;
                let want = c[at] + (0..k).map(|t| a[i * k + t] * b[t * n + j]).sum::<f64>();
                assert_eq!(d[at], want, "{name} {arch}: d[{z}, {i}, {j}]");
            }
        }
    }
    text
}

fn enc_i8(x: &[f64]) -> Vec<u8> {
    x.iter().map(|&v| v as i8 as u8).collect()
}

fn enc_i32(x: &[f64]) -> Vec<u8> {
    x.iter().flat_map(|&v| (v as i32).to_le_bytes()).collect()
}

fn dec_i32(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(4)
        .map(|w| f64::from(i32::from_le_bytes([w[0], w[1], w[2], w[3]])))
        .collect()
}

fn enc_f64(x: &[f64]) -> Vec<u8> {
    bytes::from_f64(x)
}

fn dec_f64(b: &[u8]) -> Vec<f64> {
    bytes::to_f64(b)
}

fn enc_f32(x: &[f64]) -> Vec<u8> {
    bytes::from_f32(&x.iter().map(|&v| v as f32).collect::<Vec<_>>())
}

fn dec_f32(b: &[u8]) -> Vec<f64> {
    bytes::to_f32(b).into_iter().map(f64::from).collect()
}

#[test]
fn f64_operands_of_256_kib_run_on_tensor_cores_in_k_slices() {
    // A and B take 128 KiB each: sm_80 and sm_90 stage 64 of K at a time
    // for `mma.sync.m8n8k4`; sm_120 (99 KiB) runs FMAs over 64-wide slices.
    for (gpu, arch, tensor) in [
        (Gpu::Sm80, "sm_80", true),
        (Gpu::Sm90, "sm_90a", true),
        (Gpu::Sm120, "sm_120a", false),
    ] {
        let text = check("mma_64x64x256_f64", (1, 64, 64, 256), gpu, arch, &F64);
        assert_eq!(text.contains("mma.sync.aligned.m8n8k4"), tensor, "{arch}");
        assert!(
            shared_bytes(&text) <= 96 * 1024,
            "{arch}: {}",
            shared_bytes(&text)
        );
    }
}

#[test]
fn tf32_operands_of_128_kib_run_on_mma_sync_in_k_slices() {
    // 128 x 128 x 128 tf32: 2 x 64 KiB of operands, staged 64 of K at a
    // time on sm_80 and sm_120 (before, sm_80 fell back to FMAs and sm_120
    // refused the op).
    for (gpu, arch) in [(Gpu::Sm80, "sm_80"), (Gpu::Sm120, "sm_120a")] {
        let text = check("mma_128x128x128_tf32", (1, 128, 128, 128), gpu, arch, &F32);
        assert!(text.contains("mma.sync.aligned.m16n8k8"), "{arch}");
        assert!(
            shared_bytes(&text) <= 96 * 1024,
            "{arch}: {}",
            shared_bytes(&text)
        );
    }
}

#[test]
fn f32_operands_beyond_sm_120_shared_memory_run_in_k_slices() {
    // 64 x 64 x 256 f32 on the FMA engine: 128 KiB staged whole on sm_80,
    // in two 128-wide slices on sm_120.
    for (gpu, arch, whole) in [(Gpu::Sm80, "sm_80", true), (Gpu::Sm120, "sm_120a", false)] {
        let text = check("mma_64x64x256_f32", (1, 64, 64, 256), gpu, arch, &F32);
        assert_eq!(shared_bytes(&text) == 128 * 1024, whole, "{arch}");
    }
}

#[test]
fn batched_f64_operands_are_sliced_per_batch() {
    // 4 x 32 x 32 x 256 f64: 256 KiB per operand. sm_80 stages 32 of K
    // at a time for `mma.sync`; sm_120's FMAs take 32.
    for (gpu, arch) in [(Gpu::Sm80, "sm_80"), (Gpu::Sm120, "sm_120a")] {
        let text = check("mma_b4_32x32x256_f64", (4, 32, 32, 256), gpu, arch, &F64);
        assert!(
            shared_bytes(&text) <= 96 * 1024,
            "{arch}: {}",
            shared_bytes(&text)
        );
    }
}

#[test]
fn batched_i8_operands_are_sliced_for_mma_sync() {
    // 2 x 128 x 128 x 256 i8 into i32: 128 KiB of operands, staged 128 of K
    // at a time (B transposed, K contiguous) on every target.
    for (gpu, arch) in [
        (Gpu::Sm80, "sm_80"),
        (Gpu::Sm90, "sm_90a"),
        (Gpu::Sm120, "sm_120a"),
    ] {
        let text = check(
            "mma_b2_128x128x256_i8",
            (2, 128, 128, 256),
            gpu,
            arch,
            &I8_I32,
        );
        assert!(text.contains("mma.sync.aligned.m16n8k32"), "{arch}");
        assert!(
            shared_bytes(&text) <= 96 * 1024,
            "{arch}: {}",
            shared_bytes(&text)
        );
    }
}

#[test]
fn swizzled_operand_slices_match_too() {
    // Under `TILEIR_ALWAYS_SWIZZLE` the slices' rows are unpadded and
    // XOR-swizzled, for every writer and reader.
    SWIZZLE.with(|s| s.set(true));
    f64_operands_of_256_kib_run_on_tensor_cores_in_k_slices();
    tf32_operands_of_128_kib_run_on_mma_sync_in_k_slices();
    batched_i8_operands_are_sliced_for_mma_sync();
    batched_f64_operands_are_sliced_per_batch();
}
