//! Shared-memory staging of `mma.sync` operands and the per-lane fragment
//! loads from it.
//!
//! A is stored row-major `[batch][M][K + pad]`; B row-major
//! `[batch][K][N + pad]` for 16- and 32-bit elements, and transposed
//! `[batch][N][K + pad]` for 8-bit ones (their B fragment holds four
//! consecutive K elements). Rows are padded by 16 bytes (32 for tf32 B),
//! which makes the eight 16-byte rows one `ldmatrix` phase reads, and the
//! tf32 B column reads, fall in distinct banks.
//!
//! Under `TILEIR_ALWAYS_SWIZZLE` ([`crate::lower::plan::target::Target::always_swizzle`])
//! the rows are not padded; the 16-byte chunks of each row are XOR-swizzled
//! instead ([`crate::lower::emit::copies::swizzle`]), for every writer and reader
//! (operands in layouts whose bases overlap, written through the general
//! staging path, keep the padding). A pipelined loop whose stages TMA
//! fills reads them in TMA's layouts
//! ([`crate::lower::emit::copies::swizzle::Swizzle::for_tma`]).
use crate::lower::analysis::values::Elem;
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::layout::disjoint;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};
use smallvec::smallvec;

use crate::lower::emit::copies::address::{bin, mad, thread_address_from, CopyDest, Part};

use crate::lower::emit::copies::swizzle::{Swizzle, Swizzled};
use crate::lower::emit::ops::staging::{alloc, write, Buffer, Placement};
use crate::lower::emit::ops::staging_window::{
    slice_groups, write_window, Guard, Selector, Window,
};
use crate::lower::plan::engines::mma_sync::{row_pads, Kind};

/// Where the staged operands lie.
pub struct Operands {
    /// Operand kind.
    pub kind: Kind,
    /// A's byte offset, row stride and batch stride.
    pub a: (i64, i64, i64),
    /// B's byte offset, row stride and batch stride.
    pub b: (i64, i64, i64),
    /// 8-bit B stored `[K][N + pad]` rather than transposed: its fragments
    /// are gathered byte by byte.
    pub b_natural: bool,
    /// 16-bit B stored transposed, `[N][K + pad]` (K along each row), and
    /// read with plain `ldmatrix`.
    pub b_nk: bool,
    /// A's and B's swizzles, where their rows are unpadded and swizzled
    /// ([`crate::lower::emit::copies::swizzle`]): their row strides are
    /// then the row lengths.
    pub swizzle: [Option<Swizzle>; 2],
}

impl Operands {
    /// The swizzles of unpadded rows of `row_bytes` (A's, B's), where
    /// `swizzled` says.
    pub fn row_swizzles(swizzled: [bool; 2], row_bytes: (i64, i64)) -> [Option<Swizzle>; 2] {
        [
            swizzled[0].then(|| Swizzle::for_rows(row_bytes.0)),
            swizzled[1].then(|| Swizzle::for_rows(row_bytes.1)),
        ]
    }

    /// A's swizzle, when swizzled.
    pub fn a_swizzle(&self) -> Option<Swizzle> {
        self.swizzle[0]
    }

    /// B's swizzle, when swizzled.
    pub fn b_swizzle(&self) -> Option<Swizzle> {
        self.swizzle[1]
    }
}

/// The buffers `mma.sync` operands are staged in, `ks` elements of K at a
/// time, and how each operand is written into its buffer.
pub struct Staged {
    /// Where the fragments read the operands.
    pub ops: Operands,
    /// K elements per slice.
    pub ks: i64,
    /// K in all.
    kk: i64,
    /// A's buffer; none when A's fragments are in registers.
    a: Option<Dest>,
    b: Dest,
}

/// How one operand is written: its buffer, the byte stride of each tile
/// dimension, the swizzle, and (for the general staging path) where the
/// tile's dimensions land in the buffer.
struct Dest {
    buf: Buffer,
    strides: Vec<i64>,
    swizzle: Option<Swizzle>,
    place: Placement,
}

