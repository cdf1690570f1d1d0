//! Hover on a function, method, class, variable, argument or attribute name: the pivots
//! active now that govern that kind of object, whether this name satisfies each (from the
//! core's violations), and each pivot's version history.

use super::timeline::commit_label;
use pivot_history::Commit;
use pivot_python::pivots::{check, Ledger, Reason, Rule};
use pivot_python::python::{Module, ObjectKind, Span};
use ObjectKind as K;

/// The name under `offset` and the markdown to show for it.
/// `commit_of(k)`: the commit that session `k` is, when the sessions come from history.
pub fn hover<'a>(
    src: &str,
    module: &Module,
    ledger: &Ledger,
    (index, count): (usize, usize),
    commit_of: impl Fn(usize) -> Option<&'a Commit>,
    offset: usize,
) -> Option<(Span, String)> {
    let (kind, span, first_in_entry) = name_at(module, offset)?;
    let name = span.text(src);
    let governs = governed_kinds(kind);
    let at = |k: usize| match commit_of(k) {
        Some(c) => format!("session {k}, {}", commit_label(c)),
        None => format!("session {k}"),
    };
    let mut md = format!("**{kind} `{name}`** · {} of {count}\n\n", at(index));
    let active: Vec<_> = ledger
        .active_at(index)
        .into_iter()
        .filter(|a| governs.contains(&a.version.kind))
        .collect();
    if active.is_empty() {
        md.push_str(&format!(
            "No active pivot governs {kind} names at this session.\n"
        ));
    }
    for a in &active {
        let v = a.version;
        let outcome = check(module, src, v.kind, &v.rule);
        let breaks = outcome
            .violations
            .iter()
            .find(|x| x.span.start_byte == span.start_byte && x.span.end_byte == span.end_byte);
        let status = match (breaks, &v.rule) {
            (Some(x), _) => format!("✗ breaks it{}", reason_note(&x.reason)),
            (None, Rule::Regex { .. }) if v.kind == kind && !first_in_entry => format!(
                "not checked: MemoryCode tests only the first name of each {kind} list (this one {} the rule)",
                if v.rule.matches(name) { "matches" } else { "does not match" }
            ),
            (None, _) if v.kind.public_of().is_some() && name.starts_with('_') => {
                format!("not checked: `{name}` is not public (its name starts with `_`)")
            }
            (None, _) => "✓ satisfies it".to_string(),
        };
        md.push_str(&format!(
            "- **{}** \"{}\" ({}: {}) — {status}\n",
            a.pivot.id,
            v.text,
            v.kind,
            v.rule.describe()
        ));
        for h in &a.pivot.versions {
            let mark = if std::ptr::eq(h, v) {
                " ← active"
            } else if h.session > index {
                " (later)"
            } else {
                ""
            };
            if h.withdrawn {
                md.push_str(&format!(
                    "  - version {} at {}: removed{mark}\n",
                    h.version,
                    at(h.session)
                ));
                continue;
            }
            md.push_str(&format!(
                "  - version {} at {}: \"{}\" ({}){mark}\n",
                h.version,
                at(h.session),
                h.text,
                h.rule.describe()
            ));
        }
    }
    Some((span, md))
}

fn reason_note(r: &Reason) -> String {
    match r {
        Reason::NoMatch { .. } => String::new(),
        Reason::Missing => " (missing)".into(),
        Reason::Present => " (present)".into(),
        Reason::MemberMissing { name } => format!(" (`{name}` missing)"),
        Reason::MemberPresent { name } => format!(" (`{name}` present)"),
        Reason::NothingToTest => " (nothing to test)".into(),
        Reason::Unsatisfiable => " (can never hold)".into(),
    }
}

