//! Kernel parameter space: where each `.param` of an entry lies, as ptxas
//! lays it out (in declaration order, each at the next multiple of its
//! alignment counted from where the parameters start in constant bank 0),
//! and the limit ptxas enforces on the total.
use super::func::{Param, ParamTy};
use crate::Gpu;

/// Most bytes of kernel parameters ptxas 13.5 accepts for PTX ISA 8.1 and
/// newer on every supported target (measured: 32765 bytes is rejected with
/// "uses too much parameter space (0x7ffd bytes, 0x7ffc max)").
pub const MAX_PARAM_BYTES: u32 = 32764;

/// One parameter's place in the parameter space.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSlot {
    /// The `.param` name.
    pub name: String,
    /// Byte offset from the start of the parameter space.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// Alignment in bytes.
    pub align: u32,
}

/// The whole parameter space of one entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParamLayout {
    /// Each parameter in declaration order.
    pub slots: Vec<ParamSlot>,
    /// Bytes the parameters span (end of the last one).
    pub size: u32,
}

/// Size and alignment in bytes of a parameter of type `ty`.
pub fn size_align(ty: ParamTy) -> (u32, u32) {
    match ty {
        ParamTy::GlobalPtr => (8, 8),
        ParamTy::TensorMap => (128, 64),
        ParamTy::Scalar(t) => {
            let bytes = t.bits().div_ceil(8).max(1);
            (bytes, bytes)
        }
    }
}

/// Where the parameters start in constant bank 0 on `gpu`: ptxas aligns
/// each parameter relative to it, which only a parameter aligned beyond 16
/// bytes (a tensor map) notices. 0x210 on sm_90; 0 on sm_100 and sm_120
/// and the other targets of their families (measured: the cubin's
/// `EIATTR_PARAM_CBANK`, and NVIDIA's host callbacks, which write each
/// map where ptxas put it; see `docs/nv-host-callbacks.md`). Targets
/// without TMA (sm_8x) have no such parameters.
pub fn bank_offset(gpu: Gpu) -> u32 {
    if gpu.capability() == 90 {
        0x210
    } else {
        0
    }
}

/// Lays out `params` the way ptxas does for `gpu`. Offsets count from the
/// start of the parameters and saturate instead of overflowing, so an
/// absurd parameter list still yields a size above [`MAX_PARAM_BYTES`].
pub fn layout(params: &[Param], gpu: Gpu) -> ParamLayout {
    let bank = bank_offset(gpu);
    let mut end = 0u32;
    let mut slots = Vec::with_capacity(params.len());
    for p in params {
        let (size, align) = size_align(p.ty);
        let offset = bank
            .saturating_add(end)
            .div_ceil(align)
            .saturating_mul(align)
            .saturating_sub(bank);
        end = offset.saturating_add(size);
        slots.push(ParamSlot {
            name: p.name.clone(),
            offset,
            size,
            align,
        });
    }
    ParamLayout { slots, size: end }
}

/// The error ptxas would report for `layout`, worded as NVIDIA's
/// front ends word it, or `None` when it fits.
pub fn check(layout: &ParamLayout) -> Option<String> {
    (layout.size > MAX_PARAM_BYTES).then(|| {
        format!(
            "Formal parameter space overflowed ({} bytes required, max {} bytes allowed)",
            layout.size, MAX_PARAM_BYTES
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::Ty;

    fn p(name: &str, ty: ParamTy) -> Param {
        Param {
            name: name.into(),
            ty,
        }
    }

    #[test]
    fn aligns_each_parameter() {
        let l = layout(
            &[
                p("a", ParamTy::Scalar(Ty::U32)),
                p("b", ParamTy::GlobalPtr),
                p("c", ParamTy::Scalar(Ty::U8)),
                p("d", ParamTy::Scalar(Ty::B16)),
                p("e", ParamTy::Scalar(Ty::F64)),
            ],
            Gpu::Sm90,
        );
        let offsets: Vec<_> = l.slots.iter().map(|s| (s.offset, s.size)).collect();
        assert_eq!(offsets, [(0, 4), (8, 8), (16, 1), (18, 2), (24, 8)]);
        assert_eq!(l.size, 32);
        assert_eq!(check(&l), None);
    }

    #[test]
    fn overflow_is_reported() {
        let params: Vec<_> = (0..4096)
            .map(|i| p(&format!("p{i}"), ParamTy::GlobalPtr))
            .collect();
        let l = layout(&params, Gpu::Sm100);
        assert_eq!(l.size, 32768);
        assert_eq!(
            check(&l).unwrap(),
            "Formal parameter space overflowed (32768 bytes required, max 32764 bytes allowed)"
        );
    }

    #[test]
    fn sm_90_maps_lie_0x30_modulo_64() {
        // cuTile's matmul: three arrays of (pointer, two dims, two strides),
        // then two maps. On sm_90 the parameters start at 0x210 in the bank.
        let mut params = Vec::new();
        for i in 0..3 {
            params.push(p(&format!("a{i}"), ParamTy::GlobalPtr));
            for j in 0..4 {
                params.push(p(&format!("a{i}_{j}"), ParamTy::Scalar(Ty::U32)));
            }
        }
        params.push(p("m0", ParamTy::TensorMap));
        params.push(p("m1", ParamTy::TensorMap));
        let at = |gpu| {
            let l = layout(&params, gpu);
            (l.slots[15].offset, l.slots[16].offset, l.size)
        };
        assert_eq!(at(Gpu::Sm90), (0x70, 0xf0, 368));
        assert_eq!(at(Gpu::Sm100), (0x80, 0x100, 384));
        assert_eq!(at(Gpu::Sm120), (0x80, 0x100, 384));
    }
}
