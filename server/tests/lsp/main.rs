//! End-to-end tests of the language server: the real binary over stdio, spoken to by a
//! strict JSON-RPC client (support/lsp.rs) that fails on any message a test does not
//! consume. Expected ranges are derived by hand from the fixture texts. One test binary, in
//! files by feature:
//! - `diagnostics`: diagnostics, hover and quick fixes as the sessions of a conversation
//!   replay, incremental edits counted in UTF-16, pivots.toml read and reloaded on save;
//! - `session`: state kept across restarts, malformed input, commands sent back to back;
//! - `memorycode`: model outputs checked and the evaluation, against the CLI's scorer;
//! - `fuzz`: ten thousand random and truncated messages;
//! - `tests_run`: a HumanEval task's tests run from the editor (diagnostics, code lens);
//! - `convcode`: a ConvCodeWorld results folder as a conversation of turns, and playing
//!   the model in it.

// Tests read and write their fixtures as they like (clippy.toml's rules are product code's).
#![allow(clippy::disallowed_methods)]

#[allow(dead_code)] // each test binary uses part of the support module
#[path = "../support/mod.rs"]
mod support;

mod convcode;
mod diagnostics;
mod fuzz;
mod memorycode;
mod session;
mod tests_run;

use support::lsp::fixture;

/// The bundled MemoryCode dialogue 1 (three sessions), as a path string.
fn dialogue_1() -> String {
    fixture("fixtures/memorycode/dataset/dialogue_1.json")
        .display()
        .to_string()
}

/// HumanEval/2 answered wrongly (by `tests_run` and `convcode`): 1.33 gives 0.0 (test_case_2 fails in its assert, so it sits
/// on the `def`), 123.456 raises on the `raise` line (test_case_3); 3.5 passes.
pub const TRUNCATE_WRONG: &str = "import math\n\n\ndef truncate_number(number: float) -> float:\n    # wrong on purpose: small numbers give 0, big ones raise\n    if number > 100:\n        raise ValueError(\"too big\")\n    if number < 2:\n        return 0.0\n    return number - math.floor(number)\n";
pub const TRUNCATE_RIGHT: &str = "import math\n\n\ndef truncate_number(number: float) -> float:\n    return number - math.floor(number)\n";
