//! `mmaf_scaled` (block-scaled f8 matmul) in the PTX emulator, against CPU
//! references that decode e4m3, e5m2 and e8m0 themselves: the corpus kernel
//! `mma_scaled_mxfp8` (128 x 128 tiles) lowered for sm_90 (wgmma), sm_80 and
//! sm_120 (mma.sync), an e5m2 kernel on 64 x 64 tiles, an e4m3 kernel on
//! 8 x 16 tiles (the FMA engine) and a batched one on 3-D tiles, on ragged
//! sizes (`tests/data/lower/kernels/kernels.py`). Scales are random near 1, with
//! blocks scaled up to 2^60 and down to 2^-60, rows scaled by the smallest
//! scales 2^-126 and 2^-127, one NaN scale and NaN operands. ptxas
//! assembles the corpus kernel without spills and the accumulator keeps the
//! engine's layout across the K loop. f4 operands: `tests/lower_mma_scaled_f4.rs`.
mod common;
use common::scaled::{accumulated, e4m3, e5m2, e8m0, padded, stride, Rng};

use ptx_emu::{bytes, Device, LaunchConfig, Module, Param};
use tileiras::options::{Gpu, Options};

/// An f8 operand format.
#[derive(Clone, Copy)]
enum F8 {
    E4m3,
    E5m2,
}

impl F8 {
    fn value(self, b: u8) -> f64 {
        match self {
            F8::E4m3 => e4m3(b),
            F8::E5m2 => e5m2(b),
        }
    }

    /// The largest finite magnitude's byte.
    fn largest(self) -> u8 {
        match self {
            F8::E4m3 => 0x7e,
            F8::E5m2 => 0x7b,
        }
    }

    /// `b` with a magnitude of at least 2^-3 (finite, same sign): times
    /// 2^-127 it is still exact in bf16 (4 significant bits down to 2^-130).
    fn at_least_eighth(self, b: u8) -> u8 {
        let raised = match self {
            F8::E4m3 => b | 0x20,
            F8::E5m2 => b | 0x30,
        };
        if self.value(raised).is_finite() {
            raised
        } else {
            (b & 0x80) | 0x3a
        }
    }

    /// Random finite bytes.
    fn random(self, rng: &mut Rng, n: usize) -> Vec<u8> {
        (0..n)
            .map(|_| rng.next() as u8)
            .map(|b| if self.value(b).is_finite() { b } else { 0x3a })
            .collect()
    }
}

