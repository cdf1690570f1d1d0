//! The `LanguageServer` implementation: shared state and the routing of each LSP method to
//! its handler file. Handlers lock the workspace only for synchronous work, never across
//! an `.await`, so edits are applied in the order they arrive.

use super::publish::{self, DocDiagnostics};
use super::workspace::state_file::{self, SavedState};
use super::workspace::Workspace;
use super::{code_action, code_lens, commands, hover, sync};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

pub struct Backend {
    pub client: Client,
    /// Shared with the background analyses of edits (`publish_later`).
    ws: Arc<Mutex<Workspace>>,
    /// Held from computing diagnostics to sending them, so that what reaches the client
    /// last is computed last: an edit's background publish, an open, a close, a change of
    /// session or a test run.
    publish_turn: Arc<tokio::sync::Mutex<()>>,
    /// Serialises state-file writes so the last write holds the latest state.
    save_lock: tokio::sync::Mutex<()>,
    /// This server's state as of its last write (or start-up): what it changed since is
    /// what it merges into the file (state_file::merge), so other windows' writes survive.
    saved_base: Mutex<SavedState>,
    /// Held for the whole of each command that reads or changes the session state, so that
    /// commands sent back to back apply in the order sent (requests run concurrently, and
    /// tokio's mutex hands the lock out first come, first served).
    pub command_lock: tokio::sync::Mutex<()>,
    /// Cancel flags of running work-done progress, by token.
    pub cancels: Mutex<HashMap<String, Arc<AtomicBool>>>,
    startup_problems: Mutex<Vec<String>>,
    pub client_progress: AtomicBool,
    pub progress_seq: AtomicU64,
    /// The client accepts `workspace/codeLens/refresh`.
    lens_refresh: AtomicBool,
    /// A headless client (`check`, `--via-lsp`) said `initializationOptions.pivot.headless`:
    /// the workspace's `.pivot/` state and `pivots.toml` are neither read at start-up nor
    /// written; the client names its pivot sources (`pivot/headless/setup`). A repository
    /// under check must not make the server read what its state file names. Nor does a
    /// close clear a document's diagnostics: such a client shows nothing.
    pub headless: AtomicBool,
}

/// When to send `pivot/sessionChanged` after a change.
#[derive(Clone, Copy)]
pub enum Notify {
    /// If (index, count) differs from this.
    IfMoved((usize, usize)),
    /// Always (a new conversation, even of the same length).
    Always,
}

/// `pivot/sessionChanged`: sent after every change of session (and once after start-up).
pub enum SessionChanged {}

#[derive(Debug, Serialize, Deserialize)]
pub struct SessionChangedParams {
    pub index: usize,
    pub count: usize,
}

impl Notification for SessionChanged {
    type Params = SessionChangedParams;
    const METHOD: &'static str = "pivot/sessionChanged";
}

impl Backend {
    pub fn new(client: Client) -> Backend {
        Backend {
            client,
            ws: Arc::new(Mutex::new(Workspace::default())),
            publish_turn: Arc::new(tokio::sync::Mutex::new(())),
            save_lock: tokio::sync::Mutex::new(()),
            saved_base: Mutex::new(SavedState::default()),
            command_lock: tokio::sync::Mutex::new(()),
            cancels: Mutex::new(HashMap::new()),
            startup_problems: Mutex::new(Vec::new()),
            client_progress: AtomicBool::new(false),
            progress_seq: AtomicU64::new(0),
            lens_refresh: AtomicBool::new(false),
            headless: AtomicBool::new(false),
        }
    }

    /// Ask the client to re-request code lenses (after a test run), when it supports that.
    /// Not awaited: the answer does not matter and must not hold up the command.
    pub fn refresh_code_lenses(&self) {
        if self.lens_refresh.load(Ordering::SeqCst) {
            let client = self.client.clone();
            tokio::spawn(async move {
                let _ = client.code_lens_refresh().await;
            });
        }
    }

