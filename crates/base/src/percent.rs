//! Percent-encoding of a `/`-separated path for a URI (the Hub's file URLs, SARIF's
//! relative artifact locations): every byte but RFC 3986's unreserved characters and `/`
//! is written `%XX`, upper-case, as `urllib.parse.quote(path, safe="/~")` writes it.

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// What stays as it is: letters, digits, `-._~` and the separator.
const PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

pub fn encode_path(path: &str) -> String {
    utf8_percent_encode(path, PATH).to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn as_python_quotes_a_path() {
        // urllib.parse.quote("data/a b/é+x~y.jsonl", safe="/~")
        assert_eq!(
            super::encode_path("data/a b/é+x~y.jsonl"),
            "data/a%20b/%C3%A9%2Bx~y.jsonl"
        );
        assert_eq!(super::encode_path("%2F#?"), "%252F%23%3F");
    }
}
