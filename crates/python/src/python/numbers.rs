//! Python 3 numeric literal grammar. tree-sitter-python's number tokens are looser than
//! CPython's (it accepts `0_`, `5_j`, `007`, `10L`), so each token is re-checked here.

use regex::Regex;
use std::sync::OnceLock;

fn grammar() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        let digitpart = r"[0-9](?:_?[0-9])*";
        let integer = r"[1-9](?:_?[0-9])*|0+(?:_?0)*|0[bB](?:_?[01])+|0[oO](?:_?[0-7])+|0[xX](?:_?[0-9a-fA-F])+";
        let pointfloat = format!(r"(?:{digitpart})?\.{digitpart}|{digitpart}\.");
        let exponent = format!(r"[eE][+-]?{digitpart}");
        let float = format!(r"(?:{pointfloat})(?:{exponent})?|{digitpart}{exponent}");
        let imag = format!(r"(?:{float}|{digitpart})[jJ]");
        Regex::new(&format!(r"^(?:{integer}|{float}|{imag})$")).expect("static regex")
    })
}

/// Whether `text` is a valid Python 3 number literal.
pub fn is_valid(text: &str) -> bool {
    // Most literals are plain decimals: valid unless a leading zero precedes other digits.
    let b = text.as_bytes();
    if !b.is_empty() && b.iter().all(u8::is_ascii_digit) {
        return b[0] != b'0' || b.iter().all(|&d| d == b'0');
    }
    grammar().is_match(text)
}

/// CPython's message for an invalid literal `text`: a decimal integer with a leading zero
/// before other digits has its own.
pub fn error_message(text: &str) -> &'static str {
    let b = text.as_bytes();
    let decimal = b.iter().all(|&c| c.is_ascii_digit() || c == b'_');
    if decimal && b.first() == Some(&b'0') && b.iter().any(|&c| (b'1'..=b'9').contains(&c)) {
        "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers"
    } else {
        "invalid decimal literal"
    }
}

#[cfg(test)]
mod tests {
    use super::is_valid;

    #[test]
    fn accepts_python_numbers() {
        for ok in [
            "0", "00", "0_0", "7", "1_000", "0x_ff", "0b1", "0o17", "1.", ".5", "1.5e-3", "1e10",
            "1_0.2_5", "3j", "1.5J", "007.5", "007j", "1E+5",
        ] {
            assert!(is_valid(ok), "{ok} should be valid");
        }
    }

    #[test]
    fn rejects_what_cpython_rejects() {
        for bad in [
            "0_", "0_1", "0_10", "5_j", "007", "10L", "1__0", "1_", "0x", "1e", "1._5", "0b2",
        ] {
            assert!(!is_valid(bad), "{bad} should be invalid");
        }
    }
}
