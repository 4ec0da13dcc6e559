//! The C ABI, in the style of NVIDIA's nvrtc / nvJitLink: an opaque program
//! handle that is created from bytecode and a config, compiled, queried for
//! its output and log, and destroyed.
//!
//! All unsafe code of the crate lives in this module, `toolchain` and
//! `signals`. Every exported body runs inside `boundary::ffi_boundary`, so
//! no panic crosses the ABI; every pointer from C goes through the helpers
//! in `ptr`.
//!
//! Thread safety: any function may be called from any thread; distinct
//! programs may be used on different threads at once. A program's own state
//! is behind a lock, so concurrent calls on one program are serialized.
#![allow(non_camel_case_types, non_snake_case)]
#![deny(unsafe_op_in_unsafe_fn)]

mod boundary;
mod kernel_info;
mod program;
mod ptr;
pub mod types;

pub use kernel_info::*;
pub use program::*;
pub use types::*;
