//! `pivot-lsp pivots import FILE...`: pivots.toml entries proposed from the prose
//! instruction files coding assistants read (the reading is the core's
//! `pivots::import`); printed, and written only with `--write`.

use anyhow::{bail, Context, Result};
use pivot_llm::loopback::{LoopbackServer, Script};
use pivot_llm::{Client, ClientConfig};
use pivot_python::pivots::import::{self, Import, Source};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `pivots import --help`.
pub const IMPORT_ABOUT: &str = "Propose pivots.toml entries from the instruction files coding \
assistants follow: AGENTS.md, CLAUDE.md, .github/copilot-instructions.md, .cursorrules, \
.cursor/rules/*.mdc, or any text or markdown file.\n\n\
Each file is read as a Markdown document: a heading or label that negates its items (`## \
Never`, `NEVER:`, `Avoid`, a leading ❌) negates a bare instruction under it (\"- Import \
`pickle`\" under `## Never` is \"never import `pickle`\"); a section for another language or for \
tests only, an item followed by an \"Exception:\" item, and .mdc front matter whose globs leave \
out Python files block what they hold; naming tables are read row by row. Each sentence is then \
read deterministically: one whose meaning in the rule forms is certain becomes a proposed pivot \
citing its file and line; the parts of it no rule form checks (\"and classes\" in \"docstrings \
for functions and classes\") and every other line are not checkable, with the reason, listed \
with --skipped (or in --format json). Nothing is guessed, and nothing is written without \
--write.\n\n\
Checkable (in a team's file \"functions\" is every def: functions and methods; PascalCase / \
CamelCase / CapWords is PEP 8's, acronyms and a leading `_` allowed; a variable case rule \
accepts UPPER_CASE names when the file says constants are UPPER_SNAKE_CASE):\n\
  - name prefixes, suffixes and substrings: \"start function names with `x_`\", \"method names \
must end with `_md`\", \"include the string `chx` in variable names\", \"use the `v_` prefix \
for variable names\" (function, method, class, variable, attribute and function-argument \
names; for arguments and attributes only the first of each function / __init__ is checked);\n\
  - name cases: snake_case, camelCase, PascalCase / CamelCase / CapWords, UPPER_CASE: \"use \
snake_case for function and variable names\", \"class names must be PascalCase\";\n\
  - decorators: \"add the `@timer` decorator to all methods\", \"decorate functions with \
`@trace`\", \"never use the `@staticmethod` decorator on methods\" (the decorator's name is \
checked, not the module it comes from);\n\
  - imports: \"always import `logging`\", \"never import `pickle`\" (`import x` statements; \
`from x import y` is not seen);\n\
  - docstrings, type annotations, try and assert statements in functions or methods: \"every \
function must have a docstring\", \"use type hints in all methods\" (at least one annotation \
each), \"include try statements in methods\"; comments in the file: \"add comments\"; \
on public objects only (no leading `_`): \"docstrings for all public functions\";\n\
  - constructs (the team kinds of docs/pivots-toml.md): \"never use bare `except:`\", \"catch \
specific exceptions rather than broad `Exception`\", \"no `print()` statements\", \"avoid \
wildcard imports\", \"use absolute imports\", \"imports always at module top\", \"use `from \
__future__ import annotations`\", \"use `str | None`, not `Optional[str]`\", \"no `# type: ignore` \
comments\".\n\n\
Not checkable, and listed so: anything about a subset of the objects (\"private methods\", \
\"public functions\" but for docstrings and annotations, \"variables that hold tables\"), \
constants, modules and files, method \
arguments, complete annotations, class docstrings, what a name or docstring says, layout, \
tools, tests and the workflow, negated naming rules, and any sentence whose example \
contradicts the rule read from it.\n\n\
--write appends the proposed pivots to PIVOTS_TOML (pivots.toml in the current directory by \
default): the file is kept, pivots whose kind and rule it already has are left out, ids it \
already uses get a -2 suffix, and the result must load as a pivots.toml or nothing is written.\n\n\
--model M asks an OpenAI-compatible endpoint about the sentences left unread. Nothing it says \
is taken on trust: its rule must be in a rule form, on an object kind that form applies to (a \
regex must compile), and must accept every example it gives and reject every counter-example \
(names for a regex, Python code checked as the editor checks it otherwise), with at least one \
of each. Rules that pass are proposed with proposed = \"model\", for review; the others are \
listed with the reason.";

#[derive(clap::Subcommand, Debug)]
pub enum PivotsCommand {
    /// Propose pivots.toml entries from AGENTS.md, CLAUDE.md, .cursorrules and similar files.
    #[command(long_about = IMPORT_ABOUT)]
    Import(ImportArgs),
}

