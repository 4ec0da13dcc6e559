//! The hardware's 128-byte tensor map (`CUtensorMap`), as NVIDIA's host
//! callbacks write it for sm_90, sm_100 and sm_120. The layout was learned by
//! running those callbacks over arrays of every rank, element type and
//! box that cuTile's loads produce (tests/tensor_map.rs checks every field
//! against the arguments the map was built from). Bits never seen set are
//! not guessed at: a map with any of them set is refused.
//!
//! | bytes | bits | field |
//! |---|---|---|
//! | 0..8 | | global address (16-byte aligned; bits 0..3 zero) |
//! | 8..12 | 0..3 | 2 in every map seen |
//! | | 4..6 | rank − 1 |
//! | | 7..10 | element type ([`HwElem`]) |
//! | | 13..14 | swizzle: 0 none, 1 32 B, 2 64 B, 3 128 B |
//! | | 16 | round f32 to tf32 |
//! | | 18 | 1 in every map seen |
//! | | 19 | with swizzle 3: 128 B with 32-byte atoms (sm_100's maps of tf32 operands read MN-major) |
//! | | 21 | set by NVIDIA's callbacks where the array spans at least 128 KiB (L2 promotion) |
//! | 12..28 | | strides of dims 1..4 in bytes, divided by 16 (u32 each) |
//! | 32..52 | | dims 0..4 minus one (u32 each, innermost first) |
//! | 55 | | box dim 0 minus one |
//! | 56..60 | | box dims 1..4 minus one (a byte each) |
//!
//! Not learnable from those callbacks, so not decoded: interleave,
//! element strides (always 1 in cuTile's maps) and the out-of-bounds fill
//! (NVIDIA's tileiras uses TMA only for zero or undetermined padding, never
//! for NaN fill), see docs/nv-host-callbacks.md.

use crate::TensorMap;

/// The element types the hardware map encodes (bits 7..10 of word 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HwElem {
    /// 8-bit (integers and f8 alike): code 0.
    B8,
    /// 16-bit integers: code 1.
    B16,
    /// 32-bit integers: code 2.
    B32,
    /// 64-bit integers: code 4.
    B64,
    /// f16: code 6.
    F16,
    /// f32: code 7 (with bit 16: tf32).
    F32,
    /// f64: code 9.
    F64,
    /// bf16: code 10.
    BF16,
}

impl HwElem {
    /// The type of code `c`, if one seen.
    fn of(c: u32) -> Option<HwElem> {
        Some(match c {
            0 => HwElem::B8,
            1 => HwElem::B16,
            2 => HwElem::B32,
            4 => HwElem::B64,
            6 => HwElem::F16,
            7 => HwElem::F32,
            9 => HwElem::F64,
            10 => HwElem::BF16,
            _ => return None,
        })
    }

    /// Its size in bytes.
    pub fn size(self) -> u32 {
        match self {
            HwElem::B8 => 1,
            HwElem::B16 | HwElem::F16 | HwElem::BF16 => 2,
            HwElem::B32 | HwElem::F32 => 4,
            HwElem::B64 | HwElem::F64 => 8,
        }
    }
}

/// A decoded hardware tensor map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HwTensorMap {
    /// Global address.
    pub base: u64,
    /// Element type.
    pub elem: HwElem,
    /// Whether f32 elements are rounded to tf32.
    pub tf32: bool,
    /// Global dims, innermost first.
    pub dims: Vec<u32>,
    /// Global strides in bytes of dims 1.., innermost first.
    pub strides: Vec<u64>,
    /// Box dims in elements, innermost first.
    pub box_dims: Vec<u32>,
    /// Swizzle: 0 none, 1 32 B, 2 64 B, 3 128 B, 4 128 B with 32-byte
    /// atoms (bit 19 with swizzle 3), as [`TensorMap::swizzle`].
    pub swizzle: u32,
    /// Bit 21 (L2 promotion, set for arrays of at least 128 KiB).
    pub l2_promotion: bool,
}

/// Bits of word 1's low half that are decoded or constant.
const KNOWN_FLAGS: u32 = 0xf | 0x70 | 0x780 | 0x6000 | 1 << 16 | 1 << 18 | 1 << 19 | 1 << 21;

