//! Launch planning for one entry: collects the entry's optimization hints
//! and the thread count the lowering built the body for into
//! [`LaunchDirectives`], normalizes and verifies them, and checks the
//! kernel parameter space, all before anything reaches ptxas.
//!
//! Guarantees for an entry that passes [`plan`]:
//! - exactly one of `.maxntid` / `.reqntid` is set, chosen by
//!   [`thread_bound`] and named in a remark: `.reqntid` when the body
//!   depends on the exact thread count (distributed tiles index by
//!   `%tid.x`; barriers, shuffles, shared memory), `.maxntid` otherwise;
//! - `.minnctapersm` is the `occupancy` hint (default 1), as NVIDIA emits;
//! - a `num_cta_in_cga` hint above 1 becomes `.reqnctapercluster n, 1, 1`
//!   with `.blocksareclusters` (the grid counts tile blocks, each a
//!   cluster), printed only on sm_90 and newer;
//! - every rule of [`LaunchDirectives::verify`] holds for the target, and
//!   the parameters fit [`crate::ptx::params::MAX_PARAM_BYTES`].
use crate::diag::{Diagnostic, Severity};
use crate::ir::{Attr, Module, OpId};
use crate::lower::error::LowerError;
use crate::options::{Gpu, Options};
use crate::ptx::directives::ThreadBound;
use crate::ptx::{self, params, LaunchDirectives};

/// The entry-level optimization hints for one target.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntryHints {
    /// `num_cta_in_cga`: CTAs per cluster.
    pub num_cta_in_cga: Option<i64>,
    /// `occupancy`: CTAs per SM the kernel should allow.
    pub occupancy: Option<i64>,
    /// `num_worker_warps_per_cta`: warps per CTA (the lowering decides).
    pub num_worker_warps_per_cta: Option<i64>,
}

fn int_value(a: &Attr) -> Option<i64> {
    match a {
        Attr::Int(v) | Attr::Integer { value: v, .. } => Some(*v as i64),
        _ => None,
    }
}

/// The entry hints of `op` for `gpu`: the target's own dictionary first,
/// then `default`, key by key (as NVIDIA's `getAttributeForSmOrDefault`).
/// Hints that are not integers are ignored with a warning.
pub fn entry_hints(m: &Module, op: OpId, gpu: Gpu, warnings: &mut Vec<Diagnostic>) -> EntryHints {
    let Some(Attr::OptimizationHints(dicts)) = m.ops[op].attr("optimization_hints") else {
        return EntryHints::default();
    };
    let dict = |key: &str| {
        dicts.iter().find_map(|(k, v)| match v {
            Attr::Dictionary(items) if k == key => Some(items),
            _ => None,
        })
    };
    let (own, default) = (dict(gpu.name()), dict("default"));
    let mut get = |name: &str| {
        for (ctx, d) in [(gpu.name(), own), ("default", default)] {
            let Some((_, v)) = d.and_then(|d| d.iter().find(|(k, _)| k == name)) else {
                continue;
            };
            match int_value(v) {
                Some(n) => return Some(n),
                None => warnings.push(
                    Diagnostic::new(
                        Severity::Warning,
                        format!("integer value expected for {ctx}.{name}; hint ignored"),
                    )
                    .at(m.location(op)),
                ),
            }
        }
        None
    };
    EntryHints {
        num_cta_in_cga: get("num_cta_in_cga"),
        occupancy: get("occupancy"),
        num_worker_warps_per_cta: get("num_worker_warps_per_cta"),
    }
}

/// The directives requested by `hints` for a body built for `threads`
/// threads per block, before normalization and verification.
pub fn requested(hints: &EntryHints, threads: u32, bound: ThreadBound) -> LaunchDirectives {
    let dims = Some(vec![i64::from(threads)]);
    let (maxntid, reqntid) = match bound {
        ThreadBound::Exact => (None, dims),
        ThreadBound::Max => (dims, None),
    };
    let cluster = hints.num_cta_in_cga.filter(|&n| n != 1);
    LaunchDirectives {
        maxntid,
        reqntid,
        minnctapersm: Some(hints.occupancy.unwrap_or(1)),
        maxnreg: None,
        maxnctapersm: None,
        blocksareclusters: cluster.is_some(),
        explicitcluster: false,
        reqnctapercluster: cluster.map(|n| vec![n, 1, 1]),
        maxclusterrank: None,
    }
}

