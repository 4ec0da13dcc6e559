//! Where the entry's shared-memory buffers go: the one allocator
//! ([`placer`]) and the plan's walk of the entry with it ([`walk`]; loops
//! in [`loops`], direct copies and products in [`direct`], a load's move
//! from the rows it reads in [`loads`], values recomputed in another layout
//! in [`recompute`]), and what it chose by the room left ([`choices`]),
//! which emission follows.
pub mod choices;
pub mod direct;
pub mod loads;
pub mod loops;
pub mod placer;
pub mod recompute;
pub mod walk;
