//! The values a twin puts in place of an expected one: values a task cannot tell from the
//! real tests' own. A number or a string is replaced by another expected value of the same
//! type from the same tests where one is far enough from it, else by the same literal with
//! digits or letters redrawn (the same length, the same shape); each drawn anew for every
//! run (`fastrand`), so no fixed shift or mark exists to look for. A number must differ by
//! more than twice any tolerance the assertion states (its other numbers), so that no
//! result a correct solution may give passes the changed assertion (a better estimate
//! inside `delta=8000` than the canonical one's included), and it must differ as a float
//! (`1.4e20 + 7919 == 1.4e20`).

use fastrand::Rng;

/// A literal of the test source, as written.
#[derive(Debug, Clone)]
pub(super) struct Pool {
    numbers: Vec<(Number, String)>,
    strings: Vec<StringLit>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Number {
    value: f64,
    float: bool,
}

/// A string literal split into its parts: prefix (`r`, `b`, ...), quote, body.
#[derive(Debug, Clone, PartialEq, Eq)]
struct StringLit {
    prefix: String,
    quote: String,
    body: String,
}

impl Pool {
    pub(super) fn new() -> Pool {
        Pool {
            numbers: Vec::new(),
            strings: Vec::new(),
        }
    }

    /// Records a number or string literal's text.
    pub(super) fn add_number(&mut self, text: &str) {
        if let Some(n) = parse_number(text) {
            self.numbers.push((n, text.to_string()));
        }
    }

    pub(super) fn add_string(&mut self, text: &str) {
        if let Some(s) = split_string(text) {
            self.strings.push(s);
        }
    }

