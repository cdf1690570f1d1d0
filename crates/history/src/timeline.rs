//! The sessions of a rules file's history: a commit is a session when the rules read from
//! the file (rules.rs) differ from those in force before it, never merely because the
//! file's bytes changed. Each pivot keeps the versions the sessions gave it, so that the
//! version in force at any commit, the version before it, and the session and commit
//! that gave each can be named.

use super::rules::{pivots_toml, read_rules, RuleVersion, Rules, RulesFile};
use super::{Commit, Repo};
use anyhow::Result;
use pivot_python::pivots::Rule;
use std::collections::HashMap;

/// A commit whose rules differ from those before it, and how.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Session {
    pub index: usize,
    pub commit: Commit,
    /// The commit's place in the first-parent history (`RuleHistory::commits`).
    pub position: usize,
    pub added: Vec<String>,
    pub updated: Vec<String>,
    pub removed: Vec<String>,
    /// `[old, new]`: in an instruction file, the one pivot of a kind removed and the one of
    /// that kind added in the same commit are one rule rewritten ("snake_case for functions"
    /// become "camelCase"): the importer's ids name the rule's form, not the team's topic.
    /// The new one's version before is the old one's.
    pub replaced: Vec<[String; 2]>,
}

/// One version of a pivot: given at `session`, or withdrawn there (`rule` None).
#[derive(Clone, Debug)]
pub struct Given {
    pub session: usize,
    pub rule: Option<RuleVersion>,
    /// The pivot this first version rewrites (`Session::replaced`).
    pub replaces: Option<String>,
}

/// The rules file's history on HEAD's first-parent line.
#[derive(Debug, Default)]
pub struct RuleHistory {
    pub file: String,
    pub kind: Option<RulesFile>,
    /// Every first-parent commit, oldest first.
    pub commits: Vec<Commit>,
    /// For each commit, the session in force (None: before the first one).
    pub session_of: Vec<Option<usize>>,
    pub sessions: Vec<Session>,
    /// Pivot id -> its versions, in session order.
    pub pivots: HashMap<String, Vec<Given>>,
    /// The top-level `exclude` of each session.
    project_exclude: Vec<Vec<String>>,
    /// Commits whose file could not be read: the rules before them stay in force.
    pub warnings: Vec<String>,
    position: HashMap<String, usize>,
}

impl RuleHistory {
    /// A commit's place in `commits`.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.position.get(id).copied()
    }

    /// The version of `id` in force at `session`, and the index of the version in its list.
    fn in_force_at(&self, id: &str, session: usize) -> Option<(usize, &Given)> {
        let given = self.pivots.get(id)?;
        let i = given.iter().rposition(|g| g.session <= session)?;
        given[i].rule.as_ref().map(|_| (i, &given[i]))
    }

    /// The session that gave the version of `id` in force at `session`.
    pub fn given_at(&self, id: &str, session: usize) -> Option<usize> {
        self.in_force_at(id, session).map(|(_, g)| g.session)
    }

    /// The version of `id` before the one in force at `session`, and the session that gave
    /// it; None when the one in force is its first (or follows a withdrawal).
    pub fn version_before(&self, id: &str, session: usize) -> Option<(&RuleVersion, usize)> {
        let (i, now) = self.in_force_at(id, session)?;
        if i == 0 {
            // A rewritten rule's version before is the last of the one it replaces.
            let old = now.replaces.as_deref()?;
            let g = (self.pivots.get(old)?.iter())
                .rev()
                .find(|g| g.session < now.session)?;
            return g.rule.as_ref().map(|r| (r, g.session));
        }
        let g = self.pivots.get(id)?.get(i - 1)?;
        g.rule.as_ref().map(|r| (r, g.session))
    }

    /// Every pivot in force at `session`, with the session that gave its version, by id.
    pub fn in_force(&self, session: usize) -> Vec<(&RuleVersion, usize)> {
        let mut ids: Vec<&String> = self.pivots.keys().collect();
        ids.sort();
        ids.into_iter()
            .filter_map(|id| {
                let (_, g) = self.in_force_at(id, session)?;
                Some((g.rule.as_ref()?, g.session))
            })
            .collect()
    }

    /// The `pivots.toml` in force at `session`, each version marked with its session.
    pub fn toml_at(&self, session: usize) -> String {
        let exclude = self
            .project_exclude
            .get(session)
            .cloned()
            .unwrap_or_default();
        pivots_toml(self.in_force(session), &exclude)
    }

    /// A `pivots.toml` of the versions before those in force at `session`, of `ids`.
    pub fn toml_before(&self, session: usize, ids: &[String]) -> String {
        let exclude = self
            .project_exclude
            .get(session)
            .cloned()
            .unwrap_or_default();
        // Under the id in force (a rewritten rule's version before has the old id), so
        // that its findings are matched to the ones they would be.
        let before: Vec<(RuleVersion, usize)> = ids
            .iter()
            .filter_map(|id| {
                let (r, k) = self.version_before(id, session)?;
                let mut r = r.clone();
                r.id = id.clone();
                Some((r, k))
            })
            .collect();
        pivots_toml(before.iter().map(|(r, k)| (r, *k)), &exclude)
    }
}

