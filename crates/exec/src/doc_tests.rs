//! An editor document's code run against a task's tests: each failing test tied to a line
//! of the document, and a "k/n passed" summary for the entry point.
//!
//! The runner executes `code + "\n" + test` as the module `__test__.py`, so a traceback frame
//! `File "__test__.py", line N` with N inside the code is line N of the document; a failure
//! whose frames are all in the test code is shown on the entry point's `def` line.

use serde::Serialize;

use super::feedback::visible_tests;
use super::problem::Problem;
use super::result::{EvalResult, Status};
use super::runner::Runner;

/// The file name the harness compiles the module under.
const MODULE_FILE: &str = "__test__.py";

/// One failing test, placed in the document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Test method name (`test_case_2`), or `ALL` for a module-level crash, or `timeout`.
    pub test: String,
    /// 0-based line of the document.
    pub line: usize,
    /// One line: what went wrong (the traceback's last line).
    pub message: String,
    /// The test's own source line that failed (an `assert ...`), when the traceback names it.
    pub test_line: Option<String>,
    /// The traceback as the runner reported it.
    pub traceback: String,
    /// Whether `line` comes from a frame in the document (otherwise it is the entry point).
    pub in_document: bool,
}

/// The outcome of running a document's tests.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DocRun {
    pub task_id: String,
    pub status: Status,
    /// Test methods in the task's `TestCases` (0 when they could not be counted).
    pub total: usize,
    pub passed: usize,
    pub findings: Vec<Finding>,
    /// 0-based line of `def entry_point` in the document, if it is there.
    pub entry_line: Option<usize>,
    /// "3/7 passed", "7/7 passed", "timed out", ...
    pub summary: String,
}

/// Runs `code` (the whole document) against `problem`'s tests.
pub fn run_document(runner: &Runner, problem: &Problem, code: &str) -> DocRun {
    let result = runner.run_one(problem, code);
    map_result(problem, code, &result)
}

/// Places the failures of `result` (a run of `code` against `problem`) in the document.
pub fn map_result(problem: &Problem, code: &str, result: &EvalResult) -> DocRun {
    let entry_line = entry_line(code, &problem.entry_point);
    let names = test_names(&problem.test);
    let layout = ModuleLayout::new(code);
    let fallback = entry_line.unwrap_or(0);
    let mut findings = Vec::new();
    for (test, text) in result.details.iter() {
        let (line, in_document) = if test == "ALL" {
            match syntax_error_line(text).and_then(|n| layout.document_line(n)) {
                Some(l) => (l, true),
                None => (fallback, false),
            }
        } else {
            match layout.deepest_document_line(text) {
                Some(l) => (l, true),
                None => (fallback, false),
            }
        };
        let test_line = layout
            .first_test_frame(text)
            .and_then(|n| problem.test.lines().nth(n))
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
        let message = if test == "ALL" {
            format!("the module failed before any test ran: {}", last_line(text))
        } else {
            format!("{test} failed: {}", last_line(text))
        };
        findings.push(Finding {
            test: test.to_string(),
            line,
            message,
            test_line,
            traceback: text.to_string(),
            in_document,
        });
    }
    let total = names.len().max(failed_tests(result));
    let (passed, summary) = match result.status {
        Status::Pass => (total, format!("{total}/{total} passed")),
        Status::Timeout => {
            let why = if result.output.is_empty() {
                "the tests timed out".to_string()
            } else {
                format!("the tests timed out ({})", result.output.trim())
            };
            findings.push(Finding {
                test: "timeout".into(),
                line: fallback,
                message: why,
                test_line: None,
                traceback: String::new(),
                in_document: false,
            });
            (0, "timed out".to_string())
        }
        Status::Tampered => {
            findings.push(Finding {
                test: "tampered".into(),
                line: fallback,
                message: format!(
                    "the code tampered with the tests or the harness: {}",
                    result.tamper.join("; ")
                ),
                test_line: None,
                traceback: String::new(),
                in_document: false,
            });
            (0, "tampered".to_string())
        }
        Status::Fail if result.details.get("ALL").is_some() => (0, format!("0/{total} passed")),
        Status::Fail => {
            let p = total.saturating_sub(failed_tests(result));
            (p, format!("{p}/{total} passed"))
        }
    };
    DocRun {
        task_id: problem.task_id.clone(),
        status: result.status,
        total,
        passed,
        findings,
        entry_line,
        summary,
    }
}

