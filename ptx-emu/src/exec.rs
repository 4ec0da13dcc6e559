//! The executor: CTA scheduling, memory and instruction semantics.

#![allow(clippy::too_many_arguments)]

use crate::decode::{atomop, carry, mulmode};

#[path = "tcgen05.rs"]
mod tcgen05;
use crate::float::{self as fl, Fmt};
use crate::ir::*;
use crate::{Device, EmuError, ErrorKind, LaunchConfig, LaunchResult, Param};
use std::collections::HashMap;

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

/// The emulator's own 128-byte tensor-map encoding (all little-endian):
///
/// | bytes | field |
/// |---|---|
/// | 0..8 | magic `b"EMUTMAP\0"` |
/// | 8..16 | global base address |
/// | 16..20 | rank (1..5) |
/// | 20..24 | element size in bytes |
/// | 24..44 | global dims (u32 x5, innermost first) |
/// | 48..88 | global strides in bytes (u64 x5; stride of dim 0 is the element size) |
/// | 88..108 | box dims (u32 x5, innermost first) |
/// | 108..112 | swizzle: 0 none, 1 = 32B, 2 = 64B, 3 = 128B, 4 = 128B with 32-byte atoms |
///
/// Out-of-bounds box elements are filled with zero. The box is written to
/// shared memory densely, innermost dimension fastest, then swizzled: within
/// byte offset bits `[4, 4+log2(swz/16))` are XORed with bits `[7, ...)` (the
/// CU_TENSOR_MAP_SWIZZLE_32B/64B/128B patterns; the box is assumed 1024-byte aligned);
/// 128B with 32-byte atoms XORs bits `[5, 7)` with bits `[7, 9)`.
/// A `cp.async.bulk.tensor` reads the hardware's format too ([`crate::HwTensorMap`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TensorMap {
    /// Global base address.
    pub base: u64,
    /// Element size in bytes.
    pub elem_size: u32,
    /// Global dims, innermost first.
    pub dims: Vec<u32>,
    /// Global strides in bytes, innermost first (first is the element size).
    pub strides: Vec<u64>,
    /// Box dims, innermost first.
    pub box_dims: Vec<u32>,
    /// Swizzle mode: 0 none, 1 32B, 2 64B, 3 128B, 4 128B with 32-byte atoms.
    pub swizzle: u32,
}

