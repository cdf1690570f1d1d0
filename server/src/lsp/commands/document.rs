//! `pivot.document.inspect`: the server's view of an open document (its text as the edits
//! left it, version, syntax verdict), for clients and tests to check synchronisation.

use super::Args;
use crate::lsp::server::Backend;
use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::Result;

pub fn inspect(b: &Backend, args: &Args<'_>) -> Result<Value> {
    let uri = args.str("uri")?;
    let ws = b.ws();
    let doc = ws
        .docs
        .get(uri)
        .ok_or_else(|| args.error(&format!("`{uri}` is not an open Python document")))?;
    Ok(json!({
        "uri": uri,
        "version": doc.version,
        "text": doc.client_text(),
        "lines": doc.line_count(),
        "syntax_error": doc.module().syntax_error.as_ref().map(|e| e.to_string()),
    }))
}
