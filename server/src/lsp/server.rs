//! The `LanguageServer` implementation: routing each LSP method to its handler file, which
//! receives the `Session` (session.rs). Handlers lock the workspace only for synchronous
//! work, never across an `.await`, so edits are applied in the order they arrive.

use super::session::{ClientCaps, Session};
use super::{code_action, code_lens, commands, hover, sync};
use pivot_workspace::replies::{AnswerVerdicts, HeadlessSetup};
use pivot_workspace::state_file;
use pivot_workspace::Workspace;
use serde_json::Value;
use std::path::PathBuf;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

/// The server tower-lsp-server drives: the session, and the routing.
pub struct Backend(Session);

impl std::ops::Deref for Backend {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.0
    }
}

impl Backend {
    pub fn new(client: Client) -> Backend {
        Backend(Session::new(client))
    }

    /// `window/workDoneProgress/cancel`.
    pub async fn cancel_progress(&self, params: WorkDoneProgressCancelParams) {
        self.0.cancel_progress(params).await
    }

    /// `pivot/headless/setup` (commands/headless.rs).
    pub async fn headless_setup(&self, params: Value) -> Result<HeadlessSetup> {
        self.0.headless_setup(params).await
    }

    /// `pivot/memorycode/answers` (commands/headless.rs).
    pub async fn memorycode_answers(&self, params: Value) -> Result<AnswerVerdicts> {
        self.0.memorycode_answers(params).await
    }
}

/// The workspace root: the first workspace folder, else the (deprecated) root URI.
fn root_of(params: &InitializeParams) -> Option<PathBuf> {
    #[allow(deprecated)]
    let uri = params
        .workspace_folders
        .as_ref()
        .and_then(|f| f.first())
        .map(|f| f.uri.clone())
        .or_else(|| params.root_uri.clone())?;
    uri.to_file_path().map(|p| p.into_owned())
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let root = root_of(&params);
        let progress = params
            .capabilities
            .window
            .as_ref()
            .and_then(|w| w.work_done_progress)
            .unwrap_or(false);
        let refresh = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.code_lens.as_ref())
            .and_then(|c| c.refresh_support)
            .unwrap_or(false);
        let headless = params
            .initialization_options
            .as_ref()
            .and_then(|o| o.get("pivot"))
            .and_then(|p| p.get("headless"))
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        self.set_caps(ClientCaps {
            progress,
            lens_refresh: refresh,
            headless,
        });
        let mut problems = Vec::new();
        {
            let mut ws = self.ws();
            *ws = Workspace::new(root);
            if let Some(opts) = &params.initialization_options {
                let root = ws.root.clone();
                if let Err(e) = ws.settings.update(opts, root.as_deref()) {
                    problems.push(format!("{e:#}"));
                }
                if let Some(l) = &ws.settings.log_level {
                    if let Err(e) = super::log::set_level(l) {
                        problems.push(e);
                    }
                }
            }
        }
        if !headless {
            // Read (with history, the walk of the git history) on the blocking pool, under no
            // lock, as a save's reload is.
            let source = self.ws().toml_source();
            let read =
                tokio::task::spawn_blocking(move || pivot_workspace::read_toml(&source)).await;
            let mut ws = self.ws();
            match read {
                Ok(Ok(read)) => problems.extend(ws.apply_toml(read).unwrap_or_default().1),
                Ok(Err(e)) => problems.push(format!("{e:#}")),
                Err(e) => problems.push(format!("reading the pivots file failed: {e}")),
            }
            if let Some(root) = ws.root.clone() {
                let pivot_dir = state_file::state_path(&root).with_file_name("");
                if pivot_dir.is_dir() {
                    match state_file::lock(&root) {
                        Ok(l) => {
                            state_file::remove_stale_temp_files(&root, &l);
                        }
                        Err(e) => problems.push(format!("{e:#}")),
                    }
                }
            }
            problems.extend(ws.restore());
            self.set_saved_base(ws.saved_state());
            let dups = ws.replay.duplicate_ids();
            if !dups.is_empty() {
                problems.push(format!(
                    "pivot ids given by more than one source: {}",
                    dups.join(", ")
                ));
            }
        }
        self.set_startup_problems(problems);
        Ok(InitializeResult {
            capabilities: capabilities(),
            server_info: Some(ServerInfo {
                name: "pivot-lsp".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            ..InitializeResult::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        let problems = self.take_startup_problems();
        for p in problems {
            self.client
                .show_message(MessageType::WARNING, format!("pivot: {p}"))
                .await;
        }
        let key = self.session_key();
        self.notify_session(key).await;
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        sync::did_open(self, params).await
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        sync::did_change(self, params).await
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        sync::did_close(self, params).await
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        sync::did_save(self, params).await
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        sync::did_change_watched_files(self, params).await
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let ws = self.ws_read();
        // Under the lock, so that the test also sees the lock taken again after a panic.
        super::catch::test_panic("textDocument/hover");
        Ok(hover::hover(&ws, params))
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        Ok(code_action::code_actions(&self.ws_read(), params))
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        Ok(code_lens::code_lenses(&self.ws_read(), params))
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        sync::did_change_configuration(self, params).await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        commands::execute(self, params).await.map(Some)
    }
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                ..TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        code_lens_provider: Some(CodeLensOptions {
            resolve_provider: Some(false),
        }),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..CodeActionOptions::default()
        })),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: commands::COMMANDS.iter().map(|c| c.to_string()).collect(),
            work_done_progress_options: WorkDoneProgressOptions {
                work_done_progress: Some(true),
            },
        }),
        ..ServerCapabilities::default()
    }
}
