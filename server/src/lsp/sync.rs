//! Document synchronisation: open, incremental change, close, save. Each change is applied
//! to the document before the handler's first `.await`, so edits keep their order.

use super::convert;
use super::session::{Notify, Session};
use pivot_workspace::document::{Change, Reparse};
use tower_lsp_server::ls_types::*;

fn is_python(uri: &Uri, language_id: &str) -> bool {
    let path = uri.path().as_str();
    language_id == "python" || path.ends_with(".py") || path.ends_with(".pyi")
}

pub async fn did_open(b: &Session, p: DidOpenTextDocumentParams) {
    let d = p.text_document;
    if !is_python(&d.uri, &d.language_id) {
        return;
    }
    let key = d.uri.as_str().to_string();
    // Analysed and published in the background as an edit is; a document closed before
    // its turn (a headless client's open, request, close) is never published.
    b.ws().open(key.clone(), d.text, d.version);
    b.publish_later(key, d.version);
}

/// The edit only: the analysis and the publish follow in the background
/// (`Session::publish_later`), and a request meanwhile analyses what it reads.
pub async fn did_change(b: &Session, p: DidChangeTextDocumentParams) {
    let key = p.text_document.uri.as_str().to_string();
    let version = p.text_document.version;
    let changes: Vec<Change> = p
        .content_changes
        .into_iter()
        .map(|c| Change {
            range: c
                .range
                .map(|r| (convert::utf16(r.start), convert::utf16(r.end))),
            text: c.text,
        })
        .collect();
    {
        let mut ws = b.ws();
        let Some(doc) = ws.docs.get_mut(&key) else {
            return;
        };
        doc.edit(&changes, version, Reparse::Incremental);
    }
    b.publish_later(key, version);
}

pub async fn did_close(b: &Session, p: DidCloseTextDocumentParams) {
    let key = p.text_document.uri.as_str().to_string();
    // In turn with the publishes, so that none of this document's comes after the clearing.
    let _turn = b.publish_turn().await;
    let shown = b.ws().close(&key);
    // A headless client shows nothing, so there is nothing to clear for it.
    if shown && !b.headless.load(std::sync::atomic::Ordering::SeqCst) {
        // Clear what was shown for it.
        b.client
            .publish_diagnostics(p.text_document.uri, Vec::new(), None)
            .await;
    }
}

/// New settings (the `pivot` object, as in `initializationOptions`); a bad value is shown
/// and the settings before stay in force.
pub async fn did_change_configuration(b: &Session, p: DidChangeConfigurationParams) {
    let (r, history_changed) = {
        let mut ws = b.ws();
        let root = ws.root.clone();
        let before = ws.settings.history;
        let r = ws.settings.update(&p.settings, root.as_deref());
        if let Some(l) = &ws.settings.log_level {
            let _ = super::log::set_level(l);
        }
        (r, ws.settings.history != before)
    };
    if let Err(e) = r {
        b.client
            .show_message(MessageType::WARNING, format!("pivot: {e:#}"))
            .await;
    }
    // The sessions themselves change: from the file's numbers to its commits, or back.
    if history_changed {
        let _ = reload_toml(b).await;
    }
}

/// Saving `pivots.toml` reloads the workspace pivots.
pub async fn did_save(b: &Session, p: DidSaveTextDocumentParams) {
    reload_if_toml(b, [&p.text_document.uri]).await;
}

pub async fn did_change_watched_files(b: &Session, p: DidChangeWatchedFilesParams) {
    reload_if_toml(b, p.changes.iter().map(|c| &c.uri)).await;
}

async fn reload_if_toml<'a>(b: &Session, uris: impl IntoIterator<Item = &'a Uri>) {
    let toml = b.ws().toml_path();
    let Some(toml) = toml else { return };
    let hit = uris.into_iter().any(|u| {
        u.to_file_path()
            .is_some_and(|p| p.as_ref() == toml.as_path())
    });
    if hit {
        let _ = reload_toml(b).await;
    }
}

/// Re-read `pivots.toml` (and its history, with the setting on); errors and warnings are
/// shown, and after an error the pivots read before stay in force.
pub async fn reload_toml(b: &Session) -> Result<usize, String> {
    let before = b.session_key();
    let r = b.ws().load_toml().map_err(|e| format!("{e:#}"));
    match r {
        Ok((n, warnings)) => {
            b.after_change(Notify::IfMoved(before)).await;
            for w in warnings {
                b.client
                    .show_message(MessageType::WARNING, format!("pivot: {w}"))
                    .await
            }
            Ok(n)
        }
        Err(e) => {
            b.client
                .show_message(MessageType::WARNING, format!("pivot: {e}"))
                .await;
            Err(e)
        }
    }
}
