//! Opcode decoding: turns `add.rn.ftz.f32` and its operands into an [`Inst`].

use crate::ir::*;

/// Sub-modes of `mul`/`mad`.
pub mod mulmode {
    /// Low half.
    pub const LO: u8 = 0;
    /// High half.
    pub const HI: u8 = 1;
    /// Double-width result.
    pub const WIDE: u8 = 2;
}

/// Carry-chain flags of an integer `add`/`sub`/`mad` (in `Inst::sub2`).
pub mod carry {
    /// Adds the carry flag in (`addc`, `subc`, `madc`).
    pub const IN: u8 = 1;
    /// Writes the carry flag out (`.cc`).
    pub const OUT: u8 = 2;
}

/// The `tcgen05` operations (in `Inst::sub` of [`OpK::Tcgen05`]).
pub mod tcgen05op {
    #![allow(missing_docs)]
    pub const ALLOC: u8 = 0;
    pub const DEALLOC: u8 = 1;
    pub const RELINQUISH: u8 = 2;
    pub const FENCE: u8 = 3;
    pub const WAIT: u8 = 4;
    pub const MMA: u8 = 5;
    pub const COMMIT: u8 = 6;
    pub const LD: u8 = 7;
    pub const ST: u8 = 8;
    pub const CP: u8 = 9;
}

/// The state spaces a `fence.proxy.async` covers (in `Inst::sub`).
pub mod fenceop {
    #![allow(missing_docs)]
    /// `fence.proxy.async` (every state space).
    pub const ALL: u8 = 0;
    /// `.shared::cta` / `.shared::cluster`.
    pub const SHARED: u8 = 1;
    /// `.global`.
    pub const GLOBAL: u8 = 2;
    /// `fence.mbarrier_init.release.cluster`: mbarrier initialisations only.
    pub const MBARRIER_INIT: u8 = 3;
}

/// Atomic operations (in `Inst::sub`).
pub mod atomop {
    #![allow(missing_docs)]
    pub const ADD: u8 = 0;
    pub const MIN: u8 = 1;
    pub const MAX: u8 = 2;
    pub const INC: u8 = 3;
    pub const DEC: u8 = 4;
    pub const AND: u8 = 5;
    pub const OR: u8 = 6;
    pub const XOR: u8 = 7;
    pub const EXCH: u8 = 8;
    pub const CAS: u8 = 9;
}

fn parse_cmp(s: &str) -> Option<Cmp> {
    Some(match s {
        "eq" => Cmp::Eq,
        "ne" => Cmp::Ne,
        "lt" => Cmp::Lt,
        "le" => Cmp::Le,
        "gt" => Cmp::Gt,
        "ge" => Cmp::Ge,
        "lo" => Cmp::Lo,
        "ls" => Cmp::Ls,
        "hi" => Cmp::Hi,
        "hs" => Cmp::Hs,
        "equ" => Cmp::Equ,
        "neu" => Cmp::Neu,
        "ltu" => Cmp::Ltu,
        "leu" => Cmp::Leu,
        "gtu" => Cmp::Gtu,
        "geu" => Cmp::Geu,
        "num" => Cmp::Num,
        "nan" => Cmp::Nan,
        _ => return None,
    })
}

fn parse_rnd(s: &str) -> Option<Rnd> {
    Some(match s {
        "rn" => Rnd::Rn,
        "rz" => Rnd::Rz,
        "rm" => Rnd::Rm,
        "rp" => Rnd::Rp,
        "rna" => Rnd::Rna,
        "rni" => Rnd::Rni,
        "rzi" => Rnd::Rzi,
        "rmi" => Rnd::Rmi,
        "rpi" => Rnd::Rpi,
        _ => return None,
    })
}

fn parse_space(s: &str) -> Option<Space> {
    Some(match s {
        "global" => Space::Global,
        "shared" | "shared::cta" => Space::Shared,
        "shared::cluster" => Space::SharedCluster,
        "local" => Space::Local,
        "param" | "param::entry" | "param::func" => Space::Param,
        "const" => Space::Const,
        _ => return None,
    })
}

