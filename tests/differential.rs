//! Differential oracle: NVIDIA's PTX against ours, both run in `ptx-emu`
//! on identical inputs.
//!
//! Every case (`tests/data/differential/<source>/NAME.tileir` + `NAME.json`,
//! format in that folder's README; the random programs of
//! `tests/data/lower/random` converted to cases here) is compiled by
//! NVIDIA's `tileiras` (the PTX and host object captured at its ptxas call,
//! `differential/nvidia.rs`) and by this compiler for sm_80, sm_90, sm_100
//! and sm_120. Each seed fills the buffers (NaN, ±Inf, -0 among the floats)
//! and both sides run on the same memory image; then every buffer, the
//! `printf` output and any trap are compared: our PTX for each target with
//! NVIDIA's results for the same target (sm_80, sm_90, sm_100, sm_120).
//! NVIDIA's sm_100 PTX (tcgen05 and tensor memory) is also held against its
//! own sm_90 results (else sm_80, else sm_120), which checks the emulator's
//! tcgen05 independently of our compiler.
//! Where NVIDIA's entry takes tensor maps (hidden parameters), its host
//! callbacks fill them from the launch's parameters
//! (`differential/host_maps.rs`, docs/nv-host-callbacks.md) and the
//! emulator reads the hardware maps; on hosts that cannot run those
//! callbacks (not x86-64 Linux) NVIDIA's sm_80 results stand in. A case
//! whose NVIDIA PTX uses an instruction the emulator lacks is listed in
//! `NOT_RUN`. Each source's summary line gives its comparisons per NVIDIA
//! target (`NVIDIA sm_120: N`).
//! Floats compare bit for bit (any NaN equal to any NaN) unless the case
//! grants an ulp bound (a run and the comparison: `differential/runner.rs`,
//! shared with `scripts/emu-check.sh` and `tests/emu_mutation.rs`). A case may ask for our PTX compiled with swizzled
//! operand buffers too (`swizzled_too`).
//!
//! `DIFFERENTIAL_SEEDS` (default 2) sets the seeds a case runs with,
//! `DIFFERENTIAL_FILTER` keeps the cases whose name contains it,
//! `DIFFERENTIAL_DIRS` adds case folders (`:`-separated) and
//! `DIFFERENTIAL_RANDOM` names another random-program folder
//! (`scripts/differential-sweep.sh` runs the long sweep).

#[path = "differential/case.rs"]
mod case;
#[path = "differential/host_maps.rs"]
mod host_maps;
#[path = "differential/nvidia.rs"]
mod nvidia;
#[path = "common/nvidia_reference.rs"]
mod nvidia_reference;
#[path = "differential/random.rs"]
mod random;
#[path = "differential/runner.rs"]
mod runner;
#[path = "nv_host/support.rs"]
mod support;

use case::Case;
use ptx_emu::ErrorKind;
use runner::{compared, differences, run, Outcome, TENSOR_MAPS};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use tileiras::options::Gpu;

/// NVIDIA's targets and the targets of ours compared with their results.
const TARGETS: &[(&str, &[Gpu])] = &[
    ("sm_80", &[Gpu::Sm80]),
    ("sm_90", &[Gpu::Sm90]),
    ("sm_120", &[Gpu::Sm120]),
    // last: its results are also held against NVIDIA's older targets' results
    ("sm_100", &[Gpu::Sm100]),
];

/// Cases NVIDIA's side cannot run, with the reason: (case name, NVIDIA
/// target, reason). A listed case that runs fails the test.
const NOT_RUN: &[(&str, &str, &str)] = &[
    (
        "corpus/matmul_fp8_e4m3",
        "sm_80",
        "NVIDIA's tileiras refuses f8E4M3FN for sm_80",
    ),
    (
        "corpus/mma_scaled_mxfp8",
        "sm_80",
        "NVIDIA's tileiras refuses f8E4M3FN for sm_80",
    ),
    (
        "corpus/mma_scaled_mxfp8",
        "sm_90",
        "NVIDIA's tileiras refuses the block scale type f8E8M0FNU for sm_90",
    ),
    (
        "bench/batch_matmul_f8e4m3_256x256x128",
        "sm_80",
        "NVIDIA's tileiras refuses f8E4M3FN for sm_80",
    ),
    (
        "bench/matmul_f8e4m3_128x128x64",
        "sm_80",
        "NVIDIA's tileiras refuses f8E4M3FN for sm_80",
    ),
    (
        "bench/matmul_f8e4m3_128x256x64",
        "sm_80",
        "NVIDIA's tileiras refuses f8E4M3FN for sm_80",
    ),
    (
        "bench/matmul_f8e4m3_256x128x64",
        "sm_80",
        "NVIDIA's tileiras refuses f8E4M3FN for sm_80",
    ),
];