fn failed_tests(result: &EvalResult) -> usize {
    result.details.iter().filter(|(n, _)| *n != "ALL").count()
}

/// Test method names unittest runs from `test_source` (methods starting with `test`, once each).
pub fn test_names(test_source: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in visible_tests(test_source) {
        if n.starts_with("test") && !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// 0-based line of `def NAME(` (or `async def`), preferring a top-level definition.
pub fn entry_line(code: &str, name: &str) -> Option<usize> {
    let defines = |line: &str| {
        let t = line.trim_start();
        let t = t.strip_prefix("async ").map(str::trim_start).unwrap_or(t);
        t.strip_prefix("def ")
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix(name))
            .is_some_and(|r| r.trim_start().starts_with('('))
    };
    let lines: Vec<&str> = code.lines().collect();
    lines
        .iter()
        .position(|l| !l.starts_with([' ', '\t']) && defines(l))
        .or_else(|| lines.iter().position(|l| defines(l)))
}

/// How the module's line numbers split between the document and the test code.
struct ModuleLayout {
    /// Module lines 1..=last_code_line are the document's.
    last_code_line: usize,
}

impl ModuleLayout {
    fn new(code: &str) -> Self {
        ModuleLayout {
            last_code_line: code.matches('\n').count() + 1,
        }
    }

    /// 0-based document line of 1-based module line `n`, if it is in the document.
    fn document_line(&self, n: usize) -> Option<usize> {
        (1..=self.last_code_line).contains(&n).then(|| n - 1)
    }

    /// The innermost frame of the module that lies in the document.
    fn deepest_document_line(&self, traceback: &str) -> Option<usize> {
        module_frames(traceback)
            .into_iter()
            .rev()
            .find_map(|n| self.document_line(n))
    }

    /// 0-based line within the test source of the outermost frame in the test code.
    fn first_test_frame(&self, traceback: &str) -> Option<usize> {
        module_frames(traceback)
            .into_iter()
            .find(|&n| n > self.last_code_line)
            .map(|n| n - self.last_code_line - 1)
    }
}

/// Line numbers of the traceback's frames in the tested module, outermost first.
fn module_frames(traceback: &str) -> Vec<usize> {
    let prefix = format!("File \"{MODULE_FILE}\", line ");
    traceback
        .lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix(&prefix)?;
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect()
}

/// `str(SyntaxError)` reads "invalid syntax (__test__.py, line 3)".
fn syntax_error_line(text: &str) -> Option<usize> {
    let marker = format!("({MODULE_FILE}, line ");
    let start = text.rfind(&marker)? + marker.len();
    let digits: String = text[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Details;

    fn problem() -> Problem {
        Problem {
            task_id: "T/1".into(),
            instruct_prompt: String::new(),
            code_prompt: "def add(a, b):\n".into(),
            canonical_solution: "    return a + b\n".into(),
            test: "import unittest\n\nclass TestCases(unittest.TestCase):\n    def test_case_1(self):\n        assert add(1, 2) == 3\n\n    def test_case_2(self):\n        assert add(0, 0) == 0\n\n    def test_case_3(self):\n        assert add(2, 2) == 4\n".into(),
            entry_point: "add".into(),
            complete_prompt: String::new(),
        }
    }

    fn result(status: Status, details: Vec<(&str, &str)>) -> EvalResult {
        EvalResult {
            task_id: "T/1".into(),
            solution: String::new(),
            status,
            details: Details(
                details
                    .into_iter()
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .collect(),
            ),
            tamper: Vec::new(),
            tamper_check: None,
            output: String::new(),
        }
    }

    // The document: 4 lines, `def add` on line 2 (0-based). Module: code (4 lines), then the
    // test starts at module line 5 (`import unittest`); test_case_1's assert is module line 9.
    const CODE: &str = "import math\n\ndef add(a, b):\n    return a / b";

    #[test]
    fn frames_inside_the_document_map_one_to_one() {
        let tb = "Traceback (most recent call last):\n  File \"__test__.py\", line 9, in test_case_1\n  File \"__test__.py\", line 4, in add\nZeroDivisionError: division by zero\n";
        let run = map_result(
            &problem(),
            CODE,
            &result(Status::Fail, vec![("test_case_2", tb)]),
        );
        assert_eq!(run.findings.len(), 1);
        let f = &run.findings[0];
        assert_eq!((f.line, f.in_document), (3, true));
        assert_eq!(
            f.message,
            "test_case_2 failed: ZeroDivisionError: division by zero"
        );
        assert_eq!(f.test_line.as_deref(), Some("assert add(1, 2) == 3"));
        assert_eq!(run.summary, "2/3 passed");
        assert_eq!((run.passed, run.total, run.entry_line), (2, 3, Some(2)));
    }

    #[test]
    fn failures_in_the_test_code_sit_on_the_entry_point() {
        let tb = "Traceback (most recent call last):\n  File \"__test__.py\", line 12, in test_case_2\nAssertionError\n";
        let run = map_result(
            &problem(),
            CODE,
            &result(Status::Fail, vec![("test_case_1", tb), ("test_case_2", tb)]),
        );
        assert!(run.findings.iter().all(|f| f.line == 2 && !f.in_document));
        assert_eq!(
            run.findings[0].test_line.as_deref(),
            Some("assert add(0, 0) == 0")
        );
        assert_eq!(run.summary, "1/3 passed");
    }

    #[test]
    fn trailing_newline_and_module_crash() {
        // With a final newline the module has an empty line 4 between code and test.
        let code = "def add(a, b):\n    return a +\n";
        let run = map_result(
            &problem(),
            code,
            &result(
                Status::Fail,
                vec![("ALL", "invalid syntax (__test__.py, line 2)")],
            ),
        );
        assert_eq!(run.findings[0].line, 1);
        assert!(run.findings[0].in_document);
        assert_eq!(run.summary, "0/3 passed");
        let run = map_result(
            &problem(),
            code,
            &result(Status::Fail, vec![("ALL", "name 'np' is not defined")]),
        );
        assert_eq!(
            (run.findings[0].line, run.findings[0].in_document),
            (0, false)
        );
        // A syntax error reported inside the test code is not a document line.
        let run = map_result(
            &problem(),
            code,
            &result(Status::Fail, vec![("ALL", "bad (__test__.py, line 5)")]),
        );
        assert!(!run.findings[0].in_document);
    }

    #[test]
    fn pass_and_timeout() {
        let run = map_result(&problem(), CODE, &result(Status::Pass, vec![]));
        assert_eq!(run.summary, "3/3 passed");
        assert!(run.findings.is_empty());
        let run = map_result(&problem(), CODE, &result(Status::Timeout, vec![]));
        assert_eq!(run.summary, "timed out");
        assert_eq!(run.findings[0].line, 2);
    }

    #[test]
    fn entry_line_prefers_top_level() {
        let code = "class A:\n    def f(self):\n        pass\n\nasync def f (x):\n    pass\n";
        assert_eq!(entry_line(code, "f"), Some(4));
        assert_eq!(entry_line("    def f(x): pass", "f"), Some(0));
        assert_eq!(entry_line("def ff(x): pass", "f"), None);
    }

    #[test]
    fn runs_a_document_through_the_runner() {
        let runner = match Runner::new(crate::RunnerConfig {
            timeout: std::time::Duration::from_secs(20),
            jobs: 1,
            ..Default::default()
        }) {
            Ok(r) => r,
            Err(e) => {
                pivot_test_support::test_skip::skip(&format!("no Python runner here: {e:#}"));
                return;
            }
        };
        let p = problem();
        let code = "def add(a, b):\n    if a == 2:\n        return 1 / 0\n    return a + b\n";
        let run = run_document(&runner, &p, code);
        assert_eq!(run.status, Status::Fail, "{run:?}");
        assert_eq!(run.summary, "2/3 passed");
        assert_eq!(run.findings.len(), 1);
        assert_eq!(run.findings[0].test, "test_case_3");
        assert_eq!(run.findings[0].line, 2, "{:?}", run.findings[0]);
        assert!(run.findings[0].message.contains("ZeroDivisionError"));
        assert_eq!(
            run.findings[0].test_line.as_deref(),
            Some("assert add(2, 2) == 4")
        );
        let ok = run_document(&runner, &p, "def add(a, b):\n    return a + b");
        assert_eq!((ok.summary.as_str(), ok.findings.len()), ("3/3 passed", 0));
    }
}
