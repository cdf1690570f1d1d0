//! `check --rev REV` and `check --history [--since REV]`: a project's own history as
//! sessions. The tree of a commit is written out (core `history`, through libgit2) and
//! checked as a checkout of that commit would be, against the pivots file of that commit;
//! the history walks the branch's commits and sorts each pivot's new findings into those
//! that break the version in force and those that still follow the version before it.

use super::check_cmd::{
    check_and_write, check_tree, input_error, say_counts, CheckArgs, CheckFormat, Outcome,
};
use super::check_format::{AdherenceRow, HistoryCommit, HistoryReport, NewFinding};
use super::check_report::Finding;
use super::log_safe;
use anyhow::{Context, Result};
use pivot_history::{Commit, Repo};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

pub fn run(a: &CheckArgs, root: &Path) -> Result<i32> {
    let repo = match Repo::open(root) {
        Ok(r) => r,
        Err(e) => {
            // The plain behaviour, said: the working tree as it is.
            eprintln!(
                "warning: {}; checking the files as they are instead",
                log_safe::text(&format!("{e:#}"))
            );
            return check_and_write(a, root, root);
        }
    };
    match &a.rev {
        Some(rev) => at_rev(a, root, &repo, rev),
        None => history(a, root, &repo),
    }
}

/// The commit's files in a temporary folder.
fn written(repo: &Repo, c: &Commit) -> Result<tempfile::TempDir> {
    let dir = tempfile::tempdir().context("cannot create a temporary folder")?;
    repo.write_tree(&c.id, dir.path())?;
    Ok(dir)
}

fn at_rev(a: &CheckArgs, root: &Path, repo: &Repo, rev: &str) -> Result<i32> {
    let c = match repo.resolve(rev) {
        Ok(c) => c,
        Err(e) => return input_error(format!("{e:#}")),
    };
    eprintln!(
        "checking commit {} ({})",
        c.short,
        log_safe::text(&c.summary)
    );
    let dir = written(repo, &c)?;
    check_and_write(a, dir.path(), root)
}

/// The pivots file's path relative to the root.
fn pivots_rel(a: &CheckArgs) -> String {
    a.pivots
        .as_deref()
        .unwrap_or(Path::new("pivots.toml"))
        .to_string_lossy()
        .into_owned()
}

/// A finding's place, for matching it across two runs on the same files.
fn place(f: &Finding) -> (String, u32, u32, String) {
    let r = f.diagnostic.range;
    (f.path.clone(), r.start.line, r.start.character, f.code())
}

/// One commit's check, and what is new in it.
struct Step {
    commit: Commit,
    /// The index of the pivots file's session in force (None: before its first commit).
    session: Option<usize>,
    outcome: Outcome,
    /// Of the findings, those not found in the commit before (by fingerprint), each with
    /// whether it still follows the pivot's version before the one in force.
    new: Vec<(usize, bool)>,
}

fn history(a: &CheckArgs, root: &Path, repo: &Repo) -> Result<i32> {
    if !matches!(a.format, CheckFormat::Text | CheckFormat::Json) {
        return input_error("--history writes text or JSON (--format text|json)".into());
    }
    let rel = pivots_rel(a);
    let all = repo.commits("HEAD", None)?;
    let sessions = repo.changed(&all, &rel)?;
    let range = match repo.commits("HEAD", a.since.as_deref()) {
        Ok(r) => r,
        Err(e) => return input_error(format!("{e:#}")),
    };
    // The pivots file of each session, and for each commit the session in force.
    let mut session_files: Vec<Option<Vec<u8>>> = Vec::new();
    for s in &sessions {
        session_files.push(repo.file_at(&s.id, &rel)?);
    }
    // Each commit's place in the history, and each session's (in order).
    let position: std::collections::HashMap<&str, usize> = (all.iter().enumerate())
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();
    let at = |c: &Commit| position.get(c.id.as_str()).copied().unwrap_or(0);
    let starts: Vec<usize> = sessions.iter().map(at).collect();
    let session_of =
        |c: &Commit| -> Option<usize> { starts.partition_point(|&s| s <= at(c)).checked_sub(1) };
    eprintln!(
        "history of {}: {} commit{} to check, {} session{} ({} changed)",
        log_safe::text(&rel),
        range.len(),
        if range.len() == 1 { "" } else { "s" },
        sessions.len(),
        if sessions.len() == 1 { "" } else { "s" },
        log_safe::text(&rel)
    );
    let mut steps: Vec<Step> = Vec::new();
    let mut before: HashSet<String> = HashSet::new();
    let mut exit = 0;
    for c in range {
        let dir = written(repo, &c)?;
        let session = session_of(&c);
        eprintln!(
            "commit {} ({}), session {}:",
            c.short,
            log_safe::text(&c.summary),
            session.map_or("none".into(), |s| s.to_string())
        );
        let outcome = match check_tree(a, dir.path(), root)? {
            Ok(o) => o,
            Err(e) => return input_error(format!("commit {}: {e}", c.short)),
        };
        say_counts(&outcome);
        if !outcome.setup_errors.is_empty() {
            exit = 2;
        }
        // The same files against the session before's pivots: a new finding that is not
        // there follows the version before the one in force.
        let previous = match session {
            Some(s) if s > 0 => session_files[s - 1].as_ref(),
            _ => None,
        };
        let old_places: Option<HashSet<(String, u32, u32, String)>> = match previous {
            Some(bytes) => {
                let other = tempfile::tempdir()?;
                let file = other.path().join("pivots.toml");
                std::fs::write(&file, bytes)?;
                let mut b = args_with_pivots(a, file);
                b.session = None;
                match check_tree(&b, dir.path(), root)? {
                    Ok(o) => Some(o.findings.iter().map(place).collect()),
                    Err(_) => None,
                }
            }
            None => None,
        };
        let new: Vec<(usize, bool)> = outcome
            .findings
            .iter()
            .enumerate()
            .filter(|(_, f)| !before.contains(&f.fingerprint))
            .map(|(i, f)| {
                let follows_old = old_places
                    .as_ref()
                    .is_some_and(|old| f.source() != "python" && !old.contains(&place(f)));
                (i, follows_old)
            })
            .collect();
        before = outcome
            .findings
            .iter()
            .map(|f| f.fingerprint.clone())
            .collect();
        steps.push(Step {
            commit: c,
            session,
            outcome,
            new,
        });
    }
    let out = match a.format {
        CheckFormat::Json => {
            log_safe::json(serde_json::to_string_pretty(&report_json(
                root, &rel, &sessions, &steps,
            ))?) + "\n"
        }
        _ => report_text(&sessions, &steps),
    };
    match a.output.as_deref() {
        Some(p) => pivot_base::durable::write_atomic(p, out.as_bytes())?,
        None => print!("{out}"),
    }
    let any = steps.iter().any(|s| !s.outcome.findings.is_empty());
    Ok(if exit != 0 {
        exit
    } else if any && !a.exit_zero {
        1
    } else {
        0
    })
}

