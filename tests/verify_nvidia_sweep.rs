//! Differential sweeps against NVIDIA's `tileirdisasm`: bytes of real corpus
//! modules are rewritten in place so that exactly one thing changes (an enum
//! attribute, an op's result type, one operand), and both verifiers must
//! agree on the verdict and, word for word, on NVIDIA's messages (NVIDIA
//! stops at its first failing op; we report every op, so NVIDIA's messages
//! must be among ours). Cases NVIDIA's *reader* rejects are skipped: they
//! test the reader, not the verifier. Each op kind is exercised a few
//! times across the corpus. Fails (never skips) when NVIDIA's
//! tools are missing.
mod common;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use tileiras::ir::{Attr, Module, OpId};

/// Every corpus module in the newest bytecode version, sorted.
fn files() -> Vec<String> {
    let mut out = Vec::new();
    for d in std::fs::read_dir(common::corpus())
        .expect("corpus")
        .flatten()
    {
        let name = d.file_name().to_string_lossy().to_string();
        let rel = format!("{name}/{name}.v13_4.tileir");
        if common::corpus().join(&rel).is_file() {
            out.push(rel);
        }
    }
    out.sort();
    assert!(out.len() > 50, "corpus too small");
    out
}

/// Runs both verifiers on `bytes`; `Some(report)` when they disagree,
/// `None` when they agree or NVIDIA's reader (not its verifier) refused.
struct Harness {
    tool: PathBuf,
    scratch: common::Scratch,
    compared: usize,
}

impl Harness {
    fn new(name: &str) -> Self {
        Harness {
            tool: common::cuda_root().join("bin/tileirdisasm"),
            scratch: common::Scratch::new(name),
            compared: 0,
        }
    }

    fn compare(&mut self, m: &Module, bytes: &[u8]) -> Option<String> {
        let ours: Vec<String> = match tileiras::verify::verify(m) {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|d| d.message).collect(),
        };
        let path: &Path = &self.scratch.0.join("case.tileir");
        std::fs::write(path, bytes).unwrap();
        let out = Command::new(&self.tool)
            .arg(path)
            .output()
            .expect("run tileirdisasm");
        let err = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() && !err.contains("verification failed for deserialized") {
            return None;
        }
        let theirs: Vec<String> = err
            .lines()
            .filter_map(|l| l.find("error: ").map(|i| l[i + 7..].to_string()))
            .filter(|m| {
                !m.starts_with("verification failed for deserialized")
                    && !m.starts_with("failed to read provided Tile IR bytecode")
            })
            .collect();
        self.compared += 1;
        let agree = if theirs.is_empty() {
            ours.is_empty()
        } else {
            theirs.iter().all(|t| ours.contains(t))
        };
        (!agree).then(|| format!("  NVIDIA: {theirs:?}\n  ours:   {ours:?}"))
    }
}

fn load(file: &str) -> (Vec<u8>, Module) {
    let bytes = std::fs::read(common::corpus().join(file)).unwrap();
    let m = tileiras::bytecode::read(&bytes).unwrap();
    (bytes, m)
}

/// Whether `m` differs from `base` only in op `id`, and there only as
/// `same` allows.
fn only_op_changed(
    base: &Module,
    m: &Module,
    id: OpId,
    same: impl Fn(&tileiras::ir::Op, &tileiras::ir::Op) -> bool,
) -> bool {
    base.ops.len() == m.ops.len()
        && base.ops.iter().zip(m.ops.iter()).all(|((i, a), (_, b))| {
            if i == id {
                same(a, b)
            } else {
                a.opcode == b.opcode && a.operands == b.operands && a.attrs == b.attrs
            }
        })
}

