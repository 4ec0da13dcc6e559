//! Helpers shared by the integration tests: the repository, the corpus,
//! NVIDIA's tools, fake tools and scratch directories.
#![allow(dead_code)]
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

pub mod capi;
pub mod launch;
pub mod mma;
pub mod nvidia_reference;
pub mod our_maps;
pub mod scaled;

/// `n` deterministic xorshift values from `seed`.
pub fn xorshift(seed: u64, n: usize) -> Vec<u64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        })
        .collect()
}

/// `n` f32 test inputs from `seed`: every third one raw random bits, the
/// others a random sign and mantissa with a biased exponent in
/// `exp_lo .. exp_lo + exp_span`.
pub fn random_f32s(seed: u64, n: usize, exp_lo: u32, exp_span: u32) -> Vec<f32> {
    xorshift(seed, n)
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let bits = v as u32;
            match i % 3 {
                0 => f32::from_bits(bits),
                _ => f32::from_bits(
                    bits & 0x807f_ffff | ((exp_lo + (v >> 40) as u32 % exp_span) << 23),
                ),
            }
        })
        .collect()
}

/// Random f16 and bf16 bit patterns (from `seed`) appended to `h` and `b`
/// until both are `len` long (`h` and `b` are as long as each other).
pub fn extend_halves(h: &mut Vec<u16>, b: &mut Vec<u16>, len: usize, seed: u64) {
    for v in xorshift(seed, len - h.len()) {
        h.push(v as u16);
        b.push((v >> 16) as u16);
    }
}

/// `x` as f64s, two in three nudged up or down by less than `2^-30` of
/// their magnitude (between f32 neighbours, to test double rounding).
pub fn nudged_f64s(x: &[f32], seed: u64) -> Vec<f64> {
    x.iter()
        .zip(xorshift(seed, x.len()))
        .map(|(&v, r)| {
            let v = f64::from(v);
            let nudge = v.abs() * 2f64.powi(-30) * (r % 1000) as f64 / 1000.0;
            match r % 3 {
                0 => v,
                1 => v + nudge,
                _ => v - nudge,
            }
        })
        .collect()
}

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The CUDA root: `CUDA_ROOT`, else `<repo>/.tools/cuda`. Panics (the test
/// fails, never skips) when ptxas or nvdisasm is missing.
pub fn cuda_root() -> PathBuf {
    let root = std::env::var_os("CUDA_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/cuda"));
    for tool in ["ptxas", "nvdisasm"] {
        let p = root.join("bin").join(tool);
        assert!(
            p.is_file(),
            "{} is missing: run scripts/setup.sh or set CUDA_ROOT",
            p.display()
        );
    }
    root
}

/// The PTX of the ops kernel `name` (`tests/data/lower/ops`) for `gpu`,
/// after checking that the verifier accepts the module and ptxas accepts
/// the PTX for `arch`.
pub fn ops_ptx(name: &str, gpu: tileiras::options::Gpu, arch: &str) -> String {
    let options = tileiras::options::Options {
        gpu,
        ..Default::default()
    };
    ops_ptx_with(name, &options, arch)
}

/// [`ops_ptx`] under `options`.
pub fn ops_ptx_with(name: &str, options: &tileiras::options::Options, arch: &str) -> String {
    let path = repo().join(format!("tests/data/lower/ops/{name}.tileir"));
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let m = tileiras::bytecode::read(&data).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    if let Err(e) = tileiras::verify::verify(&m) {
        panic!("{name} is not valid TileIR: {e:?}");
    }
    let text = tileiras::lower::lower(&m, options).unwrap_or_else(|e| panic!("{name}: {e}"));
    // With the extended shared memory NVIDIA's tileiras gives ptxas.
    let flags = [
        "-arch",
        arch,
        "--opt-level",
        "3",
        "--enable-extended-smem=true",
    ];
    assemble(&text, &flags);
    text
}

/// Assembles `ptx` with the real ptxas and `args` (`-arch` and flags);
/// panics with ptxas' log unless it succeeds. Returns the cubin and the log.
pub fn assemble(ptx: &str, args: &[&str]) -> (Vec<u8>, String) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (src, cubin) = (tmp.path().join("k.ptx"), tmp.path().join("k.cubin"));
    std::fs::write(&src, ptx).expect("write ptx");
    let out = std::process::Command::new(cuda_root().join("bin/ptxas"))
        .args(args)
        .arg(&src)
        .arg("-o")
        .arg(&cubin)
        .output()
        .expect("ptxas runs");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "ptxas {args:?}: {log}\n{ptx}");
    (std::fs::read(&cubin).expect("cubin"), log)
}

