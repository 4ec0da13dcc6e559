//! Warp collectives: scheduling them once every member has arrived,
//! `shfl`, `vote`, `redux`, `match`, `elect`, `ldmatrix`/`stmatrix`.

use super::*;

/// Tries to execute the warp collective that thread `t` is parked at.
pub(super) fn try_collective(
    dev: &mut Device,
    l: &mut Launch,
    cta: &mut Cta,
    t: usize,
    tid_of: &dyn Fn(usize) -> (u32, u32, u32),
) -> R<bool> {
    let k = l.k;
    let pc = cta.pc[t];
    let inst = &k.insts[pc as usize];
    let ti = Ti { t, tid: tid_of(t) };
    let r0 = cta.regs[t * cta.nregs..(t + 1) * cta.nregs].to_vec();
    let w = t / 32;
    // member set
    let group: Vec<usize> = match inst.op {
        OpK::Wgmma => {
            let g = t / 128;
            (g * 128..(g * 128 + 128).min(cta.n)).collect()
        }
        OpK::Ldmatrix | OpK::Stmatrix | OpK::MmaSync | OpK::Tcgen05 => {
            (w * 32..(w * 32 + 32).min(cta.n)).collect()
        }
        _ => {
            let mo = inst.ops.last().unwrap();
            let mk = val(&r0, mo, l, cta, ti) as u32;
            (0..32)
                .filter(|i| mk >> i & 1 == 1)
                .map(|i| w * 32 + i)
                .filter(|&x| x < cta.n)
                .collect()
        }
    };
    if !group.contains(&t) {
        return Err(e(
            ErrorKind::Unsupported,
            None,
            "executing thread is not in the collective's member mask",
        ));
    }
    for &g in &group {
        match cta.st[g] {
            TS::Exited => {
                return Err(e(
                    ErrorKind::Deadlock,
                    None,
                    format!("warp collective names thread {g}, which has exited"),
                ))
            }
            TS::Coll if cta.pc[g] == pc => {}
            _ => return Ok(false),
        }
    }
    // PTX ISA "wgmma.mma_async": `.sync` waits for the threads of the
    // warp, not of the warpgroup: the multiply orders each warp's threads
    // among themselves, and another warp's shared-memory writes only
    // through a barrier before it
    with_race(cta, |rc| match inst.op {
        OpK::Wgmma => group.chunks(32).for_each(|w| rc.collective(w)),
        _ => rc.collective(&group),
    });
    let nr = cta.nregs;
    let regs_of = |cta: &Cta, g: usize| cta.regs[g * nr..(g + 1) * nr].to_vec();
    let ops = &inst.ops;
    match inst.op {
        OpK::Shfl => {
            let mut results = Vec::new();
            for &g in &group {
                let r = regs_of(cta, g);
                let tg = Ti {
                    t: g,
                    tid: tid_of(g),
                };
                let lane = (g % 32) as i64;
                let b = (val(&r, &ops[2], l, cta, tg) & 31) as i64;
                let c = val(&r, &ops[3], l, cta, tg) as i64;
                let segmask = (c >> 8) & 31;
                let maxl = c & 31;
                let minlane = lane & segmask;
                let maxlane = minlane | (maxl & !segmask);
                let (j, ok) = match inst.sub {
                    0 => (lane - b, lane - b >= maxlane),
                    1 => (lane + b, lane + b <= maxlane),
                    2 => (lane ^ b, (lane ^ b) <= maxlane),
                    _ => {
                        let j = minlane | (b & !segmask);
                        (j, j <= maxlane)
                    }
                };
                let src = if ok { j } else { lane };
                let sg = w * 32 + src as usize;
                if !group.contains(&sg) {
                    return Err(e(
                        ErrorKind::Unsupported,
                        None,
                        format!("shfl reads lane {src}, which is not in the member mask"),
                    ));
                }
                let rs = regs_of(cta, sg);
                let ts = Ti {
                    t: sg,
                    tid: tid_of(sg),
                };
                let v = val(&rs, &ops[1], l, cta, ts) & 0xffff_ffff;
                results.push((g, v, ok));
            }
            for (g, v, ok) in results {
                match &ops[0] {
                    Opnd::Pair(a, p) => {
                        if *a != u32::MAX {
                            cta.regs[g * nr + *a as usize] = v;
                        }
                        cta.regs[g * nr + *p as usize] = ok as u64;
                    }
                    o => wr(cta, g, o, v)?,
                }
            }
        }
        OpK::Vote => {
            let preds: Vec<bool> = group
                .iter()
                .map(|&g| {
                    val(
                        &regs_of(cta, g),
                        &ops[1],
                        l,
                        cta,
                        Ti {
                            t: g,
                            tid: tid_of(g),
                        },
                    ) & 1
                        != 0
                })
                .collect();
            let ballot: u64 = group
                .iter()
                .zip(&preds)
                .filter(|(_, p)| **p)
                .map(|(g, _)| 1u64 << (g % 32))
                .sum();
            let r = match inst.sub {
                0 => preds.iter().all(|p| *p) as u64,
                1 => preds.iter().any(|p| *p) as u64,
                2 => (preds.iter().all(|p| *p) || preds.iter().all(|p| !*p)) as u64,
                _ => ballot,
            };
            for &g in &group {
                wr(cta, g, &ops[0], r)?;
            }
        }
        OpK::Redux => {
            let ty = inst.ty;
            let vals: Vec<u64> = group
                .iter()
                .map(|&g| {
                    val(
                        &regs_of(cta, g),
                        &ops[1],
                        l,
                        cta,
                        Ti {
                            t: g,
                            tid: tid_of(g),
                        },
                    ) & 0xffff_ffff
                })
                .collect();
            let fabs = inst.opcode.contains(".abs");
            let fnan = inst.opcode.contains(".NaN");
            let r = vals
                .iter()
                .copied()
                .map(|v| {
                    if ty == Ty::F32 && fabs {
                        v & 0x7fff_ffff
                    } else {
                        v
                    }
                })
                .reduce(|a, b| match inst.sub {
                    1 | 2 if ty == Ty::F32 => fminmax(Ty::F32, a, b, inst.sub == 2, fnan, false),
                    0 => a.wrapping_add(b) & 0xffff_ffff,
                    1 => {
                        if ty.signed() {
                            (sext(a, 32).min(sext(b, 32)) as u64) & 0xffff_ffff
                        } else {
                            a.min(b)
                        }
                    }
                    2 => {
                        if ty.signed() {
                            (sext(a, 32).max(sext(b, 32)) as u64) & 0xffff_ffff
                        } else {
                            a.max(b)
                        }
                    }
                    3 => a & b,
                    4 => a | b,
                    _ => a ^ b,
                })
                .unwrap_or(0);
            for &g in &group {
                wr(cta, g, &ops[0], r)?;
            }
        }
        OpK::Match => {
            let m = mask(inst.ty.bits());
            let vals: Vec<u64> = group
                .iter()
                .map(|&g| {
                    val(
                        &regs_of(cta, g),
                        &ops[1],
                        l,
                        cta,
                        Ti {
                            t: g,
                            tid: tid_of(g),
                        },
                    ) & m
                })
                .collect();
            let all_eq = vals.iter().all(|v| *v == vals[0]);
            for (i, &g) in group.iter().enumerate() {
                let mk: u64 = group
                    .iter()
                    .zip(&vals)
                    .filter(|(_, v)| **v == vals[i])
                    .map(|(x, _)| 1u64 << (x % 32))
                    .sum();
                if inst.sub == 1 {
                    let d = if all_eq { mk } else { 0 };
                    match &ops[0] {
                        Opnd::Pair(a, p) => {
                            if *a != u32::MAX {
                                cta.regs[g * nr + *a as usize] = d;
                            }
                            cta.regs[g * nr + *p as usize] = all_eq as u64;
                        }
                        o => wr(cta, g, o, d)?,
                    }
                } else {
                    wr(cta, g, &ops[0], mk)?;
                }
            }
        }
        OpK::Elect => {
            let leader = *group.iter().min().unwrap();
            for &g in &group {
                match &ops[0] {
                    Opnd::Pair(a, p) => {
                        if *a != u32::MAX {
                            cta.regs[g * nr + *a as usize] = (leader % 32) as u64;
                        }
                        cta.regs[g * nr + *p as usize] = (g == leader) as u64;
                    }
                    o => wr(cta, g, o, (leader % 32) as u64)?,
                }
            }
        }
        OpK::BarWarp => {}
        OpK::Ldmatrix | OpK::Stmatrix => ldst_matrix(dev, l, cta, inst, &group, tid_of)?,
        OpK::MmaSync => mma_sync(l, cta, inst, &group, tid_of)?,
        OpK::Wgmma => {
            cta.strict.wgmma_issue(k, &group, inst)?;
            wgmma(dev, l, cta, inst, &group, tid_of)?
        }
        OpK::Tcgen05 => tcgen05::collective(dev, l, cta, inst, &group, tid_of)?,
        _ => unreachable!(),
    }
    for &g in &group {
        cta.st[g] = TS::Ready;
        cta.pc[g] = pc + 1;
        cta.icount[g] += 0;
    }
    let _ = dev;
    Ok(true)
}

