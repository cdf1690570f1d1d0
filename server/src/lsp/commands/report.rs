//! `pivot.report.open {"inputs": [paths], "title"?}`: the HTML report of `pivot-lsp report`
//! written to `.pivot/report.html` in the workspace; returns its path for the editor to show.

use super::{Args, Text};
use crate::lsp::convert::request_failed;
use crate::lsp::session::Session;
use pivot_workspace::replies::ReportOpened;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::PathBuf;
use tower_lsp_server::jsonrpc::Result;

/// `pivot.report.open`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenArgs {
    /// Score files (`score ... --format json`).
    inputs: Vec<Text>,
    title: Option<Text>,
}

pub async fn open(b: &Session, args: &Args<'_>, a: OpenArgs) -> Result<ReportOpened> {
    if a.inputs.is_empty() {
        return Err(args.error("`inputs` must be a non-empty list of score file paths"));
    }
    let title = a.title.map(|t| t.0);
    let (paths, out) = {
        let ws = b.ws_read();
        let root = ws.root.clone().ok_or_else(|| {
            args.error("no workspace folder is open: the report goes to its .pivot/report.html")
        })?;
        let paths: Vec<PathBuf> = a.inputs.iter().map(|p| ws.resolve(p)).collect();
        (paths, root.join(".pivot").join("report.html"))
    };
    let n = paths.len();
    let written = out.clone();
    tokio::task::spawn_blocking(move || -> anyhow::Result<()> {
        let inputs = pivot_report::read_inputs(&paths)?;
        let html = pivot_report::build(&inputs, title.as_deref())?;
        pivot_report::write(&written, &html)
    })
    .await
    .map_err(|e| request_failed(format!("building the report failed: {e}")))?
    .map_err(|e| request_failed(format!("{e:#}")))?;
    Ok(ReportOpened {
        path: out.display().to_string(),
        inputs: n,
    })
}
