//! The executor: CTA scheduling and instruction semantics, one room an
//! instruction family, each family's strict checks beside its semantics:
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | launch, CTA and cluster scheduling, the per-thread step (arithmetic, control, barriers) |
//! | `memory.rs` | state spaces, loads, stores, atomics' arithmetic, shared-memory race and proxy bookkeeping |
//! | `float_ops.rs` | floating-point and integer helpers |
//! | `async_copy.rs` | `cp.async`, TMA (`cp.async.bulk.tensor`), bulk groups, proxy fences |
//! | `mbarrier.rs` | mbarriers, local and remote |
//! | `collective.rs` | warp collectives, `ldmatrix`/`stmatrix` |
//! | `mma_sync.rs` | `mma.sync` |
//! | `wgmma.rs` | `wgmma` |
//! | `tcgen05.rs` | `tcgen05` and tensor memory |
//! | `calls.rs` | `call`, `.func` frames, built-ins |
//! | `strict.rs` | the strict checks' state and the rules not kept in the vector clocks (`race.rs`) |
//! | `tensor_map.rs` | the emulator's tensor-map encoding |

#![allow(clippy::too_many_arguments)]

use crate::decode::{atomop, carry, mulmode};

mod async_copy;
mod calls;
mod collective;
mod float_ops;
mod mbarrier;
mod memory;
mod mma_sync;
mod strict;
mod tcgen05;
mod tensor_map;
mod wgmma;

use crate::float::{self as fl, Fmt};
use crate::ir::*;
use crate::{Device, EmuError, ErrorKind, LaunchConfig, LaunchResult, Param};
use async_copy::*;
use calls::*;
use collective::*;
use float_ops::*;
use mbarrier::*;
use memory::*;
use mma_sync::*;
use std::collections::HashMap;
pub use tensor_map::TensorMap;
use wgmma::*;

/// Generic-address window of shared memory (`cvta.shared` adds this).
pub const SHARED_WIN: u64 = 0x7f00_0000_0000;
/// Generic-address window of local memory.
pub const LOCAL_WIN: u64 = 0x7e00_0000_0000;
/// Generic-address window of the parameter space.
pub const PARAM_WIN: u64 = 0x7d00_0000_0000;
/// Instructions a thread runs before the scheduler moves on (fairness for spin loops).
const TIME_SLICE: u64 = 1 << 16;
/// Offset of call-parameter scratch inside the param state space.
const CPARAM_BASE: u64 = 0x10_0000;
const WIN_SIZE: u64 = 0x100_0000_0000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TS {
    Ready,
    Bar,
    Coll,
    Wait,
    Exited,
}

/// Error without location (filled in by the caller).
struct E {
    kind: ErrorKind,
    addr: Option<u64>,
    msg: String,
}

fn e(kind: ErrorKind, addr: Option<u64>, msg: impl Into<String>) -> E {
    E {
        kind,
        addr,
        msg: msg.into(),
    }
}

type R<T> = Result<T, E>;

struct Launch<'a> {
    /// Check shared-memory races.
    race_check: bool,
    /// The strict checks of asynchronous code.
    checks: crate::AsyncChecks,
    /// Check inter-CTA global-memory races.
    gcheck: bool,
    /// Sequence number of the running cluster.
    cluster_seq: u32,
    /// The other CTAs of the running cluster (the running CTA's slot holds a placeholder).
    others: Vec<Cta>,
    /// Cluster barrier: arrivals in the current phase, and the phase.
    cl_arrived: u32,
    cl_phase: u32,
    k: &'a Kernel,
    params: Vec<u8>,
    globals: Vec<u64>,
    cfg: LaunchConfig,
    cluster: (u32, u32, u32),
    printf: String,
    /// Per instruction: executed at least once (a guarded one with its
    /// guard true).
    hit: Vec<bool>,
    /// The registers the wgmma check follows ([`strict::wgmma_registers`]).
    wg_regs: Vec<bool>,
    /// Tensor-memory cells the race detector keeps beside shared memory
    /// (none without tcgen05 or its check).
    tmem_cells: usize,
}

impl Launch<'_> {
    /// Shared-memory bytes of each CTA.
    fn smem_bytes(&self) -> usize {
        (self.k.static_shared + self.cfg.dynamic_smem) as usize
    }
}

/// A call frame of a thread.
struct Frame {
    /// First instruction of the called function (identifies it).
    func: u32,
    /// Instruction to return to.
    ret_pc: u32,
    /// Copy of the return parameter: (callee slot, caller slot, size).
    ret_copy: Option<(u64, u64, u32)>,
}

struct Cta {
    /// Call stacks, per thread.
    frames: Vec<Vec<Frame>>,
    /// Writer id of this CTA's cluster for the inter-CTA global race check.
    gid: u16,
    /// The running access is strong or atomic: skip the global race check.
    gskip: bool,
    /// Shared-memory race detector (None when off or without shared memory).
    race: std::cell::RefCell<Option<crate::race::Race>>,
    ctaid: (u32, u32, u32),
    /// Rank in the cluster.
    rank: u32,
    /// Cluster-barrier phase each thread last arrived in.
    cl_my_phase: Vec<u32>,
    n: usize,
    nregs: usize,
    regs: Vec<u64>,
    pc: Vec<u32>,
    st: Vec<TS>,
    icount: Vec<u64>,
    shared: Vec<u8>,
    sinit: Vec<bool>,
    local: Vec<u8>,
    cparam: Vec<u8>,
    mbar: HashMap<u32, Mbar>,
    bar_arrived: [u32; 16],
    bar_expected: [u32; 16],
    bar_waiting: [Vec<u32>; 16],
    /// bar.red accumulators.
    bar_red: [u32; 16],
    /// Each thread's carry flag (`CC.CF`) of the integer carry chains.
    carry: Vec<bool>,
    /// Tensor memory (sm_100), made by the first `tcgen05.alloc`.
    tmem: Option<Box<tcgen05::Tmem>>,
    /// Each thread's `cp.async` copies in flight: their shared-memory bytes
    /// are written when a wait (or `cp.async.mbarrier.arrive`) completes
    /// them, so a read before the wait sees the old bytes and the race
    /// check sees the write at the wait.
    cp: Vec<InFlight<CpCopy>>,
    /// Each thread's `wgmma`s in flight.
    wg: Vec<InFlight<WgOp>>,
    /// Shared-memory byte ranges `wgmma`s in flight read: `(id, start,
    /// end)`, until a wait of a thread of the warpgroup retires them.
    wg_reads: Vec<(u64, usize, usize)>,
    /// The next id of `wg_reads`.
    wg_next: u64,
    /// The strict checks' state.
    strict: strict::Strict,
}

/// One thread's asynchronous operations of one kind (`cp.async` copies,
/// `wgmma`s) in flight, in commit groups: a commit closes the open group,
/// a wait retires all but the newest groups.
struct InFlight<T> {
    /// Committed groups, oldest first.
    groups: std::collections::VecDeque<Vec<T>>,
    /// Issued since the last commit.
    open: Vec<T>,
}

impl<T> Default for InFlight<T> {
    fn default() -> Self {
        InFlight {
            groups: Default::default(),
            open: Vec::new(),
        }
    }
}

impl<T> InFlight<T> {
    /// The open group becomes a committed one.
    fn commit(&mut self) {
        let group = std::mem::take(&mut self.open);
        self.groups.push_back(group);
    }

    /// Retires every committed group but the newest `keep`, and with
    /// `open` the uncommitted operations too: what completes, oldest first.
    fn retire(&mut self, keep: usize, open: bool) -> Vec<T> {
        let mut done = Vec::new();
        while self.groups.len() > keep {
            done.extend(self.groups.pop_front().into_iter().flatten());
        }
        if open {
            done.append(&mut self.open);
        }
        done
    }

