//! `tcgen05`: the sm_100 fifth-generation tensor core and its tensor memory
//! (PTX ISA "TensorCore 5th Generation Family Instructions").
//!
//! Each CTA has 128 lanes x 512 columns of 32-bit tensor memory, handed out
//! by `tcgen05.alloc` (a warp collective) in power-of-two runs of at least
//! 32 columns. `tcgen05.mma` (issued by one thread) runs at issue: products
//! are exact and each output is rounded once, as `wgmma` does here, so the
//! same product split into the same K steps gives the same bits on both.
//! `tcgen05.commit` then arrives on its mbarrier at once (on each CTA's of
//! its mask with `.multicast::cluster`); `tcgen05.ld/st` run per thread,
//! their waits and fences are no-ops. With `cta_group::2` each CTA of a
//! pair allocates its own tensor memory (the same columns, as both run the
//! same allocations) and the even CTA's MMA reads and writes both halves.
//!
//! Misuse reported: an access to columns not allocated, a warp reaching
//! lanes outside its 32-lane subpartition, a dealloc that does not match an
//! allocation, an MMA whose operands leave tensor memory, a CTA that ends
//! with columns still allocated.

use super::*;
use crate::decode::tcgen05op;
use std::collections::BTreeMap;

/// Lanes of a CTA's tensor memory.
pub(super) const LANES: u32 = 128;
/// 32-bit columns of a CTA's tensor memory.
pub(super) const COLS: u32 = 512;

/// A CTA's tensor memory and its allocations.
pub(super) struct Tmem {
    /// Lane-major cells.
    cells: Vec<u32>,
    /// Live allocations: first column -> columns.
    allocs: BTreeMap<u32, u32>,
}

impl Tmem {
    fn new() -> Tmem {
        Tmem {
            cells: vec![0; (LANES * COLS) as usize],
            allocs: BTreeMap::new(),
        }
    }
    /// Columns allocated and not given back.
    pub(super) fn live_columns(&self) -> u32 {
        self.allocs.values().sum()
    }
    fn allocated(&self, col: u32) -> bool {
        self.allocs
            .range(..=col)
            .next_back()
            .is_some_and(|(c, n)| col < c + n)
    }
    /// The cell at (lane, col), or an error naming `what` where it is not
    /// allocated.
    fn cell(&mut self, lane: u32, col: u32, what: &str) -> R<&mut u32> {
        if lane >= LANES || col >= COLS || !self.allocated(col) {
            return Err(e(
                ErrorKind::OutOfBounds,
                Some(((lane as u64) << 16) | col as u64),
                format!("{what} tensor memory lane {lane} column {col}, which is not allocated"),
            ));
        }
        Ok(&mut self.cells[(lane * COLS + col) as usize])
    }
}

/// The kinds of `tcgen05.mma`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    F16,
    Tf32,
    F8f6f4,
    I8,
    /// `kind::mxf8f6f4.block_scale`.
    Mxf8f6f4,
}

/// A decoded `tcgen05.mma` instruction descriptor (PTX ISA "Instruction
/// descriptor").
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Idesc {
    pub m: usize,
    pub n: usize,
    /// Accumulator type: F16, F32 or S32.
    pub d: Ty,
    pub a: Ty,
    pub b: Ty,
    pub neg_a: bool,
    pub neg_b: bool,
    /// A (B) is MN-major (transposed) rather than K-major.
    pub a_mn: bool,
    pub b_mn: bool,
    /// `.kind::i8` saturation.
    pub sat: bool,
    /// Block-scaled kinds: (scale type E8M0 or UE4M3, A's and B's scale
    /// factor ids: the byte of the scale column).
    pub scale: Option<(bool, u32, u32)>,
}

impl Idesc {
    /// Decodes `v` for `kind`; `Err` names what the emulator does not model.
    pub(crate) fn decode(kind: Kind, v: u32) -> Result<Idesc, String> {
        let bits = |lo: u32, n: u32| (v >> lo) & ((1 << n) - 1);
        if bits(2, 1) != 0 {
            return Err("sparse tcgen05.mma".into());
        }
        let f8 = |x: u32| match x {
            0 => Ok(Ty::E4M3),
            1 => Ok(Ty::E5M2),
            _ => Err(format!("tcgen05.mma f8f6f4 type {x}")),
        };
        let (a, b) = match kind {
            Kind::F16 => {
                let t = |x: u32| match x {
                    0 => Ok(Ty::F16),
                    1 => Ok(Ty::BF16),
                    _ => Err(format!("kind::f16 type {x}")),
                };
                (t(bits(7, 3))?, t(bits(10, 3))?)
            }
            Kind::Tf32 => match (bits(7, 3), bits(10, 3)) {
                (2, 2) => (Ty::TF32, Ty::TF32),
                x => return Err(format!("kind::tf32 types {x:?}")),
            },
            Kind::F8f6f4 | Kind::Mxf8f6f4 => (f8(bits(7, 3))?, f8(bits(10, 3))?),
            Kind::I8 => {
                let t = |x: u32| if x == 1 { Ty::S8 } else { Ty::U8 };
                (t(bits(7, 3)), t(bits(10, 3)))
            }
        };
        let scaled = kind == Kind::Mxf8f6f4;
        let d = if scaled {
            Ty::F32
        } else {
            match (bits(4, 2), kind) {
                (0, Kind::F16 | Kind::F8f6f4) => Ty::F16,
                (1, Kind::F16 | Kind::Tf32 | Kind::F8f6f4) => Ty::F32,
                (2, Kind::I8) => Ty::S32,
                (x, _) => return Err(format!("tcgen05.mma accumulator type {x} for {kind:?}")),
            }
        };
        if !scaled && bits(30, 2) != 0 {
            return Err("tcgen05.mma max shift (.ws)".into());
        }
        if scaled && bits(31, 1) != 0 {
            return Err("block-scaled K other than 32".into());
        }
        Ok(Idesc {
            m: (bits(24, 5) << 4) as usize,
            n: (bits(17, 6) << 3) as usize,
            d,
            a,
            b,
            neg_a: bits(13, 1) == 1,
            neg_b: bits(14, 1) == 1,
            a_mn: bits(15, 1) == 1,
            b_mn: bits(16, 1) == 1,
            sat: !scaled && bits(3, 1) == 1,
            scale: scaled.then(|| (bits(23, 1) == 1, bits(29, 2), bits(4, 2))),
        })
    }
}

