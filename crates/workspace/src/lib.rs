//! Everything the language server knows, without any protocol types: open documents, the
//! replay of a conversation, the workspace's pivot sources and saved state. The protocol
//! glue in `lsp/` translates requests into calls on this and results back into LSP.

// Tests read and write their fixtures as they like; clippy.toml holds product code to
// pivot-base's bounded reads and whole writes.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod agent;
pub mod closed;
pub mod convcode_conv;
pub mod convcode_instructions;
pub mod conversation;
pub mod document;
pub mod findings;
pub mod fixes;
pub mod hover_text;
pub mod in_force;
pub mod memorycode_feedback;
pub mod names;
pub mod nested;
pub mod outputs_check;
pub mod pivots_files;
pub mod replay;
pub mod replies;
pub mod reported;
pub mod sample;
pub mod settings;
pub mod state_file;
pub mod suppress;
pub mod test_runs;
pub mod timeline;
pub mod walk;

use crate::replies::{Info, SourceKind};
use anyhow::{Context, Result};
use convcode_conv::ConvCodeConversation;
use conversation::Conversation;
use document::Document;
use pivot_python::pivots::toml_file::Format;
use pivot_python::pivots::Ledger;
use replay::{Replay, Source};
use settings::Settings;
use state_file::{Loaded, SavedState};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use test_runs::{Resources, TestRuns};

pub const PIVOTS_TOML: &str = "pivots.toml";

#[derive(Default)]
pub struct Workspace {
    pub root: Option<PathBuf>,
    /// Open Python documents by URI.
    pub docs: HashMap<String, Document>,
    /// Closed documents' analyses, for an open of the same text.
    pub closed: closed::ClosedDocs,
    pub replay: Replay,
    /// From `initializationOptions.pivot` (see settings.rs).
    pub settings: Settings,
    /// The last test run of each open document.
    pub tests: TestRuns,
    /// Problems and the test runner, used outside the lock.
    pub resources: Arc<Resources>,
    /// The folder of the pivots file in force: pivots' `include` / `exclude` patterns are
    /// relative to it (None: the root).
    pub pivots_dir: Option<PathBuf>,
    /// Pivots files of folders below the root, for the open documents under them
    /// (nested.rs; the editor's, never a headless client's).
    pub nested: nested::NestedPivots,
    /// Reads of the pivots file begun ([`Workspace::toml_source`]): only the last is applied.
    toml_reads: u64,
}

/// How a file at `path` is named in messages: relative to `root` when inside it.
pub fn shown_in(root: Option<&Path>, path: &Path) -> String {
    match root.and_then(|r| path.strip_prefix(r).ok()) {
        Some(rel) => rel.display().to_string(),
        None => path.display().to_string(),
    }
}

/// The pivots of the pivots file at `path` (a `pivots.toml`, or a `pyproject.toml`'s
/// `[tool.pivot]`), as it is now; `shown` names it in errors.
pub fn read_pivots_file(path: &Path, shown: &str) -> Result<Ledger> {
    pivot_base::bounded_read::read_to_string(path)
        .with_context(|| format!("cannot read {shown}"))
        .and_then(|text| Ledger::from_config(&text, PIVOTS_TOML, shown, Format::of(path)))
}

/// What the workspace's own pivots are read from (see [`Workspace::toml_source`]).
#[derive(Clone, Debug)]
pub struct TomlSource {
    root: Option<PathBuf>,
    toml: Option<PathBuf>,
    history: bool,
    instructions: Option<String>,
    read: u64,
}

/// The workspace's pivots as read from disk and git, to be set by [`Workspace::apply_toml`].
pub struct TomlRead {
    /// `None`: there is nothing to read (no root), and the pivots stay as they are.
    ledger: Option<Ledger>,
    history: Option<replay::TomlHistory>,
    warnings: Vec<String>,
    read: u64,
}