#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    /// Instruction files (markdown or plain text).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Append the proposed pivots to this pivots.toml (created if missing).
    #[arg(
        long,
        value_name = "PIVOTS_TOML",
        num_args = 0..=1,
        default_missing_value = "pivots.toml"
    )]
    pub write: Option<PathBuf>,
    /// toml: the proposed entries on stdout; text: each proposal's line; json: proposed and
    /// skipped, with citations.
    #[arg(long, value_enum, default_value_t = ImportFormat::Toml)]
    pub format: ImportFormat,
    /// Also list every sentence or block not checkable, with the rule form it failed on
    /// (on stderr with --format toml, in the report with text).
    #[arg(long)]
    pub skipped: bool,
    /// Ask this model (an OpenAI-compatible endpoint: --base-url, or --loopback) about the
    /// sentences the reader leaves unread. Each rule it proposes must be in a rule form, on
    /// a kind that form applies to, and hold on the examples it gives and fail on its
    /// counter-examples; what passes is marked `proposed = "model"`, for review.
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    #[command(flatten, next_help_heading = "Endpoint (with --model)")]
    pub endpoint: crate::cli::shared::endpoint_args::EndpointArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ImportFormat {
    Toml,
    Text,
    Json,
}

pub fn run(c: PivotsCommand) -> Result<i32> {
    match c {
        PivotsCommand::Import(a) => run_import(a),
    }
}

fn run_import(a: ImportArgs) -> Result<i32> {
    let mut sources = Vec::new();
    for f in &a.files {
        let bytes = pivot_base::bounded_read::read(f)
            .with_context(|| format!("cannot read {}", f.display()))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            anyhow::anyhow!(
                "{}: not UTF-8 (at byte {})",
                f.display(),
                e.utf8_error().valid_up_to()
            )
        })?;
        sources.push(Source {
            name: f.to_string_lossy().into_owned(),
            text,
        });
    }
    let mut got = import::import(&sources);
    if let Some(model) = &a.model {
        ask_model(&mut got, model, &a.endpoint)?;
    } else if a.endpoint.loopback.is_some() {
        bail!("--loopback answers for a model: give --model too");
    }
    // The file is merged and checked before anything is printed: a refusal prints nothing.
    let merged = match &a.write {
        Some(dest) => Some((dest, merge(&got, dest)?)),
        None => None,
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match a.format {
        ImportFormat::Toml => {
            out.write_all(got.to_toml().as_bytes())?;
            if a.skipped {
                let mut err = std::io::BufWriter::new(std::io::stderr().lock());
                for s in &got.skipped {
                    writeln!(err, "{}", skipped_line(s))?;
                }
                err.flush()?;
            }
        }
        ImportFormat::Text => out.write_all(text_report(&got, &sources, a.skipped).as_bytes())?,
        ImportFormat::Json => {
            // Streamed: a value tree of every line of a large file would cost gigabytes.
            let mut w =
                std::io::BufWriter::new(crate::cli::shared::log_safe::JsonWriter::new(&mut out));
            serde_json::to_writer_pretty(&mut w, &got)?;
            w.write_all(b"\n")?;
            w.flush()?;
        }
    }
    out.flush()?;
    if a.format == ImportFormat::Text {
        return finish(merged);
    }
    let instructions = (got.proposed.iter())
        .flat_map(|p| &p.sources)
        .map(|c| (&c.at.file, c.at.line))
        .collect::<std::collections::HashSet<_>>()
        .len();
    eprintln!(
        "{} pivot(s) proposed from {instructions} instruction(s); {} sentence(s) or block(s) not checkable{}",
        got.proposed.len(),
        got.skipped.len(),
        if a.skipped || a.format == ImportFormat::Json || got.skipped.is_empty() {
            ""
        } else {
            " (list them with --skipped)"
        }
    );
    finish(merged)
}

