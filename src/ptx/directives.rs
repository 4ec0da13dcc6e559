//! Kernel launch directives: the model, its verifier, normalization and
//! printing.
//!
//! A [`LaunchDirectives`] holds what the entry's optimization hints and the
//! lowering asked for, with values as they were requested (so that bad ones
//! can be diagnosed). [`LaunchDirectives::verify`] lists every rule it
//! breaks; only a verified, normalized set is printed, in the fixed order
//! `.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg`, then the cluster
//! group `.blocksareclusters`, `.explicitcluster`, `.reqnctapercluster`,
//! `.maxclusterrank`, which is suppressed wholesale before sm_90.
//!
//! Limits are those NVIDIA's ptxas 13.5 enforces or silently ignores (a
//! value ptxas would ignore with a warning is an error here, because the
//! launch would then not behave as requested):
//! - `.maxnreg` below 24 is raised to 24 and above 255 ignored by ptxas;
//! - `.minnctapersm` above the SM's resident-CTA limit, or with more
//!   threads than one SM holds, is ignored by ptxas;
//! - `.maxntid` and `.reqntid` together, `.reqnctapercluster` with
//!   `.maxclusterrank`, `.blocksareclusters` without `.reqntid` and
//!   `.reqnctapercluster`, and the deprecated `.maxnctapersm` are ptxas
//!   errors.
use std::fmt::{self, Write};

use crate::options::Gpu;

/// Most threads in one CTA, and per axis.
pub const MAX_THREADS_PER_CTA: i64 = 1024;
/// Most threads along z in one CTA.
pub const MAX_THREADS_Z: i64 = 64;
/// Fewest registers `.maxnreg` may ask for (ptxas raises smaller values).
pub const MIN_MAXNREG: i64 = 24;
/// Most registers per thread (ptxas ignores larger `.maxnreg`).
pub const MAX_MAXNREG: i64 = 255;
/// Most CTAs in one cluster (the non-portable limit of sm_90 and sm_100).
pub const MAX_CLUSTER_CTAS: i64 = 16;

/// Most CTAs resident on one SM of `gpu` (measured: ptxas 13.5 ignores a
/// larger `.minnctapersm`).
pub fn max_ctas_per_sm(gpu: Gpu) -> i64 {
    match gpu {
        Gpu::Sm86 | Gpu::Sm87 | Gpu::Sm88 | Gpu::Sm107 => 16,
        Gpu::Sm89 | Gpu::Sm110 | Gpu::Sm120 | Gpu::Sm121 => 24,
        Gpu::Sm80 | Gpu::Sm90 | Gpu::Sm100 | Gpu::Sm103 => 32,
    }
}

/// Most threads resident on one SM of `gpu` (measured: ptxas 13.5 ignores
/// `.minnctapersm` when that many CTAs would exceed it).
pub fn max_threads_per_sm(gpu: Gpu) -> i64 {
    match gpu {
        Gpu::Sm80 | Gpu::Sm90 | Gpu::Sm100 | Gpu::Sm103 => 2048,
        Gpu::Sm86
        | Gpu::Sm87
        | Gpu::Sm88
        | Gpu::Sm89
        | Gpu::Sm107
        | Gpu::Sm110
        | Gpu::Sm120
        | Gpu::Sm121 => 1536,
    }
}

/// Whether `gpu` has thread-block clusters (sm_90 and newer).
pub fn has_clusters(gpu: Gpu) -> bool {
    gpu.capability() >= 90
}

/// The launch directives of one entry, as requested.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchDirectives {
    /// `.maxntid`: upper bound of the block shape (1 to 3 values).
    pub maxntid: Option<Vec<i64>>,
    /// `.reqntid`: exact block shape (1 to 3 values).
    pub reqntid: Option<Vec<i64>>,
    /// `.minnctapersm`: CTAs that must fit on one SM at once.
    pub minnctapersm: Option<i64>,
    /// `.maxnctapersm`: the deprecated spelling, always rejected.
    pub maxnctapersm: Option<i64>,
    /// `.maxnreg`: registers per thread.
    pub maxnreg: Option<i64>,
    /// `.blocksareclusters`: the launch grid counts clusters.
    pub blocksareclusters: bool,
    /// `.explicitcluster`: the launch must give cluster dimensions.
    pub explicitcluster: bool,
    /// `.reqnctapercluster`: exact cluster shape (3 values).
    pub reqnctapercluster: Option<Vec<i64>>,
    /// `.maxclusterrank`: most CTAs per cluster.
    pub maxclusterrank: Option<i64>,
}

/// One broken rule: the message names the directive and the limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectiveError(pub String);

impl fmt::Display for DirectiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Which thread-count directive normalization kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadBound {
    /// `.reqntid`: the code depends on the exact thread count.
    Exact,
    /// `.maxntid`: the code works with any count up to the bound.
    Max,
}

