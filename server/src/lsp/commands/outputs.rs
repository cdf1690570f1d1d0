//! `pivot.outputs.check`: a model's answers for the open conversation, scored per session
//! and answer by the core's MemoryCode scorer.

use super::{Args, Text};
use crate::lsp::convert::request_failed;
use crate::lsp::session::Session;
use pivot_workspace::outputs_check::check_outputs;
use pivot_workspace::replies::OutputsChecked;
use schemars::JsonSchema;
use serde::Deserialize;
use tower_lsp_server::jsonrpc::Result;

/// `pivot.outputs.check`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckArgs {
    path: Text,
}

pub async fn check(b: &Session, args: &Args<'_>, a: CheckArgs) -> Result<OutputsChecked> {
    // In order with the session commands for the conversation it checks against; the
    // output file is read and scored after the lock is released, blocking no command.
    let (path, conv) = {
        let _in_order = b.in_order().await;
        let ws = b.ws_read();
        let path = ws.resolve(&a.path);
        let conv = ws
            .replay
            .conversation()
            .map(|c| (c.dialogue.clone(), c.path.clone(), c.ledger.clone()));
        (path, conv)
    };
    let (dialogue, dpath, ledger) = conv.ok_or_else(|| {
        args.error("no MemoryCode conversation is open; open its dialogue with pivot.conversation.open first")
    })?;
    tokio::task::spawn_blocking(move || check_outputs(&dialogue, &dpath, &ledger, &path))
        .await
        .map_err(|e| request_failed(format!("checking outputs failed: {e}")))?
        .map_err(|e| request_failed(format!("{e:#}")))
}
