//! TMA copies of a pipelined loop's operand tiles into a stage: one thread
//! issues each tile's boxes (`cp.async.bulk.tensor`) from the tensor map
//! the host callbacks write at launch, and they complete on the stage's
//! full mbarrier, which that thread told how many bytes to expect
//! (`mbarrier.arrive.expect_tx`). The boxes land swizzled where the
//! operand's layout puts each element (the plan checked it,
//! [`crate::lower::plan::copies::tma::tma_copy`]); elements outside
//! the tensor are zero, as the tile's zero padding asks.
use smallvec::smallvec;

use crate::ir::ValueId;
use crate::lower::emit::context::Lowerer;
use crate::lower::emit::copies::address::bin;
use crate::lower::emit::ops::view_access::tile_start;
use crate::lower::error::LowerError;
use crate::lower::plan::copies::load::Load;
use crate::lower::plan::copies::tma::TmaCopy;
use crate::ptx::{Inst, Opc, Operand, Reg, RegClass, Ty};

/// One operand's TMA copy as the loop issues it.
#[derive(Debug)]
struct TmaOperand {
    /// The map's generic address.
    map: Reg,
    /// The tile's start (s64) along each tile dimension the induction
    /// variable does not index (the map's dimensions are the tile's).
    start: Vec<Option<Reg>>,
    /// The tile dimension the induction variable indexes, and the elements
    /// one induction step moves along it.
    along: (usize, i64),
    /// The plan's boxes.
    copy: TmaCopy,
    /// Byte offset of the operand's buffer in a stage.
    at: i64,
}

/// The TMA copies of a pipelined loop's operands (or of one operand
/// copied straight into its product's buffer).
#[derive(Debug)]
pub(crate) struct TmaStage {
    operands: Vec<TmaOperand>,
    /// Bytes one stage's boxes deliver.
    bytes: i64,
}

impl TmaStage {
    /// The copies of `loads` (with their plans and their buffers' byte
    /// offsets in a stage), indexed by the induction variable `iv`: the maps'
    /// addresses and the loop-invariant tile starts, computed once.
    pub(crate) fn new(
        l: &mut Lowerer,
        loads: &[(&Load, &TmaCopy, i64)],
        iv: ValueId,
    ) -> Result<TmaStage, LowerError> {
        let mut operands = Vec::new();
        for &(ld, copy, at) in loads {
            let map = l.tensor_map(&copy.map);
            let dim = ld.index.iter().position(|&v| v == iv).unwrap_or(0);
            let mut start = vec![None; ld.index.len()];
            for (t, s) in start.iter_mut().enumerate() {
                if t != dim {
                    *s = Some(tile_start(l, ld.op, ld.index[t], ld.view.steps[t], None)?);
                }
            }
            operands.push(TmaOperand {
                map,
                start,
                along: (dim, ld.view.steps[dim]),
                copy: copy.clone(),
                at,
            });
        }
        let bytes = operands.iter().map(|o| o.copy.bytes).sum();
        Ok(TmaStage { operands, bytes })
    }

