//! Pivots read from the prose instruction files coding assistants follow (`AGENTS.md`,
//! `CLAUDE.md`, `.github/copilot-instructions.md`, `.cursorrules`, `.cursor/rules/*.mdc`,
//! any text or markdown): each file is read as a Markdown document (text.rs), whose
//! headings, list labels and front matter give each sentence its context (a `## Never`
//! section negates its items; a TypeScript or tests-only section, or globs that leave out
//! Python, block them); each sentence either becomes proposed `pivots.toml` entries, in the
//! rule forms that exist, citing the file and line it was read from, or is listed as not
//! checkable with the reason. Deterministic: only phrasings whose meaning is certain are
//! read (grammar.rs, in a team file's dialect); nothing is guessed.

mod grammar;
mod text;

pub use grammar::{read, read_in, Dialect, Read, Reading};
pub use text::{pieces, Context as PieceContext, Piece};

use super::{Ledger, Rule};
use crate::python::ObjectKind;
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// An instruction file: its name as the user gave it, and its text.
#[derive(Clone, Debug)]
pub struct Source {
    pub name: String,
    pub text: String,
}

/// Where an instruction was read: a file and its 1-based lines.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Citation {
    pub file: String,
    pub line: usize,
    pub end_line: usize,
}

impl std::fmt::Display for Citation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)?;
        if self.end_line != self.line {
            write!(f, "-{}", self.end_line)?;
        }
        Ok(())
    }
}

/// One proposed pivot: the first sentence it was read from (its `text`), and every place
/// it was read with the sentence there.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Proposal {
    pub id: String,
    pub kind: ObjectKind,
    #[serde(serialize_with = "rule_json")]
    pub rule: Rule,
    /// The rule's ignored names (in the JSON beside `rule`, which is MemoryCode's form).
    #[serde(rename = "ignore-names", skip_serializing_if = "Vec::is_empty")]
    pub ignore_names: Vec<String>,
    pub text: String,
    pub sources: Vec<Cited>,
    /// `Some("model")` for a rule a model proposed (`--model`), written as `proposed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposed: Option<String>,
}

/// A place an instruction was read, and the sentence read there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cited {
    #[serde(flatten)]
    pub at: Citation,
    pub text: String,
}

fn rule_json<S: serde::Serializer>(r: &Rule, s: S) -> Result<S::Ok, S::Error> {
    r.to_json().serialize(s)
}

/// A sentence or markup that gives no pivot, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Skipped {
    #[serde(flatten)]
    pub at: Citation,
    pub text: String,
    pub reason: String,
    /// A sentence the grammar did not read (not markup): what a model may be asked about.
    #[serde(skip)]
    pub sentence: bool,
}

/// What the files give: the proposed pivots in the order first read, and every skipped
/// sentence or markup, in file and line order.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Import {
    pub proposed: Vec<Proposal>,
    pub skipped: Vec<Skipped>,
    /// The ids given so far.
    #[serde(skip)]
    ids: Ids,
    /// Each proposal's position by its kind and rule (as JSON).
    #[serde(skip)]
    by_rule: HashMap<(ObjectKind, String), usize>,
}

/// Read every file. The same rule read twice (two files, or twice in one) is one pivot
/// citing both places; two rules that would share an id get `-2`, `-3`, ...
pub fn import(sources: &[Source]) -> Import {
    let mut out = Import::default();
    let mut ids = Ids::default();
    let read: Vec<Vec<Piece>> = sources.iter().map(|s| pieces(&s.text)).collect();
    // The files given are one team's instructions: a constants rule in any of them (an
    // AGENTS.md beside its .cursor/rules) frees constants from a variable case rule.
    let dialect = Dialect::Team {
        constants_upper: read.iter().flatten().any(|p| {
            matches!(p, Piece::Sentence { text, context, .. }
                if context.blocked.is_none() && says_constants_upper(text))
        }),
    };
    for (src, pieces) in sources.iter().zip(read) {
        let lines: Vec<&str> = src.text.lines().collect();
        for piece in pieces {
            match piece {
                Piece::Markup {
                    line,
                    end_line,
                    what,
                } => out.skipped.push(Skipped {
                    at: Citation {
                        file: src.name.clone(),
                        line,
                        end_line,
                    },
                    text: excerpt(&lines, line, end_line),
                    reason: format!("{what}: not an instruction"),
                    sentence: false,
                }),
                Piece::Sentence {
                    line,
                    end_line,
                    text,
                    context,
                } => {
                    let at = Citation {
                        file: src.name.clone(),
                        line,
                        end_line,
                    };
                    if let Some(why) = context.blocked {
                        out.skipped.push(Skipped {
                            at,
                            text,
                            reason: format!("not read: {why}"),
                            sentence: false,
                        });
                        continue;
                    }
                    let got = match &context.negated {
                        None => read_team(&text, dialect),
                        Some(label) => {
                            negated_form(&text, label).and_then(|t| read_team(&t, dialect))
                        }
                    };
                    match got {
                        Ok(r) => {
                            for reading in r.readings {
                                out.add(&mut ids, reading, &text, at.clone(), None);
                            }
                            for part in r.unread_parts {
                                out.skipped.push(Skipped {
                                    at: at.clone(),
                                    text: text.clone(),
                                    reason: format!("a part not checkable: {part}"),
                                    sentence: false,
                                });
                            }
                        }
                        Err(reason) => out.skipped.push(Skipped {
                            at,
                            text,
                            reason,
                            sentence: true,
                        }),
                    }
                }
            }
        }
    }
    out.ids = ids;
    out
}

