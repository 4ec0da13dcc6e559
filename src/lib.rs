//! tileiras: the CUDA Tile IR optimizing assembler.
//!
//! TileIR bytecode flows one way through the stages, each a module:
//!
//! ```text
//! bytes ──bytecode──▶ ir::Module ──verify──▶ verified module ──lower──▶ PTX text
//!        (reader)                                              (ptx printer)
//!   PTX ──toolchain (ptxas)──▶ cubin ──┬─▶ cubin file
//!                                      ├─▶ SASS text (toolchain: nvdisasm)
//!                                      └─▶ host relocatable object (elf)
//! ```
//!
//! [`driver::compile`] runs the whole pipeline; [`capi`] exposes it as a C ABI
//! and `src/bin/tileiras.rs` as a command-line tool. Library code never prints
//! or exits: diagnostics go to the caller's sink.
#![deny(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::print_stdout, clippy::print_stderr, clippy::dbg_macro)]
#![deny(clippy::exit)]

pub mod bytecode;
#[allow(unsafe_code)]
pub mod capi;
pub mod cli;
pub mod diag;
pub mod driver;
pub mod elf;
pub mod env;
pub mod error;
pub mod host;
pub mod ir;
pub mod kernel_info;
pub mod lower;
pub mod options;
pub mod ptx;
#[allow(unsafe_code)]
pub mod signals;
pub mod tempfiles;
#[allow(unsafe_code)]
pub mod toolchain;
pub mod verify;

pub use diag::{Diagnostic, Location, Severity};
pub use driver::{compile, Output};
pub use error::{Error, Status};
pub use kernel_info::{KernelInfo, KernelParam, ParamKind};
pub use options::{Gpu, HostArch, HostOs, Options, OutputKind, Sanitize};

/// The version of this library, as in `Cargo.toml`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
