//! `pivot.tests.run` (`{"uri", "task"?}`): the document's code against a task's tests, with
//! `$/progress`. Failing tests become diagnostics (source `tests`) and the entry point's code
//! lens shows the result, until the next run or the document closes.

use super::progress::Progress;
use super::{Args, Text};
use crate::lsp::convert::request_failed;
use crate::lsp::publish;
use crate::lsp::session::Session;
use pivot_exec::doc_tests::{run_document, DocRun};
use pivot_workspace::replies::TestRun;
use pivot_workspace::test_runs::LastRun;
use pivot_workspace::Workspace;
use schemars::JsonSchema;
use serde::Deserialize;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::ProgressToken;

/// The task to test against: given, else the document's last one, else the open
/// ConvCodeWorld conversation's.
pub fn task_for(ws: &Workspace, args: &Args<'_>, given: Option<&str>, uri: &str) -> Result<String> {
    if let Some(t) = given {
        return Ok(t.to_string());
    }
    ws.tests
        .get(uri)
        .map(|l| l.task.clone())
        .or_else(|| ws.replay.convcode().map(|c| c.run.task.clone()))
        .ok_or_else(|| {
            args.error(
                "no task: give \"task\" (e.g. \"HumanEval/0\") or open a ConvCodeWorld \
                 conversation with pivot.conversation.open",
            )
        })
}

/// The open document's text.
pub fn text_of(ws: &Workspace, args: &Args<'_>, uri: &str) -> Result<String> {
    ws.docs
        .get(uri)
        .map(|d| d.text().to_string())
        .ok_or_else(|| args.error(&format!("`{uri}` is not an open Python document")))
}

/// `pivot.tests.run`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    uri: Text,
    task: Option<Text>,
}

pub async fn run(
    b: &Session,
    args: &Args<'_>,
    a: RunArgs,
    token: Option<ProgressToken>,
) -> Result<TestRun> {
    let uri = a.uri.0;
    let (text, task, settings, res) = {
        let ws = b.ws_read();
        let text = text_of(&ws, args, &uri)?;
        let task = task_for(&ws, args, a.task.as_deref(), &uri)?;
        (text, task, ws.settings.clone(), ws.resources.clone())
    };
    let progress = Progress::begin(b, token, "tests", "Running tests", task.clone()).await;
    let t = task.clone();
    let out = tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
        let problem = res.problem(&settings, &t)?;
        let runner = res.runner(&settings)?;
        Ok((run_document(&runner, &problem, &text), problem.entry_point))
    })
    .await
    .map_err(|e| anyhow::anyhow!("the test run failed: {e}"))
    .and_then(|r| r);
    let (run, entry_point) = match out {
        Ok(r) => r,
        Err(e) => {
            progress.end("failed".into()).await;
            show_refusal(b).await;
            return Err(request_failed(format!("{e:#}")));
        }
    };
    progress.end(format!("{task}: {}", run.summary)).await;
    b.publish_with(|ws| {
        remember(ws, &uri, &task, entry_point, &run)
            .then(|| publish::for_doc(ws, &uri))
            .into_iter()
            .flatten()
            .collect()
    })
    .await;
    b.refresh_code_lenses();
    Ok(TestRun::new(&uri, &task, &run))
}

/// Tells the user once (`window/showMessage`) that tests cannot run here, e.g. because the
/// sandbox does not work; the command itself returns the error every time.
pub async fn show_refusal(b: &Session) {
    let notice = b.ws().resources.take_refusal_notice();
    if let Some(msg) = notice {
        b.client
            .show_message(
                tower_lsp_server::ls_types::MessageType::ERROR,
                format!("pivot: model code was not run: {msg}"),
            )
            .await;
    }
}

/// Keep `run` as the document's last test run (false: the document was closed meanwhile).
pub fn remember(
    ws: &mut Workspace,
    uri: &str,
    task: &str,
    entry_point: String,
    run: &DocRun,
) -> bool {
    if !ws.docs.contains_key(uri) {
        return false;
    }
    ws.tests.set(
        uri,
        LastRun {
            task: task.to_string(),
            entry_point,
            run: run.clone(),
        },
    );
    true
}
