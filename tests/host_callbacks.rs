//! Our host callbacks (`tileiras::host`), held against a disassembler, the
//! system linker, NVIDIA's callbacks and each other:
//!
//! - every instruction form of both encoders disassembles (objdump) to the
//!   instruction meant;
//! - for every kernel of `tests/data/tensor_map` and every differential
//!   case whose NVIDIA entry takes tensor maps (sm_90, sm_100, sm_120), a
//!   map spec is read off NVIDIA's map (element type, swizzle, box) and the
//!   entry's parameters; our x86-64 object, run by the `nv-host` loader on
//!   the same parameter buffer as NVIDIA's, leaves the buffer byte for byte
//!   as NVIDIA's does: for random arrays and for hostile ones (zero and huge
//!   dims, unaligned addresses and strides);
//! - our objects link with the system's linker into a C program
//!   (`tests/host_callbacks/harness.c`) that calls `ON_PRE_LOAD` and the
//!   callbacks as the driver does; the aarch64 program, run under
//!   `qemu-aarch64`, writes the same bytes as the x86-64 one and as the
//!   program's own interpreter ([`tileiras::host::Program::run`]).
//!
//! What needs a tool this host lacks (objdump for aarch64, the cross
//! compiler, qemu; x86-64 Linux for NVIDIA's code) says so and passes,
//! except under CI (`CI=true`), where it fails.

#[cfg_attr(
    not(all(target_arch = "x86_64", target_os = "linux")),
    allow(dead_code, unused_imports)
)]
#[path = "differential/nvidia.rs"]
mod nvidia;
#[path = "common/nvidia_reference.rs"]
mod nvidia_reference;
#[cfg_attr(
    not(all(target_arch = "x86_64", target_os = "linux")),
    allow(dead_code, unused_imports)
)]
#[path = "nv_host/support.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tileiras::host::{
    self, Kernel, MapElem, MapSpec, MapSwizzle, MapValue, Op, Program, Reg, REGS,
};
use tileiras::{HostArch, HostOs};

/// Whether a missing tool fails the test (under CI) rather than skipping it.
fn strict() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// Says why a check cannot run here; fails under CI.
fn cannot(why: &str) {
    assert!(!strict(), "{why} (CI must run this check)");
    eprintln!("skipped: {why}");
}

fn has(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("host_callbacks");
    std::fs::create_dir_all(&d).unwrap();
    d.join(format!("{}-{name}", std::process::id()))
}

/// xorshift
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

mod forms {
    use super::*;

