//! mbarriers: initialisation, arrivals, transaction counts, waits, and
//! cluster (remote) mbarriers.

use super::*;

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Mbar {
    pub(super) expected: u32,
    pub(super) pending: u32,
    pub(super) tx: i64,
    pub(super) phase: u32,
}

pub(super) fn mbar_check(mb: &mut Mbar) {
    if mb.pending == 0 && mb.tx == 0 {
        mb.phase = mb.phase.wrapping_add(1);
        mb.pending = mb.expected;
    }
}

/// Flag marking a shared::cluster address produced by `mapa` (bits 24..31 hold the rank).
pub(super) const CL_FLAG: u64 = 0x8000_0000;

/// Splits a shared::cluster address into (target rank, CTA-local offset).
pub(super) fn cl_split(a: u64, own: u32) -> (u32, u64) {
    if a & CL_FLAG != 0 && a < (1 << 32) {
        (((a >> 24) & 0x7f) as u32, a & 0xff_ffff)
    } else {
        (own, a)
    }
}

/// The initialised mbarrier at shared offset `a` of CTA `rank` of `cta`'s
/// cluster (`cta` itself when `rank` is its own).
pub(super) fn cluster_mbar<'c>(
    l: &'c mut Launch,
    cta: &'c mut Cta,
    rank: u32,
    a: u32,
) -> R<&'c mut Mbar> {
    let mbars = if rank == cta.rank {
        &mut cta.mbar
    } else {
        &mut l
            .others
            .get_mut(rank as usize)
            .ok_or_else(|| {
                e(
                    ErrorKind::OutOfBounds,
                    Some(a as u64),
                    "mbarrier rank outside the cluster",
                )
            })?
            .mbar
    };
    mbars.get_mut(&a).ok_or_else(|| {
        e(
            ErrorKind::UninitShared,
            Some(a as u64),
            "mbarrier used before mbarrier.init",
        )
    })
}

/// Mbarrier operand: (target CTA rank, shared offset).
pub(super) fn mbar_target(r: &[u64], o: &Opnd, l: &Launch, inst: &Inst, own: u32) -> R<(u32, u32)> {
    let a = mem_addr(r, o, l);
    let a = if inst.space == Space::Generic && (SHARED_WIN..SHARED_WIN + WIN_SIZE).contains(&a) {
        a - SHARED_WIN
    } else {
        a
    };
    let (rank, a) = cl_split(a, own);
    if a % 8 != 0 {
        return Err(e(
            ErrorKind::Misaligned,
            Some(a),
            "mbarrier address not 8-byte aligned",
        ));
    }
    Ok((rank, a as u32))
}

/// Mbarrier operand that must live in the executing CTA.
pub(super) fn mbar_addr(r: &[u64], o: &Opnd, l: &Launch, inst: &Inst, own: u32) -> R<u32> {
    let (rank, a) = mbar_target(r, o, l, inst, own)?;
    if rank != own {
        return Err(e(
            ErrorKind::Unsupported,
            Some(a as u64),
            "this mbarrier operation on another CTA's shared memory is not supported",
        ));
    }
    Ok(a)
}

