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
//! - `pivot/memorycode/answers {"answers": [{"text", "kind", "answer"}, ...]}`: the
//!   verdicts of MemoryCode answers of the current session, each against the pairs the
//!   benchmark scores it on. Each text is analysed as a document opened with it and closed
//!   after (the same `Document`, analysis and reuse of closed documents' analyses as
//!   `didOpen` and `didClose`), without the three messages per answer an open, a request
//!   and a close would cost: a session's answers take one round trip.

use super::{Args, NoArgs, Text};
use crate::lsp::convert::request_failed;
use crate::lsp::session::Session;
use pivot_bench::memorycode::score::{pairs_for, AnswerKind};
use pivot_python::pivots::check;
use pivot_workspace::conversation::Conversation;
use pivot_workspace::replay::Move;
use pivot_workspace::replies::{AnswerChecked, AnswerVerdicts, HeadlessSetup};
use pivot_workspace::Workspace;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tower_lsp_server::jsonrpc::Result;

pub const SETUP: &str = "pivot/headless/setup";
pub const ANSWERS: &str = "pivot/memorycode/answers";

/// `pivot/headless/setup`'s arguments, as the headless clients send them too.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetupArgs {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pivots: Option<Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversation: Option<Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<usize>,
}

/// `pivot/memorycode/answers`'s arguments.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswersArgs {
    pub answers: Vec<AnswerArgs>,
}

/// One answer of `pivot/memorycode/answers`.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerArgs {
    /// The answer's code (may be empty: a reply without code).
    pub text: String,
    /// `session`, `instruction` or `history`.
    pub kind: Text,
    pub answer: usize,
}

impl Session {
    /// `pivot/headless/setup`.
    pub async fn headless_setup(&self, params: Value) -> Result<HeadlessSetup> {
        let args = Args::new(SETUP, std::slice::from_ref(&params))?;
        let a: SetupArgs = args.parse()?;
        let pivots = a.pivots.as_deref();
        let conversation = a.conversation.as_deref();
        let session = a.session;
        let mut errors = Vec::new();
        let mut warnings = Vec::new();
        let conv = match conversation {
            Some(p) => {
                let path = self.ws_read().resolve(p);
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
            let toml = match pivots {
                Some(p) => Some(ws.resolve(p)),
                None => ws.toml_path().filter(|p| p.exists()),
            };
            errors.extend(ws.headless_pivots(toml.as_deref()));
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
        Ok(HeadlessSetup {
            active: super::pivots::active(self, NoArgs {})?,
            errors,
            warnings,
        })
    }

    /// `pivot/memorycode/answers`.
    pub async fn memorycode_answers(&self, params: Value) -> Result<AnswerVerdicts> {
        // Ordered after every session move sent before it (`pivot.session.goto` holds the same
        // lock), so that a client need not await a move before the answers that follow it.
        let _in_order = self.in_order().await;
        let args = Args::new(ANSWERS, std::slice::from_ref(&params))?;
        let a: AnswersArgs = args.parse()?;
        // Every kind is read before any answer is analysed: a bad one fails the request whole.
        let asked = a
            .answers
            .into_iter()
            .map(|item| {
                let kind = match &*item.kind {
                    "session" => AnswerKind::Session,
                    "instruction" => AnswerKind::Instruction,
                    "history" => AnswerKind::History,
                    other => {
                        return Err(args.error(&format!(
                            "`kind` must be session, instruction or history, got {other:?}"
                        )))
                    }
                };
                Ok((item.text, kind, item.answer))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut ws = self.ws();
        let Workspace { replay, closed, .. } = &mut *ws;
        let conv = replay.conversation().ok_or_else(|| {
            args.error(
                "no MemoryCode conversation is open (pivot/headless/setup with \"conversation\")",
            )
        })?;
        let session = &conv.dialogue.sessions[replay.index()];
        let results = asked
            .into_iter()
            .map(|(text, kind, answer)| {
                let doc = closed.open(text, 0);
                let module = doc.module();
                let verdicts = pairs_for(session, kind, answer)
                    .into_iter()
                    .map(|(i, p)| (i, check(module, doc.text(), p.kind, &p.rule).verdict.into()))
                    .collect();
                let syntax_error = module.syntax_error.as_ref().map(|e| e.to_string());
                closed.close(doc);
                AnswerChecked {
                    syntax_error,
                    verdicts,
                }
            })
            .collect();
        Ok(AnswerVerdicts {
            session: replay.index(),
            results,
        })
    }
}
