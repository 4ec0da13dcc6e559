//! The random programs of `tests/data/lower/random` (`programs.json` plus
//! `pNNN.tileirbc`, see `tests/lower_random.rs`) as differential cases:
//! the same array layouts (gaps in strided arrays), trip count and scalar
//! parameter, every input and the output filled with random values.

use super::case::{Arg, Case, Elem, Init};
use serde_json::Value;
use std::path::Path;

/// The programs in `dir` as cases `random/<name>`; none if the folder
/// has no `programs.json`.
pub fn cases(dir: &Path) -> Vec<Case> {
    let Ok(text) = std::fs::read_to_string(dir.join("programs.json")) else {
        return Vec::new();
    };
    let programs: Vec<Value> = serde_json::from_str(&text).unwrap();
    programs.iter().map(|p| case(dir, p)).collect()
}

fn case(dir: &Path, prog: &Value) -> Case {
    let name = prog["name"].as_str().unwrap();
    let path = dir.join(format!("{name}.tileirbc"));
    let bytecode = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let u = |v: &Value| v.as_u64().unwrap() as usize;
    let (rows, cols) = (u(&prog["shape"][0]), u(&prog["shape"][1]));
    let rank = u(&prog["rank"]);
    let contiguous = prog["contiguous"].as_bool().unwrap();
    let index = Elem::parse(prog["index"].as_str().unwrap()).unwrap();
    let scalar = |ty: Elem, v: i64| {
        let mut bytes = Vec::new();
        ty.encode_int(v, &mut bytes);
        Arg::Scalar {
            bytes,
            signed: true,
        }
    };
    // A float sum may be reassociated: its inputs are small integers (with
    // NaN, ±Inf and -0), which sum exactly in any order unless other ops
    // make fractions of them first; then the sums' roundings may differ by
    // a few ulps.
    let float = |d: &str| matches!(d, "f16" | "bf16" | "f32" | "f64");
    let sums = prog["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["op"] == "sum" && float(n["dtype"].as_str().unwrap()));
    // exp is an approximation (ours and NVIDIA's f64 exp differ by an ulp,
    // which a later subtraction may magnify)
    let exp = prog["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["op"] == "exp");
    let mut args = Vec::new();
    // pointer, shape, strides as `tests/lower_random.rs` lays arrays out
    let mut array = |dt: &str, gap: usize| {
        let elem = Elem::parse(dt).unwrap();
        let (ld, step) = match (rank, contiguous) {
            (1, false) => (0, 1 + gap),
            (1, true) => (0, 1),
            (_, false) => (cols + gap, 1),
            (_, true) => ((cols + gap).next_multiple_of(16 / elem.size()), 1),
        };
        let len = (rows - 1) * ld + (cols - 1) * step + 1;
        args.push(Arg::Buffer {
            elem,
            len,
            init: if sums { Init::Ints } else { Init::Random },
            ulp: None,
            atol: None,
        });
        let dims: Vec<usize> = if rank == 1 {
            vec![cols, step]
        } else {
            vec![rows, cols, ld, step]
        };
        for d in dims {
            args.push(scalar(index, d as i64));
        }
    };
    for (k, d) in prog["inputs"].as_array().unwrap().iter().enumerate() {
        array(d.as_str().unwrap(), k % 3);
    }
    array(prog["output"].as_str().unwrap(), 1);
    if let Some(n) = prog["trips"].as_i64() {
        args.push(scalar(Elem::I32, n));
    }
    if let Some(dt) = prog.get("scalar_dtype").and_then(Value::as_str) {
        let ty = Elem::parse(dt).unwrap();
        let mut bytes = Vec::new();
        let x = &prog["scalar"];
        match ty.float() {
            Some(_) => ty.encode(x.as_f64().unwrap(), &mut bytes),
            None => ty.encode_int(x.as_i64().unwrap(), &mut bytes),
        }
        args.push(Arg::Scalar {
            bytes,
            signed: true,
        });
    }
    let grid = [0, 1, 2].map(|k| u(&prog["grid"][k]) as u32);
    Case {
        name: format!("random/{name}"),
        bytecode,
        entry: Some(name.to_string()),
        grid,
        args,
        ulp: if sums || exp { 16 } else { 0 },
        atol: 0.0,
        swizzled_too: false,
        note: match (sums, exp) {
            (true, _) => "float sums: inputs are small integers, floats within 16 ulp".into(),
            (false, true) => "exp: floats within 16 ulp".into(),
            (false, false) => String::new(),
        },
    }
}
