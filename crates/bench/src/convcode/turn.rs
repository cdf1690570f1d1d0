//! One task, one turn (spec §1.5): the decision table that picks compilation, execution and
//! verbal feedback, the LM calls, and the record the turn leaves. Usable on its own (the editor
//! calls it for a person playing the model).
//!
//! Instruction feedback (`_IF`, not the original's) is a step after the table: the turn of the
//! configuration without it runs first, making the same requests; then the turn's code, as it
//! would be logged, is checked against the pivots in force ([`Instructions`]), and when it
//! breaks any, one `refine_from_instruction_feedback` call given the findings gives the turn's
//! code. A task that passes its tests is carried without a call only when it breaks no pivot.

use super::config::{Config, Coverage, Expertise};
use pivot_exec::feedback::{self, NO_SYNTAX_ERRORS, PASSED_ALL_TEST_RUNS};
use pivot_exec::{EvalResult, Problem, Runner};
use pivot_llm::client::DEFAULT_MAX_TOKENS;
use pivot_llm::dspy::{Call, GenerateError, Generated};
use pivot_llm::prompts::{self, Inputs, Kind};
use pivot_llm::{Client, EndpointKind, LlmError};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Regenerations from compilation feedback allowed in one turn.
pub const MAX_REGENERATIONS: usize = 3;

/// A language model as the loop sees it.
pub trait Lm: Sync {
    fn complete(&self, prompt: &str) -> Result<String, LlmError>;
    /// [`Lm::complete`] with a `max_tokens` for this call (`None`: the configured one); DSPy's
    /// continuations ask with half of it. A model without a length bound may ignore it.
    fn complete_with(&self, prompt: &str, max_tokens: Option<u32>) -> Result<String, LlmError> {
        let _ = max_tokens;
        self.complete(prompt)
    }
    /// The configured `max_tokens` (the original's 2048).
    fn max_tokens(&self) -> u32 {
        DEFAULT_MAX_TOKENS
    }
    /// Shapes the `log` text like DSPy's `inspect_history` for this endpoint kind.
    fn endpoint_kind(&self) -> EndpointKind {
        EndpointKind::Chat
    }
}

impl Lm for Client {
    fn complete(&self, prompt: &str) -> Result<String, LlmError> {
        Client::complete(self, prompt).map(|c| c.text)
    }
    fn complete_with(&self, prompt: &str, max_tokens: Option<u32>) -> Result<String, LlmError> {
        Client::complete_with(self, prompt, max_tokens).map(|c| c.text)
    }
    fn max_tokens(&self) -> u32 {
        self.config().max_tokens
    }
    fn endpoint_kind(&self) -> EndpointKind {
        self.kind()
    }
}

/// The pivots in force for a problem's code: what an `_IF` turn's refiner is told.
pub trait Instructions: Sync {
    /// The findings of `code` (the whole program, as it is logged and evaluated), as the text
    /// the refiner reads; `Ok(None)` when it breaks no pivot; `Err` when it cannot be checked.
    fn feedback(&self, problem: &Problem, code: &str) -> Result<Option<String>, String>;
}

/// The per-task, per-turn record (the original's field names and order; `_IF` turns add
/// `instruction_feedback` last).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnRecord {
    pub task_id: String,
    pub solution: String,
    pub compilation_feedback: Option<String>,
    pub execution_feedback: Option<String>,
    pub user_feedback: Option<String>,
    /// The last code-model exchange of this task's turn; `None` when it made no call (the
    /// loop then writes what the original's process had last, see `executor::run_jobs`).
    pub log: Option<String>,
    pub iteration: usize,
    /// `_IF` turns: the findings the refiner was given; `None` when the code broke no pivot
    /// (the field is then not written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction_feedback: Option<String>,
}

/// Everything one turn of one task depends on.
pub struct TurnInput<'a> {
    pub problem: &'a Problem,
    pub config: Config,
    /// Turn number t >= 1.
    pub turn: usize,
    /// Code c of turn t-1, as logged.
    pub previous_code: &'a str,
    /// Evaluation e of c.
    pub previous_eval: &'a EvalResult,
    /// f_c(c) when already computed in a batch.
    pub previous_compilation: Option<String>,
    /// ConvCodeBench: the reference run's verbal feedback for this turn (no simulator call).
    pub frozen_user_feedback: Option<Option<String>>,
    pub fix_quirks: bool,
}

