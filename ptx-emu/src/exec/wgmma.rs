//! `wgmma`: warpgroup matrix products from shared-memory descriptors or
//! register A fragments, in flight until their `wait_group`.

use super::*;

/// One `wgmma` in flight, as one thread of its warpgroup sees it.
pub(super) struct WgOp {
    /// Ids of the shared ranges it reads (`Cta::wg_reads`).
    pub(super) reads: Vec<u64>,
    /// The accumulator registers it writes.
    pub(super) regs: Vec<u32>,
}

/// The accumulator register of a `wgmma` among `ops` that an operand (or
/// the guard) of `inst` names, if one does.
pub(super) fn touches(ops: &InFlight<WgOp>, inst: &Inst) -> Option<u32> {
    // on every instruction: nothing to look for most of the time
    ops.iter().next()?;
    names_reg(inst, &|r: u32| ops.iter().any(|w| w.regs.contains(&r)))
}

/// NVIDIA's code copies a `wgmma`'s accumulator registers with `mov`
/// right after its `wgmma.commit_group`, before the wait that retires it
/// (the loop-carried values, which ptxas folds into the same registers):
/// such a copy is no access. Its destination is held in flight with the
/// multiply instead, so a use of it before the retiring wait is still
/// reported. True where `inst` is such a copy (the held registers then
/// updated); a copy into a held register, or a guarded one, is not.
pub(super) fn copy_in_flight(ops: &mut InFlight<WgOp>, inst: &Inst) -> bool {
    if inst.op != OpK::Mov || inst.guard.is_some() {
        return false;
    }
    let (Some(Opnd::Reg(d)), Some(Opnd::Reg(s)), None) =
        (inst.ops.first(), inst.ops.get(1), inst.ops.get(2))
    else {
        return false;
    };
    if ops.iter().any(|w| w.regs.contains(d)) {
        return false;
    }
    let mut copied = false;
    for w in ops.groups.iter_mut().flatten().chain(ops.open.iter_mut()) {
        if w.regs.contains(s) {
            w.regs.push(*d);
            copied = true;
        }
    }
    copied
}

/// A register `held` accepts that an operand (or the guard) of `inst`
/// names, if one does.
fn names_reg(inst: &Inst, held: &dyn Fn(u32) -> bool) -> Option<u32> {
    fn find(o: &Opnd, held: &dyn Fn(u32) -> bool) -> Option<u32> {
        match o {
            Opnd::Reg(r) | Opnd::NotReg(r) => held(*r).then_some(*r),
            Opnd::Pair(a, p) => [*a, *p].into_iter().find(|&r| r != u32::MAX && held(r)),
            Opnd::Vec(v) => v.iter().find_map(|x| find(x, held)),
            Opnd::Mem { base, extra, .. } => base
                .filter(|&b| held(b))
                .or_else(|| extra.as_deref().and_then(|x| find(x, held))),
            _ => None,
        }
    }
    let guard = inst.guard.and_then(|(p, _)| held(p).then_some(p));
    guard.or_else(|| inst.ops.iter().find_map(|o| find(o, held)))
}

/// A write of `size` shared bytes at `o` while a `wgmma` in flight (not
/// yet retired by a `wgmma.wait_group`) reads them: the multiply may read
/// either value, so it is reported as a race.
pub(super) fn wgmma_reading(cta: &Cta, o: usize, size: usize) -> R<()> {
    match cta
        .wg_reads
        .iter()
        .find(|&&(_, s, e)| o < e && s < o + size)
    {
        Some(&(_, s, e)) => Err(e_race(
            o,
            format!(
                "shared write of {size} bytes at {o:#x} while a wgmma in flight reads \
                 {s:#x}..{e:#x} (no wgmma.wait_group retired it)"
            ),
        )),
        None => Ok(()),
    }
}

/// Decoded wgmma shared-memory matrix descriptor.
pub(super) struct Desc {
    pub(super) start: u64,
    pub(super) lbo: u64,
    pub(super) sbo: u64,
    /// Swizzle width in bytes (0 = none).
    pub(super) swz: u64,
}

