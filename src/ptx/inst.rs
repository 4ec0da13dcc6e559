//! The typed PTX instruction model: registers, operands, opcodes with their
//! modifiers, and instructions. Lowering builds these; [`super::writer`]
//! turns them into text.

use smallvec::{smallvec, SmallVec};

/// The registers an instruction reads or writes; inline for up to four.
pub type Regs = SmallVec<[Reg; 4]>;

/// An instruction's source operands; inline for up to three.
pub type Operands = SmallVec<[Operand; 3]>;

/// An instruction's destination operands; inline for one (most write one
/// register, stores none).
pub type Dsts = SmallVec<[Operand; 1]>;

/// A register class: what `.reg` declaration a virtual register belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RegClass {
    /// `.pred`, named `%p<n>`.
    Pred,
    /// `.b16`, named `%rs<n>`.
    B16,
    /// `.b32`, named `%r<n>`.
    B32,
    /// `.b64`, named `%rd<n>`.
    B64,
}

impl RegClass {
    /// Every class, in declaration order.
    pub fn all() -> [RegClass; 4] {
        [RegClass::Pred, RegClass::B16, RegClass::B32, RegClass::B64]
    }

    /// The register name prefix (`%r`).
    pub fn prefix(self) -> &'static str {
        match self {
            RegClass::Pred => "%p",
            RegClass::B16 => "%rs",
            RegClass::B32 => "%r",
            RegClass::B64 => "%rd",
        }
    }

    /// The declaration type (`.b32`).
    pub fn decl(self) -> &'static str {
        match self {
            RegClass::Pred => ".pred",
            RegClass::B16 => ".b16",
            RegClass::B32 => ".b32",
            RegClass::B64 => ".b64",
        }
    }

    /// The class holding values of `bits` bits (1 is a predicate).
    pub fn for_bits(bits: u32) -> RegClass {
        match bits {
            1 => RegClass::Pred,
            0..=16 => RegClass::B16,
            17..=32 => RegClass::B32,
            _ => RegClass::B64,
        }
    }
}

/// A virtual register: its class and a number unique within the function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg {
    /// Register class.
    pub class: RegClass,
    /// Number within the function (all classes share one counter).
    pub id: u32,
}

/// A PTX data type as written after an opcode (`.f32`, `.u64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Ty {
    Pred,
    B8,
    B16,
    B32,
    B64,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    BF16,
    TF32,
    F32,
    F64,
}

impl Ty {
    /// The suffix spelling without the dot (`f32`).
    pub fn name(self) -> &'static str {
        match self {
            Ty::Pred => "pred",
            Ty::B8 => "b8",
            Ty::B16 => "b16",
            Ty::B32 => "b32",
            Ty::B64 => "b64",
            Ty::U8 => "u8",
            Ty::U16 => "u16",
            Ty::U32 => "u32",
            Ty::U64 => "u64",
            Ty::S8 => "s8",
            Ty::S16 => "s16",
            Ty::S32 => "s32",
            Ty::S64 => "s64",
            Ty::F16 => "f16",
            Ty::BF16 => "bf16",
            Ty::TF32 => "tf32",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
        }
    }

    /// Width in bits (1 for predicates).
    pub fn bits(self) -> u32 {
        match self {
            Ty::Pred => 1,
            Ty::B8 | Ty::U8 | Ty::S8 => 8,
            Ty::B16 | Ty::U16 | Ty::S16 | Ty::F16 | Ty::BF16 => 16,
            Ty::B32 | Ty::U32 | Ty::S32 | Ty::F32 | Ty::TF32 => 32,
            Ty::B64 | Ty::U64 | Ty::S64 | Ty::F64 => 64,
        }
    }

    /// Whether this is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, Ty::F16 | Ty::BF16 | Ty::TF32 | Ty::F32 | Ty::F64)
    }

    /// Whether this is a signed integer type.
    pub fn is_signed(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }
}

/// A special register read with `mov`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Special {
    /// `%tid.x`
    TidX,
    /// `%clusterid.{x,y,z}` (the tile-block id).
    ClusterId(u8),
    /// `%ctaid.{x,y,z}` (the tile-block id before clusters, sm_80 to sm_89).
    CtaId(u8),
    /// `%nclusterid.{x,y,z}`
    NClusterId(u8),
    /// `%nctaid.{x,y,z}` (number of tile blocks).
    NCtaId(u8),
    /// `%cluster_ctarank`: the CTA's rank within its cluster.
    ClusterCtaRank,
}

