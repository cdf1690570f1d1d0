//! What the editor shows for one document: the core's violations of the active pivots and
//! the syntax error, each with its span and a message. Nothing here is computed apart
//! from `pivots::check`, so the editor agrees with the benchmark by construction.

use pivot_python::pivots::{check, Active, Reason, Rule};
use pivot_python::python::incremental::{Analysis, Chunk};
use pivot_python::python::{Entry, Item, Module, ObjectKind, Objects, Span, SyntaxError};
use regex::{RegexSet, RegexSetBuilder};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
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

    /// Whether this is `a`'s pivot in `a`'s version, as `PivotRef::of(a)` would make it.
    fn is(&self, a: &Active) -> bool {
        self.id == a.pivot.id
            && self.version == a.version.version
            && self.session == a.version.session
            && self.kind == a.version.kind
            && self.rule == a.version.rule
            && self.text == a.version.text
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
        /// Shared by all of the pivot's findings: a document's findings are rebuilt on
        /// every edit, and a copy per finding was most of that.
        pivot: Arc<PivotRef>,
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
    /// A `# pivot: ignore[...]` that dropped nothing (suppress.rs).
    Unused {
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
            | Finding::Notice { span, .. }
            | Finding::Unused { span, .. } => *span,
        }
    }

    pub fn message(&self) -> &str {
        match self {
            Finding::Pivot { message, .. }
            | Finding::Syntax { message, .. }
            | Finding::Notice { message, .. }
            | Finding::Unused { message, .. } => message,
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
                let pivot = Arc::new(PivotRef::of(a));
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
/// sit on line 1): they are checked on the module's imports and comments each time. So are
/// the team kinds read from the whole tree (`ObjectKind::is_construct`), which `check`
/// reads from the document's text, not from a statement's objects.
fn file_level(kind: ObjectKind) -> bool {
    matches!(kind, ObjectKind::Import | ObjectKind::Comment) || kind.is_construct()
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
    pivots: Vec<Arc<PivotRef>>,
    /// `pivots` grouped for checking together; built with them.
    groups: PivotGroups,
    /// By chunk address; the `Arc` keeps the chunk alive, so an address is never reused
    /// for another chunk while its entry is here.
    chunks: HashMap<usize, (Arc<Chunk>, Arc<ChunkFindings>), BuildHasherDefault<AddressHash>>,
}

/// Hashes a chunk's address (a multiple of its alignment) by one multiplication: SipHash
/// over every statement of the document was a visible part of an edit's cost.
#[derive(Default)]
struct AddressHash(u64);

impl Hasher for AddressHash {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        // The product's high half folded into the low one: the table indexes by low bits,
        // and an address's low bits are always zero.
        let h = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = h ^ (h >> 32);
    }
}

struct ChunkFindings {
    /// Sorted by (start, end, pivot, order of `check`), spans relative to the chunk; at
    /// most `MAX_FINDINGS`.
    items: Vec<Cached>,
    /// Items beyond `MAX_FINDINGS` were dropped.
    capped: bool,
    /// The kinds with a name to test here, for their regex pivots.
    tested: Vec<ObjectKind>,
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
        let unchanged = active.len() == self.pivots.len()
            && active.iter().zip(&self.pivots).all(|(a, p)| p.is(a));
        if !unchanged {
            let pivots: Vec<Arc<PivotRef>> =
                active.iter().map(|a| Arc::new(PivotRef::of(a))).collect();
            self.chunks.clear();
            self.groups = PivotGroups::of(&pivots);
            self.pivots = pivots;
        }
        let mut old = std::mem::replace(
            &mut self.chunks,
            HashMap::with_capacity_and_hasher(analysis.chunks.len(), Default::default()),
        );
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
                    None => Arc::new(chunk_findings(&p.chunk, &self.pivots, &self.groups)),
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
        let tested: Vec<ObjectKind> = per_chunk.iter().flat_map(|f| f.tested.clone()).collect();
        // Statement findings come in order of (start, end, pivot) within each statement, and
        // statements in order: the whole list is in that order without a sort. Only the
        // file-level findings (imports, comments: a few) are merged in.
        let total: usize = per_chunk.iter().map(|f| f.items.len()).sum();
        let mut out: Vec<Finding> = Vec::with_capacity(total.min(MAX_FINDINGS) + 1);
        for (p, f) in analysis.chunks.iter().zip(&per_chunk) {
            for c in &f.items {
                // Unchecked statements may have a name to test: no conditional finding.
                if c.conditional && (tested.contains(&self.pivots[c.pivot].kind) || truncated) {
                    continue;
                }
                out.push(Finding::Pivot {
                    span: p.absolute(c.span),
                    pivot: self.pivots[c.pivot].clone(),
                    reason: c.reason.clone(),
                    message: c.message.clone(),
                });
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
                for v in outcome.violations {
                    let message = message(src, pivot, v.span, &v.reason);
                    extra.push((
                        i,
                        Finding::Pivot {
                            span: v.span,
                            pivot: pivot.clone(),
                            reason: v.reason,
                            message,
                        },
                    ));
                }
            }
            // Stable: each pivot's own findings keep the order `check` gave them.
            extra.sort_by_key(|(i, f)| (f.span().start_byte, f.span().end_byte, *i));
            out = merge(out, extra, |f| self.pivot_index(f));
        }
        if out.len() > MAX_FINDINGS {
            out.truncate(MAX_FINDINGS);
            truncated = true;
        }
        if truncated {
            out.insert(0, capped(src));
        }
        out
    }

    /// The index in `pivots` of a pivot finding's pivot (by address: they are shared).
    fn pivot_index(&self, f: &Finding) -> usize {
        match f {
            Finding::Pivot { pivot, .. } => self
                .pivots
                .iter()
                .position(|p| Arc::ptr_eq(p, pivot))
                .unwrap_or(usize::MAX),
            _ => usize::MAX,
        }
    }
}

