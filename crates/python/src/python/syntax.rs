//! A syntax verdict that agrees with CPython's parser on model-written code.
//!
//! tree-sitter-python recovers from errors CPython rejects; on top of its ERROR and MISSING
//! nodes this checks what the grammar lets through (memorycode-scoring.md §3): blocks with
//! no statement, indentation CPython's tokenizer refuses, invalid number literals, `try`
//! without handlers, parameter and argument order, invalid assignment chains and targets,
//! Python 2 statements.

use super::numbers;
use super::span::Span;
use super::walk::{self, Field, NodeExt};
use serde::Serialize;
use tree_sitter::{Node, Tree};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SyntaxError {
    pub message: String,
    pub span: Span,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (line {})", self.message, self.span.start.line + 1)
    }
}

/// The first syntax error CPython would report, or None.
pub fn check(src: &str, tree: &Tree) -> Option<SyntaxError> {
    let root = tree.root_node();
    pre_check(src, root).or_else(|| {
        let mut g = GrammarCheck::new(src);
        walk::preorder(root, |node, _| g.visit(node));
        g.finish().map(|e| where_cpython_reports(src, e))
    })
}

/// What needs no walk: tree-sitter's own errors and the tokenizer's indentation rules.
pub fn pre_check(src: &str, root: Node) -> Option<SyntaxError> {
    // CPython reports the first error of its tokenizer (indentation, brackets, characters)
    // before any error of its parser, wherever the parser stopped.
    let tokens = tokenizer_error(src);
    if root.has_error() {
        return Some(tokens.unwrap_or_else(|| first_error_node(root)));
    }
    tokens
}

/// Checks of nodes the grammar accepts and CPython does not, one node at a time, so that
/// `Module` can run them in the same walk as object extraction.
pub struct GrammarCheck<'a> {
    src: &'a [u8],
    found: Option<SyntaxError>,
    /// Whether number literals are checked as they are visited (a pruned walk does not
    /// reach them: `number_error` finds them from the text).
    numbers: bool,
}

impl<'a> GrammarCheck<'a> {
    pub fn new(src: &'a str) -> Self {
        GrammarCheck {
            src: src.as_bytes(),
            found: None,
            numbers: true,
        }
    }

    /// For `walk::preorder_pruned`: number literals are left to `number_error`.
    pub fn without_numbers(src: &'a str) -> Self {
        GrammarCheck {
            numbers: false,
            ..GrammarCheck::new(src)
        }
    }

    /// Returns false once an error is found.
    pub fn visit(&mut self, node: Node) -> bool {
        self.visit_kind(node, node.kind_id())
    }

    /// `visit` with the node's kind id already read.
    pub fn visit_kind(&mut self, node: Node, id: u16) -> bool {
        let k = walk::kinds();
        if self.found.is_none()
            && k.is_checked(id)
            && (self.numbers || (id != k.integer && id != k.float))
        {
            self.found = check_node(self.src, node, id);
        }
        self.found.is_none()
    }

    pub fn finish(self) -> Option<SyntaxError> {
        self.found
    }
}

/// The first invalid number literal of an error-free tree, found from the text: every
/// literal starts at a digit that does not follow a name character, or at a `.` before a
/// digit. Only starts whose literal is not plainly valid are looked up in the tree (the
/// digits may be in a string, a comment or a name).
pub fn number_error(src: &str, root: Node) -> Option<SyntaxError> {
    let (b, k) = (src.as_bytes(), walk::kinds());
    let name_char = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let starts = if c.is_ascii_digit() {
            i == 0 || !name_char(b[i - 1])
        } else {
            c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)
        };
        if !starts {
            i += 1;
            continue;
        }
        let digits_from = if c == b'.' { i + 1 } else { i };
        let end = digits_from
            + b[digits_from..]
                .iter()
                .take_while(|d| d.is_ascii_digit())
                .count();
        let plainly_valid = !b.get(end).is_some_and(|&n| name_char(n) || n == b'.')
            && (c != b'0' || b[i..end].iter().all(|&d| d == b'0'));
        if !plainly_valid {
            let node = root.descendant_for_byte_range(i, i + 1).filter(|n| {
                n.start_byte() == i && (n.kind_id() == k.integer || n.kind_id() == k.float)
            });
            if let Some(n) = node {
                if let Some(e) = check_node(b, n, n.kind_id()) {
                    return Some(e);
                }
            }
        }
        i = end.max(i + 1);
    }
    None
}

