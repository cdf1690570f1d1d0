//! Quick fixes for a pivot finding, as byte-range edits of the document: rename a name to
//! satisfy a naming rule (every occurrence), add a required `import X`, add a required
//! decorator with its import, add a missing docstring.

use super::findings::{Finding, PivotRef};
use super::names;
use pivot_python::pivots::{Reason, Rule};
use pivot_python::python::occurrences::{
    definition_named_at, enclosing_function, identifier_occurrences, keyword_arguments, Occurrence,
};
use pivot_python::python::{ObjectKind, Span};
use tree_sitter::{Node, Tree};

/// Replace bytes `start..end` of the document by `text`. Edits of one fix never overlap;
/// two inserts at one offset land in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Fix {
    pub title: String,
    pub edits: Vec<Edit>,
}

/// The fixes offered for `finding` in the document `src` parsed as `tree`.
pub fn fixes(src: &str, tree: &Tree, finding: &Finding) -> Vec<Fix> {
    let Finding::Pivot {
        span,
        pivot,
        reason,
        ..
    } = finding
    else {
        return Vec::new();
    };
    let root = tree.root_node();
    let fix = match (reason, pivot.kind) {
        (Reason::NoMatch { name }, kind) => rename(src, root, *span, name, kind, &pivot.rule),
        (Reason::MemberMissing { name }, ObjectKind::Import) => Some(Fix {
            title: format!("Add `import {name}`"),
            edits: vec![import_edit(src, root, &format!("import {name}"))],
        }),
        (
            Reason::MemberMissing { name },
            ObjectKind::FunctionDecorator
            | ObjectKind::MethodDecorator
            | ObjectKind::ClassDecorator,
        ) => add_decorator(src, root, *span, name, pivot),
        (
            Reason::Missing,
            ObjectKind::FunctionDocstring
            | ObjectKind::MethodDocstring
            | ObjectKind::PublicFunctionDocstring
            | ObjectKind::PublicMethodDocstring,
        ) => add_docstring(src, root, *span),
        _ => None,
    };
    fix.into_iter().collect()
}

/// Apply edits to a text (as an editor does: each against the original text).
pub fn apply(src: &str, edits: &[Edit]) -> String {
    let mut order: Vec<usize> = (0..edits.len()).collect();
    // Back to front; of two inserts at one offset the later one goes in first, so the
    // earlier ends up before it.
    order.sort_by_key(|&i| (std::cmp::Reverse(edits[i].start), std::cmp::Reverse(i)));
    let mut out = src.to_string();
    for i in order {
        let e = &edits[i];
        out.replace_range(e.start..e.end, &e.text);
    }
    out
}

fn rename(
    src: &str,
    root: Node,
    at: Span,
    old: &str,
    kind: ObjectKind,
    rule: &Rule,
) -> Option<Fix> {
    let new = names::suggest(rule, old)?;
    let whole = Some((0, src.len()));
    let mut spans = match kind {
        ObjectKind::Function | ObjectKind::Method | ObjectKind::Class => {
            identifier_occurrences(root, src, old, whole, Occurrence::Any)
        }
        ObjectKind::Attribute => {
            identifier_occurrences(root, src, old, whole, Occurrence::Attribute)
        }
        ObjectKind::Variable => {
            let scope = enclosing_function(root, at.start_byte, at.end_byte)
                .map(|f| (f.start_byte(), f.end_byte()));
            identifier_occurrences(root, src, old, scope.or(whole), Occurrence::Any)
        }
        ObjectKind::FunctionArgument => {
            let def = enclosing_function(root, at.start_byte, at.end_byte)?;
            let mut v = identifier_occurrences(
                root,
                src,
                old,
                Some((def.start_byte(), def.end_byte())),
                Occurrence::Any,
            );
            let fname = def
                .child_by_field_name("name")
                .and_then(|n| n.utf8_text(src.as_bytes()).ok());
            if let Some(fname) = fname {
                v.extend(keyword_arguments(root, src, fname, old));
            }
            v
        }
        _ => return None,
    };
    // The offending name itself is always renamed, whatever the syntax around it.
    if !spans.iter().any(|s| s.start_byte == at.start_byte) && at.text(src) == old {
        spans.push(at);
    }
    spans.sort_by_key(|s| s.start_byte);
    spans.dedup_by_key(|s| s.start_byte);
    let n = spans.len();
    Some(Fix {
        title: format!(
            "Rename `{old}` to `{new}` ({n} occurrence{})",
            if n == 1 { "" } else { "s" }
        ),
        edits: spans
            .into_iter()
            .map(|s| Edit {
                start: s.start_byte,
                end: s.end_byte,
                text: new.clone(),
            })
            .collect(),
    })
}

