//! Python string literals: the value of a plain (non-f, non-bytes) string literal, and
//! `inspect.cleandoc`, which is what `ast.get_docstring` returns.

/// The value of one string literal token such as `r'''a\n'''` or `"x\ty"`.
/// None for bytes and f-strings (they are never docstrings) or malformed text.
pub fn string_value(token: &str) -> Option<String> {
    let quote_at = token.find(['\'', '"'])?;
    let prefix = token[..quote_at].to_ascii_lowercase();
    if prefix.contains('b') || prefix.contains('f') || prefix.contains('t') {
        return None;
    }
    let raw = prefix.contains('r');
    let rest = &token[quote_at..];
    let q = &rest[..1];
    let triple = rest.len() >= 6 && rest.starts_with(&q.repeat(3));
    let ql = if triple { 3 } else { 1 };
    if rest.len() < 2 * ql {
        return None;
    }
    let body = &rest[ql..rest.len() - ql];
    Some(if raw {
        body.to_string()
    } else {
        unescape(body)
    })
}

fn unescape(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            '\n' => {}
            '\\' => out.push('\\'),
            '\'' => out.push('\''),
            '"' => out.push('"'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
            }
            'x' | 'u' | 'U' => {
                let n = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = (0..n).filter_map(|_| chars.next()).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) if hex.len() == n => out.push(ch),
                    _ => {
                        out.push('\\');
                        out.push(e);
                        out.push_str(&hex);
                    }
                }
            }
            'N' if chars.peek() == Some(&'{') => {
                // Unicode names are not resolved; a placeholder keeps the text non-empty,
                // which is all the scorer needs of a docstring.
                for c in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                }
                out.push('\u{fffd}');
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

/// `inspect.cleandoc`: expand tabs, strip the common margin of lines after the first,
/// strip the first line's leading blanks, drop leading and trailing empty lines.
pub fn cleandoc(doc: &str) -> String {
    let expanded = expand_tabs(doc);
    let mut lines: Vec<&str> = expanded.split('\n').collect();
    let margin = lines
        .iter()
        .skip(1)
        .filter_map(|l| {
            let content = l.trim_start().chars().count();
            (content > 0).then(|| l.chars().count() - content)
        })
        .min();
    let mut owned: Vec<String> = Vec::with_capacity(lines.len());
    for (i, l) in lines.drain(..).enumerate() {
        owned.push(if i == 0 {
            l.trim_start().to_string()
        } else if let Some(m) = margin {
            l.chars().skip(m).collect()
        } else {
            l.to_string()
        });
    }
    while owned.last().is_some_and(|l| l.is_empty()) {
        owned.pop();
    }
    let lead = owned.iter().take_while(|l| l.is_empty()).count();
    owned[lead..].join("\n")
}

fn expand_tabs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut col = 0usize;
    for c in s.chars() {
        match c {
            '\t' => {
                let n = 8 - col % 8;
                out.extend(std::iter::repeat_n(' ', n));
                col += n;
            }
            '\n' | '\r' => {
                out.push(c);
                col = 0;
            }
            _ => {
                out.push(c);
                col += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_of_literals() {
        assert_eq!(string_value(r#""a\tb""#).unwrap(), "a\tb");
        assert_eq!(string_value(r#"r"a\tb""#).unwrap(), "a\\tb");
        assert_eq!(string_value("'''x\n  y'''").unwrap(), "x\n  y");
        assert_eq!(string_value(r#""\x41\u00e9\101""#).unwrap(), "AéA");
        assert!(string_value(r#"b"x""#).is_none());
        assert!(string_value(r#"f"{x}""#).is_none());
        assert_eq!(string_value("''").unwrap(), "");
        assert_eq!(string_value("''''''").unwrap(), "");
    }

    #[test]
    fn cleandoc_like_inspect() {
        assert_eq!(
            cleandoc("\n    Sum.\n\n    Args:\n        a\n    "),
            "Sum.\n\nArgs:\n    a"
        );
        assert_eq!(cleandoc("   "), "");
        assert_eq!(cleandoc("first\n\tsecond"), "first\nsecond");
    }
}