/// A team file's sentence: read whole, or else a trailing parenthesis that says a rule of
/// its own ("Use descriptive names (snake_case for variables/functions)").
fn read_team(text: &str, dialect: Dialect) -> Result<Read, String> {
    let whole = read_in(text, dialect);
    if whole.is_ok() {
        return whole;
    }
    let t = text.trim_end_matches(['.', '!', ' ']);
    if let Some(inner) = t.strip_suffix(')').and_then(|t| t.rsplit_once('(')) {
        let (outer, inner) = (inner.0.trim(), inner.1.trim());
        let example = [
            "e.g",
            "eg",
            "i.e",
            "ie",
            "for example",
            "such as",
            "like",
            "not ",
        ]
        .iter()
        .any(|w| inner.to_lowercase().starts_with(w));
        if !example && !inner.is_empty() && !outer.is_empty() {
            if let Ok(mut r) = read_in(inner, dialect) {
                r.unread_parts
                    .push(format!("`{outer}`: {}", whole.err().unwrap_or_default()));
                return Ok(r);
            }
        }
    }
    whole
}

/// A sentence under a negating heading or label, as the sentence to read: an instruction
/// of its own (with its own modal or negation) is read as written, a bare imperative
/// ("Import `pickle`") is negated, and anything else is not read.
fn negated_form(text: &str, label: &str) -> Result<String, String> {
    let t = text.trim_start_matches(['❌', '🚫', '⛔', ' ', '\u{fe0f}']);
    let lower = t.replace(['*', '_'], "").to_lowercase();
    let lower = lower.trim();
    let has_modal = [
        " must ",
        " should ",
        " shall ",
        " need to ",
        " needs to ",
        " have to ",
        " has to ",
    ]
    .iter()
    .any(|m| format!(" {lower} ").contains(m));
    let negative = ["never ", "don't ", "do not ", "dont ", "avoid ", "no "]
        .iter()
        .any(|n| lower.starts_with(n));
    if has_modal || negative {
        return Ok(t.to_string());
    }
    const VERBS: [&str; 24] = [
        "use", "import", "add", "write", "include", "put", "name", "start", "begin", "end",
        "prefix", "suffix", "decorate", "document", "annotate", "leave", "call", "apply", "attach",
        "provide", "have", "comment", "define", "place",
    ];
    let first = lower.split_whitespace().next().unwrap_or("");
    if VERBS.contains(&first) {
        return Ok(format!("Do not {t}"));
    }
    Err(format!(
        "under {label}, which negates it, and not an instruction of its own: its rule is not certain"
    ))
}

/// Whether a sentence says constants are UPPER_SNAKE_CASE ("Constants: `UPPER_SNAKE_CASE`",
/// "use UPPER_CASE for constants").
fn says_constants_upper(text: &str) -> bool {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let constant = words.iter().any(|w| matches!(*w, "constant" | "constants"));
    let upper = words.iter().any(|w| {
        matches!(
            *w,
            "upper_snake_case"
                | "upper_snake"
                | "upper_case"
                | "screaming_snake_case"
                | "screaming_snake"
                | "constant_case"
                | "uppercase"
                | "caps"
        )
    }) || ["upper snake", "upper case", "all caps", "capital letters"]
        .iter()
        .any(|p| lower.contains(p));
    let negated = words
        .iter()
        .any(|w| matches!(*w, "not" | "never" | "no" | "avoid"));
    constant && upper && !negated
}