/// The models and tools a turn uses.
pub struct TurnEnv<'a> {
    pub coder: &'a dyn Lm,
    pub simulator: Option<&'a dyn Lm>,
    pub python: &'a Path,
    /// Needed with `fix_quirks` (fresh execution feedback after an in-turn fix).
    pub runner: Option<&'a Runner>,
    /// Needed by `_IF` configurations.
    pub instructions: Option<&'a dyn Instructions>,
}

/// Why a turn could not be completed.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error("{task}: {source}")]
    Lm {
        task: String,
        #[source]
        source: LlmError,
    },
    #[error("{task}: {message}")]
    Other { task: String, message: String },
}

impl TurnError {
    /// An error that will recur for every task (endpoint down, key rejected, ...).
    pub fn is_fatal(&self) -> bool {
        match self {
            TurnError::Lm { source, .. } => source.is_fatal(),
            TurnError::Other { .. } => true,
        }
    }
}

/// DSPy's `inspect_history(n=1)` text of one call.
pub fn log_text(kind: EndpointKind, prompt: &str, completion: &str) -> String {
    let text = match kind {
        EndpointKind::Chat => format!(" {}", completion.trim()),
        EndpointKind::Completions => completion.to_string(),
    };
    format!("\n\n\n{prompt}\x1b[32m{text}\x1b[0m\n\n\n")
}

/// The import header the original prepends to every turn's code.
pub fn header(problem: &Problem) -> &str {
    let marker = format!("def {}", problem.entry_point);
    match problem.code_prompt.find(&marker) {
        Some(i) => &problem.code_prompt[..i],
        None => &problem.code_prompt,
    }
}

fn with_header(problem: &Problem, code: &str, fix_quirks: bool) -> String {
    let h = header(problem);
    if fix_quirks && code.starts_with(h) {
        code.to_string()
    } else {
        format!("{h}{code}")
    }
}

/// Fenced as the simulator sees code.
fn fence(code: &str) -> String {
    format!("```\n{code}\n```")
}

fn failing(fe: Option<&str>) -> bool {
    fe.is_some_and(|f| f != PASSED_ALL_TEST_RUNS)
}

/// Execution feedback f_e of an evaluation under the given coverage (spec §1.2). With
/// `fix_quirks`, partial coverage shows the first three *test* methods and never reports a
/// module-level crash (`ALL`) as a pass.
pub fn execution_feedback(
    problem: &Problem,
    eval: &EvalResult,
    coverage: Coverage,
    fix_quirks: bool,
) -> String {
    match coverage {
        Coverage::Full => feedback::execution(eval, problem, false),
        Coverage::Partial if !fix_quirks => feedback::execution(eval, problem, true),
        Coverage::Partial => {
            if eval.passed() {
                return PASSED_ALL_TEST_RUNS.to_string();
            }
            let visible: Vec<String> = feedback::visible_tests(&problem.test)
                .into_iter()
                .filter(|n| n.starts_with("test"))
                .take(feedback::NUM_UNIT_TESTS)
                .collect();
            let mut shown = eval.clone();
            shown
                .details
                .0
                .retain(|(n, _)| n == "ALL" || visible.contains(n));
            if shown.details.is_empty() {
                return PASSED_ALL_TEST_RUNS.to_string();
            }
            feedback::execution(&shown, problem, false)
        }
    }
}

/// The non-verbal feedback a simulated user reacts to.
#[derive(Clone, Copy, Debug)]
pub struct Signals<'a> {
    /// Execution feedback is part of the configuration.
    pub execution_on: bool,
    pub compilation: Option<&'a str>,
    pub execution: Option<&'a str>,
}

/// Which simulator call the original makes (spec §1.3), or `None` when it stays silent.
pub fn simulator_kind(expertise: Expertise, s: &Signals) -> Option<Kind> {
    let ef_failing = failing(s.execution);
    match expertise {
        Expertise::Expert if ef_failing => Some(Kind::ExecutionSimulateUserFeedback),
        Expertise::Expert => Some(Kind::SimulateUserFeedback),
        Expertise::Novice if s.execution_on => {
            if ef_failing {
                Some(Kind::ExecutionSimulateNoviceFeedback)
            } else if s.execution == Some(PASSED_ALL_TEST_RUNS) {
                None
            } else {
                Some(Kind::SimulateNoviceFeedback)
            }
        }
        Expertise::Novice => s
            .compilation
            .filter(|c| *c != NO_SYNTAX_ERRORS)
            .map(|_| Kind::SimulateNoviceFeedback),
    }
}

