//! The IR API the rest of the compiler relies on: walking ops in order, op
//! names, source locations, operand groups and attributes, and the lowering
//! stub's report of the first op.
mod common;

use tileiras::bytecode;
use tileiras::ir::{Attr, Opcode, Type, ValueDef};
use tileiras::{Options, Status};

fn vadd() -> Vec<u8> {
    std::fs::read(common::corpus().join("vadd_f32_strided/vadd_f32_strided.v13_3.tileir")).unwrap()
}

#[test]
fn walk_names_and_locations() {
    let m = bytecode::read(&vadd()).unwrap();
    assert_eq!(m.version.to_string(), "13.3");
    let ops: Vec<_> = m.walk().collect();
    let names: Vec<String> = ops.iter().map(|&o| m.ops[o].name()).collect();
    assert_eq!(names.first().map(String::as_str), Some("cuda_tile.entry"));
    assert_eq!(
        names.get(1).map(String::as_str),
        Some("cuda_tile.make_token")
    );
    assert_eq!(names.last().map(String::as_str), Some("cuda_tile.return"));
    assert_eq!(names.iter().filter(|n| *n == "cuda_tile.assume").count(), 6);
    // Entry: its location is the kernel's `def` line; its block arguments
    // are the parameters.
    let entry = &m.ops[ops[0]];
    let loc = m.location(ops[0]).expect("entry location");
    assert_eq!(
        (loc.file.as_str(), loc.line, loc.column),
        ("kernels.py", 97, 0)
    );
    let args = &entry.regions[0].blocks[0].args;
    assert_eq!(args.len(), 9);
    assert!(matches!(entry.attr("sym_name"), Some(Attr::String(s)) if s == "vadd_f32_strided"));
    // addf: operand groups by name, result type, source location.
    let addf = ops
        .iter()
        .copied()
        .find(|&o| m.ops[o].opcode == Opcode::AddF)
        .unwrap();
    let op = &m.ops[addf];
    let lhs = op.operand("lhs").unwrap();
    assert!(matches!(
        m.values[lhs].def,
        ValueDef::Result { index: 0, .. }
    ));
    assert!(
        matches!(&m.types[m.values[op.results[0]].ty], Type::Tile { shape, .. } if shape == &[256])
    );
    let l = m.location(addf).unwrap();
    assert_eq!((l.line, l.column), (107, 34));
    assert!(op.offset > 12 && op.offset < vadd().len());
}

#[test]
fn driver_maps_reader_errors_to_status_3() {
    let mut diags = Vec::new();
    let e = tileiras::compile(b"not bytecode", &Options::default(), &mut |d| {
        diags.push(d.to_string())
    })
    .unwrap_err();
    assert_eq!(e.status(), Status::InvalidBytecode);
    assert_eq!(
        diags,
        vec!["error: input does not correspond to Tile IR bytecode".to_string()]
    );
    let mut d = vadd();
    d[8] = 99;
    let mut diags = Vec::new();
    let e =
        tileiras::compile(&d, &Options::default(), &mut |x| diags.push(x.to_string())).unwrap_err();
    assert_eq!(e.status(), Status::InvalidBytecode);
    assert_eq!(
        diags,
        vec!["error: unsupported Tile IR bytecode version: 99.3".to_string()]
    );
}

#[test]
fn parents_value_types_and_dense_constants() {
    let data = std::fs::read(
        common::corpus().join("for_loop_carried_f32/for_loop_carried_f32.v13_3.tileir"),
    )
    .unwrap();
    let m = bytecode::read(&data).unwrap();
    let parents = m.parents();
    let entry = m.top_level()[0];
    let for_op = m.walk().find(|&o| m.ops[o].opcode == Opcode::For).unwrap();
    assert_eq!(parents[for_op.index()], Some(entry));
    assert_eq!(parents[entry.index()], None);
    let inside: Vec<_> = m.ops[for_op].regions[0].blocks[0].ops.clone();
    assert!(inside.iter().all(|&o| parents[o.index()] == Some(for_op)));
    // The loop's induction variable is a tile<i32>.
    let iv = m.ops[for_op].regions[0].blocks[0].args[0];
    assert!(matches!(m.value_type(iv), Type::Tile { shape, .. } if shape.is_empty()));
    // `constant <f32: 0xFF800000> : tile<16x64xf32>`: a splat of -inf.
    let cst = m
        .walk()
        .find(|&o| {
            matches!(m.ops[o].attr("value"), Some(Attr::Dense { data, .. }) if data == &[0, 0, 0x80, 0xff])
        })
        .unwrap();
    let Some(Attr::Dense { ty, data }) = m.ops[cst].attr("value") else {
        unreachable!()
    };
    let (s, bits) = m.dense_elements(*ty, data).unwrap();
    assert_eq!(s, tileiras::ir::Scalar::F32);
    assert_eq!(bits.len(), 16 * 64);
    assert!(bits
        .iter()
        .all(|&b| f32::from_bits(b as u32) == f32::NEG_INFINITY));
}

/// cuTile writes one call-site location per inlined call: its own test of
/// reasonable recursion inlines 109 calls, a chain of debug attributes far
/// deeper than any attribute nesting. NVIDIA's tileiras reads it; so must
/// we, with every op's location resolved.
#[test]
fn deep_chains_of_inlined_call_sites_read() {
    let path = common::repo().join("tests/data/differential/cutile/helper_recursive_calls.tileir");
    let m = bytecode::read(&std::fs::read(path).unwrap()).unwrap_or_else(|e| panic!("{e}"));
    let located = m
        .ops
        .iter()
        .filter(|(id, _)| m.location(*id).is_some())
        .count();
    assert!(located > 100, "{located} ops with a location");
}
