//! The TileIR verifier: proves a module read from bytecode obeys the rules of
//! the TileIR dialect before it is lowered.
//!
//! A module that passes [`verify`] is the lowering's contract: the lowering
//! may rely on every rule listed here (and `expect("verified: ...")` on
//! them); anything else it must check itself. Failures are reported with
//! NVIDIA's wording (`'cuda_tile.divi' op rounding mode 'negative_inf' is not
//! allowed with 'unsigned' flag`), at the op's debug location and bytecode
//! offset. Every op is checked; the first broken rule of each op is reported
//! (as MLIR does), so one call lists the errors of all ops. Within an op the
//! rules run in NVIDIA's order as far as it is known: result count, region
//! structure, operand and result type classes, type relations (the
//! dialect's predicates before the generic "same shape" / "same element
//! type" traits), then op-specific rules; the terminators its blocks end in
//! (and a `for`'s ban on `return`) only after its nested ops, as MLIR checks
//! region rules on the way out, so the first error listed is the one
//! NVIDIA's verifier stops at. Debug-info rules of a function body report
//! its first offending op.
//!
//! # Rules
//!
//! **Handles** ([`handles`], fatal: nothing else runs if one fails)
//! - every type, value, op and debug handle is in range, including those
//!   inside types and attributes; type and debug-attribute references are
//!   acyclic;
//! - every op appears exactly once in the op tree (no sharing, no cycles);
//! - every value is defined exactly once, by the op result or block argument
//!   its [`ValueDef`](crate::ir::ValueDef) names;
//! - operand segments lie within the operand list;
//! - every operand is defined before its use: earlier in the same block, as an
//!   argument of an enclosing block, or earlier in an enclosing block (the
//!   single-block regions nest; values never escape a region).
//!
//! **Types** ([`types`]): every type the module uses (by a value or an
//! attribute, directly or inside another type; NVIDIA checks these while
//! reading, and the messages are its own)
//! - tiles hold numbers or pointers; dimensions are positive powers of two,
//!   at most 2^24 elements; `f4E2M1FN` tiles have an even dimension;
//! - pointers point to numbers; tensor views have as many strides as
//!   dimensions, all positive or dynamic;
//! - partition/strided/gather-scatter views: non-empty power-of-two tile
//!   shape of the tensor view's rank, a dim map that is a permutation,
//!   positive traversal strides, special padding only for floats;
//! - each op has the number of results its kind fixes, and optional operand
//!   groups (`mask`, `token`, `paddingValue`) hold at most one value;
//! - each op's operands and results have the type classes the dialect
//!   declares (`tile of f16 or bf16 or f32 or f64 values`, ...), and the
//!   dialect's "all types match" / "same shape" / "same element type" /
//!   "same rank" relations hold (binary ops, comparisons returning `i1`
//!   tiles of the operand shape, select, conversions, offset, loads/stores
//!   whose value type is the pointee of the pointer tile, tokens).
//!
//! **Ops** ([`ops`])
//! - rounding modes allowed per op (`addf`/`subf`/`mulf`/`fma`: IEEE modes;
//!   `divf`: IEEE, `approx`, `full`; `sqrt`: IEEE, `approx`; `exp`/`tanh`:
//!   `approx`, `full`; `divi`: `zero`, `negative_inf`, `positive_inf`, and
//!   never `negative_inf` with `unsigned`; `ftoi`: `nearest_int_to_zero`;
//!   `itof`: `nearest_even`; `ftof` by conversion: to `f8E8M0FNU` `zero` or
//!   `positive_inf`, to other 8/4-bit floats `nearest_even`, widening the IEEE
//!   modes or `nearest_away`, `f64`→`f32` the IEEE modes, `f32`→`tf32`
//!   `nearest_even`, `zero` or `nearest_away`, other narrowing `nearest_even`
//!   or `zero`);
//! - `flush_to_zero`, `approx` and `full` only on `f32`;
//! - `negi` without `nuw`; `exti` widens, `trunci` narrows, `ftof` changes
//!   type, `bitcast` keeps the width; `iota` is 1-d and fits its element type;
//! - loads: `weak`, `relaxed` or `acquire`; stores: `weak`, `relaxed` or
//!   `release`; weak accesses have no scope, the others need one; atomics:
//!   `relaxed`, `acquire`, `release` or `acq_rel`; RMW modes match the element
//!   type; CAS on 32/64-bit numbers; view reductions: relaxed, no `sys`, no
//!   `xchg`, no padding, tile shape equal to the value's;
//! - views: index counts and index types, tile type from the view type,
//!   `inbounds` flags one per index, `make_tensor_view` pointee, pointer
//!   attribute kept from the base, and dynamic operand counts,
//!   `make_partition_view` tensor-view type, `get_tensor_shape` and
//!   `get_index_space_shape` result counts;
//! - shape ops: `broadcast`, `cat`, `permute`, `reshape`, `extract`,
//!   `insert`, `pack`/`unpack`, `mmaf`/`mmai`/`mmaf_scaled` shapes, element
//!   types and block-scale factors;
//! - `reduce`/`scan`: operand/result/identity counts and types, `dim` in
//!   range, body with two rank-0 tile arguments per operand, ending in a
//!   `yield` of one value per operand of the operand element type; only
//!   memory-effect-free ops inside (no loads, stores, atomics, prints,
//!   asserts, assumes, allocas, fences; regions count by their contents);
//! - `for`: induction variable of the bound type, iteration values matching
//!   inits and results, no views carried; `loop` likewise; `if`: `i1`
//!   condition, branch yields matching the results, an else branch when there
//!   are results;
//! - `break` only inside `loop` (through `if`s) with the loop's result types;
//!   `continue` inside `for` or `loop` (through `if`s) with the carried types;
//!   `return` only in an entry (through `if`s and `loop`s, never a `for`),
//!   with no operands;
//! - `assume` predicates fit the value: `div_by` a power of two (at most
//!   2^62) on integer/pointer tiles or tensor views, `every`/`along` together,
//!   in range, not on 0-d tiles or views; `bounded` on integer tiles, bounds
//!   within the element type and ordered; `same_elements` one value per
//!   dimension, each within it;
//! - entries return nothing, are public and take rank-0 tiles; `join_tokens` takes two
//!   or more tokens; `print_tko` format matches its operands; `get_global`
//!   names a global of the pointee type; globals are rank 1; `alloca`
//!   alignment is a power of two at least the element size.
//!
//! **Debug info** (`debuginfo`)
//! - a function location is not a call site; with a scope, the scope is a
//!   `di_subprogram` whose linkage name is the function's name;
//! - ops of a function without scope have none; an op's subprogram (through
//!   lexical blocks and call-site callers) is its function's;
//! - globals have no scope.
//!
//! **Regions** ([`regions`])
//! - each op has the number of regions its kind requires, each with exactly
//!   one block (an `if` may have an empty else region);
//! - every block ends in a terminator its parent allows (`return` in entries,
//!   `continue` in `for`, `continue`/`break`/`return` in `loop`, `yield`, `break`,
//!   `continue` or `return` in `if`, `yield` in `reduce`/`scan`), and
//!   terminators appear nowhere else (a block ending in a non-terminator is
//!   reported as NVIDIA does, "block with no terminator, has `<op>`", where the
//!   op's generic form is known);
//! - module bodies hold only globals and entries, and those appear nowhere
//!   else; their symbol names are distinct;
//! - an entry's block arguments match its function type.
//!
//! **Format invariants** ([`invariants`], checked after everything above,
//! reported as malformed bytecode rather than a verification failure)
//! - every entry argument is a tile.
use crate::diag::Diagnostic;
use crate::ir::{Module, OpId, Opcode};

