//! How operands reach shared memory, whichever engine multiplies them:
//! `cp.async` copies ([`cp_async`]), a pipelined loop's ring of stages
//! ([`ring`]) and its mbarriers ([`mbarrier_ring`]), TMA copies
//! ([`tma`]), B operands copied straight into their product's buffer
//! ([`direct`]), operands streamed slice by slice ([`stream`]), the
//! addresses of a thread's part of a tile ([`address`]), and the two
//! swizzles: the padded-row XOR swizzle ([`swizzle`]) and `wgmma`'s
//! canonical layouts ([`swizzled`]). The plan decides which load goes
//! which way ([`crate::lower::plan::copies`]); the engines' emission
//! (`ops/mma_sync*.rs`, `ops/wgmma*.rs`) uses these files and not each
//! other's.
pub mod address;
pub mod cp_async;
pub mod direct;
pub mod direct_tma;
pub mod mbarrier_ring;
pub mod ring;
pub mod stream;
pub mod swizzle;
pub mod swizzled;
pub mod thread_copy;
pub mod tma;
