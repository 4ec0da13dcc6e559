//! One tensor map: what the plan decides about it ([`MapSpec`]) and the
//! callback code that writes it ([`MapSpec::program`]).
//!
//! The code computes the same function as NVIDIA's callbacks (read off
//! their x86-64 and aarch64 code, and checked byte for byte against them
//! on every kernel of the tests, hostile arguments included). Of the
//! 128-byte parameter it writes the first 64 bytes, as NVIDIA's do:
//!
//! | bytes | value |
//! |---|---|
//! | 0..8 | the array's address, bits 4..56 (`& 0x01ff_ffff_ffff_fff0`) |
//! | 8..12 | flags: 2, rank − 1, element type, swizzle, tf32, 1 << 18, and bit 21 where the array spans at least 128 KiB |
//! | 12..28 | strides of dims 1..4 (innermost first) in bytes, divided by 16 |
//! | 32..52 | dims 0..4 minus one, modulo 2^32 |
//! | 55, 56..60 | box dims 0..4 minus one |
//!
//! Every other byte of the first 64 is zero. The span is
//! `Σ (dim − 1) · stride · size` over the outer dims plus `inner dim · size`,
//! in wrapping 64-bit arithmetic on the zero-extended 32-bit arguments, so
//! a zero dim wraps to a huge span rather than failing: the callback never
//! branches on the arguments, and reads nothing but them.

use super::program::{Op, Program, Reg};

/// The element type a map names (bits 7..10 of its flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapElem {
    /// 8-bit integers and f8 alike.
    B8,
    /// 16-bit integers.
    B16,
    /// 32-bit integers.
    B32,
    /// 64-bit integers.
    B64,
    /// f16.
    F16,
    /// f32 (tf32 with [`MapSpec::tf32`]).
    F32,
    /// f64.
    F64,
    /// bf16.
    Bf16,
}

impl MapElem {
    /// The hardware's code.
    pub fn code(self) -> u64 {
        match self {
            MapElem::B8 => 0,
            MapElem::B16 => 1,
            MapElem::B32 => 2,
            MapElem::B64 => 4,
            MapElem::F16 => 6,
            MapElem::F32 => 7,
            MapElem::F64 => 9,
            MapElem::Bf16 => 10,
        }
    }

    /// Size in bytes.
    pub fn size(self) -> u64 {
        match self {
            MapElem::B8 => 1,
            MapElem::B16 | MapElem::F16 | MapElem::Bf16 => 2,
            MapElem::B32 | MapElem::F32 => 4,
            MapElem::B64 | MapElem::F64 => 8,
        }
    }
}

/// How a box is swizzled in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapSwizzle {
    /// Not swizzled.
    None,
    /// 32-byte span.
    B32,
    /// 64-byte span.
    B64,
    /// 128-byte span.
    B128,
    /// 128-byte span with 32-byte atoms (sm_100's tf32 operands read
    /// MN-major).
    B128Atom32,
}

impl MapSwizzle {
    /// Its flag bits (13..14, and 19).
    fn bits(self) -> u64 {
        match self {
            MapSwizzle::None => 0,
            MapSwizzle::B32 => 1 << 13,
            MapSwizzle::B64 => 2 << 13,
            MapSwizzle::B128 => 3 << 13,
            MapSwizzle::B128Atom32 => 3 << 13 | 1 << 19,
        }
    }
}

/// One of a map's 32-bit dims or strides: an entry argument's (its
/// parameter index in a [`MapDecl`], its byte offset in the parameter
/// buffer in a [`MapSpec`]) or a constant of the bytecode (a view's static
/// extent).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum MapValue<T> {
    /// The argument at this index or offset.
    Arg(T),
    /// This value.
    Const(u32),
}

impl<T: std::fmt::Debug> std::fmt::Debug for MapValue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MapValue::Arg(a) => a.fmt(f),
            MapValue::Const(c) => write!(f, "constant {c}"),
        }
    }
}

impl MapValue<u32> {
    /// `dst = ` the value, zero-extended.
    fn load(self, dst: Reg) -> Op {
        match self {
            MapValue::Arg(off) => Op::LoadU32 { dst, off },
            MapValue::Const(c) => Op::Const {
                dst,
                value: u64::from(c),
            },
        }
    }
}