    /// Every operation in flight.
    fn iter(&self) -> impl Iterator<Item = &T> {
        self.groups.iter().flatten().chain(&self.open)
    }
}

/// Per-thread fixed info.
#[derive(Clone, Copy)]
struct Ti {
    t: usize,
    tid: (u32, u32, u32),
}

pub(crate) fn launch(
    dev: &mut Device,
    m: &Module,
    name: &str,
    cfg: LaunchConfig,
    params: &[Param],
) -> Result<LaunchResult, EmuError> {
    let bad = |msg: String| EmuError {
        kind: ErrorKind::BadLaunch,
        kernel: name.to_string(),
        line: 0,
        inst: String::new(),
        ctaid: (0, 0, 0),
        tid: (0, 0, 0),
        addr: None,
        msg,
    };
    let k = m
        .kernel(name)
        .ok_or_else(|| bad(format!("no kernel named {name}")))?;
    if params.len() != k.params.len() {
        return Err(bad(format!(
            "kernel takes {} parameters, {} given",
            k.params.len(),
            params.len()
        )));
    }
    let mut pbuf = vec![0u8; k.param_size as usize];
    for (p, d) in params.iter().zip(&k.params) {
        let bytes = match p {
            Param::U32(v) => v.to_le_bytes().to_vec(),
            Param::U64(v) => v.to_le_bytes().to_vec(),
            Param::Bytes(b) => b.clone(),
        };
        if bytes.len() != d.size as usize {
            return Err(bad(format!(
                "parameter {} has {} bytes, {} given",
                d.name,
                d.size,
                bytes.len()
            )));
        }
        pbuf[d.offset as usize..(d.offset + d.size) as usize].copy_from_slice(&bytes);
    }
    let nthreads = cfg.block.0 * cfg.block.1 * cfg.block.2;
    if let Some(r) = k.reqntid {
        if r.0 * r.1 * r.2 != nthreads {
            return Err(bad(format!(
                "kernel requires {r:?} threads per CTA, block is {:?}",
                cfg.block
            )));
        }
    }
    if let Some(r) = k.maxntid {
        if nthreads > r.0 * r.1 * r.2 {
            return Err(bad(format!(
                "kernel allows at most {r:?} threads per CTA, block is {:?}",
                cfg.block
            )));
        }
    }
    if nthreads == 0 || nthreads > 1024 {
        return Err(bad(format!("bad block size {:?}", cfg.block)));
    }
    let cluster = if cfg.cluster == (1, 1, 1) {
        k.reqnctapercluster.unwrap_or((1, 1, 1))
    } else {
        cfg.cluster
    };
    if !k.blocks_are_clusters
        && (!cfg.grid.0.is_multiple_of(cluster.0)
            || !cfg.grid.1.is_multiple_of(cluster.1)
            || !cfg.grid.2.is_multiple_of(cluster.2))
    {
        return Err(bad(format!(
            "grid {:?} is not a multiple of the cluster shape {cluster:?}",
            cfg.grid
        )));
    }
    // module globals
    let mut gptrs = Vec::new();
    let mut globals = Vec::new();
    for g in &m.globals {
        let p = dev.alloc(g.size.max(1) as usize);
        let mut data = g.init.clone();
        data.resize(g.size as usize, 0);
        dev.write(p, &data);
        globals.push(p.addr());
        gptrs.push(p);
    }
    // CTAs can only order global accesses through atomics and gpu-scope fences.
    let inter_cta_sync = k.insts.iter().any(|i| {
        matches!(i.op, OpK::Atom | OpK::Red)
            || ((i.opcode.starts_with("fence") || i.opcode.starts_with("membar"))
                && (i.opcode.contains(".gpu")
                    || i.opcode.contains(".sys")
                    || i.opcode.contains(".gl")
                    || &*i.opcode == "fence.sc"
                    || &*i.opcode == "fence.acq_rel"))
    });
    let mut l = Launch {
        race_check: dev.race_check,
        checks: dev.async_checks,
        gcheck: dev.race_check && !inter_cta_sync,
        cluster_seq: 0,
        others: Vec::new(),
        cl_arrived: 0,
        cl_phase: 0,
        k,
        params: pbuf,
        globals,
        cfg,
        cluster,
        printf: String::new(),
        hit: vec![false; k.insts.len()],
        wg_regs: strict::wgmma_registers(k, dev.async_checks),
        tmem_cells: match dev.async_checks.tcgen05 && k.insts.iter().any(|i| i.op == OpK::Tcgen05) {
            true => (tcgen05::LANES * tcgen05::COLS) as usize,
            false => 0,
        },
    };
    let mut total = 0u64;
    let mut res = Ok(());
    // With .blocksareclusters the grid counts clusters.
    let cgrid = if k.blocks_are_clusters {
        (
            cfg.grid.0 * cluster.0,
            cfg.grid.1 * cluster.1,
            cfg.grid.2 * cluster.2,
        )
    } else {
        cfg.grid
    };
    l.cfg.grid = cgrid;
    'outer: for cz in 0..cgrid.2 / cluster.2 {
        for cy in 0..cgrid.1 / cluster.1 {
            for cx in 0..cgrid.0 / cluster.0 {
                let mut ids = Vec::new();
                for z in 0..cluster.2 {
                    for y in 0..cluster.1 {
                        for x in 0..cluster.0 {
                            ids.push((cx * cluster.0 + x, cy * cluster.1 + y, cz * cluster.2 + z));
                        }
                    }
                }
                match run_cluster(dev, &mut l, &ids) {
                    Ok(n) => total += n,
                    Err(err) => {
                        res = Err(err);
                        break 'outer;
                    }
                }
            }
        }
    }
    dev.gclear();
    for p in gptrs {
        dev.free(p);
    }
    res?;
    let mut executed_lines: Vec<u32> = (l.hit.iter().enumerate())
        .filter(|(_, &h)| h)
        .filter_map(|(pc, _)| k.texts.get(pc).map(|t| t.0))
        .collect();
    executed_lines.sort_unstable();
    executed_lines.dedup();
    Ok(LaunchResult {
        printf: l.printf,
        instructions: total,
        executed_lines,
    })
}

impl Cta {
    fn empty() -> Cta {
        Cta {
            frames: Vec::new(),
            gid: 0,
            gskip: false,
            race: std::cell::RefCell::new(None),
            ctaid: (0, 0, 0),
            rank: 0,
            cl_my_phase: Vec::new(),
            n: 0,
            nregs: 0,
            regs: Vec::new(),
            pc: Vec::new(),
            st: Vec::new(),
            icount: Vec::new(),
            shared: Vec::new(),
            sinit: Vec::new(),
            local: Vec::new(),
            cparam: Vec::new(),
            mbar: HashMap::new(),
            bar_arrived: [0; 16],
            bar_expected: [0; 16],
            bar_waiting: Default::default(),
            bar_red: [0; 16],
            carry: Vec::new(),
            tmem: None,
            cp: Vec::new(),
            wg: Vec::new(),
            wg_reads: Vec::new(),
            wg_next: 0,
            strict: strict::Strict::default(),
        }
    }
}

fn tid_of_block(b: (u32, u32, u32), t: usize) -> (u32, u32, u32) {
    let t = t as u32;
    (t % b.0, (t / b.0) % b.1, t / (b.0 * b.1))
}

