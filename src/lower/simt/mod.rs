//! The per-thread SIMT IR: what one thread of the tile block executes, as
//! typed PTX instructions over virtual registers with structured control
//! flow. Lowering of tile ops builds it through [`Builder`]; the passes in
//! [`opt`] clean it up; [`emit`] flattens it into a PTX body with labels.
//!
//! Registers written in one place only are SSA values; registers written in
//! several places (the results of `if`s, loop-carried values, loads
//! overwriting their padding) are variables, and the passes leave them be.
pub mod barriers;
pub mod cse;
pub mod emit;
pub mod licm;
pub mod membar;
pub mod offsets;
pub mod opt;
pub mod regs;
pub mod widen;

use crate::ptx::{Inst, Opc, Operand, Operands, Reg, RegClass, SrcLoc, Ty};
use smallvec::smallvec;

/// A statement of the SIMT IR. `if`s and loops are boxed, so a statement
/// is two words and bodies stay small.
#[derive(Clone, Debug, PartialEq, Hash)]
pub enum Stmt {
    /// A straight-line instruction.
    Inst(Box<Inst>),
    /// `if (pred == run_when) { body } else { else_body }`.
    If(Box<IfStmt>),
    /// Leaves the innermost loop.
    Break,
    /// Starts the next iteration of the innermost loop (its header).
    Continue,
    /// `loop { header; if (pred != run_when) break; body }`.
    Loop(Box<LoopStmt>),
    /// A phase of shared-memory access an op declares; [`membar::place`]
    /// turns it into a barrier or nothing before any other pass runs.
    Shared(Box<membar::Declared>),
}

/// `if (pred == run_when) { body } else { else_body }`.
#[derive(Clone, Debug, PartialEq, Hash)]
pub struct IfStmt {
    /// The predicate register tested.
    pub pred: Reg,
    /// The predicate value for which `body` runs.
    pub run_when: bool,
    /// The guarded statements.
    pub body: Vec<Stmt>,
    /// The statements run otherwise.
    pub else_body: Vec<Stmt>,
}

/// `loop { header; if (pred != run_when) break; body }`.
#[derive(Clone, Debug, PartialEq, Hash)]
pub struct LoopStmt {
    /// Computes the continuation predicate.
    pub header: Vec<Stmt>,
    /// The predicate tested after the header.
    pub pred: Reg,
    /// The predicate value for which the loop goes on.
    pub run_when: bool,
    /// The loop body.
    pub body: Vec<Stmt>,
}

/// A per-thread function body.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Function {
    /// Next free register number.
    pub next_reg: u32,
    /// The most threads a tile block runs (`%tid.x` is below it): the
    /// launch's `.reqntid`, or the hardware's 1024 when unknown.
    pub threads: u32,
    /// The statements.
    pub body: Vec<Stmt>,
}

/// An open construct in the [`Builder`].
#[derive(Debug)]
enum Frame {
    /// Collecting the then-branch (`else_body` empty) or the else-branch.
    If {
        pred: Reg,
        run_when: bool,
        body: Vec<Stmt>,
        in_else: bool,
        else_body: Vec<Stmt>,
        /// Whether every thread of the block takes the same branch.
        uniform: bool,
    },
    /// Collecting a loop header.
    LoopHeader {
        header: Vec<Stmt>,
        /// Whether every thread of the block runs as many iterations.
        uniform: bool,
    },
    /// Collecting a loop body.
    LoopBody {
        header: Vec<Stmt>,
        pred: Reg,
        run_when: bool,
        body: Vec<Stmt>,
        /// Whether every thread of the block runs as many iterations.
        uniform: bool,
    },
}

/// Builds a [`Function`], keeping a stack of open constructs.
#[derive(Debug, Default)]
pub struct Builder {
    /// The source position given to the instructions pushed from now on
    /// (line info builds only).
    pub loc: Option<SrcLoc>,
    /// The first instruction pushed with an immediate that does not fit
    /// its operand ([`crate::ptx::check::inst`]), why; the op being
    /// lowered takes it as its error ([`crate::lower::emit::ops::lower_op`]).
    pub overflow: Option<String>,
    /// Whether an access was declared under an `if` some threads of the
    /// block may skip ([`Builder::declare`]).
    pub misplaced: bool,
    next_reg: u32,
    stack: Vec<Frame>,
    body: Vec<Stmt>,
}

