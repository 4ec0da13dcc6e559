//! The `tileirdisasm` command-line tool.
fn main() {}
