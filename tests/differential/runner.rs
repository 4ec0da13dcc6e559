//! Running one differential case's kernel in the emulator and comparing
//! two runs' results: shared by the differential runner
//! (`tests/differential.rs`), the mutation test (`tests/emu_mutation.rs`)
//! and `scripts/emu-check.sh` (`examples/emu_check.rs`).

#![allow(dead_code)] // each includer uses part of it

use super::case::{self, Arg, Case, Diff};
use super::host_maps;
use ptx_emu::{Device, ErrorKind, Module, Param};

/// Why a PTX whose entry takes tensor maps after the case's parameters
/// does not run: NVIDIA's host callbacks build them at launch (sm_120 TMA).
pub const TENSOR_MAPS: &str =
    "the entry takes tensor maps (hidden parameters its host callbacks fill)";

/// What a run left behind.
pub enum Outcome {
    /// Every buffer's bytes and the `printf` output (lines sorted).
    Done(Vec<Vec<u8>>, String),
    /// The emulator stopped the kernel (trap, fault, race...): the kind
    /// and the error as the emulator shows it (instruction, line, thread).
    Failed(ErrorKind, String),
}

/// Where the tensor maps an entry takes after the case's parameters come
/// from.
#[derive(Clone, Copy)]
pub enum Maps<'a> {
    /// Nowhere: such an entry does not run ([`TENSOR_MAPS`]).
    None,
    /// NVIDIA's host object and the target it was compiled for, whose
    /// callbacks fill them from the launch's parameters.
    Host(&'a [u8], &'a str),
    /// Maps an earlier run of the same entry made ([`Ran::maps`]): every
    /// fresh device allocates the case's buffers at the same addresses.
    Made(&'a [Vec<u8>]),
}

/// A run's outcome, with what else it measured.
pub struct Ran {
    pub outcome: Outcome,
    /// Instructions executed by all threads (0 where the run failed).
    pub instructions: u64,
    /// Threads per CTA times CTAs.
    pub threads: u64,
    /// The tensor maps it passed (empty where the entry takes none).
    pub maps: Vec<Vec<u8>>,
    /// The PTX lines some thread executed (empty where the run failed).
    pub executed_lines: Vec<u32>,
}

/// Our host object for lowered `module` (with `options`), where an entry
/// takes tensor maps: the callbacks that write them at launch, as the
/// driver runs them.
pub fn our_host(
    module: &tileiras::ptx::Module,
    options: &tileiras::options::Options,
) -> Result<Option<Vec<u8>>, String> {
    if !module.entries().any(|e| !e.tensor_maps.is_empty()) {
        return Ok(None);
    }
    tileiras::driver::host_code(module, options)
        .map(Some)
        .map_err(|e| format!("our host callbacks: {e}"))
}

/// Runs `ptx` on the case's inputs; `Err` when the PTX cannot run as the
/// case describes it.
///
/// `race_check` turns the emulator's race reports on: NVIDIA's PTX has
/// benign races (lanes holding copies of a replicated tile's element store
/// the same value to one shared address without a barrier), so only ours
/// runs with them.
///
/// `host` is NVIDIA's host object and target, whose callbacks fill the
/// tensor maps an entry takes after the case's parameters.
pub fn run(
    ptx: &str,
    case: &Case,
    inputs: &[Vec<u8>],
    race_check: bool,
    host: Option<(&[u8], &str)>,
) -> Result<Outcome, String> {
    let maps = match host {
        Some((object, gpu)) => Maps::Host(object, gpu),
        None => Maps::None,
    };
    let mut dev = Device::new();
    dev.race_check = race_check;
    run_on(dev, ptx, case, inputs, maps).map(|r| r.outcome)
}

