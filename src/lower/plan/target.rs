//! Per-target facts the lowering consults.
use crate::options::Gpu;

/// sm_90's shared memory per tile block, 227 KiB (ptxas runs with
/// `--enable-extended-smem=true` as NVIDIA's tileiras does); other targets'
/// caps are [`crate::lower::plan::target::Target::max_shared_bytes`].
pub const MAX_SHARED_BYTES: i64 = 227 * 1024;

/// What lowering needs to know about the target GPU.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// The GPU.
    pub gpu: Gpu,
    /// Whether the shared-memory cap is lifted (`TILE_AS_DEBUG_UNLIMITED_SMEM`).
    pub unlimited_smem: bool,
    /// Whether `mma.sync` operand buffers are swizzled rather than padded
    /// (`TILEIR_ALWAYS_SWIZZLE`).
    pub always_swizzle: bool,
    /// Whether the plan may copy with TMA (`TILEIRAS_NO_TMA` unset).
    pub tma: bool,
}

impl Target {
    /// Facts for `gpu`.
    pub fn new(gpu: Gpu) -> Target {
        Target {
            gpu,
            unlimited_smem: false,
            always_swizzle: false,
            tma: false,
        }
    }

    /// The most shared memory one tile block may use, in bytes: what a CTA
    /// of the GPU can have (sm_80/sm_87 163 KiB, sm_86/sm_88/sm_89/sm_12x 99 KiB,
    /// sm_90/sm_10x/sm_110 227 KiB, NVIDIA's cap), unless the cap is lifted.
    pub fn max_shared_bytes(self) -> i64 {
        if self.unlimited_smem {
            return i64::from(i32::MAX);
        }
        match self.gpu.capability() {
            80 | 87 => 163 * 1024,
            86 | 88 | 89 | 120 | 121 => 99 * 1024,
            _ => 227 * 1024,
        }
    }

    /// Whether the GPU is a consumer Blackwell (sm_120, sm_121), where
    /// ptxas allocates the attention loops' registers tighter.
    pub fn is_sm12x(self) -> bool {
        matches!(self.gpu, Gpu::Sm120 | Gpu::Sm121)
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

    /// Whether `cvt` converts f4E2M1FN pairs (`e2m1x2`) in hardware: the
    /// architecture-specific targets from sm_100a on.
    pub fn has_e2m1_cvt(self) -> bool {
        self.gpu.capability() >= 100
    }

    /// Widest global access in bytes (128-bit vector loads and stores).
    pub fn max_access_bytes(self) -> u32 {
        16
    }
}

#[cfg(test)]
mod tests {
    use crate::lower::plan::target::*;

    #[test]
    fn shared_memory_caps_follow_the_gpu() {
        assert_eq!(Target::new(Gpu::Sm80).max_shared_bytes(), 166_912);
        assert_eq!(Target::new(Gpu::Sm86).max_shared_bytes(), 101_376);
        assert_eq!(Target::new(Gpu::Sm90).max_shared_bytes(), 232_448);
        assert_eq!(Target::new(Gpu::Sm120).max_shared_bytes(), 101_376);
        let unlimited = Target {
            unlimited_smem: true,
            ..Target::new(Gpu::Sm86)
        };
        assert!(unlimited.max_shared_bytes() > 1 << 30);
    }
}
