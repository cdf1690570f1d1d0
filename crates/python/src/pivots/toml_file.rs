//! The `pivots.toml` format (docs/pivots-toml.md) read with the place of every value, and
//! checked before any pivot is made: each problem (a duplicate id, a rule that does not
//! fit its kind, an unknown kind, an invalid regex or glob, a negative session) is said
//! with the file, line and column and the line itself, as the TOML parser shows its own
//! errors. The same types give the JSON schema editors validate the file with.

use super::rule::{Rule, RuleError};
use super::scope::{Patterns, Scope};
use crate::python::ObjectKind;
use serde::Deserialize;
use std::collections::HashMap;
use std::ops::Range;
use toml::Spanned;

/// A `pivots.toml`: the pivots, and files none of them is checked on.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "pivots.toml",
    description = "Pivot LSP's pivots: coding instructions \
    that must hold from a session on (docs/pivots-toml.md)."
)]
pub struct TomlFile {
    /// The pivots, each with one or more versions.
    #[serde(default)]
    pub pivot: Vec<TomlPivot>,
    /// Files no pivot is checked on: gitignore-syntax patterns relative to this file's folder.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub exclude: Vec<Spanned<String>>,
    /// Pivots turned off on some files, as ruff's `per-file-ignores`: a gitignore-syntax
    /// pattern (relative to this file's folder) and the ids of the pivots not checked on
    /// the files it matches.
    #[serde(default, rename = "per-file-ignores")]
    #[schemars(with = "std::collections::BTreeMap<String, Vec<String>>")]
    pub per_file_ignores: std::collections::BTreeMap<String, Vec<Spanned<String>>>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TomlPivot {
    /// The pivot's name, unique in the file: the diagnostic's code, and what
    /// `# pivot: ignore[ID]` names.
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    /// When given, the pivot is checked only on the files these gitignore-syntax patterns
    /// match (relative to this file's folder).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub include: Vec<Spanned<String>>,
    /// The pivot is not checked on the files these gitignore-syntax patterns match.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub exclude: Vec<Spanned<String>>,
    /// The versions of the instruction, one per session where it was given or changed.
    #[serde(default)]
    pub version: Vec<TomlVersion>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TomlVersion {
    /// The 0-based session where this version is given [default: 0].
    #[serde(default)]
    #[schemars(with = "Option<u32>")]
    pub session: Option<Spanned<i64>>,
    /// The object kind the rule is about.
    #[schemars(with = "KindName")]
    pub kind: Spanned<String>,
    /// A regular expression names must match (a string), presence (a bool), or a
    /// decorator or import that must be present or absent (`["name", bool]`).
    #[schemars(with = "RuleSchema")]
    pub rule: Spanned<toml::Value>,
    /// The instruction as a person would say it.
    #[serde(default)]
    pub text: String,
    /// Who proposed the version (`"model"`: `pivots import --model`), for the reviewer:
    /// not used in checking.
    #[serde(default)]
    pub proposed: Option<String>,
    /// Names a regex rule does not test, as pep8-naming's `ignore-names`: whole names or
    /// `*` globs (`"visit_*"`, `"setUp"`), for the names a framework chose.
    #[serde(default, rename = "ignore-names")]
    #[schemars(with = "Vec<String>")]
    pub ignore_names: Vec<Spanned<String>>,
}

/// The schema of `kind`: one of the object kinds, MemoryCode's and the teams'.
struct KindName;

impl schemars::JsonSchema for KindName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ObjectKind".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = ObjectKind::every().map(|k| k.name()).collect();
        schemars::json_schema!({ "type": "string", "enum": names })
    }
}

/// The schema of `rule`: its three forms.
struct RuleSchema;

impl schemars::JsonSchema for RuleSchema {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Rule".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "oneOf": [
            { "type": "string", "description": "a regular expression names must match at their start" },
            { "type": "boolean", "description": "every object has it (true) / none has (false)" },
            { "type": "array", "description": "[name, bool]: the decorator or import `name` present / absent",
              "prefixItems": [{ "type": "string" }, { "type": "boolean" }],
              "items": false, "minItems": 2 }
        ]})
    }
}

