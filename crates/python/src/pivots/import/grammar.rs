//! One sentence read as zero or more (object kind, rule) pairs, or the reason it cannot be.
//!
//! Only phrasings whose meaning in the rule forms is certain are read; the sentence must be
//! consumed whole (a qualifier the grammar does not know, "private methods", "unless ...",
//! leaves it unread). Steps: quoted text (`` `x_` ``, `'x_'`, `"x_"`) and name-like words
//! (`snake_case`, `@timer`, `camelCase`) become tokens; examples (`(e.g. `x_run`)`) and
//! counter-examples (`(not `run`)`) are set aside; the rest is lower-cased, a lead-in
//! ("always", "you must", "never", ...) and a tail ("in your code", "even if it is not
//! used", ...) are removed, and the remainder is matched against the phrasings below.
//!
//! Two dialects (`Dialect`): MemoryCode's, whose phrasings must give exactly its dataset's
//! rules (`read`), and a team file's (`read_in` with `Dialect::Team`, what `import` uses),
//! where "functions" is every def, CapWords is PEP 8's, lists are read part by part
//! ("functions/variables", "PascalCase for classes, UPPER_SNAKE for constants") and the
//! parts no object kind selects are listed instead of sinking the sentence.

use crate::pivots::Rule;
use crate::python::ObjectKind as K;
use regex::Regex;
use std::cell::RefCell;
use std::sync::OnceLock;

/// Whose words a sentence is read in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dialect {
    /// MemoryCode's dialogues: its phrasings give exactly its rules (a "function" is a
    /// function outside classes, CamelCase is its regex), and a sentence that names
    /// anything no object kind selects is not read.
    #[default]
    MemoryCode,
    /// A team's instruction file: "functions" is every `def` (functions and methods),
    /// PascalCase / CamelCase / CapWords is PEP 8's (acronyms and a leading `_` allowed),
    /// a variable case rule accepts UPPER_CASE names when the file says constants are
    /// UPPER_SNAKE_CASE, and the parts of a sentence no kind selects ("functions and
    /// classes" for docstrings) are listed as not checkable without sinking the rest.
    Team { constants_upper: bool },
}

impl Dialect {
    fn team(self) -> bool {
        matches!(self, Dialect::Team { .. })
    }
}

/// What a sentence gives: its rules, and the parts of it no rule form checks (team files).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Read {
    pub readings: Vec<Reading>,
    pub unread_parts: Vec<String>,
}

/// One rule read from a sentence, with the id it is proposed under.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    pub id: String,
    pub kind: K,
    pub rule: Rule,
}

/// Longer sentences are not read (a file of one endless line costs no more than its size).
pub const MAX_SENTENCE: usize = 2000;

/// What a sentence says in the rule forms, or why it says nothing certain in them, read as
/// MemoryCode's dialogues phrase their instructions.
pub fn read(sentence: &str) -> Result<Vec<Reading>, String> {
    read_in(sentence, Dialect::MemoryCode).map(|r| r.readings)
}

/// What a sentence says in the rule forms, read in `dialect`.
pub fn read_in(sentence: &str, dialect: Dialect) -> Result<Read, String> {
    if sentence.len() > MAX_SENTENCE {
        return Err(format!(
            "over {MAX_SENTENCE} bytes: too long to be read as one instruction"
        ));
    }
    if sentence.contains(['⟦', '⟧']) {
        return Err("holds the characters ⟦ ⟧, which the reader uses itself".into());
    }
    let n = normalize(sentence, dialect);
    if n.text.is_empty() {
        return Err("no words".into());
    }
    let (negated, body) = lead_in(&n.text, dialect);
    let body = tail(body, dialect);
    // A team's rules about constructs come with their own negations ("no bare `except:`",
    // "`logging`, never `print()`"), each read by the phrasing that took the sentence.
    if dialect.team() {
        if let Some(found) = construct(&n, body, negated) {
            let found = found.map_err(|e| n.restore(&e))?;
            return Ok(Read {
                readings: found,
                unread_parts: Vec::new(),
            });
        }
    }
    let found = frames(&n, body, negated)
        .unwrap_or_else(|| Err(fallback_reason(body)))
        .map_err(|e| n.restore(&e))?;
    if let Some(word) = stray_negation(body) {
        return Err(format!(
            "a negation (\"{word}\") where no phrasing read takes one: its rule is not certain"
        ));
    }
    check_examples(&n, &found)?;
    let mut unread_parts: Vec<String> = Vec::new();
    for u in n.unread.borrow().iter().map(|u| n.restore(u)) {
        if !unread_parts.contains(&u) {
            unread_parts.push(u);
        }
    }
    Ok(Read {
        readings: found,
        unread_parts,
    })
}

// ---------------------------------------------------------------------------------------
// Normalizing

/// A sentence with its quoted and name-like words as tokens `⟦i⟧`, lower-cased elsewhere.
struct Norm {
    text: String,
    tokens: Vec<String>,
    /// Tokens given as examples the rule must accept, and counter-examples it must reject.
    examples: Vec<String>,
    counter: Vec<String>,
    dialect: Dialect,
    /// Parts of the sentence a team file names that no object kind selects, with why.
    unread: RefCell<Vec<String>>,
}

impl Norm {
    /// `text` with its tokens written back (for a reason that quotes the sentence).
    fn restore(&self, text: &str) -> String {
        static TOK: OnceLock<Regex> = OnceLock::new();
        re(&TOK, T)
            .replace_all(text, |c: &regex::Captures| self.token(&c[0]).to_string())
            .into_owned()
    }

    fn token(&self, placeholder: &str) -> &str {
        let i: usize = placeholder
            .trim_start_matches('⟦')
            .trim_end_matches('⟧')
            .parse()
            .unwrap_or(usize::MAX);
        self.tokens.get(i).map_or("", |s| s.as_str())
    }
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("a valid pattern"))
}

/// A token in a pattern.
const T: &str = r"⟦\d+⟧";

