//! Asynchronous copies: `cp.async` (landing at its wait), bulk tensor
//! copies (TMA loads, multicast, stores in flight until their bulk wait)
//! and the proxy fences ordering them.

use super::*;

/// One `cp.async` in flight.
pub(super) struct CpCopy {
    /// The shared-memory destination address.
    pub(super) dst: u64,
    /// The bytes it writes (the source's, zero-filled past its size).
    pub(super) data: [u8; 16],
    /// Bytes written.
    pub(super) size: usize,
}

/// Lands thread `t`'s `cp.async` copies: every committed group but the
/// newest `keep`, and with `open` those not yet committed too.
pub(super) fn cp_land(
    dev: &mut Device,
    l: &Launch,
    cta: &mut Cta,
    t: usize,
    keep: usize,
    open: bool,
) -> R<()> {
    for c in cta.cp[t].retire(keep, open) {
        write_bytes(
            dev,
            l,
            cta,
            Space::Shared,
            c.dst,
            &c.data[..c.size],
            t,
            c.size,
        )?;
    }
    Ok(())
}

/// f32 bits `x` rounded to tf32 as a map of tf32 elements has the copy
/// round them: to nearest, ties to even (the low 13 mantissa bits
/// cleared), as `cvt.rn.tf32.f32` rounds; infinities and NaNs pass as
/// they are. NVIDIA does not document the copy's rounding mode: this is
/// the emulator's assumption, for a GPU to confirm.
pub(crate) fn round_tf32(x: u32) -> u32 {
    if x & 0x7f80_0000 == 0x7f80_0000 {
        return x;
    }
    let lsb = (x >> 13) & 1;
    x.wrapping_add(0xfff + lsb) & 0xffff_e000
}

