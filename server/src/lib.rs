//! Pivot LSP: a language server and CLI that checks Python code against multi-session
//! coding instructions ("pivots") and evaluates code assistants on MemoryCode and
//! ConvCodeWorld / ConvCodeBench.
//!
//! Layers (see ARCHITECTURE.md): the core is the `pivot-core` crate (`python`, `pivots`,
//! `bench`, `exec`, `llm`, `report`), which knows nothing of LSP or the terminal; `lsp` and
//! `cli` here are thin faces over it.

pub mod cli;
pub mod lsp;

// The core's modules under their usual paths (`crate::python::…` in the faces, and
// `pivot_lsp::exec::…` for the tests and other users).
#[doc(hidden)]
pub use pivot_core::test_skip;
pub use pivot_core::{bench, bounded_read, durable, exec, fasthash, llm, pivots, python, report};