/// Our PTX for the bytecode at `path` (relative to the repository) on
/// `gpu`, and the log of ptxas assembling it with `-v` at `--opt-level 3`
/// and extended shared memory (the flags NVIDIA's tileiras gives it).
pub fn compile_verbose(path: &str, gpu: tileiras::options::Gpu) -> (String, String) {
    compile_verbose_with(
        path,
        &tileiras::options::Options {
            gpu,
            ..Default::default()
        },
    )
}

/// [`compile_verbose`] under `options`.
pub fn compile_verbose_with(path: &str, options: &tileiras::options::Options) -> (String, String) {
    let gpu = options.gpu;
    let file = repo().join(path);
    let data = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let m = tileiras::bytecode::read(&data).unwrap_or_else(|e| panic!("{path}: {e}"));
    let text = tileiras::lower::lower(&m, options).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (_, log) = assemble(
        &text,
        &[
            "-arch",
            gpu.ptx_target(),
            "--opt-level",
            "3",
            "--enable-extended-smem=true",
            "-v",
        ],
    );
    (text, log)
}

/// The targets the large-tile kernels are checked on: one of each family
/// with its own register allocation (Ampere, Hopper, Blackwell, consumer
/// Blackwell).
pub const TARGETS: [tileiras::options::Gpu; 4] = [
    tileiras::options::Gpu::Sm80,
    tileiras::options::Gpu::Sm90,
    tileiras::options::Gpu::Sm100,
    tileiras::options::Gpu::Sm120,
];

/// Our PTX for the bench kernel `name` (`tests/data/differential/bench`)
/// on `gpu`, after checking that ptxas spills nothing.
pub fn spill_free_bench(name: &str, gpu: tileiras::options::Gpu) -> String {
    let path = format!("tests/data/differential/bench/{name}.tileir");
    let (ptx, log) = compile_verbose(&path, gpu);
    assert_eq!(spills(&log), (0, 0), "{name} on {gpu:?}:\n{log}");
    ptx
}

/// The spill store and load bytes a ptxas `-v` log reports.
pub fn spills(log: &str) -> (u64, u64) {
    let num = |what: &str| -> u64 {
        log.split(',')
            .find(|p| p.contains(what))
            .and_then(|p| p.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no '{what}' in ptxas' log:\n{log}"))
    };
    (num("bytes spill stores"), num("bytes spill loads"))
}

/// The real tools.
pub fn toolkit() -> tileiras::toolchain::Toolkit {
    let root = cuda_root();
    tileiras::toolchain::Toolkit::from_paths(root.join("bin/ptxas"), root.join("bin/nvdisasm"))
}

/// The corpus folder, `tests/data/corpus`: one folder a kernel, with its
/// bytecode and `meta.json`.
pub fn corpus() -> PathBuf {
    nvidia_reference::corpus()
}

/// The PTX NVIDIA's tileiras writes for a corpus kernel (made at run time
/// and cached, see [`nvidia_reference`]).
pub fn corpus_ptx(kernel: &str, sm: &str) -> String {
    nvidia_reference::ptx(kernel, sm)
}

/// Copies `tests/fake-tools/<script>` into a fresh folder as an executable
/// named `name`; returns the folder (kept alive) and the tool's path.
pub fn fake_tool(script: &str, name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fake-tools")
        .join(script);
    let dst = dir.path().join(name);
    std::fs::copy(&src, &dst).unwrap();
    std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, dst)
}

/// Whether process `pid` still exists (a zombie counts).
pub fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Whether process `pid` is dead: gone, or a zombie waiting for whoever
/// inherited it to reap it.
pub fn process_dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rfind(')')
            .is_some_and(|i| stat[i + 1..].trim_start().starts_with(['Z', 'X'])),
    }
}

/// Waits up to `limit` for `done`; whether it came true.
pub fn wait_for(limit: std::time::Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    done()
}

/// Waits up to a minute for a fake tool to write its pid into `file`
/// (a whole line), and returns it.
pub fn wait_for_pid(file: &Path) -> u32 {
    assert!(
        wait_for(std::time::Duration::from_secs(60), || {
            std::fs::read_to_string(file).is_ok_and(|s| s.ends_with('\n'))
        }),
        "{} never appeared",
        file.display()
    );
    read_pid(file)
}

/// Reads a pid a fake tool wrote into `file`.
pub fn read_pid(file: &Path) -> u32 {
    std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .trim()
        .parse()
        .unwrap()
}

/// The entries of a folder.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
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

/// The bytes of the entry's shared scratch array in `ptx` (0 when it
/// declares none).
pub fn shared_bytes(ptx: &str) -> i64 {
    let Some(at) = ptx.find("__tile_smem[") else {
        return 0;
    };
    let at = at + "__tile_smem[".len();
    let len = ptx[at..].find(']').expect("array size");
    ptx[at..at + len].parse().expect("a number")
}
