//! The one allocator of an entry's shared-memory scratch: where each buffer
//! goes, from the claims and releases in program order.
//!
//! A buffer is live from its claim until the op (or construct) that claimed
//! it is done ([`Placer::release`]). Where the claim is made decides where
//! the buffer goes:
//! - outside every loop, at the lowest bytes free of live buffers (first
//!   fit): that code runs once, so reusing a dead buffer's bytes costs at
//!   most one barrier a CTA;
//! - in a loop, above every buffer claimed so far (the top) while that
//!   fits, so a loop never shares a byte between two of its buffers and
//!   needs no barrier for it; where the top is full, at the lowest bytes
//!   free of live buffers: a reuse ([`Placer::reusing`]), and from then on
//!   every claim takes the lowest free bytes, as outside loops.
//!
//! A construct outside every loop that is done gives its bytes back to the
//! top ([`Placer::release_scope`]), as it never runs again.

/// A point in the claims: what a later release frees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    /// Claims made before the mark.
    seq: usize,
    /// The top at the mark.
    top: i64,
}

/// One claimed buffer.
#[derive(Clone, Copy, Debug)]
struct Buffer {
    /// Its place in the claims.
    seq: usize,
    /// First byte.
    start: i64,
    /// One past the last byte.
    end: i64,
    /// Not yet released.
    live: bool,
}

/// The placement state of one entry's scratch.
#[derive(Clone, Debug)]
pub struct Placer {
    /// Bytes the target offers.
    capacity: i64,
    /// Buffers below the top, in claim order.
    buffers: Vec<Buffer>,
    /// Claims made so far.
    seq: usize,
    /// One past the highest byte of any buffer not given back.
    top: i64,
    /// The most bytes in use at any point: the entry's size.
    peak: i64,
    /// Buffers of loops placed over dead ones.
    reuses: usize,
}

/// `x` rounded up to a multiple of `align` (a power of two).
fn align_up(x: i64, align: i64) -> i64 {
    (x + align - 1) & !(align - 1)
}

impl Placer {
    /// An empty scratch of `capacity` bytes.
    pub fn new(capacity: i64) -> Placer {
        Placer {
            capacity,
            buffers: Vec::new(),
            seq: 0,
            top: 0,
            peak: 0,
            reuses: 0,
        }
    }

    /// The top: one past the highest byte claimed and not given back.
    pub fn top(&self) -> i64 {
        self.top
    }

    /// Bytes free above the top, from the next 16-byte boundary: the room
    /// a buffer placed without reuse has.
    pub fn room_above(&self) -> i64 {
        self.capacity - align_up(self.top, 16)
    }

    /// The entry's shared-memory size so far.
    pub fn peak(&self) -> i64 {
        self.peak
    }

    /// Whether some buffer of a loop was placed below the top (the loop
    /// did not fit with every buffer its own bytes).
    pub fn reusing(&self) -> bool {
        self.reuses > 0
    }

    /// The current point: buffers claimed from now on are freed by
    /// [`Placer::release`] with it.
    pub fn mark(&self) -> Mark {
        Mark {
            seq: self.seq,
            top: self.top,
        }
    }

    /// The largest buffer (16-byte aligned) that a claim could place now,
    /// over dead buffers or above the top.
    pub fn largest_free(&self) -> i64 {
        self.starts(16)
            .map(|s| self.free_end(s) - s)
            .max()
            .unwrap_or(0)
            .max(0)
    }