/// Known mismatches: (cases, our targets, the bug); a case name ending in
/// `*` stands for every case it starts. Every listed (case, target) must
/// mismatch with some seed (a `*` pattern: some case of it), else the test
/// fails, so an entry goes when its fix lands.
const EXPECTED_MISMATCHES: &[(&[&str], &[&str], &str)] = &[(
    &[
        "targeted/unpadded_row_sum_f32",
        "targeted_random/unpadded_sum_*",
    ],
    &["sm_80"],
    "undefined on NVIDIA's side: a sum over an unpadded view load of a ragged tile; \
     NVIDIA's sm_80 code skips the load of an out-of-bounds element and adds whatever its \
     register held from the previous tile (its sm_90 and newer code zero-fills through \
     TMA, as ours does everywhere)",
)];

/// Whether `case` is `pattern` (or starts it, for a pattern ending in `*`).
fn matches(pattern: &str, case: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => case.starts_with(prefix),
        None => pattern == case,
    }
}

/// The known bug of (case, our target), if listed.
fn expected_mismatch(case: &str, gpu: &str) -> Option<&'static str> {
    EXPECTED_MISMATCHES
        .iter()
        .find(|(cases, gpus, _)| cases.iter().any(|p| matches(p, case)) && gpus.contains(&gpu))
        .map(|e| e.2)
}

/// NVIDIA refusals that any case may meet: (a fragment of tileiras'
/// message, the reason the case does not run).
const KNOWN_REFUSALS: &[(&str, &str)] = &[(
    "rounding mode 'negative_inf' is not allowed with 'unsigned' flag",
    "cuTile 1.7.0 emits unsigned floordiv as divi unsigned rounding<negative_inf>, \
     which NVIDIA's verifier rejects",
)];

/// With `DIFFERENTIAL_DUMP` set, writes a mismatching run's inputs and both
/// outcomes' buffers there (`<case>.<seed>.<target>/{in,nvidia,ours}.<k>.bin`).
fn dump(case: &Case, seed: u64, gpu: &str, inputs: &[Vec<u8>], nv: &Outcome, ours: &Outcome) {
    let Some(root) = std::env::var_os("DIFFERENTIAL_DUMP") else {
        return;
    };
    let dir = Path::new(&root).join(format!("{}.{seed}.{gpu}", case.name.replace('/', "_")));
    std::fs::create_dir_all(&dir).unwrap();
    let ks: Vec<usize> = compared(case).iter().map(|c| c.0).collect();
    for (what, bufs) in [
        ("in", Some(inputs)),
        (
            "nvidia",
            match nv {
                Outcome::Done(b, _) => Some(&b[..]),
                Outcome::Failed(..) => None,
            },
        ),
        (
            "ours",
            match ours {
                Outcome::Done(b, _) => Some(&b[..]),
                Outcome::Failed(..) => None,
            },
        ),
    ] {
        for (k, b) in ks.iter().zip(bufs.unwrap_or(&[])) {
            std::fs::write(dir.join(format!("{what}.{k}.bin")), b).unwrap();
        }
    }
}

/// Result counts of one source.
#[derive(Default, Clone)]
struct Tally {
    cases: usize,
    /// (case, seed, target pair) comparisons that matched.
    matched: usize,
    expected_mismatches: usize,
    not_run: usize,
    /// NVIDIA target results taken from its sm_80 PTX (tensor maps).
    stand_ins: usize,
    /// Comparisons made (matched or expected), per NVIDIA target.
    per_target: BTreeMap<&'static str, usize>,
    /// NVIDIA sm_100 runs whose results equal its sm_90 (else sm_80, else
    /// sm_120) ones.
    nv_self: usize,
}

