//! Attribute rules: rounding modes and their modifiers, flush-to-zero,
//! memory ordering and scope of loads, stores and atomics, atomic modes.
use super::*;

pub(super) fn ieee_rounding(op: &Op) -> Check {
    let r = enum_attr(op, "rounding_mode", EnumKind::RoundingMode).unwrap_or(RM_NEAREST_EVEN);
    if r > RM_POSITIVE_INF {
        return Err(op_err(
            "invalid rounding mode specified, expect one of [nearest_even, zero, negative_inf, positive_inf]",
        ));
    }
    Ok(())
}

pub(super) fn ftz(m: &Module, op: &Op) -> Check {
    if op.has_flag("flush_to_zero") {
        let s = result_scalar(m, op);
        if s != Some(Scalar::F32) {
            return Err(op_err(format!(
                "flush_to_zero modifier only supported for f32 data type, but got: '{}'",
                scalar_name(s)
            )));
        }
    }
    Ok(())
}

pub(super) fn approx_f32(m: &Module, op: &Op, approx: bool) -> Check {
    let s = result_scalar(m, op);
    if approx && s != Some(Scalar::F32) {
        return Err(op_err(format!(
            "approx modifier only supported for f32 data type, but got: '{}'",
            scalar_name(s)
        )));
    }
    Ok(())
}

pub(super) fn div_sqrt_modifiers(m: &Module, op: &Op, approx: bool, full: bool) -> Check {
    let s = result_scalar(m, op);
    let is_f32 = s == Some(Scalar::F32);
    if op.has_flag("flush_to_zero") && !is_f32 {
        return Err(op_err(format!(
            "flush_to_zero modifier only supported for f32 data type, but got: '{}'",
            scalar_name(s)
        )));
    }
    if approx && !is_f32 {
        return Err(op_err(format!(
            "approx modifier only supported for f32 data type, but got: '{}'",
            scalar_name(s)
        )));
    }
    if full && !is_f32 {
        return Err(op_err(format!(
            "full modifier only supported for f32 data type, but got: '{}'",
            scalar_name(s)
        )));
    }
    Ok(())
}

pub(super) fn memory_load(op: &Op) -> Check {
    memory_access(op, "load", MO_ACQUIRE, "acquire")
}

pub(super) fn memory_store(op: &Op) -> Check {
    memory_access(op, "store", MO_RELEASE, "release")
}

pub(super) fn memory_access(op: &Op, what: &str, third: u8, third_name: &str) -> Check {
    let ord =
        enum_attr(op, "memory_ordering_semantics", EnumKind::MemoryOrdering).unwrap_or(MO_WEAK);
    if ord != MO_WEAK && ord != MO_RELAXED && ord != third {
        return Err(op_err(format!(
            "expect one of: weak, relaxed, or {third_name}, but got: {}",
            kw(EnumKind::MemoryOrdering, ord)
        )));
    }
    let scope = enum_attr(op, "memory_scope", EnumKind::MemoryScope);
    if ord == MO_WEAK {
        if scope.is_some() {
            return Err(op_err(format!("weak {what} must not have memory scope")));
        }
    } else if scope.is_none() {
        return Err(op_err(format!(
            "memory scope is required for {} {what}",
            kw(EnumKind::MemoryOrdering, ord)
        )));
    }
    Ok(())
}

pub(super) fn atomic_ordering(op: &Op) -> Check {
    let ord =
        enum_attr(op, "memory_ordering_semantics", EnumKind::MemoryOrdering).unwrap_or(MO_WEAK);
    if ord == MO_WEAK {
        return Err(op_err(
            "memory ordering semantics must be one of: relaxed, acquire, release, acq_rel",
        ));
    }
    Ok(())
}