    /// The scratch registers' names (64, 32 and 8 bits) and the buffer's
    /// register, by x86-64 convention.
    struct Names {
        x64: [&'static str; 6],
        x32: [&'static str; 6],
        x8: [&'static str; 6],
        base: &'static str,
    }

    fn names(os: HostOs) -> Names {
        match os {
            HostOs::Linux => Names {
                x64: ["rax", "rdx", "rsi", "rdi", "r8", "r9"],
                x32: ["eax", "edx", "esi", "edi", "r8d", "r9d"],
                x8: ["al", "dl", "sil", "dil", "r8b", "r9b"],
                base: "rcx",
            },
            HostOs::Windows => Names {
                x64: ["rax", "rdx", "rcx", "r8", "r10", "r11"],
                x32: ["eax", "edx", "ecx", "r8d", "r10d", "r11d"],
                x8: ["al", "dl", "cl", "r8b", "r10b", "r11b"],
                base: "r9",
            },
        }
    }

    /// The instructions objdump reads in `code`, whitespace collapsed.
    fn objdump(arch: HostArch, code: &[u8]) -> Option<Vec<String>> {
        let (tool, args): (&str, &[&str]) = match arch {
            HostArch::X86_64 => ("objdump", &["-m", "i386:x86-64", "-M", "intel"]),
            HostArch::Aarch64 => ("aarch64-linux-gnu-objdump", &["-m", "aarch64"]),
        };
        if !has(tool) {
            cannot(&format!("{tool} is not installed"));
            return None;
        }
        let f = tmp(&format!("{arch:?}.bin"));
        std::fs::write(&f, code).unwrap();
        let out = Command::new(tool)
            .args(["-D", "-b", "binary"])
            .args(args)
            .arg(&f)
            .output()
            .unwrap();
        std::fs::remove_file(&f).unwrap();
        assert!(out.status.success(), "{tool}: {out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        Some(
            text.lines()
                .filter_map(|l| {
                    let fields: Vec<&str> = l.split('\t').collect();
                    let addr = fields[0].trim();
                    (fields.len() >= 3 && addr.ends_with(':') && !addr.contains(' ')).then(|| {
                        let ins = fields[2..].join(" ");
                        let ins = ins.split("//").next().unwrap();
                        ins.split_whitespace().collect::<Vec<_>>().join(" ")
                    })
                })
                .collect(),
        )
    }

    /// Every form with every register (pairs too), and offsets in and
    /// beyond the short encodings, with the text each must disassemble to.
    fn cases(arch: HostArch, os: HostOs) -> Vec<(Op, Vec<String>)> {
        let Names { x64, x32, x8, base } = names(os);
        let mut v = Vec::new();
        let offs = [0u32, 0x40, 0x1238, 0x7ff8];
        let x86 = arch == HostArch::X86_64;
        let a64 = |r: u8| format!("x{}", 8 + r);
        let a32 = |r: u8| format!("w{}", 8 + r);
        let hex = |v: u64| format!("{v:#x}");
        for d in 0..REGS {
            let rd = Reg(d);
            for &off in &offs {
                let o = off;
                let (l32, l64, st) = if x86 {
                    let at = format!("[{base}+{}]", hex(u64::from(o)));
                    (
                        vec![format!("mov {},DWORD PTR {at}", x32[d as usize])],
                        vec![format!("mov {},QWORD PTR {at}", x64[d as usize])],
                        vec![format!("mov QWORD PTR {at},{}", x64[d as usize])],
                    )
                } else {
                    let imm = |scale: u32, r: String, op: &str| {
                        if o % scale == 0 && o / scale < 4096 {
                            if o == 0 {
                                vec![format!("{op} {r}, [x3]")]
                            } else {
                                vec![format!("{op} {r}, [x3, #{o}]")]
                            }
                        } else {
                            vec![
                                format!("mov x16, #{}", hex(u64::from(o))),
                                format!("{op} {r}, [x3, x16]"),
                            ]
                        }
                    };
                    (
                        imm(4, a32(d), "ldr"),
                        imm(8, a64(d), "ldr"),
                        imm(8, a64(d), "str"),
                    )
                };
                v.push((Op::LoadU32 { dst: rd, off: o }, l32));
                v.push((Op::LoadU64 { dst: rd, off: o }, l64));
                v.push((Op::Store64 { src: rd, off: o }, st));
            }
            for value in [
                0u64,
                16,
                0x20000,
                0xffff_ffff,
                0x01ff_ffff_ffff_fff0,
                u64::MAX,
            ] {
                let want = if x86 {
                    vec![format!("movabs {},{}", x64[d as usize], hex(value))]
                } else {
                    let mut w = Vec::new();
                    for h in 0..4 {
                        let c = (value >> (16 * h)) & 0xffff;
                        if h == 0 {
                            // objdump shows movz as mov of the shifted value
                            w.push(format!("mov {}, #{}", a64(d), hex(c)));
                        } else if c != 0 {
                            w.push(format!("movk {}, #{}, lsl #{}", a64(d), hex(c), 16 * h));
                        }
                    }
                    w
                };
                v.push((Op::Const { dst: rd, value }, want));
            }
            for n in [4u8, 21, 32] {
                let (shl, shr) = if x86 {
                    (
                        format!("shl {},{}", x64[d as usize], hex(u64::from(n))),
                        format!("shr {},{}", x64[d as usize], hex(u64::from(n))),
                    )
                } else {
                    (
                        format!("lsl {0}, {0}, #{n}", a64(d)),
                        format!("lsr {0}, {0}, #{n}", a64(d)),
                    )
                };
                v.push((Op::Shl(rd, n), vec![shl]));
                v.push((Op::Shr(rd, n), vec![shr]));
            }
            for s in 0..REGS {
                let rs = Reg(s);
                let bin = |x: &str, a: &str| {
                    if x86 {
                        format!("{x} {},{}", x64[d as usize], x64[s as usize])
                    } else {
                        format!("{a} {0}, {0}, {1}", a64(d), a64(s))
                    }
                };
                v.push((Op::Add(rd, rs), vec![bin("add", "add")]));
                v.push((Op::And(rd, rs), vec![bin("and", "and")]));
                v.push((Op::Or(rd, rs), vec![bin("or", "orr")]));
                v.push((Op::Mul(rd, rs), vec![bin("imul", "mul")]));
                for b in 0..REGS {
                    if d == s || d == b {
                        continue;
                    }
                    let want = if x86 {
                        vec![
                            format!("xor {0},{0}", x32[d as usize]),
                            format!("cmp {},{}", x64[s as usize], x64[b as usize]),
                            format!("setae {}", x8[d as usize]),
                        ]
                    } else {
                        vec![
                            format!("cmp {}, {}", a64(s), a64(b)),
                            format!("cset {}, cs", a64(d)),
                        ]
                    };
                    v.push((
                        Op::SetGeU {
                            dst: rd,
                            a: rs,
                            b: Reg(b),
                        },
                        want,
                    ));
                }
            }
        }
        v
    }

    fn check(arch: HostArch, os: HostOs) {
        let cases = cases(arch, os);
        let mut code = Vec::new();
        let mut want = Vec::new();
        for (op, text) in &cases {
            code.extend(host::encode_op(op, arch, os));
            want.extend(text.iter().cloned());
        }
        // the callback's return
        code.extend(host::encode(&Program::default(), arch, os));
        want.extend(
            match arch {
                HostArch::X86_64 => ["xor eax,eax", "ret"],
                HostArch::Aarch64 => ["mov w0, #0x0", "ret"],
            }
            .map(String::from),
        );
        let Some(got) = objdump(arch, &code) else {
            return;
        };
        assert_eq!(got.len(), want.len(), "{arch:?} {os:?}: instruction count");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{arch:?} {os:?}: instruction {i}");
        }
        eprintln!(
            "{arch:?} {os:?}: {} forms, {} instructions disassembled as meant",
            cases.len(),
            got.len()
        );
    }

    #[test]
    fn x86_64_forms_disassemble_as_meant() {
        check(HostArch::X86_64, HostOs::Linux);
        check(HostArch::X86_64, HostOs::Windows);
    }

    #[test]
    fn aarch64_forms_disassemble_as_meant() {
        check(HostArch::Aarch64, HostOs::Linux);
    }
}

/// Map specs covering ranks 1..5, every element type and swizzle, and
/// offsets beyond aarch64's short loads; with their buffer length.
fn varied_kernels() -> (Vec<Kernel>, u32) {
    let elems = [
        MapElem::B8,
        MapElem::B16,
        MapElem::B32,
        MapElem::B64,
        MapElem::F16,
        MapElem::F32,
        MapElem::F64,
        MapElem::Bf16,
    ];
    let swizzles = [
        MapSwizzle::None,
        MapSwizzle::B32,
        MapSwizzle::B64,
        MapSwizzle::B128,
        MapSwizzle::B128Atom32,
    ];
    let mut kernels = Vec::new();
    let mut at = 0u32;
    for (k, rank) in (1..=5usize).enumerate() {
        let mut maps = Vec::new();
        for m in 0..3usize {
            let elem = elems[(k * 3 + m) % elems.len()];
            let base = at;
            let dims: Vec<u32> = (0..rank as u32).map(|i| base + 8 + 4 * i).collect();
            let strides: Vec<u32> = (0..rank as u32 - 1)
                .map(|i| base + 8 + 4 * (rank as u32 + i))
                .collect();
            at = (base + 8 + 8 * rank as u32).next_multiple_of(64);
            // one map far out: beyond 4095 * 4 bytes
            if k == 4 && m == 2 {
                at += 0x4000;
            }
            maps.push(MapSpec {
                map: at,
                base,
                // the middle map of each rank has a constant outer dim
                dims: (dims.into_iter().enumerate())
                    .map(|(i, d)| match (m, i) {
                        (1, 0) => MapValue::Const(3 + k as u32),
                        _ => MapValue::Arg(d),
                    })
                    .collect(),
                strides: strides.into_iter().map(MapValue::Arg).collect(),
                elem,
                tf32: elem == MapElem::F32 && m == 1,
                swizzle: swizzles[(k + m) % swizzles.len()],
                box_dims: (0..rank as u32)
                    .map(|i| 1 + (i * 37 + m as u32 * 11) % 256)
                    .collect(),
            });
            at += 128;
        }
        kernels.push(Kernel {
            name: format!("kernel_{rank}d"),
            maps,
        });
    }
    (kernels, at)
}

/// A parameter buffer with random arguments (hostile ones one time in
/// two) at the offsets `k`'s maps read.
fn arguments(k: &Kernel, len: u32, rng: &mut Rng, hostile: bool) -> Vec<u8> {
    let mut b: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
    let pick = |rng: &mut Rng, nice: u64, bad: &[u64]| {
        if hostile && rng.below(2) == 0 {
            bad[rng.below(bad.len() as u64) as usize]
        } else {
            nice
        }
    };
    for m in &k.maps {
        let nice = 0x7f00_0000_0000 + rng.below(1 << 24) * 16;
        let addr = pick(rng, nice, &[0, 1, 0xf, u64::MAX, 1 << 63 | 8]);
        b[m.base as usize..][..8].copy_from_slice(&addr.to_le_bytes());
        for o in m.dims.iter().chain(&m.strides) {
            let nice = 1 + rng.below(5000);
            let v = pick(
                rng,
                nice,
                &[0, 1, 7, 0x7fff_ffff, 0x8000_0000, u64::from(u32::MAX)],
            ) as u32;
            if let MapValue::Arg(o) = o {
                b[*o as usize..][..4].copy_from_slice(&v.to_le_bytes());
            }
        }
    }
    b
}

mod linked {
    use super::*;