/// One tensor map of a kernel, as the plan decides it. Offsets are bytes
/// into the parameter buffer the callback receives (see
/// `ptx::params::layout`, which counts from where the parameters start in
/// constant bank 0); the array's arguments are cuTile's: a base address,
/// one 32-bit dim per dimension and one 32-bit stride (in elements) per
/// dimension but the innermost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapSpec {
    /// The hidden 128-byte parameter the map is written to.
    pub map: u32,
    /// The array's base address (64-bit).
    pub base: u32,
    /// Its dims, outermost first (one per dimension; 1 to 5).
    pub dims: Vec<MapValue<u32>>,
    /// Its strides in elements, outermost first (one fewer than dims).
    pub strides: Vec<MapValue<u32>>,
    /// Element type.
    pub elem: MapElem,
    /// Round f32 to tf32 on the copy.
    pub tf32: bool,
    /// Swizzle.
    pub swizzle: MapSwizzle,
    /// The box, outermost first, each 1..=256.
    pub box_dims: Vec<u32>,
}

/// A tensor map as the lowering declares it: the same as [`MapSpec`] with
/// entry parameter indices where the spec has buffer offsets
/// ([`MapDecl::spec`] places them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapDecl {
    /// The hidden parameter the map is written to.
    pub map: usize,
    /// The array's base address parameter.
    pub base: usize,
    /// Its dims, outermost map dim first.
    pub dims: Vec<MapValue<usize>>,
    /// Its strides (in elements), outermost first, for every map dim but
    /// the innermost (whose stride is 1).
    pub strides: Vec<MapValue<usize>>,
    /// Element type.
    pub elem: MapElem,
    /// Round f32 to tf32 on the copy.
    pub tf32: bool,
    /// Swizzle.
    pub swizzle: MapSwizzle,
    /// The box, outermost first.
    pub box_dims: Vec<u32>,
}

impl MapDecl {
    /// The spec with every parameter at `offsets[index]`.
    pub fn spec(&self, offsets: &[u32]) -> Result<MapSpec, String> {
        let at = |i: usize| {
            offsets
                .get(i)
                .copied()
                .ok_or_else(|| format!("parameter {i} of {}", offsets.len()))
        };
        let value = |v: &MapValue<usize>| match *v {
            MapValue::Arg(i) => at(i).map(MapValue::Arg),
            MapValue::Const(c) => Ok(MapValue::Const(c)),
        };
        Ok(MapSpec {
            map: at(self.map)?,
            base: at(self.base)?,
            dims: self.dims.iter().map(value).collect::<Result<_, _>>()?,
            strides: self.strides.iter().map(value).collect::<Result<_, _>>()?,
            elem: self.elem,
            tf32: self.tf32,
            swizzle: self.swizzle,
            box_dims: self.box_dims.clone(),
        })
    }
}

/// The address bits a map keeps.
const ADDRESS_MASK: u64 = 0x01ff_ffff_ffff_fff0;
/// Arrays spanning this many bytes or more get the L2-promotion bit.
const L2_PROMOTION_SPAN: u64 = 0x20000;

/// The callback's scratch registers, by role.
const A: Reg = Reg(0);
const B: Reg = Reg(1);
const SPAN: Reg = Reg(2);
const L2: Reg = Reg(3);

/// A 32-bit field of the map's first 64 bytes.
#[derive(Clone, Copy)]
enum Field {
    /// Known when compiling.
    Const(u64),
    /// Flags with the L2-promotion bit.
    Flags(u64),
    /// `(stride · size) >> 4` of the stride at this index of
    /// [`MapSpec::strides`].
    Stride(usize),
    /// `dim − 1` of the dim at this index of [`MapSpec::dims`].
    Dim(usize),
}

impl MapSpec {
    /// The rank.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Why the spec cannot be a tensor map, if it cannot.
    pub fn check(&self) -> Result<(), String> {
        let r = self.rank();
        if !(1..=5).contains(&r) {
            return Err(format!("a tensor map of rank {r}"));
        }
        if self.strides.len() != r - 1 || self.box_dims.len() != r {
            return Err(format!(
                "a rank-{r} tensor map with {} strides and a {}-dimensional box",
                self.strides.len(),
                self.box_dims.len()
            ));
        }
        if let Some(b) = self.box_dims.iter().find(|b| !(1..=256).contains(*b)) {
            return Err(format!("a box dimension of {b}"));
        }
        if self.tf32 && self.elem != MapElem::F32 {
            return Err("tf32 rounding of a map that is not f32".into());
        }
        let misaligned = |off: u32, a: u32| off % a != 0;
        if misaligned(self.map, 16) || misaligned(self.base, 8) {
            return Err(format!(
                "a tensor map at {:#x} of an address at {:#x}",
                self.map, self.base
            ));
        }
        if let Some(o) = (self.dims.iter().chain(&self.strides))
            .filter_map(|v| match v {
                MapValue::Arg(o) => Some(*o),
                MapValue::Const(_) => None,
            })
            .find(|o| misaligned(*o, 4))
        {
            return Err(format!("a 32-bit argument at {o:#x}"));
        }
        Ok(())
    }

