//! Mutation test of the emulator's checks of synchronisation: NVIDIA's
//! PTX of a few differential cases (a matmul, an attention, a TMA copy,
//! tcgen05 and `cta_group::2` code) loses one synchronising instruction at
//! a time (a fence, a barrier, an mbarrier arrive or wait, a wgmma or
//! tcgen05 commit or wait, a bulk-copy group commit or wait, a
//! `setmaxnreg`: [`kind`]), and each such mutant must be caught.
//!
//! Every (case, target) first runs unmutated (seed 1) for the reference
//! results, its instruction need and the lines it executes: an instruction
//! it never executes is no mutant of the run (deleting it cannot change
//! anything; the table counts them apart). Each mutant (the line blanked,
//! so the lines keep their numbers) then runs with every strict check of
//! asynchronous code on (`ptx_emu::AsyncChecks::ALL`; the plain race check
//! too where the unmutated run has no race: NVIDIA's code may store one
//! value from several lanes without a barrier, which that check reports,
//! so it stays off where it would) and a budget of a
//! few times the unmutated run's instructions per thread, so that a hang
//! ends soon as a timeout. A mutant is reported when its run stops with an
//! error of any kind (a check's report, a deadlock, a timeout, a fault) or
//! its results differ from the unmutated run's; else it survives.
//!
//! The same deletions from this compiler's PTX of the same cases run as a
//! second test (`our_deleted_synchronisation_is_caught`, survivors in
//! `tests/data/emu_mutation/survivors_ours.txt`).
//!
//! Survivors are listed with why they survive in
//! `tests/data/emu_mutation/survivors.txt` (`<case> <target> <line>
//! <instruction> -- <explanation>`): either why deleting the instruction
//! is harmless in that run (an equivalent mutant, in mutation testing's
//! terms: a release nothing waits for, a wait a later one covers), or
//! `MISSING CHECK: ...`, a deletion that does harm the emulator does not
//! see. The test fails when a mutant survives that is not listed, when the
//! mutation score, reported / (reported + missing checks), is below
//! [`SCORE_FLOOR`], or when fewer than [`FLOOR`] of all mutants are
//! reported; a listed survivor that is now reported is only noted, so a
//! new check does not break it. `EMU_MUTATION_BLESS=1` rewrites the list
//! with the current survivors (keeping the explanations of those still
//! listed; new ones say `UNEXPLAINED`). `EMU_MUTATION_FILTER` keeps the
//! (case, target) pairs whose `case target` contains it;
//! `EMU_MUTATION_CHECKS=no-proxy` (`PTX_EMU_ASYNC_CHECKS`' syntax) runs
//! with a check off, to see what it catches; `EMU_MUTATION_VERBOSE=1`
//! prints how each mutant fared.

#[allow(dead_code)]
#[path = "differential/case.rs"]
mod case;
#[path = "differential/host_maps.rs"]
mod host_maps;
#[path = "differential/nvidia.rs"]
mod nvidia;
#[path = "common/nvidia_reference.rs"]
mod nvidia_reference;
#[path = "differential/runner.rs"]
mod runner;
#[path = "nv_host/support.rs"]
mod support;

use case::Case;
use ptx_emu::{AsyncChecks, Device};
use runner::{differences, run_on, Maps, Outcome, Ran};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The cases (folder under `tests/data`, name), each run with NVIDIA's
/// PTX for every target of [`TARGETS`].
const CASES: &[(&str, &str)] = &[
    // a matmul: wgmma on sm_90, tcgen05 on sm_100, mma.sync on sm_120; TMA
    // loads and stores, warp-specialised; more K tiles than pipeline
    // stages, so that every stage is released and loaded again
    ("emu_mutation", "matmul_f16_divisible_k512"),
    // the same product by a 2-CTA cluster: `cta_group::2` on sm_100 (one
    // MMA across the cluster's two CTAs), multicast loads and remote
    // arrives; as many K tiles
    ("emu_mutation", "matmul_f16_cluster2_k512"),
    // an attention: two products per iteration, TMA loads
    ("differential/targeted", "clamped_attention_f16"),
    // a TMA copy without MMA: a row loaded by TMA, reduced, stored by TMA
    ("differential/cutile", "reduce_custom_last_axis"),
];

/// NVIDIA's targets whose PTX is mutated.
const TARGETS: &[&str] = &["sm_90", "sm_100", "sm_120"];

