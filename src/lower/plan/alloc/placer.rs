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
