//! The lowering context of one entry ([`Lowerer`]): the plan it reads, the
//! SIMT body under construction, what each IR value became, and helpers
//! every op family uses (thread coordinates, owner predicates, barriers).
//! It names no op family: [`crate::lower::emit::entry`] drives it, the families in
//! [`crate::lower::emit::ops`] extend it.
use rustc_hash::FxHashMap as HashMap;
use smallvec::smallvec;
use std::rc::Rc;

use crate::ir::{Module, OpId, Opcode, Scalar, ValueId};
use crate::lower::analysis::values::Elem;
use crate::lower::emit::scratch::Scratch;
use crate::lower::emit::states::{Deferred, States};
use crate::lower::error::LowerError;
use crate::lower::plan::alloc::choices::Choices;
use crate::lower::plan::alloc::walk::Placed as Planned;
use crate::lower::plan::assign::Layouts;
use crate::lower::plan::buffers::What;
use crate::lower::plan::layout::LinearLayout;
use crate::lower::plan::Plan;
use crate::lower::simt::Builder;
use crate::ptx::{self, Inst, Opc, Operand, Reg, RegClass, Special, Ty};

/// A tile held in registers: element `layout.apply(r, tid)` of the tile is
/// in `regs[r]` of thread `tid`.
#[derive(Clone, Debug)]
pub struct Tile {
    /// Element kind.
    pub elem: Elem,
    /// Distribution over the tile block.
    pub layout: Rc<LinearLayout>,
    /// One register per layout register index (duplicates may repeat).
    pub regs: Vec<Reg>,
}

/// An enclosing loop while its body is lowered.
#[derive(Clone, Debug)]
pub struct LoopCtx {
    /// Whether it is a `loop` (`continue`/`break` may sit in nested `if`s)
    /// rather than a `for` (one `continue`, the body's terminator).
    pub general: bool,
    /// Variables `continue` assigns (the loop-carried values).
    pub iter: Vec<Tile>,
    /// Variables `break` assigns (the loop's results).
    pub results: Vec<Tile>,
    /// `if` nesting depth at the loop body.
    pub if_depth: usize,
}

/// What an IR value became.
#[derive(Clone, Debug)]
pub enum Lowered {
    /// A tile (0-d tiles are scalars, the same in every thread).
    Tile(Tile),
    /// A token, a view, or anything else with no runtime form here.
    Nothing,
    /// A value an op family holds in its own form (a load copied straight
    /// into a product's B buffer, a load its product streams).
    Deferred(Deferred),
}

/// How one op is lowered: [`crate::lower::emit::ops::lower_op`].
pub type LowerOp = fn(&mut Lowerer, OpId) -> Result<(), LowerError>;

/// State while lowering one entry.
pub struct Lowerer<'m> {
    /// The module.
    pub m: &'m Module,
    /// The entry's plan: target, warps, layouts, engines.
    pub plan: &'m Plan,
    /// Lowers one op ([`crate::lower::emit::ops::lower_op`]): how a construct lowers
    /// the ops of its regions, and how a value is recomputed.
    dispatch: LowerOp,
    /// The SIMT body under construction.
    pub b: Builder,
    /// Lowered values.
    pub vals: HashMap<ValueId, Lowered>,
    /// Layouts that replace the plan's while a value is recomputed in
    /// another layout ([`crate::lower::emit::ops::remat`]).
    pub layout_overrides: Layouts,
    /// The shared-memory scratch: one allocator over the buffers' live
    /// ranges ([`crate::lower::emit::scratch`]).
    pub scratch: Scratch,
    /// What the op families and engines keep while the entry is emitted,
    /// each its own type.
    pub states: States,
    /// The entry's constant byte arrays (`vprintf` format strings,
    /// lookup tables): symbol and bytes ([`Lowerer::bytes_symbol`]).
    pub strings: Vec<(String, Vec<u8>)>,
    /// The enclosing loops, innermost last, for `continue` and `break`.
    pub loops: Vec<LoopCtx>,
    /// How many `if`s enclose the op being lowered.
    pub if_depth: usize,
    /// The entry's visible parameters (its arguments).
    pub visible_params: usize,
    /// The tensor maps the entry takes after its visible parameters, in
    /// order ([`Lowerer::tensor_map`]).
    pub tensor_maps: Vec<crate::host::MapDecl>,
    tid: Option<Reg>,
    /// The module's `.file` table when building line info, else `None`.
    files: Option<&'m mut Vec<String>>,
}