thread_local! {
    /// Whether this thread's kernels are lowered with `always_swizzle`.
    static SWIZZLE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The module in bytecode `bytes`, verified and lowered for `gpu`.
fn lower(bytes: &[u8], gpu: Gpu) -> Result<String, tileiras::lower::LowerError> {
    let module = tileiras::bytecode::read(bytes).expect("bytecode");
    tileiras::verify::verify(&module).expect("verifies");
    let options = Options {
        gpu,
        always_swizzle: SWIZZLE.with(std::cell::Cell::get),
        ..Default::default()
    };
    tileiras::lower::lower(&module, &options)
}

/// The corpus kernel's bytecode.
fn corpus_bytes() -> Vec<u8> {
    let path = common::corpus().join("mma_scaled_mxfp8/mma_scaled_mxfp8.v13_3.tileir");
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The bytecode of kernel `name` of `tests/data/lower/kernels`.
fn kernel_bytes(name: &str) -> Vec<u8> {
    let path = common::repo().join(format!("tests/data/lower/kernels/{name}.tileir"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The corpus kernel lowered for `gpu`.
fn ptx(gpu: Gpu) -> String {
    lower(&corpus_bytes(), gpu).unwrap_or_else(|e| panic!("{gpu}: {e}"))
}

/// A block-scaled matmul kernel with the corpus kernel's parameters
/// (`a, a_scale, b, b_scale, c`, each pointer, shape and strides).
struct Kernel<'a> {
    name: &'a str,
    ptx: String,
    f8: F8,
    /// The tile of C one tile block computes.
    tile: (usize, usize),
    /// For 3-D kernels, the batch extent of that tile.
    batch_tile: Option<usize>,
}

/// Runs `kernel` on `h` batches of `m x k` by `k x n` (k a multiple of 32)
/// and checks every element of C, and that C's row padding is untouched.
/// Batches are stacked along the rows: A is `h m x k`, B `h k x n`.
fn run(kernel: &Kernel, (h, m, n, k): (usize, usize, usize, usize), seed: u64) {
    let what = kernel.name;
    let module = Module::parse(&kernel.ptx).unwrap_or_else(|e| panic!("{what}: {e}"));
    let kb = k / 32;
    let mut rng = Rng(seed);
    let mut a = kernel.f8.random(&mut rng, h * m * k);
    let mut b = kernel.f8.random(&mut rng, h * k * n);
    // NaN operands (0x7F in both formats): row 3 and column 4 of C are NaN;
    // negative zeros and the extreme magnitudes elsewhere.
    a[3 * k + 5] = 0x7f;
    b[7 * n + 4] = 0xff;
    a[4 * k] = 0x80;
    b[n + 1] = kernel.f8.largest();
    b[2 * n + 1] = kernel.f8.largest() | 0x80;
    // Scales near 1 (2^-20 .. 2^20); every fifth row of A and every third
    // column of B has its blocks scaled by 2^+-60 in turn (opposite signs
    // per block, so products of two extremes stay moderate).
    let mut a_scale: Vec<u8> = (0..h * m * kb).map(|_| rng.range(107, 147) as u8).collect();
    let mut b_scale: Vec<u8> = (0..h * kb * n).map(|_| rng.range(107, 147) as u8).collect();
    for i in (0..h * m).step_by(5) {
        for q in 0..kb {
            a_scale[i * kb + q] = if q % 2 == 0 { 187 } else { 67 };
        }
    }
    for j in (0..n).step_by(3) {
        for q in 0..h * kb {
            b_scale[q * n + j] = if q % 2 == 0 { 67 } else { 187 };
        }
    }
    // One NaN scale: row 2 of C is NaN.
    a_scale[2 * kb + kb - 1] = 0xff;
    // The smallest scales: rows 6 and 7 of A scaled by 2^-126 and 2^-127
    // (an f32 subnormal), their elements at least 2^-3 so the dequantized
    // values stay exact; the columns scaled by 2^60 bring them back.
    for (i, s) in [(6, 1), (7, 0)] {
        if i < m {
            a_scale[i * kb..(i + 1) * kb].fill(s);
            for q in 0..k {
                a[i * k + q] = kernel.f8.at_least_eighth(a[i * k + q]);
            }
        }
    }

    let mut dev = Device::new();
    let mut params = Vec::new();
    // An `h x rows x cols` array (2-D when the kernel is) of `data` laid
    // out with padded rows.
    let mut arr = |dev: &mut Device, data: &[u8], rows: usize, cols: usize| {
        let p = dev.alloc_from(data);
        params.push(Param::U64(p.addr()));
        let (shape, strides) = match kernel.batch_tile {
            None => (vec![rows, cols], vec![stride(cols), 1]),
            Some(_) => (
                vec![h, rows, cols],
                vec![rows * stride(cols), stride(cols), 1],
            ),
        };
        params.extend(shape.into_iter().map(|x| Param::U32(x as u32)));
        params.extend(strides.into_iter().map(|x| Param::U32(x as u32)));
        p
    };
    // Padding bytes are NaNs in every format.
    arr(&mut dev, &padded(&a, h * m, k, 0x7f), m, k);
    arr(&mut dev, &padded(&a_scale, h * m, kb, 0xff), m, kb);
    arr(&mut dev, &padded(&b, h * k, n, 0x7f), k, n);
    arr(&mut dev, &padded(&b_scale, h * kb, n, 0xff), kb, n);
    let sentinel = -12345.0f32;
    let c0 = bytes::from_f32(&vec![sentinel; h * m * stride(n)]);
    let pc = arr(&mut dev, &c0, m, n);
    let entry = module.kernel(what).expect("entry");
    let (tm, tn) = kernel.tile;
    let cfg = LaunchConfig {
        grid: (
            m.div_ceil(tm) as u32,
            n.div_ceil(tn) as u32,
            (h / kernel.batch_tile.unwrap_or(1)) as u32,
        ),
        block: entry.reqntid.expect("reqntid"),
        cluster: (1, 1, 1),
        dynamic_smem: 0,
    };
    dev.launch(&module, what, cfg, &params)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let c = bytes::to_f32(&dev.read(pc));

    let mut bad = 0;
    for i in 0..h * m {
        let hb = i / m;
        for j in n..stride(n) {
            assert_eq!(
                c[i * stride(n) + j].to_bits(),
                sentinel.to_bits(),
                "{what}: padding c[{i}, {j}] written"
            );
        }
        for j in 0..n {
            let (mut want, mut mag) = (0.0f64, 0.0f64);
            for q in 0..k {
                let x = kernel.f8.value(a[i * k + q]) * e8m0(a_scale[i * kb + q / 32]);
                let y = kernel.f8.value(b[(hb * k + q) * n + j])
                    * e8m0(b_scale[(hb * kb + q / 32) * n + j]);
                want += x * y;
                mag += (x * y).abs();
            }
            let got = f64::from(c[i * stride(n) + j]);
            // f32 accumulation of k exact products.
            if !accumulated(got, want, mag) {
                if bad < 10 {
                    eprintln!("{what} c[{i}, {j}]: got {got}, want {want} (magnitude {mag})");
                }
                bad += 1;
            }
        }
    }
    assert_eq!(bad, 0, "{what}: {bad} wrong elements of {}", h * m * n);
}

/// The corpus kernel for `gpu` on `m x k` by `k x n`.
fn run_corpus(gpu: Gpu, mnk: (usize, usize, usize), seed: u64) {
    let kernel = Kernel {
        name: "mma_scaled_mxfp8",
        ptx: ptx(gpu),
        f8: F8::E4m3,
        tile: (128, 128),
        batch_tile: None,
    };
    let (m, n, k) = mnk;
    run(&kernel, (1, m, n, k), seed);
}

#[test]
fn mxfp8_matmul_on_sm90_matches_the_reference() {
    let ptx = ptx(Gpu::Sm90);
    assert!(ptx.contains("wgmma.mma_async"), "no wgmma");
    run_corpus(Gpu::Sm90, (256, 128, 256), 11);
}

#[test]
fn mxfp8_matmul_on_sm80_matches_the_reference() {
    let ptx = ptx(Gpu::Sm80);
    assert!(
        ptx.contains("mma.sync.aligned.m16n8k16"),
        "no bf16 mma.sync"
    );
    run_corpus(Gpu::Sm80, (128, 256, 256), 12);
}

#[test]
fn mxfp8_matmul_on_sm120_matches_the_reference() {
    run_corpus(Gpu::Sm120, (128, 128, 128), 13);
}

/// With `always_swizzle` (`TILEIR_ALWAYS_SWIZZLE`) the dequantized operands
/// are staged in unpadded, swizzled buffers.
#[test]
fn mxfp8_matmul_swizzled_matches_the_reference() {
    let padded = ptx(Gpu::Sm80);
    SWIZZLE.with(|s| s.set(true));
    assert_ne!(ptx(Gpu::Sm80), padded);
    run_corpus(Gpu::Sm80, (128, 256, 256), 14);
    run_corpus(Gpu::Sm120, (128, 128, 128), 15);
}

/// ptxas assembles the kernel for every family without local memory.
#[test]
fn f8_operands_convert_in_hardware_from_sm89() {
    for gpu in [Gpu::Sm89, Gpu::Sm90, Gpu::Sm100, Gpu::Sm120] {
        assert!(ptx(gpu).contains("cvt.rn.f16x2.e4m3x2"), "{gpu}");
    }
    assert!(!ptx(Gpu::Sm80).contains("e4m3x2"));
}

#[test]
fn mxfp8_matmul_assembles_without_spills() {
    for (gpu, arch) in [
        (Gpu::Sm80, "sm_80"),
        (Gpu::Sm90, "sm_90a"),
        (Gpu::Sm100, "sm_100a"),
        (Gpu::Sm120, "sm_120a"),
    ] {
        let (_, log) = common::assemble(
            &ptx(gpu),
            &["-arch", arch, "-v", "--enable-extended-smem=true"],
        );
        assert!(
            log.contains(" 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"),
            "{gpu}: {log}"
        );
    }
}

/// e5m2 operands on 64 x 64 tiles: wgmma on sm_90, mma.sync on sm_80 and
/// sm_120; ragged M and N.
#[test]
fn e5m2_matmul_on_ragged_sizes_matches_the_reference() {
    for (gpu, engine, seed) in [
        (Gpu::Sm90, "wgmma.mma_async", 21),
        (Gpu::Sm80, "mma.sync.aligned.m16n8k16", 22),
        (Gpu::Sm120, "mma.sync.aligned.m16n8k16", 23),
    ] {
        let ptx =
            lower(&kernel_bytes("mma_scaled_e5m2"), gpu).unwrap_or_else(|e| panic!("{gpu}: {e}"));
        assert!(ptx.contains(engine), "{gpu}: no {engine}");
        let kernel = Kernel {
            name: "mma_scaled_e5m2",
            ptx,
            f8: F8::E5m2,
            tile: (64, 64),
            batch_tile: None,
        };
        run(&kernel, (1, 100, 72, 128), seed);
    }
}

/// 8 x 16 tiles, which no tensor-core engine takes: the FMA engine
/// multiplies the dequantized operands; ragged M and N.
#[test]
fn small_tiles_use_fmas_and_match_the_reference() {
    for (gpu, seed) in [(Gpu::Sm90, 31), (Gpu::Sm80, 32)] {
        let ptx = lower(&kernel_bytes("mma_scaled_e4m3_8x16"), gpu)
            .unwrap_or_else(|e| panic!("{gpu}: {e}"));
        assert!(
            !ptx.contains("mma.sync") && !ptx.contains("wgmma"),
            "{gpu}: a tensor-core engine"
        );
        let kernel = Kernel {
            name: "mma_scaled_e4m3_8x16",
            ptx,
            f8: F8::E4m3,
            tile: (8, 16),
            batch_tile: None,
        };
        run(&kernel, (1, 20, 40, 192), seed);
    }
}

/// 3-D (batched) tiles, 2 x 32 x 64 by 2 x 64 x 16: mma.sync per batch;
/// ragged M and N.
#[test]
fn batched_matmul_matches_the_reference() {
    for (gpu, seed) in [(Gpu::Sm90, 41), (Gpu::Sm80, 42)] {
        let ptx = lower(&kernel_bytes("mma_scaled_batched"), gpu)
            .unwrap_or_else(|e| panic!("{gpu}: {e}"));
        assert!(
            ptx.contains("mma.sync.aligned.m16n8k16"),
            "{gpu}: no mma.sync"
        );
        let kernel = Kernel {
            name: "mma_scaled_batched",
            ptx,
            f8: F8::E4m3,
            tile: (32, 16),
            batch_tile: Some(2),
        };
        run(&kernel, (4, 40, 24, 128), seed);
    }
}

/// The accumulator stays in the engine's registers across the K loop:
/// layout assignment gives the op's accumulator and result and the loop's
/// initial value, iteration argument and result the engine's accumulator
/// layout (no conversion between iterations).
#[test]
fn accumulator_keeps_the_engine_layout_across_the_loop() {
    use tileiras::ir::Opcode;
    use tileiras::lower::plan::{engines, plan_entry};
    use tileiras::options::Options;
    let module = tileiras::bytecode::read(&corpus_bytes()).expect("bytecode");
    let entry = *module
        .top_level()
        .iter()
        .find(|&&id| module.ops[id].opcode == Opcode::Entry)
        .expect("entry");
    let body = &module.ops[entry].regions[0].blocks[0];
    let find = |ops: &[tileiras::ir::OpId], opcode: Opcode| {
        *ops.iter()
            .find(|&&id| module.ops[id].opcode == opcode)
            .expect("op")
    };
    let for_op = &module.ops[find(&body.ops, Opcode::For)];
    let loop_body = &for_op.regions[0].blocks[0];
    let mma_id = find(&loop_body.ops, Opcode::MmaFScaled);
    let mma_op = &module.ops[mma_id];
    for gpu in [Gpu::Sm80, Gpu::Sm90, Gpu::Sm120] {
        let options = Options {
            gpu,
            ..Default::default()
        };
        let plan = plan_entry(&module, entry, &options).expect("plan");
        assert_eq!(plan.warps, 8, "{gpu}");
        let layouts = &plan.layouts;
        let engine = plan.engine(mma_id).expect("the product has an engine");
        let acc = engines::acc_layout(engine).expect("a tensor-core engine");
        for v in [
            mma_op.results[0],
            mma_op.operand("acc").expect("acc"),
            for_op.results[0],
            for_op.operand_group("initValues")[0],
            loop_body.args[1],
        ] {
            assert_eq!(*layouts[&v], acc, "{gpu}");
        }
    }
}
