//! External tools: the subprocess harness, toolkit discovery, ptxas and
//! nvdisasm adapters.
//!
//! - [`process`]: a CUDA-agnostic harness ([`process::Command`]):
//!   `clone(CLONE_VM | CLONE_VFORK)` + `exec` with `PR_SET_PDEATHSIG`, so no
//!   child outlives the process, captured stdout/stderr read with `poll`, a
//!   deadline without signals, `wait4` status and resource usage.
//! - [`locate`]: [`Toolkit::resolve`] finds ptxas and nvdisasm through one
//!   CUDA-root resolver.
//! - [`ptxas`]: [`ptxas::assemble`] turns PTX into a cubin.
//! - [`nvdisasm`]: [`nvdisasm::disassemble`] turns a cubin into SASS text.
//! - [`backend`]: [`backend::run`] does all of it for one PTX module and an
//!   [`crate::Options`], producing the requested output's bytes.
//!
//! Every failure is a [`ToolError`]; the driver maps it to status 5, or 1
//! when [`ToolError::is_system_resource`].
//!
//! Linux only (`clone`, `prctl`, `pipe2`, `pidfd_open`). Measured
//! (`cargo bench --bench harness`, 2 shared cores): ptxas on a 9.6 KB PTX
//! takes about 37 ms either way; the harness' overhead over
//! `std::process::Command` is below the run-to-run noise (a few percent),
//! and spawning `/bin/true` costs about 0.8 to 0.95 ms with either. Measured
//! again with the `clone` start (same bench, cores busier): `/bin/true`
//! within -10 to +210 µs of `std::process::Command` (which took 0.97 to
//! 1.37 ms over three runs), ptxas within 2%.
//! With NVIDIA's `--nv-host` object, [`ptxas::assemble`] reproduces NVIDIA
//! tileiras 13.5's cubins byte for byte (`tests/toolchain_ptxas.rs`).
//!
//! ```no_run
//! use tileiras::toolchain::{nvdisasm, ptxas, Toolkit, ToolOverrides};
//! let tk = Toolkit::resolve(&ToolOverrides::default())?;
//! let job = ptxas::PtxasJob::with_arch(".version 9.0\n.target sm_90a\n.address_size 64\n", "sm_90a");
//! let cubin = ptxas::assemble(&tk, &job)?.cubin;
//! let sass = nvdisasm::disassemble(&tk, &cubin, None)?;
//! # Ok::<(), tileiras::toolchain::ToolError>(())
//! ```
pub mod backend;
mod error;
pub mod locate;
pub mod nvdisasm;
pub mod process;
pub mod ptxas;

pub use error::{install_hint, ToolError};
pub use locate::{SearchEnv, ToolOverrides, Toolkit};
