//! Throughput check: a 1M-element vector add through NVIDIA's reference PTX.
//! Prints the emulator's instructions per second (run with `--nocapture`).

use ptx_emu::{bytes, Device, LaunchConfig, Module, Param};

fn corpus_file(rel: &str) -> std::path::PathBuf {
    let mut d = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let direct = d.join("../../shared/corpus").join(rel);
    if direct.exists() {
        return direct;
    }
    while d.pop() {
        let c = d.join("shared/corpus").join(rel);
        if c.exists() {
            return c;
        }
    }
    direct
}

#[test]
fn vadd_1m_throughput() {
    let n: usize = if cfg!(debug_assertions) {
        1 << 16
    } else {
        1 << 20
    };
    let text = std::fs::read_to_string(corpus_file("vadd_f32_contig/ref.sm_90.ptx")).unwrap();
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
    let t = std::time::Instant::now();
    let r = dev
        .launch(
            &m,
            "vadd_f32_contig",
            LaunchConfig::grid1d(n.div_ceil(1024) as u32, 128),
            &params,
        )
        .unwrap();
    let dt = t.elapsed().as_secs_f64();
    let c = bytes::to_f32(&dev.read(pc));
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i]);
    }
    println!(
        "vadd {n} elements: {} instructions in {dt:.3} s = {:.1} M instructions/s",
        r.instructions,
        r.instructions as f64 / dt / 1e6
    );
    if !cfg!(debug_assertions) {
        assert!(dt < 20.0, "1M-element vector add took {dt} s");
    }
}
