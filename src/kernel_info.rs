//! What a front end needs to launch each compiled kernel: entry name,
//! block and cluster shape, shared memory, registers and the parameter
//! layout.
//!
//! Everything but the register count and the cubin's shared-memory size
//! comes from the PTX the lowering produced (and so is known for every
//! output kind); those two come from the cubin ptxas wrote and are `None`
//! when the output is PTX.
//!
//! Launching with `cuLaunchKernelEx`: `blockDim` is [`KernelInfo::block`]
//! (a `.reqntid` kernel rejects any other shape; cuTile passes (1,1,1) and
//! the driver takes the shape from the kernel), the grid counts tile blocks;
//! when [`KernelInfo::blocks_are_clusters`] is set each grid block is a
//! cluster of [`KernelInfo::cluster`] CTAs; `sharedMemBytes` is
//! [`KernelInfo::dynamic_smem_bytes`]; `kernelParams[i]` points to a value
//! of [`KernelParam::size`] bytes for parameter `i`.
use crate::elf::cubin_info::CubinKernel;
use crate::ptx::{self, params, ParamTy};
use crate::Gpu;

/// How a kernel parameter is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A 64-bit global memory address.
    GlobalPointer,
    /// A scalar value.
    Scalar,
    /// A 128-byte tensor map after the visible parameters, written at
    /// launch by the host callbacks in the cubin's `.nv.host` section: the
    /// caller passes nothing for it (`kernelParams` holds the visible
    /// parameters only).
    HiddenTensorMap,
}

/// One kernel parameter and its place in the parameter space.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelParam {
    /// The `.param` name.
    pub name: String,
    /// How it is passed.
    pub kind: ParamKind,
    /// The PTX type (`u64`, `u32`, `f32`, `b16`, `u8`, ...).
    pub ptx_type: &'static str,
    /// Byte offset in the parameter space.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// Alignment in bytes.
    pub align: u32,
}

/// Launch facts of one compiled kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    /// Entry symbol name (for `cuLibraryGetKernel` / `cuModuleGetFunction`).
    pub name: String,
    /// Threads per block (x, y, z).
    pub block: [u32; 3],
    /// Whether the block shape is exact (`.reqntid`) rather than an upper
    /// bound (`.maxntid`).
    pub block_is_exact: bool,
    /// CTAs per cluster (x, y, z); (1, 1, 1) without clusters.
    pub cluster: [u32; 3],
    /// Whether the grid counts clusters (`.blocksareclusters`).
    pub blocks_are_clusters: bool,
    /// `.minnctapersm`, when set.
    pub min_ctas_per_sm: Option<u32>,
    /// `.maxnreg`, when set.
    pub max_registers: Option<u32>,
    /// Registers per thread ptxas allocated (needs a cubin).
    pub registers: Option<u32>,
    /// Static shared memory the kernel declares, in bytes per block (what
    /// `ptxas -v` reports as "bytes smem").
    pub static_smem_bytes: u32,
    /// Shared memory per block the cubin's `.nv.shared.<kernel>` section
    /// sizes, which on sm_90 and newer adds the 1 KiB ptxas reserves for
    /// the system once the kernel uses any; needs a cubin.
    pub cubin_smem_bytes: Option<u32>,
    /// Dynamic shared memory to pass at launch; this compiler never uses
    /// dynamic shared memory, so it is 0.
    pub dynamic_smem_bytes: u32,
    /// Bytes of the parameter space.
    pub param_bytes: u32,
    /// Parameters in order.
    pub params: Vec<KernelParam>,
}

fn dims3(d: &[i64]) -> [u32; 3] {
    let at = |i: usize| d.get(i).map_or(1, |&v| u32::try_from(v).unwrap_or(0));
    [at(0), at(1), at(2)]
}