pub(super) fn desc(d: u64) -> R<Desc> {
    if (d >> 49) & 7 != 0 {
        return Err(e(
            ErrorKind::Unsupported,
            None,
            "wgmma descriptor base offset is not supported",
        ));
    }
    Ok(Desc {
        start: (d & 0x3fff) << 4,
        lbo: ((d >> 16) & 0x3fff) << 4,
        sbo: ((d >> 32) & 0x3fff) << 4,
        swz: match (d >> 62) & 3 {
            1 => 128,
            2 => 64,
            3 => 32,
            _ => 0,
        },
    })
}

impl Desc {
    /// Shared address of element (mn, k) of an operand (A: mn = row m; B: mn = column n).
    pub(super) fn addr(&self, mn: u64, k: u64, es: u64, mn_major: bool) -> u64 {
        let t = 16 / es;
        // swz 1: tcgen05's 128-byte swizzle with 32-byte atoms
        let (w, atoms32) = match self.swz {
            1 => (128, true),
            w => (w, false),
        };
        let a = if w == 0 {
            if mn_major {
                self.start + (mn % t) * es + (mn / t) * self.lbo + (k % 8) * 16 + (k / 8) * self.sbo
            } else {
                self.start + (mn % 8) * 16 + (mn / 8) * self.sbo + (k % t) * es + (k / t) * self.lbo
            }
        } else {
            if mn_major {
                let per = w / es;
                self.start
                    + (mn % per) * es
                    + (mn / per) * self.lbo
                    + (k % 8) * w
                    + (k / 8) * self.sbo
            } else {
                self.start + (mn % 8) * w + (mn / 8) * self.sbo + k * es
            }
        };
        if atoms32 {
            return a ^ (((a >> 7) & 3) << 5);
        }
        let m = match w {
            128 => 7,
            64 => 3,
            32 => 1,
            _ => 0,
        };
        a ^ (((a >> 7) & m) << 4)
    }
}