/// Insert `line` (an import statement) after the module's docstring, leading comments and
/// `from __future__` imports.
fn import_edit(src: &str, root: Node, line: &str) -> Edit {
    let mut at = None;
    let mut c = root.walk();
    let mut seen_statement = false;
    for child in root.named_children(&mut c) {
        let skip = match child.kind() {
            "comment" => true,
            "future_import_statement" => true,
            "expression_statement" if !seen_statement => {
                child.named_child_count() == 1
                    && child
                        .named_child(0)
                        .is_some_and(|s| matches!(s.kind(), "string" | "concatenated_string"))
            }
            _ => false,
        };
        if !skip {
            at = Some(line_start(src, child.start_byte()));
            break;
        }
        if child.kind() != "comment" {
            seen_statement = true;
        }
    }
    match at {
        Some(at) => Edit {
            start: at,
            end: at,
            text: format!("{line}\n"),
        },
        None => {
            let sep = if src.is_empty() || src.ends_with('\n') {
                ""
            } else {
                "\n"
            };
            Edit {
                start: src.len(),
                end: src.len(),
                text: format!("{sep}{line}\n"),
            }
        }
    }
}

fn line_start(src: &str, byte: usize) -> usize {
    src[..byte].rfind('\n').map_or(0, |i| i + 1)
}

/// The whitespace before `byte` on its line, if only whitespace is there.
fn indent_before(src: &str, byte: usize) -> Option<&str> {
    let s = &src[line_start(src, byte)..byte];
    s.chars().all(|c| c == ' ' || c == '\t').then_some(s)
}

fn add_decorator(src: &str, root: Node, anchor: Span, name: &str, pivot: &PivotRef) -> Option<Fix> {
    let def = definition_named_at(root, anchor)?;
    let indent = indent_before(src, def.start_byte())?;
    let at = line_start(src, def.start_byte());
    let mut edits = Vec::new();
    let module = module_named_in(&pivot.text);
    let import = match (&module, binds_at_top_level(src, root, name)) {
        (Some(m), false) => {
            edits.push(import_edit(src, root, &format!("from {m} import {name}")));
            format!(" and `from {m} import {name}`")
        }
        _ => String::new(),
    };
    edits.push(Edit {
        start: at,
        end: at,
        text: format!("{indent}@{name}\n"),
    });
    Some(Fix {
        title: format!("Add `@{name}`{import}"),
        edits,
    })
}

