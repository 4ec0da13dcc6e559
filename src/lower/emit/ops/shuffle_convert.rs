//! Layout conversions by warp shuffles: when every warp holds the whole
//! source tile (its warp bits replicate) and the destination only asks each
//! lane for elements that one source register holds across the warp, each
//! destination register is one `shfl.sync.idx` from a lane computed from
//! the thread id, with no shared memory and no barrier.
use smallvec::smallvec;
use std::rc::Rc;

use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::plan::layout::linear::flatten;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Opc, Operand, RegClass, Ty};

/// Solves `x · basis = v` over GF(2): the set of basis vectors (as a bit
/// mask) whose XOR is `v`, if `v` is in their span.
fn solve(basis: &[u64], v: u64) -> Option<u64> {
    // Gaussian elimination with the combination of each reduced row.
    let mut rows: Vec<(u64, u64)> = Vec::new();
    for (k, &b) in basis.iter().enumerate() {
        let mut row = (b, 1u64 << k);
        for &(r, m) in &rows {
            if row.0 ^ r < row.0 {
                row = (row.0 ^ r, row.1 ^ m);
            }
        }
        if row.0 != 0 {
            rows.push(row);
            rows.sort_by_key(|r| std::cmp::Reverse(r.0));
        }
    }
    let mut rest = (v, 0u64);
    for &(r, m) in &rows {
        if rest.0 ^ r < rest.0 {
            rest = (rest.0 ^ r, rest.1 ^ m);
        }
    }
    (rest.0 == 0).then_some(rest.1)
}

/// When every warp holds the whole of `t` (its warp bits replicate and
/// its lanes span the warp): the row-major flat index each register bit
/// and then each lane bit adds, and the number of register bits. Every
/// extent is a power of two, so the XOR of coordinates is the XOR of their
/// flat indices.
fn warp_basis(t: &Tile) -> Option<(Vec<u64>, usize)> {
    let src = &t.layout;
    if src.lane.len() != 5 || t.regs.is_empty() {
        return None;
    }
    let f = |b: &Vec<i64>| flatten(b, &src.shape) as u64;
    if src.warp.iter().any(|b| f(b) != 0) {
        return None;
    }
    let basis = src.register.iter().chain(&src.lane).map(f).collect();
    Some((basis, src.register.len()))
}

/// `t` in `layout` by warp shuffles, or `None` when the layouts do not
/// allow it (then the caller goes through shared memory).
pub fn convert(l: &mut Lowerer, t: &Tile, layout: &Rc<LinearLayout>) -> Option<Tile> {
    let (src, dst) = (&t.layout, layout);
    if src.shape != dst.shape || dst.lane.len() != 5 {
        return None;
    }
    if !t.regs.iter().all(|r| r.class == RegClass::B32) {
        return None;
    }
    let (basis, nreg) = warp_basis(t)?;
    let f = |b: &Vec<i64>| flatten(b, &src.shape) as u64;
    // Split a solution into (source register, source lane).
    let split = |x: u64| (x & ((1 << nreg) - 1), x >> nreg);
    // Each destination thread bit moves the source lane only.
    let mut deltas = Vec::new();
    for b in dst.lane.iter().chain(&dst.warp) {
        let (reg, lane) = split(solve(&basis, f(b))?);
        if reg != 0 {
            return None;
        }
        deltas.push(lane);
    }
    let mut picks = Vec::with_capacity(dst.num_registers());
    for r in 0..dst.num_registers() {
        let v = dst
            .register
            .iter()
            .enumerate()
            .filter(|(k, _)| r >> k & 1 == 1)
            .fold(0, |acc, (_, b)| acc ^ f(b));
        let (reg, lane) = split(solve(&basis, v)?);
        picks.push((reg as usize, lane as i64));
    }
    // The source lane of this thread, before each register's offset.
    let values: Vec<i64> = deltas.iter().map(|&d| d as i64).collect();
    let lane = l.thread_term(&values);
    let mut regs = Vec::with_capacity(picks.len());
    for (q, off) in picks {
        let from = match (lane, off) {
            (Some(x), 0) => Operand::Reg(x),
            (Some(x), o) => Operand::Reg(l.b.op(
                Opc::Xor,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(x), Operand::Imm(o)],
            )),
            (None, o) => Operand::Imm(o),
        };
        regs.push(l.b.op(
            Opc::Shfl,
            &["sync", "idx"],
            &[Ty::B32],
            Ty::B32,
            vec![
                Operand::Reg(t.regs[q]),
                from,
                Operand::Imm(31),
                Operand::Imm(-1),
            ],
        ));
    }
    Some(Tile {
        elem: t.elem,
        layout: layout.clone(),
        regs,
    })
}

/// The element of `t` at coordinates `at`, in every thread, by one
/// `shfl.sync.idx` a 32-bit word from the lane that holds it, or `None`
/// when some warp does not hold the whole tile (then the caller goes
/// through shared memory).
pub fn element(l: &mut Lowerer, t: &Tile, at: &[i64]) -> Option<crate::ptx::Reg> {
    let src = &t.layout;
    if at.len() != src.shape.len() || at.iter().zip(&src.shape).any(|(&c, &n)| c < 0 || c >= n) {
        return None;
    }
    let (basis, nreg) = warp_basis(t)?;
    let x = solve(&basis, flatten(at, &src.shape) as u64)?;
    let (reg, lane) = ((x & ((1 << nreg) - 1)) as usize, (x >> nreg) as i64);
    let v = t.regs[reg];
    let shfl = |l: &mut Lowerer, w: crate::ptx::Reg| {
        l.b.op(
            Opc::Shfl,
            &["sync", "idx"],
            &[Ty::B32],
            Ty::B32,
            vec![
                Operand::Reg(w),
                Operand::Imm(lane),
                Operand::Imm(31),
                Operand::Imm(-1),
            ],
        )
    };
    match v.class {
        RegClass::B32 => Some(shfl(l, v)),
        RegClass::B64 => {
            let (lo, hi) = l.b.split(v);
            let (lo, hi) = (shfl(l, lo), shfl(l, hi));
            Some(l.b.join(lo, hi))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::lower::emit::ops::shuffle_convert::solve;

    #[test]
    fn solves_over_gf2() {
        // Basis 0b001, 0b011, 0b100: 0b110 = b1 ^ b2 ^ b0.
        let basis = [0b001, 0b011, 0b100];
        let x = solve(&basis, 0b110).expect("in the span");
        let v = (0..3)
            .filter(|k| x >> k & 1 == 1)
            .fold(0, |acc, k| acc ^ basis[k]);
        assert_eq!(v, 0b110);
        assert_eq!(solve(&[0b01, 0b01], 0b10), None);
        assert_eq!(solve(&[0, 0b10], 0), Some(0));
    }
}
