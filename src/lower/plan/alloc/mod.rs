//! Where the entry's shared-memory buffers go: the one allocator
//! ([`placer`]) and the plan's walk of the entry with it ([`walk`]; loops
//! in [`loops`], direct copies and products in [`direct`]).
pub mod direct;
pub mod loops;
pub mod placer;
pub mod walk;
