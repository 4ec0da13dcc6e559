//! Helpers shared by the integration tests.
#![allow(dead_code)]
use std::path::PathBuf;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The reference corpus beside the repository.
pub fn corpus() -> PathBuf {
    repo().join("../shared/corpus")
}

/// The CUDA root with NVIDIA's tools: `$CUDA_ROOT`, else what
/// `scripts/setup.sh` installed. Panics (failing the test) when the tools
/// are missing: these tests never skip.
pub fn cuda_root() -> PathBuf {
    let root = std::env::var_os("CUDA_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".tools/cuda"));
    assert!(
        root.join("bin/ptxas").is_file(),
        "NVIDIA tools not found under {} (run scripts/setup.sh or set CUDA_ROOT)",
        root.display()
    );
    root
}

/// A scratch directory removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A new empty directory under the target directory.
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("tileiras-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch(dir)
    }

    /// A path inside the directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
