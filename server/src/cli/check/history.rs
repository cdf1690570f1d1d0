//! `check --rev REV` and `check --history [--since REV] [--instructions FILE]`: a
//! project's own history as sessions. The tree of a commit is written out (core
//! `history`, through libgit2) and checked as a checkout of that commit would be. For the
//! history, the core reads the sessions (the commits that change the rules of the pivots
//! or instruction file), walks the commits and attributes each new finding; this file
//! gives it the check (the language servers, as `check` runs them) and writes the report.

use super::report::{self, Finding};
use crate::cli::check::{
    check_and_write, check_tree, input_error, say_counts, CheckArgs, CheckFormat,
};
use crate::cli::shared::check_format::{
    AdherenceRow, HistoryCommit, HistoryReport, HistorySession, InForce, NewFinding, SessionRef,
};
use crate::cli::shared::log_safe;
use anyhow::{Context, Result};
use pivot_history::{Attributed, Checker, Class, Commit, Repo, RuleHistory, RulesFile, Run, Seen};
use std::collections::{BTreeMap, BTreeSet};
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

/// The rules file's path relative to the root: `--instructions`, else the pivots file.
fn rules_rel(a: &CheckArgs) -> String {
    a.instructions
        .as_deref()
        .or(a.pivots.as_deref())
        .unwrap_or(Path::new("pivots.toml"))
        .to_string_lossy()
        .into_owned()
}

impl Seen for Finding {
    fn path(&self) -> &str {
        &self.path
    }
    fn line(&self) -> u32 {
        self.diagnostic.range.start.line
    }
    fn col(&self) -> u32 {
        self.diagnostic.range.start.character
    }
    fn pivot(&self) -> Option<String> {
        (self.source() != "python").then(|| self.code())
    }
    fn key(&self) -> &str {
        &self.fingerprint
    }
}

/// `check` as the core's history asks for it: the tree against a pivots file the core
/// wrote, through the language servers.
struct ServerCheck<'a> {
    a: CheckArgs,
    root: &'a Path,
    /// A set-up error in any commit (exit 2).
    setup_errors: bool,
}

impl Checker for ServerCheck<'_> {
    type Finding = Finding;

    fn check(
        &mut self,
        tree: &Path,
        pivots: &str,
        only: Option<&BTreeSet<String>>,
    ) -> Result<(Vec<Finding>, usize)> {
        // Always the same name in the tree, so that the cache's key is the same from one
        // commit (and one run) to the next while the rules are.
        let file = tree.join(".pivot-history.toml");
        pivot_base::durable::write_scratch(&file, pivots)?;
        let mut b = args_with_pivots(&self.a, file);
        b.only = only.cloned();
        let o = check_tree(&b, tree, self.root)?.map_err(anyhow::Error::msg)?;
        if only.is_none() {
            say_counts(&o);
        }
        self.setup_errors |= !o.setup_errors.is_empty();
        Ok((o.findings, o.checked.len()))
    }

    fn sort(&self, findings: &mut Vec<Finding>) {
        report::sort(findings);
    }

    /// The walk reads .gitignore and .ignore files (`pivot_workspace::walk`).
    fn affects_all(&self, path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        matches!(name, ".gitignore" | ".ignore")
    }
}

fn history(a: &CheckArgs, root: &Path, repo: &Repo) -> Result<i32> {
    if !matches!(a.format, CheckFormat::Text | CheckFormat::Json) {
        return input_error("--history writes text or JSON (--format text|json)".into());
    }
    let rel = rules_rel(a);
    let kind = RulesFile::of(&rel);
    let h = repo.rule_history(&rel, kind)?;
    for w in &h.warnings {
        eprintln!("warning: {}", log_safe::text(w));
    }
    if h.sessions.is_empty() {
        eprintln!(
            "warning: no commit's {} gives a rule{}: every commit is checked for syntax only",
            log_safe::text(&rel),
            match kind {
                RulesFile::Instructions => " that pivots import reads",
                RulesFile::Pivots => "",
            }
        );
    }
    let todo = match repo.commits("HEAD", a.since.as_deref()) {
        Ok(r) => r.len(),
        Err(e) => return input_error(format!("{e:#}")),
    };
    eprintln!(
        "history of {} (read as {}): {} commit{} to check, {} session{}",
        log_safe::text(&rel),
        read_as(kind),
        todo,
        if todo == 1 { "" } else { "s" },
        h.sessions.len(),
        if h.sessions.len() == 1 { "" } else { "s" },
    );
    let mut check = ServerCheck {
        a: CheckArgs {
            instructions: None,
            ..a.clone()
        },
        root,
        setup_errors: false,
    };
    let mut each = |st: &pivot_history::Step<Finding>, _: &RuleHistory| {
        eprintln!(
            "commit {} ({}), session {}: {} finding{}, {} new, {} file{} checked, {:.2} s",
            st.commit.short,
            log_safe::text(&st.commit.summary),
            st.session.map_or("none".into(), |s| s.to_string()),
            st.findings.len(),
            if st.findings.len() == 1 { "" } else { "s" },
            st.new.len(),
            st.rechecked,
            if st.rechecked == 1 { "" } else { "s" },
            st.seconds
        );
    };
    let run = match pivot_history::run(repo, h, a.since.as_deref(), &mut check, &mut each) {
        Ok(r) => r,
        Err(e) => return input_error(format!("{e:#}")),
    };
    let out = match a.format {
        CheckFormat::Json => {
            log_safe::json(serde_json::to_string_pretty(&report_json(
                root, &rel, kind, &run,
            ))?) + "\n"
        }
        _ => report_text(&rel, kind, &run),
    };
    match a.output.as_deref() {
        Some(p) => pivot_base::durable::write_atomic(p, out.as_bytes())?,
        None => print!("{out}"),
    }
    let any = run.steps.iter().any(|s| !s.findings.is_empty());
    Ok(if check.setup_errors {
        2
    } else if any && !a.exit_zero {
        1
    } else {
        0
    })
}