/// `ldmatrix.m16n16.{x1,x2}.trans.b8`: matrix i's 16 rows of 16 bytes come
/// from the addresses of lanes 16i..16i+15; of the transposed matrix, lane
/// holds row lane/4 (register 2i) and row lane/4 + 8 (register 2i+1),
/// bytes 4(lane%4)..+3 each (the B operand of `mma.m16n8k32` with 8-bit
/// types).
pub(super) fn ldmatrix_m16n16_b8(
    dev: &mut Device,
    l: &mut Launch,
    cta: &mut Cta,
    inst: &Inst,
    group: &[usize],
) -> R<()> {
    let nr = cta.nregs;
    let w0 = group[0];
    let rl = match &inst.ops[0] {
        Opnd::Vec(v) => v.clone(),
        x => vec![x.clone()],
    };
    let nmat = inst.sub as usize;
    if rl.len() != 2 * nmat {
        return Err(e(
            ErrorKind::Unsupported,
            None,
            format!("`{}` takes {} registers", inst.opcode, 2 * nmat),
        ));
    }
    for i in 0..nmat {
        let mut mat = [[0u8; 16]; 16];
        for (r, row) in mat.iter_mut().enumerate() {
            let g = w0 + 16 * i + r;
            let regs = cta.regs[g * nr..(g + 1) * nr].to_vec();
            let a = mem_addr(&regs, &inst.ops[1], l);
            let a = if inst.space == Space::Generic
                && (SHARED_WIN..SHARED_WIN + WIN_SIZE).contains(&a)
            {
                a - SHARED_WIN
            } else {
                a
            };
            read_bytes(dev, l, cta, Space::Shared, a, row, w0, 16)?;
        }
        for lane in 0..32 {
            for j in 0..2 {
                let col = lane / 4 + 8 * j;
                let v = (0..4).fold(0u64, |v, b| {
                    v | u64::from(mat[4 * (lane % 4) + b][col]) << (8 * b)
                });
                wr(cta, w0 + lane, &rl[2 * i + j], v)?;
            }
        }
    }
    Ok(())
}

