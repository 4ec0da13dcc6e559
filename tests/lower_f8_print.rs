//! `print_tko` of f8E4M3FN and f8E5M2 tiles (kernel `print_f8`, written
//! with cuTile's bytecode encoders in `tests/data/lower/ops/gen.py`), over
//! all 256 codes of each format, and cuTile Python's `ct.printf` of an
//! f8E4M3FN array (`print_e4m3`).
//! The f8 decodes to f32 (by bit manipulation on sm_80, by the `cvt` f8
//! forms on sm_90) and prints as an f64, as NVIDIA's tileiras prints it.
//! Lowered, assembled by the real ptxas and run in the PTX emulator, the
//! results are compared with the formats' definitions (`common::scaled`).
mod common;

use common::launch::Launch;
use common::scaled::{e4m3, e5m2};
use ptx_emu::{Device, Module, Param};
use tileiras::options::{Gpu, Options};

/// The targets: sm_80 decodes on the bits, sm_90 with `cvt.rn.f16x2.e4m3x2`
/// and `.e5m2x2`.
const TARGETS: [(Gpu, &str); 2] = [(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")];

/// The PTX of ops kernel `name` for `gpu`, checked by the verifier and by
/// ptxas for `arch` (see [`common::ops_ptx`]).
fn ptx(name: &str, gpu: Gpu, arch: &str) -> String {
    common::ops_ptx(name, gpu, arch)
}

/// Checks which f8 decoding the PTX for `arch` uses.
fn check_decoding(text: &str, arch: &str) {
    let hardware = ["cvt.rn.f16x2.e4m3x2", "cvt.rn.f16x2.e5m2x2"];
    for form in hardware {
        assert_eq!(text.contains(form), arch != "sm_80", "{arch}: {form}");
    }
}

#[test]
fn f8_tiles_print_their_values() {
    let codes: Vec<u8> = (0..=255).collect();
    for (gpu, arch) in TARGETS {
        let text = ptx("print_f8", gpu, arch);
        check_decoding(&text, arch);
        let m = Module::parse(&text).expect("emulator parses the PTX");
        let mut dev = Device::new();
        let p = dev.alloc_from(&codes);
        let out = dev
            .launch_grid(&m, "print_f8", (1, 1, 1), &[Param::U64(p.addr())])
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        let list = |f: &dyn Fn(u8) -> String| codes.iter().map(|&c| f(c)).collect::<Vec<_>>();
        let want = format!(
            "e4m3 [{}]\ne5m2 [{}]\n",
            list(&|c| format!("{:.9}", e4m3(c))).join(", "),
            list(&|c| format!("{:.16}", e5m2(c))).join(", "),
        );
        assert_eq!(out.printf, want, "{arch}");
        // Spot checks of the reference itself.
        assert!(want.contains("e4m3 [0.000000000, 0.001953125,"));
        assert!(want.contains(", 448.000000000, NaN, -0.000000000,"));
        assert!(want.contains(", 57344.0000000000000000, inf, NaN, NaN, NaN,"));
        assert!(want.contains("e5m2 [0.0000000000000000, 0.0000152587890625,"));
    }
}

#[test]
fn cutile_printf_of_an_f8_array_prints_its_values() {
    // Codes from every part of the range: zero, subnormals, normals, the
    // largest finite value, NaN, negatives.
    let codes = [
        0x00u8, 0x01, 0x07, 0x08, 0x38, 0x3f, 0x55, 0x7e, 0x7f, 0x80, 0x81, 0xb8, 0xc4, 0xfe, 0xff,
        0x2a,
    ];
    for (gpu, arch) in TARGETS {
        let path = common::repo().join("tests/data/lower/kernels/print_e4m3.tileir");
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let m = tileiras::bytecode::read(&data).expect("reads");
        let options = Options {
            gpu,
            ..Default::default()
        };
        let text = tileiras::lower::lower(&m, &options).unwrap_or_else(|e| panic!("{arch}: {e}"));
        common::assemble(&text, &["-arch", arch, "--opt-level", "3"]);
        let mut l = Launch::new();
        l.array(&codes, &[codes.len()]);
        let out = l.run(&text, "print_e4m3", (1, 1, 1));
        let values: Vec<String> = codes.iter().map(|&c| format!("{:.6}", e4m3(c))).collect();
        assert_eq!(out.printf, format!("[{}]\n", values.join(", ")), "{arch}");
    }
}
