//! Line information: with `--lineinfo` (or `-g`) the PTX names the
//! bytecode's source files with `.file` and puts a `.loc` before the code of
//! each op with a source position; the real ptxas turns them into line
//! tables that `nvdisasm -g` reads back. The prologue is at the function's
//! scope line. Without line info, no `.loc` appears.
mod common;
use std::collections::BTreeSet;
use std::process::Command;

use tileiras::ir::Module;
use tileiras::options::{Gpu, Options};

fn module(name: &str) -> Module {
    let path = common::corpus()
        .join(name)
        .join(format!("{name}.v13_3.tileir"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    tileiras::bytecode::read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn lower(m: &Module, line_info: bool) -> String {
    let options = Options {
        gpu: Gpu::Sm90,
        line_info,
        ..Default::default()
    };
    tileiras::lower::lower(m, &options).expect("lowers")
}

/// The `(line, column)` of every `.loc` in `ptx`, checking each names file 1.
fn locs(ptx: &str) -> Vec<(u32, u32)> {
    ptx.lines()
        .filter_map(|l| l.trim().strip_prefix(".loc"))
        .map(|rest| {
            let v: Vec<u32> = rest
                .split_whitespace()
                .map(|t| t.parse().expect("number"))
                .collect();
            assert_eq!(v.len(), 3, "{rest}");
            assert_eq!(v[0], 1, "only one file: {rest}");
            (v[1], v[2])
        })
        .collect()
}

#[test]
fn loc_lines_are_the_positions_of_the_ops() {
    for name in [
        "vadd_f32_contig",
        "for_loop_carried_f32",
        "softmax_rows_f32",
    ] {
        let m = module(name);
        let plain = lower(&m, false);
        assert!(
            !plain.contains(".loc") && !plain.contains(".file"),
            "{name}"
        );
        let ptx = lower(&m, true);
        assert!(
            ptx.contains("\t.file\t1 \"kernels.py\"\n"),
            "{name}:\n{ptx}"
        );
        // The prologue is at the function's scope line, column 0, as
        // NVIDIA's tileiras puts it.
        let entry = m.top_level()[0];
        let start = m.scope_location(entry).expect("a subprogram");
        assert_eq!(locs(&ptx)[0], (start.line, 0), "{name}");
        let found: BTreeSet<(u32, u32)> = locs(&ptx).into_iter().collect();
        let known: BTreeSet<(u32, u32)> = m
            .walk()
            .flat_map(|op| [m.location(op), m.scope_location(op)])
            .flatten()
            .map(|l| (l.line, l.column))
            .collect();
        assert!(found.len() >= 3, "{name}: {found:?}");
        assert!(
            found.is_subset(&known),
            "{name}: {found:?} not in {known:?}"
        );
        // A new `.loc` only where the position changes.
        let all = locs(&ptx);
        let body: Vec<&str> = ptx
            .lines()
            .filter(|l| l.starts_with('\t') && !l.starts_with("\t.reg") && !l.contains(".file"))
            .collect();
        for w in body.windows(2) {
            assert!(
                !(w[0].starts_with("\t.loc") && w[1].starts_with("\t.loc")),
                "{name}: two .loc in a row: {w:?}"
            );
        }
        assert!(all.len() < body.len(), "{name}");
        // Line info changes nothing else.
        let strip = |t: &str| -> String {
            t.lines()
                .filter(|l| !l.contains(".loc") && !l.contains(".file"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(strip(&ptx), strip(&plain), "{name}");
    }
}

#[test]
fn ptxas_builds_line_tables_from_them() {
    let m = module("for_loop_carried_f32");
    let ptx = lower(&m, true);
    let (bytes, _) = common::assemble(&ptx, &["-arch", "sm_90a", "--opt-level", "3", "-lineinfo"]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let cubin = tmp.path().join("k.cubin");
    std::fs::write(&cubin, bytes).expect("write");
    let dis = Command::new(common::cuda_root().join("bin/nvdisasm"))
        .args(["-g", "-c"])
        .arg(&cubin)
        .output()
        .expect("nvdisasm runs");
    assert!(dis.status.success());
    let text = String::from_utf8_lossy(&dis.stdout);
    let lines: BTreeSet<u32> = text
        .lines()
        .filter_map(|l| l.split("File \"kernels.py\", line ").nth(1))
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    let want: BTreeSet<u32> = locs(&ptx).into_iter().map(|(l, _)| l).collect();
    assert!(lines.len() >= 3, "{text}");
    assert!(lines.is_subset(&want), "{lines:?} vs {want:?}");
}

#[test]
fn line_info_ptx_runs_in_the_emulator() {
    let ptx = lower(&module("vadd_f32_contig"), true);
    ptx_emu::Module::parse(&ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
}

#[test]
fn device_debug_builds_carry_dwarf_that_ptxas_keeps() {
    let m = module("for_loop_carried_f32");
    let options = Options {
        gpu: Gpu::Sm90,
        device_debug: true,
        opt_level: 0,
        ..Default::default()
    };
    let ptx = tileiras::lower::lower(&m, &options).expect("lowers");
    assert!(ptx.contains(".target sm_90a, debug\n"), "{ptx}");
    assert!(ptx.contains("$L__func_begin0:\n") && ptx.contains("$L__func_end0:\n}"));
    assert!(
        ptx.contains("\t.section\t.debug_abbrev\n") && ptx.contains("\t.section\t.debug_info\n")
    );
    ptx_emu::Module::parse(&ptx).unwrap_or_else(|e| panic!("{e}"));
    // ptxas runs as the CLI runs it (no -g: the debug info is in the PTX).
    let (bytes, _) = common::assemble(&ptx, &["-arch", "sm_90a", "--opt-level", "0"]);
    use object::{Object, ObjectSection};
    let elf = object::File::parse(&*bytes).expect("ELF");
    let info = elf
        .section_by_name(".debug_info")
        .and_then(|s| s.data().ok().map(<[u8]>::to_vec))
        .expect(".debug_info");
    let name = b"for_loop_carried_f32\0";
    assert!(info.windows(name.len()).any(|w| w == name));
    assert!(info.windows(11).any(|w| w == b"kernels.py\0"));
    // Version 2 unit whose length covers the section.
    let len = u32::from_le_bytes(info[..4].try_into().expect("4 bytes")) as usize;
    assert_eq!(len + 4, info.len());
    assert_eq!(&info[4..6], &[2, 0]);
    assert!(elf.section_by_name(".debug_line").is_some());
}