/// Registers a thread may use beside its accumulators (addresses, loop
/// counters, operand fragments, softmax statistics).
const REGISTER_HEADROOM: u32 = 64;

/// The `occupancy` hint as far as the accumulators allow: the largest
/// number of CTAs per SM up to `occupancy` at which each of `threads`
/// threads still gets `acc_regs` registers plus [`REGISTER_HEADROOM`] of
/// the SM's 64K (at most 255); the hint itself without accumulators. Asking ptxas for more CTAs per SM would
/// spill the accumulators or fail; NVIDIA's tileiras likewise emits
/// `.minnctapersm 1` for attention kernels that hint occupancy 2.
pub fn fitted_occupancy(occupancy: i64, threads: u32, acc_regs: u32) -> i64 {
    if acc_regs == 0 {
        return occupancy;
    }
    let need = acc_regs.saturating_add(REGISTER_HEADROOM);
    let cap = |o: i64| ((65_536 / (o.max(1) * i64::from(threads.max(1)))) & !7).min(255);
    let mut o = occupancy;
    while o > 1 && cap(o) < i64::from(need) {
        o -= 1;
    }
    o
}

/// Normalizes and verifies `d` for `gpu`: the remark (when both thread
/// bounds were set) is pushed to `notes`; every broken rule becomes one
/// error naming the entry. The result is fitted to the target.
pub fn finish(
    mut d: LaunchDirectives,
    bound: ThreadBound,
    gpu: Gpu,
    entry: &str,
    notes: &mut Vec<Diagnostic>,
) -> Result<LaunchDirectives, String> {
    if let Some(remark) = d.normalize(bound) {
        notes.push(Diagnostic::new(
            Severity::Remark,
            format!("entry '{entry}': {remark}"),
        ));
    }
    let errors = d.verify(gpu);
    if !errors.is_empty() {
        let list: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        return Err(format!(
            "entry '{entry}': invalid launch directives for {gpu}: {}",
            list.join("; ")
        ));
    }
    Ok(d.for_target(gpu))
}

/// Whether the body of `e` depends on its exact thread count: it reads
/// `%tid.x` (every distributed tile does), synchronizes or exchanges data
/// between threads (`bar`, `shfl`), or uses shared memory. Such an entry
/// gets `.reqntid`; one that does the same work in every thread gets
/// `.maxntid`, so a launch with fewer threads is still correct.
pub fn thread_bound(e: &ptx::Entry) -> ThreadBound {
    let dependent = e.shared_bytes > 0
        || e.body.iter().any(|line| match line {
            ptx::Line::Inst(i) => {
                matches!(i.opc, ptx::Opc::Bar | ptx::Opc::Shfl)
                    || i.dsts
                        .iter()
                        .chain(&i.srcs)
                        .any(|o| matches!(o, ptx::Operand::Special(ptx::Special::TidX)))
            }
            ptx::Line::Label(_) | ptx::Line::Loc(_) => false,
        });
    if dependent {
        ThreadBound::Exact
    } else {
        ThreadBound::Max
    }
}