/// Everything one run of the suite found.
#[derive(Default)]
struct Report {
    tallies: BTreeMap<String, Tally>,
    /// Unexpected problems, one a line.
    failures: Vec<String>,
    /// Expected mismatches seen, and not-run cases, for the log.
    notes: Vec<String>,
    /// Entries of the two lists that were seen.
    seen_not_run: Vec<(String, String)>,
    seen_mismatch: Vec<(String, String)>,
}

fn source(case: &Case) -> String {
    case.name.split('/').next().unwrap().to_string()
}

/// Runs one case with one seed on every target pair.
fn check(case: &Case, seed: u64, report: &Mutex<Report>) {
    let inputs = case.inputs(seed);
    let module = tileiras::bytecode::read(&case.bytecode);
    // NVIDIA's sm_80 results stand in where its sm_90 or sm_120 PTX cannot
    // run here (tensor maps, on hosts that cannot run its host callbacks):
    // the program, and so the results, are the same.
    let mut sm80: Option<std::rc::Rc<Outcome>> = None;
    let mut sm90: Option<std::rc::Rc<Outcome>> = None;
    let mut sm120: Option<std::rc::Rc<Outcome>> = None;
    for (nv_gpu, ours) in TARGETS {
        let listed = NOT_RUN
            .iter()
            .find(|(n, g, _)| *n == case.name && g == nv_gpu);
        let nv = nvidia::ptx(&case.bytecode, nv_gpu).and_then(|ptx| {
            let host = match nv_host::SUPPORTED {
                true => nvidia::host_object(&case.bytecode, nv_gpu)?,
                false => None,
            };
            match run(
                &ptx,
                case,
                &inputs,
                false,
                host.as_deref().map(|h| (h, *nv_gpu)),
            )? {
                Outcome::Failed(ErrorKind::Unsupported, e) => {
                    Err(format!("the emulator cannot run NVIDIA's PTX: {e}"))
                }
                o => Ok(o),
            }
        });
        let mut stand_in = false;
        let nv = match (nv, listed) {
            (Ok(o), None) => std::rc::Rc::new(o),
            (Err(e), None) if e == TENSOR_MAPS && sm80.is_some() => {
                stand_in = true;
                let mut r = report.lock().unwrap();
                r.tallies.entry(source(case)).or_default().stand_ins += 1;
                sm80.clone().expect("checked")
            }
            (Err(e), None)
                if e == TENSOR_MAPS || KNOWN_REFUSALS.iter().any(|k| e.contains(k.0)) =>
            {
                let why = KNOWN_REFUSALS
                    .iter()
                    .find(|k| e.contains(k.0))
                    .map_or(TENSOR_MAPS, |k| k.1);
                let mut r = report.lock().unwrap();
                r.tallies.entry(source(case)).or_default().not_run += 1;
                if seed == 1 {
                    r.notes
                        .push(format!("not run: {} (NVIDIA {nv_gpu}): {why}", case.name));
                }
                continue;
            }
            (Err(_), Some((_, _, why))) => {
                let mut r = report.lock().unwrap();
                r.tallies.entry(source(case)).or_default().not_run += 1;
                r.seen_not_run.push((case.name.clone(), nv_gpu.to_string()));
                if seed == 1 {
                    r.notes
                        .push(format!("not run: {} (NVIDIA {nv_gpu}): {why}", case.name));
                }
                continue;
            }
            (Ok(_), Some(_)) => {
                report.lock().unwrap().failures.push(format!(
                    "{} (NVIDIA {nv_gpu}) runs now: remove its NOT_RUN entry",
                    case.name
                ));
                continue;
            }
            (Err(e), None) => {
                let first = e.lines().find(|l| l.contains("error")).unwrap_or(&e);
                report
                    .lock()
                    .unwrap()
                    .failures
                    .push(format!("{} (NVIDIA {nv_gpu}): {first}", case.name));
                continue;
            }
        };
        if *nv_gpu == "sm_80" {
            sm80 = Some(nv.clone());
        }
        if *nv_gpu == "sm_90" && !stand_in {
            sm90 = Some(nv.clone());
        }
        if *nv_gpu == "sm_120" && !stand_in {
            sm120 = Some(nv.clone());
        }
        // The emulator's tcgen05 judged independently: NVIDIA's sm_100
        // results against its own sm_90 (else sm_80) results.
        if *nv_gpu == "sm_100" && !stand_in {
            if let Some((older, o)) = sm90
                .as_ref()
                .map(|o| ("sm_90", o))
                .or(sm80.as_ref().map(|o| ("sm_80", o)))
                .or(sm120.as_ref().map(|o| ("sm_120", o)))
            {
                let mut r = report.lock().unwrap();
                match differences(case, o, &nv) {
                    None => r.tallies.entry(source(case)).or_default().nv_self += 1,
                    Some(d) => r.failures.push(format!(
                        "{} seed {seed}: NVIDIA's sm_100 results differ from its {older} \
                         results: {d}",
                        case.name
                    )),
                }
            }
        }
        let variants: &[bool] = if case.swizzled_too {
            &[false, true]
        } else {
            &[false]
        };
        let ours = ours
            .iter()
            .flat_map(|g| variants.iter().map(move |&s| (g, s)));
        for (gpu, swizzled) in ours {
            let pair = format!(
                "NVIDIA {nv_gpu} / ours {}{}",
                gpu.name(),
                if swizzled { " swizzled" } else { "" }
            );
            let options = tileiras::options::Options {
                gpu: *gpu,
                always_swizzle: swizzled,
                ..Default::default()
            };
            let ptx = match &module {
                Ok(m) => tileiras::lower::lower_module(m, &options)
                    .map_err(|e| format!("lowering failed: {e}")),
                Err(e) => Err(format!("reading the bytecode failed: {e}")),
            };
            // our tensor maps: written by our own host callbacks, as the
            // driver has them do at launch
            let ran = ptx.and_then(|(p, _)| {
                let text = p.to_text();
                let host = runner::our_host(&p, &options)?;
                run(
                    &text,
                    case,
                    &inputs,
                    true,
                    host.as_deref().map(|h| (h, gpu.name())),
                )
            });
            let what = match ran {
                Ok(o) => {
                    let d = differences(case, &nv, &o);
                    if d.is_some() {
                        dump(case, seed, gpu.name(), &inputs, &nv, &o);
                    }
                    d
                }
                Err(e) => Some(e),
            };
            // Against NVIDIA's sm_80 results, what is expected of our
            // sm_80 PTX there.
            let key = if stand_in { "sm_80" } else { gpu.name() };
            let expected = expected_mismatch(&case.name, key);
            let mut r = report.lock().unwrap();
            let tally = r.tallies.entry(source(case)).or_default();
            if what.is_none() || expected.is_some() {
                *tally.per_target.entry(nv_gpu).or_default() += 1;
            }
            match (what, expected) {
                (None, None) => tally.matched += 1,
                (Some(w), Some(bug)) => {
                    tally.expected_mismatches += 1;
                    r.seen_mismatch.push((case.name.clone(), key.to_string()));
                    r.notes.push(format!(
                        "expected mismatch ({bug}): {} seed {seed} ({pair}): {}",
                        case.name,
                        w.lines().next().unwrap_or_default()
                    ));
                }
                // a listed case may match with some seeds
                (None, Some(_)) => tally.matched += 1,
                (Some(w), None) => r.failures.push(format!(
                    "{} seed {seed} ({pair}): {w} [{}]",
                    case.name, case.note
                )),
            }
        }
    }
}

