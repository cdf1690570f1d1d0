//! The helpers every Pivot LSP crate above `pivot-python` may use: bounded reads of files
//! a user names, durable (atomic, synced) writes, the cache folder, hex digests, percent
//! encoding, a child process with a deadline, and the one work pool. No benchmark, model or
//! editor knowledge lives here.

pub mod bounded_read;
pub mod cache_dir;
pub mod child;
pub mod digest;
pub mod durable;
pub mod percent;
pub mod pool;