/// The first line of lines `line..=end_line` (a code block's opening fence, a heading).
fn excerpt(lines: &[&str], line: usize, end_line: usize) -> String {
    let first = lines.get(line - 1).copied().unwrap_or("");
    let first = first.trim().trim_start_matches('\u{feff}');
    if end_line > line {
        format!("{first} … ({} lines)", end_line - line + 1)
    } else {
        first.to_string()
    }
}

impl Import {
    /// The skipped sentences a model may be asked about: (index in `skipped`, sentence).
    pub fn unread(&self) -> Vec<(usize, &str)> {
        (self.skipped.iter().enumerate())
            .filter(|(_, s)| s.sentence)
            .map(|(i, s)| (i, s.text.as_str()))
            .collect()
    }

    /// A model's answers for skipped sentences (by index in `skipped`): the rules it
    /// proposed, validated by the caller, become pivots marked `proposed = "model"`; a
    /// refusal or a rejected rule is added to the sentence's reason.
    pub fn apply_model(&mut self, answers: Vec<(usize, Result<Vec<Reading>, String>)>) {
        let mut ids = std::mem::take(&mut self.ids);
        let mut taken = HashSet::new();
        for (i, answer) in answers {
            let Some(s) = self.skipped.get_mut(i) else {
                continue;
            };
            match answer {
                Ok(readings) if !readings.is_empty() => {
                    let (text, at) = (s.text.clone(), s.at.clone());
                    for r in readings {
                        self.add(&mut ids, r, &text, at.clone(), Some("model"));
                    }
                    taken.insert(i);
                }
                Ok(_) => s.reason.push_str("; the model proposed nothing"),
                Err(why) => s.reason = format!("{}; {why}", s.reason),
            }
        }
        self.ids = ids;
        let mut i = 0;
        self.skipped.retain(|_| {
            i += 1;
            !taken.contains(&(i - 1))
        });
    }

    fn add(&mut self, ids: &mut Ids, r: Reading, text: &str, at: Citation, proposed: Option<&str>) {
        let key = (r.kind, r.rule.to_json().to_string());
        if let Some(p) = self.by_rule.get(&key).map(|&i| &mut self.proposed[i]) {
            p.sources.push(Cited {
                at,
                text: text.to_string(),
            });
            return;
        }
        self.by_rule.insert(key, self.proposed.len());
        let id = unique(ids, &r.id);
        self.proposed.push(Proposal {
            id,
            kind: r.kind,
            ignore_names: r.rule.ignored_names().to_vec(),
            rule: r.rule,
            text: text.to_string(),
            sources: vec![Cited {
                at,
                text: text.to_string(),
            }],
            proposed: proposed.map(str::to_string),
        });
    }

    /// The proposed pivots as `pivots.toml` text (docs/pivots-toml.md), each citing where it
    /// was read in a comment; every version at session 0.
    pub fn to_toml(&self) -> String {
        let mut out = String::from(
            "# Proposed by `pivot-lsp pivots import`: review before use. Each pivot cites the\n\
             # instruction it was read from.\n",
        );
        for p in &self.proposed {
            out.push_str(&pivot_toml(p));
        }
        out
    }

    /// `existing` (a `pivots.toml`'s text, or empty) with the proposed pivots appended: those
    /// whose kind and rule a pivot of the file already has are left out, and ids it already
    /// uses get `-2`, `-3`, .... The result is loaded before it is returned, so a file that
    /// is not a valid `pivots.toml` is an error and nothing is lost.
    pub fn merge_into(&self, existing: &str, file: &str) -> Result<Merged> {
        let ledger = Ledger::from_toml(existing, file)
            .with_context(|| format!("{file} is not a valid pivots.toml; nothing written"))?;
        let mut ids = Ids::of(ledger.pivots.iter().map(|p| p.id.as_str()));
        let mut merged = Merged {
            text: existing.to_string(),
            added: Vec::new(),
            already: Vec::new(),
        };
        let mut new = Vec::new();
        for p in &self.proposed {
            let same = ledger.pivots.iter().find(|q| {
                q.versions
                    .iter()
                    .any(|v| v.kind == p.kind && v.rule == p.rule)
            });
            if let Some(q) = same {
                merged.already.push((p.id.clone(), q.id.clone()));
                continue;
            }
            let mut p = p.clone();
            p.id = unique(&mut ids, &p.id);
            merged.added.push(p.id.clone());
            new.push(p);
        }
        if !new.is_empty() {
            if !merged.text.is_empty() && !merged.text.ends_with('\n') {
                merged.text.push('\n');
            }
            if !merged.text.is_empty() {
                merged.text.push('\n');
            }
            merged
                .text
                .push_str("# Added by `pivot-lsp pivots import`: review before use.\n");
            for p in &new {
                merged.text.push_str(&pivot_toml(p));
            }
        }
        let check = Ledger::from_toml(&merged.text, file)
            .context("the merged pivots.toml does not load (a bug); nothing written")?;
        if check.pivots.len() != ledger.pivots.len() + new.len() {
            bail!("the merged pivots.toml lost a pivot (a bug); nothing written");
        }
        Ok(merged)
    }
}