fn new_cta(l: &Launch, ctaid: (u32, u32, u32), rank: u32) -> Cta {
    let k = l.k;
    let b = l.cfg.block;
    let n = (b.0 * b.1 * b.2) as usize;
    let nregs = k.nregs as usize;
    let smem = (k.static_shared + l.cfg.dynamic_smem) as usize;
    Cta {
        frames: (0..n).map(|_| Vec::new()).collect(),
        gid: (l.cluster_seq % 65535) as u16 + 1,
        gskip: false,
        race: std::cell::RefCell::new(
            if (l.race_check || l.checks.proxy || l.checks.tcgen05 || l.checks.mbarrier) && smem > 0
            {
                let mut rc = crate::race::Race::new(n, smem + l.tmem_cells);
                rc.report_races = l.race_check;
                rc.report_proxy = l.checks.proxy;
                rc.report_tc = l.checks.tcgen05;
                rc.report_mbar = l.checks.mbarrier;
                Some(rc)
            } else {
                None
            },
        ),
        ctaid,
        rank,
        cl_my_phase: vec![0; n],
        n,
        nregs,
        regs: vec![0; n * nregs.max(1)],
        pc: vec![0; n],
        st: vec![TS::Ready; n],
        icount: vec![0; n],
        shared: vec![0; smem],
        sinit: vec![false; smem],
        local: vec![0; n * k.local_size as usize],
        cparam: vec![0; n * k.cparam_size as usize],
        mbar: HashMap::new(),
        bar_arrived: [0; 16],
        bar_expected: [0; 16],
        bar_waiting: Default::default(),
        bar_red: [0; 16],
        carry: vec![false; n],
        tmem: None,
        cp: (0..n).map(|_| InFlight::default()).collect(),
        wg: (0..n).map(|_| InFlight::default()).collect(),
        wg_reads: Vec::new(),
        wg_next: 0,
        strict: strict::Strict::new(&l.wg_regs, n),
    }
}

fn mk_err(l: &Launch, cta: &Cta, t: usize, err: E) -> EmuError {
    let k = l.k;
    let pc = cta.pc[t] as usize;
    let (line, text) = k.texts.get(pc).cloned().unwrap_or((0, String::new()));
    EmuError {
        kind: err.kind,
        kernel: k.name.clone(),
        line,
        inst: text,
        ctaid: cta.ctaid,
        tid: tid_of_block(l.cfg.block, t),
        addr: err.addr,
        msg: err.msg,
    }
}

/// One scheduling round of a CTA: every ready thread runs until it blocks,
/// then warp collectives whose members have all arrived execute.
/// Returns (progress, all threads exited).
fn cta_round(dev: &mut Device, l: &mut Launch, cta: &mut Cta) -> Result<(bool, bool), EmuError> {
    let b = l.cfg.block;
    let tid_of = move |t: usize| tid_of_block(b, t);
    let n = cta.n;
    let mut progress = false;
    let mut all_exited = true;
    for t in 0..n {
        if cta.st[t] == TS::Wait {
            cta.st[t] = TS::Ready;
        }
        if cta.st[t] == TS::Ready {
            let ti = Ti { t, tid: tid_of(t) };
            match run_thread(dev, l, cta, ti) {
                Ok(p) => progress |= p,
                Err(err) => return Err(mk_err(l, cta, t, err)),
            }
        }
        if cta.st[t] != TS::Exited {
            all_exited = false;
        }
    }
    for t in 0..n {
        if cta.st[t] != TS::Coll {
            continue;
        }
        match try_collective(dev, l, cta, t, &tid_of) {
            Ok(true) => progress = true,
            Ok(false) => {}
            Err(err) => return Err(mk_err(l, cta, t, err)),
        }
    }
    Ok((progress, all_exited))
}

fn deadlock(l: &Launch, cta: &Cta) -> EmuError {
    let n = cta.n;
    let t = (0..n).find(|&t| cta.st[t] != TS::Exited).unwrap_or(0);
    let exited = cta.st.iter().filter(|s| **s == TS::Exited).count();
    let msg = match cta.st.get(t) {
        Some(TS::Bar) => {
            let id = (0..16).find(|&i| cta.bar_waiting[i].contains(&(t as u32))).unwrap_or(0);
            format!("barrier {id} waits for {} threads but only {} arrived ({} threads exited, others blocked elsewhere)", cta.bar_expected[id], cta.bar_arrived[id], exited)
        }
        Some(TS::Coll) => format!("warp collective never completed: some threads named in its member mask did not arrive ({exited} threads exited)"),
        Some(TS::Wait) => match cta.strict.waiting_on[t] {
            Some((a, p)) => strict::mbar_hang(cta, a, p),
            None => "wait (mbarrier or cluster barrier) never satisfied".to_string(),
        },
        _ => "no progress".to_string(),
    };
    mk_err(l, cta, t, e(ErrorKind::Deadlock, None, msg))
}

/// Runs the CTAs of one cluster together until all threads exit.
fn run_cluster(dev: &mut Device, l: &mut Launch, ids: &[(u32, u32, u32)]) -> Result<u64, EmuError> {
    l.others = ids
        .iter()
        .enumerate()
        .map(|(r, id)| new_cta(l, *id, r as u32))
        .collect();
    l.cl_arrived = 0;
    l.cl_phase = 0;
    l.cluster_seq += 1;
    loop {
        let mut progress = false;
        let mut all_exited = true;
        for ci in 0..ids.len() {
            let mut cta = std::mem::replace(&mut l.others[ci], Cta::empty());
            let r = cta_round(dev, l, &mut cta);
            l.others[ci] = cta;
            let (p, x) = r?;
            progress |= p;
            all_exited &= x;
        }
        if all_exited {
            for c in &l.others {
                if l.checks.setmaxnreg {
                    strict::setmaxnreg_at_end(c).map_err(|err| mk_err(l, c, 0, err))?;
                }
            }
            // tensor memory must be given back before the CTA ends
            for c in &l.others {
                let live = c.tmem.as_ref().map_or(0, |tm| tm.live_columns());
                if live > 0 {
                    let msg = format!(
                        "the CTA exited with {live} tensor-memory columns allocated \
                         (tcgen05.dealloc missing)"
                    );
                    return Err(mk_err(l, c, 0, e(ErrorKind::Deadlock, None, msg)));
                }
            }
            break;
        }
        if !progress {
            let ci = (0..ids.len())
                .find(|&c| l.others[c].st.iter().any(|s| *s != TS::Exited))
                .unwrap_or(0);
            return Err(deadlock(l, &l.others[ci]));
        }
    }
    let total = l.others.iter().map(|c| c.icount.iter().sum::<u64>()).sum();
    l.others.clear();
    Ok(total)
}

#[inline]
fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

#[inline]
fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let s = 64 - bits;
        ((v << s) as i64) >> s
    }
}

/// Reads a scalar operand value.
#[inline]
fn val(r: &[u64], o: &Opnd, l: &Launch, cta: &Cta, ti: Ti) -> u64 {
    match o {
        Opnd::Reg(i) => r[*i as usize],
        Opnd::Imm(v) => *v,
        Opnd::NotReg(i) => (r[*i as usize] == 0) as u64,
        Opnd::Sreg(s) => sreg(*s, l, cta, ti),
        Opnd::Addr(a) => sym_addr(*a, l),
        Opnd::ImmF32(b) => *b as u64,
        Opnd::ImmF(b) => *b,
        _ => 0,
    }
}

fn sym_addr(a: SymAddr, l: &Launch) -> u64 {
    match a {
        SymAddr::None => 0,
        SymAddr::Kparam(o) => o as u64,
        SymAddr::Cparam(o) => CPARAM_BASE + o as u64,
        SymAddr::Shared(o) => o as u64,
        SymAddr::Local(o) => o as u64,
        SymAddr::Global(i) => l.globals[i as usize],
    }
}

