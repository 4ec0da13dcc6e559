//! Which layout conversions warp shuffles can make, and how: when every
//! warp holds the whole source tile (its warp bits replicate) and the
//! destination only asks each lane for elements that one source register
//! holds across the warp, each destination register is one
//! `shfl.sync.idx` from a lane computed from the thread id. Pure layout
//! math: the plan decides with it, emission builds the shuffles from it.
use crate::lower::plan::layout::linear::flatten;
use crate::lower::plan::layout::LinearLayout;

/// Solves `x · basis = v` over GF(2): the set of basis vectors (as a bit
/// mask) whose XOR is `v`, if `v` is in their span.
pub fn solve(basis: &[u64], v: u64) -> Option<u64> {
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

/// When every warp holds the whole of a tile in `src` (its warp bits
/// replicate and its lanes span the warp): the row-major flat index each
/// register bit and then each lane bit adds, and the number of register
/// bits. Every extent is a power of two, so the XOR of coordinates is the
/// XOR of their flat indices.
pub fn warp_basis(src: &LinearLayout) -> Option<(Vec<u64>, usize)> {
    if src.lane.len() != 5 {
        return None;
    }
    let f = |b: &Vec<i64>| flatten(b, &src.shape) as u64;
    if src.warp.iter().any(|b| f(b) != 0) {
        return None;
    }
    let basis = src.register.iter().chain(&src.lane).map(f).collect();
    Some((basis, src.register.len()))
}

/// How a conversion by shuffles reads its source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// The source lane each destination lane and warp bit adds (XORed).
    pub deltas: Vec<i64>,
    /// For each destination register: the source register, and the lane
    /// offset (XORed onto the thread's source lane) it is read from.
    pub picks: Vec<(usize, i64)>,
}

/// The shuffles that move a tile of 32-bit elements from `src` to `dst`,
/// or `None` when the layouts do not allow it (then it goes through
/// shared memory).
pub fn route(src: &LinearLayout, dst: &LinearLayout) -> Option<Route> {
    if src.shape != dst.shape || dst.lane.len() != 5 {
        return None;
    }
    let (basis, nreg) = warp_basis(src)?;
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
        deltas.push(lane as i64);
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
    Some(Route { deltas, picks })
}

/// Where the element at coordinates `at` of a tile in `src` is, for one
/// `shfl.sync.idx` to fetch it into every thread: its register and lane,
/// or `None` when some warp does not hold the whole tile (or `at` lies
/// outside it).
pub fn element(src: &LinearLayout, at: &[i64]) -> Option<(usize, i64)> {
    if at.len() != src.shape.len() || at.iter().zip(&src.shape).any(|(&c, &n)| c < 0 || c >= n) {
        return None;
    }
    let (basis, nreg) = warp_basis(src)?;
    let x = solve(&basis, flatten(at, &src.shape) as u64)?;
    Some(((x & ((1 << nreg) - 1)) as usize, (x >> nreg) as i64))
}

#[cfg(test)]
mod tests {
    use super::solve;

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
