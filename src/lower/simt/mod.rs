//! The per-thread SIMT IR: what one thread of the tile block executes, as
//! typed PTX instructions over virtual registers with structured control
//! flow. Lowering of tile ops builds it through [`Builder`]; the passes in
//! [`opt`] clean it up; [`emit`] flattens it into a PTX body with labels.
pub mod emit;
pub mod opt;

use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};

/// A statement of the SIMT IR.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// A straight-line instruction.
    Inst(Inst),
    /// `if (pred == run_when) { body }`.
    If {
        /// The predicate register tested.
        pred: Reg,
        /// The predicate value for which the body runs.
        run_when: bool,
        /// The guarded statements.
        body: Vec<Stmt>,
    },
}

/// A per-thread function body.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Function {
    /// Next free register number.
    pub next_reg: u32,
    /// The statements.
    pub body: Vec<Stmt>,
}

/// Builds a [`Function`], keeping a stack of open `if` bodies.
#[derive(Debug, Default)]
pub struct Builder {
    next_reg: u32,
    stack: Vec<(Reg, bool, Vec<Stmt>)>,
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

    /// A fresh register sized for `ty`.
    pub fn reg_for(&mut self, ty: Ty) -> Reg {
        self.reg(RegClass::for_bits(ty.bits()))
    }

    fn current(&mut self) -> &mut Vec<Stmt> {
        match self.stack.last_mut() {
            Some((_, _, b)) => b,
            None => &mut self.body,
        }
    }

    /// Appends an instruction.
    pub fn push(&mut self, inst: Inst) {
        self.current().push(Stmt::Inst(inst));
    }

    /// Emits `opc.mods.tys dst, srcs` into a fresh register of `dst_ty`'s size.
    pub fn op(
        &mut self,
        opc: Opc,
        mods: &[&'static str],
        tys: &[Ty],
        dst_ty: Ty,
        srcs: Vec<Operand>,
    ) -> Reg {
        let d = self.reg_for(dst_ty);
        self.push(Inst::new(opc, mods, tys, vec![Operand::Reg(d)], srcs));
        d
    }

    /// Emits `opc.mods.ty dst, srcs` writing an existing register.
    pub fn op_into(
        &mut self,
        d: Reg,
        opc: Opc,
        mods: &[&'static str],
        tys: &[Ty],
        srcs: Vec<Operand>,
    ) {
        self.push(Inst::new(opc, mods, tys, vec![Operand::Reg(d)], srcs));
    }

    /// Opens `if (pred == run_when) { ... }`; close with [`Builder::end_if`].
    pub fn begin_if(&mut self, pred: Reg, run_when: bool) {
        self.stack.push((pred, run_when, Vec::new()));
    }

    /// Closes the innermost open `if`.
    pub fn end_if(&mut self) {
        if let Some((pred, run_when, body)) = self.stack.pop() {
            self.current().push(Stmt::If {
                pred,
                run_when,
                body,
            });
        }
    }

    /// The finished function (open `if`s are closed).
    pub fn finish(mut self) -> Function {
        while !self.stack.is_empty() {
            self.end_if();
        }
        Function {
            next_reg: self.next_reg,
            body: self.body,
        }
    }
}