/// The error a pre-order walk meets first: an ancestor before its descendants, otherwise
/// the one that starts first.
pub fn first_in_walk(a: Option<SyntaxError>, b: Option<SyntaxError>) -> Option<SyntaxError> {
    match (a, b) {
        (Some(a), Some(b)) => {
            let key = |e: &SyntaxError| (e.span.start_byte, std::cmp::Reverse(e.span.end_byte));
            Some(if key(&b) < key(&a) { b } else { a })
        }
        (a, b) => a.or(b),
    }
}

fn err(message: impl Into<String>, node: &Node) -> SyntaxError {
    SyntaxError {
        message: message.into(),
        span: Span::of(node),
    }
}

fn first_error_node(root: Node) -> SyntaxError {
    let mut node = root;
    'descend: loop {
        let mut c = node.walk();
        for child in node.children(&mut c) {
            if child.is_missing() {
                return err(format!("expected '{}'", child.kind()), &child);
            }
            if child.is_error() {
                return err("invalid syntax", &child);
            }
            if child.has_error() {
                node = child;
                continue 'descend;
            }
        }
        return err("invalid syntax", &node);
    }
}

fn check_node(src: &[u8], node: Node, id: u16) -> Option<SyntaxError> {
    let k = walk::kinds();
    // What each error needs in the node's text, read before the tree: a default (`=`)
    // for parameter order, a keyword (`=`) or `**` for argument order, two `=` for a
    // bad assignment chain.
    let text = &src[node.start_byte()..node.end_byte()];
    let equals = |n: usize| memchr::memchr_iter(b'=', text).take(n).count() == n;
    if id == k.parameters || id == k.lambda_parameters {
        return if equals(1) {
            parameter_order(node)
        } else {
            None
        };
    }
    if id == k.argument_list {
        let possible = equals(1) || memchr::memmem::find(text, b"**").is_some();
        return if possible { argument_order(node) } else { None };
    }
    if (id == k.assignment || id == k.augmented_assignment) && !equals(2) {
        return None;
    }
    if id == k.block {
        // Nearly every block opens with a statement: one child read, no cursor.
        let has_statement = match node.named_child(0) {
            None => false,
            Some(first) if first.kind_id() != k.comment => true,
            Some(_) => {
                let mut c = node.walk();
                let any = node
                    .named_children(&mut c)
                    .any(|n| n.kind_id() != k.comment);
                any
            }
        };
        (!has_statement).then(|| err(empty_block_message(node), &node))
    } else if id == k.integer || id == k.float {
        let t = node.utf8_text(src).unwrap_or("");
        (!numbers::is_valid(t)).then(|| err(numbers::error_message(t), &node))
    } else if id == k.try_statement {
        let mut c = node.walk();
        let clauses: Vec<Node> = node
            .named_children(&mut c)
            .filter(|n| {
                let id = n.kind_id();
                id == k.except_clause || id == k.except_group_clause || id == k.finally_clause
            })
            .collect();
        if clauses.is_empty() {
            return Some(err(NO_HANDLER, &node));
        }
        let handlers = (clauses.iter().copied()).filter(|n| n.kind_id() != k.finally_clause);
        let (star, plain): (Vec<Node>, Vec<Node>) = handlers.partition(|n| is_star_handler(*n));
        match (star.first(), plain.first()) {
            (Some(s), Some(p)) => Some(err(
                "cannot have both 'except' and 'except*' on the same 'try'",
                if s.start_byte() > p.start_byte() {
                    s
                } else {
                    p
                },
            )),
            _ => None,
        }
    } else if id == k.assignment {
        let annotated = node.field(Field::Type).is_some();
        let r = node.field(Field::Right)?;
        let bad = r.kind_id() == k.augmented_assignment
            || (r.kind_id() == k.assignment && (annotated || r.field(Field::Type).is_some()));
        bad.then(|| err("invalid syntax", &r))
    } else if id == k.augmented_assignment {
        node.field(Field::Right)
            .filter(|r| r.kind_id() == k.assignment || r.kind_id() == k.augmented_assignment)
            .map(|r| err("invalid syntax", &r))
    } else if id == k.print_statement {
        // `print >> f, x` is an expression CPython compiles (a shift and a tuple); only
        // `print x` forms are Python 2 statements.
        if has_chevron(node) {
            return None;
        }
        Some(err(
            "Missing parentheses in call to 'print'. Did you mean print(...)?",
            &node,
        ))
    } else if id == k.exec_statement {
        Some(err(
            "Missing parentheses in call to 'exec'. Did you mean exec(...)?",
            &node,
        ))
    } else if id == k.constrained_type && !is_type_parameter(node) {
        Some(err("invalid syntax", &node))
    } else {
        None
    }
}

