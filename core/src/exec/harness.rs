//! The embedded Python harness (`harness/*.py`) and its one-shot modes.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

/// Source of the harness; run as `python -c SOURCE MODE ARGS...`. One Python namespace,
/// kept in files by subject, in this order (later parts use what earlier ones define).
pub(crate) const SOURCE: &str = concat!(
    include_str!("harness/base.py"),
    include_str!("harness/streams.py"),
    include_str!("harness/snapshot.py"),
    include_str!("harness/trust.py"),
    include_str!("harness/guard.py"),
    include_str!("harness/unittest_task.py"),
    include_str!("harness/evaluator_env.py"),
    include_str!("harness/values.py"),
    include_str!("harness/task_process.py"),
    include_str!("harness/task_run.py"),
    include_str!("harness/cleanup.py"),
    include_str!("harness/hardening.py"),
    include_str!("harness/zygote_guards.py"),
    include_str!("harness/zygote.py"),
);

/// One `python -c HARNESS compile` call: `None` when a program compiles, else the traceback.
pub(crate) fn compile_all(python: &Path, codes: &[&str]) -> Result<Vec<Option<String>>> {
    if codes.is_empty() {
        return Ok(Vec::new());
    }
    let input = serde_json::to_vec(codes)?;
    let stdout = run_mode(python, "compile", &input)?;
    let out: Vec<Option<String>> = serde_json::from_slice(&stdout)
        .context("the compile harness printed something that is not its JSON answer")?;
    if out.len() != codes.len() {
        bail!(
            "the compile harness answered {} of {} programs",
            out.len(),
            codes.len()
        );
    }
    Ok(out)
}

/// Runs the harness in `mode` with `input` on stdin and returns its stdout.
pub(crate) fn run_mode(python: &Path, mode: &str, input: &[u8]) -> Result<Vec<u8>> {
    let mut child = Command::new(python)
        .args(["-c", SOURCE, mode])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", python.display()))?;
    // Writing from another thread: the child may fill its stdout pipe before reading all input.
    let mut stdin = child.stdin.take().context("no stdin")?;
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child
        .wait_with_output()
        .with_context(|| format!("waiting for {}", python.display()))?;
    let _ = writer.join();
    if !out.status.success() {
        bail!(
            "{} -c <harness> {mode} failed ({}): {}",
            python.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out.stdout)
}