    /// Links `object` with the harness for `arch`; `None` where the tools
    /// are missing.
    pub(super) fn program(object: &[u8], arch: HostArch, os: HostOs) -> Option<PathBuf> {
        let (cc, run_here) = match arch {
            HostArch::X86_64 => ("cc", cfg!(target_arch = "x86_64")),
            HostArch::Aarch64 => ("aarch64-linux-gnu-gcc", false),
        };
        if !cfg!(target_os = "linux") || !has(cc) {
            cannot(&format!("{cc} is not installed"));
            return None;
        }
        if !run_here && !has("qemu-aarch64") {
            cannot("qemu-aarch64 is not installed");
            return None;
        }
        let obj = tmp(&format!("{arch:?}-{os:?}.o"));
        std::fs::write(&obj, object).unwrap();
        let exe = tmp(&format!("{arch:?}-{os:?}.exe"));
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/host_callbacks/harness.c");
        let mut cmd = Command::new(cc);
        if os == HostOs::Windows {
            // The driver's side of the Microsoft x64 convention.
            assert_eq!(arch, HostArch::X86_64);
            cmd.arg("-DMS_ABI");
        }
        let out = cmd
            .args(["-O1", "-o"])
            .arg(&exe)
            .arg(&src)
            .arg(&obj)
            .output()
            .unwrap();
        std::fs::remove_file(&obj).unwrap();
        assert!(
            out.status.success(),
            "{cc}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(exe)
    }

    /// Runs the harness on `records` (kernel, buffer): the names it lists
    /// and each (status, buffer after the callback).
    pub(super) fn run(
        exe: &Path,
        arch: HostArch,
        records: &[(u32, Vec<u8>)],
    ) -> (Vec<String>, Vec<(i32, Vec<u8>)>) {
        let mut cmd = if arch == HostArch::Aarch64 {
            let mut c = Command::new("qemu-aarch64");
            c.env(
                "QEMU_LD_PREFIX",
                std::env::var("QEMU_LD_PREFIX").unwrap_or("/usr/aarch64-linux-gnu".into()),
            );
            c.arg(exe);
            c
        } else {
            Command::new(exe)
        };
        let mut input = Vec::new();
        for (k, b) in records {
            input.extend(k.to_le_bytes());
            input.extend((b.len() as u32).to_le_bytes());
            input.extend(b);
        }
        let inp = tmp(&format!("{arch:?}.in"));
        std::fs::write(&inp, &input).unwrap();
        let out = cmd
            .stdin(std::fs::File::open(&inp).unwrap())
            .output()
            .unwrap();
        std::fs::remove_file(&inp).unwrap();
        assert!(
            out.status.success(),
            "{arch:?} harness: {:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let o = out.stdout;
        let mut lines = o.split(|c| *c == b'\n');
        let n: usize = std::str::from_utf8(lines.next().unwrap())
            .unwrap()
            .parse()
            .unwrap();
        let names: Vec<String> = (0..n)
            .map(|_| String::from_utf8(lines.next().unwrap().to_vec()).unwrap())
            .collect();
        let mut at = names.iter().map(|s| s.len() + 1).sum::<usize>() + n.to_string().len() + 1;
        let mut results = Vec::new();
        for (_, b) in records {
            let status = i32::from_le_bytes(o[at..at + 4].try_into().unwrap());
            results.push((status, o[at + 4..at + 4 + b.len()].to_vec()));
            at += 4 + b.len();
        }
        assert_eq!(at, o.len());
        (names, results)
    }

    /// Both hosts' objects, linked by the system's linkers, list the
    /// kernels and write what the program's interpreter writes, for random
    /// and hostile arguments.
    #[test]
    fn both_hosts_write_what_the_program_says() {
        let (kernels, len) = varied_kernels();
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut records = Vec::new();
        for i in 0..400 {
            let k = i % kernels.len();
            records.push((k as u32, arguments(&kernels[k], len, &mut rng, i % 2 == 1)));
        }
        let want: Vec<(i32, Vec<u8>)> = records
            .iter()
            .map(|(k, b)| {
                let mut b = b.clone();
                kernels[*k as usize].program().unwrap().run(&mut b).unwrap();
                (0, b)
            })
            .collect();
        let names: Vec<String> = kernels.iter().map(|k| k.name.clone()).collect();
        let mut ran = 0;
        // Windows hosts: x86-64 code by the Microsoft convention (called
        // by a harness built for it); AArch64's is Linux's.
        let hosts = [
            (HostArch::X86_64, HostOs::Linux),
            (HostArch::X86_64, HostOs::Windows),
            (HostArch::Aarch64, HostOs::Linux),
        ];
        for (arch, os) in hosts {
            let object = host::callbacks_object(&kernels, arch, os).unwrap();
            let Some(exe) = program(&object, arch, os) else {
                continue;
            };
            let (got_names, got) = run(&exe, arch, &records);
            std::fs::remove_file(&exe).unwrap();
            assert_eq!(got_names, names, "{arch:?} {os:?}");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    g, w,
                    "{arch:?} {os:?}: record {i} (kernel {})",
                    records[i].0
                );
            }
            ran += 1;
        }
        assert_eq!(
            host::callbacks_object(&kernels, HostArch::Aarch64, HostOs::Windows).unwrap(),
            host::callbacks_object(&kernels, HostArch::Aarch64, HostOs::Linux).unwrap()
        );
        eprintln!(
            "{} buffers, {ran} hosts: every byte as the program says",
            records.len()
        );
    }
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod against_nvidia {
    use super::*;
    use nv_host::Image;
    use ptx_emu::{HwElem, HwTensorMap};

    const GPUS: [&str; 3] = ["sm_90", "sm_100", "sm_120"];

    fn elem(e: HwElem) -> MapElem {
        match e {
            HwElem::B8 => MapElem::B8,
            HwElem::B16 => MapElem::B16,
            HwElem::B32 => MapElem::B32,
            HwElem::B64 => MapElem::B64,
            HwElem::F16 => MapElem::F16,
            HwElem::F32 => MapElem::F32,
            HwElem::F64 => MapElem::F64,
            HwElem::BF16 => MapElem::Bf16,
        }
    }

    /// An argument: a pointer or a 32-bit scalar (value), at its slot.
    #[derive(Clone)]
    enum Arg {
        Pointer(u64),
        Scalar(u64),
    }

    /// One kernel of NVIDIA's: the entry's slots, its visible arguments,
    /// and its host object.
    struct Nvidia {
        entry: String,
        slots: Vec<support::Slot>,
        visible: usize,
        image: Image,
    }

    fn buffer(slots: &[support::Slot], args: &[Arg], fill: u8) -> Vec<u8> {
        let end = slots.iter().map(|s| s.host + s.size).max().unwrap_or(0);
        let mut b = vec![fill; end as usize];
        for (a, s) in args.iter().zip(slots) {
            let at = s.host as usize;
            match a {
                Arg::Pointer(p) => b[at..at + 8].copy_from_slice(&p.to_le_bytes()),
                Arg::Scalar(v) => {
                    b[at..at + s.size as usize].copy_from_slice(&v.to_le_bytes()[..s.size as usize])
                }
            }
        }
        b
    }

    /// The specs of NVIDIA's maps for `args`: each map's array is the
    /// pointer argument its address equals. Which scalar argument each of
    /// its dims and strides is comes from a probe launch where scalar `i`
    /// is `16 (100 + i)` (NVIDIA transposes some views, and equal dims are
    /// told apart only so); the innermost map dim's stride is never read.
    fn specs(n: &Nvidia, args: &[Arg], what: &str) -> Vec<MapSpec> {
        let probe: Vec<Arg> = args
            .iter()
            .enumerate()
            .map(|(i, a)| match a {
                Arg::Scalar(_) => Arg::Scalar(16 * (100 + i as u64)),
                p => p.clone(),
            })
            .collect();
        let mut b = buffer(&n.slots, &probe, 0);
        let l = n
            .image
            .launch(&n.entry, &mut b)
            .unwrap_or_else(|e| panic!("{what}: NVIDIA's callback: {e}"));
        assert_eq!(l.status, 0, "{what}");
        let mut specs = Vec::new();
        for s in &n.slots[n.visible..] {
            let raw = &b[s.host as usize..s.host as usize + 128];
            let m = HwTensorMap::decode(raw).unwrap_or_else(|e| panic!("{what}: {e}"));
            let p = args
                .iter()
                .position(|a| matches!(a, Arg::Pointer(p) if *p == m.base))
                .unwrap_or_else(|| {
                    panic!("{what}: no argument is the map's address {:#x}", m.base)
                });
            let es = u64::from(m.elem.size());
            let arg = |v: u64, kind: &str| {
                let i = (v / 16)
                    .checked_sub(100)
                    .filter(|i| v % 16 == 0 && (*i as usize) < args.len());
                let i = i.unwrap_or_else(|| {
                    panic!("{what}: map {kind} {v} is no argument: {}", show(&probe))
                });
                assert!(matches!(args[i as usize], Arg::Scalar(_)), "{what}");
                i as usize
            };
            // outermost first
            let dims: Vec<usize> = m
                .dims
                .iter()
                .rev()
                .map(|d| arg(u64::from(*d), "dim"))
                .collect();
            let strides: Vec<usize> = m
                .strides
                .iter()
                .rev()
                .map(|s| arg(s / es, "stride"))
                .collect();
            specs.push(MapSpec {
                map: s.host,
                base: n.slots[p].host,
                dims: (dims.iter())
                    .map(|i| MapValue::Arg(n.slots[*i].host))
                    .collect(),
                strides: (strides.iter())
                    .map(|i| MapValue::Arg(n.slots[*i].host))
                    .collect(),
                elem: elem(m.elem),
                tf32: m.tf32,
                swizzle: match m.swizzle {
                    0 => MapSwizzle::None,
                    1 => MapSwizzle::B32,
                    2 => MapSwizzle::B64,
                    3 => MapSwizzle::B128,
                    _ => MapSwizzle::B128Atom32,
                },
                box_dims: m.box_dims.iter().rev().copied().collect(),
            });
        }
        specs
    }

    fn show(args: &[Arg]) -> String {
        let v: Vec<String> = args
            .iter()
            .map(|a| match a {
                Arg::Pointer(p) => format!("{p:#x}"),
                Arg::Scalar(v) => v.to_string(),
            })
            .collect();
        v.join(" ")
    }

    /// Runs NVIDIA's callback and ours on the same buffer (filled with
    /// 0xa5 between the arguments) and asserts the same bytes.
    fn same(n: &Nvidia, ours: &Image, args: &[Arg], what: &str) {
        let mut theirs = buffer(&n.slots, args, 0xa5);
        let mut mine = theirs.clone();
        assert_eq!(
            n.image.launch(&n.entry, &mut theirs).unwrap().status,
            0,
            "{what}"
        );
        assert_eq!(
            ours.launch(&n.entry, &mut mine).unwrap().status,
            0,
            "{what}"
        );
        if theirs != mine {
            let i = (0..theirs.len()).find(|i| theirs[*i] != mine[*i]).unwrap();
            panic!(
                "{what}: byte {i:#x} is {:#x}, NVIDIA's {:#x}\nours   {:02x?}\ntheirs {:02x?}",
                mine[i],
                theirs[i],
                &mine[i & !63..][..64.min(mine.len() - (i & !63))],
                &theirs[i & !63..][..64.min(theirs.len() - (i & !63))]
            );
        }
    }

    /// Hostile variants of `args`: every scalar and pointer replaced, one
    /// argument at a time and all at once, by values that break a map.
    fn hostile(args: &[Arg], rng: &mut Rng) -> Vec<Vec<Arg>> {
        let bad_scalars = [0u64, 1, 7, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff];
        let bad_pointers = [0u64, 1, 0xf, u64::MAX, 1 << 63 | 8, 0x7f00_0000_0001];
        let mut out = Vec::new();
        for i in 0..args.len() {
            let mut a = args.to_vec();
            a[i] = match a[i] {
                Arg::Pointer(_) => Arg::Pointer(bad_pointers[rng.below(6) as usize]),
                Arg::Scalar(_) => Arg::Scalar(bad_scalars[rng.below(6) as usize]),
            };
            out.push(a);
        }
        out.push(
            args.iter()
                .map(|a| match a {
                    Arg::Pointer(_) => Arg::Pointer(bad_pointers[rng.below(6) as usize]),
                    Arg::Scalar(_) => Arg::Scalar(bad_scalars[rng.below(6) as usize]),
                })
                .collect(),
        );
        out
    }

    /// NVIDIA's object and slots for `bytecode` on `gpu`, if its entry
    /// takes tensor maps.
    fn nvidia_kernel(bytecode: &[u8], gpu: &str, visible: usize) -> Option<Nvidia> {
        let ptx = nvidia::ptx(bytecode, gpu).ok()?;
        let module = ptx_emu::Module::parse(&ptx).unwrap();
        let kernel = &module.kernels[0];
        if kernel.params.len() <= visible {
            return None;
        }
        let host = nvidia::host_object(bytecode, gpu).unwrap().unwrap();
        Some(Nvidia {
            entry: kernel.name.clone(),
            slots: support::slots(kernel, gpu),
            visible,
            image: Image::load(&host).unwrap(),
        })
    }

    /// Compares on `args`, then on hostile variants; returns the maps checked.
    fn compare(n: &Nvidia, args: &[Arg], rng: &mut Rng, what: &str) -> usize {
        let specs = specs(n, args, what);
        let k = Kernel {
            name: n.entry.clone(),
            maps: specs.clone(),
        };
        let object = host::callbacks_object(&[k], HostArch::X86_64, HostOs::Linux).unwrap();
        let ours = Image::load(&object).unwrap();
        same(n, &ours, args, what);
        for (i, h) in hostile(args, rng).iter().enumerate() {
            same(n, &ours, h, &format!("{what}, hostile arguments {i}"));
        }
        specs.len()
    }

    #[test]
    fn tensor_map_kernels_get_nvidia_s_bytes() {
        if let Some(why) = nv_host::unsupported_reason() {
            cannot(why);
            return;
        }
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tensor_map");
        let index: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("index.json")).unwrap()).unwrap();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut maps = 0;
        for k in index.as_array().unwrap() {
            let name = k["name"].as_str().unwrap();
            let tiles: Vec<usize> = k["arrays"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["tile"].as_array().unwrap().len())
                .collect();
            let bytecode = std::fs::read(dir.join(format!("{name}.tileir"))).unwrap();
            let visible: usize = tiles.iter().map(|r| 1 + 2 * r).sum();
            for gpu in GPUS {
                let n = nvidia_kernel(&bytecode, gpu, visible)
                    .unwrap_or_else(|| panic!("{name} {gpu}: no maps"));
                for _ in 0..3 {
                    let mut args = Vec::new();
                    for (i, r) in tiles.iter().enumerate() {
                        args.push(Arg::Pointer(
                            0x7f00_0000_0000 + ((i as u64) << 36) + rng.below(1 << 24) * 16,
                        ));
                        let dims: Vec<u64> = (0..*r)
                            .map(|_| {
                                let big = rng.below(3) == 0;
                                1 + rng.below(if big { 3000 } else { 300 })
                            })
                            .collect();
                        let mut strides = vec![1u64; *r];
                        for d in (0..r - 1).rev() {
                            strides[d] =
                                (strides[d + 1] * dims[d + 1] + rng.below(40)).next_multiple_of(16);
                        }
                        args.extend(dims.iter().chain(&strides).map(|v| Arg::Scalar(*v)));
                    }
                    maps += compare(&n, &args, &mut rng, &format!("{name} {gpu}"));
                }
            }
        }
        eprintln!("{maps} maps byte-equal to NVIDIA's, each with its hostile variants");
        assert!(maps > 300, "{maps}");
    }