/// Allocates the buffers for tiles `a` (`[batch,] M x K`) and `b`
/// (`[batch,] K x N`) staged `ks` elements of K at a time (all of K, or a
/// power-of-two slice of it); [`Staged::stage`] writes each slice. A gets
/// no buffer unless `stage_a` (its fragments are then in registers).
pub fn operand_buffers(
    l: &mut Lowerer,
    kind: Kind,
    (ashape, bshape): (&[i64], &[i64]),
    (a_elem, b_elem): (Elem, Elem),
    ks: i64,
    stage_a: bool,
    swizzle: bool,
) -> Result<Staged, LowerError> {
    let eb = kind.bytes();
    let rank = ashape.len();
    let (mm, kk, nn) = (ashape[rank - 2], ashape[rank - 1], bshape[rank - 1]);
    let lead: Vec<i64> = ashape[..rank - 2].to_vec();
    let with = |rows: i64, cols: i64| {
        let mut s = lead.clone();
        s.extend([rows, cols]);
        s
    };
    let (apad, bpad) = row_pads(kind, swizzle);
    let identity = Placement::identity(rank);
    let astride = (ks + apad) * eb;
    let at = if stage_a {
        let abuf = alloc(
            l,
            crate::lower::plan::buffers::What::Operands,
            &with(mm, ks + apad),
            a_elem,
        )?;
        let mut a_strides = vec![mm * astride, astride, eb];
        a_strides.drain(..3 - rank);
        Some(Dest {
            buf: abuf,
            strides: a_strides,
            swizzle: swizzle.then(|| Swizzle::for_rows(astride)),
            place: identity.clone(),
        })
    } else {
        None
    };
    let (bt, bstride) = if kind == Kind::Byte {
        let stride = (ks + bpad) * eb;
        let buf = alloc(
            l,
            crate::lower::plan::buffers::What::Operands,
            &with(nn, ks + bpad),
            b_elem,
        )?;
        let mut strides = vec![nn * stride, eb, stride];
        strides.drain(..3 - rank);
        let mut dims: Vec<usize> = (0..rank).collect();
        dims.swap(rank - 2, rank - 1);
        let place = Placement {
            dims,
            offsets: vec![Operand::Imm(0); rank],
        };
        let sw = swizzle.then(|| Swizzle::for_rows(stride));
        (
            Dest {
                buf,
                strides,
                swizzle: sw,
                place,
            },
            stride,
        )
    } else {
        let stride = (nn + bpad) * eb;
        let buf = alloc(
            l,
            crate::lower::plan::buffers::What::Operands,
            &with(ks, nn + bpad),
            b_elem,
        )?;
        let mut strides = vec![ks * stride, stride, eb];
        strides.drain(..3 - rank);
        let sw = swizzle.then(|| Swizzle::for_rows(stride));
        (
            Dest {
                buf,
                strides,
                swizzle: sw,
                place: identity,
            },
            stride,
        )
    };
    let b_rows = if kind == Kind::Byte { nn } else { ks };
    Ok(Staged {
        ops: Operands {
            kind,
            a: (
                at.as_ref().map_or(0, |d| d.buf.offset),
                astride,
                mm * astride,
            ),
            b: (bt.buf.offset, bstride, b_rows * bstride),
            b_natural: false,
            b_nk: false,
            swizzle: Operands::row_swizzles([swizzle; 2], (astride, bstride)),
        },
        ks,
        kk,
        a: at,
        b: bt,
    })
}

impl Staged {
    /// The bytes of the scratch its buffers span (A's, where it has one,
    /// and B's).
    pub fn bytes(&self) -> Vec<std::ops::Range<i64>> {
        let a = self.a.as_ref().map(|d| d.buf.bytes());
        a.into_iter().chain([self.b.buf.bytes()]).collect()
    }

    /// Where a copy of A's slice lands, when A has a buffer.
    pub fn a_dest(&self) -> Option<CopyDest<'_>> {
        self.a.as_ref().map(|d| CopyDest {
            off: d.buf.offset,
            strides: &d.strides,
            swizzle: d.swizzle,
        })
    }
}