fn sreg(s: Sreg, l: &Launch, cta: &Cta, ti: Ti) -> u64 {
    let c3 = |v: (u32, u32, u32), c: u8| -> u64 {
        (match c {
            0 => v.0,
            1 => v.1,
            _ => v.2,
        }) as u64
    };
    let cl = l.cluster;
    let g = l.cfg.grid;
    let ct = cta.ctaid;
    let lane = (ti.t % 32) as u64;
    match s {
        Sreg::Tid(c) => c3(ti.tid, c),
        Sreg::Ntid(c) => c3(l.cfg.block, c),
        Sreg::Ctaid(c) => c3(ct, c),
        Sreg::Nctaid(c) => c3(g, c),
        Sreg::Clusterid(c) => c3((ct.0 / cl.0, ct.1 / cl.1, ct.2 / cl.2), c),
        Sreg::Nclusterid(c) => c3((g.0 / cl.0, g.1 / cl.1, g.2 / cl.2), c),
        Sreg::ClusterCtaid(c) => c3((ct.0 % cl.0, ct.1 % cl.1, ct.2 % cl.2), c),
        Sreg::ClusterNctaid(c) => c3(cl, c),
        Sreg::ClusterCtarank => {
            ((ct.0 % cl.0) + cl.0 * ((ct.1 % cl.1) + cl.1 * (ct.2 % cl.2))) as u64
        }
        Sreg::ClusterNctarank => (cl.0 * cl.1 * cl.2) as u64,
        Sreg::Laneid => lane,
        Sreg::Warpid => (ti.t / 32) as u64,
        Sreg::Nwarpid => cta.n.div_ceil(32) as u64,
        Sreg::Smid => 0,
        Sreg::Nsmid => 132,
        Sreg::Gridid => 1,
        Sreg::Clock => cta.icount[ti.t] & 0xffff_ffff,
        Sreg::Clock64 => cta.icount[ti.t],
        Sreg::Globaltimer => cta.icount[ti.t] * 1000,
        Sreg::LanemaskEq => 1 << lane,
        Sreg::LanemaskLt => (1u64 << lane) - 1,
        Sreg::LanemaskLe => (1u64 << (lane + 1)) - 1,
        Sreg::LanemaskGt => (!((1u64 << (lane + 1)) - 1)) & 0xffff_ffff,
        Sreg::LanemaskGe => (!((1u64 << lane) - 1)) & 0xffff_ffff,
        Sreg::DynamicSmemSize => l.cfg.dynamic_smem as u64,
        Sreg::TotalSmemSize => (l.k.static_shared + l.cfg.dynamic_smem) as u64,
    }
}

fn mem_addr(r: &[u64], o: &Opnd, l: &Launch) -> u64 {
    match o {
        Opnd::Mem { base, sym, off, .. } => {
            let b = base.map(|b| r[b as usize]).unwrap_or(0);
            b.wrapping_add(sym_addr(*sym, l)).wrapping_add(*off as u64)
        }
        _ => 0,
    }
}

enum Flow {
    /// Executed a poll (e.g. a failing `mbarrier.test_wait`): continue later.
    Yield,
    Next,
    Jump(u32),
    Block(TS),
    Exit,
}

/// Runs thread `t` until it blocks or exits. Returns whether it made progress.
fn run_thread(dev: &mut Device, l: &mut Launch, cta: &mut Cta, ti: Ti) -> R<bool> {
    let k = l.k;
    let t = ti.t;
    let mut progress = false;
    let budget = dev.max_instructions_per_thread;
    let slice_end = cta.icount[t] + TIME_SLICE;
    loop {
        let pc = cta.pc[t];
        let inst = &k.insts[pc as usize];
        cta.icount[t] += 1;
        if let Some((p, neg)) = inst.guard {
            if (cta.regs[t * cta.nregs + p as usize] != 0) == neg {
                cta.pc[t] = pc + 1;
                progress = true;
                continue;
            }
        }
        l.hit[pc as usize] = true;
        let wgmma_op = matches!(
            inst.op,
            OpK::Wgmma | OpK::WgmmaFence | OpK::WgmmaCommit | OpK::WgmmaWait
        );
        if !wgmma_op
            && touches(&cta.wg[t], inst).is_some()
            && !wgmma::copy_in_flight(&mut cta.wg[t], inst)
        {
            return Err(e(
                ErrorKind::Race,
                None,
                "an operand is an accumulator or A-fragment register of a wgmma in flight \
                 (no wgmma.wait_group retired it)",
            ));
        }
        let flow = step(dev, l, cta, ti, inst)?;
        if !wgmma_op {
            cta.strict.note_writes(t, inst);
        }
        match flow {
            Flow::Next => {
                cta.pc[t] = pc + 1;
                progress = true;
            }
            Flow::Jump(x) => {
                cta.pc[t] = x;
                progress = true;
            }
            Flow::Block(s) => {
                cta.st[t] = s;
                if s == TS::Wait {
                    cta.icount[t] -= 1;
                } else if s == TS::Ready {
                    // released immediately (barrier completed by this arrival)
                    cta.pc[t] = pc + 1;
                    progress = true;
                    continue;
                } else {
                    progress = true;
                }
                return Ok(progress);
            }
            Flow::Exit => {
                strict::at_exit(l, cta, t)?;
                cta.st[t] = TS::Exited;
                return Ok(true);
            }
            Flow::Yield => {
                // executed, but only polled a condition: let the others run
                cta.pc[t] = pc + 1;
                cta.st[t] = TS::Wait;
                return Ok(progress);
            }
        }
        if cta.icount[t] >= slice_end {
            // time slice: spin loops on memory flags must let the writer run
            return Ok(true);
        }
        if cta.icount[t] > budget {
            return Err(e(
                ErrorKind::Timeout,
                None,
                format!("thread exceeded {budget} instructions"),
            ));
        }
    }
}

/// Thread `t`'s registers.
fn thread_regs(cta: &Cta, t: usize) -> &[u64] {
    &cta.regs[t * cta.nregs..(t + 1) * cta.nregs]
}

/// Thread `ti`'s value of operand `i` of `inst`.
fn operand(l: &Launch, cta: &Cta, ti: Ti, inst: &Inst, i: usize) -> u64 {
    val(thread_regs(cta, ti.t), &inst.ops[i], l, cta, ti)
}

fn wr(cta: &mut Cta, t: usize, o: &Opnd, v: u64) -> R<()> {
    match o {
        Opnd::Reg(r) => {
            cta.regs[t * cta.nregs + *r as usize] = v;
            Ok(())
        }
        Opnd::Sink => Ok(()),
        Opnd::Pair(a, b) => {
            if *a != u32::MAX {
                cta.regs[t * cta.nregs + *a as usize] = v;
            }
            cta.regs[t * cta.nregs + *b as usize] = 0;
            Ok(())
        }
        _ => Err(e(
            ErrorKind::Unsupported,
            None,
            format!("unsupported destination operand {o:?}"),
        )),
    }
}