pub(super) fn rmw_mode(mode: u8, elem: Option<Scalar>) -> Check {
    let name = kw(EnumKind::AtomicRmwMode, mode);
    match mode {
        RMW_ADDF => {
            if !matches!(
                elem,
                Some(Scalar::F16 | Scalar::BF16 | Scalar::F32 | Scalar::F64)
            ) {
                return Err(op_err(format!(
                    "'{name}' works only with floats f16, bf16, f32, and f64"
                )));
            }
        }
        RMW_XCHG => {
            let w = elem.map(|e| e.bit_width());
            if w != Some(32) && w != Some(64) {
                return Err(op_err(format!(
                    "'{name}' works only with integers or float of 32 or 64 bitwidth"
                )));
            }
        }
        _ => {
            if !matches!(elem, Some(Scalar::I32 | Scalar::I64)) {
                return Err(op_err(format!(
                    "'{name}' works only with integers i32 and i64"
                )));
            }
        }
    }
    Ok(())
}

/// A float type's precision (significand bits, the implicit one included)
/// and smallest and largest normal exponents, as MLIR's float semantics
/// give them.
fn semantics(s: Scalar) -> Option<(u32, i32, i32)> {
    Some(match s {
        Scalar::F16 => (11, -14, 15),
        Scalar::BF16 => (8, -126, 127),
        Scalar::F32 => (24, -126, 127),
        Scalar::TF32 => (11, -126, 127),
        Scalar::F64 => (53, -1022, 1023),
        Scalar::F8E4M3FN => (4, -6, 8),
        Scalar::F8E5M2 => (3, -14, 15),
        Scalar::F8E8M0FNU => (1, -127, 127),
        Scalar::F4E2M1FN => (2, 0, 2),
        Scalar::F8E5M3FNU => (4, -14, 16),
        _ => return None,
    })
}

/// Whether `ftof` from `from` to `to` widens: every value of `from` is one
/// of `to` (MLIR's `isRepresentableBy`; f8E8M0FNU's `2^-127` is below
/// f32's normal range, f8E5M3FNU's `2^16` above f16's).
fn representable(from: Scalar, to: Scalar) -> bool {
    match (semantics(from), semantics(to)) {
        (Some((p, lo, hi)), Some((q, to_lo, to_hi))) => p <= q && lo >= to_lo && hi <= to_hi,
        _ => to.bit_width() > from.bit_width(),
    }
}

/// The rounding modes `ftof` allows, by conversion kind.
pub(super) fn ftof_rounding(from: Scalar, to: Scalar, r: u8) -> Check {
    const NEAREST_AWAY: u8 = 7;
    let low_precision = matches!(
        to,
        Scalar::F8E4M3FN | Scalar::F8E5M2 | Scalar::F4E2M1FN | Scalar::F8E5M3FNU
    );
    if to == Scalar::F8E8M0FNU {
        if r != RM_ZERO && r != RM_POSITIVE_INF {
            return Err(op_err("invalid rounding mode specified for conversion to f8E8M0FNU. Only 'zero' and 'positive_inf' are supported"));
        }
    } else if low_precision {
        if r != RM_NEAREST_EVEN {
            return Err(op_err("invalid rounding mode specified for conversion to low-precision type. Only 'nearest_even' is supported"));
        }
    } else if representable(from, to) {
        if !matches!(r, RM_NEAREST_EVEN..=RM_POSITIVE_INF | NEAREST_AWAY) {
            return Err(op_err("invalid rounding mode specified for widening conversion. Only IEEE float rounding modes are supported: 'nearest_even', 'zero', 'negative_inf', 'positive_inf', 'nearest_away'"));
        }
    } else if from == Scalar::F64 && to == Scalar::F32 {
        if r > RM_POSITIVE_INF {
            return Err(op_err("invalid rounding mode specified for conversion from f64 to f32. Only 'nearest_even', 'zero', 'negative_inf', and 'positive_inf' are supported"));
        }
    } else if from == Scalar::F32 && to == Scalar::TF32 {
        if !matches!(r, RM_NEAREST_EVEN | RM_ZERO | NEAREST_AWAY) {
            return Err(op_err("invalid rounding mode specified for conversion from f32 to tf32. Only 'nearest_even', 'zero', and 'nearest_away' are supported"));
        }
    } else if r != RM_NEAREST_EVEN && r != RM_ZERO {
        return Err(op_err("invalid rounding mode specified. Only 'nearest_even' and 'zero' are supported for narrowing conversions to standard types"));
    }
    Ok(())
}
