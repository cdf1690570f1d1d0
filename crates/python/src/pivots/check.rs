//! The verdict of one module against one (object kind, rule) pair, with MemoryCode's exact
//! semantics (memorycode-scoring.md §5), and the violating objects with their ranges.
//! The benchmark score and the editor's diagnostics are two views of this one result.

use super::rule::Rule;
use crate::python::constructs::Constructs;
use crate::python::{Entry, Item, Module, ObjectKind, Span};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Fail,
    /// No object of the kind: the pair does not count for this code.
    Absent,
    /// The code does not parse: every pair fails.
    SyntaxError,
}

impl Verdict {
    /// MemoryCode's score: 1, 0, or None (absent, dropped from averages).
    pub fn score(self) -> Option<f64> {
        match self {
            Verdict::Pass => Some(1.0),
            Verdict::Fail | Verdict::SyntaxError => Some(0.0),
            Verdict::Absent => None,
        }
    }
}

/// Why an object breaks the rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Reason {
    /// The name does not match the regex.
    NoMatch { name: String },
    /// A regex rule found no name to test (e.g. an `__init__` that sets no attribute).
    NothingToTest,
    /// Presence required and missing (no docstring, no annotation, ...).
    Missing,
    /// Presence forbidden and found.
    Present,
    /// `name` required and not there.
    MemberMissing { name: String },
    /// `name` forbidden and there.
    MemberPresent { name: String },
    /// A membership rule on comments never holds in the reference.
    Unsatisfiable,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// Where to report it: the offending name, or the owning def/class name.
    pub span: Span,
    pub reason: Reason,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outcome {
    pub verdict: Verdict,
    pub violations: Vec<Violation>,
}

impl Outcome {
    fn of(verdict: Verdict) -> Outcome {
        Outcome {
            verdict,
            violations: Vec::new(),
        }
    }

    fn from_violations(violations: Vec<Violation>) -> Outcome {
        let verdict = if violations.is_empty() {
            Verdict::Pass
        } else {
            Verdict::Fail
        };
        Outcome {
            verdict,
            violations,
        }
    }
}

/// Check `module` against the pair (`kind`, `rule`). `src` is the module's text, used only
/// to place file-level findings.
pub fn check(module: &Module, src: &str, kind: ObjectKind, rule: &Rule) -> Outcome {
    if module.syntax_error.is_some() {
        return Outcome::of(Verdict::SyntaxError);
    }
    if kind.is_construct() {
        return check_constructs(&Constructs::of(src), src, kind, rule);
    }
    if let Some(all) = kind.public_of() {
        let defs = Constructs::of(src);
        let public: Vec<Entry> = (module.objects.get(all).iter())
            .filter(|e| defs.public_defs.binary_search(&e.anchor.start_byte).is_ok())
            .cloned()
            .collect();
        if public.is_empty() {
            return Outcome::of(Verdict::Absent);
        }
        return check_entries(&public, all, rule);
    }
    let entries = module.objects.get(kind);
    match kind {
        ObjectKind::Import => check_imports(entries, src, rule),
        ObjectKind::Comment => check_comments(entries, src, rule),
        _ if entries.is_empty() => Outcome::of(Verdict::Absent),
        _ => check_entries(entries, kind, rule),
    }
}

/// A team kind read from the whole tree: `false` / `[name, false]` forbid (a finding at
/// each object / each one named `name`), `[name, true]` asks for one in the file (a finding
/// on line 1 when none is), a regex asks every object's text to match. `comment text`
/// names by substring, the others by the whole text. A file without the construct passes:
/// these rules are about the whole file.
fn check_constructs(c: &Constructs, src: &str, kind: ObjectKind, rule: &Rule) -> Outcome {
    let items: &[Item] = match kind {
        ObjectKind::BareExcept => &c.bare_excepts,
        ObjectKind::Except => &c.caught,
        ObjectKind::WildcardImport => &c.wildcard_imports,
        ObjectKind::RelativeImport => &c.relative_imports,
        ObjectKind::ImportNotAtTop => &c.imports_not_at_top,
        ObjectKind::FromImport => &c.from_imports,
        ObjectKind::Call => &c.calls,
        ObjectKind::TypingName => &c.typing_names,
        ObjectKind::CommentText => &c.comments,
        _ => &[],
    };
    let named = |i: &Item, name: &str| match kind {
        ObjectKind::CommentText => i.text.contains(name),
        _ => i.text == name,
    };
    let top = Span::first_line(src);
    let mut v = Vec::new();
    // A file with no code (an empty `__init__.py`, a docstring alone) has nothing a
    // required construct could serve: it is not asked for one.
    let asks = matches!(
        rule,
        Rule::Presence(true) | Rule::Member { value: true, .. }
    );
    if asks && !c.has_code {
        return Outcome::from_violations(v);
    }
    // `from __future__ import annotations` changes only annotations ("for forward
    // references"): a file with none is not asked for it.
    let future_annotations = matches!(
        (kind, rule),
        (ObjectKind::FromImport, Rule::Member { name, value: true }) if name == "__future__.annotations"
    );
    if future_annotations && !c.has_annotations {
        return Outcome::from_violations(v);
    }
    match rule {
        Rule::Presence(false) => v.extend(items.iter().map(|i| violation(i.span, Reason::Present))),
        Rule::Presence(true) if items.is_empty() => v.push(violation(top, Reason::Missing)),
        Rule::Presence(true) => {}
        Rule::Member { name, value: false } => v.extend(
            (items.iter())
                .filter(|i| named(i, name))
                .map(|i| violation(i.span, Reason::MemberPresent { name: name.clone() })),
        ),
        Rule::Member { name, value: true } => {
            if !items.iter().any(|i| named(i, name)) {
                v.push(violation(top, Reason::MemberMissing { name: name.clone() }));
            }
        }
        Rule::Regex { .. } => v.extend(items.iter().filter(|i| !rule.matches(&i.text)).map(|i| {
            violation(
                i.span,
                Reason::NoMatch {
                    name: i.text.clone(),
                },
            )
        })),
    }
    Outcome::from_violations(v)
}

