//! The three rule forms of a pivot: a regular expression names must match (`re.match`
//! semantics), presence ("always include X"), and `[name, value]` membership.

use regex::Regex;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

#[derive(Clone, Debug)]
pub enum Rule {
    /// Names must match at their start, like Python's `re.match`; names `ignore` matches
    /// whole (`*` globs, as pep8-naming's `ignore-names`) are not tested.
    Regex {
        source: String,
        anchored: Arc<Anchored>,
        ignore: Arc<[String]>,
    },
    /// `true`: every object must have it (a docstring, a try, an annotation); `false`: none may.
    Presence(bool),
    /// A decorator or import `name` must be present (`true`) or absent (`false`).
    Member { name: String, value: bool },
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum RuleError {
    #[error("invalid regular expression {pattern:?}: {message}")]
    BadRegex { pattern: String, message: String },
    #[error("a rule is a string (regex), a bool, or [name, bool]; got {0}")]
    BadShape(String),
}

impl PartialEq for Rule {
    fn eq(&self, other: &Rule) -> bool {
        match (self, other) {
            (
                Rule::Regex {
                    source: a,
                    ignore: i,
                    ..
                },
                Rule::Regex {
                    source: b,
                    ignore: j,
                    ..
                },
            ) => a == b && i == j,
            (Rule::Presence(a), Rule::Presence(b)) => a == b,
            (Rule::Member { name: a, value: x }, Rule::Member { name: b, value: y }) => {
                a == b && x == y
            }
            _ => false,
        }
    }
}

impl Rule {
    pub fn regex(source: &str) -> Result<Rule, RuleError> {
        Rule::regex_ignoring(source, &[])
    }

    /// A regex rule that leaves alone the names one of `ignore` matches whole: a framework's
    /// names (`visit_*` of `ast.NodeVisitor`, unittest's `setUp`) that no team chose.
    pub fn regex_ignoring(source: &str, ignore: &[String]) -> Result<Rule, RuleError> {
        Ok(Rule::Regex {
            source: source.to_string(),
            anchored: compile_anchored(source, ignore)?,
            ignore: ignore.into(),
        })
    }

    /// The names a regex rule leaves alone (none for the other forms).
    pub fn ignored_names(&self) -> &[String] {
        match self {
            Rule::Regex { ignore, .. } => ignore,
            _ => &[],
        }
    }

    /// From the JSON form used by MemoryCode's data: `"regex"`, `true`, `["name", true]`.
    pub fn from_json(v: &Value) -> Result<Rule, RuleError> {
        match v {
            Value::String(s) => Rule::regex(s),
            Value::Bool(b) => Ok(Rule::Presence(*b)),
            Value::Array(a) => match a.as_slice() {
                [Value::String(name), Value::Bool(value)] => Ok(Rule::Member {
                    name: name.clone(),
                    value: *value,
                }),
                _ => Err(RuleError::BadShape(v.to_string())),
            },
            _ => Err(RuleError::BadShape(v.to_string())),
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            Rule::Regex { source, .. } => Value::String(source.clone()),
            Rule::Presence(b) => Value::Bool(*b),
            Rule::Member { name, value } => serde_json::json!([name, value]),
        }
    }

    /// `re.match(rule, text)`.
    pub fn matches(&self, text: &str) -> bool {
        match self {
            Rule::Regex { anchored, .. } => anchored.regex().is_match(text),
            _ => false,
        }
    }

