//! Where a name occurs in a module: the identifiers a rename must touch. Syntactic only
//! (no scopes or types): callers narrow the search to a byte range when they know one.

use super::span::Span;
use tree_sitter::Node;

/// Which identifiers count as an occurrence of the name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Occurrence {
    /// Every identifier spelled like the name: bare uses, definitions, `obj.name`,
    /// keyword arguments `f(name=...)`.
    Any,
    /// Only the attribute part of `obj.name`.
    Attribute,
}

/// Identifiers spelled `name` inside `within` (a byte range; the whole module if None), in
/// source order. Names in `import` / `from ... import` statements are left out: they refer
/// to other modules, which a rename in this document cannot change.
pub fn identifier_occurrences(
    root: Node,
    src: &str,
    name: &str,
    within: Option<(usize, usize)>,
    which: Occurrence,
) -> Vec<Span> {
    let (lo, hi) = within.unwrap_or((0, src.len()));
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        let overlaps = node.end_byte() > lo && node.start_byte() < hi;
        let skip = !overlaps
            || matches!(
                node.kind(),
                "import_statement" | "import_from_statement" | "future_import_statement"
            );
        if !skip {
            if node.kind() == "identifier"
                && node.start_byte() >= lo
                && node.end_byte() <= hi
                && node.utf8_text(bytes).ok() == Some(name)
                && (which == Occurrence::Any || is_attribute_part(node))
            {
                out.push(Span::of(&node));
            }
            if cursor.goto_first_child() {
                continue;
            }
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
        }
    }
}

fn is_attribute_part(node: Node) -> bool {
    node.parent().is_some_and(|p| {
        p.kind() == "attribute"
            && p.child_by_field_name("attribute").map(|a| a.id()) == Some(node.id())
    })
}

/// Keyword names `name=` in calls to `callee` (`callee(...)` or `obj.callee(...)`): the
/// call sites that a rename of one of `callee`'s parameters must follow.
pub fn keyword_arguments(root: Node, src: &str, callee: &str, name: &str) -> Vec<Span> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    super::walk::preorder(root, |node, _| {
        if node.kind() != "call" {
            return true;
        }
        let target = node
            .child_by_field_name("function")
            .and_then(|f| match f.kind() {
                "identifier" => Some(f),
                "attribute" => f.child_by_field_name("attribute"),
                _ => None,
            });
        let args = node.child_by_field_name("arguments");
        if let (Some(t), Some(args)) = (target, args) {
            if t.utf8_text(bytes).ok() == Some(callee) {
                let mut c = args.walk();
                for kw in args.named_children(&mut c) {
                    let key = (kw.kind() == "keyword_argument")
                        .then(|| kw.child_by_field_name("name"))
                        .flatten();
                    if let Some(k) = key.filter(|k| k.utf8_text(bytes).ok() == Some(name)) {
                        out.push(Span::of(&k));
                    }
                }
            }
        }
        true
    });
    out
}

/// The innermost `def` (function or method) whose range holds the byte range, if any.
pub fn enclosing_function(root: Node, start: usize, end: usize) -> Option<Node> {
    let mut node = root.descendant_for_byte_range(start, end)?;
    loop {
        if node.kind() == "function_definition" {
            return Some(node);
        }
        node = node.parent()?;
    }
}

/// The `def` or `class` whose name node sits exactly at `name` (a definition's anchor).
pub fn definition_named_at(root: Node, name: Span) -> Option<Node> {
    let id = root.descendant_for_byte_range(name.start_byte, name.end_byte)?;
    let def = id.parent()?;
    let is_def = matches!(def.kind(), "function_definition" | "class_definition");
    let name_node = def.child_by_field_name("name")?;
    (is_def && name_node.start_byte() == name.start_byte && name_node.end_byte() == name.end_byte)
        .then_some(def)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::module::parse_tree;

    fn texts(src: &str, spans: &[Span]) -> Vec<(u32, String)> {
        spans
            .iter()
            .map(|s| (s.start.line, s.text(src).to_string()))
            .collect()
    }

    #[test]
    fn finds_definitions_uses_attributes_and_keywords_but_not_imports() {
        let src = "from m import add\ndef add(a):\n    return a\nx = add(1) + obj.add + f(add=2)\ns = 'add'\n";
        let tree = parse_tree(src, None);
        let all = identifier_occurrences(tree.root_node(), src, "add", None, Occurrence::Any);
        assert_eq!(
            texts(src, &all).iter().map(|t| t.0).collect::<Vec<_>>(),
            [1, 3, 3, 3]
        );
        let attrs =
            identifier_occurrences(tree.root_node(), src, "add", None, Occurrence::Attribute);
        assert_eq!(attrs.len(), 1);
        assert_eq!(attrs[0].start.col, 17);
    }

    #[test]
    fn range_limits_the_search_and_definitions_are_found_by_name() {
        let src = "def f(a):\n    return a\ndef g(a):\n    return a\n";
        let tree = parse_tree(src, None);
        let second = src.find("def g").unwrap();
        let g = enclosing_function(tree.root_node(), second + 6, second + 7).unwrap();
        let found = identifier_occurrences(
            tree.root_node(),
            src,
            "a",
            Some((g.start_byte(), g.end_byte())),
            Occurrence::Any,
        );
        assert_eq!(
            found.iter().map(|s| s.start.line).collect::<Vec<_>>(),
            [2, 3]
        );
        let name = Span::from_bytes(src, second + 4, second + 5);
        let def = definition_named_at(tree.root_node(), name).unwrap();
        assert_eq!(def.start_byte(), second);
        assert!(definition_named_at(tree.root_node(), Span::from_bytes(src, 6, 7)).is_none());
    }

    #[test]
    fn keyword_arguments_of_calls_to_one_callee() {
        let src = "f(a=1, b=2)
obj.f(a=3)
g(a=4)
f(1, a)
";
        let tree = parse_tree(src, None);
        let found = keyword_arguments(tree.root_node(), src, "f", "a");
        assert_eq!(
            found.iter().map(|s| s.start.line).collect::<Vec<_>>(),
            [0, 1]
        );
    }
}
