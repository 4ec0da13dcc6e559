//! Pre-decoded PTX representation shared by the parser and the executor.

/// A parsed PTX module: its kernels and module-scope variables.
#[derive(Debug, Clone)]
pub struct Module {
    /// Every `.entry` of the module.
    pub kernels: Vec<Kernel>,
    /// Module-scope `.global`/`.const` variables, in declaration order.
    pub globals: Vec<GlobalVar>,
    /// Module-scope `.shared` variables: name, offset, size.
    pub shared_globals: Vec<(String, u32, u32)>,
}

/// A module-scope `.global` or `.const` variable.
#[derive(Debug, Clone)]
pub struct GlobalVar {
    /// Symbol name.
    pub name: String,
    /// Size in bytes.
    pub size: u32,
    /// Alignment in bytes.
    pub align: u32,
    /// Initializer bytes (shorter than `size` means zero-filled).
    pub init: Vec<u8>,
}

/// A declared kernel parameter.
#[derive(Debug, Clone)]
pub struct ParamDecl {
    /// Parameter name.
    pub name: String,
    /// Byte offset in the parameter buffer.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// Alignment in bytes.
    pub align: u32,
}

/// One `.entry` with its decoded instructions.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// Entry name.
    pub name: String,
    /// Declared parameters in order.
    pub params: Vec<ParamDecl>,
    /// Total parameter buffer size.
    pub param_size: u32,
    /// Number of registers (all widths share one 64-bit register file).
    pub nregs: u32,
    /// Each register's PTX name, by register number.
    pub reg_names: Vec<String>,
    /// Static shared memory in bytes (dynamic shared starts here).
    pub static_shared: u32,
    /// Per-thread `.local` bytes.
    pub local_size: u32,
    /// Per-thread call-parameter scratch bytes.
    pub cparam_size: u32,
    /// Decoded instructions; labels are indices into this.
    pub insts: Vec<Inst>,
    /// Source line and text of each instruction (for diagnostics).
    pub texts: Vec<(u32, String)>,
    /// `.reqntid` if given.
    pub reqntid: Option<(u32, u32, u32)>,
    /// `.maxntid` if given.
    pub maxntid: Option<(u32, u32, u32)>,
    /// `.reqnctapercluster` if given.
    pub reqnctapercluster: Option<(u32, u32, u32)>,
    /// `.blocksareclusters`: the launch grid counts clusters, not CTAs.
    pub blocks_are_clusters: bool,
    /// Module `.func` bodies compiled into this kernel's instruction stream.
    pub funcs: std::collections::HashMap<String, FuncInfo>,
}

/// A `.func` compiled into a kernel's instruction stream.
#[derive(Debug, Clone)]
pub struct FuncInfo {
    /// Index of the first instruction.
    pub pc: u32,
    /// Formal parameters: call-parameter offset and size.
    pub params: Vec<(u32, u32)>,
    /// Return parameters: call-parameter offset and size.
    pub rets: Vec<(u32, u32)>,
}

/// Operand data types.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    None,
    Pred,
    B8,
    B16,
    B32,
    B64,
    B128,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F16x2,
    BF16,
    BF16x2,
    F32,
    F32x2,
    F64,
    TF32,
    E4M3x2,
    E5M2x2,
    E4M3,
    E5M2,
    /// Two unsigned power-of-two scale bytes (`.ue8m0x2`).
    UE8M0x2,
    /// Two unsigned e5m3 scale bytes (`.ue5m3x2`).
    UE5M3x2,
    E2M1x2,
    E2M1,
}

impl Ty {
    /// Parses a type suffix such as `s32` (without the dot).
    pub fn parse(s: &str) -> Option<Ty> {
        Some(match s {
            "pred" => Ty::Pred,
            "b8" => Ty::B8,
            "b16" => Ty::B16,
            "b32" => Ty::B32,
            "b64" => Ty::B64,
            "b128" => Ty::B128,
            "u8" => Ty::U8,
            "u16" => Ty::U16,
            "u32" => Ty::U32,
            "u64" => Ty::U64,
            "s8" => Ty::S8,
            "s16" => Ty::S16,
            "s32" => Ty::S32,
            "s64" => Ty::S64,
            "f16" => Ty::F16,
            "f16x2" => Ty::F16x2,
            "bf16" => Ty::BF16,
            "bf16x2" => Ty::BF16x2,
            "f32" => Ty::F32,
            "f32x2" => Ty::F32x2,
            "f64" => Ty::F64,
            "tf32" => Ty::TF32,
            "e4m3x2" => Ty::E4M3x2,
            "e5m2x2" => Ty::E5M2x2,
            "e4m3" => Ty::E4M3,
            "e5m2" => Ty::E5M2,
            "ue8m0x2" => Ty::UE8M0x2,
            "ue5m3x2" => Ty::UE5M3x2,
            "e2m1x2" => Ty::E2M1x2,
            "e2m1" => Ty::E2M1,
            _ => return None,
        })
    }
    /// Width in bits.
    pub fn bits(self) -> u32 {
        match self {
            Ty::None => 64,
            Ty::Pred => 1,
            Ty::E2M1 => 4,
            Ty::B8 | Ty::U8 | Ty::S8 | Ty::E4M3 | Ty::E5M2 | Ty::E2M1x2 => 8,
            Ty::B16
            | Ty::U16
            | Ty::S16
            | Ty::F16
            | Ty::BF16
            | Ty::E4M3x2
            | Ty::E5M2x2
            | Ty::UE8M0x2
            | Ty::UE5M3x2 => 16,
            Ty::B32 | Ty::U32 | Ty::S32 | Ty::F32 | Ty::F16x2 | Ty::BF16x2 | Ty::TF32 => 32,
            Ty::B64 | Ty::U64 | Ty::S64 | Ty::F64 | Ty::F32x2 => 64,
            Ty::B128 => 128,
        }
    }
    /// Size in bytes (at least 1).
    pub fn bytes(self) -> u32 {
        (self.bits() / 8).max(1)
    }
    /// Signed integer type.
    pub fn signed(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }
    /// Floating-point type (scalar or packed).
    pub fn float(self) -> bool {
        matches!(
            self,
            Ty::F16
                | Ty::F16x2
                | Ty::BF16
                | Ty::BF16x2
                | Ty::F32
                | Ty::F32x2
                | Ty::F64
                | Ty::TF32
                | Ty::E4M3
                | Ty::E5M2
                | Ty::E4M3x2
                | Ty::E5M2x2
                | Ty::E2M1
                | Ty::E2M1x2
        )
    }
}

