//! Diagnostics of open documents, computed from the workspace and sent to the client.

use super::convert;
use pivot_workspace::Workspace;
use std::str::FromStr;
use std::sync::atomic::Ordering;
use tower_lsp_server::ls_types::{Diagnostic, Uri};
use tower_lsp_server::Client;

pub struct DocDiagnostics {
    pub uri: Uri,
    pub version: i32,
    pub diagnostics: Vec<Diagnostic>,
}

/// The diagnostics of one open document under the pivots active now.
pub fn for_doc(ws: &Workspace, key: &str) -> Option<DocDiagnostics> {
    let doc = ws.docs.get(key)?;
    let uri = Uri::from_str(key).ok()?;
    doc.shown.store(true, Ordering::Relaxed);
    let path = uri.to_file_path();
    let found = ws.doc_findings(path.as_deref(), doc);
    let mut diagnostics: Vec<Diagnostic> =
        convert::diagnostics(doc.text(), &found, ws.settings.pivot_severity);
    diagnostics.extend(convert::test_diagnostics(&ws.tests, key, doc.text()));
    Some(DocDiagnostics {
        uri,
        version: doc.version,
        diagnostics,
    })
}

/// Every open document's diagnostics, in URI order.
pub fn for_all(ws: &Workspace) -> Vec<DocDiagnostics> {
    let mut keys: Vec<&String> = ws.docs.keys().collect();
    keys.sort();
    keys.into_iter().filter_map(|k| for_doc(ws, k)).collect()
}

pub async fn send(client: &Client, items: Vec<DocDiagnostics>) {
    for d in items {
        client
            .publish_diagnostics(d.uri, d.diagnostics, Some(d.version))
            .await;
    }
}
