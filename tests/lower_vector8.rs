//! 128-bit vector access for 8-bit elements: cuTile kernels
//! (`tests/data/lower/vector8/kernels.py`, exported by `gen.py`) that add,
//! widen, narrow, copy, pad and select i8, f8 and bool tiles through tensor
//! views. The `_d16` exports assume lengths and row strides divisible by 16,
//! so each thread moves sixteen bytes per `ld/st.global.v4.b32`
//! (`LDG.E.128`/`STG.E.128` in the SASS); `_d4` exports (divisible by 4)
//! take single 32-bit words; the `_d1` exports assume nothing, so accesses
//! narrow to single bytes. Each runs in the PTX emulator for
//! sm_80 and sm_90 against CPU references from the docstrings, on lengths
//! that end inside a tile (ragged for `_d1`, a multiple of 16 for `_d16`).
mod common;

use common::launch::Launch;

use std::process::Command;

use tileiras::options::{Gpu, Options};

const TARGETS: [(Gpu, &str); 2] = [(Gpu::Sm80, "sm_80"), (Gpu::Sm90, "sm_90a")];
const TILE: usize = 2048;

/// Our PTX for kernel `name` on `gpu` and the SASS ptxas makes of it.
fn compile(name: &str, gpu: Gpu, arch: &str) -> (String, String) {
    let path = common::repo().join(format!("tests/data/lower/vector8/{name}.tileir"));
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let m = tileiras::bytecode::read(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
    let options = Options {
        gpu,
        ..Default::default()
    };
    let text = tileiras::lower::lower(&m, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
    let (cubin, _) = common::assemble(&text, &["-arch", arch, "--opt-level", "3"]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("k.cubin");
    std::fs::write(&file, cubin).expect("write cubin");
    let out = Command::new(common::cuda_root().join("bin/nvdisasm"))
        .arg("-c")
        .arg(&file)
        .output()
        .expect("run nvdisasm");
    assert!(out.status.success(), "nvdisasm: {name}");
    (text, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Checks that the `_d16` export moves 16 bytes per access (and only so)
/// and that the `_d1` export falls back to single bytes.
fn check_widths(name: &str, ptx16: &str, sass16: &str, ptx1: &str) {
    assert!(ptx16.contains("ld.global.v4.b32"), "{name}_d16:\n{ptx16}");
    assert!(ptx16.contains("st.global.v4.b32"), "{name}_d16:\n{ptx16}");
    for narrow in ["ld.global.b8", "st.global.b8", "v4.b8", "v2.b8"] {
        assert!(!ptx16.contains(narrow), "{name}_d16 has {narrow}:\n{ptx16}");
    }
    assert!(sass16.contains("LDG.E.128"), "{name}_d16:\n{sass16}");
    assert!(sass16.contains("STG.E.128"), "{name}_d16:\n{sass16}");
    assert!(!sass16.contains("LDG.E.U8"), "{name}_d16:\n{sass16}");
    assert!(ptx1.contains("ld.global.b8"), "{name}_d1:\n{ptx1}");
    assert!(ptx1.contains("st.global.b8"), "{name}_d1:\n{ptx1}");
    assert!(
        !ptx1.contains(".v4.b32") && !ptx1.contains(".v2.b32"),
        "{name}_d1"
    );
}

/// Deterministic random bytes.
fn random(seed: u64, n: usize) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect()
}

fn i32s(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn to_i32s(b: &[u8]) -> Vec<i32> {
    b.chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Checks the access widths of both exports on every target, then runs
/// `f(export, its PTX, n)`: `_d16` with `n16` elements, `_d1` with `n1`.
fn each(name: &str, n16: usize, n1: usize, f: impl Fn(&str, &str, usize)) {
    assert!(n16 % 16 == 0 && n16 % TILE != 0 && n1 % 2 == 1);
    for (gpu, arch) in TARGETS {
        let (p16, s16) = compile(&format!("{name}_d16"), gpu, arch);
        let (p1, _) = compile(&format!("{name}_d1"), gpu, arch);
        check_widths(name, &p16, &s16, &p1);
        f(&format!("{name}_d16"), &p16, n16);
        f(&format!("{name}_d1"), &p1, n1);
    }
}

fn grid(n: usize) -> (u32, u32, u32) {
    (n.div_ceil(TILE) as u32, 1, 1)
}

#[test]
fn add_i8_wraps_sixteen_per_access() {
    each("add_i8", 2 * TILE + 432, 2 * TILE + 437, |name, ptx, n| {
        let (a, b) = (random(1, n), random(2, n));
        let mut l = Launch::new();
        l.array(&a, &[n]);
        l.array(&b, &[n]);
        // One sentinel byte past the end: never written.
        let c = l.array(&vec![0x5a; n + 1], &[n]);
        l.run(ptx, name, grid(n));
        let got = l.dev.read(c);
        for i in 0..n {
            assert_eq!(got[i], a[i].wrapping_add(b[i]), "{name} c[{i}]");
        }
        assert_eq!(got[n], 0x5a, "{name}: wrote past the end");
    });
}

#[test]
fn widen_and_narrow_i8_against_i32() {
    each("widen_narrow_i8", TILE + 16, TILE + 15, |name, ptx, n| {
        // The i32 tiles take the i8 tiles' sixteen elements per thread (four
        // 128-bit accesses), so no layout conversion goes through shared
        // memory.
        if name.ends_with("_d16") {
            assert!(!ptx.contains("st.shared"), "{name}:\n{ptx}");
        }
        let a = random(3, n);
        let x: Vec<i32> = random(4, 4 * n)
            .chunks(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let mut l = Launch::new();
        l.array(&a, &[n]);
        l.array(&i32s(&x), &[n]);
        let y = l.array(&vec![0; 4 * n], &[n]);
        let z = l.array(&vec![0; n], &[n]);
        l.run(ptx, name, grid(n));
        let (y, z) = (to_i32s(&l.dev.read(y)), l.dev.read(z));
        for i in 0..n {
            let ai = a[i] as i8;
            assert_eq!(y[i], i32::from(ai).wrapping_add(x[i]), "{name} y[{i}]");
            assert_eq!(z[i] as i8, (x[i] as i8).wrapping_sub(ai), "{name} z[{i}]");
        }
    });
}

#[test]
fn copy_f8_tiles_of_a_ragged_matrix() {
    for (gpu, arch) in TARGETS {
        let (p16, s16) = compile("copy_f8_2d_d16", gpu, arch);
        let (p1, _) = compile("copy_f8_2d_d1", gpu, arch);
        check_widths("copy_f8_2d", &p16, &s16, &p1);
        for (name, ptx, m, n) in [
            ("copy_f8_2d_d16", &p16, 48, 80),
            ("copy_f8_2d_d1", &p1, 45, 77),
        ] {
            let a = random(5, m * n);
            let mut l = Launch::new();
            l.array(&a, &[m, n]);
            let b = l.array(&vec![0xee; m * n + 1], &[m, n]);
            l.run(ptx, name, (m.div_ceil(32) as u32, n.div_ceil(64) as u32, 1));
            let got = l.dev.read(b);
            assert_eq!(&got[..m * n], &a[..], "{name}");
            assert_eq!(got[m * n], 0xee, "{name}: wrote past the end");
        }
    }
}

#[test]
fn nan_padding_fills_f8_beyond_the_input() {
    // The input ends inside a tile; the output is longer, so the load's
    // padding (NaN: 0x7e for f8E5M2) lands in the output's tail.
    each("pad_f8", TILE + 336, TILE + 337, |name, ptx, len| {
        let n = if len % 16 == 0 { len - 64 } else { len - 69 };
        let a = random(6, n);
        let mut l = Launch::new();
        l.array(&a, &[n]);
        let out = l.array(&vec![0; len], &[len]);
        l.run(ptx, name, grid(len));
        let got = l.dev.read(out);
        for i in 0..len {
            let want = if i < n { a[i] } else { 0x7e };
            assert_eq!(got[i], want, "{name} out[{i}]");
        }
    });
}

#[test]
fn bool_tiles_load_and_store_as_bytes() {
    each("select_bool", TILE + 1040, TILE + 1041, |name, ptx, n| {
        let (a, b) = (random(7, n), random(8, n));
        // Any non-zero byte reads as true.
        let m: Vec<u8> = random(9, n)
            .iter()
            .map(|&x| if x & 1 == 0 { 0 } else { x })
            .collect();
        let mut l = Launch::new();
        l.array(&a, &[n]);
        l.array(&b, &[n]);
        l.array(&m, &[n]);
        let lt = l.array(&vec![0x33; n], &[n]);
        let out = l.array(&vec![0; n], &[n]);
        l.run(ptx, name, grid(n));
        let (lt, out) = (l.dev.read(lt), l.dev.read(out));
        for i in 0..n {
            let want = u8::from((a[i] as i8) < (b[i] as i8));
            assert_eq!(lt[i], want, "{name} lt[{i}]");
            let sel = if m[i] != 0 { a[i] } else { b[i] };
            assert_eq!(out[i], sel, "{name} out[{i}]");
        }
    });
}

#[test]
fn lengths_divisible_by_four_take_32_bit_accesses() {
    for (gpu, arch) in TARGETS {
        for name in ["add_i8_d4", "pad_f8_d4"] {
            let (ptx, sass) = compile(name, gpu, arch);
            assert!(ptx.contains("ld.global.b32"), "{name}:\n{ptx}");
            assert!(ptx.contains("st.global.b32"), "{name}:\n{ptx}");
            for other in ["v4.b32", "v2.b32", "ld.global.b8", "st.global.b8"] {
                assert!(!ptx.contains(other), "{name} has {other}:\n{ptx}");
            }
            assert!(!sass.contains("LDG.E.128") && !sass.contains("LDG.E.U8"));
        }
        // Lengths ending 4 bytes into a 16-byte group.
        let (add, _) = compile("add_i8_d4", gpu, arch);
        let n = TILE + 436;
        let (a, b) = (random(10, n), random(11, n));
        let mut l = Launch::new();
        l.array(&a, &[n]);
        l.array(&b, &[n]);
        let c = l.array(&vec![0x5a; n + 4], &[n]);
        l.run(&add, "add_i8_d4", grid(n));
        let got = l.dev.read(c);
        for i in 0..n {
            assert_eq!(got[i], a[i].wrapping_add(b[i]), "add_i8_d4 c[{i}]");
        }
        assert_eq!(&got[n..], &[0x5a; 4], "add_i8_d4: wrote past the end");
        let (pad, _) = compile("pad_f8_d4", gpu, arch);
        let (n, len) = (TILE + 52, TILE + 200);
        let a = random(12, n);
        let mut l = Launch::new();
        l.array(&a, &[n]);
        let out = l.array(&vec![0; len], &[len]);
        l.run(&pad, "pad_f8_d4", grid(len));
        let got = l.dev.read(out);
        for i in 0..len {
            let want = if i < n { a[i] } else { 0x7e };
            assert_eq!(got[i], want, "pad_f8_d4 out[{i}]");
        }
    }
}

#[test]
fn f8_infinity_padding() {
    // f8E5M2 has infinities: -inf is 0xfc, written as whole 32-bit words.
    for (gpu, arch) in TARGETS {
        let name = "pad_neg_inf_f8_d16";
        let (ptx, _) = compile(name, gpu, arch);
        assert!(ptx.contains("ld.global.v4.b32"), "{name}:\n{ptx}");
        let (n, len) = (TILE + 96, TILE + 400);
        let a = random(13, n);
        let mut l = Launch::new();
        l.array(&a, &[n]);
        let out = l.array(&vec![0; len], &[len]);
        l.run(&ptx, name, grid(len));
        let got = l.dev.read(out);
        for i in 0..len {
            let want = if i < n { a[i] } else { 0xfc };
            assert_eq!(got[i], want, "{name} out[{i}]");
        }
    }
    // f8E4M3FN has none: the padding is refused rather than guessed.
    let path = common::repo().join("tests/data/lower/vector8/pad_inf_e4m3_d16.tileir");
    let m = tileiras::bytecode::read(&std::fs::read(path).unwrap()).unwrap();
    let err = tileiras::lower::lower(&m, &Options::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("this padding value for its element type"),
        "{err}"
    );
}
