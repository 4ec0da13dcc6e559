//! A ring of stage buffers that `cp.async` fills for the next iterations
//! of a pipelined loop while the current iteration reads its stage: the
//! loop's bounds, its prologue (the first stages filled), loop variables
//! and loop, the copies of each operand into a stage, and the ring
//! positions that wrap. Each engine's pipeline (`mma_sync_pipeline`,
//! `wgmma_pipeline`) adds how a stage is filled, waited for and read.
use smallvec::smallvec;

use crate::ir::{OpId, Scalar, ValueId};
use crate::lower::analysis::values::Elem;
use crate::lower::emit::context::{class_of, Lowerer, Tile};
use crate::lower::emit::copies::address::bin;
use crate::lower::emit::copies::cp_async::{Staged, Stream};
use crate::lower::error::LowerError;
use crate::lower::plan::copies::load::Load;
use crate::ptx::{Opc, Operand, Reg, RegClass, Ty};

/// The bounds of a pipelined loop.
pub(crate) struct Bounds {
    /// The lower bound.
    pub(crate) lb: Tile,
    /// The upper bound.
    pub(crate) ub: Reg,
    /// The step.
    pub(crate) step: Reg,
    /// The induction variable's type (s32 or s64).
    pub(crate) ity: Ty,
    /// The type the loop compares in (unsigned with `unsignedCmp`).
    cmp: Ty,
}

impl Bounds {
    /// Whether induction value `x` is below the upper bound.
    pub(crate) fn before_end(&self, l: &mut Lowerer, x: Reg) -> Reg {
        l.b.op(
            Opc::Setp,
            &["lt"],
            &[self.cmp],
            Ty::Pred,
            smallvec![Operand::Reg(x), Operand::Reg(self.ub)],
        )
    }

    /// Induction value `x` one step on, in a fresh register.
    fn next(&self, l: &mut Lowerer, x: Reg) -> Reg {
        l.b.op(
            Opc::Add,
            &[],
            &[self.ity],
            self.ity,
            smallvec![Operand::Reg(x), Operand::Reg(self.step)],
        )
    }

    /// Moves loop variable `x` one step on.
    pub(crate) fn step_on(&self, l: &mut Lowerer, x: Reg) {
        l.b.op_into(
            x,
            Opc::Add,
            &[],
            &[self.ity],
            smallvec![Operand::Reg(x), Operand::Reg(self.step)],
        );
    }

    /// Emits a pipelined loop's prologue: fills stages 0 .. `stages` - 2
    /// with the iterations from the lower bound `lb` on, each where it is
    /// in bounds (`fill` gets the stage's index times `unit` in a u32
    /// register, and the iteration's induction value), `after` following
    /// each. Returns the induction value of the last one.
    pub(crate) fn prologue(
        &self,
        l: &mut Lowerer,
        (stages, unit): (i64, i64),
        lb: Reg,
        fill: impl Fn(&mut Lowerer, Reg, Reg),
        after: impl Fn(&mut Lowerer),
    ) -> Reg {
        let mut next = lb;
        for s in 0..stages - 1 {
            if s > 0 {
                next = self.next(l, next);
            }
            let go = self.before_end(l, next);
            let stage = l.b.op(
                Opc::Mov,
                &[],
                &[Ty::U32],
                Ty::U32,
                smallvec![Operand::Imm(s * unit)],
            );
            l.b.begin_if(go, true);
            fill(l, stage, next);
            l.b.end_if();
            after(l);
        }
        next
    }

    /// The induction variable at `lb` and the induction value S-1
    /// iterations ahead at `next` (the last iteration the prologue
    /// fetched), as fresh loop variables.
    pub(crate) fn loop_variables(&self, l: &mut Lowerer, lb: Reg, next: Reg) -> (Reg, Reg) {
        let class = class_of(self.lb.elem);
        let iv = l.b.reg(class);
        l.b.copy(iv, lb);
        let ahead = l.b.reg(class);
        l.b.copy(ahead, next);
        (iv, ahead)
    }

    /// Emits the loop while the induction variable `iv` is below the upper
    /// bound: `body`, then `iv` one step on.
    pub(crate) fn emit_loop(&self, l: &mut Lowerer, iv: Reg, body: impl FnOnce(&mut Lowerer)) {
        l.b.begin_uniform_loop();
        let go_on = self.before_end(l, iv);
        l.b.begin_loop_body(go_on, true);
        body(l);
        self.step_on(l, iv);
        l.b.end_loop();
    }
}