/// The case folders: every folder under `tests/data/differential`, then
/// `$DIFFERENTIAL_DIRS`.
fn case_dirs() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/differential");
    let mut dirs: Vec<(String, PathBuf)> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            p.is_dir()
                .then(|| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        })
        .collect();
    dirs.sort();
    if let Some(extra) = std::env::var_os("DIFFERENTIAL_DIRS") {
        for p in std::env::split_paths(&extra) {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            dirs.push((name, p));
        }
    }
    dirs
}

#[test]
fn nvidia_and_our_ptx_agree_in_the_emulator() {
    let start = std::time::Instant::now();
    let seeds: u64 = std::env::var("DIFFERENTIAL_SEEDS")
        .map(|s| s.parse().expect("DIFFERENTIAL_SEEDS: a number"))
        .unwrap_or(2);
    let filter = std::env::var("DIFFERENTIAL_FILTER").unwrap_or_default();
    let mut cases = Vec::new();
    for (name, dir) in case_dirs() {
        cases.extend(Case::load_dir(&dir, &name));
    }
    let random_dir = std::env::var("DIFFERENTIAL_RANDOM")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/lower/random").into());
    cases.extend(random::cases(Path::new(&random_dir)));
    cases.retain(|c| c.name.contains(&filter));
    let report = Mutex::new(Report::default());
    for c in &cases {
        report
            .lock()
            .unwrap()
            .tallies
            .entry(source(c))
            .or_default()
            .cases += 1;
    }
    let work: Vec<(&Case, u64)> = cases
        .iter()
        .flat_map(|c| (1..=seeds).map(move |s| (c, s)))
        .collect();
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((case, seed)) = work.get(i) else {
                    break;
                };
                let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    check(case, *seed, &report)
                }));
                if let Err(p) = caught {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    report
                        .lock()
                        .unwrap()
                        .failures
                        .push(format!("{} seed {seed}: panicked: {msg}", case.name));
                }
            });
        }
    });
    let mut r = report.into_inner().unwrap();
    // stale list entries (only when the whole suite ran)
    if filter.is_empty() {
        for (n, g, why) in NOT_RUN {
            if !r.seen_not_run.iter().any(|(a, b)| a == n && b == g) {
                r.failures.push(format!(
                    "NOT_RUN entry {n} (NVIDIA {g}, {why}) was not needed"
                ));
            }
        }
        for (cases, gpus, bug) in EXPECTED_MISMATCHES {
            for n in *cases {
                for g in *gpus {
                    let mismatched = r.seen_mismatch.iter().any(|(a, b)| matches(n, a) && b == g);
                    if !mismatched {
                        r.failures.push(format!(
                            "{n} (ours {g}) matches NVIDIA now: remove it from \
                             EXPECTED_MISMATCHES ({bug})"
                        ));
                    }
                }
            }
        }
    }
    for n in &r.notes {
        eprintln!("{n}");
    }
    let mut total = Tally::default();
    for (src, t) in &r.tallies {
        let per: Vec<String> = t
            .per_target
            .iter()
            .map(|(g, n)| format!("NVIDIA {g}: {n}"))
            .collect();
        eprintln!(
            "{src}: {} cases, {} comparisons matched, {} expected mismatches, {} not run, \
             {} against NVIDIA's sm_80 results for want of its own; {}; NVIDIA sm_100 equal \
             to its sm_90, sm_80 or sm_120: {}",
            t.cases,
            t.matched,
            t.expected_mismatches,
            t.not_run,
            t.stand_ins,
            per.join(", "),
            t.nv_self
        );
        total.matched += t.matched;
        total.cases += t.cases;
    }
    eprintln!(
        "{} cases x {seeds} seeds: {} comparisons matched in {:.1?}",
        total.cases,
        total.matched,
        start.elapsed()
    );
    r.failures.sort();
    assert!(
        r.failures.is_empty(),
        "{} failures:\n{}",
        r.failures.len(),
        r.failures.join("\n")
    );
    if filter.is_empty() {
        assert!(total.matched >= 500, "only {} comparisons", total.matched);
    }
}