/// `ldmatrix`/`stmatrix` `.m8n8` with `.x1/.x2/.x4` and `.trans`, b16 elements.
pub(super) fn ldst_matrix(
    dev: &mut Device,
    l: &mut Launch,
    cta: &mut Cta,
    inst: &Inst,
    group: &[usize],
    tid_of: &dyn Fn(usize) -> (u32, u32, u32),
) -> R<()> {
    if inst.opcode.contains("m16n16")
        && inst.opcode.ends_with("b8")
        && inst.op == OpK::Ldmatrix
        && inst.sub2 == 1
        && inst.sub <= 2
    {
        return ldmatrix_m16n16_b8(dev, l, cta, inst, group);
    }
    if !inst.opcode.contains("m8n8") || !inst.opcode.ends_with("b16") {
        return Err(e(
            ErrorKind::Unsupported,
            None,
            format!("`{}` is not supported (only m8n8 b16)", inst.opcode),
        ));
    }
    let nr = cta.nregs;
    let nmat = inst.sub as usize;
    let trans = inst.sub2 == 1;
    let is_ld = inst.op == OpK::Ldmatrix;
    let (mem_i, reg_i) = if is_ld { (1, 0) } else { (0, 1) };
    let w0 = group[0];
    // row addresses: matrix i row r comes from lane 8*i + r
    let mut row_addr = [[0u64; 8]; 4];
    for (i, ra) in row_addr.iter_mut().enumerate().take(nmat) {
        for (rr, slot) in ra.iter_mut().enumerate() {
            let lane = 8 * i + rr;
            let g = w0 + lane;
            let regs = cta.regs[g * nr..(g + 1) * nr].to_vec();
            let a = mem_addr(&regs, &inst.ops[mem_i], l);
            let a = if inst.space == Space::Generic
                && (SHARED_WIN..SHARED_WIN + WIN_SIZE).contains(&a)
            {
                a - SHARED_WIN
            } else {
                a
            };
            *slot = a;
        }
    }
    let regs_list = |o: &Opnd| -> Vec<Opnd> {
        match o {
            Opnd::Vec(v) => v.clone(),
            x => vec![x.clone()],
        }
    };
    let rl = regs_list(&inst.ops[reg_i]);
    for i in 0..nmat {
        // element (row, col) of matrix i: 8x8 b16
        let mut mat = [[0u16; 8]; 8];
        if is_ld {
            for (rr, row) in mat.iter_mut().enumerate() {
                let mut b = [0u8; 16];
                read_bytes(dev, l, cta, Space::Shared, row_addr[i][rr], &mut b, w0, 16)?;
                for (c, x) in row.iter_mut().enumerate() {
                    *x = u16::from_le_bytes([b[2 * c], b[2 * c + 1]]);
                }
            }
            if trans {
                let m2 = mat;
                for (rr, row) in mat.iter_mut().enumerate() {
                    for (c, x) in row.iter_mut().enumerate() {
                        *x = m2[c][rr];
                    }
                }
            }
            // thread lane holds row lane/4, cols 2*(lane%4), +1
            for lane in 0..32 {
                let g = w0 + lane;
                let (rr, c) = (lane / 4, 2 * (lane % 4));
                let v = mat[rr][c] as u64 | ((mat[rr][c + 1] as u64) << 16);
                wr(cta, g, &rl[i], v)?;
            }
        } else {
            for lane in 0..32 {
                let g = w0 + lane;
                let regs = cta.regs[g * nr..(g + 1) * nr].to_vec();
                let v = val(
                    &regs,
                    &rl[i],
                    l,
                    cta,
                    Ti {
                        t: g,
                        tid: tid_of(g),
                    },
                );
                let (rr, c) = (lane / 4, 2 * (lane % 4));
                mat[rr][c] = v as u16;
                mat[rr][c + 1] = (v >> 16) as u16;
            }
            if trans {
                let m2 = mat;
                for (rr, row) in mat.iter_mut().enumerate() {
                    for (c, x) in row.iter_mut().enumerate() {
                        *x = m2[c][rr];
                    }
                }
            }
            for (rr, row) in mat.iter().enumerate() {
                let mut b = [0u8; 16];
                for (c, x) in row.iter().enumerate() {
                    b[2 * c..2 * c + 2].copy_from_slice(&x.to_le_bytes());
                }
                write_bytes(dev, l, cta, Space::Shared, row_addr[i][rr], &b, w0, 16)?;
            }
        }
    }
    Ok(())
}

/// Register list of a vector operand.
pub(super) fn regs_of_vec(o: &Opnd) -> Vec<Opnd> {
    match o {
        Opnd::Vec(v) => v.clone(),
        x => vec![x.clone()],
    }
}
