//! Operations, values, blocks and regions.
use super::arena::Handle;
use super::attr::Attr;
use super::debug::DebugId;
use super::opcode::Opcode;
use super::types::TypeId;

/// A handle to an [`Op`] in [`super::Module::ops`].
pub type OpId = Handle<Op>;
/// A handle to a [`Value`] in [`super::Module::values`].
pub type ValueId = Handle<Value>;

/// Where a value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueDef {
    /// Result `index` of op `op`.
    Result {
        /// The defining op.
        op: OpId,
        /// Result index.
        index: u32,
    },
    /// Argument `index` of a block owned by region `region` of op `op`.
    BlockArg {
        /// The op owning the region.
        op: OpId,
        /// Region index within `op`.
        region: u32,
        /// Argument index.
        index: u32,
    },
}

/// An SSA value: its type and its definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Value {
    /// The value's type.
    pub ty: TypeId,
    /// Its definition.
    pub def: ValueDef,
}

/// A block: arguments and ops in order (the last op is the terminator).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Block {
    /// Block arguments.
    pub args: Vec<ValueId>,
    /// Ops in order.
    pub ops: Vec<OpId>,
}

/// A region: a list of blocks (TileIR regions have exactly one).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Region {
    /// The blocks.
    pub blocks: Vec<Block>,
}

/// A named group of operands, as declared by the op (`lhs`, `index`, `token`).
/// An absent optional operand is a segment of length 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The operand group's name from the dialect definition.
    pub name: &'static str,
    /// First operand index in [`Op::operands`].
    pub start: u32,
    /// Number of operands in the group.
    pub len: u32,
}

/// One operation.
///
/// Attributes keep the dialect's names (`rounding_mode`, `flush_to_zero`,
/// `memory_ordering_semantics`...); unit attributes from flag bits appear as
/// [`Attr::Unit`] only when set. An entry function is an op with opcode
/// [`Opcode::Entry`], attributes `sym_name`, `function_type` and
/// `optimization_hints`, and one region whose block arguments are the
/// parameters. A global is an op with opcode [`Opcode::Global`].
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    /// What the op is.
    pub opcode: Opcode,
    /// Result values, in order.
    pub results: Vec<ValueId>,
    /// Operand values, in order (all segments concatenated).
    pub operands: Vec<ValueId>,
    /// Operand groups in declaration order.
    pub segments: Vec<Segment>,
    /// Attributes, in bytecode order.
    pub attrs: Vec<(&'static str, Attr)>,
    /// Nested regions.
    pub regions: Vec<Region>,
    /// Absolute byte offset of the op's opcode in the bytecode.
    pub offset: usize,
    /// Debug location attribute, if the bytecode has one for this op.
    pub debug: Option<DebugId>,
}

impl Op {
    /// The full MLIR name, e.g. `cuda_tile.addf`.
    pub fn name(&self) -> String {
        format!("cuda_tile.{}", self.opcode.mnemonic())
    }

    /// The attribute called `name`, if present.
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|(n, _)| *n == name).map(|(_, a)| a)
    }

    /// Whether the unit (or true boolean) attribute `name` is set.
    pub fn has_flag(&self, name: &str) -> bool {
        matches!(self.attr(name), Some(Attr::Unit) | Some(Attr::Bool(true)))
    }

    /// The operands of the group called `name` (empty if absent).
    pub fn operand_group(&self, name: &str) -> &[ValueId] {
        self.segments
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| {
                self.operands
                    .get(s.start as usize..(s.start as usize + s.len as usize))
            })
            .unwrap_or(&[])
    }

    /// The single operand of group `name`, if the group has exactly one.
    pub fn operand(&self, name: &str) -> Option<ValueId> {
        match self.operand_group(name) {
            [v] => Some(*v),
            _ => None,
        }
    }

    /// The ops of the first block of the first region (a loop's or a
    /// function's body); none for an op without regions.
    pub fn body_ops(&self) -> &[OpId] {
        self.regions
            .first()
            .and_then(|r| r.blocks.first())
            .map_or(&[], |b| b.ops.as_slice())
    }

    /// A `for` op's lower bound, upper bound and step, where all three are
    /// there.
    pub fn for_bounds(&self) -> Option<(ValueId, ValueId, ValueId)> {
        Some((
            self.operand("lowerBound")?,
            self.operand("upperBound")?,
            self.operand("step")?,
        ))
    }
}