/// Decodes a tcgen05 shared-memory matrix descriptor (PTX ISA "Shared
/// memory descriptor"): start, leading and stride byte offsets (>> 4) at
/// bits 0, 16 and 32, the fixed version 1 at bits 46-48, base offset at
/// 49-51, the leading-offset mode at 52 and the swizzle at 61-63 (0 none,
/// 1 128B with 32-byte atoms, 2 128B, 4 64B, 6 32B). `Desc::swz` is the
/// swizzle span in bytes, 1 for 128B with 32-byte atoms.
pub(super) fn smem_desc(d: u64) -> Result<Desc, String> {
    if (d >> 46) & 7 != 1 {
        return Err(format!(
            "tcgen05 descriptor version {} (not 1)",
            (d >> 46) & 7
        ));
    }
    if (d >> 49) & 0xf != 0 {
        return Err("tcgen05 descriptor base offset or absolute leading offset".into());
    }
    Ok(Desc {
        start: (d & 0x3fff) << 4,
        lbo: ((d >> 16) & 0x3fff) << 4,
        sbo: ((d >> 32) & 0x3fff) << 4,
        swz: match d >> 61 {
            0 => 0,
            1 => 1,
            2 => 128,
            4 => 64,
            6 => 32,
            x => return Err(format!("tcgen05 descriptor swizzle mode {x}")),
        },
    })
}

fn unsupported(msg: impl Into<String>) -> E {
    e(ErrorKind::Unsupported, None, msg)
}

/// The tensor-memory lane of row `i` of an M-row matrix (D, or A from
/// tensor memory) whose address is at lane `base`: layout D (M = 128) puts
/// row i in lane i; layout F (M = 64) puts 16 rows in each warp's
/// subpartition, from lane 0 or 16 of it.
fn row_lane(m: usize, base: u32, i: usize) -> u32 {
    if m == 128 {
        base + i as u32
    } else {
        base + 32 * (i as u32 / 16) + i as u32 % 16
    }
}

/// One thread's `tcgen05` instruction; the warp collectives (alloc,
/// dealloc, relinquish) block for [`collective`].
pub(super) fn step(
    dev: &mut Device,
    l: &mut Launch,
    cta: &mut Cta,
    ti: Ti,
    inst: &Inst,
) -> R<Flow> {
    match inst.sub {
        tcgen05op::ALLOC | tcgen05op::DEALLOC | tcgen05op::RELINQUISH => {
            return Ok(Flow::Block(TS::Coll))
        }
        tcgen05op::FENCE => {
            // PTX ISA "tcgen05.fence": orders the thread's tcgen05
            // operations before (after) its thread synchronisation
            let t = ti.t;
            if inst.opcode.contains("before_thread_sync") {
                with_race(cta, |rc| rc.tc_fence_before(t));
            } else {
                with_race(cta, |rc| rc.tc_fence_after(t));
            }
        }
        tcgen05op::WAIT => {
            // PTX ISA "tcgen05.wait": the thread's earlier tcgen05.ld
            // (tcgen05.st) have completed
            let load = inst.opcode.contains("wait::ld");
            cta.strict.tc_wait(ti.t, load);
        }
        tcgen05op::MMA => mma(dev, l, cta, ti, inst)?,
        tcgen05op::COMMIT => commit(l, cta, ti, inst)?,
        tcgen05op::LD | tcgen05op::ST => ldst(l, cta, ti, inst)?,
        tcgen05op::CP => cp(dev, l, cta, ti, inst)?,
        _ => return Err(unsupported(format!("`{}`", inst.opcode))),
    }
    Ok(Flow::Next)
}

