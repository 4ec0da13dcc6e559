//! The tensor maps our host callbacks write at launch, for emulator runs of
//! our PTX: each entry's maps follow its visible parameters, and the
//! callbacks' own program (`tileiras::host::Program::run`, the function the
//! encoded callbacks compute, proven equal in `tests/host_callbacks.rs`)
//! writes them from the visible arguments, as the driver would run the
//! cubin's `.nv.host` object.
use ptx_emu::Param;

/// `params` for entry `name` of `module`: its visible arguments (anything
/// after them, maps a harness made for NVIDIA's kernel, is dropped) and,
/// where the entry takes tensor maps, the maps our callbacks write for
/// those arguments.
pub fn with_maps(module: &tileiras::ptx::Module, name: &str, mut params: Vec<Param>) -> Vec<Param> {
    let e = module
        .entries()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no entry {name}"));
    if e.tensor_maps.is_empty() {
        return params;
    }
    let visible = e.params.len() - e.tensor_maps.len();
    assert!(
        params.len() >= visible,
        "{name}: {} arguments",
        params.len()
    );
    params.truncate(visible);
    let layout = tileiras::ptx::params::layout(&e.params, module.gpu);
    let offsets: Vec<u32> = layout.slots.iter().map(|s| s.offset).collect();
    let mut buf = vec![0u8; layout.size as usize];
    for (p, s) in params.iter().zip(&layout.slots) {
        let bytes = match p {
            Param::U32(v) => v.to_le_bytes().to_vec(),
            Param::U64(v) => v.to_le_bytes().to_vec(),
            Param::Bytes(b) => b.clone(),
        };
        let n = bytes.len().min(s.size as usize);
        buf[s.offset as usize..s.offset as usize + n].copy_from_slice(&bytes[..n]);
    }
    let kernel = tileiras::host::Kernel {
        name: name.to_string(),
        maps: e
            .tensor_maps
            .iter()
            .map(|d| {
                d.spec(&offsets)
                    .unwrap_or_else(|why| panic!("{name}: {why}"))
            })
            .collect(),
    };
    kernel
        .program()
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .run(&mut buf)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    for s in &layout.slots[visible..] {
        params.push(Param::Bytes(
            buf[s.offset as usize..(s.offset + s.size) as usize].to_vec(),
        ));
    }
    params
}
