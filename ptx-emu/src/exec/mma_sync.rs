//! `mma.sync`: warp-level matrix products and their block scaling.

use super::*;

/// An MMA opcode's dot-separated parts, its shape part (`m16n8k16`) and
/// its types in order.
pub(super) fn mma_parts(op: &str) -> (Vec<&str>, &str, Vec<Ty>) {
    let parts: Vec<&str> = op.split('.').collect();
    let shape = parts
        .iter()
        .find(|p| p.starts_with('m') && p.contains('n') && p.contains('k'))
        .copied()
        .unwrap_or("");
    let tys = parts.iter().filter_map(|p| Ty::parse(p)).collect();
    (parts, shape, tys)
}

/// Scales `a` (m x k) and `b` (k x n) of `mma.sync...kind::mxf8f6f4
/// .block_scale.scale_vec::1X.m16n8k32...ue8m0 d, a, b, c, scale-a,
/// {byte-id-a, thread-id-a}, scale-b, {byte-id-b, thread-id-b}`: one ue8m0
/// scale per row of A and column of B, A's row r from byte `byte-id-a` of
/// lane 4 (r % 8) + 2 thread-id-a + r / 8, B's column c from lane
/// 4 c + thread-id-b (the lanes of each quad the thread selector picks).
/// Scales are powers of two, so the scaled operands stay exact.
pub(super) fn block_scale(
    l: &Launch,
    cta: &Cta,
    inst: &Inst,
    group: &[usize],
    tid_of: &dyn Fn(usize) -> (u32, u32, u32),
    (m, n, k): (usize, usize, usize),
    a: &mut [f64],
    b: &mut [f64],
) -> R<()> {
    let op = &*inst.opcode;
    let ops = &inst.ops;
    if !op.contains(".kind::mxf8f6f4.")
        || !op.contains(".scale_vec::1X.")
        || !op.ends_with(".ue8m0")
        || (m, n, k) != (16, 8, 32)
        || ops.len() != 8
    {
        return Err(e(
            ErrorKind::Unsupported,
            None,
            format!("`{op}` is not supported (block scaling: mxf8f6f4, scale_vec::1X, m16n8k32, ue8m0 only)"),
        ));
    }
    let nr = cta.nregs;
    let read = |lane: usize, o: &Opnd| -> u64 {
        let g = group[0] + lane;
        val(
            &cta.regs[g * nr..(g + 1) * nr],
            o,
            l,
            cta,
            Ti {
                t: g,
                tid: tid_of(g),
            },
        )
    };
    let selector = |o: &Opnd| -> R<(u64, u64)> {
        let v = regs_of_vec(o);
        let (byte, thread) = match v.as_slice() {
            [x, y] => (read(0, x) & 0xffff, read(0, y) & 0xffff),
            _ => {
                return Err(e(
                    ErrorKind::Unsupported,
                    None,
                    "block-scale selector is not a pair",
                ))
            }
        };
        if byte > 3 || thread > 1 {
            return Err(e(
                ErrorKind::Unsupported,
                None,
                format!("block-scale selector byte {byte}, thread {thread}"),
            ));
        }
        Ok((byte, thread))
    };
    let scale = |lane: usize, o: &Opnd, byte: u64| -> f64 {
        match (read(lane, o) >> (8 * byte)) & 0xff {
            0xff => f64::NAN,
            x => (2f64).powi(x as i32 - 127),
        }
    };
    let (ba, ta) = selector(&ops[5])?;
    let (bb, tb) = selector(&ops[7])?;
    // the scale registers, plain or as a one-register vector `{%r}`
    let (sa, sb) = match (
        regs_of_vec(&ops[4]).as_slice(),
        regs_of_vec(&ops[6]).as_slice(),
    ) {
        ([x], [y]) => (x.clone(), y.clone()),
        _ => {
            return Err(e(
                ErrorKind::Unsupported,
                None,
                "block-scale data is not one register",
            ))
        }
    };
    for r in 0..m {
        let s = scale(4 * (r % 8) + 2 * ta as usize + r / 8, &sa, ba);
        a[r * k..(r + 1) * k].iter_mut().for_each(|x| *x *= s);
    }
    for c in 0..n {
        let s = scale(4 * c + tb as usize, &sb, bb);
        (0..k).for_each(|kk| b[kk * n + c] *= s);
    }
    Ok(())
}

