//! One open Python document: its text (as a rope for position arithmetic and as a string
//! for the parser), its tree-sitter tree, re-parsed incrementally after each edit, and the
//! module (syntax verdict + objects) derived from it.
//!
//! Positions here are LSP's: 0-based line and UTF-16 code unit column. Lines end at `\n`,
//! `\r\n` or a lone `\r`, as LSP (and CPython) say. Tree-sitter and ropey (built without
//! its Unicode/CR line breaks) only know `\n` and `\r\n`, so a document with a lone `\r`
//! is held with each one as `\n` (same length: every offset and column stays the same),
//! and the client's own text is kept beside it to apply later edits to.

use super::findings::{Checked, Finding, FindingsCache};
use pivot_python::pivots::Active;
use pivot_python::python::incremental::{Analysis, ModuleCache};
use pivot_python::python::module::{lone_cr_as_lf, parse_tree};
use pivot_python::python::Module;
use ropey::Rope;
use std::borrow::Cow;
use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, OnceLock};
use tree_sitter::{InputEdit, Point, Tree};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Utf16Pos {
    pub line: u32,
    pub col: u32,
}

/// One content change: a range replaced by text, or (no range) the whole text replaced.
#[derive(Clone, Debug)]
pub struct Change {
    pub range: Option<(Utf16Pos, Utf16Pos)>,
    pub text: String,
}

/// How to re-parse after edits (the full re-parse exists for the latency comparison).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reparse {
    Incremental,
    Full,
}

/// A document's module: the incremental analysis (whose findings are cached per top-level
/// statement), or a module computed from scratch. Derefs to the whole `Module`, built on
/// first use.
pub struct Analyzed {
    analysis: Option<Analysis>,
    /// Not analysed: the document's size in bytes, over `analysed_limit()`.
    skipped: Option<usize>,
    module: OnceLock<Module>,
    findings: Mutex<FindingsCache>,
}

impl Analyzed {
    fn incremental(analysis: Analysis, findings: FindingsCache) -> Analyzed {
        Analyzed {
            analysis: Some(analysis),
            skipped: None,
            module: OnceLock::new(),
            findings: Mutex::new(findings),
        }
    }

    /// `incremental`, unless tree-sitter's only trouble is a bracketed line indented less
    /// than its block: then the module of the text with those lines joined, as
    /// `Module::parse` gives it (no false syntax error in the editor either).
    fn of(text: &str, analysis: Analysis, findings: FindingsCache) -> Analyzed {
        if analysis.syntax_error.is_some() && !analysis.clean {
            if let Some(m) = Module::parse_joined(text) {
                return Analyzed::from_scratch(m);
            }
        }
        Analyzed::incremental(analysis, findings)
    }

    fn from_scratch(module: Module) -> Analyzed {
        Analyzed {
            analysis: None,
            skipped: None,
            module: OnceLock::from(module),
            findings: Mutex::default(),
        }
    }

    /// A document too large to analyse: an empty module, and a notice as its findings.
    fn skipped(bytes: usize) -> Analyzed {
        Analyzed {
            skipped: Some(bytes),
            ..Analyzed::from_scratch(Module {
                syntax_error: None,
                objects: Default::default(),
            })
        }
    }

    fn take_cache(&mut self) -> FindingsCache {
        std::mem::take(self.findings.get_mut().unwrap_or_else(|e| e.into_inner()))
    }
}

impl std::ops::Deref for Analyzed {
    type Target = Module;
    fn deref(&self) -> &Module {
        self.module.get_or_init(|| match &self.analysis {
            Some(a) => a.to_module(),
            None => Module {
                syntax_error: None,
                objects: Default::default(),
            },
        })
    }
}

impl Checked for Analyzed {
    fn findings(&self, src: &str, active: &[Active]) -> Vec<Finding> {
        if let Some(bytes) = self.skipped {
            return vec![Finding::Notice {
                span: pivot_python::python::Span::first_line(src),
                message: format!(
                    "pivot: not checked: the document is {bytes} bytes, over the {} bytes \
                     analysed ({ANALYSED_LIMIT_VAR} sets the limit)",
                    analysed_limit()
                ),
            }];
        }
        match &self.analysis {
            Some(a) => {
                // A poisoned cache is only a cache: start it again.
                let mut cache = self.findings.lock().unwrap_or_else(|e| {
                    let mut c = e.into_inner();
                    *c = FindingsCache::default();
                    c
                });
                cache.findings(src, a, active)
            }
            None => (**self).findings(src, active),
        }
    }
}

