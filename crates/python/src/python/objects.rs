//! The 19 object kinds MemoryCode's evaluator collects from a module, with the reference's
//! semantics (spec: memorycode-scoring.md §4), each entry and item carrying its range; and
//! the kinds teams' own rules ask for (`ObjectKind::TEAM`), which MemoryCode's data never
//! names: public-only views of four of those kinds, and constructs read by
//! `constructs.rs` (excepts, imports by their form and place, calls, typing names, comments).

use super::literal;
use super::span::{Pos, Span};
use super::walk::{self, Field, NodeExt};
use serde::{Deserialize, Serialize};
use tree_sitter::Node;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "&'static str")]
pub enum ObjectKind {
    Function,
    FunctionArgument,
    FunctionDocstring,
    FunctionTry,
    FunctionAssert,
    FunctionAnnotation,
    FunctionDecorator,
    Class,
    ClassDecorator,
    Method,
    MethodDocstring,
    MethodTry,
    MethodAssert,
    MethodAnnotation,
    MethodDecorator,
    Attribute,
    Variable,
    Import,
    Comment,
    // The team kinds: after MemoryCode's, so that theirs keep their indices.
    PublicFunctionDocstring,
    PublicMethodDocstring,
    PublicFunctionAnnotation,
    PublicMethodAnnotation,
    BareExcept,
    Except,
    WildcardImport,
    RelativeImport,
    ImportNotAtTop,
    FromImport,
    Call,
    TypingName,
    CommentText,
}

use ObjectKind as K;

impl ObjectKind {
    /// MemoryCode's kinds, the ones its data names and `Objects` collects.
    pub const ALL: [ObjectKind; 19] = [
        K::Function,
        K::FunctionArgument,
        K::FunctionDocstring,
        K::FunctionTry,
        K::FunctionAssert,
        K::FunctionAnnotation,
        K::FunctionDecorator,
        K::Class,
        K::ClassDecorator,
        K::Method,
        K::MethodDocstring,
        K::MethodTry,
        K::MethodAssert,
        K::MethodAnnotation,
        K::MethodDecorator,
        K::Attribute,
        K::Variable,
        K::Import,
        K::Comment,
    ];

    /// The kinds of teams' rules (docs/pivots-toml.md): not MemoryCode's, so never in its
    /// scores, extraction or prompts.
    pub const TEAM: [ObjectKind; 13] = [
        K::PublicFunctionDocstring,
        K::PublicMethodDocstring,
        K::PublicFunctionAnnotation,
        K::PublicMethodAnnotation,
        K::BareExcept,
        K::Except,
        K::WildcardImport,
        K::RelativeImport,
        K::ImportNotAtTop,
        K::FromImport,
        K::Call,
        K::TypingName,
        K::CommentText,
    ];

    /// Every kind a `pivots.toml` may name: MemoryCode's, then the teams'.
    pub fn every() -> impl Iterator<Item = ObjectKind> {
        ObjectKind::ALL.into_iter().chain(ObjectKind::TEAM)
    }

    /// For a public-only kind, the kind whose entries it keeps (those of names without a
    /// leading `_`).
    pub fn public_of(self) -> Option<ObjectKind> {
        match self {
            K::PublicFunctionDocstring => Some(K::FunctionDocstring),
            K::PublicMethodDocstring => Some(K::MethodDocstring),
            K::PublicFunctionAnnotation => Some(K::FunctionAnnotation),
            K::PublicMethodAnnotation => Some(K::MethodAnnotation),
            _ => None,
        }
    }

    /// The kind whose entries `Objects` holds for this one: itself, or for a public-only
    /// kind the kind it filters.
    pub fn collected_as(self) -> ObjectKind {
        self.public_of().unwrap_or(self)
    }

    /// Whether the kind is read from the whole syntax tree by `constructs.rs` rather than
    /// collected in `Objects`: its rules are about the whole file.
    pub fn is_construct(self) -> bool {
        (self as usize) >= K::BareExcept as usize
    }

