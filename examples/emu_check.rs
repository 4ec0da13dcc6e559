//! `scripts/emu-check.sh CASE.tileir [--ptx FILE] [--host OBJ] [--target sm_XX] [--seed N]`:
//! runs one differential case's kernel in the PTX emulator with its strict
//! checks of asynchronous code on, prints every report with its
//! instruction and thread, and compares the results with NVIDIA's PTX run
//! on the same inputs.
//!
//! The case is `NAME.tileir` with its `NAME.json` beside it
//! (`tests/data/differential/README.md`); the inputs are the ones the
//! differential runner (`tests/differential.rs`) builds for the seed. The
//! PTX is this compiler's for the target, or `--ptx FILE` (NVIDIA's or a
//! hand-edited one); tensor maps its entry takes come from `--host OBJ`,
//! else from this compiler's host callbacks for its own PTX (the maps its
//! boxes need) and NVIDIA's host object for any other. A thread may
//! execute a bounded number of instructions (`--budget`), so that a hang
//! ends as a timeout. Exit status: 0 clean, 1 a report or results that
//! differ from NVIDIA's, 2 bad usage.

#[allow(dead_code)]
#[path = "../tests/differential/case.rs"]
mod case;
#[path = "../tests/differential/host_maps.rs"]
mod host_maps;
#[path = "../tests/differential/nvidia.rs"]
mod nvidia;
#[path = "../tests/common/nvidia_reference.rs"]
mod nvidia_reference;
#[path = "../tests/differential/runner.rs"]
mod runner;
#[path = "../tests/nv_host/support.rs"]
mod support;

use case::Case;
use ptx_emu::{Device, ErrorKind};
use runner::{differences, run_on, Maps, Outcome, Ran};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tileiras::options::Gpu;

/// This compiler's PTX for `bytecode` on `gpu`, and where its entries take
/// tensor maps, the host object with the callbacks that write them.
fn ours(bytecode: &[u8], gpu: Gpu) -> Result<(String, Option<Vec<u8>>), String> {
    let options = tileiras::options::Options {
        gpu,
        ..Default::default()
    };
    let m = tileiras::bytecode::read(bytecode)
        .map_err(|e| format!("reading the bytecode failed: {e}"))?;
    let (p, _) =
        tileiras::lower::lower_module(&m, &options).map_err(|e| format!("lowering failed: {e}"))?;
    let host = runner::our_host(&p, &options)?;
    Ok((p.to_text(), host))
}

const USAGE: &str = "\
usage: scripts/emu-check.sh CASE.tileir [--ptx FILE] [--host OBJ] [--target sm_XX] [--seed N]
                            [--race-check] [--save-ptx DIR] [--budget N]