/// `tcgen05.alloc/dealloc/relinquish_alloc_permit`, once for the warp
/// `group`.
pub(super) fn collective(
    dev: &mut Device,
    l: &Launch,
    cta: &mut Cta,
    inst: &Inst,
    group: &[usize],
    tid_of: &dyn Fn(usize) -> (u32, u32, u32),
) -> R<()> {
    let g0 = group[0];
    if group.len() != 32 {
        return Err(unsupported("tcgen05 warp collective without a full warp"));
    }
    let nr = cta.nregs;
    let r0 = cta.regs[g0 * nr..(g0 + 1) * nr].to_vec();
    let ti = Ti {
        t: g0,
        tid: tid_of(g0),
    };
    let ops = &inst.ops;
    match inst.sub {
        tcgen05op::RELINQUISH => {}
        tcgen05op::ALLOC => {
            let at = mem_addr(&r0, &ops[0], l);
            let n = val(&r0, &ops[1], l, cta, ti) as u32;
            if !n.is_power_of_two() || !(32..=COLS).contains(&n) {
                return Err(unsupported(format!("tcgen05.alloc of {n} columns")));
            }
            let tm = cta.tmem.get_or_insert_with(|| Box::new(Tmem::new()));
            let col = (0..COLS)
                .step_by(n as usize)
                .find(|&c| (c..c + n).all(|x| !tm.allocated(x)))
                .ok_or_else(|| {
                    e(
                        ErrorKind::Deadlock,
                        None,
                        format!("tcgen05.alloc of {n} columns: no free run left"),
                    )
                })?;
            tm.allocs.insert(col, n);
            write_bytes(dev, l, cta, inst.space, at, &col.to_le_bytes(), g0, 4)?;
        }
        tcgen05op::DEALLOC => {
            let a = val(&r0, &ops[0], l, cta, ti) as u32;
            let n = val(&r0, &ops[1], l, cta, ti) as u32;
            let ok = a >> 16 == 0
                && cta
                    .tmem
                    .as_mut()
                    .is_some_and(|tm| tm.allocs.get(&(a & 0xffff)) == Some(&n));
            if !ok {
                return Err(e(
                    ErrorKind::OutOfBounds,
                    Some(a as u64),
                    format!("tcgen05.dealloc of {n} columns at {a:#x}, which is no allocation"),
                ));
            }
            if l.checks.tcgen05 {
                // PTX ISA "tcgen05.wait": a load or store not waited for
                // may still reach the columns given back
                let cols = (a & 0xffff)..(a & 0xffff) + n;
                let cells: Vec<(u32, std::ops::Range<u32>)> =
                    (0..LANES).map(|ln| (ln, cols.clone())).collect();
                strict::tc_pending_at_dealloc(cta, &cells)?;
            }
            cta.tmem.as_mut().unwrap().allocs.remove(&(a & 0xffff));
        }
        _ => unreachable!(),
    }
    Ok(())
}

/// `tcgen05.commit.cta_group::N.mbarrier::arrive::one{.shared::cluster}
/// {.multicast::cluster}.b64 [mbar]{, cta-mask}`: every MMA before it has
/// completed at issue, so it arrives now (on the mbarrier at that offset in
/// each CTA of the mask, with `.multicast::cluster`).
fn commit(l: &mut Launch, cta: &mut Cta, ti: Ti, inst: &Inst) -> R<()> {
    let multicast = inst.opcode.contains(".multicast::cluster");
    if inst.ops.len() != 1 + multicast as usize {
        return Err(unsupported(format!("`{}`", inst.opcode)));
    }
    let r = &cta.regs[ti.t * cta.nregs..(ti.t + 1) * cta.nregs];
    let (rank, a) = mbar_target(r, &inst.ops[0], l, inst, cta.rank)?;
    // PTX ISA "tcgen05.commit": the mbarrier tracks the completion of the
    // thread's earlier asynchronous tcgen05 operations; their writes of
    // tensor memory are visible to a thread that observes its phase
    let own = !multicast && rank == cta.rank
        || multicast && val(r, &inst.ops[1], l, cta, ti) as u32 >> cta.rank & 1 == 1;
    let base = l.smem_bytes();
    for (lanes, cols) in std::mem::take(&mut cta.strict.tc_mma[ti.t]) {
        for lane in lanes {
            let o = base + (lane * COLS + cols.start) as usize;
            let len = cols.len();
            with_race(cta, |rc| match own {
                true => rc.tc_async_write(o, len, a),
                false => rc.forget(o, len),
            });
        }
    }
    if own {
        // the phase also covers what the thread's earlier commits tracked
        let earlier = std::mem::take(&mut cta.strict.tc_commits[ti.t]);
        with_race(cta, |rc| {
            for &m in &earlier {
                rc.agent_also_through(m, a);
            }
        });
        cta.strict.tc_commits[ti.t] = earlier;
        if !cta.strict.tc_commits[ti.t].contains(&a) {
            cta.strict.tc_commits[ti.t].push(a);
        }
    }
    if multicast {
        // the mbarrier at the same offset in every CTA of the mask
        let mask = val(r, &inst.ops[1], l, cta, ti) as u32 & 0xffff;
        for d in (0..l.others.len() as u32).filter(|d| mask >> d & 1 == 1) {
            arrive_one(l, cta, ti, d, a)?;
        }
        return Ok(());
    }
    arrive_one(l, cta, ti, rank, a)
}

