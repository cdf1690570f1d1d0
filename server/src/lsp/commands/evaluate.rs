//! `pivot.evaluate.memorycode`: the full MemoryCode evaluation (the JSON of `pivot-lsp
//! score memorycode --format json`), reporting `$/progress` and cancellable with
//! `window/workDoneProgress/cancel` (or `$/cancelRequest`).

use super::Text;
use crate::lsp::convert::request_failed;
use crate::lsp::session::{token_key, Session};
use pivot_bench::memorycode::data::dialogue_files;
use pivot_bench::memorycode::score_dirs::{score_dirs, Detail};
use pivot_workspace::replies::MemoryCodeScores;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::ProgressToken;

/// `pivot.evaluate.memorycode`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemorycodeArgs {
    dataset: Text,
    outputs: Text,
}

pub async fn memorycode(
    b: &Session,
    a: MemorycodeArgs,
    token: Option<ProgressToken>,
) -> Result<MemoryCodeScores> {
    let (dataset, outputs) = {
        let ws = b.ws_read();
        (ws.resolve(&a.dataset), ws.resolve(&a.outputs))
    };
    if !outputs.is_dir() {
        return Err(request_failed(format!(
            "outputs folder {} does not exist",
            outputs.display()
        )));
    }
    let total = dialogue_files(&dataset)
        .map_err(|e| request_failed(format!("{e:#}")))?
        .len();

    let token = super::progress::token(b, token, "evaluate").await;
    let cancel = Arc::new(AtomicBool::new(false));
    // Unregistered on every way out, `$/cancelRequest` (which drops this future) included.
    let _registered = token
        .as_ref()
        .map(|t| b.register_cancel(token_key(t), &cancel));
    let progress = match token {
        Some(t) => Some(
            b.client
                .progress(t, "MemoryCode evaluation")
                .with_percentage(0)
                .with_cancel_button()
                .with_message(format!("0/{total} dialogues"))
                .begin()
                .await,
        ),
        None => None,
    };

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let mut job = tokio::task::spawn_blocking(move || {
        score_dirs(&dataset, &outputs, Detail::ScoresOnly, &|| {
            let _ = tx.send(());
        })
    });
    let (mut done, mut shown) = (0usize, 0u32);
    let outcome = loop {
        tokio::select! {
            r = &mut job => break Some(r),
            Some(()) = rx.recv() => {
                done += 1;
                let pct = (done * 100 / total.max(1)) as u32;
                if let (Some(p), true) = (&progress, pct > shown) {
                    shown = pct;
                    p.report_with_message(format!("{done}/{total} dialogues"), pct, None).await;
                }
            }
            _ = tokio::time::sleep(Duration::from_millis(20)) => {
                if cancel.load(Ordering::SeqCst) {
                    break None;
                }
            }
        }
    };
    let finish = |msg: String| async {
        if let Some(p) = progress {
            p.finish_with_message(msg).await;
        }
    };
    match outcome {
        // The scoring thread runs on to its end (a few seconds at most); its result is dropped.
        None => {
            finish("cancelled".into()).await;
            Err(Error {
                message: "pivot.evaluate.memorycode: cancelled".into(),
                ..Error::request_cancelled()
            })
        }
        Some(Err(e)) => {
            finish("failed".into()).await;
            Err(request_failed(format!("the evaluation failed: {e}")))
        }
        Some(Ok(Err(e))) => {
            finish("failed".into()).await;
            Err(request_failed(format!("{e:#}")))
        }
        Some(Ok(Ok((report, _)))) => {
            finish(format!(
                "{} dialogues scored, {} skipped",
                report.dialogues.len(),
                report.skipped.len()
            ))
            .await;
            Ok(MemoryCodeScores(Box::new(report.to_file(true))))
        }
    }
}
