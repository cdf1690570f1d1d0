//! Document synchronisation: open, incremental change, close, save. Each change is applied
//! to the document before the handler's first `.await`, so edits keep their order.

use super::convert;
use super::session::{Notify, Session};
use pivot_workspace::document::{Change, Reparse};
use pivot_workspace::nested::NestedPivots;
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
    let problem = {
        let mut ws = b.ws();
        ws.open(key.clone(), d.text, d.version);
        // A headless client sets the pivots up itself, a nested file's as `check` does.
        match (b.caps().headless, d.uri.to_file_path()) {
            (false, Some(path)) => ws.prepare_nested(&path),
            _ => None,
        }
    };
    b.publish_later(key, d.version);
    if let Some(e) = problem {
        b.client
            .show_message(MessageType::WARNING, format!("pivot: {e}"))
            .await;
    }
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
    if shown && !b.caps().headless {
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
        let before = (ws.settings.history, ws.settings.instructions.clone());
        let r = ws.settings.update(&p.settings, root.as_deref());
        if let Some(l) = &ws.settings.log_level {
            let _ = super::log::set_level(l);
        }
        let after = (ws.settings.history, ws.settings.instructions.clone());
        (r, after != before)
    };
    if let Err(e) = r {
        b.client
            .show_message(MessageType::WARNING, format!("pivot: {e:#}"))
            .await;
    }
    // The sessions themselves change: from the file's numbers to its commits, or back, or
    // the pivots come from another file.
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
    let (toml, root) = {
        let ws = b.ws_read();
        (ws.pivots_source(), ws.root.clone())
    };
    let (Some(toml), Some(root)) = (toml, root) else {
        return;
    };
    let paths: Vec<_> = (uris.into_iter())
        .filter_map(|u| u.to_file_path().map(|p| p.into_owned()))
        .collect();
    if paths
        .iter()
        .any(|p| NestedPivots::is_nested_config(&root, p))
    {
        reload_nested(b).await;
    }
    if paths.iter().any(|p| p == &toml) {
        let _ = reload_toml(b).await;
    }
}

/// A pivots file below the root changed (made, edited or removed): every open document's
/// nested pivots file is looked up and read again, and the diagnostics republished.
async fn reload_nested(b: &Session) {
    reread_nested(b).await;
    b.publish_read(super::publish::for_all).await;
}

/// The nested pivots files of the open documents read again, and their errors shown; the
/// caller republishes (`pivot.pivots.reload` does once, after the root's file too).
pub async fn reread_nested(b: &Session) {
    let problems: Vec<String> = {
        let mut ws = b.ws();
        ws.nested.clear();
        let paths: Vec<_> = (ws.docs.keys())
            .filter_map(|k| {
                k.parse::<Uri>()
                    .ok()?
                    .to_file_path()
                    .map(|p| p.into_owned())
            })
            .collect();
        paths.iter().filter_map(|p| ws.prepare_nested(p)).collect()
    };
    for e in problems {
        b.client
            .show_message(MessageType::WARNING, format!("pivot: {e}"))
            .await;
    }
}

/// Re-read `pivots.toml` (and its history, with the setting on); errors and warnings are
/// shown, and after an error the pivots read before stay in force.
pub async fn reload_toml(b: &Session) -> Result<usize, String> {
    let before = b.session_key();
    // The file and its git history are read on the blocking pool, under no lock: a long
    // history delays neither a hover nor the other async worker. A short write sets it.
    let source = b.ws().toml_source();
    let read = tokio::task::spawn_blocking(move || pivot_workspace::read_toml(&source)).await;
    let r = match read {
        Ok(Ok(read)) => match b.ws().apply_toml(read) {
            Some(applied) => Ok(applied),
            // A later reload is under way: it sets and shows its own.
            None => return Ok(0),
        },
        Ok(Err(e)) => Err(format!("{e:#}")),
        Err(e) => Err(format!("reading the pivots file failed: {e}")),
    };
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