/// Executes a TMA `cp.async.bulk.tensor` (completes immediately).
#[allow(clippy::needless_range_loop, clippy::manual_checked_ops)]
pub(super) fn tma(dev: &mut Device, l: &mut Launch, cta: &mut Cta, ti: Ti, inst: &Inst) -> R<()> {
    let t = ti.t;
    let ops = &inst.ops;
    let r = cta.regs[t * cta.nregs..(t + 1) * cta.nregs].to_vec();
    let to_global = inst.sub2 & 1 == 1;
    let (smem_op, gl_op) = if to_global {
        (&ops[1], &ops[0])
    } else {
        (&ops[0], &ops[1])
    };
    let saddr = mem_addr(&r, smem_op, l);
    let (tmap_addr, coords) = match gl_op {
        Opnd::Mem { extra: Some(v), .. } => {
            let a = mem_addr(&r, gl_op, l);
            let cs: Vec<i64> = match &**v {
                Opnd::Vec(xs) => xs
                    .iter()
                    .map(|x| sext(val(&r, x, l, cta, ti), 32))
                    .collect(),
                x => vec![sext(val(&r, x, l, cta, ti), 32)],
            };
            (a, cs)
        }
        _ => {
            return Err(e(
                ErrorKind::Unsupported,
                None,
                "bad cp.async.bulk.tensor operand",
            ))
        }
    };
    let mut tb = vec![0u8; 128];
    read_bytes(dev, l, cta, Space::Generic, tmap_addr, &mut tb, t, 64)
        .or_else(|_| read_bytes(dev, l, cta, Space::Param, tmap_addr, &mut tb, t, 64))?;
    // the emulator's own encoding, else the hardware's (as NVIDIA's host
    // callbacks write it)
    // (a hardware map of f32 elements may ask the copy to round them to
    // tf32)
    let (tm, tf32) = match TensorMap::decode(&tb) {
        Some(tm) => (tm, false),
        None => {
            let hw = crate::HwTensorMap::decode(&tb).map_err(|why| {
                e(
                    ErrorKind::BadLaunch,
                    Some(tmap_addr),
                    format!(
                        "tensor map parameter holds neither the emulator's encoding \
                         (ptx_emu::TensorMap) nor a hardware tensor map: {why}"
                    ),
                )
            })?;
            (hw.to_tensor_map(), hw.tf32)
        }
    };
    if tm.dims.len() != coords.len() {
        return Err(e(
            ErrorKind::BadLaunch,
            Some(tmap_addr),
            format!(
                "tensor map has rank {}, instruction uses {}",
                tm.dims.len(),
                coords.len()
            ),
        ));
    }
    if let Some(msg) = tm.check() {
        return Err(e(
            ErrorKind::BadLaunch,
            Some(tmap_addr),
            format!("invalid tensor map: {msg}"),
        ));
    }
    let es = tm.elem_size as usize;
    let rank = tm.dims.len();
    let total: usize = tm.box_dims.iter().map(|&b| b as usize).product();
    let row_bytes = tm.box_dims[0] as usize * es;
    let swz = match tm.swizzle {
        1 => 32,
        2 => 64,
        3 | 4 => 128,
        _ => 0,
    };
    let mut buf = vec![0u8; es];
    let (own_rank, sbase) = cl_split(saddr, cta.rank);
    if own_rank != cta.rank {
        return Err(e(
            ErrorKind::Unsupported,
            Some(saddr),
            "TMA into another CTA's shared memory without multicast",
        ));
    }
    let mut img = vec![0u8; total * es];
    for lin in 0..total {
        let mut idx = [0i64; 5];
        let mut rem = lin;
        for d in 0..rank {
            idx[d] = (rem % tm.box_dims[d] as usize) as i64;
            rem /= tm.box_dims[d] as usize;
        }
        let mut inb = true;
        let mut goff = 0u64;
        for d in 0..rank {
            let g = coords[d] + idx[d];
            if g < 0 || g >= tm.dims[d] as i64 {
                inb = false;
            }
            goff = goff.wrapping_add((g as u64).wrapping_mul(if d == 0 {
                es as u64
            } else {
                tm.strides[d]
            }));
        }
        let mut soff = lin * es;
        if swz != 0 {
            // CU_TENSOR_MAP_SWIZZLE_{32,64,128}B: address bits [4..] ^= bits [7..]
            let _ = row_bytes;
            if tm.swizzle == 4 {
                // 128B with 32-byte atoms: bits [5, 7) ^= bits [7, 9)
                soff ^= ((soff >> 7) & 3) << 5;
            } else {
                let m = swz / 16 - 1;
                soff ^= ((soff >> 7) & m) << 4;
            }
        }
        if to_global {
            if inb {
                with_race(cta, |rc| rc.async_reader = true);
                let read = read_bytes(
                    dev,
                    l,
                    cta,
                    Space::Shared,
                    sbase + soff as u64,
                    &mut buf,
                    t,
                    es,
                );
                with_race(cta, |rc| rc.async_reader = false);
                read?;
                write_bytes(dev, l, cta, Space::Global, tm.base + goff, &buf, t, es)?;
            }
        } else if inb {
            read_bytes(
                dev,
                l,
                cta,
                Space::Global,
                tm.base + goff,
                &mut img[soff..soff + es],
                t,
                es,
            )?;
            if tf32 && es == 4 {
                let w = &mut img[soff..soff + 4];
                let x = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                w.copy_from_slice(&round_tf32(x).to_le_bytes());
            }
        }
    }
    if to_global {
        // read until a cp.async.bulk.wait_group.read retires its group
        let o = sbase as usize;
        cta.strict.bulk[t].open.push((o, o + total * es));
    } else {
        let (mrank, mb_off) = mbar_target(&r, &ops[2], l, inst, cta.rank)?;
        // .cta_group::2: the data lands here, the bytes complete on the
        // pair's mbarrier (in either CTA of the pair)
        let pair = inst.opcode.contains(".cta_group::2") && inst.sub2 & 2 == 0;
        // The hardware's shared addresses carry the CTA's rank from bit 24,
        // and code clears the pair bit (24) to name the even CTA's
        // mbarrier; the emulator's CTA-local addresses carry no rank, so a
        // rank-less one is read that way: the even CTA of the pair.
        let mrank = if pair && mem_addr(&r, &ops[2], l) & CL_FLAG == 0 {
            cta.rank & !1
        } else {
            mrank
        };
        if pair && mrank == cta.rank ^ 1 {
            land_box(cta, sbase, &img)?;
            with_race(cta, |rc| rc.forget(sbase as usize, img.len()));
            let check = l.checks.mbarrier;
            return complete_tx(
                &mut l.others[mrank as usize].mbar,
                mb_off,
                total * es,
                check,
            );
        }
        if mrank != cta.rank {
            return Err(e(
                ErrorKind::Unsupported,
                Some(mb_off as u64),
                "TMA completing on another CTA's mbarrier",
            ));
        }
        if l.checks.proxy {
            // PTX ISA "mbarrier.init" / "membar/fence": the async proxy
            // completes the copy on the mbarrier, whose initialisation must
            // be made visible to it (fence.mbarrier_init or
            // fence.proxy.async) and ordered before the issue
            let mut res = Ok(());
            let pc = cta.pc[t];
            with_race(cta, |rc| res = rc.async_read(t, pc, mb_off as usize, 8));
            res.map_err(|c| race_err(l, t, "use of the mbarrier", c))?;
        }
        let dests: Vec<u32> = if inst.sub2 & 2 != 0 {
            let mask = val(&r, &ops[3], l, cta, ti) as u32;
            (0..l.others.len() as u32)
                .filter(|i| mask >> i & 1 == 1)
                .collect()
        } else {
            vec![cta.rank]
        };
        let me = cta.rank;
        let target_pc = cta.pc[t];
        let check_mbar = l.checks.mbarrier;
        for d in dests {
            let target: &mut Cta = if d == cta.rank {
                &mut *cta
            } else {
                &mut l.others[d as usize]
            };
            land_box(target, sbase, &img)?;
            let own = d == me;
            let pc = target_pc;
            // the issuing thread's accesses before the copy are ordered
            // before it; the bytes are the mbarrier's agent's
            let mut r = Ok(());
            with_race(target, |rc| {
                let len = img.len();
                r = rc.async_write(own.then_some(t), pc, sbase as usize, len, mb_off);
            });
            complete_tx(&mut target.mbar, mb_off, total * es, check_mbar)?;
            if let Err(c) = r {
                return Err(race_err(l, t, "write", c));
            }
        }
    }
    Ok(())
}

