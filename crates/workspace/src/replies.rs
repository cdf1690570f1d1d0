//! What each `pivot.*` command (and each headless request) answers, as types: the server
//! serializes them, the Rust clients (`pivot-lsp check`, `score memorycode --via-lsp`) read
//! them back, and `commands::schema` turns them into the JSON schema the editors' tests
//! check every reply against (`editors/schema/commands.schema.json`). A renamed field is
//! then a stale schema, not a silent change the TypeScript and Lua clients find later.
//!
//! Field order is the order on the wire, and an `Option` without `skip_serializing_if` is
//! a `null` that is always there: the editors read these replies as the hand-built objects
//! they replaced wrote them.
//!
//! Values the core crates build as JSON of their own (a rule, a score table, a turn's
//! record) stay `serde_json::Value` here: their shape is the core's file format, not the
//! command's.

use pivot_bench::convcode::play::{FeedbackKind, Given, Pending};
use pivot_exec::doc_tests::{DocRun, Finding};
use pivot_exec::result::Status;
use pivot_python::pivots::Verdict;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

/// `pivot.conversation.info` and `close`, and the part of every session command's reply
/// that says where the replay is.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Info {
    /// The dialogue file or the results folder; null without a conversation.
    pub source: Option<PathBuf>,
    pub kind: SourceKind,
    /// Sessions (ConvCodeWorld: turns).
    pub count: usize,
    /// The current session, 0-based.
    pub index: usize,
    /// Pivots in force at the current session.
    pub active: usize,
    /// Pivots of every source, in force or not.
    pub pivots: usize,
    /// Whether the sessions are pivots.toml's commits (the history setting).
    pub history: bool,
    /// Only with a ConvCodeWorld conversation open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub convcode: Option<ConvCodeInfo>,
}

/// Where the sessions come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SourceKind {
    #[serde(rename = "memorycode")]
    MemoryCode,
    #[serde(rename = "convcode")]
    ConvCode,
    #[serde(rename = "workspace pivots")]
    WorkspacePivots,
    #[serde(rename = "none")]
    None,
}

/// The open ConvCodeWorld task's run.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ConvCodeInfo {
    pub task: String,
    /// The configuration's code (e.g. "ce_ef_ver").
    pub config: String,
    pub label: String,
    pub model: String,
    pub simulator: String,
    /// The turn numbers recorded.
    pub turns: Vec<usize>,
    /// The current session's turn.
    pub turn: Option<usize>,
    /// The turn a submission would record; null when the run is complete.
    pub next_turn: Option<usize>,
    pub notes: Vec<String>,
    pub pending: PendingFeedback,
}

/// Feedback given since the last submission, per slot of the next turn's record.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct PendingFeedback {
    pub compilation: Option<String>,
    pub execution: Option<String>,
    pub user: Option<String>,
}

impl From<&Pending> for PendingFeedback {
    fn from(p: &Pending) -> PendingFeedback {
        PendingFeedback {
            compilation: p.compilation.clone(),
            execution: p.execution.clone(),
            user: p.user.clone(),
        }
    }
}

/// `pivot.conversation.open`: the info, and what the open could not read.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Opened {
    #[serde(flatten)]
    pub info: Info,
    pub warnings: Vec<String>,
}

/// `pivot.session.next`, `previous`, `goto`: the info after the move.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Moved {
    #[serde(flatten)]
    pub info: Info,
    /// Whether the session changed (a step past either end does not).
    pub moved: bool,
}

/// `pivot.pivots.reload`: the info after re-reading pivots.toml.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Reloaded {
    #[serde(flatten)]
    pub info: Info,
    /// The pivots pivots.toml names.
    pub workspace_pivots: usize,
}

/// `pivot.session.transcript`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Transcript {
    pub index: usize,
    pub count: usize,
    pub markdown: String,
}

/// `pivot.pivots.active`, `add` and `remove`: the pivots in force at the current session.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ActivePivots {
    pub index: usize,
    pub count: usize,
    pub pivots: Vec<ActivePivot>,
}