impl HwTensorMap {
    /// Decodes 128 bytes; `Err` says what is not a tensor map as seen.
    pub fn decode(b: &[u8]) -> Result<HwTensorMap, String> {
        if b.len() < 128 {
            return Err(format!("{} bytes, not 128", b.len()));
        }
        let u32at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let base = u64::from_le_bytes(b[0..8].try_into().unwrap());
        let flags = u32at(8);
        if flags & 0xf != 2 || flags & (1 << 18) == 0 {
            return Err(format!("flags {flags:#x}: not a hardware tensor map"));
        }
        if flags & !KNOWN_FLAGS != 0 {
            return Err(format!(
                "flags {flags:#x}: bits {:#x} never seen",
                flags & !KNOWN_FLAGS
            ));
        }
        if base & 0xf != 0 {
            return Err(format!("address {base:#x} not 16-byte aligned"));
        }
        let rank = ((flags >> 4) & 7) as usize + 1;
        if rank > 5 {
            return Err(format!("rank {rank}"));
        }
        let elem = HwElem::of((flags >> 7) & 0xf)
            .ok_or_else(|| format!("element type code {}", (flags >> 7) & 0xf))?;
        let dims: Vec<u32> = (0..rank)
            .map(|i| u32at(32 + 4 * i).wrapping_add(1))
            .collect();
        let strides: Vec<u64> = (1..rank)
            .map(|i| u64::from(u32at(8 + 4 * i)) << 4)
            .collect();
        let mut box_dims = vec![u32::from(b[55]) + 1];
        box_dims.extend((1..rank).map(|i| u32::from(b[55 + i]) + 1));
        // every byte not decoded must be zero
        let mut used = [false; 128];
        used[..12].fill(true);
        used[12..12 + 4 * (rank - 1)].fill(true);
        used[32..32 + 4 * rank].fill(true);
        used[55..55 + rank].fill(true);
        if let Some(i) = (0..128).find(|&i| !used[i] && b[i] != 0) {
            return Err(format!("byte {i} is {:#x}, never seen set", b[i]));
        }
        Ok(HwTensorMap {
            base,
            elem,
            tf32: flags & (1 << 16) != 0,
            dims,
            strides,
            box_dims,
            swizzle: match ((flags >> 13) & 3, flags & (1 << 19) != 0) {
                (s, false) => s,
                (3, true) => 4,
                (s, true) => return Err(format!("flags {flags:#x}: bit 19 with swizzle {s}")),
            },
            l2_promotion: flags & (1 << 21) != 0,
        })
    }

    /// The emulator's own description of the same copy.
    pub fn to_tensor_map(&self) -> TensorMap {
        let es = self.elem.size();
        let mut strides = vec![u64::from(es)];
        strides.extend(&self.strides);
        TensorMap {
            base: self.base,
            elem_size: es,
            dims: self.dims.clone(),
            strides,
            box_dims: self.box_dims.clone(),
            swizzle: self.swizzle,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The descriptor NVIDIA's sm_90 callback wrote for cuTile's matmul A
    /// operand (f16, 1000 x 512, row stride 512, box 128 x 64).
    const MATMUL_A: [u64; 8] = [
        0x7f00_1234_5670,
        0x0000_0040_0024_6312,
        0,
        0,
        0x0000_03e7_0000_01ff,
        0,
        0x3f00_0000_0000_0000,
        0x7f,
    ];

    fn bytes(words: &[u64]) -> Vec<u8> {
        let mut b: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        b.resize(128, 0);
        b
    }

    #[test]
    fn decodes_a_matmul_operand() {
        let m = HwTensorMap::decode(&bytes(&MATMUL_A)).unwrap();
        assert_eq!(m.base, 0x7f00_1234_5670);
        assert_eq!(m.elem, HwElem::F16);
        assert_eq!(m.dims, [512, 1000]);
        assert_eq!(m.strides, [1024]);
        assert_eq!(m.box_dims, [64, 128]);
        assert_eq!(m.swizzle, 3);
        assert!(m.l2_promotion && !m.tf32);
        let t = m.to_tensor_map();
        assert_eq!(t.strides, [2, 1024]);
        assert_eq!(t.check(), None);
    }

    #[test]
    fn refuses_bits_never_seen() {
        for (byte, bit) in [(9, 0x10), (10, 0x02), (100, 1), (60, 1)] {
            let mut b = bytes(&MATMUL_A);
            b[byte] |= bit;
            assert!(HwTensorMap::decode(&b).is_err(), "byte {byte} bit {bit:#x}");
        }
        assert!(HwTensorMap::decode(b"EMUTMAP\0").is_err());
        // bit 19 turns the 128-byte swizzle into its 32-byte-atom form; with
        // another swizzle it was never seen
        let mut b = bytes(&MATMUL_A);
        b[10] |= 0x08;
        assert_eq!(HwTensorMap::decode(&b).unwrap().swizzle, 4);
        b[9] &= !0x20;
        assert!(HwTensorMap::decode(&b).is_err());
        let mut own = TensorMap::default().encode();
        own[0..8].copy_from_slice(b"EMUTMAP\0");
        assert!(HwTensorMap::decode(&own).is_err());
    }
}