fn normalize(sentence: &str, dialect: Dialect) -> Norm {
    // Links keep their text: `[the guide](url)` reads "the guide".
    static LINK: OnceLock<Regex> = OnceLock::new();
    let s = re(&LINK, r"\[([^\]\[]*)\]\([^)\s]*\)").replace_all(sentence, "$1");
    // A JSON member of a team file, `"variables": "snake_case",`, reads `variables: snake_case`.
    static JSON: OnceLock<Regex> = OnceLock::new();
    let s = if dialect.team() {
        re(&JSON, r#"^"([A-Za-z][A-Za-z _-]*)"\s*:\s*"([^"]+)",?$"#).replace(&s, "$1: $2")
    } else {
        s
    };
    let mut tokens = Vec::new();
    let quoted = quote_tokens(&s, &mut tokens);
    // Name-like bare words, emphasis marks dropped, the rest lower-cased.
    let mut words = Vec::new();
    for w in quoted.split_whitespace() {
        let w = w.replace('*', "");
        let lead = w.len() - w.trim_start_matches(['(', '[', '"', '\'']).len();
        let core_end = w
            .trim_end_matches(['.', ',', ';', ':', '!', '?', ')', ']', '"', '\''])
            .len();
        if core_end <= lead {
            words.push(w.to_lowercase());
            continue;
        }
        let (open, core, close) = (&w[..lead], &w[lead..core_end], &w[core_end..]);
        let core = emphasis(core);
        if core.contains('⟦') {
            words.push(format!("{open}{}{close}", core.to_lowercase()));
        } else if name_like(core) {
            words.push(format!("{open}⟦{}⟧{close}", tokens.len()));
            tokens.push(core.to_string());
        } else {
            words.push(format!("{open}{}{close}", core.to_lowercase()));
        }
    }
    let mut text = words.join(" ");
    // Examples and counter-examples.
    let mut examples = Vec::new();
    let mut counter = Vec::new();
    static EXAMPLE: OnceLock<Regex> = OnceLock::new();
    static NOT: OnceLock<Regex> = OnceLock::new();
    static TRAILING: OnceLock<Regex> = OnceLock::new();
    let token_list = format!(r"{T}(?:(?:,| and| or|, and|, or) {T})*");
    let example = re(
        &EXAMPLE,
        &format!(
            r"\s*\((?:e\.g\.?|eg\.?|i\.e\.?|ie\.?|for example|for instance|such as|like|as in|example|examples)[,:]? ({token_list})\)"
        ),
    );
    let not = re(
        &NOT,
        &format!(r"\s*\((?:not|never|but not) ({token_list})\)"),
    );
    let trailing = re(
        &TRAILING,
        &format!(r",? (?:e\.g\.?|for example|for instance|such as|like)[,:]? ({token_list})[.!]?$"),
    );
    let tok = |s: &str, into: &mut Vec<String>| {
        static TOK: OnceLock<Regex> = OnceLock::new();
        for m in re(&TOK, T).find_iter(s) {
            let i: usize = m.as_str()[3..m.as_str().len() - 3].parse().unwrap_or(0);
            into.extend(tokens.get(i).cloned());
        }
    };
    if dialect.team() {
        // "(parameters and return values)" after "function signatures" says what an
        // annotation covers; a bare list of names in parentheses gives examples.
        static COVERS: OnceLock<Regex> = OnceLock::new();
        static BARE: OnceLock<Regex> = OnceLock::new();
        let covers = re(
            &COVERS,
            r"\s*\((?:both )?(?:parameters|arguments|params|inputs)(?:,| and| &| /) (?:the )?(?:return|outputs?)[^)]*\)",
        );
        text = covers.replace_all(&text, "").into_owned();
        let bare = re(&BARE, &format!(r"\s*\(({token_list})\)"));
        while let Some(c) = bare.captures(&text) {
            tok(&c[1], &mut examples);
            text.replace_range(c.get(0).expect("whole match").range(), "");
        }
    }
    for (pattern, into) in [(example, &mut examples), (not, &mut counter)] {
        while let Some(c) = pattern.captures(&text) {
            tok(&c[1], into);
            text.replace_range(c.get(0).expect("whole match").range(), "");
        }
    }
    if let Some(c) = trailing.captures(&text) {
        tok(&c[1], &mut examples);
        text.replace_range(c.get(0).expect("whole match").range(), "");
    }
    let mut text = text
        .trim()
        .trim_end_matches(['.', '!', ':', ';', ',', '?'])
        .trim()
        .to_string();
    if dialect.team() {
        // "docstrings: google-style for functions and classes": the label is the feature.
        static FEATURE_LABEL: OnceLock<Regex> = OnceLock::new();
        let fl = re(
            &FEATURE_LABEL,
            r"^(docstrings?|type hints?|type annotations?|annotations?): (?:(?:google|numpy|sphinx)[- ]style |required |mandatory |always )*(for|on|in) ",
        );
        text = fl.replace(&text, "$1 $2 ").into_owned();
    }
    Norm {
        text,
        tokens,
        examples,
        counter,
        dialect,
        unread: RefCell::new(Vec::new()),
    }
}

/// Replace `` `code` ``, `'quoted'` and `"quoted"` text by tokens.
fn quote_tokens(s: &str, tokens: &mut Vec<String>) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let closers: &[char] = match c {
            '`' => &['`'],
            '\'' | '‘' => &['\'', '’'],
            '"' | '“' => &['"', '”'],
            _ => &[],
        };
        let opens = c == '`'
            || (!closers.is_empty()
                && (i == 0 || chars[i - 1].is_whitespace() || "([{/,:;".contains(chars[i - 1])));
        if opens {
            // Quoted text is short (at most 100 characters): the search stops there, so a
            // line of unmatched quotes costs its length, not its square.
            let close = (i + 1..chars.len().min(i + 103)).find(|&j| {
                closers.contains(&chars[j])
                    && (c == '`'
                        || chars
                            .get(j + 1)
                            .is_none_or(|n| n.is_whitespace() || ".,;:!?)]".contains(*n)))
            });
            if let Some(j) = close {
                let inner: String = chars[i + 1..j].iter().collect();
                if !inner.trim().is_empty() && inner.trim() == inner && inner.len() <= 100 {
                    out.push_str(&format!("⟦{}⟧", tokens.len()));
                    tokens.push(inner);
                    i = j + 1;
                    continue;
                }
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

/// `_word_` emphasis (not a dunder) is the word.
fn emphasis(w: &str) -> &str {
    match w.strip_prefix('_').and_then(|r| r.strip_suffix('_')) {
        Some(inner) if !inner.is_empty() && inner.chars().all(|c| c.is_ascii_alphabetic()) => inner,
        _ => w,
    }
}

/// A bare word that names something: it holds `_`, starts with `@`, or mixes cases the way
/// names do (`camelCase`, `PascalCase`), or is `UPPERCASE` or `kebab-case`.
fn name_like(w: &str) -> bool {
    static CAMEL: OnceLock<Regex> = OnceLock::new();
    let word = |c: char| c.is_alphanumeric() || c == '_';
    (w.contains('_') && w.chars().all(word))
        || (w.len() > 1
            && w.starts_with('@')
            && w[1..].chars().all(|c| word(c) || c == '.' || c == '(' || c == ')'))
        || re(
            &CAMEL,
            r"^(?:[a-z]+(?:[A-Z][a-z0-9]*)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|UPPERCASE|kebab-case)$",
        )
        .is_match(w)
}

/// Removes a lead-in ("always", "you must", "please never", ...); true when it negates.
fn lead_in(text: &str, dialect: Dialect) -> (bool, &str) {
    static ONE_TOKEN: OnceLock<Regex> = OnceLock::new();
    const NEGATING: [&str; 22] = [
        "you must never",
        "you must not",
        "you should never",
        "you should not",
        "please do not",
        "please don't",
        "please never",
        "we never",
        "we do not",
        "we don't",
        "do not ever",
        "do not",
        "don't",
        "dont",
        "must never",
        "must not",
        "mustn't",
        "should never",
        "should not",
        "shouldn't",
        "never ever",
        "never",
    ];
    const NEUTRAL: [&str; 27] = [
        "you must always",
        "you should always",
        "you must",
        "you should",
        "you need to",
        "you have to",
        "make sure that you",
        "make sure that",
        "make sure you",
        "make sure to",
        "make sure",
        "ensure that",
        "ensure",
        "be sure to",
        "remember to",
        "ensure that you",
        "ensure you",
        "we always",
        "we",
        "please",
        "always",
        "must",
        "should",
        "consistently",
        "also",
        "do",
        "strictly",
    ];
    let mut t = text;
    let mut negated = false;
    // Labels "naming:", "important:" before the instruction (not "functions: snake_case",
    // and none with a negation: "never do this: use camelCase ..." is not read).
    while let Some((label, rest)) = t.split_once(": ") {
        // "constants: `UPPER_CASE`" names what the case is for: no label.
        let only_a_token = re(&ONE_TOKEN, &format!("^{T}$")).is_match(rest.trim());
        if only_a_token
            || label.is_empty()
            || nouns_in(label, dialect).is_ok()
            || stray_negation(label).is_some()
            || label.len() > 30
            || !label
                .chars()
                .all(|c| c.is_alphabetic() || c == ' ' || c == '-')
        {
            break;
        }
        t = rest.trim_start();
    }
    'strip: loop {
        for (list, neg) in [(&NEGATING[..], true), (&NEUTRAL[..], false)] {
            for lead in list {
                if let Some(rest) = t.strip_prefix(lead) {
                    if let Some(rest) = rest.strip_prefix([' ', ',']) {
                        t = rest.trim_start_matches([' ', ',']);
                        negated ^= neg;
                        continue 'strip;
                    }
                }
            }
        }
        return (negated, t);
    }
}

/// Removes a tail that does not change the rule ("in your code", "at all times", ...).
fn tail(text: &str, dialect: Dialect) -> &str {
    const TAILS: [&str; 30] = [
        " at all times",
        " from now on",
        " going forward",
        " in all code",
        " in all new code",
        " in your code",
        " in our code",
        " in the code",
        " in the codebase",
        " throughout the codebase",
        " across the codebase",
        " in this codebase",
        " in this repository",
        " in this repo",
        " in python code",
        " in all python code",
        " in python",
        " in all python files",
        " in every file",
        " in all files",
        " everywhere",
        " always",
        " without exception",
        " even if it is not used",
        " even if it's not used",
        " even if it isn't used",
        " even if unused",
        " even when unused",
        " even when it is not used",
        " even if not used",
    ];
    let mut t = text.trim_end_matches([',', ' ']);
    'strip: loop {
        for tail in TAILS {
            if let Some(rest) = t.strip_suffix(tail) {
                t = rest.trim_end_matches([',', ' ']);
                continue 'strip;
            }
        }
        break;
    }
    if dialect.team()
        && (t.contains("docstring")
            || t.contains("annotation")
            || t.contains("type hint")
            || t.contains("typehint"))
    {
        // What a docstring or annotation is to say or cover: its presence is the rule.
        static GLOSS: OnceLock<Regex> = OnceLock::new();
        let gloss = re(
            &GLOSS,
            r"(?:,? (?:including|incl\.|with) (?:the |their |its )?return (?:types?|values?)| for (?:all |their |its )?(?:parameters|arguments|params)(?: and return (?:types?|values?))?| to (?:explain|describe|document|clarify) .+|, (?:thoroughly |clearly |briefly )?(?:explaining|describing|documenting|using|covering|detailing) .+| (?:describing|explaining|documenting) .+)$",
        );
        if let Some(m) = gloss.find(t) {
            t = t[..m.start()].trim_end_matches([',', ' ']);
        }
    }
    t
}

/// A negating word left in a sentence a phrasing took: only "must not" / "should never"
/// (and the like) before the verb are read, by the decorator, import and presence
/// phrasings; any other would be dropped from the rule, so the sentence is not read.
fn stray_negation(body: &str) -> Option<&'static str> {
    static PLACED: OnceLock<Regex> = OnceLock::new();
    let placed = re(
        &PLACED,
        r"\b(?:must|should|shall|need to|needs to|have to|has to|will) (?:not|never) ",
    );
    let rest = placed.replace_all(body, " ");
    const WORDS: [&str; 18] = [
        "not",
        "never",
        "no",
        "don't",
        "dont",
        "doesn't",
        "isn't",
        "aren't",
        "avoid",
        "without",
        "neither",
        "nor",
        "cannot",
        "can't",
        "shouldn't",
        "mustn't",
        "none",
        "nothing",
    ];
    rest.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .find_map(|w| WORDS.iter().find(|n| **n == w).copied())
}

// ---------------------------------------------------------------------------------------
// Object kinds named in a sentence

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Noun {
    Function,
    Method,
    Class,
    Variable,
    Attribute,
    FunctionArgument,
}

/// `all functions and methods`, `every class`, `function, method and variable names`; in
/// a team's file also `functions/variables`, and a function is also a method.
fn nouns(n: &Norm, obj: &str) -> Result<Vec<Noun>, String> {
    let (mut out, unread) = nouns_in(obj, n.dialect)?;
    if n.dialect.team() && out.contains(&Noun::Function) && !out.contains(&Noun::Method) {
        let at = out.iter().position(|x| *x == Noun::Function).unwrap_or(0);
        out.insert(at + 1, Noun::Method);
    }
    n.unread.borrow_mut().extend(unread);
    Ok(out)
}

