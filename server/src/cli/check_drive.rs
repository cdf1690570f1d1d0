//! `pivot-lsp check`'s use of the language server: each worker starts `pivot-lsp serve`,
//! sets up the pivot sources, opens its share of the files one by one as an editor does
//! (`didOpen`, wait for `publishDiagnostics`, `didClose`) and shuts the server down. The
//! diagnostics are kept exactly as published.

use super::check_client::{uri_of, LspClient};
use super::check_walk::SourceFile;
use anyhow::{anyhow, Result};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::Path;

/// Documents open at once in one server: enough to keep it busy while we read its
/// answers, few enough that it never holds much of a large tree in memory.
const WINDOW: usize = 32;

pub struct Driven {
    /// What `pivot/headless/setup` returned (active pivots, errors, warnings).
    pub setup: Value,
    /// Per file (in the order given), the diagnostics the server published.
    pub diagnostics: Vec<Vec<Value>>,
    /// Messages the server showed.
    pub messages: Vec<String>,
}

/// Check `files` with `jobs` servers at once; `on_file` is called after each file.
pub fn drive(
    root: &Path,
    setup: &Value,
    files: &[SourceFile],
    jobs: usize,
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
            .map(|share| s.spawn(move || one_server(root, setup, files, share, on_file)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("a language-server worker panicked")))
            })
            .collect()
    });
    let mut diagnostics = vec![Vec::new(); files.len()];
    let mut setup_out = Value::Null;
    let mut messages = Vec::new();
    for r in results {
        let (s, per_file, m) = r?;
        setup_out = s;
        for (i, d) in per_file {
            diagnostics[i] = d;
        }
        for msg in m {
            if !messages.contains(&msg) {
                messages.push(msg);
            }
        }
    }
    if setup_out.is_null() {
        // No file to check: the setup still tells the active pivots and any error.
        let mut c = LspClient::start(root)?;
        setup_out = c.request(crate::lsp::HEADLESS_SETUP, setup.clone())?;
        messages.append(&mut c.messages);
        c.finish()?;
    }
    Ok(Driven {
        setup: setup_out,
        diagnostics,
        messages,
    })
}

type ServerResult = (Value, Vec<(usize, Vec<Value>)>, Vec<String>);

fn one_server(
    root: &Path,
    setup: &Value,
    files: &[SourceFile],
    share: &[usize],
    on_file: &(dyn Fn() + Sync),
) -> Result<ServerResult> {
    if share.is_empty() {
        return Ok((Value::Null, Vec::new(), Vec::new()));
    }
    let mut c = LspClient::start(root)?;
    let setup_out = c.request(crate::lsp::HEADLESS_SETUP, setup.clone())?;
    let mut pending: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::with_capacity(share.len());
    let mut next = 0;
    while out.len() < share.len() {
        while next < share.len() && pending.len() < WINDOW {
            let i = share[next];
            let uri = uri_of(&files[i].abs)?;
            c.notify(
                "textDocument/didOpen",
                json!({"textDocument": {
                    "uri": uri, "languageId": "python", "version": 1, "text": files[i].text,
                }}),
            )?;
            pending.insert(uri, i);
            next += 1;
        }
        c.flush()?;
        let msg = c.recv()?;
        if msg.get("method").and_then(Value::as_str) != Some("textDocument/publishDiagnostics") {
            continue;
        }
        let p = &msg["params"];
        let Some(uri) = p["uri"].as_str() else {
            continue;
        };
        // A publish for a document already closed (its clearing) is not ours to keep.
        let Some(i) = pending.remove(uri) else {
            continue;
        };
        let diags = p["diagnostics"].as_array().cloned().unwrap_or_default();
        out.push((i, diags));
        c.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        )?;
        on_file();
    }
    let messages = std::mem::take(&mut c.messages);
    c.finish()?;
    Ok((setup_out, out, messages))
}