mod debuginfo;
mod fmt;
pub mod handles;
pub mod invariants;
pub mod ops;
pub mod regions;
mod tree;
pub mod types;

pub(crate) use tree::Tree;

/// Why one op failed, in the words of NVIDIA's verifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Fail {
    /// `'cuda_tile.<op>' op <text>`.
    Op(String),
    /// A message printed without the op prefix.
    Plain(String),
    /// Several `'cuda_tile.<op>' op <text>` messages for the same op.
    Ops(Vec<String>),
}

/// The outcome of one rule on one op.
pub(crate) type Check = Result<(), Fail>;

/// An op-prefixed failure.
#[cold]
pub(crate) fn op_err(msg: impl Into<String>) -> Fail {
    Fail::Op(msg.into())
}

/// Collected diagnostics of one verification.
pub(crate) struct Errors<'m> {
    module: &'m Module,
    list: Vec<Diagnostic>,
}

impl<'m> Errors<'m> {
    fn new(module: &'m Module) -> Self {
        Errors {
            module,
            list: Vec::new(),
        }
    }

    /// Records `fail` against `op`.
    pub(crate) fn at_op(&mut self, op: OpId, fail: Fail) {
        let (name, offset) = match self.module.ops.try_get(op) {
            Some(o) => (o.name(), Some(o.offset)),
            None => ("cuda_tile.<invalid>".to_string(), None),
        };
        let messages = match fail {
            Fail::Op(m) => vec![format!("'{name}' op {m}")],
            Fail::Plain(m) => vec![m],
            Fail::Ops(ms) => ms.into_iter().map(|m| format!("'{name}' op {m}")).collect(),
        };
        for message in messages {
            let mut d = Diagnostic::error(message).at(self.module.location(op));
            d.offset = offset;
            self.list.push(d);
        }
    }