/// [`run`] on `dev` (its checks and budget as the caller set them), with
/// the tensor maps from `maps`.
pub fn run_on(
    mut dev: Device,
    ptx: &str,
    case: &Case,
    inputs: &[Vec<u8>],
    maps: Maps,
) -> Result<Ran, String> {
    let m = Module::parse(ptx).map_err(|e| format!("emulator cannot parse the PTX: {e}"))?;
    let k = match &case.entry {
        Some(e) => m.kernel(e).ok_or_else(|| format!("no entry {e}"))?,
        None if m.kernels.len() == 1 => &m.kernels[0],
        None => return Err("several entries and no \"entry\"".into()),
    };
    let extra = k.params.get(case.args.len()..).unwrap_or(&[]);
    let takes_maps = !extra.is_empty() && extra.iter().all(|p| p.size == 128);
    if takes_maps && matches!(maps, Maps::None) {
        return Err(TENSOR_MAPS.into());
    }
    if k.params.len() != case.args.len() && !takes_maps {
        return Err(format!(
            "the entry takes {} parameters ({}), the case gives {}",
            k.params.len(),
            k.params
                .iter()
                .map(|p| p.size.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            case.args.len()
        ));
    }
    let mut bufs = Vec::new();
    let mut params = Vec::new();
    let mut inputs = inputs.iter();
    for (a, d) in case.args.iter().zip(&k.params) {
        match a {
            Arg::Buffer { .. } => {
                let p = dev.alloc_from(inputs.next().unwrap());
                bufs.push(p);
                params.push(Param::U64(p.addr()));
            }
            Arg::Scalar { bytes, signed } => {
                // the declared width: wider sign- or zero-extends, narrower truncates
                let fill = if *signed && bytes.last().is_some_and(|b| b & 0x80 != 0) {
                    0xff
                } else {
                    0
                };
                let mut b = bytes.clone();
                b.resize(d.size as usize, fill);
                params.push(match b.len() {
                    4 => Param::U32(u32::from_le_bytes(b.try_into().unwrap())),
                    8 => Param::U64(u64::from_le_bytes(b.try_into().unwrap())),
                    _ => Param::Bytes(b),
                });
            }
        }
    }
    let made = match (takes_maps, maps) {
        (false, _) | (true, Maps::None) => Vec::new(),
        (true, Maps::Host(object, gpu)) => host_maps::tensor_maps(object, gpu, k, &params)
            .map_err(|e| format!("NVIDIA's host callbacks: {e}"))?,
        (true, Maps::Made(m)) => m.to_vec(),
    };
    params.extend(made.iter().cloned().map(Param::Bytes));
    // the arrays that `arrays:` tables list, after the parameters' buffers
    let listed = case.listed_arrays();
    let mut rows: Vec<Vec<u8>> = vec![Vec::new(); bufs.len()];
    for (_, len, table) in &listed {
        let p = dev.alloc_from(inputs.next().unwrap());
        bufs.push(p);
        for v in [p.addr(), *len as u64, 1] {
            rows[*table].extend_from_slice(&v.to_le_bytes());
        }
    }
    for (k, r) in rows.iter().enumerate().filter(|(_, r)| !r.is_empty()) {
        dev.write(bufs[k], r);
    }
    let g = case.grid;
    let (bx, by, bz) = k.reqntid.or(k.maxntid).unwrap_or((128, 1, 1));
    let cluster = match (k.blocks_are_clusters, k.reqnctapercluster) {
        (true, Some((x, y, z))) => x * y * z,
        _ => 1,
    };
    let threads = u64::from(bx * by * bz) * u64::from(g[0] * g[1] * g[2]) * u64::from(cluster);
    let (outcome, instructions, executed_lines) =
        match dev.launch_grid(&m, &k.name, (g[0], g[1], g[2]), &params) {
            Ok(r) => {
                let mut lines: Vec<&str> = r.printf.lines().collect();
                lines.sort_unstable();
                (
                    Outcome::Done(
                        bufs.iter().map(|p| dev.read(*p)).collect(),
                        lines.join("\n"),
                    ),
                    r.instructions,
                    r.executed_lines,
                )
            }
            Err(e) => (Outcome::Failed(e.kind, e.to_string()), 0, Vec::new()),
        };
    Ok(Ran {
        outcome,
        instructions,
        threads,
        maps: made,
        executed_lines,
    })
}

/// The buffers to compare: argument index, element type, ulp and absolute
/// bounds.
pub fn compared(case: &Case) -> Vec<(usize, case::Elem, u64, f64)> {
    let listed = case.listed_arrays();
    case.args
        .iter()
        .enumerate()
        .filter_map(|(k, a)| match a {
            Arg::Buffer {
                elem, ulp, atol, ..
            } => Some((k, *elem, ulp.unwrap_or(case.ulp), atol.unwrap_or(case.atol))),
            Arg::Scalar { .. } => None,
        })
        .chain(
            listed
                .iter()
                .enumerate()
                .map(|(k, (elem, _, _))| (case.args.len() + k, *elem, case.ulp, case.atol)),
        )
        .collect()
}

/// Compares NVIDIA's outcome with ours: `None` when they agree, else what
/// differs (per buffer: how many elements, by how many ulps, the first two).
pub fn differences(case: &Case, nv: &Outcome, ours: &Outcome) -> Option<String> {
    match (nv, ours) {
        (Outcome::Done(a, pa), Outcome::Done(b, pb)) => {
            let mut out = Vec::new();
            for ((k, elem, ulp, atol), (x, y)) in compared(case).into_iter().zip(a.iter().zip(b)) {
                let mut diffs: Vec<Diff> = Vec::new();
                let (n, worst) = case::compare(elem, ulp, atol, x, y, &mut diffs);
                if n == 0 {
                    continue;
                }
                let worst = match worst {
                    0 => String::new(),
                    w => format!(", floats by up to {w} ulp"),
                };
                let first: Vec<String> = diffs
                    .iter()
                    .take(2)
                    .map(|d| format!("[{}] NVIDIA {}, ours {}", d.index, d.nvidia, d.ours))
                    .collect();
                out.push(format!(
                    "args[{k}] ({elem:?}): {n} of {} elements differ{worst}: {}",
                    x.len() / elem.size(),
                    first.join("; ")
                ));
            }
            if out.is_empty() && pa != pb {
                out.push(format!(
                    "printf output differs:\nNVIDIA:\n{pa}\nours:\n{pb}"
                ));
            }
            (!out.is_empty()).then(|| out.join("\n    "))
        }
        (Outcome::Failed(ka, _), Outcome::Failed(kb, _)) if ka == kb => None,
        (Outcome::Failed(_, e), Outcome::Done(..)) => {
            Some(format!("NVIDIA's run failed ({e}), ours did not"))
        }
        (Outcome::Done(..), Outcome::Failed(_, e)) => {
            Some(format!("our run failed ({e}), NVIDIA's did not"))
        }
        (Outcome::Failed(_, a), Outcome::Failed(_, b)) => Some(format!(
            "NVIDIA's run failed ({a}), ours failed otherwise ({b})"
        )),
    }
}
