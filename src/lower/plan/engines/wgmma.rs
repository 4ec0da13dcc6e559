//! The `wgmma` engine's plan (sm_90a warpgroup MMA from swizzled shared
//! memory): which products it takes, its warps, and the layouts of its
//! accumulator ([`crate::lower::plan::layout::wgmma`]) and of A and B in
//! shared memory. Emission: [`crate::lower::emit::ops::wgmma`].
use crate::ir::{Module, OpId, Scalar};
use crate::lower::analysis::values::{value_tile, Elem};
use crate::lower::plan::layout::smem::Smem;
use crate::lower::plan::layout::{wgmma as frag, LinearLayout};
use crate::lower::plan::target::Target;
use crate::options::Gpu;

/// The most accumulator registers per thread a plan may use.
const MAX_ACC_REGS: i64 = 128;

/// How one matrix multiply maps onto `wgmma` instructions.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The accumulator's layout.
    pub acc: LinearLayout,
    /// Rows, columns and reduction extent of the multiply.
    pub mnk: [i64; 3],
    /// Warpgroups splitting M.
    pub groups: i64,
    /// Element types of A, B and the accumulator.
    pub types: [Scalar; 3],
}

impl Plan {
    /// Layouts for A and B that load up to 16 bytes at a time along the
    /// rows and write up to 16 bytes at a time into the swizzled buffers:
    /// row vectors for A and MN-major B; for K-major B, short row vectors
    /// stacked along K (each thread holds a small block).
    pub fn operand_layouts(&self) -> Option<[LinearLayout; 2]> {
        let [m, n, k] = self.mnk;
        let (_, b) = operands(self.mnk, self.types)?;
        let warps = 4 * self.groups;
        let vec = 16 / b.es;
        let b_layout = if b.mn_major {
            frag::operand(&[k, n], warps, &[(1, vec)], [1, 0])
        } else {
            let per_thread = (k * n / (32 * warps)).max(1);
            let along_n = vec.min(4).min(per_thread);
            let along_k = vec.min(per_thread / along_n).max(1);
            frag::operand(&[k, n], warps, &[(1, along_n), (0, along_k)], [1, 0])
        };
        Some([frag::operand(&[m, k], warps, &[(1, vec)], [1, 0]), b_layout])
    }
}

impl super::EnginePlan for Plan {
    fn acc_layout(&self) -> Option<LinearLayout> {
        Some(self.acc.clone())
    }

    fn operand_layouts(&self, _: &Module, _: OpId, _: u32) -> [Option<LinearLayout>; 2] {
        Plan::operand_layouts(self).map_or([None, None], |l| l.map(Some))
    }

    fn staging(&self, o: &super::Operands) -> Option<super::Staging> {
        let [mm, n, kk] = self.mnk;
        let whole = o.streamed == [false, false];
        let (ks, (a, b)) = if whole {
            // The whole product, two sets where they fit: a warpgroup may
            // write the next run's while another still multiplies.
            (kk, operands(self.mnk, self.types)?)
        } else {
            // Streamed: the longest slice within the registers a thread
            // may give it whose buffers have a layout; two sets when K
            // takes several.
            let es = operand_bytes(self.types[0])?;
            super::k_slices(kk, 32 / es)
                .filter(|&ks| o.slice_words(ks) <= super::SLICE_WORDS || ks == 32 / es)
                .find_map(|ks| Some((ks, operands([mm, n, ks], self.types)?)))?
        };
        Some(super::Staging {
            slices: vec![super::Slice {
                k: ks,
                bytes: set_bytes(&a, &b),
                buffers: [set_bytes(&a, &b), 0],
            }],
            sets: if whole || kk / ks > 1 { 2 } else { 1 },
            a_in_registers: false,
            swizzle: true,
            align: 1024,
            one_region: true,
        })
    }

    fn describe(&self) -> String {
        let [m, n, k] = self.mnk;
        let [a, b, c] = self.types.map(|t| t.name());
        format!(
            "wgmma, {m}x{n}x{k} in {} warpgroup(s) along M, {a} x {b} -> {c}",
            self.groups
        )
    }
}

/// Bytes per element of an operand type `wgmma` reads, if it reads it.
fn operand_bytes(s: Scalar) -> Option<i64> {
    match s {
        Scalar::F16 | Scalar::BF16 => Some(2),
        Scalar::TF32 => Some(4),
        Scalar::F8E4M3FN | Scalar::F8E5M2 | Scalar::I8 => Some(1),
        _ => None,
    }
}

