//! Compile time: for every corpus kernel the lowering supports
//! (`tests/data/lower/supported.txt`), the median time and peak heap of our
//! own stages (read, verify, lower to PTX text) in process, and the median
//! wall time of the whole `tileiras` run (bytecode to cubin, ptxas included)
//! for this compiler and for NVIDIA's tileiras on the same file, sm_90 (the
//! two take turns after a warm-up run each).
//!
//! Run with `cargo bench --bench compile [-- --runs N] [-- --stages]
//! [-- KERNEL...]` (`--stages`: our stages only, no end-to-end runs);
//! NVIDIA's tools come from `$CUDA_ROOT` or `.tools/cuda`.
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tileiras::options::{Gpu, Options, OutputKind};

/// Counts live and peak heap bytes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator and only adds bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn corpus() -> PathBuf {
    repo().join("tests/data/corpus")
}

fn primary(kernel: &str) -> PathBuf {
    let dir = corpus().join(kernel);
    let v13_3 = dir.join(format!("{kernel}.v13_3.tileir"));
    if v13_3.is_file() {
        v13_3
    } else {
        dir.join(format!("{kernel}.v13_4.tileir"))
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The wall time of one run of `program` on `input` (with `CUDA_ROOT`
/// set to `cuda`, where our tileiras finds ptxas), or `None` (with the
/// reason on stderr) if it fails.
fn run_once(program: &Path, cuda: &Path, input: &Path, out: &Path) -> Option<Duration> {
    let t = Instant::now();
    let status = Command::new(program)
        .env("CUDA_ROOT", cuda)
        .arg("--gpu-name=sm_90")
        .arg(input)
        .arg("-o")
        .arg(out)
        .output()
        .ok()?;
    if !status.status.success() {
        let err = String::from_utf8_lossy(&status.stderr);
        eprintln!(
            "{}: {}",
            program.display(),
            err.lines().next().unwrap_or("")
        );
        return None;
    }
    Some(t.elapsed())
}

/// The median wall times of `ours` and `theirs` on `input`: one warm-up
/// run each, then `runs` runs of each taken in turn, so that both see the
/// same machine load and file cache.
fn walls(
    ours: &Path,
    theirs: &Path,
    cuda: &Path,
    input: &Path,
    out: &Path,
    runs: usize,
) -> (Option<Duration>, Option<Duration>) {
    let (mut a, mut b) = (Some(Vec::new()), Some(Vec::new()));
    let _ = run_once(ours, cuda, input, out);
    let _ = run_once(theirs, cuda, input, out);
    for _ in 0..runs {
        for (program, times) in [(ours, &mut a), (theirs, &mut b)] {
            if let Some(v) = times.as_mut() {
                match run_once(program, cuda, input, out) {
                    Some(t) => v.push(t),
                    None => *times = None,
                }
            }
        }
    }
    (a.map(median), b.map(median))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mut runs = 5;
    let mut stages_only = false;
    let mut only = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--runs" {
            runs = it.next().and_then(|n| n.parse().ok()).expect("--runs N");
        } else if a == "--stages" {
            stages_only = true;
        } else {
            only.push(a.clone());
        }
    }
    let cuda = std::env::var_os("CUDA_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".tools/cuda"));
    let theirs = cuda.join("bin/tileiras");
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_tileiras"));
    let supported = std::fs::read_to_string(repo().join("tests/data/lower/supported.txt"))
        .expect("supported.txt");
    let kernels: Vec<&str> = supported
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter(|k| only.is_empty() || only.iter().any(|o| o == k))
        .collect();
    let options = Options {
        gpu: Gpu::Sm90,
        output: OutputKind::Ptx,
        ..Options::default()
    };
    let out_dir =
        std::env::temp_dir().join(format!("tileiras-bench-compile-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).expect("scratch dir");
    let out = out_dir.join("k.cubin");
    println!(
        "{:<28} {:>10} {:>10} {:>12} {:>12} {:>7}",
        "kernel", "stages ms", "peak KiB", "ours e2e ms", "nvidia ms", "ratio"
    );
    let (mut stage_all, mut ratio_all) = (Vec::new(), Vec::new());
    for k in kernels {
        let input = primary(k);
        let bytes = std::fs::read(&input).expect("read kernel");
        let mut stages = Vec::new();
        let mut peak = 0;
        for _ in 0..(runs * 4).max(20) {
            PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
            let base = LIVE.load(Ordering::Relaxed);
            let t = Instant::now();
            let m = tileiras::bytecode::read(&bytes).expect("reads");
            tileiras::verify::verify(&m).expect("verifies");
            let ptx = tileiras::lower::lower(&m, &options).expect("lowers");
            stages.push(t.elapsed());
            std::hint::black_box(ptx);
            peak = peak.max(PEAK.load(Ordering::Relaxed) - base);
        }
        let stage = median(stages);
        let (a, b) = if stages_only {
            (None, None)
        } else {
            walls(&ours, &theirs, &cuda, &input, &out, runs)
        };
        let ratio = match (a, b) {
            (Some(a), Some(b)) => a.as_secs_f64() / b.as_secs_f64(),
            _ => f64::NAN,
        };
        println!(
            "{:<28} {:>10.3} {:>10} {:>12.1} {:>12.1} {:>7.2}",
            k,
            ms(stage),
            peak / 1024,
            a.map_or(f64::NAN, ms),
            b.map_or(f64::NAN, ms),
            ratio
        );
        stage_all.push(stage);
        if ratio.is_finite() {
            ratio_all.push(Duration::from_secs_f64(ratio));
        }
    }
    let _ = std::fs::remove_dir_all(&out_dir);
    if !stage_all.is_empty() {
        println!(
            "median over {} kernels: our stages {:.3} ms",
            stage_all.len(),
            ms(median(stage_all))
        );
    }
    if !ratio_all.is_empty() {
        println!(
            "median end-to-end ratio ours/NVIDIA over {} kernels: {:.2}",
            ratio_all.len(),
            median(ratio_all).as_secs_f64()
        );
    }
}
