//! The pivots in force as a coding agent reads them (the MCP server's `list_pivots` and
//! `explain_finding`): each pivot's version in force, every version before it with the session
//! it was given at, the line of `pivots.toml` where each is written, and the commits that
//! changed the file. Plain data and sentences, no protocol type.

use crate::timeline::CommitRef;
use pivot_python::pivots::toml_file::Place;
use pivot_python::pivots::{Ledger, Pivot, PivotVersion};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `list_pivots`' reply.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct InForce {
    /// The pivots file, relative to the root (none: no pivots file).
    pub file: Option<String>,
    /// The session in force (the latest) and how many there are.
    pub session: usize,
    pub sessions: usize,
    pub pivots: Vec<PivotInForce>,
    /// The commits that changed the pivots file, oldest first (empty outside git).
    pub commits: Vec<CommitRef>,
    /// Why the pivots file, or its history, could not be read.
    pub errors: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct PivotInForce {
    pub id: String,
    /// The version in force.
    pub version: VersionEntry,
    /// Every version in session order, the one in force last.
    pub history: Vec<VersionEntry>,
    /// The line of the pivot's `id` in the pivots file.
    pub line: Option<usize>,
    /// Whether `include` / `exclude` patterns limit the files it is checked on.
    pub scoped: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct VersionEntry {
    pub version: usize,
    pub session: usize,
    /// The instruction as it was given.
    pub text: String,
    pub kind: String,
    /// The rule in words.
    pub description: String,
    /// The line of this version (its `kind`) in the pivots file.
    pub line: Option<usize>,
    /// Taken out at this session.
    pub withdrawn: bool,
}

fn entry(v: &PivotVersion, line: Option<usize>) -> VersionEntry {
    VersionEntry {
        version: v.version,
        session: v.session,
        text: v.text.clone(),
        kind: v.kind.name().to_string(),
        description: v.rule.describe(),
        line,
        withdrawn: v.withdrawn,
    }
}

/// The pivots of `ledger` in force at `session`, placed in the file by `places`.
pub fn in_force(ledger: &Ledger, session: usize, places: &[Place]) -> Vec<PivotInForce> {
    ledger
        .active_at(session)
        .iter()
        .map(|a| pivot_in_force(a.pivot, a.version, places))
        .collect()
}

fn pivot_in_force(p: &Pivot, current: &PivotVersion, places: &[Place]) -> PivotInForce {
    let place = places.iter().find(|pl| pl.id == p.id);
    // The file's versions are its `[[pivot.version]]`s in order; the ledger's, in session
    // order with the same numbers.
    let line_of = |v: &PivotVersion| place.and_then(|pl| pl.version_lines.get(v.version).copied());
    PivotInForce {
        id: p.id.clone(),
        version: entry(current, line_of(current)),
        history: p
            .versions
            .iter()
            .filter(|v| v.session <= current.session)
            .map(|v| entry(v, line_of(v)))
            .collect(),
        line: place.map(|pl| pl.line),
        scoped: !p.scope.is_everywhere(),
    }
}

/// `explain_finding`'s reply.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Explanation {
    pub code: String,
    /// What the finding means and how to fix it, in a few sentences.
    pub explanation: String,
    /// The pivot the finding is about (none for a syntax error or an unused suppression).
    pub pivot: Option<PivotInForce>,
}

/// What a finding of `code` (a finding's `code`: a pivot id, `syntax-error` or
/// `unused-suppression`) means, given the pivots in force; `file` names the pivots file.
pub fn explain(
    code: &str,
    pivots: Vec<PivotInForce>,
    file: Option<&str>,
) -> Result<Explanation, String> {
    let sentence = match code {
        crate::reported::SYNTAX_ERROR => Some(
            "The file does not parse as Python (CPython's verdict, at the place given). No pivot \
             can be checked in it until it parses: fix the syntax first, then check again."
                .to_string(),
        ),
        crate::suppress::UNUSED => Some(
            "A `# pivot: ignore[ID]` comment on this line suppresses nothing: the pivot it names \
             has no finding here. Remove the comment (or the ID in it)."
                .to_string(),
        ),
        _ => None,
    };
    if let Some(explanation) = sentence {
        return Ok(Explanation {
            code: code.to_string(),
            explanation,
            pivot: None,
        });
    }
    let Some(p) = pivots.into_iter().find(|p| p.id == code) else {
        return Err(format!(
            "no pivot `{code}` is in force (list_pivots names them; a finding's `code` is its pivot)"
        ));
    };
    let v = &p.version;
    let place = match (file, v.line) {
        (Some(f), Some(l)) => format!(" ({f}:{l})"),
        _ => String::new(),
    };
    let mut s = format!(
        "Pivot `{}`: \"{}\", given at session {}{place}. Every {} it applies to: {}.",
        p.id, v.text, v.session, v.kind, v.description
    );
    let earlier: Vec<&VersionEntry> = p
        .history
        .iter()
        .filter(|e| e.version != v.version)
        .collect();
    if !earlier.is_empty() {
        s.push_str(" It replaces");
        for (i, e) in earlier.iter().enumerate() {
            let sep = if i == 0 { "" } else { ";" };
            s.push_str(&format!(
                "{sep} version {} of session {} (\"{}\": {})",
                e.version, e.session, e.text, e.description
            ));
        }
        s.push_str(": code that still follows an earlier version breaks the one in force.");
    }
    s.push_str(&format!(
        " A finding names the {} that breaks it and why; change the code to follow the version \
         in force. Where the pivot must not apply, `# pivot: ignore[{}]` on the line suppresses it.",
        v.kind, p.id
    ));
    Ok(Explanation {
        code: code.to_string(),
        explanation: s,
        pivot: Some(p),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOML: &str = "[[pivot]]\nid = \"fn\"\n[[pivot.version]]\nsession = 0\ntext = \"f_\"\n\
        kind = \"function\"\nrule = \"^f_\"\n[[pivot.version]]\nsession = 2\ntext = \"g_\"\n\
        kind = \"function\"\nrule = \"^g_\"\n";

    #[test]
    fn the_version_in_force_its_history_and_lines() {
        let ledger = Ledger::from_toml_file(TOML, "pivots.toml", "pivots.toml").unwrap();
        let places = pivot_python::pivots::toml_file::places(TOML);
        let at1 = in_force(&ledger, 1, &places);
        assert_eq!(at1[0].version.text, "f_");
        assert_eq!(at1[0].history.len(), 1);
        let at2 = in_force(&ledger, 2, &places);
        let p = &at2[0];
        assert_eq!((p.version.text.as_str(), p.history.len()), ("g_", 2));
        assert_eq!(p.line, Some(2));
        assert_eq!((p.history[0].line, p.version.line), (Some(6), Some(11)));
        let e = explain("fn", at2, Some("pivots.toml")).unwrap();
        assert!(
            e.explanation.contains("pivots.toml:11"),
            "{}",
            e.explanation
        );
        assert!(
            e.explanation.contains("version 0 of session 0"),
            "{}",
            e.explanation
        );
        assert!(explain("nope", Vec::new(), None)
            .unwrap_err()
            .contains("`nope`"));
    }
}
