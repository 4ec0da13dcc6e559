//! What the tile IR's memory ops do to memory.
use crate::ir::Opcode;

/// What a memory op does to memory.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Access {
    /// It reads memory.
    Read,
    /// It writes memory (an atomic reads and writes).
    Write,
}

/// What op kind `opcode` does to memory, if it is a memory op.
pub fn access(opcode: Opcode) -> Option<Access> {
    match opcode {
        Opcode::LoadPtrTko | Opcode::LoadViewTko => Some(Access::Read),
        Opcode::StorePtrTko
        | Opcode::StoreViewTko
        | Opcode::AtomicRMWTko
        | Opcode::AtomicCASTko
        | Opcode::AtomicRedViewTko => Some(Access::Write),
        _ => None,
    }
}

/// Whether op kind `opcode` writes memory.
pub fn writes(opcode: Opcode) -> bool {
    access(opcode) == Some(Access::Write)
}