/// One pivot in force, at the version in force.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ActivePivot {
    pub id: String,
    /// "memorycode", "pivots.toml" or "user".
    pub origin: String,
    pub version: usize,
    /// The instruction.
    pub text: String,
    /// The object kind the rule applies to ("function", "class", ...).
    pub kind: String,
    /// The rule in its JSON form (the core's `Rule::to_json`).
    pub rule: Value,
    /// The rule in words.
    pub description: String,
    /// The session this version was given at.
    pub session: usize,
}

/// `pivot/headless/setup`: the active pivots, and what could not be read.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct HeadlessSetup {
    #[serde(flatten)]
    pub active: ActivePivots,
    /// A bad pivots.toml (its pivots are then none; the other sources still apply).
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
}

/// `pivot/memorycode/answers`: per answer asked, in order, the verdict of each pair.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AnswerVerdicts {
    /// The session the answers were checked at.
    pub session: usize,
    pub results: Vec<AnswerChecked>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AnswerChecked {
    pub syntax_error: Option<String>,
    /// (pair index in the session's list, verdict) per pair the benchmark scores.
    pub verdicts: Vec<(usize, VerdictName)>,
}

/// A pivot's verdict on some code, as the core's `Verdict` writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VerdictName {
    Pass,
    Fail,
    Absent,
    SyntaxError,
}

impl From<Verdict> for VerdictName {
    fn from(v: Verdict) -> VerdictName {
        match v {
            Verdict::Pass => VerdictName::Pass,
            Verdict::Fail => VerdictName::Fail,
            Verdict::Absent => VerdictName::Absent,
            Verdict::SyntaxError => VerdictName::SyntaxError,
        }
    }
}

impl From<VerdictName> for Verdict {
    fn from(v: VerdictName) -> Verdict {
        match v {
            VerdictName::Pass => Verdict::Pass,
            VerdictName::Fail => Verdict::Fail,
            VerdictName::Absent => Verdict::Absent,
            VerdictName::SyntaxError => Verdict::SyntaxError,
        }
    }
}

/// `pivot.outputs.check`: a model's answers scored per session and answer.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct OutputsChecked {
    pub dialogue: PathBuf,
    pub output: PathBuf,
    pub scores: SessionScores,
    pub answers: Vec<AnswerScored>,
    pub warnings: Vec<String>,
}

/// Per session, the mean score of each kind of answer (null: nothing to score).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SessionScores {
    pub session: Vec<Option<f64>>,
    pub instruction: Vec<Option<f64>>,
    pub history: Vec<Option<f64>>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AnswerScored {
    pub session: usize,
    /// "session", "instruction" or "history"; "instructions_chain" or "rag" for answers of
    /// those outputs (scored on the history pairs).
    pub kind: String,
    pub answer: usize,
    pub syntax_error: Option<String>,
    /// The mean of the pairs' scores; null when no pair counts.
    pub score: Option<f64>,
    pub verdicts: Vec<PairScored>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PairScored {
    /// The pair's index in the session's list.
    pub pair: usize,
    /// The pivot whose version in force is this pair, if any.
    pub pivot: Option<String>,
    pub kind: String,
    pub rule: Value,
    pub verdict: VerdictName,
    /// 1, 0, or null (an absent object does not count).
    pub score: Option<f64>,
}

/// `pivot.evaluate.memorycode`: the JSON of `pivot-lsp score memorycode --format json`
/// (the score file, `pivot_bench::memorycode::score_file::ScoreFile`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct MemoryCodeScores(pub Box<pivot_bench::memorycode::score_file::ScoreFile>);

/// `pivot.document.inspect`: the server's view of an open document.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Inspected {
    pub uri: String,
    pub version: i32,
    /// The text as the client's edits left it.
    pub text: String,
    pub lines: usize,
    pub syntax_error: Option<String>,
}

/// `pivot.tests.run`, and the tests part of `pivot.turn.submit`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct TestRun {
    pub uri: String,
    pub task: String,
    pub status: TestStatus,
    /// "3/7 passed", "timed out", ...
    pub summary: String,
    pub passed: usize,
    pub total: usize,
    /// 0-based line of the entry point's `def`, when the document has it.
    pub entry_line: Option<usize>,
    pub failures: Vec<TestFailure>,
}