/// The object kinds `obj` names, and (team files) the parts that name none, with why.
fn nouns_in(obj: &str, dialect: Dialect) -> Result<(Vec<Noun>, Vec<String>), String> {
    static SPLIT: OnceLock<Regex> = OnceLock::new();
    static TEAM_SPLIT: OnceLock<Regex> = OnceLock::new();
    let split = if dialect.team() {
        re(
            &TEAM_SPLIT,
            r",? (?:and|or|as well as|and also|&) |, |/| / ",
        )
    } else {
        re(&SPLIT, r",? (?:and|or|as well as|and also) |, ")
    };
    let obj = obj.trim();
    let mut out = Vec::new();
    let mut unread = Vec::new();
    let mut first_error = None;
    for (i, item) in split.split(obj).enumerate() {
        let item = item.trim();
        let unpythoned = item.replace("python ", "");
        let got = if dialect.team() {
            noun(&unpythoned).or_else(|e| {
                let w = item.trim_start_matches("all ").trim_start_matches("the ");
                match w {
                    "function signature"
                    | "function signatures"
                    | "function definition"
                    | "function definitions"
                    | "python function"
                    | "python functions" => Ok(Noun::Function),
                    "method signature" | "method signatures" => Ok(Noun::Method),
                    _ => Err(e),
                }
            })
        } else {
            noun(item)
        };
        match got {
            Ok(n) if !out.contains(&n) => out.push(n),
            Ok(_) => {}
            // A qualifier of the first part ("all public classes and functions") may
            // hold for every part: the whole is not read.
            Err(e)
                if dialect.team()
                    && i == 0
                    && (e.contains("a subset of") || e.contains("condition")) =>
            {
                return Err(e)
            }
            Err(e) if dialect.team() => unread.push(e),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    if out.is_empty() {
        return Err(unread
            .into_iter()
            .next()
            .unwrap_or_else(|| format!("`{obj}` names no object kind")));
    }
    Ok((out, unread))
}

fn noun(item: &str) -> Result<Noun, String> {
    const DETERMINERS: [&str; 14] = [
        "all of the ",
        "all the ",
        "all your ",
        "all ",
        "every single ",
        "every ",
        "each ",
        "the ",
        "your ",
        "our ",
        "any ",
        "new ",
        "a ",
        "an ",
    ];
    let mut w = item;
    'strip: loop {
        for d in DETERMINERS {
            if let Some(rest) = w.strip_prefix(d) {
                w = rest;
                continue 'strip;
            }
        }
        break;
    }
    let w = w
        .strip_suffix(" names")
        .or(w.strip_suffix(" name"))
        .unwrap_or(w);
    let w = w.strip_suffix("'s").unwrap_or(w);
    let head = |s: &str| -> Option<Noun> {
        Some(match s {
            "function argument"
            | "function arguments"
            | "function parameter"
            | "function parameters"
            | "function's argument"
            | "function's arguments" => Noun::FunctionArgument,
            "function" | "functions" => Noun::Function,
            "method" | "methods" => Noun::Method,
            "class" | "classes" => Noun::Class,
            "variable" | "variables" => Noun::Variable,
            "attribute" | "attributes" | "instance attribute" | "instance attributes" => {
                Noun::Attribute
            }
            _ => return None,
        })
    };
    if let Some(n) = head(w) {
        return Ok(n);
    }
    const QUALIFIERS: [&str; 12] = [
        "but",
        "except",
        "unless",
        "if",
        "when",
        "where",
        "that",
        "which",
        "who",
        "whose",
        "other than",
        "apart from",
    ];
    if let Some(q) = QUALIFIERS
        .iter()
        .find(|q| w.split(' ').any(|x| x == **q) || w.contains(&format!(" {q} ")))
    {
        return Err(format!(
            "`{w}`: the condition (\"{q} ...\") cannot be put in a rule, which holds for every \
             object of a kind"
        ));
    }
    let last = w.rsplit(' ').next().unwrap_or(w);
    if matches!(
        last,
        "argument" | "arguments" | "parameter" | "parameters" | "args" | "params"
    ) {
        return Err(format!(
            "`{w}`: only the arguments of functions outside classes have an object kind \
             (`function argument`); method arguments have none"
        ));
    }
    if matches!(last, "constant" | "constants") {
        return Err(format!(
            "`{w}`: no object kind selects constants (`variable` is every assignment target)"
        ));
    }
    if matches!(
        last,
        "module" | "modules" | "file" | "files" | "package" | "packages" | "folder" | "folders"
    ) {
        return Err(format!(
            "`{w}`: module, package and file names have no object kind"
        ));
    }
    let last_two = w.rsplitn(3, ' ').take(2).collect::<Vec<_>>();
    let last_two = last_two.into_iter().rev().collect::<Vec<_>>().join(" ");
    if let Some(kind) = head(last).or(head(&last_two)) {
        let kind = name_kind(kind).name();
        return Err(format!(
            "`{w}`: a subset of the {kind} objects that no object kind selects (a rule holds \
             for every {kind})"
        ));
    }
    Err(format!("`{w}` is not an object kind"))
}

fn slug(kind: K) -> String {
    kind.name().replace(' ', "-")
}

fn name_kind(n: Noun) -> K {
    match n {
        Noun::Function => K::Function,
        Noun::Method => K::Method,
        Noun::Class => K::Class,
        Noun::Variable => K::Variable,
        Noun::Attribute => K::Attribute,
        Noun::FunctionArgument => K::FunctionArgument,
    }
}

// ---------------------------------------------------------------------------------------
// The phrasings

type Frame = Option<Result<Vec<Reading>, String>>;

fn frames(n: &Norm, body: &str, negated: bool) -> Frame {
    if n.dialect.team() {
        // "every function must have docstrings and type hints": each feature on its own.
        static BOTH: OnceLock<Regex> = OnceLock::new();
        let feat = r"(?:(?:google-style |numpy-style |proper |clear )?docstrings?|type hints?|type annotations?|annotations)";
        let both = re(
            &BOTH,
            &format!(r"\b(?P<a>{feat})(?:,? and |, | & )(?P<b>{feat})\b"),
        );
        if let Some(c) = both.captures(body) {
            let whole = c.get(0).expect("whole match").range();
            let mut all = Vec::new();
            for part in [&c["a"], &c["b"]] {
                let one = format!("{}{part}{}", &body[..whole.start], &body[whole.end..]);
                match presence(n, &one, negated) {
                    Some(Ok(r)) => all.extend(r),
                    other => return other,
                }
            }
            return Some(Ok(all));
        }
    }
    naming(n, body, negated)
        .or_else(|| case(n, body, negated))
        .or_else(|| decorator(n, body, negated))
        .or_else(|| import(n, body, negated))
        .or_else(|| presence(n, body, negated))
}

/// Prefix, suffix, substring and digit rules on names.
fn naming(n: &Norm, body: &str, negated: bool) -> Frame {
    static FRAMES: OnceLock<Vec<Regex>> = OnceLock::new();
    let frames = FRAMES.get_or_init(|| {
        let what = r"(?:the |a )?(?:(?:prefix|suffix|string|substring|text|letters|characters) )?";
        let modal = r"(?:must |should |shall |need to |have to |will |always |are to |have to always |must always |should always )?";
        // One name part, or several joined by "or": `x_` or `y_`; "an underscore" is `_`.
        let tok = format!(r"(?P<tok>{T}(?:(?:,|, or| or) {T})*|an underscore)");
        [
            format!(r"^(?P<verb>start|begin|prefix|end|suffix) (?P<obj>.+?) names with {what}{tok}$"),
            format!(r"^(?P<verb>prefix|suffix) (?P<obj>.+?) with {what}{tok}$"),
            format!(r"^(?P<obj>.+?) names {modal}(?P<verb>start|begin|end) with {what}{tok}$"),
            format!(r"^(?P<obj>.+?) names {modal}(?:be |are |is )(?P<verb>prefixed|suffixed) (?:with|by) {what}{tok}$"),
            format!(r"^use (?:the |a )?(?P<verb>prefix|suffix) {tok} (?:for|in|on) (?P<obj>.+?)$"),
            format!(r"^use (?:the |a )?{tok} (?P<verb>prefix|suffix) (?:for|in|on) (?P<obj>.+?)$"),
            format!(r"^use {tok} as (?:a |the )?(?P<verb>prefix|suffix) (?:for|in|on|of) (?P<obj>.+?)$"),
            format!(r"^(?P<verb>include|contain|use|put|add) {what}{tok} in (?P<obj>.+?) names$"),
            format!(r"^(?P<obj>.+?) names {modal}(?P<verb>contain|include) {what}{tok}$"),
            r"^(?P<verb>include|contain|use|put|add|have) (?P<amount>a single |one single |a |one |at least one |exactly one |only one )?(?:digit|number|numeral)s? in (?P<obj>.+?) names$".to_string(),
            r"^(?P<obj>.+?) names (?:must |should |shall )?(?:always )?(?P<verb>contain|include|have) (?P<amount>a single |one single |a |one |at least one |exactly one |only one )?(?:digit|number|numeral)s?$".to_string(),
            r"^(?P<verb>end) (?P<obj>.+?) names with (?P<amount>a |one )?(?:digit|number|numeral)$".to_string(),
        ]
        .iter()
        .map(|p| Regex::new(p).expect("a valid pattern"))
        .collect()
    });
    let c = frames.iter().find_map(|f| f.captures(body))?;
    Some((|| {
        if negated {
            return Err(
                "a name that must not start with, end with or contain something needs a \
                 look-ahead, which the rule forms' regular expressions do not have"
                    .to_string(),
            );
        }
        let verb = &c["verb"];
        let (what, pattern) = if let Some(toks) = c.name("tok") {
            static TOK: OnceLock<Regex> = OnceLock::new();
            let toks: Vec<&str> = if toks.as_str() == "an underscore" {
                vec!["_"]
            } else {
                re(&TOK, T)
                    .find_iter(toks.as_str())
                    .map(|m| n.token(m.as_str()))
                    .collect()
            };
            let mut parts = Vec::new();
            for tok in toks {
                if tok.is_empty() || !tok.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(format!(
                        "`{tok}` cannot be part of a Python name (letters, digits and `_`)"
                    ));
                }
                parts.push(regex::escape(tok));
            }
            let e = if parts.len() == 1 {
                parts.remove(0)
            } else {
                format!("(?:{})", parts.join("|"))
            };
            match verb {
                "start" | "begin" | "prefix" | "prefixed" => ("prefix", format!("^{e}")),
                "end" | "suffix" | "suffixed" => ("suffix", format!(".*{e}$")),
                _ => ("contains", format!(".*{e}")),
            }
        } else {
            let amount = c.name("amount").map_or("", |m| m.as_str().trim());
            match (verb, amount) {
                ("end", _) => ("digit", r".*\d$".to_string()),
                (_, "at least one") => ("digit", r".*\d".to_string()),
                (_, "exactly one" | "only one") => ("digit", r"\D*\d\D*$".to_string()),
                _ => {
                    return Err("a digit in names: neither where it goes nor whether \
                                more than one may appear is said"
                        .to_string())
                }
            }
        };
        let rule = Rule::regex(&pattern).map_err(|e| e.to_string())?;
        Ok(nouns(n, &c["obj"])?
            .into_iter()
            .map(|noun| {
                let kind = name_kind(noun);
                Reading {
                    id: format!("{}-{what}", slug(kind)),
                    kind,
                    rule: rule.clone(),
                }
            })
            .collect())
    })())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Case {
    Snake,
    Camel,
    Pascal,
    Upper,
}

impl Case {
    /// The regex of a case in `dialect`, for names of kind `noun`.
    fn regex_in(self, dialect: Dialect, noun: Noun) -> String {
        let Dialect::Team { constants_upper } = dialect else {
            return self.regex().to_string();
        };
        let own = match self {
            // PEP 8's CapWords: acronyms are capitalised (`HTTPServer`), and a leading `_`
            // marks a private name (`_Helper`).
            Case::Pascal => "^_*[A-Z][a-zA-Z0-9]*$",
            c => c.regex(),
        };
        if noun != Noun::Variable || !matches!(self, Case::Snake | Case::Camel) {
            return own.to_string();
        }
        // A variable's case leaves alone what PEP 8 names otherwise: type aliases and
        // TypeVars in CapWords (`JsonDict = dict[str, Any]`), and constants in UPPER_CASE
        // when the files say so.
        let inner = own.trim_start_matches('^').trim_end_matches('$');
        let upper = if constants_upper {
            "|_*[A-Z][A-Z0-9_]*"
        } else {
            ""
        };
        format!("^(?:{inner}|_*[A-Z][a-zA-Z0-9]*{upper})$")
    }

    /// The names a team's case rule leaves alone (its `ignore-names`): the ones a framework
    /// chose, not the team. unittest's hooks (pep8-naming's default `ignore-names`),
    /// `ast.NodeVisitor`'s and docutils' `visit_*` / `depart_*` (`visit_Call`),
    /// `http.server`'s `do_*` (`do_GET`); under camelCase also dunders and `generic_visit`.
    fn ignored_in(self, dialect: Dialect, noun: Noun) -> Vec<String> {
        if !dialect.team() {
            return Vec::new();
        }
        let names: &[&str] = match (self, noun) {
            (Case::Snake, Noun::Method) => &[
                "setUp",
                "tearDown",
                "setUpClass",
                "tearDownClass",
                "asyncSetUp",
                "asyncTearDown",
                "setUpTestData",
                "visit_*",
                "depart_*",
                "do_*",
            ],
            (Case::Snake, Noun::Function) => &["setUpModule", "tearDownModule"],
            (Case::Camel, Noun::Method) => {
                &["__*__", "visit_*", "depart_*", "do_*", "generic_visit"]
            }
            (Case::Camel, Noun::Function) => &["__*__"],
            _ => &[],
        };
        names.iter().map(|s| s.to_string()).collect()
    }

    fn regex(self) -> &'static str {
        match self {
            Case::Snake => "^[a-z_][a-z0-9_]*$",
            Case::Camel => "^[a-z][a-zA-Z0-9]*$",
            // A capital, then a small letter or digit, then letters and digits: `LruCache`,
            // `Point3D`; not `LRUCache` (its first word is not capitalised) nor `Lru_cache`.
            Case::Pascal => "^[A-Z](?:[a-z0-9][a-zA-Z0-9]*)?$",
            Case::Upper => "^[A-Z][A-Z0-9_]*$",
        }
    }

    fn slug(self) -> &'static str {
        match self {
            Case::Snake => "snake-case",
            Case::Camel => "camel-case",
            Case::Pascal => "pascal-case",
            Case::Upper => "upper-case",
        }
    }
}