Runs a differential case's kernel (CASE.json beside CASE.tileir gives its
launch and inputs) in the PTX emulator with the strict checks of
asynchronous code on, and compares its results with NVIDIA's PTX run on
the same inputs.

  --ptx FILE      run this PTX instead of this compiler's (NVIDIA's PTX or
                  a hand-edited one)
  --host OBJ      host object whose callbacks fill the tensor maps the
                  entry takes (default: this compiler's callbacks for its
                  PTX, NVIDIA's object for the case and target for --ptx)
  --target sm_XX  sm_80, sm_90 (default), sm_100 or sm_120
  --seed N        the inputs' seed (default 1)
  --race-check    also report shared-memory races in the --ptx file (always
                  on for this compiler's PTX, off for NVIDIA's, whose code
                  has benign same-value races)
  --save-ptx DIR  write the PTX that ran (DIR/ptx) and NVIDIA's
                  (DIR/nvidia.ptx) there, to read the reported lines in
  --budget N      instructions a thread may execute before the run stops
                  as a timeout (default: 16 times what NVIDIA's run needed
                  a thread on average, at least 100000), so that a hang ends

PTX_EMU_ASYNC_CHECKS turns checks off (`off`, or e.g. `no-proxy,no-wgmma`).
Exit status: 0 clean, 1 a report or results differing from NVIDIA's,
2 bad usage.";

/// The default budget of the checked run: this many times the
/// instructions a thread of NVIDIA's run executed on average...
const BUDGET_FACTOR: u64 = 16;
/// ... and at least this many.
const MIN_BUDGET: u64 = 100_000;

/// What the command line asks for.
struct Args {
    case: PathBuf,
    ptx: Option<PathBuf>,
    host: Option<PathBuf>,
    target: Gpu,
    seed: u64,
    race_check: bool,
    save: Option<PathBuf>,
    budget: Option<u64>,
}

/// The command line, or why it is wrong.
fn parse(mut argv: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut case = None;
    let (mut ptx, mut host, mut save) = (None, None, None);
    let mut target = Gpu::Sm90;
    let mut seed = 1;
    let mut race_check = false;
    let mut budget = None;
    while let Some(a) = argv.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let mut value = |what: &str| {
            inline
                .clone()
                .or_else(|| argv.next())
                .ok_or_else(|| format!("{flag} wants {what}"))
        };
        match flag.as_str() {
            "--ptx" => ptx = Some(PathBuf::from(value("a PTX file")?)),
            "--host" => host = Some(PathBuf::from(value("a host object")?)),
            "--save-ptx" => save = Some(PathBuf::from(value("a folder")?)),
            "--target" => {
                let t = value("a target")?;
                target = match t.as_str() {
                    "sm_80" => Gpu::Sm80,
                    "sm_90" => Gpu::Sm90,
                    "sm_100" => Gpu::Sm100,
                    "sm_120" => Gpu::Sm120,
                    _ => {
                        return Err(format!(
                            "unknown target {t:?}: sm_80, sm_90, sm_100 or sm_120"
                        ))
                    }
                }
            }
            "--seed" => {
                let s = value("a number")?;
                seed = s
                    .parse()
                    .map_err(|_| format!("--seed wants a number, not {s:?}"))?;
            }
            "--budget" => {
                let s = value("a number")?;
                budget = Some(
                    s.parse()
                        .map_err(|_| format!("--budget wants a number, not {s:?}"))?,
                );
            }
            "--race-check" if inline.is_none() => race_check = true,
            f if f.starts_with('-') && f != "-" => return Err(format!("unknown flag {a}")),
            _ if case.is_none() => case = Some(PathBuf::from(a)),
            _ => return Err(format!("one case only ({a} is a second)")),
        }
    }
    let case = case.ok_or("no case given")?;
    for p in [Some(&case), ptx.as_ref(), host.as_ref()]
        .into_iter()
        .flatten()
    {
        if !p.is_file() {
            return Err(format!("{}: no such file", p.display()));
        }
    }
    Ok(Args {
        case,
        ptx,
        host,
        target,
        seed,
        race_check,
        save,
        budget,
    })
}

/// The case `path` names (its `.tileir` or its `.json`), named as the
/// differential runner names it (`<folder>/<name>`, which seeds its inputs).
fn load(path: &Path) -> Result<Case, String> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or_else(|| format!("{}: not a case file", path.display()))?;
    if !dir.join(format!("{name}.json")).is_file() {
        return Err(format!(
            "{}: no {name}.json beside it (a case is NAME.tileir with NAME.json)",
            path.display()
        ));
    }
    let folder = std::fs::canonicalize(dir)
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    Case::load(dir, &folder, name)
}

/// Prints how a run ended; true where it reported something.
fn show(who: &str, ran: &Result<Ran, String>) -> bool {
    match ran {
        Ok(Ran {
            outcome: Outcome::Done(..),
            instructions,
            ..
        }) => {
            println!("{who}: clean ({instructions} instructions)");
            false
        }
        Ok(Ran {
            outcome: Outcome::Failed(_, e),
            ..
        }) => {
            println!("{who}: report: {e}");
            true
        }
        Err(e) => {
            println!("{who}: does not run: {e}");
            true
        }
    }
}