/// This compiler's PTX for `case` and `gpu`, and its host callbacks where
/// an entry takes tensor maps.
fn our_ptx(case: &Case, gpu: &str) -> Result<(String, Option<Vec<u8>>), String> {
    let module = tileiras::bytecode::read(&case.bytecode).map_err(|e| e.to_string())?;
    let gpu = gpu.parse().map_err(|e| format!("{gpu}: {e}"))?;
    let options = tileiras::options::Options {
        gpu,
        ..Default::default()
    };
    let (ptx, _) = tileiras::lower::lower_module(&module, &options).map_err(|e| e.to_string())?;
    let host = match ptx.entries().any(|e| !e.tensor_maps.is_empty()) {
        true => Some(tileiras::driver::host_code(&ptx, &options).map_err(|e| e.to_string())?),
        false => None,
    };
    Ok((ptx.to_text(), host))
}

/// The mutation score that must be reached: of the mutants that are not
/// equivalent (reported, or surviving through a missing check), the share
/// reported.
const SCORE_FLOOR: f64 = 0.90;

/// The share of all of our PTX's mutants that must be reported (80 of 92
/// are; the 12 survivors are explained).
const OUR_FLOOR: f64 = 0.85;

/// The share of all of NVIDIA's mutants that must be reported, equivalent
/// ones included: the measured share (407 of 493, 82.6%) rounded down. Of
/// the 86 survivors 44 are the bulk-store commit and wait pairs of the
/// matmul's epilogue, each covered by the next pair in these launches.
const FLOOR: f64 = 0.80;

/// The budget of a mutant's run: this many times the instructions per
/// thread the unmutated run needed (within a factor of two).
const BUDGET_FACTOR: u64 = 2;

/// The kind of a synchronising instruction (its opcode up to the
/// qualifiers that tell what it waits for), or `None` for any other line.
fn kind(line: &str) -> Option<&'static str> {
    let t = line.trim();
    // a guard: `@%p1 ` or `@!%p1 `
    let t = match t.strip_prefix('@') {
        Some(rest) => rest.split_once(char::is_whitespace)?.1.trim_start(),
        None => t,
    };
    let op = t.split(|c: char| c.is_whitespace() || c == ';').next()?;
    const KINDS: &[&str] = &[
        "fence.proxy.async",
        "fence.proxy",
        "fence.mbarrier_init",
        "fence",
        "membar",
        "wgmma.fence",
        "wgmma.commit_group",
        "wgmma.wait_group",
        "tcgen05.wait::ld",
        "tcgen05.wait::st",
        "tcgen05.fence::before_thread_sync",
        "tcgen05.fence::after_thread_sync",
        "tcgen05.commit",
        "mbarrier.arrive.expect_tx",
        "mbarrier.arrive_drop",
        "mbarrier.arrive",
        "mbarrier.expect_tx",
        "mbarrier.try_wait",
        "mbarrier.test_wait",
        "cp.async.bulk.commit_group",
        "cp.async.bulk.wait_group.read",
        "cp.async.bulk.wait_group",
        "cp.async.mbarrier.arrive",
        "cp.async.commit_group",
        "cp.async.wait_group",
        "cp.async.wait_all",
        "bar.sync",
        "bar.arrive",
        "bar.red",
        "barrier.sync",
        "barrier.arrive",
        "barrier.red",
        "barrier.cta.sync",
        "barrier.cta.arrive",
        "barrier.cta.red",
        "barrier.cluster.arrive",
        "barrier.cluster.wait",
        "setmaxnreg",
    ];
    KINDS.iter().copied().find(|k| {
        op.strip_prefix(k)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
    })
}

/// One (case, target): its case, NVIDIA's PTX, the unmutated run.
struct Subject {
    case: Case,
    gpu: &'static str,
    ptx: String,
    inputs: Vec<Vec<u8>>,
    reference: Ran,
    /// The mutants' instruction budget per thread.
    budget: u64,
    /// The plain race check runs too (the unmutated run has no race).
    races: bool,
}

impl Subject {
    fn name(&self) -> String {
        format!("{} {}", self.case.name, self.gpu)
    }
}

/// The strict checks the mutants run with: all, less those
/// `EMU_MUTATION_CHECKS` turns off (`PTX_EMU_ASYNC_CHECKS`' syntax, e.g.
/// `no-proxy`: to see what one check catches).
fn checks() -> AsyncChecks {
    match std::env::var("EMU_MUTATION_CHECKS") {
        Ok(spec) => AsyncChecks::parse(&spec),
        Err(_) => AsyncChecks::ALL,
    }
}

