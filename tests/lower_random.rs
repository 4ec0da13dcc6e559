//! Differential test of the lowering on random TileIR programs.
//!
//! `tests/data/lower/random/` holds random cuTile kernels (TileIR bytecode,
//! `pNNN.tileirbc`) and `programs.json`, which spells out each program's op
//! DAG (ops with exact semantics: arithmetic, min/max, integer division,
//! bitwise ops and shifts, comparisons and select, casts, sqrt, exp,
//! floor/ceil, iota, concatenation, reductions, broadcasts, transposes,
//! reshapes, loops with loop-carried values, some loading a tile per
//! iteration, a runtime if/else and a scalar parameter) over 1-D or 2-D
//! tiles, its ragged array shape, array layout (generic strided or
//! contiguous, i32 or i64 shapes and strides) and grid; `gen.py` there lists
//! the ops' semantics.
//!
//! For every program this test lowers the bytecode for sm_90 and sm_80
//! (every third program also for sm_100, every second also without
//! optimizations), runs the PTX in `ptx-emu` on deterministic random inputs
//! (NaN, infinities and signed zeros included) and compares each stored
//! element with an independent CPU evaluation of the DAG
//! (`lower_random/eval.rs`): bit for bit, except after float reductions,
//! which the device may reassociate, and exp (a propagated error bound, see
//! `eval.rs`). It also checks that the stores leave the gaps of a strided
//! output alone.
//!
//! Regenerate the programs with
//! `.tools/venv/bin/python tests/data/lower/random/gen.py`; for a larger
//! search write more elsewhere (`gen.py --count 1000 --seed 7 --out DIR`) and
//! run this test with `LOWER_RANDOM_DIR=DIR`.

#[path = "lower_random/eval.rs"]
mod eval;
#[path = "lower_random/num.rs"]
mod num;

use eval::{Array, El};
use num::Dt;
use ptx_emu::{Device, Module, Param};
use serde_json::Value;
use tileiras::options::Gpu;

/// The programs: `$LOWER_RANDOM_DIR`, else `tests/data/lower/random`.
fn data() -> String {
    std::env::var("LOWER_RANDOM_DIR")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/lower/random").into())
}

/// Byte pattern of output memory the kernel must not write.
const UNWRITTEN: u8 = 0xa5;

/// Deterministic xorshift generator.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random element of `dt`: small floats, signed zeros, NaN and
/// infinities; integers of every magnitude.
fn random_el(rng: &mut Rng, dt: Dt) -> El {
    if dt.is_float() {
        let f = match rng.below(64) {
            0..=3 => 0.0,
            4..=7 => -0.0,
            8 => f64::NAN,
            9 => f64::INFINITY,
            10 => f64::NEG_INFINITY,
            11..=18 => (rng.below(9) as f64) - 4.0,
            _ => (rng.below(1 << 20) as f64 / (1 << 17) as f64) - 4.0,
        };
        return El {
            f: dt.round(f),
            i: 0,
            e: 0.0,
        };
    }
    let i = match rng.below(4) {
        0 => rng.next() as i64,
        1 => (rng.next() as i64) >> 24,
        _ => rng.below(201) as i64 - 100,
    };
    El {
        f: 0.0,
        i: dt.wrap(i),
        e: 0.0,
    }
}

/// Where a [rows, cols] array's elements lie: rows `ld` apart (2-D) or
/// elements `step` apart (1-D), so that some arrays have gaps; contiguous
/// arrays have unit steps and rows a multiple of 16 bytes apart.
struct Layout {
    rank: usize,
    rows: usize,
    cols: usize,
    ld: usize,
    step: usize,
}

impl Layout {
    fn new(prog: &Value, rows: usize, cols: usize, gap: usize, dt: Dt) -> Layout {
        let rank = prog["rank"].as_u64().unwrap() as usize;
        let (ld, step) = match (rank, prog["contiguous"].as_bool().unwrap()) {
            (1, false) => (0, 1 + gap),
            (1, true) => (0, 1),
            (_, false) => (cols + gap, 1),
            (_, true) => ((cols + gap).next_multiple_of(16 / dt.size()), 1),
        };
        Layout {
            rank,
            rows,
            cols,
            ld,
            step,
        }
    }
    /// Elements in the allocation.
    fn len(&self) -> usize {
        (self.rows - 1) * self.ld + (self.cols - 1) * self.step + 1
    }
    fn at(&self, r: usize, c: usize) -> usize {
        r * self.ld + c * self.step
    }
    /// The array parameters: base address, shape, strides (in elements).
    fn params(&self, addr: u64, out: &mut Vec<Param>) {
        out.push(Param::U64(addr));
        let dims: &[usize] = if self.rank == 1 {
            &[self.cols, self.step]
        } else {
            &[self.rows, self.cols, self.ld, self.step]
        };
        out.extend(dims.iter().map(|x| Param::U32(*x as u32)));
    }
}