    /// Issues the tiles of iteration `iteration` (the induction value, of
    /// type `ity`) into the stage at shared address `stage`, completing on
    /// the mbarrier at `full`. Run by one thread.
    pub(crate) fn issue(
        &self,
        l: &mut Lowerer,
        stage: Reg,
        full: Reg,
        (iteration, ity): (Reg, Ty),
    ) {
        let count = l.b.op(
            Opc::Mov,
            &[],
            &[Ty::B32],
            Ty::B32,
            smallvec![Operand::Imm(self.bytes)],
        );
        let state = l.b.reg(RegClass::B64);
        l.b.push(Inst::new(
            Opc::Mbarrier,
            &["arrive", "expect_tx", "shared"],
            &[Ty::B64],
            smallvec![Operand::Reg(state)],
            smallvec![Operand::Addr(full, 0), Operand::Reg(count)],
        ));
        let it = match ity {
            Ty::S64 => iteration,
            _ => l.b.op(
                Opc::Cvt,
                &[],
                &[Ty::S64, ity],
                Ty::S64,
                smallvec![Operand::Reg(iteration)],
            ),
        };
        for o in &self.operands {
            let (dim, step) = o.along;
            let along = l.b.op(
                Opc::Mul,
                &["lo"],
                &[Ty::S64],
                Ty::S64,
                smallvec![Operand::Reg(it), Operand::Imm(step)],
            );
            let mut start = o.start.clone();
            start[dim] = Some(along);
            let rank = start.len();
            for b in &o.copy.boxes {
                // the map's coordinates, innermost first; the boxes move
                // along the last two map dimensions (the tile's last two,
                // swapped where the map is transposed)
                let coords: Vec<Reg> = (0..rank)
                    .rev()
                    .map(|j| {
                        let t = if o.copy.transposed && j + 2 >= rank {
                            2 * rank - 3 - j
                        } else {
                            j
                        };
                        let at = if j + 2 >= rank { b.at[j + 2 - rank] } else { 0 };
                        coordinate(l, start[t].expect("every dimension starts"), at)
                    })
                    .collect();
                let dst = bin(l, Opc::Add, Ty::U32, stage, Operand::Imm(o.at + b.dst));
                l.b.push(Inst::new(
                    Opc::CpBulkTensor,
                    &[
                        DIMS[rank - 1],
                        "shared::cta",
                        "global",
                        "tile",
                        "mbarrier::complete_tx::bytes",
                    ],
                    &[],
                    vec![],
                    smallvec![
                        Operand::Addr(dst, 0),
                        Operand::Reg(o.map),
                        Operand::Vec(coords),
                        Operand::Addr(full, 0),
                    ],
                ));
            }
        }
    }
}

/// The `cp.async.bulk.tensor` modifier of a map of 1 to 5 dimensions.
const DIMS: [&str; 5] = ["1d", "2d", "3d", "4d", "5d"];

/// The s32 coordinate `start + offset`, clamped to the s32 range (a
/// clamped coordinate stays outside the tensor, whose dims are s32, so its
/// elements read as zero).
fn coordinate(l: &mut Lowerer, start: Reg, offset: i64) -> Reg {
    let c = l.b.op(
        Opc::Add,
        &[],
        &[Ty::S64],
        Ty::S64,
        smallvec![Operand::Reg(start), Operand::Imm(offset)],
    );
    let c = l.b.op(
        Opc::Max,
        &[],
        &[Ty::S64],
        Ty::S64,
        smallvec![Operand::Reg(c), Operand::Imm(i64::from(i32::MIN))],
    );
    let c = l.b.op(
        Opc::Min,
        &[],
        &[Ty::S64],
        Ty::S64,
        smallvec![Operand::Reg(c), Operand::Imm(i64::from(i32::MAX))],
    );
    l.b.op(
        Opc::Cvt,
        &[],
        &[Ty::S32, Ty::S64],
        Ty::S32,
        smallvec![Operand::Reg(c)],
    )
}

impl TmaStage {
    /// `prefetch.tensormap` of each map, as NVIDIA's code does before its
    /// first copies: the maps into the cache the TMA reads them from. Run
    /// by the thread that issues the copies.
    pub(crate) fn prefetch(&self, l: &mut Lowerer) {
        for o in &self.operands {
            l.b.push(Inst::new(
                Opc::Prefetch,
                &["tensormap"],
                &[],
                vec![],
                vec![Operand::Addr(o.map, 0)],
            ));
        }
    }
}

/// `fence.mbarrier_init.release.cluster`: mbarrier initializations visible
/// to the async proxy (the TMA's completions) before any copy is issued.
pub(crate) fn init_fence(l: &mut Lowerer) {
    l.b.push(Inst::new(
        Opc::Fence,
        &["mbarrier_init", "release", "cluster"],
        &[],
        vec![],
        vec![],
    ));
}
