//! A parsed Python module: its syntax verdict and its objects. One parse serves every
//! pivot checked against it.

use super::objects::{Collector, Objects};
pub use super::syntax::SyntaxError;
use super::{joined, syntax, walk};
use std::cell::RefCell;
use tree_sitter::{Parser, Tree};

thread_local! {
    // A parser per thread: rayon workers and the server's tasks each reuse their own.
    static PARSER: RefCell<Parser> = RefCell::new(new_parser());
}

fn new_parser() -> Parser {
    let mut p = Parser::new();
    p.set_language(&tree_sitter_python::LANGUAGE.into())
        .expect("tree-sitter-python is ABI-compatible with the linked tree-sitter");
    p
}

/// Parse `src`, reusing `old` (already edited to match) for an incremental re-parse.
pub fn parse_tree(src: &str, old: Option<&Tree>) -> Tree {
    PARSER.with(|p| {
        p.borrow_mut()
            .parse(src, old)
            .expect("a parser with a language and no timeout always returns a tree")
    })
}

/// `src` with each lone `\r` as `\n`. CPython reads `\r`, `\n` and `\r\n` as line ends
/// (so does LSP); tree-sitter only `\n`. Same length, so every byte offset stays valid.
pub fn lone_cr_as_lf(src: &str) -> std::borrow::Cow<'_, str> {
    let b = src.as_bytes();
    let lone = |i: usize| b.get(i + 1) != Some(&b'\n');
    if !memchr::memchr_iter(b'\r', b).any(lone) {
        return std::borrow::Cow::Borrowed(src);
    }
    let mut out = b.to_vec();
    for i in memchr::memchr_iter(b'\r', b).filter(|i| lone(*i)) {
        out[i] = b'\n';
    }
    // Only an ASCII byte was replaced by another.
    std::borrow::Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| src.to_string()))
}

#[derive(Clone, Debug)]
pub struct Module {
    pub syntax_error: Option<SyntaxError>,
    pub objects: Objects,
}

impl Module {
    pub fn parse(src: &str) -> Module {
        let src = lone_cr_as_lf(src);
        let src: &str = &src;
        let tree = parse_tree(src, None);
        let module = Module::from_tree(src, &tree);
        if module.syntax_error.is_none() || !tree.root_node().has_error() {
            return module;
        }
        Module::parse_joined(src).unwrap_or(module)
    }

    /// The module of `src` read with the lines inside brackets joined (`joined.rs`), when
    /// that is what made tree-sitter fail: ranges are recounted over `src` and texts taken
    /// from it.
    pub fn parse_joined(src: &str) -> Option<Module> {
        let flat = joined::join_bracketed_lines(src)?;
        let tree = parse_tree(&flat, None);
        if tree.root_node().has_error() {
            return None;
        }
        let m = Module::from_tree(&flat, &tree);
        let lines = joined::Lines::new(src);
        let mut objects = Objects::default();
        objects.extend_mapped(&m.objects, |s| lines.span(s));
        // Comments are read from the whole text, which joining blanked inside brackets.
        objects.replace_comments(super::objects::comments(src));
        objects.retext(|span, text| {
            if span.text(&flat) == text {
                span.text(src).to_string()
            } else {
                text.to_string()
            }
        });
        Some(Module {
            syntax_error: m.syntax_error.map(|e| SyntaxError {
                span: lines.span(e.span),
                ..e
            }),
            objects,
        })
    }

    /// Syntax verdict and objects in one walk of the tree. Without tree-sitter errors the
    /// walk skips expressions that cannot hold a checked node (`walk::preorder_pruned`),
    /// which gives the same module as visiting every node.
    pub fn from_tree(src: &str, tree: &Tree) -> Module {
        Module::walked(src, tree, !tree.root_node().has_error())
    }

    /// `from_tree` visiting every node: what trees with errors get (statements can sit
    /// inside ERROR nodes anywhere), and the reference the pruned walk is tested against.
    pub fn from_every_node(src: &str, tree: &Tree) -> Module {
        Module::walked(src, tree, false)
    }

