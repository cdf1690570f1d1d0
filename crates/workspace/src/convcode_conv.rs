//! A ConvCodeWorld results folder opened as a conversation: one task of one configuration,
//! each recorded turn a session, and the feedback a person playing the model has asked for
//! since their last submission (what the next turn's record says was fed in).

use crate::replies::ConvCodeInfo;
use anyhow::Result;
use pivot_bench::convcode::conversation::{models, ConvRun, OpenRequest};
use pivot_bench::convcode::play::{Given, Pending};
use pivot_bench::convcode::Config;
use pivot_exec::Problem;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub struct ConvCodeConversation {
    /// What was asked for (kept to reopen it after a restart).
    pub request: OpenRequest,
    pub run: ConvRun,
    pub pending: Pending,
}

/// How `.pivot/state.json` names an open ConvCodeWorld conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedConvCode {
    /// The results folder (absolute, or relative to the workspace root).
    pub path: PathBuf,
    pub task: String,
    /// The configuration in force (its option code), so a reopen picks the same one.
    pub config: String,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub player: Option<String>,
    #[serde(default)]
    pub simulator: Option<String>,
}

impl ConvCodeConversation {
    /// Blocking (reads the folder; a new player's turn 0 is written). The request is kept
    /// with its model resolved, so reopening it finds the same one.
    pub fn open(mut request: OpenRequest) -> Result<ConvCodeConversation> {
        if let (None, Some(player)) = (&request.model, &request.player) {
            // Once seeded, the player has turn-0 samples too: it is not a candidate to follow.
            let others: Vec<String> = models(&request.root)
                .into_iter()
                .filter(|m| m != player)
                .collect();
            if let [one] = others.as_slice() {
                request.model = Some(one.clone());
            }
        }
        let run = ConvRun::open(&request)?;
        if request.player.is_none() {
            request.model = Some(run.model.clone());
        }
        Ok(ConvCodeConversation {
            request,
            run,
            pending: Pending::default(),
        })
    }

    /// Reopen a saved conversation, `root` resolving a relative folder.
    pub fn reopen(saved: &SavedConvCode, root: &Path) -> Result<ConvCodeConversation> {
        let config = Config::parse(&saved.config).ok_or_else(|| {
            anyhow::anyhow!(
                "unknown ConvCodeWorld configuration {:?} in the saved state",
                saved.config
            )
        })?;
        ConvCodeConversation::open(OpenRequest {
            root: root.join(&saved.path),
            task: saved.task.clone(),
            config: Some(config),
            model: saved.model.clone(),
            simulator: saved.simulator.clone(),
            player: saved.player.clone(),
        })
    }

    pub fn saved(&self, root: Option<&Path>) -> SavedConvCode {
        let path = &self.request.root;
        SavedConvCode {
            path: root
                .and_then(|r| path.strip_prefix(r).ok())
                .map_or_else(|| path.clone(), Path::to_path_buf),
            task: self.request.task.clone(),
            config: self.run.config.code(),
            model: self.request.model.clone(),
            player: self.request.player.clone(),
            simulator: Some(self.run.layout.simulator.clone()),
        }
    }

    pub fn session_count(&self) -> usize {
        self.run.session_count()
    }

    pub fn record_feedback(&mut self, given: &Given) {
        self.pending.record(given);
    }

    /// Session `k`'s markdown: the feedback fed in at that turn, its code and evaluation.
    pub fn transcript(&self, k: usize, problem: Option<&Problem>) -> Option<String> {
        self.run.transcript(k, problem)
    }

    /// What `pivot.conversation.info` adds for this kind of conversation; `index` is the
    /// current session.
    pub fn info(&self, index: usize) -> ConvCodeInfo {
        let r = &self.run;
        ConvCodeInfo {
            task: r.task.clone(),
            config: r.config.code(),
            label: r.config.label(),
            model: r.model.clone(),
            simulator: r.layout.simulator.clone(),
            turns: r.turns.iter().map(|t| t.turn).collect(),
            turn: r.turns.get(index).map(|t| t.turn),
            next_turn: r.next_turn(),
            notes: r.notes.clone(),
            pending: (&self.pending).into(),
        }
    }
}
