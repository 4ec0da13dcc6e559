//! The walk through a view load's move from the rows it reads into its
//! users' layout ([`crate::lower::plan::conversions::loads`]): made where
//! the whole tile fits the room left, by shuffles or through a buffer of
//! it; else the load reads in its users' layout.
use crate::ir::OpId;
use crate::lower::analysis::view::partition;
use crate::lower::plan::conversions::{Conversion, How};
use crate::lower::plan::engines::tile_bytes;

use super::choices::Choice;
use super::walk::{Unforeseen, Walk};

impl Walk<'_> {
    /// Load `id`'s move `c` from the rows it reads: left undone where its
    /// whole tile does not fit the room left, else by shuffles or through
    /// a buffer of the tile.
    pub(super) fn move_from_rows(&mut self, id: OpId, c: &Conversion) -> Result<(), Unforeseen> {
        let view = self.m.ops[id].operand("view");
        let Some(p) = view.and_then(|v| partition(self.m, v)) else {
            return Ok(());
        };
        if tile_bytes(&p.tile_shape, p.elem) > self.room() {
            self.choices.push(Choice::Unmoved { op: id });
            return Ok(());
        }
        match c.how {
            How::Shared { bytes } => self.convert(Some(id), c.value, bytes),
            _ => Ok(()),
        }
    }
}