impl TestRun {
    pub fn new(uri: &str, task: &str, run: &DocRun) -> TestRun {
        TestRun {
            uri: uri.to_string(),
            task: task.to_string(),
            status: run.status.into(),
            summary: run.summary.clone(),
            passed: run.passed,
            total: run.total,
            entry_line: run.entry_line,
            failures: run.findings.iter().map(TestFailure::from).collect(),
        }
    }
}

/// A test run's outcome, as the core's `Status` writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TestStatus {
    Pass,
    Fail,
    Timeout,
    Tampered,
}

impl From<Status> for TestStatus {
    fn from(s: Status) -> TestStatus {
        match s {
            Status::Pass => TestStatus::Pass,
            Status::Fail => TestStatus::Fail,
            Status::Timeout => TestStatus::Timeout,
            Status::Tampered => TestStatus::Tampered,
        }
    }
}

/// One failing test, placed in the document.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct TestFailure {
    /// The test method (`test_case_2`), `ALL` for a module-level crash, or `timeout`.
    pub test: String,
    /// 0-based line of the document.
    pub line: usize,
    pub message: String,
    /// The test's own failing source line, when the traceback names it.
    pub test_line: Option<String>,
    pub traceback: String,
    /// Whether `line` is in a frame of the document (else it is the entry point's).
    pub in_document: bool,
}

impl From<&Finding> for TestFailure {
    fn from(f: &Finding) -> TestFailure {
        TestFailure {
            test: f.test.clone(),
            line: f.line,
            message: f.message.clone(),
            test_line: f.test_line.clone(),
            traceback: f.traceback.clone(),
            in_document: f.in_document,
        }
    }
}

/// `pivot.turn.feedback`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct FeedbackGiven {
    pub kind: FeedbackKindName,
    pub task: String,
    /// Null when the kind gives none here (e.g. verbal feedback the configuration omits).
    pub text: Option<String>,
    /// The simulator prompt used, for verbal feedback.
    pub simulator_call: Option<String>,
    /// The open conversation's feedback since its last submission (null when the task is
    /// not the open conversation's).
    pub pending: Option<PendingFeedback>,
}

impl FeedbackGiven {
    pub fn new(given: &Given, task: String, pending: Option<PendingFeedback>) -> FeedbackGiven {
        FeedbackGiven {
            kind: given.kind.into(),
            task,
            text: given.text.clone(),
            simulator_call: given.simulator_call.map(str::to_string),
            pending,
        }
    }
}

/// A kind of feedback, as the core's `FeedbackKind` writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FeedbackKindName {
    Compilation,
    Execution,
    ExecutionPartial,
    Novice,
    Expert,
}

impl From<FeedbackKind> for FeedbackKindName {
    fn from(k: FeedbackKind) -> FeedbackKindName {
        match k {
            FeedbackKind::Compilation => FeedbackKindName::Compilation,
            FeedbackKind::Execution => FeedbackKindName::Execution,
            FeedbackKind::ExecutionPartial => FeedbackKindName::ExecutionPartial,
            FeedbackKind::Novice => FeedbackKindName::Novice,
            FeedbackKind::Expert => FeedbackKindName::Expert,
        }
    }
}

/// `pivot.turn.submit`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Submitted {
    pub turn: usize,
    /// The turn's record as written to the results folder (the core's format).
    #[schemars(with = "serde_json::Map<String, Value>")]
    pub record: Value,
    pub log: PathBuf,
    pub eval_file: PathBuf,
    pub tests: TestRun,
    /// The run's rescored tables: the score file `score convcode --format json` prints.
    pub scores: pivot_bench::convcode::Scores,
    /// The tables as text.
    pub table: String,
}

/// `pivot.memorycode.generate`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Generated {
    /// The output file `pivot.outputs.check` scores.
    pub output: PathBuf,
    pub requests: usize,
    pub cached: usize,
    pub written: Vec<PathBuf>,
    pub failures: Vec<String>,
}

/// `pivot.evaluate.convcode`: Tables 1 and 2.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ConvCodeEvaluation {
    pub text: String,
    pub markdown: String,
    /// The score file `score convcode --format json` prints (`"shard"` included).
    pub json: pivot_bench::convcode::Scores,
    pub notes: Vec<String>,
}

/// `pivot.report.open`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReportOpened {
    /// The report page written (`.pivot/report.html`).
    pub path: String,
    /// How many score files it shows.
    pub inputs: usize,
}
