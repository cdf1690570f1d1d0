//! The ledger: pivots and their versions over the sessions of a conversation. An update
//! replaces the earlier version from its session on; "active at session k" is the latest
//! version of each pivot given at or before k.

use super::rule::Rule;
use super::scope::Scope;
use crate::python::ObjectKind;
use anyhow::Result;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PivotVersion {
    /// 0-based version number of the pivot.
    pub version: usize,
    /// 0-based session index where this version was given.
    pub session: usize,
    /// The instruction as the mentor gave it.
    pub text: String,
    pub kind: ObjectKind,
    #[serde(serialize_with = "rule_json")]
    pub rule: Rule,
    /// The pivot was taken out at this session (its file no longer names it): from here on
    /// it is not active. Text, kind and rule are the withdrawn version's, for display.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub withdrawn: bool,
}

fn rule_json<S: serde::Serializer>(r: &Rule, s: S) -> Result<S::Ok, S::Error> {
    r.to_json().serialize(s)
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pivot {
    pub id: String,
    /// Where it comes from: "memorycode" or "pivots.toml" or "user".
    pub origin: String,
    /// Versions in session order.
    pub versions: Vec<PivotVersion>,
    /// Every version's text in the catalogue (topics.json), given in this conversation or not.
    pub catalogue: Vec<String>,
    /// The files it is checked on (pivots.toml's `include` / `exclude`): all by default.
    #[serde(skip_serializing_if = "Scope::is_everywhere")]
    pub scope: Scope,
}

/// One pivot in the version active at some session.
#[derive(Clone, Copy, Debug)]
pub struct Active<'a> {
    pub pivot: &'a Pivot,
    pub version: &'a PivotVersion,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Ledger {
    pub pivots: Vec<Pivot>,
}

