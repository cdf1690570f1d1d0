//! Visible skips for tests that cannot run here (no `../shared`, no HumanEval, no Python).
//! `cargo test` hides a passing test's output, so a skipped check would read as `... ok`:
//! besides printing `SKIP:`, each skip is appended to the file named by `PIVOT_SKIP_LOG`
//! (set by `scripts/test`), which lists every skipped check and its reason at the end.

use std::io::Write;

/// Record that the current test is skipped and why. The check is named after the running
/// test's thread (cargo names it after the test's path).
pub fn skip(reason: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("(unnamed test)");
    // The test binary (`memorycode-<hash>`: the file under server/tests/) says where it is.
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|s| s.split('-').next().unwrap_or_default().to_string())
        .unwrap_or_default();
    let check = format!("{binary}::{test}");
    let check = check.as_str();
    eprintln!("SKIP: {check}: {reason}");
    if let Some(log) = std::env::var_os("PIVOT_SKIP_LOG") {
        record(std::path::Path::new(&log), check, reason);
    }
}

/// Append `check: reason` as one line to `log`. A test must not fail because the log cannot
/// be written: the SKIP line on stderr still shows.
fn record(log: &std::path::Path, check: &str, reason: &str) {
    let line = format!("{check}: {}\n", reason.replace('\n', " "));
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
    {
        let _ = f.write_all(line.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_skip_is_one_line_naming_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("skips");
        super::record(&log, "memorycode::parity", "no ../shared\nhere");
        super::record(&log, "exec::humaneval", "no HumanEval");
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            text,
            "memorycode::parity: no ../shared here\nexec::humaneval: no HumanEval\n"
        );
    }
}
