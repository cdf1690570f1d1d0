//! The server's state as every handler sees it: the workspace behind its lock, the client,
//! and the locks and flags that order the handlers' work. Handlers (commands/, sync.rs,
//! hover.rs, ...) receive a `&Session`; server.rs's `Backend` (the `LanguageServer`
//! implementation) only routes each method to them, so that no handler file needs the
//! routing and the routing needs no handler's internals.
//!
//! **Lock order.** A handler that holds more than one takes them in this order, and never
//! holds the workspace lock (`ws`, a std mutex) across an `.await`:
//! 1. `command_lock` (tokio): a whole session command, so commands apply in the order sent;
//! 2. `publish_turn` (tokio): from computing diagnostics to sending them;
//! 3. `save_lock` (tokio): a state-file write;
//! 4. `ws` (std `RwLock`): the workspace, for synchronous work only. Changes take it to
//!    write; the read-only work (diagnostics, hovers, code actions, lenses) takes it to read
//!    (`ws_read`), so those run beside one another rather than one at a time;
//! 5. `saved_base`, `cancels`, `startup_problems` (std): short, leaf locks.
//!
//! Every std lock is taken with `unwrap_or_else(PoisonError::into_inner)`: a handler that
//! panicked (catch.rs answers for it) leaves them usable. The workspace's own lazy state
//! (a document's analysis, made on first use after an edit) is behind `OnceLock`s and
//! mutexes of its own, so two readers analyse a document once.

use super::publish::{self, DocDiagnostics};
use pivot_workspace::state_file::{self, SavedState};
use pivot_workspace::Workspace;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::Client;

pub struct Session {
    pub client: Client,
    /// Shared with the background analyses of edits (`publish_later`).
    pub(crate) ws: Arc<RwLock<Workspace>>,
    /// Held from computing diagnostics to sending them, so that what reaches the client
    /// last is computed last: an edit's background publish, an open, a close, a change of
    /// session or a test run.
    pub(crate) publish_turn: Arc<tokio::sync::Mutex<()>>,
    /// Serialises state-file writes so the last write holds the latest state.
    pub(crate) save_lock: tokio::sync::Mutex<()>,
    /// This server's state as of its last write (or start-up): what it changed since is
    /// what it merges into the file (state_file::merge), so other windows' writes survive.
    pub(crate) saved_base: Mutex<SavedState>,
    /// Held for the whole of each command that reads or changes the session state, so that
    /// commands sent back to back apply in the order sent (requests run concurrently, and
    /// tokio's mutex hands the lock out first come, first served).
    pub command_lock: tokio::sync::Mutex<()>,
    /// Cancel flags of running work-done progress, by token.
    pub cancels: Mutex<HashMap<String, Arc<AtomicBool>>>,
    pub(crate) startup_problems: Mutex<Vec<String>>,
    pub client_progress: AtomicBool,
    pub progress_seq: AtomicU64,
    /// The client accepts `workspace/codeLens/refresh`.
    pub(crate) lens_refresh: AtomicBool,
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

impl Session {
    pub fn new(client: Client) -> Session {
        Session {
            client,
            ws: Arc::new(RwLock::new(Workspace::default())),
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

    /// The workspace, locked to change it. A handler that panicked cannot leave it unusable.
    pub fn ws(&self) -> RwLockWriteGuard<'_, Workspace> {
        write(&self.ws)
    }

    /// The workspace, locked to read it: other readers run beside this one.
    pub fn ws_read(&self) -> RwLockReadGuard<'_, Workspace> {
        read(&self.ws)
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

    /// `publish_with` for a computation that only reads the workspace.
    pub async fn publish_read(&self, compute: impl FnOnce(&Workspace) -> Vec<DocDiagnostics>) {
        let _turn = self.publish_turn().await;
        let items = compute(&self.ws_read());
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
                let ws = read(&ws);
                let current = ws.docs.get(&key).is_some_and(|d| d.version == version);
                current.then(|| publish::for_doc(&ws, &key)).flatten()
            };
            publish::send(&client, diags.into_iter().collect()).await;
        });
    }

    /// (session index, session count): compared before and after a command.
    pub fn session_key(&self) -> (usize, usize) {
        let ws = self.ws_read();
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
        self.publish_read(publish::for_all).await;
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
            let ws = self.ws_read();
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

/// `ws` locked, also after a panic while it was held (see `Session::ws`).
fn write(ws: &RwLock<Workspace>) -> RwLockWriteGuard<'_, Workspace> {
    ws.write().unwrap_or_else(|e| e.into_inner())
}

fn read(ws: &RwLock<Workspace>) -> RwLockReadGuard<'_, Workspace> {
    ws.read().unwrap_or_else(|e| e.into_inner())
}

pub fn token_key(t: &ProgressToken) -> String {
    match t {
        NumberOrString::Number(n) => format!("n:{n}"),
        NumberOrString::String(s) => format!("s:{s}"),
    }
}
