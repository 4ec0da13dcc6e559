//! Kernel parameter space: where each `.param` of an entry lies, as ptxas
//! lays it out (in declaration order, each at the next multiple of its
//! alignment), and the limit ptxas enforces on the total.
use super::func::{Param, ParamTy};

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

/// Lays out `params` the way ptxas does. Offsets saturate instead of
/// overflowing, so an absurd parameter list still yields a size above
/// [`MAX_PARAM_BYTES`].
pub fn layout(params: &[Param]) -> ParamLayout {
    let mut end = 0u32;
    let mut slots = Vec::with_capacity(params.len());
    for p in params {
        let (size, align) = size_align(p.ty);
        let offset = end.div_ceil(align).saturating_mul(align);
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
        let l = layout(&[
            p("a", ParamTy::Scalar(Ty::U32)),
            p("b", ParamTy::GlobalPtr),
            p("c", ParamTy::Scalar(Ty::U8)),
            p("d", ParamTy::Scalar(Ty::B16)),
            p("e", ParamTy::Scalar(Ty::F64)),
        ]);
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
        let l = layout(&params);
        assert_eq!(l.size, 32768);
        assert_eq!(
            check(&l).unwrap(),
            "Formal parameter space overflowed (32768 bytes required, max 32764 bytes allowed)"
        );
    }
}
