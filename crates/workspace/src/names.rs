//! A new name that satisfies a naming rule, for the rename quick fix. The pivots' regexes
//! have a few shapes (prefix `^x_.*`, suffix `.*_x$`, infix `.*chx.*`, a trailing digit
//! `.*\d$`, a case convention); candidates are built from those shapes and from case
//! conversions, and only one the rule really matches is offered.

use pivot_python::pivots::Rule;

/// The first candidate rename of `name` that `rule` matches and that is a valid Python
/// identifier (not a keyword), or None when no candidate fits.
pub fn suggest(rule: &Rule, name: &str) -> Option<String> {
    let Rule::Regex { source, .. } = rule else {
        return None;
    };
    if rule.matches(name) {
        return None;
    }
    candidates(source, name)
        .into_iter()
        .find(|c| c != name && is_identifier(c) && rule.matches(c))
}

fn candidates(source: &str, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let body = source.trim_start_matches('^').trim_start_matches(r"\b");
    // Prefix: `lit.*`, `lit` (re.match anchors at the start already).
    let prefix = body.strip_suffix(".*").unwrap_or(body);
    if let Some(lit) = literal(prefix) {
        out.push(format!("{lit}{name}"));
    }
    // Suffix: `.*lit$` / `.*lit\Z`; infix: `.*lit.*`.
    if let Some(rest) = body.strip_prefix(".*") {
        let end = rest
            .strip_suffix('$')
            .or_else(|| rest.strip_suffix(r"\Z"))
            .or_else(|| rest.strip_suffix(".*"));
        if let Some(lit) = end.and_then(literal) {
            out.push(join_suffix(name, &lit));
            out.push(format!("{name}{lit}"));
        }
    }
    let words = split_words(name);
    if !words.is_empty() {
        out.push(camel(&words));
        out.push(words.join("_").to_uppercase());
        out.push(words.concat().to_uppercase());
        out.push(words.join("_").to_lowercase());
        out.push(words.concat().to_lowercase());
    }
    out
}

/// `name` + `lit`, without doubling an underscore at the seam.
fn join_suffix(name: &str, lit: &str) -> String {
    if lit.starts_with('_') || name.ends_with('_') {
        format!("{}{}", name.trim_end_matches('_'), lit)
    } else {
        format!("{name}_{lit}")
    }
}

/// The text a regex fragment matches when it is a plain literal (letters, digits, `_`,
/// and `\d`, read as `1`); None for anything with other regex syntax.
fn literal(fragment: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = fragment.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                'd' => out.push('1'),
                '_' => out.push('_'),
                _ => return None,
            },
            c if c.is_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Words of an identifier: split at `_` and at lower-to-upper case changes.
fn split_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c == '_' {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.push(c);
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

fn camel(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let mut cs = w.chars();
            match cs.next() {
                Some(f) => f
                    .to_uppercase()
                    .chain(cs.flat_map(char::to_lowercase))
                    .collect(),
                None => String::new(),
            }
        })
        .collect()
}

const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

pub fn is_identifier(s: &str) -> bool {
    let mut cs = s.chars();
    let first_ok = cs.next().is_some_and(|c| c == '_' || c.is_alphabetic());
    first_ok && cs.all(|c| c == '_' || c.is_alphanumeric()) && !KEYWORDS.contains(&s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(rule: &str, name: &str) -> Option<String> {
        suggest(&Rule::regex(rule).unwrap(), name)
    }

    #[test]
    fn every_shape_in_the_data_gets_a_name_the_rule_accepts() {
        assert_eq!(s("^f_.*", "add").as_deref(), Some("f_add"));
        assert_eq!(s("^at_", "balance").as_deref(), Some("at_balance"));
        assert_eq!(s(".*_x$", "f_add").as_deref(), Some("f_add_x"));
        assert_eq!(s(".*_x$", "add_").as_deref(), Some("add_x"));
        assert_eq!(s(".*chx.*", "total").as_deref(), Some("total_chx"));
        assert_eq!(s(r".*\d$", "count").as_deref(), Some("count_1"));
        assert_eq!(
            s("^[A-Z][a-zA-Z0-9]*$", "bank_account").as_deref(),
            Some("BankAccount")
        );
        let camel = r"^[A-Z][a-z0-9]*((\d|[a-z])[A-Z\d]*[a-z0-9]*)*$";
        assert_eq!(s(camel, "queue").as_deref(), Some("Queue"));
        assert_eq!(s(r"\b[A-Z][A-Z0-9_]*\b", "Stack").as_deref(), Some("STACK"));
        assert_eq!(
            s("^[a-z0-9_]*$", "BankAccount").as_deref(),
            Some("bank_account")
        );
        // Already fine, or no candidate fits: nothing to offer.
        assert_eq!(s("^f_", "f_add"), None);
        assert_eq!(s("^(?:x|y)z{3}", "add"), None);
        assert!(suggest(&Rule::Presence(true), "add").is_none());
    }

    #[test]
    fn identifiers() {
        assert!(is_identifier("_x1") && is_identifier("名前"));
        assert!(!is_identifier("1x") && !is_identifier("class") && !is_identifier("a-b"));
    }
}
