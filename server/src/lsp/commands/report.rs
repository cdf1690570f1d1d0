//! `pivot.report.open {"inputs": [paths], "title"?}`: the HTML report of `pivot-lsp report`
//! written to `.pivot/report.html` in the workspace; returns its path for the editor to show.

use super::Args;
use crate::lsp::convert::request_failed;
use crate::lsp::server::Backend;
use serde_json::{json, Value};
use std::path::PathBuf;
use tower_lsp_server::jsonrpc::Result;

pub async fn open(b: &Backend, args: &Args<'_>) -> Result<Value> {
    let list = match args.value("inputs")? {
        Value::Array(a) if !a.is_empty() => a,
        other => {
            return Err(args.error(&format!(
                "`inputs` must be a non-empty list of score file paths, got {other}"
            )))
        }
    };
    let title = args.opt_str("title")?.map(str::to_string);
    let (paths, out) = {
        let ws = b.ws();
        let root = ws.root.clone().ok_or_else(|| {
            args.error("no workspace folder is open: the report goes to its .pivot/report.html")
        })?;
        let mut paths: Vec<PathBuf> = Vec::new();
        for v in list {
            match v.as_str() {
                Some(s) if !s.is_empty() => paths.push(ws.resolve(s)),
                _ => {
                    return Err(args.error(&format!(
                        "every entry of `inputs` must be a path string, got {v}"
                    )))
                }
            }
        }
        (paths, root.join(".pivot").join("report.html"))
    };
    let n = paths.len();
    let written = out.clone();
    tokio::task::spawn_blocking(move || -> anyhow::Result<()> {
        let inputs = crate::report::read_inputs(&paths)?;
        let html = crate::report::build(&inputs, title.as_deref())?;
        crate::report::write(&written, &html)
    })
    .await
    .map_err(|e| request_failed(format!("building the report failed: {e}")))?
    .map_err(|e| request_failed(format!("{e:#}")))?;
    Ok(json!({"path": out.display().to_string(), "inputs": n}))
}
