//! The `tileiras` command-line tool.
fn main() {}