/// A case's name as written: a token (`snake_case`, `CamelCase`) or plain words.
fn case_named(n: &Norm, words: &str) -> Option<Result<Case, String>> {
    let words = words.trim();
    let words = words.strip_prefix("the ").unwrap_or(words);
    let words = words.strip_prefix("all ").unwrap_or(words);
    let name = if words.starts_with('⟦') {
        n.token(words).to_string()
    } else {
        words.to_string()
    };
    Some(Ok(match name.as_str() {
        "snake_case"
        | "snake case"
        | "lower_snake_case"
        | "lower snake case"
        | "lower_case_with_underscores"
        | "lowercase_with_underscores"
        | "lowercase with underscores"
        | "lower case with underscores"
        | "lowercase"
        | "lower case"
        | "lower-case" => Case::Snake,
        "camelCase" | "lowerCamelCase" | "lower camel case" | "mixedCase" => Case::Camel,
        "PascalCase" | "CamelCase" | "UpperCamelCase" | "upper camel case" | "pascal case"
        | "CapWords" | "CapitalizedWords" | "Pascal case" => Case::Pascal,
        "UPPER_CASE"
        | "UPPERCASE"
        | "SCREAMING_SNAKE_CASE"
        | "UPPER_SNAKE_CASE"
        | "CONSTANT_CASE"
        | "upper case"
        | "uppercase"
        | "upper-case"
        | "caps"
        | "capitals"
        | "capital letters"
        | "uppercase letters"
        | "upper case letters"
        | "screaming snake case"
        | "upper snake case"
        | "constant case" => Case::Upper,
        "UPPER_SNAKE" | "SCREAMING_SNAKE" | "upper snake" if n.dialect.team() => Case::Upper,
        "camel case" | "camelcase" | "camel-case" => {
            return Some(Err(
                "\"camel case\" without its capitals: lower (`camelCase`) or \
                             upper (`CamelCase`, `PascalCase`)?"
                    .into(),
            ))
        }
        "kebab-case" | "kebab case" => {
            return Some(Err("kebab-case cannot spell a Python name".into()))
        }
        _ => return None,
    }))
}

/// "use snake_case for functions", "class names are PascalCase", "name classes in
/// CamelCase", "snake_case for functions and variables, PascalCase for classes".
fn case(n: &Norm, body: &str, negated: bool) -> Frame {
    static FRAMES: OnceLock<Vec<Regex>> = OnceLock::new();
    let frames = FRAMES.get_or_init(|| {
        let case = r"(?P<case>(?:the )?(?:all )?(?:⟦\d+⟧|[a-z][a-z -]*?))(?: (?:naming )?(?:convention|style|format|notation|naming))?";
        let names = r"(?P<obj>.+?)";
        [
            format!(r"^use {case} (?:for|in|on|with|when naming) {names}$"),
            format!(r"^name {names} (?:in|using|with) {case}$"),
            format!(r"^write {names} in {case}$"),
            format!(r"^{names} (?:must |should |shall |need to |have to |will )?(?:always )?(?:be |are |is |use )(?:written |named |spelled |spelt |formatted )?(?:in |using |with )?{case}$"),
            format!(r"^{names} in {case}$"),
            format!(r"^{names}: {case}$"),
            format!(r"^{case} (?:for|in) {names}$"),
        ]
        .iter()
        .map(|p| Regex::new(p).expect("a valid pattern"))
        .collect()
    });
    static PARTS: OnceLock<Regex> = OnceLock::new();
    let one = |part: &str| -> Option<Result<Vec<Reading>, String>> {
        let (c, case) = frames.iter().find_map(|f| {
            let c = f.captures(part)?;
            let case = case_named(n, &c["case"])?;
            Some((c, case))
        })?;
        Some((|| {
            let case = case?;
            if negated {
                return Err("a case a name must not be in has no rule form (a regular \
                            expression without look-ahead)"
                    .to_string());
            }
            let obj = &c["obj"];
            let nouns = nouns(n, obj)?;
            let mut out = Vec::new();
            for noun in nouns {
                let rule = Rule::regex_ignoring(
                    &case.regex_in(n.dialect, noun),
                    &case.ignored_in(n.dialect, noun),
                )
                .map_err(|e| e.to_string())?;
                let kind = name_kind(noun);
                out.push(Reading {
                    id: format!("{}-{}", slug(kind), case.slug()),
                    kind,
                    rule,
                });
            }
            Ok(out)
        })())
    };
    let mark = n.unread.borrow().len();
    // A team file's sentence is tried in parts first: its lenient lists would take "and
    // variable names, PascalCase for classes" as a part no kind selects.
    let single = if n.dialect.team() { None } else { one(body) };
    if let Some(Ok(_)) = single {
        return single;
    }
    n.unread.borrow_mut().truncate(mark);
    // Several cases in one sentence: "use snake_case for functions, PascalCase for
    // classes". Each part must be read whole, or the sentence is read as one.
    // Cut only where a case's name follows: "functions and variables" stays whole.
    let mut parts: Vec<&str> = Vec::new();
    let mut from = 0;
    for m in re(&PARTS, r"(?:,|;) (?:and )?(?:use )?| and (?:use )?").find_iter(body) {
        let next = &body[m.end()..];
        let word = next.split(' ').next().unwrap_or("");
        if matches!(case_named(n, word), Some(Ok(_))) {
            parts.push(&body[from..m.start()]);
            from = m.end();
        }
    }
    parts.push(&body[from..]);
    let whole = |single: Frame| {
        if n.dialect.team() {
            n.unread.borrow_mut().truncate(mark);
            one(body)
        } else {
            single
        }
    };
    if parts.len() < 2 {
        return whole(single);
    }
    let use_lead = body.starts_with("use ");
    let mut all = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let p = if use_lead && i > 0 && !p.starts_with("use ") {
            format!("use {p}")
        } else {
            p.to_string()
        };
        match one(&p) {
            Some(Ok(r)) => all.extend(r),
            // A team file's part for what no kind selects ("UPPER_SNAKE for constants")
            // is listed, not sinking the others.
            Some(Err(e)) if n.dialect.team() => n.unread.borrow_mut().push(format!("`{p}`: {e}")),
            _ => return whole(single),
        }
    }
    if all.is_empty() {
        return whole(single);
    }
    Some(Ok(all))
}

