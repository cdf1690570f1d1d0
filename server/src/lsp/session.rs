//! The server's state as every handler sees it: the workspace behind its lock, the client,
//! and the locks and flags that order the handlers' work. Every lock is private to this
//! file: a handler takes one through the method that says what it is for (`ws`,
//! `ws_read`, `in_order`, `publish_with`, `persist`, `register_cancel`), so the order below
//! is kept in one place. Handlers (commands/, sync.rs,
//! hover.rs, ...) receive a `&Session`; server.rs's `Backend` (the `LanguageServer`
//! implementation) only routes each method to them, so that no handler file needs the
//! routing and the routing needs no handler's internals.
//!
//! **Lock order.** A handler that holds more than one takes them in this order, and never
//! holds the workspace lock (`ws`, a std mutex) across an `.await`:
//! 1. `command_order` (tokio, `in_order`): a whole session command, so commands apply in
//!    the order sent;
//! 2. `publish_turn` (tokio): from computing diagnostics to sending them;
//! 3. `saver.turn` (tokio): a state-file write;
//! 4. `ws` (std `RwLock`): the workspace, for synchronous work only. Changes take it to
//!    write; the read-only work (diagnostics, hovers, code actions, lenses) takes it to read
//!    (`ws_read`), so those run beside one another rather than one at a time;
//! 5. `saver.base`, `progress.cancels`, `startup_problems` (std): short, leaf locks.
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
use std::sync::{Arc, Mutex, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::Client;

pub struct Session {
    pub client: Client,
    /// Shared with the background analyses of edits (`publish_later`).
    ws: Arc<RwLock<Workspace>>,
    /// Held from computing diagnostics to sending them, so that what reaches the client
    /// last is computed last: an edit's background publish, an open, a close, a change of
    /// session or a test run.
    publish_turn: Arc<tokio::sync::Mutex<()>>,
    /// Held for the whole of each command that reads or changes the session state, so that
    /// commands sent back to back apply in the order sent (requests run concurrently, and
    /// tokio's mutex hands the lock out first come, first served).
    command_order: tokio::sync::Mutex<()>,
    saver: StateSaver,
    progress: ProgressTokens,
    /// What `initialize` could not do, shown once the client is `initialized`.
    startup_problems: Mutex<Vec<String>>,
    /// Set once, at `initialize`.
    caps: OnceLock<ClientCaps>,
}

/// What the client said at `initialize` that changes what the server does.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClientCaps {
    /// The client accepts server-initiated work-done progress.
    pub progress: bool,
    /// The client accepts `workspace/codeLens/refresh`.
    pub lens_refresh: bool,
    /// A headless client (`check`, `--via-lsp`) said `initializationOptions.pivot.headless`:
    /// the workspace's `.pivot/` state and `pivots.toml` are neither read at start-up nor
    /// written; the client names its pivot sources (`pivot/headless/setup`). A repository
    /// under check must not make the server read what its state file names. Nor does a
    /// close clear a document's diagnostics: such a client shows nothing.
    pub headless: bool,
}

/// The state file's writer: one write at a time, each merging what this server changed
/// since its last write into the file, so other windows' writes survive.
#[derive(Default)]
struct StateSaver {
    /// Serialises state-file writes so the last write holds the latest state.
    turn: tokio::sync::Mutex<()>,
    /// This server's state as of its last write (or start-up): what it changed since is
    /// what it merges into the file (state_file::merge).
    base: Mutex<SavedState>,
}

/// Work-done progress the server runs: the tokens it makes and the cancel flags of the
/// running ones, by token.
#[derive(Default)]
struct ProgressTokens {
    seq: AtomicU64,
    cancels: Mutex<HashMap<String, Arc<AtomicBool>>>,
}

/// A cancel flag registered under its progress token while its work runs; dropped, it is
/// taken out again.
pub struct CancelRegistration<'a> {
    session: &'a Session,
    key: String,
}

impl Drop for CancelRegistration<'_> {
    fn drop(&mut self) {
        lock(&self.session.progress.cancels).remove(&self.key);
    }
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
            command_order: tokio::sync::Mutex::new(()),
            saver: StateSaver::default(),
            progress: ProgressTokens::default(),
            startup_problems: Mutex::new(Vec::new()),
            caps: OnceLock::new(),
        }
    }

    /// What the client said at `initialize`; a second `initialize` changes nothing.
    pub fn set_caps(&self, caps: ClientCaps) {
        let _ = self.caps.set(caps);
    }

    /// What the client said at `initialize` (nothing before it).
    pub fn caps(&self) -> ClientCaps {
        self.caps.get().copied().unwrap_or_default()
    }

    /// The turn of a command that reads or changes the session state (see `command_order`).
    pub async fn in_order(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.command_order.lock().await
    }

    /// A new token for server-initiated progress (`pivot-NAME-n`), when the client takes
    /// them.
    pub fn new_progress_token(&self, name: &str) -> Option<String> {
        self.caps().progress.then(|| {
            let n = self.progress.seq.fetch_add(1, Ordering::SeqCst);
            format!("pivot-{name}-{n}")
        })
    }

    /// Registers `flag` under progress token `key`: `window/workDoneProgress/cancel` of
    /// that token sets it, until the registration is dropped.
    pub fn register_cancel(&self, key: String, flag: &Arc<AtomicBool>) -> CancelRegistration<'_> {
        lock(&self.progress.cancels).insert(key.clone(), flag.clone());
        CancelRegistration { session: self, key }
    }

    /// The state as read at start-up: what later writes merge from.
    pub fn set_saved_base(&self, state: SavedState) {
        *lock(&self.saver.base) = state;
    }

    /// What `initialize` could not do, for `initialized` to show.
    pub fn set_startup_problems(&self, problems: Vec<String>) {
        *lock(&self.startup_problems) = problems;
    }

    pub fn take_startup_problems(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.startup_problems))
    }

    /// Ask the client to re-request code lenses (after a test run), when it supports that.
    /// Not awaited: the answer does not matter and must not hold up the command.
    pub fn refresh_code_lenses(&self) {
        if self.caps().lens_refresh {
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
        if self.caps().headless {
            return;
        }
        let _guard = self.saver.turn.lock().await;
        let (root, state) = {
            let ws = self.ws_read();
            (ws.root.clone(), ws.saved_state())
        };
        let Some(root) = root else { return };
        let base = lock(&self.saver.base).clone();
        let mine = state.clone();
        let r =
            tokio::task::spawn_blocking(move || state_file::save_merged(&root, &base, &mine)).await;
        let problem = match r {
            Ok(Ok(_)) => {
                *lock(&self.saver.base) = state;
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
        if let Some(flag) = lock(&self.progress.cancels).get(&key) {
            flag.store(true, Ordering::SeqCst);
        }
    }
}

/// A leaf lock, also after a panic while it was held.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
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
