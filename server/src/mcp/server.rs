//! The MCP server: its tools (rmcp's `#[tool_router]`), its two resources, and the
//! translation of the agent workspace's replies into MCP results.

use pivot_workspace::agent::Agent;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex, PoisonError};

const PIVOTS_URI: &str = "pivot://pivots";
const TIMELINE_URI: &str = "pivot://timeline";

const INSTRUCTIONS: &str = "Pivot LSP checks Python code against the team's coding \
instructions in force (pivots, from pivots.toml and its history). Call list_pivots before \
writing code, check_path (or check_code) after each edit, and explain_finding for a finding's \
code. Findings are those of `pivot-lsp check` and of the editor.";

#[derive(Clone)]
pub struct PivotMcp {
    agent: Arc<Mutex<Agent>>,
    #[allow(dead_code)] // read by the code `#[tool_handler]` generates
    tool_router: ToolRouter<Self>,
}

#[derive(Deserialize, JsonSchema)]
pub struct NoArgs {}

#[derive(Deserialize, JsonSchema)]
pub struct PathArgs {
    /// A Python file or a folder, relative to the workspace root (or absolute inside it).
    pub path: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct CodeArgs {
    /// Python source to check (at most the analysis limit, 4 MiB by default).
    pub code: String,
    /// The file the code is meant for, relative to the root: pivots scoped to files apply
    /// as they would to it. Nothing is read from it.
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
pub struct ExplainArgs {
    /// A finding's `code`: a pivot id, `syntax-error` or `unused-suppression`.
    pub code: String,
}

/// A reply as a tool result: its JSON as structured content (and text), or the refusal.
fn result<T: Serialize>(r: Result<T, String>) -> Result<CallToolResult, ErrorData> {
    match r {
        Ok(v) => {
            let v = serde_json::to_value(v)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            Ok(CallToolResult::structured(v))
        }
        Err(message) => Ok(CallToolResult::error(vec![ContentBlock::text(message)])),
    }
}

impl PivotMcp {
    pub fn new(agent: Agent) -> PivotMcp {
        PivotMcp {
            agent: Arc::new(Mutex::new(agent)),
            tool_router: Self::tool_router(),
        }
    }

    /// `f` on the agent workspace, on the blocking pool (a folder's check reads files).
    async fn with_agent<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Agent) -> T + Send + 'static,
    ) -> Result<T, ErrorData> {
        let agent = Arc::clone(&self.agent);
        tokio::task::spawn_blocking(move || {
            let mut a = agent.lock().unwrap_or_else(PoisonError::into_inner);
            f(&mut a)
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the check failed: {e}"), None))
    }
}

#[tool_router]
impl PivotMcp {
    #[tool(
        description = "The pivots (coding instructions) in force: for each, the version in force \
        (instruction text, object kind, rule in words, session given), every earlier version, \
        the line of pivots.toml where each is written, and the commits that changed pivots.toml."
    )]
    async fn list_pivots(
        &self,
        Parameters(NoArgs {}): Parameters<NoArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        result(Ok(self.with_agent(|a| a.pivots()).await?))
    }

    #[tool(
        description = "Check a Python file or a folder (walked as `pivot-lsp check` walks it) \
        against the pivots in force. Returns the findings (path, range, severity, source, code \
        = the pivot id, message) exactly as `pivot-lsp check --format json` reports them, and \
        the files under a folder that could not be checked."
    )]
    async fn check_path(
        &self,
        Parameters(PathArgs { path }): Parameters<PathArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        result(self.with_agent(move |a| a.check_path(&path)).await?)
    }

    #[tool(
        description = "Check a string of Python code against the pivots in force, as the file \
        `path` (optional) would be checked with that text. Returns the findings as check_path does."
    )]
    async fn check_code(
        &self,
        Parameters(CodeArgs { code, path }): Parameters<CodeArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        result(
            self.with_agent(move |a| a.check_code(code, path.as_deref()))
                .await?,
        )
    }

    #[tool(
        description = "Explain a finding by its code (a pivot id, syntax-error or \
        unused-suppression): the instruction in force, where and when it was given, the \
        versions it replaces, and how to fix or suppress the finding."
    )]
    async fn explain_finding(
        &self,
        Parameters(ExplainArgs { code }): Parameters<ExplainArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        result(self.with_agent(move |a| a.explain(&code)).await?)
    }
}

#[tool_handler]
impl ServerHandler for PivotMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("pivot-lsp", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(PIVOTS_URI, "pivots")
                .with_description("The pivots in force, with their history and source lines")
                .with_mime_type("application/json"),
            Resource::new(TIMELINE_URI, "timeline")
                .with_description(
                    "The sessions: for each, its commit of pivots.toml and the pivot changes it made",
                )
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let json = match uri.as_str() {
            PIVOTS_URI => {
                self.with_agent(|a| serde_json::to_string_pretty(&a.pivots()))
                    .await?
            }
            TIMELINE_URI => {
                self.with_agent(|a| serde_json::to_string_pretty(&a.timeline()))
                    .await?
            }
            _ => {
                return Err(ErrorData::resource_not_found(
                    format!("no resource {uri:?}; there are {PIVOTS_URI} and {TIMELINE_URI}"),
                    None,
                ))
            }
        }
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let contents = ResourceContents::text(json, uri).with_mime_type("application/json");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}
