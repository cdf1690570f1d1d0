//! When a line was written: libgit2's blame on the first-parent line (so a line written on
//! a merged branch is the merge's, as the walk sees it), kept per file version so that a
//! file unchanged over many commits is blamed once.

use super::Repo;
use anyhow::Result;
use git2::{BlameOptions, Oid};
use std::collections::HashMap;
use std::path::Path;

/// Blames of file versions, by (path in the repository, blob id).
#[derive(Default)]
pub struct Blame {
    lines: HashMap<(String, Oid), Vec<Oid>>,
    /// (path relative to the root, blob) -> the place of the commit that last changed it.
    pub(crate) changed: HashMap<(String, Oid), Option<usize>>,
}

impl Blame {
    /// The commit that last wrote line `line` (0-based) of `rel` (relative to the root) as
    /// it is at `rev`; None when the file or line is not there.
    pub fn written(&mut self, repo: &Repo, rev: &str, rel: &str, line: u32) -> Result<Option<Oid>> {
        let Some(blob) = repo.blob_at(rev, rel)? else {
            return Ok(None);
        };
        let path = repo.in_repo(rel);
        let key = (path, blob);
        if !self.lines.contains_key(&key) {
            let mut opts = BlameOptions::new();
            opts.newest_commit(repo.commit_of(rev)?.id())
                .first_parent(true);
            let b = repo.repo.blame_file(Path::new(&key.0), Some(&mut opts))?;
            let mut lines = Vec::new();
            for h in b.iter() {
                let start = h.final_start_line().saturating_sub(1);
                let end = start + h.lines_in_hunk();
                if lines.len() < end {
                    lines.resize(end, Oid::zero());
                }
                lines[start..end].fill(h.final_commit_id());
            }
            self.lines.insert(key.clone(), lines);
        }
        Ok((self.lines[&key].get(line as usize).copied()).filter(|id| !id.is_zero()))
    }
}
