//! B operands copied straight from global to shared memory: a tensor-view
//! load whose only user is the B operand of an `mma.sync` product that
//! multiplies A from registers never passes through registers; where the
//! load stands, each thread issues `cp.async` copies of 16-byte chunks
//! into the product's B buffer.
use crate::ir::{Module, OpId, Opcode, Padding, ValueId};
use crate::lower::analysis::values::value_tile;
use crate::lower::analysis::view::{partition, PartitionInfo};
use crate::lower::plan::copies::pipeline::{chunk_along, weak};
use crate::lower::plan::engines::mma_sync::{a_fragment_layout, Kind};
use crate::lower::plan::engines::Engine;
use crate::lower::plan::Plan;

/// A load copied straight into its product's B buffer.
#[derive(Clone, Debug)]
pub struct Direct {
    /// The product that reads the buffer.
    pub product: OpId,
    /// The view and partition the load reads.
    pub view: PartitionInfo,
    /// The tile dimension the copies run along.
    pub along: usize,
    /// Elements a copy.
    pub chunk: i64,
}

/// The single user of `v` in the whole module, if it has one use.
pub fn only_user(m: &Module, v: ValueId) -> Option<OpId> {
    let mut user = None;
    for id in m.walk() {
        let uses = m.ops[id].operands.iter().filter(|&&o| o == v).count();
        if uses == 0 {
            continue;
        }
        if uses > 1 || user.is_some() {
            return None;
        }
        user = Some(id);
    }
    user
}

/// The load `load` as a direct B copy, if it is one: a weak, zero-padded
/// tensor-view load of 16-bit elements whose tile (leading dimensions of 1
/// aside) is the B operand of an `mma.sync` product in the same block that
/// multiplies A from registers, copyable in aligned 16-byte chunks along N
/// or K.
pub fn direct(m: &Module, plan: &Plan, load: OpId) -> Option<Direct> {
    let o = &m.ops[load];
    if plan.target.always_swizzle || !weak(m, load) {
        return None;
    }
    let p = partition(m, o.operand("view")?)?;
    if p.sparse_dim.is_some()
        || p.elem.bits() != 16
        || crate::lower::analysis::view::load_padding(p.padding) != Padding::Zero
    {
        return None;
    }
    let res = *o.results.first()?;
    let mut v = res;
    let mut user = only_user(m, v)?;
    if m.ops[user].opcode == Opcode::Reshape {
        v = *m.ops[user].results.first()?;
        user = only_user(m, v)?;
    }
    let mo = &m.ops[user];
    if mo.opcode != Opcode::MmaF || mo.operand("rhs") != Some(v) || mo.operand("lhs") == Some(v) {
        return None;
    }
    let Some(Engine::MmaSync(mplan)) = plan.engine(user) else {
        return None;
    };
    let (bshape, _) = value_tile(m, v)?;
    let (ashape, _) = value_tile(m, mo.operand("lhs")?)?;
    if mplan.kind != Kind::Half || mplan.sliced || bshape.len() != 2 {
        return None;
    }
    let frag = a_fragment_layout(mplan, &ashape)?;
    if !plan
        .layouts
        .get(&mo.operand("lhs")?)
        .is_some_and(|l| **l == frag)
    {
        return None;
    }
    // The tile is B's shape with leading 1s.
    let rank = p.tile_shape.len();
    if rank < 2
        || p.tile_shape[rank - 2..] != bshape[..]
        || p.tile_shape[..rank - 2].iter().any(|&d| d != 1)
    {
        return None;
    }
    // Both in the same block, the load first.
    let block = crate::lower::analysis::chains::enclosing_block(m, load)?;
    if !block.ops.contains(&user) {
        return None;
    }
    let (cd, chunk) = [rank - 1, rank - 2]
        .into_iter()
        .find_map(|cd| Some((cd, chunk_along(plan, &p, cd, &[16])?)))?;
    Some(Direct {
        product: user,
        view: p,
        along: cd,
        chunk,
    })
}