const NO_HANDLER: &str = "expected 'except' or 'finally' block";

/// A grammar error moved to where CPython reports it. The checks give the node at fault
/// (so that the editor's per-statement cache can keep it); CPython reports a missing block
/// or handler at the token where it looked for one, which can be in a later statement.
pub fn where_cpython_reports(src: &str, e: SyntaxError) -> SyntaxError {
    let from = if e.message.starts_with("expected an indented block") {
        e.span.start_byte
    } else if e.message == NO_HANDLER {
        e.span.end_byte
    } else {
        return e;
    };
    let message = match e.message.split_once(LINES_UP) {
        Some((text, up)) => {
            let up: u32 = up.parse().unwrap_or(0);
            format!("{text}{}", (e.span.start.line + 1).saturating_sub(up))
        }
        None => e.message,
    };
    SyntaxError {
        message,
        span: next_token(src, from),
    }
}

/// CPython's message for a block with no statement: it names the header and its line.
fn empty_block_message(block: Node) -> String {
    let Some(header) = block.parent() else {
        return "expected an indented block".into();
    };
    let what = match header.kind() {
        "function_definition" => "function definition".to_string(),
        "class_definition" => "class definition".to_string(),
        "except_clause" | "except_group_clause" if is_star_handler(header) => {
            "'except*' statement".to_string()
        }
        kind => match kind
            .strip_suffix("_statement")
            .or(kind.strip_suffix("_clause"))
        {
            Some(
                word @ ("if" | "elif" | "else" | "for" | "while" | "try" | "except" | "finally"
                | "with" | "match" | "case"),
            ) => format!("'{word}' statement"),
            _ => return "expected an indented block".into(),
        },
    };
    // The header's line is written by `where_cpython_reports` from the block's absolute
    // line: the editor checks a statement parsed alone, where rows are not the file's.
    let up = block.start_position().row - header.start_position().row;
    format!("expected an indented block after {what} on line {LINES_UP}{up}")
}

/// In a grammar error's message, stands before how many lines above the error's start the
/// header is (replaced by the header's line in `where_cpython_reports`).
const LINES_UP: char = '\u{1}';

/// Where CPython's parser meets the token after `from`: the next byte that is not blank,
/// a comment or a line continuation; at the end of the text, the end of its last line.
fn next_token(src: &str, from: usize) -> Span {
    let b = src.as_bytes();
    let mut i = from.min(b.len());
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\x0c' | b'\r' | b'\n' | b'\\' => i += 1,
            b'#' => i = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |n| i + n),
            _ => return Span::from_bytes(src, i, i + 1),
        }
    }
    let end = src
        .strip_suffix('\n')
        .map_or(src.len(), |t| t.strip_suffix('\r').unwrap_or(t).len());
    Span::from_bytes(src, end, end)
}

/// `except* E:` (an `ast.TryStar` handler): the clause's second token is `*`.
pub fn is_star_handler(clause: Node) -> bool {
    clause
        .child(1)
        .is_some_and(|t| !t.is_named() && t.kind() == "*")
}

fn has_chevron(print: Node) -> bool {
    print
        .named_child(0)
        .is_some_and(|n| n.kind_id() == walk::kinds().chevron)
}

/// Inside `[...]` a `T: bound` is a type parameter (def/class) or a slice (`Dict[a: b]`),
/// both valid; standing alone as an annotation it is not.
fn is_type_parameter(node: Node) -> bool {
    let k = walk::kinds();
    node.parent()
        .filter(|p| p.kind_id() == k.type_node)
        .and_then(|t| t.parent())
        .is_some_and(|l| l.kind_id() == k.type_parameter)
}

/// "non-default argument follows default argument", for the parameters before `*`.
fn parameter_order(params: Node) -> Option<SyntaxError> {
    let k = walk::kinds();
    let mut seen_default = false;
    let mut c = params.walk();
    for p in params.named_children(&mut c).filter(|p| !p.is_extra()) {
        let id = p.kind_id();
        if id == k.default_parameter || id == k.typed_default_parameter {
            seen_default = true;
        } else if id == k.identifier {
            if seen_default {
                return Some(err("non-default argument follows default argument", &p));
            }
        } else if id == k.typed_parameter {
            // `x: T` is plain; `*args: T` / `**kw: T` end the parameters checked.
            match p.named_child(0).map(|n| n.kind_id() == k.identifier) {
                Some(false) => return None,
                Some(true) if seen_default => {
                    return Some(err("non-default argument follows default argument", &p));
                }
                _ => {}
            }
        } else if id == k.list_splat_pattern
            || id == k.keyword_separator
            || id == k.dictionary_splat_pattern
        {
            return None;
        }
    }
    None
}