    /// The constant part of the flags.
    fn flags(&self) -> u64 {
        2 | ((self.rank() as u64 - 1) << 4)
            | (self.elem.code() << 7)
            | self.swizzle.bits()
            | (u64::from(self.tf32) << 16)
            | (1 << 18)
    }

    /// The sixteen 32-bit fields of bytes 0..64 from the third on (the
    /// first two are the address).
    fn fields(&self) -> [Field; 16] {
        let r = self.rank();
        let mut f = [Field::Const(0); 16];
        f[2] = Field::Flags(self.flags());
        for k in 1..r {
            f[2 + k] = Field::Stride(r - 1 - k);
        }
        for k in 0..r {
            f[8 + k] = Field::Dim(r - 1 - k);
        }
        // byte 55 and bytes 56..60: the box, innermost first
        let bx = |k: usize| u64::from(self.box_dims[r - 1 - k] - 1);
        f[13] = Field::Const(bx(0) << 24);
        let mut hi = 0u64;
        for k in 1..r {
            hi |= bx(k) << (8 * (k - 1));
        }
        f[14] = Field::Const(hi & 0xffff_ffff);
        f[15] = Field::Const(hi >> 32);
        f
    }

    /// The callback code that writes this map (appended to `p`).
    pub fn program(&self, p: &mut Program) {
        let ops = &mut p.ops;
        let size = self.elem.size();
        ops.extend([
            Op::LoadU64 {
                dst: A,
                off: self.base,
            },
            Op::Const {
                dst: B,
                value: ADDRESS_MASK,
            },
            Op::And(A, B),
            Op::Store64 {
                src: A,
                off: self.map,
            },
        ]);
        // the span, and from it the L2-promotion bit
        let r = self.rank();
        ops.push(Op::Const {
            dst: SPAN,
            value: 0,
        });
        for i in 0..r - 1 {
            ops.extend([
                self.dims[i].load(A),
                Op::Const {
                    dst: B,
                    value: u64::MAX,
                },
                Op::Add(A, B),
                self.strides[i].load(B),
                Op::Mul(A, B),
                Op::Add(SPAN, A),
            ]);
        }
        ops.extend([
            self.dims[r - 1].load(A),
            Op::Add(SPAN, A),
            Op::Const {
                dst: B,
                value: size,
            },
            Op::Mul(SPAN, B),
            Op::Const {
                dst: B,
                value: L2_PROMOTION_SPAN,
            },
            Op::SetGeU {
                dst: L2,
                a: SPAN,
                b: B,
            },
            Op::Shl(L2, 21),
        ]);
        let fields = self.fields();
        for word in 1..8 {
            let mut constant = 0u64;
            let mut first = true;
            for half in 0..2 {
                let shift = 32 * half as u8;
                let dst = if first { A } else { B };
                let dynamic = match fields[2 * word + half] {
                    Field::Const(c) => {
                        constant |= c << shift;
                        false
                    }
                    Field::Flags(c) => {
                        constant |= c << shift;
                        ops.push(Op::Const { dst, value: 0 });
                        ops.push(Op::Or(dst, L2));
                        true
                    }
                    Field::Stride(i) => {
                        // below 2^31: (2^32 - 1) · 8 >> 4
                        ops.extend([
                            self.strides[i].load(dst),
                            Op::Const {
                                dst: SPAN,
                                value: size,
                            },
                            Op::Mul(dst, SPAN),
                            Op::Shr(dst, 4),
                        ]);
                        true
                    }
                    Field::Dim(i) => {
                        ops.extend([
                            self.dims[i].load(dst),
                            Op::Const {
                                dst: SPAN,
                                value: 0xffff_ffff,
                            },
                            Op::Add(dst, SPAN),
                            Op::And(dst, SPAN),
                        ]);
                        true
                    }
                };
                if dynamic {
                    if shift != 0 {
                        ops.push(Op::Shl(dst, shift));
                    }
                    if !first {
                        ops.push(Op::Or(A, B));
                    }
                    first = false;
                }
            }
            if first {
                ops.push(Op::Const {
                    dst: A,
                    value: constant,
                });
            } else if constant != 0 {
                ops.push(Op::Const {
                    dst: B,
                    value: constant,
                });
                ops.push(Op::Or(A, B));
            }
            ops.push(Op::Store64 {
                src: A,
                off: self.map + 8 * word as u32,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NVIDIA's sm_90 map of cuTile's matmul A operand (f16, 1000 x 512,
    /// row stride 512, box 128 x 64, 128-byte swizzle) at address
    /// 0x7f00_1234_5670: its first eight words.
    const MATMUL_A: [u64; 8] = [
        0x7f00_1234_5670,
        0x0000_0040_0024_6312,
        0,
        0,
        0x0000_03e7_0000_01ff,
        0,
        0x3f00_0000_0000_0000,
        0x7f,
    ];

    fn matmul_a() -> MapSpec {
        MapSpec {
            map: 64,
            base: 0,
            dims: vec![MapValue::Arg(8), MapValue::Arg(12)],
            strides: vec![MapValue::Arg(16)],
            elem: MapElem::F16,
            tf32: false,
            swizzle: MapSwizzle::B128,
            box_dims: vec![128, 64],
        }
    }

    fn run(spec: &MapSpec, base: u64, dims: &[u32], strides: &[u32]) -> Vec<u8> {
        let mut buf = vec![0xa5u8; 192];
        buf[spec.base as usize..][..8].copy_from_slice(&base.to_le_bytes());
        for (o, v) in spec
            .dims
            .iter()
            .zip(dims)
            .chain(spec.strides.iter().zip(strides))
        {
            if let MapValue::Arg(o) = o {
                buf[*o as usize..][..4].copy_from_slice(&v.to_le_bytes());
            }
        }
        let mut p = Program::default();
        spec.program(&mut p);
        p.run(&mut buf).unwrap();
        buf
    }

    #[test]
    fn writes_nvidia_s_matmul_operand_map() {
        let spec = matmul_a();
        spec.check().unwrap();
        let buf = run(&spec, 0x7f00_1234_5670, &[1000, 512], &[512]);
        let want: Vec<u8> = MATMUL_A.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(&buf[64..128], &want[..]);
        // the rest of the 128 bytes is left as it was
        assert!(buf[128..].iter().all(|b| *b == 0xa5));
    }

    #[test]
    fn hostile_arguments_wrap_as_nvidia_s_do() {
        let spec = matmul_a();
        // a zero dim wraps to 0xffffffff and a huge span (L2 bit set); low
        // and high address bits are dropped; a stride not a multiple of 8
        // elements is truncated
        let buf = run(&spec, 0xffff_ffff_ffff_ffff, &[0, 0], &[7]);
        let w = |i: usize| u64::from_le_bytes(buf[64 + 8 * i..72 + 8 * i].try_into().unwrap());
        assert_eq!(w(0), ADDRESS_MASK);
        assert_eq!(w(1), 0x0024_6312 | 1 << 21);
        assert_eq!(w(4), 0xffff_ffff_ffff_ffff);
        let buf = run(&spec, 0, &[1, 1], &[0]);
        let w = |i: usize| u64::from_le_bytes(buf[64 + 8 * i..72 + 8 * i].try_into().unwrap());
        assert_eq!(w(1), 0x0004_6312);
        assert_eq!(w(4), 0);
    }

    #[test]
    fn a_constant_dim_or_stride_writes_what_its_argument_would() {
        let args = run(&matmul_a(), 0x7f00_1234_5670, &[1000, 512], &[512]);
        let mut spec = matmul_a();
        spec.dims[0] = MapValue::Const(1000);
        spec.strides[0] = MapValue::Const(512);
        spec.check().unwrap();
        // the arguments left out of the buffer are not read
        let consts = run(&spec, 0x7f00_1234_5670, &[0, 512], &[0]);
        assert_eq!(&consts[64..128], &args[64..128]);
        // a constant is not an offset: it need not be aligned
        spec.dims[0] = MapValue::Const(3);
        assert!(spec.check().is_ok());
    }

    #[test]
    fn refuses_what_is_not_a_map() {
        let mut s = matmul_a();
        s.box_dims = vec![512, 64];
        assert!(s.check().is_err());
        let mut s = matmul_a();
        s.strides.clear();
        assert!(s.check().is_err());
        let mut s = matmul_a();
        s.map = 72;
        assert!(s.check().is_err());
        s.map = 0x30;
        assert!(s.check().is_ok());
        s.map = 72;
        assert!(s.check().is_err());
        let mut s = matmul_a();
        s.tf32 = true;
        assert!(s.check().is_err());
    }
}
