//! Pivot LSP's core: Python analysis (`python`), pivots and their ledger (`pivots`), the
//! benchmarks (`bench`), execution in a sandbox (`exec`), model endpoints (`llm`) and the HTML
//! report (`report`), with the helpers every layer uses. It knows nothing of LSP or the
//! terminal (no protocol or command-line crate is a dependency); the faces are the
//! `pivot-lsp` crate's `lsp` and `cli`.

pub mod bench;
pub mod bounded_read;
pub mod cache_dir;
pub mod child;
pub mod digest;
pub mod durable;
pub mod exec;
pub mod history;
pub mod llm;
pub mod percent;
pub mod pool;
pub mod report;
