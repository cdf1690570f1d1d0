//! A person playing the model in a ConvCodeWorld conversation: feedback of any kind on the
//! code they are writing (compilation, execution with full or partial test coverage, simulated
//! novice or expert), and submitting that code as the next turn: its record (the original's
//! field names), its evaluation in the turn's eval-results file, and the metrics recomputed.

use super::config::{eval_path, Config, Coverage, Expertise, Layout};
use super::conversation::{put_eval, ConvRun};
use super::metrics::{self, ScoreRequest};
use super::records::{read_log, record_line, Appender};
use super::score_file::Scores;
use super::turn::{execution_feedback, verbal_feedback, Lm, Signals, TurnRecord};
use anyhow::{bail, Context, Result};
use pivot_exec::doc_tests::{map_result, DocRun};
use pivot_exec::feedback::{compilation, compilation_many, NO_SYNTAX_ERRORS};
use pivot_exec::{EvalResult, Problem, Runner};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The feedback a person can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FeedbackKind {
    Compilation,
    Execution,
    ExecutionPartial,
    Novice,
    Expert,
}

impl FeedbackKind {
    pub const NAMES: [&'static str; 5] = [
        "compilation",
        "execution",
        "execution-partial",
        "novice",
        "expert",
    ];

    pub fn parse(s: &str) -> Option<FeedbackKind> {
        Some(match s {
            "compilation" => FeedbackKind::Compilation,
            "execution" => FeedbackKind::Execution,
            "execution-partial" => FeedbackKind::ExecutionPartial,
            "novice" => FeedbackKind::Novice,
            "expert" => FeedbackKind::Expert,
            _ => return None,
        })
    }

    pub fn is_verbal(self) -> bool {
        matches!(self, FeedbackKind::Novice | FeedbackKind::Expert)
    }
}

/// What feedback needs besides the code.
pub struct PlayEnv<'a> {
    pub python: &'a Path,
    pub runner: &'a Runner,
    /// The feedback simulator (needed for novice and expert feedback).
    pub simulator: Option<&'a dyn Lm>,
    pub fix_quirks: bool,
}

/// Feedback on one piece of code.
#[derive(Clone, Debug, Serialize)]
pub struct Given {
    pub kind: FeedbackKind,
    /// `None`: the simulated novice stays silent (nothing failed that it can see).
    pub text: Option<String>,
    /// The simulator prompt that was used, for verbal kinds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simulator_call: Option<&'static str>,
}

/// Feedback of `kind` on `code`. Verbal feedback sees what the original's simulator would under
/// `config` (its execution coverage, or none); without a configuration, full coverage.
pub fn feedback(
    kind: FeedbackKind,
    problem: &Problem,
    code: &str,
    config: Option<Config>,
    env: &PlayEnv,
) -> Result<Given> {
    let run = |coverage| -> String {
        let eval = env.runner.run_one(problem, code);
        execution_feedback(problem, &eval, coverage, env.fix_quirks)
    };
    let text = match kind {
        FeedbackKind::Compilation => Some(compilation(env.python, code)?),
        FeedbackKind::Execution => Some(run(Coverage::Full)),
        FeedbackKind::ExecutionPartial => Some(run(Coverage::Partial)),
        FeedbackKind::Novice | FeedbackKind::Expert => {
            let expertise = if kind == FeedbackKind::Novice {
                Expertise::Novice
            } else {
                Expertise::Expert
            };
            let coverage = match config {
                Some(c) => c.execution,
                None => Some(Coverage::Full),
            };
            let fc = compilation(env.python, code)?;
            let fe = coverage.map(run);
            let signals = Signals {
                execution_on: coverage.is_some(),
                compilation: Some(&fc),
                execution: fe.as_deref(),
            };
            let call = super::turn::simulator_kind(expertise, &signals);
            let Some(sim) = env.simulator.filter(|_| call.is_some()) else {
                if call.is_none() {
                    return Ok(Given {
                        kind,
                        text: None,
                        simulator_call: None,
                    });
                }
                bail!(
                    "{} feedback needs a feedback simulator endpoint (settings: simulator base URL and model)",
                    FeedbackKind::NAMES[kind as usize]
                );
            };
            let text = verbal_feedback(sim, problem, code, expertise, &signals, env.fix_quirks)
                .context("the feedback simulator failed")?;
            return Ok(Given {
                kind,
                text,
                simulator_call: call.map(|k| k.name()),
            });
        }
    };
    Ok(Given {
        kind,
        text,
        simulator_call: None,
    })
}

/// Feedback shown since the last submission: what the next turn's record says was fed in.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Pending {
    pub compilation: Option<String>,
    pub execution: Option<String>,
    pub user: Option<String>,
}

