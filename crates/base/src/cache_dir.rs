//! A tool's cache folder under a project's root, as ruff keeps `.ruff_cache`: tables of
//! results, one file per context (the inputs every entry of the table depends on), written
//! whole and renamed into place so that concurrent runs and a killed run leave either the
//! old table or a new one. A table that cannot be read or parsed is a miss, never an error:
//! the cache can only make a run faster, not change or stop it.
//!
//! A tree under check may come from a pull request, with a cache folder of its own making.
//! So the folder is refused when it or its space is a symbolic link (nothing is written or
//! removed through one), and the callers mix [`secret`] into every table's key: the key
//! of a table this user's runs will read cannot be computed from the tree, so a table
//! committed to a repository is never read.
//!
//! The folder holds a `.gitignore` of `*` (so git ignores it without the project's own
//! ignore file naming it) and a `CACHEDIR.TAG` (so backup tools skip it). Each space keeps
//! at most [`MAX_TABLES`] tables, the least recently written removed first.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The cache folder's name under the root when none is given.
pub const DEFAULT_DIR: &str = ".pivot-cache";

/// Tables kept per space: a project switches between a few pivot sets or sessions; more
/// are old.
pub const MAX_TABLES: usize = 8;

const GITIGNORE: &str = "# Written by pivot-lsp: this folder is a cache.\n*\n";
/// The Cache Directory Tagging Specification's signature line.
const CACHEDIR_TAG: &str = "Signature: 8a477f597d28d172789f06886806bc55\n\
# This file is a cache directory tag created by pivot-lsp.\n\
# For information about cache directory tags see https://bford.info/cachedir/\n";

/// A cache folder (it need not exist until the first write).
#[derive(Clone, Debug)]
pub struct CacheDir {
    dir: PathBuf,
}

impl CacheDir {
    pub fn at(dir: impl Into<PathBuf>) -> CacheDir {
        CacheDir { dir: dir.into() }
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    fn table(&self, space: &str, key: &str) -> PathBuf {
        self.dir.join(space).join(format!("{key}.json"))
    }

    /// The bytes of table `key` of `space`, or None when there is none (or it cannot be
    /// read: a miss).
    pub fn read(&self, space: &str, key: &str) -> Option<Vec<u8>> {
        crate::bounded_read::read(&self.table(space, key)).ok()
    }

    /// Replace table `key` of `space` with `bytes` (atomically), creating the folder with
    /// its `.gitignore` and tag when missing, then keep the space to [`MAX_TABLES`] tables
    /// and remove the temporary files of writes that were cut short.
    pub fn write(&self, space: &str, key: &str, bytes: &[u8]) -> Result<()> {
        self.create()?;
        let space_dir = self.dir.join(space);
        std::fs::create_dir_all(&space_dir)
            .with_context(|| format!("cannot create {}", space_dir.display()))?;
        refuse_link(&space_dir)?;
        let dest = self.table(space, key);
        crate::durable::replace_atomic(&dest, bytes)?;
        prune(&space_dir, MAX_TABLES)?;
        crate::durable::sweep_stale_temps(&space_dir)?;
        Ok(())
    }

    fn create(&self) -> Result<()> {
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create the cache folder {}", self.dir.display()))?;
        refuse_link(&self.dir)?;
        for (name, text) in [(".gitignore", GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)] {
            let p = self.dir.join(name);
            if std::fs::symlink_metadata(&p).is_err() {
                crate::durable::replace_atomic(&p, text.as_bytes())?;
            }
        }
        Ok(())
    }

    /// Remove the whole cache folder. Returns whether there was one. A folder that does not
    /// look like ours (no tag of ours in it) is refused rather than removed: `--cache-dir`
    /// may name any folder.
    pub fn clean(&self) -> Result<bool> {
        match std::fs::symlink_metadata(&self.dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", self.dir.display())),
            Ok(m) if !m.is_dir() => {
                anyhow::bail!("{} is not a folder: not removed", self.dir.display())
            }
            Ok(_) => {}
        }
        let tag =
            crate::bounded_read::read_to_string(&self.dir.join("CACHEDIR.TAG")).unwrap_or_default();
        if !tag.contains("created by pivot-lsp") {
            anyhow::bail!(
                "{} holds no CACHEDIR.TAG written by pivot-lsp: not removed (is it a cache folder of pivot-lsp?)",
                self.dir.display()
            );
        }
        std::fs::remove_dir_all(&self.dir)
            .with_context(|| format!("cannot remove {}", self.dir.display()))?;
        Ok(true)
    }
}

/// A folder that is a symbolic link (a tree's own `.pivot-cache -> ~/.ssh`) is not written
/// through.
fn refuse_link(dir: &Path) -> Result<()> {
    let m =
        std::fs::symlink_metadata(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    if m.file_type().is_symlink() || !m.is_dir() {
        anyhow::bail!(
            "{} is a symbolic link or not a folder: the cache is not written through it",
            dir.display()
        );
    }
    Ok(())
}

/// This user's cache secret: 32 random bytes in `$XDG_CACHE_HOME/pivot-lsp/cache-secret`
/// (default `~/.cache`), made on first use, readable by the user alone. None when it can be
/// neither read nor made (then nothing is cached).
pub fn secret() -> Result<Vec<u8>> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
            Some(h) => PathBuf::from(h).join(".cache"),
            None => anyhow::bail!("neither XDG_CACHE_HOME nor HOME is set"),
        },
    };
    let dir = base.join("pivot-lsp");
    let path = dir.join("cache-secret");
    let read = |p: &Path| -> Result<Vec<u8>> {
        let b =
            crate::bounded_read::read(p).with_context(|| format!("cannot read {}", p.display()))?;
        if b.len() < 32 {
            anyhow::bail!("{} is shorter than 32 bytes", p.display());
        }
        Ok(b)
    };
    if let Ok(b) = read(&path) {
        return Ok(b);
    }
    {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let mut bytes = [0u8; 32];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
            .context("cannot read /dev/urandom")?;
        // Written whole under a temporary name, then linked into place: a second run made
        // at the same moment keeps the first one's secret.
        let tmp = dir.join(format!(".cache-secret.{}", std::process::id()));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        std::io::Write::write_all(&mut f, &bytes)?;
        drop(f);
        let linked = std::fs::hard_link(&tmp, &path);
        let _ = std::fs::remove_file(&tmp);
        if let Err(e) = linked {
            if e.kind() != std::io::ErrorKind::AlreadyExists {
                return Err(e).with_context(|| format!("cannot write {}", path.display()));
            }
        }
    }
    read(&path)
}

