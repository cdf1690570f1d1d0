//! A history checked commit by commit, and each new finding attributed by when its code
//! was written. A commit's tree is checked against the rules in force at it (the
//! timeline's `pivots.toml` of its session); within one session only the files the commit
//! changed are checked again, the others' findings carried over. A finding is new when the
//! commit before had none with its key; a new finding of a pivot is then
//!
//! - older than the instruction, when blame says its line was written before the commit
//!   of the session that gave the version in force (a backlog, not a forgotten update);
//! - following the version before, when the code was written since, the pivot had a
//!   version before, and that version finds nothing there (the update forgotten);
//! - breaking the version in force otherwise.
//!
//! The checking itself is the caller's (a `Checker`): this crate knows no server.

use super::blame::Blame;
use super::timeline::RuleHistory;
use super::{Commit, Repo};
use anyhow::{Context, Result};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;
use std::time::Instant;

/// What the history needs to know of a finding.
pub trait Seen {
    /// Relative to the checked root, `/`-separated.
    fn path(&self) -> &str;
    /// 0-based.
    fn line(&self) -> u32;
    fn col(&self) -> u32;
    /// The pivot it is about; None for a finding of no pivot (a syntax error).
    fn pivot(&self) -> Option<String>;
    /// The same finding in two commits has the same key (it does not depend on the line).
    fn key(&self) -> &str;
}

/// Checks a tree written out to a folder.
pub trait Checker {
    type Finding: Seen + Clone;
    /// The findings of `tree`'s files against `pivots` (a `pivots.toml`'s text), and how
    /// many files were checked: every file, or only those in `only` (relative paths).
    fn check(
        &mut self,
        tree: &Path,
        pivots: &str,
        only: Option<&BTreeSet<String>>,
    ) -> Result<(Vec<Self::Finding>, usize)>;
    /// Findings gathered from several checks, put in the order one check of the whole
    /// tree gives.
    fn sort(&self, findings: &mut Vec<Self::Finding>);
    /// Whether a change of `path` can change which other files are checked (an ignore
    /// file): then the whole tree is checked again.
    fn affects_all(&self, path: &str) -> bool {
        let _ = path;
        false
    }
}

/// What a new finding is, by when its code was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Code written before the session that gave the version in force: a backlog.
    OlderThanInstruction,
    /// Written since, keeping the version before the one in force: the update forgotten.
    FollowsVersionBefore,
    /// Written since, keeping neither (or the pivot has no version before).
    BreaksVersionInForce,
    /// A finding of no pivot (a syntax error, an unused suppression).
    NoPivot,
}

/// One new finding of a commit, attributed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attributed {
    /// Its index in the step's findings.
    pub index: usize,
    pub class: Class,
    /// The commit (its place in the history) that wrote its line.
    pub written: Option<usize>,
    /// The session that gave the version in force.
    pub given: Option<usize>,
    /// The session that gave the version before (with `FollowsVersionBefore`).
    pub before: Option<usize>,
}

/// One commit checked.
pub struct Step<F> {
    pub commit: Commit,
    pub position: usize,
    pub session: Option<usize>,
    /// Every finding of its tree, in the checker's order.
    pub findings: Vec<F>,
    /// The findings the commit before it did not have.
    pub new: Vec<Attributed>,
    /// Files checked for it (the others' findings carried over).
    pub rechecked: usize,
    pub seconds: f64,
}

/// A history checked.
pub struct Run<F> {
    pub history: RuleHistory,
    /// `--since`'s commit: its findings are the baseline, none of them new.
    pub baseline: Option<Commit>,
    pub steps: Vec<Step<F>>,
}

