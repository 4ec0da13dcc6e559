//! NVIDIA's tensor maps for one launch: its host callbacks
//! (`nvidia::host_object`, run by the `nv-host` crate in a child process)
//! fill the hidden 128-byte parameters from the visible ones, as the driver
//! has them do at launch; the emulator then reads those hardware maps.

use super::support;
use ptx_emu::Param;

/// The hidden parameters' bytes for `kernel` (compiled by NVIDIA for
/// `gpu`) launched with `visible`, the visible parameters in order.
pub fn tensor_maps(
    host: &[u8],
    gpu: &str,
    kernel: &ptx_emu::ir::Kernel,
    visible: &[Param],
) -> Result<Vec<Vec<u8>>, String> {
    if let Some(why) = nv_host::unsupported_reason() {
        return Err(why.to_string());
    }
    run(host, gpu, kernel, visible)
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn run(
    host: &[u8],
    gpu: &str,
    kernel: &ptx_emu::ir::Kernel,
    visible: &[Param],
) -> Result<Vec<Vec<u8>>, String> {
    let slots = support::slots(kernel, gpu);
    let end = slots.iter().map(|s| s.host + s.size).max().unwrap_or(0);
    let mut buf = vec![0u8; end as usize];
    for (p, s) in visible.iter().zip(&slots) {
        let bytes = match p {
            Param::U32(v) => v.to_le_bytes().to_vec(),
            Param::U64(v) => v.to_le_bytes().to_vec(),
            Param::Bytes(b) => b.clone(),
        };
        let at = s.host as usize;
        buf[at..at + bytes.len().min(s.size as usize)]
            .copy_from_slice(&bytes[..bytes.len().min(s.size as usize)]);
    }
    let image = nv_host::Image::load(host)?;
    let launch = image.launch(&kernel.name, &mut buf)?;
    if launch.status != 0 {
        return Err(format!(
            "the argument-change callback returned {}",
            launch.status
        ));
    }
    Ok(slots[visible.len()..]
        .iter()
        .map(|s| buf[s.host as usize..(s.host + s.size) as usize].to_vec())
        .collect())
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn run(_: &[u8], _: &str, _: &ptx_emu::ir::Kernel, _: &[Param]) -> Result<Vec<Vec<u8>>, String> {
    unreachable!("checked by tensor_maps")
}
