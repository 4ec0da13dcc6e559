//! Memory: state spaces and generic addressing, shared-memory bounds and
//! race bookkeeping, loads, stores and atomics' arithmetic.

use super::*;

/// Resolved location of an access.
pub(super) enum Loc {
    Global(u64),
    Shared(usize),
    Local(usize),
    Kparam(usize),
    Cparam(usize),
}

pub(super) fn resolve(
    space: Space,
    addr: u64,
    size: usize,
    l: &Launch,
    cta: &Cta,
    t: usize,
) -> R<Loc> {
    let space = match space {
        Space::Generic => {
            if (SHARED_WIN..SHARED_WIN + WIN_SIZE).contains(&addr) {
                return resolve(Space::Shared, addr - SHARED_WIN, size, l, cta, t);
            } else if (LOCAL_WIN..LOCAL_WIN + WIN_SIZE).contains(&addr) {
                return resolve(Space::Local, addr - LOCAL_WIN, size, l, cta, t);
            } else if (PARAM_WIN..PARAM_WIN + WIN_SIZE).contains(&addr) {
                return resolve(Space::Param, addr - PARAM_WIN, size, l, cta, t);
            }
            Space::Global
        }
        s => s,
    };
    if size > 1 && !addr.is_multiple_of(size as u64) {
        return Err(e(
            ErrorKind::Misaligned,
            Some(addr),
            format!("{size}-byte access to {space:?} address {addr:#x} is misaligned"),
        ));
    }
    match space {
        Space::Global | Space::Const => Ok(Loc::Global(addr)),
        Space::Shared | Space::SharedCluster => {
            let (rank, addr) = cl_split(addr, cta.rank);
            if rank != cta.rank {
                return Err(e(ErrorKind::Unsupported, Some(addr), format!("access to the shared memory of cluster CTA {rank} (distributed shared memory) is not supported")));
            }
            if addr + size as u64 > cta.shared.len() as u64 {
                Err(e(ErrorKind::OutOfBounds, Some(addr), format!("shared access of {size} bytes at {addr:#x} outside the {} bytes of shared memory", cta.shared.len())))
            } else {
                Ok(Loc::Shared(addr as usize))
            }
        }
        Space::Local => {
            let ls = l.k.local_size as u64;
            if addr + size as u64 > ls {
                Err(e(
                    ErrorKind::OutOfBounds,
                    Some(addr),
                    format!("local access at {addr:#x} outside the {ls} bytes of local memory"),
                ))
            } else {
                Ok(Loc::Local(t * ls as usize + addr as usize))
            }
        }
        Space::Param => {
            if addr >= CPARAM_BASE {
                let o = addr - CPARAM_BASE;
                let cs = l.k.cparam_size as u64;
                if o + size as u64 > cs {
                    return Err(e(
                        ErrorKind::OutOfBounds,
                        Some(addr),
                        "call parameter access out of bounds",
                    ));
                }
                Ok(Loc::Cparam(t * cs as usize + o as usize))
            } else if addr + size as u64 > l.params.len() as u64 {
                Err(e(
                    ErrorKind::OutOfBounds,
                    Some(addr),
                    "kernel parameter access out of bounds",
                ))
            } else {
                Ok(Loc::Kparam(addr as usize))
            }
        }
        Space::Generic => unreachable!(),
    }
}