impl Bounds {
    /// The bounds of the loop's `n` K slices an iteration (a loop that
    /// steps by 1, the plan checked): virtual iterations from `lb n` to
    /// `ub n` by 1, counted in 64 bits (sign- or, with `unsignedCmp`,
    /// zero-extended), the slice `j` of iteration `i` being `i n + j`.
    pub(crate) fn sliced(&self, l: &mut Lowerer, n: i64) -> Bounds {
        let unsigned = matches!(self.cmp, Ty::U32 | Ty::U64);
        let wide = |l: &mut Lowerer, x: Reg| {
            let x = match self.ity {
                Ty::S64 => x,
                _ => {
                    let (to, from) = if unsigned {
                        (Ty::U64, Ty::U32)
                    } else {
                        (Ty::S64, Ty::S32)
                    };
                    l.b.op(
                        Opc::Cvt,
                        &[],
                        &[to, from],
                        Ty::S64,
                        smallvec![Operand::Reg(x)],
                    )
                }
            };
            l.b.op(
                Opc::Mul,
                &["lo"],
                &[Ty::S64],
                Ty::S64,
                smallvec![Operand::Reg(x), Operand::Imm(n)],
            )
        };
        let lb = wide(l, self.lb.regs[0]);
        let ub = wide(l, self.ub);
        let step = l.b.op(
            Opc::Mov,
            &[],
            &[Ty::S64],
            Ty::S64,
            smallvec![Operand::Imm(1)],
        );
        Bounds {
            lb: Tile {
                elem: Elem::Num(Scalar::I64),
                layout: self.lb.layout.clone(),
                regs: vec![lb],
            },
            ub,
            step,
            ity: Ty::S64,
            cmp: compare_type(Ty::S64, unsigned),
        }
    }
}

/// A fresh u32 loop variable holding `v`.
pub(crate) fn counter(l: &mut Lowerer, v: i64) -> Reg {
    let r = l.b.reg(RegClass::B32);
    l.b.op_into(r, Opc::Mov, &[], &[Ty::U32], smallvec![Operand::Imm(v)]);
    r
}

/// The bounds of `for` op `id`, if its induction variable is i32 or i64.
pub(crate) fn bounds(l: &mut Lowerer, id: OpId) -> Result<Option<Bounds>, LowerError> {
    let op = &l.m.ops[id];
    let Some((lb, ub, step)) = op.for_bounds() else {
        return Ok(None);
    };
    let unsigned = op.has_flag("unsignedCmp");
    let lb = l.tile(id, lb)?;
    let ity = match lb.elem {
        Elem::Num(Scalar::I64) => Ty::S64,
        Elem::Num(Scalar::I32) => Ty::S32,
        _ => return Ok(None),
    };
    let cmp = compare_type(ity, unsigned);
    let ub = l.tile(id, ub)?.regs[0];
    let step = l.tile(id, step)?.regs[0];
    Ok(Some(Bounds {
        lb,
        ub,
        step,
        ity,
        cmp,
    }))
}

/// The type a loop whose induction variable is of type `ity` compares in
/// (unsigned with `unsignedCmp`).
pub(crate) fn compare_type(ity: Ty, unsigned: bool) -> Ty {
    match (ity, unsigned) {
        (Ty::S64, true) => Ty::U64,
        (Ty::S64, false) => Ty::S64,
        (_, true) => Ty::U32,
        _ => Ty::S32,
    }
}

/// Advances ring position `r` by `by`, back to 0 at `wrap`; returns the
/// predicate of the wrap.
pub(crate) fn advance_ring(l: &mut Lowerer, r: Reg, by: i64, wrap: i64) -> Reg {
    let n = bin(l, Opc::Add, Ty::U32, r, Operand::Imm(by));
    let at_end = l.b.op(
        Opc::Setp,
        &["eq"],
        &[Ty::U32],
        Ty::Pred,
        smallvec![Operand::Reg(n), Operand::Imm(wrap)],
    );
    l.b.op_into(
        r,
        Opc::Selp,
        &[],
        &[Ty::B32],
        smallvec![Operand::Imm(0), Operand::Reg(n), Operand::Reg(at_end)],
    );
    at_end
}

/// The `cp.async` copies of a pipelined loop's A and B loads into their
/// stage buffers.
pub(crate) struct StageCopies<'a> {
    /// The A and B loads.
    loads: (&'a Load, &'a Load),
    /// Their buffers' copy layouts and addresses.
    staged: (&'a Staged, &'a Staged),
    /// Their copy state.
    streams: (Stream, Stream),
}

impl<'a> StageCopies<'a> {
    /// The copies of `loads` into `staged` at the loop's first iteration
    /// (`lb` holds the lower bound of the induction variable `iv`).
    pub(crate) fn new(
        l: &mut Lowerer,
        loads: (&'a Load, &'a Load),
        staged: (&'a Staged, &'a Staged),
        iv: ValueId,
        lb: &Tile,
        bounds: &Bounds,
    ) -> Result<StageCopies<'a>, LowerError> {
        let (step, ity) = (bounds.step, bounds.ity);
        let a = Stream::new(l, loads.0, staged.0, iv, lb, step, ity)?;
        let b = Stream::new(l, loads.1, staged.1, iv, lb, step, ity)?;
        Ok(StageCopies {
            loads,
            staged,
            streams: (a, b),
        })
    }

    /// Copies the current iteration's A and B tiles into the stage at
    /// byte offset `off`.
    pub(crate) fn issue(&self, l: &mut Lowerer, off: Reg) {
        self.streams.0.issue(l, self.loads.0, self.staged.0, off);
        self.streams.1.issue(l, self.loads.1, self.staged.1, off);
    }
}
