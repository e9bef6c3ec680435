//! The `rag` command.
fn main() {}
