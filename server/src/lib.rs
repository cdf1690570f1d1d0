//! Pivot LSP: a language server and CLI that checks Python code against multi-session
//! coding instructions ("pivots") and evaluates code assistants on MemoryCode and
//! ConvCodeWorld / ConvCodeBench.
//!
//! Layers (see ARCHITECTURE.md): `python`, `pivots`, `bench`, `exec` and `llm` are the core
//! and know nothing of LSP or the terminal; `lsp` and `cli` are thin faces over it.

pub mod bench;
pub mod bounded_read;
pub mod cli;
pub mod durable;
pub mod exec;
pub mod fasthash;
pub mod llm;
pub mod lsp;
pub mod pivots;
pub mod python;
pub mod report;
#[doc(hidden)]
pub mod test_skip;
