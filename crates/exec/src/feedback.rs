//! ConvCodeWorld's feedback text (spec §1.1, §1.2), character for character.

use std::path::Path;

use anyhow::Result;
use tree_sitter::Node;

use super::harness;
use super::problem::Problem;
use super::result::{EvalResult, Status};

pub const NO_SYNTAX_ERRORS: &str = "No syntax errors";
pub const PASSED_ALL_TEST_RUNS: &str = "Passed all test runs";
/// Tests visible under partial coverage.
pub const NUM_UNIT_TESTS: usize = 3;
/// Execution feedback this long (in characters) or longer is trimmed.
pub const MAX_FEEDBACK_CHARS: usize = 8000;
pub const FRONT_TRIM: usize = 2000;
pub const REAR_TRIM: usize = 4000;

/// Compilation feedback: `No syntax errors`, or the traceback of
/// `compile(code, 'tmp.py', 'exec')` as printed by the real interpreter `python`.
pub fn compilation(python: &Path, code: &str) -> Result<String> {
    Ok(compilation_many(python, &[code])?.remove(0))
}

/// Compilation feedback for many programs with one interpreter start.
pub fn compilation_many(python: &Path, codes: &[&str]) -> Result<Vec<String>> {
    let errors = harness::compile_all(python, codes)?;
    Ok(errors
        .into_iter()
        .map(|e| e.unwrap_or_else(|| NO_SYNTAX_ERRORS.to_string()))
        .collect())
}

/// Execution feedback (full, or partial = only the first three tests), trimmed when it is
/// 8,000 characters or longer.
pub fn execution(result: &EvalResult, problem: &Problem, partial: bool) -> String {
    let text = execution_untrimmed(result, problem, partial);
    if text.chars().count() >= MAX_FEEDBACK_CHARS {
        trim(&text, FRONT_TRIM, REAR_TRIM)
    } else {
        text
    }
}

/// Execution feedback before the length rule.
pub fn execution_untrimmed(result: &EvalResult, problem: &Problem, partial: bool) -> String {
    if result.status == Status::Pass {
        return PASSED_ALL_TEST_RUNS.to_string();
    }
    let visible = if partial {
        let mut v = visible_tests(&problem.test);
        v.truncate(NUM_UNIT_TESTS);
        Some(v)
    } else {
        None
    };
    let blocks: Vec<String> = result
        .details
        .iter()
        .filter(|(name, _)| match &visible {
            Some(v) => v.iter().any(|n| n == name),
            None => true,
        })
        .map(|(name, tb)| format!("{}\n{tb}\n", name.to_uppercase()))
        .collect();
    let text = blocks.join("\n");
    if partial && text.is_empty() {
        // The original says "passed" when every failure is hidden (or the key is ALL).
        return PASSED_ALL_TEST_RUNS.to_string();
    }
    text
}

/// The head/tail rule: w = 5 lines if there are ≥ 10, 1 if there is 1, else lines/2; the
/// result is the first w lines (at most `front` chars) + "\n...\n" + the last w lines (the last
/// `rear` chars). Budgets of 0 behave as Python's `[:0]` / `[-0:]` (empty head, whole tail).
pub fn trim(text: &str, front: usize, rear: usize) -> String {
    let lines = splitlines(text);
    let n = lines.len();
    let w = if n >= 10 {
        5
    } else if n == 1 {
        1
    } else {
        n / 2
    };
    let head = lines[..w.min(n)].join("\n");
    let tail_start = if w == 0 { 0 } else { n - w };
    let tail = lines[tail_start..].join("\n");
    let head: String = head.chars().take(front).collect();
    let tail = if rear == 0 {
        tail
    } else {
        let count = tail.chars().count();
        tail.chars().skip(count.saturating_sub(rear)).collect()
    };
    format!("{head}\n...\n{tail}")
}

pub use pivot_python::python::pystr::splitlines;

/// All `def` names (not `async def`) in every class of `test_source`, in the order of
/// ConvCodeWorld's `extract_methods_from_class`: classes in `ast.walk` order (breadth-first),
/// each visited depth-first, so nested functions and nested classes count (again).
/// Partial coverage shows the first three of these.
pub fn visible_tests(test_source: &str) -> Vec<String> {
    let tree = pivot_python::python::module::parse_tree(test_source, None);
    let mut classes: Vec<(usize, Node)> = Vec::new();
    collect_classes(tree.root_node(), 1, &mut classes);
    // ast.walk is breadth-first: by depth, then source order (the sort is stable).
    classes.sort_by_key(|(depth, _)| *depth);
    let mut names = Vec::new();
    for (_, class) in classes {
        collect_defs(class, test_source, &mut names);
    }
    names
}

