//! Incremental analysis: the syntax verdict and objects of a module, recomputed after an
//! edit only for the top-level statements whose text changed.
//!
//! A top-level statement (a child of the module node) is a *chunk*. What `Module::from_tree`
//! finds inside a chunk (its objects and the first grammar-level syntax error) depends only
//! on the chunk's subtree: `in_class` is false at the top, decorators are read within their
//! `decorated_definition`, and every check looks at a node and its children. So a chunk's
//! result is cached by the chunk's text (with its node kind and starting column: the
//! columns of its first line include that column), with spans relative to the chunk's start
//! (bytes and lines; columns are unchanged). The whole-file parts are cheap and recomputed
//! every time: tree-sitter's own errors (`root.has_error()`), the indentation tokenizer,
//! and the comment entry (a regex over the whole text, strings included).
//!
//! The result is exactly `Module::from_tree` on the same tree (the tests check it on random
//! edits); `Analysis::to_module` builds that module when a caller wants one.
//!
//! `ModuleCache::reanalyze_edit` goes one step further for an edit inside one statement of
//! an error-free file: it parses that statement's text alone (with what follows it up to
//! the next statement), so the whole file need not be re-parsed before the analysis.

use super::module::Module;
use super::objects::{self, Collector, Entry, ObjectKind, Objects};
use super::span::{Pos, Span};
use super::syntax::{self, GrammarCheck, SyntaxError};
use super::walk;
use crate::fasthash::{self, Prehashed};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;
use tree_sitter::{Node, Tree};

/// What one top-level statement holds, positions relative to its start.
#[derive(Debug)]
pub struct Chunk {
    text: Box<str>,
    kind: u16,
    col: u32,
    /// Objects of every kind but comments (a whole-text entry).
    pub objects: Objects,
    /// The first error of the grammar-level checks in this statement.
    pub grammar: Option<SyntaxError>,
}

impl Chunk {
    /// The statement's text (what relative spans index into).
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// A chunk at its place in the module.
#[derive(Clone, Debug)]
pub struct Placed {
    pub chunk: Arc<Chunk>,
    pub start_byte: usize,
    pub start_line: u32,
}

impl Placed {
    /// A span relative to the chunk, made absolute.
    pub fn absolute(&self, s: Span) -> Span {
        shift(s, self.start_byte, self.start_line, true)
    }
}

/// Relative <-> absolute: bytes and lines move, columns do not. Wrapping arithmetic so that
/// the two directions are exact inverses whatever the values.
fn shift(s: Span, bytes: usize, lines: u32, forward: bool) -> Span {
    let b = |x: usize| {
        if forward {
            x.wrapping_add(bytes)
        } else {
            x.wrapping_sub(bytes)
        }
    };
    let line = |x: u32| {
        if forward {
            x.wrapping_add(lines)
        } else {
            x.wrapping_sub(lines)
        }
    };
    Span {
        start_byte: b(s.start_byte),
        end_byte: b(s.end_byte),
        start: Pos {
            line: line(s.start.line),
            col: s.start.col,
        },
        end: Pos {
            line: line(s.end.line),
            col: s.end.col,
        },
    }
}

/// A module as chunks plus its whole-file parts.
#[derive(Clone, Debug)]
pub struct Analysis {
    pub chunks: Vec<Placed>,
    pub syntax_error: Option<SyntaxError>,
    pub comments: Entry,
    /// The tree had no tree-sitter error (ERROR or MISSING node): the condition for
    /// `ModuleCache::reanalyze_edit`.
    pub clean: bool,
}

impl Analysis {
    /// The module `Module::from_tree` gives for the same text and tree.
    pub fn to_module(&self) -> Module {
        let mut objects = Objects::default();
        for p in &self.chunks {
            objects.extend_mapped(&p.chunk.objects, |s| p.absolute(s));
        }
        objects.push_entry(ObjectKind::Comment, self.comments.clone());
        Module {
            syntax_error: self.syntax_error.clone(),
            objects,
        }
    }
}

/// Chunks of the last analysis by a hash of (text, kind, column).
#[derive(Default)]
pub struct ModuleCache {
    chunks: HashMap<u64, Arc<Chunk>, BuildHasherDefault<Prehashed>>,
    walked: usize,
}

impl ModuleCache {
    /// The analysis of `src` parsed as `tree`, walking only chunks not seen last time.
    /// Chunks the new text no longer has are dropped.
    pub fn analyze(&mut self, src: &str, tree: &Tree) -> Analysis {
        let root = tree.root_node();
        let mut old = std::mem::take(&mut self.chunks);
        self.walked = 0;
        let mut chunks = Vec::new();
        let mut place = |node: Node, this: &mut ModuleCache| {
            let (start, end) = (node.start_byte(), node.end_byte());
            let point = node.start_position();
            let text = src.get(start..end).unwrap_or("");
            let (kind, col) = (node.kind_id(), point.column as u32);
            let key = hash(text.as_bytes(), kind, col);
            let same = |c: &Arc<Chunk>| &*c.text == text && c.kind == kind && c.col == col;
            // Error recovery can give the same text another shape elsewhere: chunks with
            // errors are walked every time and not kept.
            let cacheable = !node.has_error();
            let found = match this.chunks.get(&key) {
                Some(c) if cacheable && same(c) => Some(c.clone()),
                _ if cacheable => old.remove(&key).filter(same),
                _ => None,
            };
            let chunk = found.unwrap_or_else(|| {
                this.walked += 1;
                Arc::new(walk_chunk(src, node, text))
            });
            if cacheable {
                this.chunks.entry(key).or_insert_with(|| chunk.clone());
            }
            chunks.push(Placed {
                chunk,
                start_byte: start,
                start_line: point.row as u32,
            });
        };
        if root.kind() == "module" {
            let mut c = root.walk();
            if c.goto_first_child() {
                loop {
                    place(c.node(), self);
                    if !c.goto_next_sibling() {
                        break;
                    }
                }
            }
        } else {
            // Not a module node (never seen): the whole tree is one chunk.
            place(root, self);
        }
        let syntax_error = syntax::pre_check(src, root)
            .or_else(|| first_grammar(&chunks).map(|e| syntax::where_cpython_reports(src, e)));
        Analysis {
            chunks,
            syntax_error,
            comments: objects::comments(src),
            clean: !root.has_error(),
        }
    }