/// Lands a TMA box `img` in `target`'s shared memory at `sbase`; its
/// offset.
pub(super) fn land_box(target: &mut Cta, sbase: u64, img: &[u8]) -> R<usize> {
    let o = sbase as usize;
    if o + img.len() > target.shared.len() {
        return Err(e(
            ErrorKind::OutOfBounds,
            Some(sbase),
            "TMA box outside shared memory",
        ));
    }
    wgmma_reading(target, o, img.len())?;
    target.shared[o..o + img.len()].copy_from_slice(img);
    target.sinit[o..o + img.len()]
        .iter_mut()
        .for_each(|b| *b = true);
    Ok(o)
}

/// Completes `bytes` of a TMA copy on the mbarrier at `mb_off` of `mbars`.
pub(super) fn complete_tx(
    mbars: &mut HashMap<u32, Mbar>,
    mb_off: u32,
    bytes: usize,
    check: bool,
) -> R<()> {
    let mb = mbars.get_mut(&mb_off).ok_or_else(|| {
        e(
            ErrorKind::UninitShared,
            Some(mb_off as u64),
            "TMA completes on an uninitialised mbarrier",
        )
    })?;
    mb.tx -= bytes as i64;
    mbar_check(mb);
    match check {
        true => strict::mbar_overdelivered(mb, mb_off),
        false => Ok(()),
    }
}

