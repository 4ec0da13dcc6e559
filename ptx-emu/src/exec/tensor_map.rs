//! The emulator's own tensor-map encoding (the hardware's is `hw_tensor_map`).

/// The emulator's own 128-byte tensor-map encoding (all little-endian):
///
/// | bytes | field |
/// |---|---|
/// | 0..8 | magic `b"EMUTMAP\0"` |
/// | 8..16 | global base address |
/// | 16..20 | rank (1..5) |
/// | 20..24 | element size in bytes |
/// | 24..44 | global dims (u32 x5, innermost first) |
/// | 48..88 | global strides in bytes (u64 x5; stride of dim 0 is the element size) |
/// | 88..108 | box dims (u32 x5, innermost first) |
/// | 108..112 | swizzle: 0 none, 1 = 32B, 2 = 64B, 3 = 128B, 4 = 128B with 32-byte atoms |
///
/// Out-of-bounds box elements are filled with zero. The box is written to
/// shared memory densely, innermost dimension fastest, then swizzled: within
/// byte offset bits `[4, 4+log2(swz/16))` are XORed with bits `[7, ...)` (the
/// CU_TENSOR_MAP_SWIZZLE_32B/64B/128B patterns; the box is assumed 1024-byte aligned);
/// 128B with 32-byte atoms XORs bits `[5, 7)` with bits `[7, 9)`.
/// A `cp.async.bulk.tensor` reads the hardware's format too ([`crate::HwTensorMap`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TensorMap {
    /// Global base address.
    pub base: u64,
    /// Element size in bytes.
    pub elem_size: u32,
    /// Global dims, innermost first.
    pub dims: Vec<u32>,
    /// Global strides in bytes, innermost first (first is the element size).
    pub strides: Vec<u64>,
    /// Box dims, innermost first.
    pub box_dims: Vec<u32>,
    /// Swizzle mode: 0 none, 1 32B, 2 64B, 3 128B, 4 128B with 32-byte atoms.
    pub swizzle: u32,
}

impl TensorMap {
    /// Encodes into the 128-byte parameter format.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; 128];
        b[0..8].copy_from_slice(b"EMUTMAP\0");
        b[8..16].copy_from_slice(&self.base.to_le_bytes());
        b[16..20].copy_from_slice(&(self.dims.len() as u32).to_le_bytes());
        b[20..24].copy_from_slice(&self.elem_size.to_le_bytes());
        for i in 0..self.dims.len() {
            b[24 + 4 * i..28 + 4 * i].copy_from_slice(&self.dims[i].to_le_bytes());
            b[48 + 8 * i..56 + 8 * i].copy_from_slice(&self.strides[i].to_le_bytes());
            b[88 + 4 * i..92 + 4 * i].copy_from_slice(&self.box_dims[i].to_le_bytes());
        }
        b[108..112].copy_from_slice(&self.swizzle.to_le_bytes());
        b
    }
    /// Checks the constraints the hardware puts on a tensor map; returns the
    /// first violation.
    pub fn check(&self) -> Option<String> {
        let r = self.dims.len();
        if !(1..=5).contains(&r) || self.strides.len() != r || self.box_dims.len() != r {
            return Some("rank must be 1..5 with as many strides and box dims".into());
        }
        if !matches!(self.elem_size, 1 | 2 | 4 | 8) {
            return Some(format!("element size {}", self.elem_size));
        }
        if !self.base.is_multiple_of(16) {
            return Some(format!("base address {:#x} not 16-byte aligned", self.base));
        }
        if self.strides.iter().skip(1).any(|s| s % 16 != 0) {
            return Some("global strides must be multiples of 16 bytes".into());
        }
        if self.box_dims.iter().any(|b| *b == 0 || *b > 256) {
            return Some("box dims must be in 1..=256".into());
        }
        let inner = self.box_dims[0] as u64 * self.elem_size as u64;
        if !inner.is_multiple_of(16) {
            return Some(format!(
                "inner box dimension is {inner} bytes, not a multiple of 16"
            ));
        }
        let span = match self.swizzle {
            0 => u64::MAX,
            1 => 32,
            2 => 64,
            3 | 4 => 128,
            s => return Some(format!("swizzle mode {s}")),
        };
        if inner > span {
            return Some(format!(
                "inner box dimension ({inner} bytes) exceeds the swizzle span ({span} bytes)"
            ));
        }
        None
    }

    /// Decodes from the 128-byte format.
    pub fn decode(b: &[u8]) -> Option<TensorMap> {
        if b.len() < 128 || &b[0..8] != b"EMUTMAP\0" {
            return None;
        }
        let u32at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let u64at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
        let rank = u32at(16) as usize;
        if !(1..=5).contains(&rank) {
            return None;
        }
        Some(TensorMap {
            base: u64at(8),
            elem_size: u32at(20),
            dims: (0..rank).map(|i| u32at(24 + 4 * i)).collect(),
            strides: (0..rank).map(|i| u64at(48 + 8 * i)).collect(),
            box_dims: (0..rank).map(|i| u32at(88 + 4 * i)).collect(),
            swizzle: u32at(108),
        })
    }
}
