//! The MCP face: `pivot-lsp mcp`, a Model Context Protocol server on stdio for coding agents,
//! built on the official Rust SDK (rmcp). It translates tool calls and resource reads into
//! calls on `pivot_workspace::agent::Agent` and its replies into MCP results, and holds no
//! pivot logic: the findings are those of `check` and the editor (one engine).
//!
//! Tools: `list_pivots`, `check_path` (a file or a folder), `check_code` (a code string),
//! `explain_finding`. Resources: `pivot://pivots` (the pivots in force) and
//! `pivot://timeline` (the sessions). A refused input (a code string over the analysis limit,
//! a path outside the root or through a symlink out of it, a FIFO or device) is a tool
//! result with `isError` and the reason, which the agent's model reads; a malformed call is a
//! JSON-RPC error.

mod server;

use anyhow::{Context, Result};
use rmcp::ServiceExt;
use std::path::Path;

/// Serve MCP on stdin / stdout until the client closes them; `root` is the workspace root.
pub fn run_stdio(root: &Path) -> Result<()> {
    let agent = pivot_workspace::agent::Agent::new(root)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the MCP server's runtime")?;
    rt.block_on(async move {
        let service = server::PivotMcp::new(agent)
            .serve(rmcp::transport::stdio())
            .await
            .context("the MCP client's initialization failed")?;
        service.waiting().await.context("the MCP session ended")?;
        Ok(())
    })
}
