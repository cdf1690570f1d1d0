//! The workspace as a coding agent's tools see it (the MCP face, `server/src/mcp`, translates
//! it): the pivots in force with their history, and checks of a file, a folder or a code
//! string. Checking is `check`'s, step for step: the root's `pivots.toml` (a nested one for the
//! files below it) set up as `check`'s headless servers set it up
//! (`Workspace::headless_pivots`, the latest session), the files
//! walked by `walk::walk` and read by `walk::read_source` at the analysis limit, each text's
//! findings from `Workspace::check_text`, reported and sorted as `check --format json` reports
//! them. An agent is not the user: every path it names must lie inside the root once symlinks
//! are followed (`walk::inside`), and a code string over the analysis limit is refused whole.

use crate::document::{analysed_limit, ANALYSED_LIMIT_VAR};
use crate::in_force::{self, Explanation, InForce};
use crate::pivots_files::Nested;
use crate::reported::{self, FileFinding};
use crate::timeline::{self, CommitRef, Timeline};
use crate::walk::{self, Problem};
use crate::{Workspace, PIVOTS_TOML};
use anyhow::{Context, Result};
use pivot_python::pivots::toml_file::Format;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Component, Path, PathBuf};

pub struct Agent {
    /// Canonical.
    root: PathBuf,
    /// Set up as `check`'s headless servers are, again before each request (the pivots
    /// file may have changed).
    ws: Workspace,
}

/// A check's reply.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Checked {
    /// Files checked.
    pub files: usize,
    /// In `check --format json`'s shape and order.
    pub findings: Vec<FileFinding>,
    /// Files under a folder that were not checked, and why (as `check` lists them).
    pub problems: Vec<Problem>,
    /// Why the pivots file could not be read (only syntax is then checked).
    pub errors: Vec<String>,
}

