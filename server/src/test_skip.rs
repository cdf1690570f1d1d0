//! Visible skips for tests that cannot run here (no `../shared`, no HumanEval, no Python).
//! `cargo test` hides a passing test's output, so a skipped check would read as `... ok`:
//! besides printing `SKIP:`, each skip is appended to the file named by `PIVOT_SKIP_LOG`
//! (set by `scripts/test`), which lists every skipped check and its reason at the end.

use std::io::Write;

/// Record that the current test is skipped and why. The check is named after the running
/// test's thread (cargo names it after the test's path).
pub fn skip(reason: &str) {
    let thread = std::thread::current();
    let check = thread.name().unwrap_or("(unnamed test)");
    eprintln!("SKIP: {check}: {reason}");
    let Some(log) = std::env::var_os("PIVOT_SKIP_LOG") else {
        return;
    };
    let crate_name = std::env::var("CARGO_CRATE_NAME").unwrap_or_default();
    let line = format!("{crate_name} {check}: {}\n", reason.replace('\n', " "));
    // A test must not fail because the log cannot be written: the SKIP line above still shows.
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
    {
        let _ = f.write_all(line.as_bytes());
    }
}
