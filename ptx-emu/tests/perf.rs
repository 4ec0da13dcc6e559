//! Throughput check: a 1M-element vector add through NVIDIA's reference PTX.
//! Prints the emulator's instructions per second (run with `--nocapture`).

#[path = "../../tests/common/nvidia_reference.rs"]
mod nvidia_reference;

use ptx_emu::{bytes, Device, LaunchConfig, Module, Param};

#[test]
fn vadd_1m_throughput() {
    let n: usize = if cfg!(debug_assertions) {
        1 << 16
    } else {
        1 << 20
    };
    let text = nvidia_reference::ptx("vadd_f32_contig", "sm_90");
    let m = Module::parse(&text).unwrap();
    let mut dev = Device::new();
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 1.0 - i as f32).collect();
    let pa = dev.alloc_from(&bytes::from_f32(&a));
    let pb = dev.alloc_from(&bytes::from_f32(&b));
    let pc = dev.alloc(4 * n);
    let mut params = Vec::new();
    for p in [pa, pb, pc] {
        params.extend([Param::U64(p.addr()), Param::U32(n as u32), Param::U32(1)]);
    }
    let cfg = LaunchConfig::grid1d(n.div_ceil(1024) as u32, 128);
    // race checks off, then on (the default)
    dev.race_check = false;
    let t = std::time::Instant::now();
    let r = dev.launch(&m, "vadd_f32_contig", cfg, &params).unwrap();
    let dt0 = t.elapsed().as_secs_f64();
    println!("vadd {n} elements, race checks off: {} instructions in {dt0:.3} s = {:.1} M instructions/s", r.instructions, r.instructions as f64 / dt0 / 1e6);
    dev.race_check = true;
    let t = std::time::Instant::now();
    let r = dev.launch(&m, "vadd_f32_contig", cfg, &params).unwrap();
    let dt = t.elapsed().as_secs_f64();
    let c = bytes::to_f32(&dev.read(pc));
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i]);
    }
    println!(
        "vadd {n} elements, race checks on: {} instructions in {dt:.3} s = {:.1} M instructions/s",
        r.instructions,
        r.instructions as f64 / dt / 1e6
    );
    if !cfg!(debug_assertions) {
        assert!(dt < 20.0, "1M-element vector add took {dt} s");
    }
}

#[test]
fn matmul_f16_256_throughput() {
    let (m, n, k) = if cfg!(debug_assertions) {
        (128usize, 128usize, 64usize)
    } else {
        (256, 256, 256)
    };
    let text = nvidia_reference::ptx("matmul_f16_tma", "sm_90");
    let module = Module::parse(&text).unwrap();
    let mut dev = Device::new();
    let f16 = |x: f32| -> u16 {
        // small integers are exact in f16
        let v = x as i32;
        if v == 0 {
            0
        } else {
            let s: u16 = if v < 0 { 0x8000 } else { 0 };
            let a = v.unsigned_abs();
            let e = 31 - a.leading_zeros();
            s | (((e + 15) as u16) << 10) | (((a << (10 - e)) & 0x3ff) as u16)
        }
    };
    let a: Vec<i32> = (0..m * k).map(|i| (i % 7) as i32 - 3).collect();
    let b: Vec<i32> = (0..k * n).map(|i| (i % 5) as i32 - 2).collect();
    let pa = dev.alloc_from(&bytes::from_u16(
        &a.iter().map(|v| f16(*v as f32)).collect::<Vec<_>>(),
    ));
    let pb = dev.alloc_from(&bytes::from_u16(
        &b.iter().map(|v| f16(*v as f32)).collect::<Vec<_>>(),
    ));
    let pc = dev.alloc(4 * m * n);
    let map = |base: u64, dims: [u32; 2], stride: u64, bx: [u32; 2]| {
        Param::Bytes(
            ptx_emu::TensorMap {
                base,
                elem_size: 2,
                dims: dims.to_vec(),
                strides: vec![2, stride],
                box_dims: bx.to_vec(),
                swizzle: 3,
            }
            .encode(),
        )
    };
    let mut params = vec![];
    for (p, r, c) in [(pa, m, k), (pb, k, n), (pc, m, n)] {
        params.extend([
            Param::U64(p.addr()),
            Param::U32(r as u32),
            Param::U32(c as u32),
            Param::U32(c as u32),
            Param::U32(1),
        ]);
    }
    params.push(map(
        pa.addr(),
        [k as u32, m as u32],
        2 * k as u64,
        [64, 128],
    ));
    params.push(map(pb.addr(), [n as u32, k as u32], 2 * n as u64, [64, 64]));
    let cfg = LaunchConfig {
        grid: (m.div_ceil(128) as u32, n.div_ceil(128) as u32, 1),
        block: (256, 1, 1),
        cluster: (1, 1, 1),
        dynamic_smem: 0,
    };
    let t = std::time::Instant::now();
    let r = dev.launch(&module, "matmul_f16_tma", cfg, &params).unwrap();
    let dt = t.elapsed().as_secs_f64();
    let c = bytes::to_f32(&dev.read(pc));
    for i in 0..m {
        for j in 0..n {
            let w: i32 = (0..k).map(|kk| a[i * k + kk] * b[kk * n + j]).sum();
            assert_eq!(c[i * n + j], w as f32, "c[{i},{j}]");
        }
    }
    println!(
        "matmul f16 {m}x{n}x{k}: {} instructions in {dt:.3} s = {:.1} M instructions/s",
        r.instructions,
        r.instructions as f64 / dt / 1e6
    );
    if !cfg!(debug_assertions) {
        assert!(dt < 20.0, "256^3 f16 matmul took {dt} s");
    }
}