impl Agent {
    pub fn new(root: &Path) -> Result<Agent> {
        let root = root
            .canonicalize()
            .with_context(|| format!("cannot read the workspace root {}", root.display()))?;
        Ok(Agent {
            ws: Workspace::new(Some(root.clone())),
            root,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The pivots file of the folder `dir` (the root or one below it): its real path, none
    /// when the folder has none, or why it is refused (a symlink out of the root).
    fn pivots_file(&self, dir: &Path) -> std::result::Result<Option<PathBuf>, String> {
        let Some(p) = crate::pivots_files::config_file(dir) else {
            return Ok(None);
        };
        walk::inside(&self.root, &p)
            .map(Some)
            .map_err(|e| format!("{}: {e}", walk::relative(&self.root, &p)))
    }

    /// The pivots of the folder `dir` (None: the root) read again, at their latest session,
    /// as `check` sets up the server of that folder's files; the errors, if any.
    fn set_up(&mut self, dir: Option<&Path>) -> Vec<String> {
        let file = self.pivots_file(dir.unwrap_or(&self.root));
        let (toml, mut errors) = match file {
            Ok(f) => (f, Vec::new()),
            Err(e) => (None, vec![e]),
        };
        errors.extend(self.ws.headless_pivots(toml.as_deref()));
        self.ws.replay.go_to_last();
        errors
    }

    fn refresh(&mut self) -> Vec<String> {
        self.set_up(None)
    }

    /// The root's pivots file when it is a plain file in the root (its history is read from
    /// git by its path there).
    fn own_toml(&self) -> Option<PathBuf> {
        let p = self.root.join(PIVOTS_TOML);
        (self.pivots_file(&self.root) == Ok(Some(p.clone()))).then_some(p)
    }

    /// The pivots in force, each with its versions, lines and the file's commits.
    pub fn pivots(&mut self) -> InForce {
        let mut errors = self.refresh();
        let file = self.pivots_file(&self.root).ok().flatten();
        let text = (file.as_deref()).and_then(|p| pivot_base::bounded_read::read_to_string(p).ok());
        let format = file.as_deref().map_or(Format::PivotsToml, Format::of);
        let places = text
            .as_deref()
            .map(|t| pivot_python::pivots::toml_file::places_as(t, format))
            .unwrap_or_default();
        let r = &self.ws.replay;
        let (commits, warnings) = self.commits();
        errors.extend(warnings);
        InForce {
            file: file.map(|p| walk::relative(&self.root, &p)),
            session: r.index(),
            sessions: r.count(),
            pivots: in_force::in_force(r.ledger(), r.index(), &places),
            commits,
            errors,
        }
    }

    /// The editor's timeline with the `history` setting: a session per commit that changed
    /// the pivots file (the file's own sessions outside git).
    pub fn timeline(&mut self) -> Timeline {
        if self.own_toml().is_none() {
            self.refresh();
            return timeline::timeline(&self.ws.replay);
        }
        timeline::timeline(&self.with_history().0.replay)
    }

    fn with_history(&self) -> (Workspace, Vec<String>) {
        let mut ws = Workspace::new(Some(self.root.clone()));
        ws.settings.history = true;
        let warnings = match ws.load_toml() {
            Ok((_, w)) => w,
            Err(e) => vec![format!("{e:#}")],
        };
        ws.replay.go_to_last();
        (ws, warnings)
    }

    fn commits(&self) -> (Vec<CommitRef>, Vec<String>) {
        if self.own_toml().is_none() {
            return (Vec::new(), Vec::new());
        }
        let (ws, warnings) = self.with_history();
        let commits = ws
            .replay
            .history()
            .map(|h| h.commits.iter().flatten().map(CommitRef::from).collect())
            .unwrap_or_default();
        (commits, warnings)
    }

    /// What a finding's `code` means, under the pivots in force.
    pub fn explain(&mut self, code: &str) -> std::result::Result<Explanation, String> {
        let p = self.pivots();
        in_force::explain(code, p.pivots, p.file.as_deref())
    }

    /// A file or a folder (relative to the root, or absolute inside it), as `check PATH`
    /// checks it. A named file that cannot be checked is an error; a folder's files that
    /// cannot be are its problems.
    pub fn check_path(&mut self, path: &str) -> std::result::Result<Checked, String> {
        let named = Path::new(path);
        let real = walk::inside(&self.root, named).map_err(|e| format!("{path}: {e}"))?;
        let rel = PathBuf::from(walk::relative(&self.root, &real));
        let rel = if rel.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            rel
        };
        let mut errors = self.refresh();
        let walked = walk::walk(&self.root, &[rel], None).map_err(|e| format!("{path}: {e:#}"))?;
        if !real.is_dir() {
            if let Some(p) = walked.problems.first() {
                return Err(format!("{path}: {}", p.problem));
            }
        }
        let limit = analysed_limit() as u64;
        let mut findings = Vec::new();
        let mut problems = walked.problems;
        let mut files = 0;
        // A pivots file in a folder below the root applies to that folder's files, as in
        // `check` (the files are sorted, so a folder's come together).
        let root = self.root.clone();
        let mut nested = Nested::new(&root);
        let mut current: Option<PathBuf> = None;
        for f in &walked.files {
            let dir = nested.config_dir(&f.abs);
            if dir != current {
                for e in self.set_up(dir.as_deref()) {
                    if !errors.contains(&e) {
                        errors.push(e);
                    }
                }
                current = dir;
            }
            let text = match walk::read_source(&f.abs, limit) {
                Ok(t) => t,
                Err(problem) if real.is_dir() => {
                    problems.push(Problem {
                        path: f.rel.clone(),
                        problem,
                    });
                    continue;
                }
                Err(problem) => return Err(format!("{path}: {problem}")),
            };
            files += 1;
            let found = self.ws.check_text(Some(&f.abs), text);
            findings.extend(found.into_iter().map(|r| FileFinding::new(&f.rel, r)));
        }
        reported::sort(&mut findings);
        walk::sort_problems(&mut problems);
        Ok(Checked {
            files,
            findings,
            problems,
            errors,
        })
    }

    /// A code string, checked as the file at `path` would be with this text (its pivots'
    /// `include` / `exclude` apply), or as a text that is no file.
    pub fn check_code(
        &mut self,
        code: String,
        path: Option<&str>,
    ) -> std::result::Result<Checked, String> {
        if let Some(refused) = oversized(&code) {
            return Err(refused);
        }
        let at = match path {
            Some(p) => Some(self.lexically_inside(p)?),
            None => None,
        };
        let root = self.root.clone();
        let dir = at.as_deref().and_then(|p| Nested::new(&root).config_dir(p));
        let errors = self.set_up(dir.as_deref());
        let shown = at
            .as_deref()
            .map(|p| walk::relative(&self.root, p))
            .unwrap_or_else(|| NO_FILE.to_string());
        Ok(check_code_in(
            &mut self.ws,
            at.as_deref(),
            &shown,
            code,
            errors,
        ))
    }

    /// A path a code string is checked as: it need not exist, so it is only named, and must
    /// be written inside the root (nothing is read through it).
    fn lexically_inside(&self, p: &str) -> std::result::Result<PathBuf, String> {
        let mut out = PathBuf::new();
        for c in self.root.join(p).components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir => {
                    out.pop();
                }
                other => out.push(other),
            }
        }
        match out.starts_with(&self.root) {
            true => Ok(out),
            false => Err(format!(
                "{p}: refused: outside the workspace root; a code string is checked as a file \
                 inside it"
            )),
        }
    }
}

/// Why a code string is refused whole (over the analysis limit), if it is.
pub fn oversized(code: &str) -> Option<String> {
    let limit = analysed_limit();
    (code.len() > limit).then(|| {
        format!(
            "refused: the code is {} bytes, over the {limit} bytes analysed \
             ({ANALYSED_LIMIT_VAR} sets the limit)",
            code.len()
        )
    })
}

/// `check_code`'s reply for `code` in `ws` as it is set up: the findings of the text as the
/// file `at` (none: no file), named `shown`, with the set-up's `errors`. Also what MemoryCode's
/// feedback rounds send (memorycode_feedback.rs), so both say the same.
pub fn check_code_in(
    ws: &mut Workspace,
    at: Option<&Path>,
    shown: &str,
    code: String,
    errors: Vec<String>,
) -> Checked {
    let found = ws.check_text(at, code);
    let mut findings: Vec<FileFinding> = found
        .into_iter()
        .map(|r| FileFinding::new(shown, r))
        .collect();
    reported::sort(&mut findings);
    Checked {
        files: 1,
        findings,
        problems: Vec::new(),
        errors,
    }
}

/// How a code string is named in `check_code`'s reply when no path is given.
pub const NO_FILE: &str = "<code>";

/// The text an agent's model reads of a reply: the MCP server sends each reply as structured
/// content and, as rmcp's `CallToolResult::structured` does, its JSON value's compact text.
pub fn reply_text<T: Serialize>(reply: &T) -> Result<String> {
    Ok(serde_json::to_value(reply)
        .context("a reply as JSON")?
        .to_string())
}
