//! 128-bit vector access for 16-bit elements: `arith_f16` from the corpus,
//! its tensor views given a static size divisible by the vector (so
//! alignment and contiguity are provable), lowered and run in the PTX
//! emulator. Each thread then moves eight f16 per `ld/st.global.v4.b32`.
mod common;

use ptx_emu::{bytes, Device, LaunchConfig, Module, Param};
use tileiras::ir::{Scalar, Type, DYNAMIC};

const N: usize = 2048;

/// `arith_f16` with every `?xf16` tensor view made `Nxf16`.
fn static_arith_f16() -> String {
    let path = common::corpus().join("arith_f16/arith_f16.v13_3.tileir");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut m = tileiras::bytecode::read(&bytes).unwrap();
    let f16 = m
        .types
        .iter()
        .find(|(_, t)| matches!(t, Type::Scalar(Scalar::F16)))
        .map(|(h, _)| h)
        .unwrap();
    let views: Vec<_> = m
        .types
        .iter()
        .filter(|(_, t)| {
            matches!(t, Type::TensorView { element, shape, .. }
                if *element == f16 && shape.as_slice() == [DYNAMIC])
        })
        .map(|(h, _)| h)
        .collect();
    assert!(!views.is_empty());
    for h in views {
        if let Type::TensorView { shape, .. } = &mut m.types[h] {
            *shape = vec![N as i64];
        }
    }
    tileiras::lower::lower(&m, &tileiras::options::Options::default()).unwrap()
}

#[test]
fn f16_moves_eight_per_128_bit_access() {
    let ptx = static_arith_f16();
    assert!(ptx.contains("ld.global.v4.b32"), "{ptx}");
    assert!(ptx.contains("st.global.v4.b32"), "{ptx}");
    assert!(!ptx.contains("ld.global.b16"), "{ptx}");
    let module = Module::parse(&ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let mut dev = Device::new();
    // Positive normal f16 values in [1, 2): their bits order like their values.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        0x3c00 | (x as u16 & 0x3ff)
    };
    let a: Vec<u16> = (0..N).map(|_| next()).collect();
    let b: Vec<u16> = (0..N).map(|_| next()).collect();
    let mut params = Vec::new();
    let mut outs = Vec::new();
    for k in 0..7 {
        let data = match k {
            0 => bytes::from_u16(&a),
            1 => bytes::from_u16(&b),
            _ => vec![0xa5; 2 * N],
        };
        let p = dev.alloc_from(&data);
        if k >= 2 {
            outs.push(p);
        }
        params.extend([Param::U64(p.addr()), Param::U32(N as u32), Param::U32(1)]);
    }
    let k = module.kernel("arith_f16").unwrap();
    let cfg = LaunchConfig {
        grid: ((N / 512) as u32, 1, 1),
        block: k.reqntid.unwrap(),
        cluster: (1, 1, 1),
        dynamic_smem: 0,
    };
    dev.launch(&module, "arith_f16", cfg, &params)
        .unwrap_or_else(|e| panic!("{e}"));
    let max = bytes::to_u16(&dev.read(outs[3]));
    for i in 0..N {
        assert_eq!(max[i], a[i].max(b[i]), "max[{i}]");
    }
}
