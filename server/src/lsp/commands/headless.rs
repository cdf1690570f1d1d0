//! Requests for headless clients (`pivot-lsp check`, `score memorycode --via-lsp`), which
//! drive the server as an editor does but need a result that depends only on the inputs
//! they name:
//!
//! - `pivot/headless/setup {"pivots"?, "conversation"?, "session"?}`: the pivot sources
//!   (a `pivots.toml` path, default the root's; a MemoryCode dialogue) and the session
//!   (default the latest). The user's own pivots restored from `.pivot/state.json` are
//!   dropped, and nothing is saved: a CI run neither reads nor writes editor state.
//!   Returns the active pivots; a bad `pivots.toml` is reported in `errors` (the other
//!   sources still apply), a missing conversation or session is a request error.
//! - `pivot/memorycode/answer {"uri", "kind", "answer"}`: the verdicts of an open
//!   document, as a MemoryCode answer of the given kind at the current session, against
//!   the pairs the benchmark scores it on.

use super::{Args, NoArgs, Text};
use crate::bench::memorycode::score::{pairs_for, AnswerKind};
use crate::lsp::convert::{invalid_params, request_failed};
use crate::lsp::server::Backend;
use crate::lsp::workspace::conversation::Conversation;
use crate::lsp::workspace::replay::Move;
use crate::lsp::workspace::PIVOTS_TOML;
use crate::pivots::{check, Ledger};
use anyhow::Context;
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::Path;
use tower_lsp_server::jsonrpc::Result;

pub const SETUP: &str = "pivot/headless/setup";
pub const ANSWER: &str = "pivot/memorycode/answer";

/// `pivot/headless/setup`'s arguments.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetupArgs {
    pivots: Option<Text>,
    conversation: Option<Text>,
    session: Option<usize>,
}

/// `pivot/memorycode/answer`'s arguments.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerArgs {
    uri: Text,
    /// `session`, `instruction` or `history`.
    kind: Text,
    answer: usize,
}

impl Backend {
    /// `pivot/headless/setup`.
    pub async fn headless_setup(&self, params: Value) -> Result<Value> {
        let args = Args::new(SETUP, std::slice::from_ref(&params))?;
        let a: SetupArgs = args.parse()?;
        let pivots = a.pivots.as_deref();
        let conversation = a.conversation.as_deref();
        let session = a.session;
        let mut errors = Vec::new();
        let mut warnings = Vec::new();
        let conv = match conversation {
            Some(p) => {
                let path = self.ws().resolve(p);
                let r = tokio::task::spawn_blocking(move || Conversation::open(&path))
                    .await
                    .map_err(|e| request_failed(format!("{SETUP}: {e}")))?;
                let (c, w) = r.map_err(|e| request_failed(format!("{e:#}")))?;
                warnings.extend(w);
                Some(c)
            }
            None => None,
        };
        {
            let mut ws = self.ws();
            ws.replay.close();
            ws.replay.set_user(Ledger::default());
            let toml = match pivots {
                Some(p) => Some(ws.resolve(p)),
                None => ws.toml_path().filter(|p| p.exists()),
            };
            let ledger = match toml.as_deref().map(read_toml).transpose() {
                Ok(l) => l.unwrap_or_default(),
                Err(e) => {
                    errors.push(format!("{e:#}"));
                    Ledger::default()
                }
            };
            ws.replay.set_toml(ledger);
            if let Some(c) = conv {
                ws.replay.open(c);
            }
            let last = ws.replay.count() - 1;
            // The session's own message, without the request's name and usage: `check`
            // shows it to its user as is.
            ws.replay
                .step(Move::Goto(session.unwrap_or(last)))
                .map_err(|e| match conversation {
                    Some(p) => request_failed(format!("{e} in the conversation {p}")),
                    None => request_failed(format!("{e} (no conversation was given)")),
                })?;
        }
        let mut out = super::pivots::active(self, NoArgs {})?;
        out["errors"] = json!(errors);
        out["warnings"] = json!(warnings);
        Ok(out)
    }

    /// `pivot/memorycode/answer`.
    pub async fn memorycode_answer(&self, params: Value) -> Result<Value> {
        // Ordered after every session move sent before it (`pivot.session.goto` holds the same
        // lock), so that a client need not await a move before its answers. A close of the
        // document sent right behind an answer that waits here would overtake it, so such a
        // client awaits its moves (as `score memorycode --via-lsp` does).
        let _in_order = self.command_lock.lock().await;
        let args = Args::new(ANSWER, std::slice::from_ref(&params))?;
        let a: AnswerArgs = args.parse()?;
        let uri = &*a.uri;
        let kind = match &*a.kind {
            "session" => AnswerKind::Session,
            "instruction" => AnswerKind::Instruction,
            "history" => AnswerKind::History,
            other => {
                return Err(args.error(&format!(
                    "`kind` must be session, instruction or history, got {other:?}"
                )))
            }
        };
        let answer = a.answer;
        let ws = self.ws();
        let conv = ws.replay.conversation().ok_or_else(|| {
            args.error(
                "no MemoryCode conversation is open (pivot/headless/setup with \"conversation\")",
            )
        })?;
        let doc = ws
            .docs
            .get(uri)
            .ok_or_else(|| invalid_params(format!("{ANSWER}: {uri} is not open")))?;
        let session = &conv.dialogue.sessions[ws.replay.index()];
        let module = doc.module();
        let verdicts: Vec<Value> = pairs_for(session, kind, answer)
            .into_iter()
            .map(|(i, p)| json!([i, check(module, doc.text(), p.kind, &p.rule).verdict]))
            .collect();
        Ok(json!({
            "session": ws.replay.index(),
            "syntax_error": module.syntax_error.as_ref().map(|e| e.to_string()),
            "verdicts": verdicts,
        }))
    }
}

fn read_toml(path: &Path) -> anyhow::Result<Ledger> {
    let text = crate::bounded_read::read_to_string(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ledger::from_toml(&text, PIVOTS_TOML).with_context(|| format!("{}", path.display()))
}
