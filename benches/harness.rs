//! Overhead of the subprocess harness: the median wall time of ptxas on a
//! small corpus PTX run directly with `std::process::Command` and through
//! `tileiras::toolchain` (harness alone, and the full ptxas adapter), runs
//! interleaved in rotating order so all see the same machine load. Also `/bin/true`, where
//! the spawn cost is all there is.
//!
//! `cargo bench --bench harness` (set `BENCH_RUNS` for more or fewer runs).
#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use tileiras::env::Gates;
use tileiras::toolchain::process::Command as Harness;
use tileiras::toolchain::ptxas::{self, PtxasJob};
use tileiras::Options;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(41);
    let tk = common::toolkit();
    let ptx = common::corpus_ptx("arith_f32", "sm_90");
    let job = PtxasJob::new(ptx.clone(), &Options::default(), &Gates::default());
    let argv = job.argv(None, None);

    let (mut direct, mut harness, mut adapter) = (Vec::new(), Vec::new(), Vec::new());
    let (mut t_direct, mut t_harness) = (Vec::new(), Vec::new());
    let mut size = 0;
    for i in 0..runs {
        // Rotate the order so no variant always follows another.
        for k in 0..3 {
            match (i + k) % 3 {
                0 => {
                    let t = Instant::now();
                    let out = std::process::Command::new(&tk.ptxas)
                        .args(&argv)
                        .stdin(std::process::Stdio::null())
                        .output()
                        .unwrap();
                    direct.push(t.elapsed());
                    assert!(out.status.success());
                    size = out.stdout.len();
                }
                1 => {
                    let t = Instant::now();
                    let out = Harness::new(&tk.ptxas).args(&argv).run().unwrap();
                    harness.push(t.elapsed());
                    assert!(out.termination.success());
                }
                _ => {
                    let t = Instant::now();
                    let out = ptxas::assemble(&tk, &job).unwrap();
                    adapter.push(t.elapsed());
                    assert!(!out.cubin.is_empty());
                }
            }
        }
        let (a, b) = if i % 2 == 0 { (0, 1) } else { (1, 0) };
        for k in [a, b] {
            let t = Instant::now();
            if k == 0 {
                std::process::Command::new("/bin/true").output().unwrap();
                t_direct.push(t.elapsed());
            } else {
                Harness::new("/bin/true").run().unwrap();
                t_harness.push(t.elapsed());
            }
        }
    }
    let (d, h, a) = (median(direct), median(harness), median(adapter));
    let (td, th) = (median(t_direct), median(t_harness));
    println!("ptxas on arith_f32 ref.sm_90.ptx ({} bytes PTX, {size} bytes cubin), {runs} runs, medians:", ptx.len());
    println!("  std::process::Command      {:>10.0} us", micros(d));
    println!(
        "  toolchain::process::Command{:>10.0} us  ({:+.0} us, {:+.2}%)",
        micros(h),
        micros(h) - micros(d),
        (micros(h) / micros(d) - 1.0) * 100.0
    );
    println!(
        "  toolchain::ptxas::assemble {:>10.0} us  ({:+.0} us, {:+.2}%)",
        micros(a),
        micros(a) - micros(d),
        (micros(a) / micros(d) - 1.0) * 100.0
    );
    println!("/bin/true, medians:");
    println!("  std::process::Command      {:>10.0} us", micros(td));
    println!(
        "  toolchain::process::Command{:>10.0} us  ({:+.0} us)",
        micros(th),
        micros(th) - micros(td)
    );
}
