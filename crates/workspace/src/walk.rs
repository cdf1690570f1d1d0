//! The files `pivot-lsp check` opens: the Python files under the given paths, walked with
//! the `ignore` crate (`.gitignore`, `.ignore` and hidden folders respected, in a git
//! checkout or not) minus the usual virtualenv, cache and build folders. A file that
//! cannot be checked (unreadable, not UTF-8 text, too large, a symlink loop) is a problem
//! with its path, and the walk goes on.
//!
//! The tree may be a pull request's, so nothing it names is trusted. The walk stays inside
//! its boundary (the root, the current directory, for paths written inside it; a path
//! written outside it is its own boundary: the user named it): a symlink that leads out of
//! it is a problem naming it and is not followed, nor is one to a device, FIFO or socket.
//! A folder whose ignore files (which the walker reads itself) are not small regular files
//! inside the boundary is not walked. Files are read later, one at a time, through the
//! bounded reader ([`read_source`]), so a FIFO or `/dev/zero` named `x.py` is a problem,
//! not a hang, and memory holds only the files being checked.

use anyhow::{bail, Result};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

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
    ".pivot-cache",
];

/// A file to check; its text is read when it is checked ([`read_source`]).
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// Relative to the root, `/`-separated (the absolute path when outside the root).
    pub rel: String,
    pub abs: PathBuf,
}

/// Ignore files larger than this are not read (the walker reads them whole, and a
/// symlink to `/dev/zero` never ends): the folder holding one is not walked.
pub const IGNORE_FILE_LIMIT: u64 = 1 << 20;

/// A file or folder that was not checked, and why.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
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

/// `p` with `.` and `..` applied to the path as written (no symlink is followed).
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A file or folder the user named: the path to use, its boundary, or why it is refused.
/// `root` is canonical. A path written inside the root must stay inside it once symlinks
/// are followed (the repository's symlinks are not the user's word); one written outside
/// it was named on purpose and is its own boundary.
pub fn named(root: &Path, p: &Path) -> std::result::Result<(PathBuf, PathBuf), String> {
    let joined = root.join(p);
    let written_inside = lexical(&joined).starts_with(root);
    let real =
        std::fs::canonicalize(&joined).map_err(|e| format!("cannot read: {}", io_reason(&e)))?;
    if written_inside {
        if !real.starts_with(root) {
            return Err(format!(
                "not read: a symlink out of the checked folder (to {}); only files inside it are read",
                target_of(&real)
            ));
        }
        Ok((real, root.to_path_buf()))
    } else {
        Ok((real.clone(), real))
    }
}

/// A file or folder an agent names (relative to `root`, which is canonical, or absolute):
/// its real path, which must be inside `root` once every symlink is followed. Unlike
/// [`named`], a path written outside the root is refused too: what an agent's tool call
/// names is no user's word.
pub fn inside(root: &Path, p: &Path) -> std::result::Result<PathBuf, String> {
    let joined = root.join(p);
    let real =
        std::fs::canonicalize(&joined).map_err(|e| format!("cannot read: {}", io_reason(&e)))?;
    if real.starts_with(root) {
        return Ok(real);
    }
    Err(match lexical(&joined).starts_with(root) {
        true => format!(
            "refused: a symlink out of the workspace root (to {}); only files inside it are read",
            target_of(&real)
        ),
        false => "refused: outside the workspace root; only files inside it are read".to_string(),
    })
}

/// Why the walker must not read `dir`'s ignore files, if it must not: each present one
/// (`.gitignore`, `.ignore`, a `.git` file or `.git/info/exclude`) must be a regular file
/// of at most `IGNORE_FILE_LIMIT` bytes inside `boundary`, after symlinks.
fn unsafe_ignore_files(dir: &Path, boundary: &Path) -> Option<String> {
    let mut candidates = vec![dir.join(".gitignore"), dir.join(".ignore")];
    let git = dir.join(".git");
    match std::fs::symlink_metadata(&git) {
        Ok(m) if m.file_type().is_dir() => candidates.push(git.join("info").join("exclude")),
        Ok(_) => candidates.push(git),
        Err(_) => {}
    }
    for f in candidates {
        let Ok(m) = std::fs::symlink_metadata(&f) else {
            continue;
        };
        let name = f.strip_prefix(dir).unwrap_or(&f).display().to_string();
        let meta = if m.file_type().is_symlink() {
            // A dangling link or a loop: the walker cannot open it either.
            let Ok(target) = std::fs::canonicalize(&f) else {
                continue;
            };
            if !target.starts_with(boundary) {
                return Some(format!(
                    "its {name} is a symlink out of the checked folder (to {})",
                    target_of(&target)
                ));
            }
            match std::fs::metadata(&target) {
                Ok(m) => m,
                Err(_) => continue,
            }
        } else {
            m
        };
        if !meta.file_type().is_file() {
            return Some(format!(
                "its {name} is {}",
                pivot_base::bounded_read::kind_of(meta.file_type())
            ));
        }
        if meta.len() > IGNORE_FILE_LIMIT {
            return Some(format!(
                "its {name} is {} bytes, over the limit of {IGNORE_FILE_LIMIT} bytes for an ignore file",
                meta.len()
            ));
        }
    }
    None
}

