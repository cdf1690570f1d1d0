//! Fast pre-order traversal of a syntax tree with a cursor: no allocation per node, and
//! node kinds compared by id, since the batch scorer walks every tree of a benchmark.

use std::sync::OnceLock;
use tree_sitter::Node;

/// A kind's name is the field's, unless given (`type` is a keyword).
macro_rules! kind_name {
    ($name:ident) => {
        stringify!($name)
    };
    ($name:ident, $kind:literal) => {
        $kind
    };
}

/// Declares `Kinds`, one `u16` id per listed node kind, named after it, and `KIND_NAMES`.
macro_rules! kind_ids {
    ($($name:ident $(= $kind:literal)?),* $(,)?) => {
        /// Ids of the node kinds the walkers dispatch on.
        pub struct Kinds {
            $(pub $name: u16,)*
            /// By `Field as usize`: the field's id.
            fields: Vec<u16>,
            /// By kind id: whether `syntax` has a check for that kind.
            checked: Vec<bool>,
            /// By kind id: whether the kind can hold a block (so statements) below it.
            structural: Vec<bool>,
            /// By kind id: how many marks (`=`, `*`, `:`) a node needs in its text before
            /// the pruned walk goes below it: one more than its own tokens always have.
            marks_to_descend: Vec<u8>,
        }

        /// Every listed kind's name.
        #[cfg(test)]
        const KIND_NAMES: &[&str] = &[$(kind_name!($name $(, $kind)?)),*];

        fn kind_ids(lang: &tree_sitter::Language) -> Kinds {
            Kinds {
                $($name: lang.id_for_node_kind(kind_name!($name $(, $kind)?), true),)*
                fields: Vec::new(),
                checked: Vec::new(),
                structural: Vec::new(),
                marks_to_descend: Vec::new(),
            }
        }
    };
}

kind_ids!(
    function_definition,
    class_definition,
    expression_statement,
    import_statement,
    import_from_statement,
    block,
    integer,
    float,
    try_statement,
    parameters,
    lambda_parameters,
    argument_list,
    assignment,
    augmented_assignment,
    print_statement,
    exec_statement,
    constrained_type,
    decorated_definition,
    comment,
    except_clause,
    except_group_clause,
    finally_clause,
    identifier,
    keyword_identifier,
    default_parameter,
    typed_default_parameter,
    typed_parameter,
    list_splat_pattern,
    dictionary_splat_pattern,
    keyword_separator,
    positional_separator,
    keyword_argument,
    list_splat,
    dictionary_splat,
    type_node = "type",
    type_parameter,
    string,
    concatenated_string,
    parenthesized_expression,
    pattern_list,
    tuple_pattern,
    dotted_name,
    aliased_import,
    assert_statement,
    attribute,
    decorator,
    call,
    chevron,
);

impl Kinds {
    pub fn is_opaque(&self, id: u16) -> bool {
        id == self.import_statement || id == self.import_from_statement
    }

    pub fn is_checked(&self, id: u16) -> bool {
        self.checked.get(id as usize).copied().unwrap_or(false)
    }

    pub fn is_structural(&self, id: u16) -> bool {
        self.structural.get(id as usize).copied().unwrap_or(false)
    }

    pub fn marks_to_descend(&self, id: u16) -> usize {
        self.marks_to_descend
            .get(id as usize)
            .map_or(1, |&n| n as usize)
    }

    pub fn is_name(&self, id: u16) -> bool {
        id == self.identifier || id == self.keyword_identifier
    }
}