/// One arrival on the mbarrier at shared offset `a` of CTA `rank`.
fn arrive_one(l: &mut Launch, cta: &mut Cta, ti: Ti, rank: u32, a: u32) -> R<()> {
    let mb = cluster_mbar(l, cta, rank, a)?;
    if mb.pending == 0 {
        return Err(strict::e_async(
            Some(a as u64),
            format!(
                "tcgen05.commit arrives on the mbarrier at {a:#x} when its phase {} has no \
                 arrival pending (more arrivals than mbarrier.init's count)",
                mb.phase
            ),
        ));
    }
    let arrived_in = mb.phase;
    mb.pending -= 1;
    mbar_check(mb);
    if rank == cta.rank {
        with_race(cta, |rc| rc.mbar_release(a, ti.t, arrived_in));
    }
    Ok(())
}

/// Where register `j` of lane `lane` goes for a `tcgen05.ld/st` shape:
/// (lane, column) relative to the address (PTX ISA "Matrix fragments for
/// tcgen05.ld/st"); `half` is `.16x32bx2`'s immediate column offset of the
/// upper half-warp.
fn fragment(shape: &str, lane: u32, j: u32, half: u32) -> Option<(u32, u32)> {
    Some(match shape {
        "32x32b" => (lane, j),
        "16x128b" => (lane / 4 + 8 * (j % 2), lane % 4 + 4 * (j / 2)),
        "16x256b" => (
            lane / 4 + 8 * (j / 2 % 2),
            j % 2 + 2 * (lane % 4) + 8 * (j / 4),
        ),
        "16x32bx2" => (lane % 16, j + if lane >= 16 { half } else { 0 }),
        _ => return None,
    })
}

/// `tcgen05.ld.sync.aligned.SHAPE.xN{.pack::16b}.b32 {regs}, [taddr]{, imm}`
/// and `tcgen05.st.sync.aligned.SHAPE.xN{.unpack::16b}.b32 [taddr]{, imm},
/// {regs}`, one thread's part.
fn ldst(l: &Launch, cta: &mut Cta, ti: Ti, inst: &Inst) -> R<()> {
    let load = inst.sub == tcgen05op::LD;
    let parts: Vec<&str> = inst.opcode.split('.').collect();
    let shape = parts
        .iter()
        .copied()
        .find(|p| p.starts_with("16x") || p.starts_with("32x"))
        .unwrap_or("");
    let packed = inst.opcode.contains("pack::16b");
    let ops = &inst.ops;
    let (regs, at, imm) = if load {
        (&ops[0], &ops[1], ops.get(2))
    } else {
        (
            ops.last().unwrap(),
            &ops[0],
            ops.get(1).filter(|_| ops.len() == 3),
        )
    };
    let regs = regs_of_vec(regs);
    let t = ti.t;
    let r = cta.regs[t * cta.nregs..(t + 1) * cta.nregs].to_vec();
    let taddr = mem_addr(&r, at, l) as u32;
    let half = imm.map_or(0, |o| val(&r, o, l, cta, ti) as u32);
    let (lane0, col0) = (taddr >> 16, taddr & 0xffff);
    let warp = (t / 32) as u32 % 4;
    let lane = t as u32 % 32;
    if fragment(shape, 0, 0, 0).is_none() || (shape == "16x32bx2") != imm.is_some() {
        return Err(unsupported(format!("`{}`", inst.opcode)));
    }
    let what = if load {
        "tcgen05.ld from"
    } else {
        "tcgen05.st to"
    };
    // the 32-bit words: unpacked, two per register with .pack/.unpack
    let per = if packed { 2 } else { 1 };
    let mut words = vec![0u32; regs.len() * per];
    if !load {
        for (k, reg) in regs.iter().enumerate() {
            let v = val(&r, reg, l, cta, ti) as u32;
            if packed {
                words[2 * k] = v & 0xffff;
                words[2 * k + 1] = v >> 16;
            } else {
                words[k] = v;
            }
        }
    }
    let tm = cta.tmem.as_mut().ok_or_else(|| {
        e(
            ErrorKind::OutOfBounds,
            None,
            format!("{what} tensor memory never allocated"),
        )
    })?;
    let mut cells = Vec::with_capacity(words.len());
    for (j, w) in words.iter_mut().enumerate() {
        let (dl, dc) = fragment(shape, lane, j as u32, half).unwrap();
        let ln = lane0 + dl;
        if ln / 32 != warp {
            return Err(e(
                ErrorKind::OutOfBounds,
                Some(taddr as u64),
                format!(
                    "{what} lane {ln}: warp {warp} of its warpgroup reaches lanes {}..{} only",
                    32 * warp,
                    32 * warp + 31
                ),
            ));
        }
        let c = tm.cell(ln, col0 + dc, what)?;
        if load {
            *w = *c;
        } else {
            *c = *w;
        }
        cells.push((ln, col0 + dc));
    }
    if l.checks.tcgen05 {
        let pc = cta.pc[t];
        let mma_in_flight = cta.strict.tc_mma.iter().any(|m| !m.is_empty());
        for &(ln, col) in &cells {
            if mma_in_flight {
                strict::tc_mma_pending(cta, ln, col)?;
            }
            let o = l.smem_bytes() + (ln * COLS + col) as usize;
            let mut res = Ok(());
            with_race(cta, |rc| res = rc.tc_access(t, pc, o, 1, !load));
            res.map_err(|c| race_err(l, t, if load { "tcgen05.ld" } else { "tcgen05.st" }, c))?;
        }
        cta.strict.tc_issue(t, load, cells);
    }
    if load {
        for (k, reg) in regs.iter().enumerate() {
            let v = if packed {
                (words[2 * k] & 0xffff) | (words[2 * k + 1] << 16)
            } else {
                words[k]
            };
            wr(cta, t, reg, v as u64)?;
        }
    }
    Ok(())
}

