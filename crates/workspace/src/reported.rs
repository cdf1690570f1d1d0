//! A finding as the faces report it: its range in UTF-16 columns (as LSP counts), a
//! severity, a source, a code and the message. The language server's diagnostics and the MCP
//! server's findings are both made here from the same `Finding`, so that what an editor, a
//! `check` run (which reads the server's diagnostics) and an agent see cannot differ.

use crate::findings::Finding;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A 0-based line and UTF-16 column, LSP's `Position`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub struct Position {
    pub line: u32,
    pub character: u32,
}

/// LSP's `Range`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub struct Range {
    pub start: Position,
    pub end: Position,
}

/// LSP's `DiagnosticSeverity` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error = 1,
    Warning = 2,
    Information = 3,
}

/// One finding of one text, before any protocol's type.
#[derive(Clone, Debug, PartialEq)]
pub struct Reported {
    pub range: Range,
    pub severity: Severity,
    /// `pivot` or `python` (a syntax error).
    pub source: &'static str,
    /// The pivot's id, `unused-suppression`, or none (a syntax error, a notice).
    pub code: Option<String>,
    pub message: String,
}

/// `f` (a finding of the text `src`) as the faces report it.
pub fn reported(src: &str, f: &Finding) -> Reported {
    let ((l0, c0), (l1, c1)) = f.span().utf16(src);
    let range = Range {
        start: Position {
            line: l0,
            character: c0,
        },
        end: Position {
            line: l1,
            character: c1,
        },
    };
    let (severity, source, code) = match f {
        Finding::Pivot { pivot, .. } => (Severity::Warning, "pivot", Some(pivot.id.clone())),
        Finding::Syntax { .. } => (Severity::Error, "python", None),
        Finding::Unused { .. } => (
            Severity::Warning,
            "pivot",
            Some(crate::suppress::UNUSED.to_string()),
        ),
        Finding::Notice { .. } => (Severity::Information, "pivot", None),
    };
    Reported {
        range,
        severity,
        source,
        code,
        message: f.message().to_string(),
    }
}

/// The rule a finding is reported under in `check`'s formats: the code, or `syntax-error`
/// for a syntax error (which has none).
pub fn rule_id(source: &str, code: Option<&str>) -> String {
    match code {
        Some(c) => c.to_string(),
        None if source == "python" => SYNTAX_ERROR.to_string(),
        None => String::new(),
    }
}

pub const SYNTAX_ERROR: &str = "syntax-error";

/// A finding with its file, in the shape of `check --format json`'s findings (the same keys,
/// the severity as LSP's number, the code as [`rule_id`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileFinding {
    /// Relative to the root, `/`-separated.
    pub path: String,
    pub range: Range,
    /// 1 error, 2 warning, 3 information.
    pub severity: u8,
    pub source: String,
    /// The pivot's id, `syntax-error` or `unused-suppression` (empty for a notice).
    pub code: String,
    pub message: String,
}

impl FileFinding {
    pub fn new(path: &str, r: Reported) -> FileFinding {
        FileFinding {
            path: path.to_string(),
            range: r.range,
            severity: r.severity as u8,
            source: r.source.to_string(),
            code: rule_id(r.source, r.code.as_deref()),
            message: r.message,
        }
    }
}

/// In `check`'s order: by path, start, end, code and message.
pub fn sort(findings: &mut [FileFinding]) {
    findings.sort_by(|a, b| {
        (&a.path, a.range.start, a.range.end, &a.code, &a.message).cmp(&(
            &b.path,
            b.range.start,
            b.range.end,
            &b.code,
            &b.message,
        ))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use pivot_python::python::Span;

    #[test]
    fn columns_count_utf16_units_and_a_syntax_error_is_reported_as_check_names_it() {
        // "𝒳" is two UTF-16 units and four bytes.
        let src = "s = '𝒳'; def f(:\n";
        let start = src.find("def").unwrap();
        let f = Finding::Syntax {
            span: Span::from_bytes(src, start, start + 3),
            message: "syntax error: invalid syntax".into(),
        };
        let r = reported(src, &f);
        assert_eq!(r.range.start.character, 10);
        assert_eq!(r.range.end.character, 13);
        assert_eq!(
            (r.severity, r.source, r.code.clone()),
            (Severity::Error, "python", None)
        );
        let ff = FileFinding::new("a.py", r);
        assert_eq!((ff.code.as_str(), ff.severity), (SYNTAX_ERROR, 1));
    }
}
