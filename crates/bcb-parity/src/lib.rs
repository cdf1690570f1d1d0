//! The real-BigCodeBench parity rig: BigCodeBench tasks' canonical solutions and wrong ones
//! made here from them (a wrong value, an exception, a missing module, `exit()` in the
//! function and at module level, `sys.exit` in the function, a hang in one test) run through
//! `exec`'s runner and through BigCodeBench's own evaluator (`exec::evaluator`), every
//! verdict and every failing-test name compared. Each disagreement is listed with its sample,
//! both sides' status and failing tests, and a likely cause read from the texts, for
//! `server/tests/bcb_parity.rs` and whoever fixes the harness.
//!
//! Test-only code, in a crate of its own that only tests take as a dev-dependency
//! (`server/tests/fast/layering.rs` checks), so the product crates ship none of it.

// Only tests link this crate; the listings it writes are scratch files of a test run.
#![allow(clippy::disallowed_methods)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use pivot_exec::evaluator::Verdict;
use pivot_exec::{EvalResult, Problem, Status};

/// What a sample is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The task's own solution.
    Canonical,
    /// The canonical function's result replaced (`None`, or `0` where it was `None`).
    WrongValue,
    /// The function raises `RuntimeError`.
    Exception,
    /// An import of a module that does not exist, before the code.
    ModuleError,
    /// The function calls `exit()` (which the evaluator's guard has set to `None`).
    Exit,
    /// `exit()` at module level, after the code.
    ExitModule,
    /// The function calls `sys.exit(0)`.
    SysExit,
    /// The function's first call loops forever (one test hangs until the alarm).
    Hang,
    /// A model's own solution, as the evaluator ran it (`../shared/bigcodebench-samples`).
    Model,
}

impl Kind {
    /// Every kind but `Hang`, which costs a whole time limit per sample.
    pub const QUICK: [Kind; 7] = [
        Kind::Canonical,
        Kind::WrongValue,
        Kind::Exception,
        Kind::ModuleError,
        Kind::Exit,
        Kind::ExitModule,
        Kind::SysExit,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Canonical => "canonical",
            Kind::WrongValue => "wrong_value",
            Kind::Exception => "exception",
            Kind::ModuleError => "module_error",
            Kind::Exit => "exit",
            Kind::ExitModule => "exit_module",
            Kind::SysExit => "sys_exit",
            Kind::Hang => "hang",
            Kind::Model => "model",
        }
    }
}

/// One solution to run on both sides.
#[derive(Clone, Debug)]
pub struct Sample {
    pub task_id: String,
    pub kind: Kind,
    pub solution: String,
}

/// The solution of `kind` for `p`: its canonical program, changed as the kind says.
pub fn solution(p: &Problem, kind: Kind) -> String {
    let canon = p.canonical_code();
    let f = &p.entry_point;
    let mut s = String::with_capacity(canon.len() + 300);
    if kind == Kind::ModuleError {
        s.push_str("import pivot_parity_no_such_module\n");
    }
    s.push_str(&canon);
    if !s.ends_with('\n') {
        s.push('\n');
    }
    let tail = match kind {
        Kind::Canonical | Kind::ModuleError | Kind::Model => String::new(),
        Kind::WrongValue => format!(
            "\n\n_pivot_parity_inner = {f}\n\n\ndef {f}(*args, **kwargs):\n    \
             result = _pivot_parity_inner(*args, **kwargs)\n    \
             return None if result is not None else 0\n"
        ),
        Kind::Exception => format!(
            "\n\ndef {f}(*args, **kwargs):\n    raise RuntimeError(\"pivot parity: a wrong solution\")\n"
        ),
        Kind::Exit => format!("\n\ndef {f}(*args, **kwargs):\n    exit()\n"),
        Kind::ExitModule => "\n\nexit()\n".to_string(),
        Kind::SysExit => {
            format!("\n\ndef {f}(*args, **kwargs):\n    __import__(\"sys\").exit(0)\n")
        }
        Kind::Hang => format!(
            "\n\n_pivot_parity_inner = {f}\n_pivot_parity_calls = [0]\n\n\n\
             def {f}(*args, **kwargs):\n    _pivot_parity_calls[0] += 1\n    \
             if _pivot_parity_calls[0] == 1:\n        while True:\n            pass\n    \
             return _pivot_parity_inner(*args, **kwargs)\n"
        ),
    };
    s.push_str(&tail);
    s
}

