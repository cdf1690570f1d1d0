//! A MemoryCode conversation opened for replay: the dialogue file, its pivots (with the
//! catalogue texts of `topics.json` when it sits beside the dataset folder); each session's
//! transcript is timeline.rs's.

use anyhow::{Context, Result};
use pivot_bench::memorycode::data::{Dialogue, Topics};
use pivot_python::pivots::Ledger;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::transcript;

    fn fixture(rel: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
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
