//! The replay state machine: which sessions exist, which one is current, and the ledger
//! that combines the conversation's pivots, the workspace's `pivots.toml` and the user's
//! own pivots. Session indices are 0-based, as in the data files.

use super::convcode_conv::ConvCodeConversation;
use super::conversation::Conversation;
use pivot_history::Commit;
use pivot_python::pivots::{Active, Ledger, Rule};
use pivot_python::python::ObjectKind;
use std::sync::Arc;

/// What is being replayed: a MemoryCode dialogue (sessions with pivots) or a ConvCodeWorld
/// task (turns, no pivots of its own).
pub enum Source {
    MemoryCode(Conversation),
    ConvCode(Box<ConvCodeConversation>),
}

impl Source {
    fn session_count(&self) -> usize {
        match self {
            Source::MemoryCode(c) => c.session_count(),
            Source::ConvCode(c) => c.session_count(),
        }
    }
}

/// `pivots.toml` (or the `instructions` setting's file) read through git (the `history`
/// setting): session k is the k-th commit that changed its pivots.
#[derive(Debug, Default)]
pub struct TomlHistory {
    /// The file, relative to the root.
    pub file: String,
    pub ledger: Ledger,
    /// Session k's commit; None for an uncommitted working file (the last session).
    pub commits: Vec<Option<Commit>>,
}

#[derive(Default)]
pub struct Replay {
    source: Option<Source>,
    toml: Ledger,
    /// In place of `toml` while no conversation is open: a conversation's sessions are its
    /// own, and the file's hand-written session numbers speak of them.
    history: Option<TomlHistory>,
    user: Ledger,
    /// The chosen session; None follows the latest one (no conversation: the pivots as
    /// they stand now).
    index: Option<usize>,
    /// The conversation's pivots, then pivots.toml's, then the user's: the conversation's
    /// own ledger, shared, when the other two are empty.
    combined: Arc<Ledger>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    Next,
    Previous,
    Goto(usize),
}

impl Replay {
    /// Sessions: the conversation's; without one, up to the latest session any pivot names.
    pub fn count(&self) -> usize {
        match &self.source {
            // A ConvCodeWorld task always has its turn 0 (opening checks it).
            Some(s) => s.session_count().max(1),
            None => self
                .combined
                .pivots
                .iter()
                .flat_map(|p| p.versions.iter().map(|v| v.session + 1))
                .chain(self.history.as_ref().map(|h| h.commits.len()))
                .max()
                .unwrap_or(1)
                .max(1),
        }
    }

    /// The sessions from history in force (the setting on, no conversation open).
    pub fn history(&self) -> Option<&TomlHistory> {
        self.history.as_ref().filter(|_| self.source.is_none())
    }

    /// The commit that session `k` is, when the sessions come from history.
    pub fn session_commit(&self, k: usize) -> Option<&Commit> {
        self.history()?.commits.get(k)?.as_ref()
    }

    pub fn index(&self) -> usize {
        let last = self.count() - 1;
        self.index.map_or(last, |i| i.min(last))
    }

    /// The index as saved: None while following the latest session.
    pub fn saved_index(&self) -> Option<usize> {
        self.index
    }

    pub fn restore_index(&mut self, index: Option<usize>) {
        self.index = index;
    }

    /// Move; `Ok(true)` when the session changed. Next/previous at either end stay put.
    pub fn step(&mut self, m: Move) -> Result<bool, String> {
        let (cur, count) = (self.index(), self.count());
        let to = match m {
            Move::Next => (cur + 1).min(count - 1),
            Move::Previous => cur.saturating_sub(1),
            Move::Goto(k) if k < count => k,
            Move::Goto(k) => {
                return Err(format!(
                    "session index {k} is out of range: there {} {count} session{} (0 to {})",
                    if count == 1 { "is" } else { "are" },
                    if count == 1 { "" } else { "s" },
                    count - 1
                ))
            }
        };
        let changed = to != cur;
        self.index = Some(to);
        Ok(changed)
    }

    pub fn ledger(&self) -> &Ledger {
        &self.combined
    }