/// `a` with `--pivots FILE` (a path outside the tree, read as named) and nothing written.
fn args_with_pivots(a: &CheckArgs, file: PathBuf) -> CheckArgs {
    CheckArgs {
        pivots: Some(file),
        output: None,
        bundle: None,
        baseline: None,
        shard: None,
        rev: None,
        history: false,
        since: None,
        ..a.clone()
    }
}

/// Per pivot and session: the new findings in the commits while that session was in
/// force, split into breaking the version in force and following the one before.
fn adherence(steps: &[Step]) -> BTreeMap<String, BTreeMap<Option<usize>, [usize; 3]>> {
    // [commits checked, new findings that break the version in force, that follow the
    // version before]
    let mut t: BTreeMap<String, BTreeMap<Option<usize>, [usize; 3]>> = BTreeMap::new();
    for s in steps {
        let ids: Vec<String> = s.outcome.pivots.as_array().map_or(Vec::new(), |ps| {
            ps.iter()
                .filter_map(|p| p["id"].as_str().map(str::to_string))
                .collect()
        });
        for id in &ids {
            t.entry(id.clone())
                .or_default()
                .entry(s.session)
                .or_default()[0] += 1;
        }
        for &(i, follows_old) in &s.new {
            let f = &s.outcome.findings[i];
            if f.source() == "python" {
                continue;
            }
            let row = t.entry(f.code()).or_default().entry(s.session).or_default();
            row[if follows_old { 2 } else { 1 }] += 1;
        }
    }
    t
}

fn report_text(sessions: &[Commit], steps: &[Step]) -> String {
    let mut s = String::new();
    for st in steps {
        s.push_str(&format!(
            "== commit {} {} (session {}): {} finding{}, {} new\n",
            st.commit.short,
            log_safe::text(&st.commit.summary),
            st.session.map_or("none".into(), |k| k.to_string()),
            st.outcome.findings.len(),
            if st.outcome.findings.len() == 1 {
                ""
            } else {
                "s"
            },
            st.new.len()
        ));
        for &(i, follows_old) in &st.new {
            let f = &st.outcome.findings[i];
            let r = f.diagnostic.range.start;
            s.push_str(&format!(
                "{}:{}:{}: [{}] {}{}\n",
                log_safe::path(&f.path),
                r.line + 1,
                r.character + 1,
                log_safe::text(&f.code()),
                log_safe::text(&f.message().replace(['\r', '\n'], " ")),
                if follows_old {
                    " (follows the version before: the update forgotten)"
                } else {
                    ""
                }
            ));
        }
    }
    s.push_str("\nper pivot, new findings while each session was in force (commits checked: broke the version in force / followed the version before):\n");
    for (id, rows) in adherence(steps) {
        s.push_str(&format!("{}\n", log_safe::text(&id)));
        for (session, [n, broke, old]) in rows {
            let label = match session {
                Some(k) => format!(
                    "session {k} (commit {})",
                    sessions.get(k).map_or("?", |c| c.short.as_str())
                ),
                None => "before the first session".into(),
            };
            s.push_str(&format!(
                "  {label}: {n} commit{}: {broke} broke it, {old} followed the version before\n",
                if n == 1 { "" } else { "s" }
            ));
        }
    }
    s
}

fn report_json<'a>(
    root: &Path,
    rel: &'a str,
    sessions: &'a [Commit],
    steps: &'a [Step],
) -> HistoryReport<'a> {
    let json_finding = super::check_report::json_finding;
    let commits = (steps.iter())
        .map(|st| HistoryCommit {
            commit: &st.commit,
            session: st.session,
            pivots: &st.outcome.pivots,
            findings: st.outcome.findings.iter().map(json_finding).collect(),
            new: (st.new.iter())
                .map(|&(i, follows_old)| NewFinding {
                    finding: json_finding(&st.outcome.findings[i]),
                    follows_version_before: follows_old,
                })
                .collect(),
        })
        .collect();
    let adherence = (adherence(steps).into_iter())
        .map(|(id, rows)| {
            let rows = (rows.into_iter())
                .map(|(session, [n, broke, old])| AdherenceRow {
                    session,
                    commits: n,
                    broke,
                    followed_version_before: old,
                })
                .collect();
            (id, rows)
        })
        .collect();
    HistoryReport {
        version: super::VERSION,
        root: root.display().to_string(),
        pivots_file: rel,
        sessions,
        commits,
        adherence,
    }
}
