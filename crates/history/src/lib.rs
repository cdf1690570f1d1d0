//! A project's history as pivot sessions: the commits of a git repository, read with
//! libgit2 (`git2`, no `git` process and no parsing of its output). The sessions of a
//! pivots file are the commits that changed it, oldest first; a tree at a commit can be
//! written out to a folder, so that it is checked exactly as a checkout of that commit is.
//!
//! Only first-parent history is walked (the commits as the branch saw them); a shallow
//! clone, whose history stops early, is refused with a message rather than read as if it
//! began there.

// Tests read and write their fixtures as they like; clippy.toml holds product code to
// pivot-base's bounded reads and whole writes.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

mod blame;
mod rules;
mod run;
mod sessions;
mod timeline;

pub use blame::Blame;
pub use rules::{pivots_toml, read_rules, RuleVersion, Rules, RulesFile};
pub use run::{adherence, run, Adherence, Attributed, Checker, Class, Run, Seen, Step};
pub use sessions::{instructions_ledger, PivotHistory};
pub use timeline::{Given, RuleHistory, Session};

use anyhow::{bail, Context, Result};
use git2::{ObjectType, Oid, Repository, Sort, TreeWalkMode, TreeWalkResult};
use std::path::{Path, PathBuf};

/// A repository, and where the checked root sits in its work tree.
pub struct Repo {
    repo: Repository,
    /// The root's path inside the work tree (`""` at its top), `/`-separated.
    prefix: String,
}

/// One commit, as reports name it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Commit {
    /// The full hex id.
    pub id: String,
    /// The first 12 hex digits.
    pub short: String,
    /// The first line of its message.
    pub summary: String,
    /// Committer time, seconds since the epoch.
    pub time: i64,
}

impl Commit {
    /// Its committer time as "2026-11-28 21:04 UTC".
    pub fn date(&self) -> String {
        chrono::DateTime::from_timestamp(self.time, 0).map_or_else(
            || format!("{} s after the epoch", self.time),
            |t| t.format("%Y-%m-%d %H:%M UTC").to_string(),
        )
    }
}

impl Repo {
    /// The repository holding `root`. A folder outside any repository, a bare repository
    /// and a shallow clone are errors whose message says so.
    pub fn open(root: &Path) -> Result<Repo> {
        let repo = Repository::discover(root).map_err(|e| {
            anyhow::anyhow!(
                "{} is not inside a git repository ({}): the history of its pivots cannot be read",
                root.display(),
                e.message()
            )
        })?;
        if repo.is_shallow() {
            bail!(
                "{} is a shallow clone: its history stops early, so the commits that changed the pivots cannot all be read (fetch it whole: git fetch --unshallow)",
                repo.path().display()
            );
        }
        let Some(workdir) = repo.workdir() else {
            bail!(
                "{} is a bare repository: it has no work tree to check",
                repo.path().display()
            );
        };
        let workdir = workdir
            .canonicalize()
            .with_context(|| format!("cannot read {}", workdir.display()))?;
        let root = root
            .canonicalize()
            .with_context(|| format!("cannot read {}", root.display()))?;
        let prefix = root
            .strip_prefix(&workdir)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        Ok(Repo { repo, prefix })
    }