fn check_entries(entries: &[Entry], kind: ObjectKind, rule: &Rule) -> Outcome {
    let mut v = Vec::new();
    match rule {
        Rule::Regex { .. } => {
            // Only the first name of each non-empty entry is tested.
            let tested: Vec<&Entry> = entries.iter().filter(|e| !e.items.is_empty()).collect();
            if tested.is_empty() {
                // The reference takes the mean of nothing (NaN), which is not 1: a fail.
                v.extend(
                    entries
                        .iter()
                        .map(|e| violation(e.anchor, Reason::NothingToTest)),
                );
            }
            for e in tested {
                let first = &e.items[0];
                if !rule.matches(&first.text) {
                    v.push(violation(
                        first.span,
                        Reason::NoMatch {
                            name: first.text.clone(),
                        },
                    ));
                }
            }
        }
        Rule::Presence(required) => {
            for e in entries {
                match (e.items.is_empty(), required) {
                    (true, true) => v.push(violation(e.anchor, Reason::Missing)),
                    (false, false) => v.push(violation(e.anchor, Reason::Present)),
                    _ => {}
                }
            }
        }
        Rule::Member { name, value } => {
            for e in entries {
                let has = !kind.holds_nodes() && e.items.iter().any(|i| &i.text == name);
                if has != *value {
                    let reason = if *value {
                        Reason::MemberMissing { name: name.clone() }
                    } else {
                        Reason::MemberPresent { name: name.clone() }
                    };
                    v.push(violation(e.anchor, reason));
                }
            }
        }
    }
    Outcome::from_violations(v)
}

/// Imports are a flat list of dotted names in the reference, so an empty list is scored,
/// not absent, and a regex sees only the first character of each name.
fn check_imports(entries: &[Entry], src: &str, rule: &Rule) -> Outcome {
    let names = || entries.iter().map(|e| &e.items[0]);
    let top = Span::first_line(src);
    let mut v = Vec::new();
    match rule {
        Rule::Member { name, value } => {
            let found: Vec<_> = names().filter(|i| &i.text == name).collect();
            match (found.is_empty(), value) {
                (true, true) => {
                    v.push(violation(top, Reason::MemberMissing { name: name.clone() }))
                }
                (false, false) => v.extend(
                    found
                        .into_iter()
                        .map(|i| violation(i.span, Reason::MemberPresent { name: name.clone() })),
                ),
                _ => {}
            }
        }
        Rule::Regex { .. } => {
            if entries.is_empty() {
                v.push(violation(top, Reason::NothingToTest));
            }
            for i in names() {
                let first: String = i.text.chars().take(1).collect();
                if !rule.matches(&first) {
                    v.push(violation(
                        i.span,
                        Reason::NoMatch {
                            name: i.text.clone(),
                        },
                    ));
                }
            }
        }
        // Every name is a non-empty string: "all have one" always holds.
        Rule::Presence(true) => {}
        Rule::Presence(false) => v.extend(names().map(|i| violation(i.span, Reason::Present))),
    }
    Outcome::from_violations(v)
}

/// Comments are one entry holding every `#...` match of the text.
fn check_comments(entries: &[Entry], src: &str, rule: &Rule) -> Outcome {
    let top = Span::first_line(src);
    let items: &[Item] = entries.first().map_or(&[], |e| &e.items);
    let mut v = Vec::new();
    match rule {
        Rule::Regex { .. } => match items.first() {
            None => v.push(violation(top, Reason::NothingToTest)),
            Some(first) if !rule.matches(&first.text) => v.push(violation(
                first.span,
                Reason::NoMatch {
                    name: first.text.clone(),
                },
            )),
            Some(_) => {}
        },
        Rule::Presence(true) if items.is_empty() => v.push(violation(top, Reason::Missing)),
        Rule::Presence(false) => v.extend(items.iter().map(|i| violation(i.span, Reason::Present))),
        Rule::Presence(true) => {}
        // The reference compares a string with a list: never equal, so the score is `not value`.
        Rule::Member { value: true, .. } => v.push(violation(top, Reason::Unsatisfiable)),
        Rule::Member { value: false, .. } => {}
    }
    Outcome::from_violations(v)
}

