//! Host callbacks: the code the CUDA driver runs on the host at launch to
//! write a kernel's tensor maps into its hidden parameters. ptxas stores
//! the object in the cubin's `.nv.host` section (`--nv-host=`); its ABI,
//! learned from NVIDIA's objects, is in `docs/nv-host-callbacks.md`.
//!
//! The plan decides each map ([`MapSpec`]); [`Kernel::program`] turns a
//! kernel's maps into straight-line code ([`Program`]: loads from the
//! parameter buffer, wrapping arithmetic, stores into the maps, nothing
//! else), one encoder per host ISA turns it into machine code, and
//! [`callbacks_object`] writes the relocatable ELF object for x86-64 or
//! AArch64, Linux or Windows hosts.

mod aarch64;
mod map;
mod object;
mod program;
mod x86_64;

pub use map::{MapDecl, MapElem, MapSpec, MapSwizzle, MapValue};
pub use program::{Op, Program, Reg, REGS};

use crate::options::{HostArch, HostOs};

/// Size of the callbacks structure `ON_PRE_LOAD` returns.
pub const CALLBACKS_SIZE: usize = 72;
/// Size of one kernel's entry in the callbacks table.
pub const KERNEL_ENTRY_SIZE: usize = 64;

/// A failure to build the callbacks (a map the plan described wrongly).
#[derive(Debug, thiserror::Error)]
#[error("host callbacks: {0}")]
pub struct HostError(pub String);

/// One kernel's callback: its PTX entry name and the maps it writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Kernel {
    /// The entry's name.
    pub name: String,
    /// Its tensor maps.
    pub maps: Vec<MapSpec>,
}

impl Kernel {
    /// The argument-change callback's code.
    pub fn program(&self) -> Result<Program, HostError> {
        let mut p = Program::default();
        for m in &self.maps {
            m.check()
                .map_err(|e| HostError(format!("kernel {}: {e}", self.name)))?;
            m.program(&mut p);
        }
        Ok(p)
    }
}

/// The relocatable ELF object with `kernels`' callbacks for `arch` and
/// `os`. As NVIDIA's tileiras does, Windows hosts get an ELF object too,
/// whose x86-64 code follows the Microsoft x64 convention (AArch64's is
/// the same on both).
pub fn callbacks_object(
    kernels: &[Kernel],
    arch: HostArch,
    os: HostOs,
) -> Result<Vec<u8>, HostError> {
    let mut code = Vec::new();
    for k in kernels {
        if k.name.is_empty() || k.name.contains('\0') {
            return Err(HostError(format!("a kernel named {:?}", k.name)));
        }
        let p = k.program()?;
        code.push((k.clone(), encode(&p, arch, os)));
    }
    object::write(&code, arch, abi(os)).map_err(HostError)
}

/// The x86-64 convention of `os`.
fn abi(os: HostOs) -> x86_64::Abi {
    match os {
        HostOs::Linux => x86_64::Abi::SysV,
        HostOs::Windows => x86_64::Abi::Win64,
    }
}

/// The machine code of a callback running `program` on `arch` and `os`.
pub fn encode(program: &Program, arch: HostArch, os: HostOs) -> Vec<u8> {
    match arch {
        HostArch::X86_64 => x86_64::callback(program, abi(os)),
        HostArch::Aarch64 => aarch64::callback(program),
    }
}

/// The machine code of one operation on `arch` and `os` (for disassembler
/// checks).
pub fn encode_op(op: &Op, arch: HostArch, os: HostOs) -> Vec<u8> {
    match arch {
        HostArch::X86_64 => {
            let mut v = Vec::new();
            x86_64::encode(&mut v, op, abi(os));
            v
        }
        HostArch::Aarch64 => {
            let mut v = Vec::new();
            aarch64::encode(&mut v, op);
            v.iter().flat_map(|w| w.to_le_bytes()).collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_for_both_hosts_parse() {
        use ::object::{Object, ObjectSymbol};
        let k = Kernel {
            name: "k".into(),
            maps: Vec::new(),
        };
        for arch in [HostArch::X86_64, HostArch::Aarch64] {
            let bytes = callbacks_object(std::slice::from_ref(&k), arch, HostOs::Linux).unwrap();
            let f = ::object::File::parse(&*bytes).unwrap();
            let names: Vec<_> = f.symbols().filter_map(|s| s.name().ok()).collect();
            for want in [
                "__CUDA_TILEIR_ON_PRE_LOAD",
                "__CUDA_TILEIR_CALLBACKS",
                "__CUDA_TILEIR_FUNC_CALLBACKS",
                "__CUDA_TILEIR_FUNC_ON_ARGUMENTS_CHANGE_0",
                "__CUDA_TILEIR_FUNC_NAME_0",
                "__CUDA_TILEIR_CALLBACKS_ON_PRE_LOAD",
            ] {
                assert!(names.contains(&want), "{arch:?}: {want} in {names:?}");
            }
            assert!(f.section_by_name(".note.GNU-stack").is_some());
        }
        assert!(callbacks_object(&[Kernel::default()], HostArch::X86_64, HostOs::Linux).is_err());
    }
}
