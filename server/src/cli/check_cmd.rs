//! `pivot-lsp check [PATH]...`: the editor's verdicts as a CI step. The files are checked
//! by the language server itself (a child `pivot-lsp serve` driven over stdio, see
//! check_drive.rs), so CI reports what the editor shows. This file parses the flags,
//! reads the inputs and writes the outputs.

use super::check_drive::drive;
use super::check_report::{self as report, Finding, Inputs};
use super::check_walk::{relative, walk, Problem};
use super::Progress;
use anyhow::{Context, Result};
use clap::ValueEnum;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `check --help`: what it does, where pivots come from, exit codes.
pub const LONG_ABOUT: &str =
    "Check Python files against the active pivots, through the language server.\n\n\
The current directory is the workspace root. Directories are walked with .gitignore / \
.ignore respected and virtualenv, cache and build folders skipped. Each file is opened in a \
`pivot-lsp serve` child process exactly as an editor opens it, and the diagnostics it \
publishes are the findings (pivot violations, and syntax errors with source `python`).\n\n\
Pivots come from pivots.toml at the root (or --pivots), and from a MemoryCode conversation \
(--conversation) at --session (default: the latest session).\n\n\
Exit codes: 0 no finding, 1 findings (0 with --exit-zero), 2 a usage or input error \
(missing path, invalid pivots.toml, unreadable conversation). Files that cannot be checked \
(unreadable, binary, too large, symlink loops) are reported on stderr and the rest are \
checked.";

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Files or folders to check, relative to the current directory.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// The pivots file [default: pivots.toml at the root, when present]
    #[arg(long, value_name = "FILE")]
    pub pivots: Option<PathBuf>,
    /// A MemoryCode dialogue_N.json whose pivots apply too.
    #[arg(long, value_name = "FILE")]
    pub conversation: Option<PathBuf>,
    /// Session index, 0-based [default: the latest: every pivot in its newest version]
    #[arg(long, value_name = "K")]
    pub session: Option<usize>,
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// Write the report here instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Exit 0 even when there are findings (input errors still exit 2).
    #[arg(long)]
    pub exit_zero: bool,
    /// Also write a deterministic analysis bundle (inputs with SHA-256, pivots, findings
    /// with fingerprints) to FILE.
    #[arg(long, value_name = "FILE")]
    pub bundle: Option<PathBuf>,
    /// Report only findings that are not in this bundle (new violations), and print how
    /// many of its findings are fixed.
    #[arg(long, value_name = "BUNDLE")]
    pub baseline: Option<PathBuf>,
    /// Language servers run at once [default: the number of CPUs, at most 8]
    #[arg(long, short)]
    pub jobs: Option<usize>,
    /// Check only shard K of N (1-based) of the files found (their sorted paths dealt
    /// round robin) and write JSON that `pivot-lsp merge` joins into the unsharded run's
    /// JSON (needs --format json; SARIF, text, GitHub, --bundle and --baseline are not sharded).
    #[arg(long, value_name = "K/N", conflicts_with_all = ["bundle", "baseline"])]
    pub shard: Option<crate::bench::shard::Shard>,
    /// Files larger than this many MB are reported and not checked.
    #[arg(long, value_name = "MB", default_value_t = 10.0)]
    pub max_file_size: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    /// path:line:col: [code] message
    Text,
    Json,
    /// SARIF 2.1.0 (GitHub code scanning)
    Sarif,
    /// GitHub Actions annotations (::warning / ::error)
    Github,
}

/// Input errors: exit 2 with the message.
fn input_error(msg: String) -> Result<i32> {
    eprintln!("error: {msg}");
    Ok(2)
}

