//! The op tree's parent links, built once handles are known to be sound.
use crate::ir::{Attr, Module, OpId};
use std::collections::HashMap;

/// Where each op sits: its parent op (none for top-level ops) and the region
/// index within that parent.
pub(crate) struct Tree {
    parent: Vec<Option<(OpId, u32)>>,
    /// The first top-level op defining each symbol name.
    symbols: HashMap<String, OpId>,
}

impl Tree {
    /// Builds the parent links of the ops reachable from the module body
    /// (handles already checked, so each appears once).
    pub(crate) fn build(module: &Module) -> Self {
        let mut parent = vec![None; module.ops.len()];
        for id in module.walk() {
            let Some(op) = module.ops.try_get(id) else {
                continue;
            };
            for (r, region) in op.regions.iter().enumerate() {
                for block in &region.blocks {
                    for child in &block.ops {
                        if let Some(slot) = parent.get_mut(child.index()) {
                            *slot = Some((id, r as u32));
                        }
                    }
                }
            }
        }
        let mut symbols = HashMap::new();
        for &id in module.top_level() {
            if let Some(Attr::String(name)) =
                module.ops.try_get(id).and_then(|o| o.attr("sym_name"))
            {
                symbols.entry(name.clone()).or_insert(id);
            }
        }
        Tree { parent, symbols }
    }

    /// The first top-level op that defines symbol `name`.
    pub(crate) fn symbol(&self, name: &str) -> Option<OpId> {
        self.symbols.get(name).copied()
    }

    /// The op whose region holds `op`, with that region's index.
    pub(crate) fn parent(&self, op: OpId) -> Option<(OpId, u32)> {
        self.parent.get(op.index()).copied().flatten()
    }
}
