//! Differential verifier tests against NVIDIA's `tileirdisasm`: corpus
//! bytecode patched in place (an enum byte, a flag bit, a permutation
//! entry), read by both tools; the verdicts, the messages and the source
//! lines they point at must agree. Fails (never skips) when NVIDIA's tools
//! are missing.
mod common;

use std::process::Command;
use tileiras::ir::Opcode;

/// One patch: in `file`, at byte `delta` after the opcode of the `nth` op of
/// kind `opcode`, write `value`.
struct Case {
    name: &'static str,
    file: &'static str,
    opcode: Opcode,
    nth: usize,
    delta: usize,
    value: u8,
}

const CASES: &[Case] = &[
    Case {
        name: "addf_approx",
        file: "arith_f32/arith_f32.v13_1.tileir",
        opcode: Opcode::AddF,
        nth: 0,
        delta: 3,
        value: 4,
    },
    Case {
        name: "addf_nearest_int",
        file: "arith_f32/arith_f32.v13_1.tileir",
        opcode: Opcode::AddF,
        nth: 0,
        delta: 3,
        value: 6,
    },
    Case {
        name: "addf_ftz_f32",
        file: "arith_f32/arith_f32.v13_1.tileir",
        opcode: Opcode::AddF,
        nth: 0,
        delta: 2,
        value: 1,
    },
    Case {
        name: "mulf_ftz_f16",
        file: "arith_f16/arith_f16.v13_1.tileir",
        opcode: Opcode::MulF,
        nth: 0,
        delta: 2,
        value: 1,
    },
    Case {
        name: "divf_approx_f64",
        file: "arith_f64/arith_f64.v13_1.tileir",
        opcode: Opcode::DivF,
        nth: 0,
        delta: 3,
        value: 4,
    },
    Case {
        name: "divf_full_f64",
        file: "arith_f64/arith_f64.v13_1.tileir",
        opcode: Opcode::DivF,
        nth: 0,
        delta: 3,
        value: 5,
    },
    Case {
        name: "divf_ftz_f64",
        file: "arith_f64/arith_f64.v13_1.tileir",
        opcode: Opcode::DivF,
        nth: 0,
        delta: 2,
        value: 1,
    },
    Case {
        name: "divf_nearest_away",
        file: "arith_f64/arith_f64.v13_4.tileir",
        opcode: Opcode::DivF,
        nth: 0,
        delta: 3,
        value: 7,
    },
    Case {
        name: "load_release",
        file: "arith_f32/arith_f32.v13_1.tileir",
        opcode: Opcode::LoadViewTko,
        nth: 0,
        delta: 5,
        value: 3,
    },
    Case {
        name: "load_acquire_no_scope",
        file: "arith_f32/arith_f32.v13_1.tileir",
        opcode: Opcode::LoadViewTko,
        nth: 0,
        delta: 5,
        value: 2,
    },
    Case {
        name: "load_relaxed_no_scope",
        file: "arith_f32/arith_f32.v13_1.tileir",
        opcode: Opcode::LoadViewTko,
        nth: 0,
        delta: 5,
        value: 1,
    },
    Case {
        name: "store_acquire",
        file: "arith_f32/arith_f32.v13_1.tileir",
        opcode: Opcode::StoreViewTko,
        nth: 0,
        delta: 4,
        value: 2,
    },
    Case {
        name: "store_release_no_scope",
        file: "arith_f32/arith_f32.v13_1.tileir",
        opcode: Opcode::StoreViewTko,
        nth: 0,
        delta: 4,
        value: 3,
    },
    Case {
        name: "divi_signed_floor",
        file: "uint_floordiv_u32/uint_floordiv_u32.v13_1.tileir",
        opcode: Opcode::DivI,
        nth: 0,
        delta: 2,
        value: 1,
    },
    Case {
        name: "divi_unsigned_nearest",
        file: "uint_floordiv_u32/uint_floordiv_u32.v13_1.tileir",
        opcode: Opcode::DivI,
        nth: 0,
        delta: 3,
        value: 0,
    },
    Case {
        name: "divi_unsigned_ceil",
        file: "uint_floordiv_u32/uint_floordiv_u32.v13_1.tileir",
        opcode: Opcode::DivI,
        nth: 0,
        delta: 3,
        value: 3,
    },
    Case {
        name: "rmw_weak",
        file: "atomic_ops_i32/atomic_ops_i32.v13_1.tileir",
        opcode: Opcode::AtomicRMWTko,
        nth: 0,
        delta: 4,
        value: 0,
    },
    Case {
        name: "rmw_addf_i32",
        file: "atomic_ops_i32/atomic_ops_i32.v13_1.tileir",
        opcode: Opcode::AtomicRMWTko,
        nth: 0,
        delta: 6,
        value: 4,
    },
    Case {
        name: "rmw_add_i32",
        file: "atomic_ops_i32/atomic_ops_i32.v13_1.tileir",
        opcode: Opcode::AtomicRMWTko,
        nth: 0,
        delta: 6,
        value: 3,
    },
    Case {
        name: "permute_duplicate",
        file: "transpose_2d_f32/transpose_2d_f32.v13_1.tileir",
        opcode: Opcode::Permute,
        nth: 0,
        delta: 3,
        value: 0,
    },
    Case {
        name: "permute_out_of_bound",
        file: "transpose_2d_f32/transpose_2d_f32.v13_1.tileir",
        opcode: Opcode::Permute,
        nth: 0,
        delta: 3,
        value: 5,
    },
    Case {
        name: "reduce_dim",
        file: "layernorm_rows_f32/layernorm_rows_f32.v13_1.tileir",
        opcode: Opcode::Reduce,
        nth: 0,
        delta: 3,
        value: 5,
    },
    Case {
        name: "ftof_narrow_zero",
        file: "cast_f32_f16_bf16/cast_f32_f16_bf16.v13_1.tileir",
        opcode: Opcode::FToF,
        nth: 0,
        delta: 2,
        value: 1,
    },
    Case {
        name: "ftof_narrow_ceil",
        file: "cast_f32_f16_bf16/cast_f32_f16_bf16.v13_1.tileir",
        opcode: Opcode::FToF,
        nth: 0,
        delta: 2,
        value: 3,
    },
    Case {
        name: "ftof_narrow_bf16_approx",
        file: "cast_f32_f16_bf16/cast_f32_f16_bf16.v13_1.tileir",
        opcode: Opcode::FToF,
        nth: 1,
        delta: 2,
        value: 4,
    },
    Case {
        name: "ftof_widen_floor",
        file: "cast_f32_f16_bf16/cast_f32_f16_bf16.v13_1.tileir",
        opcode: Opcode::FToF,
        nth: 2,
        delta: 2,
        value: 2,
    },
    Case {
        name: "ftof_widen_approx",
        file: "cast_f32_f16_bf16/cast_f32_f16_bf16.v13_1.tileir",
        opcode: Opcode::FToF,
        nth: 2,
        delta: 2,
        value: 4,
    },
    Case {
        name: "ftof_widen_int_to_zero",
        file: "cast_f32_f16_bf16/cast_f32_f16_bf16.v13_1.tileir",
        opcode: Opcode::FToF,
        nth: 2,
        delta: 2,
        value: 6,
    },
    Case {
        name: "ftof_tf32_floor",
        file: "matmul_tf32/matmul_tf32.v13_1.tileir",
        opcode: Opcode::FToF,
        nth: 0,
        delta: 2,
        value: 2,
    },
    Case {
        name: "ftof_tf32_zero",
        file: "matmul_tf32/matmul_tf32.v13_1.tileir",
        opcode: Opcode::FToF,
        nth: 0,
        delta: 2,
        value: 1,
    },
];