fn read_as(kind: RulesFile) -> &'static str {
    match kind {
        RulesFile::Pivots => "pivots",
        RulesFile::Instructions => "instructions",
    }
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
        instructions: None,
        session: None,
        ..a.clone()
    }
}

fn class_name(c: Class) -> &'static str {
    match c {
        Class::OlderThanInstruction => "older-than-instruction",
        Class::FollowsVersionBefore => "follows-version-before",
        Class::BreaksVersionInForce => "breaks-version-in-force",
        Class::NoPivot => "no-pivot",
    }
}

/// "session 2 (commit 9c0d1e2f3a4b)".
fn session_label(h: &RuleHistory, k: usize) -> String {
    match h.sessions.get(k) {
        Some(s) => format!("session {k} (commit {})", s.commit.short),
        None => format!("session {k}"),
    }
}

/// What the report says of an attributed finding, after its message.
fn attribution(h: &RuleHistory, a: &Attributed) -> String {
    let given = a.given.map(|g| session_label(h, g)).unwrap_or_default();
    let written = a
        .written
        .and_then(|w| h.commits.get(w))
        .map_or("an unknown commit".into(), |c| {
            format!("commit {}", c.short)
        });
    match a.class {
        Class::OlderThanInstruction => format!(
            " (older than the instruction: written at {written}, before {given} gave the version in force)"
        ),
        Class::FollowsVersionBefore => format!(
            " (follows the version before, given at {}: the update forgotten; written at {written}, after {given} gave the version in force)",
            a.before.map(|b| session_label(h, b)).unwrap_or_default()
        ),
        Class::BreaksVersionInForce => {
            format!(" (breaks the version in force, given at {given}; written at {written})")
        }
        Class::NoPivot => String::new(),
    }
}

fn finding_line(f: &Finding) -> String {
    let r = f.diagnostic.range.start;
    format!(
        "{}:{}:{}: [{}] {}",
        log_safe::path(&f.path),
        r.line + 1,
        r.character + 1,
        log_safe::text(&f.code()),
        log_safe::text(&f.message().replace(['\r', '\n'], " "))
    )
}

fn totals(run: &Run<Finding>) -> BTreeMap<&'static str, usize> {
    let mut t: BTreeMap<&'static str, usize> = [
        Class::OlderThanInstruction,
        Class::FollowsVersionBefore,
        Class::BreaksVersionInForce,
        Class::NoPivot,
    ]
    .into_iter()
    .map(|c| (class_name(c), 0))
    .collect();
    for a in run.steps.iter().flat_map(|s| &s.new) {
        *t.entry(class_name(a.class)).or_default() += 1;
    }
    t
}

