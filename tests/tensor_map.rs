//! Round trip of the hardware tensor-map decoder (`ptx_emu::HwTensorMap`):
//! NVIDIA's host callbacks build the maps of the kernels in
//! `tests/data/tensor_map` (ranks 1 to 5, every element type cuTile loads
//! with TMA, every swizzle mode; `gen.py` there writes them) for random
//! arrays, and every field decoded from each map must equal the argument it
//! was built from: address, rank, dims, strides, element type, box, and the
//! L2-promotion bit NVIDIA sets for arrays of 128 KiB or more. On hosts
//! that are not x86-64 Linux the test says so and passes without running.

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

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod round_trip {
    use super::{nvidia, support};
    use ptx_emu::{HwElem, HwTensorMap};
    use std::collections::BTreeSet;
    use std::path::Path;

    /// One array parameter of a kernel: element type name, bits, tile.
    struct ArraySpec {
        elem: String,
        bits: u64,
        tile: Vec<u64>,
    }

    /// An array as passed: address, dims and strides (outermost first, in elements).
    struct Array {
        addr: u64,
        dims: Vec<u64>,
        strides: Vec<u64>,
    }

    /// The map's element type for cuTile's element type `elem`.
    fn hw_elem(elem: &str) -> (HwElem, bool) {
        match elem {
            "int8" | "uint8" | "float8_e4m3fn" | "float8_e5m2" => (HwElem::B8, false),
            "int16" | "uint16" => (HwElem::B16, false),
            "int32" | "uint32" => (HwElem::B32, false),
            "int64" | "uint64" => (HwElem::B64, false),
            "float16" => (HwElem::F16, false),
            "bfloat16" => (HwElem::BF16, false),
            "float32" => (HwElem::F32, false),
            "tfloat32" => (HwElem::F32, true),
            "float64" => (HwElem::F64, false),
            e => panic!("element type {e} not expected"),
        }
    }

    /// xorshift
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// Random arrays for `specs`: dims 1..=300 (1..=3000 one time in three),
    /// rows padded by up to 40 elements, 16-byte multiples.
    fn arrays(specs: &[ArraySpec], rng: &mut Rng) -> Vec<Array> {
        specs
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let r = s.tile.len();
                let big = rng.below(3) == 0;
                // strides are i32 parameters: redrawn until they fit
                let (dims, strides) = loop {
                    let dims: Vec<u64> = (0..r)
                        .map(|_| 1 + rng.below(if big { 3000 } else { 300 }))
                        .collect();
                    let e16 = (128 / s.bits).max(1);
                    let mut strides = vec![1u64; r];
                    for d in (0..r - 1).rev() {
                        let min = strides[d + 1] * dims[d + 1];
                        strides[d] = (min + rng.below(40)).div_ceil(e16) * e16;
                    }
                    if strides[0] * dims[0] < 1 << 31 {
                        break (dims, strides);
                    }
                };
                let addr = 0x7f00_0000_0000 + ((i as u64) << 36) + rng.below(1 << 24) * 16;
                Array {
                    addr,
                    dims,
                    strides,
                }
            })
            .collect()
    }

    #[test]
    fn decoded_fields_equal_the_arguments() {
        if let Some(why) = nv_host::unsupported_reason() {
            eprintln!("skipped: {why}");
            return;
        }
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tensor_map");
        let index: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("index.json")).unwrap()).unwrap();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut ranks, mut elems, mut swizzles, mut l2) = (
            BTreeSet::new(),
            BTreeSet::new(),
            BTreeSet::new(),
            BTreeSet::new(),
        );
        let mut maps = 0;
        let mut split = BTreeSet::new();
        for k in index.as_array().unwrap() {
            let name = k["name"].as_str().unwrap();
            let mma = k["kind"] == "mma";
            let specs: Vec<ArraySpec> = k["arrays"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| ArraySpec {
                    elem: a["elem"].as_str().unwrap().to_string(),
                    bits: a["bits"].as_u64().unwrap(),
                    tile: a["tile"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_u64().unwrap())
                        .collect(),
                })
                .collect();
            let bytecode = std::fs::read(dir.join(format!("{name}.tileir"))).unwrap();
            for gpu in ["sm_90", "sm_100", "sm_120"] {
                let ptx = nvidia::ptx(&bytecode, gpu).unwrap();
                let host = nvidia::host_object(&bytecode, gpu).unwrap().unwrap();
                let module = ptx_emu::Module::parse(&ptx).unwrap();
                let slots = support::slots(&module.kernels[0], gpu);
                let visible: usize = specs.iter().map(|s| 1 + 2 * s.tile.len()).sum();
                assert!(
                    slots.len() > visible,
                    "{name} {gpu}: NVIDIA's entry takes no tensor map"
                );
                let img = nv_host::Image::load(&host).unwrap();
                for _ in 0..4 {
                    let arrays = arrays(&specs, &mut rng);
                    let mut args = Vec::new();
                    for a in &arrays {
                        args.push(support::Arg::Pointer(a.addr));
                        for v in a.dims.iter().chain(&a.strides) {
                            args.push(support::Arg::Scalar((*v as u32).to_le_bytes().to_vec()));
                        }
                    }
                    let case = support::Case {
                        bytecode: Vec::new(),
                        entry: "k".into(),
                        args,
                    };
                    let mut buf = support::params(&case, &slots, 0);
                    assert_eq!(img.launch("k", &mut buf).unwrap().status, 0);
                    for s in &slots[visible..] {
                        let raw = &buf[s.host as usize..s.host as usize + 128];
                        let m = HwTensorMap::decode(raw)
                            .unwrap_or_else(|e| panic!("{name} {gpu}: {e}: {raw:02x?}"));
                        let i = arrays
                            .iter()
                            .position(|a| a.addr == m.base)
                            .unwrap_or_else(|| panic!("{name} {gpu}: map of {:#x}", m.base));
                        assert!(mma || i == 0, "{name}: only x is loaded");
                        let (a, spec) = (&arrays[i], &specs[i]);
                        let r = a.dims.len();
                        let es = spec.bits.div_ceil(8);
                        let want_dims: Vec<u32> = a.dims.iter().rev().map(|d| *d as u32).collect();
                        assert_eq!(m.dims, want_dims, "{name} {gpu} dims");
                        let want_strides: Vec<u64> =
                            a.strides[..r - 1].iter().rev().map(|s| s * es).collect();
                        assert_eq!(m.strides, want_strides, "{name} {gpu} strides");
                        assert_eq!((m.elem, m.tf32), hw_elem(&spec.elem), "{name} {gpu}");
                        let extent: u64 = a
                            .dims
                            .iter()
                            .zip(&a.strides)
                            .map(|(d, s)| (d - 1) * s * es)
                            .sum::<u64>()
                            + es;
                        assert_eq!(
                            m.l2_promotion,
                            extent >= 0x20000,
                            "{name} {gpu}: {extent} bytes"
                        );
                        // the box: a part of the tile (NVIDIA's code copies a
                        // tile in boxes), its inner dimension at most 128 bytes
                        // where the tile has rows
                        let inner = spec.tile[r - 1] * es;
                        let box_inner = u64::from(m.box_dims[0]) * es;
                        assert!(r == 1 || box_inner <= 128, "{name} {gpu}");
                        assert!(r > 1 || box_inner == inner, "{name} {gpu}");
                        for (d, b) in m.box_dims.iter().enumerate() {
                            let t = spec.tile[r - 1 - d];
                            assert_eq!(t % u64::from(*b), 0, "{name} {gpu}: box {:?}", m.box_dims);
                        }
                        if m.box_dims.iter().rev().map(|b| u64::from(*b)).ne(spec
                            .tile
                            .iter()
                            .enumerate()
                            .map(|(d, t)| if d == r - 1 { box_inner / es } else { *t }))
                        {
                            split.insert(format!(
                                "{name}: tile {:?}, box {:?}",
                                spec.tile, m.box_dims
                            ));
                        }
                        // swizzle: none for plain loads; for operands of a
                        // product none or the inner box's bytes
                        // (4, 128 bytes with 32-byte atoms: sm_100's tf32 only)
                        if mma {
                            let span = if m.swizzle == 4 {
                                128
                            } else {
                                16u64 << m.swizzle
                            };
                            assert!(
                                m.swizzle == 0 || span == box_inner,
                                "{name} {gpu}: swizzle {} for a {box_inner}-byte box",
                                m.swizzle
                            );
                            assert!(
                                m.swizzle != 4 || gpu == "sm_100" && m.tf32,
                                "{name} {gpu}: 32-byte atoms"
                            );
                        } else {
                            assert_eq!(m.swizzle, 0, "{name} {gpu}");
                        }
                        assert_eq!(m.to_tensor_map().check(), None, "{name} {gpu}");
                        ranks.insert(r);
                        elems.insert(spec.elem.clone());
                        swizzles.insert(m.swizzle);
                        l2.insert(m.l2_promotion);
                        maps += 1;
                    }
                }
            }
        }
        eprintln!("{maps} maps decoded; boxes smaller than the tile beyond its inner 128 bytes:");
        for s in &split {
            eprintln!("  {s}");
        }
        assert_eq!(ranks, (1..=5).collect());
        eprintln!("swizzle modes seen: {swizzles:?}");
        assert!(swizzles.is_superset(&(0..4).collect()), "{swizzles:?}");
        assert_eq!(l2, [false, true].into());
        let every: BTreeSet<String> = [
            "int8",
            "uint8",
            "int16",
            "uint16",
            "int32",
            "uint32",
            "int64",
            "uint64",
            "float16",
            "bfloat16",
            "float32",
            "tfloat32",
            "float64",
            "float8_e4m3fn",
            "float8_e5m2",
        ]
        .map(String::from)
        .into();
        assert_eq!(elems, every);
    }
}

/// Says why nothing runs on hosts that cannot run x86-64 Linux code.
#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
#[test]
fn tensor_maps_need_x86_64_linux() {
    assert!(nv_host::unsupported_reason().is_some());
}
