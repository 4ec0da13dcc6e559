//! `call`: `.func` bodies with per-thread frames, and the built-ins
//! (`vprintf`, `malloc`/`free`).

use super::*;

/// The device heap's system calls: `__cuda_syscall_aligned_malloc(size,
/// align)` returns a fresh allocation (its address a multiple of `align`,
/// which must be a power of two up to 256) and `free(ptr)` releases one
/// (`free(0)` does nothing). Arguments and the result pass through `.param`
/// symbols, as the calling convention has them.
pub(super) fn heap_call(
    dev: &mut Device,
    l: &mut Launch,
    cta: &mut Cta,
    ti: Ti,
    fname: &str,
    ret: Option<&Opnd>,
    args: &[Opnd],
) -> R<Flow> {
    let t = ti.t;
    let mut vals = Vec::new();
    for a in args {
        let v = match a {
            Opnd::Addr(s) => load(dev, l, cta, Space::Param, sym_addr(*s, l), 8, t)?,
            o => val(&cta.regs[t * cta.nregs..(t + 1) * cta.nregs], o, l, cta, ti),
        };
        vals.push(v);
    }
    if fname == "free" {
        let p = vals.first().copied().unwrap_or(0);
        if p != 0 {
            dev.free(crate::DevPtr { addr: p, len: 0 });
        }
        return Ok(Flow::Next);
    }
    let (size, align) = (
        vals.first().copied().unwrap_or(0),
        vals.get(1).copied().unwrap_or(1),
    );
    if !align.is_power_of_two() || align > 256 {
        return Err(e(
            ErrorKind::Unsupported,
            None,
            format!("aligned malloc with alignment {align}"),
        ));
    }
    let p = dev.alloc(usize::try_from(size).unwrap_or(usize::MAX).max(1));
    match ret {
        Some(Opnd::Addr(sym)) => {
            let at = sym_addr(*sym, l);
            store(dev, l, cta, Space::Param, at, 8, p.addr(), t)?;
        }
        _ => {
            return Err(e(
                ErrorKind::Unsupported,
                None,
                "malloc without a return parameter",
            ))
        }
    }
    Ok(Flow::Next)
}

