//! What only the tests use, kept out of the shipped binary: random edits of Python text for
//! the incremental-analysis tests (`edit_fuzz`) and visible skips (`test_skip`). Both crates
//! take it as a dev-dependency.

pub mod edit_fuzz;
pub mod test_skip;
