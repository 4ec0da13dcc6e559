//! The `cp.async` copies of one pipelined operand, strength-reduced: each
//! chunk's global address and the room left along the dimension the
//! induction variable indexes are computed once, then advanced by a
//! constant per loop step; the other dimensions' bounds are loop-invariant.
use std::rc::Rc;

use crate::ir::ValueId;
use crate::lower::emit::context::{Lowerer, Tile};
use crate::lower::error::LowerError;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};
use smallvec::smallvec;

use crate::lower::emit::copies::address::bin;
use crate::lower::emit::copies::swizzle::Swizzled;
use crate::lower::emit::ops::view_access::{element, prepare, s64, Access};
use crate::lower::plan::copies::load::Load;

/// A staged operand: its copy layout, per-thread shared address, and the
/// bytes of one stage.
pub(crate) struct Staged {
    /// Elements per chunk.
    pub(crate) chunk: i64,
    pub(crate) layout: Rc<LinearLayout>,
    pub(crate) smem: Reg,
    /// Shared byte offset of each chunk register from `smem` (logical,
    /// before the swizzle).
    pub(crate) chunks: Vec<(usize, i64)>,
    /// The thread's swizzled base, when the buffer is swizzled.
    pub(crate) swizzled: Option<Swizzled>,
}

/// Per-thread copy state of one operand.
pub(crate) struct Stream {
    /// Global address of each chunk (s64 variables).
    addrs: Vec<Reg>,
    /// Bytes the addresses move per loop step.
    delta: Reg,
    /// Elements left along `dim` from this thread's first element (s64
    /// variable), when that dimension needs a bounds check.
    rem: Option<(Reg, Reg)>,
    /// The tile dimension the induction variable indexes.
    dim: usize,
    /// Per chunk: its bytes if the other dimensions are in bounds, else 0.
    inv: Vec<Option<Reg>>,
    /// Bytes per chunk.
    bytes: i64,
}

fn access(
    l: &mut Lowerer,
    ld: &Load,
    st: &Staged,
    iv: ValueId,
    ivt: &Tile,
    at: Reg,
) -> Result<Access, LowerError> {
    l.bind(
        iv,
        Tile {
            elem: ivt.elem,
            layout: ivt.layout.clone(),
            regs: vec![at],
        },
    );
    prepare(l, ld.op, &ld.view, &ld.index, &st.layout)
}

/// `addr + imm` of an address operand as an s64 register.
pub(crate) fn flat(l: &mut Lowerer, o: Operand) -> Reg {
    match o {
        Operand::Addr(r, imm) => l.b.op(
            Opc::Add,
            &[],
            &[Ty::S64],
            Ty::S64,
            smallvec![Operand::Reg(r), Operand::Imm(imm)],
        ),
        Operand::Reg(r) => r,
        _ => unreachable!("element() returns an address"),
    }
}

/// The bytes a chunk of `chunk` elements of `eb` bytes copies when `left`
/// (of type `ty`, s64 or s32) elements remain in bounds: clamp(left, 0,
/// chunk) * eb, and at most `cap` (another dimension's size) when given.
fn bytes_in_bounds(
    l: &mut Lowerer,
    (left, ty): (Reg, Ty),
    chunk: i64,
    eb: i64,
    cap: Option<Reg>,
) -> Reg {
    let t = l.b.op(
        Opc::Max,
        &[],
        &[ty],
        ty,
        smallvec![Operand::Reg(left), Operand::Imm(0)],
    );
    let t = l.b.op(
        Opc::Min,
        &[],
        &[ty],
        ty,
        smallvec![Operand::Reg(t), Operand::Imm(chunk)],
    );
    let t = if ty == Ty::S64 {
        l.b.op(
            Opc::Cvt,
            &[],
            &[Ty::U32, Ty::S64],
            Ty::U32,
            smallvec![Operand::Reg(t)],
        )
    } else {
        t
    };
    let t = bin(l, Opc::Mul, Ty::U32, t, Operand::Imm(eb));
    match cap {
        Some(v) => bin(l, Opc::Min, Ty::U32, t, Operand::Reg(v)),
        None => t,
    }
}

/// How a chunk's dimension is checked: by the room left (u32), or by its
/// index (s64).
enum Check {
    Room(Reg),
    Index(Reg),
}