/// "positional argument follows keyword argument (unpacking)".
fn argument_order(args: Node) -> Option<SyntaxError> {
    let k = walk::kinds();
    let (mut keyword, mut double_splat) = (false, false);
    let mut c = args.walk();
    // Comments and `\` line continuations are extras, not arguments.
    for a in args.named_children(&mut c).filter(|a| !a.is_extra()) {
        let id = a.kind_id();
        if id == k.keyword_argument {
            keyword = true;
        } else if id == k.dictionary_splat {
            double_splat = true;
        } else if id == k.list_splat {
            if double_splat {
                return Some(err(
                    "iterable argument unpacking follows keyword argument unpacking",
                    &a,
                ));
            }
        } else if double_splat {
            return Some(err(
                "positional argument follows keyword argument unpacking",
                &a,
            ));
        } else if keyword {
            return Some(err("positional argument follows keyword argument", &a));
        }
    }
    None
}

/// The first error of CPython's tokenizer, in text order. Indentation, which tree-sitter
/// recovers from silently: an indent must follow a line ending in `:` (a block header), a
/// dedent must return to an enclosing level, and tabs and spaces must compare the same
/// with tab stops of 8 and of 1. Brackets: a closing one must match the last open one,
/// and none may be left open at the end. Characters: outside strings and comments a
/// non-ASCII character must belong in an identifier.
pub fn tokenizer_error(src: &str) -> Option<SyntaxError> {
    let b = src.as_bytes();
    let mut levels: Vec<(usize, usize)> = vec![(0, 0)];
    // Open brackets: the byte and its offset.
    let mut open: Vec<(u8, usize)> = Vec::new();
    let (mut i, mut at_line_start) = (0usize, true);
    // Last significant byte of the logical line so far (0 before the first).
    let mut last = 0u8;
    while i < b.len() {
        if at_line_start {
            at_line_start = false;
            if open.is_empty() {
                let (mut col, mut alt, mut j) = (0usize, 0usize, i);
                while j < b.len() {
                    match b[j] {
                        b' ' => {
                            col += 1;
                            alt += 1;
                        }
                        b'\t' => {
                            col = (col / 8 + 1) * 8;
                            alt += 1;
                        }
                        b'\x0c' => {
                            col = 0;
                            alt = 0;
                        }
                        _ => break,
                    }
                    j += 1;
                }
                let blank = j >= b.len() || matches!(b[j], b'\n' | b'\r' | b'#' | b'\\');
                if !blank {
                    let span = || Span::from_bytes(src, i, j);
                    let &(top, top_alt) = levels.last().unwrap_or(&(0, 0));
                    if col > top {
                        if last != b':' {
                            return Some(SyntaxError {
                                message: "unexpected indent".into(),
                                span: span(),
                            });
                        }
                        if alt <= top_alt {
                            return Some(tab_error(span()));
                        }
                        levels.push((col, alt));
                    } else {
                        while levels.last().is_some_and(|&(c, _)| col < c) {
                            levels.pop();
                        }
                        match levels.last() {
                            Some(&(c, a)) if c == col => {
                                if a != alt {
                                    return Some(tab_error(span()));
                                }
                            }
                            _ => {
                                return Some(SyntaxError {
                                    message: "unindent does not match any outer indentation level"
                                        .into(),
                                    span: span(),
                                })
                            }
                        }
                    }
                }
                i = j;
                continue;
            }
        }
        // A run of bytes with no role here (names, operators, digits): only its last
        // byte counts, as the line's last significant one so far.
        let run = b[i..]
            .iter()
            .take_while(|&&c| !PLAIN_ENDS[c as usize])
            .count();
        if run > 0 {
            i += run;
            last = b[i - 1];
            continue;
        }
        match b[i] {
            b'#' => {
                i = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |n| i + n);
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\x0c' => i += 1,
            b'\\' if b.get(i + 1) == Some(&b'\n') || b.get(i + 1..i + 3) == Some(b"\r\n") => {
                let next = i + if b[i + 1] == b'\n' { 2 } else { 3 };
                // A continuation joins the next line; at the very end there is none.
                if next == b.len() {
                    return Some(SyntaxError {
                        message: "unexpected EOF while parsing".into(),
                        span: Span::from_bytes(src, i, i + 1),
                    });
                }
                i = next;
            }
            b'(' | b'[' | b'{' => {
                open.push((b[i], i));
                last = b[i];
                i += 1;
            }
            b')' | b']' | b'}' => {
                if let Some(e) = closing_error(src, &mut open, i) {
                    return Some(e);
                }
                last = b[i];
                i += 1;
            }
            c if c >= 0x80 => {
                let ch = src[i..].chars().next().unwrap_or(' ');
                if let Some(message) = invalid_character(ch) {
                    return Some(SyntaxError {
                        message,
                        span: Span::from_bytes(src, i, i + ch.len_utf8()),
                    });
                }
                last = c;
                i += ch.len_utf8();
            }
            b'\'' | b'"' => {
                last = b[i];
                i = skip_string(b, i);
            }
            b'\n' => {
                at_line_start = true;
                i += 1;
            }
            c => {
                last = c;
                i += 1;
            }
        }
    }
    // The innermost bracket left open.
    open.last().map(|&(c, at)| SyntaxError {
        message: format!("'{}' was never closed", c as char),
        span: Span::from_bytes(src, at, at + 1),
    })
}

