//! The ABI of NVIDIA's host callbacks (docs/nv-host-callbacks.md), each
//! fact checked on objects NVIDIA's tileiras writes for corpus cases: the
//! object is captured at its ptxas call (differential/nvidia.rs), loaded
//! by the `nv-host` crate and run in a child process. On hosts that are
//! not x86-64 Linux the tests say so and pass without running anything.

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

/// Whether this host cannot run the callbacks (and says why).
fn skipped() -> bool {
    if let Some(why) = nv_host::unsupported_reason() {
        eprintln!("skipped: {why}");
        return true;
    }
    false
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod abi {
    use super::support::{self, Arg};
    use super::{nvidia, skipped};
    use nv_host::Image;

    /// Cases whose sm_90, sm_100 and sm_120 entries take tensor maps: (folder, name, maps).
    const WITH_MAPS: &[(&str, &str, usize)] = &[
        ("corpus", "matmul_f16_tma", 2),
        ("corpus", "batched_matmul_f16", 2),
        ("corpus", "layernorm_rows_f32", 3),
        ("corpus", "dot_1d_f32", 2),
    ];

    /// NVIDIA's host object and PTX for a case and target, loaded.
    fn load(dir: &str, name: &str, gpu: &str) -> (support::Case, ptx_emu::Module, Image) {
        let case = support::case(dir, name);
        let ptx = nvidia::ptx(&case.bytecode, gpu).unwrap();
        let host = nvidia::host_object(&case.bytecode, gpu)
            .unwrap()
            .unwrap_or_else(|| panic!("{name} {gpu}: tileiras passed ptxas no --nv-host object"));
        let module = ptx_emu::Module::parse(&ptx).unwrap();
        (case, module, Image::load(&host).unwrap())
    }

    fn word(b: &[u8], i: usize) -> u64 {
        u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap())
    }

    /// Every target NVIDIA compiles for hands ptxas a host object, and the
    /// capture caches it: a second request reads the same bytes.
    #[test]
    fn host_object_captured_and_cached() {
        for gpu in ["sm_80", "sm_90", "sm_100", "sm_120"] {
            let case = support::case("corpus", "arith_f32");
            let a = nvidia::host_object(&case.bytecode, gpu).unwrap().unwrap();
            assert_eq!(&a[..4], b"\x7fELF", "{gpu}");
            let b = nvidia::host_object(&case.bytecode, gpu).unwrap().unwrap();
            assert_eq!(a, b);
        }
    }

    /// The object relocates with exactly five x86-64 relocation types.
    #[test]
    fn relocation_types() {
        if skipped() {
            return;
        }
        for (dir, name, _) in WITH_MAPS {
            for gpu in ["sm_90", "sm_100", "sm_120"] {
                let (_, _, img) = load(dir, name, gpu);
                let mut kinds: Vec<&str> = img
                    .relocations()
                    .keys()
                    .map(|t| nv_host::relocation_name(*t))
                    .collect();
                kinds.sort();
                assert_eq!(
                    kinds,
                    [
                        "R_X86_64_64",
                        "R_X86_64_GOT64",
                        "R_X86_64_GOTOFF64",
                        "R_X86_64_GOTPC64",
                        "R_X86_64_PC64"
                    ],
                    "{name} {gpu}"
                );
                assert!(img.symbol(nv_host::ON_PRE_LOAD).unwrap().global);
                assert!(img.symbol(nv_host::CALLBACKS).unwrap().global);
            }
        }
    }

    /// `ON_PRE_LOAD(table, context, n, out)`: n = 0 returns 1 and touches
    /// nothing; n = 1 calls table slot 0x30 once as `(context, 16, p)` with
    /// `p` a stack address, then returns 0; n >= 2 calls nothing and returns 0.
    #[test]
    fn pre_load_third_argument() {
        if skipped() {
            return;
        }
        let (_, _, img) = load("corpus", "matmul_f16_tma", "sm_90");
        let r = img.pre_load(0).unwrap();
        assert_eq!((r.pre_load_status, r.calls.len(), r.out), (1, 0, 0));
        let r = img.pre_load(1).unwrap();
        assert_eq!(r.pre_load_status, 0);
        assert_eq!(r.calls.len(), 1);
        assert_eq!(r.calls[0].offset, 0x30);
        assert_eq!(r.calls[0].args[0], r.context);
        assert_eq!(r.calls[0].args[1], 16);
        assert_ne!(r.calls[0].args[2], 0);
        assert_ne!(r.out, 0);
        for n in [2, 3, 100] {
            let r = img.pre_load(n).unwrap();
            assert_eq!((r.pre_load_status, r.calls.len()), (0, 0), "n = {n}");
            assert_ne!(r.out, 0);
        }
    }

    /// `*out` is a 72-byte copy of `__CUDA_TILEIR_CALLBACKS` in the
    /// object's `.lbss` (`__CUDA_TILEIR_CALLBACKS_ON_PRE_LOAD`) with word 2
    /// zeroed; words: 0 = 2, 4 = 64 (entry size), 5 = the kernel table
    /// (`__CUDA_TILEIR_FUNC_CALLBACKS`), 6 = kernel count, 7 = 2, 8 =
    /// `ON_PRE_LOAD`; the rest 0.
    #[test]
    fn callbacks_structure() {
        if skipped() {
            return;
        }
        for gpu in ["sm_80", "sm_90", "sm_100", "sm_120"] {
            let (dir, name) = if gpu == "sm_80" {
                ("corpus", "arith_f32")
            } else {
                ("corpus", "matmul_f16_tma")
            };
            let (_, _, img) = load(dir, name, gpu);
            let r = img.pre_load(2).unwrap();
            let copy = img.symbol("__CUDA_TILEIR_CALLBACKS_ON_PRE_LOAD").unwrap();
            assert_eq!(r.out, copy.addr, "{gpu}");
            let stat = img.symbol(nv_host::CALLBACKS).unwrap();
            assert_eq!(stat.size as usize, nv_host::CALLBACKS_SIZE);
            let mut want = img.read(stat.addr, 72).unwrap();
            want[16..24].fill(0);
            let got = img.read(r.out, 72).unwrap();
            assert_eq!(got, want, "{gpu}");
            let table = img.symbol("__CUDA_TILEIR_FUNC_CALLBACKS").unwrap().addr;
            let pre = img.symbol(nv_host::ON_PRE_LOAD).unwrap().addr;
            let words: Vec<u64> = (0..9).map(|i| word(&got, i)).collect();
            assert_eq!(words, [2, 0, 0, 0, 64, table, 1, 2, pre], "{gpu}");
            let cb = img.callbacks_at(r.out).unwrap();
            assert_eq!((cb.version, cb.count, cb.kernels.len()), (2, 1, 1));
        }
    }

    /// A kernel entry (64 bytes): word 0 points at the entry's name (NUL
    /// terminated, the PTX entry's name), word 5 is its argument-change
    /// callback (`__CUDA_TILEIR_FUNC_ON_ARGUMENTS_CHANGE_<n>`); the rest 0.
    #[test]
    fn kernel_entry() {
        if skipped() {
            return;
        }
        for (dir, name, _) in WITH_MAPS {
            let (case, module, img) = load(dir, name, "sm_90");
            let cb = img.callbacks_at(img.pre_load(2).unwrap().out).unwrap();
            let k = &cb.kernels[0];
            assert_eq!(k.name, case.entry);
            assert_eq!(module.kernels[0].name, case.entry);
            let f = img
                .symbol("__CUDA_TILEIR_FUNC_ON_ARGUMENTS_CHANGE_0")
                .unwrap();
            assert!(f.function);
            assert_eq!(k.on_arguments_change, f.addr);
            let name_sym = img.symbol("__CUDA_TILEIR_FUNC_NAME_0").unwrap();
            assert_eq!(word(&k.raw, 0), name_sym.addr);
            for i in [1, 2, 3, 4, 6, 7] {
                assert_eq!(word(&k.raw, i), 0, "{name} word {i}");
            }
        }
    }

    /// The argument-change callback reads the visible parameters from its
    /// fourth argument, a parameter buffer laid out as the parameter bank
    /// (each parameter aligned relative to offset 0x210 on sm_90, to 0 on
    /// sm_100 and sm_120, so sm_90's tensor maps sit 16 bytes before their PTX
    /// offsets when the visible parameters end unaligned), writes one
    /// 128-byte descriptor into each hidden parameter's place, whose first
    /// word is the address of one of the arrays, returns 0, and writes no
    /// other byte. Its first three arguments are not read.
    #[test]
    fn argument_change_writes_the_hidden_parameters() {
        if skipped() {
            return;
        }
        for (dir, name, maps) in WITH_MAPS {
            for gpu in ["sm_90", "sm_100", "sm_120"] {
                let (case, module, img) = load(dir, name, gpu);
                let slots = support::slots(&module.kernels[0], gpu);
                let hidden = &slots[case.args.len()..];
                assert_eq!(hidden.len(), *maps, "{name} {gpu}");
                let before = support::params(&case, &slots, 0xa5);
                let mut after = before.clone();
                let l = img.launch(&case.entry, &mut after).unwrap();
                assert_eq!(l.status, 0);
                assert!(l.calls.is_empty());
                let pointers: Vec<u64> = case
                    .args
                    .iter()
                    .filter_map(|a| match a {
                        Arg::Pointer(p) => Some(*p),
                        _ => None,
                    })
                    .collect();
                for (i, (b, a)) in before.iter().zip(&after).enumerate() {
                    let in_map = hidden
                        .iter()
                        .any(|s| (s.host..s.host + 128).contains(&(i as u32)));
                    if !in_map {
                        assert_eq!(b, a, "{name} {gpu}: byte {i:#x} written");
                    }
                }
                for s in hidden {
                    assert_eq!((s.host + support::param_bank(gpu)) % 64, 0);
                    let d = &after[s.host as usize..s.host as usize + 128];
                    assert!(
                        pointers.contains(&word(d, 0)),
                        "{name} {gpu}: descriptor at {:#x} starts {:#x}",
                        s.host,
                        word(d, 0)
                    );
                }
                // garbage in the first three arguments changes nothing
                let mut again = before.clone();
                let f = l.callbacks.kernels[0].on_arguments_change;
                let r = img
                    .call_on_arguments_change(f, [1, 2, 3], &mut again)
                    .unwrap();
                assert_eq!(r.on_args_status, Some(0));
                assert_eq!(again, after, "{name} {gpu}");
            }
        }
    }

    /// Where the descriptors go, concretely: cuTile's matmul has 15 visible
    /// parameters ending at PTX offset 0x48; its two maps are PTX
    /// parameters at 0x80 and 0x100, and the sm_90 callback writes them at
    /// buffer offsets 0x70 and 0xf0 (bank offsets 0x280 and 0x300), the
    /// sm_100 and sm_120 ones at 0x80 and 0x100.
    #[test]
    fn descriptor_offsets() {
        if skipped() {
            return;
        }
        for (gpu, want) in [
            ("sm_90", [0x70, 0xf0]),
            ("sm_100", [0x80, 0x100]),
            ("sm_120", [0x80, 0x100]),
        ] {
            let (case, module, img) = load("corpus", "matmul_f16_tma", gpu);
            let k = &module.kernels[0];
            let ptx: Vec<u32> = k.params[15..].iter().map(|p| p.offset).collect();
            assert_eq!(ptx, [0x80, 0x100]);
            let slots = support::slots(k, gpu);
            let mut b = support::params(&case, &slots, 0xa5);
            img.launch(&case.entry, &mut b).unwrap();
            for (at, arg) in want.into_iter().zip([0, 5]) {
                let support::Arg::Pointer(p) = case.args[arg] else {
                    panic!("argument {arg} is not an array")
                };
                assert_eq!(word(&b[at..], 0), p, "{gpu}: map at {at:#x}");
            }
        }
    }

    /// Without tensor maps (every sm_80 entry) the callback writes nothing.
    #[test]
    fn argument_change_without_maps_writes_nothing() {
        if skipped() {
            return;
        }
        let (case, module, img) = load("corpus", "matmul_f16_tma", "sm_80");
        let slots = support::slots(&module.kernels[0], "sm_80");
        assert_eq!(slots.len(), case.args.len());
        let before = support::params(&case, &slots, 0x5a);
        let mut after = before.clone();
        assert_eq!(img.launch(&case.entry, &mut after).unwrap().status, 0);
        assert_eq!(before, after);
    }

    /// A fault in the foreign code is a reported error (here: a call into
    /// the kernel name, which lies in memory that is not executable).
    #[test]
    fn fault_is_reported() {
        if skipped() {
            return;
        }
        let (_, _, img) = load("corpus", "matmul_f16_tma", "sm_90");
        let data = img.symbol("__CUDA_TILEIR_FUNC_NAME_0").unwrap().addr;
        let err = img
            .call_on_arguments_change(data, [0; 3], &mut [0u8; 512])
            .unwrap_err();
        assert!(err.contains("signal"), "{err}");
        // and the image still runs afterwards
        assert_eq!(img.pre_load(2).unwrap().pre_load_status, 0);
    }
}

/// Says why nothing runs on hosts that cannot run x86-64 Linux code.
#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
#[test]
fn host_callbacks_need_x86_64_linux() {
    assert!(skipped());
}
