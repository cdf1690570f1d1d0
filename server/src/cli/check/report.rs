//! What `pivot-lsp check` writes: findings (the server's diagnostics with their file),
//! their line-independent fingerprints, the four output formats, the analysis bundle and
//! the baseline comparison. Pure functions of their inputs, so two runs on the same tree
//! (at any absolute path) write the same bytes.

use crate::cli::shared::check_format::{
    Baseline, Bundle, BundleInputs, CheckReport, FileDigest, JsonFinding, ProblemRow, ShardInput,
    ToolInfo,
};
use pivot_workspace::replies::ActivePivot;
use pivot_workspace::walk::Problem;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use tower_lsp_server::ls_types::{Diagnostic, NumberOrString};

pub const TOOL: &str = "pivot-lsp";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// SARIF's `informationUri`: the package's `homepage`, else its registry page.
fn info_uri() -> &'static str {
    match env!("CARGO_PKG_HOMEPAGE") {
        "" => "https://crates.io/crates/pivot-lsp",
        h => h,
    }
}

/// One diagnostic the server published for one file.
#[derive(Clone, Debug)]
pub struct Finding {
    pub path: String,
    /// The LSP diagnostic, as published.
    pub diagnostic: Diagnostic,
    pub fingerprint: String,
}

impl Finding {
    fn line(&self) -> u64 {
        self.diagnostic.range.start.line.into()
    }
    fn col(&self) -> u64 {
        self.diagnostic.range.start.character.into()
    }
    fn end(&self) -> (u64, u64) {
        let e = self.diagnostic.range.end;
        (e.line.into(), e.character.into())
    }
    pub fn source(&self) -> &str {
        self.diagnostic.source.as_deref().unwrap_or("")
    }
    pub fn code(&self) -> String {
        match &self.diagnostic.code {
            Some(NumberOrString::String(s)) => s.clone(),
            Some(NumberOrString::Number(n)) => n.to_string(),
            None => String::new(),
        }
    }
    pub fn message(&self) -> &str {
        &self.diagnostic.message
    }
    fn is_syntax(&self) -> bool {
        self.source() == "python"
    }
    /// SARIF / text rule id: the pivot id, or `syntax-error` (as the MCP server names it).
    fn rule_id(&self) -> String {
        let code = self.code();
        let code = Some(code.as_str()).filter(|c| !c.is_empty());
        pivot_workspace::reported::rule_id(self.source(), code)
    }
}

pub use pivot_base::digest::sha256_hex;

/// The findings of one file, with fingerprints that do not depend on positions: the
/// path, source, code and message (which names the object and the pivot), plus which
/// occurrence of that same key in the file it is, in file order. Code that moves up or
/// down keeps its fingerprints; a file-level finding (a missing import, on line 1) too.
pub fn file_findings(path: &str, diagnostics: Vec<Diagnostic>) -> Vec<Finding> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<Finding> = diagnostics
        .into_iter()
        .map(|d| Finding {
            path: path.to_string(),
            diagnostic: d,
            fingerprint: String::new(),
        })
        .collect();
    out.sort_by_key(|f| (f.line(), f.col(), f.end()));
    for f in &mut out {
        let key = format!("{}\0{}\0{}\0{}", f.path, f.source(), f.code(), f.message());
        let n = seen.entry(key.clone()).or_default();
        f.fingerprint = sha256_hex(format!("{key}\0{n}").as_bytes());
        *n += 1;
    }
    out
}

/// Sorted by path, line, column (then by the rest, for a total order). Each key is read
/// from the diagnostic once: a stdlib-sized run has 100,000 findings.
pub fn sort(findings: &mut [Finding]) {
    findings.sort_by_cached_key(|f| {
        (
            f.path.clone(),
            f.line(),
            f.col(),
            f.end(),
            f.code(),
            f.message().to_string(),
        )
    });
}

/// `path:line:col: [code] message`, 1-based (the column counts UTF-16 units, as LSP does).
/// A path or message holding a line break, a control character or what a CI log reads as
/// a workflow command is quoted or escaped (shared/log_safe.rs).
pub fn text(findings: &[Finding]) -> String {
    use crate::cli::shared::log_safe;
    let mut s = String::new();
    for f in findings {
        s.push_str(&format!(
            "{}:{}:{}: [{}] {}\n",
            log_safe::path(&f.path),
            f.line() + 1,
            f.col() + 1,
            log_safe::text(&f.rule_id()),
            log_safe::text(&one_line(f.message()))
        ));
    }
    s
}

fn one_line(m: &str) -> String {
    m.replace(['\r', '\n'], " ")
}