pub const ANALYSED_LIMIT_VAR: &str = "PIVOT_MAX_ANALYSED_BYTES";

/// Documents larger than this (`PIVOT_MAX_ANALYSED_BYTES`, default 4 MiB) are kept and
/// edited but not parsed or checked: their analysis would cost seconds and gigabytes on
/// every open (a 20 MB file of 420k functions), so they show a notice instead.
pub fn analysed_limit() -> usize {
    static LIMIT: OnceLock<usize> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var(ANALYSED_LIMIT_VAR)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(4 << 20)
    })
}

/// A closed document's text and analysis, kept a while (`workspace::closed`): a headless
/// client opens the same code again and again (a model's answer repeated across sessions),
/// and an editor reopens what it closed.
pub struct Closed {
    pub hash: u64,
    pub text: String,
    module: Analyzed,
    cache: ModuleCache,
}

pub struct Document {
    rope: Rope,
    text: String,
    /// The tree of `text`, parsed on first use after an edit (from `Pending::edited`).
    tree: OnceLock<Tree>,
    /// The analysis of `text`, made on first use after an edit: an edit only changes the
    /// text (the request path of `didChange`); whoever asks for the module next, the
    /// background publish or a request, analyses it (see `Document::edit`).
    module: OnceLock<Analyzed>,
    /// What the next analysis starts from.
    pending: Mutex<Pending>,
    /// The client's text when it has a lone `\r` (`text` has `\n` there).
    raw: Option<String>,
    pub version: i32,
    /// Whether diagnostics of this document were computed for the client (`publish::for_doc`):
    /// a close clears them only then, so a headless client's open, request and close costs
    /// no publish at all.
    pub shown: AtomicBool,
}

/// What an analysis needs from before the edits: held between an edit and the next
/// analysis, which may come from a shared reference (`Document::module`).
#[derive(Default)]
struct Pending {
    /// While `tree` is unset: the last tree with every edit since applied to it
    /// (`Tree::edit`), for tree-sitter's incremental re-parse.
    edited: Option<Tree>,
    cache: ModuleCache,
    /// The last analysis, while the text has edits it has not seen: its statements for the
    /// one-statement path, its findings cache.
    prev: Option<Analyzed>,
    /// The edit since `prev` as (start, old end, length change), when there was exactly one.
    one: Option<(usize, usize, isize)>,
    how: Option<Reparse>,
    fast_edits: usize,
}

impl Document {
    /// A document as opened: analysed on first use (`module`), like an edit.
    pub fn new(text: String, version: i32) -> Document {
        let (text, raw) = match lone_cr_as_lf(&text) {
            Cow::Borrowed(_) => (text, None),
            Cow::Owned(held) => (held, Some(text)),
        };
        Document {
            rope: Rope::from_str(&text),
            text,
            tree: OnceLock::new(),
            module: OnceLock::new(),
            pending: Mutex::default(),
            raw,
            version,
            shown: AtomicBool::new(false),
        }
    }

    /// What a closed document leaves for a later open of the same text (see `Closed`):
    /// nothing unless it was analysed from a parse of its whole text.
    pub fn into_closed(mut self) -> Option<Closed> {
        let module = self.module.take()?;
        if self.raw.is_some() || module.skipped.is_some() {
            return None;
        }
        let cache = std::mem::take(&mut self.pending_mut().cache);
        Some(Closed {
            hash: pivot_python::fasthash::of(self.text.as_bytes(), 0),
            text: self.text,
            module,
            cache,
        })
    }

    /// A document opened with the text a closed one had: its analysis as it was (the tree
    /// is parsed again if something asks for it).
    pub fn reopened(c: Closed, version: i32) -> Document {
        Document {
            rope: Rope::from_str(&c.text),
            text: c.text,
            tree: OnceLock::new(),
            module: OnceLock::from(c.module),
            pending: Mutex::new(Pending {
                cache: c.cache,
                ..Pending::default()
            }),
            raw: None,
            version,
            shown: AtomicBool::new(false),
        }
    }

