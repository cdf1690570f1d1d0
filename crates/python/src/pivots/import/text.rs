//! An instruction file as pieces: markup that holds no instruction (headings, code blocks,
//! tables, HTML, rules) and sentences, each with the lines it spans. Markdown and plain
//! text alike: a list item or paragraph may wrap over several lines, and is cut into
//! sentences at `.`, `!`, `?` or `;` followed by a space (not after `e.g.`, `i.e.`, ...,
//! and never inside a `code span`).

/// A part of a file, with its 1-based first and last line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// One sentence of a paragraph or list item, list marker and blockquote marks removed.
    Sentence {
        line: usize,
        end_line: usize,
        text: String,
    },
    /// Lines that hold no instruction to read, and what they are.
    Markup {
        line: usize,
        end_line: usize,
        what: &'static str,
    },
}

/// The pieces of `text`, in order. Every non-blank line is in exactly one piece.
pub fn pieces(text: &str) -> Vec<Piece> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim();
        if t.is_empty() {
            i += 1;
            continue;
        }
        if let Some(fence) = fence_of(t) {
            // Up to the closing fence (same character, at least as long), or the end.
            let end = (i + 1..lines.len())
                .find(|&j| {
                    let u = lines[j].trim();
                    fence_of(u).is_some_and(|f| f.0 == fence.0 && f.1 >= fence.1)
                        && u.trim_start_matches(fence.0).trim().is_empty()
                })
                .unwrap_or(lines.len() - 1);
            out.push(markup(i, end, "a code block"));
            i = end + 1;
            continue;
        }
        if t.starts_with("<!--") {
            let end = (i..lines.len())
                .find(|&j| lines[j].contains("-->"))
                .unwrap_or(lines.len() - 1);
            out.push(markup(i, end, "an HTML comment"));
            i = end + 1;
            continue;
        }
        if let Some(what) = single_line_markup(t) {
            out.push(markup(i, i, what));
            i += 1;
            continue;
        }
        // A paragraph or list item: this line and the lines that continue it.
        let mut end = i;
        while end + 1 < lines.len() {
            let u = lines[end + 1].trim();
            if u.is_empty()
                || fence_of(u).is_some()
                || u.starts_with("<!--")
                || single_line_markup(u).is_some()
                || starts_item(strip_quote(u))
            {
                break;
            }
            end += 1;
        }
        sentences(&lines[i..=end], i, &mut out);
        i = end + 1;
    }
    out
}

fn markup(i: usize, end: usize, what: &'static str) -> Piece {
    Piece::Markup {
        line: i + 1,
        end_line: end + 1,
        what,
    }
}

/// A code fence's character and length (```` ``` ```` or `~~~`, three or more).
fn fence_of(t: &str) -> Option<(char, usize)> {
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.chars().take_while(|x| *x == c).count();
    (n >= 3).then_some((c, n))
}

fn single_line_markup(t: &str) -> Option<&'static str> {
    let t = strip_quote(t);
    if t.starts_with('#') && t.trim_start_matches('#').starts_with([' ', '\t'])
        || t.chars().all(|c| c == '#')
    {
        Some("a heading")
    } else if t.starts_with('|') {
        Some("a table row (tables are not read)")
    } else if t.len() >= 3
        && t.chars().filter(|c| !c.is_whitespace()).all(|c| c == '-')
        && t.contains("---")
    {
        Some("a horizontal rule or front matter fence")
    } else if t.len() >= 3
        && (t.chars().filter(|c| !c.is_whitespace()).all(|c| c == '*')
            || t.chars().filter(|c| !c.is_whitespace()).all(|c| c == '_'))
    {
        Some("a horizontal rule")
    } else if t.starts_with('<') && t.ends_with('>') {
        Some("HTML markup")
    } else if t.is_empty() {
        Some("an empty quote line")
    } else {
        None
    }
}

/// `> > text` -> `text`.
fn strip_quote(t: &str) -> &str {
    let mut t = t;
    while let Some(rest) = t.strip_prefix('>') {
        t = rest.trim_start();
    }
    t
}

/// The length of a list marker at the start of `t` (`-`, `*`, `+`, `1.`, `1)`, with a
/// task box `[ ]` / `[x]`), spaces after it included.
fn item_marker(t: &str) -> Option<usize> {
    let b = t.as_bytes();
    let mut n = if matches!(b.first(), Some(b'-' | b'*' | b'+')) {
        1
    } else {
        let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 || digits > 9 || !matches!(b.get(digits), Some(b'.' | b')')) {
            return None;
        }
        digits + 1
    };
    if !matches!(b.get(n), Some(b' ' | b'\t')) {
        return None;
    }
    while matches!(b.get(n), Some(b' ' | b'\t')) {
        n += 1;
    }
    for task in ["[ ] ", "[x] ", "[X] "] {
        if t[n..].starts_with(task) {
            n += task.len();
        }
    }
    Some(n)
}

