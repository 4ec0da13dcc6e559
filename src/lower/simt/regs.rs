//! Dense per-register tables for the SIMT passes. Register numbers are
//! unique within a function and allocated from one counter, so counts and
//! sets indexed by number beat hashing on the passes' hot paths.
use crate::ptx::Reg;

/// The entry of register `r` in a table indexed by register number,
/// growing the table (with zeros) to hold it.
pub fn slot(table: &mut Vec<u32>, r: Reg) -> &mut u32 {
    let i = r.id as usize;
    if i >= table.len() {
        table.resize(i + 1, 0);
    }
    &mut table[i]
}

/// A count per register (definitions or reads), zero when absent.
#[derive(Clone, Debug, Default)]
pub struct RegCounts(Vec<u32>);

impl RegCounts {
    /// The count of `r`, `None` when it is zero (as a map would say).
    pub fn get(&self, r: &Reg) -> Option<&u32> {
        self.0.get(r.id as usize).filter(|&&n| n > 0)
    }

    /// The count of `r` for changing in place, `None` when it is zero.
    pub fn get_mut(&mut self, r: &Reg) -> Option<&mut u32> {
        self.0.get_mut(r.id as usize).filter(|n| **n > 0)
    }

    /// Adds one to the count of `r`.
    pub fn add(&mut self, r: Reg) {
        *slot(&mut self.0, r) += 1;
    }

    /// One past the highest register number counted (a size hint for
    /// tables keyed by the registers).
    pub fn span(&self) -> usize {
        self.0.len()
    }

    /// Takes one from the count of `r` (never below zero).
    pub fn sub(&mut self, r: &Reg) {
        if let Some(n) = self.0.get_mut(r.id as usize) {
            *n = n.saturating_sub(1);
        }
    }
}

/// A set of registers, one bit per register number.
#[derive(Clone, Debug, Default)]
pub struct RegSet(Vec<u64>);

impl RegSet {
    /// Adds `r`.
    pub fn insert(&mut self, r: Reg) {
        let (w, b) = (r.id as usize / 64, r.id % 64);
        if w >= self.0.len() {
            self.0.resize(w + 1, 0);
        }
        self.0[w] |= 1 << b;
    }

    /// Removes `r`.
    pub fn remove(&mut self, r: &Reg) {
        if let Some(w) = self.0.get_mut(r.id as usize / 64) {
            *w &= !(1 << (r.id % 64));
        }
    }

    /// Whether `r` is in the set.
    pub fn contains(&self, r: &Reg) -> bool {
        self.0
            .get(r.id as usize / 64)
            .is_some_and(|w| w & (1 << (r.id % 64)) != 0)
    }
}

impl Extend<Reg> for RegSet {
    fn extend<I: IntoIterator<Item = Reg>>(&mut self, iter: I) {
        for r in iter {
            self.insert(r);
        }
    }
}

/// A version per register: each write of a variable gives it a new one, so
/// facts recorded against an older version can be told stale in O(1).
#[derive(Clone, Debug, Default)]
pub struct Versions {
    current: Vec<u32>,
    last: u32,
}

impl Versions {
    /// Gives `r` a new version.
    pub fn bump(&mut self, r: Reg) {
        self.last += 1;
        *slot(&mut self.current, r) = self.last;
    }

    /// The current version of `r` (0 until it is first bumped).
    pub fn get(&self, r: &Reg) -> u32 {
        self.current.get(r.id as usize).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use crate::lower::simt::regs::*;
    use crate::ptx::RegClass;

    fn r(id: u32) -> Reg {
        Reg {
            class: RegClass::B32,
            id,
        }
    }

    #[test]
    fn counts_start_at_zero_and_grow() {
        let mut c = RegCounts::default();
        assert_eq!(c.get(&r(5)), None);
        c.add(r(5));
        c.add(r(5));
        c.add(r(200));
        assert_eq!(c.get(&r(5)), Some(&2));
        assert_eq!(c.get(&r(200)), Some(&1));
        assert_eq!(c.get(&r(4)), None);
        *c.get_mut(&r(5)).unwrap() -= 2;
        assert_eq!(c.get(&r(5)), None);
        assert!(c.get_mut(&r(5)).is_none());
    }

    #[test]
    fn versions_change_on_every_bump() {
        let mut v = Versions::default();
        assert_eq!(v.get(&r(3)), 0);
        v.bump(r(3));
        let first = v.get(&r(3));
        v.bump(r(4));
        assert_eq!(v.get(&r(3)), first);
        v.bump(r(3));
        assert_ne!(v.get(&r(3)), first);
        assert_ne!(v.get(&r(3)), v.get(&r(4)));
    }

    #[test]
    fn sets_insert_remove_and_test_across_words() {
        let mut s = RegSet::default();
        s.extend([r(0), r(63), r(64), r(1000)]);
        for id in [0, 63, 64, 1000] {
            assert!(s.contains(&r(id)), "{id}");
        }
        assert!(!s.contains(&r(1)) && !s.contains(&r(65)) && !s.contains(&r(5000)));
        s.remove(&r(64));
        s.remove(&r(9999));
        assert!(!s.contains(&r(64)) && s.contains(&r(63)));
    }
}
