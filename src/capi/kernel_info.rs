//! Kernel launch queries on a compiled program: how many kernels, and for
//! each its entry name, block and cluster shape, shared memory, registers
//! and parameter layout (see `crate::kernel_info`).
use std::ffi::{c_char, CString};
use std::mem::size_of;

use super::boundary::ffi_boundary;
use super::program::tileirasProgram;
use super::ptr;
use super::types::tileirasResult::{self, *};
use crate::kernel_info::{KernelInfo, ParamKind};

/// How a kernel parameter is passed (`tileirasKernelParam::kind`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tileirasParamKind {
    /// A 64-bit global memory address (pass a `CUdeviceptr`).
    TILEIRAS_PARAM_GLOBAL_POINTER = 0,
    /// A scalar value of `size` bytes.
    TILEIRAS_PARAM_SCALAR = 1,
    /// A hidden 128-byte tensor map after the visible parameters: the
    /// cubin's host callbacks write it at launch; pass nothing for it.
    TILEIRAS_PARAM_HIDDEN_TENSOR_MAP = 2,
}

/// Launch facts of one kernel. Set `struct_size` to
/// `sizeof(tileirasKernelInfo)` before the query; the library writes no
/// more than that many bytes, so the struct can grow.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tileirasKernelInfo {
    /// `sizeof(tileirasKernelInfo)` as the caller was compiled.
    pub struct_size: usize,
    /// Entry symbol name, NUL-terminated, owned by the program (valid
    /// until it is compiled again or destroyed).
    pub name: *const c_char,
    /// Threads per block (x, y, z): the `blockDim` the kernel requires
    /// (or allows at most, when `block_is_exact` is 0).
    pub block_dim: [u32; 3],
    /// 1 when the block shape is exact (`.reqntid`), 0 for an upper bound
    /// (`.maxntid`).
    pub block_is_exact: u32,
    /// CTAs per cluster (x, y, z); (1, 1, 1) without clusters.
    pub cluster_dim: [u32; 3],
    /// 1 when the grid counts clusters (`.blocksareclusters`): launch as
    /// many grid blocks as tile blocks, each a cluster of `cluster_dim`.
    pub blocks_are_clusters: u32,
    /// `.minnctapersm`, 0 when unset.
    pub min_ctas_per_sm: u32,
    /// `.maxnreg`, 0 when unset.
    pub max_registers: u32,
    /// Registers per thread ptxas allocated; 0 when no cubin was built
    /// (PTX output).
    pub registers: u32,
    /// Static shared memory the kernel declares, bytes per block.
    pub static_smem_bytes: u32,
    /// Shared memory per block the cubin sizes (with the 1 KiB ptxas
    /// reserves on sm_90 and newer); 0 when no cubin was built.
    pub cubin_smem_bytes: u32,
    /// Dynamic shared memory to pass as `sharedMemBytes` (always 0 here).
    pub dynamic_smem_bytes: u32,
    /// Bytes of the kernel parameter space.
    pub param_bytes: u32,
    /// Number of parameters (query each with
    /// `tileirasProgramGetKernelParam`).
    pub num_params: u32,
}

/// One kernel parameter. Set `struct_size` to `sizeof(tileirasKernelParam)`
/// before the query.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tileirasKernelParam {
    /// `sizeof(tileirasKernelParam)` as the caller was compiled.
    pub struct_size: usize,
    /// The `.param` name, NUL-terminated, owned by the program.
    pub name: *const c_char,
    /// The PTX type (`u64`, `u32`, `f32`, ...), NUL-terminated, owned by
    /// the program.
    pub ptx_type: *const c_char,
    /// A `tileirasParamKind`.
    pub kind: u32,
    /// Byte offset in the parameter space.
    pub offset: u32,
    /// Size in bytes (what `kernelParams[i]` must point to).
    pub size: u32,
    /// Alignment in bytes.
    pub align: u32,
}

/// A kernel's facts with the C strings the queries lend out.
pub(super) struct KernelRecord {
    info: KernelInfo,
    name: CString,
    params: Vec<(CString, CString)>,
}

fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', "")).unwrap_or_default()
}

/// The records kept on the program after a successful compile.
pub(super) fn records(kernels: &[KernelInfo]) -> Vec<KernelRecord> {
    kernels
        .iter()
        .map(|k| KernelRecord {
            info: k.clone(),
            name: c_string(&k.name),
            params: k
                .params
                .iter()
                .map(|p| (c_string(&p.name), c_string(p.ptx_type)))
                .collect(),
        })
        .collect()
}

/// Reads the caller's `struct_size` and checks it covers `T`.
///
/// # Safety
/// A non-NULL `out` points to at least a readable `usize`.
unsafe fn caller_size_ok<T>(out: *const T) -> bool {
    // SAFETY: non-NULL checked by the caller of this helper; the first
    // field of every growable struct is its `usize` size.
    match unsafe { ptr::borrow(out.cast::<usize>()) } {
        Some(&size) => size >= size_of::<T>(),
        None => false,
    }
}

