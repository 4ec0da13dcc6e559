//! Emission: SIMT IR for one entry from its plan, one op family a file
//! under [`ops`], with the lowering context ([`context::Lowerer`]) they
//! share.
pub mod context;
pub mod copies;
pub mod entry;
pub mod globals;
pub mod ops;
pub mod scratch;
pub mod states;
pub mod wgmma_isa;
