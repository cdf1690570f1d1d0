//! ConvCodeWorld results folders: `pivot.conversation.open` with `{"path": DIR, "task": ID,
//! "config"?, "model"?, "player"?, "simulator"?}` (each turn a session) and
//! `pivot.evaluate.convcode` (`{"results", "model", "static"?, "refModel"?, "simulator"?,
//! "excludeInitSolved"?}`: Tables 1 and 2 as text, markdown and JSON, with `$/progress`).

use super::conversation::OpenArgs;
use super::progress::Progress;
use super::{Args, Text};
use crate::lsp::convert::request_failed;
use crate::lsp::session::{Notify, Session};
use pivot_bench::convcode::config::DEFAULT_SIMULATOR;
use pivot_bench::convcode::conversation::OpenRequest;
use pivot_bench::convcode::{metrics, table, Config, Layout};
use pivot_exec::feedback::{compilation_many, NO_SYNTAX_ERRORS};
use pivot_workspace::convcode_conv::ConvCodeConversation;
use pivot_workspace::replay::Source;
use pivot_workspace::replies::{ConvCodeEvaluation, Opened};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{MessageType, ProgressToken};

fn config_arg(args: &Args<'_>, code: Option<&str>) -> Result<Option<Config>> {
    let Some(code) = code else {
        return Ok(None);
    };
    Config::parse(code).map(Some).ok_or_else(|| {
        let all: Vec<String> = Config::all().iter().map(Config::code).collect();
        args.error(&format!(
            "unknown configuration {code:?}; one of: {}",
            all.join(", ")
        ))
    })
}

/// Open task `task` of a results folder at its turn 0. Its problem is loaded too (for the
/// transcript's task text and the code lens); when that fails the open still succeeds, with
/// a warning.
pub async fn open(b: &Session, args: &Args<'_>, a: OpenArgs) -> Result<Opened> {
    let (root, settings, res) = {
        let ws = b.ws_read();
        (
            ws.resolve(&a.path),
            ws.settings.clone(),
            ws.resources.clone(),
        )
    };
    let req = OpenRequest {
        root,
        task: a
            .task
            .ok_or_else(|| args.error("missing argument `task`"))?
            .0,
        config: config_arg(args, a.config.as_deref())?,
        model: a.model.map(|t| t.0),
        simulator: a.simulator.map(|t| t.0),
        player: a.player.map(|t| t.0),
    };
    let opened = tokio::task::spawn_blocking(move || {
        let c = ConvCodeConversation::open(req)?;
        let mut warnings = c.run.notes.clone();
        if let Err(e) = res.problem(&settings, &c.run.task) {
            warnings.push(format!("{e:#} (the transcript shows no task text)"));
        }
        anyhow::Ok((c, warnings))
    })
    .await
    .map_err(|e| request_failed(format!("opening the results folder failed: {e}")))?;
    let (conv, warnings) = opened.map_err(|e| request_failed(format!("{e:#}")))?;
    b.ws().replay.open_source(Source::ConvCode(Box::new(conv)));
    b.after_change(Notify::Always).await;
    let info = b.ws_read().info();
    Ok(Opened { info, warnings })
}

/// `pivot.evaluate.convcode`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EvaluateArgs {
    results: Text,
    model: Text,
    #[serde(default)]
    r#static: bool,
    ref_model: Option<Text>,
    simulator: Option<Text>,
    #[serde(default)]
    exclude_init_solved: bool,
}

pub async fn evaluate(
    b: &Session,
    args: &Args<'_>,
    a: EvaluateArgs,
    token: Option<ProgressToken>,
) -> Result<ConvCodeEvaluation> {
    let (results, python) = {
        let ws = b.ws_read();
        (ws.resolve(&a.results), ws.settings.python.clone())
    };
    let model = a.model.0;
    let is_static = a.r#static;
    let reference = a.ref_model.map(|t| t.0);
    let exclude = a.exclude_init_solved;
    let reference = match (is_static, reference) {
        (true, None) => return Err(args.error("\"static\": true needs \"refModel\"")),
        (false, Some(_)) => {
            return Err(args.error("\"refModel\" is for static scores; add \"static\": true"))
        }
        (true, r) => r,
        (false, None) => None,
    };
    let simulator = a.simulator.as_deref().unwrap_or(DEFAULT_SIMULATOR);
    if !results.is_dir() {
        return Err(request_failed(format!(
            "results folder {} does not exist",
            results.display()
        )));
    }
    let model_name = model.clone();
    let req = metrics::ScoreRequest {
        layout: Layout::new(&results, simulator),
        model: model.clone(),
        reference,
    };
    let what = if is_static {
        "ConvCodeBench"
    } else {
        "ConvCodeWorld"
    };
    let progress = Progress::begin(
        b,
        token,
        "evaluate",
        &format!("{what} evaluation"),
        format!("scoring {model}"),
    )
    .await;
    // `$/cancelRequest` drops this request's future, and with it `_stop_on_drop`: the
    // scoring, on a blocking thread that outlives the future, sees `stop` and ends early.
    let stop = Arc::new(AtomicBool::new(false));
    let _stop_on_drop = StopOnDrop(stop.clone());
    let client = b.client.clone();
    let scored = tokio::task::spawn_blocking(move || {
        let stopped = || stop.load(Ordering::SeqCst);
        let check = |codes: &[&str]| -> anyhow::Result<Vec<bool>> {
            if stopped() {
                anyhow::bail!(metrics::STOPPED);
            }
            Ok(compilation_many(&python, codes)?
                .into_iter()
                .map(|f| f == NO_SYNTAX_ERRORS)
                .collect())
        };
        let opts = metrics::ScoreOptions {
            exclude_init_solved: exclude,
        };
        let scored = metrics::score_until(&req, Some(&check), opts, &stopped);
        if stopped() {
            // Nobody waits for the answer any more: say that the work ended.
            let msg =
                format!("pivot.evaluate.convcode of {model_name}: cancelled, scoring stopped");
            tokio::runtime::Handle::current().block_on(client.log_message(MessageType::INFO, msg));
        }
        scored
    })
    .await
    .map_err(|e| anyhow::anyhow!("the evaluation failed: {e}"))
    .and_then(|r| r);
    let scores = match scored {
        Ok(s) => s,
        Err(e) => {
            progress.end("failed".into()).await;
            return Err(request_failed(format!("{e:#}")));
        }
    };
    let complete = scores.columns.iter().filter(|c| c.complete).count();
    progress
        .end(format!(
            "{} configurations scored ({complete} complete)",
            scores.columns.len()
        ))
        .await;
    Ok(ConvCodeEvaluation {
        text: table::render_text(&scores),
        markdown: table::render_markdown(&scores),
        notes: scores.notes.clone(),
        json: scores,
    })
}

/// Sets its flag when dropped: a cancelled request's future is dropped, not resumed.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}