    /// The name used in MemoryCode's data files.
    pub fn name(self) -> &'static str {
        match self {
            K::Function => "function",
            K::FunctionArgument => "function argument",
            K::FunctionDocstring => "function docstring",
            K::FunctionTry => "function try",
            K::FunctionAssert => "function assert",
            K::FunctionAnnotation => "function annotation",
            K::FunctionDecorator => "function decorator",
            K::Class => "class",
            K::ClassDecorator => "class decorator",
            K::Method => "method",
            K::MethodDocstring => "method docstring",
            K::MethodTry => "method try",
            K::MethodAssert => "method assert",
            K::MethodAnnotation => "method annotation",
            K::MethodDecorator => "method decorator",
            K::Attribute => "attribute",
            K::Variable => "variable",
            K::Import => "import",
            K::Comment => "comment",
            K::PublicFunctionDocstring => "public function docstring",
            K::PublicMethodDocstring => "public method docstring",
            K::PublicFunctionAnnotation => "public function annotation",
            K::PublicMethodAnnotation => "public method annotation",
            K::BareExcept => "bare except",
            K::Except => "except",
            K::WildcardImport => "wildcard import",
            K::RelativeImport => "relative import",
            K::ImportNotAtTop => "import not at top",
            K::FromImport => "from import",
            K::Call => "call",
            K::TypingName => "typing name",
            K::CommentText => "comment text",
        }
    }

    pub fn from_name(s: &str) -> Option<ObjectKind> {
        ObjectKind::every().find(|k| k.name() == s)
    }

    /// The kinds a `def` feeds, name first: a top-level function's, or a method's.
    pub const FUNCTION_KINDS: [ObjectKind; 6] = [
        K::Function,
        K::FunctionDocstring,
        K::FunctionTry,
        K::FunctionAssert,
        K::FunctionAnnotation,
        K::FunctionDecorator,
    ];
    pub const METHOD_KINDS: [ObjectKind; 6] = [
        K::Method,
        K::MethodDocstring,
        K::MethodTry,
        K::MethodAssert,
        K::MethodAnnotation,
        K::MethodDecorator,
    ];

    /// Try/assert/annotation entries hold syntax nodes in the reference, not names: a
    /// `[name, value]` rule never finds a name among them.
    pub fn holds_nodes(self) -> bool {
        matches!(
            self,
            K::FunctionTry
                | K::FunctionAssert
                | K::FunctionAnnotation
                | K::MethodTry
                | K::MethodAssert
                | K::MethodAnnotation
        )
    }
}

impl std::fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl TryFrom<String> for ObjectKind {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        ObjectKind::from_name(&s).ok_or_else(|| format!("unknown object kind {s:?}"))
    }
}

impl From<ObjectKind> for &'static str {
    fn from(k: ObjectKind) -> &'static str {
        k.name()
    }
}

/// One element of an entry: a name, a decorator id, or the source text of a node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Item {
    pub text: String,
    pub span: Span,
}

/// One entry of a kind's list: e.g. the arguments of one function. `anchor` is where a
/// finding about the whole entry is reported (the function's or class's name).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entry {
    pub items: Vec<Item>,
    pub anchor: Span,
}

impl Entry {
    fn single(text: String, span: Span) -> Entry {
        Entry {
            items: vec![Item { text, span }],
            anchor: span,
        }
    }
}

/// Found objects of every kind, in source order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Objects {
    by_kind: [Vec<Entry>; 19],
}

impl Objects {
    /// The entries of one of MemoryCode's kinds; none for a team kind (see
    /// `ObjectKind::collected_as`).
    pub fn get(&self, kind: ObjectKind) -> &[Entry] {
        self.by_kind.get(kind as usize).map_or(&[], |v| v)
    }

    fn push(&mut self, kind: ObjectKind, entry: Entry) {
        // A team kind has no list: its objects are read elsewhere.
        if let Some(list) = self.by_kind.get_mut(kind as usize) {
            list.push(entry);
        }
    }

    /// Append `other`'s entries of every kind, each span passed through `f`: how the
    /// incremental analysis moves a top-level statement's objects between positions
    /// relative to the statement and absolute ones.
    pub fn extend_mapped(&mut self, other: &Objects, f: impl Fn(Span) -> Span) {
        for (mine, theirs) in self.by_kind.iter_mut().zip(&other.by_kind) {
            mine.extend(theirs.iter().map(|e| {
                Entry {
                    items: e
                        .items
                        .iter()
                        .map(|i| Item {
                            text: i.text.clone(),
                            span: f(i.span),
                        })
                        .collect(),
                    anchor: f(e.anchor),
                }
            }));
        }
    }

    /// The comment entry replaced by `entry`.
    pub fn replace_comments(&mut self, entry: Entry) {
        self.by_kind[K::Comment as usize] = vec![entry];
    }

