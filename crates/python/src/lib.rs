//! Pivot LSP's editor hot path: Python analysis (`python`: tree-sitter parsing, CPython's
//! syntax verdict, the objects MemoryCode's evaluator collects, with their ranges) and
//! pivots (`pivots`: rules, the ledger of their versions over sessions, and the check of a
//! module against them), with the text hash their caches use (`fasthash`). Its
//! dependencies are only what that needs: no benchmark, execution, network or LSP crate,
//! so the language server's checking compiles and is tested on its own.

// Tests read and write their fixtures as they like; clippy.toml holds product code to
// pivot-base's bounded reads and whole writes.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod fasthash;
pub mod pivots;
pub mod python;