#[test]
fn stale_caches_of_other_tool_versions_are_pruned() {
    // Three folders beside ours: one of other tools unused for longer
    // than the limit (pruned), one of other tools used lately (kept), one
    // of another kind of output (kept); ours is marked used.
    let root = tempfile::tempdir().expect("tempdir");
    let ours = "differential-nvidia-00000000000000aa";
    let old = "differential-nvidia-00000000000000bb";
    let recent = "differential-nvidia-00000000000000cc";
    let other = "nvidia-reference-00000000000000bb";
    for name in [ours, old, recent, other] {
        std::fs::create_dir_all(root.path().join(name).join("k")).expect("mkdir");
        let stamp =
            std::fs::File::create(root.path().join(name).join(".last-used")).expect("stamp");
        if name != recent {
            let long_ago = std::time::SystemTime::now() - 2 * nvidia_reference::STALE;
            stamp.set_modified(long_ago).expect("set time");
        }
    }
    nvidia_reference::prune_stale(
        root.path(),
        "differential-nvidia",
        ours,
        nvidia_reference::STALE,
    );
    let left = |name: &str| root.path().join(name).exists();
    assert!(left(ours) && left(recent) && left(other));
    assert!(!left(old));
    let stamp = std::fs::metadata(root.path().join(ours).join(".last-used")).expect("stamp");
    let age = stamp
        .modified()
        .expect("time")
        .elapsed()
        .unwrap_or_default();
    assert!(age < nvidia_reference::STALE, "{age:?}");
}