impl Pending {
    /// Keeps the latest feedback of each of the record's three slots.
    pub fn record(&mut self, g: &Given) {
        let slot = match g.kind {
            FeedbackKind::Compilation => &mut self.compilation,
            FeedbackKind::Execution | FeedbackKind::ExecutionPartial => &mut self.execution,
            FeedbackKind::Novice | FeedbackKind::Expert => &mut self.user,
        };
        *slot = g.text.clone();
    }
}

/// What a submission did.
#[derive(Clone, Debug, Serialize)]
pub struct Submitted {
    pub turn: usize,
    pub record: TurnRecord,
    pub log: PathBuf,
    pub eval_file: PathBuf,
    pub tests: DocRun,
    pub scores: Scores,
}

/// Records `code` as the run's next turn, evaluates it into the turn's eval-results file and
/// rescores the model. The run is reloaded (the new turn is its last session).
pub fn submit(
    run: &mut ConvRun,
    problem: &Problem,
    code: &str,
    fed: &Pending,
    env: &PlayEnv,
) -> Result<Submitted> {
    if problem.task_id != run.task {
        bail!(
            "the problem is {} but the conversation is about {}",
            problem.task_id,
            run.task
        );
    }
    if run.config.instruction {
        // A person is given no instruction feedback here, so the turn would not be the
        // configuration's.
        bail!(
            "{} has instruction feedback, which a person's turn does not get; its logs open \
             read-only (play the configuration without `_IF`)",
            run.config.code()
        );
    }
    let Some(turn) = run.next_turn() else {
        bail!(
            "{} already has all {} turns recorded for {} ({}); open it with a \"player\" name to play it again",
            run.task,
            super::config::MAX_TURNS,
            run.model,
            run.config.code()
        );
    };
    let log = run.log_path(turn);
    if read_log(&log)?
        .records
        .iter()
        .any(|r| r.task_id == run.task)
    {
        bail!(
            "{} already holds a record of {}; nothing was written",
            log.display(),
            run.task
        );
    }
    let record = TurnRecord {
        task_id: run.task.clone(),
        solution: code.to_string(),
        compilation_feedback: fed.compilation.clone(),
        execution_feedback: fed.execution.clone(),
        user_feedback: fed.user.clone(),
        // `log` holds the code model's prompt and answer; a person has none.
        log: None,
        iteration: turn,
        instruction_feedback: None,
    };
    // Evaluate first: a runner failure must not leave a record without its evaluation.
    let result: EvalResult = env.runner.run_one(problem, code);
    let tests = map_result(problem, code, &result);
    Appender::open(&log)?.append(&record_line(&record))?;
    let eval_file = eval_path(&log);
    put_eval(&eval_file, result, &env.runner.sandbox().to_string())?;
    let scores = rescore(&run.layout, &run.model, env.python)?;
    run.reload()?;
    Ok(Submitted {
        turn,
        record,
        log,
        eval_file,
        tests,
        scores,
    })
}