/// A decorator a token names: `@timer`, `@pedantic.timer`, `timer()` (its last name).
fn decorator_name(tok: &str) -> Result<String, String> {
    static DEC: OnceLock<Regex> = OnceLock::new();
    let d = re(&DEC, r"^@?(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)(?:\(\))?$");
    match d.captures(tok) {
        Some(c) => Ok(c[1].to_string()),
        None if tok.contains('(') => Err(format!(
            "`{tok}`: a decorator's arguments are not checked, only its name"
        )),
        None => Err(format!("`{tok}` is not a decorator's name")),
    }
}

/// "add the `@timer` decorator (from the `pedantic` module) to all methods", "decorate
/// functions with `@timer`", "every class must be decorated with `@dataclass`".
fn decorator(n: &Norm, body: &str, negated: bool) -> Frame {
    static FRAMES: OnceLock<Vec<Regex>> = OnceLock::new();
    let frames = FRAMES.get_or_init(|| {
        let dec = format!(r"(?:the |a )?(?P<tok>{T})(?P<word> decorator)?(?: from (?:the )?(?:{T}|[a-z_][a-z0-9_.]*)(?: module| package| library)?)?");
        [
            format!(r"^(?:add|include|use|apply|put|attach) {dec} (?:to|on|for) (?P<obj>.+?)$"),
            format!(r"^decorate (?P<obj>.+?) with {dec}$"),
            format!(r"^(?P<obj>.+?) (?:must|should|shall|need to|have to|will) (?P<neg>not |never )?(?:always )?(?:be decorated with|have|carry|use|include) {dec}$"),
        ]
        .iter()
        .map(|p| Regex::new(p).expect("a valid pattern"))
        .collect()
    });
    let c = frames.iter().find_map(|f| f.captures(body))?;
    let tok = n.token(&c["tok"]);
    if !tok.starts_with('@') && c.name("word").is_none() {
        return None;
    }
    let negated = negated ^ c.name("neg").is_some();
    Some((|| {
        let name = decorator_name(tok)?;
        let mut out = Vec::new();
        for noun in nouns(n, &c["obj"])? {
            let kind = match noun {
                Noun::Function => K::FunctionDecorator,
                Noun::Method => K::MethodDecorator,
                Noun::Class => K::ClassDecorator,
                _ => {
                    return Err(format!(
                        "only functions, methods and classes carry decorators, not `{}`",
                        c["obj"].trim()
                    ))
                }
            };
            out.push(Reading {
                id: format!("{}{}-{name}", if negated { "no-" } else { "" }, slug(kind)),
                kind,
                rule: Rule::Member {
                    name: name.clone(),
                    value: !negated,
                },
            });
        }
        Ok(out)
    })())
}

/// "always import `secrets`", "never import the `pickle` module", "`pickle` must not be
/// imported", "use `import json`".
fn import(n: &Norm, body: &str, negated: bool) -> Frame {
    static FRAMES: OnceLock<Vec<Regex>> = OnceLock::new();
    let frames = FRAMES.get_or_init(|| {
        let module = r"(?: module| package| library)";
        [
            format!(r"^import (?:the )?(?P<tok>{T}){module}?$"),
            format!(r"^import (?:the )?(?P<word>[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*){module}$"),
            format!(r"^(?:the )?(?P<tok>{T}){module}? (?:must|should|shall|has to|needs to|will) (?P<neg>not |never )?(?:always )?be imported$"),
            format!(r"^(?:use|write|add|include) (?:the |an? )?(?P<stmt>{T})(?: statement| line)?$"),
        ]
        .iter()
        .map(|p| Regex::new(p).expect("a valid pattern"))
        .collect()
    });
    let c = frames.iter().find_map(|f| f.captures(body))?;
    let name = if let Some(t) = c.name("tok") {
        n.token(t.as_str()).to_string()
    } else if let Some(w) = c.name("word") {
        w.as_str().to_string()
    } else {
        let stmt = n.token(&c["stmt"]);
        if stmt.starts_with("from ") && stmt.contains(" import ") {
            return Some(Err(format!(
                "`{stmt}`: `from` imports are not collected (only `import module` statements)"
            )));
        }
        stmt.strip_prefix("import ")?.trim().to_string()
    };
    let negated = negated ^ c.name("neg").is_some();
    static MODULE: OnceLock<Regex> = OnceLock::new();
    if !re(&MODULE, r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$").is_match(&name) {
        return Some(Err(format!(
            "`{name}` is not a module name (`import x`, `import x.y`; `from` imports and \
             `as` names are not checked)"
        )));
    }
    Some(Ok(vec![Reading {
        id: format!("{}import-{name}", if negated { "no-" } else { "" }),
        kind: K::Import,
        rule: Rule::Member {
            name,
            value: !negated,
        },
    }]))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Feature {
    Docstring,
    Try,
    Assert,
    Annotation,
    Comment,
}

fn feature(words: &str, dialect: Dialect) -> Option<Feature> {
    let mut w = words.trim();
    if dialect.team() {
        // Qualities of a docstring or annotation (its style, how good it is): its
        // presence is what a rule checks.
        const QUALITIES: [&str; 24] = [
            "a",
            "an",
            "the",
            "proper",
            "explicit",
            "descriptive",
            "comprehensive",
            "concise",
            "clear",
            "detailed",
            "appropriate",
            "full",
            "complete",
            "python",
            "google-style",
            "numpy-style",
            "sphinx-style",
            "meaningful",
            "informative",
            "brief",
            "short",
            "good",
            "and",
            "accurate",
        ];
        const STYLES: [&str; 3] = ["google style ", "numpy style ", "sphinx style "];
        loop {
            let word = w.split([' ', ',']).next().unwrap_or("");
            if let Some(s) = STYLES.iter().find(|s| w.starts_with(**s)) {
                w = w[s.len()..].trim_start_matches([',', ' ']);
            } else if !word.is_empty() && QUALITIES.contains(&word) && w.len() > word.len() {
                w = w[word.len()..].trim_start_matches([',', ' ']);
            } else {
                break;
            }
        }
        if matches!(
            w,
            "typehints"
                | "type-hints"
                | "type hinting"
                | "typing"
                | "type annotation"
                | "type annotations"
                | "typings"
        ) {
            return Some(Feature::Annotation);
        }
    }
    let w = [
        "a ",
        "an ",
        "at least one ",
        "one or more ",
        "some ",
        "the ",
    ]
    .iter()
    .find_map(|d| w.strip_prefix(d))
    .unwrap_or(w);
    Some(match w {
        "docstring" | "docstrings" | "doc string" | "doc strings" | "doc-string"
        | "doc-strings" => Feature::Docstring,
        "try statement"
        | "try statements"
        | "try block"
        | "try blocks"
        | "try/except block"
        | "try/except blocks"
        | "try-except block"
        | "try-except blocks"
        | "try/except statement"
        | "try/except statements"
        | "try-except statement"
        | "try-except statements"
        | "try/except"
        | "try-except"
        | "try" => Feature::Try,
        "assert statement" | "assert statements" | "assertion" | "assertions" | "assert"
        | "asserts" => Feature::Assert,
        "annotations" | "type annotations" | "type hints" | "type hint" | "annotation"
        | "type annotation" => Feature::Annotation,
        "comment" | "comments" | "code comments" => Feature::Comment,
        _ => return None,
    })
}

/// Docstrings, `try`, `assert`, annotations (each function or method has one / none has)
/// and comments (the file has one / none).
fn presence(n: &Norm, body: &str, negated: bool) -> Frame {
    static FRAMES: OnceLock<Vec<Regex>> = OnceLock::new();
    static TEAM_FRAMES: OnceLock<Vec<Regex>> = OnceLock::new();
    // A team's feature may list its qualities: "explicit, descriptive type hints".
    let (cell, feat) = if n.dialect.team() {
        (&TEAM_FRAMES, r"(?P<feat>[a-z][a-z/ ,-]*?)")
    } else {
        (&FRAMES, r"(?P<feat>[a-z][a-z/ -]*?)")
    };
    let frames = cell.get_or_init(|| {
        [
            format!(r"^(?:use|include|add|write|have|put|provide|leave) {feat} (?:in|for|on|to|inside|within) (?P<obj>.+?)$"),
            format!(r"^(?P<obj>.+?) (?:(?:must|should|shall|need to|needs to|has to|have to|will) (?P<neg>not |never )?)?(?:always )?(?:have|has|include|includes|contain|contains|carry|carries|use|uses|start with|starts with|open with|opens with|begin with|begins with|be documented with|are documented with|is documented with) {feat}$"),
            format!(r"^(?P<obj>.+?) (?:need|needs|require|requires) {feat}$"),
            format!(r"^document (?P<obj>.+?) with {feat}$"),
            format!(r"^(?:use|include|add|write|have|put|provide|leave) {feat}$"),
            r"^comment (?:your|the|all|all your) code$".to_string(),
        ]
        .into_iter()
        .chain(n.dialect.team().then(|| {
            [
                format!(r"^annotate (?P<obj>.+?) with {feat}$"),
                // A team file's list item without a verb: "type hints on all functions".
                format!(r"^{feat} (?:on|for|in) (?P<obj>.+?)$"),
            ]
        }).into_iter().flatten())
        .map(|p| Regex::new(&p).expect("a valid pattern"))
        .collect()
    });
    let (c, feat) = frames.iter().find_map(|f| {
        let c = f.captures(body)?;
        let feat = c
            .name("feat")
            .map_or(Some(Feature::Comment), |m| feature(m.as_str(), n.dialect))?;
        Some((c, feat))
    })?;
    let negated = negated ^ c.name("neg").is_some();
    let obj = c.name("obj").map(|m| m.as_str());
    Some((|| {
        if feat == Feature::Comment {
            if let Some(obj) = obj {
                return Err(format!(
                    "comments are checked per file, not per `{}`",
                    obj.trim()
                ));
            }
            return Ok(vec![Reading {
                id: if negated { "no-comments" } else { "comments" }.to_string(),
                kind: K::Comment,
                rule: Rule::Presence(!negated),
            }]);
        }
        let Some(obj) = obj else {
            return Err("says not which objects: functions, methods?".to_string());
        };
        let mut out: Vec<Reading> = Vec::new();
        // "all public functions and classes": public (no leading `_`) qualifies every part,
        // and docstrings and annotations have public-only kinds.
        static PUBLIC: OnceLock<Regex> = OnceLock::new();
        let public_obj = n
            .dialect
            .team()
            .then(|| re(&PUBLIC, r"^(?:(?:all|every|each|the|of|your) )*public ").find(obj))
            .flatten();
        let public = public_obj.is_some();
        let obj = public_obj.map_or(obj, |m| &obj[m.end()..]);
        let mut nouns = nouns(n, obj)?;
        if n.dialect.team() && feat == Feature::Annotation {
            // "type hints for all function parameters and return types": each function is
            // annotated. Parameters alone are not: a function without any would be a finding.
            let returns = obj.contains("return");
            for x in nouns.iter_mut() {
                if *x == Noun::FunctionArgument && returns {
                    *x = Noun::Function;
                }
            }
            if nouns.contains(&Noun::Function) && !nouns.contains(&Noun::Method) {
                nouns.push(Noun::Method);
            }
            nouns.dedup();
        }
        let mut unread = Vec::new();
        for noun in nouns {
            let kind = match (feat, noun) {
                (Feature::Docstring, Noun::Function) if public => K::PublicFunctionDocstring,
                (Feature::Docstring, Noun::Method) if public => K::PublicMethodDocstring,
                (Feature::Annotation, Noun::Function) if public => K::PublicFunctionAnnotation,
                (Feature::Annotation, Noun::Method) if public => K::PublicMethodAnnotation,
                (Feature::Try | Feature::Assert, _) if public => {
                    return Err(
                        "public objects have kinds only for docstrings and annotations".into(),
                    )
                }
                (Feature::Docstring, Noun::Function) => K::FunctionDocstring,
                (Feature::Docstring, Noun::Method) => K::MethodDocstring,
                (Feature::Try, Noun::Function) => K::FunctionTry,
                (Feature::Try, Noun::Method) => K::MethodTry,
                (Feature::Assert, Noun::Function) => K::FunctionAssert,
                (Feature::Assert, Noun::Method) => K::MethodAssert,
                (Feature::Annotation, Noun::Function) => K::FunctionAnnotation,
                (Feature::Annotation, Noun::Method) => K::MethodAnnotation,
                (Feature::Annotation, Noun::FunctionArgument) => {
                    return Err("an annotation rule checks that each function has at least \
                                one annotation, not that every argument has one"
                        .into())
                }
                (Feature::Docstring, Noun::Class) if n.dialect.team() => {
                    unread.push("classes: class docstrings have no object kind (only functions' and methods')".to_string());
                    continue;
                }
                (Feature::Docstring, Noun::Class) => {
                    return Err("class docstrings have no object kind (only functions' and \
                                methods')"
                        .into())
                }
                (_, other) if n.dialect.team() => {
                    unread.push(format!(
                        "{}: only functions and methods have this object kind",
                        name_kind(other).name()
                    ));
                    continue;
                }
                _ => {
                    return Err(format!(
                        "only functions and methods have this object kind, not `{}`",
                        obj.trim()
                    ))
                }
            };
            if out.iter().any(|r| r.kind == kind) {
                continue;
            }
            out.push(Reading {
                id: format!("{}{}", if negated { "no-" } else { "" }, slug(kind)),
                kind,
                rule: Rule::Presence(!negated),
            });
        }
        if out.is_empty() {
            return Err(unread
                .into_iter()
                .next()
                .unwrap_or_else(|| "names no object kind".into()));
        }
        n.unread.borrow_mut().extend(unread);
        Ok(out)
    })())
}

/// Why a sentence no phrasing took is not checkable, as precisely as its words allow: the
/// rule form its words are about (whole words: "important" is not about imports, "edge
/// cases" not about naming), and what that form reads.
fn fallback_reason(body: &str) -> String {
    static TOPICS: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    let topics = TOPICS.get_or_init(|| {
        [
            (
                r"\b(?:annotat\w*|type[ -]?hints?|typehints?|typed|typing|mypy|pyright)\b",
                "annotations: only \"use type annotations for functions / methods\" is checkable \
                 (each has at least one annotation), not complete annotations or a type checker's \
                 verdict",
            ),
            (
                r"\bdoc[ -]?strings?\b",
                "docstrings: only \"every function / method has a docstring\" is checkable, not \
                 what they say or their style",
            ),
            (
                r"\bdecorat\w*",
                "decorators: only \"add the `@name` decorator to all functions / methods / \
                 classes\" is checkable",
            ),
            (
                r"\b(?:imports?|imported|importing)\b",
                "imports: only \"always / never import `module`\" is checkable (`import module` \
                 statements)",
            ),
            (
                r"\b(?:line length|characters|columns|characters per line|indent\w*|tabs|spaces|format|formatting|formatter|black|ruff|lint\w*|prettier)\b",
                "layout and tools (formatters, linters, line length) have no rule form",
            ),
            (
                r"\b(?:tests?|testing|pytest|coverage)\b",
                "tests and how to run them are not a rule about the code's objects",
            ),
            (
                r"\b(?:commits?|branch(?:es)?|pull requests?|pr|reviews?|merge|changelog)\b",
                "about the workflow, not the code",
            ),
            (
                r"\b(?:names?|naming|named|prefix\w*|suffix\w*|(?:snake|camel|pascal|upper|lower|kebab) case)\b",
                "a naming rule in a phrasing not read with certainty (e.g. \"start function names \
                 with `x_`\", \"use snake_case for variable names\")",
            ),
        ]
        .into_iter()
        .map(|(p, why)| (Regex::new(p).expect("a valid pattern"), why))
        .collect()
    });
    topics.iter().find(|(p, _)| p.is_match(body)).map_or_else(
        || {
            "no rule form says this (names, decorators, imports, docstrings, annotations, \
                 try / assert statements, comments)"
                .to_string()
        },
        |(_, why)| why.to_string(),
    )
}

/// A regex rule must accept the sentence's examples and reject its counter-examples.
fn check_examples(n: &Norm, found: &[Reading]) -> Result<(), String> {
    for r in found {
        if !matches!(r.rule, Rule::Regex { .. }) {
            continue;
        }
        for e in n.examples.iter().filter(|e| identifier(e)) {
            if !r.rule.matches(e) {
                return Err(format!(
                    "its example `{e}` does not match the rule read from it ({})",
                    r.rule.describe()
                ));
            }
        }
        for e in n.counter.iter().filter(|e| identifier(e)) {
            if r.rule.matches(e) {
                return Err(format!(
                    "its counter-example `{e}` matches the rule read from it ({})",
                    r.rule.describe()
                ));
            }
        }
    }
    Ok(())
}

/// A Python name as an example (not a case's name such as `camelCase` in "(not camelCase)").
fn identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
        && !matches!(
            s,
            "snake_case"
                | "camelCase"
                | "PascalCase"
                | "CamelCase"
                | "UPPER_CASE"
                | "UPPERCASE"
                | "SCREAMING_SNAKE_CASE"
                | "lowerCamelCase"
                | "UpperCamelCase"
                | "kebab_case"
        )
}

