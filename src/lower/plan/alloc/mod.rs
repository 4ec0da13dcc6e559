//! Where the entry's shared-memory buffers go: the one allocator
//! ([`placer`]) and the plan's walk of the entry with it ([`walk`]).
pub mod placer;
pub mod walk;
