//! The data behind each chart as CSV (RFC 4180: comma-separated, fields quoted when they
//! hold a comma, quote or line break, CRLF-free `\n` lines), numbers in full precision:
//! what the page's "CSV" buttons save and what a paper's own plots can be redrawn from.

/// One CSV text from a header and rows.
pub fn write(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = String::new();
    let line = |out: &mut String, cells: &mut dyn Iterator<Item = &str>| {
        let cells: Vec<String> = cells.map(field).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    };
    line(&mut out, &mut header.iter().copied());
    for r in rows {
        line(&mut out, &mut r.iter().map(String::as_str));
    }
    out
}

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A number as Rust writes it shortest (it reads back to the same double), empty for none.
pub fn num(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v}"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fields_are_quoted_only_when_needed() {
        let t = super::write(
            &["model", "x"],
            &[
                vec!["a,b".into(), "1".into()],
                vec!["say \"hi\"".into(), "".into()],
            ],
        );
        assert_eq!(t, "model,x\n\"a,b\",1\n\"say \"\"hi\"\"\",\n");
        assert_eq!(super::num(Some(0.1)), "0.1");
        assert_eq!(super::num(Some(f64::NAN)), "");
    }
}