fn product(dims: &[i64]) -> i64 {
    dims.iter().fold(1i64, |p, &d| p.saturating_mul(d))
}

fn dims_text(dims: &[i64]) -> String {
    dims.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl LaunchDirectives {
    /// The block shape as three axes (`.reqntid`, else `.maxntid`, padded
    /// with 1), or `None` when neither is set.
    pub fn block_dims(&self) -> Option<[i64; 3]> {
        let d = self.reqntid.as_ref().or(self.maxntid.as_ref())?;
        Some([
            d.first().copied().unwrap_or(1),
            d.get(1).copied().unwrap_or(1),
            d.get(2).copied().unwrap_or(1),
        ])
    }

    /// Every rule these directives break for `gpu`, in directive order;
    /// empty when they may be printed.
    pub fn verify(&self, gpu: Gpu) -> Vec<DirectiveError> {
        let mut errs = Vec::new();
        let mut err = |m: String| errs.push(DirectiveError(m));
        if self.maxntid.is_some() && self.reqntid.is_some() {
            err(".maxntid and .reqntid cannot both be specified".into());
        }
        for (name, dims) in [(".maxntid", &self.maxntid), (".reqntid", &self.reqntid)] {
            let Some(dims) = dims else { continue };
            if dims.is_empty() || dims.len() > 3 {
                err(format!(
                    "{name} takes 1 to 3 dimensions, got {}",
                    dims.len()
                ));
                continue;
            }
            if let Some(d) = dims.iter().find(|&&d| d <= 0 || d > i32::MAX as i64) {
                err(format!(
                    "{name} dimensions must be positive i32 values, got {d}"
                ));
                continue;
            }
            if dims.get(2).is_some_and(|&z| z > MAX_THREADS_Z) {
                err(format!(
                    "{name} {}: at most {MAX_THREADS_Z} threads along z",
                    dims_text(dims)
                ));
            }
            if product(dims) > MAX_THREADS_PER_CTA {
                err(format!(
                    "{name} {}: {} threads exceed the limit of {MAX_THREADS_PER_CTA} per block",
                    dims_text(dims),
                    product(dims)
                ));
            }
        }
        let bounded = self.maxntid.is_some() || self.reqntid.is_some();
        if let Some(n) = self.maxnctapersm {
            err(format!(
                ".maxnctapersm {n} is deprecated since PTX 2.1 and rejected by ptxas; use .minnctapersm"
            ));
            if !bounded {
                err(".maxnctapersm needs launch bounds (.maxntid or .reqntid)".into());
            }
        }
        if let Some(n) = self.minnctapersm {
            let max = max_ctas_per_sm(gpu);
            if !bounded {
                err(".minnctapersm needs launch bounds (.maxntid or .reqntid)".into());
            }
            if n <= 0 || n > max {
                err(format!(
                    ".minnctapersm {n} is out of range: {gpu} keeps 1 to {max} CTAs on one SM"
                ));
            } else if let Some(dims) = self.block_dims() {
                let threads = product(&dims);
                let limit = max_threads_per_sm(gpu);
                if threads > 0 && n.saturating_mul(threads) > limit {
                    err(format!(
                        ".minnctapersm {n} with {threads} threads per block needs {} threads on one SM, more than the {limit} of {gpu}",
                        n.saturating_mul(threads)
                    ));
                }
            }
        }
        if let Some(n) = self.maxnreg {
            if !(MIN_MAXNREG..=MAX_MAXNREG).contains(&n) {
                err(format!(
                    ".maxnreg {n} is out of range: {MIN_MAXNREG} to {MAX_MAXNREG} registers per thread"
                ));
            }
        }
        if self.blocksareclusters && (self.reqntid.is_none() || self.reqnctapercluster.is_none()) {
            err(".blocksareclusters needs both .reqntid and .reqnctapercluster".into());
        }
        if let Some(dims) = &self.reqnctapercluster {
            if dims.len() != 3 {
                err(format!(
                    ".reqnctapercluster takes exactly 3 dimensions, got {}",
                    dims.len()
                ));
            } else if let Some(d) = dims.iter().find(|&&d| d <= 0 || d > i32::MAX as i64) {
                err(format!(
                    ".reqnctapercluster dimensions must be positive i32 values, got {d}"
                ));
            } else if product(dims) > MAX_CLUSTER_CTAS {
                err(format!(
                    ".reqnctapercluster {}: {} CTAs exceed the limit of {MAX_CLUSTER_CTAS} per cluster",
                    dims_text(dims),
                    product(dims)
                ));
            }
            if self.maxclusterrank.is_some() {
                err(".reqnctapercluster and .maxclusterrank cannot both be specified".into());
            }
        }
        if let Some(n) = self.maxclusterrank {
            if !(1..=MAX_CLUSTER_CTAS).contains(&n) {
                err(format!(
                    ".maxclusterrank {n} is out of range: 1 to {MAX_CLUSTER_CTAS} CTAs per cluster"
                ));
            }
        }
        errs
    }

    /// Makes sure at most one of `.maxntid` and `.reqntid` remains: when
    /// both are set, `.reqntid` stays if `bound` is [`ThreadBound::Exact`]
    /// (the generated code depends on the exact count), else `.maxntid`
    /// stays. Returns the remark text describing the choice when one was
    /// made.
    pub fn normalize(&mut self, bound: ThreadBound) -> Option<String> {
        let (Some(max), Some(req)) = (&self.maxntid, &self.reqntid) else {
            return None;
        };
        let (max, req) = (dims_text(max), dims_text(req));
        Some(match bound {
            ThreadBound::Exact => {
                self.maxntid = None;
                format!(
                    "emitting .reqntid {req} and dropping .maxntid {max}: the generated code depends on the exact thread count"
                )
            }
            ThreadBound::Max => {
                self.reqntid = None;
                format!(
                    "emitting .maxntid {max} and dropping .reqntid {req}: the generated code works with any thread count up to the bound"
                )
            }
        })
    }

    /// The directives `gpu` gets: the cluster group is dropped wholesale
    /// before sm_90, where ptxas rejects it.
    pub fn for_target(mut self, gpu: Gpu) -> LaunchDirectives {
        if !has_clusters(gpu) {
            self.blocksareclusters = false;
            self.explicitcluster = false;
            self.reqnctapercluster = None;
            self.maxclusterrank = None;
        }
        self
    }

    /// Prints every directive set, one per line, in the fixed order. Use
    /// [`LaunchDirectives::for_target`] (or [`LaunchDirectives::to_text`])
    /// first to drop what the target cannot take.
    pub fn write(&self, out: &mut impl Write) -> fmt::Result {
        if let Some(d) = &self.maxntid {
            writeln!(out, ".maxntid {}", dims_text(d))?;
        }
        if let Some(d) = &self.reqntid {
            writeln!(out, ".reqntid {}", dims_text(d))?;
        }
        if let Some(n) = self.minnctapersm {
            writeln!(out, ".minnctapersm {n}")?;
        }
        if let Some(n) = self.maxnreg {
            writeln!(out, ".maxnreg {n}")?;
        }
        if self.blocksareclusters {
            writeln!(out, ".blocksareclusters")?;
        }
        if self.explicitcluster {
            writeln!(out, ".explicitcluster")?;
        }
        if let Some(d) = &self.reqnctapercluster {
            writeln!(out, ".reqnctapercluster {}", dims_text(d))?;
        }
        if let Some(n) = self.maxclusterrank {
            writeln!(out, ".maxclusterrank {n}")?;
        }
        Ok(())
    }

    /// The directives as text for `gpu`, the cluster group suppressed
    /// before sm_90.
    pub fn to_text(&self, gpu: Gpu) -> String {
        let mut s = String::new();
        let _ = self.clone().for_target(gpu).write(&mut s);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_in_fixed_order_and_gates_clusters() {
        let d = LaunchDirectives {
            reqntid: Some(vec![256]),
            minnctapersm: Some(1),
            maxnreg: Some(128),
            blocksareclusters: true,
            explicitcluster: true,
            reqnctapercluster: Some(vec![2, 1, 1]),
            ..Default::default()
        };
        assert!(d.verify(Gpu::Sm90).is_empty());
        assert_eq!(
            d.to_text(Gpu::Sm90),
            ".reqntid 256\n.minnctapersm 1\n.maxnreg 128\n.blocksareclusters\n.explicitcluster\n.reqnctapercluster 2, 1, 1\n"
        );
        assert_eq!(
            d.to_text(Gpu::Sm80),
            ".reqntid 256\n.minnctapersm 1\n.maxnreg 128\n"
        );
    }

    #[test]
    fn normalization_keeps_one_bound() {
        let both = LaunchDirectives {
            maxntid: Some(vec![256]),
            reqntid: Some(vec![128]),
            ..Default::default()
        };
        let mut d = both.clone();
        let remark = d.normalize(ThreadBound::Exact).unwrap();
        assert!(remark.contains(".reqntid 128"), "{remark}");
        assert_eq!((&d.maxntid, &d.reqntid), (&None, &Some(vec![128])));
        let mut d = both;
        assert!(d
            .normalize(ThreadBound::Max)
            .unwrap()
            .contains(".maxntid 256"));
        assert_eq!((&d.maxntid, &d.reqntid), (&Some(vec![256]), &None));
        assert_eq!(d.normalize(ThreadBound::Max), None);
    }
}
