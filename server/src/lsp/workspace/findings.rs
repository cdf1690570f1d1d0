//! What the editor shows for one document: the core's violations of the active pivots and
//! the syntax error, each with its span and a message. Nothing here is computed apart
//! from `pivots::check`, so the editor agrees with the benchmark by construction.

use crate::pivots::{check, Active, Reason, Rule};
use crate::python::incremental::{Analysis, Chunk};
use crate::python::{Entry, Item, Module, ObjectKind, Objects, Span, SyntaxError};
use std::collections::HashMap;
use std::sync::Arc;

/// The pivot version a finding is about.
#[derive(Clone, Debug, PartialEq)]
pub struct PivotRef {
    pub id: String,
    pub version: usize,
    pub session: usize,
    pub text: String,
    pub kind: ObjectKind,
    pub rule: Rule,
}

impl PivotRef {
    pub fn of(a: &Active) -> PivotRef {
        PivotRef {
            id: a.pivot.id.clone(),
            version: a.version.version,
            session: a.version.session,
            text: a.version.text.clone(),
            kind: a.version.kind,
            rule: a.version.rule.clone(),
        }
    }

    /// The instruction text, or the id when the pivot has none.
    pub fn title(&self) -> &str {
        if self.text.trim().is_empty() {
            &self.id
        } else {
            &self.text
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Finding {
    Pivot {
        span: Span,
        pivot: PivotRef,
        reason: Reason,
        message: String,
    },
    Syntax {
        span: Span,
        message: String,
    },
    /// Something the user should know about the findings (some left out, the document not
    /// checked), said once, on the first line.
    Notice {
        span: Span,
        message: String,
    },
}

/// At most this many findings are kept and shown per document: a hostile file or
/// pivots.toml (20,000 pivots x 2,000 functions) must cost memory in proportion to what
/// is shown, not to pivots x objects. Checking stops once a document has this many.
pub const MAX_FINDINGS: usize = 1000;

fn capped(src: &str) -> Finding {
    Finding::Notice {
        span: Span::first_line(src),
        message: format!(
            "pivot: more than {MAX_FINDINGS} findings in this document; the rest are not shown \
             (checking stopped there)"
        ),
    }
}

impl Finding {
    pub fn span(&self) -> Span {
        match self {
            Finding::Pivot { span, .. }
            | Finding::Syntax { span, .. }
            | Finding::Notice { span, .. } => *span,
        }
    }

    pub fn message(&self) -> &str {
        match self {
            Finding::Pivot { message, .. }
            | Finding::Syntax { message, .. }
            | Finding::Notice { message, .. } => message,
        }
    }
}

/// Every finding of `module` (parsed from `src`) under the active pivots, in source order.
/// Code that does not parse has only its syntax error: no pivot can be checked on it.
/// `module` is a whole `Module`, or a document's incremental analysis (same findings,
/// recomputed only for the top-level statements that changed).
pub fn findings(src: &str, module: &impl Checked, active: &[Active]) -> Vec<Finding> {
    module.findings(src, active)
}

/// What findings can be computed on.
pub trait Checked {
    fn findings(&self, src: &str, active: &[Active]) -> Vec<Finding>;
}

impl Checked for Module {
    fn findings(&self, src: &str, active: &[Active]) -> Vec<Finding> {
        if let Some(e) = &self.syntax_error {
            return vec![syntax(e)];
        }
        let mut out = Vec::new();
        let mut more = false;
        for a in active {
            let outcome = check(self, src, a.version.kind, &a.version.rule);
            for v in outcome.violations {
                if out.len() >= MAX_FINDINGS {
                    more = true;
                    break;
                }
                let pivot = PivotRef::of(a);
                let message = message(src, &pivot, v.span, &v.reason);
                out.push(Finding::Pivot {
                    span: v.span,
                    pivot,
                    reason: v.reason,
                    message,
                });
            }
        }
        out.sort_by_key(|f| (f.span().start_byte, f.span().end_byte));
        if more {
            out.insert(0, capped(src));
        }
        out
    }
}

fn syntax(e: &SyntaxError) -> Finding {
    Finding::Syntax {
        span: e.span,
        message: format!("syntax error: {}", e.message),
    }
}

/// Import and comment rules are about the whole file (an empty list is scored, findings
/// sit on line 1): they are checked on the module's imports and comments each time.
fn file_level(kind: ObjectKind) -> bool {
    matches!(kind, ObjectKind::Import | ObjectKind::Comment)
}

/// Findings of the incremental analysis, cached per top-level statement.
///
/// For every other kind a violation is about one entry, and `check` on the statement's
/// entries alone gives the statement's share of `check` on the module, in the same order,
/// with one exception: a regex rule on a kind whose entries are all empty (an `__init__`
/// setting no attribute) reports every entry, but only when no entry in the whole module
/// has a name to test. Such findings are kept per statement, marked, and dropped when some
/// statement has a name to test.
#[derive(Default)]
pub struct FindingsCache {
    pivots: Vec<PivotRef>,
    /// By chunk address; the `Arc` keeps the chunk alive, so an address is never reused
    /// for another chunk while its entry is here.
    chunks: HashMap<usize, (Arc<Chunk>, Arc<ChunkFindings>)>,
}

struct ChunkFindings {
    /// Sorted by (start, end, pivot, order of `check`), spans relative to the chunk; at
    /// most `MAX_FINDINGS`.
    items: Vec<Cached>,
    /// Items beyond `MAX_FINDINGS` were dropped.
    capped: bool,
    /// By pivot: a regex pivot whose kind has a non-empty entry here.
    tested: Vec<bool>,
}

struct Cached {
    span: Span,
    pivot: usize,
    reason: Reason,
    message: String,
    /// "Nothing to test" here: kept only if no chunk has a name to test.
    conditional: bool,
}

impl FindingsCache {
    /// The findings of `analysis` (of `src`): cached statements' findings are reused.
    pub fn findings(&mut self, src: &str, analysis: &Analysis, active: &[Active]) -> Vec<Finding> {
        if let Some(e) = &analysis.syntax_error {
            return vec![syntax(e)];
        }
        let pivots: Vec<PivotRef> = active.iter().map(PivotRef::of).collect();
        if pivots != self.pivots {
            self.chunks.clear();
            self.pivots = pivots;
        }
        let mut old = std::mem::take(&mut self.chunks);
        let mut per_chunk = Vec::with_capacity(analysis.chunks.len());
        // Statements are checked in order until MAX_FINDINGS are found; the rest are not
        // checked (nor cached) while the document has that many.
        let mut found_so_far = 0;
        let mut truncated = false;
        for p in &analysis.chunks {
            if found_so_far >= MAX_FINDINGS {
                truncated = true;
                break;
            }
            let key = Arc::as_ptr(&p.chunk) as usize;
            let found = match self.chunks.get(&key) {
                Some((_, f)) => f.clone(),
                None => match old.remove(&key) {
                    Some((_, f)) => f,
                    None => Arc::new(chunk_findings(&p.chunk, &self.pivots)),
                },
            };
            self.chunks
                .entry(key)
                .or_insert_with(|| (p.chunk.clone(), found.clone()));
            found_so_far += found.items.len();
            truncated |= found.capped;
            per_chunk.push(found);
        }
        let n = self.pivots.len();
        let tested: Vec<bool> = (0..n)
            .map(|i| per_chunk.iter().any(|f| f.tested[i]))
            .collect();
        // Key: (start, end, pivot, chunk, order within the chunk) = a stable sort of the
        // pivot-major order by position.
        type Key = (usize, usize, usize, usize, usize);
        let mut out: Vec<(Key, Finding)> = Vec::new();
        for (ci, (p, f)) in analysis.chunks.iter().zip(&per_chunk).enumerate() {
            for (k, c) in f.items.iter().enumerate() {
                // Unchecked statements may have a name to test: no conditional finding.
                if c.conditional && (tested[c.pivot] || truncated) {
                    continue;
                }
                let span = p.absolute(c.span);
                out.push((
                    (span.start_byte, span.end_byte, c.pivot, ci, k),
                    Finding::Pivot {
                        span,
                        pivot: self.pivots[c.pivot].clone(),
                        reason: c.reason.clone(),
                        message: c.message.clone(),
                    },
                ));
            }
        }
        let files: Vec<usize> = (0..n)
            .filter(|&i| file_level(self.pivots[i].kind))
            .collect();
        if !files.is_empty() {
            let mut objects = Objects::default();
            for p in &analysis.chunks {
                for e in p.chunk.objects.get(ObjectKind::Import) {
                    let items = e
                        .items
                        .iter()
                        .map(|i| Item {
                            text: i.text.clone(),
                            span: p.absolute(i.span),
                        })
                        .collect();
                    let anchor = p.absolute(e.anchor);
                    objects.push_entry(ObjectKind::Import, Entry { items, anchor });
                }
            }
            objects.push_entry(ObjectKind::Comment, analysis.comments.clone());
            let module = Module {
                syntax_error: None,
                objects,
            };
            let mut extra = Vec::new();
            for i in files {
                let pivot = &self.pivots[i];
                let outcome = check(&module, src, pivot.kind, &pivot.rule);
                for (k, v) in outcome.violations.into_iter().enumerate() {
                    let message = message(src, pivot, v.span, &v.reason);
                    extra.push((
                        (v.span.start_byte, v.span.end_byte, i, 0, k),
                        Finding::Pivot {
                            span: v.span,
                            pivot: pivot.clone(),
                            reason: v.reason,
                            message,
                        },
                    ));
                }
            }
            out.extend(extra);
            out.sort_by_key(|x| x.0);
        } else if !out.windows(2).all(|w| w[0].0 <= w[1].0) {
            out.sort_by_key(|x| x.0);
        }
        if out.len() > MAX_FINDINGS {
            out.truncate(MAX_FINDINGS);
            truncated = true;
        }
        let mut shown: Vec<Finding> = Vec::with_capacity(out.len() + 1);
        if truncated {
            shown.push(capped(src));
        }
        shown.extend(out.into_iter().map(|x| x.1));
        shown
    }
}

/// One statement's findings: `check` on its entries alone, for every pivot that is not
/// file-level.
fn chunk_findings(chunk: &Chunk, pivots: &[PivotRef]) -> ChunkFindings {
    let module = Module {
        syntax_error: None,
        objects: chunk.objects.clone(),
    };
    let src = chunk.text();
    // Messages are written only for the findings kept.
    let mut raw: Vec<(Span, usize, Reason, bool)> = Vec::new();
    let mut tested = vec![false; pivots.len()];
    for (i, pivot) in pivots.iter().enumerate() {
        if file_level(pivot.kind) {
            continue;
        }
        let entries = chunk.objects.get(pivot.kind);
        let regex = matches!(pivot.rule, Rule::Regex { .. });
        tested[i] = regex && entries.iter().any(|e| !e.items.is_empty());
        let conditional = regex && !entries.is_empty() && !tested[i];
        // Most pairs pass: a regex whose every tested name matches has no violation here,
        // known without building an outcome (20,000 pivots x 2,000 functions is 40M pairs).
        let passes = tested[i]
            && (entries.iter())
                .filter_map(|e| e.items.first())
                .all(|first| pivot.rule.matches(&first.text));
        if passes {
            continue;
        }
        for v in check(&module, src, pivot.kind, &pivot.rule).violations {
            raw.push((v.span, i, v.reason, conditional));
        }
    }
    // Stable: within one position, pivot order then `check`'s order.
    raw.sort_by_key(|c| (c.0.start_byte, c.0.end_byte));
    let capped = raw.len() > MAX_FINDINGS;
    raw.truncate(MAX_FINDINGS);
    let items = raw
        .into_iter()
        .map(|(span, i, reason, conditional)| Cached {
            message: message(src, &pivots[i], span, &reason),
            span,
            pivot: i,
            reason,
            conditional,
        })
        .collect();
    ChunkFindings {
        items,
        capped,
        tested,
    }
}

/// "what is wrong — "instruction" (kind: rule; given at session k)".
pub fn message(src: &str, pivot: &PivotRef, span: Span, reason: &Reason) -> String {
    let kind = pivot.kind;
    let here = span.text(src);
    let file_level = matches!(kind, ObjectKind::Import | ObjectKind::Comment);
    let detail = match reason {
        Reason::NoMatch { name } => match kind {
            ObjectKind::Import => format!("`import {name}` does not match the rule"),
            ObjectKind::Comment => "the first comment does not match the rule".to_string(),
            _ => format!("`{name}` does not match"),
        },
        Reason::NothingToTest if kind == ObjectKind::Attribute => {
            format!("`{here}` has an `__init__` that sets no attribute to check")
        }
        Reason::NothingToTest => format!("no {kind} to check"),
        Reason::Missing if file_level => format!("no {kind} in this file"),
        Reason::Missing => format!("{kind} missing in `{here}`"),
        Reason::Present if file_level => format!("{kind} `{here}` present"),
        Reason::Present => format!("{kind} present in `{here}`"),
        Reason::MemberMissing { name } if kind == ObjectKind::Import => {
            format!("`import {name}` missing")
        }
        Reason::MemberMissing { name } => format!("`@{name}` missing on `{here}`"),
        Reason::MemberPresent { name } if kind == ObjectKind::Import => {
            format!("`import {name}` present")
        }
        Reason::MemberPresent { name } => format!("`@{name}` present on `{here}`"),
        Reason::Unsatisfiable => {
            "a [name, value] rule on comments never holds (as in MemoryCode's evaluator)"
                .to_string()
        }
    };
    format!(
        "{detail} — \"{}\" ({kind}: {}; given at session {})",
        pivot.title(),
        pivot.rule.describe(),
        pivot.session
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pivots::Ledger;

    #[test]
    fn violations_become_findings_with_messages() {
        let mut l = Ledger::default();
        l.give(
            "p",
            "user",
            0,
            "start function names with f_".into(),
            ObjectKind::Function,
            Rule::regex("^f_").unwrap(),
        );
        l.give(
            "imp",
            "user",
            0,
            "import hashlib".into(),
            ObjectKind::Import,
            Rule::from_json(&serde_json::json!(["hashlib", true])).unwrap(),
        );
        let src = "def f_ok():\n    pass\ndef bad():\n    pass\n";
        let m = Module::parse(src);
        let f = findings(src, &m, &l.active_at(0));
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].span().start.line, 0, "import findings sit on line 1");
        assert!(f[0].message().starts_with("`import hashlib` missing"));
        assert_eq!(f[1].span().text(src), "bad");
        assert!(
            f[1].message().contains("\"start function names with f_\"")
                && f[1].message().contains("session 0"),
            "{}",
            f[1].message()
        );
        let broken = Module::parse("def (:\n");
        let f = findings("def (:\n", &broken, &l.active_at(0));
        assert!(matches!(f.as_slice(), [Finding::Syntax { .. }]));
    }
}