impl Staged {
    /// Writes slice `s` of K of operands `a` and `b` (all of them when one
    /// slice covers K); `a` none: A is copied into its buffer otherwise
    /// ([`Staged::a_dest`]).
    pub fn stage(&self, l: &mut Lowerer, a: Option<Part>, b: Part, s: i64) {
        let eb = self.ops.kind.bytes();
        for (part, to, kdim) in [(a, self.a.as_ref(), 1), (Some(b), Some(&self.b), 2)] {
            let (Some(part), Some(to)) = (part, to) else {
                continue;
            };
            let (t, w) = match part {
                Part::Whole(t) => {
                    let rank = t.layout.shape.len();
                    let w = (self.ks < self.kk).then(|| Window::slice(rank - kdim, self.ks, s));
                    (t, w)
                }
                Part::Slice(t) => (t, None),
            };
            if !store(l, t, to.buf.offset, &to.strides, eb, to.swizzle, w) {
                match w {
                    Some(w) => write_window(l, t, &to.buf, &to.place, w),
                    None => write(l, t, &to.buf, &to.place),
                }
            }
        }
    }
}

/// Writes tile `t` into shared memory at byte offset `off` with byte
/// `strides` per tile dimension, each thread storing runs of registers that
/// are contiguous in memory as one vector of up to 16 bytes at an immediate
/// offset from one address (swizzled by `sw` when given). With a window,
/// only the elements inside it, at their coordinates less its start. False
/// (nothing written) when the layout's bases overlap.
fn store(
    l: &mut Lowerer,
    t: &Tile,
    off: i64,
    strides: &[i64],
    eb: i64,
    sw: Option<Swizzle>,
    window: Option<Window>,
) -> bool {
    let layout = &t.layout;
    if !disjoint(layout) {
        return false;
    }
    let byte = |b: &[i64]| -> i64 {
        let inside = window.map_or_else(|| b.to_vec(), |w| w.low(b));
        inside.iter().zip(strides).map(|(x, s)| x * s).sum()
    };
    // Leading register bases stepping one element at a time: a vector.
    let mut vbits = 0;
    while vbits < layout.register.len()
        && byte(&layout.register[vbits]) == eb << vbits
        && (eb << (vbits + 1)) <= 16
    {
        vbits += 1;
    }
    if eb == 1 {
        vbits = 0;
    }
    let (start, addr) = thread_address_from(l, layout, off, byte);
    let swizzled = sw.map(|sw| Swizzled::new(l, sw, start, addr));
    let owner = l.owner_pred(layout);
    if let Some(q) = owner {
        l.b.begin_if(q, true);
    }
    let v = 1usize << vbits;
    // Vectors grouped by the window slice their register part picks.
    let groups = slice_groups(window, layout, (0..layout.num_registers()).step_by(v));
    let selector = window.map(|w| Selector::new(l, layout, w));
    for (high, starts) in groups {
        let guard = selector
            .as_ref()
            .map_or(Guard::Always, |s| s.guard(l, high));
        Selector::guarded(l, guard, |l| {
            for r0 in starts {
                let imm = (0..layout.register.len())
                    .filter(|k| r0 >> k & 1 == 1)
                    .map(|k| byte(&layout.register[k]))
                    .sum::<i64>();
                let at = |l: &mut Lowerer| match &swizzled {
                    Some(s) => s.addr(l, imm),
                    None => Operand::Addr(addr, imm),
                };
                store_vector(l, &t.regs[r0..r0 + v], eb, at);
            }
        });
    }
    if owner.is_some() {
        l.b.end_if();
    }
    true
}

/// Writes tile `t` into shared memory at byte offset `off` with byte
/// `strides` per tile dimension, unswizzled; false (nothing written) when
/// its layout is not [`disjoint`].
pub fn store_rows(l: &mut Lowerer, t: &Tile, off: i64, strides: &[i64]) -> bool {
    store(l, t, off, strides, t.elem.bits() as i64 / 8, None, None)
}