/// The JSON schema of `pivots.toml` (committed as editors/schema/pivots.schema.json).
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(TomlFile)).unwrap_or_default()
}

/// The shape of a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Regex,
    Bool,
    Pair,
}

impl Form {
    fn of(rule: &Rule) -> Form {
        match rule {
            Rule::Regex { .. } => Form::Regex,
            Rule::Presence(_) => Form::Bool,
            Rule::Member { .. } => Form::Pair,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Form::Regex => "a regular expression (`rule = \"^f_\"`: names must match it)",
            Form::Bool => "a bool (`rule = true`: every one has it; `false`: none has)",
            Form::Pair => {
                "a [name, bool] pair (`rule = [\"timer\", true]`: that name present / absent)"
            }
        }
    }

    fn short(self) -> &'static str {
        match self {
            Form::Regex => "a regular expression",
            Form::Bool => "a bool",
            Form::Pair => "a [name, bool] pair",
        }
    }
}

/// The rule forms that mean something for `kind`: names take a regex; docstrings, tries,
/// asserts and annotations are there or not; decorators and imports are named (or there
/// or not); comments are matched or there or not.
fn forms(kind: ObjectKind) -> &'static [Form] {
    use ObjectKind as K;
    match kind {
        K::Function | K::FunctionArgument | K::Class | K::Method | K::Attribute | K::Variable => {
            &[Form::Regex]
        }
        K::FunctionDocstring
        | K::FunctionTry
        | K::FunctionAssert
        | K::FunctionAnnotation
        | K::MethodDocstring
        | K::MethodTry
        | K::MethodAssert
        | K::MethodAnnotation => &[Form::Bool],
        K::FunctionDecorator | K::ClassDecorator | K::MethodDecorator => &[Form::Pair, Form::Bool],
        K::Import => &[Form::Pair, Form::Regex, Form::Bool],
        K::Comment => &[Form::Regex, Form::Bool],
        K::PublicFunctionDocstring
        | K::PublicMethodDocstring
        | K::PublicFunctionAnnotation
        | K::PublicMethodAnnotation => &[Form::Bool],
        K::BareExcept | K::WildcardImport | K::RelativeImport | K::ImportNotAtTop => &[Form::Bool],
        K::Except | K::Call | K::TypingName | K::CommentText => &[Form::Pair],
        K::FromImport => &[Form::Pair, Form::Bool],
    }
}

/// Whether `rule` asks for something the kind's objects can only be forbidden as: a file
/// "must have" a bare `except`, or every call "must be" `print`, means nothing. A
/// `from` import or a comment text may be asked for (`["__future__.annotations", true]`).
fn asks_what_only_forbids(kind: ObjectKind, rule: &Rule) -> bool {
    use ObjectKind as K;
    match rule {
        Rule::Presence(true) => kind.is_construct(),
        Rule::Member { value: true, .. } => {
            kind.is_construct() && !matches!(kind, K::FromImport | K::CommentText)
        }
        _ => false,
    }
}

/// A problem at a place of the file, rendered as the TOML parser renders its errors.
struct Problems<'a> {
    file: &'a str,
    text: &'a str,
    out: Vec<String>,
}

