//! The bytecode versions this reader accepts.

/// Every bytecode version read, oldest first, as (major, minor).
pub const SUPPORTED_VERSIONS: [(u8, u8); 5] = [(13, 1), (13, 2), (13, 3), (13, 4), (13, 5)];