fn not_walked(root: &Path, dir: &Path, why: String) -> Problem {
    let path = match relative(root, dir) {
        p if p.is_empty() => ".".to_string(),
        p => p,
    };
    Problem {
        path,
        problem: format!("not walked: {why}"),
    }
}

/// A symlink's resolved target for a message: its path, and its kind when it is neither a
/// regular file nor a folder ("/dev/zero, a device").
fn target_of(real: &Path) -> String {
    match std::fs::metadata(real) {
        Ok(m) if !m.is_file() && !m.is_dir() => format!(
            "{}, {}",
            real.display(),
            pivot_base::bounded_read::kind_of(m.file_type())
        ),
        _ => real.display().to_string(),
    }
}

/// What to do with a symlink met in the walk.
enum Link {
    /// A Python file inside the boundary: checked under the link's name.
    File,
    /// A folder inside the boundary (its real path): walked under the link's name.
    Folder(PathBuf),
    /// Not followed, with the reason; None when it is nothing the walk would use.
    Refused(Option<String>),
}

/// Where the symlink `path` leads and whether it is followed. Only what the walk would
/// use matters (folders and Python files); a link is never opened to find out, so nothing
/// outside the boundary is opened, not even a folder.
fn follow(root: &Path, path: &Path, boundary: &Path) -> Link {
    let python = is_python(path);
    let target = match std::fs::canonicalize(path) {
        Ok(t) => t,
        Err(e) if python || e.raw_os_error() == Some(libc::ELOOP) => {
            return Link::Refused(Some(format!("cannot read: {}", io_reason(&e))))
        }
        Err(_) => return Link::Refused(None),
    };
    let Ok(meta) = std::fs::metadata(&target) else {
        return Link::Refused(None);
    };
    if !python && !meta.is_dir() {
        return Link::Refused(None);
    }
    if !target.starts_with(boundary) {
        return Link::Refused(Some(format!(
            "not followed: a symlink out of the checked folder (to {})",
            target_of(&target)
        )));
    }
    if meta.is_file() {
        return Link::File;
    }
    if !meta.is_dir() {
        return Link::Refused(Some(format!(
            "not read: a symlink to {} ({})",
            pivot_base::bounded_read::kind_of(meta.file_type()),
            target.display()
        )));
    }
    // A folder that holds the link itself would be walked for ever.
    let parent = path.parent().and_then(|p| std::fs::canonicalize(p).ok());
    if parent.is_some_and(|p| p.starts_with(&target)) {
        return Link::Refused(Some(format!(
            "not walked: a symlink loop (it leads back to {})",
            relative(root, &target)
        )));
    }
    Link::Folder(target)
}