/// Every quick kind for each problem, and a hang for every `hang_every`-th one (0: none).
pub fn samples(problems: &[&Problem], hang_every: usize) -> Vec<Sample> {
    let mut out = Vec::with_capacity(problems.len() * (Kind::QUICK.len() + 1));
    for (i, p) in problems.iter().enumerate() {
        let mut kinds: Vec<Kind> = Kind::QUICK.to_vec();
        if hang_every > 0 && i % hang_every == 0 {
            kinds.push(Kind::Hang);
        }
        for k in kinds {
            out.push(Sample {
                task_id: p.task_id.clone(),
                kind: k,
                solution: solution(p, k),
            });
        }
    }
    out
}

/// `n` problems chosen by `seed` (Mersenne Twister), in their original order; all when `n`
/// is at least their number.
pub fn choose(problems: &[Problem], n: usize, seed: u64) -> Vec<&Problem> {
    if n >= problems.len() {
        return problems.iter().collect();
    }
    let mut idx: Vec<usize> = (0..problems.len()).collect();
    let mut rng = rand_mt::Mt64::new(seed);
    for i in (1..idx.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        idx.swap(i, j);
    }
    let mut chosen: Vec<usize> = idx.into_iter().take(n).collect();
    chosen.sort_unstable();
    chosen.into_iter().map(|i| &problems[i]).collect()
}

/// One side's verdict on a sample.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Side {
    pub status: String,
    /// Failing tests (`ALL` for an error outside them); empty unless `fail`.
    pub failing: Vec<String>,
}

/// A sample on which the two sides differ.
#[derive(Clone, Debug, Serialize)]
pub struct Disagreement {
    pub task_id: String,
    pub kind: Kind,
    pub ours: Side,
    pub evaluator: Side,
    /// A likely cause, from the texts (see [`cause`]).
    pub cause: &'static str,
    /// The first lines of each side's first differing detail, for the reader.
    pub ours_detail: String,
    pub evaluator_detail: String,
    /// The evaluator's verdicts on the same sample in further runs (see
    /// [`Comparison::settle_with_rerun`]), in the order they came.
    pub evaluator_reruns: Vec<Side>,
    /// Our verdicts in the same further runs, run at the same time as the evaluator's copies
    /// (see [`Comparison::settle_side_by_side`]); empty when ours was not run again.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub our_reruns: Vec<Side>,
}

/// Both sides over all samples.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Comparison {
    pub samples: usize,
    pub agree: usize,
    /// Per kind: [agree, disagree].
    pub by_kind: BTreeMap<&'static str, [usize; 2]>,
    pub by_cause: BTreeMap<&'static str, usize>,
    pub disagreements: Vec<Disagreement>,
    /// Samples whose verdict the evaluator itself does not settle: near the time limit its
    /// answer depends on how long its own cold imports took in that run (its kill comes one
    /// second after the process starts, its alarm after the imports), and a re-run of the
    /// evaluator gave our verdict. Listed, not counted as disagreements.
    pub evaluator_varies: Vec<Disagreement>,
}

/// Whether a disagreement may be the evaluator's own timing: one side timed out.
pub fn timing_dependent(d: &Disagreement) -> bool {
    d.ours.status == "timeout" || d.evaluator.status == "timeout"
}

impl Comparison {
    /// Records `rerun` (a further evaluator verdict on the same sample) on the disagreement on
    /// `task_id`/`kind`, and moves it to [`Comparison::evaluator_varies`] when the rerun equals
    /// our side: the evaluator gives our verdict too. Returns whether it moved (or had).
    pub fn settle_with_rerun(&mut self, task_id: &str, kind: Kind, rerun: &Verdict) -> bool {
        self.settle(task_id, kind, None, rerun)
    }

    /// Records a further run of both sides made side by side, under the same load (`ours`
    /// and `rerun` running at the same time): the disagreement is settled when they agree
    /// with each other. Near the limit both verdicts hang on how long the start of the
    /// task's process takes on the machine at that moment (the evaluator's cold imports
    /// against its one-second gap between alarm and kill, which ours reproduces from the
    /// load), so the main runs, made one after the other, can meet different loads.
    pub fn settle_side_by_side(
        &mut self,
        task_id: &str,
        kind: Kind,
        ours: &EvalResult,
        rerun: &Verdict,
    ) -> bool {
        self.settle(task_id, kind, Some(ours), rerun)
    }

