//! The files `pivot-lsp check` writes and reads back: `--format json` (and its shards), the
//! analysis bundle (`--bundle`, read again by `--baseline`) and `check --history`'s JSON.
//! One type per format, used by the writer, the shard merge and the baseline reader alike,
//! so a renamed key is a compile error, not a silently missing value. The session and the
//! active pivots are the server's own reply types (`pivot/headless/setup`'s).

use pivot_bench::shard::ShardRecord;
use pivot_history::Commit;
use pivot_workspace::replies::ActivePivot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tower_lsp_server::ls_types::{DiagnosticSeverity, Range};

/// One finding: the diagnostic as published, with its file and (in a bundle) fingerprint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JsonFinding {
    pub path: String,
    pub range: Range,
    pub severity: Option<DiagnosticSeverity>,
    pub source: Option<String>,
    /// The rule id: the pivot's id, or `syntax-error`.
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

/// `check --format json`; with `shard`, one shard of a `--shard K/N` run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    pub version: String,
    pub root: String,
    pub session: usize,
    pub pivots: Vec<ActivePivot>,
    pub findings: Vec<JsonFinding>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRecord<ShardInput, ()>>,
}

/// What every shard of one `check` run shares: the tree, the session, the pivots and every
/// file's path.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardInput {
    pub benchmark: String,
    pub root: String,
    pub session: usize,
    pub pivots: Vec<ActivePivot>,
    pub files: Vec<String>,
}

/// A file read, by its path and content digest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileDigest {
    pub path: String,
    pub sha256: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BundleInputs {
    pub files: Vec<FileDigest>,
    pub pivots: Option<FileDigest>,
    pub conversation: Option<FileDigest>,
    pub session: usize,
}

/// A file that could not be checked, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProblemRow {
    pub path: String,
    pub problem: String,
}

/// The analysis bundle (`pivot-lsp-bundle/1`). `hash` is the SHA-256 of the compact JSON of
/// every other key, in this order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bundle {
    pub format: String,
    pub tool: ToolInfo,
    pub inputs: BundleInputs,
    pub pivots: Vec<ActivePivot>,
    pub findings: Vec<JsonFinding>,
    pub problems: Vec<ProblemRow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
}

/// What `--baseline` needs of a bundle: each finding's fingerprint.
#[derive(Deserialize)]
pub struct Baseline {
    pub findings: Vec<BaselineFinding>,
}

#[derive(Deserialize)]
pub struct BaselineFinding {
    pub fingerprint: String,
}

/// `check --history --format json`: the sessions of the rules file, each commit checked
/// with its new findings attributed, and adherence per pivot.
#[derive(Clone, Debug, Serialize)]
pub struct HistoryReport<'a> {
    pub version: &'a str,
    pub root: String,
    /// The file the sessions come from, and how it is read (`pivots` or `instructions`).
    pub rules_file: &'a str,
    pub read_as: &'a str,
    /// The commits that changed the rules, oldest first.
    pub sessions: Vec<HistorySession<'a>>,
    /// `--since`'s commit: its findings are the baseline.
    pub baseline: Option<&'a Commit>,
    pub commits: Vec<HistoryCommit<'a>>,
    /// New findings by class, over every commit.
    pub totals: BTreeMap<&'static str, usize>,
    /// Pivot id -> one row per version of it in force while commits were checked.
    pub adherence: BTreeMap<String, Vec<AdherenceRow<'a>>>,
    pub warnings: &'a [String],
}

#[derive(Clone, Debug, Serialize)]
pub struct HistorySession<'a> {
    pub index: usize,
    pub commit: &'a Commit,
    pub added: &'a [String],
    pub updated: &'a [String],
    pub removed: &'a [String],
    /// `[old, new]`: an instruction rewritten in another rule form.
    pub replaced: &'a [[String; 2]],
}

/// A session and the commit that made it.
#[derive(Clone, Debug, Serialize)]
pub struct SessionRef<'a> {
    pub session: usize,
    pub commit: &'a Commit,
}

/// A pivot in force at a commit, and the session that gave its version.
#[derive(Clone, Debug, Serialize)]
pub struct InForce<'a> {
    pub id: &'a str,
    pub text: &'a str,
    pub kind: &'a str,
    pub rule: String,
    pub given: SessionRef<'a>,
}

#[derive(Clone, Debug, Serialize)]
pub struct HistoryCommit<'a> {
    pub commit: &'a Commit,
    pub session: Option<usize>,
    pub pivots: Vec<InForce<'a>>,
    pub findings: Vec<JsonFinding>,
    pub new: Vec<NewFinding<'a>>,
    /// Files checked for this commit (the others' findings were carried over).
    pub rechecked: usize,
    pub seconds: f64,
}

/// A finding a commit introduced, attributed by when its code was written.
#[derive(Clone, Debug, Serialize)]
pub struct NewFinding<'a> {
    pub finding: JsonFinding,
    /// `older-than-instruction`, `follows-version-before`, `breaks-version-in-force` or
    /// `no-pivot`.
    pub class: pivot_history::Class,
    /// Whether it keeps the version before the one in force (the update forgotten).
    pub follows_version_before: bool,
    /// The commit that wrote its line.
    pub written: Option<&'a Commit>,
    /// The session that gave the version in force, and (when it follows it) the version
    /// before.
    pub given: Option<SessionRef<'a>>,
    pub before: Option<SessionRef<'a>>,
}

/// One pivot's new findings while one of its versions was in force.
#[derive(Clone, Debug, Serialize)]
pub struct AdherenceRow<'a> {
    pub session: usize,
    pub commit: &'a Commit,
    pub commits: usize,
    pub older_than_instruction: usize,
    pub broke: usize,
    pub followed_version_before: usize,
}