/// `sorted` (statement findings in order of start, end and pivot index) and `extra`
/// (file-level findings with their pivot index, in the same order) as one list in that
/// order. No two findings of different lists tie: a pivot is file-level or it is not.
fn merge(
    sorted: Vec<Finding>,
    extra: Vec<(usize, Finding)>,
    index: impl Fn(&Finding) -> usize,
) -> Vec<Finding> {
    let mut out = Vec::with_capacity(sorted.len() + extra.len());
    let mut extra = extra.into_iter().peekable();
    for f in sorted {
        let key = (f.span().start_byte, f.span().end_byte, index(&f));
        while let Some((i, e)) = extra.peek() {
            if (e.span().start_byte, e.span().end_byte, *i) < key {
                out.push(extra.next().expect("peeked").1);
            } else {
                break;
            }
        }
        out.push(f);
    }
    out.extend(extra.map(|(_, e)| e));
    out
}

/// Distinct regex rules of one kind above this many are matched through `RegexSet`s rather
/// than one by one.
const SET_FROM: usize = 16;
/// Patterns per `RegexSet`: compiling one set costs memory in proportion to its patterns,
/// so 20,000 rules are compiled as many small sets, not one large one.
const SET_SIZE: usize = 256;

/// The statement-level pivots grouped by kind, and a kind's regex pivots by distinct rule,
/// so that a statement costs one walk per kind present in it, and deciding which regex
/// pivots pass costs one match per distinct rule and name, or one `RegexSet` pass per name
/// when a kind has many rules, instead of one match per pivot and name (20,000 pivots x
/// 2,000 functions is 40M matches). Only passing is decided here: the pivots that do not
/// pass are checked by `check`, as before.
#[derive(Default)]
struct PivotGroups {
    kinds: Vec<KindPivots>,
}

struct KindPivots {
    kind: ObjectKind,
    /// Presence and membership pivots (indices), checked one by one.
    others: Vec<usize>,
    /// By distinct regex rule: the rule and the pivots (indices) that have it.
    rules: Vec<(Rule, Vec<usize>)>,
    /// When there are more than `SET_FROM` rules: `SET_SIZE` consecutive rules per set;
    /// `None` where a set could not be built (its rules are then matched one by one).
    sets: Vec<Option<RegexSet>>,
}

impl PivotGroups {
    fn of(pivots: &[Arc<PivotRef>]) -> PivotGroups {
        let mut kinds: Vec<KindPivots> = Vec::new();
        let mut index: HashMap<(ObjectKind, &str), (usize, usize)> = HashMap::new();
        for (i, p) in pivots.iter().enumerate() {
            if file_level(p.kind) {
                continue;
            }
            let k = match kinds.iter().position(|g| g.kind == p.kind) {
                Some(k) => k,
                None => {
                    kinds.push(KindPivots {
                        kind: p.kind,
                        others: Vec::new(),
                        rules: Vec::new(),
                        sets: Vec::new(),
                    });
                    kinds.len() - 1
                }
            };
            // By the anchored pattern, which holds the rule's ignored names too.
            let Rule::Regex { anchored, .. } = &p.rule else {
                kinds[k].others.push(i);
                continue;
            };
            match index.get(&(p.kind, anchored.as_str())) {
                Some(&(k, r)) => kinds[k].rules[r].1.push(i),
                None => {
                    index.insert((p.kind, anchored.as_str()), (k, kinds[k].rules.len()));
                    kinds[k].rules.push((p.rule.clone(), vec![i]));
                }
            }
        }
        for g in &mut kinds {
            if g.rules.len() > SET_FROM {
                g.sets = g.rules.chunks(SET_SIZE).map(regex_set).collect();
            }
        }
        PivotGroups { kinds }
    }
}