    /// Every item's text passed through `f` with its span.
    pub fn retext(&mut self, f: impl Fn(Span, &str) -> String) {
        for item in self.by_kind.iter_mut().flatten().flat_map(|e| &mut e.items) {
            item.text = f(item.span, &item.text);
        }
    }

    /// Add an entry of `kind` after the others (e.g. the comment entry, which
    /// `Collector::finish` adds last).
    pub fn push_entry(&mut self, kind: ObjectKind, entry: Entry) {
        self.push(kind, entry);
    }

    /// Collect every kind from a parsed module.
    pub fn extract(src: &str, root: Node) -> Objects {
        let mut c = Collector::new(src);
        walk::preorder(root, |node, in_class| {
            c.visit(node, in_class);
            true
        });
        c.finish()
    }

    fn function(&mut self, src: &[u8], def: Node, in_class: bool, decorators: Vec<Item>) {
        // `async def` is an AsyncFunctionDef in `ast`: neither function nor method.
        if src[def.start_byte()..].starts_with(b"async") {
            return;
        }
        let Some(name_node) = def.field(Field::Name) else {
            return;
        };
        let name = name(src, name_node);
        let anchor = Span::of(&name_node);
        let body = def.field(Field::Body);
        let kinds = if in_class {
            if name == "__init__" {
                self.push(K::Attribute, init_attributes(src, body, anchor));
                return;
            }
            if name.starts_with("__") {
                return;
            }
            ObjectKind::METHOD_KINDS
        } else {
            ObjectKind::FUNCTION_KINDS
        };
        let [k_name, k_doc, k_try, k_assert, k_ann, k_dec] = kinds;
        let entry = |items: Vec<Item>| Entry { items, anchor };
        self.push(k_name, Entry::single(name, anchor));

        let params = plain_parameters(src, def.field(Field::Parameters));
        let mut annotations: Vec<Item> = params.iter().filter_map(|p| p.1.clone()).collect();
        // A return annotation sits after `->` in the header (before the body).
        let header_end = body.map_or(def.end_byte(), |b| b.start_byte());
        let arrow = memchr::memmem::find(&src[def.start_byte()..header_end], b"->").is_some();
        if let Some(ret) = def.field(Field::ReturnType).filter(|_| arrow) {
            annotations.push(item(src, ret));
        }
        if !in_class {
            self.push(
                K::FunctionArgument,
                entry(params.into_iter().map(|p| p.0).collect()),
            );
        }
        // The docstring is the first statement; the body's statements are only gone
        // through when its text has a `try` or an `assert` (each such statement starts
        // with its keyword).
        let k = walk::kinds();
        let body_text = body.map_or(&b""[..], |b| &src[b.start_byte()..b.end_byte()]);
        let has = |word: &[u8]| memchr::memmem::find(body_text, word).is_some();
        let (has_try, has_assert) = (has(b"try"), has(b"assert"));
        let stmts: Vec<Node> = if has_try || has_assert {
            statements(body).collect()
        } else {
            statements_first(body).into_iter().collect()
        };
        let direct = |kind: u16| -> Vec<Item> {
            stmts
                .iter()
                .filter(|n| n.kind_id() == kind)
                .map(|n| item(src, *n))
                .collect()
        };
        self.push(
            k_doc,
            entry(docstring(src, stmts.first().copied()).into_iter().collect()),
        );
        // `try` ... `except*` is an `ast.TryStar`, which the reference's
        // `isinstance(node, ast.Try)` does not count.
        let tries = stmts
            .iter()
            .filter(|n| n.kind_id() == k.try_statement && !is_try_star(**n))
            .map(|n| item(src, *n))
            .collect();
        self.push(k_try, entry(tries));
        self.push(k_assert, entry(direct(k.assert_statement)));
        self.push(k_ann, entry(annotations));
        self.push(k_dec, entry(decorators));
    }

    fn class(&mut self, src: &[u8], class: Node, decorators: Vec<Item>) {
        let Some(name_node) = class.field(Field::Name) else {
            return;
        };
        let anchor = Span::of(&name_node);
        self.push(K::Class, Entry::single(name(src, name_node), anchor));
        self.push(
            K::ClassDecorator,
            Entry {
                items: decorators,
                anchor,
            },
        );
    }

