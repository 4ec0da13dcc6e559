//! The module: arenas for types, values, ops and debug info, plus the
//! top-level op list.
use super::arena::Arena;
use super::debug::{DebugAttr, DebugId};
use super::op::{Block, Op, OpId, Value};
use super::types::{Scalar, Type, TypeId};
use crate::diag::Location;

/// A bytecode version `major.minor[.tag]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Version {
    /// Major version (13).
    pub major: u8,
    /// Minor version.
    pub minor: u8,
    /// Tag (normally 0).
    pub tag: u16,
}

impl Version {
    /// A version.
    pub const fn new(major: u8, minor: u8, tag: u16) -> Self {
        Version { major, minor, tag }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.tag == 0 {
            write!(f, "{}.{}", self.major, self.minor)
        } else {
            write!(f, "{}.{}.{}", self.major, self.minor, self.tag)
        }
    }
}

/// A TileIR module (`cuda_tile.module @kernels`).
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// Bytecode version it was read from.
    pub version: Version,
    /// Module symbol name (always `kernels` for bytecode input).
    pub name: String,
    /// Producer string (producer section, 13.3+), if any.
    pub producer: Option<String>,
    /// Types; index = bytecode type-table index.
    pub types: Arena<Type>,
    /// All values.
    pub values: Arena<Value>,
    /// All ops (of every nesting level).
    pub ops: Arena<Op>,
    /// Debug-info attributes; index = bytecode debug index - 1.
    pub debug: Arena<DebugAttr>,
    /// The module body: globals then entry functions, in order.
    pub body: Block,
}

impl Module {
    /// Top-level ops (globals and entries), in order.
    pub fn top_level(&self) -> &[OpId] {
        &self.body.ops
    }

    /// Every op in pre-order (an op, then the ops of its regions), starting
    /// with the top-level ops in order.
    pub fn walk(&self) -> Walk<'_> {
        self.walk_from(&self.body.ops)
    }

    /// Every op of `ops` and of the regions nested in them, in pre-order.
    pub fn walk_from(&self, ops: &[OpId]) -> Walk<'_> {
        let mut stack: Vec<OpId> = ops.iter().rev().copied().collect();
        stack.shrink_to_fit();
        Walk {
            module: self,
            stack,
        }
    }

    /// The source location of `op` from debug info (innermost file/line/column).
    pub fn location(&self, op: OpId) -> Option<Location> {
        self.debug_location(self.ops.try_get(op)?.debug?)
    }

    /// Where the function holding `op` starts, as debuggers show a
    /// function's prologue: the `scopeLine` of the subprogram enclosing the
    /// op's location, column 0, in the location's file.
    pub fn scope_location(&self, op: OpId) -> Option<Location> {
        let mut id = self.ops.try_get(op)?.debug?;
        let mut file = None;
        for _ in 0..64 {
            match self.debug.try_get(id)? {
                DebugAttr::Loc {
                    scope, filename, ..
                } => {
                    file = Some(filename.clone());
                    id = *scope;
                }
                DebugAttr::CallSite { callee, .. } => id = *callee,
                DebugAttr::LexicalBlock { scope, .. } => id = *scope,
                DebugAttr::Subprogram { scope_line, .. } => {
                    return Some(Location {
                        file: file?,
                        line: u32::try_from(*scope_line).unwrap_or(u32::MAX),
                        column: 0,
                    })
                }
                _ => return None,
            }
        }
        None
    }

    /// The type of a value.
    pub fn value_type(&self, v: super::op::ValueId) -> &Type {
        &self.types[self.values[v].ty]
    }

    /// For every op (indexed by [`OpId::index`]), the op whose region holds
    /// it; `None` for top-level ops.
    pub fn parents(&self) -> Vec<Option<OpId>> {
        let mut parents = vec![None; self.ops.len()];
        for (id, op) in self.ops.iter() {
            for region in &op.regions {
                for block in &region.blocks {
                    for &child in &block.ops {
                        if let Some(p) = parents.get_mut(child.index()) {
                            *p = Some(id);
                        }
                    }
                }
            }
        }
        parents
    }

    /// The elements of a dense constant of tile type `ty` as raw bit
    /// patterns (zero-extended), one per element in row-major order; a splat
    /// buffer is expanded. `None` if `ty` is not a tile of a scalar type.
    /// `i1` buffers are one byte `0x00`/`0xFF` (splat) or packed bits.
    pub fn dense_elements(&self, ty: TypeId, data: &[u8]) -> Option<(Scalar, Vec<u64>)> {
        let Type::Tile { element, shape } = self.types.try_get(ty)? else {
            return None;
        };
        let Type::Scalar(s) = self.types.try_get(*element)? else {
            return None;
        };
        let mut n: usize = 1;
        for &d in shape {
            n = n.checked_mul(usize::try_from(d).ok()?)?;
        }
        Some((*s, super::print::dense_bits(*s, data, n)))
    }

    /// The source location a debug attribute stands for, if it has one.
    pub fn debug_location(&self, id: DebugId) -> Option<Location> {
        let mut id = id;
        // Bounded: debug attributes only point backwards or are checked acyclic.
        for _ in 0..64 {
            match self.debug.try_get(id)? {
                DebugAttr::Loc {
                    filename,
                    line,
                    column,
                    ..
                } => {
                    return Some(Location {
                        file: filename.clone(),
                        line: u32::try_from(*line).unwrap_or(u32::MAX),
                        column: u32::try_from(*column).unwrap_or(u32::MAX),
                    })
                }
                DebugAttr::CallSite { callee, .. } => id = *callee,
                _ => return None,
            }
        }
        None
    }
}

/// Pre-order iterator over a module's ops; see [`Module::walk`].
pub struct Walk<'m> {
    module: &'m Module,
    stack: Vec<OpId>,
}

impl Iterator for Walk<'_> {
    type Item = OpId;
    fn next(&mut self) -> Option<OpId> {
        let id = self.stack.pop()?;
        if let Some(op) = self.module.ops.try_get(id) {
            for region in op.regions.iter().rev() {
                for block in region.blocks.iter().rev() {
                    self.stack.extend(block.ops.iter().rev().copied());
                }
            }
        }
        Some(id)
    }
}