    /// The analysis of `src` after one edit of the text `prev` was computed on (bytes
    /// `start..old_end` replaced, the length changed by `delta`), without the whole file's
    /// tree: the edited top-level statement is parsed on its own, together with what follows
    /// it up to the next statement that is not a comment. `None` when that is not certain to
    /// give what a parse of the whole file gives; the caller then re-parses the file and
    /// calls `analyze`.
    ///
    /// Why the small parse equals the whole one under these conditions:
    /// - the whole file had no tree-sitter error, and the small parse has none;
    /// - the edit lies inside one statement (not a comment) that starts a line, at column 0,
    ///   not continued from the line before by a backslash, and does not touch its first
    ///   byte: the text before it, and what the tokenizer read of it to end the statement
    ///   before (the indentation of its line and its first character), are unchanged, so
    ///   the parser and the indentation scanner start the statement in the state a file
    ///   starts in (no open bracket or string, indentation 0, between statements);
    /// - it does not start with a clause keyword that could continue the statement before
    ///   (`else`, `elif`, `except`, `finally`, `case`);
    /// - the small parse gives back the statements that follow (the comments, through
    ///   which the tokenizer looks for the next line's indentation, and the next
    ///   statement) where the old tree had them, with their kinds, lengths and columns:
    ///   whatever the edit did at the statement's end (an open block, a line continuation)
    ///   shows there, and the text from them on is unchanged, so the parse goes on from
    ///   there as before.
    ///
    /// The random-edit tests compare the result with `Module::from_tree` on the file
    /// re-parsed as a whole after every edit.
    pub fn reanalyze_edit(
        &mut self,
        prev: &Analysis,
        src: &str,
        start: usize,
        old_end: usize,
        delta: isize,
    ) -> Option<Analysis> {
        self.walked = 0;
        if !prev.clean {
            return None;
        }
        let old = &prev.chunks;
        // The statement holding the edit, which must start strictly before it.
        let i = old
            .partition_point(|p| p.start_byte < start)
            .checked_sub(1)?;
        let here = &old[i];
        if here.chunk.col != 0
            || old_end > here.start_byte + here.chunk.text.len()
            || here.chunk.text.starts_with('#')
            || !starts_a_line(src, here.start_byte)
        {
            return None;
        }
        let moved = |b: usize| b.checked_add_signed(delta);
        // The statements after it that the small parse must give back unchanged: the
        // comments that follow (the tokenizer looks past comment lines to find the next
        // line's indentation) and the first statement after them.
        let mut j = i + 1;
        while j < old.len() && old[j].chunk.text.starts_with('#') {
            j += 1;
        }
        let follow = &old[i + 1..(j + 1).min(old.len())];
        let end = match old.get(j + 1) {
            Some(p) => moved(p.start_byte)?,
            None => src.len(),
        };
        let text = src.get(here.start_byte..end)?;
        if starts_with_clause(text) {
            return None;
        }
        let small = super::module::parse_tree(text, None);
        let root = small.root_node();
        if root.has_error() || root.kind() != "module" {
            return None;
        }
        let mut kids: Vec<Node> = Vec::with_capacity(4);
        let mut c = root.walk();
        if c.goto_first_child() {
            loop {
                kids.push(c.node());
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        // The statements that follow, as the old tree had them.
        let tail = kids.len().checked_sub(follow.len())?;
        for (k, n) in kids[tail..].iter().zip(follow) {
            let rel = moved(n.start_byte)? - here.start_byte;
            if k.kind_id() != n.chunk.kind
                || k.start_byte() != rel
                || k.end_byte() - k.start_byte() != n.chunk.text.len()
                || k.start_position().column as u32 != n.chunk.col
            {
                return None;
            }
        }
        let lines = match (kids.get(tail), follow.first()) {
            (Some(k), Some(n)) => {
                (here.start_line + k.start_position().row as u32) as i64 - n.start_line as i64
            }
            _ => 0,
        };
        kids.truncate(tail);
        // What the edited statement became (it can split in two, or more).
        if kids.is_empty() || kids[0].start_byte() != 0 {
            return None;
        }
        // The statement's old text leaves the cache (as `analyze` drops what the text no
        // longer has), so that a long run of such edits does not grow it.
        let gone = &here.chunk;
        let gone_key = hash(gone.text.as_bytes(), gone.kind, gone.col);
        if self
            .chunks
            .get(&gone_key)
            .is_some_and(|c| Arc::ptr_eq(c, gone))
        {
            self.chunks.remove(&gone_key);
        }
        let mut chunks = Vec::with_capacity(old.len() + kids.len());
        chunks.extend_from_slice(&old[..i]);
        for k in kids {
            let ktext = text.get(k.start_byte()..k.end_byte())?;
            let key = hash(
                ktext.as_bytes(),
                k.kind_id(),
                k.start_position().column as u32,
            );
            let chunk = Arc::new(walk_chunk(text, k, ktext));
            self.walked += 1;
            self.chunks.entry(key).or_insert_with(|| chunk.clone());
            chunks.push(Placed {
                chunk,
                start_byte: here.start_byte + k.start_byte(),
                start_line: here.start_line + k.start_position().row as u32,
            });
        }
        for p in &old[i + 1..] {
            chunks.push(Placed {
                chunk: p.chunk.clone(),
                start_byte: moved(p.start_byte)?,
                start_line: u32::try_from(p.start_line as i64 + lines).ok()?,
            });
        }
        // The tokenizer's rules (`pre_check` on a root without error). When the file before
        // the edit passed them, only the small text can break them: the tokenizer enters it
        // as a file starts (see above), and leaves it at a statement at column 0 with no
        // bracket open (or the small text fails), so the unchanged text after it is read
        // as before. An error found there is left to the whole file's check, which places
        // it as CPython does.
        let tokens = if prev.syntax_error.is_none() {
            if syntax::tokenizer_error(text).is_some() {
                return None;
            }
            None
        } else {
            syntax::tokenizer_error(src)
        };
        let syntax_error = tokens
            .or_else(|| first_grammar(&chunks).map(|e| syntax::where_cpython_reports(src, e)));
        Some(Analysis {
            chunks,
            syntax_error,
            comments: objects::comments(src),
            clean: true,
        })
    }

    /// How many chunks the last analysis had to walk (the others came from the cache).
    pub fn walked(&self) -> usize {
        self.walked
    }

    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }
}

/// The first grammar-level error of the module, in statement order.
fn first_grammar(chunks: &[Placed]) -> Option<SyntaxError> {
    chunks.iter().find_map(|p| {
        p.chunk.grammar.as_ref().map(|e| SyntaxError {
            message: e.message.clone(),
            span: p.absolute(e.span),
        })
    })
}

/// Whether byte `at` starts a line that does not continue the one before (a backslash at
/// the end of the line before joins them).
fn starts_a_line(src: &str, at: usize) -> bool {
    let before = src.as_bytes().get(..at).and_then(|b| b.strip_suffix(b"\n"));
    match before {
        None => at == 0,
        Some(b) => !b.strip_suffix(b"\r").unwrap_or(b).ends_with(b"\\"),
    }
}

/// Whether a statement's text starts with a clause that continues the statement before.
fn starts_with_clause(text: &str) -> bool {
    let word_end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    matches!(
        &text[..word_end],
        "else" | "elif" | "except" | "finally" | "case"
    )
}

/// One walk of a chunk's subtree with both visitors, spans made relative.
fn walk_chunk(src: &str, node: Node, text: &str) -> Chunk {
    let mut objects = Collector::new(src);
    let mut grammar = GrammarCheck::new(src);
    walk::preorder(node, |n, in_class| {
        objects.visit(n, in_class);
        grammar.visit(n);
        true
    });
    let (bytes, lines) = (node.start_byte(), node.start_position().row as u32);
    let relative = |s: Span| shift(s, bytes, lines, false);
    let mut rel = Objects::default();
    rel.extend_mapped(&objects.finish_part(), relative);
    Chunk {
        text: text.into(),
        kind: node.kind_id(),
        col: node.start_position().column as u32,
        objects: rel,
        grammar: grammar.finish().map(|e| SyntaxError {
            span: relative(e.span),
            message: e.message,
        }),
    }
}

/// A chunk's key: its text, kind and column.
fn hash(text: &[u8], kind: u16, col: u32) -> u64 {
    fasthash::of(text, (kind as u64) << 32 | col as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::module::parse_tree;
    use pivot_test_support::edit_fuzz::*;

    /// Compares, and returns (tree-sitter error, grammar-level error only).
    fn assert_same(cache: &mut ModuleCache, text: &str, tree: &Tree, what: &str) -> (bool, bool) {
        let got = cache.analyze(text, tree).to_module();
        let want = Module::from_tree(text, tree);
        assert_eq!(got.syntax_error, want.syntax_error, "{what}\n{text}");
        assert_eq!(got.objects, want.objects, "{what}\n{text}");
        let broken = tree.root_node().has_error();
        (broken, !broken && want.syntax_error.is_some())
    }

    /// The editor's diagnostics put a syntax error where CPython does: an open bracket at
    /// its own line, an empty block at the next statement (CPython's lines, checked case by
    /// case in server/tests/fast/memorycode.rs).
    #[test]
    fn syntax_errors_on_cpython_s_lines() {
        let cases = [
            (
                "import os\n\n\ndef helper():\n    x = (\n",
                4,
                "'(' was never closed",
            ),
            (
                "def f():\n    # TODO\n\nx = 1\n",
                3,
                "expected an indented block after function definition on line 1",
            ),
            (
                "x = 1\ntry:\n    y = 2\n\nz = 3\n",
                4,
                "expected 'except' or 'finally' block",
            ),
        ];
        for (src, line, message) in cases {
            let tree = parse_tree(src, None);
            let module = ModuleCache::default().analyze(src, &tree).to_module();
            let e = module.syntax_error.expect(src);
            assert_eq!(
                (e.span.start.line, e.message.as_str()),
                (line, message),
                "{src}"
            );
        }
    }

    #[test]
    fn random_edits_give_the_module_of_a_whole_walk() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let (mut edits, mut broken, mut grammar, mut walked, mut chunks) = (0, 0, 0, 0, 0);
        for (f, original) in corpus().into_iter().enumerate() {
            let mut text = original.clone();
            let mut tree = parse_tree(&text, None);
            let mut cache = ModuleCache::default();
            let mut undo = Vec::new();
            assert_same(&mut cache, &text, &tree, "initial");
            for step in 0..2000 {
                // Short runs of edits from the original text, and undos, so that files
                // break and recover.
                if step % 12 == 0 {
                    text = original.clone();
                    tree = parse_tree(&text, None);
                    undo.clear();
                }
                let edit = match undo.pop() {
                    Some(u) if rng.below(2) == 0 => u,
                    _ => {
                        let (s, e, ins) = random_edit(&mut rng, &text);
                        undo.push((s, s + ins.len(), text[s..e].to_string()));
                        (s, e, ins)
                    }
                };
                apply(&mut text, &mut tree, &edit);
                let what = format!("file {f} step {step} {edit:?}");
                let (b, g) = assert_same(&mut cache, &text, &tree, &what);
                edits += 1;
                broken += b as usize;
                grammar += g as usize;
                walked += cache.walked();
                chunks += tree.root_node().child_count();
            }
        }
        eprintln!("{edits} edits: {broken} with tree-sitter errors, {grammar} with grammar-level errors only; walked {walked} of {chunks} chunks");
        assert!(edits >= 8000, "{edits} edits");
        // Valid and broken states were both visited, and the cache did most of the work.
        assert!(
            broken > edits / 10 && broken < edits * 9 / 10,
            "{broken}/{edits}"
        );
        assert!(grammar > edits / 50, "{grammar}/{edits}");
        assert!(walked * 4 < chunks, "walked {walked} of {chunks} chunks");
    }

    /// Edits analysed from the edited statement alone, many in a row (each on the analysis
    /// the last one gave): the same module as a whole walk of the file re-parsed whole,
    /// and the same statements (place, kind, column, text) as the whole tree's.
    #[test]
    fn edits_analysed_from_the_statement_alone_give_the_module_of_a_whole_walk() {
        // Files tree-sitter parses without error (some with grammar-level errors).
        let mut files: Vec<String> = corpus()
            .into_iter()
            .filter(|t| !parse_tree(t, None).root_node().has_error())
            .collect();
        files.push(sample(300));
        assert!(files.len() >= 3, "{} files", files.len());
        let (edits, clean, fast, split) = edit_alone_run(&files, 0x5eed_1234_abcd_ef01, 3000);
        eprintln!("{edits} edits ({clean} on an error-free file), {fast} analysed from the statement alone ({split} of them gave more than one statement)");
        assert!(fast > clean / 3, "{fast}/{clean}");
        assert!(split > 0);
    }

    /// The same on real code: `PIVOT_PY_DIR=/usr/lib/python3.11 cargo test --release --lib
    /// python::incremental -- --ignored --nocapture` (every `.py` file directly in it).
    #[test]
    #[ignore]
    fn edits_analysed_alone_on_a_directory_of_python() {
        let Some(dir) = std::env::var_os("PIVOT_PY_DIR") else {
            pivot_test_support::test_skip::skip("PIVOT_PY_DIR is not set");
            return;
        };
        let mut paths: Vec<_> = std::fs::read_dir(&dir)
            .expect("PIVOT_PY_DIR")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "py"))
            .collect();
        paths.sort();
        let files: Vec<String> = paths
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .filter(|t| t.len() < 200_000)
            .collect();
        let (edits, clean, fast, split) = edit_alone_run(&files, 0x0dd_ba11, 300);
        eprintln!("{} files, {edits} edits ({clean} on an error-free file), {fast} analysed from the statement alone ({split} gave more than one statement)", files.len());
    }

