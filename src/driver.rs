//! The whole pipeline in one call: bytecode in, the requested output out.
//!
//! read → verify → lower (PTX) → [`backend::run`] (ptxas, then nvdisasm or
//! the host object writer), stopping at the stage that makes the requested
//! output. The environment gates are read once, here, and passed on.
use std::path::{Path, PathBuf};

use crate::diag::{Diagnostic, Severity};
use crate::env::Gates;
use crate::error::Error;
use crate::kernel_info::KernelInfo;
use crate::options::{Options, OutputKind};
use crate::toolchain::backend::{self, Request};
use crate::toolchain::ptxas::HostCode;
use crate::{bytecode, elf, host, lower, ptx, verify};

/// The result of a successful compile.
#[derive(Clone, Debug)]
pub struct Output {
    /// What `bytes` holds.
    pub kind: OutputKind,
    /// The output: cubin, host object, PTX text or SASS text.
    pub bytes: Vec<u8>,
    /// How to launch each kernel, in entry order. Register counts and
    /// static shared memory are filled only when a cubin was built (every
    /// output kind but PTX).
    pub kernels: Vec<KernelInfo>,
}

/// Compiles TileIR bytecode. Every diagnostic, the final error's included,
/// goes to `sink` as it happens.
pub fn compile(
    bytecode: &[u8],
    options: &Options,
    sink: &mut dyn FnMut(&Diagnostic),
) -> Result<Output, Error> {
    let result = run(bytecode, options, sink);
    if let Err(e) = &result {
        for d in e.diagnostics() {
            sink(&d);
        }
    }
    result
}

fn run(
    bytecode: &[u8],
    options: &Options,
    sink: &mut dyn FnMut(&Diagnostic),
) -> Result<Output, Error> {
    options.validate().map_err(Error::InvalidArgument)?;
    let gates = Gates::from_env().map_err(|e| Error::InvalidArgument(e.to_string()))?;
    if gates.dump_bc {
        dump(options, "tileirbc", bytecode, sink);
    }
    if gates.prefer_tma == Some(true) && options.gpu.capability() >= 90 {
        // Asked for explicitly, so say that it is not done.
        sink(&Diagnostic::new(
            Severity::Warning,
            "TILEIR_PREFER_TMA_FOR_LOAD_STORE=true has no effect: this compiler copies by TMA \
             only the operand tiles of pipelined products; other tensor-view loads and stores \
             use cp.async and vector accesses",
        ));
    }
    let module = bytecode::read(bytecode)?;
    verify::verify(&module).map_err(Error::Verify)?;
    verify::invariants::check(&module).map_err(Error::Invariant)?;
    let lowering = Options {
        unlimited_smem: gates.unlimited_smem,
        always_swizzle: gates.always_swizzle,
        tma: options.tma && !gates.no_tma,
        ..options.clone()
    };
    if gates.dump_plan {
        let plans = lower::plan::plan_module(&module, &lowering)?;
        let text: String = plans.iter().map(|p| p.dump(&module)).collect();
        dump(options, "plan", text.as_bytes(), sink);
    }
    let (ptx_module, notes, scratch) = lower::lower_module_mapped(&module, &lowering)?;
    if gates.dump_plan {
        let text: String = scratch.iter().map(|s| s.dump(&module)).collect();
        dump(options, "scratch", text.as_bytes(), sink);
    }
    for d in &notes {
        sink(d);
    }
    let mut kernels = KernelInfo::from_module(&ptx_module);
    let ptx = ptx_module.to_text();
    if gates.dump_llvm {
        dump(options, "ptx", ptx.as_bytes(), sink);
    }
    let mut request = Request::new(&ptx, options, &gates);
    if options.output != OutputKind::Ptx {
        request.host_code = Some(HostCode::Bytes(host_code(&ptx_module, options)?));
    }
    let produced = backend::run(&request)?;
    // ptxas' informational lines (an option the target ignores, say) are
    // remarks, shown with --remarks; NVIDIA's tool prints none of them.
    for line in produced.ptxas_log.lines().filter(|l| !l.trim().is_empty()) {
        let severity = if line.starts_with("ptxas info") {
            Severity::Remark
        } else {
            Severity::Warning
        };
        sink(&Diagnostic::new(severity, line));
    }
    if !produced.cubin.is_empty() {
        let facts = elf::cubin_info::kernels(&produced.cubin)?;
        for k in &mut kernels {
            if let Some(f) = facts.iter().find(|f| f.name == k.name) {
                k.add_cubin_facts(f);
            }
        }
    }
    Ok(Output {
        kind: options.output,
        bytes: produced.bytes,
        kernels,
    })
}

/// The host callbacks of `module`'s entries, which write each entry's
/// tensor maps at launch: the object ptxas puts in the cubin's `.nv.host`
/// section (`--nv-host`), for the options' host architecture and
/// operating system. Every entry has a callback, one without maps writes
/// nothing, as NVIDIA's do.
pub fn host_code(module: &ptx::Module, options: &Options) -> Result<Vec<u8>, Error> {
    let mut kernels = Vec::new();
    for item in &module.items {
        let ptx::Item::Entry(e) = item else {
            continue;
        };
        let offsets: Vec<u32> = ptx::params::layout(&e.params, options.gpu)
            .slots
            .iter()
            .map(|s| s.offset)
            .collect();
        let maps = e
            .tensor_maps
            .iter()
            .map(|d| d.spec(&offsets))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|why| host::HostError(format!("entry {}: {why}", e.name)))?;
        kernels.push(host::Kernel {
            name: e.name.clone(),
            maps,
        });
    }
    Ok(host::callbacks_object(
        &kernels,
        options.host_arch,
        options.host_os,
    )?)
}

/// Writes a debug dump next to the output file (or into the current
/// directory), named after it with `extension`. A failure is a warning.
fn dump(options: &Options, extension: &str, bytes: &[u8], sink: &mut dyn FnMut(&Diagnostic)) {
    let path = dump_path(options.output_path.as_deref(), extension);
    if let Err(e) = elf::write_output(&path, bytes) {
        sink(&Diagnostic::new(
            Severity::Warning,
            format!("cannot write debug dump '{}': {e}", path.display()),
        ));
    }
}

fn dump_path(output: Option<&Path>, extension: &str) -> PathBuf {
    match output {
        Some(out) => out.with_extension(format!("dump.{extension}")),
        None => PathBuf::from(format!("tileiras.dump.{extension}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dumps_go_next_to_the_output() {
        assert_eq!(
            dump_path(Some(Path::new("out/k.cubin")), "ptx"),
            PathBuf::from("out/k.dump.ptx")
        );
        assert_eq!(
            dump_path(None, "tileirbc"),
            PathBuf::from("tileiras.dump.tileirbc")
        );
    }
}
