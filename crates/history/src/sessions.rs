//! A pivots file's history read as a ledger, for the editor: session k is the k-th commit
//! that changed the file's pivots (oldest first; a comment-only edit, or a file that does
//! not parse, changes none), and what the file says at that commit is what is in force
//! from then on. A pivot that appears is added, one whose version in force changes
//! is updated, one the file stops naming is withdrawn (so a renamed id is a withdrawal and
//! an addition). When the working tree's file differs from the last commit's, it is one more
//! session, uncommitted.
//!
//! Each commit's file is read as `check --rev` reads it: of every pivot, the version with
//! the latest hand-written session is the one in force.

use super::rules::{pivots_toml, read_rules, RulesFile};
use super::{Commit, Repo};
use anyhow::Result;
use pivot_python::pivots::{Ledger, PivotVersion};
use std::collections::HashMap;

/// The ledger of a pivots file's history, and where each session comes from.
#[derive(Debug, Default)]
pub struct PivotHistory {
    pub ledger: Ledger,
    /// Session k's commit; None for the working tree's file when it is not committed.
    pub sessions: Vec<Option<Commit>>,
    /// Commits whose file could not be read as pivots: their sessions change nothing.
    pub warnings: Vec<String>,
}

impl Repo {
    /// The history of `rel` (relative to the root) on HEAD's first-parent line, with
    /// `working` (the file as it is on disk, None when absent) as a last session when it
    /// differs from HEAD's. `origin` names the source of the ledger's pivots.
    pub fn pivot_history(
        &self,
        rel: &str,
        origin: &str,
        working: Option<&[u8]>,
    ) -> Result<PivotHistory> {
        self.rules_history(rel, origin, working, RulesFile::Pivots)
    }

    /// As `pivot_history`, for a file read as `kind` says: an instruction file (`AGENTS.md`)
    /// gives the pivots `pivots import` proposes from it, and its sessions are the commits
    /// that change those rules (kind, rule form), as `check --history --instructions` reads
    /// them: a reworded sentence that gives the same rule is no session.
    pub fn rules_history(
        &self,
        rel: &str,
        origin: &str,
        working: Option<&[u8]>,
        kind: RulesFile,
    ) -> Result<PivotHistory> {
        // An unborn HEAD (a repository with no commit yet) has no history: only the file.
        let commits = match self.repo.head() {
            Ok(_) => self.changed(&self.commits("HEAD", None)?, rel)?,
            Err(_) => Vec::new(),
        };
        let mut b = Builder {
            h: PivotHistory::default(),
            index: HashMap::new(),
            in_force: HashMap::new(),
            rel,
            origin,
            kind,
        };
        let mut last: Option<Vec<u8>> = None;
        for c in commits {
            let file = self.file_at(&c.id, rel)?;
            let label = format!("commit {} ({})", c.short, c.summary);
            b.step(Some(c), file.as_deref(), &label);
            last = file;
        }
        if working != last.as_deref() {
            b.step(None, working, "the working tree");
        }
        Ok(b.h)
    }
}

/// The ledger as it is built, session by session.
struct Builder<'a> {
    h: PivotHistory,
    /// Pivot id -> its place in the ledger (`Ledger::give_indexed`).
    index: HashMap<String, usize>,
    /// The version of each pivot in force after the last session read.
    in_force: HashMap<String, PivotVersion>,
    rel: &'a str,
    origin: &'a str,
    kind: RulesFile,
}

impl Builder<'_> {
    /// The next session (`commit`'s, None for the working tree): the file's pivots against
    /// those in force before it.
    fn step(&mut self, commit: Option<Commit>, file: Option<&[u8]>, label: &str) {
        let k = self.h.sessions.len();
        let now = match file.map(|b| read(b, self.origin, self.kind)).transpose() {
            Ok(l) => l.unwrap_or_default(),
            Err(e) => {
                self.h.warnings.push(format!(
                    "{label}: {} is not read ({e:#}); the pivots before it stay in force",
                    self.rel
                ));
                return;
            }
        };
        let mut next: HashMap<String, PivotVersion> = HashMap::new();
        let mut changed = false;
        for p in now.pivots {
            // The version in force in this file: the latest hand-written session's.
            let Some(v) = p.versions.into_iter().last() else {
                continue;
            };
            // An instruction's words are not its rule (see rules.rs).
            let words = |b: &PivotVersion| self.kind == RulesFile::Instructions || b.text == v.text;
            let same = self
                .in_force
                .get(&p.id)
                .is_some_and(|b| words(b) && b.kind == v.kind && b.rule == v.rule);
            if !same {
                changed = true;
                self.h.ledger.give_indexed(
                    &mut self.index,
                    &p.id,
                    self.origin,
                    k,
                    v.text.clone(),
                    v.kind,
                    v.rule.clone(),
                );
            }
            next.insert(p.id, v);
        }
        for id in self.in_force.keys() {
            if !next.contains_key(id) {
                changed = true;
                self.h.ledger.withdraw(id, k);
            }
        }
        self.in_force = next;
        if changed {
            self.h.sessions.push(commit);
        }
    }
}

