//! The byte offsets a tensor-view access folds into immediates from the
//! view's static strides: strides come from the input and may be any 64-bit
//! value, so their products are checked here, once per access, before
//! `view_access::element` adds them up per element.
#![deny(clippy::arithmetic_side_effects)]
use crate::ir::OpId;
use crate::lower::analysis::view::Extent;
use crate::lower::emit::context::Lowerer;
use crate::lower::error::LowerError;

/// Checks that the byte offsets `view_access::element` folds from static
/// strides fit 64 bits: a coordinate `c` of dimension `i` is below
/// `shape[i]`, its offset `c * stride * esize`, and the offsets of all
/// dimensions add up.
/// A stride from the input large enough to overflow is a located error
/// rather than a wrapped immediate.
pub(super) fn fit(
    l: &Lowerer,
    op: OpId,
    shape: &[i64],
    stride: &[Extent],
    esize: i64,
) -> Result<(), LowerError> {
    let mut total = Some(0i64);
    for (&n, s) in shape.iter().zip(stride) {
        let Extent::Static(s) = *s else { continue };
        let bytes = s.checked_mul(esize);
        let span = n
            .checked_sub(1)
            .and_then(|c| bytes.and_then(|b| b.checked_mul(c)))
            .and_then(i64::checked_abs);
        total = match (total, span) {
            (Some(t), Some(d)) => t.checked_add(d),
            _ => None,
        };
    }
    match total {
        Some(_) => Ok(()),
        None => Err(LowerError::TooLarge {
            message: format!(
                "'{}' op: the byte offsets of its tile's elements, from static strides [{}] \
                 of {esize}-byte elements, overflow 64 bits",
                l.m.ops[op].name(),
                stride
                    .iter()
                    .map(|s| match s {
                        Extent::Static(n) => n.to_string(),
                        Extent::Dynamic(_) => "?".into(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            location: l.m.location(op),
        }),
    }
}
