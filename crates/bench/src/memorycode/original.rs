//! The original MemoryCode evaluator (`evaluate_model_output.py` in MemoryCode's `code/`)
//! run as a peer, so that `bench memorycode` quotes a ratio measured in the same run
//! instead of a remembered figure.

use anyhow::{bail, Context, Result};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The evaluator's file inside MemoryCode's `code/` folder.
pub const EVALUATOR: &str = "evaluate_model_output.py";

/// One timed run of the original evaluator on `dataset` / `outputs` with `python`, and its
/// printed macro scores (the line after "Average scores:").
pub fn time_original(
    code_dir: &Path,
    dataset: &Path,
    outputs: &Path,
    python: &Path,
) -> Result<(Duration, String)> {
    if !code_dir.join(EVALUATOR).is_file() {
        bail!(
            "{} has no {EVALUATOR}: pass MemoryCode's code/ folder to --original",
            code_dir.display()
        );
    }
    // The evaluator runs in its own folder (it imports extract_objects from there), so the
    // data paths must not depend on our working directory.
    let abs = |p: &Path| {
        p.canonicalize()
            .with_context(|| format!("cannot find {}", p.display()))
    };
    let (dataset, outputs) = (abs(dataset)?, abs(outputs)?);
    let start = Instant::now();
    let out = Command::new(python)
        .arg(EVALUATOR)
        .arg("--dialogue_dir")
        .arg(&dataset)
        .arg("--model_output_dir")
        .arg(&outputs)
        .current_dir(code_dir)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", python.display()))?;
    let wall = start.elapsed();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        bail!(
            "the original evaluator failed ({}): {last} (it needs numpy and fire for {})",
            out.status,
            python.display()
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let scores = stdout
        .lines()
        .skip_while(|l| !l.starts_with("Average scores"))
        .nth(1)
        .unwrap_or("")
        .trim()
        .to_string();
    Ok((wall, scores))
}