/// Checks every commit of `history` after `since` (every one without it), calling `each`
/// after each commit.
pub fn run<C: Checker>(
    repo: &Repo,
    history: RuleHistory,
    since: Option<&str>,
    checker: &mut C,
    each: &mut dyn FnMut(&Step<C::Finding>, &RuleHistory),
) -> Result<Run<C::Finding>> {
    let start = match since {
        Some(rev) => {
            let c = repo.resolve(rev)?;
            Some(history.position(&c.id).with_context(|| {
                format!(
                    "{rev} ({}) is not on the branch's first-parent line",
                    c.short
                )
            })?)
        }
        None => None,
    };
    let dir = tempfile::tempdir().context("cannot create a temporary folder")?;
    let mut blame = Blame::default();
    let mut run = Run {
        baseline: None,
        steps: Vec::new(),
        history,
    };
    // The commit before: its place, session and findings.
    let mut prev: Option<(usize, Option<usize>, Vec<C::Finding>)> = None;
    for pos in start.unwrap_or(0)..run.history.commits.len() {
        let t = Instant::now();
        let c = run.history.commits[pos].clone();
        let session = run.history.session_of[pos];
        let toml = session.map_or_else(String::new, |k| run.history.toml_at(k));
        let (findings, rechecked) = match &prev {
            None => {
                repo.write_tree(&c.id, dir.path())?;
                checker.check(dir.path(), &toml, None)?
            }
            Some((p, s, before)) => {
                let from = &run.history.commits[*p].id;
                let changed: BTreeSet<String> = repo
                    .update_tree(from, &c.id, dir.path())?
                    .into_iter()
                    .collect();
                if *s == session && !changed.iter().any(|p| checker.affects_all(p)) {
                    let mut kept: Vec<C::Finding> = (before.iter())
                        .filter(|f| !changed.contains(f.path()))
                        .cloned()
                        .collect();
                    let (fresh, n) = match changed.is_empty() {
                        true => (Vec::new(), 0),
                        false => checker.check(dir.path(), &toml, Some(&changed))?,
                    };
                    kept.extend(fresh);
                    checker.sort(&mut kept);
                    (kept, n)
                } else {
                    checker.check(dir.path(), &toml, None)?
                }
            }
        };
        if Some(pos) == start {
            run.baseline = Some(c);
            prev = Some((pos, session, findings));
            continue;
        }
        let known: HashSet<&str> = match &prev {
            Some((_, _, before)) => before.iter().map(|f| f.key()).collect(),
            None => HashSet::new(),
        };
        let fresh: Vec<usize> = (0..findings.len())
            .filter(|&i| !known.contains(findings[i].key()))
            .collect();
        let new = attribute(
            repo,
            &run.history,
            &mut blame,
            checker,
            dir.path(),
            &c,
            session,
            &findings,
            fresh,
        )?;
        let step = Step {
            commit: c,
            position: pos,
            session,
            findings,
            new,
            rechecked,
            seconds: t.elapsed().as_secs_f64(),
        };
        each(&step, &run.history);
        prev = Some((pos, session, step.findings.clone()));
        run.steps.push(step);
    }
    Ok(run)
}