    /// Variables of a plain or annotated assignment statement.
    fn assignment_variables(&mut self, src: &[u8], stmt: Node) {
        let k = walk::kinds();
        // Every assignment has a `=` or a `:`: other statements (calls) are not read.
        let stmt_text = &src[stmt.start_byte()..stmt.end_byte()];
        if memchr::memchr2(b'=', b':', stmt_text).is_none() {
            return;
        }
        let Some(assign) = named_child_of_kind(stmt, k.assignment) else {
            return;
        };
        if annotated(src, assign) {
            // `(name): int` annotates `name` (`ast.AnnAssign` with `simple=0`).
            let left = assign.field(Field::Left).map(unparenthesized);
            if let Some(left) = left.filter(is_name) {
                self.push(K::Variable, Entry::single(name(src, left), Span::of(&left)));
            }
            return;
        }
        for target in assignment_targets(src, assign) {
            let id = target.kind_id();
            if id == k.pattern_list || id == k.tuple_pattern {
                let mut c = target.walk();
                for el in target.named_children(&mut c).filter(is_name) {
                    self.push(K::Variable, Entry::single(name(src, el), Span::of(&el)));
                }
            } else if is_name(&target) {
                self.push(
                    K::Variable,
                    Entry::single(name(src, target), Span::of(&target)),
                );
            }
        }
    }

    /// `import a.b as c` gives `a.b`; `from x import y` is not collected.
    fn imports(&mut self, src: &[u8], stmt: Node) {
        let k = walk::kinds();
        let mut c = stmt.walk();
        for child in stmt.named_children(&mut c) {
            let id = child.kind_id();
            let dotted = if id == k.dotted_name {
                Some(child)
            } else if id == k.aliased_import {
                child.field(Field::Name)
            } else {
                None
            };
            if let Some(d) = dotted {
                let mut c2 = d.walk();
                let parts: Vec<String> = d.named_children(&mut c2).map(|p| name(src, p)).collect();
                self.push(K::Import, Entry::single(parts.join("."), Span::of(&d)));
            }
        }
    }

    fn comments(&mut self, src: &str) {
        self.push(K::Comment, comments(src));
    }
}

/// The comment entry: every match of `#.*` over the whole text, strings included, as the
/// reference's regex does.
pub fn comments(src: &str) -> Entry {
    let bytes = src.as_bytes();
    let mut items = Vec::new();
    // Lines are counted as we go: one pass over the text however many comments.
    let (mut line, mut line_start, mut i) = (0u32, 0usize, 0usize);
    while let Some(off) = memchr::memchr(b'#', &bytes[i..]) {
        let start = i + off;
        for j in memchr::memchr_iter(b'\n', &bytes[i..start]) {
            line += 1;
            line_start = i + j + 1;
        }
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |n| start + n);
        let pos = |at: usize| Pos {
            line,
            col: (at - line_start) as u32,
        };
        items.push(Item {
            text: src[start..end].to_string(),
            span: Span {
                start_byte: start,
                end_byte: end,
                start: pos(start),
                end: pos(end),
            },
        });
        i = end;
    }
    Entry {
        items,
        anchor: Span::first_line(src),
    }
}

/// Extraction one node at a time, so that `Module` can run it in the same walk as the
/// syntax checks.
pub struct Collector<'a> {
    src: &'a str,
    objs: Objects,
    /// Decorator ids of the next definition (by node id), read at its `decorated_definition`:
    /// `Node::parent` would search down from the root each time.
    decorators: Option<(usize, Vec<Item>)>,
}

impl<'a> Collector<'a> {
    pub fn new(src: &'a str) -> Self {
        Collector {
            src,
            objs: Objects::default(),
            decorators: None,
        }
    }

    /// `in_class`: whether a class is among the node's ancestors.
    pub fn visit(&mut self, node: Node, in_class: bool) {
        self.visit_kind(node, node.kind_id(), in_class);
    }

    /// `visit` with the node's kind id already read.
    pub fn visit_kind(&mut self, node: Node, id: u16, in_class: bool) {
        let (k, bytes) = (walk::kinds(), self.src.as_bytes());
        if id == k.function_definition || id == k.class_definition {
            let decorators = match self.decorators.take() {
                Some((def, ids)) if def == node.id() => ids,
                _ => Vec::new(),
            };
            if id == k.function_definition {
                self.objs.function(bytes, node, in_class, decorators);
            } else {
                self.objs.class(bytes, node, decorators);
            }
        } else if id == k.decorated_definition {
            if let Some(def) = node.field(Field::Definition) {
                self.decorators = Some((def.id(), decorator_ids(bytes, node)));
            }
        } else if id == k.expression_statement {
            self.objs.assignment_variables(bytes, node);
        } else if id == k.import_statement {
            self.objs.imports(bytes, node);
        }
    }