impl Repo {
    /// The sessions of `rel` (relative to the root) on HEAD's first-parent line, read as
    /// `kind` says. The file is read again only at the commits where its bytes changed.
    pub fn rule_history(&self, rel: &str, kind: RulesFile) -> Result<RuleHistory> {
        let commits = match self.repo.head() {
            Ok(_) => self.commits("HEAD", None)?,
            Err(_) => Vec::new(),
        };
        let mut h = RuleHistory {
            file: rel.to_string(),
            kind: Some(kind),
            position: (commits.iter().enumerate())
                .map(|(i, c)| (c.id.clone(), i))
                .collect(),
            ..RuleHistory::default()
        };
        let mut in_force = Rules::default();
        let mut last_blob = None;
        for (i, c) in commits.iter().enumerate() {
            let blob = self.blob_at(&c.id, rel)?;
            if blob != last_blob {
                last_blob = blob;
                let now = match blob {
                    None => Ok(Rules::default()),
                    Some(id) => read_rules(kind, rel, self.repo.find_blob(id)?.content()),
                };
                match now {
                    Ok(now) => {
                        if let Some(s) = h.session(i, c, &in_force, &now, kind) {
                            h.sessions.push(s);
                            h.project_exclude.push(now.project_exclude.clone());
                        }
                        in_force = now;
                    }
                    Err(e) => h.warnings.push(format!(
                        "commit {} ({}): {rel} is not read ({e:#}); the rules before it stay in force",
                        c.short, c.summary
                    )),
                }
            }
            h.session_of.push(h.sessions.len().checked_sub(1));
        }
        h.commits = commits;
        Ok(h)
    }
}

impl RuleHistory {
    /// Of session `s`'s additions and removals, those that are one rule of a kind
    /// rewritten (the only one of its kind removed, and the only one added, in the same
    /// form: two name patterns, two presences, or one decorator's or import's presence and
    /// absence; "import `logging`" and "never import `pickle`" are two rules).
    fn rewritten(&mut self, s: &mut Session, before: &Rules, now: &Rules) {
        let kind_of = |rules: &Rules, id: &str| {
            (rules.pivots.iter()).find(|p| p.id == id).map(|p| {
                let form = match &p.rule {
                    Rule::Regex { .. } => String::from("regex"),
                    Rule::Presence(_) => String::from("presence"),
                    Rule::Member { name, .. } => format!("member {name}"),
                };
                (p.kind, form)
            })
        };
        let mut pairs = Vec::new();
        for old in &s.removed {
            let k = kind_of(before, old);
            let same: Vec<&String> = (s.removed.iter())
                .filter(|o| kind_of(before, o) == k)
                .collect();
            let new: Vec<&String> = (s.added.iter()).filter(|a| kind_of(now, a) == k).collect();
            if let ([_], [new]) = (&same[..], &new[..]) {
                pairs.push([old.clone(), (*new).clone()]);
            }
        }
        for [old, new] in &pairs {
            if let Some(g) = self.pivots.get_mut(new).and_then(|v| v.last_mut()) {
                g.replaces = Some(old.clone());
            }
            s.removed.retain(|r| r != old);
            s.added.retain(|a| a != new);
        }
        s.replaced = pairs;
    }