/// The runs `(start, len)` of nonzero per-bit offsets `per_bit` in which
/// each offset doubles the one before, so that the run's bits, taken as one
/// field, times its first offset give their sum; with `carry_free` also
/// their xor (no two shifted offsets share a bit).
pub fn doubling_runs(per_bit: &[i64], carry_free: bool) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut k = 0;
    while k < per_bit.len() {
        let o = per_bit[k];
        if o == 0 {
            k += 1;
            continue;
        }
        let mut len = 1;
        while k + len < per_bit.len()
            && per_bit[k + len] == o << len
            && (!carry_free || (1..=len).all(|d| o & (o << d) == 0))
        {
            len += 1;
        }
        runs.push((k, len));
        k += len;
    }
    runs
}

/// The register class of an element kind.
pub fn class_of(e: Elem) -> RegClass {
    RegClass::for_bits(e.bits())
}

/// The untyped PTX type moving an element (`.b32`; `.pred` for i1).
pub fn bits_ty(e: Elem) -> Ty {
    match e.bits() {
        1 => Ty::Pred,
        8 => Ty::B8,
        b => Ty::from_bits(b),
    }
}

impl<'m> Lowerer<'m> {
    /// Lowers op `id` of a region (or again, in another layout) with the
    /// op dispatch the context was made with.
    pub fn lower_op(&mut self, id: OpId) -> Result<(), LowerError> {
        let dispatch = self.dispatch;
        dispatch(self, id)
    }