/// Simulated verbal feedback on `code` (one simulator call, post-processed as the original
/// does). `Ok(None)`: the simulated user has nothing to say. The editor calls this for a
/// person playing the model.
pub fn verbal_feedback(
    simulator: &dyn Lm,
    problem: &Problem,
    code: &str,
    expertise: Expertise,
    signals: &Signals,
    fix_quirks: bool,
) -> Result<Option<String>, LlmError> {
    let Some(kind) = simulator_kind(expertise, signals) else {
        return Ok(None);
    };
    let fenced = fence(code);
    let gt = fence(&problem.canonical_code());
    let inputs = Inputs {
        input: Some(&problem.instruct_prompt),
        previous_code: Some(&fenced),
        compilation_feedback: signals.compilation,
        execution_feedback: signals.execution,
        user_feedback: None,
        ground_truth_code: Some(&gt),
        instruction_feedback: None,
    };
    let generated = ask(simulator, kind, &inputs, fix_quirks).map_err(|e| match e {
        GenerateError::Lm { source, .. } => source,
        GenerateError::Incomplete { calls } => LlmError::MissingField {
            field: "User Feedback:".into(),
            calls: calls.len(),
        },
    })?;
    let raw = prompts::output(kind, &generated).unwrap_or_default();
    Ok(Some(prompts::clean_user_feedback(
        &raw,
        expertise == Expertise::Expert,
    )))
}

/// One DSPy `ChainOfThought` call of `kind` on `lm`, continuations included (dspy.rs).
fn ask(
    lm: &dyn Lm,
    kind: Kind,
    inputs: &Inputs,
    fix_quirks: bool,
) -> Result<Generated, GenerateError> {
    prompts::generate(kind, inputs, fix_quirks, lm.max_tokens(), &mut |p, mt| {
        lm.complete_with(p, mt)
    })
}

struct Turn<'a, 'b> {
    input: &'a TurnInput<'b>,
    env: &'a TurnEnv<'b>,
    log: Option<String>,
}

/// What a refiner call gave.
enum Refined {
    Code(String),
    /// Three answers without `Code:` (DSPy's `AssertionError`); each call site of the
    /// original reacts differently.
    Incomplete,
}

struct Feedback {
    compilation: Option<String>,
    execution: Option<String>,
    user: Option<String>,
    instruction: Option<String>,
}

impl<'a, 'b> Turn<'a, 'b> {
    fn task(&self) -> String {
        self.input.problem.task_id.clone()
    }

    fn lm_err(&self, source: LlmError) -> TurnError {
        TurnError::Lm {
            task: self.task(),
            source,
        }
    }

    fn other(&self, message: impl Into<String>) -> TurnError {
        TurnError::Other {
            task: self.task(),
            message: message.into(),
        }
    }

    fn compile(&self, code: &str) -> Result<String, TurnError> {
        feedback::compilation(self.env.python, code)
            .map_err(|e| self.other(format!("compilation feedback failed: {e:#}")))
    }

    fn execution_feedback(&self, eval: &EvalResult, coverage: Coverage) -> String {
        execution_feedback(self.input.problem, eval, coverage, self.input.fix_quirks)
    }

    /// The last code-model exchange is what the record's `log` shows (`inspect_history(n=1)`).
    fn note_log(&mut self, calls: &[Call]) {
        if let Some(c) = calls.last() {
            self.log = Some(log_text(
                self.env.coder.endpoint_kind(),
                &c.prompt,
                &c.completion,
            ));
        }
    }

    /// One refiner call as DSPy 2.4.12 makes it: when the answer lacks `Code:`, DSPy asks
    /// for the rest with the prompt completed by the fields it got (dspy.rs).
    fn refine(&mut self, kind: Kind, fb: &Feedback, code: &str) -> Result<Refined, TurnError> {
        let fix = self.input.fix_quirks;
        let inputs = Inputs {
            input: Some(&self.input.problem.instruct_prompt),
            previous_code: Some(code),
            compilation_feedback: fb.compilation.as_deref(),
            execution_feedback: fb.execution.as_deref(),
            user_feedback: fb.user.as_deref(),
            ground_truth_code: None,
            instruction_feedback: fb.instruction.as_deref(),
        };
        match ask(self.env.coder, kind, &inputs, fix) {
            Ok(g) => {
                self.note_log(&g.calls);
                let answer = prompts::output(kind, &g).unwrap_or_default();
                Ok(Refined::Code(prompts::parse_code(&answer, fix)))
            }
            Err(GenerateError::Incomplete { calls }) => {
                self.note_log(&calls);
                Ok(Refined::Incomplete)
            }
            Err(GenerateError::Lm { source, calls }) => {
                self.note_log(&calls);
                Err(self.lm_err(source))
            }
        }
    }

