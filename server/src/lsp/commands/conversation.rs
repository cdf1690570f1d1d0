//! `pivot.conversation.open` / `close`.

use super::Args;
use crate::lsp::convert::request_failed;
use crate::lsp::server::{Backend, Notify};
use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::Result;

/// Open a MemoryCode dialogue at its first session (a ConvCodeWorld results folder when a
/// "task" is given: convcode.rs). A missing or malformed file is an
/// error naming the file and the problem; the conversation open before stays open.
pub async fn open(b: &Backend, args: &Args<'_>) -> Result<Value> {
    if super::convcode::wants_convcode(args) {
        return super::convcode::open(b, args).await;
    }
    let path = b.ws().resolve(args.str("path")?);
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

pub async fn close(b: &Backend, args: &Args<'_>) -> Result<Value> {
    args.none()?;
    b.ws().replay.close();
    b.after_change(Notify::Always).await;
    Ok(b.ws().info())
}