    /// Random edits of each file, checked after each one analysed alone; returns (edits,
    /// edits on an error-free file, edits analysed alone, of those giving 2+ statements).
    fn edit_alone_run(files: &[String], seed: u64, steps: usize) -> (usize, usize, usize, usize) {
        let mut rng = Rng(seed);
        let (mut edits, mut fast, mut split, mut clean) = (0, 0, 0, 0);
        for (f, original) in files.iter().enumerate() {
            let mut text = original.clone();
            let mut tree = parse_tree(&text, None);
            let mut cache = ModuleCache::default();
            let mut prev = cache.analyze(&text, &tree);
            let mut undo: Vec<(usize, usize, String)> = Vec::new();
            let mut broken = 0;
            for step in 0..steps {
                // Back to the original now and then, and soon after the file breaks (no
                // edit is analysed alone in a broken file).
                broken = if prev.clean { 0 } else { broken + 1 };
                if step % 40 == 0 || broken > 3 {
                    text = original.clone();
                    tree = parse_tree(&text, None);
                    prev = cache.analyze(&text, &tree);
                    undo.clear();
                }
                let edit = match undo.pop() {
                    Some(u) if rng.below(2) == 0 => u,
                    _ => {
                        let (s, e, ins) = match rng.below(4) {
                            0 => random_edit(&mut rng, &text),
                            // Typing in a name, or deleting a character of one: the file
                            // mostly stays valid.
                            k => {
                                let names: Vec<usize> = text
                                    .char_indices()
                                    .filter(|&(i, c)| i > 0 && c.is_ascii_alphanumeric())
                                    .map(|(i, _)| i)
                                    .collect();
                                let at = names.get(rng.below(names.len())).copied().unwrap_or(0);
                                if k != 3 {
                                    let piece = [
                                        "a", "_", "x", "1", "a", "_", "x", "1", "a", " ", "(", ":",
                                        "\n", "\n    ", "'",
                                    ];
                                    (at, at, piece[rng.below(piece.len())].to_string())
                                } else {
                                    let end = (at + 1..=text.len())
                                        .find(|&i| text.is_char_boundary(i))
                                        .unwrap_or(at);
                                    (at, end, String::new())
                                }
                            }
                        };
                        undo.push((s, s + ins.len(), text[s..e].to_string()));
                        (s, e, ins)
                    }
                };
                let before = text.len();
                apply(&mut text, &mut tree, &edit);
                let delta = text.len() as isize - before as isize;
                edits += 1;
                let what = format!("file {f} step {step} {edit:?}\n{text}");
                clean += prev.clean as usize;
                prev = match cache.reanalyze_edit(&prev, &text, edit.0, edit.1, delta) {
                    Some(a) => {
                        fast += 1;
                        assert!(cache.len() <= a.chunks.len(), "{what}");
                        split += (cache.walked() > 1) as usize;
                        let want = Module::from_tree(&text, &tree);
                        let got = a.to_module();
                        assert_eq!(got.syntax_error, want.syntax_error, "{what}");
                        assert_eq!(got.objects, want.objects, "{what}");
                        let root = tree.root_node();
                        assert!(!root.has_error() && a.clean, "{what}");
                        let mut c = root.walk();
                        let whole: Vec<_> = root
                            .children(&mut c)
                            .map(|n| {
                                let p = n.start_position();
                                let t = &text[n.start_byte()..n.end_byte()];
                                (
                                    n.start_byte(),
                                    p.row as u32,
                                    n.kind_id(),
                                    p.column as u32,
                                    t,
                                )
                            })
                            .collect();
                        let placed: Vec<_> = a
                            .chunks
                            .iter()
                            .map(|p| {
                                let c = &p.chunk;
                                (p.start_byte, p.start_line, c.kind, c.col, c.text())
                            })
                            .collect();
                        assert_eq!(placed, whole, "{what}");
                        a
                    }
                    None => cache.analyze(&text, &tree),
                };
            }
        }
        (edits, clean, fast, split)
    }

