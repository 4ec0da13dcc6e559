//! Operands read one K slice at a time.
//!
//! A product one of whose operands `cp.async` cannot copy (rows not
//! 16-byte aligned, as in a ragged batch matmul) cannot be pipelined by
//! copies; loading its operand tiles whole next to a large accumulator
//! crowds the registers. So a tensor-view load whose only user is an
//! operand of such an `mma.sync` product (or of a `wgmma` product, the
//! other operand such a load too, [`crate::lower::emit::ops::wgmma_stream`]) in the same
//! block, through a reshape dropping leading 1s and with nothing between
//! them that writes memory, is not read where it stands. The product reads
//! it instead, one K slice at a time: each slice into registers in a
//! coalesced layout, then on into the slice's shared-memory buffer
//! ([`crate::lower::emit::ops::mma_sync`]). The next slice's reads are in flight while the
//! tensor cores multiply the current one.
use std::rc::Rc;

use crate::ir::{OpId, Opcode, ValueId};
use crate::lower::analysis::view::PartitionInfo;
use crate::lower::emit::context::{Lowered, Lowerer, Tile};
use crate::lower::emit::states::Deferred;
use crate::lower::error::LowerError;
use crate::lower::plan::layout::LinearLayout;
use crate::ptx::{Operand, Reg};

use crate::lower::emit::copies::address::{CopyDest, Part};
use crate::lower::emit::copies::cp_async::{chunk_bytes, chunk_source, cp_async};
use crate::lower::emit::copies::swizzle::Swizzled;
use crate::lower::emit::ops::memory::read_at;
use crate::lower::emit::ops::view_access::{prepare, Access};
use crate::lower::plan::engines::mma_sync::Kind;
use crate::lower::plan::layout::coalesced::along_vec;

/// Bytes a thread stores to shared memory at once.
const STORE_BYTES: i64 = 16;

/// A load its product reads slice by slice.
#[derive(Clone, Debug)]
pub struct Streamed {
    /// The load.
    pub load: OpId,
    /// The view and partition it reads.
    part: PartitionInfo,
    /// Its tile indices.
    index: Vec<ValueId>,
    /// Leading dimensions of 1 the operand drops.
    lead: usize,
}

/// An operand of a product: a tile in registers, or a load streamed.
pub enum Source {
    /// In registers.
    Tile(Tile),
    /// Read slice by slice.
    Streamed(Rc<Streamed>),
}

impl Source {
    /// The operand's shape.
    pub fn shape(&self) -> Vec<i64> {
        match self {
            Source::Tile(t) => t.layout.shape.clone(),
            Source::Streamed(s) => s.part.tile_shape[s.lead..].to_vec(),
        }
    }

    /// The tile, when in registers.
    pub fn tile(&self) -> Option<&Tile> {
        match self {
            Source::Tile(t) => Some(t),
            Source::Streamed(_) => None,
        }
    }

    /// Whether the operand is written with one address per thread and an
    /// immediate per register (always so for a streamed one).
    pub fn disjoint(&self) -> bool {
        self.tile()
            .map_or(true, |t| crate::lower::plan::layout::disjoint(&t.layout))
    }

    /// What its K slice is written from: the whole tile, or `slice`, the
    /// slice read of a streamed operand.
    pub fn part<'a>(&'a self, slice: &'a Option<Tile>) -> Option<Part<'a>> {
        match self {
            Source::Tile(t) => Some(Part::Whole(t)),
            Source::Streamed(_) => slice.as_ref().map(Part::Slice),
        }
    }
}

/// The operands `lhs`, `rhs` of product `id` (dequantized for
/// `mmaf_scaled`).
pub fn operands(l: &mut Lowerer, id: OpId) -> Result<(Source, Source), LowerError> {
    let op = &l.m.ops[id];
    if op.opcode == Opcode::MmaFScaled {
        let (a, b) = crate::lower::emit::ops::mma_operands::operand_tiles(l, id)?;
        return Ok((Source::Tile(a), Source::Tile(b)));
    }
    let (Some(a), Some(b)) = (op.operand("lhs"), op.operand("rhs")) else {
        return Err(l.unsupported(id));
    };
    let source = |v: ValueId| match l.vals.get(&v) {
        Some(Lowered::Deferred(d)) if d.is::<Streamed>() => d
            .get::<Streamed>()
            .map(Source::Streamed)
            .ok_or_else(|| l.unsupported(id)),
        _ => l.tile(id, v).map(Source::Tile),
    };
    Ok((source(a)?, source(b)?))
}

/// Lowers load `load` as a streamed operand if it is one (binding its
/// result, and emitting nothing); false otherwise.
pub fn lower_load(l: &mut Lowerer, load: OpId) -> bool {
    let Some(crate::lower::plan::copies::Stream {
        view: part, lead, ..
    }) = l.plan.copies.streamed.get(&load).cloned()
    else {
        return false;
    };
    let o = &l.m.ops[load];
    let s = Streamed {
        load,
        lead,
        part,
        index: o.operand_group("index").to_vec(),
    };
    if let Some(&res) = o.results.first() {
        l.vals
            .insert(res, Lowered::Deferred(Deferred::new(Rc::new(s))));
    }
    true
}

