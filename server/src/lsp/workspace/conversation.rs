//! A MemoryCode conversation opened for replay: the dialogue file, its pivots (with the
//! catalogue texts of `topics.json` when it sits beside the dataset folder), and each
//! session's transcript as markdown.

use super::timeline::{changes_at, commit_label};
use crate::bench::memorycode::data::{Dialogue, Topics};
use crate::pivots::Ledger;
use anyhow::{Context, Result};
use pivot_core::history::Commit;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct Conversation {
    pub path: PathBuf,
    /// Shared, not copied, with the replay's combined pivots and with a check of model
    /// outputs running off the lock (a dialogue can hold 100,000 sessions).
    pub dialogue: Arc<Dialogue>,
    pub ledger: Arc<Ledger>,
    /// `topics.json` used for the catalogue, if found.
    pub topics: Option<PathBuf>,
}

impl Conversation {
    /// Open `path`; also returns warnings that did not stop the open (a broken topics.json).
    pub fn open(path: &Path) -> Result<(Conversation, Vec<String>)> {
        let dialogue = Dialogue::load(path)?;
        if dialogue.sessions.is_empty() {
            anyhow::bail!("{}: the dialogue has no sessions", path.display());
        }
        let mut warnings = Vec::new();
        let topics_path = path
            .parent()
            .and_then(Path::parent)
            .map(|p| p.join("topics.json"))
            .filter(|p| p.is_file());
        let topics = match &topics_path {
            Some(p) => match Topics::load(p) {
                Ok(t) => Some(t),
                Err(e) => {
                    warnings.push(format!("{e:#} (instruction catalogue not used)"));
                    None
                }
            },
            None => None,
        };
        let ledger = dialogue
            .ledger(topics.as_ref())
            .with_context(|| format!("{}: cannot read its pivots", path.display()))?;
        Ok((
            Conversation {
                path: path.to_path_buf(),
                dialogue: Arc::new(dialogue),
                ledger: Arc::new(ledger),
                topics: topics.and(topics_path),
            },
            warnings,
        ))
    }

    pub fn session_count(&self) -> usize {
        self.dialogue.sessions.len()
    }
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
        for para in session.text.split("\n\n").filter(|p| !p.trim().is_empty()) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(rel: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(rel)
    }

    #[test]
    fn fixture_dialogue_with_catalogue_and_transcript() {
        let (c, warnings) =
            Conversation::open(&fixture("fixtures/memorycode/dataset/dialogue_1.json")).unwrap();
        assert!(warnings.is_empty());
        assert!(c.topics.is_some());
        assert_eq!(c.session_count(), 3);
        let p = c.ledger.get("mc-100").unwrap();
        assert_eq!(p.catalogue.len(), 2);
        let md = transcript(Some(&c), &c.ledger, (2, 3), None);
        let changes = md.find("## Pivot changes").unwrap();
        let talk = md.find("## Transcript").unwrap();
        assert!(changes < talk);
        assert!(md.contains("**updated** `mc-100`"), "{md}");
        assert!(md.contains("**added** `mc-102`"), "{md}");
        assert!(md.contains("**Ana:** New convention"), "{md}");
    }
}