/// `tcgen05.cp.cta_group::1.32x128b.warpx4 [taddr], s-desc`: 32 rows of 16
/// bytes from shared memory (rows 16 bytes apart, in 8-row core matrices
/// `sbo` apart) to 32 lanes x 4 columns, copied to each warp's
/// subpartition.
fn cp(dev: &mut Device, l: &mut Launch, cta: &mut Cta, ti: Ti, inst: &Inst) -> R<()> {
    let parts: Vec<&str> = inst.opcode.split('.').collect();
    if parts.get(2..) != Some(&["cta_group::1", "32x128b", "warpx4"][..]) {
        return Err(unsupported(format!("`{}`", inst.opcode)));
    }
    let t = ti.t;
    let r = cta.regs[t * cta.nregs..(t + 1) * cta.nregs].to_vec();
    let taddr = mem_addr(&r, &inst.ops[0], l) as u32;
    let d = smem_desc(val(&r, &inst.ops[1], l, cta, ti)).map_err(unsupported)?;
    if d.swz != 0 {
        return Err(unsupported("tcgen05.cp from a swizzled layout"));
    }
    let (lane0, col0) = (taddr >> 16, taddr & 0xffff);
    if lane0 != 0 {
        return Err(e(
            ErrorKind::OutOfBounds,
            Some(taddr as u64),
            "tcgen05.cp .warpx4 to a lane other than 0",
        ));
    }
    let mut rows = vec![[0u8; 16]; 32];
    for (i, row) in rows.iter_mut().enumerate() {
        let a = d.start + (i as u64 % 8) * 16 + (i as u64 / 8) * d.sbo;
        read_bytes(dev, l, cta, Space::Shared, a, row, t, 16)?;
    }
    let tm = cta.tmem.as_mut().ok_or_else(|| {
        e(
            ErrorKind::OutOfBounds,
            None,
            "tcgen05.cp to tensor memory never allocated",
        )
    })?;
    for w in 0..4 {
        for (i, row) in rows.iter().enumerate() {
            for c in 0..4 {
                let v = u32::from_le_bytes(row[4 * c..4 * c + 4].try_into().unwrap());
                *tm.cell(32 * w + i as u32, col0 + c as u32, "tcgen05.cp to")? = v;
            }
        }
    }
    Ok(())
}

