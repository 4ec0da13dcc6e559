//! Where the entry's shared-memory buffers go: the one allocator
//! ([`placer`]).
pub mod placer;
