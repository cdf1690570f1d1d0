//! Source ranges. A span keeps byte offsets plus line and byte column (what tree-sitter
//! gives); UTF-16 columns, which LSP wants, are derived from the text on demand so the
//! batch scorer never pays for them.

use serde::Serialize;

/// A position: 0-based line and 0-based column in bytes of that line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Span {
    pub start_byte: usize,
    pub end_byte: usize,
    pub start: Pos,
    pub end: Pos,
}

impl Span {
    pub fn of(node: &tree_sitter::Node) -> Span {
        let (s, e) = (node.start_position(), node.end_position());
        Span {
            start_byte: node.start_byte(),
            end_byte: node.end_byte(),
            start: Pos {
                line: s.row as u32,
                col: s.column as u32,
            },
            end: Pos {
                line: e.row as u32,
                col: e.column as u32,
            },
        }
    }

    /// The span of `text[start..end]`, computing lines by counting newlines.
    pub fn from_bytes(text: &str, start: usize, end: usize) -> Span {
        Span {
            start_byte: start,
            end_byte: end,
            start: pos_at(text, start),
            end: pos_at(text, end),
        }
    }

    /// The whole first line (where file-level findings are reported).
    pub fn first_line(text: &str) -> Span {
        let end = text.find('\n').unwrap_or(text.len());
        Span::from_bytes(text, 0, end)
    }

    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        src.get(self.start_byte..self.end_byte).unwrap_or("")
    }

    /// (line, UTF-16 column) of the start and end, as LSP counts them.
    pub fn utf16(&self, src: &str) -> ((u32, u32), (u32, u32)) {
        (
            (
                self.start.line,
                utf16_col(src, self.start_byte, self.start.col),
            ),
            (self.end.line, utf16_col(src, self.end_byte, self.end.col)),
        )
    }
}

fn pos_at(text: &str, byte: usize) -> Pos {
    let before = &text.as_bytes()[..byte.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count();
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    Pos {
        line: line as u32,
        col: (before.len() - line_start) as u32,
    }
}

/// UTF-16 column of the byte offset `byte`, whose byte column is `col`.
pub fn utf16_col(src: &str, byte: usize, col: u32) -> u32 {
    let start = byte.saturating_sub(col as usize);
    match src.get(start..byte) {
        Some(s) => s.encode_utf16().count() as u32,
        // Not on a char boundary (should not happen with tree-sitter spans): fall back.
        None => String::from_utf8_lossy(&src.as_bytes()[start..byte.min(src.len())])
            .encode_utf16()
            .count() as u32,
    }
}

/// UTF-16 columns of many spans of one text, each in constant time: `utf16_col` counts
/// from the start of the line, which is quadratic over the items of one long line (a `def`
/// with 40,000 arguments). Built in one pass over the text.
///
/// A UTF-8 character is one UTF-16 unit per byte except for its extra bytes: a 2-byte
/// character saves 1, a 3-byte one 2, a 4-byte one (a surrogate pair) 2. `saved(b)`, the
/// bytes saved before offset `b`, is kept every `STEP` bytes and counted from there.
pub struct Utf16Columns<'a> {
    src: &'a [u8],
    /// `saved` at every multiple of `STEP`.
    checkpoints: Vec<u64>,
}

const STEP: usize = 256;

fn saved_by_lead_byte(b: u8) -> u64 {
    match b {
        0xC0..=0xDF => 1,
        0xE0..=0xFF => 2,
        _ => 0,
    }
}

impl<'a> Utf16Columns<'a> {
    pub fn new(src: &'a str) -> Utf16Columns<'a> {
        let bytes = src.as_bytes();
        let mut checkpoints = Vec::with_capacity(bytes.len() / STEP + 1);
        let mut saved = 0;
        for chunk in bytes.chunks(STEP) {
            checkpoints.push(saved);
            saved += chunk.iter().map(|&b| saved_by_lead_byte(b)).sum::<u64>();
        }
        checkpoints.push(saved);
        Utf16Columns {
            src: bytes,
            checkpoints,
        }
    }

    /// Bytes saved by UTF-16 before byte offset `at`.
    fn saved(&self, at: usize) -> u64 {
        let at = at.min(self.src.len());
        let k = at / STEP;
        if self.checkpoints.get(k + 1) == Some(&self.checkpoints[k]) {
            // Nothing but ASCII in this stretch.
            return self.checkpoints[k];
        }
        self.checkpoints[k]
            + self.src[k * STEP..at]
                .iter()
                .map(|&b| saved_by_lead_byte(b))
                .sum::<u64>()
    }

    /// UTF-16 column of byte offset `byte`, whose byte column is `col` (as `utf16_col`).
    pub fn col(&self, byte: usize, col: u32) -> u32 {
        let start = byte.saturating_sub(col as usize);
        (byte.min(self.src.len()) as u64
            - start.min(self.src.len()) as u64
            - (self.saved(byte) - self.saved(start))) as u32
    }

    /// (line, UTF-16 column) of the start and end of `span`, as `Span::utf16`.
    pub fn span(&self, span: &Span) -> ((u32, u32), (u32, u32)) {
        (
            (span.start.line, self.col(span.start_byte, span.start.col)),
            (span.end.line, self.col(span.end_byte, span.end.col)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_count_surrogate_pairs_and_cjk() {
        let src = "x = 1\ns = '😀' + 名前\n";
        let start = src.find("名前").unwrap();
        let span = Span::from_bytes(src, start, start + "名前".len());
        assert_eq!(span.start, Pos { line: 1, col: 13 });
        // 's = ' (4) + quote (1) + emoji (2 units) + quote (1) + ' + ' (3) = 11
        assert_eq!(span.utf16(src), ((1, 11), (1, 13)));
        assert_eq!(Utf16Columns::new(src).span(&span), ((1, 11), (1, 13)));
    }

    #[test]
    fn the_column_index_agrees_with_counting_on_every_character() {
        let line: String = (0..200)
            .map(|i| ["a", "é", "名", "😀", "\t"][i % 5])
            .collect();
        let src = format!("x = 1\n{line}\n{line}{line}\nz\n");
        let cols = Utf16Columns::new(&src);
        let mut line_start = 0;
        for (at, c) in src.char_indices().chain([(src.len(), '\n')]) {
            let col = (at - line_start) as u32;
            assert_eq!(cols.col(at, col), utf16_col(&src, at, col), "at {at}");
            if c == '\n' {
                line_start = at + 1;
            }
        }
    }
}
