//! Translations between the workspace's types and LSP's: positions, ranges, diagnostics,
//! edits, and JSON-RPC errors.

use pivot_exec::doc_tests::Finding as TestFailure;
use pivot_python::python::Span;
use pivot_workspace::document::{Document, Utf16Pos};
use pivot_workspace::findings::Finding;
use pivot_workspace::fixes::Edit;
use pivot_workspace::reported::{reported, Severity};
use pivot_workspace::test_runs::TestRuns;
use serde_json::json;
use tower_lsp_server::jsonrpc::{Error, ErrorCode};
use tower_lsp_server::ls_types::{
    Diagnostic, DiagnosticSeverity, NumberOrString, Position, Range, TextEdit,
};

pub fn utf16(p: Position) -> Utf16Pos {
    Utf16Pos {
        line: p.line,
        col: p.character,
    }
}

pub fn position(p: Utf16Pos) -> Position {
    Position::new(p.line, p.col)
}

/// A core span (tree-sitter rows, byte columns) as an LSP range (UTF-16 columns).
pub fn span_range(src: &str, span: Span) -> Range {
    let ((l0, c0), (l1, c1)) = span.utf16(src);
    Range::new(Position::new(l0, c0), Position::new(l1, c1))
}

pub fn text_edit(doc: &Document, e: &Edit) -> TextEdit {
    TextEdit {
        range: Range::new(position(doc.pos_of(e.start)), position(doc.pos_of(e.end))),
        new_text: e.text.clone(),
    }
}

/// A finding as an LSP diagnostic. A pivot's diagnostic names the pivot in `code`; it has
/// no `data`: a document's diagnostics are all sent again after every edit (100,000 of them
/// for `check` on the standard library), and a JSON object per diagnostic was the largest
/// part of building them.
/// `pivot` is the severity a pivot's finding is published with (the `severity` setting).
pub fn diagnostic(src: &str, f: &Finding, pivot: Severity) -> Diagnostic {
    diagnostic_with(src, f, pivot)
}

/// `diagnostic` of each finding.
pub fn diagnostics(src: &str, findings: &[Finding], pivot: Severity) -> Vec<Diagnostic> {
    findings
        .iter()
        .map(|f| diagnostic_with(src, f, pivot))
        .collect()
}

fn diagnostic_with(src: &str, f: &Finding, pivot: Severity) -> Diagnostic {
    // The translation every face shares (reported.rs), then LSP's types.
    let mut r = reported(src, f);
    if matches!(f, Finding::Pivot { .. }) {
        r.severity = pivot;
    }
    let p = |p: pivot_workspace::reported::Position| Position::new(p.line, p.character);
    Diagnostic {
        range: Range::new(p(r.range.start), p(r.range.end)),
        severity: Some(match r.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Information => DiagnosticSeverity::INFORMATION,
        }),
        code: r.code.map(NumberOrString::String),
        source: Some(r.source.into()),
        message: r.message,
        ..Diagnostic::default()
    }
}

/// The last test run's failures of document `key` (they stay until the next run or close).
pub fn test_diagnostics(tests: &TestRuns, key: &str, src: &str) -> Vec<Diagnostic> {
    let Some(task) = tests.get(key).map(|l| l.task.as_str()) else {
        return Vec::new();
    };
    tests
        .failures(key, src)
        .iter()
        .map(|f| test_diagnostic(src, task, f))
        .collect()
}

/// A failing test on its document line (the line's text without its indentation), source
/// `tests`, the test name as the code.
pub fn test_diagnostic(src: &str, task: &str, f: &TestFailure) -> Diagnostic {
    let line = src.split('\n').nth(f.line).unwrap_or("");
    let line = line.strip_suffix('\r').unwrap_or(line);
    let indent = line.len() - line.trim_start().len();
    let start = line[..indent].encode_utf16().count() as u32;
    let end = line.trim_end().encode_utf16().count() as u32;
    let l = f.line as u32;
    let mut message = f.message.clone();
    if let Some(t) = &f.test_line {
        message.push_str(&format!("\n  at: {t}"));
    }
    Diagnostic {
        range: Range::new(Position::new(l, start), Position::new(l, end.max(start))),
        severity: Some(DiagnosticSeverity::ERROR),
        code: Some(NumberOrString::String(f.test.clone())),
        source: Some("tests".into()),
        message,
        data: Some(json!({
            "task": task,
            "test": f.test,
            "test_line": f.test_line,
            "in_document": f.in_document,
            "traceback": f.traceback,
        })),
        ..Diagnostic::default()
    }
}

pub fn invalid_params(message: impl Into<String>) -> Error {
    Error::invalid_params(message.into())
}

/// LSP's RequestFailed: the request was well formed but could not be carried out (a file
/// is missing or malformed).
pub fn request_failed(message: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::ServerError(-32803),
        message: message.into().into(),
        data: None,
    }
}
