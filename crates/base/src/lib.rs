//! The helpers every Pivot LSP crate above `pivot-python` may use: bounded reads of files
//! a user names and of kernel files, durable (atomic, synced) writes and scratch writes, the
//! cache folder, hex digests, percent encoding, a child process with a deadline, and the one work pool. No benchmark, model or
//! editor knowledge lives here.

// Tests read and write their fixtures as they like; clippy.toml holds product code to
// pivot-base's bounded reads and whole writes.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod bounded_read;
pub mod cache_dir;
pub mod child;
pub mod digest;
pub mod durable;
pub mod kernel_file;
pub mod percent;
pub mod pool;