fn read(bytes: &[u8], origin: &str, kind: RulesFile) -> Result<Ledger> {
    match kind {
        RulesFile::Pivots => {
            let text =
                std::str::from_utf8(bytes).map_err(|_| anyhow::anyhow!("it is not UTF-8"))?;
            Ledger::from_toml(text, origin)
        }
        RulesFile::Instructions => instructions_ledger(origin, bytes),
    }
}

/// The pivots `pivots import` proposes from an instruction file's `bytes`, as a ledger of
/// `origin` (each given at session 0).
pub fn instructions_ledger(origin: &str, bytes: &[u8]) -> Result<Ledger> {
    let rules = read_rules(RulesFile::Instructions, origin, bytes)?;
    Ledger::from_toml(
        &pivots_toml(rules.pivots.iter().map(|p| (p, 0)), &[]),
        origin,
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::Path;

    pub(crate) fn pivot(id: &str, text: &str, rule: &str) -> String {
        format!("[[pivot]]\nid = \"{id}\"\n[[pivot.version]]\ntext = \"{text}\"\nkind = \"function\"\nrule = \"{rule}\"\n\n")
    }

    /// Commits `files` (path, text; None removes) on HEAD with `message`.
    pub(crate) fn commit(repo: &git2::Repository, files: &[(&str, Option<&str>)], message: &str) {
        let root = repo.workdir().unwrap().to_path_buf();
        let mut index = repo.index().unwrap();
        for (path, text) in files {
            match text {
                Some(t) => {
                    std::fs::write(root.join(path), t).unwrap();
                    index.add_path(Path::new(path)).unwrap();
                }
                None => {
                    std::fs::remove_file(root.join(path)).unwrap();
                    index.remove_path(Path::new(path)).unwrap();
                }
            }
        }
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let who = git2::Signature::now("Ana", "ana@example.org").unwrap();
        let parent = repo.head().ok().map(|h| h.peel_to_commit().unwrap());
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        repo.commit(Some("HEAD"), &who, &who, message, &tree, &parents)
            .unwrap();
    }

    fn changes(h: &PivotHistory, k: usize) -> Vec<String> {
        let mut v: Vec<String> = (h.ledger.changes_at(k).iter())
            .map(|a| {
                let what = if a.version.withdrawn { "-" } else { "+" };
                format!("{what}{}@{}", a.pivot.id, a.version.version)
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn commits_that_change_the_file_are_sessions_with_additions_updates_and_removals() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let f = pivot("fn", "start with f_", "^f_");
        let g = pivot("fn", "start with g_", "^g_");
        let cls = pivot("cls", "CamelCase classes", "^[A-Z]");
        commit(&repo, &[("pivots.toml", Some(&f))], "add fn");
        commit(&repo, &[("a.py", Some("x = 1\n"))], "code only");
        commit(
            &repo,
            &[("pivots.toml", Some(&(f.clone() + &cls)))],
            "add cls",
        );
        commit(
            &repo,
            &[("pivots.toml", Some(&(g.clone() + &cls)))],
            "fn: g_",
        );
        commit(
            &repo,
            &[("pivots.toml", Some(&(g.clone() + "# cls retired\n")))],
            "drop cls",
        );
        let renamed = g.replace("id = \"fn\"", "id = \"fn-prefix\"");
        commit(&repo, &[("pivots.toml", Some(&renamed))], "rename fn");
        commit(
            &repo,
            &[("pivots.toml", Some(&format!("# reviewed\n{renamed}")))],
            "a comment only",
        );
        commit(&repo, &[("pivots.toml", Some("not toml ["))], "broken");
        commit(&repo, &[("pivots.toml", None)], "remove the file");

        let r = Repo::open(dir.path()).unwrap();
        let h = r.pivot_history("pivots.toml", "pivots.toml", None).unwrap();
        let summaries: Vec<String> = (h.sessions.iter())
            .map(|c| c.as_ref().unwrap().summary.clone())
            .collect();
        assert_eq!(
            summaries,
            [
                "add fn",
                "add cls",
                "fn: g_",
                "drop cls",
                "rename fn",
                "remove the file"
            ]
        );
        assert_eq!(changes(&h, 0), ["+fn@0"]);
        assert_eq!(changes(&h, 1), ["+cls@0"]);
        assert_eq!(changes(&h, 2), ["+fn@1"]);
        assert_eq!(changes(&h, 3), ["-cls@1"]);
        assert_eq!(changes(&h, 4), ["+fn-prefix@0", "-fn@2"]);
        // A comment, or a file that does not parse, is no session (the latter says which
        // commit it was).
        assert_eq!(h.warnings.len(), 1);
        assert!(h.warnings[0].contains("broken"), "{:?}", h.warnings);
        assert_eq!(changes(&h, 5), ["-fn-prefix@1"]);
        let active = |k| -> Vec<String> {
            (h.ledger.active_at(k).iter())
                .map(|a| format!("{}={}", a.pivot.id, a.version.rule.describe()))
                .collect()
        };
        assert_eq!(active(2).len(), 2);
        assert_eq!(active(4).len(), 1);
        assert!(active(5).is_empty());

        // The working tree's file, when it differs from HEAD's, is one more session.
        let w = r
            .pivot_history("pivots.toml", "pivots.toml", Some(f.as_bytes()))
            .unwrap();
        assert_eq!(w.sessions.len(), 7);
        assert!(w.sessions[6].is_none());
        assert_eq!(changes(&w, 6), ["+fn@3"]);
    }

    #[test]
    fn a_repository_without_commits_has_only_the_working_file() {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        let r = Repo::open(dir.path()).unwrap();
        let f = pivot("fn", "start with f_", "^f_");
        let h = r
            .pivot_history("pivots.toml", "pivots.toml", Some(f.as_bytes()))
            .unwrap();
        assert_eq!(h.sessions, [None]);
        assert_eq!(changes(&h, 0), ["+fn@0"]);
        let none = r.pivot_history("pivots.toml", "pivots.toml", None).unwrap();
        assert!(none.sessions.is_empty());
    }

    #[test]
    fn an_instruction_file_s_sessions_are_the_commits_that_change_its_rules() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let rule = "# Team\n\n## Style\n\n- Use snake_case for function names.\n";
        let commented =
            "# Team\n\n<!-- reviewed -->\n\n## Style\n\n- Use snake_case for function names.\n";
        let more = format!("{commented}- Every function has a docstring.\n");
        commit(
            &repo,
            &[("AGENTS.md", Some("# Team\n\nBe kind.\n"))],
            "no rule",
        );
        commit(&repo, &[("AGENTS.md", Some(rule))], "the rule");
        commit(&repo, &[("AGENTS.md", Some(commented))], "a comment");
        commit(&repo, &[("AGENTS.md", Some(&more))], "docstrings");
        let r = Repo::open(dir.path()).unwrap();
        let h = r
            .rules_history(
                "AGENTS.md",
                "AGENTS.md",
                Some(more.as_bytes()),
                RulesFile::Instructions,
            )
            .unwrap();
        let summaries: Vec<String> = (h.sessions.iter())
            .map(|c| c.as_ref().unwrap().summary.clone())
            .collect();
        // The first commit gives no rule, the comment none either.
        assert_eq!(summaries, ["the rule", "docstrings"], "{h:?}");
        assert_eq!(h.ledger.active_at(0).len(), 2, "function and method names");
        let later = h.ledger.active_at(1).len();
        assert!(later > 2, "the docstring rule added: {later}");
        assert!(h.warnings.is_empty(), "{:?}", h.warnings);
        let now = instructions_ledger("AGENTS.md", more.as_bytes()).unwrap();
        assert_eq!(now.pivots.len(), later);
        assert!(now.pivots.iter().all(|p| p.origin == "AGENTS.md"));
    }
}
