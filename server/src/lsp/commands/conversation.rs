//! `pivot.conversation.open` / `close`.

use super::{Args, NoArgs, Text};
use crate::lsp::convert::request_failed;
use crate::lsp::server::{Backend, Notify};
use serde::Deserialize;
use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::Result;

/// `pivot.conversation.open`'s arguments: a dialogue's path, or a ConvCodeWorld results
/// folder and the task in it (with the run's configuration, model, player and simulator).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenArgs {
    pub path: Text,
    pub task: Option<Text>,
    pub config: Option<Text>,
    pub model: Option<Text>,
    pub player: Option<Text>,
    pub simulator: Option<Text>,
}

/// Open a MemoryCode dialogue at its first session (a ConvCodeWorld results folder when a
/// "task" is given: convcode.rs). A missing or malformed file is an
/// error naming the file and the problem; the conversation open before stays open.
pub async fn open(b: &Backend, args: &Args<'_>, a: OpenArgs) -> Result<Value> {
    if a.task.is_some()
        || a.config.is_some()
        || a.model.is_some()
        || a.player.is_some()
        || a.simulator.is_some()
    {
        return super::convcode::open(b, args, a).await;
    }
    let path = b.ws().resolve(&a.path);
    if path.is_dir() {
        return Err(args.error(&format!(
            "{} is a folder: a ConvCodeWorld results folder also needs \"task\" (e.g. \"HumanEval/0\")",
            path.display()
        )));
    }
    let loaded = {
        let p = path.clone();
        tokio::task::spawn_blocking(move || {
            crate::lsp::workspace::conversation::Conversation::open(&p)
        })
        .await
        .map_err(|e| request_failed(format!("opening {} failed: {e}", path.display())))?
    };
    let (conv, warnings) = loaded.map_err(|e| request_failed(format!("{e:#}")))?;
    b.ws().replay.open(conv);
    b.after_change(Notify::Always).await;
    let mut info = b.ws().info();
    info["warnings"] = json!(warnings);
    Ok(info)
}

pub async fn close(b: &Backend, _: NoArgs) -> Result<Value> {
    b.ws().replay.close();
    b.after_change(Notify::Always).await;
    Ok(b.ws().info())
}
