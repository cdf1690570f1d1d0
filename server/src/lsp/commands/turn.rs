//! A person playing the model: `pivot.turn.feedback` (`{"uri", "kind", "task"?}`) gives
//! feedback of one kind on the document, and `pivot.turn.submit` (`{"uri"}`) records the
//! document as the open ConvCodeWorld conversation's next turn (with the feedback asked for
//! since the last submission), tests it, updates the turn's eval file and rescores.

use super::progress::Progress;
use super::tests::{remember, show_refusal, task_for, text_of};
use super::{Args, Text};
use crate::lsp::convert::request_failed;
use crate::lsp::session::{Notify, Session};
use anyhow::Context;
use pivot_bench::convcode::play::{self, FeedbackKind, PlayEnv};
use pivot_bench::convcode::table;
use pivot_bench::convcode::turn::Lm;
use pivot_llm::{Client, ClientConfig};
use pivot_workspace::replies::{FeedbackGiven, Submitted, TestRun};
use pivot_workspace::settings::Settings;
use schemars::JsonSchema;
use serde::Deserialize;
use std::time::Duration;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::ProgressToken;

/// The feedback simulator from the settings. Made and dropped inside a blocking task: the
/// HTTP client runs its own runtime, which must not be dropped on the server's.
fn simulator(settings: &Settings) -> anyhow::Result<Option<Client>> {
    let Some(s) = &settings.simulator else {
        return Ok(None);
    };
    let mut cfg = ClientConfig::new(&s.base_url, &s.model);
    cfg.api_key = s.api_key.clone();
    cfg.kind = s.kind;
    cfg.timeout = Duration::from_secs(120);
    cfg.retries = 2;
    Client::new(cfg)
        .map(Some)
        .context("cannot set up the feedback simulator (setting pivot.simulator)")
}

/// `pivot.turn.feedback`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedbackArgs {
    uri: Text,
    /// A [`FeedbackKind`] name.
    kind: Text,
    task: Option<Text>,
}

pub async fn feedback(b: &Session, args: &Args<'_>, a: FeedbackArgs) -> Result<FeedbackGiven> {
    let uri = a.uri.0;
    let name = &*a.kind;
    let kind = FeedbackKind::parse(name).ok_or_else(|| {
        args.error(&format!(
            "unknown kind {name:?}; one of: {}",
            FeedbackKind::NAMES.join(", ")
        ))
    })?;
    let (text, task, config, settings, res) = {
        let ws = b.ws_read();
        let text = text_of(&ws, args, &uri)?;
        let task = task_for(&ws, args, a.task.as_deref(), &uri)?;
        // Verbal feedback sees what the open configuration's simulator would.
        let config = ws
            .replay
            .convcode()
            .filter(|c| c.run.task == task)
            .map(|c| c.run.config);
        (
            text,
            task,
            config,
            ws.settings.clone(),
            ws.resources.clone(),
        )
    };
    let t = task.clone();
    let given = tokio::task::spawn_blocking(move || {
        let problem = res.problem(&settings, &t)?;
        let runner = res.runner(&settings)?;
        let sim = if kind.is_verbal() {
            simulator(&settings)?
        } else {
            None
        };
        let env = PlayEnv {
            python: &settings.python,
            runner: &runner,
            simulator: sim.as_ref().map(|c| c as &dyn Lm),
            fix_quirks: false,
        };
        play::feedback(kind, &problem, &text, config, &env)
    })
    .await
    .map_err(|e| request_failed(format!("feedback failed: {e}")))?;
    if given.is_err() {
        show_refusal(b).await;
    }
    let given = given.map_err(|e| request_failed(format!("{e:#}")))?;
    let pending = {
        let mut ws = b.ws();
        let conv = ws.replay.convcode_mut().filter(|c| c.run.task == task);
        conv.map(|c| {
            c.record_feedback(&given);
            (&c.pending).into()
        })
    };
    Ok(FeedbackGiven::new(&given, task, pending))
}

/// `pivot.turn.submit`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitArgs {
    uri: Text,
}

pub async fn submit(
    b: &Session,
    args: &Args<'_>,
    a: SubmitArgs,
    token: Option<ProgressToken>,
) -> Result<Submitted> {
    let uri = a.uri.0;
    let (text, mut run, pending, settings, res) = {
        let ws = b.ws_read();
        let text = text_of(&ws, args, &uri)?;
        let conv = ws.replay.convcode().ok_or_else(|| {
            args.error(
                "no ConvCodeWorld conversation is open; open one with pivot.conversation.open \
                 {\"path\": DIR, \"task\": ID, \"player\": NAME}",
            )
        })?;
        (
            text,
            conv.run.clone(),
            conv.pending.clone(),
            ws.settings.clone(),
            ws.resources.clone(),
        )
    };
    let before = b.session_key();
    let (root, task, model) = (run.layout.root.clone(), run.task.clone(), run.model.clone());
    let progress = Progress::begin(
        b,
        token,
        "submit",
        "Submitting a turn",
        format!("{task}: testing"),
    )
    .await;
    let done = tokio::task::spawn_blocking(move || {
        let problem = res.problem(&settings, &run.task)?;
        let runner = res.runner(&settings)?;
        let env = PlayEnv {
            python: &settings.python,
            runner: &runner,
            simulator: None,
            fix_quirks: false,
        };
        let s = play::submit(&mut run, &problem, &text, &pending, &env)?;
        anyhow::Ok((s, run, problem.entry_point))
    })
    .await
    .map_err(|e| anyhow::anyhow!("the submission failed: {e}"))
    .and_then(|r| r);
    let (submitted, run, entry_point) = match done {
        Ok(r) => r,
        Err(e) => {
            progress.end("failed".into()).await;
            show_refusal(b).await;
            return Err(request_failed(format!("{e:#}")));
        }
    };
    progress
        .end(format!(
            "turn {} recorded: {}",
            submitted.turn, submitted.tests.summary
        ))
        .await;
    {
        let mut ws = b.ws();
        // The same conversation still open: it gains the turn, the feedback is used up, and
        // the new turn becomes the current session.
        let same = ws
            .replay
            .convcode_mut()
            .filter(|c| c.run.layout.root == root && c.run.task == task && c.run.model == model);
        if let Some(c) = same {
            c.run = run;
            c.pending = Default::default();
            ws.replay.go_to_last();
        }
        remember(&mut ws, &uri, &task, entry_point, &submitted.tests);
    }
    // Publishes the document's new `tests` diagnostics with everything else.
    b.after_change(Notify::IfMoved(before)).await;
    b.refresh_code_lenses();
    // The record is the core's format, kept as the JSON it writes.
    let record =
        serde_json::to_value(&submitted.record).map_err(|e| request_failed(e.to_string()))?;
    let table = table::render_text(&submitted.scores);
    Ok(Submitted {
        turn: submitted.turn,
        record,
        log: submitted.log,
        eval_file: submitted.eval_file,
        tests: TestRun::new(&uri, &task, &submitted.tests),
        scores: submitted.scores,
        table,
    })
}