/// An instruction operand.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A register.
    Reg(Reg),
    /// An integer immediate (printed in decimal).
    Imm(i64),
    /// A 32-bit float immediate, by bits (`0f3F800000`).
    F32(u32),
    /// A 64-bit float immediate, by bits (`0d3FF0000000000000`).
    F64(u64),
    /// A special register.
    Special(Special),
    /// A memory address `[reg+offset]`.
    Addr(Reg, i64),
    /// A kernel parameter address `[name]`.
    Param(String),
    /// A vector of registers `{%r1, %r2}`.
    Vec(Vec<Reg>),
    /// A branch target label.
    Label(u32),
    /// The address of a named variable (`__smem`).
    Symbol(&'static str),
    /// A module-scope symbol named at run time (a format string).
    Global(String),
}

impl Operand {
    /// The register, if this operand is one.
    pub fn reg(&self) -> Option<Reg> {
        match self {
            Operand::Reg(r) => Some(*r),
            _ => None,
        }
    }

    /// Registers this operand reads when used as a source.
    pub fn regs(&self) -> &[Reg] {
        match self {
            Operand::Reg(r) | Operand::Addr(r, _) => std::slice::from_ref(r),
            Operand::Vec(v) => v,
            _ => &[],
        }
    }
}

/// The operation of an instruction; modifiers and types are kept apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Opc {
    Mov,
    Add,
    Sub,
    Mul,
    Mad,
    Fma,
    Div,
    Rem,
    Min,
    Max,
    Neg,
    Abs,
    And,
    Or,
    Xor,
    Not,
    Shl,
    Shr,
    Setp,
    Selp,
    Cvt,
    Ld,
    St,
    Bra,
    Ret,
    Rcp,
    Sqrt,
    Rsqrt,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
    Testp,
    Copysign,
    Brev,
    Clz,
    Popc,
    Bfe,
    Prmt,
    Mul24,
    Cnot,
    Shfl,
    Bar,
    Atom,
    Red,
    /// `trap`: aborts the kernel.
    Trap,
    /// `cvta`: a state-space address to a generic one.
    Cvta,
    /// A `vprintf` call: `srcs` are the generic addresses of the format
    /// string and of the argument buffer (written as a whole call sequence).
    Vprintf,
    /// `__cuda_syscall_aligned_malloc(size, align)` into the destination
    /// (a call sequence, printed by the writer).
    Malloc,
    /// `free(ptr)` (a call sequence, printed by the writer).
    Free,
    /// `wgmma`: warpgroup MMA (`mma_async`, `fence`, `commit_group`,
    /// `wait_group`); `mma_async` reads its accumulator destinations too.
    Wgmma,
    /// `fence` (`fence.proxy.async.shared::cta`).
    Fence,
    /// `prefetch` (`prefetch.tensormap [map]`: a tensor map into the
    /// cache the TMA reads it from).
    Prefetch,
    /// `mma`: a warp-level matrix multiply-accumulate (`mma.sync`).
    Mma,
    /// `ldmatrix`: a warp-level load of 8x8 b16 matrices from shared memory.
    Ldmatrix,
    /// `cp.async`: an asynchronous global-to-shared copy, or its group
    /// commit and wait.
    CpAsync,
    /// `mbarrier`: init, arrive, wait on or invalidate a shared-memory
    /// barrier object.
    Mbarrier,
    /// `cp.async.bulk.tensor`: a TMA copy of a box of a tensor map into
    /// shared memory, completing on an mbarrier. Sources: the destination
    /// address, the map's generic address (a register), the box's
    /// coordinates (a vector, innermost first) and the mbarrier's address;
    /// printed `[dst], [map, {c0, c1}], [bar]`.
    CpBulkTensor,
    /// `cvt.rn.satfinite.e2m1x2.f32`: two f32 sources (high, low) to a pair
    /// of f4E2M1FN codes, the destination b16 holding their byte (high
    /// code in the high nibble). PTX takes only a `.b8` register there, so
    /// the writer prints a scoped one and moves it out.
    CvtPackE2m1x2,
    /// `cvt.rn.f16x2.e2m1x2`: the pair of f4E2M1FN codes in the low byte
    /// of a b16 source to an f16x2 (low nibble to the low half), through a
    /// scoped `.b8` register as for [`Opc::CvtPackE2m1x2`].
    CvtUnpackE2m1x2,
}