    /// A refiner call whose `AssertionError` the original does not catch: `pot.py`'s outer
    /// handler prints it and exits, which ends the whole turn's run.
    fn refine_or_stop(
        &mut self,
        kind: Kind,
        fb: &Feedback,
        code: &str,
    ) -> Result<String, TurnError> {
        match self.refine(kind, fb, code)? {
            Refined::Code(c) => Ok(c),
            Refined::Incomplete => Err(self.lm_err(LlmError::MissingField {
                field: "Code:".into(),
                calls: pivot_llm::dspy::MAX_DEPTH + 1,
            })),
        }
    }

    /// The refiner call for verbal feedback with a failing f_e; on a refused (too long) request
    /// the execution feedback is trimmed with shrinking budgets, as the original does.
    fn refine_exec_user(
        &mut self,
        fb: &mut Feedback,
        code: &str,
        eval: &EvalResult,
        coverage: Coverage,
    ) -> Result<Option<String>, TurnError> {
        let (mut front, mut rear) = (feedback::FRONT_TRIM as i64, feedback::REAR_TRIM as i64);
        let mut trimmed = false;
        loop {
            // Any exception here (a refused request, or DSPy's AssertionError) makes the
            // original trim the execution feedback and ask again.
            match self.refine(Kind::RefineFromExecutionUserFeedback, fb, code) {
                Ok(Refined::Code(c)) => return Ok(Some(c)),
                Ok(Refined::Incomplete) => {}
                Err(TurnError::Lm { source, .. }) if source.is_bad_request() => {}
                Err(e) => return Err(e),
            }
            if !trimmed {
                trimmed = true;
            } else if front > rear {
                front -= 1000;
            } else {
                rear -= 1000;
            }
            if front < 0 || rear < 0 {
                return Err(
                    self.other("input is too long even after trimming the execution feedback")
                );
            }
            let full = match coverage {
                Coverage::Full => feedback::execution_untrimmed(eval, self.input.problem, false),
                Coverage::Partial if !self.input.fix_quirks => {
                    feedback::execution_untrimmed(eval, self.input.problem, true)
                }
                Coverage::Partial => self.execution_feedback(eval, coverage),
            };
            fb.execution = Some(feedback::trim(&full, front as usize, rear as usize));
        }
    }

    fn simulate(
        &mut self,
        code: &str,
        fb: &Feedback,
        expertise: Expertise,
    ) -> Result<Option<String>, TurnError> {
        if let Some(frozen) = &self.input.frozen_user_feedback {
            return Ok(frozen.clone());
        }
        let signals = Signals {
            execution_on: self.input.config.execution.is_some(),
            compilation: fb.compilation.as_deref(),
            execution: fb.execution.as_deref(),
        };
        if simulator_kind(expertise, &signals).is_none() {
            return Ok(None);
        }
        let Some(sim) = self.env.simulator else {
            return Err(self.other("verbal feedback needs a simulator endpoint"));
        };
        verbal_feedback(
            sim,
            self.input.problem,
            code,
            expertise,
            &signals,
            self.input.fix_quirks,
        )
        .map_err(|e| self.lm_err(e))
    }

    fn run(&mut self) -> Result<TurnRecord, TurnError> {
        let input = self.input;
        let cfg = input.config;
        let fix = input.fix_quirks;
        let start = input.turn;
        let mut hop = start;
        let mut fb = Feedback {
            compilation: None,
            execution: None,
            user: None,
            instruction: None,
        };
        let done = |code: &str, fb: Feedback, hop: usize, log: Option<String>| TurnRecord {
            task_id: input.problem.task_id.clone(),
            solution: with_header(input.problem, code, fix),
            compilation_feedback: fb.compilation,
            execution_feedback: fb.execution,
            user_feedback: fb.user,
            log,
            iteration: hop,
            instruction_feedback: fb.instruction,
        };
        let solved = input.previous_eval.passed();
        // 0. Already solved: carry the code, no call (with `_IF`, only if it breaks no pivot).
        if solved && !cfg.instruction {
            return Ok(done(input.previous_code, fb, hop, None));
        }
        let mut code = input.previous_code.to_string();
        if !solved {
            hop = self.base(&mut code, &mut fb)?;
        }
        if cfg.instruction {
            // The code as it would be logged (a carried code too gets the header again).
            let logged = with_header(input.problem, &code, fix);
            fb.instruction = self.instruction_feedback(&logged)?;
            match &fb.instruction {
                None if solved => return Ok(done(input.previous_code, fb, hop, None)),
                None => {}
                Some(_) => {
                    // `except AssertionError: code_data = code`, as for verbal feedback.
                    if let Refined::Code(new) =
                        self.refine(Kind::RefineFromInstructionFeedback, &fb, &code)?
                    {
                        code = new;
                    }
                    if solved {
                        hop += 1;
                    }
                }
            }
        }
        let log = self.log.take();
        Ok(done(&code, fb, hop, log))
    }