    /// Short human description, e.g. "must match `^f_.*`".
    pub fn describe(&self) -> String {
        match self {
            Rule::Regex { source, ignore, .. } if ignore.is_empty() => {
                format!("names must match `{source}`")
            }
            Rule::Regex { source, ignore, .. } => format!(
                "names must match `{source}` (but {})",
                (ignore.iter())
                    .map(|g| format!("`{g}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Rule::Presence(true) => "must be present".into(),
            Rule::Presence(false) => "must be absent".into(),
            Rule::Member { name, value: true } => format!("`{name}` must be present"),
            Rule::Member { name, value: false } => format!("`{name}` must be absent"),
        }
    }
}

/// `^(?:source)`: checked when the rule is made, compiled when first matched. A dialogue
/// may carry tens of thousands of distinct patterns (one per session): compiling each
/// costs about 0.3 ms, checking its syntax a tenth of that, and most are never matched
/// while a document is open.
#[derive(Debug)]
pub struct Anchored {
    pattern: String,
    compiled: OnceLock<Regex>,
}

const SIZE_LIMIT: usize = 1 << 22;

fn build(pattern: &str) -> Result<Regex, regex::Error> {
    regex::RegexBuilder::new(pattern)
        .size_limit(SIZE_LIMIT)
        .build()
}

impl Anchored {
    /// The anchored pattern, as compiled.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    pub fn regex(&self) -> &Regex {
        self.compiled.get_or_init(|| {
            // Only patterns that cannot exceed the size limit are compiled late (see
            // `compile_anchored`), and their syntax was checked: this does not fail. Were
            // it to, a pattern that matches nothing makes every name a finding, not a panic.
            build(&self.pattern).unwrap_or_else(|_| Regex::new(r"[^\s\S]").expect("valid"))
        })
    }
}

/// A regex error's last line ("error: unclosed group"), the part that is not the pattern.
fn error_message(e: &dyn std::fmt::Display) -> String {
    e.to_string()
        .lines()
        .last()
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// A glob of `ignore-names` as a regex: `*` is any run of identifier characters, the rest
/// is literal.
fn glob_regex(glob: &str) -> String {
    (glob.split('*'))
        .map(regex::escape)
        .collect::<Vec<_>>()
        .join(r"[\p{XID_Continue}]*")
}

/// `^(?:source)`, made once per distinct source for the whole process: a benchmark run
/// holds tens of thousands of rules but only a few dozen distinct patterns. Ignored names
/// are an alternative matched whole, so that `matches` and the regex sets that group rules
/// (findings.rs) both leave them alone: `^(?:(?:globs)\z|(?:source))`.
fn compile_anchored(source: &str, ignore: &[String]) -> Result<Arc<Anchored>, RuleError> {
    // Python's `\Z` is Rust's `\z`; everything else the data uses reads the same.
    let translated = source.replace(r"\Z", r"\z");
    let pattern = match ignore {
        [] => format!("^(?:{translated})"),
        globs => format!(
            "^(?:(?:{})\\z|(?:{translated}))",
            globs
                .iter()
                .map(|g| glob_regex(g))
                .collect::<Vec<_>>()
                .join("|")
        ),
    };
    // Shared, not cloned: a cloned `Regex` builds a new match-cache pool.
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Anchored>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(r) = cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&pattern)
    {
        return Ok(r.clone());
    }
    let bad = |message: String| RuleError::BadRegex {
        pattern: source.to_string(),
        message,
    };
    let compiled = OnceLock::new();
    // Short patterns without counted repetitions or `\p{..}` classes stay far below the
    // size limit (64 bytes of `\w`, the largest class, compile to about a quarter of
    // it): their syntax is enough to know they compile. Others are compiled now, so a
    // too-large one is an error here, naming the rule.
    if pattern.len() <= 64 + 5 && !pattern.contains('{') {
        regex_syntax::ParserBuilder::new()
            .build()
            .parse(&pattern)
            .map_err(|e| bad(error_message(&e)))?;
    } else {
        let re = build(&pattern).map_err(|e| bad(error_message(&e)))?;
        let _ = compiled.set(re);
    }
    let key = pattern.clone();
    let anchored = Arc::new(Anchored { pattern, compiled });
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, anchored.clone());
    Ok(anchored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn match_is_anchored_at_start_only() {
        let r = Rule::regex("f_").unwrap();
        assert!(r.matches("f_x"));
        assert!(!r.matches("xf_"));
        let alt = Rule::regex("a|b").unwrap();
        assert!(alt.matches("bz"));
        assert!(!alt.matches("zb"));
    }

    #[test]
    fn ignored_names_pass_whole_and_only_whole() {
        let ignore = ["visit_*".to_string(), "setUp".to_string()];
        let r = Rule::regex_ignoring("^[a-z_][a-z0-9_]*$", &ignore).unwrap();
        assert!(r.matches("visit_Call") && r.matches("setUp") && r.matches("run"));
        assert!(!r.matches("setUpX"), "a name without `*` is matched whole");
        assert!(!r.matches("visitCall") && !r.matches("fooBar"));
        assert!(
            !r.matches("visit_a.b"),
            "`*` spans identifier characters only"
        );
        assert_ne!(r, Rule::regex("^[a-z_][a-z0-9_]*$").unwrap());
        assert!(r.describe().contains("`visit_*`"));
    }

    #[test]
    fn json_forms_and_errors() {
        assert_eq!(Rule::from_json(&json!(true)).unwrap(), Rule::Presence(true));
        assert_eq!(
            Rule::from_json(&json!(["timer", true])).unwrap(),
            Rule::Member {
                name: "timer".into(),
                value: true
            }
        );
        assert!(matches!(
            Rule::from_json(&json!("(unclosed")),
            Err(RuleError::BadRegex { .. })
        ));
        assert!(matches!(
            Rule::from_json(&json!(3)),
            Err(RuleError::BadShape(_))
        ));
        assert!(matches!(
            Rule::from_json(&json!(["x"])),
            Err(RuleError::BadShape(_))
        ));
    }
}