    #[test]
    fn one_character_edit_walks_one_chunk() {
        let mut text = sample(400);
        let mut tree = parse_tree(&text, None);
        let mut cache = ModuleCache::default();
        let first = cache.analyze(&text, &tree);
        assert_eq!(cache.walked(), first.chunks.len());
        let at = text.find("total_chx = ").unwrap();
        apply(&mut text, &mut tree, &(at, at, "x".into()));
        let a = cache.analyze(&text, &tree);
        assert_eq!(cache.walked(), 1);
        assert_eq!(a.chunks.len(), first.chunks.len());
        // Back to the original text: the original chunk was evicted, so it is walked again.
        apply(&mut text, &mut tree, &(at, at + 1, String::new()));
        cache.analyze(&text, &tree);
        assert_eq!(cache.walked(), 1);
        assert_eq!(
            cache.len(),
            first.chunks.len() - 1 + 1 - count_dupes(&first)
        );
    }

    fn count_dupes(a: &Analysis) -> usize {
        let mut seen = std::collections::HashSet::new();
        a.chunks
            .iter()
            .filter(|p| !seen.insert(Arc::as_ptr(&p.chunk)))
            .count()
    }

    #[test]
    fn statements_on_one_line_keep_their_columns() {
        let src = "a = 1; b = 2\nb = 2\nclass C: x = 1; y = 2\n";
        let tree = parse_tree(src, None);
        let mut cache = ModuleCache::default();
        let got = cache.analyze(src, &tree).to_module();
        assert_eq!(got.objects, Module::from_tree(src, &tree).objects);
        let b: Vec<_> = got
            .objects
            .get(crate::python::ObjectKind::Variable)
            .iter()
            .filter(|e| e.items[0].text == "b")
            .map(|e| (e.anchor.start.line, e.anchor.start.col))
            .collect();
        assert_eq!(b, [(0, 7), (1, 0)]);
    }
}
