//! BigCodeBench's evaluator beside the runner on the same samples, in the same environment:
//! both verdicts of every sample, compared, with the listing under a folder of target/.
//! Shared by `bcb_parity.rs` (canonical and derived solutions) and `bigcodebench_samples.rs`
//! (real models' solutions). The evaluator's verdicts are kept per (task, kind, environment)
//! in the folder, so a rerun resumes; samples where one side timed out are run again side by
//! side before they count.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pivot_bcb_parity::{self as bcb_parity, Comparison, Kind, Sample};
use pivot_exec::evaluator::{self, EvaluatorConfig, Isolation, Verdict};
use pivot_exec::{EvalResult, Problem, Runner, RunnerConfig};

use super::cli::target_dir;

/// The pinned environment's interpreter: `PIVOT_BCB_ENV_PYTHON`, or target/bcb-env built by
/// `pivot-lsp env bigcodebench` (built here when missing). None, a skip listed by test_skip,
/// when it cannot be built.
pub fn env_python() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("PIVOT_BCB_ENV_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let dir = target_dir().join("bcb-env");
    let python = dir.join("bin/python");
    if dir.join("pivot-env.json").is_file() && python.exists() {
        return Some(python);
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pivot-lsp"))
        .args(["env", "bigcodebench"])
        .arg(&dir)
        .output()
        .expect("pivot-lsp runs");
    if !out.status.success() {
        pivot_test_support::test_skip::skip(&format!(
            "the pinned BigCodeBench environment could not be built in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
        return None;
    }
    Some(python)
}

/// The real even half and the evaluator's fork in `../shared`, or None (a listed skip).
pub fn shared_inputs() -> Option<(PathBuf, PathBuf)> {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared");
    let data = shared.join("bigcodebench/BigCodeBench-even.jsonl.gz");
    let fork = shared.join("originals/bigcodebench-fork");
    if !data.is_file() || !fork.join("bigcodebench/eval/__init__.py").is_file() {
        pivot_test_support::test_skip::skip(
            "no ../shared/bigcodebench/BigCodeBench-even.jsonl.gz or BigCodeBench fork in ../shared/originals",
        );
        return None;
    }
    Some((data, fork))
}

/// One side-by-side run.
pub struct Rig<'a> {
    pub python: PathBuf,
    pub fork: PathBuf,
    pub timeout: Duration,
    /// Where the listing and the evaluator's kept verdicts go.
    pub dir: PathBuf,
    pub by_id: HashMap<&'a str, &'a Problem>,
    /// Printed first on every line of progress.
    pub label: &'a str,
    /// Merged into the listing's summary.json.
    pub meta: serde_json::Value,
}

/// What a side-by-side run found: the comparison (after the reruns) and our results, in the
/// samples' order.
pub struct Outcome {
    pub comparison: Comparison,
    pub ours: Vec<EvalResult>,
    /// The evaluator's first verdict on each sample.
    pub theirs: Vec<Verdict>,
    pub our_time: Duration,
    pub their_time: Duration,
}

impl Rig<'_> {
    /// Runs `samples` through the runner (two jobs, the bwrap sandbox) and through
    /// BigCodeBench's evaluator (two workers, as in its Docker image), compares them and
    /// writes the listing.
    pub fn run(&self, samples: &[Sample]) -> Outcome {
        let label = self.label;
        let python = &self.python;
        let timeout = self.timeout;
        let tasks: Vec<(&Problem, &str)> = samples
            .iter()
            .map(|s| (self.by_id[s.task_id.as_str()], s.solution.as_str()))
            .collect();
        std::fs::create_dir_all(&self.dir).unwrap();
        let start = Instant::now();
        let runner = Runner::new(RunnerConfig {
            python: python.clone(),
            timeout,
            jobs: 2,
            ..RunnerConfig::default()
        })
        .expect("runner starts (bwrap sandbox)");
        let ours = runner.run_batch(&tasks, |_, _| {});
        drop(runner);
        let our_time = start.elapsed();
        let ours_file: String = samples
            .iter()
            .zip(&ours)
            .map(|(s, r)| {
                serde_json::json!({"task_id": s.task_id, "kind": s.kind, "status": r.status.to_string(),
                    "details": r.details.0.iter().map(|(k, v)| (k.clone(), serde_json::Value::from(v.clone()))).collect::<serde_json::Map<_, _>>()})
                    .to_string()
                    + "\n"
            })
            .collect();
        std::fs::write(self.dir.join("exec.jsonl"), ours_file).unwrap();

        // The evaluator in chunks, each chunk's verdicts appended to evaluator.jsonl (keyed by
        // task, kind and the environment) and the listing rewritten after it: a rerun resumes.
        let cfg = EvaluatorConfig {
            python: python.clone(),
            fork: self.fork.clone(),
            workers: 2,
            timeout,
            isolation: Isolation::Docker,
        };
        let env_key = format!(
            "{}|{}|{}",
            python.display(),
            timeout.as_secs_f64(),
            evaluator::driver_fingerprint()
        );
        let store = self.dir.join("evaluator.jsonl");
        let mut known: HashMap<(String, String), Verdict> = HashMap::new();
        if let Ok(text) = std::fs::read_to_string(&store) {
            for line in text.lines() {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                    continue;
                };
                if v["env"] != env_key.as_str() {
                    continue;
                }
                if let Ok(verdict) = serde_json::from_value::<Verdict>(v["verdict"].clone()) {
                    let key = (
                        v["task_id"].as_str().unwrap_or("").to_string(),
                        v["kind"].as_str().unwrap_or("").to_string(),
                    );
                    known.insert(key, verdict);
                }
            }
        }
        let key = |s: &Sample| (s.task_id.clone(), s.kind.name().to_string());
        let todo: Vec<usize> = (0..samples.len())
            .filter(|&i| !known.contains_key(&key(&samples[i])))
            .collect();
        eprintln!(
            "{label}: {} evaluator verdicts from earlier runs, {} to run",
            samples.len() - todo.len(),
            todo.len()
        );
        let start = Instant::now();
        // Further evaluator verdicts on samples where one side timed out (see below).
        // (sample, the evaluator's verdict, ours run beside it)
        let reruns: std::cell::RefCell<Vec<(usize, Verdict, EvalResult)>> = Default::default();
        let write = |known: &HashMap<(String, String), Verdict>, their_time: f64| {
            let done: Vec<usize> = (0..samples.len())
                .filter(|&i| known.contains_key(&key(&samples[i])))
                .collect();
            let part: Vec<Sample> = done.iter().map(|&i| samples[i].clone()).collect();
            let our_part: Vec<_> = done.iter().map(|&i| ours[i].clone()).collect();
            let their_part: Vec<Verdict> = done
                .iter()
                .map(|&i| known[&key(&samples[i])].clone())
                .collect();
            let mut c = bcb_parity::compare(&self.by_id, &part, &our_part, &their_part);
            for (i, v, mine) in reruns.borrow().iter() {
                c.settle_side_by_side(&samples[*i].task_id, samples[*i].kind, mine, v);
            }
            let mut meta = serde_json::json!({
                "samples_planned": samples.len(),
                "samples_compared": part.len(),
                "timeout_s": timeout.as_secs_f64(),
                "workers": 2,
                "python": python,
                "exec_seconds_all_samples": our_time.as_secs_f64(),
                "evaluator_seconds_this_run": their_time,
                "evaluator_isolation": Isolation::Docker.to_string(),
            });
            if let (Some(m), Some(extra)) = (meta.as_object_mut(), self.meta.as_object()) {
                m.extend(extra.clone());
            }
            bcb_parity::write_listing(&self.dir, &c, meta).expect("listing written");
            c
        };
        for chunk in todo.chunks(64) {
            let part: Vec<(&Problem, &str)> = chunk.iter().map(|&i| tasks[i]).collect();
            let theirs =
                evaluator::run(&cfg, &part, &|_| {}).expect("BigCodeBench's evaluator runs");
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&store)
                .unwrap();
            for (&i, v) in chunk.iter().zip(theirs) {
                let (t, k) = key(&samples[i]);
                writeln!(
                    f,
                    "{}",
                    serde_json::json!({"env": env_key, "task_id": t, "kind": k, "verdict": v})
                )
                .unwrap();
                known.insert((t, k), v);
            }
            write(&known, start.elapsed().as_secs_f64());
        }
        let their_time = start.elapsed();
        let mut c = write(&known, their_time.as_secs_f64());
        // Near the time limit the evaluator's own verdict on a test still running at the limit
        // is a race: its alarm is armed after the task's process has started a Manager and
        // imported matplotlib.pyplot and the task's libraries (about a second here, 0.9-1.4 s
        // measured), its kill comes one second after the process started; ours reproduces
        // that from the imports' cost and the machine's load, which can differ between the two
        // main runs (made one after the other). Where one side timed out, both sides run the
        // sample again side by side (one evaluator copy per worker, ours at the same time), up
        // to three rounds; a round where the two agree settles it. Every rerun's verdict goes
        // into the listing. A model's own solution is run again on any disagreement: its code
        // may draw unseeded random numbers (BigCodeBench/76 of one model raises in about 3% of
        // runs, in whichever test draws the bad key), so that one run of each side differs
        // by chance; a disagreement that holds in every round is a real one.
        let mut retry: Vec<usize> = c
            .disagreements
            .iter()
            .filter(|d| bcb_parity::timing_dependent(d) || d.kind == Kind::Model)
            .filter_map(|d| {
                samples
                    .iter()
                    .position(|s| s.task_id == d.task_id && s.kind == d.kind)
            })
            .collect();
        for round in 1..=3 {
            if retry.is_empty() {
                break;
            }
            eprintln!(
                "{label}: the evaluator again on {} sample(s) where one side timed out or a model's code may draw at random, {} copies at once (round {round} of 3)",
                retry.len(),
                cfg.workers
            );
            // Worker k takes every workers-th sample from the k-th: copies side by side run
            // together.
            let copies: Vec<usize> = retry
                .iter()
                .flat_map(|&i| std::iter::repeat_n(i, cfg.workers))
                .collect();
            let part: Vec<(&Problem, &str)> = copies.iter().map(|&i| tasks[i]).collect();
            let ours_again: Vec<(&Problem, &str)> = retry.iter().map(|&i| tasks[i]).collect();
            let (theirs, ours_again) = std::thread::scope(|s| {
                let mine = s.spawn(|| {
                    let runner = Runner::new(RunnerConfig {
                        python: python.clone(),
                        timeout,
                        jobs: 1,
                        ..RunnerConfig::default()
                    })
                    .expect("runner starts (bwrap sandbox)");
                    runner.run_batch(&ours_again, |_, _| {})
                });
                let theirs =
                    evaluator::run(&cfg, &part, &|_| {}).expect("BigCodeBench's evaluator runs");
                (theirs, mine.join().expect("our rerun"))
            });
            for (k, (&i, v)) in copies.iter().zip(theirs).enumerate() {
                // Each evaluator copy beside our run of the same sample.
                let mine = &ours_again[k / cfg.workers];
                c.settle_side_by_side(&samples[i].task_id, samples[i].kind, mine, &v);
                reruns.borrow_mut().push((i, v, mine.clone()));
            }
            retry.retain(|&i| {
                c.disagreements
                    .iter()
                    .any(|d| d.task_id == samples[i].task_id && d.kind == samples[i].kind)
            });
        }
        if !reruns.borrow().is_empty() {
            c = write(&known, their_time.as_secs_f64());
        }
        for d in &c.evaluator_varies {
            eprintln!(
                "{label}: {} {}: the evaluator said {} first, then {} (ours: {})",
                d.task_id,
                d.kind.name(),
                d.evaluator.status,
                rerun_statuses(d),
                d.ours.status
            );
        }
        eprintln!(
            "{label}: {} of {} samples agree; exec {:.1} s, evaluator {:.1} s (this run); listing in {}",
            c.agree,
            c.samples,
            our_time.as_secs_f64(),
            their_time.as_secs_f64(),
            self.dir.display()
        );
        let theirs = samples.iter().map(|s| known[&key(s)].clone()).collect();
        Outcome {
            comparison: c,
            ours,
            theirs,
            our_time,
            their_time,
        }
    }
}

/// The evaluator's verdicts in its further runs of a sample, in order.
pub fn rerun_statuses(d: &bcb_parity::Disagreement) -> String {
    let statuses: Vec<&str> = d
        .evaluator_reruns
        .iter()
        .map(|s| s.status.as_str())
        .collect();
    statuses.join(", ")
}

/// Every disagreement on a line of its own, for the failure message (a CI log may be all a
/// reader has of the listing).
pub fn named_disagreements(c: &Comparison) -> String {
    c.disagreements
        .iter()
        .map(|d| {
            format!(
                "{} {}: ours {} {:?}, evaluator {} {:?}, reruns [{}]",
                d.task_id,
                d.kind.name(),
                d.ours.status,
                d.ours.failing,
                d.evaluator.status,
                d.evaluator.failing,
                rerun_statuses(d)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
