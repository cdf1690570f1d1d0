//! Inline suppressions, as ruff's `# noqa`: `# pivot: ignore[ID, ...]` at the end of a line
//! drops the findings of those pivots that start on that line (`# pivot: ignore` alone:
//! every pivot's), and `# pivot: ignore-file[ID, ...]` anywhere drops those pivots'
//! findings in the whole file. A suppression that drops nothing is itself reported (ruff's
//! RUF100), so stale ones do not pile up. Syntax errors are never suppressed. The editor and
//! `check` both take their findings from here; the benchmark's scores never do (a model's
//! answer could otherwise silence its own violations).

use crate::findings::Finding;
use crate::fixes::{Edit, Fix};
use pivot_python::python::Span;
use regex::Regex;
use std::sync::OnceLock;

/// The code of an unused suppression's diagnostic.
pub const UNUSED: &str = "unused-suppression";

struct Marker {
    /// The comment's span (from `#`).
    span: Span,
    file: bool,
    /// Empty: every pivot.
    ids: Vec<String>,
    used: Vec<bool>,
    used_bare: bool,
}

fn pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"#[ \t]*pivot:[ \t]*ignore(-file)?(?:\[([^\]\n]*)\])?").expect("valid")
    })
}

fn markers(src: &str) -> Vec<Marker> {
    pattern()
        .captures_iter(src)
        .filter_map(|c| {
            let m = c.get(0)?;
            let ids: Vec<String> = c
                .get(2)
                .map(|l| {
                    l.as_str()
                        .split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            Some(Marker {
                span: Span::from_bytes(src, m.start(), m.end()),
                file: c.get(1).is_some(),
                used: vec![false; ids.len()],
                ids,
                used_bare: false,
            })
        })
        .collect()
}

impl Marker {
    /// Whether it drops a finding of pivot `id` that starts on `line`; marks what it used.
    fn drops(&mut self, id: &str, line: u32) -> bool {
        if !self.file && self.span.start.line != line {
            return false;
        }
        if self.ids.is_empty() {
            self.used_bare = true;
            return true;
        }
        match self.ids.iter().position(|i| i == id) {
            Some(k) => {
                self.used[k] = true;
                true
            }
            None => false,
        }
    }

    fn unused(&self) -> Option<Finding> {
        let what = if self.file { "ignore-file" } else { "ignore" };
        let message = if self.ids.is_empty() {
            (!self.used_bare).then(|| {
                format!("pivot: unused suppression: no pivot finding on this line to `{what}`")
            })?
        } else {
            let unused: Vec<String> = self
                .ids
                .iter()
                .zip(&self.used)
                .filter(|(_, u)| !**u)
                .map(|(id, _)| format!("`{id}`"))
                .collect();
            if unused.is_empty() {
                return None;
            }
            let place = if self.file {
                "in this file"
            } else {
                "on this line"
            };
            format!(
                "pivot: unused suppression: no {} finding {place} to `{what}`",
                unused.join(", ")
            )
        };
        Some(Finding::Unused {
            span: self.span,
            message,
        })
    }
}

/// `found` without the suppressed findings, with a finding for each unused suppression
/// (in source order among the rest).
pub fn apply(src: &str, found: Vec<Finding>) -> Vec<Finding> {
    // The common case costs one substring search.
    if memchr::memmem::find(src.as_bytes(), b"pivot:").is_none() {
        return found;
    }
    let mut marks = markers(src);
    if marks.is_empty() {
        return found;
    }
    let mut out: Vec<Finding> = found
        .into_iter()
        .filter(|f| {
            let Finding::Pivot { span, pivot, .. } = f else {
                return true;
            };
            let mut dropped = false;
            // Every marker that could drop it is marked used.
            for m in marks.iter_mut() {
                dropped |= m.drops(&pivot.id, span.start.line);
            }
            !dropped
        })
        .collect();
    out.extend(marks.iter().filter_map(Marker::unused));
    out.sort_by_key(|f| (f.span().start_byte, f.span().end_byte));
    out
}

/// The quick fix "suppress on this line": `# pivot: ignore[ID]` at the end of the line
/// where `finding` starts, or ID added to a suppression already there.
pub fn suppress_fix(src: &str, finding: &Finding) -> Option<Fix> {
    let Finding::Pivot { span, pivot, .. } = finding else {
        return None;
    };
    let line_start = src[..span.start_byte.min(src.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line_end = src[line_start..]
        .find('\n')
        .map_or(src.len(), |i| line_start + i);
    let line = src[line_start..line_end].trim_end_matches('\r');
    let title = format!("Suppress `{}` on this line", pivot.id);
    if let Some(c) = pattern().captures(line).filter(|c| c.get(1).is_none()) {
        // Already suppressed on this line for every pivot, or a list to add to.
        let list = c.get(2)?;
        let at = line_start + list.end();
        let sep = if list.as_str().trim().is_empty() {
            ""
        } else {
            ", "
        };
        return Some(Fix {
            title,
            edits: vec![Edit {
                start: at,
                end: at,
                text: format!("{sep}{}", pivot.id),
            }],
        });
    }
    let at = line_start + line.len();
    let gap = if line.trim().is_empty() { "" } else { "  " };
    Some(Fix {
        title,
        edits: vec![Edit {
            start: at,
            end: at,
            text: format!("{gap}# pivot: ignore[{}]", pivot.id),
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::findings;
    use pivot_python::pivots::{Ledger, Rule};
    use pivot_python::python::{Module, ObjectKind};

    fn found(src: &str) -> Vec<Finding> {
        let mut l = Ledger::default();
        let r = Rule::regex("^f_").unwrap();
        l.give("fn", "t", 0, String::new(), ObjectKind::Function, r);
        l.give(
            "cls",
            "t",
            0,
            String::new(),
            ObjectKind::Class,
            Rule::regex("^[A-Z]").unwrap(),
        );
        let m = Module::parse(src);
        apply(src, findings(src, &m, &l.active_at(0)))
    }

    fn ids(f: &[Finding]) -> Vec<String> {
        f.iter()
            .map(|f| match f {
                Finding::Pivot { pivot, span, .. } => format!("{}@{}", pivot.id, span.start.line),
                Finding::Unused { span, .. } => format!("{UNUSED}@{}", span.start.line),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn line_and_file_suppressions_drop_exactly_their_findings() {
        let src = "def a():  # pivot: ignore[fn]\n    pass\ndef b():  # pivot: ignore[cls, fn]\n    pass\nclass c:  # pivot: ignore\n    pass\ndef d():\n    pass\n";
        let f = found(src);
        let e: Vec<String> = ids(&f);
        assert_eq!(e, ["unused-suppression@2", "fn@6"], "{f:?}");
        let msg = f[0].message();
        assert!(msg.contains("`cls`") && !msg.contains("`fn`"), "{msg}");
        let file = format!("# pivot: ignore-file[fn, nope]\n{src}");
        let f = found(&file);
        assert_eq!(ids(&f), ["unused-suppression@0", "unused-suppression@3"]);
        assert!(f[0].message().contains("`nope`"), "{:?}", f[0]);
        // No marker: the findings as they are.
        let plain = "def a():\n    pass\n";
        assert_eq!(ids(&found(plain)), ["fn@0"]);
    }

    #[test]
    fn the_quick_fix_adds_a_suppression_that_drops_the_finding() {
        for src in [
            "def a():\n    pass\n",
            "def a():  # pivot: ignore[cls]\n    pass\n",
        ] {
            let f = found(src);
            let pivot = f
                .iter()
                .find(|f| matches!(f, Finding::Pivot { .. }))
                .unwrap();
            let fix = suppress_fix(src, pivot).unwrap();
            let mut fixed = src.to_string();
            let e = &fix.edits[0];
            fixed.replace_range(e.start..e.end, &e.text);
            let after = found(&fixed);
            assert!(
                after.iter().all(|f| !matches!(f, Finding::Pivot { .. })),
                "{fixed:?}: {after:?}"
            );
            assert!(fixed.starts_with("def a():  # pivot: ignore["), "{fixed}");
        }
    }
}
