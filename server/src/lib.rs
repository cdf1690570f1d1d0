//! Pivot LSP: a language server and CLI that checks Python code against multi-session
//! coding instructions ("pivots") and evaluates code assistants on MemoryCode and
//! ConvCodeWorld / ConvCodeBench.
//!
//! Layers (see ARCHITECTURE.md): the core is the crates under `crates/` (`pivot-python`,
//! `pivot-exec`, `pivot-llm`, `pivot-history`, `pivot-bench`, `pivot-report`, over
//! `pivot-base`), which know nothing of LSP or the terminal; `lsp`, `mcp` and `cli` here are
//! thin faces over them.

pub mod cli;
pub mod lsp;
pub mod mcp;

// No re-export of the core: a path names its crate (`pivot_exec::…`).