/// Reads the root's pivots file (or the `instructions` file) and, with the `history`
/// setting, its history from git: file and git IO only, no workspace, so that a long
/// history is walked off every lock (`Workspace::load_toml` says what is read).
pub fn read_toml(src: &TomlSource) -> Result<TomlRead> {
    let read = src.read;
    let done = |ledger, history, warnings| TomlRead {
        ledger,
        history,
        warnings,
        read,
    };
    let (Some(root), Some(path)) = (&src.root, &src.toml) else {
        return Ok(done(None, None, Vec::new()));
    };
    if let Some(rel) = &src.instructions {
        let (ledger, history, warnings) = read_instructions(root, rel, src.history)?;
        return Ok(done(Some(ledger), history, warnings));
    }
    let shown = shown_in(Some(root), path);
    let text = match pivot_base::bounded_read::read_to_string(path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let format = Format::of(path);
    let ledger = match &text {
        Some(t) => Ledger::from_config(t, PIVOTS_TOML, &shown, format).inspect_err(
            |e| tracing::info!(file = %shown, error = %format!("{e:#}"), "pivots file refused"),
        )?,
        None => Ledger::default(),
    };
    tracing::info!(
        file = %shown,
        found = text.is_some(),
        pivots = ledger.pivots.len(),
        history = src.history,
        "pivots file read"
    );
    let mut warnings = Vec::new();
    let history = match src.history {
        true if format == Format::Pyproject => {
            warnings.push(format!(
                "the history option reads the history of {PIVOTS_TOML}; the pivots of \
                 {shown} are read as they are now"
            ));
            None
        }
        true => {
            let read = pivot_history::Repo::open(root).and_then(|r| {
                r.pivot_history(PIVOTS_TOML, PIVOTS_TOML, text.as_deref().map(str::as_bytes))
            });
            let instead = format!("the sessions written in {PIVOTS_TOML} are used instead");
            history_or_warning(read, PIVOTS_TOML, &instead, &mut warnings)
        }
        false => None,
    };
    Ok(done(Some(ledger), history, warnings))
}

/// The workspace's pivots from the instruction file `rel` (the `instructions` setting,
/// relative to the root): the pivots `pivots import` proposes from it, and with `history`
/// its sessions from git, each commit that changed those rules (as `check --history
/// --instructions` reads them). A missing file gives none, with a warning; one that cannot
/// be read is an error and the pivots before stay.
fn read_instructions(
    root: &Path,
    rel: &str,
    history: bool,
) -> Result<(Ledger, Option<replay::TomlHistory>, Vec<String>)> {
    let path = root.join(rel);
    let mut warnings = Vec::new();
    let bytes = match pivot_base::bounded_read::read(&path) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            warnings.push(format!(
                "the instructions file {rel} (setting pivot.instructions) does not exist: \
                 no workspace pivots"
            ));
            None
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let ledger = match &bytes {
        Some(b) => pivot_history::instructions_ledger(rel, b)
            .with_context(|| format!("{rel} (setting pivot.instructions)"))?,
        None => Ledger::default(),
    };
    if ledger.pivots.is_empty() && bytes.is_some() {
        warnings.push(format!(
            "{rel} gives no pivot: none of its sentences reads as a rule \
             (`pivot-lsp pivots import {rel} --skipped` lists why)"
        ));
    }
    let history = match history {
        false => None,
        true => {
            let read = pivot_history::Repo::open(root).and_then(|r| {
                r.rules_history(
                    rel,
                    rel,
                    bytes.as_deref(),
                    pivot_history::RulesFile::Instructions,
                )
            });
            let instead = format!("{rel} is read as it is now");
            history_or_warning(read, rel, &instead, &mut warnings)
        }
    };
    Ok((ledger, history, warnings))
}

/// The sessions of a history read with the `history` setting, as the replay keeps them; a
/// history that cannot be read is a warning, `instead` saying what is used in its place.
fn history_or_warning(
    read: Result<pivot_history::PivotHistory>,
    file: &str,
    instead: &str,
    warnings: &mut Vec<String>,
) -> Option<replay::TomlHistory> {
    match read {
        Ok(h) => {
            warnings.extend(h.warnings);
            Some(replay::TomlHistory {
                file: file.to_string(),
                ledger: h.ledger,
                commits: h.sessions,
            })
        }
        Err(e) => {
            warnings.push(format!("{e:#}; {instead}"));
            None
        }
    }
}

/// `path` relative to `base`, `/`-separated (None: no path, or one outside `base`).
fn relative_parts(path: Option<&Path>, base: Option<&PathBuf>) -> Option<String> {
    let rel = path?.strip_prefix(base?).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

impl Workspace {
    /// Open (or replace) document `key`; an identical text closed a while ago comes back
    /// analysed.
    pub fn open(&mut self, key: String, text: String, version: i32) {
        let doc = self.closed.open(text, version);
        self.docs.insert(key, doc);
    }

    /// Close document `key`; whether it was open and its diagnostics were ever computed for
    /// the client (only then is there anything to clear).
    pub fn close(&mut self, key: &str) -> bool {
        self.tests.forget(key);
        let Some(doc) = self.docs.remove(key) else {
            return false;
        };
        let shown = doc.shown.load(std::sync::atomic::Ordering::Relaxed);
        self.closed.close(doc);
        shown
    }

    pub fn new(root: Option<PathBuf>) -> Workspace {
        Workspace {
            root,
            ..Workspace::default()
        }
    }

    /// A path from a command argument: relative paths are relative to the workspace root.
    pub fn resolve(&self, path: &str) -> PathBuf {
        let p = Path::new(path);
        match &self.root {
            Some(root) if p.is_relative() => root.join(p),
            _ => p.to_path_buf(),
        }
    }

    /// The pivots active now that apply to the file at `path` (their `include` /
    /// `exclude`; a document that is not a file, or lies outside the pivots file's folder,
    /// takes only the unscoped ones).
    ///
    /// Under a folder with a pivots file of its own (nested.rs, prepared when the document
    /// opened) that file's pivots take the place of the root's: as they are now, or at the
    /// open conversation's session.
    pub fn active_for(&self, path: Option<&Path>) -> Vec<pivot_python::pivots::Active<'_>> {
        if let Some(n) = path.and_then(|p| self.nested.for_file(p)) {
            let at = match self.replay.source() {
                Some(_) => self.replay.index(),
                None => usize::MAX,
            };
            let mut active: Vec<_> = (self.replay.active().into_iter())
                .filter(|a| a.pivot.origin != self.workspace_origin())
                .chain(n.ledger.active_at(at))
                .collect();
            let rel = relative_parts(path, Some(&n.dir));
            active.retain(|a| a.pivot.scope.applies(rel.as_deref()));
            return active;
        }
        let mut active = self.replay.active();
        if active.iter().all(|a| a.pivot.scope.is_everywhere()) {
            return active;
        }
        let rel = self.scope_path(path);
        active.retain(|a| a.pivot.scope.applies(rel.as_deref()));
        active
    }

    /// `path` relative to the pivots file's folder, `/`-separated, as scopes match it.
    pub fn scope_path(&self, path: Option<&Path>) -> Option<String> {
        relative_parts(path, self.pivots_dir.as_ref().or(self.root.as_ref()))
    }

    /// The ledger a hover on the document at `path` reads, and the session and the count of
    /// sessions it shows: the replay's, or under a nested pivots file (see `active_for`) the
    /// replay's pivots but the root's file's with the nested file's in their place.
    pub fn hover_ledger(
        &self,
        path: Option<&Path>,
    ) -> (std::borrow::Cow<'_, Ledger>, usize, usize) {
        let r = &self.replay;
        let Some(n) = path.and_then(|p| self.nested.for_file(p)) else {
            return (std::borrow::Cow::Borrowed(r.ledger()), r.index(), r.count());
        };
        let mut l = Ledger {
            pivots: (r.ledger().pivots.iter())
                .filter(|p| p.origin != self.workspace_origin())
                .cloned()
                .collect(),
        };
        l.extend(n.ledger.clone());
        let (mut index, mut count) = (r.index(), r.count());
        if r.source().is_none() {
            // As `active_for`: the nested file's pivots as they are now.
            let last = (l.pivots.iter())
                .flat_map(|p| p.versions.iter().map(|v| v.session))
                .max()
                .unwrap_or(0);
            index = index.max(last);
            count = count.max(index + 1);
        }
        (std::borrow::Cow::Owned(l), index, count)
    }

    /// Find and read the nested pivots file of the document at `path`, if it has one (see
    /// nested.rs); returns the error of a file that cannot be read, the first time.
    pub fn prepare_nested(&mut self, path: &Path) -> Option<String> {
        let root = self.root.as_deref()?;
        self.nested.prepare(root, path)
    }

    /// What the editor and `check` show for document `doc` at `path`: the findings of the
    /// pivots that apply to it, less those suppressed inline (suppress.rs).
    pub fn doc_findings(&self, path: Option<&Path>, doc: &Document) -> Vec<findings::Finding> {
        // A generated file (python/generated.rs) has its syntax checked, and no pivot.
        let active = match pivot_python::python::generated::marker(doc.text()) {
            Some(_) => Vec::new(),
            None => self.active_for(path),
        };
        let found = findings::findings(doc.text(), doc.module(), &active);
        suppress::apply(doc.text(), found)
    }

    /// How a pivots file at `path` is named in messages: relative to the root when inside it.
    pub fn shown(&self, path: &Path) -> String {
        shown_in(self.root.as_deref(), path)
    }

    /// The root's pivots file: its `pivots.toml`, or its `pyproject.toml` with a
    /// `[tool.pivot]` table; `pivots.toml` (to be made) when it has neither.
    pub fn toml_path(&self) -> Option<PathBuf> {
        let root = self.root.as_ref()?;
        Some(pivots_files::config_file(root).unwrap_or_else(|| root.join(PIVOTS_TOML)))
    }

    /// The file the workspace's own pivots are read from: the `instructions` setting's
    /// file, else the root's pivots file (`toml_path`).
    pub fn pivots_source(&self) -> Option<PathBuf> {
        match (&self.settings.instructions, &self.root) {
            (Some(rel), Some(root)) => Some(root.join(rel)),
            _ => self.toml_path(),
        }
    }

    /// The origin of the workspace's own pivots in the ledger: the instruction file's name,
    /// or `pivots.toml` (the root's pivots file, in either format).
    pub fn workspace_origin(&self) -> &str {
        self.settings.instructions.as_deref().unwrap_or(PIVOTS_TOML)
    }

    /// (Re)read `pivots.toml` at the root, and with the `history` setting its history:
    /// returns how many pivots it names and warnings to show (a history that cannot be
    /// read, whose file's own sessions are used instead). A missing file means no workspace
    /// pivots; a bad one keeps the pivots read before and is an error naming the file.
    /// With the `instructions` setting, that file is read instead. [`read_toml`] and
    /// [`Workspace::apply_toml`] are its two halves, for a caller that reads off a lock.
    pub fn load_toml(&mut self) -> Result<(usize, Vec<String>)> {
        let source = self.toml_source();
        let read = read_toml(&source)?;
        Ok(self.apply_toml(read).unwrap_or_default())
    }

    /// What [`read_toml`] reads for this workspace now, numbered: of reads begun in turn,
    /// only the last one's result is applied.
    pub fn toml_source(&mut self) -> TomlSource {
        self.toml_reads += 1;
        TomlSource {
            root: self.root.clone(),
            toml: self.toml_path(),
            history: self.settings.history,
            instructions: self.settings.instructions.clone(),
            read: self.toml_reads,
        }
    }

    /// Sets what [`read_toml`] read: how many pivots and the warnings, or `None` (nothing
    /// set) when a read begun later is under way or done.
    pub fn apply_toml(&mut self, read: TomlRead) -> Option<(usize, Vec<String>)> {
        if read.read != self.toml_reads {
            return None;
        }
        let pivots = read.ledger.as_ref().map_or(0, |l| l.pivots.len());
        if let Some(ledger) = read.ledger {
            self.replay.set_toml(ledger, read.history);
            self.pivots_dir = None;
        }
        Some((pivots, read.warnings))
    }

    /// The pivot sources of a headless client (`check`, the MCP server): the pivots file
    /// `toml` alone (none: no pivots), read as it is, without its history, and none of the
    /// user's own pivots or conversation. Returns the error of a bad file, whose pivots are
    /// then none. The session is left to the caller.
    pub fn headless_pivots(&mut self, toml: Option<&Path>) -> Option<String> {
        self.replay.close();
        self.replay.set_user(Ledger::default());
        let read = toml.map(|p| read_pivots_file(p, &self.shown(p)));
        let (ledger, error) = match read.transpose() {
            Ok(l) => (l.unwrap_or_default(), None),
            Err(e) => (Ledger::default(), Some(format!("{e:#}"))),
        };
        let file = toml.map(|p| self.shown(p)).unwrap_or_default();
        match &error {
            None => tracing::info!(file, pivots = ledger.pivots.len(), "pivots file read"),
            Some(e) => tracing::info!(file, error = %e, "pivots file refused"),
        }
        self.replay.set_toml(ledger, None);
        self.pivots_dir = toml.and_then(Path::parent).map(Path::to_path_buf);
        error
    }

    /// The findings of `text` as the file at `path` (None: a text that is no file, which only
    /// the unscoped pivots apply to), reported as the faces report them: what the editor
    /// publishes and `check` reports for a file with this text. The document is opened and
    /// closed as `didOpen` / `didClose` would (an identical text comes back analysed).
    pub fn check_text(&mut self, path: Option<&Path>, text: String) -> Vec<reported::Reported> {
        let doc = self.closed.open(text, 0);
        let found = self.doc_findings(path, &doc);
        let out = found
            .iter()
            .map(|f| reported::reported(doc.text(), f))
            .collect();
        self.closed.close(doc);
        out
    }

    /// Open a MemoryCode conversation (at its first session); returns warnings.
    pub fn open_conversation(&mut self, path: &Path) -> Result<Vec<String>> {
        let (c, warnings) = Conversation::open(path)?;
        self.replay.open(c);
        Ok(warnings)
    }

    /// What survives a restart.
    pub fn saved_state(&self) -> SavedState {
        SavedState {
            format: state_file::FORMAT,
            conversation: self.replay.conversation().map(|c| {
                match self.root.as_ref().and_then(|r| c.path.strip_prefix(r).ok()) {
                    Some(rel) => rel.to_path_buf(),
                    None => c.path.clone(),
                }
            }),
            convcode: self
                .replay
                .convcode()
                .map(|c| c.saved(self.root.as_deref())),
            session: self.replay.saved_index(),
            user_pivots: SavedState::from_user_ledger(self.replay.user()),
        }
    }

    /// Restore the saved state of the root; returns problems to report to the user.
    pub fn restore(&mut self) -> Vec<String> {
        let Some(root) = self.root.clone() else {
            return Vec::new();
        };
        let mut problems = Vec::new();
        let state = match state_file::load(&root) {
            Loaded::Missing => return problems,
            Loaded::Found(s) => s,
            Loaded::SetAside { problem } => {
                problems.push(problem);
                return problems;
            }
        };
        // Already validated by `load`.
        if let Ok(user) = state.user_ledger() {
            self.replay.set_user(user);
        }
        if let Some(conv) = &state.conversation {
            let path = root.join(conv);
            match self.open_conversation(&path) {
                Ok(w) => problems.extend(w),
                Err(e) => problems.push(format!(
                    "the saved conversation could not be reopened: {e:#}"
                )),
            }
        }
        if let Some(saved) = &state.convcode {
            match ConvCodeConversation::reopen(saved, &root) {
                Ok(c) => self.replay.open_source(Source::ConvCode(Box::new(c))),
                Err(e) => problems.push(format!(
                    "the saved ConvCodeWorld conversation could not be reopened: {e:#}"
                )),
            }
        }
        let wanted = state.conversation.is_some() || state.convcode.is_some();
        if self.replay.source().is_some() || !wanted {
            self.replay.restore_index(state.session);
        }
        problems
    }

    /// What `pivot.conversation.info` and every session command return.
    pub fn info(&self) -> Info {
        let r = &self.replay;
        let (source, kind) = match r.source() {
            Some(Source::MemoryCode(c)) => (Some(c.path.clone()), SourceKind::MemoryCode),
            Some(Source::ConvCode(c)) => (Some(c.request.root.clone()), SourceKind::ConvCode),
            None if !r.ledger().pivots.is_empty() => (None, SourceKind::WorkspacePivots),
            None => (None, SourceKind::None),
        };
        Info {
            source,
            kind,
            count: r.count(),
            index: r.index(),
            active: r.active().len(),
            pivots: r.ledger().pivots.len(),
            history: r.history().is_some(),
            convcode: r.convcode().map(|c| c.info(r.index())),
        }
    }
}
