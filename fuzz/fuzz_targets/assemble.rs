//! Fuzz target: the PTX of a bytecode the lowering accepts must assemble.
//! Every input that lowers is compiled to a cubin by the library, NVIDIA's
//! ptxas included, for one in `TILEIRAS_FUZZ_SAMPLE` of them (default 8,
//! chosen by a hash of the input so that a crash reproduces); ptxas
//! rejecting our PTX (status 5) is a failure. ptxas is found as the
//! library finds it: `CUDA_ROOT`, else `.tools/cuda` of the checkout.
#![no_main]
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tileiras::options::{Gpu, Options, OutputKind};
use tileiras::Status;

/// The CUDA root holding ptxas; panics when there is none, so that a run
/// without ptxas fails instead of passing unchecked.
fn cuda_root() -> &'static PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let here = std::env::current_dir().unwrap_or_default();
        let candidates = std::env::var_os("CUDA_ROOT")
            .map(PathBuf::from)
            .into_iter()
            .chain([here.join(".tools/cuda"), here.join("../.tools/cuda")]);
        for root in candidates {
            if root.join("bin/ptxas").is_file() {
                return root;
            }
        }
        panic!("no ptxas: set CUDA_ROOT or run scripts/setup.sh");
    })
}

fn sample() -> u64 {
    static N: OnceLock<u64> = OnceLock::new();
    *N.get_or_init(|| {
        std::env::var("TILEIRAS_FUZZ_SAMPLE")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&n| n > 0)
            .unwrap_or(8)
    })
}

fuzz_target!(|data: &[u8]| {
    let root = cuda_root();
    let Ok(m) = tileiras::bytecode::read(data) else {
        return;
    };
    if tileiras::verify::verify(&m).is_err() {
        return;
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    data.hash(&mut h);
    let picked = h.finish() % sample() == 0;
    for gpu in [Gpu::Sm80, Gpu::Sm90, Gpu::Sm120] {
        let options = Options {
            gpu,
            output: OutputKind::Cubin,
            cuda_root: Some(root.clone()),
            ..Default::default()
        };
        if tileiras::lower::lower(&m, &options).is_err() || !picked {
            continue;
        }
        let mut log = String::new();
        let result = tileiras::compile(data, &options, &mut |d| {
            log.push_str(&d.to_string());
            log.push('\n');
        });
        if let Err(e) = result {
            assert!(
                e.status() != Status::CompileFailed,
                "{gpu:?}: status 5 for a program the lowering accepted:\n{log}"
            );
        }
    }
});
