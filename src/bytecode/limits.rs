//! Limits checked before anything is allocated from a count in the input.

/// Largest input accepted, in bytes (1 GiB).
pub const MAX_INPUT_SIZE: usize = 1 << 30;
/// Most strings in the string table.
pub const MAX_STRINGS: u64 = 1 << 24;
/// Most types in the type table.
pub const MAX_TYPES: u64 = 1 << 24;
/// Most constants in the constant table.
pub const MAX_CONSTANTS: u64 = 1 << 24;
/// Most debug attributes.
pub const MAX_DEBUG_ATTRS: u64 = 1 << 24;
/// Most functions in a module.
pub const MAX_FUNCTIONS: u64 = 1 << 20;
/// Most globals in a module.
pub const MAX_GLOBALS: u64 = 1 << 20;
/// Most operands of one op.
pub const MAX_OPERANDS: u64 = 1 << 20;
/// Most results of one op.
pub const MAX_RESULTS: u64 = 1 << 16;
/// Most ops in one block.
pub const MAX_BLOCK_OPS: u64 = 1 << 24;
/// Most block arguments.
pub const MAX_BLOCK_ARGS: u64 = 1 << 16;
/// Most regions of one op.
pub const MAX_REGIONS: u64 = 16;
/// Most blocks in one region.
pub const MAX_BLOCKS: u64 = 1;
/// Deepest region nesting (ops within regions within ops).
pub const MAX_NESTING: usize = 64;
/// Deepest nesting of tagged attributes (arrays, dictionaries) and types.
pub const MAX_ATTR_DEPTH: usize = 32;
/// Longest chain of debug attributes (a location's scope, a call site's
/// caller and callee): cuTile writes one call site per inlined call, 109
/// deep in its own recursion test.
pub const MAX_DEBUG_DEPTH: usize = 1024;
/// Most dimensions of a shaped type.
pub const MAX_RANK: u64 = 64;
/// Most entries in an attribute array or dictionary.
pub const MAX_ATTR_ELEMS: u64 = 1 << 20;