    fn commit_of(&self, rev: &str) -> Result<git2::Commit<'_>> {
        let obj = self
            .repo
            .revparse_single(rev)
            .map_err(|e| anyhow::anyhow!("{rev}: no such revision ({})", e.message()))?;
        obj.peel_to_commit()
            .map_err(|e| anyhow::anyhow!("{rev}: not a commit ({})", e.message()))
    }

    /// The commit `rev` names (`HEAD`, a branch, a tag, `HEAD~2`, an id).
    pub fn resolve(&self, rev: &str) -> Result<Commit> {
        Ok(describe(&self.commit_of(rev)?))
    }

    /// The path of `rel` (relative to the root) inside the repository.
    fn in_repo(&self, rel: &str) -> String {
        match self.prefix.as_str() {
            "" => rel.to_string(),
            p => format!("{p}/{rel}"),
        }
    }

    /// The bytes of `rel` (relative to the root) at commit `rev`; None when the commit has
    /// no such file.
    pub fn file_at(&self, rev: &str, rel: &str) -> Result<Option<Vec<u8>>> {
        let tree = self.commit_of(rev)?.tree()?;
        let entry = match tree.get_path(Path::new(&self.in_repo(rel))) {
            Ok(e) => e,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        if entry.kind() != Some(ObjectType::Blob) {
            return Ok(None);
        }
        Ok(Some(self.repo.find_blob(entry.id())?.content().to_vec()))
    }

    /// The blob of `rel` (relative to the root) at commit `rev`; None when it has no such
    /// file. Comparing ids tells a changed file without reading it.
    pub fn blob_at(&self, rev: &str, rel: &str) -> Result<Option<Oid>> {
        let tree = self.commit_of(rev)?.tree()?;
        match tree.get_path(Path::new(&self.in_repo(rel))) {
            Ok(e) if e.kind() == Some(ObjectType::Blob) => Ok(Some(e.id())),
            Ok(_) => Ok(None),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The root's part of the tree at `rev`.
    fn root_tree(&self, rev: &str) -> Result<git2::Tree<'_>> {
        let tree = self.commit_of(rev)?.tree()?;
        Ok(match self.prefix.as_str() {
            "" => tree,
            p => {
                let e = tree
                    .get_path(Path::new(p))
                    .with_context(|| format!("{rev} has no folder {p}"))?;
                self.repo.find_tree(e.id())?
            }
        })
    }

    /// `dest`, holding the root's files at `from` (as `write_tree` or this wrote them),
    /// brought to `to`: only the files that differ are written or removed. Returns the
    /// paths (relative to the root, `/`-separated) that differ.
    pub fn update_tree(&self, from: &str, to: &str, dest: &Path) -> Result<Vec<String>> {
        let (a, b) = (self.root_tree(from)?, self.root_tree(to)?);
        let diff = self.repo.diff_tree_to_tree(Some(&a), Some(&b), None)?;
        let mut changed = Vec::new();
        for d in diff.deltas() {
            for file in [d.old_file(), d.new_file()] {
                let Some(rel) = file.path() else { continue };
                let name = rel.to_string_lossy().replace('\\', "/");
                if !changed.contains(&name) {
                    changed.push(name);
                }
            }
        }
        for rel in &changed {
            safe(to, Path::new(rel))?;
            let at = dest.join(rel);
            let entry = b.get_path(Path::new(rel)).ok();
            let regular = entry
                .as_ref()
                .is_some_and(|e| matches!(e.filemode(), 0o100644 | 0o100755));
            match entry.filter(|_| regular) {
                Some(e) => {
                    if let Some(dir) = at.parent() {
                        std::fs::create_dir_all(dir)
                            .with_context(|| format!("cannot create {}", dir.display()))?;
                    }
                    let blob = self.repo.find_blob(e.id())?;
                    pivot_base::durable::write_scratch(&at, blob.content())?;
                }
                None => match std::fs::remove_file(&at) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(e).with_context(|| format!("cannot remove {}", at.display()))
                    }
                },
            }
        }
        Ok(changed)
    }

    /// Writes the files of the root's part of the tree at `rev` into `dest` (regular and
    /// executable files; links and submodules are left out, as nothing is read through
    /// them). Returns how many were written.
    pub fn write_tree(&self, rev: &str, dest: &Path) -> Result<usize> {
        let sub = self.root_tree(rev)?;
        let mut files: Vec<(PathBuf, Oid)> = Vec::new();
        sub.walk(TreeWalkMode::PreOrder, |dir, entry| {
            let regular = matches!(entry.filemode(), 0o100644 | 0o100755);
            if entry.kind() == Some(ObjectType::Blob) && regular {
                if let Some(name) = entry.name() {
                    files.push((PathBuf::from(dir).join(name), entry.id()));
                }
            }
            TreeWalkResult::Ok
        })?;
        for (rel, id) in &files {
            safe(rev, rel)?;
            let to = dest.join(rel);
            if let Some(dir) = to.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
            let blob = self.repo.find_blob(*id)?;
            pivot_base::durable::write_scratch(&to, blob.content())?;
        }
        Ok(files.len())
    }

    /// The first-parent commits from the first one (or the one after `since`) to `head`,
    /// oldest first.
    pub fn commits(&self, head: &str, since: Option<&str>) -> Result<Vec<Commit>> {
        let mut walk = self.repo.revwalk()?;
        walk.push(self.commit_of(head)?.id())?;
        walk.simplify_first_parent()?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)?;
        if let Some(s) = since {
            walk.hide(self.commit_of(s)?.id())?;
        }
        let mut out = Vec::new();
        for id in walk {
            out.push(describe(&self.repo.find_commit(id?)?));
        }
        Ok(out)
    }

    /// Of `commits` (in order), those whose `rel` (relative to the root) differs from the
    /// commit before it in the list (the first one counts when it has the file).
    pub fn changed(&self, commits: &[Commit], rel: &str) -> Result<Vec<Commit>> {
        let mut out = Vec::new();
        let mut before: Option<Vec<u8>> = None;
        for c in commits {
            let now = self.file_at(&c.id, rel)?;
            if now != before {
                if now.is_some() || before.is_some() {
                    out.push(c.clone());
                }
                before = now;
            }
        }
        Ok(out)
    }
}

/// A tree from git never holds `..` or an absolute name; refuse one anyway.
fn safe(rev: &str, rel: &Path) -> Result<()> {
    if rel
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        bail!("{rev}: a path that leaves the tree: {}", rel.display());
    }
    Ok(())
}

fn describe(c: &git2::Commit<'_>) -> Commit {
    let id = c.id().to_string();
    Commit {
        short: id[..12.min(id.len())].to_string(),
        id,
        summary: c.summary().unwrap_or("").to_string(),
        time: c.time().seconds(),
    }
}
