//! Memory tokens. A tile op runs on every thread of the tile block, each
//! doing its share of the elements, so a memory op ordered after another
//! through its `token` operand must wait until every thread has finished
//! that op: a `bar.sync` goes between them (it also orders the threads'
//! global and shared memory accesses). Needed when the earlier op wrote
//! memory, or when the later op writes memory the earlier one read; two
//! reads need nothing. Tokens carried by loops or out of `if`s are treated
//! as writes.
use crate::ir::OpId;
use crate::lower::analysis::memory::token_barrier;
use crate::lower::emit::context::Lowerer;

/// Emits the barrier memory op `id` needs after the ops its token names
/// ([`token_barrier`]).
pub fn order(l: &mut Lowerer, id: OpId) {
    if token_barrier(l.m, id) {
        l.barrier();
    }
}