    pub fn finish(mut self) -> Objects {
        self.objs.comments(self.src);
        self.objs
    }

    /// The objects found so far, without the whole-text comment entry (for a part of the
    /// tree).
    pub fn finish_part(self) -> Objects {
        self.objs
    }
}

fn text<'a>(src: &'a [u8], node: Node) -> &'a str {
    node.utf8_text(src).unwrap_or("")
}

fn item(src: &[u8], node: Node) -> Item {
    Item {
        text: text(src, node).to_string(),
        span: Span::of(&node),
    }
}

/// An identifier as `ast` has it: CPython's tokenizer NFKC-normalizes non-ASCII names
/// (`ｗｉｄｔｈ` is `width`, the micro sign is `μ`).
fn name(src: &[u8], node: Node) -> String {
    let t = text(src, node);
    if t.is_ascii() {
        t.to_string()
    } else {
        use unicode_normalization::UnicodeNormalization;
        t.nfkc().collect()
    }
}

/// `name` as an item, with the identifier's range.
fn name_item(src: &[u8], node: Node) -> Item {
    Item {
        text: name(src, node),
        span: Span::of(&node),
    }
}

/// `(x)` (one element, no comma) is `x`; anything else is itself.
fn unparenthesized(mut node: Node) -> Node {
    let k = walk::kinds();
    while (node.kind_id() == k.parenthesized_expression || node.kind_id() == k.tuple_pattern)
        && node.child_count() == 3
        && node.named_child_count() == 1
    {
        match node.named_child(0) {
            Some(inner) => node = inner,
            None => break,
        }
    }
    node
}

/// A `try` whose handlers are `except*`.
fn is_try_star(node: Node) -> bool {
    let k = walk::kinds();
    let mut c = node.walk();
    let star = node
        .named_children(&mut c)
        .filter(|n| n.kind_id() == k.except_clause || n.kind_id() == k.except_group_clause)
        .any(super::syntax::is_star_handler);
    star
}

fn is_name(node: &Node) -> bool {
    walk::kinds().is_name(node.kind_id())
}

fn named_child_of_kind(node: Node, kind: u16) -> Option<Node> {
    // Mostly the first child (a statement's only one): no cursor for that.
    match node.named_child(0) {
        None => None,
        Some(first) if first.kind_id() == kind => Some(first),
        Some(_) => {
            let mut c = node.walk();
            let found = node.named_children(&mut c).find(|n| n.kind_id() == kind);
            found
        }
    }
}

/// The targets of a plain (possibly chained) assignment `a = b = value`, left to right.
pub(crate) fn assignment_targets<'t>(src: &[u8], assign: Node<'t>) -> Vec<Node<'t>> {
    let k = walk::kinds();
    let mut targets = Vec::new();
    let mut cur = Some(assign);
    while let Some(a) = cur.filter(|a| a.kind_id() == k.assignment && !annotated(src, *a)) {
        targets.extend(a.field(Field::Left));
        // Only a chain (`a = b = v`) has a second `=`; the tree is read for it alone.
        let text = &src[a.start_byte()..a.end_byte()];
        let chained = memchr::memchr_iter(b'=', text).nth(1).is_some();
        cur = if chained { a.field(Field::Right) } else { None };
    }
    targets
}

/// Whether an assignment is annotated (`x: T = v`): the tree is read only when its text
/// has a `:`.
fn annotated(src: &[u8], assign: Node) -> bool {
    let text = &src[assign.start_byte()..assign.end_byte()];
    memchr::memchr(b':', text).is_some() && assign.field(Field::Type).is_some()
}

/// Non-comment statements of a block (one cursor pass: `named_child(i)` would be
/// quadratic on long bodies).
fn statements<'t>(body: Option<Node<'t>>) -> impl Iterator<Item = Node<'t>> {
    let nodes: Vec<Node<'t>> = match body {
        Some(b) => {
            let mut c = b.walk();
            b.named_children(&mut c)
                .filter(|n| n.kind_id() != walk::kinds().comment)
                .collect()
        }
        None => Vec::new(),
    };
    nodes.into_iter()
}

/// The first non-comment statement of a block (`statements(body).next()` without a
/// cursor when the block opens with a statement, as nearly every block does).
fn statements_first(body: Option<Node>) -> Option<Node> {
    let first = body?.named_child(0)?;
    if first.kind_id() != walk::kinds().comment {
        return Some(first);
    }
    statements(body).next()
}