/// Element-wise comparison outcome counts.
#[derive(Default)]
struct Counts {
    exact: usize,
    bounded: usize,
    unchecked: usize,
}

/// Compares one element; `Err` describes a mismatch.
fn compare(dt: Dt, got: (f64, i64), want: El, counts: &mut Counts) -> Result<(), String> {
    if want.e.is_infinite() {
        counts.unchecked += 1;
        return Ok(());
    }
    let ok = if !dt.is_float() {
        got.1 == want.i
    } else if want.e == 0.0 {
        (got.0.is_nan() && want.f.is_nan()) || got.0.to_bits() == want.f.to_bits()
    } else {
        (got.0.is_nan() && want.f.is_nan()) || got.0 == want.f || (got.0 - want.f).abs() <= want.e
    };
    if want.e == 0.0 {
        counts.exact += 1;
    } else {
        counts.bounded += 1;
    }
    if ok {
        return Ok(());
    }
    Err(if dt.is_float() {
        format!(
            "expected {:e} (bound {:e}), got {:e}",
            want.f, want.e, got.0
        )
    } else {
        format!("expected {}, got {}", want.i, got.1)
    })
}

/// Lowers, runs and checks one program for a target and optimization
/// level; returns the mismatches.
fn check(prog: &Value, target: (Gpu, u8), counts: &mut Counts) -> Vec<String> {
    let opt_level = target.1;
    let gpu = format!("{} -O{opt_level}", target.0.name());
    let name = prog["name"].as_str().unwrap();
    let bytes = std::fs::read(format!("{}/{name}.tileirbc", data())).unwrap();
    let module = tileiras::bytecode::read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let options = tileiras::options::Options {
        gpu: target.0,
        opt_level,
        ..Default::default()
    };
    let ptx = match tileiras::lower::lower(&module, &options) {
        Ok(p) => p,
        Err(e) => return vec![format!("{name} ({gpu}): lowering failed: {e}")],
    };
    let m = Module::parse(&ptx).unwrap_or_else(|e| panic!("{name}: {e}\n{ptx}"));

    let u = |v: &Value| v.as_u64().unwrap() as usize;
    let (rows, cols) = (u(&prog["shape"][0]), u(&prog["shape"][1]));
    let tile = (u(&prog["tile"][0]), u(&prog["tile"][1]));
    let grid = [0, 1, 2].map(|k| u(&prog["grid"][k]) as u32);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (name.len() as u64 * 7919 + bytes.len() as u64));
    let mut dev = Device::new();
    let mut params = Vec::new();
    let mut inputs = Vec::new();
    for (k, d) in prog["inputs"].as_array().unwrap().iter().enumerate() {
        let dt = Dt::parse(d.as_str().unwrap());
        let lay = Layout::new(prog, rows, cols, k % 3, dt);
        let v: Vec<El> = (0..rows * cols).map(|_| random_el(&mut rng, dt)).collect();
        let mut all: Vec<El> = (0..lay.len()).map(|_| random_el(&mut rng, dt)).collect();
        for r in 0..rows {
            for c in 0..cols {
                all[lay.at(r, c)] = v[r * cols + c];
            }
        }
        let mut mem = Vec::new();
        for x in all {
            dt.encode(x.f, x.i, &mut mem);
        }
        lay.params(dev.alloc_from(&mem).addr(), &mut params);
        inputs.push(Array { dt, rows, cols, v });
    }
    let out_dt = Dt::parse(prog["output"].as_str().unwrap());
    let lay = Layout::new(prog, rows, cols, 1, out_dt);
    let out = dev.alloc_from(&vec![UNWRITTEN; lay.len() * out_dt.size()]);
    lay.params(out.addr(), &mut params);
    let trips = prog["trips"].as_i64();
    if let Some(n) = trips {
        params.push(Param::U32(n as u32));
    }
    if let Some(dt) = prog
        .get("scalar_dtype")
        .and_then(|d| d.as_str())
        .map(Dt::parse)
    {
        let x = &prog["scalar"];
        let mut b = Vec::new();
        match dt.is_float() {
            true => dt.encode(dt.round(x.as_f64().unwrap()), 0, &mut b),
            false => dt.encode(0.0, dt.wrap(x.as_i64().unwrap()), &mut b),
        }
        params.push(Param::Bytes(b));
    }
    // Shapes and strides take the width the entry declares (i64 index types).
    let declared = &m.kernel(name).unwrap().params;
    let params: Vec<Param> = params
        .iter()
        .zip(declared)
        .map(|(p, d)| match (p, d.size) {
            (Param::U32(v), 8) => Param::U64(*v as u64),
            (p, _) => p.clone(),
        })
        .collect();
    if let Err(e) = dev.launch_grid(&m, name, (grid[0], grid[1], grid[2]), &params) {
        return vec![format!("{name} ({gpu}): emulator: {e}")];
    }
    let mem = dev.read(out);

    let mut errors = Vec::new();
    let mut stored = vec![false; lay.len()];
    for bm in 0..rows.div_ceil(tile.0) {
        for bn in 0..cols.div_ceil(tile.1) {
            let want = eval::block(prog, &inputs, bm, bn, trips.unwrap_or(0));
            for r in 0..tile.0 {
                for c in 0..tile.1 {
                    let (gr, gc) = (bm * tile.0 + r, bn * tile.1 + c);
                    if gr >= rows || gc >= cols {
                        continue;
                    }
                    stored[lay.at(gr, gc)] = true;
                    let got = out_dt.decode(&mem, lay.at(gr, gc));
                    if let Err(e) = compare(out_dt, got, want.v[r * tile.1 + c], counts) {
                        errors.push(format!("{name} ({gpu}) element [{gr}, {gc}]: {e}"));
                    }
                }
            }
        }
    }
    let size = out_dt.size();
    for (k, _) in stored.iter().enumerate().filter(|(_, s)| !**s) {
        if mem[k * size..(k + 1) * size]
            .iter()
            .any(|b| *b != UNWRITTEN)
        {
            errors.push(format!(
                "{name} ({gpu}): wrote element {k} of the output's gaps"
            ));
        }
    }
    errors
}