impl KindPivots {
    /// The distinct rules (indices into `rules`) that some of `names` does not match, in
    /// order. Costs nothing per rule when a set matches all its rules (the usual case).
    fn failing(&self, names: &[&str]) -> Vec<usize> {
        let mut fails = Vec::new();
        if self.sets.is_empty() {
            for (r, (rule, _)) in self.rules.iter().enumerate() {
                if !names.iter().all(|name| rule.matches(name)) {
                    fails.push(r);
                }
            }
            return fails;
        }
        for (s, set) in self.sets.iter().enumerate() {
            let first = s * SET_SIZE;
            let rules = &self.rules[first..(first + SET_SIZE).min(self.rules.len())];
            for name in names {
                match set {
                    Some(set) => {
                        let m = set.matches(name);
                        if !m.matched_all() {
                            fails.extend(
                                (0..rules.len())
                                    .filter(|&j| !m.matched(j))
                                    .map(|j| first + j),
                            );
                        }
                    }
                    None => fails.extend(
                        (rules.iter().enumerate())
                            .filter(|(_, (rule, _))| !rule.matches(name))
                            .map(|(j, _)| first + j),
                    ),
                }
            }
        }
        fails.sort_unstable();
        fails.dedup();
        fails
    }
}

/// One set of the rules' anchored patterns (each `^(?:source)`, as `Rule::matches` runs).
fn regex_set(rules: &[(Rule, Vec<usize>)]) -> Option<RegexSet> {
    let patterns = rules.iter().filter_map(|(rule, _)| match rule {
        Rule::Regex { anchored, .. } => Some(anchored.as_str()),
        _ => None,
    });
    RegexSetBuilder::new(patterns)
        .size_limit(1 << 24)
        .build()
        .ok()
}

/// One statement's findings: `check` on its entries alone, for every pivot that is not
/// file-level.
fn chunk_findings(chunk: &Chunk, pivots: &[Arc<PivotRef>], groups: &PivotGroups) -> ChunkFindings {
    let module = Module {
        syntax_error: None,
        objects: chunk.objects.clone(),
    };
    let src = chunk.text();
    // Messages are written only for the findings kept.
    let mut raw: Vec<(Span, usize, Reason, bool)> = Vec::new();
    let mut tested = Vec::new();
    let run = |i: usize, conditional: bool, raw: &mut Vec<_>| {
        let pivot = &pivots[i];
        for v in check(&module, src, pivot.kind, &pivot.rule).violations {
            raw.push((v.span, i, v.reason, conditional));
        }
    };
    for g in &groups.kinds {
        // A public-only kind filters the entries of the kind it is collected as.
        let entries = chunk.objects.get(g.kind.collected_as());
        // No entry of the kind: every pivot of it is absent here, with nothing to show.
        if entries.is_empty() {
            continue;
        }
        for &i in &g.others {
            run(i, false, &mut raw);
        }
        let names: Vec<&str> = (entries.iter())
            .filter_map(|e| e.items.first())
            .map(|i| i.text.as_str())
            .collect();
        if names.is_empty() {
            // "Nothing to test" here, shown only if no statement has a name to test.
            for (_, ps) in &g.rules {
                for &i in ps {
                    run(i, true, &mut raw);
                }
            }
            continue;
        }
        if !g.rules.is_empty() {
            tested.push(g.kind);
        }
        // Most pairs pass: a regex whose every tested name matches has no violation here,
        // known without building an outcome.
        for r in g.failing(&names) {
            for &i in &g.rules[r].1 {
                run(i, false, &mut raw);
            }
        }
    }
    // Stable, as `check` on the whole module then sorting by position: within one
    // position, pivot order then `check`'s order.
    raw.sort_by_key(|c| (c.0.start_byte, c.0.end_byte, c.1));
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
    // A construct's range may span lines (a call, a statement): its first line is quoted.
    let line = here.lines().next().unwrap_or("").trim_end();
    let detail = match reason {
        Reason::Present if kind.is_construct() => format!("{kind}: `{line}`"),
        Reason::MemberPresent { name } if kind.is_construct() => {
            format!("{kind} `{name}`: `{line}`")
        }
        Reason::MemberMissing { name } if kind.is_construct() => {
            format!("no {kind} `{name}` in this file")
        }
        Reason::Missing if kind.is_construct() => format!("no {kind} in this file"),
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
    use pivot_python::pivots::Ledger;

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
