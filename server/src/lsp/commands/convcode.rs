//! ConvCodeWorld results folders: `pivot.conversation.open` with `{"path": DIR, "task": ID,
//! "config"?, "model"?, "player"?, "simulator"?}` (each turn a session) and
//! `pivot.evaluate.convcode` (`{"results", "model", "static"?, "refModel"?, "simulator"?,
//! "excludeInitSolved"?}`: Tables 1 and 2 as text, markdown and JSON, with `$/progress`).

use super::progress::Progress;
use super::Args;
use crate::bench::convcode::config::DEFAULT_SIMULATOR;
use crate::bench::convcode::conversation::OpenRequest;
use crate::bench::convcode::{metrics, table, Config, Layout};
use crate::exec::feedback::{compilation_many, NO_SYNTAX_ERRORS};
use crate::lsp::convert::request_failed;
use crate::lsp::server::{Backend, Notify};
use crate::lsp::workspace::convcode_conv::ConvCodeConversation;
use crate::lsp::workspace::replay::Source;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{MessageType, ProgressToken};

/// Whether `pivot.conversation.open`'s arguments name a ConvCodeWorld task.
pub fn wants_convcode(args: &Args<'_>) -> bool {
    ["task", "config", "model", "player", "simulator"]
        .iter()
        .any(|k| args.get(k).is_some())
}

fn config_arg(args: &Args<'_>) -> Result<Option<Config>> {
    let Some(code) = args.opt_str("config")? else {
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
pub async fn open(b: &Backend, args: &Args<'_>) -> Result<Value> {
    let (root, settings, res) = {
        let ws = b.ws();
        (
            ws.resolve(args.str("path")?),
            ws.settings.clone(),
            ws.resources.clone(),
        )
    };
    let req = OpenRequest {
        root,
        task: args.str("task")?.to_string(),
        config: config_arg(args)?,
        model: args.opt_str("model")?.map(str::to_string),
        simulator: args.opt_str("simulator")?.map(str::to_string),
        player: args.opt_str("player")?.map(str::to_string),
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
    b.ws().replay.open_source(Source::ConvCode(conv));
    b.after_change(Notify::Always).await;
    let mut info = b.ws().info();
    info["warnings"] = json!(warnings);
    Ok(info)
}

pub async fn evaluate(b: &Backend, args: &Args<'_>, token: Option<ProgressToken>) -> Result<Value> {
    let (results, python) = {
        let ws = b.ws();
        (ws.resolve(args.str("results")?), ws.settings.python.clone())
    };
    let model = args.str("model")?.to_string();
    let is_static = args.opt_bool("static")?.unwrap_or(false);
    let reference = args.opt_str("refModel")?.map(str::to_string);
    let exclude = args.opt_bool("excludeInitSolved")?.unwrap_or(false);
    let reference = match (is_static, reference) {
        (true, None) => return Err(args.error("\"static\": true needs \"refModel\"")),
        (false, Some(_)) => {
            return Err(args.error("\"refModel\" is for static scores; add \"static\": true"))
        }
        (true, r) => r,
        (false, None) => None,
    };
    let simulator = args.opt_str("simulator")?.unwrap_or(DEFAULT_SIMULATOR);
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
    let scores_json = scores
        .to_json()
        .map_err(|e| request_failed(format!("{e:#}")))?;
    Ok(json!({
        "text": table::render_text(&scores),
        "markdown": table::render_markdown(&scores),
        "json": scores_json,
        "notes": scores.notes,
    }))
}

/// Sets its flag when dropped: a cancelled request's future is dropped, not resumed.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}
