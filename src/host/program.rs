//! The straight-line code of an argument-change callback: a handful of
//! 64-bit register operations on the kernel's parameter buffer, with no
//! branches, calls or memory other than that buffer. Each encoder
//! ([`super::x86_64`], [`super::aarch64`]) turns every [`Op`] into a fixed
//! instruction sequence, so the two hosts compute the same function.

/// One of the six scratch registers a callback uses (all caller-saved in
/// every convention the callbacks are written for).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reg(pub u8);

/// Number of scratch registers.
pub const REGS: u8 = 6;

/// One operation. Offsets are bytes into the parameter buffer; arithmetic
/// wraps modulo 2^64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `dst = zero-extended u32 at off`.
    LoadU32 {
        /// Destination.
        dst: Reg,
        /// Buffer offset.
        off: u32,
    },
    /// `dst = u64 at off`.
    LoadU64 {
        /// Destination.
        dst: Reg,
        /// Buffer offset.
        off: u32,
    },
    /// `dst = value`.
    Const {
        /// Destination.
        dst: Reg,
        /// The value.
        value: u64,
    },
    /// `dst = dst + src`.
    Add(Reg, Reg),
    /// `dst = dst * src`.
    Mul(Reg, Reg),
    /// `dst = dst & src`.
    And(Reg, Reg),
    /// `dst = dst | src`.
    Or(Reg, Reg),
    /// `dst = dst << n` (n < 64).
    Shl(Reg, u8),
    /// `dst = dst >> n`, logical (n < 64).
    Shr(Reg, u8),
    /// `dst = (a >= b) as u64`, unsigned; `dst` differs from `a` and `b`.
    SetGeU {
        /// Destination.
        dst: Reg,
        /// Left operand.
        a: Reg,
        /// Right operand.
        b: Reg,
    },
    /// `u64 at off = src`.
    Store64 {
        /// Source.
        src: Reg,
        /// Buffer offset.
        off: u32,
    },
}

/// A callback body: its operations, run in order, then `return 0`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    /// The operations.
    pub ops: Vec<Op>,
}

impl Program {
    /// Runs the program on `params` as the encoded code would (for tests
    /// and for checking a program against its specification). Accesses
    /// outside `params` are `Err`.
    pub fn run(&self, params: &mut [u8]) -> Result<(), String> {
        let mut r = [0u64; REGS as usize];
        let range = |off: u32, n: usize, len: usize| {
            let o = off as usize;
            if o + n <= len {
                Ok(o..o + n)
            } else {
                Err(format!("{n} bytes at {off:#x} outside a {len}-byte buffer"))
            }
        };
        for op in &self.ops {
            match *op {
                Op::LoadU32 { dst, off } => {
                    let b = &params[range(off, 4, params.len())?];
                    r[dst.0 as usize] = u64::from(u32::from_le_bytes(b.try_into().unwrap()));
                }
                Op::LoadU64 { dst, off } => {
                    let b = &params[range(off, 8, params.len())?];
                    r[dst.0 as usize] = u64::from_le_bytes(b.try_into().unwrap());
                }
                Op::Const { dst, value } => r[dst.0 as usize] = value,
                Op::Add(d, s) => r[d.0 as usize] = r[d.0 as usize].wrapping_add(r[s.0 as usize]),
                Op::Mul(d, s) => r[d.0 as usize] = r[d.0 as usize].wrapping_mul(r[s.0 as usize]),
                Op::And(d, s) => r[d.0 as usize] &= r[s.0 as usize],
                Op::Or(d, s) => r[d.0 as usize] |= r[s.0 as usize],
                Op::Shl(d, n) => r[d.0 as usize] <<= n,
                Op::Shr(d, n) => r[d.0 as usize] >>= n,
                Op::SetGeU { dst, a, b } => {
                    r[dst.0 as usize] = u64::from(r[a.0 as usize] >= r[b.0 as usize])
                }
                Op::Store64 { src, off } => {
                    let at = range(off, 8, params.len())?;
                    params[at].copy_from_slice(&r[src.0 as usize].to_le_bytes());
                }
            }
        }
        Ok(())
    }

    /// The highest buffer offset (exclusive) the program touches.
    pub fn extent(&self) -> u32 {
        self.ops
            .iter()
            .map(|op| match *op {
                Op::LoadU32 { off, .. } => off + 4,
                Op::LoadU64 { off, .. } | Op::Store64 { off, .. } => off + 8,
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    }
}
