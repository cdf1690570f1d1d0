//! `pivot-lsp mcp`: the MCP server for coding agents (`server/src/mcp`) on stdio. Flags only.

use anyhow::Result;
use std::path::PathBuf;

/// Serve the Model Context Protocol on stdin / stdout for a coding agent.
#[derive(clap::Args, Debug)]
#[command(
    long_about = "Serve the Model Context Protocol (MCP) on stdin / stdout, for coding agents \
(Claude Code, Codex, Cursor, OpenCode and any other MCP client). Tools: list_pivots (the pivots \
in force, with their versions, source lines and the commits that changed pivots.toml), \
check_path (a file or a folder), check_code (a code string) and explain_finding. Resources: \
pivot://pivots and pivot://timeline. The findings are `pivot-lsp check --format json`'s on the \
same files. Only paths inside the workspace root are read (after symlinks), only regular files, \
and a code string of more than the analysis limit (PIVOT_MAX_ANALYSED_BYTES, 4 MiB) is refused."
)]
pub struct McpArgs {
    /// The workspace root: its pivots.toml applies, and nothing outside it is read
    /// [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

pub fn run(a: McpArgs) -> Result<i32> {
    let root = match a.root {
        Some(r) => r,
        None => std::env::current_dir()?,
    };
    crate::mcp::run_stdio(&root)?;
    Ok(0)
}