// ---------------------------------------------------------------------------------------
// Team rules about constructs: excepts, imports by form and place, calls, `typing` names,
// comment text (the kinds of `ObjectKind::TEAM` read from the whole tree)

/// The names of `typing` a team asks to leave for builtins, `X | Y` or `collections.abc`
/// (and `Any`): a token naming one of them is a `typing name`.
const TYPING_NAMES: [&str; 30] = [
    "Any",
    "List",
    "Dict",
    "Set",
    "FrozenSet",
    "Tuple",
    "Type",
    "Optional",
    "Union",
    "Callable",
    "Iterator",
    "Iterable",
    "Generator",
    "Sequence",
    "MutableSequence",
    "Mapping",
    "MutableMapping",
    "AbstractSet",
    "MutableSet",
    "Collection",
    "Container",
    "DefaultDict",
    "OrderedDict",
    "Counter",
    "Deque",
    "ChainMap",
    "Awaitable",
    "Coroutine",
    "AsyncIterator",
    "AsyncIterable",
];

/// Builtins and `|` forms a typing name is left for, by the name they replace.
const BUILTIN_FOR: [(&str, &str); 8] = [
    ("list", "List"),
    ("dict", "Dict"),
    ("set", "Set"),
    ("frozenset", "FrozenSet"),
    ("tuple", "Tuple"),
    ("type", "Type"),
    ("| None", "Optional"),
    ("X | Y", "Union"),
];

fn construct_reading(kind: K, rule: Rule) -> Reading {
    let what = match &rule {
        Rule::Member { name, .. } => format!("-{name}"),
        _ => String::new(),
    };
    let asks = matches!(
        rule,
        Rule::Member { value: true, .. } | Rule::Presence(true)
    );
    let raw = format!("{}{}{what}", if asks { "" } else { "no-" }, kind.name());
    let mut id = String::new();
    for c in raw.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            id.push(c.to_ascii_lowercase());
        } else if !id.ends_with('-') {
            id.push('-');
        }
    }
    Reading {
        id: id.trim_matches('-').to_string(),
        kind,
        rule,
    }
}

fn forbid(kind: K, name: Option<String>) -> Reading {
    let rule = match name {
        Some(name) => Rule::Member { name, value: false },
        None => Rule::Presence(false),
    };
    construct_reading(kind, rule)
}

/// `List`, `Optional[str]`, `typing.Dict`, `Union[]`: the typing name a token names.
fn typing_token(tok: &str) -> Option<&'static str> {
    let t = tok.strip_prefix("typing.").unwrap_or(tok);
    let t = t.split_once('[').map_or(
        t,
        |(head, rest)| {
            if rest.ends_with(']') {
                head
            } else {
                ""
            }
        },
    );
    TYPING_NAMES.iter().find(|n| **n == t).copied()
}