    fn settle(
        &mut self,
        task_id: &str,
        kind: Kind,
        ours_again: Option<&EvalResult>,
        rerun: &Verdict,
    ) -> bool {
        let side = their_side(rerun);
        let ours_again = ours_again.map(our_side);
        if let Some(d) = self
            .evaluator_varies
            .iter_mut()
            .find(|d| d.task_id == task_id && d.kind == kind)
        {
            d.evaluator_reruns.push(side);
            d.our_reruns.extend(ours_again);
            return true;
        }
        let Some(i) = self
            .disagreements
            .iter()
            .position(|d| d.task_id == task_id && d.kind == kind)
        else {
            return false;
        };
        let agrees = same(
            ours_again.as_ref().unwrap_or(&self.disagreements[i].ours),
            &side,
        );
        self.disagreements[i].evaluator_reruns.push(side);
        self.disagreements[i].our_reruns.extend(ours_again);
        if !agrees {
            return false;
        }
        let d = self.disagreements.remove(i);
        if let Some(n) = self.by_cause.get_mut(d.cause) {
            *n -= 1;
            if *n == 0 {
                self.by_cause.remove(d.cause);
            }
        }
        let counts = self.by_kind.entry(kind.name()).or_default();
        counts[1] -= 1;
        counts[0] += 1;
        self.agree += 1;
        self.evaluator_varies.push(d);
        true
    }
}

fn our_side(r: &EvalResult) -> Side {
    Side {
        status: r.status.to_string(),
        failing: if r.status == Status::Fail {
            r.details.0.iter().map(|(k, _)| k.clone()).collect()
        } else {
            Vec::new()
        },
    }
}

fn their_side(v: &Verdict) -> Side {
    Side {
        status: v.status.clone(),
        failing: if v.status == "fail" {
            v.details.keys().cloned().collect()
        } else {
            Vec::new()
        },
    }
}

/// Same verdict: same status and, when failing, the same set of failing tests.
fn same(a: &Side, b: &Side) -> bool {
    a.status == b.status
        && a.failing.iter().collect::<BTreeSet<_>>() == b.failing.iter().collect::<BTreeSet<_>>()
}

/// A likely cause of a disagreement, from what each side wrote (first match wins).
pub fn cause(p: &Problem, ours: &EvalResult, theirs: &Verdict) -> &'static str {
    let our_text: String = ours.details.0.iter().map(|(_, v)| v.as_str()).collect();
    let their_text: String = theirs.details.values().map(String::as_str).collect();
    let (os, ts) = (ours.status.to_string(), theirs.status.as_str());
    if our_text.contains("does not come from the test source") {
        "decorated test refused (not from the test source)"
    } else if our_text.contains("never reported success") {
        "test never reported success (nested or other-class test counted)"
    } else if our_text.contains("has no attribute 'mock'") {
        "unittest.mock lost when unittest is restored"
    } else if os == "timeout" || ts == "timeout" {
        "timeout on one side only (near the limit)"
    } else if (our_text.contains("/tmp") || our_text.contains("TMP"))
        && (our_text.contains("Permission denied") || our_text.contains("Read-only"))
    {
        "/tmp not writable"
    } else if our_text.contains("Permission denied") && !their_text.contains("Permission denied") {
        "permission denied here only"
    } else if our_text.contains("pivot-") || their_text.contains("/tmp/tmp") {
        "temporary directory path"
    } else if p.test.contains("subTest") && os == "fail" && ts == "fail" {
        "subTest failures counted differently"
    } else if os == ts {
        "different failing tests"
    } else {
        "different status"
    }
}

fn excerpt(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    // The end of a traceback says what happened; keep its last lines.
    let start = lines.len().saturating_sub(6);
    let mut s = lines[start..].join("\n");
    if s.len() > 1200 {
        let mut cut = s.len() - 1200;
        while !s.is_char_boundary(cut) {
            cut += 1;
        }
        s = format!("…{}", &s[cut..]);
    }
    s
}

