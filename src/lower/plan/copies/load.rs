//! An operand load the plan copies into shared memory: by a pipelined
//! loop's ring ([`super::pipeline`]), straight into its product's buffer
//! ([`super::direct`]), by `cp.async` or by TMA ([`super::tma`]).
use crate::ir::{OpId, ValueId};
use crate::lower::analysis::view::PartitionInfo;

/// One operand load of a pipelined loop's body.
#[derive(Clone, Debug)]
pub struct Load {
    /// The load op.
    pub op: OpId,
    /// The view and partition it reads.
    pub view: PartitionInfo,
    /// Its index operands.
    pub index: Vec<ValueId>,
    /// Elements per `cp.async` chunk (of 4, 8 or 16 bytes), or none where
    /// no such chunk is aligned: the threads then load the tile through
    /// registers ([`super::pipeline::StageCopy::Threads`]).
    pub chunk: Option<i64>,
}