impl Problems<'_> {
    /// `file:line:col: message`, the line with the span underlined, then `= note` lines.
    fn at(&mut self, span: Range<usize>, message: &str, notes: &[String]) {
        let mut s = self.snippet(span, message);
        for n in notes {
            s.push_str(&format!("  = {n}\n"));
        }
        self.out.push(s.trim_end().to_string());
    }

    fn snippet(&self, span: Range<usize>, message: &str) -> String {
        let start = span.start.min(self.text.len());
        let line_start = self.text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = self.text[start..]
            .find('\n')
            .map_or(self.text.len(), |i| start + i);
        let line_no = self.text[..line_start].matches('\n').count() + 1;
        let content = self.text[line_start..line_end].trim_end_matches('\r');
        let col = self.text[line_start..start].chars().count();
        let end = span.end.clamp(start, line_end);
        let width = self.text[start..end].chars().count().max(1);
        let gutter = " ".repeat(line_no.to_string().len());
        format!(
            "{}:{line_no}:{}: {message}\n{gutter} |\n{line_no} | {content}\n{gutter} | {}{}\n",
            self.file,
            col + 1,
            " ".repeat(col),
            "^".repeat(width)
        )
    }

    /// Where `span` starts, as `file:line:col`.
    fn place(&self, span: &Range<usize>) -> String {
        let start = span.start.min(self.text.len());
        let line_start = self.text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_no = self.text[..line_start].matches('\n').count() + 1;
        let col = self.text[line_start..start].chars().count() + 1;
        format!("{}:{line_no}:{col}", self.file)
    }
}

/// The kinds' names nearest `name` (for "did you mean").
fn nearest_kind(name: &str) -> Option<&'static str> {
    ObjectKind::every()
        .map(|k| (strsim::damerau_levenshtein(name, k.name()), k.name()))
        .filter(|(d, k)| *d <= 3.max(k.len() / 3))
        .min()
        .map(|(_, k)| k)
}

fn patterns(p: &mut Problems, what: &str, given: &[Spanned<String>]) -> Option<Patterns> {
    let texts = given.iter().map(|s| s.get_ref().clone()).collect();
    match Patterns::new(texts) {
        Ok(ps) => Some(ps),
        Err((i, message)) => {
            let span = given.get(i).map_or(0..0, |s| s.span());
            p.at(span, &format!("invalid {what} pattern"), &[message]);
            None
        }
    }
}

/// `per-file-ignores`, per pivot id: the patterns that turn it off. Each pattern is checked
/// (a glob error is said at its first id, keys having no place of their own here), and so
/// is each id: one that names no pivot of the file is a typo that would turn nothing off.
fn per_file_ignores(p: &mut Problems, parsed: &TomlFile) -> HashMap<String, Patterns> {
    let ids: Vec<&str> = parsed
        .pivot
        .iter()
        .map(|v| v.id.get_ref().as_str())
        .collect();
    let mut by_id: HashMap<String, Vec<String>> = HashMap::new();
    for (pattern, names) in &parsed.per_file_ignores {
        let at = names.first().map_or(0..0, |n| n.span());
        if let Err((_, message)) = Patterns::new(vec![pattern.clone()]) {
            p.at(
                at.clone(),
                &format!("invalid per-file-ignores pattern `{pattern}`"),
                &[message],
            );
            continue;
        }
        if names.is_empty() {
            p.at(
                at,
                &format!("per-file-ignores `{pattern}` names no pivot"),
                &["give the ids of the pivots not checked on its files".into()],
            );
            continue;
        }
        for n in names {
            let id = n.get_ref();
            if !ids.contains(&id.as_str()) {
                p.at(
                    n.span(),
                    &format!("per-file-ignores `{pattern}` names `{id}`, which no pivot of this file has"),
                    &[format!("the pivots: {}", ids.join(", "))],
                );
                continue;
            }
            by_id.entry(id.clone()).or_default().push(pattern.clone());
        }
    }
    (by_id.into_iter())
        .filter_map(|(id, ps)| Patterns::new(ps).ok().map(|ps| (id, ps)))
        .collect()
}

/// Where a pivot is written in its file: the 1-based line of its `id` and of each version's
/// `kind` (in the file's order), so that an agent or a reviewer is sent to the line.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Place {
    pub id: String,
    pub line: usize,
    pub version_lines: Vec<usize>,
}

/// The places of the pivots of `text` (empty when it does not parse: `load` says why).
pub fn places(text: &str) -> Vec<Place> {
    places_as(text, Format::PivotsToml)
}