/// NVIDIA's verdict: the error messages (without the two closing lines)
/// and, per message, the `line:col` of its location if printed.
fn nvidia(path: &std::path::Path) -> (bool, Vec<(String, Option<String>)>) {
    let tool = common::cuda_root().join("bin/tileirdisasm");
    let out = Command::new(&tool)
        .arg(path)
        .output()
        .expect("run tileirdisasm");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut errs = Vec::new();
    for line in stderr.lines() {
        let (loc, msg) = match line.find("error: ") {
            Some(i) => (&line[..i], &line[i + 7..]),
            None => continue,
        };
        if msg.starts_with("verification failed for deserialized")
            || msg.starts_with("failed to read provided Tile IR bytecode")
        {
            continue;
        }
        // `#cuda_tile.di_loc<loc("kernels.py":175:38) in ...>: `
        let line_col = loc.find("\":").map(|i| {
            let rest = &loc[i + 2..];
            rest.split(')').next().unwrap_or("").to_string()
        });
        errs.push((msg.to_string(), line_col));
    }
    (out.status.success(), errs)
}

#[test]
fn patched_bytecode_matches_nvidia() {
    let scratch = common::Scratch::new("verify-nvidia");
    let mut mismatches = Vec::new();
    for case in CASES {
        let src = common::corpus().join(case.file);
        let mut bytes = std::fs::read(&src).unwrap();
        let module = tileiras::bytecode::read(&bytes).unwrap();
        let op = module
            .walk()
            .filter(|id| module.ops[*id].opcode == case.opcode)
            .nth(case.nth)
            .unwrap_or_else(|| panic!("{}: op not found", case.name));
        let at = module.ops[op].offset + case.delta;
        bytes[at] = case.value;
        let path = scratch.0.join(format!("{}.tileir", case.name));
        std::fs::write(&path, &bytes).unwrap();

        let ours: Vec<(String, Option<String>)> = match tileiras::bytecode::read(&bytes) {
            Ok(m) => match tileiras::verify::verify(&m) {
                Ok(()) => Vec::new(),
                Err(errs) => errs
                    .into_iter()
                    .map(|d| {
                        let lc = d.location.map(|l| format!("{}:{}", l.line, l.column));
                        (d.message, lc)
                    })
                    .collect(),
            },
            Err(e) => vec![(format!("read error: {e}"), None)],
        };
        let (ok, theirs) = nvidia(&path);
        assert_eq!(
            ok,
            theirs.is_empty(),
            "{}: NVIDIA exit status vs messages",
            case.name
        );
        // NVIDIA stops at its first failing op; every op it reports must be
        // reported by us, word for word, at the same source position.
        let agree = if theirs.is_empty() {
            ours.is_empty()
        } else {
            !ours.is_empty() && theirs.iter().all(|t| ours.contains(t))
        };
        if !agree {
            mismatches.push(format!(
                "{}:\n  NVIDIA: {theirs:?}\n  ours:   {ours:?}",
                case.name
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