fn step(dev: &mut Device, l: &mut Launch, cta: &mut Cta, ti: Ti, inst: &Inst) -> R<Flow> {
    let t = ti.t;
    let base = t * cta.nregs;
    let nregs = cta.nregs;
    let ops = &inst.ops;
    let ty = inst.ty;
    let bits = ty.bits();
    macro_rules! r {
        () => {
            &cta.regs[base..base + nregs]
        };
    }
    macro_rules! v {
        ($i:expr) => {
            val(r!(), &ops[$i], l, cta, ti)
        };
    }
    macro_rules! set {
        ($i:expr, $v:expr) => {{
            let vv: u64 = $v;
            match &ops[$i] {
                Opnd::Reg(rr) => cta.regs[base + *rr as usize] = vv,
                o => wr(cta, t, &o.clone(), vv)?,
            }
        }};
    }
    let m = mask(bits);
    match inst.op {
        OpK::Nop => {}
        OpK::WgmmaFence | OpK::WgmmaCommit | OpK::WgmmaWait => {
            return wgmma::step(l, cta, ti, inst)
        }
        OpK::Setmaxnreg => {
            if l.checks.setmaxnreg {
                strict::setmaxnreg(cta, t, inst.sub == 1, v!(0))?;
            }
        }
        OpK::Mov => match (&ops[0], &ops[1]) {
            (Opnd::Vec(ds), src) => {
                let v = val(r!(), src, l, cta, ti);
                let n = ds.len() as u32;
                let eb = bits / n;
                let ds = ds.clone();
                for (i, d) in ds.iter().enumerate() {
                    wr(cta, t, d, (v >> (eb * i as u32)) & mask(eb))?;
                }
            }
            (_, Opnd::Vec(ss)) => {
                let n = ss.len() as u32;
                let eb = bits / n;
                let mut v = 0u64;
                for (i, s) in ss.iter().enumerate() {
                    v |= (val(r!(), s, l, cta, ti) & mask(eb)) << (eb * i as u32);
                }
                set!(0, v);
            }
            (_, src) => {
                let v = val(r!(), src, l, cta, ti);
                let v = if matches!(src, Opnd::Addr(SymAddr::Global(_)))
                    || matches!(src, Opnd::Addr(_))
                {
                    v
                } else {
                    v & m
                };
                set!(0, v);
            }
        },
        OpK::Ld => {
            let addr = mem_addr(r!(), &ops[1], l);
            let es = ty.bytes() as usize;
            let n = inst.vec as usize;
            let mut buf = [0u8; 64];
            let strong = inst.sub == 1;
            if strong {
                with_race(cta, |rc| rc.skip = true);
                cta.gskip = true;
            }
            let res = read_bytes(dev, l, cta, inst.space, addr, &mut buf[..es * n], t, es * n);
            if strong {
                with_race(cta, |rc| rc.skip = false);
                cta.gskip = false;
            }
            res?;
            let get = |i: usize| -> u64 {
                let mut b = [0u8; 8];
                b[..es].copy_from_slice(&buf[i * es..(i + 1) * es]);
                let v = u64::from_le_bytes(b);
                if ty.signed() {
                    sext(v, bits) as u64
                } else {
                    v
                }
            };
            match &ops[0] {
                Opnd::Vec(ds) => {
                    let ds = ds.clone();
                    for (i, d) in ds.iter().enumerate() {
                        wr(cta, t, d, get(i))?;
                    }
                }
                _ => set!(0, get(0)),
            }
        }
        OpK::St => {
            let addr = mem_addr(r!(), &ops[0], l);
            let es = ty.bytes() as usize;
            let n = inst.vec as usize;
            let mut buf = [0u8; 64];
            match &ops[1] {
                Opnd::Vec(ss) => {
                    for (i, s) in ss.iter().enumerate() {
                        let v = val(r!(), s, l, cta, ti);
                        buf[i * es..(i + 1) * es].copy_from_slice(&v.to_le_bytes()[..es]);
                    }
                }
                s => {
                    let v = val(r!(), s, l, cta, ti);
                    buf[..es].copy_from_slice(&v.to_le_bytes()[..es]);
                }
            }
            let strong = inst.sub == 1;
            if strong {
                with_race(cta, |rc| rc.skip = true);
                cta.gskip = true;
            }
            let res = write_bytes(dev, l, cta, inst.space, addr, &buf[..es * n], t, es * n);
            if strong {
                with_race(cta, |rc| rc.skip = false);
                cta.gskip = false;
            }
            res?;
        }
        OpK::Cvta => {
            let a = v!(1);
            let g = match inst.space {
                Space::Shared | Space::SharedCluster => a.wrapping_add(SHARED_WIN),
                Space::Local => a.wrapping_add(LOCAL_WIN),
                Space::Param => a.wrapping_add(PARAM_WIN),
                _ => a,
            };
            set!(0, g & m);
        }
        OpK::CvtaTo => {
            let a = v!(1);
            let s = match inst.space {
                Space::Shared | Space::SharedCluster => a.wrapping_sub(SHARED_WIN),
                Space::Local => a.wrapping_sub(LOCAL_WIN),
                Space::Param => a.wrapping_sub(PARAM_WIN),
                _ => a,
            };
            set!(0, s & m);
        }
        OpK::Cvt => {
            if crate::scale::is_scale(ty) || crate::scale::is_scale(inst.ty2) {
                let srcs: Vec<u64> = (1..ops.len()).map(|i| v!(i)).collect();
                let Some(r) = crate::scale::cvt(inst, &srcs) else {
                    return Err(e(
                        ErrorKind::Unsupported,
                        None,
                        format!("unsupported cvt form `{}`", inst.opcode),
                    ));
                };
                set!(0, r);
            } else if matches!(
                ty,
                Ty::F16x2 | Ty::BF16x2 | Ty::E4M3x2 | Ty::E5M2x2 | Ty::E2M1x2
            ) && ops.len() == 3
            {
                // pack two converted values: d = {cvt(a) high, cvt(b) low}
                let st = scalar_ty(match ty {
                    Ty::E4M3x2 => Ty::E4M3,
                    Ty::E5M2x2 => Ty::E5M2,
                    Ty::E2M1x2 => Ty::E2M1,
                    x => x,
                });
                let mut sub = inst.clone();
                sub.ty = st;
                let hi = cvt(&sub, v!(1));
                let lo = cvt(&sub, v!(2));
                let eb = st.bits();
                set!(0, (hi << eb) | lo);
            } else if matches!(inst.ty2, Ty::E4M3x2 | Ty::E5M2x2 | Ty::E2M1x2) {
                // unpack fp8x2 (fp4x2) to f16x2: the low byte (nibble) to
                // the low half
                let a = v!(1);
                let st = match inst.ty2 {
                    Ty::E4M3x2 => Ty::E4M3,
                    Ty::E5M2x2 => Ty::E5M2,
                    _ => Ty::E2M1,
                };
                let eb = st.bits();
                let mut sub = inst.clone();
                sub.ty = Ty::F16;
                sub.ty2 = st;
                let lo = cvt(&sub, a & mask(eb));
                let hi = cvt(&sub, (a >> eb) & mask(eb));
                set!(0, lo | (hi << 16));
            } else {
                let a = v!(1);
                let r = cvt(inst, a);
                let r = if ty.signed() && !ty.float() { r } else { r & m };
                set!(0, r);
            }
        }
        OpK::Simd16 => {
            let (a, b) = (v!(1), v!(2));
            let mut r = 0u64;
            for lane in 0..2 {
                let (x, y) = ((a >> (16 * lane)) & 0xffff, (b >> (16 * lane)) & 0xffff);
                let (x, y) = match ty {
                    Ty::S16 => (sext(x, 16), sext(y, 16)),
                    _ => (x as i64, y as i64),
                };
                let z = match inst.sub {
                    0 => x.wrapping_add(y),
                    1 => x.wrapping_sub(y),
                    2 => x.min(y),
                    _ => x.max(y),
                };
                r |= ((z as u64) & 0xffff) << (16 * lane);
            }
            set!(0, r);
        }
        OpK::Add | OpK::Sub => {
            let (a, b) = (widen_mixed(inst, v!(1)), v!(2));
            let sub = inst.op == OpK::Sub;
            let r = if ty.float() {
                fadd(ty, a, b, inst.rnd, inst.ftz, inst.sat, sub)
            } else if inst.sat && ty == Ty::S32 {
                let (x, y) = (sext(a, 32), sext(b, 32));
                let r = if sub { x - y } else { x + y };
                (r.clamp(i32::MIN as i64, i32::MAX as i64) as u64) & m
            } else if inst.sub2 != 0 {
                // a carry chain (add.cc, addc, sub.cc, subc): the carry in
                // (addc/subc) and out (.cc) is CC.CF, a borrow for subtraction
                let cin = (inst.sub2 & carry::IN != 0 && cta.carry[t]) as i128;
                let (x, y) = ((a & m) as i128, (b & m) as i128);
                let full = if sub { x - y - cin } else { x + y + cin };
                if inst.sub2 & carry::OUT != 0 {
                    cta.carry[t] = if sub { full < 0 } else { full >> bits != 0 };
                }
                (full as u64) & m
            } else if sub {
                a.wrapping_sub(b) & m
            } else {
                a.wrapping_add(b) & m
            };
            set!(0, r);
        }
        OpK::Mul | OpK::Mad | OpK::Mul24 | OpK::Mad24 => {
            let (a, b) = (v!(1), v!(2));
            let r = if ty.float() {
                fmul(ty, a, b, inst.rnd, inst.ftz, inst.sat)
            } else {
                let (x, y): (i128, i128) = if inst.op == OpK::Mul24 || inst.op == OpK::Mad24 {
                    if ty.signed() {
                        (sext(a, 24) as i128, sext(b, 24) as i128)
                    } else {
                        ((a & 0xff_ffff) as i128, (b & 0xff_ffff) as i128)
                    }
                } else if ty.signed() {
                    (sext(a, bits) as i128, sext(b, bits) as i128)
                } else {
                    ((a & m) as i128, (b & m) as i128)
                };
                let p = x.wrapping_mul(y);
                let is24 = inst.op == OpK::Mul24 || inst.op == OpK::Mad24;
                let prod = match inst.sub {
                    mulmode::HI => {
                        if is24 {
                            ((p >> 16) as u64) & m
                        } else {
                            ((p >> bits) as u64) & m
                        }
                    }
                    mulmode::WIDE => (p as u64) & mask(bits * 2),
                    _ => (p as u64) & m,
                };
                if inst.op == OpK::Mad || inst.op == OpK::Mad24 {
                    let c = v!(3);
                    let wm = if inst.sub == mulmode::WIDE {
                        mask(bits * 2)
                    } else {
                        m
                    };
                    if inst.sat && ty == Ty::S32 && inst.sub == mulmode::HI {
                        let s = sext(prod, 32) + sext(c, 32);
                        (s.clamp(i32::MIN as i64, i32::MAX as i64) as u64) & m
                    } else if inst.sub2 != 0 {
                        // mad.cc, madc: the product's half plus c plus the
                        // carry in, the carry out to CC.CF
                        let cin = (inst.sub2 & carry::IN != 0 && cta.carry[t]) as u128;
                        let full = (prod & m) as u128 + (c & m) as u128 + cin;
                        if inst.sub2 & carry::OUT != 0 {
                            cta.carry[t] = full >> bits != 0;
                        }
                        (full as u64) & m
                    } else {
                        prod.wrapping_add(c) & wm
                    }
                } else {
                    prod
                }
            };
            set!(0, r);
        }
        OpK::Fma => {
            let (a, b, c) = (widen_mixed(inst, v!(1)), widen_mixed(inst, v!(2)), v!(3));
            set!(0, ffma(ty, a, b, c, inst.rnd, inst.ftz, inst.sat));
        }
        OpK::Div => {
            let (a, b) = (v!(1), v!(2));
            let r = if ty.float() {
                let q = fdiv(ty, a, b, inst.rnd, inst.ftz);
                if ty == Ty::F32 && inst.sub != 0 {
                    skew_f32(q, dev.approx_div_skew_ulps)
                } else {
                    q
                }
            } else if ty.signed() {
                let (x, y) = (sext(a, bits), sext(b, bits));
                if y == 0 {
                    m
                } else {
                    (x.wrapping_div(y) as u64) & m
                }
            } else {
                let (x, y) = (a & m, b & m);
                x.checked_div(y).unwrap_or(m)
            };
            set!(0, r);
        }
        OpK::Rem => {
            let (a, b) = (v!(1), v!(2));
            let r = if ty.signed() {
                let (x, y) = (sext(a, bits), sext(b, bits));
                if y == 0 {
                    a & m
                } else {
                    (x.wrapping_rem(y) as u64) & m
                }
            } else {
                let (x, y) = (a & m, b & m);
                x.checked_rem(y).unwrap_or(x)
            };
            set!(0, r);
        }
        OpK::Abs | OpK::Neg => {
            let a = v!(1);
            let r = if ty.float() {
                let st = scalar_ty(ty);
                lanes(ty, a, 0, 0, &|a, _, _| {
                    let sb = 1u64 << (st.bits() - 1);
                    let a = if inst.ftz && is_sub(st, fget(st, a, false)) {
                        a & sb
                    } else {
                        a
                    };
                    if inst.op == OpK::Abs {
                        a & !sb
                    } else {
                        a ^ sb
                    }
                })
            } else if inst.op == OpK::Abs {
                (sext(a, bits).wrapping_abs() as u64) & m
            } else {
                (sext(a, bits).wrapping_neg() as u64) & m
            };
            set!(0, r);
        }
        OpK::Min | OpK::Max => {
            let max = inst.op == OpK::Max;
            let pair = |a: u64, b: u64| -> u64 {
                if ty.float() {
                    fminmax(ty, a, b, max, inst.sub == 1, inst.ftz)
                } else if ty.signed() {
                    let (x, y) = (sext(a, bits), sext(b, bits));
                    let r = if max { x.max(y) } else { x.min(y) };
                    // .relu clamps a negative result at 0
                    (if inst.sub2 == 1 { r.max(0) } else { r } as u64) & m
                } else {
                    let (x, y) = (a & m, b & m);
                    if max {
                        x.max(y)
                    } else {
                        x.min(y)
                    }
                }
            };
            let r = pair(v!(1), v!(2));
            // the three-input form (`max.f32 d, a, b, c`, sm_100)
            let r = if ops.len() > 3 { pair(r, v!(3)) } else { r };
            set!(0, r);
        }
        OpK::And => set!(0, v!(1) & v!(2) & m),
        OpK::Or => set!(0, (v!(1) | v!(2)) & m),
        OpK::Xor => set!(0, (v!(1) ^ v!(2)) & m),
        OpK::Not => set!(0, !v!(1) & m),
        OpK::Cnot => set!(0, (v!(1) & m == 0) as u64),
        OpK::Shl => {
            let (a, s) = (v!(1), v!(2) as u32);
            set!(0, if s >= bits { 0 } else { (a << s) & m });
        }
        OpK::Shr => {
            let (a, s) = (v!(1), v!(2) as u32);
            let r = if ty.signed() {
                let x = sext(a, bits);
                ((x >> s.min(63)) as u64) & m
            } else if s >= bits {
                0
            } else {
                (a & m) >> s
            };
            set!(0, r);
        }
        OpK::Shf => {
            let (a, b, c) = (v!(1) & 0xffff_ffff, v!(2) & 0xffff_ffff, v!(3) as u32);
            let n = if inst.sub2 == 1 { c & 31 } else { c.min(32) };
            let x = (b << 32) | a;
            let r = if inst.sub == 0 {
                ((x << n) >> 32) & 0xffff_ffff
            } else {
                (x >> n) & 0xffff_ffff
            };
            set!(0, r);
        }
        OpK::Bfe => {
            let (a, p, len) = (v!(1), (v!(2) & 0xff) as u32, (v!(3) & 0xff) as u32);
            let msb = bits - 1;
            let sbit = if !ty.signed() || len == 0 {
                0
            } else {
                (a >> (p + len - 1).min(msb)) & 1
            };
            let mut d = 0u64;
            for i in 0..bits {
                let bit = if i < len && p + i <= msb {
                    (a >> (p + i)) & 1
                } else {
                    sbit
                };
                d |= bit << i;
            }
            set!(0, d & m);
        }
        OpK::Bfi => {
            let (a, b, p, len) = (v!(1), v!(2), (v!(3) & 0xff) as u32, (v!(4) & 0xff) as u32);
            let mut f = b;
            for i in 0..len {
                if p + i >= bits {
                    break;
                }
                f = (f & !(1 << (p + i))) | (((a >> i) & 1) << (p + i));
            }
            set!(0, f & m);
        }
        OpK::Brev => {
            let a = v!(1);
            set!(
                0,
                if bits == 32 {
                    (a as u32).reverse_bits() as u64
                } else {
                    a.reverse_bits()
                }
            );
        }
        OpK::Clz => {
            let a = v!(1);
            set!(
                0,
                if bits == 32 {
                    (a as u32).leading_zeros() as u64
                } else {
                    a.leading_zeros() as u64
                }
            );
        }
        OpK::Bfind => {
            let a = v!(1) & m;
            // position of the most significant non-sign bit; all ones if none
            let x = if ty.signed() && (a >> (bits - 1)) & 1 == 1 {
                !a & m
            } else {
                a
            };
            let r = if x == 0 {
                0xffff_ffff
            } else {
                let pos = 63 - x.leading_zeros() as u64;
                if inst.sub == 1 {
                    bits as u64 - 1 - pos
                } else {
                    pos
                }
            };
            set!(0, r);
        }
        OpK::Szext => {
            let (a, b) = (v!(1) & 0xffff_ffff, v!(2) as u32);
            let n = if inst.sub == 1 { b & 31 } else { b.min(32) };
            let r = if n == 0 {
                0
            } else if ty.signed() {
                (sext(a, n) as u64) & 0xffff_ffff
            } else {
                a & mask(n)
            };
            set!(0, r);
        }
        OpK::Bmsk => {
            let (a, b) = (v!(1) as u32, v!(2) as u32);
            let (a, b) = if inst.sub == 1 {
                (a & 31, b & 31)
            } else {
                (a.min(32), b.min(32))
            };
            let r = if a >= 32 {
                0
            } else {
                (mask(b) << a) & 0xffff_ffff
            };
            set!(0, r);
        }
        OpK::Dp4a | OpK::Dp2a => {
            let (a, b, c) = (v!(1) as u32, v!(2) as u32, v!(3));
            let (sa, sb) = (inst.ty.signed(), inst.ty2.signed());
            let byte = |x: u32, i: u32, s: bool| -> i64 {
                let v = (x >> (8 * i)) & 0xff;
                if s {
                    v as u8 as i8 as i64
                } else {
                    v as i64
                }
            };
            let half = |x: u32, i: u32, s: bool| -> i64 {
                let v = (x >> (16 * i)) & 0xffff;
                if s {
                    v as u16 as i16 as i64
                } else {
                    v as i64
                }
            };
            let mut acc = sext(c, 32);
            if inst.op == OpK::Dp4a {
                for i in 0..4 {
                    acc += byte(a, i, sa) * byte(b, i, sb);
                }
            } else {
                let off = if inst.sub == 1 { 2 } else { 0 };
                for i in 0..2 {
                    acc += half(a, i, sa) * byte(b, i + off, sb);
                }
            }
            set!(0, (acc as u64) & 0xffff_ffff);
        }
        OpK::Sad => {
            let (a, b, c) = (v!(1), v!(2), v!(3));
            let d = if ty.signed() {
                (sext(a, bits) as i128 - sext(b, bits) as i128).unsigned_abs() as u64
            } else {
                (a & m).abs_diff(b & m)
            };
            set!(0, d.wrapping_add(c) & m);
        }
        OpK::Isspacep => {
            let a = v!(1);
            let r = match inst.space {
                Space::Shared | Space::SharedCluster => {
                    (SHARED_WIN..SHARED_WIN + WIN_SIZE).contains(&a)
                }
                Space::Local => (LOCAL_WIN..LOCAL_WIN + WIN_SIZE).contains(&a),
                Space::Param => (PARAM_WIN..PARAM_WIN + WIN_SIZE).contains(&a),
                _ => dev.slice_mut(a, 1).is_some(),
            };
            set!(0, r as u64);
        }
        OpK::Popc => {
            let a = v!(1) & m;
            set!(0, a.count_ones() as u64);
        }
        OpK::Prmt => {
            let (a, b, c) = (v!(1) & 0xffff_ffff, v!(2) & 0xffff_ffff, v!(3) as u32);
            let x = (b << 32) | a;
            let byte = |i: u32| (x >> (8 * (i & 7))) & 0xff;
            let mut d = 0u64;
            if inst.sub == 0 {
                for i in 0..4 {
                    let sel = (c >> (4 * i)) & 0xf;
                    let mut v = byte(sel & 7);
                    if sel & 8 != 0 {
                        v = if v & 0x80 != 0 { 0xff } else { 0 };
                    }
                    d |= v << (8 * i);
                }
            } else {
                let s = c & 3;
                let sel: [u32; 4] = match inst.sub {
                    1 => [s, (s + 1) & 7, (s + 2) & 7, (s + 3) & 7],
                    2 => [s, (s + 7) & 7, (s + 6) & 7, (s + 5) & 7],
                    3 => [s; 4],
                    4 => [s, s.max(1), s.max(2), 3],
                    5 => [0, s.min(1), s.min(2), s],
                    _ => [2 * (s & 1), 2 * (s & 1) + 1, 2 * (s & 1), 2 * (s & 1) + 1],
                };
                for (i, sl) in sel.iter().enumerate() {
                    d |= byte(*sl) << (8 * i);
                }
            }
            set!(0, d);
        }
        OpK::Lop3 => {
            let (a, b, c, lut) = (v!(1), v!(2), v!(3), v!(4) as u32);
            let mut d = 0u64;
            for i in 0..bits {
                let idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
                d |= (((lut >> idx) & 1) as u64) << i;
            }
            set!(0, d);
        }
        OpK::Selp => {
            let c = v!(3);
            let r = if c != 0 { v!(1) } else { v!(2) };
            set!(0, r & m);
        }
        OpK::Slct => {
            let c = v!(3);
            let ge = if inst.ty2.float() {
                let x = fget(inst.ty2, c, inst.ftz);
                x >= 0.0 || (x == 0.0)
            } else {
                sext(c, 32) >= 0
            };
            let r = if ge { v!(1) } else { v!(2) };
            set!(0, r & m);
        }
        OpK::Setp | OpK::Set => {
            let cty = if inst.op == OpK::Set { inst.ty2 } else { ty };
            let (a, b) = (v!(1), v!(2));
            if is_x2(cty) && inst.op == OpK::Set {
                return Err(e(
                    ErrorKind::Unsupported,
                    None,
                    "set with packed half operands",
                ));
            }
            // packed halves: p = low-lane result, q = high-lane result
            let mut res = compare(inst, cty, a, b);
            let mut nres = if is_x2(cty) {
                compare(inst, cty, a >> 16, b >> 16)
            } else {
                !res
            };
            if inst.sub2 != 0 {
                let c = v!(3) != 0;
                let f = |x: bool| match inst.sub2 {
                    1 => x && c,
                    2 => x || c,
                    _ => x ^ c,
                };
                res = f(res);
                nres = f(nres);
            }
            if inst.op == OpK::Set {
                let v = if ty == Ty::F32 {
                    if res {
                        0x3f80_0000
                    } else {
                        0
                    }
                } else if res {
                    m
                } else {
                    0
                };
                set!(0, v);
            } else {
                match &ops[0] {
                    Opnd::Pair(p, q) => {
                        if *p != u32::MAX {
                            cta.regs[base + *p as usize] = res as u64;
                        }
                        cta.regs[base + *q as usize] = nres as u64;
                    }
                    _ => set!(0, res as u64),
                }
            }
        }
        OpK::Copysign => {
            let (a, b) = (v!(1), v!(2));
            let sb = 1u64 << (bits - 1);
            set!(0, (b & !sb) | (a & sb));
        }
        OpK::Sqrt
        | OpK::Rsqrt
        | OpK::Rcp
        | OpK::Ex2
        | OpK::Lg2
        | OpK::Sin
        | OpK::Cos
        | OpK::Tanh => {
            let a = v!(1);
            set!(0, funary(inst.op, ty, a, inst.rnd, inst.ftz, inst.sat));
        }
        OpK::Testp => {
            let x = fget(ty, v!(1), false);
            let r = match inst.sub {
                0 => x.is_finite(),
                1 => x.is_infinite(),
                2 => !x.is_nan(),
                3 => x.is_nan(),
                4 => x.is_finite() && x != 0.0 && !is_sub(ty, x),
                _ => is_sub(ty, x),
            };
            set!(0, r as u64);
        }
        OpK::Bra => match ops.first() {
            Some(Opnd::Label(x)) => return Ok(Flow::Jump(*x)),
            _ => return Err(e(ErrorKind::Unsupported, None, "indirect branch")),
        },
        OpK::Exit => return Ok(Flow::Exit),
        OpK::Ret => {
            return match cta.frames[t].pop() {
                None => Ok(Flow::Exit),
                Some(f) => {
                    if let Some((from, to, size)) = f.ret_copy {
                        let mut buf = vec![0u8; size as usize];
                        read_bytes(dev, l, cta, Space::Param, from, &mut buf, t, 1)?;
                        write_bytes(dev, l, cta, Space::Param, to, &buf, t, 1)?;
                    }
                    Ok(Flow::Jump(f.ret_pc))
                }
            };
        }
        OpK::Trap => {
            let last = l.printf.lines().last().unwrap_or("").to_string();
            return Err(e(
                ErrorKind::Trap,
                None,
                format!("trap executed; last printf output: {last:?}"),
            ));
        }
        OpK::Call => return call(dev, l, cta, ti, inst),
        OpK::Bar | OpK::BarArrive => {
            // bar.red.{popc,and,or} d, id{, count}, {!}c: operands shift by one
            let red = inst.op == OpK::Bar && inst.sub != 0;
            let o0 = red as usize;
            let id = (v!(o0) & 15) as usize;
            let has_count = ops.len() > o0 + 1 + red as usize;
            let count = if has_count {
                v!(o0 + 1) as u32
            } else {
                cta.n as u32
            };
            if cta.bar_arrived[id] == 0 {
                cta.bar_expected[id] = count;
                cta.bar_red[id] = if inst.sub == 2 { 1 } else { 0 };
            }
            if red {
                let c = v!(ops.len() - 1) & 1;
                cta.bar_red[id] = match inst.sub {
                    1 => cta.bar_red[id] + c as u32,
                    2 => cta.bar_red[id] & c as u32,
                    _ => cta.bar_red[id] | c as u32,
                };
            }
            cta.bar_arrived[id] += 1;
            with_race(cta, |rc| rc.bar_arrive(id, t));
            if cta.bar_arrived[id] >= cta.bar_expected[id] {
                cta.bar_arrived[id] = 0;
                let result = cta.bar_red[id] as u64;
                let w = std::mem::take(&mut cta.bar_waiting[id]);
                with_race(cta, |rc| {
                    for &x in &w {
                        rc.bar_leave(id, x as usize);
                    }
                    if inst.op == OpK::Bar {
                        rc.bar_leave(id, t);
                    }
                    rc.bar_reset(id);
                });
                for x in w {
                    cta.st[x as usize] = TS::Ready;
                    cta.pc[x as usize] += 1;
                    if red {
                        wr(cta, x as usize, &ops[0], result)?;
                    }
                }
                if red {
                    set!(0, result);
                }
                return Ok(Flow::Next);
            }
            if inst.op == OpK::BarArrive {
                return Ok(Flow::Next);
            }
            cta.bar_waiting[id].push(t as u32);
            return Ok(Flow::Block(TS::Bar));
        }
        OpK::ClusterBar => {
            // barrier.cluster.arrive / .wait over all threads of all CTAs of the cluster
            let total = (cta.n * l.others.len()) as u32;
            if inst.opcode.contains(".arrive") {
                with_race(cta, |rc| rc.cluster_arrive(t));
                cta.cl_my_phase[t] = l.cl_phase;
                l.cl_arrived += 1;
                if l.cl_arrived >= total {
                    l.cl_arrived = 0;
                    l.cl_phase += 1;
                }
            } else if inst.opcode.contains(".wait") {
                if l.cl_phase <= cta.cl_my_phase[t] {
                    return Ok(Flow::Block(TS::Wait));
                }
                with_race(cta, |rc| rc.cluster_wait(t));
            } else {
                return Err(e(
                    ErrorKind::Unsupported,
                    None,
                    format!(
                        "`{}` is not supported (use barrier.cluster.arrive + wait)",
                        inst.opcode
                    ),
                ));
            }
        }
        OpK::Activemask => {
            let w = t / 32;
            let mut mk = 0u64;
            for lane in 0..32 {
                let x = w * 32 + lane;
                if x < cta.n && cta.st[x] != TS::Exited {
                    mk |= 1 << lane;
                }
            }
            set!(0, mk);
        }
        OpK::Shfl
        | OpK::Vote
        | OpK::Redux
        | OpK::Match
        | OpK::Elect
        | OpK::BarWarp
        | OpK::Ldmatrix
        | OpK::Stmatrix
        | OpK::MmaSync
        | OpK::Wgmma => {
            return Ok(Flow::Block(TS::Coll));
        }
        OpK::Atom | OpK::Red => {
            let (mi, vi) = if inst.op == OpK::Atom { (1, 2) } else { (0, 1) };
            let addr = mem_addr(r!(), &ops[mi], l);
            let b = v!(vi);
            let c = if inst.sub == atomop::CAS {
                v!(vi + 1)
            } else {
                0
            };
            let es = ty.bytes() as usize;
            // atomics are strong operations: not data races
            with_race(cta, |rc| rc.skip = true);
            let res = load(dev, l, cta, inst.space, addr, es, t).and_then(|old| {
                let new = atomic_op(inst, ty, old, b, c);
                store(dev, l, cta, inst.space, addr, es, new, t).map(|_| old)
            });
            with_race(cta, |rc| rc.skip = false);
            let old = res?;
            if inst.op == OpK::Atom {
                let o = if ty.signed() {
                    sext(old, bits) as u64 & m
                } else {
                    old
                };
                set!(0, o);
            }
        }
        OpK::Mapa => {
            let a = v!(1);
            let rank = v!(2);
            if rank as usize >= l.others.len() {
                return Err(e(
                    ErrorKind::OutOfBounds,
                    Some(a),
                    format!("mapa to rank {rank} of a {}-CTA cluster", l.others.len()),
                ));
            }
            let a = if inst.space == Space::Generic
                && (SHARED_WIN..SHARED_WIN + WIN_SIZE).contains(&a)
            {
                a - SHARED_WIN
            } else {
                a
            };
            set!(0, CL_FLAG | (rank << 24) | (a & 0xff_ffff));
        }
        OpK::MbarInit
        | OpK::MbarArrive
        | OpK::MbarExpectTx
        | OpK::MbarTryWait
        | OpK::MbarTestWait
        | OpK::MbarInval
        | OpK::CpAsyncArrive => return mbarrier::step(dev, l, cta, ti, inst),
        OpK::CpAsync
        | OpK::CpAsyncCommit
        | OpK::CpAsyncWait
        | OpK::CpAsyncWaitAll
        | OpK::CpBulkTensor
        | OpK::CpBulkCommit
        | OpK::CpBulkWait
        | OpK::FenceProxyAsync => return async_copy::step(dev, l, cta, ti, inst),
        OpK::Tcgen05 => return tcgen05::step(dev, l, cta, ti, inst),
        OpK::Unsupported => {
            return Err(e(
                ErrorKind::Unsupported,
                None,
                format!(
                    "instruction `{}` is not supported by the emulator",
                    inst.opcode
                ),
            ));
        }
    }
    Ok(Flow::Next)
}