/// `ast.get_docstring`: the first statement is a plain string literal (implicit
/// concatenation allowed, f-strings and bytes not); cleaned; empty counts as absent.
fn docstring(src: &[u8], first: Option<Node>) -> Option<Item> {
    let first = first?;
    let k = walk::kinds();
    if first.kind_id() != k.expression_statement || first.named_child_count() != 1 {
        return None;
    }
    let mut expr = first.named_child(0)?;
    while expr.kind_id() == k.parenthesized_expression && expr.named_child_count() == 1 {
        expr = expr.named_child(0)?;
    }
    let value = if expr.kind_id() == k.string {
        literal::string_value(text(src, expr))?
    } else if expr.kind_id() == k.concatenated_string {
        let mut c = expr.walk();
        let parts: Option<Vec<String>> = expr
            .named_children(&mut c)
            .filter(|n| n.kind_id() != k.comment)
            .map(|s| literal::string_value(text(src, s)))
            .collect();
        parts?.concat()
    } else {
        return None;
    };
    let cleaned = literal::cleandoc(&value);
    // `[doc] if doc else []`: only an empty docstring is absent ("    " is kept).
    (!cleaned.is_empty()).then(|| Item {
        text: cleaned,
        span: Span::of(&expr),
    })
}

/// Positional-or-keyword parameters (`ast.arguments.args`) with their annotations:
/// not positional-only (before `/`), not keyword-only (after `*` or `*args`), no splats.
fn plain_parameters(src: &[u8], params: Option<Node>) -> Vec<(Item, Option<Item>)> {
    let Some(params) = params else {
        return Vec::new();
    };
    let k = walk::kinds();
    let mut out = Vec::new();
    let mut c = params.walk();
    for p in params.named_children(&mut c) {
        let id = p.kind_id();
        let (name, ann) = if id == k.identifier {
            (Some(p), None)
        } else if id == k.default_parameter {
            (p.field(Field::Name), None)
        } else if id == k.typed_default_parameter {
            (p.field(Field::Name), p.field(Field::Type))
        } else if id == k.typed_parameter {
            let inner = p.named_child(0);
            if inner.is_some_and(|n| n.kind_id() != k.identifier) {
                // `*args: T` / `**kw: T`: a splat; `*args` also ends the plain ones.
                if inner.is_some_and(|n| n.kind_id() == k.list_splat_pattern) {
                    break;
                }
                continue;
            }
            (inner, p.field(Field::Type))
        } else if id == k.positional_separator {
            out.clear();
            continue;
        } else if id == k.list_splat_pattern || id == k.keyword_separator {
            break;
        } else {
            continue;
        };
        if let Some(n) = name {
            out.push((name_item(src, n), ann.map(|a| item(src, a))));
        }
    }
    out
}

/// Decorator ids of a `decorated_definition`: `name`, `a.b.c` -> `c`, a call -> its callee's id.
fn decorator_ids(src: &[u8], decorated: Node) -> Vec<Item> {
    let mut c = decorated.walk();
    let decorators: Vec<Node> = decorated
        .named_children(&mut c)
        .filter(|n| n.kind_id() == walk::kinds().decorator)
        .collect();
    decorators
        .into_iter()
        .filter_map(|d| d.named_child(0).and_then(|e| decorator_id(src, e)))
        .collect()
}

fn decorator_id(src: &[u8], mut expr: Node) -> Option<Item> {
    let k = walk::kinds();
    loop {
        let id = expr.kind_id();
        if k.is_name(id) {
            return Some(name_item(src, expr));
        } else if id == k.attribute {
            return expr.field(Field::Attribute).map(|a| name_item(src, a));
        } else if id == k.call {
            expr = expr.field(Field::Function)?;
        } else if id == k.parenthesized_expression && expr.named_child_count() == 1 {
            expr = expr.named_child(0)?;
        } else {
            return None;
        }
    }
}