/// Depth of a class in Python's AST: statements that own a body add one level, `elif` is an
/// `If` nested in the previous one's `orelse`, and `except` is an `ExceptHandler` node.
fn collect_classes<'t>(node: Node<'t>, depth: usize, out: &mut Vec<(usize, Node<'t>)>) {
    let mut cursor = node.walk();
    let mut elifs_seen = 0;
    for child in node.named_children(&mut cursor) {
        let child_depth = match child.kind() {
            "class_definition" => {
                out.push((depth, child));
                depth + 1
            }
            "function_definition"
            | "for_statement"
            | "while_statement"
            | "with_statement"
            | "try_statement"
            | "if_statement"
            | "match_statement"
            | "except_clause"
            | "except_group_clause"
            | "case_clause" => depth + 1,
            "elif_clause" => {
                elifs_seen += 1;
                depth + elifs_seen
            }
            "else_clause" if node.kind() == "if_statement" => depth + elifs_seen,
            _ => depth,
        };
        collect_classes(child, child_depth, out);
    }
}

fn collect_defs(node: Node, src: &str, out: &mut Vec<String>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        if child.kind() == "function_definition" && !is_async(child) {
            if let Some(name) = child.child_by_field_name("name") {
                out.push(src[name.start_byte()..name.end_byte()].to_string());
            }
        }
        collect_defs(child, src, out);
    }
}

fn is_async(def: Node) -> bool {
    def.child(0).map(|c| c.kind() == "async").unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Details;

    fn problem(test: &str) -> Problem {
        Problem {
            task_id: "T/0".into(),
            instruct_prompt: String::new(),
            code_prompt: String::new(),
            canonical_solution: String::new(),
            test: test.into(),
            entry_point: "task_func".into(),
            complete_prompt: String::new(),
        }
    }

    fn failed(details: &[(&str, &str)]) -> EvalResult {
        EvalResult {
            task_id: "T/0".into(),
            solution: String::new(),
            status: Status::Fail,
            details: Details(
                details
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            tamper: Vec::new(),
            tamper_check: None,
            output: String::new(),
        }
    }

    const TEST: &str = "import unittest\nclass TestCases(unittest.TestCase):\n    def setUp(self):\n        pass\n    def test_a(self):\n        def helper(): pass\n    async def test_x(self): pass\n    def test_b(self): pass\n";

    #[test]
    fn visible_tests_follow_extract_methods() {
        assert_eq!(visible_tests(TEST), ["setUp", "test_a", "helper", "test_b"]);
        let nested = "if x:\n    pass\nelif y:\n    class Deep:\n        def d(self): pass\nclass A:\n    def a(self): pass\n    class B:\n        def b(self): pass\n";
        // Breadth-first: A (depth 1) first, collecting its nested B's method; then B (depth 2);
        // then Deep (depth 3, inside an elif).
        assert_eq!(visible_tests(nested), ["a", "b", "b", "d"]);
    }

    #[test]
    fn full_and_partial_feedback() {
        let p = problem(TEST);
        let r = failed(&[("test_b", "TB"), ("test_a", "TA\nline")]);
        assert_eq!(execution(&r, &p, false), "TEST_B\nTB\n\nTEST_A\nTA\nline\n");
        // test_b is the 4th def, so hidden under partial coverage.
        assert_eq!(execution(&r, &p, true), "TEST_A\nTA\nline\n");
        let hidden = failed(&[("test_b", "TB")]);
        assert_eq!(execution(&hidden, &p, true), PASSED_ALL_TEST_RUNS);
        let all = failed(&[("ALL", "boom")]);
        assert_eq!(execution(&all, &p, true), PASSED_ALL_TEST_RUNS);
        assert_eq!(execution(&all, &p, false), "ALL\nboom\n");
        let mut pass = failed(&[]);
        pass.status = Status::Pass;
        assert_eq!(execution(&pass, &p, false), PASSED_ALL_TEST_RUNS);
    }

    #[test]
    fn long_feedback_is_trimmed_head_and_tail() {
        let p = problem(TEST);
        let tb: String = (0..400)
            .map(|i| format!("line {i:03} {}\n", "x".repeat(20)))
            .collect();
        let r = failed(&[("test_a", &tb)]);
        let out = execution(&r, &p, false);
        assert!(out.starts_with("TEST_A\nline 000"));
        assert!(out.contains("\n...\n"));
        assert!(out.ends_with("line 399 xxxxxxxxxxxxxxxxxxxx\n"), "{out}");
        let parts: Vec<&str> = out.split("\n...\n").collect();
        assert_eq!(splitlines(parts[0]).len(), 5);
        assert_eq!(
            parts[1].split('\n').count(),
            5,
            "the last line is the empty one"
        );
        // Short text is left alone.
        let short = failed(&[("test_a", "x")]);
        assert_eq!(execution(&short, &p, false), "TEST_A\nx\n");
    }

    #[test]
    fn trim_matches_python_slicing() {
        assert_eq!(trim("abcdef", 2, 3), "ab\n...\ndef");
        assert_eq!(trim("a\nb\nc\nd", 10, 10), "a\nb\n...\nc\nd");
        assert_eq!(trim("", 10, 10), "\n...\n");
        assert_eq!(trim("abc", 0, 0), "\n...\nabc");
        assert_eq!(splitlines("a\r\nb\rc\u{2028}d\n"), ["a", "b", "c", "d"]);
    }
}