/// The JSON shape of `--format json`.
pub fn json_report(
    root: &str,
    session: usize,
    pivots: &[ActivePivot],
    findings: &[Finding],
) -> CheckReport {
    CheckReport {
        version: VERSION.into(),
        root: root.into(),
        session,
        pivots: pivots.to_vec(),
        findings: findings.iter().map(json_finding).collect(),
        shard: None,
    }
}

/// `check --shard K/N --format json`: the report of this shard's files plus the `"shard"`
/// record (the input every shard must share: root, session, pivots, every file's path).
pub fn shard_json(
    root: &str,
    session: usize,
    pivots: &[ActivePivot],
    findings: &[Finding],
    shard: pivot_bench::shard::Shard,
    all_files: &[String],
) -> CheckReport {
    let input = ShardInput {
        benchmark: "check".into(),
        root: root.into(),
        session,
        pivots: pivots.to_vec(),
        files: all_files.to_vec(),
    };
    CheckReport {
        shard: Some(shard.record(input, true)),
        ..json_report(root, session, pivots, findings)
    }
}

/// The diagnostic as published, except `code`: the rule id text and SARIF show
/// (`syntax-error` for a syntax error, which the server publishes without a code).
pub fn json_finding(f: &Finding) -> JsonFinding {
    let d = &f.diagnostic;
    JsonFinding {
        path: f.path.clone(),
        range: d.range,
        severity: d.severity,
        source: d.source.clone(),
        code: f.rule_id(),
        message: d.message.clone(),
        fingerprint: None,
    }
}

/// GitHub Actions workflow commands: `::warning` per pivot finding, `::error` per syntax
/// error (properties and message escaped as the runner expects).
pub fn github(findings: &[Finding]) -> String {
    let mut s = String::new();
    for f in findings {
        let (end_line, end_col) = f.end();
        s.push_str(&format!(
            "::{} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
            if f.is_syntax() { "error" } else { "warning" },
            gh_prop(&f.path),
            f.line() + 1,
            f.col() + 1,
            end_line + 1,
            end_col + 1,
            gh_prop(&format!("pivot-lsp {}", f.rule_id())),
            gh_data(f.message())
        ));
    }
    s
}

fn gh_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn gh_prop(s: &str) -> String {
    gh_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// SARIF 2.1.0 for GitHub code scanning: one rule per active pivot (and one for syntax
/// errors), results with 1-based regions in UTF-16 columns, URIs relative to %SRCROOT%.
pub fn sarif(
    root_uri: &str,
    pivots: &[ActivePivot],
    findings: &[Finding],
    problems: &[Problem],
) -> Value {
    use super::sarif::{
        ArtifactLocation, Configuration, Driver, Invocation, Level, Location, Log, Message,
        Notification, PhysicalLocation, Region, Rule, Run, SarifResult, Tool,
    };
    let mut rules: Vec<Rule> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for p in pivots {
        let id = p.id.clone();
        if id.is_empty() || index.contains_key(&id) {
            continue;
        }
        let text = Some(p.text.as_str()).filter(|t| !t.is_empty());
        let description = p.description.as_str();
        let short = sentence(text.unwrap_or(description));
        index.insert(id.clone(), rules.len());
        let mut properties = Map::new();
        properties.insert("instruction".into(), json!(text.unwrap_or("")));
        properties.insert("kind".into(), json!(p.kind));
        properties.insert("rule".into(), p.rule.clone());
        properties.insert("origin".into(), json!(p.origin));
        properties.insert("version".into(), json!(p.version));
        rules.push(Rule {
            // SARIF wants a name unlike the id (compared ignoring case).
            name: format!("Pivot{}", pascal(&id)),
            short_description: Message::new(short),
            full_description: Message::new(sentence(&format!(
                "{} (object kind: {}; rule: {}).",
                text.unwrap_or(description).trim_end_matches('.'),
                p.kind,
                description
            ))),
            help: Message::new(sentence(&format!(
                "Pivot `{id}`, given at session {}: {}",
                p.session,
                text.unwrap_or(description)
            ))),
            default_configuration: Configuration {
                level: Level::Warning,
            },
            properties: Some(properties),
            id,
        });
    }
    if findings.iter().any(Finding::is_syntax) {
        index.insert("syntax-error".into(), rules.len());
        rules.push(Rule {
            id: "syntax-error".into(),
            name: "SyntaxError".into(),
            short_description: Message::new("The file does not parse as Python."),
            full_description: Message::new("The file does not parse as Python (the verdict CPython's parser gives); no pivot can be checked in it."),
            help: Message::new("Fix the syntax error so that the file parses."),
            default_configuration: Configuration { level: Level::Error },
            properties: None,
        });
    }
    let results: Vec<SarifResult> = findings
        .iter()
        .map(|f| {
            let id = f.rule_id();
            let (end_line, end_col) = f.end();
            SarifResult {
                rule_index: index.get(&id).copied(),
                rule_id: id,
                level: if f.is_syntax() {
                    Level::Error
                } else {
                    Level::Warning
                },
                message: Message::new(sentence(&one_line(f.message()))),
                locations: vec![Location {
                    physical_location: PhysicalLocation {
                        artifact_location: ArtifactLocation {
                            uri: pivot_base::percent::encode_path(&f.path),
                            uri_base_id: Some("%SRCROOT%"),
                        },
                        region: Region {
                            start_line: f.line() + 1,
                            start_column: f.col() + 1,
                            end_line: end_line + 1,
                            end_column: end_col + 1,
                        },
                    },
                }],
                partial_fingerprints: [("pivotFindingHash/v1", f.fingerprint.clone())].into(),
            }
        })
        .collect();
    let notes: Vec<Notification> = problems
        .iter()
        .map(|p| Notification {
            level: Level::Warning,
            message: Message::new(sentence(&format!("{}: {}", p.path, p.problem))),
        })
        .collect();
    let log = Log {
        schema: super::sarif::SCHEMA,
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: TOOL,
                    version: VERSION,
                    semantic_version: VERSION,
                    information_uri: info_uri(),
                    rules,
                },
            },
            invocations: vec![Invocation {
                execution_successful: true,
                tool_execution_notifications: notes,
            }],
            original_uri_base_ids: [(
                "%SRCROOT%".to_string(),
                ArtifactLocation {
                    uri: root_uri.to_string(),
                    uri_base_id: None,
                },
            )]
            .into(),
            column_kind: "utf16CodeUnits",
            results,
        }],
    };
    serde_json::to_value(log).expect("SARIF types serialize")
}