    fn instruction_feedback(&self, code: &str) -> Result<Option<String>, TurnError> {
        let Some(pivots) = self.env.instructions else {
            return Err(self.other("instruction feedback (_IF) needs the pivots in force"));
        };
        pivots
            .feedback(self.input.problem, code)
            .map_err(|e| self.other(format!("instruction feedback failed: {e}")))
    }

    /// The turn of the configuration without instruction feedback, on unsolved `code`: the
    /// original's decision table (spec §1.5). Leaves the turn's code in `code` and its feedback
    /// in `fb`; returns the turn counter.
    fn base(&mut self, code: &mut String, fb: &mut Feedback) -> Result<usize, TurnError> {
        let input = self.input;
        let cfg = input.config;
        let fix = input.fix_quirks;
        let start = input.turn;
        let mut hop = start;
        let mut eval = input.previous_eval.clone();
        let mut compiled = input.previous_compilation.clone();
        let mut regenerated = false;
        while hop < start + MAX_REGENERATIONS {
            // 1. Compilation feedback; regenerate on an error (except for the novice).
            let fc = match compiled.take() {
                Some(fc) => fc,
                None => self.compile(code)?,
            };
            fb.compilation = Some(fc.clone());
            if fc != NO_SYNTAX_ERRORS && cfg.verbal != Some(Expertise::Novice) {
                *code = self.refine_or_stop(Kind::RefineFromCompilationFeedback, fb, code)?;
                regenerated = true;
                hop += 1;
                continue;
            }
            // With the quirk fixed, f_e describes the code actually shown.
            if fix && regenerated && cfg.execution.is_some() {
                if let Some(runner) = self.env.runner {
                    eval = runner.run_one(input.problem, code);
                }
            }
            // 2. Execution feedback from the stored evaluation.
            if let Some(cov) = cfg.execution {
                fb.execution = Some(self.execution_feedback(&eval, cov));
            }
            // 3. Failing f_e without verbal feedback: refine from it.
            if failing(fb.execution.as_deref()) && cfg.verbal.is_none() {
                *code = self.refine_or_stop(Kind::RefineFromExecutionFeedback, fb, code)?;
                hop += 1;
                break;
            }
            // 4. Verbal feedback.
            if let Some(expertise) = cfg.verbal {
                fb.user = self.simulate(code, fb, expertise)?;
                let kind = if failing(fb.execution.as_deref()) {
                    Some(Kind::RefineFromExecutionUserFeedback)
                } else if expertise == Expertise::Expert
                    || fb
                        .compilation
                        .as_deref()
                        .is_some_and(|c| c != NO_SYNTAX_ERRORS)
                {
                    Some(Kind::RefineFromUserFeedback)
                } else {
                    None
                };
                match kind {
                    Some(Kind::RefineFromExecutionUserFeedback) => {
                        let cov = cfg.execution.unwrap_or(Coverage::Full);
                        if let Some(new) = self.refine_exec_user(fb, code, &eval, cov)? {
                            *code = new;
                        }
                    }
                    // `except AssertionError: code_data = code`: the code stays.
                    Some(k) => {
                        if let Refined::Code(new) = self.refine(k, fb, code)? {
                            *code = new;
                        }
                    }
                    // Nothing to act on: the code stays, and the turn counter does not move.
                    None => break,
                }
                hop += 1;
                break;
            }
            // 5. Nothing failed that this configuration can see.
            hop += 1;
            break;
        }
        Ok(hop)
    }
}

/// Run turn `input.turn` of one task.
pub fn run_turn(input: &TurnInput, env: &TurnEnv) -> Result<TurnRecord, TurnError> {
    Turn {
        input,
        env,
        log: None,
    }
    .run()
}