impl Ledger {
    /// The version of each pivot active at `session` (pivots not yet given are left out).
    pub fn active_at(&self, session: usize) -> Vec<Active<'_>> {
        self.pivots
            .iter()
            .filter_map(|p| {
                let v = p.versions.iter().rev().find(|v| v.session <= session)?;
                if v.withdrawn {
                    return None;
                }
                Some(Active {
                    pivot: p,
                    version: v,
                })
            })
            .collect()
    }

    /// Versions given exactly at `session`: the pivot changes of that session.
    pub fn changes_at(&self, session: usize) -> Vec<Active<'_>> {
        self.pivots
            .iter()
            .flat_map(|p| {
                p.versions
                    .iter()
                    .filter(move |v| v.session == session)
                    .map(move |v| Active {
                        pivot: p,
                        version: v,
                    })
            })
            .collect()
    }

    pub fn get(&self, id: &str) -> Option<&Pivot> {
        self.pivots.iter().find(|p| p.id == id)
    }

    /// Add a version of pivot `id` (creating the pivot), keeping versions in session order.
    pub fn give(
        &mut self,
        id: &str,
        origin: &str,
        session: usize,
        text: String,
        kind: ObjectKind,
        rule: Rule,
    ) {
        let found = self.pivots.iter().position(|p| p.id == id);
        self.give_at(found, id, origin, session, text, kind, rule);
    }

    /// `give` for many pivots at once: `index` (id -> position, kept up to date here)
    /// replaces the search, which made loading n pivots take n^2 comparisons.
    #[allow(clippy::too_many_arguments)]
    pub fn give_indexed(
        &mut self,
        index: &mut std::collections::HashMap<String, usize>,
        id: &str,
        origin: &str,
        session: usize,
        text: String,
        kind: ObjectKind,
        rule: Rule,
    ) {
        let found = index.get(id).copied();
        let at = self.give_at(found, id, origin, session, text, kind, rule);
        index.entry(id.to_string()).or_insert(at);
    }

    #[allow(clippy::too_many_arguments)]
    fn give_at(
        &mut self,
        found: Option<usize>,
        id: &str,
        origin: &str,
        session: usize,
        text: String,
        kind: ObjectKind,
        rule: Rule,
    ) -> usize {
        let idx = match found {
            Some(i) => i,
            None => {
                self.pivots.push(Pivot {
                    id: id.to_string(),
                    origin: origin.to_string(),
                    versions: Vec::new(),
                    catalogue: Vec::new(),
                    scope: Scope::default(),
                });
                self.pivots.len() - 1
            }
        };
        let p = &mut self.pivots[idx];
        let version = p.versions.len();
        // After every version of the same or an earlier session (as a stable sort would put
        // it): an append when versions come in session order, so n versions cost n, not n^2.
        let at = p.versions.partition_point(|v| v.session <= session);
        p.versions.insert(
            at,
            PivotVersion {
                version,
                session,
                text,
                kind,
                rule,
                withdrawn: false,
            },
        );
        idx
    }

    /// Take pivot `id` out from `session` on: a withdrawn version after its last one. False
    /// when there is no such pivot or it is already out.
    pub fn withdraw(&mut self, id: &str, session: usize) -> bool {
        let Some(p) = self.pivots.iter_mut().find(|p| p.id == id) else {
            return false;
        };
        let Some(last) = p.versions.last().filter(|v| !v.withdrawn) else {
            return false;
        };
        let out = PivotVersion {
            version: p.versions.len(),
            session,
            withdrawn: true,
            ..last.clone()
        };
        p.versions.push(out);
        true
    }

    /// Pivots from a `pivots.toml` (format in docs/pivots-toml.md); errors name `origin`
    /// as the file.
    pub fn from_toml(text: &str, origin: &str) -> Result<Ledger> {
        Ledger::from_toml_file(text, origin, origin)
    }

    /// `from_toml`, with errors naming the file `shown` (each with its line and column).
    pub fn from_toml_file(text: &str, origin: &str, shown: &str) -> Result<Ledger> {
        Ledger::from_config(text, origin, shown, super::toml_file::Format::PivotsToml)
    }

    /// `from_toml_file` for a file of the format `format` (a pyproject.toml's
    /// `[tool.pivot]`).
    pub fn from_config(
        text: &str,
        origin: &str,
        shown: &str,
        format: super::toml_file::Format,
    ) -> Result<Ledger> {
        let loaded = super::toml_file::load_as(text, shown, format).map_err(anyhow::Error::msg)?;
        let mut ledger = Ledger::default();
        let mut index = std::collections::HashMap::new();
        for p in loaded {
            for (session, text, kind, rule) in p.versions {
                ledger.give_indexed(&mut index, &p.id, origin, session, text, kind, rule);
            }
            if let Some(&at) = index.get(&p.id) {
                ledger.pivots[at].scope = p.scope;
            }
        }
        Ok(ledger)
    }

    /// Add every pivot of `other` (same ids are kept apart by their origin prefix upstream).
    pub fn extend(&mut self, other: Ledger) {
        self.pivots.extend(other.pivots);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOML: &str = r#"
[[pivot]]
id = "fn-names"
[[pivot.version]]
session = 0
text = "start function names with f_"
kind = "function"
rule = "^f_"
[[pivot.version]]
session = 2
text = "end function names with _x"
kind = "function"
rule = ".*_x$"

[[pivot]]
id = "timer"
[[pivot.version]]
session = 1
text = "decorate methods with @timer"
kind = "method decorator"
rule = ["timer", true]
"#;

    #[test]
    fn updates_replace_earlier_versions_from_their_session_on() {
        let l = Ledger::from_toml(TOML, "pivots.toml").unwrap();
        let at = |s| {
            l.active_at(s)
                .iter()
                .map(|a| format!("{}@{}", a.pivot.id, a.version.version))
                .collect::<Vec<_>>()
        };
        assert_eq!(at(0), ["fn-names@0"]);
        assert_eq!(at(1), ["fn-names@0", "timer@0"]);
        assert_eq!(at(5), ["fn-names@1", "timer@0"]);
        assert_eq!(l.changes_at(2).len(), 1);
        assert_eq!(
            l.get("timer").unwrap().versions[0].rule,
            Rule::Member {
                name: "timer".into(),
                value: true
            }
        );
    }

    #[test]
    fn a_withdrawn_pivot_is_inactive_from_its_session_until_given_again() {
        let mut l = Ledger::from_toml(TOML, "pivots.toml").unwrap();
        assert!(l.withdraw("timer", 3));
        assert!(!l.withdraw("timer", 4), "already out");
        assert!(!l.withdraw("nobody", 4));
        let ids = |l: &Ledger, s| {
            l.active_at(s)
                .iter()
                .map(|a| a.pivot.id.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&l, 2), ["fn-names", "timer"]);
        assert_eq!(ids(&l, 3), ["fn-names"]);
        assert_eq!(
            l.changes_at(3).len(),
            1,
            "the removal is a change of session 3"
        );
        let (text, kind, rule) = {
            let v = &l.get("timer").unwrap().versions[0];
            (v.text.clone(), v.kind, v.rule.clone())
        };
        l.give("timer", "pivots.toml", 5, text, kind, rule);
        assert_eq!(ids(&l, 5), ["fn-names", "timer"]);
        let json = serde_json::to_value(l.get("timer").unwrap()).unwrap();
        assert_eq!(json["versions"][1]["withdrawn"], true);
        assert!(json["versions"][0].get("withdrawn").is_none(), "{json}");
    }

    #[test]
    fn toml_errors_name_the_problem() {
        let bad_kind = TOML.replace("\"method decorator\"", "\"methods\"");
        let e = format!("{:#}", Ledger::from_toml(&bad_kind, "t").unwrap_err());
        assert!(
            e.contains("timer") && e.contains("unknown object kind"),
            "{e}"
        );
        let bad_regex = TOML.replace("\"^f_\"", "\"^f_(\"");
        let e = format!("{:#}", Ledger::from_toml(&bad_regex, "t").unwrap_err());
        assert!(
            e.contains("fn-names") && e.contains("invalid regular expression"),
            "{e}"
        );
        assert!(Ledger::from_toml("[[pivot]]\nid = 1", "t").is_err());
    }
}