/// Reads the K slices of a product's streamed operands, in order.
pub struct Slices {
    /// A's and B's readers (none for an operand in registers or copied).
    readers: [Option<Reader>; 2],
    /// A's copier, when A's slices go global-to-shared with `cp.async`.
    copier: Option<Copier>,
}

impl Slices {
    /// Readers of slices of `ks` elements of K of the streamed ones of
    /// operands `a` and `b` (of rank `rank`). With `copy_a`, a streamed A
    /// whose slices `cp.async` can copy (aligned chunks, zero padding, the
    /// element size of `kind`'s buffer) is copied rather than read
    /// ([`Slices::copy`]).
    pub fn new(
        l: &mut Lowerer,
        (a, b): (&Source, &Source),
        rank: usize,
        ks: i64,
        copy_a: Option<Kind>,
    ) -> Result<Slices, LowerError> {
        let copier = match (a, copy_a) {
            (Source::Streamed(s), Some(kind)) => Copier::new(l, s, rank - 1, ks, kind)?,
            _ => None,
        };
        let mut reader = |src: &Source, kdim: usize| match src {
            Source::Streamed(s) => Reader::new(l, s, kdim, ks).map(Some),
            Source::Tile(_) => Ok(None),
        };
        let ra = if copier.is_some() {
            None
        } else {
            reader(a, rank - 1)?
        };
        Ok(Slices {
            readers: [ra, reader(b, rank - 2)?],
            copier,
        })
    }

    /// Whether A's slices are copied with `cp.async` (its slice then comes
    /// from [`Slices::copy`], not [`Slices::next`]).
    pub fn copies_a(&self) -> bool {
        self.copier.is_some()
    }

    /// Reads the next slice of each streamed operand read into registers.
    pub fn next(&mut self, l: &mut Lowerer) -> Result<[Option<Tile>; 2], LowerError> {
        let mut out = [None, None];
        for (o, r) in out.iter_mut().zip(&mut self.readers) {
            if let Some(r) = r {
                *o = Some(r.next(l)?);
            }
        }
        Ok(out)
    }

    /// Copies A's next slice into `to` (its offset, byte strides and
    /// swizzle) with `cp.async`, as one committed group; nothing when A is
    /// not copied. The copies land once `cp.async.wait_group` says so.
    pub fn copy(&mut self, l: &mut Lowerer, to: Option<CopyDest>) {
        if let (Some(c), Some(to)) = (&mut self.copier, to) {
            c.copy(l, to);
            crate::lower::emit::copies::cp_async::commit(l);
        }
    }
}

/// Walks one streamed operand's K slices, in order: the view with the
/// slice's tile shape, its coalesced layout (runs of up to 16 bytes along
/// the dimension memory runs along) and an access that moves a slice along
/// K at a time (the addresses of a slice are the last one's plus a
/// constant).
struct SliceWalk {
    load: OpId,
    /// The view, with the slice's tile shape.
    part: PartitionInfo,
    /// The layout over the load's tile dimensions.
    layout: LinearLayout,
    access: Access,
    /// Leading dimensions of 1 the operand drops.
    lead: usize,
    /// The load's tile dimension along K.
    d: usize,
    ks: i64,
    /// A slice's length times the stride along K in bytes, when dynamic.
    step: Option<Reg>,
    /// Whether a slice was taken.
    started: bool,
}

impl SliceWalk {
    /// The slice's view, layout and K dimension of `s`'s slices of `ks`
    /// along operand dimension `kdim` (nothing emitted).
    fn plan(
        l: &Lowerer,
        s: &Streamed,
        kdim: usize,
        ks: i64,
    ) -> (PartitionInfo, LinearLayout, usize) {
        let mut part = s.part.clone();
        let d = s.lead + kdim;
        part.tile_shape[d] = ks;
        let rank = part.tile_shape.len();
        let eb = i64::from(part.elem.bits() / 8);
        let run = (STORE_BYTES / eb).min(part.tile_shape[rank - 1]);
        let layout = (*along_vec(&part.tile_shape, rank - 1, l.plan.warps, run)).clone();
        (part, layout, d)
    }

    /// The walk over `s`'s slices as [`SliceWalk::plan`] laid them out.
    fn start(
        l: &mut Lowerer,
        s: &Streamed,
        (part, layout, d): (PartitionInfo, LinearLayout, usize),
        ks: i64,
    ) -> Result<SliceWalk, LowerError> {
        let access = prepare(l, s.load, &part, &s.index, &layout)?;
        let step = access.step(l, d, ks);
        Ok(SliceWalk {
            load: s.load,
            part,
            layout,
            access,
            lead: s.lead,
            d,
            ks,
            step,
            started: false,
        })
    }

    /// Moves the access to the next slice (the first: where it is).
    fn next(&mut self, l: &mut Lowerer) {
        if self.started {
            self.access.advance(l, self.d, self.ks, self.step);
        }
        self.started = true;
    }
}

