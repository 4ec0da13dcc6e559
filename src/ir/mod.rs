//! The in-memory TileIR: modules, ops, types and attributes in arenas.
//!
//! Entities live in [`Arena`]s inside the [`Module`] and refer to each other
//! by typed [`Handle`]s: [`TypeId`], [`ValueId`], [`OpId`], [`DebugId`].
//! [`Module::walk`] visits every op in order; [`Op::name`] gives the MLIR
//! name (`cuda_tile.addf`); [`Module::location`] the op's source location.
//! [`print::print_module`] renders the module as NVIDIA's `tileirdisasm` does.
pub mod arena;
pub mod attr;
pub mod debug;
mod float;
pub mod module;
pub mod op;
pub mod opcode;
pub mod print;
pub mod types;

pub use arena::{Arena, Handle};
pub use attr::{Attr, EnumKind};
pub use debug::{DebugAttr, DebugId};
pub use module::{Module, Version, Walk};
pub use op::{Block, Op, OpId, Region, Segment, Value, ValueDef, ValueId};
pub use opcode::Opcode;
pub use types::{Padding, Scalar, Type, TypeId, DYNAMIC};