/// `wgmma.mma_async` with both operands in shared memory (descriptors),
/// executed synchronously once the whole warpgroup has arrived.  Products are
/// exact; each output is rounded once.
pub(super) fn wgmma(
    dev: &mut Device,
    l: &Launch,
    cta: &mut Cta,
    inst: &Inst,
    group: &[usize],
    tid_of: &dyn Fn(usize) -> (u32, u32, u32),
) -> R<()> {
    let op = &*inst.opcode;
    let (parts, shape, tys) = mma_parts(op);
    let sat = parts.contains(&"satfinite");
    let parse_dim = |c: char| -> Option<usize> {
        let i = shape.find(c)?;
        shape[i + 1..]
            .chars()
            .take_while(|x| x.is_ascii_digit())
            .collect::<String>()
            .parse()
            .ok()
    };
    let (m, n, k) = match (parse_dim('m'), parse_dim('n'), parse_dim('k')) {
        (Some(64), Some(n), Some(k)) => (64, n, k),
        _ => {
            return Err(e(
                ErrorKind::Unsupported,
                None,
                format!("wgmma shape `{shape}` is not supported"),
            ))
        }
    };
    if tys.len() != 3 || group.len() != 128 {
        return Err(e(
            ErrorKind::Unsupported,
            None,
            format!("`{op}` is not supported"),
        ));
    }
    let (dt, at, bt) = (tys[0], tys[1], tys[2]);
    let es: u64 = match at {
        Ty::F16 | Ty::BF16 => 2,
        Ty::TF32 => 4,
        Ty::E4M3 | Ty::E5M2 | Ty::S8 | Ty::U8 => 1,
        _ => {
            return Err(e(
                ErrorKind::Unsupported,
                None,
                format!("wgmma input type {at:?} is not supported"),
            ))
        }
    };
    let nr = cta.nregs;
    let g0 = group[0];
    let r0 = cta.regs[g0 * nr..(g0 + 1) * nr].to_vec();
    let ti0 = Ti {
        t: g0,
        tid: tid_of(g0),
    };
    let ops = &inst.ops;
    // A in registers: `d, {a...}, b-desc, scale-d, imm-scale-a,
    // imm-scale-b, imm-trans-b` (16-bit types only).
    let a_regs = match &ops[1] {
        Opnd::Vec(v) if es == 2 && v.len() == 4 => Some(v.clone()),
        Opnd::Vec(_) => {
            return Err(e(
                ErrorKind::Unsupported,
                None,
                format!("`{op}` with A in registers is not supported"),
            ))
        }
        _ => None,
    };
    let dva = match a_regs {
        Some(_) => 0,
        None => val(&r0, &ops[1], l, cta, ti0),
    };
    let dvb = val(&r0, &ops[2], l, cta, ti0);
    for &g in group {
        let rg = &cta.regs[g * nr..(g + 1) * nr];
        let tg = Ti {
            t: g,
            tid: tid_of(g),
        };
        let a_differs = a_regs.is_none() && val(rg, &ops[1], l, cta, tg) != dva;
        if a_differs || val(rg, &ops[2], l, cta, tg) != dvb {
            return Err(e(
                ErrorKind::Unsupported,
                None,
                "wgmma descriptors differ across the warpgroup",
            ));
        }
    }
    let (da, db) = (desc(dva)?, desc(dvb)?);
    if std::env::var("PTX_EMU_TRACE_WGMMA").is_ok() {
        eprintln!(
            "{op}: A start {:#x} lbo {} sbo {} swz {}; B start {:#x} lbo {} sbo {} swz {}; ops {}",
            da.start,
            da.lbo,
            da.sbo,
            da.swz,
            db.start,
            db.lbo,
            db.sbo,
            db.swz,
            ops.len()
        );
    }
    let scale_d = val(&r0, &ops[3], l, cta, ti0) != 0;
    let imm = |i: usize| -> i64 {
        ops.get(i)
            .map(|o| sext(val(&r0, o, l, cta, ti0), 32))
            .unwrap_or(0)
    };
    let (neg_a, neg_b) = if ops.len() > 5 {
        (imm(4) == -1, imm(5) == -1)
    } else {
        (false, false)
    };
    let (tr_a, tr_b) = match (a_regs.is_some(), ops.len()) {
        (true, 7..) => (false, imm(6) == 1),
        (false, 8..) => (imm(6) == 1, imm(7) == 1),
        _ => (false, false),
    };
    let conv = |ty: Ty, v: u64| -> f64 {
        match ty {
            Ty::S8 => sext(v, 8) as f64,
            Ty::U8 => v as f64,
            Ty::TF32 => f32::from_bits((v as u32) & 0xffff_e000) as f64,
            t => fget(t, v, false),
        }
    };
    // the shared addresses A and B are read from
    let mut read_at: Vec<usize> = Vec::new();
    let mut rd = |addr: u64| -> R<u64> {
        read_at.push(addr as usize);
        let mut b = [0u8; 4];
        // the multiply reads its operands through the async proxy
        with_race(cta, |rc| rc.async_reader = true);
        let read = read_bytes(
            dev,
            l,
            cta,
            Space::Shared,
            addr,
            &mut b[..es as usize],
            g0,
            es as usize,
        );
        with_race(cta, |rc| rc.async_reader = false);
        read?;
        Ok(u32::from_le_bytes(b) as u64)
    };
    let mut a = vec![0f64; m * k];
    if let Some(regs) = &a_regs {
        // The m16n8k16 A fragment per warp: register `i` of lane (g, t)
        // holds row 16 w + g + 8 (i % 2), columns 8 (i / 2) + 2 t + {0, 1}.
        for (wi, &g) in group.iter().enumerate() {
            let (w, lane) = (wi / 32, wi % 32);
            let (gr, t) = (lane / 4, lane % 4);
            for (i, reg) in regs.iter().enumerate() {
                let tg = Ti {
                    t: g,
                    tid: tid_of(g),
                };
                let word = val(&cta.regs[g * nr..(g + 1) * nr], reg, l, cta, tg);
                let row = 16 * w + gr + 8 * (i % 2);
                for h in 0..2 {
                    let col = 8 * (i / 2) + 2 * t + h;
                    let v = conv(at, (word >> (16 * h)) & 0xffff);
                    a[row * k + col] = if neg_a { -v } else { v };
                }
            }
        }
    } else {
        for i in 0..m {
            for kk in 0..k {
                let v = conv(at, rd(da.addr(i as u64, kk as u64, es, tr_a))?);
                a[i * k + kk] = if neg_a { -v } else { v };
            }
        }
    }
    let mut b = vec![0f64; k * n];
    for kk in 0..k {
        for j in 0..n {
            let v = conv(bt, rd(db.addr(j as u64, kk as u64, es, tr_b))?);
            b[kk * n + j] = if neg_b { -v } else { v };
        }
    }
    // in flight until a wait of the warpgroup retires it, as the runs of
    // contiguous bytes read
    read_at.sort_unstable();
    read_at.dedup();
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for a in read_at {
        match runs.last_mut() {
            Some(r) if r.1 >= a => r.1 = r.1.max(a + es as usize),
            _ => runs.push((a, a + es as usize)),
        }
    }
    let mut reads = Vec::new();
    for (start, end) in runs {
        let id = cta.wg_next;
        cta.wg_next += 1;
        cta.wg_reads.push((id, start, end));
        reads.push(id);
    }
    // the accumulator and A-fragment registers, untouchable until the
    // wait that retires it
    let regs = strict::wgmma_regs(inst);
    for &g in group {
        cta.wg[g].open.push(WgOp {
            reads: reads.clone(),
            regs: regs.clone(),
        });
    }
    let dregs = regs_of_vec(&ops[0]);
    let f16acc = dt == Ty::F16;
    let per = if f16acc { 2 } else { 4 };
    if dregs.len() != m * n / 128 / if f16acc { 2 } else { 1 } {
        return Err(e(
            ErrorKind::Unsupported,
            None,
            "wgmma accumulator register count does not match the shape",
        ));
    }
    for (wi, &g) in group.iter().enumerate() {
        let w = wi / 32;
        let lane = wi % 32;
        let (gr, t) = (lane / 4, lane % 4);
        for (ri, reg) in dregs.iter().enumerate() {
            let j8 = ri / per;
            let within = ri % per;
            let coords: [(usize, usize); 2] = if f16acc {
                let row = 16 * w + gr + 8 * within;
                [(row, 8 * j8 + 2 * t), (row, 8 * j8 + 2 * t + 1)]
            } else {
                let c = (16 * w + gr + 8 * (within / 2), 8 * j8 + 2 * t + within % 2);
                [c, c]
            };
            let old = match reg {
                Opnd::Reg(x) => cta.regs[g * nr + *x as usize],
                _ => 0,
            };
            let mut out = 0u64;
            for (ci, &(i, j)) in coords.iter().enumerate().take(if f16acc { 2 } else { 1 }) {
                let mut acc = 0f64;
                let mut iacc: i64 = 0;
                for kk in 0..k {
                    if dt == Ty::S32 {
                        iacc += (a[i * k + kk] * b[kk * n + j]) as i64;
                    } else {
                        acc += a[i * k + kk] * b[kk * n + j];
                    }
                }
                let bits = match dt {
                    Ty::S32 => {
                        let c = if scale_d { sext(old, 32) } else { 0 };
                        let s = c + iacc;
                        let s = if sat {
                            s.clamp(i32::MIN as i64, i32::MAX as i64)
                        } else {
                            s as i32 as i64
                        };
                        (s as u64) & 0xffff_ffff
                    }
                    Ty::F16 => {
                        let c = if scale_d {
                            fget(Ty::F16, (old >> (16 * ci)) & 0xffff, false)
                        } else {
                            0.0
                        };
                        fput(Ty::F16, c + acc, 0.0, Rnd::Rn, false, false)
                    }
                    _ => {
                        let c = if scale_d {
                            fget(Ty::F32, old, false)
                        } else {
                            0.0
                        };
                        fput(Ty::F32, c + acc, 0.0, Rnd::Rn, false, false)
                    }
                };
                out |= bits << (16 * ci);
            }
            wr(cta, g, reg, out)?;
        }
    }
    Ok(())
}

/// `wgmma.fence`, `wgmma.commit_group` and `wgmma.wait_group`, one thread's part.
pub(super) fn step(l: &Launch, cta: &mut Cta, ti: Ti, inst: &Inst) -> R<Flow> {
    let t = ti.t;
    match inst.op {
        OpK::WgmmaFence => cta.strict.wgmma_fence(t),
        OpK::WgmmaCommit => cta.wg[t].commit(),
        OpK::WgmmaWait => {
            // all but the newest N groups complete: their operands are
            // read, their accumulators written
            let keep = operand(l, cta, ti, inst, 0) as usize;
            let done = cta.wg[t].retire(keep, false);
            for w in done {
                cta.wg_reads.retain(|(id, _, _)| !w.reads.contains(id));
            }
        }
        _ => unreachable!("{:?} is not this family's", inst.op),
    }
    Ok(Flow::Next)
}
