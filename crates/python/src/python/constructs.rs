//! The constructs teams' rules are about and MemoryCode's kinds do not collect: `except`
//! clauses, `from` imports by their form and place, calls, names taken from `typing`, and
//! the comments of the syntax tree. They are read from a whole walk of the tree, apart from
//! `Objects`, so that MemoryCode's collection, and its pruned walk, stay as they are; a
//! team rule costs nothing to a module no team rule is checked on.

use super::module::{lone_cr_as_lf, parse_tree};
use super::objects::Item;
use super::span::Span;
use std::cell::RefCell;
use std::sync::Arc;
use tree_sitter::Node;

/// What one module holds of each construct, in source order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Constructs {
    /// Each bare `except:`, at its `except` keyword.
    pub bare_excepts: Vec<Item>,
    /// Each exception an `except` clause names (`except (A, b.C) as e` gives `A` and `b.C`),
    /// as written, at the name.
    pub caught: Vec<Item>,
    /// `from m import *` statements, the statement's range; the text is `m`.
    pub wildcard_imports: Vec<Item>,
    /// `from .m import x` statements, the statement's range; the text is `.m`.
    pub relative_imports: Vec<Item>,
    /// Import statements below the module's top (see `Walker::top_ends`) or inside a `def`
    /// or `class`, the statement's range; the text is the statement's first line.
    pub imports_not_at_top: Vec<Item>,
    /// Each name a `from` import takes, as `module.name` (`__future__.annotations`,
    /// `.models.User`, `os.*`), at the name.
    pub from_imports: Vec<Item>,
    /// Each call of a name or dotted name (`print(...)`, `os.system(...)`): the callee as
    /// written, the call's range.
    pub calls: Vec<Item>,
    /// Each name taken from `typing` or `typing_extensions`: imported from it
    /// (`from typing import List`, at `List`) or read from it (`typing.List`, `t.List`
    /// after `import typing as t`, at the whole attribute); the text is the name (`List`).
    pub typing_names: Vec<Item>,
    /// The comments, as the tokenizer sees them (not a `#` inside a string).
    pub comments: Vec<Item>,
    /// The module has a statement besides its docstring: an empty `__init__.py`, or one
    /// with only comments, has none.
    pub has_code: bool,
    /// The module has a type annotation somewhere (a parameter's, a return's, a
    /// variable's): what `from __future__ import annotations` changes.
    pub has_annotations: bool,
    /// Where the name of each public `def` starts, in order: as pydocstyle reads
    /// "public", a name without a leading `_` defined at the module's level (also under an
    /// `if` or `try` there) or in a public class's body; a function nested in a function is
    /// never public, nor is anything of a private class.
    pub public_defs: Vec<usize>,
}

const TYPING_MODULES: [&str; 2] = ["typing", "typing_extensions"];

impl Constructs {
    /// The constructs of `src`, read once per text and thread: a file's team rules are
    /// checked one after the other on the same text, each asking for them.
    pub fn of(src: &str) -> Arc<Constructs> {
        thread_local! {
            static LAST: RefCell<Option<(String, Arc<Constructs>)>> = const { RefCell::new(None) };
        }
        LAST.with(|last| {
            if let Some((text, c)) = last.borrow().as_ref() {
                if text == src {
                    return c.clone();
                }
            }
            let c = Arc::new(Constructs::read(src));
            *last.borrow_mut() = Some((src.to_string(), c.clone()));
            c
        })
    }

    /// `of` without the cache. Ranges are those of `src` (lone `\r`s are line ends, as in
    /// `Module::parse`, and keep every offset). Only a module without a syntax error is
    /// checked; where tree-sitter still reads it with errors (lines inside brackets
    /// indented less than their block, which `Module::parse` reads again joined), what it
    /// recovered is read: the constructs are not MemoryCode's, so no verdict of its hangs
    /// on them.
    pub fn read(src: &str) -> Constructs {
        let text = lone_cr_as_lf(src);
        let tree = parse_tree(&text, None);
        let mut w = Walker {
            src: text.as_bytes(),
            out: Constructs::default(),
            typing_aliases: Vec::new(),
            typing_reads: Vec::new(),
            top_ends: top_ends(text.as_bytes(), tree.root_node()),
        };
        w.walk(tree.root_node());
        let root = tree.root_node();
        public_defs(root, true, text.as_bytes(), &mut w.out.public_defs);
        w.out.public_defs.sort_unstable();
        w.out.has_code = (0..root.named_child_count())
            .filter_map(|i| root.named_child(i))
            .any(|c| match c.kind() {
                "comment" => false,
                "expression_statement" => {
                    !(c.named_child_count() == 1
                        && c.named_child(0).is_some_and(|s| s.kind() == "string"))
                }
                _ => true,
            });
        let Walker {
            mut out,
            typing_aliases,
            typing_reads,
            ..
        } = w;
        // An attribute read is `typing`'s only when its object names the module: known
        // once every import is seen (an alias may be imported below its first use).
        for (object, item) in typing_reads {
            if typing_aliases.contains(&object) {
                out.typing_names.push(item);
            }
        }
        out.typing_names.sort_by_key(|i| i.span.start_byte);
        out
    }
}

