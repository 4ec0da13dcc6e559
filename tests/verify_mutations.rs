//! Random IR mutations of corpus modules must never panic the verifier: it
//! returns `Ok` or a list of diagnostics, whatever the mutation did.
mod common;
use std::panic::{catch_unwind, AssertUnwindSafe};
use tileiras::ir::{
    Attr, EnumKind, Module, OpId, Opcode, Region, Scalar, Type, TypeId, ValueId, DYNAMIC,
};

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const KINDS: &[EnumKind] = &[
    EnumKind::AtomicRmwMode,
    EnumKind::ComparisonOrdering,
    EnumKind::ComparisonPredicate,
    EnumKind::IntegerOverflow,
    EnumKind::MemoryOrdering,
    EnumKind::MemoryScope,
    EnumKind::RoundingMode,
    EnumKind::Signedness,
];

const SCALARS: &[Scalar] = &[
    Scalar::I1,
    Scalar::I4,
    Scalar::I8,
    Scalar::I32,
    Scalar::I64,
    Scalar::F16,
    Scalar::BF16,
    Scalar::F32,
    Scalar::F64,
    Scalar::F8E8M0FNU,
    Scalar::F4E2M1FN,
];

fn random_op(r: &mut Rng, m: &Module) -> OpId {
    OpId::from_index(r.below(m.ops.len() + 1))
}

fn random_type(r: &mut Rng, m: &Module) -> TypeId {
    TypeId::from_index(r.below(m.types.len() + 2))
}

fn random_value(r: &mut Rng, m: &Module) -> ValueId {
    ValueId::from_index(r.below(m.values.len() + 2))
}

fn random_dim(r: &mut Rng) -> i64 {
    match r.below(6) {
        0 => 0,
        1 => -1,
        2 => DYNAMIC,
        3 => 3,
        4 => 1 << 40,
        _ => 1 << r.below(10),
    }
}

fn mutate(r: &mut Rng, m: &mut Module) {
    if m.ops.is_empty() {
        return;
    }
    let id = random_op(r, m);
    let op_ok = id.index() < m.ops.len();
    match r.below(15) {
        0 if op_ok => {
            let kind = KINDS[r.below(KINDS.len())];
            let v = r.below(12) as u8;
            let n = m.ops[id].attrs.len();
            if n > 0 {
                let i = r.below(n);
                m.ops[id].attrs[i].1 = Attr::Enum(kind, v);
            }
        }
        1 if op_ok => {
            let n = m.ops[id].attrs.len();
            if n > 0 {
                let i = r.below(n);
                m.ops[id].attrs[i].1 = match r.below(4) {
                    0 => Attr::Int(r.next() % 9),
                    1 => Attr::DenseI32(vec![r.below(4) as i32 - 1; r.below(4)]),
                    2 => Attr::Type(random_type(r, m)),
                    _ => Attr::Array(vec![]),
                };
            }
        }
        2 if !m.values.is_empty() => {
            let v = ValueId::from_index(r.below(m.values.len()));
            m.values[v].ty = random_type(r, m);
        }
        3 if op_ok => {
            let n = m.ops[id].operands.len();
            if n > 0 {
                let i = r.below(n);
                m.ops[id].operands[i] = random_value(r, m);
            }
        }
        4 if op_ok => {
            let regions = m.ops[id].regions.len();
            if regions > 0 {
                let ri = r.below(regions);
                if let Some(b) = m.ops[id].regions[ri].blocks.first_mut() {
                    if !b.ops.is_empty() {
                        let i = r.below(b.ops.len());
                        b.ops.remove(i);
                    }
                }
            }
        }
        5 if op_ok => {
            let regions = m.ops[id].regions.len();
            if regions > 0 {
                let ri = r.below(regions);
                if let Some(b) = m.ops[id].regions[ri].blocks.first_mut() {
                    let n = b.ops.len();
                    if n > 1 {
                        b.ops.swap(r.below(n), r.below(n));
                    }
                }
            }
        }
        6 if op_ok => {
            let ops = Opcode::ALL;
            m.ops[id].opcode = ops[r.below(ops.len())];
        }
        7 => {
            let e = m
                .types
                .append(Type::Scalar(SCALARS[r.below(SCALARS.len())]));
            let shape: Vec<i64> = (0..r.below(4)).map(|_| random_dim(r)).collect();
            let t = m.types.append(Type::Tile { element: e, shape });
            if !m.values.is_empty() {
                let v = ValueId::from_index(r.below(m.values.len()));
                m.values[v].ty = t;
            }
        }
        8 if !m.types.is_empty() => {
            let t = TypeId::from_index(r.below(m.types.len()));
            let dim = random_dim(r);
            match &mut m.types[t] {
                Type::Tile { shape, .. } | Type::TensorView { shape, .. } => {
                    if shape.is_empty() {
                        shape.push(dim);
                    } else {
                        let i = (dim.unsigned_abs() % shape.len() as u64) as usize;
                        shape[i] = dim;
                    }
                }
                Type::PartitionView { dim_map, .. } => {
                    dim_map.reverse();
                    dim_map.push(dim as i32);
                }
                _ => {}
            }
        }
        9 if op_ok => {
            if r.below(2) == 0 {
                m.ops[id].regions.clear();
            } else {
                m.ops[id].regions.push(Region::default());
            }
        }
        10 if op_ok => {
            let n = m.ops[id].segments.len();
            if n > 0 {
                let i = r.below(n);
                m.ops[id].segments[i].len = r.below(5) as u32;
                m.ops[id].segments[i].start = r.below(5) as u32;
            }
        }
        11 if op_ok => {
            let v = random_value(r, m);
            if r.below(2) == 0 {
                m.ops[id].results.push(v);
            } else {
                m.ops[id].results.pop();
            }
        }
        12 => {
            // Move an op into another op's region (or the body).
            let target = random_op(r, m);
            if target.index() < m.ops.len() {
                if let Some(b) = m.ops[target]
                    .regions
                    .first_mut()
                    .and_then(|reg| reg.blocks.first_mut())
                {
                    b.ops.insert(0, id);
                }
            } else {
                m.body.ops.push(id);
            }
        }
        13 if !m.debug.is_empty() => {
            // Rewire a debug attribute, possibly into a cycle.
            let d = tileiras::ir::DebugId::from_index(r.below(m.debug.len()));
            let other = tileiras::ir::DebugId::from_index(r.below(m.debug.len()));
            match &mut m.debug[d] {
                tileiras::ir::DebugAttr::Loc { scope, .. } => *scope = other,
                tileiras::ir::DebugAttr::LexicalBlock { scope, .. } => *scope = other,
                tileiras::ir::DebugAttr::CallSite { caller, .. } => *caller = other,
                tileiras::ir::DebugAttr::Subprogram { compile_unit, .. } => *compile_unit = other,
                _ => {}
            }
        }
        _ => {
            if op_ok {
                m.ops[id].debug = Some(tileiras::ir::DebugId::from_index(
                    r.below(m.debug.len() + 2),
                ));
            }
        }
    }
}