    #[test]
    fn differential_cases_get_nvidia_s_bytes() {
        if let Some(why) = nv_host::unsupported_reason() {
            cannot(why);
            return;
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/differential");
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let (mut cases, mut maps) = (0, 0);
        let mut dirs: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .filter(|d| d.path().is_dir())
            .collect();
        dirs.sort_by_key(|d| d.path());
        for d in dirs {
            let dir = d.file_name().into_string().unwrap();
            let mut names: Vec<String> = std::fs::read_dir(d.path())
                .unwrap()
                .flatten()
                .filter_map(|f| {
                    f.file_name()
                        .into_string()
                        .ok()?
                        .strip_suffix(".json")
                        .map(String::from)
                })
                .filter(|n| d.path().join(format!("{n}.tileir")).exists())
                .collect();
            names.sort();
            for name in names {
                let case = support::case(&dir, &name);
                let args: Vec<Arg> = case
                    .args
                    .iter()
                    .map(|a| match a {
                        support::Arg::Pointer(p) => Arg::Pointer(*p),
                        support::Arg::Scalar(v) => {
                            let mut b = v.clone();
                            b.resize(8, 0);
                            Arg::Scalar(u64::from_le_bytes(b.try_into().unwrap()))
                        }
                    })
                    .collect();
                for gpu in GPUS {
                    let Some(n) = nvidia_kernel(&case.bytecode, gpu, args.len()) else {
                        continue;
                    };
                    maps += compare(&n, &args, &mut rng, &format!("{dir}/{name} {gpu}"));
                    cases += 1;
                }
            }
        }
        eprintln!("{cases} differential kernels with maps, {maps} maps byte-equal to NVIDIA's, each with its hostile variants");
        assert!(cases > 100, "{cases}");
    }

    /// Our lowering's maps for `bytecode` on `gpu`: the entry's parameter
    /// slots (as the callbacks see them), the visible count, and our host
    /// object; `None` where the entry takes no map.
    fn ours(
        bytecode: &[u8],
        gpu: tileiras::Gpu,
    ) -> Option<(Vec<support::Slot>, usize, Vec<u8>, String)> {
        let module = tileiras::bytecode::read(bytecode).ok()?;
        let options = tileiras::Options {
            gpu,
            ..Default::default()
        };
        let (ptx, _) = tileiras::lower::lower_module(&module, &options).ok()?;
        let e = ptx.entries().next()?;
        if e.tensor_maps.is_empty() {
            return None;
        }
        let host = tileiras::driver::host_code(&ptx, &options).unwrap();
        let parsed = ptx_emu::Module::parse(&ptx.to_text()).unwrap();
        let k = &parsed.kernels[0];
        let slots = support::slots(k, gpu.name());
        let visible = e.params.len() - e.tensor_maps.len();
        Some((slots, visible, host, e.name.clone()))
    }

    /// Every differential kernel whose entry takes maps of ours (the TMA
    /// copies of the plan): our callbacks, run on the case's arguments,
    /// write maps of the right arrays, dims and strides, and where our box
    /// and swizzle are NVIDIA's for that array, the 128 bytes NVIDIA's
    /// callbacks write for the same arguments.
    #[test]
    fn our_maps_are_nvidia_s_where_the_boxes_are() {
        if let Some(why) = nv_host::unsupported_reason() {
            cannot(why);
            return;
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/differential");
        let (mut kernels, mut equal, mut other_box) = (0, 0, Vec::new());
        for dir in [
            "bench",
            "corpus",
            "cutile",
            "repro",
            "targeted",
            "targeted_random",
        ] {
            let mut names: Vec<String> = std::fs::read_dir(root.join(dir))
                .unwrap()
                .flatten()
                .filter_map(|f| {
                    f.file_name()
                        .into_string()
                        .ok()?
                        .strip_suffix(".json")
                        .map(String::from)
                })
                .filter(|n| root.join(dir).join(format!("{n}.tileir")).exists())
                .collect();
            names.sort();
            for name in names {
                let case = support::case(dir, &name);
                for gpu in [
                    tileiras::Gpu::Sm90,
                    tileiras::Gpu::Sm100,
                    tileiras::Gpu::Sm120,
                ] {
                    let Some((slots, visible, host, entry)) = ours(&case.bytecode, gpu) else {
                        continue;
                    };
                    kernels += 1;
                    let what = format!("{dir}/{name} {}", gpu.name());
                    let mut b = support::params(&case, &slots, 0);
                    let img = Image::load(&host).unwrap();
                    assert_eq!(img.launch(&entry, &mut b).unwrap().status, 0, "{what}");
                    // NVIDIA's maps for the same arguments, by array address
                    let nv = nvidia_kernel(&case.bytecode, gpu.name(), case.args.len())
                        .unwrap_or_else(|| panic!("{what}: NVIDIA's entry takes no maps"));
                    let mut theirs = buffer(&nv.slots, &args_of(&case), 0);
                    assert_eq!(nv.image.launch(&nv.entry, &mut theirs).unwrap().status, 0);
                    let nv_maps: Vec<&[u8]> = nv.slots[nv.visible..]
                        .iter()
                        .map(|s| &theirs[s.host as usize..s.host as usize + 128])
                        .collect();
                    for s in &slots[visible..] {
                        let raw = &b[s.host as usize..s.host as usize + 128];
                        let m = HwTensorMap::decode(raw).unwrap_or_else(|e| panic!("{what}: {e}"));
                        let same_array: Vec<HwTensorMap> = nv_maps
                            .iter()
                            .filter_map(|r| HwTensorMap::decode(r).ok())
                            .filter(|n| n.base == m.base)
                            .collect();
                        assert!(
                            !same_array.is_empty(),
                            "{what}: NVIDIA maps no array at {:#x}",
                            m.base
                        );
                        // The same array: the same extents and strides,
                        // its two inner dimensions in the same places
                        // (the leading ones, of one-element boxes, may
                        // come in another order: attention's K and V; and
                        // NVIDIA leaves out a dimension of a static
                        // extent of 1, where ours keeps it, constant).
                        let extents = |m: &HwTensorMap| {
                            let mut pairs: Vec<(u64, u64)> = (1..m.dims.len())
                                .map(|i| (u64::from(m.dims[i]), m.strides[i - 1]))
                                .filter(|&(d, _)| d != 1)
                                .collect();
                            pairs[1..].sort_unstable();
                            (m.dims[0], pairs, m.elem)
                        };
                        let n = &same_array[0];
                        assert_eq!(extents(&m), extents(n), "{what}");
                        match nv_maps.iter().find(|r| {
                            HwTensorMap::decode(r).is_ok_and(|n| {
                                n.base == m.base
                                    && n.box_dims == m.box_dims
                                    && n.swizzle == m.swizzle
                                    && (&n.dims, &n.strides) == (&m.dims, &m.strides)
                            })
                        }) {
                            Some(r) => {
                                assert_eq!(&raw[..64], &r[..64], "{what}: the map's bytes");
                                equal += 1;
                            }
                            None => other_box.push(format!(
                                "{what}: dims {:?} box {:?} swizzle {} (NVIDIA's: dims {:?} box {:?} swizzle {})",
                                m.dims, m.box_dims, m.swizzle, n.dims, n.box_dims, n.swizzle
                            )),
                        }
                    }
                }
            }
        }
        eprintln!("{kernels} kernels take our maps; {equal} maps byte-equal to NVIDIA's, {} with other boxes or dimension orders:", other_box.len());
        for o in &other_box {
            eprintln!("  {o}");
        }
        assert!(
            kernels >= 17 && equal >= 30,
            "{kernels} kernels, {equal} maps"
        );
    }

    /// The arguments of a case as the comparison's buffers take them.
    fn args_of(case: &support::Case) -> Vec<Arg> {
        case.args
            .iter()
            .map(|a| match a {
                support::Arg::Pointer(p) => Arg::Pointer(*p),
                support::Arg::Scalar(v) => {
                    let mut b = v.clone();
                    b.resize(8, 0);
                    Arg::Scalar(u64::from_le_bytes(b.try_into().unwrap()))
                }
            })
            .collect()
    }

    /// A cubin of ours carries our callbacks in `.nv.host` (ptxas puts the
    /// `--nv-host` object there), and they write what the lowering's maps
    /// say: the cubin's object is the one the driver would run.
    #[test]
    fn our_cubin_carries_our_callbacks() {
        if let Some(why) = nv_host::unsupported_reason() {
            cannot(why);
            return;
        }
        use object::{Object, ObjectSection};
        let case = support::case("corpus", "matmul_f16_tma");
        let options = tileiras::Options {
            gpu: tileiras::Gpu::Sm90,
            output: tileiras::OutputKind::Cubin,
            host_arch: HostArch::X86_64,
            ..Default::default()
        };
        let out = tileiras::compile(&case.bytecode, &options, &mut |_| {}).unwrap();
        let info = &out.kernels[0];
        let hidden: Vec<_> = info
            .params
            .iter()
            .filter(|p| p.kind == tileiras::ParamKind::HiddenTensorMap)
            .collect();
        assert_eq!(hidden.len(), 2);
        assert!(hidden.iter().all(|p| p.size == 128 && p.align == 64));
        let cubin = object::File::parse(&*out.bytes).unwrap();
        let section = cubin
            .section_by_name(".nv.host")
            .expect("a .nv.host section");
        let embedded = section.data().unwrap().to_vec();
        let (slots, visible, host, entry) = ours(&case.bytecode, tileiras::Gpu::Sm90).unwrap();
        assert_eq!(
            embedded, host,
            "the cubin's callbacks are the driver's object"
        );
        let img = Image::load(&embedded).unwrap();
        let mut b = support::params(&case, &slots, 0);
        assert_eq!(img.launch(&entry, &mut b).unwrap().status, 0);
        for (s, base) in slots[visible..].iter().zip([0, 5]) {
            let m = HwTensorMap::decode(&b[s.host as usize..s.host as usize + 128]).unwrap();
            let support::Arg::Pointer(p) = case.args[base] else {
                panic!("argument {base} is an array")
            };
            assert_eq!(m.base, p);
        }
    }

    /// Every cubin of ours carries our callbacks in `.nv.host` (ptxas puts
    /// the `--nv-host` object there), on every target, as NVIDIA's do; an
    /// entry without maps gets a callback that writes nothing.
    #[test]
    fn every_cubin_carries_our_callbacks() {
        if let Some(why) = nv_host::unsupported_reason() {
            cannot(why);
            return;
        }
        use object::{Object, ObjectSection};
        let bytecode =
            std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/vadd_f32.tileir"))
                .unwrap();
        for gpu in [
            tileiras::Gpu::Sm80,
            tileiras::Gpu::Sm90,
            tileiras::Gpu::Sm120,
        ] {
            let options = tileiras::Options {
                gpu,
                output: tileiras::OutputKind::Cubin,
                host_arch: HostArch::X86_64,
                ..Default::default()
            };
            let out = tileiras::compile(&bytecode, &options, &mut |_| {}).unwrap();
            let cubin = object::File::parse(&*out.bytes).unwrap();
            let section = cubin
                .section_by_name(".nv.host")
                .expect("a .nv.host section");
            let embedded = section.data().unwrap().to_vec();
            let module = tileiras::bytecode::read(&bytecode).unwrap();
            let (ptx, _) = tileiras::lower::lower_module(&module, &options).unwrap();
            let host = tileiras::driver::host_code(&ptx, &options).unwrap();
            assert_eq!(embedded, host, "{}", gpu.name());
            let img = Image::load(&embedded).unwrap();
            let name = &out.kernels[0].name;
            let mut b = vec![0x5au8; out.kernels[0].param_bytes as usize];
            assert_eq!(img.launch(name, &mut b).unwrap().status, 0);
            assert!(b.iter().all(|x| *x == 0x5a), "{}: wrote bytes", gpu.name());
        }
    }

    /// For Windows hosts NVIDIA's tileiras writes an x86-64 ELF object
    /// whose code follows the Microsoft x64 convention. Ours and NVIDIA's
    /// (the `.nv.host` of its cubin for `--host-os=windows`), each linked
    /// into the harness built for that convention, list the same kernel
    /// and leave the same buffers for cuTile's matmul on sm_90: its
    /// arguments and hostile ones.
    #[test]
    fn windows_callbacks_write_what_nvidia_s_do() {
        use object::{Object, ObjectSection};
        let case = support::case("corpus", "matmul_f16_tma");
        let dir = tmp("windows");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("k.tileir"), &case.bytecode).unwrap();
        let run = Command::new(nvidia_reference::tool("tileiras"))
            .args(["--gpu-name", "sm_90", "--host-os=windows", "-o"])
            .arg(dir.join("k.cubin"))
            .arg(dir.join("k.tileir"))
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let cubin = std::fs::read(dir.join("k.cubin")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let theirs = object::File::parse(&*cubin)
            .unwrap()
            .section_by_name(".nv.host")
            .expect("NVIDIA's .nv.host")
            .data()
            .unwrap()
            .to_vec();
        let options = tileiras::Options {
            gpu: tileiras::Gpu::Sm90,
            host_os: HostOs::Windows,
            ..Default::default()
        };
        let module = tileiras::bytecode::read(&case.bytecode).unwrap();
        let (ptx, _) = tileiras::lower::lower_module(&module, &options).unwrap();
        let ours = tileiras::driver::host_code(&ptx, &options).unwrap();
        let slots = support::slots(
            &ptx_emu::Module::parse(&ptx.to_text()).unwrap().kernels[0],
            "sm_90",
        );
        let mut rng = Rng(0x5851_f42d_4c95_7f2d);
        let args = args_of(&case);
        let mut records = vec![(0, buffer(&slots, &args, 0x5a))];
        for h in hostile(&args, &mut rng) {
            records.push((0, buffer(&slots, &h, 0xa5)));
        }
        let mut outputs = Vec::new();
        for object in [&theirs, &ours] {
            let Some(exe) = linked::program(object, HostArch::X86_64, HostOs::Windows) else {
                return;
            };
            outputs.push(linked::run(&exe, HostArch::X86_64, &records));
            std::fs::remove_file(&exe).unwrap();
        }
        assert_eq!(outputs[0].0, outputs[1].0, "kernel names");
        for (i, (t, o)) in outputs[0].1.iter().zip(&outputs[1].1).enumerate() {
            assert_eq!(t.0, 0, "NVIDIA's status, record {i}");
            assert_eq!(t, o, "record {i}");
            assert_ne!(&t.1, &records[i].1, "record {i}: no map written");
        }
        eprintln!(
            "{} buffers: our Windows callbacks write NVIDIA's bytes",
            records.len()
        );
    }

    /// `ON_PRE_LOAD` and the callbacks structure, held against NVIDIA's for
    /// the same kernel.
    #[test]
    fn pre_load_and_structure_as_nvidia_s() {
        if let Some(why) = nv_host::unsupported_reason() {
            cannot(why);
            return;
        }
        let case = support::case("corpus", "matmul_f16_tma");
        let theirs = Image::load(
            &nvidia::host_object(&case.bytecode, "sm_90")
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        let ours = Image::load(
            &host::callbacks_object(
                &[Kernel {
                    name: case.entry.clone(),
                    maps: Vec::new(),
                }],
                HostArch::X86_64,
                HostOs::Linux,
            )
            .unwrap(),
        )
        .unwrap();
        for img in [&theirs, &ours] {
            let r = img.pre_load(0).unwrap();
            assert_eq!((r.pre_load_status, r.calls.len(), r.out), (1, 0, 0));
            let r = img.pre_load(1).unwrap();
            assert_eq!((r.pre_load_status, r.calls.len()), (0, 1));
            assert_eq!(r.calls[0].offset, 0x30);
            assert_eq!(r.calls[0].args[..2], [r.context, 16]);
            assert_ne!(r.calls[0].args[2], 0);
            for n in [-1, 2, 3, 100] {
                let r = img.pre_load(n).unwrap();
                assert_eq!(r.pre_load_status, 0, "n = {n}");
                assert_eq!(r.calls.len(), usize::from(n < 2), "n = {n}");
            }
            let r = img.pre_load(2).unwrap();
            assert_eq!(
                r.out,
                img.symbol("__CUDA_TILEIR_CALLBACKS_ON_PRE_LOAD")
                    .unwrap()
                    .addr
            );
            let cb = img.callbacks_at(r.out).unwrap();
            assert_eq!(
                (cb.version, cb.entry_size, cb.count, cb.word7),
                (2, 64, 1, 2)
            );
            assert_eq!(
                cb.on_pre_load,
                img.symbol(nv_host::ON_PRE_LOAD).unwrap().addr
            );
            assert_eq!(cb.kernels[0].name, case.entry);
            let stat = img.symbol(nv_host::CALLBACKS).unwrap();
            assert!(stat.global);
            let mut want = img.read(stat.addr, 72).unwrap();
            want[16..24].fill(0);
            assert_eq!(img.read(r.out, 72).unwrap(), want);
            let e = &cb.kernels[0].raw;
            for w in [1, 2, 3, 4, 6, 7] {
                assert_eq!(e[8 * w..8 * w + 8], [0; 8], "entry word {w}");
            }
        }
    }
}