fn violation(span: Span, reason: Reason) -> Violation {
    Violation { span, reason }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn found(src: &str, kind: &str, rule: serde_json::Value) -> Vec<String> {
        let kind = ObjectKind::from_name(kind).unwrap();
        let rule = Rule::from_json(&rule).unwrap();
        let m = Module::parse(src);
        let out = check(&m, src, kind, &rule);
        assert_eq!(out.verdict == Verdict::Pass, out.violations.is_empty());
        (out.violations.iter())
            .map(|v| format!("{}:{}", v.span.start.line + 1, v.span.text(src)))
            .collect()
    }

    const CODE: &str = "\
from __future__ import annotations
from typing import List, Optional
from .models import *
import os


def _helper(x):
    return x


def public(x: int) -> int:
    import json  # type: ignore
    try:
        return json.loads(x)
    except Exception:
        print(x)
    except:
        pass
    return x


class Box:
    def get(self):
        \"\"\"Doc.\"\"\"
    def _raw(self):
        pass
";

    #[test]
    fn each_team_form_finds_exactly_its_objects() {
        assert_eq!(found(CODE, "bare except", json!(false)), ["17:except"]);
        assert_eq!(
            found(CODE, "except", json!(["Exception", false])),
            ["15:Exception"]
        );
        assert!(found(CODE, "except", json!(["ValueError", false])).is_empty());
        assert_eq!(
            found(CODE, "wildcard import", json!(false)),
            ["3:from .models import *"]
        );
        assert_eq!(
            found(CODE, "relative import", json!(false)),
            ["3:from .models import *"]
        );
        assert_eq!(
            found(CODE, "import not at top", json!(false)),
            ["12:import json"]
        );
        assert_eq!(
            found(
                CODE,
                "from import",
                json!(["__future__.annotations", false])
            ),
            ["1:annotations"]
        );
        assert!(found(CODE, "from import", json!(["__future__.annotations", true])).is_empty());
        let future = json!(["__future__.annotations", true]);
        assert_eq!(
            found(
                "import os\ndef f(x: int): pass\n",
                "from import",
                future.clone()
            ),
            ["1:import os"]
        );
        // Nothing it would change: no annotation, no code at all.
        assert!(found("import os\ndef f(x): pass\n", "from import", future.clone()).is_empty());
        assert!(found("", "from import", future.clone()).is_empty());
        assert!(found(
            "\"\"\"Docs.\"\"\"\n# a comment\n",
            "from import",
            json!(["os.path", true])
        )
        .is_empty());
        assert_eq!(
            found("x = 1\n", "from import", json!(["os.path", true])),
            ["1:x = 1"]
        );
        assert_eq!(
            found(CODE, "call", json!(["print", false])),
            ["16:print(x)"]
        );
        assert_eq!(
            found(CODE, "typing name", json!(["Optional", false])),
            ["2:Optional"]
        );
        assert_eq!(
            found(CODE, "comment text", json!(["type: ignore", false])),
            ["12:# type: ignore"]
        );
        assert!(found(CODE, "comment text", json!(["TODO", false])).is_empty());
    }

    #[test]
    fn public_kinds_leave_out_leading_underscores() {
        assert_eq!(
            found(CODE, "function annotation", json!(true)),
            ["7:_helper"]
        );
        assert!(found(CODE, "public function annotation", json!(true)).is_empty());
        assert_eq!(
            found(CODE, "public function docstring", json!(true)),
            ["11:public"]
        );
        assert_eq!(found(CODE, "method docstring", json!(true)), ["25:_raw"]);
        assert!(found(CODE, "public method docstring", json!(true)).is_empty());
        assert_eq!(
            found(CODE, "public method annotation", json!(true)),
            ["23:get"]
        );
        // pydocstyle's "public": not nested in a function, not in a private class; a def
        // under a module-level `if` still is.
        let nested =
            "def outer() -> None:\n    \"\"\"Docs.\"\"\"\n    def inner():\n        pass\n\n\
                      class _Private:\n    def run(self):\n        pass\n\n\
                      class Open:\n    def run(self):\n        def helper():\n            pass\n\n\
                      if True:\n    def guarded():\n        pass\n";
        assert_eq!(
            found(nested, "public function docstring", json!(true)),
            ["16:guarded"]
        );
        assert_eq!(
            found(nested, "public method docstring", json!(true)),
            ["11:run"]
        );
        assert_eq!(
            found(nested, "method docstring", json!(true)).len(),
            3,
            "helper is a method"
        );
        let only_private = "def _a():\n    pass\n";
        let m = Module::parse(only_private);
        let rule = Rule::Presence(true);
        let out = check(&m, only_private, ObjectKind::PublicFunctionDocstring, &rule);
        assert_eq!(out.verdict, Verdict::Absent);
    }

    #[test]
    fn a_file_that_does_not_parse_checks_no_team_rule() {
        let m = Module::parse("def f(:\n    print(1)\n");
        let out = check(&m, "def f(:\n", ObjectKind::Call, &Rule::Presence(false));
        assert_eq!(out.verdict, Verdict::SyntaxError);
    }
}
