//! Which `pivots.toml` applies to a file, as ruff finds its settings: the nearest one in the
//! file's folder or a folder above it, stopping at the repository's root (the folder holding
//! `.git`); a folder's `pyproject.toml` with a `[tool.pivot]` table counts as one where the
//! folder has no `pivots.toml` (as `ruff.toml` comes before `pyproject.toml`). `check` takes the nearest one above the current directory as its root's
//! (`discover`) and a nested one for the files below it (`Nested`); the MCP server (agent.rs)
//! applies nested ones as `check` does.

use crate::PIVOTS_TOML as CONFIG;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Whether `dir` holds a pivots file (a symlink counts: it is refused later, with a reason,
/// if it leads out of the tree).
fn holds_config(dir: &Path) -> bool {
    config_file(dir).is_some()
}

/// The pivots file of the folder `dir`: its `pivots.toml`, else its `pyproject.toml` when
/// that has a `[tool.pivot]` table; None when it has neither.
pub fn config_file(dir: &Path) -> Option<PathBuf> {
    let toml = dir.join(CONFIG);
    if std::fs::symlink_metadata(&toml).is_ok() {
        return Some(toml);
    }
    let pyproject = dir.join(PYPROJECT);
    let text = pivot_base::bounded_read::read_to_string(&pyproject).ok()?;
    pivot_python::pivots::toml_file::pyproject_has_pivots(&text).then_some(pyproject)
}

/// The project file that may hold the pivots in a `[tool.pivot]` table.
pub const PYPROJECT: &str = "pyproject.toml";

/// The folder of the nearest pivots file at or above `here`, not above the repository root.
pub fn discover(here: &Path) -> Option<PathBuf> {
    for dir in here.ancestors() {
        if holds_config(dir) {
            return Some(dir.to_path_buf());
        }
        if std::fs::symlink_metadata(dir.join(".git")).is_ok() {
            return None;
        }
    }
    None
}

/// The pivots file nearest `file`, at or below `root` (None: the root's own, or none).
pub struct Nested<'a> {
    root: &'a Path,
    known: HashMap<PathBuf, Option<PathBuf>>,
}

impl<'a> Nested<'a> {
    pub fn new(root: &'a Path) -> Nested<'a> {
        Nested {
            root,
            known: HashMap::new(),
        }
    }

    /// The folder below the root whose pivots file applies to `file`, if any.
    pub fn config_dir(&mut self, file: &Path) -> Option<PathBuf> {
        let dir = file.parent()?;
        self.dir_config(dir)
    }

    fn dir_config(&mut self, dir: &Path) -> Option<PathBuf> {
        if dir == self.root || !dir.starts_with(self.root) {
            return None;
        }
        if let Some(k) = self.known.get(dir) {
            return k.clone();
        }
        let found = match holds_config(dir) {
            true => Some(dir.to_path_buf()),
            false => dir.parent().and_then(|p| self.dir_config(p)),
        };
        self.known.insert(dir.to_path_buf(), found.clone());
        found
    }
}
