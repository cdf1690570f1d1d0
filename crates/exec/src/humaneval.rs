//! Converts HumanEval's `def check(candidate):` into a `unittest` `TestCases` class with one
//! method per top-level assert (`test_case_1..n`, in order), so partial coverage means the
//! first three. Rules:
//! - a top-level `assert` is one case;
//! - a compound statement that contains asserts (e.g. a `for` loop of asserts) is one case too;
//! - every other statement is set-up, replayed (in order) at the start of each later case;
//! - a `check` with no assert at all becomes one case holding the whole body.
//!
//! Statements are copied verbatim (only the first line gets the body's indentation), so
//! multi-line strings and line continuations are untouched.

use anyhow::{bail, Context, Result};
use tree_sitter::Node;

/// The last line of every converted test source: how a problem is known to hold HumanEval's
/// value tests (decided out of the model's process) rather than BigCodeBench's unittest ones.
pub const CONVERTED_MARKER: &str = "# pivot-lsp: HumanEval check(candidate) as TestCases\n";

pub fn to_unittest(check_source: &str, entry_point: &str) -> Result<String> {
    if !is_identifier(entry_point) {
        bail!("entry_point {entry_point:?} is not a Python identifier");
    }
    let tree = pivot_python::python::module::parse_tree(check_source, None);
    let root = tree.root_node();
    let check = find_check(root, check_source).context("no top-level `def check(candidate):`")?;
    let body = check
        .child_by_field_name("body")
        .context("`check` has no body")?;
    let src = check_source.as_bytes();

    let mut stmts: Vec<Node> = Vec::new();
    let mut cursor = body.walk();
    for child in body.named_children(&mut cursor) {
        if child.kind() != "comment" {
            stmts.push(child);
        }
    }
    let Some(first) = stmts.first() else {
        bail!("`check` has an empty body");
    };
    let indent = line_indent(check_source, first.start_byte());

    // Each case is a list of statement texts (the first line without indentation).
    let text = |n: &Node| String::from_utf8_lossy(&src[n.start_byte()..n.end_byte()]).into_owned();
    let mut setup: Vec<String> = Vec::new();
    let mut cases: Vec<Vec<String>> = Vec::new();
    for s in &stmts {
        if s.kind() == "assert_statement" || contains_assert(*s) {
            let mut case = setup.clone();
            case.push(text(s));
            cases.push(case);
        } else {
            setup.push(text(s));
        }
    }
    if cases.is_empty() {
        cases.push(stmts.iter().map(text).collect());
    }

    let mut out = String::with_capacity(check_source.len() * 2 + 256);
    out.push_str(check_source);
    if !check_source.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("\n\nimport unittest\n\n\n");
    let direct = indent.len() >= 2 && indent.bytes().all(|b| b == b' ');
    if direct {
        // Method bodies at the original indentation; methods at half of it.
        let method_indent = &indent[..indent.len() / 2];
        out.push_str("class TestCases(unittest.TestCase):\n");
        for (i, case) in cases.iter().enumerate() {
            out.push_str(&format!("{method_indent}def test_case_{}(self):\n", i + 1));
            push_body(&mut out, &indent, entry_point, case);
        }
    } else {
        // Tabs or 1-space bodies cannot sit inside a method unchanged: run each case as a
        // module-level function called by its method.
        for (i, case) in cases.iter().enumerate() {
            out.push_str(&format!("def _pivot_case_{}():\n", i + 1));
            push_body(&mut out, &indent, entry_point, case);
            out.push('\n');
        }
        out.push_str("class TestCases(unittest.TestCase):\n");
        for i in 1..=cases.len() {
            out.push_str(&format!(
                "    def test_case_{i}(self):\n        _pivot_case_{i}()\n"
            ));
        }
    }
    out.push_str(CONVERTED_MARKER);
    Ok(out)
}

