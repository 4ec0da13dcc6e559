//! Shared by the host-callback tests: a differential case's bytecode and
//! arguments, NVIDIA's PTX and host object for it, and the parameter
//! buffer a launch of its entry hands the argument-change callback.

#![allow(dead_code)] // each test uses part of it

use std::path::Path;

/// The offset the callbacks for `gpu` align parameters relative to: the
/// parameters' offset in constant bank 0 on sm_90 (0x210); 0 on sm_100
/// and sm_120, where they take the PTX offsets.
pub fn param_bank(gpu: &str) -> u32 {
    match gpu {
        "sm_90" => 0x210,
        _ => 0,
    }
}

/// One visible argument of a case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// A buffer: its fake device address.
    Pointer(u64),
    /// A scalar's little-endian bytes.
    Scalar(Vec<u8>),
}

/// A differential case (`tests/data/differential/<dir>/<name>`): bytecode,
/// entry name and arguments, with fake addresses for its buffers.
pub struct Case {
    /// TileIR bytecode.
    pub bytecode: Vec<u8>,
    /// The entry's name (empty where the case names none: the module's
    /// only entry).
    pub entry: String,
    /// The visible arguments.
    pub args: Vec<Arg>,
}

/// Reads case `dir/name`; buffer `i` gets address `0x7f10_0000_0000 + (i << 24)`.
pub fn case(dir: &str, name: &str) -> Case {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/differential");
    let bytecode = std::fs::read(root.join(dir).join(format!("{name}.tileir"))).unwrap();
    let json: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.join(dir).join(format!("{name}.json"))).unwrap(),
    )
    .unwrap();
    let mut args = Vec::new();
    let mut buffers = 0u64;
    for a in json["args"].as_array().unwrap() {
        if a.get("buffer").is_some() {
            args.push(Arg::Pointer(0x7f10_0000_0000 + (buffers << 24)));
            buffers += 1;
        } else {
            let s = &a["scalar"];
            let bytes = match s["ty"].as_str().unwrap() {
                "i64" => s["value"].as_i64().unwrap().to_le_bytes().to_vec(),
                "f32" => (s["value"].as_f64().unwrap() as f32).to_le_bytes().to_vec(),
                _ => (s["value"].as_i64().unwrap() as i32).to_le_bytes().to_vec(),
            };
            args.push(Arg::Scalar(bytes));
        }
    }
    Case {
        bytecode,
        // the module's only entry where the case names none
        entry: json["entry"].as_str().unwrap_or_default().to_string(),
        args,
    }
}

/// A parameter as the callbacks lay it out: PTX offset, callback offset, size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Offset in the PTX parameter space (from 0).
    pub ptx: u32,
    /// Offset in the buffer the callback reads (aligned relative to [`param_bank`]).
    pub host: u32,
    /// Size in bytes.
    pub size: u32,
}

/// The entry's parameters with both offsets, for `gpu`.
pub fn slots(kernel: &ptx_emu::ir::Kernel, gpu: &str) -> Vec<Slot> {
    let bank = param_bank(gpu);
    let mut at = bank;
    kernel
        .params
        .iter()
        .map(|p| {
            at = at.next_multiple_of(p.align.max(1));
            let s = Slot {
                ptx: p.offset,
                host: at - bank,
                size: p.size,
            };
            at += p.size;
            s
        })
        .collect()
}

/// The buffer the argument-change callback reads: the visible arguments at
/// their host offsets, every other byte `fill`.
pub fn params(case: &Case, slots: &[Slot], fill: u8) -> Vec<u8> {
    let end = slots.iter().map(|s| s.host + s.size).max().unwrap_or(0);
    let mut b = vec![fill; end as usize];
    for (a, s) in case.args.iter().zip(slots) {
        let bytes = match a {
            Arg::Pointer(p) => p.to_le_bytes().to_vec(),
            Arg::Scalar(v) => {
                let mut v = v.clone();
                v.resize(s.size as usize, 0);
                v
            }
        };
        b[s.host as usize..(s.host + s.size) as usize].copy_from_slice(&bytes);
    }
    b
}