/// The program's nodes, one a line, for failure reports.
fn listing(prog: &Value) -> String {
    let mut out = String::new();
    for (k, n) in prog["nodes"].as_array().unwrap().iter().enumerate() {
        out.push_str(&format!("    v{k} = {n}\n"));
    }
    out
}

#[test]
fn random_programs_match_cpu_evaluation() {
    let text = std::fs::read_to_string(format!("{}/programs.json", data())).unwrap();
    let programs: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert!(programs.len() >= 40, "{} programs", programs.len());
    let mut counts = Counts::default();
    let mut failed = Vec::new();
    // runs (program, target) with most of their elements checked
    let (mut runs, mut mostly_checked) = (0, 0);
    for (k, prog) in programs.iter().enumerate() {
        let mut gpus = vec![(Gpu::Sm90, 3), (Gpu::Sm80, 3)];
        if k % 3 == 0 {
            gpus.push((Gpu::Sm100, 3));
        }
        if k % 2 == 0 {
            gpus.push((Gpu::Sm90, 0));
        }
        for gpu in gpus {
            let before = counts.unchecked;
            let total = counts.exact + counts.bounded + counts.unchecked;
            let errors = check(prog, gpu, &mut counts);
            let unchecked = counts.unchecked - before;
            let all = counts.exact + counts.bounded + counts.unchecked - total;
            runs += 1;
            mostly_checked += usize::from(unchecked * 2 < all);
            if let Some(first) = errors.first() {
                failed.push(format!(
                    "{first} ({} mismatches)\n{}",
                    errors.len(),
                    listing(prog)
                ));
            }
        }
    }
    eprintln!(
        "{} programs, {runs} runs ({mostly_checked} mostly checked): {} elements bit-exact, \
         {} within a bound, {} unchecked",
        programs.len(),
        counts.exact,
        counts.bounded,
        counts.unchecked
    );
    assert!(
        failed.is_empty(),
        "{} failures:\n{}",
        failed.len(),
        failed.join("\n")
    );
    assert!(
        mostly_checked * 10 >= runs * 9,
        "only {mostly_checked} of {runs} runs have most of their elements checked"
    );
}
