//! `pivot.session.next` / `previous` / `goto` and `pivot.session.transcript`.

use super::{Args, NoArgs};
use crate::lsp::session::{Notify, Session};
use pivot_workspace::replay::Move;
use pivot_workspace::replies::{Moved, Transcript};
use pivot_workspace::timeline::transcript as markdown;
use pivot_workspace::timeline::Timeline;
use schemars::JsonSchema;
use serde::Deserialize;
use tower_lsp_server::jsonrpc::Result;

/// `pivot.session.goto`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GotoArgs {
    /// 0-based.
    index: usize,
}

impl From<GotoArgs> for Move {
    fn from(a: GotoArgs) -> Move {
        Move::Goto(a.index)
    }
}

pub fn next(_: NoArgs) -> Move {
    Move::Next
}

pub fn previous(_: NoArgs) -> Move {
    Move::Previous
}

/// `pivot.session.transcript`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TranscriptArgs {
    /// 0-based; the current session when absent.
    index: Option<usize>,
}

/// Move and return the conversation info (`moved`: whether the session changed). A change
/// is notified and every open document republished; a step past either end is a no-op.
pub async fn step(b: &Session, args: &Args<'_>, m: Move) -> Result<Moved> {
    let before = b.session_key();
    let moved = b.ws().replay.step(m).map_err(|e| args.error(&e))?;
    if moved {
        b.after_change(Notify::IfMoved(before)).await;
    }
    let info = b.ws_read().info();
    Ok(Moved { info, moved })
}

pub async fn transcript(b: &Session, args: &Args<'_>, a: TranscriptArgs) -> Result<Transcript> {
    let (k, count, convcode) = {
        let ws = b.ws_read();
        let r = &ws.replay;
        let k = a.index.unwrap_or(r.index());
        if k >= r.count() {
            return Err(args.error(&format!(
                "session index {k} is out of range (0 to {})",
                r.count() - 1
            )));
        }
        let convcode = r.convcode().map(|c| {
            (
                c.run.task.clone(),
                ws.settings.clone(),
                ws.resources.clone(),
            )
        });
        (k, r.count(), convcode)
    };
    let markdown = match convcode {
        // A ConvCodeWorld turn: its feedback, code and evaluation (and at turn 0 the task,
        // when its problem can be loaded).
        Some((task, settings, res)) => {
            let problem = tokio::task::spawn_blocking(move || res.problem(&settings, &task).ok())
                .await
                .ok()
                .flatten();
            let ws = b.ws_read();
            ws.replay
                .convcode()
                .and_then(|c| c.transcript(k, problem.as_ref()))
                .ok_or_else(|| args.error("the conversation changed; ask again"))?
        }
        None => {
            let ws = b.ws_read();
            let r = &ws.replay;
            markdown(
                r.conversation(),
                r.ledger(),
                (k, count),
                r.session_commit(k),
            )
        }
    };
    Ok(Transcript {
        index: k,
        count,
        markdown,
    })
}

/// Every session with its commit (sessions from history) and pivot changes.
pub fn timeline(b: &Session, _: NoArgs) -> Result<Timeline> {
    Ok(pivot_workspace::timeline::timeline(&b.ws_read().replay))
}
