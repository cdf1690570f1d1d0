//! The files `pivot-lsp check` opens: the Python files under the given paths, walked with
//! the `ignore` crate (`.gitignore`, `.ignore` and hidden folders respected, in a git
//! checkout or not) minus the usual virtualenv, cache and build folders. A file that
//! cannot be checked (unreadable, not UTF-8 text, too large, a symlink loop) is a problem
//! with its path, and the walk goes on.

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// Folders skipped wherever they are: virtualenvs, caches, build output (ruff's defaults).
const SKIPPED_DIRS: &[&str] = &[
    "__pycache__",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
    ".venv",
    ".tox",
    ".nox",
    ".eggs",
    ".git",
    ".hg",
    ".svn",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
];

pub struct SourceFile {
    /// Relative to the root, `/`-separated (the absolute path when outside the root).
    pub rel: String,
    pub abs: PathBuf,
    pub text: String,
}

/// A file or folder that was not checked, and why.
#[derive(Clone, Debug)]
pub struct Problem {
    pub path: String,
    pub problem: String,
}

pub struct Walked {
    pub files: Vec<SourceFile>,
    pub problems: Vec<Problem>,
    /// Every file found (sorted relative paths), this shard's or not.
    pub all: Vec<String>,
}

/// `path` relative to `root` with `/` separators, or as it is when outside the root.
pub fn relative(root: &Path, path: &Path) -> String {
    let p = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = p
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if p.is_absolute() {
        p.display().to_string()
    } else {
        parts.join("/")
    }
}

fn is_python(p: &Path) -> bool {
    matches!(p.extension().and_then(|e| e.to_str()), Some("py" | "pyi"))
}

/// Walk `paths` (relative to `root`). A path that does not exist is an error (nothing is
/// walked); everything else that goes wrong is a problem of one file.
/// The files under `paths`, sorted by relative path; with `shard`, only that shard's of
/// the sorted list (dealt round robin), and only those are read.
pub fn walk(
    root: &Path,
    paths: &[PathBuf],
    max_bytes: u64,
    shard: Option<crate::bench::shard::Shard>,
) -> Result<Walked> {
    let mut abs: Vec<PathBuf> = Vec::new();
    for p in paths {
        let a = root.join(p);
        if std::fs::symlink_metadata(&a).is_err() {
            bail!("{}: no such file or folder", p.display());
        }
        abs.push(a);
    }
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    let mut problems = Vec::new();
    for a in &abs {
        if a.is_file() {
            // A file named explicitly is checked whatever its extension.
            found.push((relative(root, a), a.clone()));
            continue;
        }
        let mut b = ignore::WalkBuilder::new(a);
        b.standard_filters(true)
            .require_git(false)
            .follow_links(true)
            .filter_entry(|e| {
                !(e.file_type().is_some_and(|t| t.is_dir())
                    && e.depth() > 0
                    && e.file_name()
                        .to_str()
                        .is_some_and(|n| SKIPPED_DIRS.contains(&n) || n.ends_with(".egg-info")))
            });
        for entry in b.build() {
            match entry {
                Ok(e) => {
                    let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                    if !is_dir && is_python(e.path()) {
                        found.push((relative(root, e.path()), e.path().to_path_buf()));
                    }
                }
                Err(e) => problems.push(walk_problem(root, &e)),
            }
        }
    }
    found.sort();
    found.dedup_by(|a, b| a.0 == b.0);
    let all: Vec<String> = found.iter().map(|f| f.0.clone()).collect();
    if let Some(shard) = shard {
        found = shard.select(found);
    }
    let mut files = Vec::with_capacity(found.len());
    for (rel, path) in found {
        match read_source(&path, max_bytes) {
            Ok(text) => files.push(SourceFile {
                rel,
                abs: path,
                text,
            }),
            Err(problem) => problems.push(Problem { path: rel, problem }),
        }
    }
    problems.sort_by(|a, b| (&a.path, &a.problem).cmp(&(&b.path, &b.problem)));
    Ok(Walked {
        files,
        problems,
        all,
    })
}

/// The file's text, or why it is not checked.
fn read_source(path: &Path, max_bytes: u64) -> std::result::Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {}", io_reason(&e)))?;
    if meta.len() > max_bytes {
        return Err(format!(
            "not checked: {:.1} MB is larger than the {:.1} MB limit (--max-file-size)",
            meta.len() as f64 / 1e6,
            max_bytes as f64 / 1e6
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {}", io_reason(&e)))?;
    if bytes.contains(&0) {
        return Err("not checked: a binary file (it contains NUL bytes)".into());
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not checked: not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// The operating system's error inside `e` (the walker wraps it with its own path).
fn os_error(e: &std::io::Error) -> &std::io::Error {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = e.get_ref().map(|i| i as _);
    while let Some(x) = cur {
        if let Some(io) = x.downcast_ref::<std::io::Error>() {
            if io.raw_os_error().is_some() {
                return io;
            }
        }
        cur = x.source();
    }
    e
}

/// An I/O error's reason without the path (which the caller prints, relative).
fn io_reason(e: &std::io::Error) -> String {
    let e = os_error(e);
    if e.raw_os_error() == Some(libc::ELOOP) {
        return "a symlink loop".into();
    }
    let s = e.to_string();
    // "Permission denied (os error 13)" -> "permission denied"
    let s = s.split(" (os error").next().unwrap_or(&s).to_string();
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => s,
    }
}

fn walk_problem(root: &Path, e: &ignore::Error) -> Problem {
    fn inner(root: &Path, e: &ignore::Error, path: Option<&Path>) -> Problem {
        match e {
            ignore::Error::WithPath { path, err } => inner(root, err, Some(path)),
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                inner(root, err, path)
            }
            ignore::Error::Loop { child, ancestor } => Problem {
                path: relative(root, child),
                problem: format!(
                    "not walked: a symlink loop (it leads back to {})",
                    relative(root, ancestor)
                ),
            },
            ignore::Error::Io(io) => Problem {
                path: path.map(|p| relative(root, p)).unwrap_or_default(),
                problem: format!("cannot read: {}", io_reason(io)),
            },
            other => Problem {
                path: path.map(|p| relative(root, p)).unwrap_or_default(),
                problem: other.to_string(),
            },
        }
    }
    inner(root, e, None)
}
