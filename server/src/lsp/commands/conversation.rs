//! `pivot.conversation.open` / `close`.

use super::{Args, NoArgs, Text};
use crate::lsp::convert::request_failed;
use crate::lsp::session::{Notify, Session};
use pivot_workspace::replies::{Info, Opened};
use schemars::JsonSchema;
use serde::Deserialize;
use tower_lsp_server::jsonrpc::Result;

/// `pivot.conversation.open`'s arguments: a dialogue's path, or a ConvCodeWorld results
/// folder and the task in it (with the run's configuration, model, player and simulator).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenArgs {
    pub path: Text,
    pub task: Option<Text>,
    pub config: Option<Text>,
    pub model: Option<Text>,
    pub player: Option<Text>,
    pub simulator: Option<Text>,
}

impl OpenArgs {
    /// A ConvCodeWorld results folder (convcode.rs opens it), not a MemoryCode dialogue.
    pub fn is_convcode(&self) -> bool {
        self.task.is_some()
            || self.config.is_some()
            || self.model.is_some()
            || self.player.is_some()
            || self.simulator.is_some()
    }
}

/// Open a MemoryCode dialogue at its first session (ConvCodeWorld results folders are
/// convcode.rs's). A missing or malformed file is an error naming the file and the problem;
/// the conversation open before stays open.
pub async fn open(b: &Session, args: &Args<'_>, a: OpenArgs) -> Result<Opened> {
    let path = b.ws_read().resolve(&a.path);
    if path.is_dir() {
        return Err(args.error(&format!(
            "{} is a folder: a ConvCodeWorld results folder also needs \"task\" (e.g. \"HumanEval/0\")",
            path.display()
        )));
    }
    let loaded = {
        let p = path.clone();
        tokio::task::spawn_blocking(move || pivot_workspace::conversation::Conversation::open(&p))
            .await
            .map_err(|e| request_failed(format!("opening {} failed: {e}", path.display())))?
    };
    let (conv, warnings) = loaded.map_err(|e| request_failed(format!("{e:#}")))?;
    b.ws().replay.open(conv);
    b.after_change(Notify::Always).await;
    let info = b.ws_read().info();
    Ok(Opened { info, warnings })
}

pub fn info(b: &Session, _: NoArgs) -> Result<Info> {
    Ok(b.ws_read().info())
}

pub async fn close(b: &Session, _: NoArgs) -> Result<Info> {
    b.ws().replay.close();
    b.after_change(Notify::Always).await;
    Ok(b.ws_read().info())
}