/// Rounding modifier.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rnd {
    None,
    Rn,
    Rz,
    Rm,
    Rp,
    Rna,
    Rni,
    Rzi,
    Rmi,
    Rpi,
}

/// State space.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Generic,
    Global,
    Shared,
    SharedCluster,
    Local,
    Param,
    Const,
}

/// Comparison operator of `setp`/`set`.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    None,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

/// Symbolic address of a variable in some state space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymAddr {
    /// No symbol.
    None,
    /// Kernel parameter at this offset.
    Kparam(u32),
    /// Call parameter scratch at this offset.
    Cparam(u32),
    /// Shared variable at this offset.
    Shared(u32),
    /// Local variable at this offset.
    Local(u32),
    /// Module global number `n`.
    Global(u32),
}

/// Special registers.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sreg {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    Clusterid(u8),
    Nclusterid(u8),
    ClusterCtaid(u8),
    ClusterNctaid(u8),
    ClusterCtarank,
    ClusterNctarank,
    Laneid,
    Warpid,
    Nwarpid,
    Smid,
    Nsmid,
    Gridid,
    Clock,
    Clock64,
    Globaltimer,
    LanemaskEq,
    LanemaskLt,
    LanemaskLe,
    LanemaskGt,
    LanemaskGe,
    DynamicSmemSize,
    TotalSmemSize,
}

impl Sreg {
    /// Parses a special register name such as `%tid.x`.
    pub fn parse(s: &str) -> Option<Sreg> {
        let (base, comp) = match s.rsplit_once('.') {
            Some((b, c)) if matches!(c, "x" | "y" | "z") => (b, c.as_bytes()[0] - b'x'),
            _ => (s, 0),
        };
        Some(match base {
            "%tid" => Sreg::Tid(comp),
            "%ntid" => Sreg::Ntid(comp),
            "%ctaid" => Sreg::Ctaid(comp),
            "%nctaid" => Sreg::Nctaid(comp),
            "%clusterid" => Sreg::Clusterid(comp),
            "%nclusterid" => Sreg::Nclusterid(comp),
            "%cluster_ctaid" => Sreg::ClusterCtaid(comp),
            "%cluster_nctaid" => Sreg::ClusterNctaid(comp),
            "%cluster_ctarank" => Sreg::ClusterCtarank,
            "%cluster_nctarank" => Sreg::ClusterNctarank,
            "%laneid" => Sreg::Laneid,
            "%warpid" => Sreg::Warpid,
            "%nwarpid" => Sreg::Nwarpid,
            "%smid" => Sreg::Smid,
            "%nsmid" => Sreg::Nsmid,
            "%gridid" => Sreg::Gridid,
            "%clock" => Sreg::Clock,
            "%clock64" => Sreg::Clock64,
            "%globaltimer" => Sreg::Globaltimer,
            "%lanemask_eq" => Sreg::LanemaskEq,
            "%lanemask_lt" => Sreg::LanemaskLt,
            "%lanemask_le" => Sreg::LanemaskLe,
            "%lanemask_gt" => Sreg::LanemaskGt,
            "%lanemask_ge" => Sreg::LanemaskGe,
            "%dynamic_smem_size" => Sreg::DynamicSmemSize,
            "%total_smem_size" => Sreg::TotalSmemSize,
            _ => return None,
        })
    }
}

