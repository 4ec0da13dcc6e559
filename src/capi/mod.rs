//! The C ABI. All unsafe code of the crate lives here.
