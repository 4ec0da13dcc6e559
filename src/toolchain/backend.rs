//! The back end in one call: PTX text in, the requested output out.
//!
//! [`run`] resolves the toolkit from the options, assembles with ptxas, and
//! then, per [`OutputKind`]: returns the cubin; disassembles it with
//! nvdisasm; or wraps it in a host relocatable object (with the SASS in
//! `.nvdisasm` when [`Request::sass_in_object`] asks). PTX output returns the
//! text untouched without running anything. Errors keep their types inside
//! [`crate::Error`], so the status codes follow from [`crate::Error::status`].
use super::nvdisasm::{self, DisasmJob};
use super::ptxas::{self, HostCode, PtxasJob};
use super::{ToolOverrides, Toolkit};
use crate::elf;
use crate::env::Gates;
use crate::error::Error;
use crate::options::{Options, OutputKind};

/// What to do with one PTX module.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// The PTX text.
    pub ptx: &'a str,
    /// Target, flags, output kind, tool locations and time limit.
    pub options: &'a Options,
    /// Environment gates (the knob file).
    pub gates: &'a Gates,
    /// The `--nv-host` object, when there is one.
    pub host_code: Option<HostCode>,
    /// Tokens from the module's `ptxas-options`.
    pub module_ptxas_options: Vec<String>,
    /// For [`OutputKind::HostObject`]: also embed the SASS text.
    pub sass_in_object: bool,
}

/// The back end's result.
#[derive(Clone, Debug)]
pub struct Produced {
    /// The output bytes, of `options.output`'s kind.
    pub bytes: Vec<u8>,
    /// What ptxas printed on success (warnings), verbatim; empty if none.
    pub ptxas_log: String,
    /// The cubin ptxas made (empty for PTX output), whatever the output kind.
    pub cubin: Vec<u8>,
}

impl<'a> Request<'a> {
    /// A request with no host code, no module options, no SASS in objects.
    pub fn new(ptx: &'a str, options: &'a Options, gates: &'a Gates) -> Request<'a> {
        Request {
            ptx,
            options,
            gates,
            host_code: None,
            module_ptxas_options: Vec::new(),
            sass_in_object: false,
        }
    }
}

/// Runs the back end for `req`.
pub fn run(req: &Request<'_>) -> Result<Produced, Error> {
    let o = req.options;
    if o.output == OutputKind::Ptx {
        return Ok(Produced {
            bytes: req.ptx.as_bytes().to_vec(),
            ptxas_log: String::new(),
            cubin: Vec::new(),
        });
    }
    let toolkit = Toolkit::resolve(&ToolOverrides::from_options(o))?;
    let mut job = PtxasJob::new(req.ptx, o, req.gates);
    job.host_code = req.host_code.clone();
    job.module_options = req.module_ptxas_options.clone();
    let assembled = ptxas::assemble(&toolkit, &job)?;
    let sass = |cubin: &[u8]| {
        nvdisasm::dump_sass(
            &toolkit,
            cubin,
            &DisasmJob {
                timeout: o.tool_timeout,
                ..DisasmJob::default()
            },
        )
    };
    let bytes = match o.output {
        OutputKind::Ptx | OutputKind::Cubin => assembled.cubin.clone(),
        OutputKind::Sass => sass(&assembled.cubin)?.into_bytes(),
        OutputKind::HostObject => {
            let text = if req.sass_in_object {
                Some(sass(&assembled.cubin)?)
            } else {
                None
            };
            elf::host_object(&assembled.cubin, text.as_deref(), o.host_arch, o.host_os)?
        }
    };
    Ok(Produced {
        bytes,
        ptxas_log: assembled.log,
        cubin: assembled.cubin,
    })
}