/// The first detail (in test-name order) on which the sides differ, for the listing.
fn first_difference(ours: &EvalResult, theirs: &Verdict) -> (String, String) {
    let our: BTreeMap<&str, &str> = ours
        .details
        .0
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let keys: BTreeSet<&str> = our
        .keys()
        .copied()
        .chain(theirs.details.keys().map(String::as_str))
        .collect();
    for k in keys {
        let (a, b) = (
            our.get(k).copied(),
            theirs.details.get(k).map(String::as_str),
        );
        if a.is_some() != b.is_some() || ours.status.to_string() != theirs.status {
            return (
                a.map(|t| format!("{k}: {}", excerpt(t)))
                    .unwrap_or_default(),
                b.map(|t| format!("{k}: {}", excerpt(t)))
                    .unwrap_or_default(),
            );
        }
    }
    (String::new(), String::new())
}

/// Compares both sides' verdicts, sample by sample (all three lists in the same order).
pub fn compare(
    problems: &HashMap<&str, &Problem>,
    samples: &[Sample],
    ours: &[EvalResult],
    theirs: &[Verdict],
) -> Comparison {
    let mut c = Comparison {
        samples: samples.len(),
        ..Comparison::default()
    };
    for ((s, o), t) in samples.iter().zip(ours).zip(theirs) {
        let (a, b) = (our_side(o), their_side(t));
        let counts = c.by_kind.entry(s.kind.name()).or_default();
        if same(&a, &b) {
            counts[0] += 1;
            c.agree += 1;
            continue;
        }
        counts[1] += 1;
        let why = problems
            .get(s.task_id.as_str())
            .map(|p| cause(p, o, t))
            .unwrap_or("different status");
        *c.by_cause.entry(why).or_default() += 1;
        let (od, td) = first_difference(o, t);
        c.disagreements.push(Disagreement {
            task_id: s.task_id.clone(),
            kind: s.kind,
            ours: a,
            evaluator: b,
            cause: why,
            ours_detail: od,
            evaluator_detail: td,
            evaluator_reruns: Vec::new(),
            our_reruns: Vec::new(),
        });
    }
    c
}

/// Writes `disagreements.json` (one object per disagreeing sample), `summary.json` (counts by
/// kind and cause, with `meta`) and `disagreements.tsv` into `dir`, each atomically.
pub fn write_listing(dir: &Path, c: &Comparison, meta: serde_json::Value) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let summary = serde_json::json!({
        "meta": meta,
        "samples": c.samples,
        "agree": c.agree,
        "disagree": c.disagreements.len(),
        "by_kind": c.by_kind.iter().map(|(k, [a, d])| (k.to_string(), serde_json::json!({"agree": a, "disagree": d}))).collect::<serde_json::Map<_, _>>(),
        "by_cause": c.by_cause,
        "evaluator_varies": c.evaluator_varies.iter().map(|d| serde_json::json!({
            "task_id": d.task_id, "kind": d.kind.name(), "ours": d.ours, "evaluator_first_run": d.evaluator,
            "evaluator_reruns": d.evaluator_reruns,
        })).collect::<Vec<_>>(),
    });
    write_atomic(
        &dir.join("summary.json"),
        &(serde_json::to_string_pretty(&summary)? + "\n"),
    )?;
    write_atomic(
        &dir.join("disagreements.json"),
        &(serde_json::to_string_pretty(&c.disagreements)? + "\n"),
    )?;
    let mut tsv = String::from(
        "task_id\tkind\tcause\tours_status\tours_failing\tevaluator_status\tevaluator_failing\tevaluator_reruns\n",
    );
    for d in &c.disagreements {
        let reruns: Vec<&str> = d
            .evaluator_reruns
            .iter()
            .map(|s| s.status.as_str())
            .collect();
        tsv.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
            d.task_id,
            d.kind.name(),
            d.cause,
            d.ours.status,
            d.ours.failing.join(","),
            d.evaluator.status,
            d.evaluator.failing.join(","),
            reruns.join(",")
        ));
    }
    write_atomic(&dir.join("disagreements.tsv"), &tsv)
}

fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut f = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("creating a file in {}", dir.display()))?;
    std::io::Write::write_all(&mut f, text.as_bytes())?;
    f.persist(path)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem() -> Problem {
        Problem {
            task_id: "BigCodeBench/0".into(),
            instruct_prompt: String::new(),
            code_prompt: "def task_func(x):\n".into(),
            canonical_solution: "    return x + 1".into(),
            test: "import unittest\nclass TestCases(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(task_func(1), 2)\n".into(),
            entry_point: "task_func".into(),
            complete_prompt: String::new(),
        }
    }

    #[test]
    fn every_kind_keeps_the_canonical_code_and_the_entry_point() {
        let p = problem();
        for k in Kind::QUICK.iter().chain([Kind::Hang].iter()) {
            let s = solution(&p, *k);
            assert!(
                s.contains("def task_func(x):\n    return x + 1\n"),
                "{k:?}: {s}"
            );
            let defs = s.matches("def task_func(").count();
            let expected = match k {
                Kind::Canonical | Kind::ModuleError | Kind::ExitModule => 1,
                _ => 2,
            };
            assert_eq!(defs, expected, "{k:?}: {s}");
        }
        assert!(solution(&p, Kind::ModuleError).starts_with("import pivot_parity_no_such_module\n"));
        assert!(solution(&p, Kind::ExitModule).ends_with("\nexit()\n"));
    }

    fn verdict(status: &str, failing: &[&str]) -> Verdict {
        Verdict {
            status: status.into(),
            details: failing
                .iter()
                .map(|t| (t.to_string(), "Traceback".to_string()))
                .collect(),
        }
    }

    #[test]
    fn a_rerun_settles_only_when_the_evaluator_gives_our_verdict_and_every_rerun_is_kept() {
        let p = problem();
        let problems: HashMap<&str, &Problem> = [(p.task_id.as_str(), &p)].into();
        let samples = vec![Sample {
            task_id: p.task_id.clone(),
            kind: Kind::WrongValue,
            solution: solution(&p, Kind::WrongValue),
        }];
        let ours = vec![EvalResult {
            task_id: p.task_id.clone(),
            solution: String::new(),
            status: Status::Timeout,
            details: Default::default(),
            tamper: Vec::new(),
            tamper_check: None,
            output: String::new(),
        }];
        let mut c = compare(&problems, &samples, &ours, &[verdict("fail", &["test_a"])]);
        assert_eq!(c.disagreements.len(), 1);
        assert!(!c.settle_with_rerun(&p.task_id, Kind::WrongValue, &verdict("fail", &["test_a"])));
        assert!(!c.settle_with_rerun(&p.task_id, Kind::Canonical, &verdict("timeout", &[])));
        assert_eq!((c.agree, c.disagreements.len()), (0, 1));
        assert!(c.settle_with_rerun(&p.task_id, Kind::WrongValue, &verdict("timeout", &[])));
        assert!(c.settle_with_rerun(&p.task_id, Kind::WrongValue, &verdict("fail", &["test_a"])));
        assert_eq!((c.agree, c.disagreements.len()), (1, 0));
        let d = &c.evaluator_varies[0];
        let statuses: Vec<&str> = d
            .evaluator_reruns
            .iter()
            .map(|s| s.status.as_str())
            .collect();
        assert_eq!(statuses, ["fail", "timeout", "fail"]);
        assert_eq!(c.by_kind["wrong_value"], [1, 0]);
    }

    #[test]
    fn choose_is_seeded_and_keeps_order() {
        let ps: Vec<Problem> = (0..50)
            .map(|i| Problem {
                task_id: format!("BigCodeBench/{i}"),
                ..problem()
            })
            .collect();
        let a: Vec<&str> = choose(&ps, 10, 7)
            .iter()
            .map(|p| p.task_id.as_str())
            .collect();
        let b: Vec<&str> = choose(&ps, 10, 7)
            .iter()
            .map(|p| p.task_id.as_str())
            .collect();
        let c: Vec<&str> = choose(&ps, 10, 8)
            .iter()
            .map(|p| p.task_id.as_str())
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 10);
        let nums: Vec<usize> = a
            .iter()
            .map(|t| t.rsplit('/').next().unwrap().parse().unwrap())
            .collect();
        assert!(nums.windows(2).all(|w| w[0] < w[1]), "{nums:?}");
        assert_eq!(choose(&ps, 99, 1).len(), 50);
    }
}