impl Opc {
    /// Moves, integer and bit arithmetic, comparisons and conversions: the
    /// result comes from the sources alone, cheaply, and cannot trap.
    pub fn is_simple(self) -> bool {
        matches!(
            self,
            Opc::Mov
                | Opc::Add
                | Opc::Sub
                | Opc::Mul
                | Opc::Mad
                | Opc::Fma
                | Opc::Min
                | Opc::Max
                | Opc::Neg
                | Opc::Abs
                | Opc::And
                | Opc::Or
                | Opc::Xor
                | Opc::Not
                | Opc::Shl
                | Opc::Shr
                | Opc::Setp
                | Opc::Selp
                | Opc::Cvt
                | Opc::Copysign
                | Opc::Brev
                | Opc::Clz
                | Opc::Popc
                | Opc::Bfe
                | Opc::Prmt
                | Opc::Mul24
                | Opc::Cnot
                | Opc::Cvta
        )
    }

    /// Whether the instruction only reads and writes registers (warp
    /// shuffles and `mma.sync` included): no memory, no synchronisation,
    /// no control flow.
    pub fn registers_only(self) -> bool {
        self.is_simple()
            || matches!(
                self,
                Opc::Div
                    | Opc::Rem
                    | Opc::Rcp
                    | Opc::Sqrt
                    | Opc::Rsqrt
                    | Opc::Ex2
                    | Opc::Lg2
                    | Opc::Sin
                    | Opc::Cos
                    | Opc::Tanh
                    | Opc::Testp
                    | Opc::Shfl
                    | Opc::Mma
                    | Opc::CvtPackE2m1x2
                    | Opc::CvtUnpackE2m1x2
            )
    }
    /// The mnemonic (`add`).
    pub fn name(self) -> &'static str {
        match self {
            Opc::Mov => "mov",
            Opc::Add => "add",
            Opc::Sub => "sub",
            Opc::Mul => "mul",
            Opc::Mad => "mad",
            Opc::Fma => "fma",
            Opc::Div => "div",
            Opc::Rem => "rem",
            Opc::Min => "min",
            Opc::Max => "max",
            Opc::Neg => "neg",
            Opc::Abs => "abs",
            Opc::And => "and",
            Opc::Or => "or",
            Opc::Xor => "xor",
            Opc::Not => "not",
            Opc::Shl => "shl",
            Opc::Shr => "shr",
            Opc::Setp => "setp",
            Opc::Selp => "selp",
            Opc::Cvt => "cvt",
            Opc::Ld => "ld",
            Opc::St => "st",
            Opc::Bra => "bra",
            Opc::Ret => "ret",
            Opc::Rcp => "rcp",
            Opc::Sqrt => "sqrt",
            Opc::Rsqrt => "rsqrt",
            Opc::Ex2 => "ex2",
            Opc::Lg2 => "lg2",
            Opc::Sin => "sin",
            Opc::Cos => "cos",
            Opc::Tanh => "tanh",
            Opc::Testp => "testp",
            Opc::Copysign => "copysign",
            Opc::Brev => "brev",
            Opc::Clz => "clz",
            Opc::Popc => "popc",
            Opc::Bfe => "bfe",
            Opc::Prmt => "prmt",
            Opc::Mul24 => "mul24",
            Opc::Cnot => "cnot",
            Opc::Shfl => "shfl",
            Opc::Bar => "bar",
            Opc::Atom => "atom",
            Opc::Red => "red",
            Opc::Trap => "trap",
            Opc::Cvta => "cvta",
            Opc::Vprintf | Opc::Malloc | Opc::Free => "call.uni",
            Opc::Wgmma => "wgmma",
            Opc::Fence => "fence",
            Opc::Prefetch => "prefetch",
            Opc::Mma => "mma",
            Opc::Ldmatrix => "ldmatrix",
            Opc::CpAsync => "cp.async",
            Opc::CpBulkTensor => "cp.async.bulk.tensor",
            Opc::Mbarrier => "mbarrier",
            Opc::CvtPackE2m1x2 | Opc::CvtUnpackE2m1x2 => "cvt",
        }
    }

    /// Whether the instruction has effects beyond writing its destinations.
    pub fn has_side_effects(self) -> bool {
        matches!(
            self,
            Opc::St
                | Opc::Bra
                | Opc::Ret
                | Opc::Bar
                | Opc::Atom
                | Opc::Red
                | Opc::Trap
                | Opc::Vprintf
                | Opc::Malloc
                | Opc::Free
                | Opc::Wgmma
                | Opc::Fence
                | Opc::Prefetch
                | Opc::CpAsync
                | Opc::CpBulkTensor
                | Opc::Mbarrier
        )
    }
}