/// The classes of the new findings (`fresh`, indices in `findings`) of commit `c`.
#[allow(clippy::too_many_arguments)]
fn attribute<C: Checker>(
    repo: &Repo,
    h: &RuleHistory,
    blame: &mut Blame,
    checker: &mut C,
    tree: &Path,
    c: &Commit,
    session: Option<usize>,
    findings: &[C::Finding],
    fresh: Vec<usize>,
) -> Result<Vec<Attributed>> {
    let mut out = Vec::new();
    // Findings in new code of a pivot with a version before: checked against it below.
    let mut ask: Vec<usize> = Vec::new();
    for i in fresh {
        let f = &findings[i];
        let given = match (f.pivot(), session) {
            (Some(id), Some(k)) => h.given_at(&id, k).map(|g| (id, g)),
            _ => None,
        };
        let Some((id, given)) = given else {
            out.push(Attributed {
                index: i,
                class: Class::NoPivot,
                written: None,
                given: None,
                before: None,
            });
            continue;
        };
        let written = match blame.written(repo, &c.id, f.path(), f.line())? {
            Some(id) => h.position(&id.to_string()),
            // No such line (a file-level finding on an empty file): the file's last change.
            None => last_change(repo, h, blame, c, f.path())?,
        };
        let since = h.sessions[given].position;
        let class = match written {
            Some(w) if w < since => Class::OlderThanInstruction,
            _ => Class::BreaksVersionInForce,
        };
        let before = session.and_then(|k| h.version_before(&id, k));
        if class == Class::BreaksVersionInForce && before.is_some() {
            ask.push(out.len());
        }
        out.push(Attributed {
            index: i,
            class,
            written,
            given: Some(given),
            before: before.map(|(_, s)| s),
        });
    }
    if let (false, Some(k)) = (ask.is_empty(), session) {
        let files: BTreeSet<String> = ask
            .iter()
            .map(|&a| findings[out[a].index].path().to_string())
            .collect();
        let mut ids: Vec<String> = (ask.iter())
            .filter_map(|&a| findings[out[a].index].pivot())
            .collect();
        ids.sort();
        ids.dedup();
        let (old, _) = checker.check(tree, &h.toml_before(k, &ids), Some(&files))?;
        let places: HashSet<(String, u32, u32, Option<String>)> = old
            .iter()
            .map(|f| (f.path().to_string(), f.line(), f.col(), f.pivot()))
            .collect();
        for a in ask {
            let f = &findings[out[a].index];
            let place = (f.path().to_string(), f.line(), f.col(), f.pivot());
            if !places.contains(&place) {
                out[a].class = Class::FollowsVersionBefore;
            }
        }
    }
    for a in &mut out {
        if a.class != Class::FollowsVersionBefore {
            a.before = None;
        }
    }
    Ok(out)
}

/// The place of the last commit up to `c` that changed `rel` (relative to the root).
/// (Once per file version.)
fn last_change(
    repo: &Repo,
    h: &RuleHistory,
    blame: &mut Blame,
    c: &Commit,
    rel: &str,
) -> Result<Option<usize>> {
    let (Some(mut at), Some(blob)) = (h.position(&c.id), repo.blob_at(&c.id, rel)?) else {
        return Ok(None);
    };
    let key = (rel.to_string(), blob);
    if let Some(&known) = blame.changed.get(&key) {
        return Ok(known);
    }
    while at > 0 && repo.blob_at(&h.commits[at - 1].id, rel)? == Some(blob) {
        at -= 1;
    }
    blame.changed.insert(key, Some(at));
    Ok(Some(at))
}

/// One pivot's new findings while one of its versions was in force.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Adherence {
    /// Commits checked with that version in force.
    pub commits: usize,
    pub older_than_instruction: usize,
    pub followed_version_before: usize,
    pub broke: usize,
}

/// Per pivot, per session that gave one of its versions: the new findings of the commits
/// while that version was in force, by class. MemoryCode's question of a team's history:
/// after each update, does new code follow it?
pub fn adherence<F: Seen>(run: &Run<F>) -> BTreeMap<String, BTreeMap<usize, Adherence>> {
    let mut t: BTreeMap<String, BTreeMap<usize, Adherence>> = BTreeMap::new();
    for s in &run.steps {
        let Some(k) = s.session else { continue };
        for (p, given) in run.history.in_force(k) {
            t.entry(p.id.clone())
                .or_default()
                .entry(given)
                .or_default()
                .commits += 1;
        }
        for a in &s.new {
            let (Some(id), Some(g)) = (s.findings[a.index].pivot(), a.given) else {
                continue;
            };
            let row = t.entry(id).or_default().entry(g).or_default();
            match a.class {
                Class::OlderThanInstruction => row.older_than_instruction += 1,
                Class::FollowsVersionBefore => row.followed_version_before += 1,
                Class::BreaksVersionInForce => row.broke += 1,
                Class::NoPivot => {}
            }
        }
    }
    t
}