impl KernelInfo {
    /// The launch facts of a lowered entry for `gpu` (nothing from a
    /// cubin yet).
    pub fn from_entry(e: &ptx::Entry, gpu: Gpu) -> KernelInfo {
        let l = &e.launch;
        let layout = params::layout(&e.params, gpu);
        let params = e
            .params
            .iter()
            .zip(&layout.slots)
            .map(|(p, s)| KernelParam {
                name: p.name.clone(),
                kind: match p.ty {
                    ParamTy::GlobalPtr => ParamKind::GlobalPointer,
                    ParamTy::Scalar(_) => ParamKind::Scalar,
                    ParamTy::TensorMap => ParamKind::HiddenTensorMap,
                },
                ptx_type: match p.ty {
                    ParamTy::GlobalPtr => "u64",
                    ParamTy::Scalar(t) => t.name(),
                    ParamTy::TensorMap => "b8",
                },
                offset: s.offset,
                size: s.size,
                align: s.align,
            })
            .collect();
        let block = match (&l.reqntid, &l.maxntid) {
            (Some(d), _) | (None, Some(d)) => dims3(d),
            (None, None) => [e.reqntid, 1, 1],
        };
        KernelInfo {
            name: e.name.clone(),
            block,
            block_is_exact: l.maxntid.is_none(),
            cluster: l.reqnctapercluster.as_deref().map_or([1, 1, 1], dims3),
            blocks_are_clusters: l.blocksareclusters,
            min_ctas_per_sm: l.minnctapersm.and_then(|n| u32::try_from(n).ok()),
            max_registers: l.maxnreg.and_then(|n| u32::try_from(n).ok()),
            registers: None,
            static_smem_bytes: e.shared_bytes,
            cubin_smem_bytes: None,
            dynamic_smem_bytes: 0,
            param_bytes: layout.size,
            params,
        }
    }

    /// The launch facts of every entry of a lowered module, in order.
    pub fn from_module(m: &ptx::Module) -> Vec<KernelInfo> {
        m.items
            .iter()
            .filter_map(|i| match i {
                ptx::Item::Entry(e) => Some(KernelInfo::from_entry(e, m.gpu)),
                ptx::Item::Global(_)
                | ptx::Item::VprintfDecl
                | ptx::Item::HeapDecl
                | ptx::Item::Bytes(..) => None,
            })
            .collect()
    }

    /// Fills in what only the cubin knows (registers, static shared
    /// memory size) from the cubin's record of this kernel.
    pub fn add_cubin_facts(&mut self, k: &CubinKernel) {
        self.registers = k.registers;
        self.cubin_smem_bytes = Some(k.shared_bytes);
    }

    /// The kernel as one JSON object (what `tileiras --print-kernel-info`
    /// prints for each kernel).
    pub fn to_json(&self) -> String {
        let opt = |v: Option<u32>| v.map_or("null".to_string(), |v| v.to_string());
        let arr = |a: [u32; 3]| format!("[{}, {}, {}]", a[0], a[1], a[2]);
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| {
                format!(
                    "{{\"name\": {}, \"kind\": \"{}\", \"ptx_type\": \"{}\", \"offset\": {}, \"size\": {}, \"align\": {}}}",
                    json_string(&p.name),
                    match p.kind {
                        ParamKind::GlobalPointer => "global_pointer",
                        ParamKind::Scalar => "scalar",
                        ParamKind::HiddenTensorMap => "hidden_tensor_map",
                    },
                    p.ptx_type,
                    p.offset,
                    p.size,
                    p.align
                )
            })
            .collect();
        format!(
            "{{\"name\": {}, \"block\": {}, \"block_is_exact\": {}, \"cluster\": {}, \"blocks_are_clusters\": {}, \"min_ctas_per_sm\": {}, \"max_registers\": {}, \"registers\": {}, \"static_smem_bytes\": {}, \"cubin_smem_bytes\": {}, \"dynamic_smem_bytes\": {}, \"param_bytes\": {}, \"params\": [{}]}}",
            json_string(&self.name),
            arr(self.block),
            self.block_is_exact,
            arr(self.cluster),
            self.blocks_are_clusters,
            opt(self.min_ctas_per_sm),
            opt(self.max_registers),
            opt(self.registers),
            self.static_smem_bytes,
            opt(self.cubin_smem_bytes),
            self.dynamic_smem_bytes,
            self.param_bytes,
            params.join(", ")
        )
    }
}

/// Every kernel as a JSON document: `{"kernels": [...]}`.
pub fn to_json(kernels: &[KernelInfo]) -> String {
    let items: Vec<String> = kernels
        .iter()
        .map(|k| format!("    {}", k.to_json()))
        .collect();
    if items.is_empty() {
        return "{\"kernels\": []}\n".to_string();
    }
    format!("{{\"kernels\": [\n{}\n]}}\n", items.join(",\n"))
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes_and_empty() {
        assert_eq!(json_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
        assert_eq!(to_json(&[]), "{\"kernels\": []}\n");
    }
}