/// Converts float literal operands to the bit pattern of type `ty`.
fn fix_float_imms(ops: &mut [Opnd], ty: Ty) {
    for o in ops.iter_mut() {
        match *o {
            Opnd::ImmF(b) => {
                let v = f64::from_bits(b);
                *o = Opnd::Imm(match ty {
                    Ty::F64 => b,
                    Ty::F32 => (v as f32).to_bits() as u64,
                    Ty::F16 | Ty::F16x2 => crate::float::f64_to_f16_rn(v) as u64,
                    Ty::BF16 | Ty::BF16x2 => crate::float::f64_to_bf16_rn(v) as u64,
                    t if t.bits() == 64 => b,
                    _ => (v as f32).to_bits() as u64,
                });
            }
            Opnd::ImmF32(b) => {
                *o = Opnd::Imm(match ty {
                    Ty::F64 => (f32::from_bits(b) as f64).to_bits(),
                    t if t.bits() == 64 && !t.float() => b as u64,
                    _ => b as u64,
                });
            }
            Opnd::Vec(ref mut v) => fix_float_imms(v, ty),
            _ => {}
        }
    }
}

/// Decodes one instruction. Unknown opcodes decode to [`OpK::Unsupported`]
/// (reported only if executed).
pub fn decode(opcode: &str, mut ops: Vec<Opnd>) -> Result<Inst, String> {
    let parts: Vec<&str> = opcode.split('.').collect();
    let base = parts[0];
    let mut inst = Inst::simple(OpK::Unsupported);
    inst.opcode = opcode.into();
    let mut types = Vec::new();
    for &m in &parts[1..] {
        if let Some(t) = Ty::parse(m) {
            types.push(t);
        } else if let Some(r) = parse_rnd(m) {
            inst.rnd = r;
        } else if let Some(s) = parse_space(m) {
            if inst.space == Space::Generic || base == "cvta" {
                inst.space = s;
            }
        } else if let Some(c) = parse_cmp(m) {
            if matches!(base, "setp" | "set" | "slct") {
                inst.cmp = c;
            }
        }
        match m {
            "ftz" => inst.ftz = true,
            "sat" => inst.sat = true,
            // .satfinite: fp8 conversions always saturate to the finite range
            "satfinite" => inst.sub2 |= 4,
            "v2" => inst.vec = 2,
            "v4" => inst.vec = 4,
            "v8" => inst.vec = 8,
            _ => {}
        }
    }
    inst.ty = types.first().copied().unwrap_or(Ty::None);
    inst.ty2 = types.get(1).copied().unwrap_or(Ty::None);
    let has = |s: &str| parts[1..].contains(&s);
    // two 16-bit lanes in a 32-bit register: add/sub/min/max.{s,u}16x2
    let simd16 = if has("s16x2") {
        Some(Ty::S16)
    } else if has("u16x2") {
        Some(Ty::U16)
    } else {
        None
    };
    let simd16_op = ["add", "sub", "min", "max"].iter().position(|b| *b == base);
    if let (Some(ty), Some(code)) = (simd16, simd16_op) {
        inst.ty = ty;
        inst.sub = code as u8;
    }
    inst.op = match base {
        _ if simd16.is_some() && simd16_op.is_some() => OpK::Simd16,
        "mov" => OpK::Mov,
        "ld" | "ldu" | "st" => {
            // strong (non-weak) accesses take part in synchronisation, never in data races
            inst.sub = (has("volatile")
                || has("relaxed")
                || has("acquire")
                || has("release")
                || has("mmio")) as u8;
            if base == "st" {
                OpK::St
            } else {
                OpK::Ld
            }
        }
        "cvta" => {
            if has("to") {
                OpK::CvtaTo
            } else {
                OpK::Cvta
            }
        }
        "cvt" => {
            // cvt.rn.f16x2.f32 d, a, b ; cvt.frnd2{.relu}{.satfinite}.f16.f32 etc.
            OpK::Cvt
        }
        "add" | "addc" => OpK::Add,
        "sub" | "subc" => OpK::Sub,
        "mul" => {
            inst.sub = if has("hi") {
                mulmode::HI
            } else if has("wide") {
                mulmode::WIDE
            } else {
                mulmode::LO
            };
            OpK::Mul
        }
        "mad" | "madc" => {
            inst.sub = if has("hi") {
                mulmode::HI
            } else if has("wide") {
                mulmode::WIDE
            } else {
                mulmode::LO
            };
            if inst.ty.float() {
                OpK::Fma
            } else {
                OpK::Mad
            }
        }
        "mul24" => {
            inst.sub = if has("hi") { mulmode::HI } else { mulmode::LO };
            OpK::Mul24
        }
        "mad24" => {
            inst.sub = if has("hi") { mulmode::HI } else { mulmode::LO };
            OpK::Mad24
        }
        "fma" => OpK::Fma,
        "div" => {
            inst.sub = if has("approx") {
                1
            } else if has("full") {
                2
            } else {
                0
            };
            OpK::Div
        }
        "rem" => OpK::Rem,
        "abs" => OpK::Abs,
        "neg" => OpK::Neg,
        "min" | "max" => {
            inst.sub = has("NaN") as u8;
            // .relu (clamp at 0) is emulated for signed integers only
            inst.sub2 = has("relu") as u8;
            if has("xorsign") || has("relu") && !has("s32") && !has("s16") {
                OpK::Unsupported
            } else if base == "min" {
                OpK::Min
            } else {
                OpK::Max
            }
        }
        "and" => OpK::And,
        "or" => OpK::Or,
        "xor" => OpK::Xor,
        "not" => OpK::Not,
        "cnot" => OpK::Cnot,
        "shl" => OpK::Shl,
        "shr" => OpK::Shr,
        "shf" => {
            inst.sub = has("r") as u8;
            inst.sub2 = has("wrap") as u8;
            OpK::Shf
        }
        "bfe" => OpK::Bfe,
        "bfi" => OpK::Bfi,
        "brev" => OpK::Brev,
        "clz" => OpK::Clz,
        "popc" => OpK::Popc,
        "bfind" => {
            inst.sub = has("shiftamt") as u8;
            OpK::Bfind
        }
        "szext" => {
            inst.sub = has("wrap") as u8;
            OpK::Szext
        }
        "bmsk" => {
            inst.sub = has("wrap") as u8;
            OpK::Bmsk
        }
        "dp4a" => OpK::Dp4a,
        "dp2a" => {
            inst.sub = has("hi") as u8;
            OpK::Dp2a
        }
        "sad" => OpK::Sad,
        "isspacep" => OpK::Isspacep,
        "prmt" => {
            inst.sub = if has("f4e") {
                1
            } else if has("b4e") {
                2
            } else if has("rc8") {
                3
            } else if has("ecl") {
                4
            } else if has("ecr") {
                5
            } else if has("rc16") {
                6
            } else {
                0
            };
            OpK::Prmt
        }
        "lop3" => OpK::Lop3,
        "selp" => OpK::Selp,
        "slct" => OpK::Slct,
        "setp" | "set" => {
            inst.sub2 = if has("and") {
                1
            } else if has("or") {
                2
            } else if has("xor") {
                3
            } else {
                0
            };
            if base == "setp" {
                OpK::Setp
            } else {
                OpK::Set
            }
        }
        "copysign" => OpK::Copysign,
        "sqrt" => OpK::Sqrt,
        "rsqrt" => OpK::Rsqrt,
        "rcp" => OpK::Rcp,
        "ex2" => OpK::Ex2,
        "lg2" => OpK::Lg2,
        "sin" => OpK::Sin,
        "cos" => OpK::Cos,
        "tanh" => OpK::Tanh,
        "testp" => {
            inst.sub = if has("finite") {
                0
            } else if has("infinite") {
                1
            } else if has("number") {
                2
            } else if has("notanumber") {
                3
            } else if has("normal") {
                4
            } else {
                5
            };
            OpK::Testp
        }
        "bra" | "brx" => OpK::Bra,
        "ret" => OpK::Ret,
        "exit" => OpK::Exit,
        "trap" => OpK::Trap,
        "call" => OpK::Call,
        "bar" | "barrier" => {
            if has("warp") {
                OpK::BarWarp
            } else if has("cluster") {
                inst.sub = has("wait") as u8;
                OpK::ClusterBar
            } else if has("arrive") {
                OpK::BarArrive
            } else if has("red") {
                inst.sub = if has("popc") {
                    1
                } else if has("and") {
                    2
                } else {
                    3
                };
                OpK::Bar
            } else {
                OpK::Bar
            }
        }
        "fence"
            if opcode.starts_with("fence.proxy.async")
                || opcode.starts_with("fence.mbarrier_init") =>
        {
            // `Inst::sub`: which state spaces the proxy fence covers
            inst.sub = match opcode {
                "fence.proxy.async" => fenceop::ALL,
                o if o.starts_with("fence.mbarrier_init") => fenceop::MBARRIER_INIT,
                o if o.contains("shared::") => fenceop::SHARED,
                _ => fenceop::GLOBAL,
            };
            OpK::FenceProxyAsync
        }
        "setmaxnreg" => {
            inst.sub = has("inc") as u8;
            OpK::Setmaxnreg
        }
        "membar" | "fence" | "prefetch" | "prefetchu" | "nanosleep" | "pmevent"
        | "griddepcontrol" | "discard" | "applypriority" | "createpolicy" => {
            if base == "createpolicy" {
                OpK::Mov
            } else {
                OpK::Nop
            }
        }
        "shfl" => {
            inst.sub = if has("up") {
                0
            } else if has("down") {
                1
            } else if has("bfly") {
                2
            } else {
                3
            };
            OpK::Shfl
        }
        "vote" => {
            inst.sub = if has("all") {
                0
            } else if has("any") {
                1
            } else if has("uni") {
                2
            } else {
                3
            };
            OpK::Vote
        }
        "redux" => {
            inst.sub = if has("add") {
                0
            } else if has("min") {
                1
            } else if has("max") {
                2
            } else if has("and") {
                3
            } else if has("or") {
                4
            } else {
                5
            };
            OpK::Redux
        }
        "match" => {
            inst.sub = has("all") as u8;
            OpK::Match
        }
        "elect" => OpK::Elect,
        "activemask" => OpK::Activemask,
        "atom" | "red" => {
            inst.sub = if has("add") {
                atomop::ADD
            } else if has("min") {
                atomop::MIN
            } else if has("max") {
                atomop::MAX
            } else if has("inc") {
                atomop::INC
            } else if has("dec") {
                atomop::DEC
            } else if has("and") {
                atomop::AND
            } else if has("or") {
                atomop::OR
            } else if has("xor") {
                atomop::XOR
            } else if has("exch") {
                atomop::EXCH
            } else if has("cas") {
                atomop::CAS
            } else {
                return Err(format!("unknown atomic operation in {opcode}"));
            };
            if base == "atom" {
                OpK::Atom
            } else {
                OpK::Red
            }
        }
        "mapa" => OpK::Mapa,
        "mbarrier" => {
            let what = parts.get(1).copied().unwrap_or("");
            match what {
                "init" => OpK::MbarInit,
                "arrive" => {
                    inst.sub = has("expect_tx") as u8;
                    OpK::MbarArrive
                }
                "arrive_drop" => OpK::Unsupported,
                "expect_tx" => OpK::MbarExpectTx,
                "try_wait" => {
                    inst.sub = has("parity") as u8;
                    OpK::MbarTryWait
                }
                "test_wait" => {
                    inst.sub = has("parity") as u8;
                    OpK::MbarTestWait
                }
                "inval" => OpK::MbarInval,
                _ => OpK::Unsupported,
            }
        }
        "cp" => {
            if opcode.starts_with("cp.async.bulk.tensor.") {
                let d = parts[4].trim_end_matches('d').parse::<u8>().unwrap_or(0);
                inst.sub = d;
                // direction: destination space first
                inst.sub2 = if parts[5].starts_with("global") { 1 } else { 0 };
                inst.sub2 |= (has("multicast::cluster") as u8) << 1;
                if has("im2col") {
                    OpK::Unsupported
                } else {
                    OpK::CpBulkTensor
                }
            } else if opcode == "cp.async.bulk.commit_group" {
                OpK::CpBulkCommit
            } else if opcode.starts_with("cp.async.bulk.wait_group") {
                OpK::CpBulkWait
            } else if opcode.starts_with("cp.async.ca.") || opcode.starts_with("cp.async.cg.") {
                OpK::CpAsync
            } else if opcode == "cp.async.commit_group" {
                OpK::CpAsyncCommit
            } else if opcode.starts_with("cp.async.wait_group") {
                OpK::CpAsyncWait
            } else if opcode == "cp.async.wait_all" {
                OpK::CpAsyncWaitAll
            } else if opcode.starts_with("cp.async.mbarrier.arrive") {
                // the thread's copies complete, then (with .noinc) it arrives;
                // without .noinc the arrive is balanced by its own increment
                inst.sub2 = has("noinc") as u8;
                OpK::CpAsyncArrive
            } else {
                OpK::Unsupported
            }
        }
        "ldmatrix" | "stmatrix" => {
            inst.sub = if has("x4") {
                4
            } else if has("x2") {
                2
            } else {
                1
            };
            inst.sub2 = has("trans") as u8;
            if base == "ldmatrix" {
                OpK::Ldmatrix
            } else {
                OpK::Stmatrix
            }
        }
        "mma" => OpK::MmaSync,
        "tcgen05" => {
            // `Inst::sub`: the tcgen05 operation (`tcgen05op`)
            inst.sub = match parts.get(1).copied().unwrap_or("") {
                "alloc" => tcgen05op::ALLOC,
                "dealloc" => tcgen05op::DEALLOC,
                "relinquish_alloc_permit" => tcgen05op::RELINQUISH,
                "fence::before_thread_sync" | "fence::after_thread_sync" => tcgen05op::FENCE,
                "wait::ld" | "wait::st" => tcgen05op::WAIT,
                "mma" => tcgen05op::MMA,
                "commit" => tcgen05op::COMMIT,
                "ld" => tcgen05op::LD,
                "st" => tcgen05op::ST,
                "cp" => tcgen05op::CP,
                _ => u8::MAX,
            };
            if inst.sub == u8::MAX {
                OpK::Unsupported
            } else {
                OpK::Tcgen05
            }
        }
        "wgmma" => match parts.get(1).copied() {
            Some("fence") => OpK::WgmmaFence,
            Some("commit_group") => OpK::WgmmaCommit,
            Some("wait_group") => OpK::WgmmaWait,
            Some("mma_async") => OpK::Wgmma,
            _ => OpK::Unsupported,
        },
        _ => OpK::Unsupported,
    };
    // Carry chains (.cc, addc/subc/madc) of 32- and 64-bit integers, lo or
    // hi halves for mad: the carry flag in and out.
    let chain_ok =
        matches!(inst.op, OpK::Add | OpK::Sub) || inst.op == OpK::Mad && inst.sub != mulmode::WIDE;
    let chain_ok =
        chain_ok && matches!(inst.ty, Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64) && !inst.sat;
    let carry_in = matches!(base, "addc" | "subc" | "madc");
    if chain_ok {
        inst.sub2 = (carry_in as u8 * carry::IN) | (has("cc") as u8 * carry::OUT);
    }
    let bad_chain = (carry_in || has("cc")) && !chain_ok;
    // .relu is emulated on min/max only: refuse it elsewhere rather than
    // compute a wrong answer.
    // Also refused: packed-integer types (u16x2...), stochastic rounding,
    // cvt.pack, vector atomics, st.async/red.async and 128-bit values.
    let packed_int = parts[1..].iter().any(|p| {
        let b = p.as_bytes();
        p.contains('x')
            && matches!(b.first(), Some(b'b' | b's' | b'u'))
            && b.get(1).is_some_and(|c| c.is_ascii_digit())
    });
    // A type-like modifier that is not a known type (e2m1, b32x2, ...) must not be ignored.
    let unknown_type = parts[1..].iter().any(|p| {
        let b = p.as_bytes();
        b.len() >= 2
            && (b[1].is_ascii_digit() && matches!(b[0], b'b' | b's' | b'u' | b'f' | b'e')
                || b.len() >= 3 && b[0] == b'u' && b[1] == b'e' && b[2].is_ascii_digit())
            && Ty::parse(p).is_none()
            // the block-scaled mma.sync's scale type
            && !(base == "mma" && *p == "ue8m0")
    });
    let unsupported_mod = unknown_type
        || bad_chain
        || has("relu") && !matches!(inst.op, OpK::Min | OpK::Max)
        || has("xorsign")
        || has("oob")
        || has("rs")
        || (base == "cvt" && has("pack"));
    let vector_atomic = matches!(inst.op, OpK::Atom | OpK::Red) && inst.vec > 1;
    let async_store = matches!(inst.op, OpK::St | OpK::Red) && has("async");
    // the 16x2 forms take no modifier (no .sat)
    let simd16 = inst.op == OpK::Simd16;
    if simd16 && parts.len() != 2
        || !simd16 && (unsupported_mod || packed_int)
        || vector_atomic
        || async_store
        || inst.ty == Ty::B128
        || inst.ty2 == Ty::B128
    {
        inst.op = OpK::Unsupported;
    }
    // Operand counts and shapes, so that malformed PTX is a parse error, not a panic.
    let min_ops = match inst.op {
        OpK::Bra | OpK::Activemask | OpK::BarWarp | OpK::MbarInval | OpK::MbarArrive => 1,
        OpK::Mov
        | OpK::Ld
        | OpK::St
        | OpK::Cvta
        | OpK::CvtaTo
        | OpK::Cvt
        | OpK::Abs
        | OpK::Neg
        | OpK::Not
        | OpK::Cnot
        | OpK::Brev
        | OpK::Clz
        | OpK::Popc
        | OpK::Bfind
        | OpK::Sqrt
        | OpK::Rsqrt
        | OpK::Rcp
        | OpK::Ex2
        | OpK::Lg2
        | OpK::Sin
        | OpK::Cos
        | OpK::Tanh
        | OpK::Testp
        | OpK::Elect
        | OpK::Red
        | OpK::MbarInit
        | OpK::MbarExpectTx
        | OpK::Ldmatrix
        | OpK::Stmatrix
        | OpK::Isspacep => 2,
        OpK::Add
        | OpK::Simd16
        | OpK::Sub
        | OpK::Mul
        | OpK::Mul24
        | OpK::Div
        | OpK::Rem
        | OpK::Min
        | OpK::Max
        | OpK::And
        | OpK::Or
        | OpK::Xor
        | OpK::Shl
        | OpK::Shr
        | OpK::Copysign
        | OpK::Setp
        | OpK::Set
        | OpK::Vote
        | OpK::Redux
        | OpK::Match
        | OpK::Atom
        | OpK::Mapa
        | OpK::MbarTryWait
        | OpK::MbarTestWait
        | OpK::CpBulkTensor
        | OpK::CpAsync
        | OpK::Szext
        | OpK::Bmsk => 3,
        OpK::Mad
        | OpK::Mad24
        | OpK::Fma
        | OpK::Selp
        | OpK::Slct
        | OpK::Shf
        | OpK::Bfe
        | OpK::Prmt
        | OpK::Dp4a
        | OpK::Dp2a
        | OpK::Sad
        | OpK::MmaSync
        | OpK::Wgmma => 4,
        OpK::Lop3 | OpK::Bfi | OpK::Shfl => 5,
        _ => 0,
    };
    let min_ops = if inst.op == OpK::Atom && inst.sub == atomop::CAS {
        4
    } else if inst.op == OpK::CpBulkTensor && inst.sub2 & 1 == 1 {
        // a store: [map, coords], [smem]{, cache-policy}
        2
    } else {
        min_ops
    };
    if ops.len() < min_ops {
        return Err(format!(
            "`{opcode}` needs at least {min_ops} operands, found {}",
            ops.len()
        ));
    }
    let is_mem = |o: &Opnd| matches!(o, Opnd::Mem { .. });
    let mem_at = match inst.op {
        OpK::Ld | OpK::Atom | OpK::Ldmatrix | OpK::MbarTryWait | OpK::MbarTestWait => Some(1),
        OpK::St
        | OpK::Red
        | OpK::Stmatrix
        | OpK::MbarInit
        | OpK::MbarInval
        | OpK::CpAsync
        | OpK::CpBulkTensor => Some(0),
        _ => None,
    };
    if let Some(i) = mem_at {
        if !is_mem(&ops[i]) {
            return Err(format!(
                "`{opcode}`: operand {} must be an address `[...]`",
                i + 1
            ));
        }
    }
    // For cvt, the first type is the destination and the second the source.
    let fty = match inst.op {
        OpK::Cvt => inst.ty2,
        OpK::Setp | OpK::Set => {
            if inst.op == OpK::Set {
                inst.ty2
            } else {
                inst.ty
            }
        }
        OpK::Slct => inst.ty,
        _ => inst.ty,
    };
    if inst.op == OpK::Slct {
        // slct.dtype.f32/s32 d, a, b, c: c has the second type
        let n = ops.len();
        if n == 4 {
            let mut last = [ops[3].clone()];
            fix_float_imms(&mut last, inst.ty2);
            ops[3] = last[0].clone();
            fix_float_imms(&mut ops[..3], inst.ty);
        }
    } else {
        fix_float_imms(&mut ops, fty);
    }
    inst.ops = ops.into_boxed_slice();
    Ok(inst)
}