    /// The text as analysed (a lone `\r` is `\n` here; same offsets as the client's).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text exactly as the client has it.
    pub fn client_text(&self) -> &str {
        self.raw.as_deref().unwrap_or(&self.text)
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn pending_mut(&mut self) -> &mut Pending {
        self.pending.get_mut().unwrap_or_else(|e| e.into_inner())
    }

    /// The tree of the current text (re-parsed here if edits were analysed without it).
    pub fn tree(&self) -> &Tree {
        self.tree
            .get_or_init(|| parse_tree(&self.text, self.pending().edited.as_ref()))
    }

    /// How many edits were analysed from a parse of the edited statement alone.
    pub fn fast_edits(&self) -> usize {
        self.pending().fast_edits
    }

    /// Whether the text has edits not analysed yet.
    pub fn is_pending(&self) -> bool {
        self.module.get().is_none()
    }

    /// The module of the current text, analysed here if an edit came since.
    pub fn module(&self) -> &Analyzed {
        self.module.get_or_init(|| self.analyse_pending())
    }

    /// Apply `changes` and analyse the result (`edit`, then `module`).
    pub fn apply(&mut self, changes: &[Change], version: i32, how: Reparse) {
        self.edit(changes, version, how);
        self.module();
    }

    /// Apply `changes` in order to the text, the rope and the pending tree, and nothing
    /// more: the analysis waits for its first use (`module`), so a client's edit is never
    /// held up by it. Out-of-range positions are clamped (to the line's end, or the
    /// document's end) and a reversed range is read forwards, so a confused client can
    /// never make the server panic.
    ///
    /// One edit inside one top-level statement of an error-free file is then analysed from
    /// a parse of that statement alone (`ModuleCache::reanalyze_edit`), the whole tree
    /// re-parsed when first asked for; several edits before an analysis take tree-sitter's
    /// incremental re-parse. `how` is `Reparse::Full` only for the latency comparison.
    pub fn edit(&mut self, changes: &[Change], version: i32, how: Reparse) {
        let skipped = self.text.len() > analysed_limit()
            || self.module.get().is_some_and(|m| m.skipped.is_some());
        if skipped || self.raw.is_some() || changes.iter().any(|c| c.text.contains('\r')) {
            return self.apply_with_cr(changes, version);
        }
        // The analysis so far is where the next one starts, unless it is itself pending.
        let first = match self.module.take() {
            Some(m) => {
                self.pending_mut().prev = Some(m);
                true
            }
            None => false,
        };
        // No tree yet (never analysed, or the whole text replaced): the analysis parses.
        let mut tree = self.take_tree();
        let mut one = None;
        for c in changes {
            match c.range {
                None => {
                    self.text = c.text.clone();
                    self.rope = Rope::from_str(&self.text);
                    tree = None;
                    one = None;
                }
                Some((a, b)) => {
                    let (mut start, mut end) = (self.byte_of(a), self.byte_of(b));
                    if start > end {
                        std::mem::swap(&mut start, &mut end);
                    }
                    let before = self.text.len();
                    self.replace(tree.as_mut(), start, end, &c.text);
                    let delta = self.text.len() as isize - before as isize;
                    one = Some((start, end, delta));
                }
            }
        }
        let p = self.pending_mut();
        p.edited = tree;
        p.one = one.filter(|_| first && changes.len() == 1);
        p.how = Some(how);
        self.version = version;
    }

    /// The tree to apply edits to: the parsed one, or the one edits are pending on.
    fn take_tree(&mut self) -> Option<Tree> {
        let edited = self.pending_mut().edited.take();
        self.tree.take().or(edited)
    }

    /// The analysis of the text after edits (see `edit`).
    fn analyse_pending(&self) -> Analyzed {
        let mut guard = self.pending();
        let p = &mut *guard;
        let mut prev = p.prev.take();
        let findings = prev.as_mut().map(Analyzed::take_cache).unwrap_or_default();
        if self.text.len() > analysed_limit() {
            p.cache = ModuleCache::default();
            p.edited = None;
            return Analyzed::skipped(self.text.len());
        }
        match p.how.take().unwrap_or(Reparse::Incremental) {
            Reparse::Incremental => {
                let fast = match (
                    p.one.take(),
                    prev.as_ref().and_then(|m| m.analysis.as_ref()),
                ) {
                    (Some((start, end, delta)), Some(prev)) => {
                        p.cache.reanalyze_edit(prev, &self.text, start, end, delta)
                    }
                    _ => None,
                };
                let analysis = match fast {
                    Some(a) => {
                        p.fast_edits += 1;
                        a
                    }
                    None => {
                        let tree = self
                            .tree
                            .get_or_init(|| parse_tree(&self.text, p.edited.as_ref()));
                        p.edited = None;
                        p.cache.analyze(&self.text, tree)
                    }
                };
                Analyzed::of(&self.text, analysis, findings)
            }
            // The comparison: everything from scratch, no cache involved.
            Reparse::Full => {
                p.one = None;
                p.edited = None;
                let tree = self.tree.get_or_init(|| parse_tree(&self.text, None));
                Analyzed::from_scratch(Module::from_tree(&self.text, tree))
            }
        }
    }

    /// `apply` for text where a `\r` is involved: whether a `\r` is lone can change with
    /// an edit next to it, so the client's text is edited and the held text derived anew
    /// after each change, then parsed whole. Rare, and linear in the document's size.
    fn apply_with_cr(&mut self, changes: &[Change], version: i32) {
        if self.raw.is_none() && !changes.iter().any(|c| c.text.contains('\r')) {
            // A document not analysed, without `\r`: the rope and text are edited in place.
            for c in changes {
                self.edit_text(c);
            }
            self.version = version;
            return self.analyse_whole();
        }
        let mut raw = self.raw.take().unwrap_or_else(|| self.text.clone());
        for c in changes {
            match c.range {
                None => raw = c.text.clone(),
                Some((a, b)) => {
                    let (mut start, mut end) = (self.byte_of(a), self.byte_of(b));
                    if start > end {
                        std::mem::swap(&mut start, &mut end);
                    }
                    raw.replace_range(start..end, &c.text);
                }
            }
            self.text = lone_cr_as_lf(&raw).into_owned();
            self.rope = Rope::from_str(&self.text);
        }
        self.raw = (self.text != raw).then_some(raw);
        self.version = version;
        self.analyse_whole();
    }

    /// One change to the text and the rope only.
    fn edit_text(&mut self, c: &Change) {
        let (start, end) = match c.range {
            None => (0, self.text.len()),
            Some((a, b)) => {
                let (x, y) = (self.byte_of(a), self.byte_of(b));
                (x.min(y), x.max(y))
            }
        };
        let (cs, ce) = (self.rope.byte_to_char(start), self.rope.byte_to_char(end));
        self.rope.remove(cs..ce);
        self.rope.insert(cs, &c.text);
        self.text.replace_range(start..end, &c.text);
    }

    /// Parse and analyse the whole text, or (over `analysed_limit()`) skip it, now.
    fn analyse_whole(&mut self) {
        let old = self.module.take();
        // The field itself, not `pending_mut`: `text`, `tree` and `module` are used beside it.
        let p = self.pending.get_mut().unwrap_or_else(|e| e.into_inner());
        let mut prev = old.or_else(|| p.prev.take());
        p.edited = None;
        p.one = None;
        p.how = None;
        if self.text.len() > analysed_limit() {
            self.tree = OnceLock::new();
            p.cache = ModuleCache::default();
            self.module = OnceLock::from(Analyzed::skipped(self.text.len()));
            return;
        }
        let tree = parse_tree(&self.text, None);
        let analysis = p.cache.analyze(&self.text, &tree);
        self.tree = OnceLock::from(tree);
        let findings = prev.as_mut().map(Analyzed::take_cache).unwrap_or_default();
        self.module = OnceLock::from(Analyzed::of(&self.text, analysis, findings));
    }

    /// Replace bytes `start..end` (char boundaries) by `new`, keeping rope, string and the
    /// tree's idea of the text in step.
    fn replace(&mut self, tree: Option<&mut Tree>, start: usize, end: usize, new: &str) {
        let start_position = self.point_of(start);
        let old_end_position = self.point_of(end);
        let (cs, ce) = (self.rope.byte_to_char(start), self.rope.byte_to_char(end));
        self.rope.remove(cs..ce);
        self.rope.insert(cs, new);
        self.text.replace_range(start..end, new);
        let new_end = start + new.len();
        let Some(tree) = tree else { return };
        tree.edit(&InputEdit {
            start_byte: start,
            old_end_byte: end,
            new_end_byte: new_end,
            start_position,
            old_end_position,
            new_end_position: self.point_of(new_end),
        });
    }

    /// tree-sitter's point (row, byte column) of a byte offset.
    fn point_of(&self, byte: usize) -> Point {
        let line = self.rope.byte_to_line(byte);
        Point {
            row: line,
            column: byte - self.rope.line_to_byte(line),
        }
    }

    /// Byte offset of an LSP position, clamped into the document.
    pub fn byte_of(&self, pos: Utf16Pos) -> usize {
        let lines = self.rope.len_lines();
        let line_idx = pos.line as usize;
        if line_idx >= lines {
            return self.text.len();
        }
        let line = self.rope.line(line_idx);
        let content = line_content_chars(&line);
        let units = line.char_to_utf16_cu(content);
        let col = (pos.col as usize).min(units);
        let ch = line.utf16_cu_to_char(col);
        self.rope
            .char_to_byte(self.rope.line_to_char(line_idx) + ch)
    }

    /// LSP position of a byte offset (rounded down to a char boundary).
    pub fn pos_of(&self, byte: usize) -> Utf16Pos {
        let byte = byte.min(self.text.len());
        let ch = self.rope.byte_to_char(byte);
        let line = self.rope.char_to_line(ch);
        let line_start = self.rope.line_to_char(line);
        let col = self.rope.char_to_utf16_cu(ch) - self.rope.char_to_utf16_cu(line_start);
        Utf16Pos {
            line: line as u32,
            col: col as u32,
        }
    }

    pub fn line_count(&self) -> usize {
        self.rope.len_lines()
    }
}

/// Chars of a line without its line break.
fn line_content_chars(line: &ropey::RopeSlice) -> usize {
    let n = line.len_chars();
    if n > 0 && line.char(n - 1) == '\n' {
        if n > 1 && line.char(n - 2) == '\r' {
            return n - 2;
        }
        return n - 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, col: u32) -> Utf16Pos {
        Utf16Pos { line, col }
    }

    fn edit(d: &mut Document, a: Utf16Pos, b: Utf16Pos, text: &str) {
        let v = d.version + 1;
        d.apply(
            &[Change {
                range: Some((a, b)),
                text: text.into(),
            }],
            v,
            Reparse::Incremental,
        );
    }

    /// LSP's line starts: after each `\n`, `\r\n` and lone `\r`.
    fn line_starts(t: &str) -> Vec<usize> {
        let b = t.as_bytes();
        let mut starts = vec![0];
        for i in 0..b.len() {
            let end = b[i] == b'\n' || (b[i] == b'\r' && b.get(i + 1) != Some(&b'\n'));
            if end {
                starts.push(i + 1);
            }
        }
        starts
    }

    /// The LSP position of byte `off`, by the specification, written independently of
    /// the rope.
    fn reference_pos(t: &str, off: usize) -> Utf16Pos {
        let starts = line_starts(t);
        let line = starts.iter().rposition(|s| *s <= off).unwrap_or(0);
        let col = t[starts[line]..off].encode_utf16().count();
        pos(line as u32, col as u32)
    }

    /// Fuzzing `didChange` sequences: random edits at random positions (given as LSP
    /// positions of the reference model) with text full of `\r`, `\n`, `\r\n` and
    /// non-ASCII. After each edit the document's text, line count and positions equal the
    /// model's, and its syntax verdict equals a fresh parse of the model.
    #[test]
    fn fuzzed_edit_sequences_never_desync() {
        const PIECES: &[&str] = &[
            "x = 1", "\n", "\r", "\r\n", "😀", "é", "def f():", " ", "(", ")", "    ", "名",
        ];
        for seed in 1..=150u64 {
            let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            let mut rnd = |n: usize| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % n as u64) as usize
            };
            let mut model = String::from("a = 1\r\nb = 2\n");
            let mut d = Document::new(model.clone(), 0);
            for step in 0..15 {
                // A char boundary that is not inside a `\r\n`.
                let boundary = |m: &str, rnd: &mut dyn FnMut(usize) -> usize| loop {
                    let o = rnd(m.len() + 1);
                    let b = m.as_bytes();
                    let inside_crlf = o > 0 && o < b.len() && b[o - 1] == b'\r' && b[o] == b'\n';
                    if m.is_char_boundary(o) && !inside_crlf {
                        return o;
                    }
                };
                let a = boundary(&model, &mut rnd);
                let b = boundary(&model, &mut rnd);
                let (a, b) = (a.min(b), a.max(b));
                let text: String = (0..rnd(4)).map(|_| PIECES[rnd(PIECES.len())]).collect();
                let (pa, pb) = (reference_pos(&model, a), reference_pos(&model, b));
                edit(&mut d, pa, pb, &text);
                model.replace_range(a..b, &text);
                let ctx = format!("seed {seed} step {step}: {model:?}");
                assert_eq!(d.client_text(), model, "{ctx}");
                assert_eq!(d.line_count(), line_starts(&model).len(), "{ctx}");
                let o = boundary(&model, &mut rnd);
                assert_eq!(d.pos_of(o), reference_pos(&model, o), "{ctx} at {o}");
                assert_eq!(d.byte_of(reference_pos(&model, o)), o, "{ctx} at {o}");
                assert_eq!(
                    d.module().syntax_error.is_some(),
                    Module::parse(&model).syntax_error.is_some(),
                    "{ctx}"
                );
            }
        }
    }

    /// Issue 10, item 10: `\r`, `\n` and `\r\n` are each one line end.
    #[test]
    fn lone_carriage_returns_end_lines() {
        let mut d = Document::new("a = 1\rb = 2\rc = 3\rd = 4".into(), 0);
        assert_eq!(d.line_count(), 4);
        assert!(d.module().syntax_error.is_none());
        edit(&mut d, pos(1, 0), pos(1, 0), "x = 0\r");
        assert_eq!(d.text(), "a = 1\nx = 0\nb = 2\nc = 3\nd = 4");
        assert!(d.module().syntax_error.is_none());
        // A `\n` typed after a lone `\r` makes one `\r\n` line end, not two lines.
        let mut d = Document::new("a = 1\rb = 2".into(), 0);
        edit(&mut d, pos(1, 0), pos(1, 0), "\n");
        assert_eq!(d.line_count(), 2);
        assert_eq!(d.text(), "a = 1\r\nb = 2");
        // And removing it again leaves the lone `\r`.
        edit(&mut d, pos(1, 0), pos(1, 0), "c = 3\r");
        edit(&mut d, pos(0, 5), pos(1, 0), "");
        assert_eq!((d.line_count(), d.text()), (2, "a = 1c = 3\nb = 2"));
        assert!(d.module().syntax_error.is_some());
    }

    #[test]
    fn utf16_positions_on_lines_with_emoji_and_cjk() {
        let mut d = Document::new("s = '😀名'\r\nx = 1\n".into(), 0);
        // 's = \'' is 5 units, the emoji 2, 名 1.
        assert_eq!(d.byte_of(pos(0, 7)), "s = '😀".len());
        assert_eq!(d.byte_of(pos(0, 8)), "s = '😀名".len());
        assert_eq!(d.pos_of("s = '😀名".len()), pos(0, 8));
        // Past the line's end clamps before the \r\n; past the last line, to the end.
        assert_eq!(d.byte_of(pos(0, 99)), "s = '😀名'".len());
        assert_eq!(d.byte_of(pos(9, 0)), d.text().len());
        edit(&mut d, pos(0, 8), pos(0, 8), "字");
        assert_eq!(d.text(), "s = '😀名字'\r\nx = 1\n");
        assert_eq!(d.pos_of(d.text().find('x').unwrap()), pos(1, 0));
    }

    /// The model: apply the same edit to a plain string by walking its UTF-16 units.
    fn model_byte(text: &str, p: Utf16Pos) -> usize {
        let mut line_start = 0;
        for _ in 0..p.line {
            match text[line_start..].find('\n') {
                Some(i) => line_start += i + 1,
                None => return text.len(),
            }
        }
        let line_end = text[line_start..]
            .find('\n')
            .map_or(text.len(), |i| line_start + i);
        let line_end = if text[..line_end].ends_with('\r') && line_end < text.len() {
            line_end - 1
        } else {
            line_end
        };
        let mut units = 0;
        for (i, c) in text[line_start..line_end].char_indices() {
            if units + c.len_utf16() > p.col as usize {
                return line_start + i;
            }
            units += c.len_utf16();
        }
        line_end
    }

    #[test]
    fn random_edits_keep_text_and_tree_in_step_with_a_fresh_parse() {
        let pieces = [
            "",
            "a",
            "😀",
            "名前",
            "\n",
            "\r\n",
            "def f(x):\n    return x\n",
            "    ",
            "(",
            ")",
            "class C:\n",
            "'",
            "é",
            "#",
            "x = 1\n",
        ];
        let mut rng = pivot_test_support::edit_fuzz::Rng(0x9e37_79b9_7f4a_7c15);
        let mut d = Document::new("def main():\n    s = '😀'\n    return s\n".into(), 0);
        let mut model = d.text().to_string();
        for step in 0..3000 {
            let lines = model.split('\n').count() as u32 + 1;
            let a = pos(rng.below(lines as usize) as u32, rng.below(12) as u32);
            let b = pos(a.line + rng.below(2) as u32, rng.below(12) as u32);
            let text = pieces[rng.below(pieces.len())];
            let (mut s, mut e) = (model_byte(&model, a), model_byte(&model, b));
            if s > e {
                std::mem::swap(&mut s, &mut e);
            }
            model.replace_range(s..e, text);
            edit(&mut d, a, b, text);
            assert_eq!(d.text(), model, "step {step}");
            if step % 50 == 0 {
                let fresh = parse_tree(&model, None);
                assert_eq!(
                    d.tree().root_node().to_sexp(),
                    fresh.root_node().to_sexp(),
                    "step {step}"
                );
                assert_eq!(d.module().objects, Module::parse(&model).objects);
            }
        }
    }

    /// After every random edit, the findings the server publishes (incremental analysis,
    /// findings cached per statement) equal those computed from scratch on a fresh parse of
    /// the same text, with pivots that reach every aggregate case of `check`.
    #[test]
    fn random_edits_publish_the_diagnostics_of_a_fresh_computation() {
        use crate::findings::findings;
        use crate::sample as bench;
        use crate::Workspace;
        use pivot_python::pivots::Rule;
        use pivot_python::python::ObjectKind;
        use pivot_test_support::edit_fuzz as inc;

        let mut more: Vec<(&str, &str, &str)> = vec![
            ("attr", "attribute", r#""^zz""#),
            ("imp-re", "import", r#""^[a-h]""#),
            ("imp-no", "import", r#"["os", false]"#),
            ("com-re", "comment", r#""^# [a-m]""#),
            ("com-no", "comment", "false"),
            ("com-mem", "comment", r#"["x", true]"#),
            ("mdoc", "method docstring", "true"),
            ("fdec", "function decorator", r#"["timer", false]"#),
            ("cdec", "class decorator", r#"["dataclass", true]"#),
            ("ftry", "function try", "false"),
            ("mann", "method annotation", "true"),
            ("arg-all", "function argument", r#""^zz""#),
            // Team kinds: public entries of a statement, and constructs of the whole text.
            ("pub-fdoc", "public function docstring", "true"),
            ("pub-mann", "public method annotation", "true"),
            ("bare", "bare except", "false"),
            ("no-print", "call", r#"["print", false]"#),
            ("top", "import not at top", "false"),
            ("no-list", "typing name", r#"["List", false]"#),
            ("ctext", "comment text", r#"["e", false]"#),
        ];
        more.reverse();
        let add = |ws: &mut Workspace, (id, kind, rule): (&str, &str, &str)| {
            let kind = ObjectKind::from_name(kind).unwrap();
            let rule = Rule::from_json(&serde_json::from_str(rule).unwrap()).unwrap();
            ws.replay
                .add_user(id, 0, format!("pivot {id}"), kind, rule)
                .unwrap();
        };
        let files = [
            bench::sample_module(150),
            inc::sample(80),
            "class C:\n    def __init__(self):\n        pass\n\nclass D:\n    def __init__(self):\n        x = 1\n".to_string(),
        ];
        let mut rng = inc::Rng(0x1234_5678_9abc_def1);
        let (mut edits, mut with_findings, mut total, mut fresh_differs) = (0, 0, 0, 0);
        let (mut fast, mut pending) = (0, 0);
        for (f, original) in files.iter().enumerate() {
            let mut ws = Workspace::default();
            for p in bench::PIVOTS {
                add(&mut ws, p);
            }
            let key = format!("file:///t/{f}.py");
            ws.docs
                .insert(key.clone(), Document::new(original.clone(), 0));
            let mut undo: Vec<(usize, usize, String)> = Vec::new();
            let mut more = more.clone();
            // The tree the server re-parsed after every edit before edits could be analysed
            // without it: the reference here, so that the document's own tree is re-parsed
            // only when asked for (every 7th edit) and edits without it come in runs.
            let mut model_tree = parse_tree(original, None);
            for step in 0..2000 {
                // New pivots now and then: the cached findings must follow the active set.
                if step % 100 == 50 {
                    if let Some(p) = more.pop() {
                        add(&mut ws, p);
                    }
                }
                let doc = ws.docs.get_mut(&key).unwrap();
                if step % 9 == 0 {
                    let change = Change {
                        range: None,
                        text: original.clone(),
                    };
                    doc.apply(&[change], step, Reparse::Incremental);
                    model_tree = parse_tree(original, None);
                    undo.clear();
                }
                let text = doc.text().to_string();
                let (s, e, ins) = match undo.pop() {
                    Some(u) if rng.below(2) == 0 => u,
                    // Half the time a name changes (the code stays valid, findings move).
                    _ if rng.below(2) == 0 => {
                        let names: Vec<usize> = text
                            .char_indices()
                            .filter(|&(i, c)| i > 0 && c.is_ascii_alphabetic())
                            .map(|(i, _)| i)
                            .collect();
                        let at = names[rng.below(names.len())];
                        let (s, e, ins) = if rng.below(2) == 0 {
                            (
                                at,
                                at,
                                ["a", "_", "m", "x", "T", "chx"][rng.below(6)].to_string(),
                            )
                        } else {
                            (at, at + 1, String::new())
                        };
                        undo.push((s, s + ins.len(), text[s..e].to_string()));
                        (s, e, ins)
                    }
                    _ => {
                        let (s, e, ins) = inc::random_edit(&mut rng, &text);
                        undo.push((s, s + ins.len(), text[s..e].to_string()));
                        (s, e, ins)
                    }
                };
                // LSP positions cannot fall between `\r` and `\n`.
                let snap = |i: usize| {
                    i - (text[..i].ends_with('\r') && text[i..].starts_with('\n')) as usize
                };
                let (s, e) = (snap(s), snap(e));
                let change = Change {
                    range: Some((doc.pos_of(s), doc.pos_of(e))),
                    text: ins.clone(),
                };
                // A third of the edits are not analysed before the next (as `didChange` leaves
                // them when edits come faster than their background analysis): the next
                // analysis starts from several edits at once.
                let later = rng.below(3) == 0;
                doc.edit(&[change], step + 1, Reparse::Incremental);
                let mut model = text.clone();
                inc::apply(&mut model, &mut model_tree, &(s, e, ins.clone()));
                assert_eq!(doc.text(), model);
                // (Text with a `\r` is analysed whole at once, see `apply_with_cr`.)
                assert!(doc.is_pending() || model.contains('\r') || text.contains('\r'));
                if later {
                    pending += 1;
                    continue;
                }
                // What the server publishes: the document's findings (its analysis, findings
                // cached per statement), which lsp/convert.rs turns into diagnostics.
                let got = findings(
                    ws.docs[&key].text(),
                    ws.docs[&key].module(),
                    &ws.replay.active(),
                );
                // From scratch: the whole walk of the document's tree, every pivot checked
                // on the whole module (what the server computed before the cache).
                let doc = &ws.docs[&key];
                let scratch = Module::from_tree(&model, &model_tree);
                if step % 7 == 0 {
                    let (a, b) = (doc.tree().root_node(), model_tree.root_node());
                    assert_eq!(a.to_sexp(), b.to_sexp(), "step {step}");
                    assert_eq!(a.end_byte(), b.end_byte());
                }
                let want = findings(&model, &scratch, &ws.replay.active());
                let what = format!("file {f} step {step} {:?}\n{model}", (s, e, &ins));
                assert_eq!(got, want, "{what}");
                // What hover and code actions read: the whole module.
                assert_eq!(doc.module().objects, scratch.objects, "{what}");
                assert_eq!(doc.module().syntax_error, scratch.syntax_error, "{what}");
                // tree-sitter's incremental re-parse and a fresh parse can recover from an
                // error differently (before this cache too): counted, not asserted.
                let fresh = Module::parse(&model);
                fresh_differs += (fresh.syntax_error != scratch.syntax_error) as usize;
                edits += 1;
                with_findings += (scratch.syntax_error.is_none() && !got.is_empty()) as usize;
                total += got.len();
            }
            fast += ws.docs[&key].fast_edits();
        }
        eprintln!(
            "{edits} edits, {with_findings} with pivot findings, {total} findings compared; a fresh parse gave another syntax error after {fresh_differs}"
        );
        eprintln!("{fast} edits analysed from the edited statement alone; {pending} edits left to the next analysis");
        assert!(pending > edits / 5, "{pending}/{edits}");
        assert!(with_findings > edits / 4, "{with_findings}/{edits}");
        // Only an analysis right after one edit can take the one-statement path.
        assert!(fast > edits / 8, "{fast}/{edits}");
    }
}