pub fn run(a: CheckArgs) -> Result<i32> {
    let root = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .context("cannot read the current directory")?;
    if a.max_file_size.is_nan() || a.max_file_size <= 0.0 {
        return input_error("--max-file-size must be a positive number of MB".into());
    }
    let baseline = match &a.baseline {
        Some(p) => match read_baseline(p) {
            Ok(b) => Some(b),
            Err(e) => return input_error(e),
        },
        None => None,
    };
    let pivots_file = match &a.pivots {
        Some(p) if root.join(p).is_dir() => {
            return input_error(format!(
                "--pivots {}: a directory, not a pivots file (name the .toml file, e.g. {})",
                p.display(),
                p.join("pivots.toml").display()
            ))
        }
        Some(p) if !root.join(p).exists() => {
            return input_error(format!("--pivots {}: no such pivots file", p.display()))
        }
        Some(p) if !root.join(p).is_file() => {
            return input_error(format!(
                "--pivots {}: not a regular file (a pivots file is TOML text)",
                p.display()
            ))
        }
        Some(p) => Some(root.join(p)),
        None => Some(root.join("pivots.toml")).filter(|p| p.is_file()),
    };
    let conversation_bytes = match &a.conversation {
        Some(p) => match std::fs::read(root.join(p)) {
            Ok(b) => Some(b),
            Err(e) => return input_error(format!("{}: cannot read: {e}", p.display())),
        },
        None => None,
    };
    if a.shard.is_some() && a.format != CheckFormat::Json {
        return input_error(
            "--shard writes a shard for `pivot-lsp merge`: add --format json (SARIF, text and GitHub output are not sharded; merge the JSON)".into(),
        );
    }
    let walked = match walk(&root, &a.paths, (a.max_file_size * 1e6) as u64, a.shard) {
        Ok(w) => w,
        Err(e) => return input_error(format!("{e:#}")),
    };
    for p in &walked.problems {
        eprintln!("warning: {}: {}", p.path, p.problem);
    }

    let mut setup = json!({});
    if let Some(p) = &pivots_file {
        setup["pivots"] = json!(p);
    }
    if let Some(p) = &a.conversation {
        setup["conversation"] = json!(root.join(p));
    }
    if let Some(k) = a.session {
        setup["session"] = json!(k);
    }
    let jobs = a.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(8)
    });
    let progress = Progress::new(walked.files.len() as u64, "checking");
    let driven = drive(&root, &setup, &walked.files, jobs, &|| progress.inc(1));
    progress.finish();
    let driven = match driven {
        Ok(d) => d,
        // A conversation that cannot be opened or a session out of range.
        Err(e) if a.conversation.is_some() || a.session.is_some() => {
            return input_error(format!("{e:#}"))
        }
        Err(e) => return Err(e),
    };
    let setup_errors: Vec<String> = driven.setup["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e.as_str().map(str::to_string))
        .collect();
    for e in &setup_errors {
        eprintln!("error: {e}");
    }
    // What the server showed (a corrupt state file...), unless said just above.
    for m in &driven.messages {
        if !setup_errors.iter().any(|e| m.contains(e.as_str())) {
            eprintln!("warning: {m}");
        }
    }
    for w in driven.setup["warnings"].as_array().into_iter().flatten() {
        eprintln!("warning: {}", w.as_str().unwrap_or_default());
    }
    let pivots = driven.setup["pivots"].clone();
    let session = driven.setup["index"].clone();

    let mut findings: Vec<Finding> = Vec::new();
    for (f, diags) in walked.files.iter().zip(driven.diagnostics) {
        findings.extend(report::file_findings(&f.rel, diags));
    }
    report::sort(&mut findings);

    if let Some(path) = &a.bundle {
        let inputs = Inputs {
            files: walked
                .files
                .iter()
                .map(|f| (f.rel.clone(), report::sha256_hex(f.text.as_bytes())))
                .collect(),
            pivots: pivots_file.as_ref().map(|p| {
                (
                    relative(&root, p),
                    report::sha256_hex(&std::fs::read(p).unwrap_or_default()),
                )
            }),
            conversation: a
                .conversation
                .as_ref()
                .zip(conversation_bytes.as_ref())
                .map(|(p, b)| (relative(&root, &root.join(p)), report::sha256_hex(b))),
            session: session.clone(),
        };
        let b = report::bundle(&inputs, &pivots, &findings, &walked.problems);
        let mut bytes = serde_json::to_vec_pretty(&b)?;
        bytes.push(b'\n');
        std::fs::write(path, bytes)
            .with_context(|| format!("cannot write the bundle {}", path.display()))?;
    }

    if let Some(known) = &baseline {
        let now: HashSet<&str> = findings.iter().map(|f| f.fingerprint.as_str()).collect();
        let fixed = known.iter().filter(|k| !now.contains(k.as_str())).count();
        findings.retain(|f| !known.contains(&f.fingerprint));
        eprintln!(
            "baseline: {} new finding{}, {fixed} of the baseline's {} fixed",
            findings.len(),
            if findings.len() == 1 { "" } else { "s" },
            known.len()
        );
    }

    let out = match a.shard {
        Some(shard) => {
            let v = report::shard_json(
                &root.display().to_string(),
                &session,
                &pivots,
                &findings,
                shard,
                &walked.all,
            );
            serde_json::to_string_pretty(&v)? + "\n"
        }
        None => render(
            a.format,
            &root,
            &session,
            &pivots,
            &findings,
            &walked.problems,
        )?,
    };
    write_output(a.output.as_deref(), &out)?;
    eprintln!(
        "{} file{} checked, {} finding{}{}",
        walked.files.len(),
        if walked.files.len() == 1 { "" } else { "s" },
        findings.len(),
        if findings.len() == 1 { "" } else { "s" },
        match walked.problems.len() {
            0 => String::new(),
            n => format!(", {n} not checked (see the warnings above)"),
        }
    );
    Ok(if !setup_errors.is_empty() {
        2
    } else if findings.is_empty() || a.exit_zero {
        0
    } else {
        1
    })
}

fn render(
    format: CheckFormat,
    root: &Path,
    session: &Value,
    pivots: &Value,
    findings: &[Finding],
    problems: &[Problem],
) -> Result<String> {
    Ok(match format {
        CheckFormat::Text => report::text(findings),
        CheckFormat::Github => report::github(findings),
        CheckFormat::Json => {
            let v = report::json_report(&root.display().to_string(), session, pivots, findings);
            serde_json::to_string_pretty(&v)? + "\n"
        }
        CheckFormat::Sarif => {
            let mut root_uri = super::check_client::uri_of(root)?;
            if !root_uri.ends_with('/') {
                root_uri.push('/');
            }
            let v = report::sarif(&root_uri, pivots, findings, problems);
            serde_json::to_string_pretty(&v)? + "\n"
        }
    })
}

fn write_output(path: Option<&Path>, text: &str) -> Result<()> {
    match path {
        // Whole or not at all (a killed shard leaves no half file to merge).
        Some(p) => crate::durable::write_atomic(p, text.as_bytes()),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
            Ok(())
        }
    }
}

fn read_baseline(p: &Path) -> std::result::Result<HashSet<String>, String> {
    let text =
        std::fs::read_to_string(p).map_err(|e| format!("{}: cannot read: {e}", p.display()))?;
    let v: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", p.display()))?;
    report::baseline_fingerprints(&v).map_err(|e| format!("{}: {e}", p.display()))
}