impl TensorMap {
    /// Encodes into the 128-byte parameter format.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; 128];
        b[0..8].copy_from_slice(b"EMUTMAP\0");
        b[8..16].copy_from_slice(&self.base.to_le_bytes());
        b[16..20].copy_from_slice(&(self.dims.len() as u32).to_le_bytes());
        b[20..24].copy_from_slice(&self.elem_size.to_le_bytes());
        for i in 0..self.dims.len() {
            b[24 + 4 * i..28 + 4 * i].copy_from_slice(&self.dims[i].to_le_bytes());
            b[48 + 8 * i..56 + 8 * i].copy_from_slice(&self.strides[i].to_le_bytes());
            b[88 + 4 * i..92 + 4 * i].copy_from_slice(&self.box_dims[i].to_le_bytes());
        }
        b[108..112].copy_from_slice(&self.swizzle.to_le_bytes());
        b
    }
    /// Checks the constraints the hardware puts on a tensor map; returns the
    /// first violation.
    pub fn check(&self) -> Option<String> {
        let r = self.dims.len();
        if !(1..=5).contains(&r) || self.strides.len() != r || self.box_dims.len() != r {
            return Some("rank must be 1..5 with as many strides and box dims".into());
        }
        if !matches!(self.elem_size, 1 | 2 | 4 | 8) {
            return Some(format!("element size {}", self.elem_size));
        }
        if !self.base.is_multiple_of(16) {
            return Some(format!("base address {:#x} not 16-byte aligned", self.base));
        }
        if self.strides.iter().skip(1).any(|s| s % 16 != 0) {
            return Some("global strides must be multiples of 16 bytes".into());
        }
        if self.box_dims.iter().any(|b| *b == 0 || *b > 256) {
            return Some("box dims must be in 1..=256".into());
        }
        let inner = self.box_dims[0] as u64 * self.elem_size as u64;
        if !inner.is_multiple_of(16) {
            return Some(format!(
                "inner box dimension is {inner} bytes, not a multiple of 16"
            ));
        }
        let span = match self.swizzle {
            0 => u64::MAX,
            1 => 32,
            2 => 64,
            3 | 4 => 128,
            s => return Some(format!("swizzle mode {s}")),
        };
        if inner > span {
            return Some(format!(
                "inner box dimension ({inner} bytes) exceeds the swizzle span ({span} bytes)"
            ));
        }
        None
    }

    /// Decodes from the 128-byte format.
    pub fn decode(b: &[u8]) -> Option<TensorMap> {
        if b.len() < 128 || &b[0..8] != b"EMUTMAP\0" {
            return None;
        }
        let u32at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let u64at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
        let rank = u32at(16) as usize;
        if !(1..=5).contains(&rank) {
            return None;
        }
        Some(TensorMap {
            base: u64at(8),
            elem_size: u32at(20),
            dims: (0..rank).map(|i| u32at(24 + 4 * i)).collect(),
            strides: (0..rank).map(|i| u64at(48 + 8 * i)).collect(),
            box_dims: (0..rank).map(|i| u32at(88 + 4 * i)).collect(),
            swizzle: u32at(108),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TS {
    Ready,
    Bar,
    Coll,
    Wait,
    Exited,
}

#[derive(Debug, Clone, Copy, Default)]
struct Mbar {
    expected: u32,
    pending: u32,
    tx: i64,
    phase: u32,
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

/// One `wgmma` in flight, as one thread of its warpgroup sees it.
struct WgOp {
    /// Ids of the shared ranges it reads (`Cta::wg_reads`).
    reads: Vec<u64>,
    /// The accumulator registers it writes.
    regs: Vec<u32>,
}

/// The accumulator register of a `wgmma` among `ops` that an operand (or
/// the guard) of `inst` names, if one does.
fn touches(ops: &InFlight<WgOp>, inst: &Inst) -> Option<u32> {
    // on every instruction: nothing to look for most of the time
    ops.iter().next()?;
    let held = |r: u32| ops.iter().any(|w| w.regs.contains(&r));
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
    guard.or_else(|| inst.ops.iter().find_map(|o| find(o, &held)))
}

/// One `cp.async` in flight.
struct CpCopy {
    /// The shared-memory destination address.
    dst: u64,
    /// The bytes it writes (the source's, zero-filled past its size).
    data: [u8; 16],
    /// Bytes written.
    size: usize,
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
    Ok(LaunchResult {
        printf: l.printf,
        instructions: total,
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
        race: std::cell::RefCell::new(if l.race_check && smem > 0 {
            Some(crate::race::Race::new(n, smem))
        } else {
            None
        }),
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
        Some(TS::Wait) => "wait (mbarrier or cluster barrier) never satisfied".to_string(),
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

/// Resolved location of an access.
enum Loc {
    Global(u64),
    Shared(usize),
    Local(usize),
    Kparam(usize),
    Cparam(usize),
}

fn resolve(space: Space, addr: u64, size: usize, l: &Launch, cta: &Cta, t: usize) -> R<Loc> {
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

fn race_err(l: &Launch, t: usize, what: &str, c: crate::race::Conflict) -> E {
    let (line, text) =
        l.k.texts
            .get(c.other_pc as usize)
            .cloned()
            .unwrap_or((0, String::new()));
    let other = if c.other_write { "write" } else { "read" };
    e(
        ErrorKind::Race,
        Some(c.addr as u64),
        format!(
            "data race on shared byte {:#x}: {what} by thread {t} and {other} by thread {} at line {line} `{text}`, with no barrier, mbarrier or warp collective ordering them",
            c.addr, c.other_tid
        ),
    )
}

fn grace_err(cta: &Cta, a: u64, other: u16, what: &str) -> E {
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
fn with_race(cta: &Cta, f: impl FnOnce(&mut crate::race::Race)) {
    if let Some(rc) = cta.race.borrow_mut().as_mut() {
        f(rc);
    }
}

fn read_bytes(
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
fn global_slice<'d>(dev: &'d mut Device, a: u64, size: usize, what: &str) -> R<&'d mut [u8]> {
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
fn shared_in_bounds(cta: &Cta, o: usize, size: usize, addr: u64, what: &str) -> R<()> {
    if o + size > cta.shared.len() {
        return Err(e(
            ErrorKind::OutOfBounds,
            Some(addr),
            format!("shared {what} out of bounds"),
        ));
    }
    Ok(())
}

/// A write of `size` shared bytes at `o` while a `wgmma` in flight (not
/// yet retired by a `wgmma.wait_group`) reads them: the multiply may read
/// either value, so it is reported as a race.
fn wgmma_reading(cta: &Cta, o: usize, size: usize) -> R<()> {
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

fn e_race(o: usize, msg: String) -> E {
    e(ErrorKind::Race, Some(o as u64), msg)
}

fn write_bytes(
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

fn load(
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

fn store(
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

fn fmt_of(ty: Ty) -> Fmt {
    match ty {
        Ty::F16 | Ty::F16x2 => fl::F16,
        Ty::BF16 | Ty::BF16x2 => fl::BF16,
        Ty::TF32 => fl::TF32,
        Ty::E4M3 | Ty::E4M3x2 => fl::E4M3,
        Ty::E5M2 | Ty::E5M2x2 => fl::E5M2,
        Ty::E2M1 | Ty::E2M1x2 => fl::E2M1,
        _ => fl::F32,
    }
}

/// Decodes a float of type `ty` to f64 (exact).
fn fget(ty: Ty, v: u64, ftz: bool) -> f64 {
    let x = match ty {
        Ty::F64 => f64::from_bits(v),
        Ty::F32 | Ty::TF32 => f32::from_bits(v as u32) as f64,
        Ty::BF16 | Ty::BF16x2 => fl::bf16_to_f64(v as u16),
        Ty::F16 | Ty::F16x2 => fl::f16_to_f64(v as u16),
        Ty::E4M3 | Ty::E4M3x2 => fl::decode(fl::E4M3, v & 0xff),
        Ty::E5M2 | Ty::E5M2x2 => fl::decode(fl::E5M2, v & 0xff),
        Ty::E2M1 | Ty::E2M1x2 => fl::decode(fl::E2M1, v & 0xf),
        _ => f32::from_bits(v as u32) as f64,
    };
    if ftz && is_sub(ty, x) {
        0.0f64.copysign(x)
    } else {
        x
    }
}

fn is_sub(ty: Ty, x: f64) -> bool {
    let min_normal = match ty {
        Ty::F64 => f64::MIN_POSITIVE,
        Ty::F16 | Ty::F16x2 => 2f64.powi(-14),
        _ => f32::MIN_POSITIVE as f64,
    };
    x != 0.0 && x.abs() < min_normal
}

/// Rounds exact `hi+lo` into type `ty` with `rnd`, applying ftz/sat.
fn fput(ty: Ty, hi: f64, lo: f64, rnd: Rnd, ftz: bool, sat: bool) -> u64 {
    let (mut hi, mut lo) = (hi, lo);
    if sat {
        if hi.is_nan() {
            return 0;
        }
        if hi + lo <= 0.0 || hi < 0.0 {
            hi = 0.0;
            lo = 0.0;
        } else if hi > 1.0 || (hi == 1.0 && lo > 0.0) {
            hi = 1.0;
            lo = 0.0;
        }
    }
    let rnd = if rnd == Rnd::None { Rnd::Rn } else { rnd };
    match ty {
        Ty::F64 => {
            if hi.is_nan() {
                return fl::NAN64;
            }
            let r = fl::round_f64(hi, lo, rnd);
            if ftz && is_sub(ty, r) {
                0.0f64.copysign(r).to_bits()
            } else {
                r.to_bits()
            }
        }
        _ => {
            let f = fmt_of(ty);
            let b = fl::round(
                hi,
                lo,
                rnd,
                f,
                matches!(
                    ty,
                    Ty::E4M3 | Ty::E4M3x2 | Ty::E5M2 | Ty::E5M2x2 | Ty::E2M1 | Ty::E2M1x2
                ),
            );
            let b = if ty == Ty::TF32 { b << 13 } else { b };
            if ftz {
                let x = fget(ty, b, false);
                if is_sub(ty, x) {
                    return if x < 0.0 { 1u64 << (ty.bits() - 1) } else { 0 };
                }
            }
            b
        }
    }
}

fn is_x2(ty: Ty) -> bool {
    matches!(ty, Ty::F16x2 | Ty::BF16x2)
}

/// Applies a per-lane float op on packed x2 types or directly on scalars.
fn lanes(ty: Ty, a: u64, b: u64, c: u64, f: &dyn Fn(u64, u64, u64) -> u64) -> u64 {
    if ty == Ty::F32x2 {
        let m = 0xffff_ffffu64;
        let lo = f(a & m, b & m, c & m) & m;
        let hi = f(a >> 32, b >> 32, c >> 32) & m;
        return lo | (hi << 32);
    }
    if is_x2(ty) {
        let lo = f(a & 0xffff, b & 0xffff, c & 0xffff) & 0xffff;
        let hi = f((a >> 16) & 0xffff, (b >> 16) & 0xffff, (c >> 16) & 0xffff) & 0xffff;
        lo | (hi << 16)
    } else {
        f(a, b, c)
    }
}

fn scalar_ty(ty: Ty) -> Ty {
    match ty {
        Ty::F16x2 => Ty::F16,
        Ty::BF16x2 => Ty::BF16,
        Ty::F32x2 => Ty::F32,
        t => t,
    }
}

fn fadd(ty: Ty, a: u64, b: u64, rnd: Rnd, ftz: bool, sat: bool, sub: bool) -> u64 {
    let st = scalar_ty(ty);
    lanes(ty, a, b, 0, &|a, b, _| {
        if st == Ty::F32 && matches!(rnd, Rnd::Rn | Rnd::None) && !sat {
            let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
            let (x, y) = if ftz {
                (fl::ftz32(x), fl::ftz32(y))
            } else {
                (x, y)
            };
            let r = if sub { x - y } else { x + y };
            if r.is_nan() {
                return fl::NAN32 as u64;
            }
            return (if ftz { fl::ftz32(r) } else { r }).to_bits() as u64;
        }
        let x = fget(st, a, ftz);
        let y = fget(st, b, ftz);
        let y = if sub { -y } else { y };
        if st == Ty::F64 && matches!(rnd, Rnd::Rn | Rnd::None) && !sat {
            let r = x + y;
            return if r.is_nan() { fl::NAN64 } else { r.to_bits() };
        }
        let (h, lo) = fl::two_sum(x, y);
        fput(st, h, lo, rnd, ftz, sat)
    })
}

fn fmul(ty: Ty, a: u64, b: u64, rnd: Rnd, ftz: bool, sat: bool) -> u64 {
    let st = scalar_ty(ty);
    lanes(ty, a, b, 0, &|a, b, _| {
        if st == Ty::F32 && matches!(rnd, Rnd::Rn | Rnd::None) && !sat {
            let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
            let (x, y) = if ftz {
                (fl::ftz32(x), fl::ftz32(y))
            } else {
                (x, y)
            };
            let r = x * y;
            if r.is_nan() {
                return fl::NAN32 as u64;
            }
            return (if ftz { fl::ftz32(r) } else { r }).to_bits() as u64;
        }
        let x = fget(st, a, ftz);
        let y = fget(st, b, ftz);
        let (h, lo) = fl::two_prod(x, y);
        fput(st, h, lo, rnd, ftz, sat)
    })
}

fn ffma(ty: Ty, a: u64, b: u64, c: u64, rnd: Rnd, ftz: bool, sat: bool) -> u64 {
    let st = scalar_ty(ty);
    lanes(ty, a, b, c, &|a, b, c| {
        if st == Ty::F32 && matches!(rnd, Rnd::Rn | Rnd::None) && !sat {
            let (x, y, z) = (
                f32::from_bits(a as u32),
                f32::from_bits(b as u32),
                f32::from_bits(c as u32),
            );
            let (x, y, z) = if ftz {
                (fl::ftz32(x), fl::ftz32(y), fl::ftz32(z))
            } else {
                (x, y, z)
            };
            let r = x.mul_add(y, z);
            if r.is_nan() {
                return fl::NAN32 as u64;
            }
            return (if ftz { fl::ftz32(r) } else { r }).to_bits() as u64;
        }
        let x = fget(st, a, ftz);
        let y = fget(st, b, ftz);
        let z = fget(st, c, ftz);
        if st == Ty::F64 {
            let h = x.mul_add(y, z);
            if h.is_nan() {
                return fl::NAN64;
            }
            if matches!(rnd, Rnd::Rn | Rnd::None) && !sat {
                return h.to_bits();
            }
            // residual of the fused result (sign is what directed rounding needs)
            let (p, pe) = fl::two_prod(x, y);
            let (s, se) = fl::two_sum(p, z);
            let lo = ((s - h) + se) + pe;
            return fput(st, h, lo, rnd, ftz, sat);
        }
        // products of f32/f16/bf16 are exact in f64
        let p = x * y;
        let (h, lo) = fl::two_sum(p, z);
        fput(st, h, lo, rnd, ftz, sat)
    })
}

fn fminmax(ty: Ty, a: u64, b: u64, max: bool, nan: bool, ftz: bool) -> u64 {
    let st = scalar_ty(ty);
    lanes(ty, a, b, 0, &|a, b, _| {
        let x = fget(st, a, ftz);
        let y = fget(st, b, ftz);
        let cnan = match st {
            Ty::F64 => fl::NAN64,
            Ty::F32 => fl::NAN32 as u64,
            _ => 0x7fff,
        };
        if x.is_nan() || y.is_nan() {
            if nan || (x.is_nan() && y.is_nan()) {
                return cnan;
            }
            let v = if x.is_nan() { b } else { a };
            let vv = fget(st, v, ftz);
            return fput(st, vv, 0.0, Rnd::Rn, false, false);
        }
        let pick_a = if x == y {
            // -0 < +0
            if max {
                !x.is_sign_negative()
            } else {
                x.is_sign_negative()
            }
        } else if max {
            x > y
        } else {
            x < y
        };
        let v = if pick_a { x } else { y };
        fput(st, v, 0.0, Rnd::Rn, false, false)
    })
}

fn fcmp(c: Cmp, x: f64, y: f64) -> bool {
    let un = x.is_nan() || y.is_nan();
    match c {
        Cmp::Eq => !un && x == y,
        Cmp::Ne => !un && x != y,
        Cmp::Lt => !un && x < y,
        Cmp::Le => !un && x <= y,
        Cmp::Gt => !un && x > y,
        Cmp::Ge => !un && x >= y,
        Cmp::Equ => un || x == y,
        Cmp::Neu => un || x != y,
        Cmp::Ltu => un || x < y,
        Cmp::Leu => un || x <= y,
        Cmp::Gtu => un || x > y,
        Cmp::Geu => un || x >= y,
        Cmp::Num => !un,
        Cmp::Nan => un,
        _ => false,
    }
}

fn icmp(c: Cmp, ty: Ty, a: u64, b: u64) -> bool {
    let bits = ty.bits();
    let (ua, ub) = (a & mask(bits), b & mask(bits));
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    let signed = ty.signed();
    match c {
        Cmp::Eq => ua == ub,
        Cmp::Ne => ua != ub,
        Cmp::Lt => {
            if signed {
                sa < sb
            } else {
                ua < ub
            }
        }
        Cmp::Le => {
            if signed {
                sa <= sb
            } else {
                ua <= ub
            }
        }
        Cmp::Gt => {
            if signed {
                sa > sb
            } else {
                ua > ub
            }
        }
        Cmp::Ge => {
            if signed {
                sa >= sb
            } else {
                ua >= ub
            }
        }
        Cmp::Lo => ua < ub,
        Cmp::Ls => ua <= ub,
        Cmp::Hi => ua > ub,
        Cmp::Hs => ua >= ub,
        _ => false,
    }
}

fn compare(inst: &Inst, ty: Ty, a: u64, b: u64) -> bool {
    if ty.float() {
        if is_x2(ty) {
            // only used by setp.f16x2 with pair destination; compare low lanes here
            return fcmp(
                inst.cmp,
                fget(ty, a & 0xffff, inst.ftz),
                fget(ty, b & 0xffff, inst.ftz),
            );
        }
        fcmp(inst.cmp, fget(ty, a, inst.ftz), fget(ty, b, inst.ftz))
    } else {
        icmp(inst.cmp, ty, a, b)
    }
}

/// Unary float functions evaluated exactly in f64 then rounded.
fn funary(op: OpK, ty: Ty, a: u64, rnd: Rnd, ftz: bool, sat: bool) -> u64 {
    let st = scalar_ty(ty);
    lanes(ty, a, 0, 0, &|a, _, _| {
        let x = fget(st, a, ftz);
        let nanv = |st: Ty| match st {
            Ty::F64 => fl::NAN64,
            Ty::F32 => fl::NAN32 as u64,
            _ => 0x7fff,
        };
        let (h, lo) = match op {
            OpK::Sqrt => {
                if x < 0.0 {
                    return nanv(st);
                }
                let s = x.sqrt();
                if st == Ty::F64 {
                    // residual x - s*s gives the rounding direction
                    let r = (-s).mul_add(s, x);
                    (s, r)
                } else {
                    let r = (-s).mul_add(s, x);
                    (s, r)
                }
            }
            OpK::Rsqrt => {
                if x < 0.0 {
                    return nanv(st);
                }
                (1.0 / x.sqrt(), 0.0)
            }
            OpK::Rcp => {
                let q = 1.0 / x;
                // exact residual 1 - q*x; (1/x - q) = residual / x
                let r = if q.is_finite() && q != 0.0 {
                    -(q.mul_add(x, -1.0)) / x
                } else {
                    0.0
                };
                (q, r)
            }
            OpK::Ex2 => (x.exp2(), 0.0),
            OpK::Lg2 => (x.log2(), 0.0),
            OpK::Sin => (x.sin(), 0.0),
            OpK::Cos => (x.cos(), 0.0),
            OpK::Tanh => (x.tanh(), 0.0),
            _ => (x, 0.0),
        };
        if h.is_nan() {
            return nanv(st);
        }
        fput(st, h, lo, rnd, ftz, sat)
    })
}

/// The f32 `q` (bits) moved `ulps` away from zero when finite and
/// nonzero, saturating at zero and infinity.
fn skew_f32(q: u64, ulps: i32) -> u64 {
    let mag = q & 0x7fff_ffff;
    if ulps == 0 || mag == 0 || mag >= 0x7f80_0000 {
        return q;
    }
    let moved = (mag as i64 + i64::from(ulps)).clamp(0, 0x7f80_0000) as u64;
    (q & 0x8000_0000) | moved
}

fn fdiv(ty: Ty, a: u64, b: u64, rnd: Rnd, ftz: bool) -> u64 {
    let x = fget(ty, a, ftz);
    let y = fget(ty, b, ftz);
    let q = x / y;
    if q.is_nan() {
        return if ty == Ty::F64 {
            fl::NAN64
        } else {
            fl::NAN32 as u64
        };
    }
    if ty == Ty::F32 && matches!(rnd, Rnd::Rn | Rnd::None) {
        let r = (x as f32) / (y as f32);
        return (if ftz { fl::ftz32(r) } else { r }).to_bits() as u64;
    }
    // remainder sign: x - q*y
    let rem = if q.is_finite() && q != 0.0 {
        (-q).mul_add(y, x)
    } else {
        0.0
    };
    let lo = if y < 0.0 { -rem } else { rem };
    fput(
        ty,
        q,
        lo * f64::EPSILON * q.abs().max(f64::MIN_POSITIVE),
        rnd,
        ftz,
        false,
    )
}

fn int_to_exact(v: u64, ty: Ty) -> (f64, f64) {
    let bits = ty.bits();
    if ty.signed() {
        let s = sext(v, bits) as i128;
        let h = s as f64;
        let lo = (s - h as i128) as f64;
        (h, lo)
    } else {
        let u = (v & mask(bits)) as i128;
        let h = u as f64;
        let lo = (u - h as i128) as f64;
        (h, lo)
    }
}

/// An 8-bit integer result of type `dt` as the (at least 16-bit) register
/// holds it: sign-extended for a signed type, zero-extended otherwise (PTX
/// ISA, "Operand Size Exceeding Instruction-Type Size": `cvt.s8.s32` into a
/// 16-bit register gives 0xff80 for -128, not 0x0080). Register widths are
/// not tracked, so the extension stops at 16 bits.
fn widen_dst(dt: Ty, v: u64) -> u64 {
    if dt.signed() && dt.bits() == 8 {
        sext(v, 8) as u64 & 0xffff
    } else {
        v
    }
}

fn cvt(inst: &Inst, a: u64) -> u64 {
    let (dt, st) = (inst.ty, inst.ty2);
    let rnd = inst.rnd;
    if !dt.float() && !st.float() {
        // int -> int
        let v: i128 = if st.signed() {
            sext(a, st.bits()) as i128
        } else {
            (a & mask(st.bits())) as i128
        };
        let db = dt.bits();
        if inst.sat {
            let (lo, hi): (i128, i128) = if dt.signed() {
                (-(1i128 << (db - 1)), (1i128 << (db - 1)) - 1)
            } else {
                (0, (1i128 << db) - 1)
            };
            return widen_dst(dt, (v.clamp(lo, hi) as u64) & mask(db));
        }
        return widen_dst(dt, (v as u64) & mask(db));
    }
    if st.float() && !dt.float() {
        let x = fget(st, a, inst.ftz);
        let mode = if rnd == Rnd::None { Rnd::Rzi } else { rnd };
        return widen_dst(
            dt,
            fl::f_to_int(x, mode, dt.bits(), dt.signed()) & mask(dt.bits()),
        );
    }
    let (h, lo) = if st.float() {
        (fget(st, a, inst.ftz), 0.0)
    } else {
        int_to_exact(a, st)
    };
    if st.float() && matches!(rnd, Rnd::Rni | Rnd::Rzi | Rnd::Rmi | Rnd::Rpi) {
        // round to integral value in floating point
        if h.is_nan() {
            return fput(dt, h, 0.0, Rnd::Rn, false, false);
        }
        let r = fl::round_int(h, rnd);
        return fput(dt, r, 0.0, Rnd::Rn, inst.ftz, inst.sat);
    }
    if h.is_nan() {
        return match dt {
            Ty::F64 => fl::NAN64,
            Ty::F32 => fl::NAN32 as u64,
            _ => fmt_of(dt).nan,
        };
    }
    fput(dt, h, lo, rnd, inst.ftz && dt == Ty::F32, inst.sat)
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
        let wgmma_op = matches!(
            inst.op,
            OpK::Wgmma | OpK::WgmmaFence | OpK::WgmmaCommit | OpK::WgmmaWait
        );
        if !wgmma_op && touches(&cta.wg[t], inst).is_some() {
            return Err(e(
                ErrorKind::Race,
                None,
                "an operand is an accumulator register of a wgmma in flight \
                 (no wgmma.wait_group retired it)",
            ));
        }
        let flow = step(dev, l, cta, ti, inst)?;
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
        OpK::Nop | OpK::WgmmaFence | OpK::CpBulkCommit | OpK::CpBulkWait => {}
        OpK::WgmmaCommit => cta.wg[t].commit(),
        OpK::WgmmaWait => {
            // all but the newest N groups complete: their operands are
            // read, their accumulators written
            let keep = v!(0) as usize;
            let done = cta.wg[t].retire(keep, false);
            for w in done {
                cta.wg_reads.retain(|(id, _, _)| !w.reads.contains(id));
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
        OpK::MbarInit => {
            let a = mbar_addr(r!(), &ops[0], l, inst, cta.rank)?;
            let count = v!(1) as u32;
            write_bytes(dev, l, cta, Space::Shared, a as u64, &[0u8; 8], t, 8)?;
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
            let (mrank, a) = mbar_target(r!(), &ops[ai], l, inst, cta.rank)?;
            let extra = if ops.len() > ai + 1 {
                Some(v!(ai + 1))
            } else {
                None
            };
            let mb = cluster_mbar(l, cta, mrank, a)?;
            let state = mb.phase as u64;
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
                    return Err(e(
                        ErrorKind::Unsupported,
                        Some(a as u64),
                        "mbarrier arrive count exceeds the pending count",
                    ));
                }
                mb.pending -= count;
                mbar_check(mb);
            }
            if mrank == cta.rank && inst.op != OpK::MbarExpectTx {
                with_race(cta, |rc| rc.mbar_release(a, t));
            }
            if dst {
                set!(0, state);
            }
        }
        OpK::MbarTryWait | OpK::MbarTestWait => {
            let a = mbar_addr(r!(), &ops[1], l, inst, cta.rank)?;
            let p = v!(2);
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
            if !done && inst.op == OpK::MbarTryWait {
                return Ok(Flow::Block(TS::Wait));
            }
            set!(0, done as u64);
            if !done {
                return Ok(Flow::Yield);
            }
            with_race(cta, |rc| rc.mbar_acquire(a, t));
        }
        OpK::MbarInval => {
            let a = mbar_addr(r!(), &ops[0], l, inst, cta.rank)?;
            cta.mbar.remove(&a);
        }
        OpK::CpAsync => {
            // cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size}: completes at issue
            let dst = mem_addr(r!(), &ops[0], l);
            let src = mem_addr(r!(), &ops[1], l);
            let size = v!(2) as usize;
            let src_size = if ops.len() > 3 && !inst.opcode.contains("cache_hint") {
                (v!(3) as usize).min(size)
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
            let keep = v!(0) as usize;
            cp_land(dev, l, cta, t, keep, false)?;
        }
        OpK::CpAsyncWaitAll => cp_land(dev, l, cta, t, 0, true)?,
        OpK::CpBulkTensor => {
            tma(dev, l, cta, ti, inst)?;
        }
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

/// Lands thread `t`'s `cp.async` copies: every committed group but the
/// newest `keep`, and with `open` those not yet committed too.
fn cp_land(
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

fn mbar_check(mb: &mut Mbar) {
    if mb.pending == 0 && mb.tx == 0 {
        mb.phase = mb.phase.wrapping_add(1);
        mb.pending = mb.expected;
    }
}

/// Flag marking a shared::cluster address produced by `mapa` (bits 24..31 hold the rank).
const CL_FLAG: u64 = 0x8000_0000;

/// Splits a shared::cluster address into (target rank, CTA-local offset).
fn cl_split(a: u64, own: u32) -> (u32, u64) {
    if a & CL_FLAG != 0 && a < (1 << 32) {
        (((a >> 24) & 0x7f) as u32, a & 0xff_ffff)
    } else {
        (own, a)
    }
}

/// The initialised mbarrier at shared offset `a` of CTA `rank` of `cta`'s
/// cluster (`cta` itself when `rank` is its own).
fn cluster_mbar<'c>(l: &'c mut Launch, cta: &'c mut Cta, rank: u32, a: u32) -> R<&'c mut Mbar> {
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
fn mbar_target(r: &[u64], o: &Opnd, l: &Launch, inst: &Inst, own: u32) -> R<(u32, u32)> {
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
fn mbar_addr(r: &[u64], o: &Opnd, l: &Launch, inst: &Inst, own: u32) -> R<u32> {
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

fn atomic_op(inst: &Inst, ty: Ty, old: u64, b: u64, c: u64) -> u64 {
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

/// The device heap's system calls: `__cuda_syscall_aligned_malloc(size,
/// align)` returns a fresh allocation (its address a multiple of `align`,
/// which must be a power of two up to 256) and `free(ptr)` releases one
/// (`free(0)` does nothing). Arguments and the result pass through `.param`
/// symbols, as the calling convention has them.
fn heap_call(
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
fn call(dev: &mut Device, l: &mut Launch, cta: &mut Cta, ti: Ti, inst: &Inst) -> R<Flow> {
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

/// Executes a TMA `cp.async.bulk.tensor` (completes immediately).
#[allow(clippy::needless_range_loop, clippy::manual_checked_ops)]
fn tma(dev: &mut Device, l: &mut Launch, cta: &mut Cta, ti: Ti, inst: &Inst) -> R<()> {
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
    let tm = match TensorMap::decode(&tb) {
        Some(tm) => tm,
        None => crate::HwTensorMap::decode(&tb)
            .map_err(|why| {
                e(
                    ErrorKind::BadLaunch,
                    Some(tmap_addr),
                    format!(
                        "tensor map parameter holds neither the emulator's encoding \
                         (ptx_emu::TensorMap) nor a hardware tensor map: {why}"
                    ),
                )
            })?
            .to_tensor_map(),
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
                read_bytes(
                    dev,
                    l,
                    cta,
                    Space::Shared,
                    sbase + soff as u64,
                    &mut buf,
                    t,
                    es,
                )?;
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
        }
    }
    if !to_global {
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
            return complete_tx(&mut l.others[mrank as usize].mbar, mb_off, total * es);
        }
        if mrank != cta.rank {
            return Err(e(
                ErrorKind::Unsupported,
                Some(mb_off as u64),
                "TMA completing on another CTA's mbarrier",
            ));
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
        for d in dests {
            let target: &mut Cta = if d == cta.rank {
                &mut *cta
            } else {
                &mut l.others[d as usize]
            };
            let o = land_box(target, sbase, &img)?;
            let own = d == me;
            let pc = target_pc;
            with_race(target, |rc| {
                rc.async_write(if own { Some(t) } else { None }, pc, o, img.len());
                if own {
                    rc.mbar_release(mb_off, t);
                }
            });
            complete_tx(&mut target.mbar, mb_off, total * es)?;
        }
    }
    Ok(())
}

/// Lands a TMA box `img` in `target`'s shared memory at `sbase`; its
/// offset.
fn land_box(target: &mut Cta, sbase: u64, img: &[u8]) -> R<usize> {
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
fn complete_tx(mbars: &mut HashMap<u32, Mbar>, mb_off: u32, bytes: usize) -> R<()> {
    let mb = mbars.get_mut(&mb_off).ok_or_else(|| {
        e(
            ErrorKind::UninitShared,
            Some(mb_off as u64),
            "TMA completes on an uninitialised mbarrier",
        )
    })?;
    mb.tx -= bytes as i64;
    mbar_check(mb);
    Ok(())
}

/// Tries to execute the warp collective that thread `t` is parked at.
fn try_collective(
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
    with_race(cta, |rc| rc.collective(&group));
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
        OpK::Wgmma => wgmma(dev, l, cta, inst, &group, tid_of)?,
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
fn ldmatrix_m16n16_b8(
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
fn ldst_matrix(
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
fn regs_of_vec(o: &Opnd) -> Vec<Opnd> {
    match o {
        Opnd::Vec(v) => v.clone(),
        x => vec![x.clone()],
    }
}

/// An MMA opcode's dot-separated parts, its shape part (`m16n8k16`) and
/// its types in order.
fn mma_parts(op: &str) -> (Vec<&str>, &str, Vec<Ty>) {
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
fn block_scale(
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
fn mma_sync(
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

/// Decoded wgmma shared-memory matrix descriptor.
struct Desc {
    start: u64,
    lbo: u64,
    sbo: u64,
    /// Swizzle width in bytes (0 = none).
    swz: u64,
}

fn desc(d: u64) -> R<Desc> {
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
    fn addr(&self, mn: u64, k: u64, es: u64, mn_major: bool) -> u64 {
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
fn wgmma(
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
        read_bytes(
            dev,
            l,
            cta,
            Space::Shared,
            addr,
            &mut b[..es as usize],
            g0,
            es as usize,
        )?;
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
    let regs: Vec<u32> = regs_of_vec(&ops[0])
        .iter()
        .filter_map(|o| match o {
            Opnd::Reg(r) => Some(*r),
            _ => None,
        })
        .collect();
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

/// The mixed-precision forms `add/sub.f32.f16`, `add/sub.f32.bf16`
/// (first operand) and `fma.f32.f16`, `fma.f32.bf16` (first two operands)
/// take a half-precision operand, converted exactly to f32; any other
/// instruction's operand is returned as is.
fn widen_mixed(inst: &Inst, v: u64) -> u64 {
    match (inst.ty, inst.ty2) {
        (Ty::F32, Ty::F16) => (fl::f16_to_f64(v as u16) as f32).to_bits() as u64,
        (Ty::F32, Ty::BF16) => (fl::bf16_to_f64(v as u16) as f32).to_bits() as u64,
        _ => v,
    }
}
