//! Extracting the code from a model's markdown answer, as MemoryCode's evaluator does:
//! the first ```python fence, else the first ``` fence (keeping its language tag line,
//! which is then parsed as Python), else the whole answer.

/// The code MemoryCode scores for `answer`: the same as the original's lazy regexes
/// (```` ```python\n(.*?)``` ````, then ```` ```(.*?)``` ````), by plain search.
pub fn extract(answer: &str) -> &str {
    fenced(answer, "```python\n")
        .or_else(|| fenced(answer, "```"))
        .unwrap_or(answer)
}

/// The text between the first `open` and the next ``` after it. (`memmem`: every answer
/// of a benchmark run is searched, and `str::find` is several times slower.)
fn fenced<'a>(text: &'a str, open: &str) -> Option<&'a str> {
    let start = memchr::memmem::find(text.as_bytes(), open.as_bytes())? + open.len();
    let len = memchr::memmem::find(&text.as_bytes()[start..], b"```")?;
    // Both ends sit next to ASCII backticks or a newline: char boundaries.
    text.get(start..start + len)
}

#[cfg(test)]
mod tests {
    use super::extract;

    #[test]
    fn prefers_python_fence_then_any_fence_then_whole() {
        assert_eq!(
            extract("a\n```js\nx\n```\n```python\ny = 1\n```"),
            "y = 1\n"
        );
        assert_eq!(extract("```Python\nx = 1\n```"), "Python\nx = 1\n");
        assert_eq!(extract("x = 1"), "x = 1");
        // CRLF after the tag does not match the python fence; the tag line is kept.
        assert_eq!(extract("```python\r\nx = 1\r\n```"), "python\r\nx = 1\r\n");
        // An unclosed fence is no fence.
        assert_eq!(extract("```python\nx = 1\n"), "```python\nx = 1\n");
    }
}
