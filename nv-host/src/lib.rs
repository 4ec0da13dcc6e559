//! Test-only loader for the host callbacks NVIDIA's `tileiras` puts into a
//! cubin (section `.nv.host`, the object it hands ptxas as `--nv-host=`):
//! an x86-64 relocatable ELF whose code fills a kernel's tensor maps (its
//! hidden 128-byte parameters) at launch. This crate loads such an object
//! into this process ([`Image`]), runs `__CUDA_TILEIR_ON_PRE_LOAD` with a
//! table that records its calls, reads the callbacks structure it returns
//! ([`Callbacks`]), and runs a kernel's argument-change callback on a
//! parameter buffer ([`Image::launch`]). The foreign code runs in a forked
//! child, so a fault is an error, not the end of the caller.
//!
//! The layout facts used here are documented, each with its test, in the
//! project's `docs/nv-host-callbacks.md`. Only x86-64 Linux can run the
//! code ([`SUPPORTED`]); elsewhere every run returns an error that says so.

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod child;
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod image;

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
pub use child::{ChildRun, SlotCall, SLOTS};
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
pub use image::{relocation_name, Image, Symbol};

/// Whether this host can run the callbacks (x86-64 Linux).
pub const SUPPORTED: bool = cfg!(all(target_arch = "x86_64", target_os = "linux"));

/// Why the callbacks cannot run on this host, if they cannot.
pub fn unsupported_reason() -> Option<&'static str> {
    (!SUPPORTED).then_some("NVIDIA's host callbacks are x86-64 Linux code; this host is not")
}

/// The symbol `ON_PRE_LOAD` is exported as.
pub const ON_PRE_LOAD: &str = "__CUDA_TILEIR_ON_PRE_LOAD";
/// The symbol of the static callbacks structure.
pub const CALLBACKS: &str = "__CUDA_TILEIR_CALLBACKS";
/// Size of the callbacks structure in bytes.
pub const CALLBACKS_SIZE: usize = 72;
/// Size of one kernel's entry in the callbacks structure's table.
pub const KERNEL_ENTRY_SIZE: usize = 64;

/// The callbacks structure `ON_PRE_LOAD` returns (72 bytes), decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callbacks {
    /// Its 72 bytes as returned.
    pub raw: Vec<u8>,
    /// Word 0 (2 in every object seen).
    pub version: u64,
    /// Word 4: the size of a kernel entry (64).
    pub entry_size: u64,
    /// Word 6: the number of kernels.
    pub count: u64,
    /// Word 7 (2 in every object seen).
    pub word7: u64,
    /// Word 8: the address of `ON_PRE_LOAD` itself.
    pub on_pre_load: u64,
    /// One entry per kernel (from the table that word 5 points at).
    pub kernels: Vec<KernelCallbacks>,
}

/// One kernel's entry (64 bytes) in the callbacks table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelCallbacks {
    /// Its 64 bytes.
    pub raw: Vec<u8>,
    /// The kernel's name (word 0 points at it).
    pub name: String,
    /// Word 5: its argument-change callback.
    pub on_arguments_change: u64,
}

/// What one launch's callbacks did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The callbacks structure `ON_PRE_LOAD` returned.
    pub callbacks: Callbacks,
    /// The table calls `ON_PRE_LOAD` made.
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    pub calls: Vec<SlotCall>,
    /// The argument-change callback's return value.
    pub status: i32,
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
impl Image {
    /// Runs `ON_PRE_LOAD` with `n` as its third argument (in a child).
    pub fn pre_load(&self, n: i32) -> Result<ChildRun, String> {
        let f = self
            .symbol(ON_PRE_LOAD)
            .ok_or("no __CUDA_TILEIR_ON_PRE_LOAD")?;
        child::run(self, f.addr, n, None)
    }

    /// Decodes the callbacks structure at `addr` of the image.
    pub fn callbacks_at(&self, addr: u64) -> Result<Callbacks, String> {
        let raw = self
            .read(addr, CALLBACKS_SIZE)
            .ok_or_else(|| format!("callbacks at {addr:#x} lie outside the image"))?;
        let w = |i: usize| u64::from_le_bytes(raw[8 * i..8 * i + 8].try_into().unwrap());
        let (table, count, entry_size) = (w(5), w(6), w(4));
        if count > 4096 || entry_size < 48 {
            return Err(format!(
                "callbacks structure with {count} kernels of {entry_size} bytes"
            ));
        }
        let mut kernels = Vec::new();
        for k in 0..count {
            let at = table + k * entry_size;
            let e = self
                .read(at, KERNEL_ENTRY_SIZE)
                .ok_or("kernel entry outside the image")?;
            let ew = |i: usize| u64::from_le_bytes(e[8 * i..8 * i + 8].try_into().unwrap());
            kernels.push(KernelCallbacks {
                name: self.c_str(ew(0)).ok_or("kernel name outside the image")?,
                on_arguments_change: ew(5),
                raw: e,
            });
        }
        Ok(Callbacks {
            version: w(0),
            entry_size,
            count,
            word7: w(7),
            on_pre_load: w(8),
            kernels,
            raw,
        })
    }

    /// A launch of `kernel`: `ON_PRE_LOAD` (third argument 2, which calls
    /// nothing), then the kernel's argument-change callback on `params`,
    /// the kernel's whole parameter buffer (hidden tensor maps included),
    /// which the callback fills in.
    pub fn launch(&self, kernel: &str, params: &mut [u8]) -> Result<Launch, String> {
        let pre = self.pre_load(2)?;
        if pre.pre_load_status != 0 {
            return Err(format!("ON_PRE_LOAD returned {}", pre.pre_load_status));
        }
        let callbacks = self.callbacks_at(pre.out)?;
        let k = callbacks
            .kernels
            .iter()
            .find(|k| k.name == kernel)
            .ok_or_else(|| format!("no callbacks for kernel {kernel}"))?;
        let f = self.symbol(ON_PRE_LOAD).unwrap().addr;
        let run = child::run(self, f, 2, Some((k.on_arguments_change, [0; 3], params)))?;
        Ok(Launch {
            status: run.on_args_status.unwrap_or(-1),
            calls: run.calls,
            callbacks,
        })
    }

    /// Runs `ON_PRE_LOAD` (third argument 2) and then `f(first..., params)`
    /// for any function address `f` of the image (for probing the ABI).
    pub fn call_on_arguments_change(
        &self,
        f: u64,
        first: [u64; 3],
        params: &mut [u8],
    ) -> Result<ChildRun, String> {
        let pl = self
            .symbol(ON_PRE_LOAD)
            .ok_or("no __CUDA_TILEIR_ON_PRE_LOAD")?;
        child::run(self, pl.addr, 2, Some((f, first, params)))
    }
}