/// `places`, for a file of the format `format`.
pub fn places_as(text: &str, format: Format) -> Vec<Place> {
    let parsed = match format {
        Format::PivotsToml => toml::from_str::<TomlFile>(text).ok(),
        Format::Pyproject => toml::from_str::<Pyproject>(text)
            .ok()
            .and_then(|f| f.tool.and_then(|t| t.pivot)),
    };
    let Some(parsed) = parsed else {
        return Vec::new();
    };
    let line = |at: usize| text[..at.min(text.len())].matches('\n').count() + 1;
    parsed
        .pivot
        .iter()
        .map(|p| Place {
            id: p.id.get_ref().clone(),
            line: line(p.id.span().start),
            version_lines: p
                .version
                .iter()
                .map(|v| line(v.kind.span().start))
                .collect(),
        })
        .collect()
}

/// One pivot as the file gives it, checked: its id, scope and versions.
pub struct Loaded {
    pub id: String,
    pub scope: Scope,
    /// (session, text, kind, rule) of each version, in the file's order.
    pub versions: Vec<(usize, String, ObjectKind, Rule)>,
}

/// The pivots of a `pivots.toml` whose text is `text`, named `file` in errors; every
/// problem is said (see the module comment), separated by blank lines. The ledger makes
/// its pivots of them (`Ledger::from_toml_file`).
pub fn load(text: &str, file: &str) -> Result<Vec<Loaded>, String> {
    load_as(text, file, Format::PivotsToml)
}

/// Where the pivots are written: a `pivots.toml`, or the `[tool.pivot]` table of a
/// `pyproject.toml` (the same keys, as ruff's `[tool.ruff]` holds a `ruff.toml`'s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    PivotsToml,
    Pyproject,
}

impl Format {
    /// By the file's name: `pyproject.toml` holds its pivots under `[tool.pivot]`.
    pub fn of(path: &std::path::Path) -> Format {
        match path.file_name().and_then(|n| n.to_str()) {
            Some("pyproject.toml") => Format::Pyproject,
            _ => Format::PivotsToml,
        }
    }
}

/// A `pyproject.toml` as far as its pivots go: every other table is the project's own.
#[derive(Deserialize)]
struct Pyproject {
    tool: Option<PyprojectTool>,
}

#[derive(Deserialize)]
struct PyprojectTool {
    pivot: Option<TomlFile>,
}

/// Whether the text of a `pyproject.toml` has a `[tool.pivot]` table (a file that does not
/// parse has none: it is the project's, not ours to judge).
pub fn pyproject_has_pivots(text: &str) -> bool {
    // Most pyproject.toml files have no such table: no parse for them.
    text.contains("pivot")
        && toml::from_str::<toml::Table>(text).is_ok_and(|t| {
            t.get("tool")
                .and_then(|tool| tool.get("pivot"))
                .is_some_and(|p| p.is_table())
        })
}