/// Executes `call`: `vprintf`, `__cuda_syscall_aligned_malloc` and `free`
/// are built in; other functions must have a body in the module.
pub(super) fn call(
    dev: &mut Device,
    l: &mut Launch,
    cta: &mut Cta,
    ti: Ti,
    inst: &Inst,
) -> R<Flow> {
    let t = ti.t;
    let ops = &inst.ops;
    // call.uni (ret), func, (args)  or call func, (args)
    let mut fname = None;
    let mut args = None;
    let mut ret = None;
    for (i, o) in ops.iter().enumerate() {
        match o {
            Opnd::Func(f) => fname = Some(f.clone()),
            Opnd::Vec(v) if fname.is_none() && i == 0 => ret = v.first().cloned(),
            Opnd::Vec(v) => args = Some(v.clone()),
            _ => {}
        }
    }
    let fname = fname.ok_or_else(|| e(ErrorKind::Unsupported, None, "indirect call"))?;
    if fname == "__cuda_syscall_aligned_malloc" || fname == "free" {
        return heap_call(
            dev,
            l,
            cta,
            ti,
            &fname,
            ret.as_ref(),
            &args.unwrap_or_default(),
        );
    }
    if fname != "vprintf" {
        let k = l.k;
        let fi = k.funcs.get(&fname).ok_or_else(|| {
            e(
                ErrorKind::Unsupported,
                None,
                format!(
                    "call to {fname}, which has no body in this module (only vprintf is built in)"
                ),
            )
        })?;
        if cta.frames[t].iter().any(|f| f.func == fi.pc) {
            return Err(e(
                ErrorKind::Unsupported,
                None,
                format!("recursive call to {fname}"),
            ));
        }
        let args = args.unwrap_or_default();
        if args.len() != fi.params.len() {
            return Err(e(
                ErrorKind::BadLaunch,
                None,
                format!(
                    "{fname} takes {} arguments, {} given",
                    fi.params.len(),
                    args.len()
                ),
            ));
        }
        let r = cta.regs[t * cta.nregs..(t + 1) * cta.nregs].to_vec();
        for (a, &(off, size)) in args.iter().zip(&fi.params) {
            let mut buf = vec![0u8; size as usize];
            match a {
                Opnd::Addr(sym @ SymAddr::Cparam(_)) => {
                    let src = sym_addr(*sym, l);
                    read_bytes(dev, l, cta, Space::Param, src, &mut buf, t, 1)?;
                }
                o => {
                    let v = val(&r, o, l, cta, ti);
                    let n = buf.len().min(8);
                    buf[..n].copy_from_slice(&v.to_le_bytes()[..n]);
                }
            }
            write_bytes(
                dev,
                l,
                cta,
                Space::Param,
                CPARAM_BASE + off as u64,
                &buf,
                t,
                1,
            )?;
        }
        let ret_copy = match (ret, fi.rets.first()) {
            (Some(Opnd::Addr(sym @ SymAddr::Cparam(_))), Some(&(off, size))) => {
                Some((CPARAM_BASE + off as u64, sym_addr(sym, l), size))
            }
            _ => None,
        };
        cta.frames[t].push(Frame {
            func: fi.pc,
            ret_pc: cta.pc[t] + 1,
            ret_copy,
        });
        return Ok(Flow::Jump(fi.pc));
    }
    let args = args.unwrap_or_default();
    let r = &cta.regs[t * cta.nregs..(t + 1) * cta.nregs];
    let argv: Vec<u64> = args
        .iter()
        .map(|a| match a {
            Opnd::Addr(s) => sym_addr(*s, l),
            o => val(r, o, l, cta, ti),
        })
        .collect();
    let mut vals = Vec::new();
    for a in &argv {
        // each argument is a .param symbol address: load its 8 bytes
        vals.push(load(dev, l, cta, Space::Param, *a, 8, t)?);
    }
    let fmt_addr = vals.first().copied().unwrap_or(0);
    let buf = vals.get(1).copied().unwrap_or(0);
    let mut fmt = Vec::new();
    let mut a = fmt_addr;
    loop {
        let c = load(dev, l, cta, Space::Generic, a, 1, t)? as u8;
        if c == 0 {
            break;
        }
        fmt.push(c);
        a += 1;
        if fmt.len() > 1 << 16 {
            return Err(e(
                ErrorKind::OutOfBounds,
                Some(fmt_addr),
                "unterminated printf format",
            ));
        }
    }
    let fmt = String::from_utf8_lossy(&fmt).to_string();
    let mut out = String::new();
    let mut off = 0u64;
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        let mut spec = String::new();
        let mut longs = 0;
        let conv;
        loop {
            match chars.next() {
                Some('l') => longs += 1,
                Some('h') => {}
                Some(ch)
                    if ch.is_ascii_digit()
                        || ch == '.'
                        || ch == '-'
                        || ch == '+'
                        || ch == ' '
                        || ch == '#' =>
                {
                    spec.push(ch)
                }
                Some(ch) => {
                    conv = ch;
                    break;
                }
                None => {
                    conv = '?';
                    break;
                }
            }
        }
        let size = match conv {
            'f' | 'e' | 'g' | 'E' | 'G' | 'a' | 's' | 'p' => 8,
            _ => {
                if longs > 0 {
                    8
                } else {
                    4
                }
            }
        };
        off = off.div_ceil(size) * size;
        let v = load(dev, l, cta, Space::Generic, buf + off, size as usize, t)?;
        off += size;
        let width: usize = spec
            .trim_start_matches(['-', '+', ' ', '#', '0'])
            .split('.')
            .next()
            .and_then(|w| w.parse().ok())
            .unwrap_or(0);
        let prec: Option<usize> = spec.split_once('.').and_then(|(_, p)| p.parse().ok());
        let s = match conv {
            'd' | 'i' => {
                if size == 8 {
                    (v as i64).to_string()
                } else {
                    (v as u32 as i32).to_string()
                }
            }
            'u' => {
                if size == 8 {
                    v.to_string()
                } else {
                    (v as u32).to_string()
                }
            }
            'x' => format!("{:x}", if size == 8 { v } else { v & 0xffff_ffff }),
            'X' => format!("{:X}", if size == 8 { v } else { v & 0xffff_ffff }),
            'c' => ((v as u8) as char).to_string(),
            'f' | 'F' => format!("{:.*}", prec.unwrap_or(6), f64::from_bits(v)),
            'e' | 'E' => format!("{:.*e}", prec.unwrap_or(6), f64::from_bits(v)),
            'g' | 'G' => format!("{}", f64::from_bits(v)),
            'p' => format!("{v:#x}"),
            's' => {
                let mut s = Vec::new();
                let mut a = v;
                loop {
                    let c = load(dev, l, cta, Space::Generic, a, 1, t)? as u8;
                    if c == 0 {
                        break;
                    }
                    s.push(c);
                    a += 1;
                }
                String::from_utf8_lossy(&s).to_string()
            }
            _ => format!("%{spec}{conv}"),
        };
        if s.len() < width {
            let pad = if spec.starts_with('0') && !spec.starts_with('-') {
                '0'
            } else {
                ' '
            };
            if spec.starts_with('-') {
                out.push_str(&s);
                out.extend(std::iter::repeat_n(' ', width - s.len()));
            } else {
                out.extend(std::iter::repeat_n(pad, width - s.len()));
                out.push_str(&s);
            }
        } else {
            out.push_str(&s);
        }
    }
    l.printf.push_str(&out);
    if let Some(Opnd::Addr(s)) = ret {
        let a = sym_addr(s, l);
        store(dev, l, cta, Space::Param, a, 4, 0, t)?;
    }
    Ok(Flow::Next)
}