    /// The largest magnitude of the numbers recorded (the tolerance bound where an
    /// assertion's tolerance is a name, not a literal).
    pub(super) fn largest(&self) -> f64 {
        self.numbers
            .iter()
            .map(|(n, _)| n.value.abs())
            .fold(0.0, f64::max)
    }
}

fn parse_number(text: &str) -> Option<Number> {
    let t = text.replace('_', "");
    let lower = t.to_ascii_lowercase();
    if lower.starts_with("0x")
        || lower.starts_with("0o")
        || lower.starts_with("0b")
        || lower.ends_with('j')
    {
        return None;
    }
    let float = lower.contains('.') || lower.contains('e');
    let value: f64 = lower.parse().ok()?;
    value.is_finite().then_some(Number { value, float })
}

fn split_string(text: &str) -> Option<StringLit> {
    let start = text.find(['\'', '"'])?;
    let prefix = &text[..start];
    if prefix.to_ascii_lowercase().contains('f') {
        return None;
    }
    let rest = &text[start..];
    let quote = if rest.starts_with("'''") || rest.starts_with("\"\"\"") {
        &rest[..3]
    } else {
        &rest[..1]
    };
    if rest.len() < 2 * quote.len() || !rest.ends_with(quote) {
        return None;
    }
    Some(StringLit {
        prefix: prefix.to_string(),
        quote: quote.to_string(),
        body: rest[quote.len()..rest.len() - quote.len()].to_string(),
    })
}

/// Another number for the literal `text`: one of the pool's of the same type (int or
/// float) more than `margin` away, else `text` with digits redrawn; `None` when no such
/// value is found.
pub(super) fn other_number(text: &str, margin: f64, pool: &Pool, rng: &mut Rng) -> Option<String> {
    let n = parse_number(text)?;
    let far = |v: f64| v != n.value && (v - n.value).abs() > margin;
    let others: Vec<&String> = pool
        .numbers
        .iter()
        .filter(|(m, t)| {
            m.float == n.float && far(m.value) && t.replace('_', "") != text.replace('_', "")
        })
        .map(|(_, t)| t)
        .collect();
    if !others.is_empty() {
        return Some(others[rng.usize(..others.len())].clone());
    }
    let clean = text.replace('_', "");
    let bytes: Vec<char> = clean.chars().collect();
    // The digits of the mantissa: an exponent's digits would make the value jump by powers
    // of ten, which is recognisable.
    let end = bytes
        .iter()
        .position(|c| *c == 'e' || *c == 'E')
        .unwrap_or(bytes.len());
    let digits: Vec<usize> = (0..end).filter(|&i| bytes[i].is_ascii_digit()).collect();
    if digits.is_empty() {
        return None;
    }
    for attempt in 0..48 {
        let mut out = bytes.clone();
        let k = (1 + attempt / 12).min(digits.len());
        for _ in 0..k {
            let i = digits[rng.usize(..digits.len())];
            out[i] = char::from(b'0' + rng.u8(..10));
        }
        // An int literal may not start with 0 unless it is 0.
        if !n.float && out.len() > 1 && out[0] == '0' {
            continue;
        }
        let candidate: String = out.into_iter().collect();
        if let Some(m) = parse_number(&candidate) {
            if far(m.value) {
                return Some(candidate);
            }
        }
    }
    None
}

/// Another string for the literal `text`: one of the pool's with the same prefix and quote
/// and another body, else `text` with one letter or digit redrawn (never an escaped one).
pub(super) fn other_string(text: &str, pool: &Pool, rng: &mut Rng) -> Option<String> {
    let s = split_string(text)?;
    let others: Vec<&StringLit> = pool
        .strings
        .iter()
        .filter(|o| o.prefix == s.prefix && o.quote == s.quote && o.body != s.body)
        .filter(|o| !o.body.contains('\n') || s.quote.len() == 3)
        .collect();
    if !others.is_empty() {
        let o = others[rng.usize(..others.len())];
        return Some(format!("{}{}{}{}", s.prefix, s.quote, o.body, s.quote));
    }
    let chars: Vec<char> = s.body.chars().collect();
    let mut free = Vec::new();
    let mut escaped = false;
    for (i, c) in chars.iter().enumerate() {
        if escaped {
            escaped = false;
            continue;
        }
        if *c == '\\' {
            escaped = true;
            continue;
        }
        if c.is_ascii_alphanumeric() {
            free.push(i);
        }
    }
    if free.is_empty() {
        return None;
    }
    let i = free[rng.usize(..free.len())];
    let mut body = chars.clone();
    let c = chars[i];
    body[i] = loop {
        let d = if c.is_ascii_digit() {
            char::from(b'0' + rng.u8(..10))
        } else if c.is_ascii_uppercase() {
            char::from(b'A' + rng.u8(..26))
        } else {
            char::from(b'a' + rng.u8(..26))
        };
        if d != c {
            break d;
        }
    };
    let body: String = body.into_iter().collect();
    Some(format!("{}{}{}{}", s.prefix, s.quote, body, s.quote))
}

/// A literal of the tests, as written, for one more element of a computed sequence (`[*E, v]`):
/// one of the pool's numbers or strings, else `None`.
pub(super) fn some_literal(pool: &Pool, rng: &mut Rng) -> String {
    let n = pool.numbers.len() + pool.strings.len();
    if n == 0 {
        return "None".into();
    }
    let i = rng.usize(..n);
    match pool.numbers.get(i) {
        Some((_, t)) => t.clone(),
        None => {
            let s = &pool.strings[i - pool.numbers.len()];
            format!("{}{}{}{}", s.prefix, s.quote, s.body, s.quote)
        }
    }
}

/// A non-zero whole number a computed expected value is shifted by (`(E) + k`): one of the
/// tests' own integers where there is one, else drawn.
pub(super) fn shift(pool: &Pool, rng: &mut Rng) -> String {
    let ints: Vec<&String> = pool
        .numbers
        .iter()
        .filter(|(m, _)| !m.float && m.value >= 1.0 && m.value < 1e15)
        .map(|(_, t)| t)
        .collect();
    if ints.is_empty() {
        return rng.u32(1..100).to_string();
    }
    ints[rng.usize(..ints.len())].clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_is_another_from_the_tests_or_redrawn_far_enough() {
        let mut rng = Rng::with_seed(7);
        let mut pool = Pool::new();
        for t in ["10", "20", "8000", "2.5"] {
            pool.add_number(t);
        }
        for _ in 0..50 {
            let n = other_number("10", 0.0, &pool, &mut rng).unwrap();
            assert!(n == "20" || n == "8000", "{n}");
        }
        // Beyond a stated tolerance of 8000 (x2): no pool value qualifies, digits redrawn.
        let mut near = Pool::new();
        near.add_number("99000");
        for _ in 0..50 {
            let n = other_number("100000", 16000.0, &near, &mut rng).unwrap();
            let v: f64 = n.parse().unwrap();
            assert!((v - 100000.0).abs() > 16000.0 && n.len() == 6, "{n}");
        }
        // A huge float changes as a float.
        let n = other_number("1.4e20", 0.0, &Pool::new(), &mut rng).unwrap();
        assert!(
            n.ends_with("e20") && n.parse::<f64>().unwrap() != 1.4e20,
            "{n}"
        );
        assert_eq!(other_number("0x1f", 0.0, &pool, &mut rng), None);
    }

    #[test]
    fn a_string_keeps_its_shape() {
        let mut rng = Rng::with_seed(3);
        let n = other_string("'hello world'", &Pool::new(), &mut rng).unwrap();
        assert_eq!(n.len(), "'hello world'".len());
        assert_ne!(n, "'hello world'");
        assert!(n.starts_with('\'') && n.ends_with('\''));
        let n = other_string("'\\n'", &Pool::new(), &mut rng);
        assert_eq!(n, None, "an escape is never redrawn");
        let mut pool = Pool::new();
        pool.add_string("'abc'");
        pool.add_string("\"xyz\"");
        assert_eq!(other_string("'q'", &pool, &mut rng).unwrap(), "'abc'");
    }

    #[test]
    fn an_extra_element_and_a_shift_come_from_the_tests() {
        let mut rng = Rng::with_seed(5);
        assert_eq!(some_literal(&Pool::new(), &mut rng), "None");
        let mut pool = Pool::new();
        pool.add_number("2.5");
        pool.add_number("0");
        pool.add_string("'pear'");
        for _ in 0..20 {
            let v = some_literal(&pool, &mut rng);
            assert!(["2.5", "0", "'pear'"].contains(&v.as_str()), "{v}");
            // 2.5 is a float, 0 is no shift: drawn instead.
            let k: u32 = shift(&pool, &mut rng).parse().unwrap();
            assert!((1..100).contains(&k));
        }
        pool.add_number("7");
        assert_eq!(shift(&pool, &mut rng), "7");
    }
}