pub fn kinds() -> &'static Kinds {
    static K: OnceLock<Kinds> = OnceLock::new();
    K.get_or_init(|| {
        let lang: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        let mut k = kind_ids(&lang);
        k.fields = FIELD_NAMES
            .iter()
            .map(|f| lang.field_id_for_name(f).map_or(0, |id| id.get()))
            .collect();
        let checked = [
            k.block,
            k.integer,
            k.float,
            k.try_statement,
            k.parameters,
            k.lambda_parameters,
            k.argument_list,
            k.assignment,
            k.augmented_assignment,
            k.print_statement,
            k.exec_statement,
            k.constrained_type,
        ];
        let n = lang.node_kind_count() + 1;
        k.checked = vec![false; n];
        for id in checked {
            k.checked[id as usize] = true;
        }
        // A node whose marks are all in its own tokens (`x = 1`'s `=`, `a: int`'s `:`)
        // has none below it: nothing there for the pruned walk to find.
        k.marks_to_descend = vec![1; n];
        for (name, own) in OWN_MARKS {
            let id = lang.id_for_node_kind(name, true);
            if let Some(slot) = k.marks_to_descend.get_mut(id as usize).filter(|_| id != 0) {
                *slot = own + 1;
            }
        }
        k.structural = vec![false; n];
        for name in structural_kinds() {
            let id = lang.id_for_node_kind(&name, true);
            if let Some(slot) = k.structural.get_mut(id as usize).filter(|_| id != 0) {
                *slot = true;
            }
        }
        k
    })
}

/// Kinds whose own tokens always hold marks, and how many at least: `=` of `x = 1`, `x += 1`
/// and `f(a=1)`; `:` of `a: int`, `{k: v}`, `x[a:b]` and `lambda x: x`; `*` of `*args`.
const OWN_MARKS: [(&str, u8); 14] = [
    ("assignment", 1),
    ("augmented_assignment", 1),
    ("keyword_argument", 1),
    ("default_parameter", 1),
    ("typed_parameter", 1),
    ("typed_default_parameter", 2),
    ("pair", 1),
    ("slice", 1),
    ("lambda", 1),
    ("named_expression", 2),
    ("list_splat", 1),
    ("dictionary_splat", 2),
    ("list_splat_pattern", 1),
    ("dictionary_splat_pattern", 2),
];

/// The kinds that can have a `block` below them, and `module`: what holds statements. Read
/// from the grammar's node-types.json, following fields, children and supertypes.
fn structural_kinds() -> Vec<String> {
    use std::collections::{HashMap, HashSet};
    let types: serde_json::Value = serde_json::from_str(tree_sitter_python::NODE_TYPES)
        .expect("tree-sitter-python ships a valid node-types.json");
    let mut contains: HashMap<&str, HashSet<&str>> = HashMap::new();
    for t in types.as_array().into_iter().flatten() {
        let Some(kind) = t["type"].as_str() else {
            continue;
        };
        let fields = t["fields"].as_object().into_iter().flat_map(|f| f.values());
        let lists = fields
            .chain([&t["children"]])
            .filter_map(|f| f["types"].as_array())
            .chain(t["subtypes"].as_array());
        let inner = contains.entry(kind).or_default();
        for sub in lists.flatten() {
            inner.extend(sub["type"].as_str());
        }
    }
    let mut found: HashSet<&str> = HashSet::from(["block"]);
    loop {
        let more: Vec<&str> = (contains.iter())
            .filter(|(k, inner)| !found.contains(*k) && inner.iter().any(|i| found.contains(i)))
            .map(|(k, _)| *k)
            .collect();
        if more.is_empty() {
            break;
        }
        found.extend(more);
    }
    found.insert("module");
    found.into_iter().map(String::from).collect()
}

/// Fields the walkers read, looked up by id: `child_by_field_name` scans the language's
/// field names with `strncmp` on every call.
#[derive(Clone, Copy)]
pub enum Field {
    Name,
    Body,
    Parameters,
    ReturnType,
    Type,
    Left,
    Right,
    Object,
    Attribute,
    Function,
    Definition,
}

const FIELD_NAMES: [&str; 11] = [
    "name",
    "body",
    "parameters",
    "return_type",
    "type",
    "left",
    "right",
    "object",
    "attribute",
    "function",
    "definition",
];

pub trait NodeExt<'t> {
    fn field(&self, f: Field) -> Option<Node<'t>>;
}

