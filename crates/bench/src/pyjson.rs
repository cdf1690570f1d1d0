//! Python's `json.dump(obj, f, indent=N)` text, which the originals' result files are made of:
//! serde_json's pretty layout is the same (`","` + newline, `": "`), and `ensure_ascii`
//! escapes every character outside printable ASCII (DEL included) as `\uXXXX` UTF-16 units.
//! Outside strings the layout is printable ASCII and newlines, so escaping the whole text
//! touches only string contents.

use serde::Serialize;

/// `json.dump(v, f, indent=indent)` (no final newline).
pub fn dump_indent<T: Serialize + ?Sized>(v: &T, indent: usize) -> String {
    let spaces = vec![b' '; indent];
    let mut buf = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(
        &mut buf,
        serde_json::ser::PrettyFormatter::with_indent(&spaces),
    );
    if v.serialize(&mut ser).is_err() {
        return String::new();
    }
    ensure_ascii(&String::from_utf8(buf).unwrap_or_default())
}

/// Escape what Python's `ensure_ascii` escapes and serde_json leaves as it is: characters
/// from DEL (0x7f) up.
pub fn ensure_ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if (c as u32) < 0x7f {
            out.push(c);
        } else {
            let mut buf = [0u16; 2];
            for unit in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escapes_like_pythons_ensure_ascii() {
        let v = json!({"a": ["é\u{7f}😀", 1], "b": {}});
        assert_eq!(
            dump_indent(&v, 2),
            "{\n  \"a\": [\n    \"\\u00e9\\u007f\\ud83d\\ude00\",\n    1\n  ],\n  \"b\": {}\n}"
        );
    }
}