    /// The workspace, locked. A handler that panicked cannot leave it unusable.
    pub fn ws(&self) -> MutexGuard<'_, Workspace> {
        lock(&self.ws)
    }

    /// The turn to publish diagnostics (see `publish_turn`).
    pub async fn publish_turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.publish_turn.lock().await
    }

    /// Publish what `compute` returns from the workspace, in turn with every other publish.
    pub async fn publish_with(&self, compute: impl FnOnce(&mut Workspace) -> Vec<DocDiagnostics>) {
        let _turn = self.publish_turn().await;
        let items = compute(&mut self.ws());
        publish::send(&self.client, items).await;
    }

    /// The diagnostics of document `key` at `version`, analysed and published in the
    /// background, so that `didChange` returns once the text is edited. A later edit makes
    /// this one stale: if the version has moved on when its turn comes, it does nothing
    /// (the later edit's own publish follows).
    pub fn publish_later(&self, key: String, version: i32) {
        let ws = Arc::clone(&self.ws);
        let turn = Arc::clone(&self.publish_turn);
        let client = self.client.clone();
        tokio::spawn(async move {
            // The messages already read go first: a close or a later edit makes this stale.
            tokio::task::yield_now().await;
            let _turn = turn.lock().await;
            // Analysed on this worker thread, as a handler would: a blocking-pool thread per
            // analysis made `check` a fifth slower (a thread hand-off per document, and trees
            // allocated on one thread and freed on another).
            let diags = {
                let ws = lock(&ws);
                let current = ws.docs.get(&key).is_some_and(|d| d.version == version);
                current.then(|| publish::for_doc(&ws, &key)).flatten()
            };
            publish::send(&client, diags.into_iter().collect()).await;
        });
    }

    /// (session index, session count): compared before and after a command.
    pub fn session_key(&self) -> (usize, usize) {
        let ws = self.ws();
        (ws.replay.index(), ws.replay.count())
    }

    /// After the pivots or the session changed: tell the client about a new session,
    /// republish every open document's diagnostics, and save the state.
    pub async fn after_change(&self, notify: Notify) {
        let after = self.session_key();
        let changed = match notify {
            Notify::IfMoved(before) => after != before,
            Notify::Always => true,
        };
        if changed {
            self.notify_session(after).await;
        }
        self.publish_with(|ws| publish::for_all(ws)).await;
        self.persist().await;
    }

    pub async fn notify_session(&self, (index, count): (usize, usize)) {
        self.client
            .send_notification::<SessionChanged>(SessionChangedParams { index, count })
            .await;
    }

    /// Write `.pivot/state.json`; a failure is shown to the user, not fatal.
    pub async fn persist(&self) {
        if self.headless.load(Ordering::SeqCst) {
            return;
        }
        let _guard = self.save_lock.lock().await;
        let (root, state) = {
            let ws = self.ws();
            (ws.root.clone(), ws.saved_state())
        };
        let Some(root) = root else { return };
        let base = self
            .saved_base
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let mine = state.clone();
        let r =
            tokio::task::spawn_blocking(move || state_file::save_merged(&root, &base, &mine)).await;
        let problem = match r {
            Ok(Ok(_)) => {
                *self.saved_base.lock().unwrap_or_else(|e| e.into_inner()) = state;
                return;
            }
            Ok(Err(e)) => format!("{e:#}"),
            Err(e) => format!("saving the state failed: {e}"),
        };
        self.client
            .show_message(MessageType::WARNING, format!("pivot: {problem}"))
            .await;
    }

    /// `window/workDoneProgress/cancel`.
    pub async fn cancel_progress(&self, params: WorkDoneProgressCancelParams) {
        let key = token_key(&params.token);
        if let Some(flag) = self
            .cancels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            flag.store(true, Ordering::SeqCst);
        }
    }
}

/// `ws` locked, also after a panic while it was held (see `Backend::ws`).
fn lock(ws: &Mutex<Workspace>) -> MutexGuard<'_, Workspace> {
    ws.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn token_key(t: &ProgressToken) -> String {
    match t {
        NumberOrString::Number(n) => format!("n:{n}"),
        NumberOrString::String(s) => format!("s:{s}"),
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
        self.client_progress.store(progress, Ordering::SeqCst);
        let refresh = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.code_lens.as_ref())
            .and_then(|c| c.refresh_support)
            .unwrap_or(false);
        self.lens_refresh.store(refresh, Ordering::SeqCst);
        let headless = params
            .initialization_options
            .as_ref()
            .and_then(|o| o.get("pivot"))
            .and_then(|p| p.get("headless"))
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        self.headless.store(headless, Ordering::SeqCst);
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
            let mut ws = self.ws();
            match ws.load_toml() {
                Ok((_, warnings)) => problems.extend(warnings),
                Err(e) => problems.push(format!("{e:#}")),
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
            *self.saved_base.lock().unwrap_or_else(|e| e.into_inner()) = ws.saved_state();
            let dups = ws.replay.duplicate_ids();
            if !dups.is_empty() {
                problems.push(format!(
                    "pivot ids given by more than one source: {}",
                    dups.join(", ")
                ));
            }
        }
        *self
            .startup_problems
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = problems;
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
        let problems = std::mem::take(
            &mut *self
                .startup_problems
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
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
        let ws = self.ws();
        // Under the lock, so that the test also sees a poisoned lock taken again.
        super::catch::test_panic("textDocument/hover");
        Ok(hover::hover(&ws, params))
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        Ok(code_action::code_actions(&self.ws(), params))
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        Ok(code_lens::code_lenses(&self.ws(), params))
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
