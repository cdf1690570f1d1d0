//! Pivot LSP: a language server and CLI that checks Python code against multi-session
//! coding instructions ("pivots") and evaluates code assistants on MemoryCode and
//! ConvCodeWorld / ConvCodeBench.
//!
//! Layers (see ARCHITECTURE.md): the core is the crates under `crates/` (`pivot-python`,
//! `pivot-exec`, `pivot-llm`, `pivot-history`, `pivot-bench`, `pivot-report`, over
//! `pivot-base`), which know nothing of LSP or the terminal; `lsp`, `mcp` and `cli` here are
//! thin faces over them.

// Tests read and write their fixtures as they like; clippy.toml holds product code to
// pivot-base's bounded reads and whole writes.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod cli;
pub mod lsp;
pub mod mcp;

// No re-export of the core: a path names its crate (`pivot_exec::…`).