fn main() -> ExitCode {
    if std::env::args().any(|a| a == "-h" || a == "--help") {
        // quietly, into a closed pipe too (`| head`)
        let _ = writeln!(std::io::stdout(), "{USAGE}");
        return ExitCode::SUCCESS;
    }
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            let usage = USAGE.split("\n\n").next().unwrap_or(USAGE);
            eprintln!("emu-check: {e}\n{usage}\n(--help says more)");
            return ExitCode::from(2);
        }
    };
    let case = match load(&args.case) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("emu-check: {e}");
            return ExitCode::from(2);
        }
    };
    let gpu = args.target.name();
    let inputs = case.inputs(args.seed);
    println!("case {} ({gpu}, seed {})", case.name, args.seed);

    // NVIDIA's PTX and host object for the case and target
    let nv_ptx = nvidia::ptx(&case.bytecode, gpu);
    let nv_host = match (&nv_ptx, nv_host::SUPPORTED) {
        (Ok(_), true) => nvidia::host_object(&case.bytecode, gpu).unwrap_or(None),
        _ => None,
    };
    let given_host = match &args.host {
        Some(p) => match std::fs::read(p) {
            Ok(b) => Some(b),
            Err(e) => {
                eprintln!("emu-check: {}: {e}", p.display());
                return ExitCode::from(2);
            }
        },
        None => None,
    };

    // the PTX checked: the file given (its maps NVIDIA's callbacks'), else
    // ours (its maps our callbacks', as our cubin's would write them)
    let (who, ptx, race_check, default_host) = match &args.ptx {
        Some(p) => match std::fs::read_to_string(p) {
            Ok(t) => (
                format!("{}", p.display()),
                t,
                args.race_check,
                nv_host.clone(),
            ),
            Err(e) => {
                eprintln!("emu-check: {}: {e}", p.display());
                return ExitCode::from(2);
            }
        },
        None => match ours(&case.bytecode, args.target) {
            Ok((t, h)) => ("our PTX".to_string(), t, true, h),
            Err(e) => {
                println!("our PTX: {e}");
                return ExitCode::from(1);
            }
        },
    };
    let host = given_host.or(default_host);
    if let Some(dir) = &args.save {
        let saved = std::fs::create_dir_all(dir)
            .and_then(|_| std::fs::write(dir.join("ptx"), &ptx))
            .and_then(|_| match &nv_ptx {
                Ok(t) => std::fs::write(dir.join("nvidia.ptx"), t),
                Err(_) => Ok(()),
            });
        if let Err(e) = saved {
            eprintln!("emu-check: {}: {e}", dir.display());
            return ExitCode::from(2);
        }
    }

    // NVIDIA's run first, as the differential runner makes it (no race
    // check): its instructions bound the checked run's
    let nv = match nv_ptx {
        Ok(text) => {
            let maps = match &nv_host {
                Some(h) => Maps::Host(h, gpu),
                None => Maps::None,
            };
            let mut dev = Device::new();
            dev.race_check = false;
            let ran = run_on(dev, &text, &case, &inputs, maps);
            match &ran {
                Ok(Ran {
                    outcome: Outcome::Failed(ErrorKind::Unsupported, e),
                    ..
                }) => {
                    println!("NVIDIA's PTX: the emulator cannot run it, nothing to compare: {e}");
                    None
                }
                _ => {
                    show("NVIDIA's PTX", &ran);
                    ran.ok()
                }
            }
        }
        Err(e) => {
            let first = e.lines().find(|l| l.contains("error")).unwrap_or(&e);
            println!("NVIDIA's tileiras refuses the case, nothing to compare: {first}");
            None
        }
    };
    let budget = args.budget.or_else(|| {
        let nv = nv
            .as_ref()
            .filter(|r| matches!(r.outcome, Outcome::Done(..)))?;
        let mean = nv.instructions.div_ceil(nv.threads.max(1));
        Some((BUDGET_FACTOR * mean).max(MIN_BUDGET))
    });

    let maps = match &host {
        Some(h) => Maps::Host(h, gpu),
        None => Maps::None,
    };
    let mut dev = Device::new();
    dev.race_check = race_check;
    if let Some(b) = budget {
        dev.max_instructions_per_thread = b;
    }
    let ours = run_on(dev, &ptx, &case, &inputs, maps);
    let mut failed = show(&who, &ours);
    if let Ok(Ran {
        outcome: Outcome::Failed(ErrorKind::Timeout, _),
        ..
    }) = &ours
    {
        println!("    (a hang, or more work a thread than --budget allows)");
    }
    if let (Ok(ours), Some(nv)) = (&ours, &nv) {
        match differences(&case, &nv.outcome, &ours.outcome) {
            None => println!("results: equal to NVIDIA's"),
            Some(d) => {
                println!("results differ from NVIDIA's:\n    {d}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