/// A device with the strict checks on ([`checks`]), as the differential runner runs
/// NVIDIA's code (no plain race check), and `budget` instructions a thread
/// (the emulator's default when `None`).
fn device(budget: Option<u64>) -> Device {
    device_with(budget, false)
}

/// [`device`], with the plain race check on where `races`.
fn device_with(budget: Option<u64>, races: bool) -> Device {
    let mut dev = Device::new();
    dev.race_check = races;
    dev.async_checks = checks();
    if let Some(b) = budget {
        dev.max_instructions_per_thread = b;
    }
    dev
}

/// The unmutated run of NVIDIA's PTX for `case` and `gpu`, and the budget
/// its mutants run with.
fn subject(case: Case, gpu: &'static str, ours: bool) -> Result<Subject, String> {
    let (ptx, host) = match ours {
        false => (
            nvidia::ptx(&case.bytecode, gpu)?,
            nvidia::host_object(&case.bytecode, gpu)?,
        ),
        true => our_ptx(&case, gpu)?,
    };
    let inputs = case.inputs(1);
    let maps = match &host {
        Some(h) => Maps::Host(h, gpu),
        None => Maps::None,
    };
    let reference = run_on(device(None), &ptx, &case, &inputs, maps)?;
    if let Outcome::Failed(_, e) = &reference.outcome {
        return Err(format!("the unmutated PTX fails: {e}"));
    }
    // the least power-of-two multiple of the mean instructions per thread
    // that the unmutated run fits in
    let mean = reference
        .instructions
        .div_ceil(reference.threads.max(1))
        .max(1);
    let mut need = mean;
    loop {
        let ran = run_on(
            device(Some(need)),
            &ptx,
            &case,
            &inputs,
            Maps::Made(&reference.maps),
        )?;
        match differences(&case, &reference.outcome, &ran.outcome) {
            None => break,
            Some(_) if need < mean << 12 => need *= 2,
            Some(d) => {
                return Err(format!(
                    "the unmutated PTX does not fit {need} instructions a thread: {d}"
                ))
            }
        }
    }
    let races = run_on(
        device_with(Some(need), true),
        &ptx,
        &case,
        &inputs,
        Maps::Made(&reference.maps),
    )
    .is_ok_and(|r| differences(&case, &reference.outcome, &r.outcome).is_none());
    Ok(Subject {
        case,
        gpu,
        ptx,
        inputs,
        reference,
        budget: need * BUDGET_FACTOR,
        races,
    })
}

/// One mutant: which subject, which line (0-based), its kind.
struct Mutant {
    subject: usize,
    line: usize,
    kind: &'static str,
}

/// How a mutant fared: `Some(what caught it)` or `None` (survived).
fn try_mutant(s: &Subject, line: usize) -> Option<String> {
    let text: String = s
        .ptx
        .lines()
        .enumerate()
        .map(|(k, l)| if k == line { "" } else { l })
        .collect::<Vec<_>>()
        .join("\n");
    let ran = run_on(
        device_with(Some(s.budget), s.races),
        &text,
        &s.case,
        &s.inputs,
        Maps::Made(&s.reference.maps),
    );
    match ran {
        Err(e) => Some(format!("does not run: {e}")),
        Ok(Ran {
            outcome: Outcome::Failed(kind, e),
            ..
        }) => Some(format!("{kind:?}: {e}")),
        Ok(r) => differences(&s.case, &s.reference.outcome, &r.outcome)
            .map(|d| format!("results differ: {d}")),
    }
}

/// `f` of each of `items`, in order, computed on `threads` threads.
fn in_parallel<T: Sync, U: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> U + Sync,
) -> Vec<U> {
    let slots: Vec<Mutex<Option<U>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else {
                    break;
                };
                *slots[i].lock().unwrap() = Some(f(item));
            });
        }
    });
    slots
        .into_iter()
        .map(|s| s.into_inner().unwrap().expect("ran"))
        .collect()
}