    /// The session commit `c` (at `position`) makes, when `now` differs from `before`.
    fn session(
        &mut self,
        position: usize,
        c: &Commit,
        before: &Rules,
        now: &Rules,
        file: RulesFile,
    ) -> Option<Session> {
        let k = self.sessions.len();
        let old: HashMap<&str, &RuleVersion> =
            before.pivots.iter().map(|p| (p.id.as_str(), p)).collect();
        let mut s = Session {
            index: k,
            commit: c.clone(),
            position,
            added: Vec::new(),
            updated: Vec::new(),
            removed: Vec::new(),
            replaced: Vec::new(),
        };
        for p in &now.pivots {
            match old.get(p.id.as_str()) {
                Some(o) if o.same_rule(p) => continue,
                Some(_) => s.updated.push(p.id.clone()),
                None => s.added.push(p.id.clone()),
            }
            self.pivots.entry(p.id.clone()).or_default().push(Given {
                session: k,
                rule: Some(p.clone()),
                replaces: None,
            });
        }
        for p in &before.pivots {
            if !now.pivots.iter().any(|q| q.id == p.id) {
                s.removed.push(p.id.clone());
                self.pivots.entry(p.id.clone()).or_default().push(Given {
                    session: k,
                    rule: None,
                    replaces: None,
                });
            }
        }
        if file == RulesFile::Instructions {
            self.rewritten(&mut s, before, now);
        }
        let changed = !(s.added.is_empty()
            && s.updated.is_empty()
            && s.removed.is_empty()
            && s.replaced.is_empty())
            || before.project_exclude != now.project_exclude;
        changed.then_some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessions::tests::{commit, pivot};

    fn summaries(h: &RuleHistory) -> Vec<&str> {
        h.sessions
            .iter()
            .map(|s| s.commit.summary.as_str())
            .collect()
    }

    #[test]
    fn a_pivots_file_gives_a_session_only_when_a_pivot_changes() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let f = pivot("fn", "start with f_", "^f_");
        let g = pivot("fn", "start with g_", "^g_");
        commit(&repo, &[("a.py", Some("x = 1\n"))], "code");
        commit(&repo, &[("pivots.toml", Some(&f))], "add fn");
        commit(
            &repo,
            &[("pivots.toml", Some(&format!("# why\n{f}")))],
            "a comment",
        );
        let reworded = f.replace("start with f_", "begin with f_");
        commit(&repo, &[("pivots.toml", Some(&reworded))], "reworded");
        commit(&repo, &[("pivots.toml", Some("not toml ["))], "broken");
        commit(&repo, &[("pivots.toml", Some(&g))], "fn: g_");
        commit(&repo, &[("pivots.toml", None)], "removed");
        let r = Repo::open(dir.path()).unwrap();
        let h = r.rule_history("pivots.toml", RulesFile::Pivots).unwrap();
        assert_eq!(summaries(&h), ["add fn", "fn: g_", "removed"]);
        assert_eq!(h.warnings.len(), 1, "{:?}", h.warnings);
        assert_eq!(
            h.session_of,
            [None, Some(0), Some(0), Some(0), Some(0), Some(1), Some(2)]
        );
        let s: Vec<(&[String], &[String], &[String])> = (h.sessions.iter())
            .map(|s| (&s.added[..], &s.updated[..], &s.removed[..]))
            .collect();
        let fn_ = ["fn".to_string()];
        assert_eq!(
            s,
            [
                (&fn_[..], &[][..], &[][..]),
                (&[][..], &fn_[..], &[][..]),
                (&[][..], &[][..], &fn_[..])
            ]
        );
        // The version in force names the session that gave it; the one before it is the
        // first version's, which has none before it.
        assert_eq!(h.given_at("fn", 1), Some(1));
        assert_eq!(h.version_before("fn", 1).map(|(_, s)| s), Some(0));
        assert!(h.version_before("fn", 0).is_none());
        assert!(h.in_force(2).is_empty());
        // The words in force are the session's, not a later rewording's.
        assert_eq!(h.in_force(0)[0].0.text, "start with f_");
        assert!(h.toml_at(1).contains("session = 1"), "{}", h.toml_at(1));
    }

    #[test]
    fn an_instruction_rewritten_in_another_form_is_the_same_rule_s_next_version() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let file = |rule: &str| format!("## Style\n\n- Use {rule} for function names.\n");
        commit(&repo, &[("AGENTS.md", Some(&file("snake_case")))], "snake");
        commit(&repo, &[("AGENTS.md", Some(&file("camelCase")))], "camel");
        let r = Repo::open(dir.path()).unwrap();
        let h = r
            .rule_history("AGENTS.md", RulesFile::Instructions)
            .unwrap();
        assert_eq!(summaries(&h), ["snake", "camel"]);
        let s = &h.sessions[1];
        assert_eq!(
            s.replaced,
            [
                ["function-snake-case", "function-camel-case"],
                ["method-snake-case", "method-camel-case"]
            ]
            .map(|p| p.map(String::from))
        );
        assert!(s.added.is_empty() && s.removed.is_empty(), "{s:?}");
        let (before, at) = h.version_before("function-camel-case", 1).unwrap();
        assert_eq!((before.id.as_str(), at), ("function-snake-case", 0));
        assert!(h.version_before("function-snake-case", 0).is_none());

        // Two import rules of different modules are two rules, not one rewritten.
        commit(
            &repo,
            &[("AGENTS.md", Some("- Always import `logging`.\n"))],
            "logging",
        );
        commit(
            &repo,
            &[("AGENTS.md", Some("- Never import `pickle`.\n"))],
            "pickle",
        );
        let h = r
            .rule_history("AGENTS.md", RulesFile::Instructions)
            .unwrap();
        let last = h.sessions.last().unwrap();
        assert!(last.replaced.is_empty(), "{last:?}");
        assert_eq!((last.added.len(), last.removed.len()), (1, 1), "{last:?}");
    }
}