/// The mbarrier instructions (and `cp.async.mbarrier.arrive`), one thread's part.
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
        OpK::MbarInit => {
            let a = mbar_addr(thread_regs(cta, t), &ops[0], l, inst, cta.rank)?;
            let count = operand(l, cta, ti, inst, 1) as u32;
            if l.checks.mbarrier {
                strict::mbar_reinit(cta, a)?;
            }
            with_race(cta, |rc| rc.mbar_init_write = true);
            let init = write_bytes(dev, l, cta, Space::Shared, a as u64, &[0u8; 8], t, 8);
            with_race(cta, |rc| rc.mbar_init_write = false);
            init?;
            cta.mbar.insert(
                a,
                Mbar {
                    expected: count,
                    pending: count,
                    tx: 0,
                    phase: 0,
                },
            );
        }
        OpK::CpAsyncArrive if inst.sub2 == 0 => cp_land(dev, l, cta, t, 0, true)?,
        OpK::MbarArrive | OpK::MbarExpectTx | OpK::CpAsyncArrive => {
            // mbarrier.arrive{.expect_tx}.shared.b64 state, [addr]{, count/tx};
            // cp.async.mbarrier.arrive.noinc.shared.b64 [addr] once the
            // thread's copies have landed
            if inst.op == OpK::CpAsyncArrive {
                cp_land(dev, l, cta, t, 0, true)?;
            }
            let (ai, dst) = match &ops[0] {
                Opnd::Mem { .. } => (0, false),
                _ => (1, true),
            };
            let (mrank, a) = mbar_target(thread_regs(cta, t), &ops[ai], l, inst, cta.rank)?;
            let extra = if ops.len() > ai + 1 {
                Some(operand(l, cta, ti, inst, ai + 1))
            } else {
                None
            };
            let check_mbar = l.checks.mbarrier;
            let mb = cluster_mbar(l, cta, mrank, a)?;
            let state = mb.phase as u64;
            let arrived_in = mb.phase;
            if inst.op == OpK::MbarExpectTx {
                mb.tx += extra.unwrap_or(0) as i64;
            } else {
                let mut count = 1u32;
                if inst.sub == 1 {
                    mb.tx += extra.unwrap_or(0) as i64;
                } else if let Some(c) = extra {
                    count = c as u32;
                }
                if mb.pending < count {
                    // PTX ISA "mbarrier.arrive": the pending count of the
                    // current phase must not go below zero
                    return Err(strict::e_async(
                        Some(a as u64),
                        format!(
                            "mbarrier arrive of {count} when its phase {} has {} arrivals \
                             pending (more arrivals than mbarrier.init's count)",
                            mb.phase, mb.pending
                        ),
                    ));
                }
                mb.pending -= count;
                mbar_check(mb);
            }
            if check_mbar {
                strict::mbar_overdelivered(mb, a)?;
            }
            if mrank == cta.rank && inst.op != OpK::MbarExpectTx {
                let pc = cta.pc[t];
                let mut used = Ok(());
                with_race(cta, |rc| {
                    used = rc.mbar_use(t, pc, a as usize);
                    rc.mbar_release(a, t, arrived_in);
                });
                used.map_err(|c| race_err(l, t, "arrive", c))?;
            }
            if dst {
                wr(cta, t, &ops[0], state)?;
            }
        }
        OpK::MbarTryWait | OpK::MbarTestWait => {
            let a = mbar_addr(thread_regs(cta, t), &ops[1], l, inst, cta.rank)?;
            let p = operand(l, cta, ti, inst, 2);
            let mb = cta.mbar.get(&a).ok_or_else(|| {
                e(
                    ErrorKind::UninitShared,
                    Some(a as u64),
                    "mbarrier used before mbarrier.init",
                )
            })?;
            let done = if inst.sub == 1 {
                (mb.phase & 1) as u64 != (p & 1)
            } else {
                mb.phase as u64 != p
            };
            // the phase whose completion the wait observes: for a parity,
            // the one before the current (none before the first: a fresh
            // barrier's preceding phase counts as complete); for a state,
            // the state's
            let observed = if inst.sub == 1 {
                mb.phase.checked_sub(1)
            } else {
                Some(p as u32)
            };
            if !done && inst.op == OpK::MbarTryWait {
                cta.strict.waiting_on[t] = Some((a, p));
                return Ok(Flow::Block(TS::Wait));
            }
            cta.strict.waiting_on[t] = None;
            wr(cta, t, &ops[0], done as u64)?;
            if !done {
                return Ok(Flow::Yield);
            }
            let pc = cta.pc[t];
            let mut used = Ok(());
            // the wait reads the barrier object before it can order
            // anything through it: its initialisation must come first
            with_race(cta, |rc| {
                used = rc.mbar_use(t, pc, a as usize);
                rc.mbar_acquire(a, t, observed);
            });
            used.map_err(|c| race_err(l, t, "wait", c))?;
        }
        OpK::MbarInval => {
            let a = mbar_addr(thread_regs(cta, t), &ops[0], l, inst, cta.rank)?;
            let pc = cta.pc[t];
            let mut used = Ok(());
            with_race(cta, |rc| used = rc.mbar_use(t, pc, a as usize));
            used.map_err(|c| race_err(l, t, "mbarrier.inval", c))?;
            cta.mbar.remove(&a);
        }
        _ => unreachable!("{:?} is not this family's", inst.op),
    }
    Ok(Flow::Next)
}