/// A source position for `.loc`: file number (of the module's `.file`
/// table, from 1), line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SrcLoc {
    /// The `.file` number.
    pub file: u32,
    /// Line (1-based; 0 where the source gives none).
    pub line: u32,
    /// Column.
    pub col: u32,
}

/// One instruction: `@guard opc.mods.types dsts, srcs;`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Inst {
    /// Guard predicate and whether it is negated (`@!%p1`).
    pub guard: Option<(Reg, bool)>,
    /// Operation.
    pub opc: Opc,
    /// Modifiers in order, without dots (`rn`, `ftz`, `global`, `v4`, `wide`, `ge`).
    pub mods: SmallVec<[&'static str; 3]>,
    /// Types in order (`cvt` has two).
    pub tys: SmallVec<[Ty; 2]>,
    /// Destination operands (a store has none).
    pub dsts: Dsts,
    /// Source operands.
    pub srcs: Operands,
    /// The source position it was lowered from (line info builds only).
    pub loc: Option<SrcLoc>,
}

impl Inst {
    /// An unguarded instruction.
    pub fn new(
        opc: Opc,
        mods: &[&'static str],
        tys: &[Ty],
        dsts: impl Into<Dsts>,
        srcs: impl Into<Operands>,
    ) -> Inst {
        Inst {
            guard: None,
            opc,
            mods: SmallVec::from_slice(mods),
            tys: SmallVec::from_slice(tys),
            dsts: dsts.into(),
            srcs: srcs.into(),
            loc: None,
        }
    }

    /// Registers written.
    pub fn defs(&self) -> Regs {
        if let [Operand::Reg(r)] = self.dsts.as_slice() {
            return smallvec![*r];
        }
        let mut v = Regs::new();
        for d in &self.dsts {
            match d {
                Operand::Reg(r) => v.push(*r),
                Operand::Vec(rs) => v.extend_from_slice(rs),
                _ => {}
            }
        }
        v
    }

    /// Registers written, without collecting them.
    pub fn def_iter(&self) -> impl Iterator<Item = Reg> + '_ {
        self.dsts
            .iter()
            .flat_map(|d| match d {
                Operand::Reg(r) => std::slice::from_ref(r),
                Operand::Vec(v) => v.as_slice(),
                _ => &[],
            })
            .copied()
    }

    /// Calls `f` on each register written, in order (cheaper than
    /// [`Inst::def_iter`] on the optimizer's hot paths).
    #[inline]
    pub fn for_each_def(&self, mut f: impl FnMut(Reg)) {
        for d in &self.dsts {
            match d {
                Operand::Reg(r) => f(*r),
                Operand::Vec(v) => v.iter().for_each(|r| f(*r)),
                _ => {}
            }
        }
    }

    /// Calls `f` on each register read (sources, a `wgmma`'s accumulators,
    /// the guard), in the order of [`Inst::use_iter`].
    #[inline]
    pub fn for_each_use(&self, mut f: impl FnMut(Reg)) {
        for o in &self.srcs {
            match o {
                Operand::Reg(r) | Operand::Addr(r, _) => f(*r),
                Operand::Vec(v) => v.iter().for_each(|r| f(*r)),
                _ => {}
            }
        }
        if self.opc == Opc::Wgmma {
            self.for_each_def(&mut f);
        }
        if let Some((g, _)) = self.guard {
            f(g);
        }
    }

    /// Registers read (sources and guard), without collecting them.
    pub fn use_iter(&self) -> impl Iterator<Item = Reg> + '_ {
        let accumulated = if self.opc == Opc::Wgmma {
            &self.dsts[..]
        } else {
            &[]
        };
        self.srcs
            .iter()
            .chain(accumulated)
            .flat_map(Operand::regs)
            .copied()
            .chain(self.guard.map(|(g, _)| g))
    }

    /// Registers read (sources and guard).
    pub fn uses(&self) -> Regs {
        let mut v = Regs::new();
        for o in &self.srcs {
            v.extend_from_slice(o.regs());
        }
        if self.opc == Opc::Wgmma {
            v.extend(self.defs());
        }
        if let Some((g, _)) = self.guard {
            v.push(g);
        }
        v
    }
}

impl Ty {
    /// The untyped bit type holding `bits` bits (`.b32` for tf32's 19).
    pub fn from_bits(bits: u32) -> Ty {
        match bits {
            1 => Ty::Pred,
            0..=8 => Ty::B8,
            9..=16 => Ty::B16,
            17..=32 => Ty::B32,
            _ => Ty::B64,
        }
    }
}