    /// A context for the entry `plan` plans, with nothing lowered yet;
    /// `dispatch` lowers one op.
    /// With `files` (line info builds), instructions carry source
    /// positions and the files named are appended there.
    pub fn new(
        m: &'m Module,
        plan: &'m Plan,
        dispatch: LowerOp,
        files: Option<&'m mut Vec<String>>,
    ) -> Lowerer<'m> {
        Lowerer {
            m,
            plan,
            dispatch,
            b: Builder::new(),
            vals: HashMap::default(),
            layout_overrides: HashMap::default(),
            loops: Vec::new(),
            if_depth: 0,
            visible_params: 0,
            tensor_maps: Vec::new(),
            scratch: Scratch::default(),
            states: States::default(),
            strings: Vec::new(),
            tid: None,
            files,
        }
    }

    /// A tensor map the host callbacks write at launch, as a hidden
    /// parameter after the visible ones (one per distinct map): the
    /// generic address of its 128 bytes, in a fresh register
    /// (`mov.b64` of the parameter, `cvta.param`).
    pub fn tensor_map(&mut self, decl: &crate::host::MapDecl) -> Reg {
        let same = |d: &crate::host::MapDecl| crate::host::MapDecl {
            map: 0,
            ..d.clone()
        };
        let index = match self.tensor_maps.iter().position(|d| same(d) == same(decl)) {
            Some(i) => self.tensor_maps[i].map,
            None => {
                let index = self.visible_params + self.tensor_maps.len();
                self.tensor_maps.push(crate::host::MapDecl {
                    map: index,
                    ..decl.clone()
                });
                index
            }
        };
        let name = format!("{}_param_{index}", self.plan.name);
        let at = self.b.op(
            Opc::Mov,
            &[],
            &[Ty::B64],
            Ty::B64,
            smallvec::smallvec![Operand::Global(name)],
        );
        self.b.op(
            Opc::Cvta,
            &["param"],
            &[Ty::U64],
            Ty::U64,
            smallvec::smallvec![Operand::Reg(at)],
        )
    }

    /// Claims a scratch buffer holding `what`, of `bytes` aligned to `align`
    /// (a power of two), and returns its offset, the plan's
    /// ([`Lowerer::placed`]). Its writer declares its accesses: the
    /// analysis of those puts a barrier first where earlier buffers' bytes
    /// may still be read ([`crate::lower::simt::membar`]).
    pub fn claim_scratch(&mut self, what: What, bytes: i64, align: i64) -> Result<i64, LowerError> {
        let p = self.placed(what, bytes, align)?;
        self.scratch.claim(&p, !self.loops.is_empty());
        Ok(p.offset)
    }

    /// What the plan's walk chose by the room left, which emission follows
    /// ([`Choices`]); none where the plan placed no buffer (the entry then
    /// fails as it begins, [`crate::lower::emit::entry`]).
    pub fn chosen(&self) -> &Choices {
        static NONE: Choices = Choices { list: Vec::new() };
        self.plan.placement.as_ref().map_or(&NONE, |a| &a.choices)
    }

    /// The plan's next buffer ([`crate::lower::plan::alloc::walk`]), for
    /// a claim of `bytes` holding `what`, aligned to `align`. Where the
    /// plan's walk stopped at a buffer too large for the shared memory
    /// left, that error; else an internal error where it is not the claim
    /// being made: another op's, another size, another content, or none.
    pub fn placed(&self, what: What, bytes: i64, align: i64) -> Result<Planned, LowerError> {
        let placement = self.plan.placement.as_ref().ok();
        let planned = placement.and_then(|a| a.claims.get(self.scratch.claims()));
        let op = self.scratch.claimer();
        if let (None, Some(a)) = (planned, placement.filter(|a| a.unplaced.is_some())) {
            return Err(LowerError::Unsupported {
                what: format!(
                    "a tile too large for shared memory ({bytes} bytes needed, {} available)",
                    a.fits_at_stop
                ),
                location: None,
            });
        }
        let aligned = |p: &Planned| p.offset & (align.max(1) - 1) == 0;
        if let Some(p) =
            planned.filter(|p| (p.op, p.what, p.bytes) == (op, what, bytes) && aligned(p))
        {
            return Ok(*p);
        }
        let name = |op: Option<OpId>| {
            op.map_or_else(
                || "the entry".to_string(),
                |o| format!("'{}' op", self.m.ops[o].name()),
            )
        };
        let plan = planned.map_or_else(
            || "none".to_string(),
            |p| {
                let holds = p.what.describe();
                format!(
                    "{} bytes at {} ({holds}) for {}",
                    p.bytes,
                    p.offset,
                    name(p.op)
                )
            },
        );
        Err(LowerError::Failed {
            message: format!(
                "{}: a buffer of {bytes} bytes aligned to {align} ({}), where the plan places {plan}",
                name(op),
                what.describe()
            ),
            location: op.and_then(|o| self.m.location(o)),
        })
    }

    /// Gives the instructions pushed from now on the source position of
    /// `op`, when building line info and the op has one (else they keep the
    /// current position). Returns the position it replaced.
    pub fn set_loc(&mut self, op: OpId) -> Option<ptx::SrcLoc> {
        let loc = self.m.location(op);
        self.set_position(loc)
    }

    /// [`Lowerer::set_loc`] with the position `loc`.
    pub fn set_position(&mut self, loc: Option<crate::diag::Location>) -> Option<ptx::SrcLoc> {
        let before = self.b.loc;
        let Some(files) = self.files.as_deref_mut() else {
            return before;
        };
        if let Some(loc) = loc {
            let file = match files.iter().position(|f| *f == loc.file) {
                Some(i) => i,
                None => {
                    files.push(loc.file);
                    files.len() - 1
                }
            };
            self.b.loc = Some(ptx::SrcLoc {
                file: u32::try_from(file + 1).unwrap_or(u32::MAX),
                line: loc.line,
                col: loc.column,
            });
        }
        before
    }

    /// The location-carrying unsupported error for `op`.
    pub fn unsupported(&self, op: OpId) -> LowerError {
        LowerError::Unsupported {
            what: format!("'{}' op", self.m.ops[op].name()),
            location: self.m.location(op),
        }
    }

    /// An unsupported error naming a feature of `op`.
    pub fn unsupported_feature(&self, op: OpId, what: &str) -> LowerError {
        LowerError::Unsupported {
            what: format!("'{}' op with {what}", self.m.ops[op].name()),
            location: self.m.location(op),
        }
    }

    /// A new constant byte array of the entry holding `bytes`: its symbol
    /// (`__tile_fmt_<entry>_<n>`).
    pub fn bytes_symbol(&mut self, bytes: Vec<u8>) -> String {
        let name = format!("__tile_fmt_{}_{}", self.plan.name, self.strings.len());
        self.strings.push((name.clone(), bytes));
        name
    }

    /// Declares that the block reads `bytes` of the scratch from here on,
    /// at a point every thread reaches; a barrier goes here where they are
    /// written since the last one ([`crate::lower::simt::membar`]).
    pub fn reads(&mut self, bytes: std::ops::Range<i64>) {
        self.declare(crate::lower::simt::membar::Access::Read, bytes, None);
    }

    /// Declares that the block writes `bytes` of the scratch from here on,
    /// at a point every thread reaches; a barrier goes here where they are
    /// read or written since the last one.
    pub fn writes(&mut self, bytes: std::ops::Range<i64>) {
        self.declare(crate::lower::simt::membar::Access::Write, bytes, None);
    }

    /// Declares that each thread reads and rewrites `bytes` of the scratch
    /// no other thread touches, from here on (a line scanned in place).
    pub fn updates(&mut self, bytes: std::ops::Range<i64>) {
        self.declare(crate::lower::simt::membar::Access::ReadWrite, bytes, None);
    }

    /// Declares an `access` to `bytes` of the scratch by the op claiming
    /// scratch now (the op being lowered, or the loop it claims ahead of;
    /// the scratch map names it); with `owner`, one that the owner's own
    /// protocol orders against its other accesses (a product flipping
    /// between two sets of buffers, a load's copies): the analysis orders
    /// it only against the accesses of others.
    pub fn declare(
        &mut self,
        access: crate::lower::simt::membar::Access,
        bytes: std::ops::Range<i64>,
        owner: Option<OpId>,
    ) {
        let index = |op: OpId| u32::try_from(op.index()).ok();
        let mut d = crate::lower::simt::membar::Declared::new(access, bytes);
        d.owner = owner.and_then(index);
        d.by = self.scratch.claimer().and_then(index);
        self.b.declared(d);
    }

    /// `bar.sync 0`: every thread of the tile block waits for the others.
    pub fn barrier(&mut self) {
        self.b.push(crate::lower::simt::barriers::barrier());
    }

    /// `%tid.x` (read once).
    pub fn tid(&mut self) -> Reg {
        if let Some(t) = self.tid {
            return t;
        }
        let t = self.b.op(
            Opc::Mov,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Special(Special::TidX)],
        );
        self.tid = Some(t);
        t
    }

    /// A fresh predicate: whether this thread is thread 0 of the block.
    pub fn is_thread_zero(&mut self) -> Reg {
        let tid = self.tid();
        self.b.op(
            Opc::Setp,
            &["eq"],
            &[Ty::U32],
            Ty::Pred,
            smallvec![Operand::Reg(tid), Operand::Imm(0)],
        )
    }

    /// `mov.u32 d, __tile_smem`: the address of the shared-memory scratch
    /// array, in a fresh register.
    pub fn shared_base(&mut self) -> Reg {
        self.b.op(
            Opc::Mov,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![Operand::Symbol(ptx::SHARED_SYMBOL)],
        )
    }

    /// `bfe.u32`: bits `pos .. pos + len` of `x`.
    pub fn bfe(&mut self, x: Reg, pos: usize, len: usize) -> Reg {
        self.b.op(
            Opc::Bfe,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec![
                Operand::Reg(x),
                Operand::Imm(pos as i64),
                Operand::Imm(len as i64)
            ],
        )
    }

    /// Bit `k` of `%tid.x` times `v`: one term of a thread's coordinate
    /// under a linear layout.
    fn tid_bit_times(&mut self, k: usize, v: i64) -> Reg {
        let tid = self.tid();
        let bit = self.bfe(tid, k, 1);
        self.b.op(
            Opc::Mul,
            &["lo"],
            &[Ty::S32],
            Ty::S32,
            smallvec![Operand::Reg(bit), Operand::Imm(v)],
        )
    }

    /// The xor over the `%tid.x` bits `k` of `values[k]` (bits past
    /// `values` are zero in every thread): a thread's part of one
    /// coordinate under a linear layout. A run of bits that lands on
    /// consecutive bits of the result is one shift, mask and shift.
    pub fn thread_term(&mut self, values: &[i64]) -> Option<Reg> {
        let mut acc: Option<Reg> = None;
        let mut k = 0;
        while k < values.len() {
            let v = values[k];
            if v == 0 || v.count_ones() != 1 {
                if v != 0 {
                    let term = self.tid_bit_times(k, v);
                    acc = Some(self.xor_into(acc, term));
                }
                k += 1;
                continue;
            }
            let mut n = 1;
            while k + n < values.len() && values[k + n] == v << n {
                n += 1;
            }
            let mut t = self.tid();
            if k > 0 {
                t = self.b.op(
                    Opc::Shr,
                    &[],
                    &[Ty::U32],
                    Ty::U32,
                    smallvec![Operand::Reg(t), Operand::Imm(k as i64)],
                );
            }
            if k + n < values.len() {
                t = self.b.op(
                    Opc::And,
                    &[],
                    &[Ty::B32],
                    Ty::B32,
                    smallvec![Operand::Reg(t), Operand::Imm((1 << n) - 1)],
                );
            }
            let s = v.trailing_zeros();
            if s > 0 {
                t = self.b.op(
                    Opc::Shl,
                    &[],
                    &[Ty::B32],
                    Ty::B32,
                    smallvec![Operand::Reg(t), Operand::Imm(i64::from(s))],
                );
            }
            acc = Some(self.xor_into(acc, t));
            k += n;
        }
        acc
    }

    /// `acc ^ t`, or `t` when nothing is accumulated yet.
    pub fn xor_into(&mut self, acc: Option<Reg>, t: Reg) -> Reg {
        match acc {
            None => t,
            Some(a) => self.b.op(
                Opc::Xor,
                &[],
                &[Ty::B32],
                Ty::B32,
                smallvec![Operand::Reg(a), Operand::Reg(t)],
            ),
        }
    }

    /// For a layout that replicates elements over threads, the predicate
    /// "this thread owns its elements" (the replicating `%tid.x` bits are
    /// zero); stores run only in owners so each element is written once.
    pub fn owner_pred(&mut self, layout: &LinearLayout) -> Option<Reg> {
        let mask = layout.replica_bits(self.plan.warps);
        self.owner_pred_of(mask, layout.thread_bases().len())
    }

    /// "The `%tid.x` bits in `mask`, and those at or above `spanned`, are
    /// zero": the one thread of each replica group.
    pub fn owner_pred_of(&mut self, mask: i64, spanned: usize) -> Option<Reg> {
        // Thread bits the layout does not span replicate too (a 0-d tile
        // lives in every thread).
        let all_bits = (self.plan.warps * 32).trailing_zeros();
        let mask = (spanned as u32..all_bits).fold(mask, |m, k| m | 1 << k);
        if mask == 0 {
            return None;
        }
        let tid = self.tid();
        let t = self.b.op(
            Opc::And,
            &[],
            &[Ty::B32],
            Ty::B32,
            smallvec![Operand::Reg(tid), Operand::Imm(mask)],
        );
        Some(self.b.op(
            Opc::Setp,
            &["eq"],
            &[Ty::U32],
            Ty::Pred,
            smallvec![Operand::Reg(t), Operand::Imm(0)],
        ))
    }

    /// The lowered tile of `v`.
    pub fn tile(&self, op: OpId, v: ValueId) -> Result<Tile, LowerError> {
        match self.vals.get(&v) {
            Some(Lowered::Tile(t)) => Ok(t.clone()),
            _ => Err(LowerError::Failed {
                message: format!(
                    "'{}' op: operand is not a lowered tile",
                    self.m.ops[op].name()
                ),
                location: self.m.location(op),
            }),
        }
    }

    /// The layout assigned to result `v`.
    pub fn layout_of(&self, v: ValueId) -> Rc<LinearLayout> {
        self.layout_overrides
            .get(&v)
            .or_else(|| self.plan.layouts.get(&v))
            .cloned()
            .unwrap_or_else(|| Rc::new(LinearLayout::default_scalar()))
    }

    /// Binds `v` to `t`.
    pub fn bind(&mut self, v: ValueId, t: Tile) {
        self.vals.insert(v, Lowered::Tile(t));
    }

    /// Emits `mov` of an immediate into a fresh register for element `e`.
    pub fn imm(&mut self, e: Elem, bits: u64) -> Reg {
        let ty = bits_ty(e);
        let src = match ty {
            Ty::Pred => Operand::Imm((bits & 1) as i64),
            Ty::B32 if matches!(e, Elem::Num(Scalar::F32)) => Operand::F32(bits as u32),
            Ty::B64 if matches!(e, Elem::Num(Scalar::F64)) => Operand::F64(bits),
            _ => Operand::Imm(bits as i64),
        };
        let ty = if ty == Ty::B8 { Ty::B16 } else { ty };
        let d = self.b.reg(class_of(e));
        self.b.push(Inst::new(
            Opc::Mov,
            &[],
            &[ty],
            smallvec![Operand::Reg(d)],
            vec![src],
        ));
        d
    }
}

/// Whether `op` is a no-op for code generation (tokens, views, hints).
pub fn is_structural(opcode: Opcode) -> bool {
    matches!(
        opcode,
        Opcode::MakeToken
            | Opcode::JoinTokens
            | Opcode::MakeTensorView
            | Opcode::MakePartitionView
            | Opcode::MakeStridedView
            | Opcode::MakeGatherScatterView
            | Opcode::Return
    )
}