#[test]
fn random_mutations_never_panic() {
    let mut files = Vec::new();
    for d in std::fs::read_dir(common::corpus())
        .expect("corpus")
        .flatten()
    {
        if let Ok(fs) = std::fs::read_dir(d.path()) {
            for f in fs.flatten() {
                let p = f.path();
                if p.to_string_lossy().ends_with(".v13_3.tileir") {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    assert!(files.len() > 50);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut rejected = 0usize;
    let mut cases = 0usize;
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let base = tileiras::bytecode::read(&bytes).unwrap();
        for _ in 0..40 {
            let mut m = base.clone();
            for _ in 0..1 + rng.below(3) {
                mutate(&mut rng, &mut m);
            }
            let seed = rng.0;
            let result = catch_unwind(AssertUnwindSafe(|| tileiras::verify::verify(&m)));
            match result {
                Ok(Ok(())) => {}
                Ok(Err(errs)) => {
                    assert!(!errs.is_empty());
                    rejected += 1;
                }
                Err(_) => panic!(
                    "verifier panicked on {} (rng state {seed:#x})",
                    path.display()
                ),
            }
            cases += 1;
        }
    }
    // Most mutations break something; the verifier must notice many of them.
    assert!(
        rejected * 3 > cases,
        "only {rejected} of {cases} mutants rejected"
    );
}

#[test]
fn modules_read_from_corrupted_bytes_never_panic_the_verifier() {
    let mut files = Vec::new();
    for d in std::fs::read_dir(common::corpus())
        .expect("corpus")
        .flatten()
    {
        if let Ok(fs) = std::fs::read_dir(d.path()) {
            for f in fs.flatten() {
                let p = f.path();
                if p.to_string_lossy().ends_with(".v13_4.tileir") {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let (mut read, mut rejected) = (0usize, 0usize);
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        for _ in 0..60 {
            let mut b = bytes.clone();
            for _ in 0..1 + rng.below(3) {
                let i = rng.below(b.len());
                b[i] = rng.next() as u8;
            }
            let Ok(m) = tileiras::bytecode::read(&b) else {
                continue;
            };
            read += 1;
            let result = catch_unwind(AssertUnwindSafe(|| tileiras::verify::verify(&m)));
            match result {
                Ok(r) => rejected += usize::from(r.is_err()),
                Err(_) => panic!("verifier panicked on corrupted {}", path.display()),
            }
        }
    }
    assert!(read > 100, "only {read} corrupted modules read");
    assert!(rejected > 0);
}
