//! Text from a checked tree (file names, symlink targets, messages quoting code) made safe
//! for where the CLI prints it: a terminal or a CI log. A GitHub Actions runner reads every
//! line of a step's stdout and stderr for workflow commands: a line that starts with `::`
//! (after blanks; `::error file=...::...`, `::add-mask::...`, `::stop-commands::...`) and
//! the older form `##[command]` anywhere in a line. A file named
//! `x\n::error file=a.py::forged` printed raw starts such a line.
//!
//! So what comes from outside never brings a line break, a control character (terminal
//! escapes), a line or paragraph separator, a bidirectional override, `##[`, or a `::` at
//! the start of a line: [`path`] quotes a path that holds any of them (git's style: `"..."`
//! with backslash escapes; other paths print as they are), [`text`] escapes them inside
//! free text (`##[` as `\u{23}#[`), and [`json`] escapes `##[` in serialized JSON (JSON's own escaping already
//! takes care of the rest).

use std::borrow::Cow;

/// Characters never printed raw: C0 and C1 controls and DEL, Unicode's line and
/// paragraph separators, and the bidirectional controls that reorder what a reader sees.
fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
        )
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

/// Whether `s`, printed where a line may start, needs care.
fn needs_care(s: &str) -> bool {
    s.chars().any(is_hidden)
        || s.contains("##[")
        || s.trim_start().starts_with("::")
        || s.starts_with(char::is_whitespace)
}

/// A path (or any name) for a text report or log line: as it is when it is plain, else in
/// double quotes with `\"`, `\\`, `\n`, `\t`, `\u{..}` escapes (so the quoted form is
/// unambiguous and a line never starts with what the name holds).
pub fn path(s: &str) -> Cow<'_, str> {
    if !needs_care(s) && !s.starts_with('"') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    out.push('"');
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("##[") {
            out.push_str("\\u{23}");
        } else if c == '"' || c == '\\' {
            out.push('\\');
            out.push(c);
        } else if is_hidden(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    out.push('"');
    Cow::Owned(out)
}

/// Free text (a message, a problem) inside a line: hidden characters escaped (`\n`,
/// `\u{1b}`), `##[` broken as `\u{23}#[`, and a leading `::` as `\u{3a}:`. Plain text is
/// unchanged.
pub fn text(s: &str) -> Cow<'_, str> {
    if !needs_care(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let lead = s.len() - s.trim_start().len();
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        let at = s.len() - rest.len();
        if rest.starts_with("##[") {
            out.push_str("\\u{23}");
        } else if at == lead && rest.starts_with("::") {
            out.push_str("\\u{3a}");
        } else if is_hidden(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// Multi-line text (a TOML error with the line it is about): each line as [`text`] makes
/// it (so no line starts a workflow command), the line breaks kept.
pub fn lines(s: &str) -> String {
    s.lines().map(text).collect::<Vec<_>>().join("\n")
}

/// Serialized JSON with `##[` written `#\u0023[` (the same JSON value: it can only occur
/// inside a string). Line breaks and controls are escaped by JSON itself, and no line of
/// JSON starts with `:`.
pub fn json(s: String) -> String {
    if s.contains("##[") {
        s.replace("##[", "#\\u0023[")
    } else {
        s
    }
}

/// A writer of JSON that writes `[` as `\u005b` where it follows `##` (which only a
/// string can hold): `json` for JSON that is streamed rather than held.
pub struct JsonWriter<W: std::io::Write> {
    inner: W,
    /// The last two bytes written.
    last: [u8; 2],
}

impl<W: std::io::Write> JsonWriter<W> {
    pub fn new(inner: W) -> JsonWriter<W> {
        JsonWriter {
            inner,
            last: [0, 0],
        }
    }
}

impl<W: std::io::Write> std::io::Write for JsonWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let before = |i: usize, back: usize| {
            if i >= back {
                buf[i - back]
            } else {
                self.last[2 - (back - i)]
            }
        };
        let mut from = 0;
        for i in memchr::memchr_iter(b'[', buf) {
            if before(i, 1) == b'#' && before(i, 2) == b'#' {
                self.inner.write_all(&buf[from..i])?;
                self.inner.write_all(b"\\u005b")?;
                from = i + 1;
            }
        }
        self.inner.write_all(&buf[from..])?;
        self.last = match buf.len() {
            0 => self.last,
            1 => [self.last[1], buf[0]],
            n => [buf[n - 2], buf[n - 1]],
        };
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a GitHub Actions runner would take as a workflow command in this output.
    fn forges_a_command(out: &str) -> bool {
        out.split(['\n', '\r'])
            .any(|l| l.trim_start().starts_with("::") || l.contains("##["))
    }

    #[test]
    fn plain_names_and_text_are_unchanged() {
        for s in ["app/models.py", "名前/ü.py", "a b.py", "x::y.py", "C:\\x"] {
            assert_eq!(path(s), s);
            assert_eq!(text(s), s);
        }
    }

    #[test]
    fn hostile_names_cannot_start_a_workflow_command() {
        let evil = [
            "x\n::error file=a.py,line=1::forged",
            "x\r::add-mask::secret",
            "::error::at the start",
            "  ::warning::after blanks",
            "\u{3000}::notice::after an ideographic space",
            "a ##[error]v1 command",
            "tab\there\u{1b}[31mred\u{2028}sep\u{202e}rtl",
            "\"quoted\".py",
        ];
        for s in evil {
            let p = path(s);
            let t = text(s);
            let line = format!("{p}:1:1: [x] {t}");
            assert!(!forges_a_command(&line), "{s:?} -> {line:?}");
            assert!(!forges_a_command(&format!("warning: {p}: {t}")));
            assert!(
                !p.chars().any(is_hidden) && !t.chars().any(is_hidden),
                "{p:?}"
            );
            assert!(p.starts_with('"') && p.ends_with('"'), "{p}");
        }
        assert_eq!(path("x\n::e"), "\"x\\n::e\"");
        assert_eq!(path("a\"b\\c\u{1b}"), "\"a\\\"b\\\\c\\u{1b}\"");
        assert_eq!(text("::error::x"), "\\u{3a}:error::x");
        assert_eq!(text("a ##[error]b"), "a \\u{23}#[error]b");
        let j = json(serde_json::to_string(&serde_json::json!({"p": "##[error]x\n::e"})).unwrap());
        assert!(!forges_a_command(&j), "{j}");
        let back: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(back["p"], "##[error]x\n::e");
        let mut streamed = Vec::new();
        let v = serde_json::json!({"a": ["##[", "#", "#[x"], "b": "###[##["});
        serde_json::to_writer_pretty(JsonWriter::new(&mut streamed), &v).unwrap();
        let streamed = String::from_utf8(streamed).unwrap();
        assert!(!forges_a_command(&streamed), "{streamed}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&streamed).unwrap(),
            v
        );
    }
}
