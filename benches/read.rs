//! Reader throughput: reads every corpus file repeatedly and prints MB/s,
//! plus the time to read (to read and verify, and to print) the largest file.
//! Run with `cargo bench --bench read`.
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tileiras::bytecode;
use tileiras::ir::print::{print_module, PrintOptions};

fn corpus() -> PathBuf {
    if let Some(p) = std::env::var_os("TILEIRAS_CORPUS") {
        return PathBuf::from(p);
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus"))
}

fn main() {
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for d in std::fs::read_dir(corpus())
        .expect("corpus directory")
        .flatten()
    {
        if !d.path().is_dir() {
            continue;
        }
        for f in std::fs::read_dir(d.path())
            .expect("kernel directory")
            .flatten()
        {
            if f.path().extension().is_some_and(|e| e == "tileir") {
                let data = std::fs::read(f.path()).expect("read corpus file");
                files.push((f.file_name().to_string_lossy().into_owned(), data));
            }
        }
    }
    let total: usize = files.iter().map(|(_, d)| d.len()).sum();
    println!("{} files, {} bytes", files.len(), total);

    let mut rounds = 0u64;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(2) {
        for (_, d) in &files {
            let m = bytecode::read(d).expect("corpus file reads");
            std::hint::black_box(&m);
        }
        rounds += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    let mb = (total as f64 * rounds as f64) / 1e6;
    println!("read: {rounds} rounds, {:.1} MB/s", mb / secs);

    let (name, largest) = files.iter().max_by_key(|(_, d)| d.len()).expect("files");
    let n = 2000;
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(bytecode::read(largest).expect("reads"));
    }
    let per = t.elapsed() / n;
    let t = Instant::now();
    for _ in 0..n {
        let m = bytecode::read(largest).expect("reads");
        std::hint::black_box(tileiras::verify::verify(&m)).expect("verifies");
    }
    let per_verified = t.elapsed() / n;
    let m = bytecode::read(largest).expect("reads");
    let t = Instant::now();
    for _ in 0..200 {
        std::hint::black_box(print_module(&m, &PrintOptions { debug_info: true }));
    }
    let per_print = t.elapsed() / 200;
    println!(
        "largest file {name} ({} bytes): read {:?}, read + verify {:?}, print -g {:?}",
        largest.len(),
        per,
        per_verified,
        per_print
    );
}