/// `mma.sync.aligned` with the PTX ISA fragment layouts: m16n8k16 / m16n8k8
/// f16 and bf16 (f32 or f16 accumulators), m16n8k8 / m16n8k4 tf32, m16n8k32 /
/// m16n8k16 s8/u8 into s32 (wrapping, or clamped with `.satfinite`) and
/// e4m3/e5m2 into f32 or f16 (also block-scaled, [`block_scale`]), and
/// m8n8k4 f64. Products are exact and each output is rounded once.
pub(super) fn mma_sync(
    l: &Launch,
    cta: &mut Cta,
    inst: &Inst,
    group: &[usize],
    tid_of: &dyn Fn(usize) -> (u32, u32, u32),
) -> R<()> {
    let op = &*inst.opcode;
    let (parts, shape, tys) = mma_parts(op);
    if !op.contains(".row.col") || tys.len() != 4 {
        return Err(e(
            ErrorKind::Unsupported,
            None,
            format!("`{op}` is not supported (only .row.col with explicit types)"),
        ));
    }
    let (dt, at, bt, ct) = (tys[0], tys[1], tys[2], tys[3]);
    let (m, n, k) = match shape {
        "m16n8k32" => (16, 8, 32),
        "m16n8k16" => (16, 8, 16),
        "m16n8k8" => (16, 8, 8),
        "m16n8k4" => (16, 8, 4),
        "m8n8k4" => (8, 8, 4),
        _ => {
            return Err(e(
                ErrorKind::Unsupported,
                None,
                format!("mma shape {shape} is not supported"),
            ))
        }
    };
    if (m == 8) != (at == Ty::F64) || at.bits() != bt.bits() {
        return Err(e(
            ErrorKind::Unsupported,
            None,
            format!("`{op}` is not supported (m8n8k4 only, and only, for f64)"),
        ));
    }
    let int = matches!(dt, Ty::S32);
    let satfinite = parts.contains(&"satfinite");
    // Elements per 32-bit fragment register (f64: one per 64-bit register).
    let per = (32 / at.bits().min(32)) as usize;
    let nr = cta.nregs;
    let w0 = group[0];
    let read = |cta: &Cta, lane: usize, o: &Opnd| -> u64 {
        let g = w0 + lane;
        val(
            &cta.regs[g * nr..(g + 1) * nr],
            o,
            l,
            cta,
            Ti {
                t: g,
                tid: tid_of(g),
            },
        )
    };
    let (da, aa, ba, ca) = (
        regs_of_vec(&inst.ops[0]),
        regs_of_vec(&inst.ops[1]),
        regs_of_vec(&inst.ops[2]),
        regs_of_vec(&inst.ops[3]),
    );
    let want = |acc: Ty| {
        if m == 8 || acc == Ty::F16 {
            2
        } else {
            4
        }
    };
    let (wa, wb) = if m == 8 {
        (1, 1)
    } else {
        (k / 2 / per, k / 4 / per)
    };
    if da.len() != want(dt) || ca.len() != want(ct) || aa.len() != wa || ba.len() != wb {
        return Err(e(
            ErrorKind::Unsupported,
            None,
            format!(
                "`{op}`: fragment register counts {}/{}/{}/{} do not match the shape",
                da.len(),
                aa.len(),
                ba.len(),
                ca.len()
            ),
        ));
    }
    let mut a = vec![0f64; m * k];
    let mut b = vec![0f64; k * n];
    let mut c = vec![0f64; m * n];
    // Element `j` of a packed fragment register, decoded exactly.
    let elem = |v: u64, j: usize, ty: Ty| -> f64 {
        let bits = ty.bits().min(32);
        let x = if bits == 32 {
            v
        } else {
            (v >> (bits * j as u32)) & ((1u64 << bits) - 1)
        };
        match ty {
            Ty::S8 => sext(x, 8) as f64,
            Ty::U8 => x as f64,
            // .tf32 operands: the low 13 mantissa bits are ignored.
            Ty::TF32 => f32::from_bits((x as u32) & 0xffff_e000) as f64,
            t => fget(t, x, false),
        }
    };
    let cget = |v: u64, ty: Ty| -> f64 {
        if ty == Ty::S32 {
            sext(v, 32) as f64
        } else {
            fget(ty, v, false)
        }
    };
    for lane in 0..32 {
        let (g, t) = (lane / 4, lane % 4);
        if m == 8 {
            // f64 m8n8k4: A row g col t; B row t col g; C row g cols 2t, 2t+1
            a[g * k + t] = fget(at, read(cta, lane, &aa[0]), false);
            b[t * n + g] = fget(bt, read(cta, lane, &ba[0]), false);
            for i in 0..2 {
                c[g * n + 2 * t + i] = fget(ct, read(cta, lane, &ca[i]), false);
            }
            continue;
        }
        // A register r: row g + 8 (r % 2), columns per*t + 4 per (r / 2) + j.
        for (r, reg) in aa.iter().enumerate() {
            let v = read(cta, lane, reg);
            let row = g + 8 * (r % 2);
            for j in 0..per {
                let col = per * t + 4 * per * (r / 2) + j;
                a[row * k + col] = elem(v, j, at);
            }
        }
        // B register r: rows per*t + 4 per r + j, column g.
        for (r, reg) in ba.iter().enumerate() {
            let v = read(cta, lane, reg);
            for j in 0..per {
                let kk = per * t + 4 * per * r + j;
                b[kk * n + g] = elem(v, j, bt);
            }
        }
        if ct == Ty::F16 {
            for (r, reg) in ca.iter().enumerate() {
                let v = read(cta, lane, reg);
                c[(g + 8 * r) * n + 2 * t] = elem(v, 0, Ty::F16);
                c[(g + 8 * r) * n + 2 * t + 1] = elem(v, 1, Ty::F16);
            }
        } else {
            for (r, reg) in ca.iter().enumerate() {
                let v = read(cta, lane, reg);
                c[(g + 8 * (r / 2)) * n + 2 * t + r % 2] = cget(v, ct);
            }
        }
    }
    if parts.contains(&"block_scale") {
        block_scale(l, cta, inst, group, tid_of, (m, n, k), &mut a, &mut b)?;
    }
    let mut d = vec![0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            if int {
                // Exact: |products| < 2^16, at most 32 of them.
                let mut acc = c[i * n + j] as i64;
                for kk in 0..k {
                    acc += (a[i * k + kk] * b[kk * n + j]) as i64;
                }
                d[i * n + j] = acc as f64;
                continue;
            }
            let mut acc = c[i * n + j];
            for kk in 0..k {
                acc = a[i * k + kk].mul_add(b[kk * n + j], acc);
            }
            d[i * n + j] = acc;
        }
    }
    let dput = |x: f64| -> u64 {
        if int {
            let v = x as i64;
            let v = if satfinite {
                v.clamp(i64::from(i32::MIN), i64::from(i32::MAX))
            } else {
                v
            };
            (v as u64) & 0xffff_ffff
        } else {
            fput(Ty::F32, x, 0.0, Rnd::Rn, false, false)
        }
    };
    for lane in 0..32 {
        let (g, t) = (lane / 4, lane % 4);
        let gth = w0 + lane;
        if m == 8 {
            for i in 0..2 {
                wr(cta, gth, &da[i], d[g * n + 2 * t + i].to_bits())?;
            }
            continue;
        }
        if dt != Ty::F16 {
            for (r, reg) in da.iter().enumerate() {
                let v = d[(g + 8 * (r / 2)) * n + 2 * t + r % 2];
                wr(cta, gth, reg, dput(v))?;
            }
        } else {
            for (r, reg) in da.iter().enumerate() {
                let lo = fput(
                    Ty::F16,
                    d[(g + 8 * r) * n + 2 * t],
                    0.0,
                    Rnd::Rn,
                    false,
                    false,
                );
                let hi = fput(
                    Ty::F16,
                    d[(g + 8 * r) * n + 2 * t + 1],
                    0.0,
                    Rnd::Rn,
                    false,
                    false,
                );
                wr(cta, gth, reg, lo | (hi << 16))?;
            }
        }
    }
    Ok(())
}
