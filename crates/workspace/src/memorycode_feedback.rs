//! The feedback of `memorycode generate --feedback pivots`: an answer's code checked as an
//! agent's `check_code` checks a code string given without a path (`agent::check_code_in`,
//! the same findings, shape and order), with the dialogue open at the answer's session as
//! the editor opens it, so that the pivots checked are those in force at that session. The
//! feedback turn is the reply's text as the agent's model reads it (`agent::reply_text`),
//! and nothing else.

use crate::agent::{self, check_code_in, NO_FILE};
use crate::replay::Move;
use crate::Workspace;
use anyhow::Result;
use pivot_bench::memorycode::feedback::{Critic, Critique};
use std::path::{Path, PathBuf};

/// A workspace holding one open conversation at a time (a run's answers come dialogue by
/// dialogue, so it is seldom opened again).
#[derive(Default)]
pub struct AgentCritic {
    ws: Workspace,
    open: Option<PathBuf>,
}

impl AgentCritic {
    pub fn new() -> AgentCritic {
        AgentCritic::default()
    }

    fn open(&mut self, dialogue: &Path) -> Result<()> {
        if self.open.as_deref() == Some(dialogue) {
            return Ok(());
        }
        self.open = None;
        // The warnings (a broken topics.json beside the dataset) only cost the catalogue's
        // texts, as in the editor.
        self.ws.open_conversation(dialogue)?;
        self.open = Some(dialogue.to_path_buf());
        Ok(())
    }
}

impl Critic for AgentCritic {
    fn prepare(&mut self, dialogue: &Path) -> Result<()> {
        self.open(dialogue)
    }

    fn critique(&mut self, dialogue: &Path, session: usize, code: &str) -> Critique {
        // A dialogue prepared before the run opens again; a session out of range (the
        // answers come from the same file) or a code string `check_code` would refuse
        // has nothing to say, so its answer is carried over.
        if self.open(dialogue).is_err()
            || self.ws.replay.step(Move::Goto(session)).is_err()
            || agent::oversized(code).is_some()
        {
            return Critique::default();
        }
        let reply = check_code_in(&mut self.ws, None, NO_FILE, code.to_string(), Vec::new());
        if reply.findings.is_empty() {
            return Critique::default();
        }
        Critique {
            broken: reply.findings.iter().map(|f| f.code.clone()).collect(),
            message: agent::reply_text(&reply).ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dialogue_1() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/memorycode/dataset/dialogue_1.json")
    }

    /// Dialogue 1 asks for `f_` names and docstrings at session 0 and `_x` names at
    /// session 2: the same code has the findings of each session's pivots, in
    /// `check_code`'s JSON.
    #[test]
    fn the_pivots_in_force_at_the_answer_s_session_are_checked() {
        let mut c = AgentCritic::new();
        c.prepare(&dialogue_1()).unwrap();
        let code = "def f_add(a, b):\n    return a + b\n";
        let at0 = c.critique(&dialogue_1(), 0, code);
        assert_eq!(at0.broken.len(), 1, "{at0:?}");
        let text = at0.message.clone().unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["files"], 1);
        assert_eq!(v["findings"][0]["path"], NO_FILE);
        assert!(text.contains("docstring"), "{text}");
        let at2 = c.critique(&dialogue_1(), 2, code);
        assert!(at2.message.unwrap().contains("`f_add` does not match"));
        let clean = c.critique(&dialogue_1(), 0, "def f_add(a, b):\n    \"\"\"Add.\"\"\"\n");
        assert_eq!(clean, Critique::default());
        assert_eq!(
            c.critique(&dialogue_1(), 9, code),
            Critique::default(),
            "no session 9"
        );
    }
}