/// A construct a sentence forbids, read from its noun phrase (`bare except clauses`,
/// `` `print()` statements``, `wildcard imports`, `` `Optional[str]` ``, a list of them).
fn forbidden(n: &Norm, x: &str) -> Option<Vec<Reading>> {
    static SPLIT: OnceLock<Regex> = OnceLock::new();
    let parts: Vec<&str> = re(&SPLIT, r",? (?:and|or) |, ").split(x.trim()).collect();
    if parts.len() > 1 {
        let mut all = Vec::new();
        for p in parts {
            all.extend(forbidden(n, p)?);
        }
        return Some(all);
    }
    static FRAMES: OnceLock<Vec<Regex>> = OnceLock::new();
    let frames = FRAMES.get_or_init(|| {
        [
            // 0: a bare except.
            format!(r"^bare (?:(?P<tok>{T})|excepts?)(?:/catch)?(?: clauses?| statements?| blocks?| handlers?)?$"),
            // 1: a token, then what it is.
            format!(r"^(?:broad |generic |catch-all |blanket )?(?P<tok>{T})(?P<what> exceptions?| clauses?| handlers?| statements?| calls?| types?| annotations?| hints?| imports?| comments?| lines?)?$"),
            // 2: wildcard and relative imports.
            r"^(?P<wild>wildcard|star) imports?$".to_string(),
            r"^(?P<rel>relative) imports?$".to_string(),
            // 4: `typing iterator`.
            r"^typing (?P<word>[a-z]+)$".to_string(),
        ]
        .iter()
        .map(|p| Regex::new(p).expect("a valid pattern"))
        .collect()
    });
    let x = ["the ", "any ", "a ", "an "]
        .iter()
        .find_map(|d| x.strip_prefix(d))
        .unwrap_or(x);
    let (i, c) = frames
        .iter()
        .enumerate()
        .find_map(|(i, f)| f.captures(x).map(|c| (i, c)))?;
    let tok = c.name("tok").map(|t| n.token(t.as_str()));
    let what = c.name("what").map_or("", |w| w.as_str().trim());
    let one = |r: Reading| Some(vec![r]);
    match i {
        0 => match tok {
            None | Some("except") | Some("except:") => one(forbid(K::BareExcept, None)),
            _ => None,
        },
        1 => {
            let tok = tok?;
            static CALL: OnceLock<Regex> = OnceLock::new();
            static FROM: OnceLock<Regex> = OnceLock::new();
            let call = re(
                &CALL,
                r"^(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?P<parens>\(\))?$",
            );
            let from = re(&FROM, r"^from (?P<m>[\w.]+) import (?P<n>\w+|\*)$");
            let except = tok.strip_prefix("except ").unwrap_or(tok);
            let except = except.strip_suffix(':').unwrap_or(except);
            if matches!(except, "Exception" | "BaseException")
                && matches!(
                    what,
                    "" | "exception" | "exceptions" | "clause" | "clauses" | "handlers"
                )
            {
                return one(forbid(K::Except, Some(except.to_string())));
            }
            if let Some(f) = from.captures(tok) {
                if matches!(
                    what,
                    "" | "import" | "imports" | "statement" | "statements" | "line" | "lines"
                ) {
                    if &f["n"] == "*" {
                        return one(forbid(K::WildcardImport, None));
                    }
                    return one(forbid(
                        K::FromImport,
                        Some(format!("{}.{}", &f["m"], &f["n"])),
                    ));
                }
                return None;
            }
            if let Some(comment) = tok.strip_prefix('#') {
                let text = comment.trim();
                return (matches!(what, "" | "comment" | "comments") && !text.is_empty())
                    .then(|| vec![forbid(K::CommentText, Some(text.to_string()))]);
            }
            if matches!(what, "comment" | "comments") {
                return one(forbid(K::CommentText, Some(tok.to_string())));
            }
            if let Some(name) = typing_token(tok) {
                if matches!(
                    what,
                    "" | "type"
                        | "types"
                        | "annotation"
                        | "annotations"
                        | "hint"
                        | "hints"
                        | "import"
                        | "imports"
                ) {
                    return one(forbid(K::TypingName, Some(name.to_string())));
                }
                return None;
            }
            let callee = call.captures(tok)?;
            let named_call = callee.name("parens").is_some()
                && matches!(what, "" | "call" | "calls" | "statement" | "statements");
            let said_call = matches!(what, "call" | "calls" | "statement" | "statements");
            (named_call || said_call)
                .then(|| vec![forbid(K::Call, Some(callee["name"].to_string()))])
        }
        2 => one(forbid(K::WildcardImport, None)),
        3 => one(forbid(K::RelativeImport, None)),
        _ => {
            let word = &c["word"];
            let name = TYPING_NAMES.iter().find(|t| t.to_lowercase() == word)?;
            one(forbid(K::TypingName, Some(name.to_string())))
        }
    }
}

/// What a team's sentence says of excepts, imports, calls, typing names or comment text,
/// when one of these phrasings takes it whole: `None` leaves it to the other phrasings.
fn construct(n: &Norm, body: &str, negated: bool) -> Frame {
    // Every phrasing below opens with one of these words (or a token): most sentences
    // are turned away here, before any pattern runs (a file may hold 20,000 of them).
    const OPENERS: [&str; 19] = [
        "use", "write", "add", "leave", "avoid", "no", "forbid", "ban", "disallow", "prefer",
        "catch", "choose", "put", "place", "keep", "include", "imports", "import", "never",
    ];
    let first = body.split(' ').next().unwrap_or("");
    if !first.starts_with('⟦') && !OPENERS.contains(&first) {
        return None;
    }
    static VERSION: OnceLock<Regex> = OnceLock::new();
    static COMPANION: OnceLock<Regex> = OnceLock::new();
    static KNOWN: OnceLock<Regex> = OnceLock::new();
    // "(Python 3.10+)" says which Python the rule needs, not which code.
    let body = re(&VERSION, r"\s*\(python \d+(?:\.\d+)*\+?\)$").replace(body, "");
    let mut body: &str = &body;
    // "- catch specific exceptions", "- use `logging`": what to do instead, no rule of its own.
    let known = re(
        &KNOWN,
        &format!(
            r"^(?:use |catch |raise |prefer )?(?:the )?(?:specific exceptions?|specific exception types|{T}(?: module)?|logging(?: module)?|a logger)(?: instead)?$"
        ),
    );
    let companion = re(
        &COMPANION,
        r"^(?P<main>.+?)(?: - | — | – | -- | → )(?P<comp>.+)$",
    );
    let split;
    if let Some(c) = companion.captures(body) {
        if !known.is_match(&c["comp"]) {
            return None;
        }
        split = c["main"].to_string();
        body = &split;
    }
    static FRAMES: OnceLock<Vec<Regex>> = OnceLock::new();
    let frames = FRAMES.get_or_init(|| {
        let files = r"(?:(?:the |all |every |each )?(?:python )?(?:files?|modules?))";
        [
            // 0: (negated) use X.
            r"^(?:use|write|add|leave) (?P<x>.+)$".to_string(),
            // 1: avoid X, no X.
            r"^(?:avoid|no|forbid|ban|disallow)(?: using| the use of| use of)? (?P<x>.+)$".to_string(),
            // 2: absolute imports.
            format!(r"^use absolute imports(?: (?:for intra-package references|within (?:the |a |each )?packages?|inside (?:the )?packages?|(?P<pkg>(?:from|of|for) (?:the )?{T}(?: package)?)|only|everywhere))?$"),
            // 3: relative imports, asked for.
            r"^use relative imports\b.*$".to_string(),
            // 4: imports at the top.
            format!(r"^(?:(?:put|place|keep|include)(?: all| the| necessary| all necessary)? )?imports (?:always |must be |should be |are |go |belong )?(?:at|on) (?:the )?(?:top of {files}|module top|file top)(?:,? (?:never|not) (?:inside|in|within) (?:functions|methods|function bodies|classes|functions or classes))?$"),
            // 5: (negated) imports in the middle / inside functions.
            r"^(?:add|put|place|use|write) imports (?:in the middle of (?:the |a )?files?|inside functions|in functions|inside function bodies)$".to_string(),
            // 6: a from import asked for.
            format!(r"^(?:use|add|include|put) (?P<tok>{T})(?: at the top of {files})?(?: for forward references)?$"),
            // 7: use typing standards ..., such as using A instead of B and C instead of D.
            r"^use typing standards(?: for python [\d.]+\+?)?,? such as (?:using )?(?P<pairs>.+)$".to_string(),
            // 8: use ALT instead of X.
            r"^(?:use|prefer|catch|choose) (?P<alt>.+?),? (?:instead of|rather than|over|not|never|and not|but not|, never|, not) (?:using )?(?P<x>.+)$".to_string(),
            // 9: tokens alone, with counter-examples: "`list[str]`, `dict[str, int]` (not `typing.List`)".
            format!(r"^(?P<toks>{T}(?:,? (?:and |or )?{T})*)$"),
        ]
        .iter()
        .map(|p| Regex::new(p).expect("a valid pattern"))
        .collect()
    });
    for (i, f) in frames.iter().enumerate() {
        let Some(c) = f.captures(body) else {
            continue;
        };
        match attempt(n, i, &c, negated) {
            Some(Ok(readings)) if !readings.is_empty() => {
                let mut out: Vec<Reading> = Vec::new();
                for r in readings {
                    if !out.contains(&r) {
                        out.push(r);
                    }
                }
                return Some(Ok(out));
            }
            Some(Err(e)) => return Some(Err(e)),
            _ => {}
        }
    }
    None
}