/// The public defs under `node` (see `Constructs::public_defs`); `public`: whether a def
/// here could be.
fn public_defs(node: Node, public: bool, src: &[u8], out: &mut Vec<usize>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let name = child.child_by_field_name("name");
        let open = name.is_some_and(|n| !n.utf8_text(src).unwrap_or("_").starts_with('_'));
        match child.kind() {
            "function_definition" => {
                if public && open {
                    out.extend(name.map(|n| n.start_byte()));
                }
                public_defs(child, false, src, out);
            }
            "class_definition" => public_defs(child, public && open, src, out),
            _ => public_defs(child, public, src, out),
        }
    }
}

struct Walker<'a> {
    src: &'a [u8],
    out: Constructs,
    /// Names bound to `typing` by `import typing [as t]`.
    typing_aliases: Vec<String>,
    /// `x.Name` reads: `x`, and `Name` at the attribute.
    typing_reads: Vec<(String, Item)>,
    /// The byte where the module's top ends: the first top-level statement that is not a
    /// docstring, an import, a dunder assignment (`__all__ = ...`) or an `if` / `try` /
    /// `with` (which guard imports: `if TYPE_CHECKING:`, `try: import ujson`).
    top_ends: usize,
}

impl Walker<'_> {
    fn text(&self, node: Node) -> &str {
        node.utf8_text(self.src).unwrap_or("")
    }

    fn item(&self, text: impl Into<String>, node: Node) -> Item {
        Item {
            text: text.into(),
            span: Span::of(&node),
        }
    }

    /// Every node in source order, with whether a `def` or `class` encloses it.
    fn walk(&mut self, root: Node) {
        let mut cursor = root.walk();
        // Depths of the enclosing definitions.
        let mut scopes: Vec<usize> = Vec::new();
        let mut depth = 0usize;
        loop {
            let node = cursor.node();
            if node.is_named() {
                self.visit(node, !scopes.is_empty());
                if matches!(node.kind(), "function_definition" | "class_definition") {
                    scopes.push(depth);
                }
            }
            if cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            loop {
                if scopes.last() == Some(&depth) {
                    scopes.pop();
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
                depth -= 1;
            }
        }
    }

    fn visit(&mut self, node: Node, in_def: bool) {
        match node.kind() {
            "type" => self.out.has_annotations = true,
            "except_clause" | "except_group_clause" => self.except(node),
            "import_statement" | "import_from_statement" | "future_import_statement" => {
                self.import(node, in_def)
            }
            "call" => {
                if let Some(callee) = node.child_by_field_name("function") {
                    if dotted(callee) {
                        let name: String = self
                            .text(callee)
                            .chars()
                            .filter(|c| !c.is_whitespace())
                            .collect();
                        self.out.calls.push(self.item(name, node));
                    }
                }
            }
            "attribute" => {
                let object = node.child_by_field_name("object");
                let attr = node.child_by_field_name("attribute");
                if let (Some(o), Some(a)) = (object, attr) {
                    if o.kind() == "identifier" {
                        let read = (self.text(o).to_string(), self.item(self.text(a), node));
                        self.typing_reads.push(read);
                    }
                }
            }
            "comment" => {
                let c = self.item(self.text(node), node);
                self.out.comments.push(c);
            }
            _ => {}
        }
    }

    fn except(&mut self, node: Node) {
        let mut c = node.walk();
        let values: Vec<Node> = node.children_by_field_name("value", &mut c).collect();
        if values.is_empty() {
            // Grammars before the `value` field held `E as e` as one child.
            let mut c = node.walk();
            let first = node
                .named_children(&mut c)
                .find(|n| n.kind() != "block" && n.kind() != "comment");
            match first {
                Some(n) => self.caught(n),
                None => {
                    if let Some(keyword) = node.child(0) {
                        let bare = self.item("except", keyword);
                        self.out.bare_excepts.push(bare);
                    }
                }
            }
            return;
        }
        for v in values {
            self.caught(v);
        }
    }

    /// The exceptions an expression after `except` names: a tuple's elements, a name.
    fn caught(&mut self, node: Node) {
        match node.kind() {
            "tuple" | "parenthesized_expression" | "expression_list" => {
                let mut c = node.walk();
                let parts: Vec<Node> = node.named_children(&mut c).collect();
                for p in parts {
                    self.caught(p);
                }
            }
            "as_pattern" => {
                if let Some(first) = node.named_child(0) {
                    self.caught(first);
                }
            }
            _ if dotted(node) => {
                let name = self.item(self.text(node), node);
                self.out.caught.push(name);
            }
            _ => {}
        }
    }

    fn import(&mut self, stmt: Node, in_def: bool) {
        if in_def || stmt.start_byte() >= self.top_ends {
            let first_line = self.text(stmt).lines().next().unwrap_or("").to_string();
            self.out
                .imports_not_at_top
                .push(self.item(first_line, stmt));
        }
        let mut c = stmt.walk();
        let names: Vec<Node> = stmt.children_by_field_name("name", &mut c).collect();
        if stmt.kind() == "import_statement" {
            for n in names {
                let (module, alias) = match n.kind() {
                    "aliased_import" => (
                        n.child_by_field_name("name"),
                        n.child_by_field_name("alias"),
                    ),
                    _ => (Some(n), None),
                };
                let module = module.map_or("", |m| self.text(m));
                if TYPING_MODULES.contains(&module) {
                    let bound = alias.map_or(module, |a| self.text(a)).to_string();
                    self.typing_aliases.push(bound);
                }
            }
            return;
        }
        let module = match stmt.kind() {
            "future_import_statement" => "__future__".to_string(),
            _ => stmt
                .child_by_field_name("module_name")
                .map_or(String::new(), |m| self.text(m).to_string()),
        };
        let wildcard = {
            let mut c = stmt.walk();
            let found = stmt
                .named_children(&mut c)
                .find(|n| n.kind() == "wildcard_import");
            found
        };
        if module.starts_with('.') {
            self.out
                .relative_imports
                .push(self.item(module.clone(), stmt));
        }
        if let Some(star) = wildcard {
            self.out
                .wildcard_imports
                .push(self.item(module.clone(), stmt));
            let all = self.item(join(&module, "*"), star);
            self.out.from_imports.push(all);
        }
        let typing = TYPING_MODULES.contains(&module.as_str());
        for n in names {
            let name = match n.kind() {
                "aliased_import" => n.child_by_field_name("name").unwrap_or(n),
                _ => n,
            };
            let text = self.text(name).to_string();
            self.out
                .from_imports
                .push(self.item(join(&module, &text), name));
            if typing {
                self.out.typing_names.push(self.item(text, name));
            }
        }
    }
}