/// Whether `wgmma` multiplies `a x b` into `c`.
fn types_supported(a: Scalar, b: Scalar, c: Scalar) -> bool {
    let f8 = |s| matches!(s, Scalar::F8E4M3FN | Scalar::F8E5M2);
    match (a, b, c) {
        (Scalar::F16, Scalar::F16, Scalar::F32 | Scalar::F16) => true,
        (Scalar::BF16, Scalar::BF16, Scalar::F32) => true,
        (Scalar::TF32, Scalar::TF32, Scalar::F32) => true,
        (Scalar::I8, Scalar::I8, Scalar::I32) => true,
        (x, y, Scalar::F32 | Scalar::F16) => f8(x) && f8(y),
        _ => false,
    }
}

/// Shapes and types of op `id` if it is a 2-D `mmaf`/`mmai` on sm_90a
/// with types `wgmma` takes: `([m, n, k], [a, b, c])`.
fn shape(m: &Module, id: OpId, target: Target) -> Option<([i64; 3], [Scalar; 3])> {
    if target.gpu != Gpu::Sm90 {
        return None;
    }
    let op = &m.ops[id];
    if !crate::lower::analysis::chains::is_mma(op.opcode) {
        return None;
    }
    let (Some((ash, _)), Some((bsh, _)), Some((csh, Elem::Num(c)))) = (
        value_tile(m, op.operand("lhs")?),
        value_tile(m, op.operand("rhs")?),
        value_tile(m, *op.results.first()?),
    ) else {
        return None;
    };
    let (a, b) = crate::lower::plan::engines::operand_elems(m, id)?;
    if ash.len() != 2 || bsh.len() != 2 || csh.len() != 2 || !types_supported(a, b, c) {
        return None;
    }
    let (mm, k, n) = (ash[0], ash[1], bsh[1]);
    if bsh[0] != k || csh != [mm, n] {
        return None;
    }
    let es = operand_bytes(a)?;
    let kinst = 32 / es;
    let ok = mm % 64 == 0 && n % 8 == 0 && k % kinst == 0;
    ok.then_some(([mm, n, k], [a, b, c]))
}

/// The layouts of A and B in shared memory.
pub fn operands(mnk: [i64; 3], types: [Scalar; 3]) -> Option<(Smem, Smem)> {
    let [m, n, k] = mnk;
    let es = operand_bytes(types[0])?;
    let a = Smem::new(m, k, es, false)?;
    let b = if es == 2 {
        Smem::new(n, k, es, true).or_else(|| Smem::new(n, k, es, false))
    } else {
        Smem::new(n, k, es, false)
    }?;
    let bytes = set_bytes(&a, &b) + 1024;
    (bytes <= crate::lower::plan::target::MAX_SHARED_BYTES).then_some((a, b))
}

/// Bytes of one set of operand buffers (A then B, each 1024-aligned).
pub fn set_bytes(a: &Smem, b: &Smem) -> i64 {
    let up = |x: i64| (x + 1023) & !1023;
    up(a.bytes()) + up(b.bytes())
}

/// The warps per tile block this engine wants for op `id`, if it applies:
/// two warpgroups when M splits into two 64-row halves, else one.
pub fn preferred_warps(m: &Module, id: OpId, target: Target) -> Option<u32> {
    let (mnk, types) = shape(m, id, target)?;
    operands(mnk, types)?;
    let warps = if mnk[0] % 128 == 0 { 8 } else { 4 };
    (mnk[0] * mnk[1] / (32 * i64::from(warps)) <= MAX_ACC_REGS).then_some(warps)
}

/// The plan for op `id` in an entry of `warps` warps, if this engine applies.
pub fn plan(m: &Module, id: OpId, target: Target, warps: u32) -> Option<Plan> {
    let (mnk, types) = shape(m, id, target)?;
    operands(mnk, types)?;
    // Beyond two warpgroups, 128 registers a thread cannot hold an
    // m64n256 accumulator and the instruction's operands.
    if warps % 4 != 0 || warps == 0 || warps > 8 {
        return None;
    }
    let groups = i64::from(warps / 4);
    let [mm, n, _] = mnk;
    if mm % (64 * groups) != 0 || mm * n / (32 * i64::from(warps)) > MAX_ACC_REGS {
        return None;
    }
    Some(Plan {
        acc: frag::accumulator(mm, n, groups),
        mnk,
        groups,
        types,
    })
}
