//! The Python layer: tree-sitter parsing, a CPython-compatible syntax verdict, and the
//! objects (functions, classes, variables, ...) MemoryCode's evaluator collects, each with
//! its source range.

pub mod code_block;
pub mod constructs;
pub mod generated;
pub mod incremental;
pub mod joined;
pub mod literal;
pub mod module;
pub mod numbers;
pub mod objects;
pub mod occurrences;
pub mod pystr;
pub mod span;
pub mod syntax;
pub mod walk;

pub use module::{Module, SyntaxError};
pub use objects::{Entry, Item, ObjectKind, Objects};
pub use span::{Pos, Span};