/// An instruction's text with its blanks squeezed to one space.
fn squeeze(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The survivors file of NVIDIA's mutants, or of ours.
fn survivors_file(ours: bool) -> PathBuf {
    let name = if ours {
        "survivors_ours.txt"
    } else {
        "survivors.txt"
    };
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/emu_mutation")
        .join(name)
}

/// The listed survivors: (`<case> <target> <line> <instruction>`,
/// explanation), and the file's comment lines.
fn listed(ours: bool) -> (BTreeMap<String, String>, Vec<String>) {
    let text = std::fs::read_to_string(survivors_file(ours)).unwrap_or_default();
    let mut entries = BTreeMap::new();
    let mut comments = Vec::new();
    for l in text.lines() {
        if l.starts_with('#') || l.trim().is_empty() {
            comments.push(l.to_string());
            continue;
        }
        let (key, why) = l.split_once(" -- ").unwrap_or((l, ""));
        entries.insert(squeeze(key), why.trim().to_string());
    }
    (entries, comments)
}

/// A survivor line's place in the file: by case, target, then line.
fn order(line: &str) -> (String, u32, u32) {
    let mut w = line.split(' ');
    let case = w.next().unwrap_or_default().to_string();
    let sm = w.next().and_then(|g| g.strip_prefix("sm_")?.parse().ok());
    let at = w.next().and_then(|n| n.parse().ok());
    (case, sm.unwrap_or(0), at.unwrap_or(0))
}

#[test]
fn every_deleted_synchronisation_is_caught() {
    mutate(false, FLOOR);
}

/// The same deletions from this compiler's PTX of the same cases and
/// targets (`mma.sync` fed by `cp.async` and `bar.sync`, `wgmma` fed by TMA
/// and mbarriers, the maps written by our own host callbacks; the plain
/// race check on, as our PTX runs clean of it): every
/// mutant the run executes must be reported or listed in
/// `tests/data/emu_mutation/survivors_ours.txt`, and at least
/// [`OUR_FLOOR`] of them reported.
#[test]
fn our_deleted_synchronisation_is_caught() {
    mutate(true, OUR_FLOOR);
}

/// Runs the mutants of NVIDIA's PTX (`ours` false) or of this compiler's,
/// and checks them against their survivors file and `floor`.
fn mutate(ours: bool, floor: f64) {
    if let Some(why) = nv_host::unsupported_reason() {
        // TMA code takes tensor maps only its host callbacks fill
        eprintln!("skipped: {why}");
        return;
    }
    let start = std::time::Instant::now();
    let filter = std::env::var("EMU_MUTATION_FILTER").unwrap_or_default();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let pairs: Vec<(Case, &'static str)> = CASES
        .iter()
        .flat_map(|(dir, name)| {
            // named as the differential runner names its cases
            let source = dir.rsplit('/').next().unwrap_or(dir);
            let case = Case::load(&root.join(dir), source, name).unwrap_or_else(|e| panic!("{e}"));
            TARGETS.iter().map(move |g| (case.clone(), *g))
        })
        .filter(|(c, g)| format!("{} {g}", c.name).contains(&filter))
        .collect();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());

    // the unmutated runs, in parallel
    let ran = in_parallel(&pairs, threads, |(case, gpu)| {
        subject(case.clone(), gpu, ours)
    });
    let mut subjects = Vec::new();
    let mut failures = Vec::new();
    for (r, (case, gpu)) in ran.into_iter().zip(&pairs) {
        match r {
            Ok(s) => subjects.push(s),
            Err(e) => failures.push(format!("{} {gpu}: {e}", case.name)),
        }
    }
    for f in &failures {
        eprintln!("{f}");
    }
    let prepared = start.elapsed();

    // the mutants, in parallel
    // an instruction the unmutated run never executes cannot be missed:
    // deleting it is no mutant of the run (counted apart)
    let mut not_executed: BTreeMap<&str, usize> = BTreeMap::new();
    let mut mutants: Vec<Mutant> = Vec::new();
    for (k, s) in subjects.iter().enumerate() {
        for (line, l) in s.ptx.lines().enumerate() {
            let Some(kind) = kind(l) else { continue };
            if s.reference
                .executed_lines
                .binary_search(&(line as u32 + 1))
                .is_err()
            {
                *not_executed.entry(kind).or_default() += 1;
                continue;
            }
            mutants.push(Mutant {
                subject: k,
                line,
                kind,
            });
        }
    }
    let caught = in_parallel(&mutants, threads, |m| {
        try_mutant(&subjects[m.subject], m.line)
    });

    // per kind: mutants, reported
    let mut table: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut survivors = Vec::new();
    for (m, c) in mutants.iter().zip(&caught) {
        let e = table.entry(m.kind).or_default();
        e.0 += 1;
        match c {
            Some(_) => e.1 += 1,
            None => {
                let s = &subjects[m.subject];
                let text = squeeze(s.ptx.lines().nth(m.line).unwrap_or_default());
                survivors.push(format!("{} {} {text}", s.name(), m.line + 1));
            }
        }
    }
    let (total, reported) = table.values().fold((0, 0), |(t, r), (a, b)| (t + a, r + b));
    eprintln!(
        "{:<36} {:>7} {:>8} {:>8} {:>12}",
        "kind", "mutants", "reported", "survived", "not executed"
    );
    let kinds: BTreeSet<&str> = table.keys().chain(not_executed.keys()).copied().collect();
    for k in kinds {
        let (n, r) = table.get(k).copied().unwrap_or_default();
        let x = not_executed.get(k).copied().unwrap_or_default();
        eprintln!("{k:<36} {n:>7} {r:>8} {:>8} {x:>12}", n - r);
    }
    eprintln!(
        "{:<36} {total:>7} {reported:>8} {:>8} {:>12}",
        "all",
        total - reported,
        not_executed.values().sum::<usize>()
    );
    for (k, s) in subjects.iter().enumerate() {
        let n = mutants.iter().filter(|m| m.subject == k).count();
        eprintln!(
            "{}: {n} mutants, budget {} instructions a thread, race check {}",
            s.name(),
            s.budget,
            if s.races {
                "on"
            } else {
                "off (NVIDIA's run has benign races)"
            }
        );
    }
    let verbose = std::env::var_os("EMU_MUTATION_VERBOSE").is_some();
    if verbose {
        for (m, c) in mutants.iter().zip(&caught) {
            let s = &subjects[m.subject];
            let what = c.as_deref().unwrap_or("survived");
            let what = what.lines().next().unwrap_or_default();
            eprintln!("{} {}: {}", s.name(), m.line + 1, what);
        }
    }

    let (list, comments) = listed(ours);
    let mut unlisted = Vec::new();
    for s in &survivors {
        match list.get(s) {
            Some(why) if verbose => eprintln!("survives (listed): {s} -- {why}"),
            Some(_) => {}
            None => unlisted.push(s.clone()),
        }
    }
    eprintln!(
        "{} of the {} survivors listed in {}",
        survivors.len() - unlisted.len(),
        survivors.len(),
        survivors_file(ours).display()
    );
    let now: BTreeSet<&String> = survivors.iter().collect();
    let tried: BTreeSet<String> = subjects.iter().map(Subject::name).collect();
    for key in list.keys() {
        let ran = tried.iter().any(|t| key.starts_with(&format!("{t} ")));
        if ran && !now.contains(key) {
            eprintln!("note: a listed survivor is reported now (remove its line): {key}");
        }
    }
    if std::env::var_os("EMU_MUTATION_BLESS").is_some() {
        // keep the entries of pairs this run left out (a filter)
        let mut lines: Vec<String> = list
            .iter()
            .filter(|(k, _)| {
                now.contains(k) || !tried.iter().any(|t| k.starts_with(&format!("{t} ")))
            })
            .map(|(k, why)| format!("{k} -- {why}"))
            .collect();
        for s in &unlisted {
            lines.push(format!(
                "{s} -- UNEXPLAINED: ran to the end with the unmutated run's results"
            ));
        }
        lines.sort_by_key(|l| order(l));
        let mut text = comments.join("\n");
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&lines.join("\n"));
        text.push('\n');
        std::fs::create_dir_all(survivors_file(ours).parent().unwrap()).unwrap();
        std::fs::write(survivors_file(ours), text).unwrap();
        eprintln!(
            "wrote {} survivors to {}",
            lines.len(),
            survivors_file(ours).display()
        );
        unlisted.clear();
    }
    eprintln!(
        "{} (case, target) pairs, {total} mutants, {reported} reported ({:.1}%) in {:.1?} \
         (unmutated runs {:.1?}, {threads} threads)",
        subjects.len(),
        100.0 * reported as f64 / total.max(1) as f64,
        start.elapsed(),
        prepared
    );
    assert!(
        failures.is_empty(),
        "{} (case, target) pairs do not run unmutated:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        unlisted.is_empty(),
        "{} mutants survive that {} does not list (EMU_MUTATION_BLESS=1 adds them; \
         explain each):\n{}",
        unlisted.len(),
        survivors_file(ours).display(),
        unlisted.join("\n")
    );
    let missing = survivors
        .iter()
        .filter(|s| {
            list.get(*s)
                .is_some_and(|why| why.starts_with("MISSING CHECK"))
        })
        .count();
    let score = reported as f64 / (reported + missing).max(1) as f64;
    eprintln!(
        "mutation score {:.1}% ({reported} reported, {missing} surviving through a missing \
         check, {} equivalent)",
        100.0 * score,
        survivors.len() - missing
    );
    assert!(
        score >= SCORE_FLOOR,
        "mutation score {score:.3} below {SCORE_FLOOR}: {missing} survivors are missing checks"
    );
    assert!(
        reported as f64 >= floor * total as f64,
        "only {reported} of {total} mutants reported (floor {floor})"
    );
}