/// The bytes the chunk of `chunk` elements of `eb` bytes at tile coordinate
/// `c` copies (the rest zero-filled), checking every dimension of `a` but
/// `skip`: all of them when every dimension is in bounds, none when one
/// other than `along` (the chunk's dimension) is out, and what is left of
/// the row along `along`; `None` when no dimension needs a check.
pub(crate) fn chunk_bytes(
    l: &mut Lowerer,
    a: &mut Access,
    c: &[i64],
    skip: Option<usize>,
    along: usize,
    (chunk, eb): (i64, i64),
) -> Option<Reg> {
    let mut size: Option<Reg> = None;
    for (i, &ci) in c.iter().enumerate() {
        if Some(i) == skip || !a.check[i] {
            continue;
        }
        // The room left in 32 bits where it decides (`Access::room`), else
        // the chunk's 64-bit index against the extent.
        let check = match a.room(l, i) {
            Some(room) => Check::Room(room),
            None => Check::Index(s64(l, Opc::Add, Operand::Reg(a.start[i]), Operand::Imm(ci))),
        };
        if i == along {
            // A chunk straddling the row's end copies only what lies in
            // bounds and zero-fills the rest.
            let left = match check {
                Check::Room(room) => (bin(l, Opc::Sub, Ty::S32, room, Operand::Imm(ci)), Ty::S32),
                Check::Index(idx) => (
                    s64(l, Opc::Sub, a.bound[i].clone(), Operand::Reg(idx)),
                    Ty::S64,
                ),
            };
            size = Some(bytes_in_bounds(l, left, chunk, eb, size));
            continue;
        }
        let out = match check {
            Check::Room(room) => l.b.op(
                Opc::Setp,
                &["le"],
                &[Ty::U32],
                Ty::Pred,
                smallvec![Operand::Reg(room), Operand::Imm(ci)],
            ),
            Check::Index(idx) => l.b.op(
                Opc::Setp,
                &["ge"],
                &[Ty::U64],
                Ty::Pred,
                smallvec![Operand::Reg(idx), a.bound[i].clone()],
            ),
        };
        let prev = size.map_or(Operand::Imm(chunk * eb), Operand::Reg);
        size = Some(l.b.op(
            Opc::Selp,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Imm(0), prev, Operand::Reg(out)],
        ));
    }
    size
}

/// `cp.async` of a `bytes`-byte chunk from global `src` to shared `dst`,
/// copying only `size` bytes (the rest zero-filled) when given.
pub(crate) fn cp_async(l: &mut Lowerer, dst: Operand, src: Operand, bytes: i64, size: Option<Reg>) {
    let cache = if bytes == 16 { "cg" } else { "ca" };
    let mut srcs = vec![dst, src, Operand::Imm(bytes)];
    if let Some(s) = size {
        srcs.push(Operand::Reg(s));
    }
    l.b.push(Inst::new(
        Opc::CpAsync,
        &[cache, "shared", "global"],
        &[],
        vec![],
        srcs,
    ));
}

/// The global address of the chunk at register coordinate `c` (register
/// `r`) of access `a`, whole (`cp.async` takes no immediate offset), its
/// bounds left to [`chunk_bytes`].
pub(crate) fn chunk_source(l: &mut Lowerer, a: &mut Access, c: &[i64], r: usize) -> Operand {
    let checks = std::mem::take(&mut a.check);
    a.check = vec![false; checks.len()];
    let (_, addr) = element(l, a, c, r);
    a.check = checks;
    Operand::Addr(flat(l, addr), 0)
}