    /// Records a module-level error with an optional bytecode offset.
    pub(crate) fn plain(&mut self, message: impl Into<String>, offset: Option<usize>) {
        let mut d = Diagnostic::error(message);
        d.offset = offset;
        self.list.push(d);
    }

    fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// Checks `module` against the rules of the TileIR specification (listed in
/// this module's documentation); returns every error found.
pub fn verify(module: &Module) -> Result<(), Vec<Diagnostic>> {
    let mut errors = Errors::new(module);
    handles::check(module, &mut errors);
    if !errors.is_empty() {
        return Err(errors.list);
    }
    let tree = Tree::build(module);
    types::check_type_table(module, &mut errors);
    if !errors.is_empty() {
        return Err(errors.list);
    }
    // Ops in order, each checked on the way in, and its blocks' terminators
    // on the way out, after its nested ops (MLIR's order, so the first
    // error is the one NVIDIA's verifier stops at).
    let mut stack: Vec<(OpId, bool)> = module.body.ops.iter().rev().map(|&o| (o, false)).collect();
    let mut failed = vec![false; module.ops.len()];
    while let Some((op, leaving)) = stack.pop() {
        if leaving {
            if !failed.get(op.index()).copied().unwrap_or(true) {
                let exit = regions::check_region_ends(module, &tree, op)
                    .and_then(|()| ops::check_on_exit(module, op));
                if let Err(fail) = exit {
                    errors.at_op(op, fail);
                }
            }
            continue;
        }
        let result = types::check_result_count(module, op)
            .and_then(|()| regions::check_op(module, &tree, op))
            .and_then(|()| types::check_op(module, op))
            .and_then(|()| ops::check_op(module, &tree, op))
            .and_then(|()| regions::check_unterminated(module, &tree, op));
        if let Err(fail) = result {
            errors.at_op(op, fail);
            if let Some(f) = failed.get_mut(op.index()) {
                *f = true;
            }
        }
        stack.push((op, true));
        if let Some(o) = module.ops.try_get(op) {
            for region in o.regions.iter().rev() {
                for block in region.blocks.iter().rev() {
                    stack.extend(block.ops.iter().rev().map(|&c| (c, false)));
                }
            }
        }
    }
    for &top in module.top_level() {
        if module.ops[top].opcode == Opcode::Entry {
            if let Some((op, fail)) = debuginfo::check_function_body(module, top) {
                errors.at_op(op, fail);
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.list)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_module_verifies() {
        assert_eq!(verify(&Module::default()), Ok(()));
    }
}