    /// Candidate starts of a buffer aligned to `align`: the lowest byte
    /// and the end of each live buffer.
    fn starts(&self, align: i64) -> impl Iterator<Item = i64> + '_ {
        std::iter::once(0)
            .chain(self.buffers.iter().filter(|b| b.live).map(|b| b.end))
            .map(move |s| align_up(s, align))
    }

    /// The end of the free bytes from `start`: the next live buffer's
    /// start, or the capacity. `start` itself if it lies in a live buffer.
    fn free_end(&self, start: i64) -> i64 {
        let mut end = self.capacity;
        for b in self.buffers.iter().filter(|b| b.live) {
            if b.start <= start && start < b.end {
                return start;
            }
            if b.start >= start {
                end = end.min(b.start);
            }
        }
        end
    }

    /// Claims `bytes` aligned to `align` (a power of two), in a loop or
    /// not: see the module's doc. Returns the buffer's first byte, `None`
    /// when nothing fits.
    pub fn claim(&mut self, bytes: i64, align: i64, in_loop: bool) -> Option<i64> {
        let bytes = bytes.max(0);
        let above = align_up(self.top, align);
        let lowest = || {
            self.starts(align)
                .filter(|&s| self.free_end(s) - s >= bytes)
                .min()
        };
        let start = if !in_loop || self.reuses > 0 {
            lowest()?
        } else if above.checked_add(bytes)? <= self.capacity {
            above
        } else {
            let start = lowest()?;
            self.reuses += 1;
            start
        };
        let end = start + bytes;
        self.buffers.push(Buffer {
            seq: self.seq,
            start,
            end,
            live: true,
        });
        self.seq += 1;
        self.top = self.top.max(end);
        self.peak = self.peak.max(end);
        Some(start)
    }

    /// Frees the buffers claimed since `mark`; returns their byte ranges.
    pub fn release(&mut self, mark: Mark) -> Vec<(i64, i64)> {
        let mut freed = Vec::new();
        for b in self
            .buffers
            .iter_mut()
            .filter(|b| b.live && b.seq >= mark.seq)
        {
            b.live = false;
            freed.push((b.start, b.end));
        }
        freed
    }

    /// Frees the live buffer that starts at `offset` (one an op is done
    /// with before its claimer is); returns its byte range.
    pub fn release_at(&mut self, offset: i64) -> Option<(i64, i64)> {
        let b = self
            .buffers
            .iter_mut()
            .find(|b| b.live && b.start == offset)?;
        b.live = false;
        Some((b.start, b.end))
    }

    /// Frees the buffers claimed since `mark` and gives their bytes above
    /// the mark's top back to the top: for a construct outside every loop
    /// that is done. Returns the byte ranges freed, the bytes given back
    /// last.
    pub fn release_scope(&mut self, mark: Mark) -> Vec<(i64, i64)> {
        let mut freed = self.release(mark);
        let live_top = self
            .buffers
            .iter()
            .filter(|b| b.live)
            .map(|b| b.end)
            .max()
            .unwrap_or(0);
        let top = mark.top.max(live_top);
        if self.top > top {
            freed.push((top, self.top));
            self.top = top;
            self.buffers.retain(|b| b.live || b.end <= top);
        }
        freed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_that_fit_never_share_bytes() {
        let mut p = Placer::new(1000);
        let m = p.mark();
        let a = p.claim(100, 16, true).unwrap();
        p.release(m);
        let b = p.claim(100, 16, true).unwrap();
        assert_eq!((a, b), (0, 112));
        assert!(!p.reusing());
        assert_eq!(p.peak(), 212);
    }

    #[test]
    fn a_full_top_reuses_dead_bytes() {
        let mut p = Placer::new(256);
        let m = p.mark();
        p.claim(128, 16, true).unwrap();
        assert_eq!(p.claim(64, 16, true), Some(128));
        // Frees only what was claimed since `m2`.
        let m2 = p.mark();
        p.claim(32, 16, true).unwrap();
        assert_eq!(p.release(m2), [(192, 224)]);
        // Neither above the top (224) nor over the dead [192, 224), which
        // with the free bytes above it makes 64.
        assert_eq!(p.claim(128, 16, true), None);
        p.release(m);
        assert_eq!(p.claim(128, 16, true), Some(0));
        assert!(p.reusing());
        // Once a loop reuses, the lowest free bytes come first.
        assert_eq!(p.claim(16, 16, true), Some(128));
        assert_eq!(p.peak(), 224);
    }

    #[test]
    fn live_buffers_are_never_overlapped() {
        let mut p = Placer::new(300);
        let a = p.claim(100, 16, true).unwrap();
        assert_eq!(p.claim(100, 16, true), Some(112));
        assert_eq!(p.release_at(a), Some((0, 100)));
        // [0, 100) is dead but too small, and above b there are 76 bytes.
        assert_eq!(p.claim(150, 16, true), None);
        assert_eq!(p.claim(96, 16, true), Some(0));
        assert_eq!(p.largest_free(), 300 - 224);
        assert_eq!(p.room_above(), 300 - 224);
    }

    #[test]
    fn a_finished_scope_gives_its_bytes_back_to_the_top() {
        let mut p = Placer::new(1000);
        assert_eq!(p.claim(64, 16, true), Some(0));
        let m = p.mark();
        p.claim(500, 16, true).unwrap();
        p.release_scope(m);
        assert_eq!(p.top(), 64);
        assert_eq!(p.claim(32, 16, true), Some(64));
        assert!(!p.reusing());
        assert_eq!(p.peak(), 564);
    }

    #[test]
    fn outside_loops_the_lowest_free_bytes_come_first() {
        let mut p = Placer::new(1000);
        let m = p.mark();
        p.claim(100, 16, false).unwrap();
        let kept = p.claim(100, 16, false).unwrap();
        p.release(m);
        p.release_at(kept);
        let m = p.mark();
        assert_eq!(p.claim(300, 16, false), Some(0));
        // Not a loop's reuse.
        assert!(!p.reusing());
        // In a loop, above the top while it fits.
        assert_eq!(p.claim(16, 16, true), Some(304));
        p.release(m);
        assert_eq!(p.claim(200, 16, false), Some(0));
        assert_eq!(p.claim(400, 16, false), Some(208));
        assert_eq!(p.peak(), 608);
    }
}