/// Copies one streamed operand's K slices global-to-shared with
/// `cp.async`, in order: each thread copies chunks of up to 16 bytes along
/// the dimension memory runs along, zero-filling what lies out of bounds
/// (a chunk straddling a row's end copies its in-bounds part). No register
/// holds the data.
struct Copier {
    walk: SliceWalk,
    /// Elements per chunk.
    chunk: i64,
}

impl Copier {
    /// The copier of `s`'s slices of `ks` along operand dimension `kdim`,
    /// if `cp.async` can copy them into `kind`'s buffers.
    fn new(
        l: &mut Lowerer,
        s: &Streamed,
        kdim: usize,
        ks: i64,
        kind: Kind,
    ) -> Result<Option<Copier>, LowerError> {
        let (part, layout, d) = SliceWalk::plan(l, s, kdim, ks);
        let rank = part.tile_shape.len();
        let eb = i64::from(part.elem.bits() / 8);
        if eb != kind.bytes()
            || crate::lower::analysis::view::load_padding(part.padding) != crate::ir::Padding::Zero
        {
            return Ok(None);
        }
        let Some(chunk) =
            crate::lower::plan::copies::pipeline::chunk_along(l.plan, &part, rank - 1, &[16, 8, 4])
        else {
            return Ok(None);
        };
        // A chunk's elements are consecutive registers along the row.
        let bits = chunk.trailing_zeros() as usize;
        let along_row = (0..bits).all(|k| {
            layout.register.get(k).is_some_and(|b| {
                b.iter()
                    .enumerate()
                    .all(|(i, &x)| x == if i == rank - 1 { 1 << k } else { 0 })
            })
        });
        if !along_row || !crate::lower::plan::layout::disjoint(&layout) {
            return Ok(None);
        }
        let walk = SliceWalk::start(l, s, (part, layout, d), ks)?;
        Ok(Some(Copier { walk, chunk }))
    }

    fn copy(&mut self, l: &mut Lowerer, to: CopyDest) {
        self.walk.next(l);
        let w = &mut self.walk;
        let lead = w.lead;
        let byte =
            |b: &[i64]| -> i64 { b[lead..].iter().zip(to.strides).map(|(x, s)| x * s).sum() };
        let layout = &w.layout;
        let (start, smem) =
            crate::lower::emit::copies::address::thread_address_from(l, layout, to.off, byte);
        let swizzled = to.swizzle.map(|sw| Swizzled::new(l, sw, start, smem));
        let eb = i64::from(w.part.elem.bits() / 8);
        let bytes = self.chunk * eb;
        let rank = w.part.tile_shape.len();
        let owner = l.owner_pred(layout);
        if let Some(q) = owner {
            l.b.begin_if(q, true);
        }
        for r in (0..layout.num_registers()).step_by(self.chunk as usize) {
            if layout.canonical_register(r) != r {
                continue;
            }
            let c = layout.apply(r, 0);
            let imm = layout.register_offset(r, byte);
            let from = chunk_source(l, &mut w.access, &c, r);
            let size = chunk_bytes(l, &mut w.access, &c, None, rank - 1, (self.chunk, eb));
            let dst = match &swizzled {
                Some(s) => s.addr(l, imm),
                None => Operand::Addr(smem, imm),
            };
            cp_async(l, dst, from, bytes, size);
        }
        if owner.is_some() {
            l.b.end_if();
        }
    }
}

/// Reads one streamed operand's K slices, in order: each a tile of the
/// operand's shape but the slice's length along K, each thread holding
/// runs of up to 16 bytes along the dimension memory runs along (stored to
/// shared memory as one vector).
struct Reader {
    walk: SliceWalk,
    /// The walk's layout over the operand's dimensions.
    operand: Rc<LinearLayout>,
}

impl Reader {
    fn new(l: &mut Lowerer, s: &Streamed, kdim: usize, ks: i64) -> Result<Reader, LowerError> {
        let planned = SliceWalk::plan(l, s, kdim, ks);
        let walk = SliceWalk::start(l, s, planned, ks)?;
        // The operand's layout: the same bases without the leading 1s.
        let (layout, lead) = (&walk.layout, s.lead);
        let drop = |bases: &[Vec<i64>]| -> Vec<Vec<i64>> {
            bases.iter().map(|b| b[lead..].to_vec()).collect()
        };
        let operand = Rc::new(LinearLayout {
            shape: walk.part.tile_shape[lead..].to_vec(),
            register: drop(&layout.register),
            lane: drop(&layout.lane),
            warp: drop(&layout.warp),
        });
        Ok(Reader { walk, operand })
    }

    fn next(&mut self, l: &mut Lowerer) -> Result<Tile, LowerError> {
        self.walk.next(l);
        let w = &mut self.walk;
        let regs = read_at(l, w.load, &w.part, &w.layout, &mut w.access, &[])?;
        Ok(Tile {
            elem: w.part.elem,
            layout: self.operand.clone(),
            regs,
        })
    }
}