impl<'t> NodeExt<'t> for Node<'t> {
    fn field(&self, f: Field) -> Option<Node<'t>> {
        match kinds().fields[f as usize] {
            0 => None,
            id => self.child_by_field_id(id),
        }
    }
}

/// Visit every named node in source order with whether a class is among its ancestors.
/// Stops early when `visit` returns `false`.
pub fn preorder(root: Node, mut visit: impl FnMut(Node, bool) -> bool) {
    preorder_where(root, |node, _, in_class| visit(node, in_class), |_, _| true);
}

/// `preorder` that only descends where a visitor can find something. In a tree without
/// errors statements (everything the collectors read) sit below statements that can hold
/// a block; below anything else, a node `syntax` checks needs a `=`, `*` or `:` in its
/// text (keyword or unpacked arguments, defaults, chained assignments, annotation types),
/// so a node is entered only when its text has more marks than its own tokens.
/// Number literals are not reached: see `syntax::number_error`.
/// `visit` gets each node's kind id too (read once per node: it is a call into the C
/// library).
pub fn preorder_pruned(root: Node, src: &[u8], visit: impl FnMut(Node, u16, bool) -> bool) {
    let k = kinds();
    let marks: Vec<usize> = memchr::memchr3_iter(b'=', b'*', b':', src).collect();
    // Nodes come in order of their start, so the first mark at or after one only moves on.
    let mut next = 0usize;
    preorder_where(root, visit, |node, id| {
        if k.is_structural(id) {
            return true;
        }
        if id == k.string && !is_format_string(src, node.start_byte()) {
            return false;
        }
        let (start, end) = (node.start_byte(), node.end_byte());
        while next < marks.len() && marks[next] < start {
            next += 1;
        }
        let needed = k.marks_to_descend(id);
        let inside = marks[next..].iter().take_while(|&&m| m < end);
        inside.take(needed).count() == needed
    });
}

/// Whether the string literal starting at `at` has an `f` among its prefix letters: only
/// an f-string holds expressions.
fn is_format_string(src: &[u8], at: usize) -> bool {
    src[at.min(src.len())..]
        .iter()
        .take_while(|b| b.is_ascii_alphabetic())
        .any(|b| b.eq_ignore_ascii_case(&b'f'))
}

fn preorder_where(
    root: Node,
    mut visit: impl FnMut(Node, u16, bool) -> bool,
    mut descend: impl FnMut(Node, u16) -> bool,
) {
    let k = kinds();
    let mut cursor = root.walk();
    // Depths of the enclosing class definitions.
    let mut classes: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    loop {
        let node = cursor.node();
        let id = node.kind_id();
        if node.is_named() {
            if !visit(node, id, !classes.is_empty()) {
                return;
            }
            if id == k.class_definition {
                classes.push(depth);
            }
        }
        // Import statements hold nothing any walker reacts to below themselves.
        if !k.is_opaque(id) && descend(node, id) && cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if classes.last() == Some(&depth) {
                classes.pop();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A misspelt kind would get id 0 and silently never match. Two kinds of older
    /// grammars are kept on purpose (tree-sitter-python 0.25 aliases or drops them).
    #[test]
    fn every_listed_kind_is_in_the_grammar() {
        let lang: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        let optional = ["except_group_clause", "keyword_identifier"];
        let own = OWN_MARKS.iter().map(|(n, _)| n);
        for name in KIND_NAMES
            .iter()
            .chain(own)
            .filter(|n| !optional.contains(n))
        {
            assert_ne!(lang.id_for_node_kind(name, true), 0, "{name}");
        }
    }

    #[test]
    fn structural_kinds_hold_blocks_and_nothing_else() {
        let k = kinds();
        for id in [
            k.block,
            k.function_definition,
            k.class_definition,
            k.try_statement,
        ] {
            assert!(k.is_structural(id));
        }
        for id in [
            k.expression_statement,
            k.assignment,
            k.call,
            k.parameters,
            k.string,
        ] {
            assert!(!k.is_structural(id));
        }
    }
}