#[test]
fn synchronising_instructions_are_told_apart() {
    let cases = [
        (
            "\tfence.proxy.async.shared::cta;",
            Some("fence.proxy.async"),
        ),
        (
            "\tfence.mbarrier_init.release.cluster;",
            Some("fence.mbarrier_init"),
        ),
        ("\tfence.acq_rel.gpu;", Some("fence")),
        ("\tmembar.gl;", Some("membar")),
        ("\twgmma.fence.sync.aligned;", Some("wgmma.fence")),
        (
            "\twgmma.wait_group.sync.aligned 1;",
            Some("wgmma.wait_group"),
        ),
        (
            "\t@%p3 mbarrier.arrive.expect_tx.shared.b64 %rd1, [%r1], %r2;",
            Some("mbarrier.arrive.expect_tx"),
        ),
        (
            "\t@!%p3 mbarrier.try_wait.parity.shared.b64 %p1, [%r1], %r2, %r3;",
            Some("mbarrier.try_wait"),
        ),
        (
            "\tcp.async.bulk.wait_group.read 0;",
            Some("cp.async.bulk.wait_group.read"),
        ),
        (
            "\tcp.async.bulk.wait_group 0;",
            Some("cp.async.bulk.wait_group"),
        ),
        ("\tbar.sync 0;", Some("bar.sync")),
        (
            "\tbarrier.cluster.arrive.relaxed.aligned;",
            Some("barrier.cluster.arrive"),
        ),
        ("\ttcgen05.wait::ld.sync.aligned;", Some("tcgen05.wait::ld")),
        (
            "\ttcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%r1];",
            Some("tcgen05.commit"),
        ),
        ("\tsetmaxnreg.dec.sync.aligned.u32 32;", Some("setmaxnreg")),
        ("\tmbarrier.init.shared.b64 [%r1], %r2;", None),
        (
            "\tcp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r1, %r2}], [%r3];",
            None,
        ),
        ("\tbarrier_x.sync;", None),
        ("$L__BB0_2:", None),
        ("\tbra.uni $L__BB0_7;", None),
    ];
    for (line, want) in cases {
        assert_eq!(kind(line), want, "{line}");
    }
}