/// The converted test that a failure on `line` (1-based, of the `check` source) fails first:
/// `test_case_K` for the K-th assertion statement holding the line, or the next one when
/// the line is in set-up between them. `None` outside `check`'s body.
pub fn case_of_line(check_source: &str, line: u32) -> Option<String> {
    let tree = pivot_python::python::module::parse_tree(check_source, None);
    let check = find_check(tree.root_node(), check_source)?;
    let body = check.child_by_field_name("body")?;
    let row = line.checked_sub(1)? as usize;
    let mut cursor = body.walk();
    let stmts: Vec<Node> = body
        .named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect();
    let any_case = stmts
        .iter()
        .any(|s| s.kind() == "assert_statement" || contains_assert(*s));
    if !any_case {
        return (row >= body.start_position().row && row <= body.end_position().row)
            .then(|| "test_case_1".to_string());
    }
    let mut case = 0;
    for s in stmts {
        let is_case = s.kind() == "assert_statement" || contains_assert(s);
        if is_case {
            case += 1;
        }
        if row <= s.end_position().row {
            if row < s.start_position().row {
                return None;
            }
            return Some(format!(
                "test_case_{}",
                if is_case { case } else { case + 1 }
            ));
        }
    }
    None
}

fn push_body(out: &mut String, indent: &str, entry_point: &str, case: &[String]) {
    out.push_str(&format!("{indent}candidate = {entry_point}\n"));
    for stmt in case {
        out.push_str(indent);
        out.push_str(stmt);
        out.push('\n');
    }
    out.push('\n');
}

fn find_check<'t>(root: Node<'t>, src: &str) -> Option<Node<'t>> {
    let mut cursor = root.walk();
    let found = root.named_children(&mut cursor).find(|n| {
        n.kind() == "function_definition"
            && n.child_by_field_name("name")
                .map(|name| &src[name.start_byte()..name.end_byte()] == "check")
                .unwrap_or(false)
    });
    found
}

fn contains_assert(node: Node) -> bool {
    let mut cursor = node.walk();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == "assert_statement" {
            return true;
        }
        for c in n.named_children(&mut cursor) {
            stack.push(c);
        }
    }
    false
}

/// The whitespace between the start of the line holding `byte` and `byte`.
fn line_indent(src: &str, byte: usize) -> String {
    let line_start = src[..byte].rfind('\n').map(|i| i + 1).unwrap_or(0);
    src[line_start..byte]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_line_names_its_case() {
        let src = "def check(candidate):\n    assert candidate(1) == 1\n    x = 2\n    assert candidate(x) == 2\n    for i in range(3):\n        assert candidate(i) == i\n";
        assert_eq!(case_of_line(src, 2).as_deref(), Some("test_case_1"));
        assert_eq!(case_of_line(src, 3).as_deref(), Some("test_case_2"));
        assert_eq!(case_of_line(src, 4).as_deref(), Some("test_case_2"));
        assert_eq!(case_of_line(src, 6).as_deref(), Some("test_case_3"));
        assert_eq!(case_of_line(src, 1), None);
    }

    #[test]
    fn one_case_per_assert_with_setup_replayed() {
        let src = "METADATA = {}\n\ndef check(candidate):\n    # c\n    assert candidate(1) == 1\n    x = [1,\n  2]\n    assert candidate(x) == '''a\nb'''\n    for i in range(3):\n        assert candidate(i) == i\n";
        let t = to_unittest(src, "f").unwrap();
        assert!(t.starts_with(src));
        assert!(t.contains(
            "  def test_case_1(self):\n    candidate = f\n    assert candidate(1) == 1\n\n"
        ));
        assert!(t.contains("  def test_case_2(self):\n    candidate = f\n    x = [1,\n  2]\n    assert candidate(x) == '''a\nb'''\n"));
        assert!(t.contains("  def test_case_3(self):\n    candidate = f\n    x = [1,\n  2]\n    for i in range(3):\n        assert candidate(i) == i\n"));
        assert!(!t.contains("test_case_4"));
    }

    #[test]
    fn no_top_level_assert_is_one_case_and_tabs_fall_back() {
        let t = to_unittest("def check(candidate):\n\timport math\n\tprint(1)\n", "g").unwrap();
        assert!(t.contains("def _pivot_case_1():\n\tcandidate = g\n\timport math\n\tprint(1)\n"));
        assert!(t.contains("    def test_case_1(self):\n        _pivot_case_1()\n"));
        assert!(to_unittest("def other(): pass\n", "g").is_err());
        assert!(to_unittest("def check(c):\n    assert 1\n", "a b").is_err());
    }
}