/// The module an instruction names, e.g. "... decorator from the 'pedantic' module ...".
fn module_named_in(text: &str) -> Option<String> {
    let re = regex::Regex::new(r#"from (?:the )?['"`]?([A-Za-z_][A-Za-z0-9_.]*)['"`]?"#).ok()?;
    re.captures(text).map(|c| c[1].to_string())
}

/// Whether the module binds `name` at its top level (`from m import name [as name]`,
/// `import name`, `def name`, `class name`).
fn binds_at_top_level(src: &str, root: Node, name: &str) -> bool {
    let bytes = src.as_bytes();
    let text = |n: Node| n.utf8_text(bytes).unwrap_or("");
    let mut c = root.walk();
    for stmt in root.named_children(&mut c) {
        let stmt = if stmt.kind() == "decorated_definition" {
            match stmt.child_by_field_name("definition") {
                Some(d) => d,
                None => continue,
            }
        } else {
            stmt
        };
        match stmt.kind() {
            "function_definition" | "class_definition"
                if stmt.child_by_field_name("name").map(text) == Some(name) =>
            {
                return true;
            }
            "import_from_statement" | "import_statement" => {
                let mut c2 = stmt.walk();
                for n in stmt.children_by_field_name("name", &mut c2) {
                    let bound = match n.kind() {
                        "aliased_import" => n.child_by_field_name("alias").map(text),
                        _ => Some(text(n)),
                    };
                    if bound == Some(name) {
                        return true;
                    }
                }
            }
            _ => {}
        }
    }
    false
}

/// A placeholder docstring as the first statement of the def named at `anchor`.
fn add_docstring(src: &str, root: Node, anchor: Span) -> Option<Fix> {
    let def = definition_named_at(root, anchor)?;
    let body = def.child_by_field_name("body")?;
    let first = body.named_child(0)?;
    // `def f(): pass` keeps its body on the def line: no place for a docstring line.
    if first.start_position().row == def.start_position().row {
        return None;
    }
    let indent = indent_before(src, first.start_byte())?;
    let at = line_start(src, first.start_byte());
    let name = anchor.text(src);
    Some(Fix {
        title: format!("Add a docstring to `{name}`"),
        edits: vec![Edit {
            start: at,
            end: at,
            text: format!("{indent}\"\"\"TODO: describe `{name}`.\"\"\"\n"),
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::super::findings::findings;
    use super::*;
    use pivot_python::pivots::{check, Ledger, Verdict};
    use pivot_python::python::module::parse_tree;
    use pivot_python::python::Module;
    use serde_json::json;

    /// Apply the first fix of every finding of pivot `rule`, one at a time, and return the
    /// text; the pivot must then pass.
    fn fix_all(src: &str, kind: ObjectKind, rule: serde_json::Value, text: &str) -> String {
        let mut l = Ledger::default();
        let rule = Rule::from_json(&rule).unwrap();
        l.give("p", "t", 0, text.into(), kind, rule.clone());
        let mut src = src.to_string();
        for _ in 0..10 {
            let tree = parse_tree(&src, None);
            let m = Module::from_tree(&src, &tree);
            let f = findings(&src, &m, &l.active_at(0));
            let Some(first) = f.first() else { break };
            let fx = fixes(&src, &tree, first);
            assert!(!fx.is_empty(), "no fix for {first:?} in\n{src}");
            src = apply(&src, &fx[0].edits);
        }
        let m = Module::parse(&src);
        assert_eq!(check(&m, &src, kind, &rule).verdict, Verdict::Pass, "{src}");
        src
    }

    #[test]
    fn renames_follow_every_occurrence_in_scope() {
        let src = "def add(a, b):\n    return a + b\n\ntotal = add(1, b=2)\n";
        let out = fix_all(src, ObjectKind::Function, json!("^f_.*"), "");
        assert_eq!(
            out,
            "def f_add(a, b):\n    return a + b\n\ntotal = f_add(1, b=2)\n"
        );
        let out = fix_all(src, ObjectKind::FunctionArgument, json!("^a_"), "");
        assert_eq!(
            out, "def add(a_a, b):\n    return a_a + b\n\ntotal = add(1, b=2)\n",
            "only the first argument is checked by the rule"
        );
        let src = "class Acc:\n    def __init__(self, balance):\n        self.balance = balance\n    def get(self):\n        return self.balance\n";
        let out = fix_all(src, ObjectKind::Attribute, json!("^at_"), "");
        assert!(
            out.contains("self.at_balance = balance") && out.contains("return self.at_balance")
        );
        let out = fix_all(
            "class bank_account:\n    pass\nx = bank_account()\n",
            ObjectKind::Class,
            json!("^[A-Z][a-zA-Z0-9]*$"),
            "",
        );
        assert_eq!(out, "class BankAccount:\n    pass\nx = BankAccount()\n");
    }

    #[test]
    fn imports_go_after_docstring_and_future_imports() {
        let src = "\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\nimport os\n";
        let out = fix_all(src, ObjectKind::Import, json!(["hashlib", true]), "");
        assert_eq!(
            out,
            "\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\nimport hashlib\nimport os\n"
        );
        assert_eq!(
            fix_all("", ObjectKind::Import, json!(["gzip", true]), ""),
            "import gzip\n"
        );
        assert_eq!(
            fix_all("x = 1", ObjectKind::Import, json!(["gzip", true]), ""),
            "import gzip\nx = 1"
        );
    }

    #[test]
    fn decorators_come_with_their_import_once() {
        let text = "always add the '@timer' decorator from the 'pedantic' module to all methods";
        let src = "class C:\n    def a(self):\n        pass\n\n    @staticmethod\n    def b():\n        pass\n";
        let out = fix_all(
            src,
            ObjectKind::MethodDecorator,
            json!(["timer", true]),
            text,
        );
        assert_eq!(
            out,
            "from pedantic import timer\nclass C:\n    @timer\n    def a(self):\n        pass\n\n    @staticmethod\n    @timer\n    def b():\n        pass\n"
        );
        let src = "from pedantic import timer\ndef f():\n    pass\n";
        let out = fix_all(
            src,
            ObjectKind::FunctionDecorator,
            json!(["timer", true]),
            text,
        );
        assert_eq!(
            out,
            "from pedantic import timer\n@timer\ndef f():\n    pass\n"
        );
    }

    #[test]
    fn docstrings() {
        let src = "def f(x):\n    return x\n";
        let out = fix_all(src, ObjectKind::FunctionDocstring, json!(true), "");
        assert_eq!(
            out,
            "def f(x):\n    \"\"\"TODO: describe `f`.\"\"\"\n    return x\n"
        );
        // On public objects only: the private one is left as it is.
        let src =
            "class C:\n    def get(self):\n        pass\n\n    def _raw(self):\n        pass\n";
        let out = fix_all(src, ObjectKind::PublicMethodDocstring, json!(true), "");
        assert_eq!(
            out,
            "class C:\n    def get(self):\n        \"\"\"TODO: describe `get`.\"\"\"\n        pass\n\n    def _raw(self):\n        pass\n"
        );
    }
}