/// An instruction operand.
#[derive(Debug, Clone, PartialEq)]
pub enum Opnd {
    /// Register index.
    Reg(u32),
    /// Negated predicate register (`!%p`).
    NotReg(u32),
    /// Integer immediate (two's complement bits).
    Imm(u64),
    /// f32 literal bits (`0fXXXXXXXX`).
    ImmF32(u32),
    /// f64 literal bits (`0d...` or decimal).
    ImmF(u64),
    /// Special register.
    Sreg(Sreg),
    /// Memory reference `[base + sym + off]`, with an optional extra operand (`[tmap, {coords}]`).
    Mem {
        /// Base register.
        base: Option<u32>,
        /// Symbol.
        sym: SymAddr,
        /// Constant offset.
        off: i64,
        /// Extra operand inside the brackets.
        extra: Option<Box<Opnd>>,
    },
    /// Address of a variable used as a value.
    Addr(SymAddr),
    /// Vector `{a, b, ...}` or call argument list.
    Vec(Vec<Opnd>),
    /// `%r|%p` destination pair (u32::MAX for a sink first half).
    Pair(u32, u32),
    /// Branch target (instruction index).
    Label(u32),
    /// Function name in a call.
    Func(String),
    /// `_` sink.
    Sink,
}

/// Opcode kinds.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpK {
    /// `add/sub/min/max.{s,u}16x2`: `sub` 0-3 names the operation, `ty`
    /// the lanes' signedness (`S16`/`U16`).
    Simd16,
    Nop,
    Mov,
    Ld,
    St,
    Cvta,
    CvtaTo,
    Cvt,
    Add,
    Sub,
    Mul,
    Mad,
    Fma,
    Mul24,
    Mad24,
    Div,
    Rem,
    Abs,
    Neg,
    Min,
    Max,
    And,
    Or,
    Xor,
    Not,
    Cnot,
    Shl,
    Shr,
    Shf,
    Bfe,
    Bfi,
    Brev,
    Clz,
    Popc,
    Bfind,
    Szext,
    Bmsk,
    Dp4a,
    Dp2a,
    Sad,
    Isspacep,
    Prmt,
    Lop3,
    Selp,
    Slct,
    Setp,
    Set,
    Copysign,
    Sqrt,
    Rsqrt,
    Rcp,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
    Testp,
    Bra,
    Ret,
    Exit,
    Trap,
    Call,
    Bar,
    BarArrive,
    BarWarp,
    ClusterBar,
    Shfl,
    Vote,
    Redux,
    Match,
    Elect,
    Activemask,
    Atom,
    Red,
    Mapa,
    MbarInit,
    MbarArrive,
    MbarExpectTx,
    MbarTryWait,
    MbarTestWait,
    MbarInval,
    CpBulkTensor,
    CpAsync,
    /// `cp.async.commit_group`.
    CpAsyncCommit,
    /// `cp.async.wait_group N`.
    CpAsyncWait,
    /// `cp.async.wait_all`.
    CpAsyncWaitAll,
    /// `cp.async.mbarrier.arrive[.noinc]` (`sub2` 1: `.noinc`).
    CpAsyncArrive,
    CpBulkCommit,
    CpBulkWait,
    Ldmatrix,
    Stmatrix,
    MmaSync,
    Wgmma,
    WgmmaFence,
    WgmmaCommit,
    WgmmaWait,
    /// `fence.proxy.async{.space}` and `fence.mbarrier_init` (`sub`:
    /// `decode::fenceop`).
    FenceProxyAsync,
    /// `setmaxnreg.{inc,dec}.sync.aligned.u32 N` (`sub` 1: `.inc`).
    Setmaxnreg,
    /// A `tcgen05` instruction (sm_100 tensor memory and MMA); `sub`
    /// names the operation (`decode::tcgen05op`).
    Tcgen05,
    Unsupported,
}

/// A decoded instruction.
#[derive(Debug, Clone)]
pub struct Inst {
    /// Opcode kind.
    pub op: OpK,
    /// Main type.
    pub ty: Ty,
    /// Second type (source type of `cvt`, comparison type of `set`, ...).
    pub ty2: Ty,
    /// Rounding modifier.
    pub rnd: Rnd,
    /// `.ftz`.
    pub ftz: bool,
    /// `.sat` / `.satfinite`.
    pub sat: bool,
    /// State space.
    pub space: Space,
    /// Vector width for ld/st (1, 2, 4, 8).
    pub vec: u8,
    /// Comparison for setp/set.
    pub cmp: Cmp,
    /// Opcode-specific sub-mode (mul lo/hi/wide, shfl mode, atom op, ...).
    pub sub: u8,
    /// Second sub-mode (setp boolean combiner, ...).
    pub sub2: u8,
    /// Operands in PTX order.
    pub ops: Box<[Opnd]>,
    /// Guard predicate register and negation.
    pub guard: Option<(u32, bool)>,
    /// Full opcode text (for unsupported instructions and complex ops).
    pub opcode: Box<str>,
}

impl Inst {
    /// An instruction with no operands.
    pub fn simple(op: OpK) -> Inst {
        Inst {
            op,
            ty: Ty::None,
            ty2: Ty::None,
            rnd: Rnd::None,
            ftz: false,
            sat: false,
            space: Space::Generic,
            vec: 1,
            cmp: Cmp::None,
            sub: 0,
            sub2: 0,
            ops: Box::new([]),
            guard: None,
            opcode: "".into(),
        }
    }
}