pub(super) fn race_err(l: &Launch, t: usize, what: &str, c: crate::race::Conflict) -> E {
    use crate::race::ConflictKind as K;
    let (line, text) =
        l.k.texts
            .get(c.other_pc as usize)
            .cloned()
            .unwrap_or((0, String::new()));
    let other = if c.other_write { "write" } else { "read" };
    let at = format!("line {line} `{text}`");
    let byte = if c.addr >= l.smem_bytes() {
        let cell = (c.addr - l.smem_bytes()) as u32;
        format!(
            "tensor memory lane {} column {}",
            cell / tcgen05::COLS,
            cell % tcgen05::COLS
        )
    } else {
        format!("shared byte {:#x}", c.addr)
    };
    let (kind, msg) = match c.kind {
        K::Race if c.addr >= l.smem_bytes() => (
            ErrorKind::Async,
            format!(
                "tensor memory race on {byte}: {what} by thread {t} and {other} by thread {} at \
                 {at}, with no synchronisation ordering them (PTX ISA: tcgen05 memory \
                 consistency model)",
                c.other_tid
            ),
        ),
        K::Race => (
            ErrorKind::Race,
            format!(
                "data race on {byte}: {what} by thread {t} and {other} by thread {} at {at}, with no barrier, mbarrier or warp collective ordering them",
                c.other_tid
            ),
        ),
        K::Unfenced => (
            ErrorKind::Async,
            format!(
                "async-proxy {what} by thread {t} of {byte}, written through the generic proxy \
                 by thread {} at {at} with no fence.proxy.async ordered between them (PTX ISA: \
                 memory consistency model, proxies)",
                c.other_tid
            ),
        ),
        K::Unobserved => (
            ErrorKind::Async,
            format!(
                "{what} by thread {t} of {byte}, which an asynchronous copy or MMA issued at {at} \
                 writes, without observing the phase of the mbarrier at {:#x} it completes on \
                 (PTX ISA: mbarrier, asynchronous operations' completion)",
                c.mbar.unwrap_or(0)
            ),
        ),
        K::MbarOrder => (
            ErrorKind::Async,
            format!(
                "mbarrier at {byte}: {what} by thread {t} and the {} by thread {} at {at}, with \
                 no synchronisation ordering them (PTX ISA: mbarrier.init, mbarrier.inval: an \
                 mbarrier is used between its initialisation and its invalidation, each ordered \
                 with the uses)",
                if c.other_write { "initialisation" } else { "use" },
                c.other_tid
            ),
        ),
        K::UnfencedOverwrite => (
            ErrorKind::Async,
            format!(
                "asynchronous copy by thread {t} overwrites {byte}, which thread {} {} through \
                 the generic proxy at {at}, with no fence.proxy.async ordered between them \
                 (PTX ISA: memory consistency model, proxies)",
                c.other_tid,
                if c.other_write { "wrote" } else { "read" }
            ),
        ),
        K::AsyncOverwrite => (
            ErrorKind::Async,
            format!(
                "asynchronous copy by thread {t} overwrites {byte} while the {other} by thread {} \
                 at {at} is not ordered before its issue",
                c.other_tid
            ),
        ),
    };
    e(kind, Some(c.addr as u64), msg)
}

pub(super) fn grace_err(cta: &Cta, a: u64, other: u16, what: &str) -> E {
    e(
        ErrorKind::Race,
        Some(a),
        format!(
            "inter-CTA data race: CTA {:?} {what} global memory at {a:#x} that another CTA (cluster #{}) wrote in this launch, and the kernel has no atomics or gpu-scope fences to order them",
            cta.ctaid,
            other - 1
        ),
    )
}

/// Runs `f` on the race detector if it is on.
pub(super) fn with_race(cta: &Cta, f: impl FnOnce(&mut crate::race::Race)) {
    if let Some(rc) = cta.race.borrow_mut().as_mut() {
        f(rc);
    }
}

pub(super) fn read_bytes(
    dev: &mut Device,
    l: &Launch,
    cta: &Cta,
    space: Space,
    addr: u64,
    buf: &mut [u8],
    t: usize,
    align: usize,
) -> R<()> {
    let size = buf.len();
    let loc = resolve(space, addr, align, l, cta, t)?;
    match loc {
        Loc::Global(a) => {
            buf.copy_from_slice(global_slice(dev, a, size, "read")?);
            if l.gcheck && !cta.gskip {
                dev.gcheck(a, size, cta.gid, false)
                    .map_err(|o| grace_err(cta, a, o, "reads"))?;
            }
        }
        Loc::Shared(o) => {
            shared_in_bounds(cta, o, size, addr, "read")?;
            if let Some(rc) = cta.race.borrow_mut().as_mut() {
                rc.read(t, cta.pc[t], o, size)
                    .map_err(|c| race_err(l, t, "read", c))?;
            }
            if cta.sinit[o..o + size].iter().any(|b| !b) {
                return Err(e(
                    ErrorKind::UninitShared,
                    Some(o as u64),
                    format!("read of {size} bytes of uninitialised shared memory at {o:#x}"),
                ));
            }
            buf.copy_from_slice(&cta.shared[o..o + size]);
        }
        Loc::Local(o) => buf.copy_from_slice(&cta.local[o..o + size]),
        Loc::Kparam(o) => buf.copy_from_slice(&l.params[o..o + size]),
        Loc::Cparam(o) => buf.copy_from_slice(&cta.cparam[o..o + size]),
    }
    Ok(())
}

/// The `size` bytes of global memory at `a`, or an out-of-bounds error for
/// an access of kind `what` (`read`, `write`).
pub(super) fn global_slice<'d>(
    dev: &'d mut Device,
    a: u64,
    size: usize,
    what: &str,
) -> R<&'d mut [u8]> {
    dev.slice_mut(a, size).ok_or_else(|| {
        e(
            ErrorKind::OutOfBounds,
            Some(a),
            format!("global {what} of {size} bytes at {a:#x} is outside every allocation"),
        )
    })
}