/// Writes the number of kernels of the last successful compile to
/// `*count` (0 for a module without entries).
///
/// Returns `TILEIRAS_ERROR_INVALID_ARGUMENT` for NULL arguments or before
/// a successful compile. Available for every output kind.
///
/// # Safety
/// `prog` is NULL or a live handle; `count` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tileirasProgramGetNumKernels(
    prog: tileirasProgram,
    count: *mut usize,
) -> tileirasResult {
    ffi_boundary!({
        // SAFETY: a live handle by contract.
        let Some(program) = (unsafe { ptr::borrow(prog) }) else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        let state = program.state.lock();
        let Some(kernels) = &state.kernels else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        // SAFETY: writable by contract.
        if unsafe { ptr::write(count, kernels.len()) } {
            TILEIRAS_SUCCESS
        } else {
            TILEIRAS_ERROR_INVALID_ARGUMENT
        }
    })
}

/// Fills `*info` for kernel `index` (0-based, in entry order) of the last
/// successful compile. `info->struct_size` must be set to
/// `sizeof(tileirasKernelInfo)`. Strings point into the program and stay
/// valid until it is compiled again or destroyed. Register count and
/// `cubin_smem_bytes` are 0 when the output kind is PTX (no cubin is
/// built); everything else is available for every output kind.
///
/// Returns `TILEIRAS_ERROR_INVALID_ARGUMENT` for NULL arguments, a too
/// small `struct_size`, an index out of range, or before a successful
/// compile; `*info` is then untouched.
///
/// # Safety
/// `prog` is NULL or a live handle; `info` is NULL or points to a writable
/// `tileirasKernelInfo` whose `struct_size` is set.
#[no_mangle]
pub unsafe extern "C" fn tileirasProgramGetKernelInfo(
    prog: tileirasProgram,
    index: usize,
    info: *mut tileirasKernelInfo,
) -> tileirasResult {
    ffi_boundary!({
        // SAFETY: a live handle by contract.
        let Some(program) = (unsafe { ptr::borrow(prog) }) else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        // SAFETY: `info` is non-NULL here and starts with its size.
        if info.is_null() || !unsafe { caller_size_ok(info) } {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        }
        let state = program.state.lock();
        let Some(r) = state.kernels.as_ref().and_then(|k| k.get(index)) else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        let k = &r.info;
        let value = tileirasKernelInfo {
            struct_size: size_of::<tileirasKernelInfo>(),
            name: r.name.as_ptr(),
            block_dim: k.block,
            block_is_exact: u32::from(k.block_is_exact),
            cluster_dim: k.cluster,
            blocks_are_clusters: u32::from(k.blocks_are_clusters),
            min_ctas_per_sm: k.min_ctas_per_sm.unwrap_or(0),
            max_registers: k.max_registers.unwrap_or(0),
            registers: k.registers.unwrap_or(0),
            static_smem_bytes: k.static_smem_bytes,
            cubin_smem_bytes: k.cubin_smem_bytes.unwrap_or(0),
            dynamic_smem_bytes: k.dynamic_smem_bytes,
            param_bytes: k.param_bytes,
            num_params: u32::try_from(k.params.len()).unwrap_or(u32::MAX),
        };
        // SAFETY: non-NULL, writable for a whole struct (its size checked).
        unsafe { ptr::write(info, value) };
        TILEIRAS_SUCCESS
    })
}

/// Fills `*param` for parameter `index` of kernel `kernel` of the last
/// successful compile. `param->struct_size` must be set to
/// `sizeof(tileirasKernelParam)`. Strings point into the program and stay
/// valid until it is compiled again or destroyed.
///
/// Returns `TILEIRAS_ERROR_INVALID_ARGUMENT` for NULL arguments, a too
/// small `struct_size`, an index out of range, or before a successful
/// compile; `*param` is then untouched.
///
/// # Safety
/// `prog` is NULL or a live handle; `param` is NULL or points to a
/// writable `tileirasKernelParam` whose `struct_size` is set.
#[no_mangle]
pub unsafe extern "C" fn tileirasProgramGetKernelParam(
    prog: tileirasProgram,
    kernel: usize,
    index: usize,
    param: *mut tileirasKernelParam,
) -> tileirasResult {
    ffi_boundary!({
        // SAFETY: a live handle by contract.
        let Some(program) = (unsafe { ptr::borrow(prog) }) else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        // SAFETY: `param` is non-NULL here and starts with its size.
        if param.is_null() || !unsafe { caller_size_ok(param) } {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        }
        let state = program.state.lock();
        let Some(r) = state.kernels.as_ref().and_then(|k| k.get(kernel)) else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        let (Some(p), Some((name, ty))) = (r.info.params.get(index), r.params.get(index)) else {
            return TILEIRAS_ERROR_INVALID_ARGUMENT;
        };
        let value = tileirasKernelParam {
            struct_size: size_of::<tileirasKernelParam>(),
            name: name.as_ptr(),
            ptx_type: ty.as_ptr(),
            kind: match p.kind {
                ParamKind::GlobalPointer => tileirasParamKind::TILEIRAS_PARAM_GLOBAL_POINTER,
                ParamKind::Scalar => tileirasParamKind::TILEIRAS_PARAM_SCALAR,
                ParamKind::HiddenTensorMap => tileirasParamKind::TILEIRAS_PARAM_HIDDEN_TENSOR_MAP,
            } as u32,
            offset: p.offset,
            size: p.size,
            align: p.align,
        };
        // SAFETY: non-NULL, writable for a whole struct (its size checked).
        unsafe { ptr::write(param, value) };
        TILEIRAS_SUCCESS
    })
}
