//! Negative verifier tests: real corpus modules mutated in memory, each
//! asserting NVIDIA's exact message and that the diagnostic points at the op
//! (its bytecode offset and debug location).
mod common;
use tileiras::ir::{Attr, EnumKind, Module, OpId, Opcode, Scalar, Type, TypeId};

fn load(name: &str, version: &str) -> Module {
    let path = common::corpus()
        .join(name)
        .join(format!("{name}.{version}.tileir"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    tileiras::bytecode::read(&bytes).expect("corpus module reads")
}

/// The `n`th op (pre-order) of kind `opcode`.
fn nth(m: &Module, opcode: Opcode, n: usize) -> OpId {
    m.walk()
        .filter(|id| m.ops[*id].opcode == opcode)
        .nth(n)
        .unwrap_or_else(|| panic!("no {opcode:?} #{n}"))
}

fn set_attr(m: &mut Module, op: OpId, name: &'static str, value: Attr) {
    let attrs = &mut m.ops[op].attrs;
    if let Some(slot) = attrs.iter_mut().find(|(n, _)| *n == name) {
        slot.1 = value;
    } else {
        attrs.push((name, value));
    }
}

fn remove_attr(m: &mut Module, op: OpId, name: &str) {
    m.ops[op].attrs.retain(|(n, _)| *n != name);
}

/// A tile type of `elem` with `shape`, appended to the module.
fn tile_of(m: &mut Module, elem: Scalar, shape: &[i64]) -> TypeId {
    let e = m.types.append(Type::Scalar(elem));
    m.types.append(Type::Tile {
        element: e,
        shape: shape.to_vec(),
    })
}

/// Asserts that verification fails with `message` reported at `op`.
fn expect_error(m: &Module, op: OpId, message: &str) {
    let errs = tileiras::verify::verify(m).expect_err("module must be rejected");
    let hit = errs
        .iter()
        .find(|d| d.message == message)
        .unwrap_or_else(|| {
            panic!(
                "no diagnostic {message:?}; got:\n{}",
                errs.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        });
    assert_eq!(hit.offset, Some(m.ops[op].offset), "offset of {message}");
    assert_eq!(hit.location, m.location(op), "location of {message}");
}

fn rounding(v: u8) -> Attr {
    Attr::Enum(EnumKind::RoundingMode, v)
}

#[test]
fn corpus_module_verifies_before_mutation() {
    let m = load("arith_f32", "v13_1");
    assert_eq!(tileiras::verify::verify(&m), Ok(()));
}

#[test]
fn addf_rejects_approx_rounding() {
    let mut m = load("arith_f32", "v13_1");
    let op = nth(&m, Opcode::AddF, 0);
    set_attr(&mut m, op, "rounding_mode", rounding(4));
    expect_error(&m, op, "'cuda_tile.addf' op invalid rounding mode specified, expect one of [nearest_even, zero, negative_inf, positive_inf]");
}

#[test]
fn flush_to_zero_only_on_f32() {
    let mut m = load("arith_f16", "v13_1");
    let op = nth(&m, Opcode::MulF, 0);
    set_attr(&mut m, op, "flush_to_zero", Attr::Unit);
    expect_error(
        &m,
        op,
        "'cuda_tile.mulf' op flush_to_zero modifier only supported for f32 data type, but got: 'f16'",
    );
    // The same flag on f32 is fine.
    let mut m = load("arith_f32", "v13_1");
    let op = nth(&m, Opcode::MulF, 0);
    set_attr(&mut m, op, "flush_to_zero", Attr::Unit);
    assert_eq!(tileiras::verify::verify(&m), Ok(()));
}

#[test]
fn divf_approx_only_on_f32() {
    let mut m = load("arith_f64", "v13_1");
    let op = nth(&m, Opcode::DivF, 0);
    set_attr(&mut m, op, "rounding_mode", rounding(4));
    expect_error(
        &m,
        op,
        "'cuda_tile.divf' op approx modifier only supported for f32 data type, but got: 'f64'",
    );
}

#[test]
fn divi_signedness_and_rounding() {
    let mut m = load("uint_floordiv_u32", "v13_1");
    let op = nth(&m, Opcode::DivI, 0);
    expect_error(
        &m,
        op,
        "'cuda_tile.divi' op rounding mode 'negative_inf' is not allowed with 'unsigned' flag",
    );
    // Signed floor division is allowed.
    set_attr(
        &mut m,
        op,
        "signedness",
        Attr::Enum(EnumKind::Signedness, 1),
    );
    assert_eq!(tileiras::verify::verify(&m), Ok(()));
    set_attr(&mut m, op, "rounding", rounding(0));
    expect_error(
        &m,
        op,
        "'cuda_tile.divi' op invalid rounding mode specified, expect one of [zero, negative_inf, positive_inf]",
    );
}

#[test]
fn load_and_store_memory_orderings() {
    let mut m = load("arith_f32", "v13_1");
    let load_op = nth(&m, Opcode::LoadViewTko, 0);
    set_attr(
        &mut m,
        load_op,
        "memory_ordering_semantics",
        Attr::Enum(EnumKind::MemoryOrdering, 3),
    );
    expect_error(
        &m,
        load_op,
        "'cuda_tile.load_view_tko' op expect one of: weak, relaxed, or acquire, but got: release",
    );
    set_attr(
        &mut m,
        load_op,
        "memory_ordering_semantics",
        Attr::Enum(EnumKind::MemoryOrdering, 2),
    );
    expect_error(
        &m,
        load_op,
        "'cuda_tile.load_view_tko' op memory scope is required for acquire load",
    );
    set_attr(
        &mut m,
        load_op,
        "memory_ordering_semantics",
        Attr::Enum(EnumKind::MemoryOrdering, 0),
    );
    set_attr(
        &mut m,
        load_op,
        "memory_scope",
        Attr::Enum(EnumKind::MemoryScope, 1),
    );
    expect_error(
        &m,
        load_op,
        "'cuda_tile.load_view_tko' op weak load must not have memory scope",
    );
    remove_attr(&mut m, load_op, "memory_scope");
    let store = nth(&m, Opcode::StoreViewTko, 0);
    set_attr(
        &mut m,
        store,
        "memory_ordering_semantics",
        Attr::Enum(EnumKind::MemoryOrdering, 2),
    );
    expect_error(
        &m,
        store,
        "'cuda_tile.store_view_tko' op expect one of: weak, relaxed, or release, but got: acquire",
    );
}

#[test]
fn atomic_rmw_mode_and_ordering() {
    let mut m = load("atomic_ops_i32", "v13_1");
    let op = nth(&m, Opcode::AtomicRMWTko, 0);
    assert_eq!(tileiras::verify::verify(&m), Ok(()));
    set_attr(&mut m, op, "mode", Attr::Enum(EnumKind::AtomicRmwMode, 4));
    expect_error(
        &m,
        op,
        "'cuda_tile.atomic_rmw_tko' op 'addf' works only with floats f16, bf16, f32, and f64",
    );
    set_attr(&mut m, op, "mode", Attr::Enum(EnumKind::AtomicRmwMode, 3));
    set_attr(
        &mut m,
        op,
        "memory_ordering_semantics",
        Attr::Enum(EnumKind::MemoryOrdering, 0),
    );
    expect_error(
        &m,
        op,
        "'cuda_tile.atomic_rmw_tko' op memory ordering semantics must be one of: relaxed, acquire, release, acq_rel",
    );
}

#[test]
fn binary_op_operand_types_must_match() {
    let mut m = load("arith_f32", "v13_1");
    let op = nth(&m, Opcode::SubF, 0);
    let f64_tile = tile_of(&mut m, Scalar::F64, &[256]);
    let res = m.ops[op].results[0];
    m.values[res].ty = f64_tile;
    expect_error(
        &m,
        op,
        "'cuda_tile.subf' op failed to verify that all of {lhs, rhs, result} have same type",
    );
    let i32_tile = tile_of(&mut m, Scalar::I32, &[256]);
    m.values[res].ty = i32_tile;
    expect_error(
        &m,
        op,
        "'cuda_tile.subf' op result #0 must be tile of f16 or bf16 or f32 or f64 values, but got '!cuda_tile.tile<256xi32>'",
    );
}

#[test]
fn missing_terminator_is_reported_at_the_entry() {
    let mut m = load("arith_f32", "v13_1");
    let entry = nth(&m, Opcode::Entry, 0);
    let ret = m.ops[entry].regions[0].blocks[0].ops.pop().unwrap();
    assert_eq!(m.ops[ret].opcode, Opcode::Return);
    let last = *m.ops[entry].regions[0].blocks[0].ops.last().unwrap();
    let found = m.ops[last].name();
    expect_error(
        &m,
        entry,
        &format!(
            "'cuda_tile.entry' op expects regions to end with 'cuda_tile.return', found '{found}'"
        ),
    );
}

#[test]
fn terminator_in_the_middle_of_a_block() {
    let mut m = load("arith_f32", "v13_1");
    let entry = nth(&m, Opcode::Entry, 0);
    let ret = *m.ops[entry].regions[0].blocks[0].ops.last().unwrap();
    m.ops[entry].regions[0].blocks[0].ops.insert(1, ret);
    // The duplicate is a handle error: the op appears twice.
    let errs = tileiras::verify::verify(&m).unwrap_err();
    assert!(errs
        .iter()
        .any(|d| d.message == format!("op {} appears more than once", ret.index())));
}

#[test]
fn use_before_definition() {
    let mut m = load("arith_f32", "v13_1");
    let sub = nth(&m, Opcode::SubF, 0);
    let entry = nth(&m, Opcode::Entry, 0);
    let ops = &mut m.ops[entry].regions[0].blocks[0].ops;
    let pos = ops.iter().position(|o| *o == sub).unwrap();
    // Move subf to the front of the block, before the loads it uses.
    let moved = ops.remove(pos);
    ops.insert(0, moved);
    expect_error(
        &m,
        sub,
        "'cuda_tile.subf' op operand #0 does not dominate this use",
    );
}

#[test]
fn operand_out_of_range_is_fatal() {
    let mut m = load("arith_f32", "v13_1");
    let sub = nth(&m, Opcode::SubF, 0);
    let bad = tileiras::ir::ValueId::from_index(m.values.len() + 5);
    m.ops[sub].operands[0] = bad;
    let errs = tileiras::verify::verify(&m).unwrap_err();
    assert_eq!(errs.len(), 1);
    assert_eq!(
        errs[0].message,
        format!("operand #0 is value %{} out of range", bad.index())
    );
    assert_eq!(errs[0].offset, Some(m.ops[sub].offset));
}

#[test]
fn for_continue_types_must_match_results() {
    let mut m = load("for_loop_carried_f32", "v13_1");
    let cont = nth(&m, Opcode::Continue, 0);
    m.ops[cont].operands.pop();
    if let Some(seg) = m.ops[cont].segments.first_mut() {
        seg.len -= 1;
    }
    expect_error(
        &m,
        cont,
        "`for` is missing a valid terminator. `continue` op should have operand types that match the parent loop return types: ('!cuda_tile.tile<16x64xf32>', '!cuda_tile.tile<16x64xf32>'), but found: ('!cuda_tile.tile<16x64xf32>')",
    );
}

#[test]
fn permute_needs_a_permutation() {
    let mut m = load("transpose_2d_f32", "v13_1");
    let op = nth(&m, Opcode::Permute, 0);
    set_attr(&mut m, op, "permutation", Attr::DenseI32(vec![0, 0]));
    expect_error(
        &m,
        op,
        "'cuda_tile.permute' op expect permutation elements to be unique",
    );
    set_attr(&mut m, op, "permutation", Attr::DenseI32(vec![1, 2]));
    expect_error(
        &m,
        op,
        "'cuda_tile.permute' op permutation element at index 1 (2) is out of bound [0, 2)",
    );
}

#[test]
fn reduce_dim_in_range() {
    let mut m = load("layernorm_rows_f32", "v13_1");
    let op = nth(&m, Opcode::Reduce, 0);
    set_attr(&mut m, op, "dim", Attr::Int(7));
    let rank = {
        let v = m.ops[op].operands[0];
        match &m.types[m.values[v].ty] {
            Type::Tile { shape, .. } => shape.len(),
            _ => unreachable!(),
        }
    };
    expect_error(
        &m,
        op,
        &format!("'cuda_tile.reduce' op dimension (7) is out of bound [0, {rank})"),
    );
}

#[test]
fn reduce_body_yields_one_value_per_operand() {
    let mut m = load("layernorm_rows_f32", "v13_1");
    let op = nth(&m, Opcode::Reduce, 0);
    let y = *m.ops[op].regions[0].blocks[0].ops.last().unwrap();
    assert_eq!(m.ops[y].opcode, Opcode::Yield);
    m.ops[y].operands.clear();
    for s in &mut m.ops[y].segments {
        s.start = 0;
        s.len = 0;
    }
    expect_error(
        &m,
        op,
        "'cuda_tile.reduce' op expect number of terminators operands (0) to match number of operands (1)",
    );
}

#[test]
fn errors_of_several_ops_are_all_reported() {
    let mut m = load("arith_f32", "v13_1");
    let add = nth(&m, Opcode::AddF, 0);
    let mul = nth(&m, Opcode::MulF, 0);
    set_attr(&mut m, add, "rounding_mode", rounding(5));
    set_attr(&mut m, mul, "rounding_mode", rounding(6));
    let errs = tileiras::verify::verify(&m).unwrap_err();
    assert_eq!(errs.len(), 2, "{errs:?}");
}

#[test]
fn symbols_are_unique_and_globals_resolve() {
    let mut m = load("print_debug_i32", "v13_1");
    assert_eq!(tileiras::verify::verify(&m), Ok(()));
    let entry = nth(&m, Opcode::Entry, 0);
    let global = nth(&m, Opcode::Global, 0);
    let entry_name = match m.ops[entry].attr("sym_name") {
        Some(Attr::String(s)) => s.clone(),
        _ => unreachable!(),
    };
    let get = nth(&m, Opcode::GetGlobal, 0);
    set_attr(&mut m, get, "name", Attr::String("nowhere".into()));
    expect_error(
        &m,
        get,
        "'cuda_tile.get_global' op 'nowhere' does not reference a valid global",
    );
    set_attr(&mut m, global, "sym_name", Attr::String(entry_name.clone()));
    expect_error(
        &m,
        entry,
        &format!("redefinition of symbol named '{entry_name}'"),
    );
}

#[test]
fn entry_block_arguments_match_the_signature() {
    let mut m = load("arith_f32", "v13_1");
    let entry = nth(&m, Opcode::Entry, 0);
    let arg = m.ops[entry].regions[0].blocks[0].args[1];
    let old = m.values[arg].ty;
    let f32_scalar = tile_of(&mut m, Scalar::F32, &[]);
    m.values[arg].ty = f32_scalar;
    expect_error(
        &m,
        entry,
        &format!(
            "'cuda_tile.entry' op type of entry block argument #1('!cuda_tile.tile<f32>') must match the type of the corresponding argument in function signature({})",
            tileiras_type(&m, old)
        ),
    );
    m.values[arg].ty = old;
    m.ops[entry].regions[0].blocks[0].args.pop();
    let n = match m.ops[entry].attr("function_type") {
        Some(Attr::Type(t)) => match &m.types[*t] {
            Type::Function { inputs, .. } => inputs.len(),
            _ => unreachable!(),
        },
        _ => unreachable!(),
    };
    expect_error(
        &m,
        entry,
        &format!(
            "'cuda_tile.entry' op entry block must have {n} arguments to match function signature"
        ),
    );
}

/// `'!cuda_tile.tile<i32>'` for the 0-d `i32` tiles the corpus entries take.
fn tileiras_type(m: &Module, t: TypeId) -> String {
    match &m.types[t] {
        Type::Tile { element, shape } if shape.is_empty() => match &m.types[*element] {
            Type::Scalar(s) => format!("'!cuda_tile.tile<{}>'", s.name()),
            _ => panic!("unexpected parameter type"),
        },
        _ => panic!("unexpected parameter type"),
    }
}

#[test]
fn same_elements_fits_the_tile() {
    let mut m = load("arith_f32", "v13_1");
    // An assume on a pointer scalar: a 0-d tile, so one value is too many.
    let op = nth(&m, Opcode::Assume, 0);
    set_attr(&mut m, op, "predicate", Attr::SameElements(vec![1]));
    expect_error(
        &m,
        op,
        "'cuda_tile.assume' op expected number of values in 'cuda_tile.same_elements' (1) to match rank of constrained tile (0)",
    );
    set_attr(&mut m, op, "predicate", Attr::SameElements(vec![]));
    assert_eq!(tileiras::verify::verify(&m), Ok(()));
    set_attr(
        &mut m,
        op,
        "predicate",
        Attr::DivBy {
            divisor: 12,
            every: None,
            along: None,
        },
    );
    expect_error(
        &m,
        op,
        "'cuda_tile.assume' op 'cuda_tile.div_by' divisor must be a power of 2",
    );
}

#[test]
fn shared_debug_attributes_print_in_bounded_time() {
    use tileiras::ir::DebugAttr;
    let mut m = load("arith_f32", "v13_1");
    let entry = nth(&m, Opcode::Entry, 0);
    let mut loc = m.ops[entry].debug.expect("corpus entries have locations");
    // Each call site refers twice to the previous one: printed naively, the
    // text doubles with every level.
    for _ in 0..80 {
        loc = m.debug.append(DebugAttr::CallSite {
            callee: loc,
            caller: loc,
        });
    }
    m.ops[entry].debug = Some(loc);
    let start = std::time::Instant::now();
    let errs = tileiras::verify::verify(&m).unwrap_err();
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
    let msg = &errs[0].message;
    assert!(
        msg.starts_with("'cuda_tile.entry' op invalid function debug info location: loc(callsite(")
    );
    assert!(msg.ends_with(". Function location must not be a CallSiteLoc."));
    assert!(msg.len() < 1 << 18);
}

#[test]
fn entries_are_public() {
    let mut m = load("arith_f32", "v13_1");
    let entry = nth(&m, Opcode::Entry, 0);
    set_attr(
        &mut m,
        entry,
        "symbol_visibility",
        Attr::Enum(EnumKind::SymbolVisibility, 1),
    );
    expect_error(
        &m,
        entry,
        "'cuda_tile.entry' op entry op must have public symbol visibility",
    );
    set_attr(
        &mut m,
        entry,
        "symbol_visibility",
        Attr::Enum(EnumKind::SymbolVisibility, 0),
    );
    assert_eq!(tileiras::verify::verify(&m), Ok(()));
}

#[test]
fn if_needs_an_else_branch_when_it_has_results() {
    let mut m = load("if_else_runtime_f32", "v13_1");
    assert_eq!(tileiras::verify::verify(&m), Ok(()));
    let op = nth(&m, Opcode::If, 0);
    // Drop the else region's block (its ops go with it).
    m.ops[op].regions[1].blocks.clear();
    expect_error(
        &m,
        op,
        "'cuda_tile.if' op has non-empty return type, must define else branch",
    );
}

#[test]
fn break_outside_a_loop_and_yield_types() {
    let mut m = load("if_else_runtime_f32", "v13_1");
    let op = nth(&m, Opcode::If, 0);
    let y = *m.ops[op].regions[0].blocks[0].ops.last().unwrap();
    assert_eq!(m.ops[y].opcode, Opcode::Yield);
    // A break directly in an if is placed well, but its ancestors (an if,
    // then the entry) hold no loop.
    m.ops[y].opcode = Opcode::Break;
    expect_error(
        &m,
        y,
        "'cuda_tile.break' op can only be nested within a ancestor chain of 'cuda_tile.loop', 'cuda_tile.if' operations",
    );
    // One error for the break (the first rule it breaks), none for the if:
    // a branch ending in break yields nothing to compare.
    let errs = tileiras::verify::verify(&m).unwrap_err();
    assert_eq!(errs.len(), 1, "{errs:?}");
    m.ops[y].opcode = Opcode::Yield;
    let i32_tile = tile_of(&mut m, Scalar::I32, &[256]);
    let v = m.ops[y].operands[0];
    m.values[v].ty = i32_tile;
    expect_error(
        &m,
        op,
        "'cuda_tile.if' op type does not match yield type, then branch yields '!cuda_tile.tile<256xi32>' but op result type is '!cuda_tile.tile<256xf32>'",
    );
}