/// `load`, for the format `format` (errors name the places of the file as it is: a
/// pyproject.toml's own lines).
pub fn load_as(text: &str, file: &str, format: Format) -> Result<Vec<Loaded>, String> {
    let mut p = Problems {
        file,
        text,
        out: Vec::new(),
    };
    let parsed: Result<TomlFile, toml::de::Error> = match format {
        Format::PivotsToml => toml::from_str(text),
        Format::Pyproject => toml::from_str::<Pyproject>(text).map(|f| {
            f.tool.and_then(|t| t.pivot).unwrap_or(TomlFile {
                pivot: Vec::new(),
                exclude: Vec::new(),
                per_file_ignores: Default::default(),
            })
        }),
    };
    let parsed: TomlFile = match parsed {
        Ok(f) => f,
        Err(e) => {
            let message = e.message().trim_end().to_string();
            match e.span() {
                Some(span) => p.at(span, &message, &[]),
                None => p.out.push(format!("{file}: {message}")),
            }
            return Err(p.out.join("\n\n"));
        }
    };
    let project_exclude = patterns(&mut p, "exclude", &parsed.exclude).unwrap_or_default();
    let ignores = per_file_ignores(&mut p, &parsed);
    let mut loaded = Vec::new();
    let mut first: HashMap<String, Range<usize>> = HashMap::new();
    for pivot in parsed.pivot {
        let id = pivot.id.get_ref().clone();
        if let Some(earlier) = first.get(&id) {
            let here = p.place(earlier);
            let note = format!(
                "the first pivot `{id}` is at {here}; an id is given once (a changed \
                 instruction is another [[pivot.version]] of the same [[pivot]])"
            );
            p.at(
                pivot.id.span(),
                &format!("duplicate pivot id `{id}`"),
                &[note],
            );
            let first_snippet = p.snippet(earlier.clone(), &format!("the first `{id}`"));
            if let Some(last) = p.out.last_mut() {
                last.push('\n');
                last.push_str(first_snippet.trim_end());
            }
            continue;
        }
        first.insert(id.clone(), pivot.id.span());
        if pivot.version.is_empty() {
            p.at(
                pivot.id.span(),
                &format!("pivot `{id}` has no [[pivot.version]]"),
                &[],
            );
            continue;
        }
        let include = patterns(&mut p, "include", &pivot.include);
        let exclude = patterns(&mut p, "exclude", &pivot.exclude);
        let mut versions = Vec::new();
        for v in pivot.version {
            let session = match &v.session {
                None => Some(0),
                Some(s) if *s.get_ref() < 0 => {
                    p.at(
                        s.span(),
                        &format!("session {} is negative (pivot `{id}`)", s.get_ref()),
                        &["sessions are numbered from 0 (the default)".into()],
                    );
                    None
                }
                Some(s) => usize::try_from(*s.get_ref()).ok(),
            };
            let kind = match ObjectKind::from_name(v.kind.get_ref()) {
                Some(k) => Some(k),
                None => {
                    let mut notes = Vec::new();
                    if let Some(near) = nearest_kind(v.kind.get_ref()) {
                        notes.push(format!("did you mean \"{near}\"?"));
                    }
                    let all: Vec<&str> = ObjectKind::every().map(|k| k.name()).collect();
                    notes.push(format!("the kinds: {}", all.join(", ")));
                    p.at(
                        v.kind.span(),
                        &format!("unknown object kind {:?} (pivot `{id}`)", v.kind.get_ref()),
                        &notes,
                    );
                    None
                }
            };
            let ignore: Vec<String> = (v.ignore_names.iter())
                .filter(|g| {
                    let ok = !g.get_ref().is_empty()
                        && (g.get_ref().chars())
                            .all(|c| c == '*' || c == '_' || c.is_alphanumeric());
                    if !ok {
                        p.at(
                            g.span(),
                            &format!(
                                "{:?} is not a name or a `*` glob of names (pivot `{id}`)",
                                g.get_ref()
                            ),
                            &[],
                        );
                    }
                    ok
                })
                .map(|g| g.get_ref().clone())
                .collect();
            let rule = serde_json::to_value(v.rule.get_ref())
                .map_err(|e| RuleError::BadShape(e.to_string()))
                .and_then(|json| Rule::from_json(&json))
                .and_then(|r| match (&r, ignore.is_empty()) {
                    (Rule::Regex { source, .. }, false) => Rule::regex_ignoring(source, &ignore),
                    _ => Ok(r),
                });
            let rule = match rule {
                Ok(r) => Some(r),
                Err(e) => {
                    p.at(v.rule.span(), &format!("{e} (pivot `{id}`)"), &[]);
                    None
                }
            };
            if let (Some(kind), Some(rule)) = (kind, &rule) {
                let fits = forms(kind);
                let form = Form::of(rule);
                if !fits.contains(&form) {
                    let takes: Vec<&str> = fits.iter().map(|f| f.describe()).collect();
                    p.at(
                        v.rule.span(),
                        &format!(
                            "{} does not fit kind \"{kind}\" (pivot `{id}`)",
                            form.short()
                        ),
                        &[format!("kind \"{kind}\" takes {}", takes.join(", or "))],
                    );
                    continue;
                }
                if !v.ignore_names.is_empty() && form != Form::Regex {
                    p.at(
                        v.ignore_names[0].span(),
                        &format!("`ignore-names` needs a regex rule (pivot `{id}`)"),
                        &["names are left alone only by a rule names must match".into()],
                    );
                    continue;
                }
                if asks_what_only_forbids(kind, rule) {
                    let forbid = match rule {
                        Rule::Member { name, .. } => format!("rule = [{name:?}, false]"),
                        _ => "rule = false".to_string(),
                    };
                    p.at(
                        v.rule.span(),
                        &format!("kind \"{kind}\" can only be forbidden (pivot `{id}`)"),
                        &[format!("write `{forbid}`: no {kind} in the checked files")],
                    );
                    continue;
                }
            }
            if let (Some(session), Some(kind), Some(rule)) = (session, kind, rule) {
                versions.push((session, v.text, kind, rule));
            }
        }
        let scope = Scope {
            include: include.unwrap_or_default(),
            exclude: exclude.unwrap_or_default(),
            project_exclude: project_exclude.clone(),
            file_ignores: ignores.get(&id).cloned().unwrap_or_default(),
        };
        loaded.push(Loaded {
            id,
            scope,
            versions,
        });
    }
    match p.out.is_empty() {
        true => Ok(loaded),
        false => Err(p.out.join("\n\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(toml: &str) -> String {
        load(toml, "pivots.toml").err().unwrap()
    }

    const ONE: &str =
        "[[pivot]]\nid = \"x\"\n[[pivot.version]]\nkind = \"function\"\nrule = \"^f_\"\n";

    #[test]
    fn a_duplicate_id_names_both_places() {
        let e = err(&format!("{ONE}\n{ONE}"));
        assert!(
            e.starts_with("pivots.toml:8:6: duplicate pivot id `x`\n"),
            "{e}"
        );
        assert!(e.contains("8 | id = \"x\"\n  |      ^^^"), "{e}");
        assert!(
            e.contains("the first pivot `x` is at pivots.toml:2:6"),
            "{e}"
        );
        assert!(e.contains("pivots.toml:2:6: the first `x`\n"), "{e}");
    }

    #[test]
    fn a_rule_that_does_not_fit_its_kind_says_which_fits() {
        let cases = [
            (
                "method decorator",
                "\"^timer\"",
                "a regular expression",
                "[name, bool] pair",
            ),
            (
                "function",
                "[\"f_\", true]",
                "a [name, bool] pair",
                "a regular expression",
            ),
            (
                "function docstring",
                "\"^x\"",
                "a regular expression",
                "a bool",
            ),
        ];
        for (kind, rule, given, fits) in cases {
            let toml = format!(
                "[[pivot]]\nid = \"p\"\n[[pivot.version]]\nkind = \"{kind}\"\nrule = {rule}\n"
            );
            let e = err(&toml);
            assert!(
                e.starts_with(&format!(
                    "pivots.toml:5:8: {given} does not fit kind \"{kind}\" (pivot `p`)\n"
                )),
                "{e}"
            );
            assert!(
                e.contains(&format!("= kind \"{kind}\" takes")) && e.contains(fits),
                "{e}"
            );
        }
    }

    #[test]
    fn team_kinds_are_read_and_what_they_only_forbid_is_refused() {
        let one = |kind: &str, rule: &str| {
            format!("[[pivot]]\nid = \"p\"\n[[pivot.version]]\nkind = \"{kind}\"\nrule = {rule}\n")
        };
        for (kind, rule) in [
            ("bare except", "false"),
            ("except", "[\"Exception\", false]"),
            ("wildcard import", "false"),
            ("relative import", "false"),
            ("import not at top", "false"),
            ("from import", "[\"__future__.annotations\", true]"),
            ("from import", "false"),
            ("call", "[\"print\", false]"),
            ("typing name", "[\"Optional\", false]"),
            ("comment text", "[\"TODO\", false]"),
            ("comment text", "[\"SPDX-License-Identifier\", true]"),
            ("public function docstring", "true"),
            ("public method annotation", "true"),
        ] {
            let loaded = load(&one(kind, rule), "pivots.toml");
            assert!(loaded.is_ok(), "{kind} {rule}: {:?}", loaded.err());
        }
        let e = err(&one("bare except", "true"));
        assert!(
            e.starts_with(
                "pivots.toml:5:8: kind \"bare except\" can only be forbidden (pivot `p`)"
            ),
            "{e}"
        );
        assert!(e.contains("write `rule = false`"), "{e}");
        let e = err(&one("call", "[\"print\", true]"));
        assert!(e.contains("write `rule = [\"print\", false]`"), "{e}");
        let e = err(&one("call", "false"));
        assert!(e.contains("a bool does not fit kind \"call\""), "{e}");
        let e = err(&one("public function docstring", "\"^x\""));
        assert!(e.contains("does not fit kind"), "{e}");
        let e = err(&one("bare excepts", "false"));
        assert!(e.contains("did you mean \"bare except\"?"), "{e}");
    }

    #[test]
    fn an_unknown_kind_suggests_and_lists_the_kinds() {
        let e = err(&ONE.replace("\"function\"", "\"funtion\""));
        assert!(
            e.starts_with("pivots.toml:4:8: unknown object kind \"funtion\" (pivot `x`)\n"),
            "{e}"
        );
        assert!(
            e.contains("4 | kind = \"funtion\"\n  |        ^^^^^^^^^\n"),
            "{e}"
        );
        assert!(e.contains("= did you mean \"function\"?"), "{e}");
        assert!(
            e.contains("method decorator") && e.contains("comment"),
            "{e}"
        );
    }

    #[test]
    fn regexes_sessions_globs_and_syntax_are_placed() {
        let e = err(&ONE.replace("\"^f_\"", "\"^(f_\""));
        assert!(
            e.starts_with("pivots.toml:5:8: invalid regular expression"),
            "{e}"
        );
        let e = err(&ONE.replace("[[pivot.version]]\n", "[[pivot.version]]\nsession = -1\n"));
        assert!(
            e.starts_with("pivots.toml:4:11: session -1 is negative (pivot `x`)"),
            "{e}"
        );
        let e = err(&ONE.replace("id = \"x\"\n", "id = \"x\"\ninclude = [\"a/**{\"]\n"));
        assert!(
            e.starts_with("pivots.toml:3:12: invalid include pattern"),
            "{e}"
        );
        let e = err(&ONE.replace("rule", "rules"));
        assert!(
            e.starts_with("pivots.toml:5:1: unknown field `rules`"),
            "{e}"
        );
        assert!(
            e.lines().count() > 3,
            "multi-line, as the parser shows it: {e}"
        );
        // Every problem, not only the first.
        let two = format!(
            "{}\n{}",
            ONE.replace("\"^f_\"", "\"(\""),
            ONE.replace("x", "y").replace("\"function\"", "\"clas\"")
        );
        let e = err(&two);
        assert!(
            e.contains("invalid regular expression") && e.contains("unknown object kind"),
            "{e}"
        );
    }

    #[test]
    fn scopes_are_read() {
        let toml = format!(
            "exclude = [\"gen/\"]\n{}",
            ONE.replace(
                "id = \"x\"\n",
                "id = \"x\"\ninclude = [\"app/\"]\nexclude = [\"**/test_*.py\"]\n"
            )
        );
        let l = crate::pivots::Ledger::from_toml(&toml, "pivots.toml").unwrap();
        let s = &l.pivots[0].scope;
        assert!(s.applies(Some("app/m.py")));
        assert!(!s.applies(Some("app/test_m.py")));
        assert!(!s.applies(Some("lib/m.py")));
        assert!(!s.applies(Some("gen/app/m.py")));
    }

    #[test]
    fn a_pyproject_holds_its_pivots_under_tool_pivot() {
        let pyproject = "[project]\nname = \"app\"\n\n[tool.ruff]\nline-length = 100\n\n[[tool.pivot.pivot]]\nid = \"x\"\nexclude = [\"tests/\"]\n[[tool.pivot.pivot.version]]\nkind = \"function\"\nrule = \"^f_\"\n";
        assert!(pyproject_has_pivots(pyproject));
        assert!(!pyproject_has_pivots("[project]\nname = \"pivotal\"\n"));
        assert!(!pyproject_has_pivots("not toml [ pivot"));
        let l = load_as(pyproject, "pyproject.toml", Format::Pyproject).unwrap();
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].id, "x");
        assert!(!l[0].scope.applies(Some("tests/t.py")));
        // Errors name the pyproject's own lines, and only our table is held to our keys.
        let e = load_as(
            &pyproject.replace("rule = \"^f_\"", "rule = \"(\""),
            "pyproject.toml",
            Format::Pyproject,
        )
        .err()
        .unwrap();
        assert!(
            e.starts_with("pyproject.toml:12:8: invalid regular expression"),
            "{e}"
        );
        let e = load_as(
            &pyproject.replace("exclude =", "excludes ="),
            "pyproject.toml",
            Format::Pyproject,
        )
        .err()
        .unwrap();
        assert!(
            e.contains("pyproject.toml:9:1: unknown field `excludes`"),
            "{e}"
        );
        assert_eq!(
            Format::of(std::path::Path::new("a/pyproject.toml")),
            Format::Pyproject
        );
    }

    #[test]
    fn per_file_ignores_turn_pivots_off_on_their_files() {
        let two = format!("{ONE}\n{}", ONE.replace("\"x\"", "\"y\""));
        let toml = format!(
            "{two}\n[per-file-ignores]\n\"tests/**\" = [\"x\"]\n\"conftest.py\" = [\"x\", \"y\"]\n"
        );
        let l = crate::pivots::Ledger::from_toml(&toml, "pivots.toml").unwrap();
        let (x, y) = (&l.pivots[0].scope, &l.pivots[1].scope);
        assert!(!x.applies(Some("tests/test_a.py")));
        assert!(y.applies(Some("tests/test_a.py")));
        assert!(!x.applies(Some("conftest.py")) && !y.applies(Some("sub/conftest.py")));
        assert!(x.applies(Some("app/a.py")));
        assert_eq!(
            x.explain(Some("tests/test_a.py")),
            super::super::scope::Applies::No("per-file-ignores `tests/**` names it".into())
        );
        // A typo in an id turns nothing off: it is an error at its place.
        let e = err(&format!(
            "{ONE}\n[per-file-ignores]\n\"tests/**\" = [\"z\"]\n"
        ));
        assert!(
            e.starts_with("pivots.toml:8:15: per-file-ignores `tests/**` names `z`, which no pivot of this file has"),
            "{e}"
        );
        assert!(e.contains("= the pivots: x"), "{e}");
        let e = err(&format!(
            "{ONE}\n[per-file-ignores]\n\"a/**{{\" = [\"x\"]\n"
        ));
        assert!(
            e.contains("invalid per-file-ignores pattern `a/**{`"),
            "{e}"
        );
    }
}

#[cfg(test)]
mod schema_tests {
    /// The committed schema is the one the types give (`PIVOT_UPDATE_SCHEMA=1` rewrites it).
    #[test]
    fn the_committed_json_schema_is_up_to_date() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../editors/schema/pivots.schema.json");
        let want = serde_json::to_string_pretty(&super::json_schema()).unwrap() + "\n";
        if std::env::var_os("PIVOT_UPDATE_SCHEMA").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "{} is out of date: run PIVOT_UPDATE_SCHEMA=1 cargo test -p pivot-python schema",
            path.display()
        );
    }
}
