//! Per-target facts the lowering consults.
use crate::options::Gpu;

/// What lowering needs to know about the target GPU.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// The GPU.
    pub gpu: Gpu,
}

impl Target {
    /// Facts for `gpu`.
    pub fn new(gpu: Gpu) -> Target {
        Target { gpu }
    }

    /// Warps per tile block for elementwise and shape kernels (one
    /// warpgroup, as NVIDIA's tileiras uses).
    pub fn elementwise_warps(self) -> u32 {
        4
    }

    /// Whether `bf16` add/sub/mul/fma/min/max exist natively (sm_90+).
    pub fn has_bf16_arith(self) -> bool {
        self.gpu.capability() >= 90
    }

    /// Whether thread-block clusters exist (sm_90+): the tile-block id is
    /// then `%clusterid`, as NVIDIA emits, else `%ctaid`.
    pub fn has_clusters(self) -> bool {
        self.gpu.capability() >= 90
    }

    /// Widest global access in bytes (128-bit vector loads and stores).
    pub fn max_access_bytes(self) -> u32 {
        16
    }
}
