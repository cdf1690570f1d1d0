//! Lines inside brackets, joined: CPython's tokenizer ignores indentation between
//! brackets, while tree-sitter-python's scanner reads a bracketed line indented less than
//! its block (`def f():` / `        (bar.` / `    baz)`) as a dedent and reports an error.
//! `Module::parse` re-parses such a text with every newline inside brackets turned into a
//! space: the same bytes at the same offsets, so ranges only need their lines recounted.

use super::span::{Pos, Span};
use super::syntax::skip_string;

/// `src` with each newline (and `\` continuation, and comment) inside brackets replaced by
/// spaces, or None when there is none. Byte length and every other byte are unchanged.
pub fn join_bracketed_lines(src: &str) -> Option<String> {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let (mut depth, mut i, mut joined) = (0usize, 0usize, false);
    while i < b.len() {
        match b[i] {
            b'#' => {
                let end = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |n| i + n);
                // A comment inside brackets would swallow the line joined after it.
                if depth > 0 {
                    blank(&mut out, i, end);
                }
                i = end;
            }
            b'\'' | b'"' => i = skip_string(b, i),
            b'(' | b'[' | b'{' => {
                depth += 1;
                i += 1;
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'\\' if depth > 0 && matches!(b.get(i + 1), Some(b'\n' | b'\r')) => {
                out[i] = b' ';
                i += 1;
            }
            b'\n' | b'\r' if depth > 0 => {
                out[i] = b' ';
                joined = true;
                i += 1;
            }
            _ => i += 1,
        }
    }
    // Only ASCII bytes were replaced by ASCII spaces: still UTF-8.
    joined.then(|| String::from_utf8(out).unwrap_or_default())
}

fn blank(out: &mut [u8], from: usize, to: usize) {
    // Whole characters only: a comment's bytes from `#` to the newline.
    for c in &mut out[from..to] {
        *c = b' ';
    }
}

/// Recounts the lines and columns of spans over the original text from their bytes.
pub struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    pub fn new(src: &str) -> Lines {
        let starts = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', src.as_bytes()).map(|i| i + 1))
            .collect();
        Lines { starts }
    }

    fn pos(&self, byte: usize) -> Pos {
        let line = self.starts.partition_point(|&s| s <= byte) - 1;
        Pos {
            line: line as u32,
            col: (byte - self.starts[line]) as u32,
        }
    }

    pub fn span(&self, s: Span) -> Span {
        Span {
            start: self.pos(s.start_byte),
            end: self.pos(s.end_byte),
            ..s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_newlines_inside_brackets_are_joined() {
        let src =
            "def f():\n        (bar.\n    baz)  # c\n    x = [1,  # one\n2]\n    s = '(\\n'\n";
        let j = join_bracketed_lines(src).unwrap();
        assert_eq!(j.len(), src.len());
        assert_eq!(
            j,
            "def f():\n        (bar.     baz)  # c\n    x = [1,        2]\n    s = '(\\n'\n"
        );
        assert_eq!(join_bracketed_lines("x = (1, 2)\ny = 3\n"), None);
        assert_eq!(join_bracketed_lines("s = '''(\n'''\n"), None);
    }

    #[test]
    fn lines_are_recounted_from_bytes() {
        let src = "ab\ncd\n\nef";
        let lines = Lines::new(src);
        let s = lines.span(Span::from_bytes("ab cd  ef", 7, 9));
        assert_eq!(
            (s.start.line, s.start.col, s.end.line, s.end.col),
            (3, 0, 3, 2)
        );
    }
}