fn report_text(rel: &str, kind: RulesFile, run: &Run<Finding>) -> String {
    let h = &run.history;
    let mut s = format!(
        "sessions of {} (read as {}): {}\n",
        log_safe::text(rel),
        read_as(kind),
        h.sessions.len()
    );
    for se in &h.sessions {
        let list = |what: &str, ids: &[String]| match ids.is_empty() {
            true => String::new(),
            false => format!("; {what} {}", log_safe::text(&ids.join(", "))),
        };
        let replaced: Vec<String> = (se.replaced.iter())
            .map(|[old, new]| format!("{old} by {new}"))
            .collect();
        s.push_str(&format!(
            "  session {}: commit {} {}{}{}{}{}\n",
            se.index,
            se.commit.short,
            log_safe::text(&se.commit.summary),
            list("added", &se.added),
            list("updated", &se.updated),
            list("removed", &se.removed),
            list("replaced", &replaced)
        ));
    }
    if let Some(b) = &run.baseline {
        s.push_str(&format!(
            "baseline: commit {} {} (its findings are not new)\n",
            b.short,
            log_safe::text(&b.summary)
        ));
    }
    for st in &run.steps {
        s.push_str(&format!(
            "== commit {} {} (session {}): {} finding{}, {} new\n",
            st.commit.short,
            log_safe::text(&st.commit.summary),
            st.session.map_or("none".into(), |k| k.to_string()),
            st.findings.len(),
            if st.findings.len() == 1 { "" } else { "s" },
            st.new.len()
        ));
        let (older, rest): (Vec<&Attributed>, Vec<&Attributed>) =
            (st.new.iter()).partition(|a| a.class == Class::OlderThanInstruction);
        for a in rest {
            let f = &st.findings[a.index];
            s.push_str(&format!("{}{}\n", finding_line(f), attribution(h, a)));
        }
        if !older.is_empty() {
            s.push_str(&format!(
                "  older than the instruction (a backlog, not a forgotten update): {}\n",
                older.len()
            ));
            for a in older {
                let f = &st.findings[a.index];
                s.push_str(&format!("  {}{}\n", finding_line(f), attribution(h, a)));
            }
        }
    }
    s.push_str("\nnew findings by class:");
    for (class, n) in totals(run) {
        s.push_str(&format!(" {class} {n};"));
    }
    s.pop();
    s.push_str("\nper pivot, new findings while each of its versions was in force (commits checked: older than the instruction / broke it / followed the version before):\n");
    for (id, rows) in pivot_history::adherence(run) {
        s.push_str(&format!("{}\n", log_safe::text(&id)));
        for (given, r) in rows {
            s.push_str(&format!(
                "  {}: {} commit{}: {} older than the instruction, {} broke it, {} followed the version before\n",
                session_label(h, given),
                r.commits,
                if r.commits == 1 { "" } else { "s" },
                r.older_than_instruction,
                r.broke,
                r.followed_version_before
            ));
        }
    }
    s
}

fn report_json<'a>(
    root: &Path,
    rel: &'a str,
    kind: RulesFile,
    run: &'a Run<Finding>,
) -> HistoryReport<'a> {
    let h = &run.history;
    let json_finding = super::report::json_finding;
    let at = |k: usize| SessionRef {
        session: k,
        commit: &h.sessions[k].commit,
    };
    let commits = (run.steps.iter())
        .map(|st| HistoryCommit {
            commit: &st.commit,
            session: st.session,
            pivots: st.session.map_or(Vec::new(), |k| {
                (h.in_force(k).into_iter())
                    .map(|(p, g)| InForce {
                        id: &p.id,
                        text: &p.text,
                        kind: p.kind.name(),
                        rule: p.rule.describe(),
                        given: at(g),
                    })
                    .collect()
            }),
            findings: st.findings.iter().map(json_finding).collect(),
            new: (st.new.iter())
                .map(|a| NewFinding {
                    finding: json_finding(&st.findings[a.index]),
                    class: a.class,
                    follows_version_before: a.class == Class::FollowsVersionBefore,
                    written: a.written.and_then(|w| h.commits.get(w)),
                    given: a.given.map(at),
                    before: a.before.map(at),
                })
                .collect(),
            rechecked: st.rechecked,
            seconds: st.seconds,
        })
        .collect();
    let adherence = (pivot_history::adherence(run).into_iter())
        .map(|(id, rows)| {
            let rows = (rows.into_iter())
                .map(|(given, r)| AdherenceRow {
                    session: given,
                    commit: &h.sessions[given].commit,
                    commits: r.commits,
                    older_than_instruction: r.older_than_instruction,
                    broke: r.broke,
                    followed_version_before: r.followed_version_before,
                })
                .collect();
            (id, rows)
        })
        .collect();
    HistoryReport {
        version: crate::cli::shared::VERSION,
        root: root.display().to_string(),
        rules_file: rel,
        read_as: read_as(kind),
        sessions: (h.sessions.iter())
            .map(|se| HistorySession {
                index: se.index,
                commit: &se.commit,
                added: &se.added,
                updated: &se.updated,
                removed: &se.removed,
                replaced: &se.replaced,
            })
            .collect(),
        baseline: run.baseline.as_ref(),
        commits,
        totals: totals(run),
        adherence,
        warnings: &h.warnings,
    }
}
