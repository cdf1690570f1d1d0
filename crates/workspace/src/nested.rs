//! Pivots files of folders below the root, in the editor: an open document under one takes
//! that file's pivots in place of the root's, as `check` applies a nested configuration
//! (pivots_files.rs: the nearest pivots file above the document, not above the root). The
//! conversation's and the user's own pivots still apply there; the nested file is read as
//! it is now (its history is not read), its scopes relative to its own folder.
//!
//! Each document's folder is looked up once, when the document opens (the file system is
//! read there, under the caller's write access), so that computing findings reads only
//! what this holds. Any change to a pivots file below the root clears it all; the open
//! documents are then prepared again.

use crate::pivots_files::{config_file, Nested};
use crate::{read_pivots_file, shown_in, PIVOTS_TOML};
use pivot_python::pivots::Ledger;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One nested pivots file, as read.
#[derive(Debug)]
pub struct NestedFile {
    /// Its folder: its pivots' `include` / `exclude` are relative to it.
    pub dir: PathBuf,
    /// Its pivots (none when it could not be read).
    pub ledger: Ledger,
}

#[derive(Default, Debug)]
pub struct NestedPivots {
    /// A document's folder -> the folder of the nested pivots file that applies to it (None:
    /// the root's).
    folders: HashMap<PathBuf, Option<PathBuf>>,
    /// A nested pivots file's folder -> the file read.
    files: HashMap<PathBuf, NestedFile>,
}

impl NestedPivots {
    /// Look up (and read, the first time) the nested pivots file that applies to the file at
    /// `path` under `root`. Returns the error of a file that cannot be read or parsed (whose
    /// pivots are then none), once: the first time it is read.
    pub fn prepare(&mut self, root: &Path, path: &Path) -> Option<String> {
        let folder = path.parent()?;
        if self.folders.contains_key(folder) {
            return None;
        }
        let dir = Nested::new(root).config_dir(path);
        self.folders.insert(folder.to_path_buf(), dir.clone());
        let dir = dir?;
        if self.files.contains_key(&dir) {
            return None;
        }
        let file = config_file(&dir).unwrap_or_else(|| dir.join(PIVOTS_TOML));
        let (ledger, error) = match read_pivots_file(&file, &shown_in(Some(root), &file)) {
            Ok(l) => (l, None),
            Err(e) => (Ledger::default(), Some(format!("{e:#}"))),
        };
        self.files.insert(dir.clone(), NestedFile { dir, ledger });
        error
    }

    /// The nested pivots file that applies to the file at `path`, when its folder was
    /// prepared and has one.
    pub fn for_file(&self, path: &Path) -> Option<&NestedFile> {
        let dir = self.folders.get(path.parent()?)?.as_ref()?;
        self.files.get(dir)
    }

    /// Forget every lookup and file (a pivots file below the root changed).
    pub fn clear(&mut self) {
        self.folders.clear();
        self.files.clear();
    }

    /// Whether `path` is a pivots file this could have read: a `pivots.toml` or a
    /// `pyproject.toml` in a folder below `root`.
    pub fn is_nested_config(root: &Path, path: &Path) -> bool {
        let named = path.file_name().is_some_and(|n| {
            n == std::ffi::OsStr::new(PIVOTS_TOML)
                || n == std::ffi::OsStr::new(crate::pivots_files::PYPROJECT)
        });
        named
            && path
                .parent()
                .is_some_and(|d| d != root && d.starts_with(root))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOML: &str =
        "[[pivot]]\nid = \"p\"\n[[pivot.version]]\ntext = \"t\"\nkind = \"function\"\nrule = \"^g_\"\n";

    #[test]
    fn a_folder_below_the_root_with_a_pivots_file_applies_to_its_subtree_only() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("lib/deep")).unwrap();
        std::fs::create_dir_all(root.join("app")).unwrap();
        std::fs::write(root.join("lib/pivots.toml"), TOML).unwrap();
        let mut n = NestedPivots::default();
        for f in ["lib/deep/a.py", "lib/b.py", "app/c.py", "d.py"] {
            assert_eq!(n.prepare(root, &root.join(f)), None, "{f}");
        }
        let got = |f: &str| n.for_file(&root.join(f)).map(|x| x.dir.clone());
        assert_eq!(got("lib/deep/a.py"), Some(root.join("lib")));
        assert_eq!(got("lib/b.py"), Some(root.join("lib")));
        assert_eq!(got("app/c.py"), None);
        assert_eq!(got("d.py"), None);
        assert_eq!(
            n.for_file(&root.join("lib/b.py"))
                .unwrap()
                .ledger
                .pivots
                .len(),
            1
        );
        assert!(NestedPivots::is_nested_config(
            root,
            &root.join("lib/pivots.toml")
        ));
        assert!(!NestedPivots::is_nested_config(
            root,
            &root.join("pivots.toml")
        ));
        assert!(!NestedPivots::is_nested_config(
            root,
            &root.join("lib/x.toml")
        ));
    }

    #[test]
    fn a_bad_nested_file_is_named_once_and_gives_no_pivots() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("lib")).unwrap();
        std::fs::write(root.join("lib/pivots.toml"), "[[pivot]]\nid = 3\n").unwrap();
        let mut n = NestedPivots::default();
        let e = n.prepare(root, &root.join("lib/a.py")).unwrap();
        assert!(e.contains("lib/pivots.toml"), "{e}");
        assert_eq!(n.prepare(root, &root.join("lib/b.py")), None);
        assert!(n
            .for_file(&root.join("lib/a.py"))
            .unwrap()
            .ledger
            .pivots
            .is_empty());
        n.clear();
        assert!(n.for_file(&root.join("lib/a.py")).is_none());
    }
}
