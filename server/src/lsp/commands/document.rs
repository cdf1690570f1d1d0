//! `pivot.document.inspect`: the server's view of an open document (its text as the edits
//! left it, version, syntax verdict), for clients and tests to check synchronisation.

use super::{Args, Text};
use crate::lsp::session::Session;
use pivot_workspace::replies::Inspected;
use schemars::JsonSchema;
use serde::Deserialize;
use tower_lsp_server::jsonrpc::Result;

/// `pivot.document.inspect`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InspectArgs {
    uri: Text,
}

pub fn inspect(b: &Session, args: &Args<'_>, a: InspectArgs) -> Result<Inspected> {
    let uri = &*a.uri;
    let ws = b.ws_read();
    let doc = ws
        .docs
        .get(uri)
        .ok_or_else(|| args.error(&format!("`{uri}` is not an open Python document")))?;
    Ok(Inspected {
        uri: uri.to_string(),
        version: doc.version,
        text: doc.client_text().to_string(),
        lines: doc.line_count(),
        syntax_error: doc.module().syntax_error.as_ref().map(|e| e.to_string()),
    })
}