/// Remove the oldest tables of `dir` beyond `keep` (by modification time; the newest are
/// the ones runs use now).
fn prune(dir: &Path, keep: usize) -> Result<()> {
    let mut tables: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if tables.len() <= keep {
        return Ok(());
    }
    tables.sort();
    for (_, p) in &tables[..tables.len() - keep] {
        // Another run may have removed it first.
        let _ = std::fs::remove_file(p);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_is_read_back_and_the_folder_is_tagged_and_ignored() {
        let tmp = tempfile::tempdir().unwrap();
        let c = CacheDir::at(tmp.path().join(DEFAULT_DIR));
        assert_eq!(c.read("check", "k"), None);
        c.write("check", "k", b"{}").unwrap();
        assert_eq!(c.read("check", "k").as_deref(), Some(&b"{}"[..]));
        let ignore = std::fs::read_to_string(c.path().join(".gitignore")).unwrap();
        assert!(ignore.lines().any(|l| l == "*"));
        assert!(std::fs::read_to_string(c.path().join("CACHEDIR.TAG"))
            .unwrap()
            .starts_with("Signature: 8a477f597d28d172789f06886806bc55"));
    }

    #[test]
    fn a_space_keeps_the_newest_tables() {
        let tmp = tempfile::tempdir().unwrap();
        let c = CacheDir::at(tmp.path().join("c"));
        for i in 0..MAX_TABLES + 3 {
            c.write("s", &format!("t{i}"), b"x").unwrap();
            // Modification times must differ for the order to be the writing order.
            let t =
                std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1 + i as u64);
            std::fs::File::options()
                .write(true)
                .open(c.table("s", &format!("t{i}")))
                .unwrap()
                .set_modified(t)
                .unwrap();
        }
        c.write("s", "last", b"x").unwrap();
        let left = std::fs::read_dir(c.path().join("s")).unwrap().count();
        assert_eq!(left, MAX_TABLES);
        assert!(c.read("s", "t0").is_none(), "the oldest table goes first");
        assert!(c.read("s", "last").is_some());
    }

    #[test]
    fn nothing_is_written_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, tmp.path().join("c")).unwrap();
        let c = CacheDir::at(tmp.path().join("c"));
        assert!(c.write("s", "k", b"x").is_err());
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        // The space as a link, too.
        let d = CacheDir::at(tmp.path().join("d"));
        std::fs::create_dir(d.path()).unwrap();
        std::os::unix::fs::symlink(&elsewhere, d.path().join("s")).unwrap();
        assert!(d.write("s", "k", b"x").is_err());
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }

    #[test]
    fn clean_removes_only_a_folder_of_ours() {
        let tmp = tempfile::tempdir().unwrap();
        let c = CacheDir::at(tmp.path().join("c"));
        assert!(!c.clean().unwrap(), "nothing to remove");
        c.write("s", "k", b"x").unwrap();
        assert!(c.clean().unwrap());
        assert!(!c.path().exists());
        let foreign = tmp.path().join("src");
        std::fs::create_dir(&foreign).unwrap();
        std::fs::write(foreign.join("a.py"), "x = 1\n").unwrap();
        let err = CacheDir::at(&foreign).clean().unwrap_err().to_string();
        assert!(err.contains("not removed"), "{err}");
        assert!(foreign.join("a.py").exists());
    }
}