/// Pass@1 / MRR / Recall of `model` in the folder of `layout` (live).
pub fn rescore(layout: &Layout, model: &str, python: &Path) -> Result<Scores> {
    let check = |codes: &[&str]| -> Result<Vec<bool>> {
        Ok(compilation_many(python, codes)?
            .into_iter()
            .map(|f| f == NO_SYNTAX_ERRORS)
            .collect())
    };
    metrics::score(
        &ScoreRequest {
            layout: layout.clone(),
            model: model.to_string(),
            reference: None,
        },
        Some(&check),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convcode::config::DEFAULT_SIMULATOR;
    use crate::convcode::conversation::OpenRequest;
    use crate::convcode::records::sample_line;
    use pivot_exec::{RunnerConfig, Status};
    use pivot_llm::LlmError;
    use std::sync::Mutex;

    fn problem() -> Problem {
        Problem {
            task_id: "T/1".into(),
            instruct_prompt: "Add two numbers.".into(),
            code_prompt: "def add(a, b):\n".into(),
            canonical_solution: "    return a + b\n".into(),
            test: "import unittest\n\nclass TestCases(unittest.TestCase):\n    def test_case_1(self):\n        assert add(1, 2) == 3\n\n    def test_case_2(self):\n        assert add(0, 0) == 0\n\n    def test_case_3(self):\n        assert add(2, 2) == 4\n\n    def test_case_4(self):\n        assert add(5, 5) == 10\n".into(),
            entry_point: "add".into(),
            complete_prompt: String::new(),
        }
    }

    fn runner() -> Option<Runner> {
        match Runner::new(RunnerConfig {
            jobs: 1,
            timeout: std::time::Duration::from_secs(20),
            ..Default::default()
        }) {
            Ok(r) => Some(r),
            Err(e) => {
                pivot_test_support::test_skip::skip(&format!("no Python runner here: {e:#}"));
                None
            }
        }
    }

    /// Answers every prompt with a fixed feedback answer and keeps the prompts.
    struct Sim(Mutex<Vec<String>>);
    impl Lm for Sim {
        fn complete(&self, prompt: &str) -> Result<String, LlmError> {
            self.0.lock().unwrap().push(prompt.to_string());
            Ok(
                " produce the user_feedback. We look.\n\nUser Feedback: Check the case 5 + 5."
                    .into(),
            )
        }
    }

    // Fails test_case_4 only: hidden under partial coverage.
    const WRONG: &str = "def add(a, b):\n    if a == 5:\n        return 0\n    return a + b\n";

    #[test]
    fn feedback_kinds_on_the_current_code() {
        let Some(runner) = runner() else { return };
        let sim = Sim(Mutex::new(Vec::new()));
        let env = PlayEnv {
            python: Path::new("python3"),
            runner: &runner,
            simulator: Some(&sim),
            fix_quirks: false,
        };
        let p = problem();
        let f = |k, cfg| feedback(k, &p, WRONG, cfg, &env).unwrap();
        assert_eq!(
            f(FeedbackKind::Compilation, None).text.unwrap(),
            NO_SYNTAX_ERRORS
        );
        let full = f(FeedbackKind::Execution, None).text.unwrap();
        assert!(full.starts_with("TEST_CASE_4\nTraceback"), "{full}");
        assert_eq!(
            f(FeedbackKind::ExecutionPartial, None).text.unwrap(),
            "Passed all test runs"
        );
        // The expert is always consulted; with full coverage it sees the failing test.
        let ex = f(FeedbackKind::Expert, None);
        assert_eq!(ex.text.as_deref(), Some("Check the case 5 + 5."));
        assert_eq!(ex.simulator_call, Some("execution_simulate_user_feedback"));
        assert!(sim.0.lock().unwrap()[0].contains("TEST_CASE_4"));
        // The novice under CF_SNF sees only compilation feedback: nothing failed, so silence.
        let n = f(FeedbackKind::Novice, Config::parse("CF_SNF"));
        assert!(n.text.is_none() && n.simulator_call.is_none());
        assert_eq!(sim.0.lock().unwrap().len(), 1);
        let no_sim = PlayEnv {
            simulator: None,
            ..env
        };
        let e = feedback(FeedbackKind::Expert, &p, WRONG, None, &no_sim).unwrap_err();
        assert!(e.to_string().contains("simulator endpoint"), "{e}");
    }

    #[test]
    fn submit_records_evaluates_and_rescores() {
        let Some(runner) = runner() else { return };
        let dir = tempfile::tempdir().unwrap();
        let l = Layout::new(dir.path(), DEFAULT_SIMULATOR);
        let t0 = l.turn0_samples("m");
        std::fs::create_dir_all(t0.parent().unwrap()).unwrap();
        std::fs::write(&t0, sample_line("T/1", WRONG) + "\n").unwrap();
        let p = problem();
        put_eval(&eval_path(&t0), runner.run_one(&p, WRONG), "").unwrap();
        let mut run = ConvRun::open(&OpenRequest {
            root: dir.path().into(),
            task: "T/1".into(),
            config: Config::parse("CF_EF_FULL"),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(run.next_turn(), Some(1));
        let env = PlayEnv {
            python: Path::new("python3"),
            runner: &runner,
            simulator: None,
            fix_quirks: false,
        };
        let mut fed = Pending::default();
        fed.record(&feedback(FeedbackKind::Execution, &p, WRONG, None, &env).unwrap());
        let right = "def add(a, b):\n    return a + b\n";
        let s = submit(&mut run, &p, right, &fed, &env).unwrap();
        assert_eq!(s.turn, 1);
        assert_eq!(s.tests.summary, "4/4 passed");
        let logged = read_log(&s.log).unwrap();
        assert_eq!(logged.records, vec![s.record.clone()]);
        assert!(s
            .record
            .execution_feedback
            .as_deref()
            .unwrap()
            .starts_with("TEST_CASE_4"));
        assert_eq!(s.record.compilation_feedback, None);
        let line = std::fs::read_to_string(&s.log).unwrap();
        assert!(
            line.starts_with("{\"task_id\": \"T/1\", \"solution\": "),
            "{line}"
        );
        let ev = crate::convcode::evaluate::load_eval(&s.eval_file).unwrap();
        assert_eq!(ev["T/1"].status, Status::Pass);
        // Only turn 1 of 10 exists: the configuration is incomplete, its column blank.
        let col = s
            .scores
            .columns
            .iter()
            .find(|c| c.config == "CF_EF_FULL")
            .unwrap();
        assert!(!col.complete && col.mrr.is_none());
        assert_eq!(run.turns.len(), 2);
        assert_eq!(run.next_turn(), Some(2));
        // A wrong task is refused before anything is written.
        let mut other = problem();
        other.task_id = "T/2".into();
        assert!(submit(&mut run, &other, right, &fed, &env).is_err());
        assert!(!run.log_path(2).exists());
    }
}