/// A full mbarrier initialised one arrival short lets its phase complete
/// before the last thread has arrived, so that thread's stores race with
/// the readers: the race check must say so. Our unaligned-B ring counts
/// every thread's arrival (its stores of B) and thread 0's `expect_tx`
/// (257 for 256 threads); with 256, the phase completes on the last
/// arrival but one, and that last arrival counts towards the next phase.
/// The emulator used to acquire every arrival made so far at a wait,
/// including those of the next phase, and missed this.
#[test]
fn a_full_barrier_one_arrival_short_is_caught() {
    if let Some(why) = nv_host::unsupported_reason() {
        eprintln!("skipped: {why}");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let case = Case::load(
        &root.join("differential/targeted"),
        "targeted",
        "unaligned_b_matmul_f16",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for gpu in ["sm_90", "sm_100"] {
        let (ptx, host) = our_ptx(&case, gpu).unwrap_or_else(|e| panic!("{gpu}: {e}"));
        let host = host.expect("TMA code has host callbacks");
        let inputs = case.inputs(1);
        let run = |text: &str| {
            run_on(
                device_with(None, true),
                text,
                &case,
                &inputs,
                Maps::Host(&host, gpu),
            )
            .unwrap_or_else(|e| panic!("{gpu}: {e}"))
        };
        let clean = run(&ptx);
        assert!(
            matches!(clean.outcome, Outcome::Done(..)),
            "{gpu}: the unmutated PTX must run clean"
        );
        assert_eq!(ptx.matches("], 257;\n").count(), 2, "{gpu}");
        let short = ptx.replace("], 257;\n", "], 256;\n");
        match run(&short).outcome {
            Outcome::Failed(kind, e) => {
                assert!(e.contains("data race"), "{gpu}: {kind:?}: {e}")
            }
            Outcome::Done(..) => panic!("{gpu}: a barrier one arrival short is not caught"),
        }
    }
}