/// A `pivots.toml` with the proposed pivots added.
#[derive(Clone, Debug, PartialEq)]
pub struct Merged {
    pub text: String,
    /// Ids of the pivots added, as written.
    pub added: Vec<String>,
    /// (proposed id, id of the pivot of the file that already has its kind and rule)
    pub already: Vec<(String, String)>,
}

/// Ids given so far, and the next suffix to try for each base id (so that n pivots of one
/// base cost n, not n^2).
#[derive(Clone, Debug, Default, PartialEq)]
struct Ids {
    taken: HashSet<String>,
    next: HashMap<String, usize>,
}

impl Ids {
    fn of<'a>(ids: impl IntoIterator<Item = &'a str>) -> Ids {
        Ids {
            taken: ids.into_iter().map(str::to_string).collect(),
            next: HashMap::new(),
        }
    }
}

fn unique(ids: &mut Ids, id: &str) -> String {
    let mut candidate = id.to_string();
    let k = ids.next.entry(id.to_string()).or_insert(2);
    while ids.taken.contains(&candidate) {
        candidate = format!("{id}-{k}");
        *k += 1;
    }
    ids.taken.insert(candidate.clone());
    candidate
}

fn pivot_toml(p: &Proposal) -> String {
    let mut s = String::from("\n");
    for c in &p.sources {
        s.push_str(&format!("# {}\n", comment_safe(&c.at.to_string())));
    }
    s.push_str("[[pivot]]\n");
    s.push_str(&format!("id = {}\n", toml_string(&p.id)));
    s.push_str("[[pivot.version]]\n");
    s.push_str(&format!("text = {}\n", toml_string(&p.text)));
    s.push_str(&format!("kind = {}\n", toml_string(p.kind.name())));
    s.push_str(&format!("rule = {}\n", rule_toml(&p.rule)));
    if let Some(names) = ignore_names_toml(&p.rule) {
        s.push_str(&format!("ignore-names = {names}\n"));
    }
    if let Some(by) = &p.proposed {
        s.push_str(&format!("proposed = {}\n", toml_string(by)));
    }
    s
}

/// A rule as `pivots.toml` writes it: a regex as a string, a presence as a boolean, a
/// member as `[name, value]`.
pub fn rule_toml(rule: &Rule) -> String {
    match rule {
        Rule::Regex { source, .. } => toml_string(source),
        Rule::Presence(b) => b.to_string(),
        Rule::Member { name, value } => format!("[{}, {value}]", toml_string(name)),
    }
}

/// A regex rule's ignored names as a TOML array, or None when it has none.
pub fn ignore_names_toml(rule: &Rule) -> Option<String> {
    let names = rule.ignored_names();
    (!names.is_empty()).then(|| {
        let items: Vec<String> = names.iter().map(|n| toml_string(n)).collect();
        format!("[{}]", items.join(", "))
    })
}

/// A TOML basic string. Control characters are escaped, and so is the `[` of `##[` (a CI
/// log reads `##[...]` anywhere in a line as a command); the value is the same.
pub fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for (i, c) in s.char_indices() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '[' if s[..i].ends_with("##") => out.push_str("\\u005B"),
            c if c.is_control()
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') =>
            {
                out.push_str(&format!("\\u{:04X}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text for a `#` comment: one line, no control characters, no `##[`.
fn comment_safe(s: &str) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    one_line.replace("##[", "##?")
}

#[cfg(test)]
mod tests;