impl Stream {
    /// The state at the first iteration (`ivt` holds the lower bound).
    pub(crate) fn new(
        l: &mut Lowerer,
        ld: &Load,
        st: &Staged,
        iv: ValueId,
        ivt: &Tile,
        step: Reg,
        ity: Ty,
    ) -> Result<Stream, LowerError> {
        let dim = ld.index.iter().position(|&v| v == iv).unwrap_or(0);
        let lb = ivt.regs[0];
        let mut a0 = access(l, ld, st, iv, ivt, lb)?;
        let lb1 = l.b.op(
            Opc::Add,
            &[],
            &[ity],
            ity,
            smallvec![Operand::Reg(lb), Operand::Reg(step)],
        );
        let mut a1 = access(l, ld, st, iv, ivt, lb1)?;
        let (r0, _) = st.chunks[0];
        let c0 = st.layout.apply(r0, 0);
        let (_, x0) = element(l, &mut a0, &c0, r0);
        let (_, x1) = element(l, &mut a1, &c0, r0);
        let (x0, x1) = (flat(l, x0), flat(l, x1));
        let delta = s64(l, Opc::Sub, Operand::Reg(x1), Operand::Reg(x0));
        let eb = i64::from(ld.view.elem.bits() / 8);
        let bytes = st.chunk * eb;
        let mut addrs = Vec::new();
        let mut inv = Vec::new();
        for &(r, _) in &st.chunks {
            let c = st.layout.apply(r, 0);
            let (_, x) = element(l, &mut a0, &c, r);
            let x = flat(l, x);
            let var = l.b.reg(RegClass::B64);
            l.b.copy(var, x);
            addrs.push(var);
            let along = c.len() - 1;
            inv.push(chunk_bytes(
                l,
                &mut a0,
                &c,
                Some(dim),
                along,
                (st.chunk, eb),
            ));
        }
        let rem = if a0.check[dim] {
            let r = s64(
                l,
                Opc::Sub,
                a0.bound[dim].clone(),
                Operand::Reg(a0.start[dim]),
            );
            let var = l.b.reg(RegClass::B64);
            l.b.copy(var, r);
            let adv = s64(
                l,
                Opc::Sub,
                Operand::Reg(a1.start[dim]),
                Operand::Reg(a0.start[dim]),
            );
            Some((var, adv))
        } else {
            None
        };
        Ok(Stream {
            addrs,
            delta,
            rem,
            dim,
            inv,
            bytes,
        })
    }

    /// Issues the current step's copies into the stage `stage` bytes on,
    /// then advances to the next step.
    pub(crate) fn issue(&self, l: &mut Lowerer, ld: &Load, st: &Staged, stage: Reg) {
        let swizzled = st.swizzled.map(|s| s.offset(l, stage));
        let dst = match swizzled {
            Some(_) => st.smem,
            None => bin(l, Opc::Add, Ty::U32, st.smem, Operand::Reg(stage)),
        };
        let last = self.dim + 1 == ld.view.tile_shape.len();
        let eb = self.bytes / st.chunk;
        let owner = l.owner_pred(&st.layout);
        if let Some(q) = owner {
            l.b.begin_if(q, true);
        }
        for (k, &(r, imm)) in st.chunks.iter().enumerate() {
            let c = st.layout.apply(r, 0)[self.dim];
            let inv = self.inv[k];
            let size = match self.rem {
                Some((rem, _)) if last => {
                    let left = s64(l, Opc::Sub, Operand::Reg(rem), Operand::Imm(c));
                    Some(bytes_in_bounds(l, (left, Ty::S64), st.chunk, eb, inv))
                }
                Some((rem, _)) => {
                    let inside = l.b.op(
                        Opc::Setp,
                        &["gt"],
                        &[Ty::S64],
                        Ty::Pred,
                        smallvec![Operand::Reg(rem), Operand::Imm(c)],
                    );
                    let full = inv.map_or(Operand::Imm(self.bytes), Operand::Reg);
                    Some(l.b.op(
                        Opc::Selp,
                        &[],
                        &[Ty::U32],
                        Ty::U32,
                        vec![full, Operand::Imm(0), Operand::Reg(inside)],
                    ))
                }
                None => inv,
            };
            let to = match &swizzled {
                Some(s) => s.addr(l, imm),
                None => Operand::Addr(dst, imm),
            };
            cp_async(l, to, Operand::Addr(self.addrs[k], 0), self.bytes, size);
        }
        if owner.is_some() {
            l.b.end_if();
        }
        for &a in &self.addrs {
            l.b.op_into(
                a,
                Opc::Add,
                &[],
                &[Ty::S64],
                smallvec![Operand::Reg(a), Operand::Reg(self.delta)],
            );
        }
        if let Some((rem, adv)) = self.rem {
            l.b.op_into(
                rem,
                Opc::Sub,
                &[],
                &[Ty::S64],
                smallvec![Operand::Reg(rem), Operand::Reg(adv)],
            );
        }
    }
}

/// `cp.async.commit_group`.
pub(crate) fn commit(l: &mut Lowerer) {
    l.b.push(Inst::new(
        Opc::CpAsync,
        &["commit_group"],
        &[],
        vec![],
        vec![],
    ));
}

/// `cp.async.wait_group n`: all but the `n` newest groups complete.
pub(crate) fn wait(l: &mut Lowerer, n: i64) {
    l.b.push(Inst::new(
        Opc::CpAsync,
        &["wait_group"],
        &[],
        vec![],
        smallvec![Operand::Imm(n)],
    ));
}