/// SARIF wants messages that are sentences: ends with a period.
fn sentence(s: &str) -> String {
    let t = s.trim();
    if t.ends_with(['.', '!', '?']) {
        t.to_string()
    } else {
        format!("{t}.")
    }
}

/// `fn-prefix` -> `FnPrefix`: SARIF rule names are identifiers.
fn pascal(id: &str) -> String {
    id.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// Everything a bundle records about what was read.
pub struct Inputs {
    /// (relative path, SHA-256) of each file checked.
    pub files: Vec<(String, String)>,
    /// (path as given, SHA-256) of `pivots.toml` and of the conversation, when used.
    pub pivots: Option<(String, String)>,
    pub conversation: Option<(String, String)>,
    pub session: usize,
}

/// The analysis bundle: inputs, active pivots, sorted findings with fingerprints,
/// problems, and `hash`, the SHA-256 of the canonical JSON of everything else (keys in
/// the order written here, no whitespace). No absolute path and no time, so the bytes
/// depend only on what was checked.
pub fn bundle(
    inputs: &Inputs,
    pivots: &[ActivePivot],
    findings: &[Finding],
    problems: &[Problem],
) -> Bundle {
    let digest = |(path, sha256): &(String, String)| FileDigest {
        path: path.clone(),
        sha256: sha256.clone(),
    };
    let mut b = Bundle {
        format: "pivot-lsp-bundle/1".into(),
        tool: ToolInfo {
            name: TOOL.into(),
            version: VERSION.into(),
        },
        inputs: BundleInputs {
            files: inputs.files.iter().map(digest).collect(),
            pivots: inputs.pivots.as_ref().map(digest),
            conversation: inputs.conversation.as_ref().map(digest),
            session: inputs.session,
        },
        pivots: pivots.to_vec(),
        findings: (findings.iter())
            .map(|f| JsonFinding {
                fingerprint: Some(f.fingerprint.clone()),
                ..json_finding(f)
            })
            .collect(),
        problems: (problems.iter())
            .map(|p| ProblemRow {
                path: p.path.clone(),
                problem: p.problem.clone(),
            })
            .collect(),
        hash: None,
    };
    let canonical = serde_json::to_vec(&b).unwrap_or_default();
    b.hash = Some(sha256_hex(&canonical));
    b
}

/// Fingerprints of a bundle's findings, or why the file is not a bundle.
pub fn baseline_fingerprints(bundle: &Value) -> Result<HashSet<String>, String> {
    if !bundle.get("findings").is_some_and(Value::is_array) {
        return Err("it has no `findings` list (is it a bundle written by --bundle?)".into());
    }
    let b = Baseline::deserialize(bundle)
        .map_err(|e| format!("a finding has no `fingerprint` ({e})"))?;
    Ok(b.findings.into_iter().map(|f| f.fingerprint).collect())
}