/// `st.shared` of registers `regs` (consecutive elements of `eb` bytes,
/// 16-bit pairs packed into words) at the address `at` gives.
fn store_vector(l: &mut Lowerer, regs: &[Reg], eb: i64, at: impl FnOnce(&mut Lowerer) -> Operand) {
    let v = regs.len();
    let words: Vec<Reg> = if eb == 2 && v > 1 {
        regs.chunks(2).map(|p| pack(l, p[0], p[1])).collect()
    } else {
        regs.to_vec()
    };
    let (mods, ty, val): (&[&'static str], Ty, Operand) = match (words.len(), eb) {
        (1, 8) => (&["shared"], Ty::B64, Operand::Reg(words[0])),
        (_, 8) => (&["shared", "v2"], Ty::B64, Operand::Vec(words)),
        (1, 1) => (&["shared"], Ty::B8, Operand::Reg(words[0])),
        (1, 2) if v == 1 => (&["shared"], Ty::B16, Operand::Reg(words[0])),
        (1, _) => (&["shared"], Ty::B32, Operand::Reg(words[0])),
        (2, _) => (&["shared", "v2"], Ty::B32, Operand::Vec(words)),
        _ => (&["shared", "v4"], Ty::B32, Operand::Vec(words)),
    };
    let at = at(l);
    l.b.push(Inst::new(Opc::St, mods, &[ty], vec![], vec![at, val]));
}

/// `mov.b32 d, {lo, hi}`: two b16 registers packed.
pub fn pack(l: &mut Lowerer, lo: Reg, hi: Reg) -> Reg {
    l.b.join(lo, hi)
}

/// Each lane's base addresses for its fragment loads.
pub struct FragmentAddrs {
    a: Reg,
    b: Reg,
    /// A's swizzled base, when A is swizzled.
    sa: Option<Swizzled>,
    /// B's swizzled base, when B is swizzled.
    sb: Option<Swizzled>,
}

impl FragmentAddrs {
    /// The addresses of lane `lane` in the warp whose sub-tile starts at
    /// row `m0`, column `n0`; the operands' offsets are from `a_base` and
    /// `b_base` (the scratch array's address, or a buffer's aligned one).
    pub fn new(
        l: &mut Lowerer,
        ops: &Operands,
        (a_base, b_base): (Reg, Reg),
        lane: Reg,
        m0: Reg,
        n0: Reg,
    ) -> Self {
        let lo4 = bin(l, Opc::And, Ty::B32, lane, Operand::Imm(15));
        let hi = bin(l, Opc::Shr, Ty::U32, lane, Operand::Imm(4));
        let eb = ops.kind.bytes();
        let b = bin(l, Opc::Add, Ty::U32, b_base, Operand::Imm(ops.b.0));
        let a = bin(l, Opc::Add, Ty::U32, a_base, Operand::Imm(ops.a.0));
        let starts = (a, b);
        if ops.kind == Kind::F64 {
            // a0: row m0 + lane / 4, column lane % 4; b0: row lane % 4,
            // column n0 + lane / 4.
            let t = bin(l, Opc::And, Ty::B32, lane, Operand::Imm(3));
            let g = bin(l, Opc::Shr, Ty::U32, lane, Operand::Imm(2));
            let row = bin(l, Opc::Add, Ty::U32, m0, Operand::Reg(g));
            let a = mad(l, row, ops.a.1, a);
            let a = mad(l, t, eb, a);
            let col = bin(l, Opc::Add, Ty::U32, n0, Operand::Reg(g));
            let b = mad(l, t, ops.b.1, b);
            let b = mad(l, col, eb, b);
            return FragmentAddrs::at(l, ops, starts, a, b);
        }
        // A (ldmatrix x4): row m0 + lane % 16, 16-byte column lane / 16.
        let row = bin(l, Opc::Add, Ty::U32, m0, Operand::Reg(lo4));
        let a = mad(l, row, ops.a.1, a);
        let a = mad(l, hi, 16, a);
        let b = match ops.kind {
            Kind::F64 => b,
            Kind::Half if !ops.b_nk => {
                // ldmatrix .trans: row k = lane % 16, columns n0 + 8 (lane / 16).
                let b = mad(l, lo4, ops.b.1, b);
                let b = mad(l, hi, 16, b);
                mad(l, n0, eb, b)
            }
            Kind::Tf32 => {
                // b0: row k = lane % 4, column n0 + lane / 4.
                let k = bin(l, Opc::And, Ty::B32, lane, Operand::Imm(3));
                let g = bin(l, Opc::Shr, Ty::U32, lane, Operand::Imm(2));
                let n = bin(l, Opc::Add, Ty::U32, n0, Operand::Reg(g));
                let b = mad(l, k, ops.b.1, b);
                mad(l, n, eb, b)
            }
            Kind::Byte if ops.b_natural => {
                // b0 bytes j: row k = 4 (lane % 4) + j, column n0 + lane / 4.
                let k = bin(l, Opc::And, Ty::B32, lane, Operand::Imm(3));
                let g = bin(l, Opc::Shr, Ty::U32, lane, Operand::Imm(2));
                let n = bin(l, Opc::Add, Ty::U32, n0, Operand::Reg(g));
                let b = mad(l, k, 4 * ops.b.1, b);
                bin(l, Opc::Add, Ty::U32, b, Operand::Reg(n))
            }
            Kind::Half | Kind::Byte => {
                // ldmatrix on B^T: row n0 + lane % 8 + 8 (lane / 16),
                // 16-byte column (lane / 8) % 2.
                let r = bin(l, Opc::And, Ty::B32, lane, Operand::Imm(7));
                let r = mad(l, hi, 8, r);
                let r = bin(l, Opc::Add, Ty::U32, r, Operand::Reg(n0));
                let c = bin(l, Opc::Shr, Ty::U32, lane, Operand::Imm(3));
                let c = bin(l, Opc::And, Ty::B32, c, Operand::Imm(1));
                let b = mad(l, r, ops.b.1, b);
                mad(l, c, 16, b)
            }
        };
        FragmentAddrs::at(l, ops, starts, a, b)
    }

    /// The lane's addresses `a`, `b` in buffers starting at `starts`,
    /// swizzled as `ops` are.
    fn at(l: &mut Lowerer, ops: &Operands, starts: (Reg, Reg), a: Reg, b: Reg) -> Self {
        let sa = ops.a_swizzle().map(|s| Swizzled::new(l, s, starts.0, a));
        let sb = ops.b_swizzle().map(|s| Swizzled::new(l, s, starts.1, b));
        FragmentAddrs { a, b, sa, sb }
    }

    /// The same addresses moved by `off` bytes (another pipeline stage).
    pub fn offset(&self, l: &mut Lowerer, off: Reg) -> FragmentAddrs {
        let moved = |l: &mut Lowerer, r: Reg, s: &Option<Swizzled>| match s {
            Some(_) => r,
            None => bin(l, Opc::Add, Ty::U32, r, Operand::Reg(off)),
        };
        FragmentAddrs {
            a: moved(l, self.a, &self.sa),
            b: moved(l, self.b, &self.sb),
            sa: self.sa.map(|s| s.offset(l, off)),
            sb: self.sb.map(|s| s.offset(l, off)),
        }
    }

    /// The same addresses moved `k0` elements along K: A's columns, B's
    /// rows (its columns where stored transposed); a swizzled operand's
    /// moved address is swizzled afresh.
    pub fn at_k(&self, l: &mut Lowerer, ops: &Operands, k0: Reg) -> FragmentAddrs {
        let eb = ops.kind.bytes();
        let b_step = if ops.b_nk { eb } else { ops.b.1 };
        let (a, b) = (mad(l, k0, eb, self.a), mad(l, k0, b_step, self.b));
        FragmentAddrs {
            a,
            b,
            sa: self.sa.map(|s| s.rebased(l, a)),
            sb: self.sb.map(|s| s.rebased(l, b)),
        }
    }

    /// The address of A's element `off` logical bytes past the lane's.
    fn a_at(&self, l: &mut Lowerer, off: i64) -> Operand {
        match &self.sa {
            Some(sa) => sa.addr(l, off),
            None => Operand::Addr(self.a, off),
        }
    }

    /// The address of B's element `off` logical bytes past the lane's.
    fn b_at(&self, l: &mut Lowerer, off: i64) -> Operand {
        match &self.sb {
            Some(sb) => sb.addr(l, off),
            None => Operand::Addr(self.b, off),
        }
    }

    /// The A fragment (4 registers) of m16 tile `mt`, K step `kt`, batch `bt`.
    pub fn load_a(&self, l: &mut Lowerer, ops: &Operands, bt: i64, mt: i64, kt: i64) -> Vec<Reg> {
        let k = ops.kind;
        let off = bt * ops.a.2 + mt * k.m() * ops.a.1 + kt * k.k() * k.bytes();
        let at = self.a_at(l, off);
        if k == Kind::F64 {
            return vec![ld_shared(l, at, Ty::B64)];
        }
        ldmatrix(l, at, 4, false)
    }

    /// The B fragments (2 registers each) of n8 tiles `nts` at K step `kt`,
    /// batch `bt`.
    pub fn load_b(
        &self,
        l: &mut Lowerer,
        ops: &Operands,
        bt: i64,
        nts: std::ops::Range<i64>,
        kt: i64,
    ) -> Vec<Vec<Reg>> {
        let k = ops.kind;
        let (_, stride, bstride) = ops.b;
        let mut out = Vec::new();
        match k {
            Kind::F64 => {
                for nt in nts {
                    let off = bt * bstride + kt * 4 * stride + nt * 8 * 8;
                    let at = self.b_at(l, off);
                    out.push(vec![ld_shared(l, at, Ty::B64)]);
                }
            }
            Kind::Tf32 => {
                for nt in nts {
                    let off = bt * bstride + kt * 8 * stride + nt * 8 * 4;
                    let at = self.b_at(l, off);
                    let r0 = ld_shared(l, at, Ty::B32);
                    let at = self.b_at(l, off + 4 * stride);
                    let r1 = ld_shared(l, at, Ty::B32);
                    out.push(vec![r0, r1]);
                }
            }
            Kind::Byte if ops.b_natural => {
                for nt in nts {
                    let frag = (0..2)
                        .map(|r| {
                            let off = bt * bstride + (kt * 32 + 16 * r) * stride + nt * 8;
                            let x: Vec<Reg> = (0..4)
                                .map(|j| {
                                    let at = self.b_at(l, off + j * stride);
                                    ld_shared_u8(l, at)
                                })
                                .collect();
                            let lo = prmt(l, x[0], x[1], 0x0040);
                            let hi = prmt(l, x[2], x[3], 0x0040);
                            prmt(l, lo, hi, 0x5410)
                        })
                        .collect();
                    out.push(frag);
                }
            }
            Kind::Half | Kind::Byte => {
                let trans = k == Kind::Half && !ops.b_nk;
                let mut nt = nts.start;
                while nt < nts.end {
                    let two = nt + 1 < nts.end;
                    let off = bt * bstride
                        + if trans {
                            kt * 16 * stride + nt * 8 * 2
                        } else {
                            nt * 8 * stride + kt * 32
                        };
                    let at = self.b_at(l, off);
                    let r = ldmatrix(l, at, if two { 4 } else { 2 }, trans);
                    out.push(r[..2].to_vec());
                    if two {
                        out.push(r[2..].to_vec());
                    }
                    nt += 2;
                }
            }
        }
        out
    }
}

/// `ldmatrix.sync.aligned.m8n8.x{count}[.trans].shared.b16`.
fn ldmatrix(l: &mut Lowerer, at: Operand, count: usize, trans: bool) -> Vec<Reg> {
    let d: Vec<Reg> = (0..count).map(|_| l.b.reg(RegClass::B32)).collect();
    let num = if count == 4 { "x4" } else { "x2" };
    let mods: &[&'static str] = if trans {
        &["sync", "aligned", "m8n8", num, "trans", "shared"]
    } else {
        &["sync", "aligned", "m8n8", num, "shared"]
    };
    l.b.push(Inst::new(
        Opc::Ldmatrix,
        mods,
        &[Ty::B16],
        vec![Operand::Vec(d.clone())],
        vec![at],
    ));
    d
}

/// `ld.shared.u8` into a 32-bit register.
fn ld_shared_u8(l: &mut Lowerer, at: Operand) -> Reg {
    let d = l.b.reg(RegClass::B32);
    l.b.push(Inst::new(
        Opc::Ld,
        &["shared"],
        &[Ty::U8],
        vec![Operand::Reg(d)],
        vec![at],
    ));
    d
}

/// `prmt.b32 d, a, b, sel`.
fn prmt(l: &mut Lowerer, a: Reg, b: Reg, sel: i64) -> Reg {
    l.b.op(
        Opc::Prmt,
        &[],
        &[Ty::B32],
        Ty::B32,
        smallvec![Operand::Reg(a), Operand::Reg(b), Operand::Imm(sel)],
    )
}

/// `ld.shared.b32` or `.b64`.
fn ld_shared(l: &mut Lowerer, at: Operand, ty: Ty) -> Reg {
    let d = l.b.reg_for(ty);
    l.b.push(Inst::new(
        Opc::Ld,
        &["shared"],
        &[ty],
        vec![Operand::Reg(d)],
        vec![at],
    ));
    d
}