fn starts_item(t: &str) -> bool {
    item_marker(t).is_some()
}

/// The sentences of one paragraph or list item (`lines`, the first at 0-based `first`).
fn sentences(lines: &[&str], first: usize, out: &mut Vec<Piece>) {
    // The block's text, its lines joined by spaces, and where each line starts in it.
    let mut text = String::new();
    let mut starts = Vec::new();
    for (k, l) in lines.iter().enumerate() {
        let mut t = strip_quote(l.trim());
        if k == 0 {
            if let Some(n) = item_marker(t) {
                t = &t[n..];
            }
        }
        if !text.is_empty() {
            text.push(' ');
        }
        starts.push(text.len());
        text.push_str(t.trim());
    }
    let line_at = |at: usize| first + starts.partition_point(|s| *s <= at);
    let mut begin = 0;
    let mut in_code = false;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c == '`' {
            in_code = !in_code;
            continue;
        }
        if in_code || !matches!(c, '.' | '!' | '?' | ';') {
            continue;
        }
        let next_is_space = chars.peek().is_some_and(|(_, n)| n.is_whitespace());
        if !next_is_space || (c == '.' && abbreviation_before(&text[..at])) {
            continue;
        }
        // A `;` joins two sentences: it belongs to neither.
        let end = if c == ';' { at } else { at + 1 };
        push_sentence(&text, begin, end, &line_at, out);
        begin = at + 1;
    }
    push_sentence(&text, begin, text.len(), &line_at, out);
}

fn push_sentence(
    text: &str,
    from: usize,
    to: usize,
    line_at: &dyn Fn(usize) -> usize,
    out: &mut Vec<Piece>,
) {
    let s = &text[from..to];
    let lead = s.len() - s.trim_start().len();
    let t = s.trim();
    if t.is_empty() {
        return;
    }
    let start = from + lead;
    out.push(Piece::Sentence {
        line: line_at(start),
        end_line: line_at(start + t.len() - 1),
        text: t.to_string(),
    });
}

/// Whether the word before a `.` is an abbreviation that does not end a sentence.
fn abbreviation_before(before: &str) -> bool {
    let word = before
        .rsplit(|c: char| c.is_whitespace() || c == '(')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    matches!(
        word.as_str(),
        "e.g" | "i.e" | "eg" | "ie" | "etc" | "vs" | "cf" | "approx" | "no" | "resp"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentence(line: usize, end_line: usize, text: &str) -> Piece {
        Piece::Sentence {
            line,
            end_line,
            text: text.into(),
        }
    }

    #[test]
    fn markdown_blocks_and_sentences_with_their_lines() {
        let md = "# Style\n\n- Use snake_case for functions. Never import `pickle`.\n- Start method\n  names with `x_` (e.g. `x_run`).\n\n```python\ndef f(): pass\n```\n| a | b |\n> Quoted rule; another.\n<!-- note\nmore -->\n1. [x] Done item\n";
        assert_eq!(
            pieces(md),
            vec![
                markup(0, 0, "a heading"),
                sentence(3, 3, "Use snake_case for functions."),
                sentence(3, 3, "Never import `pickle`."),
                sentence(4, 5, "Start method names with `x_` (e.g. `x_run`)."),
                markup(6, 8, "a code block"),
                markup(9, 9, "a table row (tables are not read)"),
                sentence(11, 11, "Quoted rule"),
                sentence(11, 11, "another."),
                markup(11, 12, "an HTML comment"),
                sentence(14, 14, "Done item"),
            ]
        );
    }

    #[test]
    fn no_cut_inside_code_or_after_abbreviations() {
        let p = pieces("Use `a. b` here, e.g. `x`. Then this! And? that");
        let texts: Vec<_> = p
            .iter()
            .map(|p| match p {
                Piece::Sentence { text, .. } => text.as_str(),
                _ => "",
            })
            .collect();
        assert_eq!(
            texts,
            ["Use `a. b` here, e.g. `x`.", "Then this!", "And?", "that"]
        );
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end() {
        assert_eq!(
            pieces("text\n```\ncode\n"),
            vec![sentence(1, 1, "text"), markup(1, 2, "a code block")]
        );
    }
}