/// The closing bracket at `at` against the open ones: pops its match, or says why not.
fn closing_error(src: &str, open: &mut Vec<(u8, usize)>, at: usize) -> Option<SyntaxError> {
    let close = src.as_bytes()[at];
    // Spans count lines from the start of the text: made only for an error, or a file of
    // many brackets would be quadratic.
    let span = || Span::from_bytes(src, at, at + 1);
    let Some((opening, from)) = open.pop() else {
        return Some(SyntaxError {
            message: format!("unmatched '{}'", close as char),
            span: span(),
        });
    };
    let matches = matches!((opening, close), (b'(', b')') | (b'[', b']') | (b'{', b'}'));
    if matches {
        return None;
    }
    let span = span();
    let opened = Span::from_bytes(src, from, from + 1);
    let message = if opened.start.line == span.start.line {
        format!(
            "closing parenthesis '{}' does not match opening parenthesis '{}'",
            close as char, opening as char
        )
    } else {
        format!(
            "closing parenthesis '{}' does not match opening parenthesis '{}' on line {}",
            close as char,
            opening as char,
            opened.start.line + 1
        )
    };
    Some(SyntaxError { message, span })
}

/// CPython's tokenizer error for a non-ASCII character outside strings and comments, or
/// None when it can be part of an identifier (itself or once NFKC-normalized).
fn invalid_character(c: char) -> Option<String> {
    use unicode_normalization::UnicodeNormalization;
    if unicode_ident::is_xid_continue(c) {
        return None;
    }
    let normalized: String = std::iter::once(c).nfkc().collect();
    if normalized.chars().all(unicode_ident::is_xid_continue) {
        return None;
    }
    let code = c as u32;
    // Python's `str.isprintable()` is false for these: separators, format characters.
    let non_printable = matches!(
        code,
        0x80..=0xa0 | 0xad | 0x1680 | 0x2000..=0x200f | 0x2028..=0x202f | 0x205f..=0x2064
            | 0x3000 | 0xfeff
    );
    Some(if non_printable {
        format!("invalid non-printable character U+{code:04X}")
    } else {
        format!("invalid character '{c}' (U+{code:04X})")
    })
}

/// Bytes `indentation` looks at one by one: everything else only sets the last
/// significant byte.
const PLAIN_ENDS: [bool; 256] = {
    let mut t = [false; 256];
    let special = b"# \t\r\x0c\\([{)]}'\"\n";
    let mut i = 0;
    while i < special.len() {
        t[special[i] as usize] = true;
        i += 1;
    }
    // Non-ASCII characters are checked one by one.
    let mut c = 0x80;
    while c < 256 {
        t[c] = true;
        c += 1;
    }
    t
};

fn tab_error(span: Span) -> SyntaxError {
    SyntaxError {
        message: "inconsistent use of tabs and spaces in indentation".into(),
        span,
    }
}

/// Index just past the string literal whose opening quote is at `i` (an unterminated
/// one-line string ends at its line's end).
pub(crate) fn skip_string(b: &[u8], i: usize) -> usize {
    let q = b[i];
    let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
    let mut j = if triple { i + 3 } else { i + 1 };
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            c if c == q => {
                if !triple {
                    return j + 1;
                }
                if b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q) {
                    return j + 3;
                }
                j += 1;
            }
            b'\n' if !triple => return j,
            _ => j += 1,
        }
    }
    b.len()
}
