//! Runs one turn over many tasks in parallel and appends the records to the turn's log in job
//! order (the original's visiting order, `order.rs`), so an uninterrupted run and an
//! interrupted-then-resumed run write the same file.

use super::config::Config;
use super::records::{record_line, Appender};
use super::turn::{run_turn, TurnEnv, TurnError, TurnInput, TurnRecord};
use anyhow::Result;
use pivot_base::pool::Flow;
use pivot_exec::feedback;
use pivot_exec::{EvalResult, Problem};
use pivot_llm::LlmError;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Receives progress from the loop (the core never prints).
pub trait Observer: Sync {
    /// A new stage (`"CF_SEF turn 3"`, `"evaluating ..."`) with its number of steps.
    fn stage(&self, _what: &str, _total: usize) {}
    /// One step of the current stage done.
    fn step(&self) {}
    /// Something the user should know (repairs, skipped tasks, notes).
    fn note(&self, _message: &str) {}
}

/// Observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}

/// Stops a run early (tests simulate an interruption with it).
#[derive(Debug, Default)]
pub struct Control {
    /// Stop once this many new records were written in the whole run.
    pub stop_after: Option<usize>,
    written: AtomicUsize,
}

impl Control {
    pub fn new(stop_after: Option<usize>) -> Self {
        Control {
            stop_after,
            written: AtomicUsize::new(0),
        }
    }

    pub fn written(&self) -> usize {
        self.written.load(Ordering::SeqCst)
    }

    fn limit_reached(&self) -> bool {
        self.stop_after.is_some_and(|n| self.written() >= n)
    }

    /// Count one record written elsewhere (turn-0 generation); true when the run must stop.
    pub(crate) fn count_written(&self) -> bool {
        self.written.fetch_add(1, Ordering::SeqCst);
        self.limit_reached()
    }
}

/// One task's inputs for the turn.
pub struct Job<'a> {
    pub problem: &'a Problem,
    pub previous_code: String,
    pub previous_eval: EvalResult,
    pub frozen_user_feedback: Option<Option<String>>,
}

/// What happened while writing a turn's log.
#[derive(Debug, Default)]
pub struct BatchOutcome {
    pub written: usize,
    /// Tasks that failed for a reason that does not stop the run (task id, message).
    pub failed: Vec<(String, String)>,
    /// Offline runs: prompts the cache did not have.
    pub not_cached: Vec<String>,
    /// The error that stopped the turn early, if any.
    pub fatal: Option<String>,
    /// Stopped by `Control::stop_after`.
    pub interrupted: bool,
    /// Records done but not written because an earlier task of the turn failed: the log
    /// holds an unbroken prefix of the turn's order, so the rerun that retries the failed
    /// task writes them after it, where an uninterrupted run has them (their answers are
    /// cached, so redoing them costs no request).
    pub held_back: usize,
}

pub struct TurnSpec<'a> {
    pub config: Config,
    pub turn: usize,
    pub fix_quirks: bool,
    pub workers: usize,
    pub env: &'a TurnEnv<'a>,
}

/// Run `jobs` and append their records to `log` in job order.
///
/// A record of a task that made no code-model call gets, as the original's `log` field, the
/// last exchange of an earlier task of this turn (the original runs one `run.py` process per
/// turn and logs `lm.inspect_history(n=1)`), or `""` when there was none yet; with
/// `fix_quirks` it stays `null`. `last_log` is that exchange when the turn resumes after
/// records already in the file (the `log` of its last record), so a resumed turn writes what
/// an uninterrupted one does.
pub fn run_jobs(
    spec: &TurnSpec,
    jobs: &[Job],
    log: &mut Appender,
    last_log: Option<String>,
    control: &Control,
    observer: &dyn Observer,
) -> Result<BatchOutcome> {
    let mut outcome = BatchOutcome::default();
    if jobs.is_empty() {
        return Ok(outcome);
    }
    // f_c of every previous code in one interpreter start (the in-turn rechecks are rare).
    let unsolved: Vec<usize> = (0..jobs.len())
        .filter(|&i| !jobs[i].previous_eval.passed())
        .collect();
    let codes: Vec<&str> = unsolved
        .iter()
        .map(|&i| jobs[i].previous_code.as_str())
        .collect();
    let mut compiled: Vec<Option<String>> = vec![None; jobs.len()];
    if !codes.is_empty() {
        let fcs = feedback::compilation_many(spec.env.python, &codes)
            .map_err(|e| anyhow::anyhow!("compilation feedback failed: {e:#}"))?;
        for (i, fc) in unsolved.iter().zip(fcs) {
            compiled[*i] = Some(fc);
        }
    }
    type Turn = Result<TurnRecord, TurnError>;
    // Write in job order, and only an unbroken prefix of it: after a stop or a failed task
    // nothing more is written (the rest is cheap to redo: the model's answers are cached), so
    // the file is always what an uninterrupted run has written so far.
    let mut pending: BTreeMap<usize, Turn> = BTreeMap::new();
    let mut next_write = 0usize;
    let mut last_log = last_log;
    pivot_base::pool::run(
        jobs.len(),
        spec.workers,
        |i| {
            let job = &jobs[i];
            let input = TurnInput {
                problem: job.problem,
                config: spec.config,
                turn: spec.turn,
                previous_code: &job.previous_code,
                previous_eval: &job.previous_eval,
                previous_compilation: compiled[i].clone(),
                frozen_user_feedback: job.frozen_user_feedback.clone(),
                fix_quirks: spec.fix_quirks,
            };
            run_turn(&input, spec.env)
        },
        |res: &Turn| res.as_ref().err().is_some_and(TurnError::is_fatal),
        |i, res| -> Result<Flow> {
            let mut flow = Flow::More;
            pending.insert(i, res);
            while let Some(res) = pending.remove(&next_write) {
                next_write += 1;
                if outcome.fatal.is_some() || outcome.interrupted {
                    continue;
                }
                let broken = !outcome.failed.is_empty() || !outcome.not_cached.is_empty();
                match res {
                    Ok(_) if broken => outcome.held_back += 1,
                    Ok(mut rec) => {
                        match &rec.log {
                            Some(l) => last_log = Some(l.clone()),
                            None if !spec.fix_quirks => {
                                rec.log = Some(last_log.clone().unwrap_or_default())
                            }
                            None => {}
                        }
                        log.append(&record_line(&rec))?;
                        outcome.written += 1;
                        control.written.fetch_add(1, Ordering::SeqCst);
                        observer.step();
                        if control.limit_reached() {
                            outcome.interrupted = true;
                            flow = Flow::Stop;
                        }
                    }
                    Err(e) if e.is_fatal() => {
                        outcome.fatal = Some(e.to_string());
                        flow = Flow::Stop;
                    }
                    Err(TurnError::Lm {
                        task,
                        source: source @ LlmError::NotCached { .. },
                    }) => {
                        outcome.not_cached.push(format!("{task}: {source}"));
                    }
                    Err(e) => {
                        let task = match &e {
                            TurnError::Lm { task, .. } | TurnError::Other { task, .. } => {
                                task.clone()
                            }
                        };
                        outcome.failed.push((task, e.to_string()));
                    }
                }
            }
            Ok(flow)
        },
    )?;
    Ok(outcome)
}
