//! The `wgmma` instruction (sm_90a) as PTX: its type and shape spellings,
//! the fences around it, the shared-memory matrix descriptors of its
//! operands and the accumulator's registers. Shared by the `wgmma` engine
//! (`ops/wgmma*.rs`) and the `mma.sync` products that multiply on `wgmma`
//! (`ops/mma_sync_wgmma.rs`), which use it and not each other.
use smallvec::smallvec;

use crate::ir::Scalar;
use crate::lower::emit::context::Lowerer;
use crate::lower::plan::layout::smem::Smem;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};

/// The PTX type suffix of a `wgmma` operand or accumulator type.
pub fn type_name(s: Scalar, signed: bool) -> &'static str {
    match s {
        Scalar::F16 => "f16",
        Scalar::BF16 => "bf16",
        Scalar::TF32 => "tf32",
        Scalar::F32 => "f32",
        Scalar::F8E4M3FN => "e4m3",
        Scalar::F8E5M2 => "e5m2",
        Scalar::I8 if signed => "s8",
        Scalar::I8 => "u8",
        _ => "s32",
    }
}

/// The `.m64nNkK` shape modifier (N a multiple of 8 up to 256).
pub fn shape_name(n: i64, k: i64) -> &'static str {
    static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let names = NAMES.get_or_init(|| {
        [8, 16, 32]
            .iter()
            .flat_map(|k| (1..=32).map(move |j| format!("m64n{}k{k}", 8 * j)))
            .collect()
    });
    let kk = match k {
        8 => 0,
        16 => 1,
        _ => 2,
    };
    &names[kk * 32 + (n / 8 - 1) as usize]
}

/// A `wgmma` instruction of `mods` with no operands (`fence`, ...).
pub fn sync_op(l: &mut Lowerer, mods: &[&'static str], srcs: Vec<Operand>) {
    l.b.push(Inst::new(Opc::Wgmma, mods, &[], vec![], srcs));
}

/// `base` moved to this thread's warpgroup's part of an operand whose
/// warpgroups take `bytes` each: `base + (tid / 128) * bytes`.
pub fn group_base(l: &mut Lowerer, base: Reg, bytes: i64) -> Reg {
    let tid = l.tid();
    let g = l.b.op(
        Opc::Shr,
        &[],
        &[Ty::U32],
        Ty::U32,
        smallvec![Operand::Reg(tid), Operand::Imm(7)],
    );
    l.b.op(
        Opc::Mad,
        &["lo"],
        &[Ty::U32],
        Ty::U32,
        smallvec![Operand::Reg(g), Operand::Imm(bytes), Operand::Reg(base)],
    )
}

/// `fence.proxy.async.shared::cta`: this thread's shared-memory writes
/// (stores, finished `cp.async` copies) reach the tensor cores' (async)
/// proxy.
pub fn proxy_fence(l: &mut Lowerer) {
    l.b.push(Inst::new(
        Opc::Fence,
        &["proxy", "async", "shared::cta"],
        &[],
        vec![],
        vec![],
    ));
}

/// A shared byte count (a u32 register, a multiple of 16) in a
/// descriptor's 16-byte units, as a u64.
pub fn descriptor_units(l: &mut Lowerer, bytes: Reg) -> Reg {
    let units = l.b.op(
        Opc::Shr,
        &[],
        &[Ty::U32],
        Ty::U32,
        smallvec![Operand::Reg(bytes), Operand::Imm(4)],
    );
    l.b.op(
        Opc::Cvt,
        &[],
        &[Ty::U64, Ty::U32],
        Ty::U64,
        smallvec![Operand::Reg(units)],
    )
}

/// Descriptor `desc` moved on by `bytes` (a multiple of 16) of its
/// operand.
pub fn descriptor_at(l: &mut Lowerer, desc: Reg, bytes: i64) -> Reg {
    if bytes == 0 {
        return desc;
    }
    l.b.op(
        Opc::Add,
        &[],
        &[Ty::S64],
        Ty::S64,
        smallvec![Operand::Reg(desc), Operand::Imm(bytes >> 4)],
    )
}

/// The matrix descriptor of operand layout `s` at the shared address
/// `base`: the start address in 16-byte units or'ed with the layout's
/// constant bits.
pub fn descriptor(l: &mut Lowerer, base: Reg, s: &Smem) -> Reg {
    let wide = descriptor_units(l, base);
    l.b.op(
        Opc::Or,
        &[],
        &[Ty::B64],
        Ty::B64,
        smallvec![Operand::Reg(wide), Operand::Imm(s.descriptor_bits() as i64)],
    )
}

/// The accumulator (of element type `acc`) as `wgmma` registers, in fresh
/// registers (variables the multiplies update in place): f32/s32 one per
/// element, f16 two per word.
pub fn acc_words(l: &mut Lowerer, acc: Scalar, regs: &[Reg]) -> Vec<Reg> {
    if acc == Scalar::F16 {
        regs.chunks(2).map(|p| l.b.join(p[0], p[1])).collect()
    } else {
        regs.iter()
            .map(|&r| {
                let w = l.b.reg(RegClass::B32);
                l.b.copy(w, r);
                w
            })
            .collect()
    }
}