/// The readings of phrasing `i` of `construct` whose captures are `c`; `None` when the
/// words it took say nothing certain in it (the next phrasing is tried).
fn attempt(n: &Norm, i: usize, c: &regex::Captures, negated: bool) -> Frame {
    let readings = match (i, negated) {
        (0, true) | (1, false) => forbidden(n, &c["x"])?,
        (2, false) if c.name("pkg").is_some() => {
            return Some(Err(format!(
                "absolute imports {}: about that package's imports, and which imports of a \
                 tree are that package's own is not known",
                n.restore(&c["pkg"])
            )))
        }
        (2, false) => vec![forbid(K::RelativeImport, None)],
        (3, false) => {
            return Some(Err(
                "relative imports of a package's own modules: which imports are the package's \
                 own is not known, and an absolute import of another package is not wrong"
                    .into(),
            ))
        }
        (4, false) | (5, true) => vec![forbid(K::ImportNotAtTop, None)],
        (6, false) => {
            static FROM: OnceLock<Regex> = OnceLock::new();
            let from = re(&FROM, r"^from (?P<m>[\w.]+) import (?P<n>\w+)$");
            let f = from.captures(n.token(&c["tok"]))?;
            vec![construct_reading(
                K::FromImport,
                Rule::Member {
                    name: format!("{}.{}", &f["m"], &f["n"]),
                    value: true,
                },
            )]
        }
        (7, false) => {
            let mut all = Vec::new();
            for pair in c["pairs"].split(" and ") {
                let (_, x) = pair.trim().split_once(" instead of ")?;
                let r = forbidden(n, x)?;
                if r.iter().any(|r| r.kind != K::TypingName) {
                    return None;
                }
                all.extend(r);
            }
            all
        }
        (8, false) => {
            let alt = c["alt"].trim();
            let x = c["x"].trim();
            if let Some(equivalents) = typing_equivalents(n, alt, x) {
                return Some(equivalents);
            } else {
                // What is used instead is not itself forbidden ("use X instead of X").
                if forbidden(n, alt).is_some() {
                    return None;
                }
                forbidden(n, x)?
            }
        }
        (9, false) => {
            let toks: Vec<&str> = re(&TOKEN_RE, T)
                .find_iter(&c["toks"])
                .map(|m| n.token(m.as_str()))
                .collect();
            let builtin = |t: &str| {
                let head = t.split('[').next().unwrap_or(t);
                BUILTIN_FOR.iter().any(|(b, _)| *b == head)
            };
            if !toks.iter().all(|t| builtin(t)) || n.counter.is_empty() {
                return None;
            }
            let mut all = Vec::new();
            for t in &n.counter {
                all.push(forbid(K::TypingName, Some(typing_token(t)?.to_string())));
            }
            all
        }
        _ => return None,
    };
    Some(Ok(readings))
}

static TOKEN_RE: OnceLock<Regex> = OnceLock::new();

/// "use native types (`list`, `| None`) instead of `typing` equivalents": the typing names
/// of the examples given. `None` when the sentence is not this one.
fn typing_equivalents(n: &Norm, alt: &str, x: &str) -> Option<Result<Vec<Reading>, String>> {
    static EQUIV: OnceLock<Regex> = OnceLock::new();
    static NATIVE: OnceLock<Regex> = OnceLock::new();
    let equiv = re(
        &EQUIV,
        &format!(r"^(?:the )?(?P<tok>{T}) (?:equivalents|versions|types|aliases)$"),
    );
    let native = re(
        &NATIVE,
        r"^(?:native|built-in|builtin)(?: python)? (?:types|generics|collection types)$",
    );
    let c = equiv.captures(x)?;
    if n.token(&c["tok"]) != "typing" || !native.is_match(alt) {
        return None;
    }
    if n.examples.is_empty() {
        return Some(Err(
            "says not which `typing` names: no example of the native types".into(),
        ));
    }
    let mut out = Vec::new();
    for e in &n.examples {
        let Some((_, name)) = BUILTIN_FOR.iter().find(|(b, _)| b == e) else {
            return Some(Err(format!(
                "`{e}`: not a builtin that replaces a `typing` name"
            )));
        };
        out.push(forbid(K::TypingName, Some(name.to_string())));
    }
    Some(Ok(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negations_are_placed_or_refused() {
        assert_eq!(
            stray_negation("methods must not be decorated with ⟦0⟧"),
            None
        );
        assert_eq!(stray_negation("import ⟦0⟧"), None);
        assert_eq!(
            stray_negation("add ⟦0⟧ to methods, not functions"),
            Some("not")
        );
        assert_eq!(stray_negation("functions have no docstring"), Some("no"));
        // A label with a negation is not dropped: the sentence is not read as "every
        // function has a docstring", nor as "no function has one".
        assert!(read("Do not forget: every function must have a docstring.").is_err());
        assert!(read("Never do this: use camelCase for function names.").is_err());
        assert_eq!(
            read("Important: every function must have a docstring.").map(|r| r[0].rule.clone()),
            Ok(Rule::Presence(true))
        );
    }
}

#[cfg(test)]
mod construct_tests {
    use super::*;

    fn team(sentence: &str) -> Result<Vec<(String, String)>, String> {
        read_in(
            sentence,
            Dialect::Team {
                constants_upper: false,
            },
        )
        .map(|r| {
            r.readings
                .iter()
                .map(|r| (r.kind.name().to_string(), r.rule.to_json().to_string()))
                .collect()
        })
    }

    fn one(kind: &str, rule: &str) -> Result<Vec<(String, String)>, String> {
        Ok(vec![(kind.to_string(), rule.to_string())])
    }

    #[test]
    fn excepts_prints_and_imports_as_teams_write_them() {
        let bare = one("bare except", "false");
        assert_eq!(team("never use bare except/catch"), bare);
        assert_eq!(
            team("No bare `except:` clauses - catch specific exceptions"),
            bare
        );
        assert_eq!(
            team("Never use bare `except:` - catch specific exceptions"),
            bare
        );
        assert_eq!(team("Avoid bare `except` clauses."), bare);
        assert_eq!(
            team("Catch specific exceptions rather than broad `Exception`"),
            one("except", r#"["Exception",false]"#)
        );
        let print = one("call", r#"["print",false]"#);
        assert_eq!(team("No `print()` statements - use `logging`"), print);
        assert_eq!(team("Use `logging` module, never `print()`"), print);
        assert_eq!(
            team("Use the `logging` module instead of `print` statements"),
            print
        );
        let wild = one("wildcard import", "false");
        assert_eq!(
            team("Prefer explicit imports over `from module import *`"),
            wild
        );
        assert_eq!(team("Avoid `from module import *`"), wild);
        assert_eq!(
            team("Avoid wildcard imports (`from module import *`)"),
            wild
        );
        let rel = one("relative import", "false");
        assert_eq!(
            team("Use absolute imports rather than relative imports"),
            rel
        );
        assert_eq!(
            team("PLease use absolute imports and not relative imports"),
            rel
        );
        assert_eq!(
            team("Use absolute imports for intra-package references"),
            rel
        );
        assert!(team("Use relative imports within packages.").is_err());
        let top = one("import not at top", "false");
        assert_eq!(
            team("Imports always at module top, never inside functions."),
            top
        );
        assert_eq!(team("NEVER add imports in the middle of the file."), top);
        assert_eq!(team("Include necessary imports at the top of files"), top);
    }

    #[test]
    fn typing_style_and_comment_text() {
        let future = r#"["__future__.annotations",true]"#;
        assert_eq!(
            team("Use `from __future__ import annotations` at the top of all Python files"),
            one("from import", future)
        );
        assert_eq!(
            team("Never use `from __future__ import annotations`."),
            one("from import", r#"["__future__.annotations",false]"#)
        );
        assert_eq!(
            team("Use Python 3.10+ union syntax: `str | None` not `Optional[str]`"),
            one("typing name", r#"["Optional",false]"#)
        );
        assert_eq!(
            team("Prefer `|` union syntax over `Union[]` (Python 3.10+)"),
            one("typing name", r#"["Union",false]"#)
        );
        assert_eq!(
            team("Use collections.abc Iterator and not typing Iterator"),
            one("typing name", r#"["Iterator",false]"#)
        );
        assert_eq!(
            team("No `Any` types."),
            one("typing name", r#"["Any",false]"#)
        );
        assert_eq!(
            team("Use `str | None`, not `Optional[str]`"),
            one("typing name", r#"["Optional",false]"#)
        );
        let names = |got: Result<Vec<(String, String)>, String>| -> Vec<String> {
            got.unwrap().into_iter().map(|(_, r)| r).collect()
        };
        assert_eq!(
            names(team("Use native Python types (`list`, `dict`, `tuple`, `| None`) instead of `typing` equivalents.")),
            [
                r#"["List",false]"#,
                r#"["Dict",false]"#,
                r#"["Tuple",false]"#,
                r#"["Optional",false]"#
            ]
        );
        assert_eq!(
            names(team("Use typing standards for Python 3.12+, such as using `list` instead of `List` and `str | None` instead of `Optional[str]`.")),
            [r#"["List",false]"#, r#"["Optional",false]"#]
        );
        assert_eq!(
            team("No `# type: ignore` comments"),
            one("comment text", r#"["type: ignore",false]"#)
        );
        assert_eq!(
            team("Never leave `TODO` comments"),
            one("comment text", r#"["TODO",false]"#)
        );
    }

    #[test]
    fn what_is_not_certain_stays_unread() {
        for s in [
            "No `# type: ignore` without explanation",
            "Avoid bare `except` clauses in tests unless needed",
            "Use `logging` instead of `print()` in library code",
            "Never use `from module import *` unless re-exporting",
            "Do not use `print()` in production",
        ] {
            let got = team(s);
            assert!(
                got.as_ref().map_or(true, |r| r
                    .iter()
                    .all(|(k, _)| !K::TEAM.iter().any(|t| t.name() == k))),
                "{s}: {got:?}"
            );
        }
        // MemoryCode's dialect reads none of them.
        assert!(read("Never use bare `except:`").is_err());
    }

    #[test]
    fn public_objects_have_their_docstring_and_annotation_kinds() {
        let kinds =
            |s: &str| -> Vec<String> { team(s).unwrap().into_iter().map(|(k, _)| k).collect() };
        assert_eq!(
            kinds("Include docstrings for all public functions"),
            ["public function docstring", "public method docstring"]
        );
        assert_eq!(
            kinds("All public methods must have type hints"),
            ["public method annotation"]
        );
        assert_eq!(
            kinds("Docstrings on all public classes and functions"),
            ["public function docstring", "public method docstring"]
        );
        assert_eq!(
            kinds("All public functions and class methods should have explicit type annotations."),
            ["public function annotation", "public method annotation"]
        );
        assert!(team("All public functions must have try statements").is_err());
        // Public is read where it leads; a part qualified alone is not read.
        assert_eq!(
            kinds("Docstrings on all functions and public classes"),
            ["function docstring", "method docstring"]
        );
        // MemoryCode's dialect has no public kinds.
        assert!(read("Include docstrings for all public functions").is_err());
    }
}