impl Builder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// A fresh register of `class`.
    pub fn reg(&mut self, class: RegClass) -> Reg {
        self.next_reg += 1;
        Reg {
            class,
            id: self.next_reg,
        }
    }

    /// `mov.u32 %tid.x` into a fresh register (the varying value tests
    /// build on).
    #[cfg(test)]
    pub(crate) fn tid_x(&mut self) -> Reg {
        self.op(
            Opc::Mov,
            &[],
            &[Ty::U32],
            Ty::U32,
            smallvec::smallvec![Operand::Special(crate::ptx::Special::TidX)],
        )
    }

    /// A fresh register sized for `ty`.
    pub fn reg_for(&mut self, ty: Ty) -> Reg {
        self.reg(RegClass::for_bits(ty.bits()))
    }

    fn current(&mut self) -> &mut Vec<Stmt> {
        match self.stack.last_mut() {
            Some(Frame::If {
                body,
                in_else: false,
                ..
            }) => body,
            Some(Frame::If { else_body, .. }) => else_body,
            Some(Frame::LoopHeader { header, .. }) => header,
            Some(Frame::LoopBody { body, .. }) => body,
            None => &mut self.body,
        }
    }

    /// Appends an instruction.
    pub fn push(&mut self, mut inst: Inst) {
        if self.overflow.is_none() {
            self.overflow = crate::ptx::check::inst(&inst).err();
        }
        if inst.loc.is_none() {
            inst.loc = self.loc;
        }
        self.current().push(Stmt::Inst(Box::new(inst)));
    }

    /// Puts an instruction at the very start of the function, where it
    /// runs before (and dominates) everything (initial values of state
    /// that loops update, such as a buffer phase).
    pub fn prepend(&mut self, inst: Inst) {
        self.body.insert(0, Stmt::Inst(Box::new(inst)));
    }

    /// Emits `opc.mods.tys dst, srcs` into a fresh register of `dst_ty`'s size.
    pub fn op(
        &mut self,
        opc: Opc,
        mods: &[&'static str],
        tys: &[Ty],
        dst_ty: Ty,
        srcs: impl Into<Operands>,
    ) -> Reg {
        let d = self.reg_for(dst_ty);
        self.push(Inst::new(opc, mods, tys, smallvec![Operand::Reg(d)], srcs));
        d
    }

    /// Emits `opc.mods.ty dst, srcs` writing an existing register.
    pub fn op_into(
        &mut self,
        d: Reg,
        opc: Opc,
        mods: &[&'static str],
        tys: &[Ty],
        srcs: impl Into<Operands>,
    ) {
        self.push(Inst::new(opc, mods, tys, smallvec![Operand::Reg(d)], srcs));
    }

    /// Copies register `src` into `dst` (same class).
    pub fn copy(&mut self, dst: Reg, src: Reg) {
        let ty = match dst.class {
            RegClass::Pred => Ty::Pred,
            RegClass::B16 => Ty::B16,
            RegClass::B32 => Ty::B32,
            RegClass::B64 => Ty::B64,
        };
        self.op_into(dst, Opc::Mov, &[], &[ty], smallvec![Operand::Reg(src)]);
    }

    /// `mov.bN d, {lo, hi}`: two registers of one class joined into one
    /// of twice the width (b16 halves into b32, b32 halves into b64).
    pub fn join(&mut self, lo: Reg, hi: Reg) -> Reg {
        let (class, ty) = match lo.class {
            RegClass::B16 => (RegClass::B32, Ty::B32),
            _ => (RegClass::B64, Ty::B64),
        };
        let d = self.reg(class);
        self.push(Inst::new(
            Opc::Mov,
            &[],
            &[ty],
            smallvec![Operand::Reg(d)],
            smallvec![Operand::Vec(vec![lo, hi])],
        ));
        d
    }

    /// `mov.bN {lo, hi}, v`: a b32 register split in two b16 ones, a b64
    /// register in two b32 ones.
    pub fn split(&mut self, v: Reg) -> (Reg, Reg) {
        let (class, ty) = match v.class {
            RegClass::B32 => (RegClass::B16, Ty::B32),
            _ => (RegClass::B32, Ty::B64),
        };
        let (lo, hi) = (self.reg(class), self.reg(class));
        self.push(Inst::new(
            Opc::Mov,
            &[],
            &[ty],
            smallvec![Operand::Vec(vec![lo, hi])],
            smallvec![Operand::Reg(v)],
        ));
        (lo, hi)
    }

    /// Opens `if (pred == run_when) { ... }`; close with [`Builder::end_if`].
    pub fn begin_if(&mut self, pred: Reg, run_when: bool) {
        self.open_if(pred, run_when, false);
    }

    /// [`Builder::begin_if`] on a predicate every thread of the block
    /// holds alike (a tile-level `if`, the cluster's rank): an access may
    /// be declared in it.
    pub fn begin_uniform_if(&mut self, pred: Reg, run_when: bool) {
        self.open_if(pred, run_when, true);
    }

    fn open_if(&mut self, pred: Reg, run_when: bool, uniform: bool) {
        self.stack.push(Frame::If {
            pred,
            run_when,
            body: Vec::new(),
            in_else: false,
            else_body: Vec::new(),
            uniform,
        });
    }

    /// Declares that the block `access`es `bytes` of the scratch array from
    /// here on ([`membar`] places the barriers this needs).
    ///
    /// The analysis may put a barrier there, which every thread must reach:
    /// under an `if` opened by [`Builder::begin_if`], or in a loop opened
    /// by [`Builder::begin_loop`], it marks the function
    /// [`Builder::misplaced`] instead of trusting it.
    pub fn declare(&mut self, access: membar::Access, bytes: std::ops::Range<i64>) {
        self.declared(membar::Declared::new(access, bytes));
    }

    /// [`Builder::declare`] of `d` as it is (an owner, the op declaring it).
    pub fn declared(&mut self, d: membar::Declared) {
        self.misplaced |= (self.stack.iter()).any(|f| match f {
            Frame::If { uniform, .. }
            | Frame::LoopHeader { uniform, .. }
            | Frame::LoopBody { uniform, .. } => !uniform,
        });
        self.current().push(Stmt::Shared(Box::new(d)));
    }

    /// Switches the innermost open `if` to its else-branch.
    pub fn begin_else(&mut self) {
        if let Some(Frame::If { in_else, .. }) = self.stack.last_mut() {
            *in_else = true;
        }
    }

    /// Closes the innermost open construct.
    pub fn end_if(&mut self) {
        self.close();
    }

    /// Appends a `break` of the innermost loop.
    pub fn brk(&mut self) {
        self.current().push(Stmt::Break);
    }

    /// Appends a `continue` of the innermost loop.
    pub fn cont(&mut self) {
        self.current().push(Stmt::Continue);
    }

    /// Opens a loop whose trip count may differ between threads (a spin,
    /// a per-element iteration); the statements that follow form its
    /// header, until [`Builder::begin_loop_body`].
    pub fn begin_loop(&mut self) {
        self.stack.push(Frame::LoopHeader {
            header: Vec::new(),
            uniform: false,
        });
    }

    /// [`Builder::begin_loop`] of a loop every thread of the block runs
    /// alike (a tile-level loop, a product's K loop): an access may be
    /// declared in it.
    pub fn begin_uniform_loop(&mut self) {
        self.stack.push(Frame::LoopHeader {
            header: Vec::new(),
            uniform: true,
        });
    }

    /// Ends the loop header: the loop goes on while `pred == run_when`.
    pub fn begin_loop_body(&mut self, pred: Reg, run_when: bool) {
        if let Some(Frame::LoopHeader { header, uniform }) = self.stack.pop() {
            self.stack.push(Frame::LoopBody {
                header,
                pred,
                run_when,
                body: Vec::new(),
                uniform,
            });
        }
    }

    /// Closes the innermost loop.
    pub fn end_loop(&mut self) {
        self.close();
    }

    fn close(&mut self) {
        let stmt = match self.stack.pop() {
            Some(Frame::If {
                pred,
                run_when,
                body,
                else_body,
                ..
            }) => Stmt::If(Box::new(IfStmt {
                pred,
                run_when,
                body,
                else_body,
            })),
            Some(Frame::LoopBody {
                header,
                pred,
                run_when,
                body,
                ..
            }) => Stmt::Loop(Box::new(LoopStmt {
                header,
                pred,
                run_when,
                body,
            })),
            Some(Frame::LoopHeader { header, .. }) => {
                // A loop closed without a body: run the header once.
                self.current().extend(header);
                return;
            }
            None => return,
        };
        self.current().push(stmt);
    }

    /// The finished function (open constructs are closed).
    pub fn finish(mut self) -> Function {
        while !self.stack.is_empty() {
            self.close();
        }
        Function {
            next_reg: self.next_reg,
            threads: 1024,
            body: self.body,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::lower::simt::*;
    use smallvec::smallvec;

    /// `add.<ty> _, t, imm`.
    fn add(b: &mut Builder, t: Reg, ty: Ty, imm: i64) {
        b.op(
            Opc::Add,
            &[],
            &[ty],
            ty,
            smallvec![Operand::Reg(t), Operand::Imm(imm)],
        );
    }

    #[test]
    fn an_immediate_that_does_not_fit_is_kept_for_the_op() {
        let mut b = Builder::new();
        let t = b.tid_x();
        add(&mut b, t, Ty::U32, 4294967295);
        assert_eq!(b.overflow, None);
        add(&mut b, t, Ty::U32, 1 << 32);
        add(&mut b, t, Ty::U16, 1 << 16);
        // The first one is kept.
        let why = b.overflow.take().expect("an overflow");
        assert!(
            why.starts_with("immediate 4294967296 does not fit operand 3"),
            "{why}"
        );
    }
}
