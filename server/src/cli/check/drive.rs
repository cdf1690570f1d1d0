//! `pivot-lsp check`'s use of the language server: each worker starts `pivot-lsp serve`,
//! sets up the pivot sources, opens its share of the files one by one as an editor does
//! (`didOpen`, wait for `publishDiagnostics`, `didClose`) and shuts the server down. The
//! diagnostics are kept exactly as published.

use crate::cli::shared::lsp_client::{uri_of, LspClient};
use crate::lsp::SetupArgs;
use anyhow::{anyhow, Result};
use pivot_workspace::replies::HeadlessSetup;
use pivot_workspace::walk::{read_source, SourceFile};
use serde_json::json;
use std::collections::HashMap;
use std::path::Path;
use tower_lsp_server::ls_types::Diagnostic;

/// Documents open at once in one server: enough to keep it busy while we read its
/// answers, few enough that it never holds much of a large tree in memory.
const WINDOW: usize = 32;

pub struct Driven {
    /// What `pivot/headless/setup` returned (active pivots, errors, warnings).
    pub setup: HeadlessSetup,
    /// Per file (in the order given): what the server published for it, or why it was
    /// not checked (it could not be read).
    pub results: Vec<Checked>,
    /// Messages the server showed.
    pub messages: Vec<String>,
}

/// One file's outcome.
#[derive(Clone, Debug)]
pub enum Checked {
    /// The diagnostics published, and the SHA-256 of the text checked (for the bundle).
    Published {
        diagnostics: Vec<Diagnostic>,
        sha256: String,
    },
    NotChecked(String),
}

/// Check `files` with `jobs` servers at once; `on_file` is called after each file. Each
/// file is read (through the bounded reader, at most `max_bytes`) just before it is
/// opened, so no more than the open window of texts is held at once.
pub fn drive(
    root: &Path,
    setup: &SetupArgs,
    files: &[SourceFile],
    jobs: usize,
    max_bytes: u64,
    on_file: &(dyn Fn() + Sync),
) -> Result<Driven> {
    let jobs = jobs.clamp(1, files.len().max(1));
    // Round-robin shares of the sorted list spread big and small folders over the servers.
    let shares: Vec<Vec<usize>> = (0..jobs)
        .map(|j| (j..files.len()).step_by(jobs).collect())
        .collect();
    let results: Vec<Result<ServerResult>> = std::thread::scope(|s| {
        let handles: Vec<_> = shares
            .iter()
            .map(|share| s.spawn(move || one_server(root, setup, files, share, max_bytes, on_file)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("a language-server worker panicked")))
            })
            .collect()
    });
    let mut per_file = vec![Checked::NotChecked(String::new()); files.len()];
    let mut setup_out = None;
    let mut messages = Vec::new();
    for r in results {
        let (s, done, m) = r?;
        if s.is_some() {
            setup_out = s;
        }
        for (i, d) in done {
            per_file[i] = d;
        }
        for msg in m {
            if !messages.contains(&msg) {
                messages.push(msg);
            }
        }
    }
    let setup_out = match setup_out {
        Some(s) => s,
        None => {
            // No file to check: the setup still tells the active pivots and any error.
            let mut c = LspClient::start_with_limit(root, Some(max_bytes))?;
            let s = c.request_as(
                crate::lsp::HEADLESS_SETUP,
                serde_json::to_value(setup)?,
                &mut |_| {},
            )?;
            messages.append(&mut c.messages);
            c.finish()?;
            s
        }
    };
    Ok(Driven {
        setup: setup_out,
        results: per_file,
        messages,
    })
}

/// One server's set-up (None: it had no file to check), results and messages.
type ServerResult = (Option<HeadlessSetup>, Vec<(usize, Checked)>, Vec<String>);

/// `textDocument/publishDiagnostics`' parameters, as this client needs them (the URI kept as
/// the text it was sent as).
#[derive(serde::Deserialize)]
struct Published {
    uri: String,
    diagnostics: Vec<Diagnostic>,
}

fn one_server(
    root: &Path,
    setup: &SetupArgs,
    files: &[SourceFile],
    share: &[usize],
    max_bytes: u64,
    on_file: &(dyn Fn() + Sync),
) -> Result<ServerResult> {
    if share.is_empty() {
        return Ok((None, Vec::new(), Vec::new()));
    }
    let mut c = LspClient::start_with_limit(root, Some(max_bytes))?;
    let setup_out: HeadlessSetup = c.request_as(
        crate::lsp::HEADLESS_SETUP,
        serde_json::to_value(setup)?,
        &mut |_| {},
    )?;
    // Per open document: its index and the SHA-256 of the text sent.
    let mut pending: HashMap<String, (usize, String)> = HashMap::new();
    let mut out = Vec::with_capacity(share.len());
    let mut next = 0;
    while out.len() < share.len() {
        while next < share.len() && pending.len() < WINDOW {
            let i = share[next];
            next += 1;
            let text = match read_source(&files[i].abs, max_bytes) {
                Ok(t) => t,
                Err(problem) => {
                    out.push((i, Checked::NotChecked(problem)));
                    on_file();
                    continue;
                }
            };
            let uri = uri_of(&files[i].abs)?;
            let sha256 = super::report::sha256_hex(text.as_bytes());
            c.notify(
                "textDocument/didOpen",
                json!({"textDocument": {
                    "uri": uri, "languageId": "python", "version": 1, "text": text,
                }}),
            )?;
            pending.insert(uri, (i, sha256));
        }
        if out.len() == share.len() {
            break;
        }
        c.flush()?;
        let msg = c.recv()?;
        if msg.method.as_deref() != Some("textDocument/publishDiagnostics") {
            continue;
        }
        let Published { uri, diagnostics } = msg.params()?;
        // A publish for a document already closed (its clearing) is not ours to keep.
        let Some((i, sha256)) = pending.remove(&uri) else {
            continue;
        };
        out.push((
            i,
            Checked::Published {
                diagnostics,
                sha256,
            },
        ));
        c.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        )?;
        on_file();
    }
    let messages = std::mem::take(&mut c.messages);
    c.finish()?;
    Ok((Some(setup_out), out, messages))
}