/// Kinds of pivot that speak about a name of `kind` (entry-level kinds anchor at the name).
fn governed_kinds(kind: ObjectKind) -> &'static [ObjectKind] {
    // A def's own kinds, and the public-only views of its docstring and annotations.
    const FUNCTION: [ObjectKind; 8] = {
        let k = ObjectKind::FUNCTION_KINDS;
        [
            k[0],
            k[1],
            k[2],
            k[3],
            k[4],
            k[5],
            K::PublicFunctionDocstring,
            K::PublicFunctionAnnotation,
        ]
    };
    const METHOD: [ObjectKind; 8] = {
        let k = ObjectKind::METHOD_KINDS;
        [
            k[0],
            k[1],
            k[2],
            k[3],
            k[4],
            k[5],
            K::PublicMethodDocstring,
            K::PublicMethodAnnotation,
        ]
    };
    match kind {
        K::Function => &FUNCTION,
        K::Method => &METHOD,
        K::Class => &[K::Class, K::ClassDecorator],
        K::FunctionArgument => &[K::FunctionArgument],
        K::Attribute => &[K::Attribute],
        _ => &[K::Variable],
    }
}

/// (kind, span, whether it is the first item of its entry) of the name at `offset`.
fn name_at(module: &Module, offset: usize) -> Option<(ObjectKind, Span, bool)> {
    const NAMED: [ObjectKind; 6] = [
        K::Function,
        K::Method,
        K::Class,
        K::Variable,
        K::FunctionArgument,
        K::Attribute,
    ];
    for kind in NAMED {
        for e in module.objects.get(kind) {
            for (i, item) in e.items.iter().enumerate() {
                if item.span.start_byte <= offset && offset <= item.span.end_byte {
                    return Some((kind, item.span, i == 0));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hover_reports_status_and_history() {
        let mut l = Ledger::default();
        let f = ObjectKind::Function;
        l.give(
            "p",
            "t",
            0,
            "start with f_".into(),
            f,
            Rule::regex("^f_").unwrap(),
        );
        l.give(
            "p",
            "t",
            2,
            "end with _x".into(),
            f,
            Rule::regex(".*_x$").unwrap(),
        );
        l.give(
            "d",
            "t",
            0,
            "docstrings".into(),
            K::FunctionDocstring,
            Rule::Presence(true),
        );
        let src = "def f_add(a, b):\n    return a\n";
        let m = Module::parse(src);
        let (span, md) = hover(src, &m, &l, (0, 3), |_| None, 5).unwrap();
        assert_eq!(span.text(src), "f_add");
        assert!(
            md.contains("**p** \"start with f_\"") && md.contains("✓ satisfies it"),
            "{md}"
        );
        assert!(
            md.contains("**d** \"docstrings\"") && md.contains("✗ breaks it (missing)"),
            "{md}"
        );
        assert!(md.contains("(later)"), "{md}");
        let (_, md) = hover(src, &m, &l, (2, 3), |_| None, 5).unwrap();
        assert!(
            md.contains("\"end with _x\"") && md.contains("← active"),
            "{md}"
        );
        let (_, md) = hover(src, &m, &l, (2, 3), |_| None, src.find("b)").unwrap()).unwrap();
        assert!(
            md.contains("No active pivot governs function argument"),
            "{md}"
        );
        assert!(hover(src, &m, &l, (0, 3), |_| None, src.find("return").unwrap()).is_none());
    }

    #[test]
    fn hover_on_a_def_names_its_public_pivots() {
        let mut l = Ledger::default();
        l.give(
            "pub",
            "t",
            0,
            "public docstrings".into(),
            K::PublicFunctionDocstring,
            Rule::Presence(true),
        );
        let src = "def load():\n    pass\n\ndef _helper():\n    pass\n";
        let m = Module::parse(src);
        let (_, md) = hover(src, &m, &l, (0, 1), |_| None, 5).unwrap();
        assert!(
            md.contains("**pub**") && md.contains("✗ breaks it (missing)"),
            "{md}"
        );
        let at = src.find("_helper").unwrap();
        let (_, md) = hover(src, &m, &l, (0, 1), |_| None, at).unwrap();
        assert!(md.contains("not checked: `_helper` is not public"), "{md}");
    }
}