/// Checks that `size` bytes at shared offset `o` lie in the CTA's shared
/// memory.
pub(super) fn shared_in_bounds(cta: &Cta, o: usize, size: usize, addr: u64, what: &str) -> R<()> {
    if o + size > cta.shared.len() {
        return Err(e(
            ErrorKind::OutOfBounds,
            Some(addr),
            format!("shared {what} out of bounds"),
        ));
    }
    Ok(())
}

pub(super) fn e_race(o: usize, msg: String) -> E {
    e(ErrorKind::Race, Some(o as u64), msg)
}

pub(super) fn write_bytes(
    dev: &mut Device,
    l: &Launch,
    cta: &mut Cta,
    space: Space,
    addr: u64,
    buf: &[u8],
    t: usize,
    align: usize,
) -> R<()> {
    let size = buf.len();
    let loc = resolve(space, addr, align, l, cta, t)?;
    match loc {
        Loc::Global(a) => {
            global_slice(dev, a, size, "write")?.copy_from_slice(buf);
            if l.gcheck && !cta.gskip {
                dev.gcheck(a, size, cta.gid, true)
                    .map_err(|o| grace_err(cta, a, o, "writes"))?;
            }
        }
        Loc::Shared(o) => {
            shared_in_bounds(cta, o, size, addr, "write")?;
            wgmma_reading(cta, o, size)?;
            if l.checks.proxy {
                strict::bulk_reading(cta, o, size)?;
            }
            if let Some(rc) = cta.race.borrow_mut().as_mut() {
                rc.write(t, cta.pc[t], o, size)
                    .map_err(|c| race_err(l, t, "write", c))?;
            }
            cta.shared[o..o + size].copy_from_slice(buf);
            cta.sinit[o..o + size].iter_mut().for_each(|b| *b = true);
        }
        Loc::Local(o) => cta.local[o..o + size].copy_from_slice(buf),
        Loc::Kparam(_) => {
            return Err(e(
                ErrorKind::Unsupported,
                Some(addr),
                "write to kernel parameter space",
            ))
        }
        Loc::Cparam(o) => cta.cparam[o..o + size].copy_from_slice(buf),
    }
    Ok(())
}

pub(super) fn load(
    dev: &mut Device,
    l: &Launch,
    cta: &Cta,
    space: Space,
    addr: u64,
    size: usize,
    t: usize,
) -> R<u64> {
    let mut b = [0u8; 8];
    read_bytes(dev, l, cta, space, addr, &mut b[..size], t, size)?;
    Ok(u64::from_le_bytes(b))
}

pub(super) fn store(
    dev: &mut Device,
    l: &Launch,
    cta: &mut Cta,
    space: Space,
    addr: u64,
    size: usize,
    v: u64,
    t: usize,
) -> R<()> {
    write_bytes(dev, l, cta, space, addr, &v.to_le_bytes()[..size], t, size)
}

pub(super) fn atomic_op(inst: &Inst, ty: Ty, old: u64, b: u64, c: u64) -> u64 {
    let bits = ty.bits();
    let m = mask(bits);
    match inst.sub {
        atomop::ADD => {
            if ty.float() {
                // atom.add.f32 flushes subnormals (PTX ISA); f16/bf16/f64 do not
                let ftz = ty == Ty::F32;
                fadd(ty, old, b, Rnd::Rn, ftz, false, false)
            } else {
                old.wrapping_add(b) & m
            }
        }
        atomop::MIN | atomop::MAX => {
            let max = inst.sub == atomop::MAX;
            if ty.float() {
                fminmax(ty, old, b, max, false, false)
            } else if ty.signed() {
                let (x, y) = (sext(old, bits), sext(b, bits));
                (if max { x.max(y) } else { x.min(y) } as u64) & m
            } else if max {
                (old & m).max(b & m)
            } else {
                (old & m).min(b & m)
            }
        }
        atomop::INC => {
            if (old & m) >= (b & m) {
                0
            } else {
                old + 1
            }
        }
        atomop::DEC => {
            if old & m == 0 || (old & m) > (b & m) {
                b & m
            } else {
                old - 1
            }
        }
        atomop::AND => old & b & m,
        atomop::OR => (old | b) & m,
        atomop::XOR => (old ^ b) & m,
        atomop::EXCH => b & m,
        _ => {
            if old & m == b & m {
                c & m
            } else {
                old
            }
        }
    }
}
