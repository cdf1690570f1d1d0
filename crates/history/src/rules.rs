//! The rules a file gives at one commit: a `pivots.toml`'s pivots (each in the version in
//! force, its latest), or the pivots `pivots import` proposes from an instruction file
//! (`AGENTS.md`, `CLAUDE.md`, ...). What a session compares is these rules, never the
//! file's bytes: a comment, a reworded sentence that reads as the same rule, or a moved
//! line (a changed citation) gives the same rules.

use anyhow::Result;
use pivot_python::pivots::import::{self, toml_string, Source};
use pivot_python::pivots::{Ledger, Rule};
use pivot_python::python::ObjectKind;

/// How a file is read into rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RulesFile {
    /// A `pivots.toml`: its pivots as written.
    Pivots,
    /// Prose instructions: the pivots the importer proposes from them.
    Instructions,
}

impl RulesFile {
    /// A `.toml` file is a pivots file; anything else is read as instructions.
    pub fn of(rel: &str) -> RulesFile {
        match rel.to_ascii_lowercase().ends_with(".toml") {
            true => RulesFile::Pivots,
            false => RulesFile::Instructions,
        }
    }
}

/// One pivot as a file gives it at one commit.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleVersion {
    pub id: String,
    /// The instruction's words (shown in messages; not part of what the rule is).
    pub text: String,
    pub kind: ObjectKind,
    pub rule: Rule,
    /// pivots.toml's `include` / `exclude` (none for an instruction file).
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

impl RuleVersion {
    /// Whether the two check the same thing on the same files (the words may differ).
    pub fn same_rule(&self, other: &RuleVersion) -> bool {
        self.kind == other.kind
            && self.rule == other.rule
            && self.include == other.include
            && self.exclude == other.exclude
    }
}

/// The rules of one commit's file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rules {
    pub pivots: Vec<RuleVersion>,
    /// pivots.toml's top-level `exclude`.
    pub project_exclude: Vec<String>,
}

/// The rules `bytes` give, read as `file` says; `name` is the file as messages name it.
pub fn read_rules(file: RulesFile, name: &str, bytes: &[u8]) -> Result<Rules> {
    let text = std::str::from_utf8(bytes).map_err(|_| anyhow::anyhow!("it is not UTF-8"))?;
    match file {
        RulesFile::Pivots => {
            let ledger = Ledger::from_toml(text, name)?;
            let mut project_exclude = Vec::new();
            let pivots = (ledger.pivots.into_iter())
                .filter_map(|p| {
                    if project_exclude.is_empty() {
                        project_exclude = p.scope.project_exclude.patterns.clone();
                    }
                    let v = p.versions.into_iter().last()?;
                    Some(RuleVersion {
                        id: p.id,
                        text: v.text,
                        kind: v.kind,
                        rule: v.rule,
                        include: p.scope.include.patterns,
                        // per-file-ignores naming the pivot exclude it all the same.
                        exclude: [p.scope.exclude.patterns, p.scope.file_ignores.patterns].concat(),
                    })
                })
                .collect();
            Ok(Rules {
                pivots,
                project_exclude,
            })
        }
        RulesFile::Instructions => {
            let got = import::import(&[Source {
                name: name.to_string(),
                text: text.to_string(),
            }]);
            let pivots = (got.proposed.into_iter())
                .map(|p| RuleVersion {
                    id: p.id,
                    text: p.text,
                    kind: p.kind,
                    rule: p.rule,
                    include: Vec::new(),
                    exclude: Vec::new(),
                })
                .collect();
            Ok(Rules {
                pivots,
                project_exclude: Vec::new(),
            })
        }
    }
}

/// A `pivots.toml` holding `pivots`, each version marked with the session that gave it
/// (so that a finding's message names that session), and the top-level `exclude`.
pub fn pivots_toml<'a>(
    pivots: impl IntoIterator<Item = (&'a RuleVersion, usize)>,
    project_exclude: &[String],
) -> String {
    let list = |v: &[String]| {
        let items: Vec<String> = v.iter().map(|s| toml_string(s)).collect();
        format!("[{}]", items.join(", "))
    };
    let mut s = String::new();
    if !project_exclude.is_empty() {
        s.push_str(&format!("exclude = {}\n", list(project_exclude)));
    }
    for (p, session) in pivots {
        s.push_str("\n[[pivot]]\n");
        s.push_str(&format!("id = {}\n", toml_string(&p.id)));
        if !p.include.is_empty() {
            s.push_str(&format!("include = {}\n", list(&p.include)));
        }
        if !p.exclude.is_empty() {
            s.push_str(&format!("exclude = {}\n", list(&p.exclude)));
        }
        s.push_str("[[pivot.version]]\n");
        s.push_str(&format!("session = {session}\n"));
        s.push_str(&format!("text = {}\n", toml_string(&p.text)));
        s.push_str(&format!("kind = {}\n", toml_string(p.kind.name())));
        s.push_str(&format!("rule = {}\n", import::rule_toml(&p.rule)));
        if let Some(names) = import::ignore_names_toml(&p.rule) {
            s.push_str(&format!("ignore-names = {names}\n"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comment_or_a_moved_line_gives_the_same_rules_and_the_toml_reads_back() {
        let a = "# Team\n\n## Style\n\n- Use snake_case for function names.\n";
        let b = "# Team\n\n<!-- reviewed -->\n\nSome words.\n\n## Style\n\n- Use snake_case for function names.\n";
        let ra = read_rules(RulesFile::Instructions, "AGENTS.md", a.as_bytes()).unwrap();
        let rb = read_rules(RulesFile::Instructions, "AGENTS.md", b.as_bytes()).unwrap();
        // "function names" is every def: the function and the method kinds.
        assert_eq!(ra.pivots.len(), 2, "{ra:?}");
        assert_eq!(ra, rb);
        let toml = pivots_toml(ra.pivots.iter().map(|p| (p, 3)), &["gen/".into()]);
        let back = read_rules(RulesFile::Pivots, "p.toml", toml.as_bytes()).unwrap();
        assert!(back.pivots[0].same_rule(&ra.pivots[0]), "{toml}");
        assert_eq!(back.project_exclude, ["gen/"]);
        let ledger = Ledger::from_toml(&toml, "p.toml").unwrap();
        assert_eq!(ledger.pivots[0].versions[0].session, 3);
    }
}