/// Plans the launch of lowered entry `e` (from entry op `op`): fills
/// `e.launch`, pushes warnings and remarks to `notes`, and fails with a
/// diagnostic at the entry's location when a rule is broken.
pub fn plan(
    m: &Module,
    op: OpId,
    options: &Options,
    e: &mut ptx::Entry,
    notes: &mut Vec<Diagnostic>,
) -> Result<(), LowerError> {
    let gpu = options.gpu;
    let fail = |message: String| LowerError::Failed {
        message,
        location: m.location(op),
    };
    let mut hints = entry_hints(m, op, gpu, notes);
    if let Some(occupancy) = hints.occupancy {
        let fitted = fitted_occupancy(occupancy, e.reqntid, e.acc_regs);
        if fitted != occupancy {
            notes.push(
                Diagnostic::new(
                    Severity::Remark,
                    format!(
                        "entry '{}': occupancy {occupancy} lowered to {fitted}: the accumulators of its matrix multiplies hold {} registers per thread",
                        e.name, e.acc_regs
                    ),
                )
                .at(m.location(op)),
            );
            hints.occupancy = Some(fitted);
        }
    }
    if let Some(n) = hints.num_cta_in_cga {
        if !(1..=16).contains(&n) || n & (n - 1) != 0 {
            return Err(fail(format!(
                "entry '{}': num_cta_in_cga {n} must be a power of two no larger than 16",
                e.name
            )));
        }
    }
    if let Some(w) = hints.num_worker_warps_per_cta {
        if i64::from(e.reqntid) != w.saturating_mul(32) {
            notes.push(
                Diagnostic::new(
                    Severity::Remark,
                    format!(
                        "entry '{}': num_worker_warps_per_cta {w} not followed: the lowering uses {} threads",
                        e.name, e.reqntid
                    ),
                )
                .at(m.location(op)),
            );
        }
    }
    let bound = thread_bound(e);
    notes.push(
        Diagnostic::new(
            Severity::Remark,
            match bound {
                ThreadBound::Exact => format!(
                    "entry '{}': .reqntid {}: the generated code depends on the exact thread count",
                    e.name, e.reqntid
                ),
                ThreadBound::Max => format!(
                    "entry '{}': .maxntid {}: the generated code works with any thread count up to {}",
                    e.name, e.reqntid, e.reqntid
                ),
            },
        )
        .at(m.location(op)),
    );
    let d = requested(&hints, e.reqntid, bound);
    *e.launch = finish(d, bound, gpu, &e.name, notes).map_err(fail)?;
    let layout = params::layout(&e.params, gpu);
    if let Some(message) = params::check(&layout) {
        return Err(fail(format!("entry '{}': {message}", e.name)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::lower::plan::launch::*;

    #[test]
    fn hints_become_directives() {
        let h = EntryHints {
            num_cta_in_cga: Some(2),
            occupancy: Some(1),
            num_worker_warps_per_cta: None,
        };
        let mut notes = Vec::new();
        let d = finish(
            requested(&h, 256, ThreadBound::Exact),
            ThreadBound::Exact,
            Gpu::Sm90,
            "k",
            &mut notes,
        )
        .unwrap();
        assert_eq!(
            d.to_text(Gpu::Sm90),
            ".reqntid 256\n.minnctapersm 1\n.blocksareclusters\n.reqnctapercluster 2, 1, 1\n"
        );
        assert!(notes.is_empty());
        let d = finish(
            requested(&h, 256, ThreadBound::Exact),
            ThreadBound::Exact,
            Gpu::Sm80,
            "k",
            &mut notes,
        )
        .unwrap();
        assert_eq!(d.to_text(Gpu::Sm80), ".reqntid 256\n.minnctapersm 1\n");
    }

    #[test]
    fn occupancy_leaves_room_for_the_accumulators() {
        // No matrix multiply: the hint stands.
        assert_eq!(fitted_occupancy(4, 128, 0), 4);
        // 128 threads at 4 CTAs per SM get 128 registers: a 64x256 f32
        // accumulator (128 per thread) needs 2 CTAs per SM at most.
        assert_eq!(fitted_occupancy(4, 128, 128), 2);
        // Two 128x128 f32 accumulators over 256 threads: 128 registers.
        assert_eq!(fitted_occupancy(2, 256, 128), 1);
        assert_eq!(fitted_occupancy(2, 256, 32), 2);
    }

    #[test]
    fn occupancy_beyond_the_target_is_an_error() {
        let h = EntryHints {
            occupancy: Some(20),
            ..Default::default()
        };
        let err = finish(
            requested(&h, 128, ThreadBound::Exact),
            ThreadBound::Exact,
            Gpu::Sm86,
            "k",
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(
            err.contains(".minnctapersm 20 is out of range: sm_86 keeps 1 to 16 CTAs"),
            "{err}"
        );
    }
}
