//! The in-memory TileIR: modules, ops, types and attributes in arenas.

/// A TileIR module.
#[derive(Debug, Default)]
pub struct Module {}