/// The unread sentences asked of the model; what it proposes and passes validation joins the
/// proposals, marked as the model's.
fn ask_model(
    got: &mut Import,
    model: &str,
    e: &crate::cli::shared::endpoint_args::EndpointArgs,
) -> Result<()> {
    if e.requests.offline {
        bail!("--offline: pivots import keeps no response cache to answer from");
    }
    let server = match &e.loopback {
        Some(script) => Some(LoopbackServer::start(Script::load(script)?)?),
        None => None,
    };
    let base_url = match (&server, &e.base_url) {
        (Some(s), _) => s.base_url(),
        (None, Some(u)) => u.clone(),
        (None, None) => {
            bail!("--model needs an endpoint: --base-url URL (or OPENAI_BASE_URL), or --loopback SCRIPT")
        }
    };
    let mut cfg = ClientConfig::new(base_url, model);
    cfg.api_key = std::env::var(&e.api_key_env).ok().filter(|k| !k.is_empty());
    e.requests.apply(&mut cfg)?;
    let client = Client::new(cfg)?;
    let unread: Vec<(usize, String)> = (got.unread().into_iter())
        .map(|(i, s)| (i, s.to_string()))
        .collect();
    let texts: Vec<&str> = unread.iter().map(|(_, s)| s.as_str()).collect();
    let answers = pivot_llm::pivot_import::ask_all(&client, &texts);
    let before = got.proposed.len();
    got.apply_model(unread.iter().map(|(i, _)| *i).zip(answers).collect());
    eprintln!(
        "asked {} about {} sentence(s): {} pivot(s) proposed, marked proposed = \"model\" (review them)",
        crate::cli::shared::log_safe::text(model),
        texts.len(),
        got.proposed.len() - before
    );
    drop(server);
    Ok(())
}

/// What --write did, or that nothing was written.
fn finish(merged: Option<(&PathBuf, import::Merged)>) -> Result<i32> {
    if let Some((dest, m)) = merged {
        let dest = crate::cli::shared::log_safe::path(&dest.to_string_lossy()).into_owned();
        for (new, old) in &m.already {
            eprintln!(
                "{new}: already in {dest} as `{}`",
                crate::cli::shared::log_safe::text(old)
            );
        }
        if m.added.is_empty() {
            eprintln!("nothing new to write to {dest}");
        } else {
            let ids = crate::cli::shared::log_safe::text(&m.added.join(", ")).into_owned();
            eprintln!("wrote {} pivot(s) to {dest}: {ids}", m.added.len());
        }
    } else {
        eprintln!("nothing written (use --write [PIVOTS_TOML] to append to a pivots.toml)");
    }
    Ok(0)
}

/// The merged file, written; refused for a destination that is not a `.toml` file or does
/// not hold a valid pivots.toml.
fn merge(got: &Import, dest: &Path) -> Result<import::Merged> {
    let shown = crate::cli::shared::log_safe::path(&dest.to_string_lossy()).into_owned();
    if dest.extension().is_none_or(|e| e != "toml") {
        bail!("refusing to write pivots to {shown}: not a .toml file");
    }
    let existing = match pivot_base::bounded_read::read(dest) {
        Ok(bytes) => String::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("{shown}: not UTF-8; nothing written"))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {shown}")),
    };
    let m = got.merge_into(&existing, &shown)?;
    if !m.added.is_empty() {
        pivot_base::durable::write_atomic(dest, m.text.as_bytes())
            .with_context(|| format!("cannot write {shown}"))?;
    }
    Ok(m)
}

fn skipped_line(s: &import::Skipped) -> String {
    format!(
        "{}: not checkable: {}: {}",
        crate::cli::shared::log_safe::path(&s.at.to_string()),
        crate::cli::shared::log_safe::text(&s.reason),
        crate::cli::shared::log_safe::text(&s.text)
    )
}

/// Every proposed pivot and (with `skipped`) skipped line, in the order of the files given,
/// then by line (a line's pivots before its skipped sentences).
fn text_report(got: &Import, sources: &[Source], skipped: bool) -> String {
    let mut rows: Vec<(usize, usize, String)> = Vec::new();
    let file_at = |f: &str| {
        sources
            .iter()
            .position(|s| s.name == f)
            .unwrap_or(usize::MAX)
    };
    for p in &got.proposed {
        for c in &p.sources {
            rows.push((
                file_at(&c.at.file),
                c.at.line,
                format!(
                    "{}: pivot {}: {} {}: {}",
                    crate::cli::shared::log_safe::path(&c.at.to_string()),
                    crate::cli::shared::log_safe::text(&p.id),
                    p.kind,
                    crate::cli::shared::log_safe::text(&p.rule.describe()),
                    crate::cli::shared::log_safe::text(&c.text)
                ),
            ));
        }
    }
    for s in got.skipped.iter().filter(|_| skipped) {
        rows.push((file_at(&s.at.file), s.at.line, skipped_line(s)));
    }
    rows.sort_by_key(|(file, line, _)| (*file, *line));
    let mut out: String = rows.into_iter().map(|(_, _, r)| r + "\n").collect();
    out.push_str(&format!(
        "{} pivot(s) proposed; {} sentence(s) or block(s) not checkable{}\n",
        got.proposed.len(),
        got.skipped.len(),
        if skipped || got.skipped.is_empty() {
            ""
        } else {
            " (list them with --skipped)"
        }
    ));
    out
}
