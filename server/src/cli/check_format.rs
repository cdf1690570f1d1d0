//! The files `pivot-lsp check` writes and reads back: `--format json` (and its shards), the
//! analysis bundle (`--bundle`, read again by `--baseline`) and `check --history`'s JSON.
//! One type per format, used by the writer, the shard merge and the baseline reader alike,
//! so a renamed key is a compile error, not a silently missing value. The session and the
//! active pivots are the server's own replies, carried as they came.

use pivot_bench::shard::ShardRecord;
use pivot_history::Commit;
use serde::{Deserialize, Serialize};
use serde_json::Value;
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
    pub session: Value,
    pub pivots: Value,
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
    pub session: Value,
    pub pivots: Value,
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
    pub session: Value,
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
    pub pivots: Value,
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

/// `check --history --format json`: each commit checked, and adherence per pivot.
#[derive(Clone, Debug, Serialize)]
pub struct HistoryReport<'a> {
    pub version: &'a str,
    pub root: String,
    pub pivots_file: &'a str,
    /// The pivots file's sessions: the commits that changed it, oldest first.
    pub sessions: &'a [Commit],
    pub commits: Vec<HistoryCommit<'a>>,
    /// Pivot id -> one row per session in force while commits were checked.
    pub adherence: BTreeMap<String, Vec<AdherenceRow>>,
}

#[derive(Clone, Debug, Serialize)]
pub struct HistoryCommit<'a> {
    pub commit: &'a Commit,
    pub session: Option<usize>,
    pub pivots: &'a Value,
    pub findings: Vec<JsonFinding>,
    pub new: Vec<NewFinding>,
}

/// A finding a commit introduced, and whether it obeys the version of its pivot in force
/// before the current one (the instruction was followed, but an old version of it).
#[derive(Clone, Debug, Serialize)]
pub struct NewFinding {
    pub finding: JsonFinding,
    pub follows_version_before: bool,
}

/// One pivot's adherence while one session was in force.
#[derive(Clone, Debug, Serialize)]
pub struct AdherenceRow {
    pub session: Option<usize>,
    pub commits: usize,
    pub broke: usize,
    pub followed_version_before: usize,
}
