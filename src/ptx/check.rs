//! Operand range checks: every immediate an instruction carries must fit
//! the operand it is written to, so that the text ptxas reads means what
//! the model means (ptxas silently truncates most oversized integers and
//! rejects a few, such as a barrier number above 15 or a `bfe` position
//! above 255). Lowering checks each instruction as it is built
//! (`simt::Builder::push`) and the whole module before it is printed.
//!
//! The immediates come from the input: this module does no unchecked
//! arithmetic on them.
#![deny(clippy::arithmetic_side_effects)]
use super::inst::{Inst, Opc, Operand, RegClass, Ty};

/// Checks the immediates of `i`: `Err` says which operand does not fit and
/// why, naming the instruction as it would be printed.
pub fn inst(i: &Inst) -> Result<(), String> {
    let fail = |k: usize, v: i64, why: &str| {
        let mut text = String::new();
        let _ = super::Writer::new(&mut text).inst(i);
        // Operands counted from 1 across destinations and sources.
        let n = k.saturating_add(i.dsts.len()).saturating_add(1);
        Err(format!(
            "immediate {v} does not fit operand {n} of `{text}` ({why})"
        ))
    };
    if let Some(n) = vector_width(i) {
        for o in i.dsts.iter().chain(&i.srcs) {
            if let Operand::Vec(v) = o {
                if v.len() != n {
                    let mut text = String::new();
                    let _ = super::Writer::new(&mut text).inst(i);
                    return Err(format!(
                        "a vector of {} registers in `{text}`, which moves {n}",
                        v.len()
                    ));
                }
            }
        }
    }
    for (k, o) in i.srcs.iter().enumerate() {
        match *o {
            Operand::Imm(v) => {
                let (lo, hi, why) = imm_range(i, k);
                if v < lo || v > hi {
                    return fail(k, v, why);
                }
                if i.opc == Opc::Bar && k == 1 && v.rem_euclid(32) != 0 {
                    return fail(k, v, "a thread count not a multiple of 32");
                }
            }
            Operand::Addr(base, off) if base.class != RegClass::B64 => {
                // A 32-bit address (shared memory) wraps at 32 bits.
                let (lo, hi) = bits_range(32);
                if off < lo || off > hi {
                    return fail(k, off, "a 32-bit address offset");
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The vector width `vN` (or `ldmatrix`'s `xN`) of `i`, if it names one.
fn vector_width(i: &Inst) -> Option<usize> {
    i.mods.iter().find_map(|m| match *m {
        "v2" => Some(2),
        "v4" => Some(4),
        "v8" => Some(8),
        "x1" if i.opc == Opc::Ldmatrix => Some(1),
        "x2" if i.opc == Opc::Ldmatrix => Some(2),
        "x4" if i.opc == Opc::Ldmatrix => Some(4),
        _ => None,
    })
}

/// The values an integer of `bits` bits may be written as: either
/// signedness, since PTX reads an immediate as a bit pattern.
fn bits_range(bits: u32) -> (i64, i64) {
    match bits {
        0 | 1 => (0, 1),
        b if b >= 64 => (i64::MIN, i64::MAX),
        // 2..=63 bits: the shifts cannot overflow.
        b => (
            i64::MIN.checked_shr(64u32.saturating_sub(b)).unwrap_or(0),
            i64::MAX.checked_shr(63u32.saturating_sub(b)).unwrap_or(0),
        ),
    }
}

/// The range of source operand `k` of `i`, and what the operand is.
fn imm_range(i: &Inst, k: usize) -> (i64, i64, &'static str) {
    let width = |t: Option<&Ty>| t.map_or(32, |t| t.bits());
    let typed = |t: Option<&Ty>| {
        let (lo, hi) = bits_range(width(t));
        (lo, hi, "the width of its type")
    };
    let has = |m: &str| i.mods.contains(&m);
    match i.opc {
        Opc::Bar if k == 0 => (0, 15, "a barrier number"),
        // A thread count: a positive multiple of the warp size up to a CTA.
        Opc::Bar => (32, 1024, "a thread count"),
        Opc::Bfe if k > 0 => (0, 255, "a bit position or length"),
        Opc::Shl | Opc::Shr if k == 1 => {
            let (lo, hi) = bits_range(32);
            (lo, hi, "a 32-bit shift amount")
        }
        Opc::CpAsync if has("wait_group") => (0, i64::from(i32::MAX), "a group count"),
        Opc::CpAsync if k == 2 => (4, 16, "a copy size of 4, 8 or 16 bytes"),
        Opc::CpAsync => (0, 16, "a source size up to the copy size"),
        Opc::Mbarrier if has("parity") => (0, 1, "a phase parity"),
        Opc::Mbarrier => (0, i64::from(u32::MAX), "a 32-bit count"),
        Opc::Cvt => typed(i.tys.get(1).or(i.tys.first())),
        Opc::Selp if k == 2 => (0, 1, "a predicate"),
        Opc::Mad if has("wide") && k == 2 => {
            let (lo, hi) = bits_range(width(i.tys.first()).saturating_mul(2));
            (lo, hi, "the width of its wide type")
        }
        Opc::Ld | Opc::St | Opc::Atom | Opc::Red => typed(i.tys.last()),
        _ => typed(i.tys.first()),
    }
}

/// Checks every instruction of `m`'s entries ([`inst`]); `Err` names the
/// entry and the first operand that does not fit.
pub fn module(m: &super::Module) -> Result<(), String> {
    for item in &m.items {
        if let super::Item::Entry(e) = item {
            for line in &e.body {
                if let super::Line::Inst(i) = line {
                    inst(i).map_err(|why| format!("in kernel '{}': {why}", e.name))?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::Reg;
    use smallvec::smallvec;

    fn r(class: RegClass, id: u32) -> Reg {
        Reg { class, id }
    }

    #[test]
    fn immediates_fit_their_operands() {
        let rs = r(RegClass::B16, 1);
        let add16 = |v| {
            Inst::new(
                Opc::Add,
                &[],
                &[Ty::S16],
                smallvec![Operand::Reg(rs)],
                smallvec![Operand::Reg(rs), Operand::Imm(v)],
            )
        };
        assert!(inst(&add16(65535)).is_ok());
        assert!(inst(&add16(-32768)).is_ok());
        let e = inst(&add16(65536)).unwrap_err();
        assert!(e.contains("immediate 65536 does not fit operand 3"), "{e}");
        assert!(inst(&add16(-32769)).is_err());
        let bar = |v| {
            Inst::new(
                Opc::Bar,
                &["sync"],
                &[],
                smallvec![],
                smallvec![Operand::Imm(v)],
            )
        };
        assert!(inst(&bar(15)).is_ok());
        assert!(inst(&bar(16)).is_err());
        let rd = r(RegClass::B64, 2);
        let ld = |off| {
            Inst::new(
                Opc::Ld,
                &["global"],
                &[Ty::B16],
                smallvec![Operand::Reg(rs)],
                smallvec![Operand::Addr(rd, off)],
            )
        };
        assert!(inst(&ld(i64::MIN)).is_ok());
        assert!(inst(&ld(i64::MAX)).is_ok());
        let r32 = r(RegClass::B32, 3);
        let lds = |off| {
            Inst::new(
                Opc::Ld,
                &["shared"],
                &[Ty::B16],
                smallvec![Operand::Reg(rs)],
                smallvec![Operand::Addr(r32, off)],
            )
        };
        assert!(inst(&lds(-8)).is_ok());
        assert!(inst(&lds(1 << 32)).is_err());
        let v4 = |n: u32| {
            Inst::new(
                Opc::Ld,
                &["global", "v4"],
                &[Ty::B32],
                smallvec![Operand::Vec(
                    (0..n).map(|k| r(RegClass::B32, 10 + k)).collect()
                )],
                smallvec![Operand::Addr(rd, 0)],
            )
        };
        assert!(inst(&v4(4)).is_ok());
        assert!(inst(&v4(3)).unwrap_err().contains("vector of 3"));
    }
}