/// Walk `paths` (relative to `root`, which is canonical). A path that does not exist is an
/// error (nothing is walked); everything else that goes wrong is a problem of one file.
/// The files under `paths`, sorted by relative path; with `shard`, only that shard's of
/// the sorted list (dealt round robin). Nothing is read here but directory listings and
/// ignore files; the files are read when checked.
///
/// The walker does not follow symlinks itself (it would open a linked folder before any
/// filter could refuse it): each link is resolved here ([`follow`]) and a folder inside
/// the boundary is walked in turn under the link's name, each real folder once.
pub fn walk(
    root: &Path,
    paths: &[PathBuf],
    shard: Option<pivot_bench::shard::Shard>,
) -> Result<Walked> {
    for p in paths {
        if std::fs::symlink_metadata(root.join(p)).is_err() {
            bail!("{}: no such file or folder", p.display());
        }
    }
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    let problems = Arc::new(Mutex::new(Vec::new()));
    let push = |p: Problem| problems.lock().unwrap_or_else(|e| e.into_inner()).push(p);
    // (folder to walk as named, its real path, its boundary)
    let mut folders: Vec<(PathBuf, PathBuf, PathBuf)> = Vec::new();
    for p in paths {
        let a = root.join(p);
        let (real, boundary) = match named(root, p) {
            Ok(x) => x,
            Err(problem) => {
                push(Problem {
                    path: relative(root, &a),
                    problem,
                });
                continue;
            }
        };
        match std::fs::metadata(&real) {
            Ok(m) if m.is_dir() => folders.push((a, real, boundary)),
            // A file named explicitly is checked whatever its extension (and refused by
            // the reader when it is not a regular file).
            Ok(_) => found.push((relative(root, &a), a.clone())),
            Err(e) => push(Problem {
                path: relative(root, &a),
                problem: format!("cannot read: {}", io_reason(&e)),
            }),
        }
    }
    let mut walked_real = std::collections::HashSet::new();
    while let Some((start, real, boundary)) = folders.pop() {
        if !walked_real.insert(real.clone()) {
            continue;
        }
        // The walker also reads the ignore files of the folders above the walked one, up to
        // the root (and above it: the checkout's surroundings, not the repository's).
        let refused = real
            .ancestors()
            .take_while(|d| d.starts_with(&boundary))
            .find_map(|dir| unsafe_ignore_files(dir, &boundary).map(|why| (dir, why)));
        if let Some((dir, why)) = refused {
            push(not_walked(root, dir, why));
            continue;
        }
        let mut b = ignore::WalkBuilder::new(&start);
        let (f_root, f_problems, f_boundary) =
            (root.to_path_buf(), Arc::clone(&problems), boundary.clone());
        b.standard_filters(true)
            .require_git(false)
            .follow_links(false)
            .filter_entry(move |e| {
                if !e.file_type().is_some_and(|t| t.is_dir()) || e.depth() == 0 {
                    return true;
                }
                let name = e.file_name().to_str();
                if name.is_some_and(|n| SKIPPED_DIRS.contains(&n) || n.ends_with(".egg-info")) {
                    return false;
                }
                match unsafe_ignore_files(e.path(), &f_boundary) {
                    None => true,
                    Some(why) => {
                        f_problems
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(not_walked(&f_root, e.path(), why));
                        false
                    }
                }
            });
        for entry in b.build() {
            let e = match entry {
                Ok(e) => e,
                Err(e) => {
                    push(walk_problem(root, &e));
                    continue;
                }
            };
            if e.depth() > 0 && e.path_is_symlink() {
                match follow(root, e.path(), &boundary) {
                    Link::File => found.push((relative(root, e.path()), e.path().to_path_buf())),
                    Link::Folder(target) => {
                        folders.push((e.path().to_path_buf(), target, boundary.clone()))
                    }
                    Link::Refused(Some(problem)) => push(Problem {
                        path: relative(root, e.path()),
                        problem,
                    }),
                    Link::Refused(None) => {}
                }
                continue;
            }
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            if !is_dir && is_python(e.path()) {
                found.push((relative(root, e.path()), e.path().to_path_buf()));
            }
        }
    }
    found.sort();
    found.dedup_by(|a, b| a.0 == b.0);
    let all: Vec<String> = found.iter().map(|f| f.0.clone()).collect();
    if let Some(shard) = shard {
        found = shard.select(found);
    }
    let files = found
        .into_iter()
        .map(|(rel, abs)| SourceFile { rel, abs })
        .collect();
    let mut problems = std::mem::take(&mut *problems.lock().unwrap_or_else(|e| e.into_inner()));
    sort_problems(&mut problems);
    Ok(Walked {
        files,
        problems,
        all,
    })
}

pub fn sort_problems(problems: &mut [Problem]) {
    problems.sort_by(|a, b| (&a.path, &a.problem).cmp(&(&b.path, &b.problem)));
}

/// The file's text, or why it is not checked: read through the bounded reader (regular
/// files only, never blocking), at most `max_bytes`.
pub fn read_source(path: &Path, max_bytes: u64) -> std::result::Result<String, String> {
    let limit = max_bytes.min(pivot_base::bounded_read::limit());
    let bytes = pivot_base::bounded_read::read_limited(path, limit).map_err(|e| {
        if e.kind() == std::io::ErrorKind::FileTooLarge {
            let size = std::fs::metadata(path).map_or(0, |m| m.len());
            format!(
                "not checked: {:.1} MB is larger than the {:.1} MB limit ({})",
                size as f64 / 1e6,
                limit as f64 / 1e6,
                if limit < max_bytes {
                    pivot_base::bounded_read::LIMIT_VAR
                } else {
                    "--max-file-size"
                }
            )
        } else if e.kind() == std::io::ErrorKind::InvalidInput {
            // "a FIFO (named pipe), not a regular file: ..."
            format!("not checked: {e}")
        } else {
            format!("cannot read: {}", io_reason(&e))
        }
    })?;
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