/// `cp.async`, bulk tensor copies (TMA), their groups and waits, and the
/// proxy fences that order them, one thread's part.
pub(super) fn step(
    dev: &mut Device,
    l: &mut Launch,
    cta: &mut Cta,
    ti: Ti,
    inst: &Inst,
) -> R<Flow> {
    let t = ti.t;
    let ops = &inst.ops;
    match inst.op {
        OpK::CpBulkCommit => cta.strict.bulk[t].commit(),
        OpK::CpBulkWait => {
            // all but the newest N bulk groups have read their sources
            let keep = operand(l, cta, ti, inst, 0) as usize;
            let pc = cta.pc[t];
            for (s, end) in cta.strict.bulk[t].retire(keep, false) {
                with_race(cta, |rc| rc.record_read(t, pc, s, end - s));
            }
        }
        OpK::FenceProxyAsync => {
            // PTX ISA "membar/fence": fence.proxy.async orders the thread's
            // generic-proxy accesses with the async proxy's (the global
            // state space's form leaves shared memory out);
            // fence.mbarrier_init.release.cluster does so for mbarrier.init
            use crate::decode::fenceop;
            match inst.sub {
                fenceop::GLOBAL => {}
                fenceop::MBARRIER_INIT => with_race(cta, |rc| rc.fence_mbarrier_init(t)),
                _ => with_race(cta, |rc| rc.fence_proxy_async(t)),
            }
        }
        OpK::CpAsync => {
            // cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size}: completes at issue
            let dst = mem_addr(thread_regs(cta, t), &ops[0], l);
            let src = mem_addr(thread_regs(cta, t), &ops[1], l);
            let size = operand(l, cta, ti, inst, 2) as usize;
            let src_size = if ops.len() > 3 && !inst.opcode.contains("cache_hint") {
                (operand(l, cta, ti, inst, 3) as usize).min(size)
            } else {
                size
            };
            if !matches!(size, 4 | 8 | 16) {
                return Err(e(
                    ErrorKind::Unsupported,
                    None,
                    format!("cp.async size {size}"),
                ));
            }
            let mut data = [0u8; 16];
            if src_size > 0 {
                read_bytes(
                    dev,
                    l,
                    cta,
                    Space::Global,
                    src,
                    &mut data[..src_size],
                    t,
                    size,
                )?;
            }
            // lands when a wait completes it
            cta.cp[t].open.push(CpCopy { dst, data, size });
        }
        OpK::CpAsyncCommit => cta.cp[t].commit(),
        OpK::CpAsyncWait => {
            // all but the newest N committed groups land
            let keep = operand(l, cta, ti, inst, 0) as usize;
            cp_land(dev, l, cta, t, keep, false)?;
        }
        OpK::CpAsyncWaitAll => cp_land(dev, l, cta, t, 0, true)?,
        OpK::CpBulkTensor => {
            tma(dev, l, cta, ti, inst)?;
        }
        _ => unreachable!("{:?} is not this family's", inst.op),
    }
    Ok(Flow::Next)
}

#[cfg(test)]
mod tests {
    use super::round_tf32;

    #[test]
    fn tf32_rounding_is_to_nearest_even() {
        let r = |x: f32| f32::from_bits(round_tf32(x.to_bits()));
        let ulp = 2f32.powi(-10);
        assert_eq!(r(1.0), 1.0);
        // ties go to the even neighbour
        assert_eq!(r(1.0 + ulp / 2.0), 1.0);
        assert_eq!(r(1.0 + 3.0 * ulp / 2.0), 1.0 + 2.0 * ulp);
        // above the tie, up; below, down
        assert_eq!(r(1.0 + ulp / 2.0 + 2f32.powi(-23)), 1.0 + ulp);
        assert_eq!(r(-(1.0 + ulp / 2.0 - 2f32.powi(-23))), -1.0);
        // the largest finite f32 rounds to infinity; specials pass
        assert_eq!(r(f32::MAX), f32::INFINITY);
        assert_eq!(r(f32::NEG_INFINITY), f32::NEG_INFINITY);
        assert!(r(f32::NAN).is_nan());
    }
}