#[test]
fn enum_attribute_sweep_matches_nvidia() {
    let mut h = Harness::new("sweep-enum");
    let mut mismatches = Vec::new();
    let mut seen = HashSet::new();
    for file in &files() {
        let (bytes, base) = load(file);
        for id in base.walk() {
            let op = &base.ops[id];
            if !op.attrs.iter().any(|(_, a)| matches!(a, Attr::Enum(..))) {
                continue;
            }
            let key = (op.opcode, op.results.first().map(|r| base.values[*r].ty));
            if !seen.insert(key) {
                continue;
            }
            for delta in 1..10 {
                let at = op.offset + delta;
                if at >= bytes.len() {
                    break;
                }
                for value in 0u8..10 {
                    if value == bytes[at] {
                        continue;
                    }
                    let mut patched = bytes.clone();
                    patched[at] = value;
                    let Ok(m) = tileiras::bytecode::read(&patched) else {
                        continue;
                    };
                    let one_enum = |a: &tileiras::ir::Op, b: &tileiras::ir::Op| {
                        a.operands == b.operands
                            && a.attrs.len() == b.attrs.len()
                            && a.attrs
                                .iter()
                                .zip(&b.attrs)
                                .filter(|(x, y)| x != y)
                                .all(|(x, y)| x.0 == y.0 && matches!((&x.1, &y.1), (Attr::Enum(k, _), Attr::Enum(l, _)) if k == l))
                            && a.attrs != b.attrs
                    };
                    if !only_op_changed(&base, &m, id, one_enum) {
                        continue;
                    }
                    if let Some(r) = h.compare(&m, &patched) {
                        mismatches.push(format!("{file} {} +{delta}={value}:\n{r}", op.name()));
                    }
                }
            }
        }
    }
    println!("enum sweep: {} modules compared", h.compared);
    assert!(h.compared > 200, "only {} compared", h.compared);
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn result_type_sweep_matches_nvidia() {
    let mut h = Harness::new("sweep-result");
    let mut mismatches = Vec::new();
    let mut seen = HashSet::new();
    for file in &files() {
        let (bytes, base) = load(file);
        for id in base.walk() {
            let op = &base.ops[id];
            if op.results.is_empty() || !seen.insert(op.opcode) {
                continue;
            }
            // The first result type index follows the opcode.
            let at = op.offset + 1;
            if bytes[at] >= 0x80 {
                continue;
            }
            for t in (0..base.types.len().min(0x80) as u8).step_by(2) {
                if t == bytes[at] {
                    continue;
                }
                let mut patched = bytes.clone();
                patched[at] = t;
                let Ok(m) = tileiras::bytecode::read(&patched) else {
                    continue;
                };
                if m.ops.len() != base.ops.len() || m.ops[id].opcode != op.opcode {
                    continue;
                }
                if let Some(r) = h.compare(&m, &patched) {
                    mismatches.push(format!("{file} {} result type {t}:\n{r}", op.name()));
                }
            }
        }
    }
    println!("result-type sweep: {} modules compared", h.compared);
    assert!(h.compared > 200, "only {} compared", h.compared);
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn operand_sweep_matches_nvidia() {
    let mut h = Harness::new("sweep-operand");
    let mut mismatches = Vec::new();
    let mut seen: HashMap<_, usize> = HashMap::new();
    for file in &files() {
        let (bytes, base) = load(file);
        for id in base.walk() {
            let op = &base.ops[id];
            let count = seen.entry(op.opcode).or_default();
            *count += 1;
            if op.operands.is_empty() || *count > 3 {
                continue;
            }
            for delta in 1..12 {
                let at = op.offset + delta;
                if at >= bytes.len() || bytes[at] >= 0x80 {
                    break;
                }
                for v in (0u8..0x7f).step_by(7) {
                    if v == bytes[at] {
                        continue;
                    }
                    let mut patched = bytes.clone();
                    patched[at] = v;
                    let Ok(m) = tileiras::bytecode::read(&patched) else {
                        continue;
                    };
                    let one_operand = |a: &tileiras::ir::Op, b: &tileiras::ir::Op| {
                        a.opcode == b.opcode
                            && a.attrs == b.attrs
                            && a.results.len() == b.results.len()
                            && a.operands.len() == b.operands.len()
                            && a.operands
                                .iter()
                                .zip(&b.operands)
                                .filter(|(x, y)| x != y)
                                .count()
                                == 1
                    };
                    if !only_op_changed(&base, &m, id, one_operand) {
                        continue;
                    }
                    if let Some(r) = h.compare(&m, &patched) {
                        mismatches.push(format!("{file} {} +{delta}={v}:\n{r}", op.name()));
                    }
                }
            }
        }
    }
    println!("operand sweep: {} modules compared", h.compared);
    assert!(h.compared > 200, "only {} compared", h.compared);
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

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
}

#[test]
fn random_byte_corruption_matches_nvidia() {
    // One random byte rewritten per case; cases both readers accept must get
    // the same verdict and NVIDIA's messages.
    let mut h = Harness::new("sweep-random");
    let mut mismatches = Vec::new();
    let mut rng = Rng(12345);
    for file in &files() {
        let (bytes, _) = load(file);
        for _ in 0..25 {
            let mut patched = bytes.clone();
            let at = (rng.next() % patched.len() as u64) as usize;
            patched[at] = rng.next() as u8;
            let Ok(m) = tileiras::bytecode::read(&patched) else {
                continue;
            };
            if let Some(r) = h.compare(&m, &patched) {
                mismatches.push(format!("{file} byte {at}:\n{r}"));
            }
        }
    }
    println!("random sweep: {} modules compared", h.compared);
    assert!(h.compared > 150, "only {} compared", h.compared);
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