/// `module.name`; after a relative prefix of dots alone, no dot is added (`.` `x` is `.x`).
fn join(module: &str, name: &str) -> String {
    if module.is_empty() || module.ends_with('.') {
        format!("{module}{name}")
    } else {
        format!("{module}.{name}")
    }
}

/// A name or a dotted name (`a.b.c`): what a callee or an exception is named by.
fn dotted(node: Node) -> bool {
    match node.kind() {
        "identifier" => true,
        "attribute" => {
            node.child_by_field_name("object").is_some_and(dotted)
                && node
                    .child_by_field_name("attribute")
                    .is_some_and(|a| a.kind() == "identifier")
        }
        _ => false,
    }
}

/// The byte where the module's top ends (`Walker::top_ends`), the text's length when it
/// never does.
fn top_ends(src: &[u8], root: Node) -> usize {
    let mut c = root.walk();
    for stmt in root.named_children(&mut c) {
        let keeps = match stmt.kind() {
            "comment"
            | "import_statement"
            | "import_from_statement"
            | "future_import_statement" => true,
            "if_statement" | "try_statement" | "with_statement" => true,
            "expression_statement" => docstring_or_dunder(src, stmt),
            _ => false,
        };
        if !keeps {
            return stmt.start_byte();
        }
    }
    src.len()
}

