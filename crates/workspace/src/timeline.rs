//! The sessions as a timeline: for each, where it comes from (with the `history` setting, the
//! commit that changed `pivots.toml`) and the pivot changes it makes. One typed reply for the
//! editors' Sessions views, and the changes the transcripts list.

use super::conversation::Conversation;
use super::replay::{Replay, Source};
use pivot_history::Commit;
use pivot_python::pivots::{Active, Ledger};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `pivot.session.timeline`'s reply.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Timeline {
    /// The current session.
    pub index: usize,
    pub count: usize,
    pub source: TimelineSource,
    /// The file whose commits the sessions are (source `history`: `pivots.toml`, or the
    /// `instructions` setting's file); null for every other source.
    pub file: Option<String>,
    pub sessions: Vec<SessionEntry>,
}

/// Where the sessions come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum TimelineSource {
    #[serde(rename = "memorycode")]
    MemoryCode,
    #[serde(rename = "convcode")]
    ConvCode,
    /// pivots.toml's commits (the history setting).
    #[serde(rename = "history")]
    History,
    #[serde(rename = "workspace pivots")]
    WorkspacePivots,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SessionEntry {
    pub index: usize,
    /// The commit this session is (history only; null for the uncommitted working file and
    /// every other source).
    pub commit: Option<CommitRef>,
    /// True for the working tree's `pivots.toml`, changed since the last commit.
    pub uncommitted: bool,
    pub changes: Vec<Change>,
}

/// A commit as the editors show it (the history crate's `Commit`, which knows nothing of
/// the editors' schema).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CommitRef {
    /// The full hex id.
    pub id: String,
    /// The first 12 hex digits.
    pub short: String,
    /// The first line of its message.
    pub summary: String,
    /// Committer time, seconds since the epoch.
    pub time: i64,
}

impl From<&Commit> for CommitRef {
    fn from(c: &Commit) -> CommitRef {
        CommitRef {
            id: c.id.clone(),
            short: c.short.clone(),
            summary: c.summary.clone(),
            time: c.time,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Added,
    Updated,
    Removed,
}

impl ChangeKind {
    pub fn word(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Updated => "updated",
            ChangeKind::Removed => "removed",
        }
    }
}

/// One pivot's change at a session.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Change {
    pub change: ChangeKind,
    pub id: String,
    /// "memorycode", "pivots.toml" or "user".
    pub origin: String,
    pub version: usize,
    /// The instruction (for a removal, the one taken out).
    pub text: String,
    pub kind: String,
    /// The rule in words.
    pub description: String,
}

/// Whether `a` (a version given at session `k`) adds, updates or removes its pivot: an
/// addition is its first version, or the first after a removal.
pub fn change_kind(a: &Active<'_>, k: usize) -> ChangeKind {
    if a.version.withdrawn {
        return ChangeKind::Removed;
    }
    let before = a.pivot.versions.iter().rev().find(|v| v.session < k);
    match before {
        Some(v) if !v.withdrawn => ChangeKind::Updated,
        _ => ChangeKind::Added,
    }
}

/// One version given at its session, as a change.
fn change_of(a: &Active<'_>) -> Change {
    Change {
        change: change_kind(a, a.version.session),
        id: a.pivot.id.clone(),
        origin: a.pivot.origin.clone(),
        version: a.version.version,
        text: a.version.text.clone(),
        kind: a.version.kind.name().to_string(),
        description: a.version.rule.describe(),
    }
}

/// The pivot changes of session `k`, every source of `ledger` together.
pub fn changes_at(ledger: &Ledger, k: usize) -> Vec<Change> {
    ledger.changes_at(k).iter().map(change_of).collect()
}

pub fn timeline(r: &Replay) -> Timeline {
    let source = match r.source() {
        Some(Source::MemoryCode(_)) => TimelineSource::MemoryCode,
        Some(Source::ConvCode(_)) => TimelineSource::ConvCode,
        None if r.history().is_some() => TimelineSource::History,
        None => TimelineSource::WorkspacePivots,
    };
    let history = r.history();
    let count = r.count();
    // Every version put in its session's list in one pass over the ledger (asking each
    // session for its changes would read the whole ledger once per session), in the order
    // `changes_at` gives.
    let mut changes: Vec<Vec<Change>> = (0..count).map(|_| Vec::new()).collect();
    for pivot in &r.ledger().pivots {
        for version in &pivot.versions {
            if let Some(list) = changes.get_mut(version.session) {
                list.push(change_of(&Active { pivot, version }));
            }
        }
    }
    let sessions = changes
        .into_iter()
        .enumerate()
        .map(|(k, changes)| SessionEntry {
            index: k,
            commit: r.session_commit(k).map(CommitRef::from),
            uncommitted: history.is_some_and(|h| matches!(h.commits.get(k), Some(None))),
            changes,
        })
        .collect();
    Timeline {
        index: r.index(),
        count,
        source,
        file: history.map(|h| h.file.clone()),
        sessions,
    }
}

/// "commit 1a2b3c4d5e6f (Rename the helpers)", for hovers and transcripts.
pub fn commit_label(c: &Commit) -> String {
    format!("commit {} ({})", c.short, c.summary)
}

/// Markdown for session `k` of `count`: the pivot changes of that session (from every
/// source in `ledger`) first, then the session's topics and transcript if a conversation
/// has that session.
/// With sessions from history, `commit` is the commit session `k` is.
pub fn transcript(
    conv: Option<&Conversation>,
    ledger: &Ledger,
    (k, count): (usize, usize),
    commit: Option<&Commit>,
) -> String {
    let mut md = format!("# Session {k} of {count}\n\n");
    if let Some(c) = commit {
        md.push_str(&format!("The {} of {}.\n\n", commit_label(c), c.date()));
    }
    md.push_str("## Pivot changes\n\n");
    let changes = changes_at(ledger, k);
    if changes.is_empty() {
        md.push_str("None in this session.\n");
    }
    for c in &changes {
        md.push_str(&format!(
            "- **{}** `{}` (version {}): \"{}\" ({}: {})\n",
            c.change.word(),
            c.id,
            c.version,
            c.text,
            c.kind,
            c.description
        ));
    }
    if let Some(session) = conv.and_then(|c| c.dialogue.sessions.get(k)) {
        if !session.topic.is_empty() {
            md.push_str("\n## Topics\n\n");
            for (ty, topic) in session.types.iter().zip(&session.topic) {
                md.push_str(&format!("- {ty}: {topic}\n"));
            }
        }
        md.push_str("\n## Transcript\n\n");
        for para in session
            .text()
            .split("\n\n")
            .filter(|p| !p.trim().is_empty())
        {
            md.push_str(&speaker_in_bold(para.trim()));
            md.push_str("\n\n");
        }
    }
    md
}

/// "Ana: text" -> "**Ana:** text" (a short name before the first colon).
fn speaker_in_bold(para: &str) -> String {
    match para.split_once(": ") {
        Some((who, rest)) if !who.is_empty() && who.len() <= 40 && !who.contains('\n') => {
            format!("**{who}:** {rest}")
        }
        _ => para.to_string(),
    }
}