    pub fn active(&self) -> Vec<Active<'_>> {
        self.combined.active_at(self.index())
    }

    pub fn source(&self) -> Option<&Source> {
        self.source.as_ref()
    }

    /// The open MemoryCode conversation.
    pub fn conversation(&self) -> Option<&Conversation> {
        match &self.source {
            Some(Source::MemoryCode(c)) => Some(c),
            _ => None,
        }
    }

    /// The open ConvCodeWorld conversation.
    pub fn convcode(&self) -> Option<&ConvCodeConversation> {
        match &self.source {
            Some(Source::ConvCode(c)) => Some(c),
            _ => None,
        }
    }

    pub fn convcode_mut(&mut self) -> Option<&mut ConvCodeConversation> {
        match &mut self.source {
            Some(Source::ConvCode(c)) => Some(c),
            _ => None,
        }
    }

    /// Open a conversation at its first session.
    pub fn open(&mut self, c: Conversation) {
        self.open_source(Source::MemoryCode(c));
    }

    pub fn open_source(&mut self, s: Source) {
        self.source = Some(s);
        self.index = Some(0);
        self.rebuild();
    }

    /// After a ConvCodeWorld submission added a turn: go to the last session.
    pub fn go_to_last(&mut self) {
        self.index = Some(self.count() - 1);
    }

    pub fn close(&mut self) {
        self.source = None;
        self.index = None;
        self.rebuild();
    }

    pub fn set_toml(&mut self, l: Ledger, history: Option<TomlHistory>) {
        self.toml = l;
        self.history = history;
        self.rebuild();
    }

    pub fn user(&self) -> &Ledger {
        &self.user
    }

    pub fn set_user(&mut self, l: Ledger) {
        self.user = l;
        self.rebuild();
    }

    /// Add (or replace, at the same session) a version of user pivot `id`.
    pub fn add_user(
        &mut self,
        id: &str,
        session: usize,
        text: String,
        kind: ObjectKind,
        rule: Rule,
    ) -> Result<(), String> {
        if let Some(p) = self.combined.get(id).filter(|p| p.origin != "user") {
            return Err(format!(
                "pivot id `{id}` is taken by a pivot from {}",
                p.origin
            ));
        }
        if let Some(p) = self.user.pivots.iter_mut().find(|p| p.id == id) {
            p.versions.retain(|v| v.session != session);
        }
        self.user.give(id, "user", session, text, kind, rule);
        for p in &mut self.user.pivots {
            for (i, v) in p.versions.iter_mut().enumerate() {
                v.version = i;
            }
        }
        self.user.pivots.retain(|p| !p.versions.is_empty());
        self.rebuild();
        Ok(())
    }

    pub fn remove_user(&mut self, id: &str) -> bool {
        let before = self.user.pivots.len();
        self.user.pivots.retain(|p| p.id != id);
        let removed = self.user.pivots.len() != before;
        self.rebuild();
        removed
    }

    /// Ids given by more than one source (each stays; diagnostics name both).
    pub fn duplicate_ids(&self) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        let mut dup: Vec<String> = self
            .combined
            .pivots
            .iter()
            .filter(|p| !seen.insert(p.id.as_str()))
            .map(|p| p.id.clone())
            .collect();
        dup.dedup();
        dup
    }

    fn rebuild(&mut self) {
        let conv = self.conversation().map(|c| Arc::clone(&c.ledger));
        let toml = self.history().map_or(&self.toml, |h| &h.ledger);
        if toml.pivots.is_empty() && self.user.pivots.is_empty() {
            self.combined = conv.unwrap_or_default();
            return;
        }
        let mut l = conv.map(|c| (*c).clone()).unwrap_or_default();
        l.extend(toml.clone());
        l.extend(self.user.clone());
        self.combined = Arc::new(l);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_conversation_the_latest_session_is_current() {
        let mut r = Replay::default();
        assert_eq!((r.index(), r.count()), (0, 1));
        r.add_user(
            "u",
            2,
            "t".into(),
            ObjectKind::Function,
            Rule::regex("^f_").unwrap(),
        )
        .unwrap();
        assert_eq!((r.index(), r.count()), (2, 3));
        assert_eq!(r.active().len(), 1);
        assert_eq!(r.step(Move::Previous), Ok(true));
        assert_eq!(r.active().len(), 0);
        assert_eq!(r.step(Move::Goto(1)), Ok(false));
        assert_eq!(r.step(Move::Goto(0)), Ok(true));
        assert_eq!(r.step(Move::Previous), Ok(false));
        assert!(r.step(Move::Goto(3)).unwrap_err().contains("0 to 2"));
        // A second version at the same session replaces the first.
        r.add_user(
            "u",
            2,
            "t2".into(),
            ObjectKind::Function,
            Rule::regex("^g_").unwrap(),
        )
        .unwrap();
        assert_eq!(r.user().pivots[0].versions.len(), 1);
        assert!(r.remove_user("u") && !r.remove_user("u"));
    }
}