/// `tcgen05.mma.cta_group::1.kind::K{.block_scale}{.collector::a::*} [d],
/// a, b, idesc, {disable-output-lane} | [scale-a], [scale-b],
/// enable-input-d`: A from a shared-memory descriptor or tensor memory
/// (`[a]`), B from a descriptor, D in tensor memory.
fn mma(dev: &mut Device, l: &mut Launch, cta: &mut Cta, ti: Ti, inst: &Inst) -> R<()> {
    let op = &*inst.opcode;
    let kind = if op.contains("kind::f16.") {
        Kind::F16
    } else if op.contains("kind::tf32.") {
        Kind::Tf32
    } else if op.contains("kind::f8f6f4.") {
        Kind::F8f6f4
    } else if op.contains("kind::i8.") {
        Kind::I8
    } else if op.contains("kind::mxf8f6f4.block_scale.") && !op.contains("scale_vec::2X") {
        Kind::Mxf8f6f4
    } else {
        return Err(unsupported(format!("`{op}`")));
    };
    if op.contains(".ws") || op.contains(".sp") {
        return Err(unsupported(format!("`{op}`")));
    }
    let ops = &inst.ops;
    let t = ti.t;
    let r = cta.regs[t * cta.nregs..(t + 1) * cta.nregs].to_vec();
    let scaled = kind == Kind::Mxf8f6f4;
    let want = if scaled { 7 } else { 6 };
    if ops.len() != want && (scaled || ops.len() != 5) {
        return Err(unsupported(format!("`{op}` with {} operands", ops.len())));
    }
    let dt = mem_addr(&r, &ops[0], l) as u32;
    let a_tmem = matches!(ops[1], Opnd::Mem { .. });
    let av = if a_tmem {
        mem_addr(&r, &ops[1], l)
    } else {
        val(&r, &ops[1], l, cta, ti)
    };
    let bv = val(&r, &ops[2], l, cta, ti);
    let id = Idesc::decode(kind, val(&r, &ops[3], l, cta, ti) as u32).map_err(unsupported)?;
    let accumulate = val(&r, ops.last().unwrap(), l, cta, ti) & 1 != 0;
    if !scaled && ops.len() == 6 {
        for o in regs_of_vec(&ops[4]) {
            if val(&r, &o, l, cta, ti) != 0 {
                return Err(unsupported("tcgen05.mma with disabled output lanes"));
            }
        }
    }
    let (m, n) = (id.m, id.n);
    // cta_group::2: the even CTA of a pair issues for both; each holds half
    // of A's rows and of B's columns at the same shared offsets, and its
    // half of D: rows 0..M/2 here, the rest in the peer (layout A, M 256:
    // row i in lane i; layout B, M 128: row i in lane i for columns
    // 0..N/2, lane 64 + i for the others, at column j % (N/2))
    let pair = op.contains("cta_group::2");
    let peer = cta.rank as usize + 1;
    if pair && (!cta.rank.is_multiple_of(2) || peer >= l.others.len() || !matches!(m, 128 | 256)) {
        return Err(unsupported(format!(
            "`{op}` from CTA rank {} of {} with M {m}",
            cta.rank,
            l.others.len()
        )));
    }
    if pair && (a_tmem || scaled) {
        return Err(unsupported(format!(
            "`{op}` with A in tensor memory or block scaling"
        )));
    }
    let (mh, nh) = if pair { (m / 2, n / 2) } else { (m, n) };
    if !pair && !matches!(m, 64 | 128) || n == 0 || n > 256 || n % 8 != 0 {
        return Err(unsupported(format!("tcgen05.mma shape M {m} N {n}")));
    }
    let es: u64 = match id.a {
        Ty::F16 | Ty::BF16 => 2,
        Ty::TF32 => 4,
        _ => 1,
    };
    let k = (32 / es) as usize;
    let conv = |ty: Ty, v: u64| -> f64 {
        match ty {
            Ty::S8 => sext(v, 8) as f64,
            Ty::U8 => v as f64,
            Ty::TF32 => f32::from_bits((v as u32) & 0xffff_e000) as f64,
            t => fget(t, v, false),
        }
    };
    let rd = |dev: &mut Device, cta: &Cta, addr: u64| -> R<u64> {
        let mut b = [0u8; 4];
        // the tensor core reads its operands through the async proxy
        with_race(cta, |rc| rc.async_reader = true);
        let read = read_bytes(
            dev,
            l,
            cta,
            Space::Shared,
            addr,
            &mut b[..es as usize],
            t,
            es as usize,
        );
        with_race(cta, |rc| rc.async_reader = false);
        read?;
        Ok(u32::from_le_bytes(b) as u64)
    };
    let (dlane, dcol) = (dt >> 16, dt & 0xffff);
    let lane_ok = |lane: u32| match m {
        64 => lane == 0 || lane == 16,
        _ => lane == 0,
    };
    if !lane_ok(dlane) {
        return Err(e(
            ErrorKind::OutOfBounds,
            Some(dt as u64),
            format!("tcgen05.mma M {m}: D at lane {dlane}"),
        ));
    }
    // The peer's shared memory is read by its tensor core, not by one of
    // its threads: no race bookkeeping there (the mbarriers order it).
    if pair {
        with_race(&l.others[peer], |rc| rc.skip = true);
    }
    let mut a = vec![0f64; m * k];
    if a_tmem {
        let at = av as u32;
        let (alane, acol) = (at >> 16, at & 0xffff);
        if alane != dlane {
            return Err(e(
                ErrorKind::OutOfBounds,
                Some(at as u64),
                "tcgen05.mma: A in tensor memory at another lane than D",
            ));
        }
        let per = 4 / es as usize;
        let tm = cta.tmem.as_mut().ok_or_else(|| {
            e(
                ErrorKind::OutOfBounds,
                None,
                "tcgen05.mma: no tensor memory allocated",
            )
        })?;
        for i in 0..m {
            for kk in 0..k {
                let w = *tm.cell(
                    row_lane(m, alane, i),
                    acol + (kk / per) as u32,
                    "tcgen05.mma reads A from",
                )?;
                let v = (w as u64 >> (8 * es as usize * (kk % per))) & mask(8 * es as u32);
                a[i * k + kk] = conv(id.a, v);
            }
        }
    } else {
        let da = smem_desc(av).map_err(unsupported)?;
        for i in 0..m {
            let src = if i < mh { &*cta } else { &l.others[peer] };
            let row = (i % mh) as u64;
            for kk in 0..k {
                a[i * k + kk] = conv(id.a, rd(dev, src, da.addr(row, kk as u64, es, id.a_mn))?);
            }
        }
    }
    let db = smem_desc(bv).map_err(unsupported)?;
    let mut b = vec![0f64; n * k];
    for j in 0..n {
        let src = if j < nh { &*cta } else { &l.others[peer] };
        let col = (j % nh) as u64;
        for kk in 0..k {
            b[j * k + kk] = conv(id.b, rd(dev, src, db.addr(col, kk as u64, es, id.b_mn))?);
        }
    }
    if pair {
        with_race(&l.others[peer], |rc| rc.skip = false);
    }
    if id.neg_a {
        a.iter_mut().for_each(|x| *x = -*x);
    }
    if id.neg_b {
        b.iter_mut().for_each(|x| *x = -*x);
    }
    let tm = cta.tmem.as_mut().ok_or_else(|| {
        e(
            ErrorKind::OutOfBounds,
            None,
            "tcgen05.mma: no tensor memory allocated",
        )
    })?;
    // block scaling: one scale per row of A (column of B) for the 32 K values
    let (mut sa, mut sb) = (vec![1f64; m], vec![1f64; n]);
    if let Some((e8m0, ida, idb)) = id.scale {
        if !e8m0 {
            return Err(unsupported("tcgen05.mma block scale type UE4M3"));
        }
        // scale_vec::1X with M = 128 (N <= 128): row m's scale in lane m,
        // column m / 32 from the address, the byte its scale factor id
        // names (`tcgen05.cp .32x128b.warpx4` puts that layout in place)
        if m != 128 || n > 128 {
            return Err(unsupported(format!("block-scaled tcgen05.mma M {m} N {n}")));
        }
        let scale = |tm: &mut Tmem, at: u32, row: usize, byte: u32, what: &str| -> R<f64> {
            let (lane, col) = ((at >> 16) & 0x3fff, at & 0xffff);
            let w = *tm.cell(lane + row as u32, col + row as u32 / 32, what)?;
            let x = (w >> (8 * byte)) & 0xff;
            Ok(if x == 0xff {
                f64::NAN
            } else {
                (2f64).powi(x as i32 - 127)
            })
        };
        let (fa, fb) = (
            mem_addr(&r, &ops[4], l) as u32,
            mem_addr(&r, &ops[5], l) as u32,
        );
        for (i, s) in sa.iter_mut().enumerate() {
            *s = scale(tm, fa, i, ida, "tcgen05.mma reads scale A from")?;
        }
        for (j, s) in sb.iter_mut().enumerate() {
            *s = scale(tm, fb, j, idb, "tcgen05.mma reads scale B from")?;
        }
    }
    // the cells of D in this CTA: lane -> columns
    let mut mine_cells: std::collections::BTreeMap<u32, std::ops::Range<u32>> = Default::default();
    for i in 0..m {
        let lane = row_lane(m, dlane, i);
        for j in 0..n {
            // where D[i][j] lives: this CTA or the peer, lane, column
            let (mine, lane, col) = match (pair, m) {
                (false, _) => (true, lane, dcol + j as u32),
                (true, 256) => (i < mh, (i % mh) as u32, dcol + j as u32),
                _ => (
                    i < mh,
                    (i % mh) as u32 + if j < nh { 0 } else { 64 },
                    dcol + (j % nh) as u32,
                ),
            };
            let mut acc = 0f64;
            let mut iacc: i64 = 0;
            for kk in 0..k {
                if id.d == Ty::S32 {
                    iacc += (a[i * k + kk] * b[j * k + kk]) as i64;
                } else {
                    acc += a[i * k + kk] * b[j * k + kk];
                }
            }
            if id.scale.is_some() {
                acc *= sa[i] * sb[j];
            }
            if mine {
                let r = mine_cells.entry(lane).or_insert(col..col + 1);
                *r = r.start.min(col)..r.end.max(col + 1);
            }
            let tm = match mine {
                true => &mut *tm,
                false => l.others[peer].tmem.as_deref_mut().ok_or_else(|| {
                    e(
                        ErrorKind::OutOfBounds,
                        None,
                        "tcgen05.mma: the peer CTA has no tensor memory allocated",
                    )
                })?,
            };
            let cell = tm.cell(lane, col, "tcgen05.mma writes D to")?;
            let old = *cell as u64;
            *cell = match id.d {
                Ty::S32 => {
                    let c = if accumulate { sext(old, 32) } else { 0 };
                    let s = c + iacc;
                    let s = if id.sat {
                        s.clamp(i32::MIN as i64, i32::MAX as i64)
                    } else {
                        s as i32 as i64
                    };
                    s as u32
                }
                Ty::F16 => {
                    let c = if accumulate {
                        fget(Ty::F16, old & 0xffff, false)
                    } else {
                        0.0
                    };
                    fput(Ty::F16, c + acc, 0.0, Rnd::Rn, false, false) as u32
                }
                _ => {
                    let c = if accumulate {
                        fget(Ty::F32, old, false)
                    } else {
                        0.0
                    };
                    fput(Ty::F32, c + acc, 0.0, Rnd::Rn, false, false) as u32
                }
            };
        }
    }
    if l.checks.tcgen05 {
        // A in tensor memory is read as D is: the same lanes
        let a_cells: Vec<(u32, std::ops::Range<u32>)> = match a_tmem {
            true => {
                let at = av as u32;
                let per = 4 / es as u32;
                let cols = (at & 0xffff)..(at & 0xffff) + (k as u32).div_ceil(per);
                mine_cells.keys().map(|&ln| (ln, cols.clone())).collect()
            }
            false => Vec::new(),
        };
        let read: Vec<(u32, std::ops::Range<u32>)> = mine_cells
            .iter()
            .filter(|_| accumulate)
            .map(|(&ln, c)| (ln, c.clone()))
            .chain(a_cells)
            .collect();
        strict::tc_pending(cta, &read, true)?;
        let written: Vec<(u32, std::ops::Range<u32>)> =
            mine_cells.iter().map(|(&ln, c)| (ln, c.clone())).collect();
        strict::tc_pending(cta, &written, false)?;
        let base = l.smem_bytes();
        for (&ln, cols) in mine_cells.iter().chain(read.iter().map(|(a, b)| (a, b))) {
            let o = base + (ln * COLS + cols.start) as usize;
            let mut res = Ok(());
            with_race(cta, |rc| res = rc.tc_check_mma(t, o, cols.len()));
            res.map_err(|c| race_err(l, t, "tcgen05.mma", c))?;
        }
        // written when a tcgen05.commit of this thread says so
        cta.strict.tc_mma[t].extend(mine_cells.into_iter().map(|(ln, c)| (ln..ln + 1, c)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_descriptor_fields() {
        // NVIDIA's sm_100 matmul_f16_tma: f16 x f16 -> f32, M 128, N 128, B MN-major
        let d = Idesc::decode(Kind::F16, 136380432).unwrap();
        assert_eq!(
            (d.m, d.n, d.d, d.a, d.b),
            (128, 128, Ty::F32, Ty::F16, Ty::F16)
        );
        assert!(!d.a_mn && d.b_mn && !d.neg_a && !d.neg_b && d.scale.is_none());
        // bf16, M 64, N 256, K-major both, negated A
        let v = (64 >> 4) << 24 | (256 >> 3) << 17 | 1 << 13 | 1 << 10 | 1 << 7 | 1 << 4;
        let d = Idesc::decode(Kind::F16, v).unwrap();
        assert_eq!((d.m, d.n, d.a, d.b), (64, 256, Ty::BF16, Ty::BF16));
        assert!(d.neg_a && !d.neg_b && !d.a_mn && !d.b_mn);
        // i8: signed A, unsigned B, s32 with saturation
        let v = (128 >> 4) << 24 | (64 >> 3) << 17 | 1 << 7 | 2 << 4 | 1 << 3;
        let d = Idesc::decode(Kind::I8, v).unwrap();
        assert_eq!((d.d, d.a, d.b, d.sat), (Ty::S32, Ty::S8, Ty::U8, true));
        // f16 accumulator, and an s32 accumulator refused for kind::f16
        assert_eq!(
            Idesc::decode(Kind::F16, 8 << 24 | 8 << 17).unwrap().d,
            Ty::F16
        );
        assert!(Idesc::decode(Kind::F16, 8 << 24 | 8 << 17 | 2 << 4).is_err());
        // block-scaled: E8M0 scales, A's scale byte 2, B's byte 1
        let v = 8 << 24 | 16 << 17 | 1 << 23 | 2 << 29 | 1 << 4 | 1 << 10;
        let d = Idesc::decode(Kind::Mxf8f6f4, v).unwrap();
        assert_eq!(
            (d.a, d.b, d.d, d.scale),
            (Ty::E4M3, Ty::E5M2, Ty::F32, Some((true, 2, 1)))
        );
        // sparse and f6 types are refused
        assert!(Idesc::decode(Kind::F16, 8 << 24 | 8 << 17 | 1 << 4 | 1 << 2).is_err());
        assert!(Idesc::decode(Kind::F8f6f4, 8 << 24 | 8 << 17 | 1 << 4 | 3 << 7).is_err());
    }

    #[test]
    fn shared_memory_descriptor_fields() {
        // NVIDIA's sm_100 matmul_f16_tma: 128B swizzle, LBO 16 / 8192, SBO 1024
        let d = smem_desc(0x4000_4040_0001_0000 | 0x123).unwrap();
        assert_eq!((d.start, d.lbo, d.sbo, d.swz), (0x1230, 16, 1024, 128));
        let d = smem_desc(0x4000_4040_0200_0000).unwrap();
        assert_eq!((d.lbo, d.swz), (8192, 128));
        let d = smem_desc(0x0000_4008_0001_0000).unwrap();
        assert_eq!((d.sbo, d.swz), (128, 0));
        assert_eq!(smem_desc(0x8000_4008_0001_0000).unwrap().swz, 64);
        assert_eq!(smem_desc(0xc000_4008_0001_0000).unwrap().swz, 32);
        assert_eq!(smem_desc(0x2000_4040_0001_0000).unwrap().swz, 1);
        // version 0 (the wgmma encoding), a base offset, mode 3
        assert!(smem_desc(0x4000_0040_0001_0000).is_err());
        assert!(smem_desc(0x4002_4040_0001_0000).is_err());
        assert!(smem_desc(0x6000_4040_0001_0000).is_err());
    }

    #[test]
    fn ld_st_fragments() {
        // 32x32b: lane l, column j
        assert_eq!(fragment("32x32b", 5, 3, 0), Some((5, 3)));
        // 16x256b: the m16n8 accumulator pattern, 8 columns a repeat
        assert_eq!(fragment("16x256b", 5, 0, 0), Some((1, 2)));
        assert_eq!(fragment("16x256b", 5, 3, 0), Some((9, 3)));
        assert_eq!(fragment("16x256b", 5, 4, 0), Some((1, 10)));
        // 16x128b: 4 columns a repeat
        assert_eq!(fragment("16x128b", 6, 1, 0), Some((9, 2)));
        assert_eq!(fragment("16x128b", 6, 2, 0), Some((1, 6)));
        // 16x32bx2: the upper half-warp at the immediate offset
        assert_eq!(fragment("16x32bx2", 3, 7, 32), Some((3, 7)));
        assert_eq!(fragment("16x32bx2", 19, 7, 32), Some((3, 39)));
        assert_eq!(fragment("16x64b", 0, 0, 0), None);
    }

    #[test]
    fn layout_f_rows() {
        assert_eq!(row_lane(128, 0, 77), 77);
        assert_eq!(row_lane(64, 0, 17), 33);
        assert_eq!(row_lane(64, 16, 63), 16 + 96 + 15);
    }
}