/// A string statement (the docstring, or a second string), or an assignment to dunder names
/// only (`__all__ = [...]`, `__version__: str = "1"`).
fn docstring_or_dunder(src: &[u8], stmt: Node) -> bool {
    let Some(expr) = stmt
        .named_child(0)
        .filter(|_| stmt.named_child_count() == 1)
    else {
        return false;
    };
    match expr.kind() {
        "string" | "concatenated_string" => true,
        "assignment" => expr.child_by_field_name("left").is_some_and(|left| {
            let name = left.utf8_text(src).unwrap_or("");
            left.kind() == "identifier"
                && name.len() > 4
                && name.starts_with("__")
                && name.ends_with("__")
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(items: &[Item]) -> Vec<&str> {
        items.iter().map(|i| i.text.as_str()).collect()
    }

    #[test]
    fn excepts_bare_and_named() {
        let src = "try:\n    pass\nexcept:\n    pass\ntry:\n    pass\nexcept (ValueError, os.error) as e:\n    pass\nexcept Exception:\n    pass\ntry:\n    pass\nexcept* OSError:\n    pass\n";
        let c = Constructs::read(src);
        assert_eq!(c.bare_excepts.len(), 1);
        assert_eq!(c.bare_excepts[0].span.text(src), "except");
        assert_eq!(c.bare_excepts[0].span.start.line, 2);
        assert_eq!(
            texts(&c.caught),
            ["ValueError", "os.error", "Exception", "OSError"]
        );
        assert_eq!(c.caught[2].span.start.line, 8);
    }

    #[test]
    fn imports_by_form() {
        let src = "from __future__ import annotations\nimport typing as t\nfrom os import *\nfrom . import a\nfrom ..m import b as c, d\nfrom typing import List, Optional as Opt\nx: t.Dict[str, int] = {}\ny = other.Dict\n";
        let c = Constructs::read(src);
        assert_eq!(
            texts(&c.from_imports),
            [
                "__future__.annotations",
                "os.*",
                ".a",
                "..m.b",
                "..m.d",
                "typing.List",
                "typing.Optional"
            ]
        );
        assert_eq!(texts(&c.wildcard_imports), ["os"]);
        assert_eq!(c.wildcard_imports[0].span.text(src), "from os import *");
        assert_eq!(texts(&c.relative_imports), [".", "..m"]);
        assert_eq!(texts(&c.typing_names), ["List", "Optional", "Dict"]);
        assert_eq!(c.typing_names[2].span.text(src), "t.Dict");
        assert!(c.imports_not_at_top.is_empty());
    }

    #[test]
    fn imports_below_the_top_or_inside_definitions() {
        let src = "\"\"\"Doc.\"\"\"\n__all__ = ['f']\nimport os\ntry:\n    import ujson\nexcept ImportError:\n    ujson = None\nif TYPE_CHECKING:\n    from x import Y\nLIMIT = 3\nimport sys\ndef f():\n    import json\n    return json\nclass C:\n    from a import b\nif True:\n    import late\n";
        let c = Constructs::read(src);
        assert_eq!(
            texts(&c.imports_not_at_top),
            [
                "import sys",
                "import json",
                "from a import b",
                "import late"
            ]
        );
        assert_eq!(c.imports_not_at_top[1].span.start.line, 12);
    }

    #[test]
    fn calls_and_comments() {
        let src = "print('# not a comment')  # a comment\nos.system('x')\nf()()\nlogging.getLogger(__name__).info('x')\n";
        let c = Constructs::read(src);
        assert_eq!(
            texts(&c.calls),
            ["print", "os.system", "f", "logging.getLogger"]
        );
        assert_eq!(c.calls[0].span.text(src), "print('# not a comment')");
        assert_eq!(texts(&c.comments), ["# a comment"]);
    }

    #[test]
    fn the_cache_answers_for_the_text_it_read() {
        let a = Constructs::of("print(1)\n");
        let b = Constructs::of("print(1)\n");
        assert!(Arc::ptr_eq(&a, &b));
        assert!(Constructs::of("x = 1\n").calls.is_empty());
    }
}