    /// One walk with both visitors; `pruned` only for a tree without errors.
    fn walked(src: &str, tree: &Tree, pruned: bool) -> Module {
        let root = tree.root_node();
        let early = syntax::pre_check(src, root);
        let mut grammar = early.is_none().then(|| match pruned {
            true => syntax::GrammarCheck::without_numbers(src),
            false => syntax::GrammarCheck::new(src),
        });
        let mut objects = Collector::new(src);
        let mut visit = |node: tree_sitter::Node, id: u16, in_class: bool| {
            objects.visit_kind(node, id, in_class);
            if let Some(g) = grammar.as_mut() {
                g.visit_kind(node, id);
            }
            true
        };
        if pruned {
            walk::preorder_pruned(root, src.as_bytes(), visit);
        } else {
            walk::preorder(root, |node, in_class| visit(node, node.kind_id(), in_class));
        }
        let syntax_error = early.or_else(|| {
            let walked = grammar.and_then(|g| g.finish());
            // The pruned walk leaves number literals to the text scan.
            let found = match pruned {
                true => syntax::first_in_walk(walked, syntax::number_error(src, root)),
                false => walked,
            };
            found.map(|e| syntax::where_cpython_reports(src, e))
        });
        Module {
            syntax_error,
            objects: objects.finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The module of `src` both ways, if tree-sitter finds no error in it.
    fn compare(src: &str) -> bool {
        let tree = parse_tree(src, None);
        if tree.root_node().has_error() {
            return false;
        }
        let pruned = Module::from_tree(src, &tree);
        let whole = Module::from_every_node(src, &tree);
        assert_eq!(pruned.syntax_error, whole.syntax_error, "{src}");
        assert_eq!(pruned.objects, whole.objects, "{src}");
        true
    }

    #[test]
    fn pruned_walk_gives_the_module_of_a_whole_walk() {
        let mut compared = 0;
        for text in pivot_test_support::edit_fuzz::corpus() {
            // Each text cut after each of its lines too: many error-free states with
            // statements cut short.
            let cuts = text.match_indices('\n').map(|(i, _)| i + 1);
            for end in cuts.chain([text.len()]) {
                compared += compare(&text[..end]) as usize;
            }
        }
        assert!(compared > 100, "only {compared} error-free texts compared");
    }

    #[test]
    fn numbers_found_from_the_text_are_the_walk_s() {
        let cases = [
            "x = 007\n",
            "x = '007'  # 007\n",
            "v007 = 1\nw_08 = 2\n",
            "f(a, b=1_000, c=0x_ff)\n",
            "f(a=1, b=0_1)\n",
            "def f():\n    return.5\n",
            "def f():\n    return.5_\n",
            "x = [1.5e3, 1_5.2_5, 2]\n",
            "x = 1 if y else 08\n",
            "x = 5_j + 10L\n",
            "print(f'{007}')\n",
            "x = f'{a:08}'\n",
            "x = y[1:09]\n",
            "x = 0_ + 1.e5_ + 07e1 + 0b_1\n",
            "def f(a=1, b):\n    return 0_\n",
            "x = 00 + 0.0 + 0e0 + 0j + .0\n",
        ];
        let mut errors = 0;
        for src in cases {
            assert!(compare(src), "{src} parsed with an error");
            errors += Module::parse(src).syntax_error.is_some() as usize;
        }
        assert!(errors >= 9, "only {errors} cases have an error");
    }

    /// The same over a directory of real Python (`PIVOT_PY_DIR`, e.g. the standard library).
    #[test]
    #[ignore = "needs PIVOT_PY_DIR"]
    fn pruned_walk_on_a_directory_of_python() {
        let dir = std::env::var("PIVOT_PY_DIR").expect("PIVOT_PY_DIR");
        let mut compared = 0;
        for e in std::fs::read_dir(&dir).expect("PIVOT_PY_DIR").flatten() {
            if let Ok(t) = std::fs::read_to_string(e.path()) {
                compared += compare(&t) as usize;
            }
        }
        eprintln!("{compared} files compared");
        assert!(compared > 0);
    }
}