/// Attributes an `__init__` assigns: direct body statements `self.x = ...` (chains allowed).
fn init_attributes(src: &[u8], body: Option<Node>, anchor: Span) -> Entry {
    let mut items = Vec::new();
    let k = walk::kinds();
    for stmt in statements(body) {
        if stmt.kind_id() != k.expression_statement {
            continue;
        }
        let Some(assign) = named_child_of_kind(stmt, k.assignment) else {
            continue;
        };
        for target in assignment_targets(src, assign) {
            if target.kind_id() != k.attribute {
                continue;
            }
            let is_self = target
                .field(Field::Object)
                .is_some_and(|o| o.kind_id() == k.identifier && name(src, o) == "self");
            if let (true, Some(attr)) = (is_self, target.field(Field::Attribute)) {
                items.push(name_item(src, attr));
            }
        }
    }
    Entry { items, anchor }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::Module;

    fn names(src: &str, kind: ObjectKind) -> Vec<Vec<String>> {
        let m = Module::parse(src);
        assert!(m.syntax_error.is_none(), "{:?}", m.syntax_error);
        m.objects
            .get(kind)
            .iter()
            .map(|e| e.items.iter().map(|i| i.text.clone()).collect())
            .collect()
    }

    fn flat(src: &str, kind: ObjectKind) -> Vec<String> {
        names(src, kind).into_iter().flatten().collect()
    }

    #[test]
    fn methods_are_defs_under_any_class_ancestor() {
        let src = "def top(): pass\nclass C:\n    def m(self):\n        def inner(): pass\n    def __init__(self): pass\n    def __len__(self): return 0\n    def __priv(self): pass\n    async def am(self): pass\ndef __init__(): pass\nasync def af(): pass\n";
        assert_eq!(flat(src, K::Function), ["top", "__init__"]);
        assert_eq!(flat(src, K::Method), ["m", "inner"]);
    }

    #[test]
    fn arguments_are_positional_or_keyword_only() {
        let src = "def f(a, /, b, c: int = 1, *args, d, **kw): pass\ndef g(*, x): pass\ndef h(self, y=2): pass\ndef k(*a: int, b): pass\n";
        assert_eq!(
            names(src, K::FunctionArgument),
            vec![vec!["b", "c"], vec![], vec!["self", "y"], vec![]]
        );
        assert_eq!(
            names(src, K::FunctionAnnotation),
            vec![vec!["int"], vec![], vec![], vec![]]
        );
        let ret = "def f(a: int, *, b: str) -> bool: pass\n";
        assert_eq!(names(ret, K::FunctionAnnotation), vec![vec!["int", "bool"]]);
    }

    #[test]
    fn docstrings_follow_get_docstring() {
        let src = "def a():\n    \"\"\"  Doc.\n\n    More.\n    \"\"\"\ndef b():\n    f\"x\"\ndef c():\n    b\"x\"\ndef d():\n    \"  \"\ndef e():\n    x = 1\n    \"not first\"\ndef g():\n    # comment\n    'a' 'b'\n";
        assert_eq!(
            names(src, K::FunctionDocstring),
            vec![
                vec!["Doc.\n\nMore."],
                vec![],
                vec![],
                vec![],
                vec![],
                vec!["ab"]
            ]
        );
    }

    #[test]
    fn try_and_assert_are_direct_body_statements() {
        let src = "def f():\n    try:\n        pass\n    except E:\n        pass\n    if x:\n        assert y\n    assert z\n";
        assert_eq!(names(src, K::FunctionTry).concat().len(), 1);
        assert_eq!(flat(src, K::FunctionAssert), ["assert z"]);
    }

    #[test]
    fn decorator_ids() {
        let src = "@a\n@b.c.d\n@e(1)\n@f.g(2)\n@h[0]\ndef x(): pass\n@dataclass\nclass C:\n    @timer\n    def m(self): pass\n";
        assert_eq!(flat(src, K::FunctionDecorator), ["a", "d", "e", "g"]);
        assert_eq!(flat(src, K::ClassDecorator), ["dataclass"]);
        assert_eq!(flat(src, K::MethodDecorator), ["timer"]);
    }

    #[test]
    fn attributes_come_from_init_direct_plain_assignments() {
        let src = "class C:\n    def __init__(this, self):\n        self.a = self.b = 0\n        self.c: int = 1\n        self.d += 1\n        self.e, self.f = 1, 2\n        if x:\n            self.g = 1\n        other.h = 1\n    def m(self):\n        self.i = 1\nclass D:\n    def __init__(self):\n        pass\n";
        assert_eq!(names(src, K::Attribute), vec![vec!["a", "b"], vec![]]);
    }

    #[test]
    fn variables_are_plain_and_annotated_name_targets() {
        let src = "a = 1\nb, c = 1, 2\n(d, e) = 1, 2\n[f, g] = 1, 2\nh, *i = x\nj: int = 1\nk: int\nl += 1\nfor m in x: pass\nwith x as n: pass\nif (o := 1): pass\np = q = 2\nself.r = 1\nclass C:\n    s = 1\n";
        assert_eq!(
            flat(src, K::Variable),
            ["a", "b", "c", "d", "e", "h", "j", "k", "p", "q", "s"]
        );
    }

    #[test]
    fn imports_and_comments() {
        let src = "import os, a.b as c\nfrom x import y\ndef f():\n    import json\ns = '# not a comment, but the reference counts it'\n# real\n";
        assert_eq!(flat(src, K::Import), ["os", "a.b", "json"]);
        let comments = names(src, K::Comment);
        assert_eq!(comments.len(), 1);
        assert_eq!(
            comments[0],
            ["# not a comment, but the reference counts it'", "# real"]
        );
    }

    /// `try` ... `except*` is an `ast.TryStar`: the reference's `isinstance(n, ast.Try)`
    /// does not count it.
    #[test]
    fn try_star_is_not_a_try() {
        let src = "def f():\n    try:\n        pass\n    except* E:\n        pass\n    try:\n        pass\n    except E:\n        pass\nclass C:\n    def m(self):\n        try:\n            pass\n        except *E:\n            pass\n";
        assert_eq!(names(src, K::FunctionTry)[0].len(), 1);
        assert!(names(src, K::FunctionTry)[0][0].contains("except E"));
        assert_eq!(names(src, K::MethodTry), vec![Vec::<String>::new()]);
    }

    #[test]
    fn parenthesized_annotated_target_is_a_variable() {
        let src = "(name): int = 1\n((other)): str\n(a.b): int\n";
        assert_eq!(flat(src, K::Variable), ["name", "other"]);
    }

    /// CPython NFKC-normalizes identifiers: the reference sees `width` and `μ`.
    #[test]
    fn names_are_nfkc_normalized() {
        let src = "ｗｉｄｔｈ = 1\nµ = 2\ndef ｆ(ａ): pass\nclass Ｃ:\n    def __init__(ｓｅｌｆ):\n        ｓｅｌｆ.ｘ = 1\n";
        assert_eq!(flat(src, K::Variable), ["width", "\u{3bc}"]);
        assert_eq!(flat(src, K::Function), ["f"]);
        assert_eq!(flat(src, K::FunctionArgument), ["a"]);
        assert_eq!(flat(src, K::Class), ["C"]);
        assert_eq!(flat(src, K::Attribute), ["x"]);
    }

    /// `[doc] if doc else []`: a docstring cleaned to spaces is kept, an empty one is not.
    #[test]
    fn blank_but_not_empty_docstring_is_kept() {
        let src = "def a():\n    \"\"\"\n\n    \"\"\"\ndef b():\n    \"   \"\n";
        assert_eq!(names(src, K::FunctionDocstring), vec![vec!["    "], vec![]]);
    }

    /// A bracketed line indented less than its block: objects as CPython's, on their lines.
    #[test]
    fn bracketed_lines_indented_less_than_their_block() {
        let src = "def f(a):\n        (bar.\n    baz)  # why\n        x = [1,  # one\n  2]\n        return x\ny = 1\n";
        let m = Module::parse(src);
        assert!(m.syntax_error.is_none(), "{:?}", m.syntax_error);
        let vars = m.objects.get(K::Variable);
        let texts: Vec<&str> = vars.iter().map(|e| e.items[0].text.as_str()).collect();
        assert_eq!(texts, ["x", "y"]);
        assert_eq!(vars[0].items[0].span.start.line, 3);
        assert_eq!(vars[1].items[0].span.start.line, 6);
        let comments = &m.objects.get(K::Comment)[0].items;
        let texts: Vec<&str> = comments.iter().map(|i| i.text.as_str()).collect();
        assert_eq!(texts, ["# why", "# one"]);
        assert_eq!(comments[1].span.start.line, 3);
    }

    #[test]
    fn ranges_point_at_names() {
        let src = "class Foo:\n    def bar(self): pass\n";
        let m = Module::parse(src);
        let bar = &m.objects.get(K::Method)[0].items[0];
        assert_eq!(bar.span.text(src), "bar");
        assert_eq!((bar.span.start.line, bar.span.start.col), (1, 8));
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let src = format!("x = {}1{}\n", "(".repeat(5000), ")".repeat(5000));
        let m = Module::parse(&src);
        let _ = m.objects.get(K::Variable);
    }
}
